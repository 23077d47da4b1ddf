"""The contract between a suite's kind and the harness that runs it.

A suite (``configs/suites/*.yaml``) has a ``kind``. The kind turns the suite into a fixed list of *units*
(an episode spec, a truncated reference dialogue, a skills item, a question-generation context), plays a
tutor on them, and computes the suite's metrics from the records. The harness (:mod:`tutorzoo.eval.runner`) knows
nothing else about a kind: it splits units into train / held-out by a stable hash of ``unit.key()``, skips
units already done on ``--resume`` (by ``(tutor, key)``), runs chunks of units on local worker processes or
Ray tasks, appends each record to ``records.jsonl``-style output as it finishes, and reports.

Kinds (registry in :mod:`tutorzoo.eval.kinds`):

- ``episodes``: pre-test -> dialogue -> post-test episodes in the env (suites ``default``, ``sid``,
  ``educationq``); judged rubrics (SID's five) are scored per finished episode when a judge is configured;
- ``kmp_dialogue``, ``kmp_skills``, ``dr_academy``: one tutor reply per unit, to a prompt built from the
  curriculum; graded by exact checkers where the answer is checkable, by the judge where it is not.

Rules every kind keeps:

- ``units`` is deterministic: same suite file, same units, same order, same keys. It validates the suite's
  kind-specific ``items`` settings and raises :class:`~tutorzoo.envs.errors.ConfigError` naming the bad field.
- ``run`` yields exactly one record per unit, in the order given, each a JSON-ready dict with at least
  ``key`` (``unit.key()``), ``tutor`` (the name), ``unit`` (``unit.model_dump()``; the ``episodes`` kind keeps
  it under ``spec``, as ``episodes.jsonl`` always had), ``failures`` (a list; a tutor, student or judge
  failure is recorded there and never raised) and ``judgments`` (a list of
  :meth:`tutorzoo.eval.judges.Verdict.to_dict`, empty without a judge). The record depends only on the unit, the
  tutor and the judge, never on which other units share the call, so a resumed or parallel run reproduces
  an uninterrupted sequential one (sampling model tutors are the one documented exception: they are seeded
  per batch call). The harness is given ``judge=None`` when the suite uses no rubric.
- ``metrics`` returns ``{"groups": {tutor: {"n_units": int, "metrics": {name: summary}}}, "specs":
  {name: MetricSpec}}`` where a summary is ``{"mean", "ci_low", "ci_high", "n"}``; a judge-only metric with
  no judge configured has ``mean: None`` and ``"not_computed": "<why>"`` — never a made-up value. The
  harness calls it with the records in canonical order (tutor order, then unit order), whatever order they
  finished in; it must be a pure function of them (fixed bootstrap seed), so that an interrupted and resumed
  run writes the same ``metrics.json`` byte for byte.

Optional members (the harness checks with ``getattr``):

- ``for_suite(suite) -> SuiteKind``: an instance configured by the suite's ``items`` (the ``episodes`` kind
  reads its rubrics, ranking metric and columns there); the harness and its workers use
  :func:`tutorzoo.eval.kinds.kind_for`, which calls it when present.
- ``failure_record(unit, tutor_name, failure) -> dict``: the record of a unit the harness could not run at
  all (its worker process crashed, or ``run`` raised). Without it the harness writes the base fields only
  (``key``, ``tutor``, ``unit``, ``failures``, ``judgments``), and ``metrics`` must accept such records.
- ``legend: str``: a line printed under the leaderboard to explain its columns.
- ``records_file: str``: the output file name (default ``records.jsonl``; ``episodes`` writes
  ``episodes.jsonl``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from tutorzoo.envs.errors import ConfigError

if TYPE_CHECKING:
    from tutorzoo.eval.judges import Judge
    from tutorzoo.eval.suite import Suite


@runtime_checkable
class Unit(Protocol):
    """One unit of work: a pydantic model with a stable key."""

    def key(self) -> str: ...

    def model_dump(self) -> dict[str, Any]: ...


class SuiteKind(Protocol):
    name: ClassVar[str]
    rubrics: ClassVar[tuple[str, ...]]  # judge rubrics it uses (eval/judges/rubrics/NAME.yaml); () = none
    rank_metric: ClassVar[str]  # the leaderboard's order (by its metric's direction)
    columns: ClassVar[tuple[tuple[str, str, float], ...]]  # printed columns: (metric, header, scale)

    def units(self, suite: Suite) -> list[Unit]: ...

    def unit_from_dict(self, data: dict[str, Any]) -> Unit: ...

    def run(self, units: Sequence[Unit], tutor: Any, tutor_name: str, judge: Judge | None,
            batch_size: int) -> Iterator[dict]: ...

    def metrics(self, records: Sequence[dict], judged: bool) -> dict[str, Any]: ...


M = TypeVar("M", bound=BaseModel)


def suite_items(model: type[M], suite: Any, where: str) -> M:
    """A suite's ``items:`` settings validated by its kind's pydantic ``model``; an error names the field, the
    value and ``where`` the settings are documented."""
    try:
        return model.model_validate(getattr(suite, "items", None) or {})
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"suite {getattr(suite, 'name', '?')!r}: items.{loc}: {err['msg']} (got "
                          f"{err.get('input')!r}); {where} takes {sorted(model.model_fields)}") from None
