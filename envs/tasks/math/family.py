"""The problem model and the one interface every math problem family implements.

A family is a :class:`Family` value: a main :class:`Kind` (the task's own problem), two probe kinds (the
other pre-test items, each on some of the task's KCs), the names of its KCs and misconceptions, and a
follow-up generator. A kind samples numbers and solves them, both correctly and under each misconception,
so a task, its isomorphic post-test, its misconception answers and its erroneous solutions all come from
one solver.

Example::

    import numpy as np
    from tutorzoo.envs.tasks.math.fractions import FRACTION_ADDITION
    p = FRACTION_ADDITION.main.draw(np.random.default_rng(0))
    FRACTION_ADDITION.main.solve(p, 0).answer
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

import numpy as np

Level = Literal["easy", "medium", "hard"]
LEVELS: tuple[Level, ...] = ("easy", "medium", "hard")
Params = dict[str, Any]

# A sampler is told the difficulty; a rejected sample is drawn again, never patched, so the distribution
# stays simple to reason about. 200 tries is far above what any family needs (checked by the tests).
_MAX_TRIES = 200

# cached_solve keeps at most this many solutions per solver (about 2 kB each), oldest dropped first
_SOLVE_CACHE_SIZE = 1024
_FRACTION, _LIST = object(), object()  # markers in a cache key (see _solve_key)


def _solve_key(p: Params, wording: int) -> tuple | None:
    """A hashable key equal only for params a solver cannot tell apart (same names, value types and values),
    or None when a value is of another type. The key is flat: a marker says how many ints follow it, and a
    Fraction is keyed by its numerator and denominator (hashing the Fraction itself is slow)."""
    key: list = [wording]
    append = key.append
    for name, v in p.items():
        append(name)
        t = type(v)
        if t is int:
            append(v)
        elif t is Fraction:
            key += (_FRACTION, v.numerator, v.denominator)
        elif t is list and all(type(x) is int for x in v):
            key += (_LIST, len(v), *v)
        else:
            return None
    return tuple(key)


def cached_solve(solve: Callable[[Params, int], Solved]) -> Callable[[Params, int], Solved]:
    """``solve`` with its solutions kept: for a pure solver over a small parameter space (a few hundred
    samples), where a task build would otherwise format the same steps again. A :class:`Solved` is never
    modified, so one can be shared."""
    cache: dict[tuple, Solved] = {}

    @functools.wraps(solve)
    def cached(p: Params, wording: int) -> Solved:
        key = _solve_key(p, wording)
        if key is None:
            return solve(p, wording)
        s = cache.get(key)
        if s is None:
            s = solve(p, wording)
            if len(cache) >= _SOLVE_CACHE_SIZE:
                del cache[next(iter(cache))]
            cache[key] = s
        return s

    return cached


@dataclass(frozen=True)
class Problem:
    """A math problem with its step-by-step solution and exact answer (KMP-Skills raw material)."""

    statement: str
    solution: tuple[str, ...]
    answer: str


@dataclass(frozen=True, slots=True)
class Solved:
    """A solved instance: the question as worded, the correct steps and answer, and each misconception's.

    ``wrong`` maps a misconception id to the full step list it produces and its final answer; its steps
    share the correct solution's prefix up to the first wrong step, and later steps follow from that step.
    """

    stem: str
    expr: str
    steps: tuple[str, ...]
    answer: str
    wrong: Mapping[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)

    def problem(self) -> Problem:
        return Problem(self.stem, self.steps, self.answer)

    def first_wrong_step(self, misconception: str) -> int:
        """Index of the first step where ``misconception``'s solution departs from the correct one."""
        steps, _ = self.wrong[misconception]
        for i, (a, b) in enumerate(zip(steps, self.steps, strict=False)):
            if a != b:
                return i
        return min(len(steps), len(self.steps))


@dataclass(frozen=True)
class Kind:
    """One kind of question: ``sample(rng, level) -> params`` and ``solve(params, wording) -> Solved``.

    ``wording`` 0 is the pre-test surface, 1 the post-test surface (other context and phrasing).
    """

    kcs: tuple[str, ...]
    sample: Callable[[np.random.Generator, Level], Params]
    solve: Callable[[Params, int], Solved]

    def draw(
        self,
        rng: np.random.Generator,
        level: Level = "medium",
        wording: int = 0,
        avoid: Solved | None = None,
    ) -> Params:
        """Sample until every misconception answer differs from the correct one (and from ``avoid``'s surface)."""
        return self.draw_solved(rng, level, wording, avoid)[0]

    def draw_solved(
        self,
        rng: np.random.Generator,
        level: Level = "medium",
        wording: int = 0,
        avoid: Solved | None = None,
    ) -> tuple[Params, Solved]:
        """:meth:`draw` and the sample solved at ``wording`` (solving is pure: a task build need not solve again)."""
        for _ in range(_MAX_TRIES):
            p = self.sample(rng, level)
            s = self.solve(p, wording)
            if any(ans == s.answer for _, ans in s.wrong.values()):
                continue
            if avoid is not None and (s.answer == avoid.answer or s.stem == avoid.stem or s.expr == avoid.expr):
                continue
            return p, s
        raise RuntimeError(f"could not sample a valid instance in {_MAX_TRIES} tries (kcs {self.kcs})")


@dataclass(frozen=True)
class Family:
    """A problem family: the task it builds and the KMP-Skills material it offers.

    ``opening`` and ``summary`` are templates over :meth:`fields`; ``fields`` gives the numbers the KC
    material quotes (``expr``, ``answer`` and ``steps`` are always present).
    """

    id: str
    domain: str
    grade: int
    title: str
    kcs: tuple[str, ...]
    misconceptions: tuple[str, ...]
    main: Kind
    probes: tuple[Kind, Kind]
    follow_ups: Callable[[Params, np.random.Generator], tuple[Problem, Problem]]
    opening: str
    summary: str
    objectives: tuple[str, ...]
    extra_fields: Callable[[Params], dict[str, str]] = lambda p: {}

    def fields(self, p: Params, solved: Solved | None = None) -> dict[str, str]:
        """``solved``: ``main.solve(p, 0)`` when the caller has it already."""
        s = self.main.solve(p, 0) if solved is None else solved
        out = {"expr": s.expr, "answer": s.answer, "steps": " ".join(s.steps), "stem": s.stem}
        out.update(self.extra_fields(p))
        return out
