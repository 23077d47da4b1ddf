"""What the item-based suite kinds share: asking a tutor for replies, strict reply parsing, judging, summaries.

The kinds :mod:`tutorzoo.eval.kinds.kmp_dialogue`, :mod:`tutorzoo.eval.kinds.kmp_skills` and
:mod:`tutorzoo.eval.kinds.dr_academy` put one
prompt (or a short conversation) to a tutor per unit. A tutor is asked through its usual interface:
``tutor.act(observation, info)`` (or ``tutor.act_batch([(observation, info), ...])`` in chunks of
``batch_size`` when it has one) with ``info["messages"]`` = the chat so far (system prompt first),
``info["item"]`` = the structured item and ``info["task"]`` = the public view of the unit's task (what every
tutor may read in an episode). A built-in rule-based tutor (:class:`tutorzoo.agents.tutor.base.ActTutor`) has no item
policy: its reply is :func:`tutorzoo.eval.kinds.builtin_answers.answer_item`'s. A tutor that raises, or a reply
that is missing, is a recorded failure of that unit, never an exception.

Example::

    from tutorzoo.eval.kinds.item_common import Request, ask, parse_answer_line
    [reply] = ask(tutor, [Request(messages=[...], item={...}, seed=0)], batch_size=1)
    parse_answer_line(reply.text)     # ('13/24', None) or (None, 'no final line "Answer: <number>"')
"""

from __future__ import annotations

import hashlib
import re
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel

from tutorzoo.envs.protocols import BatchedTutor, PartialBatchError
from tutorzoo.eval.kinds.base import suite_items
from tutorzoo.eval.metrics.registry import MetricSpec
from tutorzoo.eval.metrics.stats import DEFAULT_SEED, bootstrap_mean_ci, percentile_interval, resample_indices

NO_JUDGE = "no judge configured (--judge)"


# --- asking the tutor --------------------------------------------------------------------------------------


@dataclass
class Request:
    """One reply wanted from the tutor: the chat so far, the structured item, the task view and a seed."""

    messages: list[dict[str, str]]
    item: dict[str, Any]
    seed: int
    task: dict[str, Any] | None = None

    def observation(self) -> dict[str, Any]:
        return {"prompt": self.messages[-1]["content"] if self.messages else ""}

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"phase": "item", "turn": 0, "max_turns": 1, "observe_only": False,
                                "messages": [dict(m) for m in self.messages], "item": dict(self.item),
                                "pretest": []}
        if self.task is not None:
            info["task"] = self.task
        return info


@dataclass
class Reply:
    text: str | None
    error: str | None = None
    traceback: str | None = field(default=None, repr=False)


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def ask(tutor: Any, requests: Sequence[Request], batch_size: int = 1) -> list[Reply]:
    """One :class:`Reply` per request, in order. ``act_batch`` in chunks of ``batch_size`` when the tutor has it
    (seeded by the chunk's first request: model tutors are the documented exception to per-unit seeding),
    else ``reset(seed)`` + ``act`` per request. Exceptions become failed replies."""
    out: list[Reply] = []
    if isinstance(tutor, BatchedTutor) and batch_size > 1:
        for start in range(0, len(requests), batch_size):
            chunk = list(requests[start : start + batch_size])
            out += _ask_batch(tutor, chunk)
        return out
    for req in requests:
        try:
            tutor.reset(seed=req.seed)
            text = _act(tutor, req.observation(), req.info())
            out.append(Reply(text if isinstance(text, str) else None,
                             None if isinstance(text, str) else f"the tutor returned {type(text).__name__}, not text"))
        except Exception as exc:  # a tutor failure is recorded with the unit, never fatal
            out.append(Reply(None, _error(exc), traceback.format_exc(limit=3)))
    return out


def _act(tutor: Any, observation: dict, info: dict) -> Any:
    """The tutor's reply to one item: a built-in rule-based tutor's from :mod:`tutorzoo.eval.kinds.builtin_answers`."""
    from tutorzoo.agents.tutor.base import ActTutor
    from tutorzoo.eval.kinds.builtin_answers import answer_item

    if isinstance(tutor, ActTutor):
        return answer_item(tutor, observation, info)
    return tutor.act(observation, info)


def _ask_batch(tutor: BatchedTutor, chunk: list[Request]) -> list[Reply]:
    try:
        tutor.reset(seed=chunk[0].seed)
        texts = tutor.act_batch([(r.observation(), r.info()) for r in chunk])
    except PartialBatchError as exc:
        if len(exc.texts) == len(chunk):
            return [Reply(t, e) if e is None else Reply(None, e) for t, e in zip(exc.texts, exc.errors, strict=True)]
        return [Reply(None, _error(exc), traceback.format_exc(limit=3)) for _ in chunk]
    except Exception as exc:
        return [Reply(None, _error(exc), traceback.format_exc(limit=3)) for _ in chunk]
    if not isinstance(texts, list) or len(texts) != len(chunk):
        return [Reply(None, f"act_batch returned {len(texts) if isinstance(texts, list) else type(texts).__name__} "
                            f"replies for {len(chunk)} requests") for _ in chunk]
    return [Reply(t) if isinstance(t, str) else Reply(None, f"the tutor returned {type(t).__name__}, not text")
            for t in texts]


def math_family_ids(tasks: Any, suite: Any) -> list[str]:
    """The math families an ``items.tasks`` setting selects (``"all"`` or a list of ids); an unknown id is a
    :class:`ConfigError` listing the known ones."""
    from tutorzoo.envs.errors import ConfigError
    from tutorzoo.envs.tasks.math import FAMILIES

    known = [f.id for f in FAMILIES]
    ids = known if tasks == "all" else list(tasks)
    unknown = [t for t in ids if t not in known]
    if unknown:
        raise ConfigError(f"suite {getattr(suite, 'name', '?')!r}: items.tasks: unknown math families {unknown}; "
                          f"known: {known}")
    return ids


def unit_seed(key: str) -> int:
    """The tutor's seed for one request, from the unit's key alone (the same whatever shares its batch)."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "little")


def run_single_replies(units: Sequence[Any], tutor: Any, tutor_name: str, judge: Any, batch_size: int,
                       request: Callable[[Any], Request], grade: Callable[[Any, Reply, dict[str, Any]], None],
                       judge_chunk: Callable[[list[Any], list[dict], Any], None]) -> Iterator[dict]:
    """The ``run`` of a kind that asks one reply per unit: chunks of ``batch_size`` units are asked together,
    ``grade(unit, reply, record)`` fills each record's grades and failures, ``judge_chunk(units, records, judge)``
    adds the judgments (with a judge); records come back in unit order."""
    size = max(1, int(batch_size))
    for start in range(0, len(units), size):
        chunk = list(units[start : start + size])
        requests = [request(u) for u in chunk]
        records = []
        for u, req, reply in zip(chunk, requests, ask(tutor, requests, size), strict=True):
            rec = {"key": u.key(), "tutor": tutor_name, "unit": u.model_dump(), "prompt": req.messages[-1]["content"],
                   "response": reply.text, "grades": {}, "judgments": [], "failures": []}
            grade(u, reply, rec)
            records.append(rec)
        if judge is not None:
            judge_chunk(chunk, records, judge)
        yield from records


def tutor_failure(phase: str, reply: Reply) -> dict[str, Any]:
    out = {"agent": "tutor", "phase": phase, "error": reply.error or "no reply"}
    if reply.traceback:
        out["traceback"] = reply.traceback
    return out


def format_failure(phase: str, why: str) -> dict[str, Any]:
    """A reply we could not parse: counted as wrong and recorded (``agent: "format"``)."""
    return {"agent": "format", "phase": phase, "error": why}


# --- strict reply parsing ----------------------------------------------------------------------------------

_FIELD_RE = {
    name: re.compile(rf"^[ \t>*_#-]*{name}[ \t*_]*:[ \t*_]*(?P<value>.*?)[ \t*_]*$", re.IGNORECASE | re.MULTILINE)
    for name in ("answer", "verdict", "first error step", "reason", "problem")
}


def last_field(text: str, name: str) -> str | None:
    """The value of the last line ``<name>: <value>`` (markdown emphasis tolerated), else None."""
    matches = list(_FIELD_RE[name].finditer(text or ""))
    if not matches:
        return None
    value = matches[-1].group("value").strip()
    return value or None


def parse_answer_line(text: str | None) -> tuple[str | None, str | None]:
    """``(value, None)`` for a reply whose last ``Answer:`` line states exactly one number; ``(None, why)`` else.

    Strict on purpose: the prompt asks for ``Answer: <number>`` on the last line, and a reply we cannot read
    is wrong (and counted as a format failure), whatever number it mentions elsewhere.
    """
    from tutorzoo.envs.grading import parse_quantity

    if text is None:
        return None, "no reply"
    value = last_field(text, "answer")
    if value is None:
        return None, 'no line "Answer: <number>"'
    value = value.rstrip(".")
    if parse_quantity(value) is None:
        return None, f'the "Answer:" line does not state one number: {value[:80]!r}'
    return value, None


def is_correct(value: str | None, key: str) -> bool:
    """Exact check of an extracted value against the key (equivalent forms accepted, see tutorzoo.envs.grading)."""
    from tutorzoo.envs.grading import equivalent

    return value is not None and equivalent(value, key)


# --- judging -----------------------------------------------------------------------------------------------


def judge_many(judge: Any, rubric: str, variables: list[dict[str, str]], criteria: Sequence[str] | None
               ) -> tuple[list[dict[str, Any] | None], str | None]:
    """Verdict dicts for ``variables`` (``None`` each, and the error, when the judge itself raised)."""
    if not variables:
        return [], None
    try:
        verdicts = judge.judge_many(rubric, variables, criteria=list(criteria) if criteria is not None else None)
        return [v.to_dict() for v in verdicts], None
    except Exception as exc:  # a judge that cannot run is a recorded failure of these units
        return [None] * len(variables), _error(exc)


def passed(value: Any) -> bool:
    """A binary criterion's aggregated value as pass/fail: ``True`` (majority) or a share above one half (mean)."""
    if isinstance(value, bool):
        return value
    return isinstance(value, (int, float)) and value > 0.5


def judge_failure(rubric: str, verdict: dict[str, Any] | None, error: str | None = None) -> dict[str, Any] | None:
    """The failure entry of a verdict with failed samples (or of a judge that raised), else None."""
    if verdict is None:
        return {"agent": "judge", "rubric": rubric, "error": error or "no verdict"}
    if verdict.get("n_failed", 0):
        return {"agent": "judge", "rubric": rubric,
                "error": f"{verdict['n_failed']} of {verdict['n_samples']} judge samples failed",
                "details": list(verdict.get("errors", []))[:3]}
    return None


# --- metrics -----------------------------------------------------------------------------------------------


def summary(mean: float | None, ci: tuple[float, float] | None, n: int) -> dict[str, Any]:
    return {"mean": mean, "ci_low": None if ci is None else ci[0], "ci_high": None if ci is None else ci[1], "n": n}


def not_computed(reason: str = NO_JUDGE, n: int = 0) -> dict[str, Any]:
    return {"mean": None, "ci_low": None, "ci_high": None, "n": n, "not_computed": reason}


def mean_summary(values: Sequence[float | None]) -> dict[str, Any]:
    """Mean over the defined values with a percentile-bootstrap CI (fixed seed); ``mean: None`` with none."""
    defined = np.array([float(v) for v in values if v is not None], dtype=float)
    if defined.size == 0:
        return summary(None, None, 0)
    ci = bootstrap_mean_ci(defined, np.random.default_rng(DEFAULT_SEED))
    return summary(float(defined.mean()), ci, int(defined.size))


def stat_summary(rows: Sequence[Any], statistic: Callable[[Sequence[Any]], float | None], n_resamples: int = 1000
                 ) -> dict[str, Any]:
    """A statistic of a whole set of rows (F1, MCC, MR-Score) with a bootstrap CI over rows (fixed seed)."""
    rows = list(rows)
    value = statistic(rows) if rows else None
    if value is None:
        return summary(None, None, len(rows))
    idx = resample_indices(len(rows), n_resamples, np.random.default_rng(DEFAULT_SEED))
    samples = np.array([np.nan if (v := statistic([rows[i] for i in r])) is None else v for r in idx], dtype=float)
    return summary(float(value), percentile_interval(samples), len(rows))


def group_by_tutor(records: Sequence[dict]) -> dict[str, list[dict]]:
    """Records by tutor, tutors in first-seen order (the harness passes canonical order)."""
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(str(r.get("tutor", "?")), []).append(r)
    return groups


def spec(name: str, higher: bool | None, description: str, aggregation: str = "mean", level: str = "episode"
         ) -> MetricSpec:
    """A metric declaration; ``level="episode"`` means one value per unit here."""
    return MetricSpec(name, higher, aggregation, level, description)


def failure_rate(records: Sequence[dict], agent: str) -> dict[str, Any]:
    """Share of units with a failure of ``agent`` (tutor / format / judge)."""
    return mean_summary([float(any(f.get("agent") == agent for f in r.get("failures", []))) for r in records])


def base_record(key: str, tutor_name: str, unit: dict[str, Any], failure: dict[str, Any]) -> dict[str, Any]:
    """The record of a unit that could not be run at all (the harness's ``failure_record``)."""
    return {"key": key, "tutor": tutor_name, "unit": unit, "prompt": None, "response": None, "grades": {},
            "judgments": [], "failures": [failure]}


def seed_list(seeds: int | Sequence[int]) -> list[int]:
    """An ``items.seeds`` setting as the seeds it names: ``n`` is ``0 .. n-1``, a list is itself."""
    return list(range(seeds)) if isinstance(seeds, int) else list(seeds)


class ItemKind:
    """What every item kind shares besides its units, prompts and metrics: its leaderboard (the
    :class:`~tutorzoo.eval.kinds.base.SuiteKind` class variables), its ``items:`` settings (validated by
    ``settings_model``,
    documented in ``eval/kinds/<name>.py``), its units (``unit_model``), the record of a unit that could not be
    run (:func:`base_record`) and ``metrics``: per tutor, the kind's ``_group_metrics`` of its records."""

    name: ClassVar[str]
    rubrics: ClassVar[tuple[str, ...]]
    rank_metric: ClassVar[str]
    columns: ClassVar[tuple[tuple[str, str, float], ...]]
    legend: ClassVar[str]
    settings_model: ClassVar[type[BaseModel]]
    unit_model: ClassVar[type[BaseModel]]

    def settings(self, suite: Any) -> Any:
        return suite_items(self.settings_model, suite, f"eval/kinds/{self.name}.py")

    def families_and_seeds(self, suite: Any) -> tuple[Any, list[str], list[int]]:
        """The settings of a kind whose ``items`` name math families (``tasks``) and ``seeds``: the settings, the
        family ids, the seeds."""
        s = self.settings(suite)
        return s, math_family_ids(s.tasks, suite), seed_list(s.seeds)

    def unit_from_dict(self, data: dict[str, Any]) -> Any:
        return self.unit_model.model_validate(data)

    def failure_record(self, unit: Any, tutor_name: str, failure: dict[str, Any]) -> dict[str, Any]:
        return base_record(unit.key(), tutor_name, unit.model_dump(), failure)

    def metrics(self, records: Sequence[dict], judged: bool) -> dict[str, Any]:
        groups = {}
        for tutor, recs in group_by_tutor(records).items():
            groups[tutor] = {"n_units": len(recs), "metrics": self._group_metrics(recs, judged)}
        return {"groups": groups, "specs": self.metric_specs()}

    def metric_specs(self) -> dict[str, MetricSpec]:
        """``{name: MetricSpec}`` of every metric the kind reports."""
        raise NotImplementedError

    def _group_metrics(self, recs: list[dict], judged: bool) -> dict[str, Any]:
        """``{name: summary}`` of one tutor's records."""
        raise NotImplementedError
