"""The procedural K-8 math task set and the KMP-Skills generators over its families.

Example::

    import numpy as np
    from tutorzoo.envs.tasks.math import MathTaskSet, erroneous_solution
    task = MathTaskSet().build("fraction_addition", np.random.default_rng(0))
    task.answer, task.pretest[0].stem
    problem, first_wrong = erroneous_solution("fraction_addition", np.random.default_rng(0))
"""

from __future__ import annotations

import difflib

import numpy as np

from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.tasks.base import Item, Task
from tutorzoo.envs.tasks.math import algebra, fractions, geometry, integers, measurement, place_value, ratio_percent
from tutorzoo.envs.tasks.math.family import LEVELS, Family, Level, Problem, Solved
from tutorzoo.envs.tasks.math.material import checked, load_material, make_kc, make_misconception

# Fixed order: by domain, easier families first. ``task_ids()`` returns it as is.
FAMILIES: tuple[Family, ...] = (
    *place_value.FAMILIES,
    *fractions.FAMILIES,
    *integers.FAMILIES,
    *algebra.FAMILIES,
    *ratio_percent.FAMILIES,
    *geometry.FAMILIES,
    *measurement.FAMILIES,
)
_BY_ID: dict[str, Family] = {f.id: f for f in FAMILIES}
assert len(_BY_ID) == len(FAMILIES), "family ids must be unique"


def family(task_id: str) -> Family:
    """The family ``task_id``; an unknown id raises :class:`ConfigError` with the known ids."""
    if task_id in _BY_ID:
        return _BY_ID[task_id]
    close = difflib.get_close_matches(task_id, list(_BY_ID), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"unknown math task {task_id!r}; known: {list(_BY_ID)}.{hint}")


def _item(fam: Family, item_id: str, s: Solved, kcs: tuple[str, ...], parallel_of: str | None = None) -> Item:
    # A shared probe kind may know misconceptions this family does not teach; the item names only the family's.
    values = {
        "id": item_id,
        "stem": s.stem,
        "answer": s.answer,
        "kcs": kcs,
        "misconception_answers": {m: s.wrong[m][1] for m in fam.misconceptions if m in s.wrong},
        "solution_steps": s.steps,
        "misconception_steps": {m: s.wrong[m][0] for m in fam.misconceptions if m in s.wrong},
        "subject": fam.domain,
        "parallel_of": parallel_of,
    }
    # the values have the field types (str, tuples of str); the field constraints are these lengths
    return checked(Item, values, bool(s.stem and s.answer and kcs))


def _wrong_steps(mis: str, solved: list[Solved]) -> tuple[str, ...]:
    # The task's own problem shows the misconception best; a misconception only a probe item exposes
    # (e.g. additive equivalence) takes its steps from that item.
    for s in solved:
        if mis in s.wrong:
            return s.wrong[mis][0][s.first_wrong_step(mis) :]
    raise RuntimeError(f"misconception {mis!r} is named by no pre-test item; every family must expose each one")


class MathTaskSet:
    """The procedural math curriculum: one task per problem family, numbers drawn from the rng.

    ``Task.id`` is the family id; only the numbers, contexts and items vary with the rng.

    Example::

        ts = MathTaskSet()
        ts.build(ts.task_ids()[0], np.random.default_rng(7)).statement
    """

    name = "math"

    def __init__(self, path: str | None = None) -> None:
        if path is not None:
            raise ConfigError(
                f"the math task set is procedural and reads no data files, but path={path!r} was given; "
                "drop the path (or use the 'stem' or 'mcq' task set for file-based tasks)"
            )

    def task_ids(self) -> list[str]:
        return [f.id for f in FAMILIES]

    def build(self, task_id: str, rng: np.random.Generator) -> Task:
        fam = family(task_id)
        kinds = (fam.main, *fam.probes)
        # Each sample is solved once, when drawn (the same rng draws as drawing, then solving again).
        drawn = [k.draw_solved(rng) for k in kinds]
        pre_params, pre = [p for p, _ in drawn], [s for _, s in drawn]
        post = [k.draw_solved(rng, wording=1, avoid=s)[1] for k, s in zip(kinds, pre, strict=True)]
        example, example_solved = fam.main.draw_solved(rng, avoid=pre[0])
        main = pre[0]
        item_kcs = (fam.kcs, *(k.kcs for k in fam.probes))
        pretest = tuple(
            _item(fam, f"{fam.id}.pre.{i}", s, kcs) for i, (s, kcs) in enumerate(zip(pre, item_kcs, strict=True))
        )
        posttest = tuple(
            _item(fam, f"{fam.id}.post.{i}", s, kcs, parallel_of=f"{fam.id}.pre.{i}")
            for i, (s, kcs) in enumerate(zip(post, item_kcs, strict=True))
        )
        material = load_material()
        fields = fam.fields(pre_params[0], pre[0])
        example_fields = fam.fields(example, example_solved)
        kcs = tuple(make_kc(material, k, fam.kcs, fields, example_fields) for k in fam.kcs)
        misconceptions = tuple(
            make_misconception(material, m, _wrong_steps(m, pre), fields) for m in fam.misconceptions
        )
        values = {
            "id": fam.id,
            "task_set": self.name,
            "title": fam.title,
            "statement": main.stem,
            "solution": main.steps,
            "answer": main.answer,
            "disciplines": ("math",),
            "grade": fam.grade,
            "knowledge_components": kcs,
            "misconceptions": misconceptions,
            "pretest": pretest,
            "posttest": posttest,
            "opening_question": fam.opening.format_map(fields),
            "summary": fam.summary.format_map(fields),
            "objectives": fam.objectives,
        }
        # the values have the field types; the field constraints are these lengths and the grade's range
        ok = all(values[k] for k in _NONEMPTY_TASK_FIELDS) and 0 <= fam.grade <= 12
        return checked(Task, values, ok)


_NONEMPTY_TASK_FIELDS = ("statement", "solution", "answer", "knowledge_components", "pretest", "posttest",
                         "opening_question", "summary")


def seed_problem(task_id: str, rng: np.random.Generator) -> Problem:
    """The task's own problem: with the same rng state it is the problem ``MathTaskSet().build`` states."""
    fam = family(task_id)
    return fam.main.solve(fam.main.draw(rng), 0).problem()


def follow_ups(task_id: str, rng: np.random.Generator) -> tuple[Problem, Problem]:
    """Two harder follow-ups to :func:`seed_problem` (same rng state), each building on the previous answer."""
    fam = family(task_id)
    p = fam.main.draw(rng)
    return fam.follow_ups(p, rng)


def similar(task_id: str, level: Level, rng: np.random.Generator) -> Problem:
    """A problem of the same family at ``level`` (``easy``, ``medium`` or ``hard``)."""
    if level not in LEVELS:
        raise ConfigError(f"similar(): level must be one of {list(LEVELS)}, got {level!r}")
    fam = family(task_id)
    return fam.main.solve(fam.main.draw(rng, level), 0).problem()


def erroneous_solution(task_id: str, rng: np.random.Generator) -> tuple[Problem, int]:
    """A solution with one injected error, following one of the family's misconceptions, and its step index.

    The steps before the index are correct, the step at the index applies the misconception, and the
    later steps (and the final answer) follow from it.
    """
    fam = family(task_id)
    s = fam.main.solve(fam.main.draw(rng), 0)
    applicable = [m for m in fam.misconceptions if m in s.wrong]
    mis = applicable[int(rng.integers(len(applicable)))]
    steps, answer = s.wrong[mis]
    return Problem(s.stem, steps, answer), s.first_wrong_step(mis)
