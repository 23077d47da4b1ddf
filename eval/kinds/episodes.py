"""The ``episodes`` suite kind: pre-test -> dialogue -> post-test episodes in the env (suites default, sid,
educationq).

Units are the :class:`~tutorzoo.envs.config.EpisodeSpec` s of the suite's blocks, played by the rollout engine
(:func:`tutorzoo.envs.engine.play`): a plain tutor one after the other, reset with each episode's seed; a batched tutor
(model tutors, :class:`tutorzoo.envs.protocols.BatchedTutor`) ``batch_size`` episodes in lockstep. Records are the
``episodes.jsonl`` records of :mod:`tutorzoo.eval.rollout` plus ``key`` (the spec's key) and ``judgments``.

Metrics are :func:`tutorzoo.eval.metrics.suite_metrics` grouped by tutor (every metric of
:data:`tutorzoo.eval.metrics.METRICS`), plus SID's five judge rubrics (:mod:`tutorzoo.eval.judges.sid`) when the suite
asks for
them — scored per finished episode when a judge is configured, "not computed" otherwise.

Settings (the suite's ``items``; all optional)::

    items:
      rubrics: [sid_rubrics]          # judge rubrics to score per episode when --judge is given
      rank_metric: ALG                # the leaderboard's order (default learning_gain)
      columns:                        # the printed leaderboard's columns (default: COLUMNS below)
        - {metric: ALG, header: "ALG", scale: 1.0}
      legend: "ALG: ..."              # the line printed under the leaderboard
      student: llm:hf:models/student  # who plays the student: simulated (default), llm:<backend>, hybrid:<backend>
      student_args: {threads: 1}      # that student's backend options (`tutorzoo eval --student` overrides both)

Example::

    from tutorzoo.eval.kinds import kind_for
    from tutorzoo.eval.suite import load_suite
    suite = load_suite("default")
    kind = kind_for(suite)
    records = list(kind.run(suite.units()[:2], make_tutor("socratic"), "socratic", None, 16))
    kind.metrics(records, judged=False)["groups"]["socratic"]["metrics"]["ALG"]
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.records import LEARNING_GAIN, EpisodeRecord
from tutorzoo.eval.kinds.base import suite_items

if TYPE_CHECKING:
    from tutorzoo.eval.suite import Suite

SID_RUBRIC = "sid_rubrics"
SID_MODULE = "tutorzoo.eval.judges.sid"

# The columns of the printed leaderboard: (metric, header, scale). The report has every metric.
COLUMNS: tuple[tuple[str, str, float], ...] = (
    (LEARNING_GAIN, "Gain iso", 100.0),
    ("learning_gain_same", "Gain same", 100.0),
    ("ACC_pre", "Pre %", 1.0),
    ("ACC_post", "Post %", 1.0),
    ("TotalScore", "SID Total", 1.0),
)
LEGEND = ("Gain: post-test minus pre-test score in percentage points, on isomorphic items (iso) and on the "
          "pre-test items (same); ± half-width of the 95% bootstrap CI over episodes.")


class Column(BaseModel):
    """One printed leaderboard column."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str = Field(description="Metric name (see metrics.json 'metrics').")
    header: str = Field(description="Column header.")
    scale: float = Field(default=1.0, description="Multiplier for display (100 for a 0-1 gain in points).")


class EpisodeSettings(BaseModel):
    """The ``items:`` settings of an episodes suite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rubrics: list[Literal["sid_rubrics"]] = Field(default_factory=list,
                                                  description="Judge rubrics scored per episode with --judge.")
    rank_metric: str = Field(default=LEARNING_GAIN, description="The leaderboard's order.")
    columns: list[Column] | None = Field(default=None, description="Printed leaderboard columns.")
    legend: str | None = Field(default=None, description="Line printed under the leaderboard.")
    student: str = Field(default="simulated", description="The student: 'simulated', 'llm:<backend>' (the model is "
                         "the student and answers the tests itself) or 'hybrid:<backend>' (agents/student/llm.py).")
    student_args: dict[str, Any] = Field(default_factory=dict, description="The LLM student's backend options.")

    @field_validator("student")
    @classmethod
    def _check_student(cls, value: str) -> str:
        kind, _, target = value.partition(":")
        if kind not in ("simulated", "llm", "hybrid") or (kind == "simulated") == bool(target):
            raise ValueError(f"student must be 'simulated', 'llm:<backend>' or 'hybrid:<backend>', got {value!r}")
        return value


def _sid_module() -> ModuleType:
    """:mod:`tutorzoo.eval.judges.sid` (SID rubric scoring), imported when a suite scores it."""
    return importlib.import_module(SID_MODULE)


def _spec_names(specs: Any) -> set[str]:
    return set(specs) if specs else set()


class EpisodesKind:
    """Episodes in the env; see the module docstring."""

    name: ClassVar[str] = "episodes"
    records_file: ClassVar[str] = "episodes.jsonl"
    available_rubrics: ClassVar[tuple[str, ...]] = (SID_RUBRIC,)

    def __init__(self, settings: EpisodeSettings | None = None) -> None:
        settings = settings or EpisodeSettings()
        self.settings = settings
        self.rubrics: tuple[str, ...] = tuple(settings.rubrics)
        self.rank_metric: str = settings.rank_metric
        self.columns: tuple[tuple[str, str, float], ...] = (
            COLUMNS if settings.columns is None else tuple((c.metric, c.header, c.scale) for c in settings.columns))
        self.legend: str = LEGEND if settings.legend is None else settings.legend
        self._check_metric_names()

    def _check_metric_names(self) -> None:
        from tutorzoo.eval.metrics import METRICS

        known = set(METRICS)
        if SID_RUBRIC in self.rubrics:
            sid = _sid_module()
            if sid is not None:
                known |= _spec_names(sid.sid_rubric_metrics([], judged=False).get("specs"))
            else:  # the judge module is not there yet: its metric names cannot be checked
                return
        wanted = [self.rank_metric, *(m for m, _, _ in self.columns)]
        unknown = [m for m in wanted if m not in known]
        if unknown:
            raise ConfigError(f"episodes suite settings name unknown metrics {unknown}; known: {sorted(known)}")

    def for_suite(self, suite: Suite) -> EpisodesKind:
        return EpisodesKind(suite_items(EpisodeSettings, suite, "the episodes kind"))

    # ------------------------------------------------------------------ units
    def units(self, suite: Suite) -> list[EpisodeSpec]:
        return suite.block_specs()

    def unit_from_dict(self, data: dict[str, Any]) -> EpisodeSpec:
        return EpisodeSpec.model_validate(data)

    # ------------------------------------------------------------------ running
    def run(self, units: Sequence[EpisodeSpec], tutor: Any, tutor_name: str, judge: Any | None,
            batch_size: int) -> Iterator[dict]:
        from tutorzoo.envs.engine import is_batched, play

        make_student = self.student_factory()
        specs = list(units)
        if is_batched(tutor):  # one lockstep run, so the model answers batch_size episodes per call
            records = play(specs, tutor, make_student, batch_size=batch_size, tutor_name=tutor_name)
            for spec, record in zip(specs, records, strict=True):
                yield self._finish(spec, record, judge)
            return
        for spec in specs:  # one at a time, each record yielded as it finishes
            [record] = play([spec], tutor, make_student, tutor_name=tutor_name)
            yield self._finish(spec, record, judge)

    def student_factory(self) -> Any:
        """``make_student(persona)`` of the ``student`` setting (an LLM student's backend is loaded once)."""
        if getattr(self, "_make_student", None) is None:
            from tutorzoo.agents.student.llm import make_student_factory

            self._make_student = make_student_factory(self.settings.student, **self.settings.student_args)
        return self._make_student

    def _finish(self, spec: EpisodeSpec, record: EpisodeRecord, judge: Any | None) -> dict[str, Any]:
        """The record the runner stores: the played one with the unit's key and the judges' verdicts, as JSON."""
        record = replace(record, key=spec.key(), judgments=[])
        if judge is not None and SID_RUBRIC in self.rubrics:
            self._judge(record, judge)
        return record.to_json()

    def _judge(self, record: EpisodeRecord, judge: Any) -> None:
        """SID's five rubrics on the finished episode; a judge failure is recorded on the record, not raised."""
        sid = _sid_module()
        # the engine's record has its failures list and _finish gave it an empty judgments list
        failures, judgments = record.failures, record.judgments
        assert failures is not None and judgments is not None
        try:
            verdict = sid.judge_episode(record, judge)
        except Exception as exc:  # a judge crash fails this record's judgment only
            failures.append({"agent": "judge", "phase": "judgment", "turn": None,
                             "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=3)})
            return
        judgments.append(verdict)
        if not verdict.get("ok", False):
            errors = verdict.get("errors") or []
            failures.append({
                "agent": "judge", "phase": "judgment", "turn": None,
                "error": f"JudgeError: {verdict.get('n_failed')} of {verdict.get('n_samples')} {SID_RUBRIC} "
                         f"samples failed" + (f" ({errors[0]})" if errors else ""),
                "traceback": "",
            })

    def failure_record(self, unit: EpisodeSpec, tutor_name: str, failure: dict) -> dict:
        """The record of an episode that could not be played at all: the env's record of the reset episode
        (no turn, no test answer, gains None), ``ended_by="failure"``, the failure."""
        from tutorzoo.envs import tutoring_v0
        from tutorzoo.envs.engine import episode_record

        env = tutoring_v0.env(**unit.env_kwargs())
        env.reset(seed=unit.seed)
        record = episode_record(env, unit, tutor_name, None, [failure])
        return replace(record, key=unit.key(), judgments=[]).to_json()

    # ------------------------------------------------------------------ metrics
    def metrics(self, records: Sequence[dict], judged: bool) -> dict[str, Any]:
        from tutorzoo.eval.metrics import METRICS, suite_metrics

        out = suite_metrics(list(records), group_by="tutor")
        for group in out["groups"].values():
            group["n_units"] = group["n_episodes"]
        specs: dict[str, Any] = dict(METRICS)
        if SID_RUBRIC in self.rubrics:
            extra = _sid_module().sid_rubric_metrics(list(records), judged)
            for tutor, group in extra.get("groups", {}).items():
                if tutor in out["groups"]:
                    out["groups"][tutor]["metrics"].update(group["metrics"])
            specs.update(extra.get("specs", {}))
            if "judge_failures" in extra:
                out["judge_failures"] = extra["judge_failures"]
        out["specs"] = specs
        return out
