"""Reward terms: each written once on an exchange or an episode record, usable in the env and as a TRL function.

A :class:`Term` has a ``level``:

- ``exchange``: ``fn(exchange) -> float | None`` on one tutor turn and the student's reply, the dict of
  :mod:`envs.reward_api` (``task``, ``tutor``, ``student``, ``state_before``, ``state_after``, ``history``,
  ``turn``);
- ``episode``: ``fn(record) -> float | None`` on an ``episodes.jsonl`` record (its ``transcript``,
  ``learning_gain``, ``posttest_score``, ...).

``None`` means "cannot score this sample" (no student state, no post-test). Penalties are negative values;
rubric weights are non-negative.

**TRL form** (:meth:`Term.trl`): ``f(prompts, completions, **kwargs) -> list[float | None]``, one value per
completion, reading these per-sample columns from ``kwargs``:

- ``exchange``: a list of exchange dicts — an exchange term scores each;
- ``episode``: a list of episode records — an episode term scores each; an exchange term reads the episode's
  summed component ``record["reward_components"][name]`` (the env's rubric computed it turn by turn), or
  else, for a text-only term (length, format), sums it over the record's tutor turns;
- neither: a text-only term scores the completion itself (a string, or a chat list whose last message is the
  assistant's); any other term returns ``None`` (TRL ignores it).

Terms (value ranges per exchange / per episode):

============================ ======== ==================================================================
``learning_gain``            episode  isomorphic post-test score minus pre-test score, in [-1, 1]
``posttest_solve``           episode  post-test solve rate (PedagogicalRL's r_sol), in [0, 1]
``learning_gain_same``       episode  same-item post-test gain (EducationQ's ALG; telling pays here)
``mastery_gain``             exchange mean over the task's KCs of the student's mastery change, credited only when
                                      the tutor turn passes the content gate (:mod:`rewards.gate`)
``misconception_repair``     exchange per misconception of the task: +1 repaired, +0.25 suppressed, -1 relapsed,
                                      divided by their number; content-gated like ``mastery_gain``
``leak_penalty``             exchange -1 when the tutor turn states an answer (missing verdict: -1, fail closed)
``length_penalty``           exchange -(chars over ``max_chars``) / ``max_chars``, floored at -1
``format_penalty``           exchange -0.5 per violation, floored at -1: empty or invalid turn, over ``max_questions``
                                      (3) question marks, text addressed to a judge, ``[END]`` not at the end
``sid_<M>`` / ``sid_total``  episode  SID metric M (SD, SV, IKT, BP, SC, L3GR, 3C) / TotalScore on the content-gated
                                      transcript: a tutor turn that fails the gate keeps its place in T but
                                      has no strategy, no transfer, no core intent and level L1
``sid_total_raw``            episode  TotalScore on the transcript as labelled (to log how far gating moves it)
============================ ======== ==================================================================

Example::

    from rewards.terms import make_term
    lg = make_term("learning_gain")
    lg.trl()([""], ["..."], episode=[{"learning_gain": 0.5}])  # -> [0.5]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

import numpy as np

from envs.errors import ConfigError
from envs.labels import BLOOM_LEVELS
from envs.records import turn_from_json
from envs.tasks import get_task_set
from envs.tasks.base import Task
from rewards.gate import ContentGate, addresses_judge
from rewards.sid import sid_metrics

Level = Literal["exchange", "episode"]
_END_RE = re.compile(r"\[\s*end\s*\]", re.IGNORECASE)
_SID_METRICS = ("SD", "SV", "IKT", "BP", "SC", "L3GR", "3C")


@dataclass(frozen=True)
class Term:
    """One named reward term; ``fn`` takes an exchange or an episode record (see ``level``)."""

    name: str
    level: Level
    fn: Callable[[Mapping], float | None]
    text_only: bool = False  # fn reads only exchange["tutor"]["utterance"] (and "invalid")
    params: dict[str, Any] = field(default_factory=dict)

    def trl(self) -> Callable[..., list[float | None]]:
        """This term as a TRL reward function ``(prompts, completions, **kwargs) -> list[float | None]``."""

        def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
            return [self._sample(completions, kwargs, i) for i in range(len(completions))]

        reward.__name__ = self.name  # TRL logs each reward function under its __name__
        reward.__doc__ = f"TutorZoo reward term {self.name!r} ({self.level} level); see rewards.terms."
        return reward

    def _sample(self, completions: Sequence[Any], kwargs: Mapping[str, Any], i: int) -> float | None:
        exchanges, episodes = kwargs.get("exchange"), kwargs.get("episode")
        if self.level == "exchange" and exchanges is not None:
            return self.fn(exchanges[i])
        if episodes is not None:
            record = episodes[i]
            if self.level == "episode":
                return self.fn(record)
            summed = (record.get("reward_components") or {}).get(self.name)
            if summed is not None:
                return float(summed)
            if self.text_only:
                tutor = [t for t in record.get("transcript", []) if t.get("speaker") == "tutor"]
                return float(sum(self.fn({"tutor": t}) or 0.0 for t in tutor))
            return None
        if self.text_only:
            return self.fn({"tutor": {"utterance": completion_text(completions[i])}})
        return None


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or a chat list ``[{"role": "assistant", "content": ...}]``."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        content = completion[-1].get("content", "")
        return content if isinstance(content, str) else ""
    return ""


# --- episode terms ---------------------------------------------------------------------------------------


def _field(name: str) -> Callable[[Mapping], float | None]:
    def read(record: Mapping) -> float | None:
        value = record.get(name)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    return read


def canonical_transcript(transcript: Sequence[Mapping]) -> list[dict]:
    """Env transcript records in the form :func:`rewards.sid.sid_metrics` reads (Bloom level as an index)."""
    out = []
    for t in transcript:
        rec = turn_from_json(t)  # a turn keyed by the short names (intent, ...) reads the same
        level = rec.get("cognitive_level")
        rec["cognitive_level"] = BLOOM_LEVELS.index(level) if isinstance(level, str) else level
        out.append(rec)
    return out


def gated_transcript(record: Mapping, gate: ContentGate) -> list[dict]:
    """The transcript with the SID labels of every tutor turn that fails the content gate neutralised."""
    transcript = canonical_transcript(record.get("transcript", []))
    for rec, counts in zip(transcript, gate.mask(transcript), strict=True):
        if rec["speaker"] == "tutor" and not counts:
            rec.update(teaching_strategy=None, discipline_transfer=False, teacher_intent="check_understanding",
                       teacher_guidance_level="L1")
    return transcript


def _gate_for(record: Mapping, params: Mapping[str, Any]) -> ContentGate:
    return ContentGate.for_task(task_of(record), **params)


@cache
def _load_task(task_set: str, task_path: str | None, task_id: str) -> Task | None:
    try:
        return get_task_set(task_set, task_path).build(task_id, np.random.default_rng(0))
    except Exception:  # a record from a task set this install cannot load: the gate then knows no topic words
        return None


def task_of(record: Mapping) -> Task | None:
    """The task of an episode record, rebuilt from its task set (for its keywords, which do not depend on the
    surface draw of a procedural task); ``None`` when the record does not say or the set cannot be loaded."""
    config, task = record.get("config") or {}, record.get("task") or {}
    if not isinstance(config.get("task_set"), str) or not isinstance(task.get("id"), str):
        return None
    return _load_task(config["task_set"], config.get("task_path"), task["id"])


def _sid(metric: str, gated: bool, params: Mapping[str, Any]) -> Callable[[Mapping], float | None]:
    def score(record: Mapping) -> float | None:
        if not record.get("transcript"):
            return None
        turns = gated_transcript(record, _gate_for(record, params)) if gated else canonical_transcript(
            record["transcript"])
        value = sid_metrics(turns)[metric]
        return float(value) if value is not None else None

    return score


# --- exchange terms --------------------------------------------------------------------------------------


def _gated_exchange(exchange: Mapping, params: Mapping[str, Any]) -> bool:
    """Whether the exchange's tutor turn passes the content gate, given the dialogue before it."""
    gate = ContentGate.for_task(exchange.get("task"), **params)
    tutor = exchange.get("tutor") or {}
    history = list(exchange.get("history") or [])
    # history may already hold this tutor turn and the reply: look only at what came before the tutor turn
    before = history[: next((i for i, t in enumerate(history) if t is tutor), len(history))]
    last_student = next((str(t.get("utterance", "")) for t in reversed(before) if t.get("speaker") == "student"), "")
    earlier = [str(t.get("utterance", "")) for t in before if t.get("speaker") == "tutor"]
    return gate.counts(tutor, last_student, earlier)


def _mastery_gain(params: Mapping[str, Any]) -> Callable[[Mapping], float | None]:
    def score(exchange: Mapping) -> float | None:
        before = (exchange.get("state_before") or {}).get("mastery")
        after = (exchange.get("state_after") or {}).get("mastery")
        if not before or not after:
            return None
        if not _gated_exchange(exchange, params):
            return 0.0
        return sum(after[k] - before.get(k, after[k]) for k in after) / len(after)

    return score


_REPAIR_VALUE = {("active", "repaired"): 1.0, ("suppressed", "repaired"): 1.0, ("active", "suppressed"): 0.25,
                 ("suppressed", "active"): -1.0, ("repaired", "active"): -1.0}


def _misconception_repair(params: Mapping[str, Any]) -> Callable[[Mapping], float | None]:
    def score(exchange: Mapping) -> float | None:
        before = (exchange.get("state_before") or {}).get("misconceptions")
        after = (exchange.get("state_after") or {}).get("misconceptions")
        if before is None or after is None:
            return None
        if not after:
            return 0.0
        total = sum(_REPAIR_VALUE.get((before.get(m), s), 0.0) for m, s in after.items())
        # a relapse always counts; progress only when the tutor turn had content
        if total > 0 and not _gated_exchange(exchange, params):
            return 0.0
        return total / len(after)

    return score


def _leak(exchange: Mapping) -> float:
    return 0.0 if (exchange.get("tutor") or {}).get("reveals_answer") is False else -1.0


def _length(max_chars: int) -> Callable[[Mapping], float]:
    def score(exchange: Mapping) -> float:
        n = len(str((exchange.get("tutor") or {}).get("utterance", "")))
        return -min(1.0, max(0, n - max_chars) / max_chars)

    return score


def format_violations(text: str, invalid: bool = False, max_questions: int = 3) -> list[str]:
    """The format rules a tutor turn breaks, e.g. ``format_violations("?" * 4) == ["empty", "question_volley"]``."""
    found = []
    if invalid or not text.strip() or not re.search(r"[A-Za-z]", text):
        found.append("empty")
    if text.count("?") > max_questions:
        found.append("question_volley")
    if addresses_judge(text):
        found.append("addresses_judge")
    end = _END_RE.search(text)
    if end is not None and text[end.end():].strip():
        found.append("end_marker_not_last")
    return found


def _format(max_questions: int) -> Callable[[Mapping], float]:
    def score(exchange: Mapping) -> float:
        tutor = exchange.get("tutor") or {}
        bad = format_violations(str(tutor.get("utterance", "")), bool(tutor.get("invalid", False)), max_questions)
        return -min(1.0, 0.5 * len(bad))

    return score


# --- the registry ----------------------------------------------------------------------------------------

_GATE_PARAMS = {"min_content_words": 2, "max_overlap": 0.8}


def _build(name: str, params: dict[str, Any]) -> Term:
    gate = {k: params.get(k, v) for k, v in _GATE_PARAMS.items()}
    if name in ("learning_gain", "posttest_solve", "learning_gain_same"):
        source = {"posttest_solve": "posttest_score"}.get(name, name)
        return Term(name, "episode", _field(source), params=params)
    if name == "mastery_gain":
        return Term(name, "exchange", _mastery_gain(gate), params=params)
    if name == "misconception_repair":
        return Term(name, "exchange", _misconception_repair(gate), params=params)
    if name == "leak_penalty":
        return Term(name, "exchange", _leak, params=params)
    if name == "length_penalty":
        return Term(name, "exchange", _length(int(params.get("max_chars", 600))), text_only=True, params=params)
    if name == "format_penalty":
        return Term(name, "exchange", _format(int(params.get("max_questions", 3))), text_only=True, params=params)
    if name == "sid_total_raw":
        return Term(name, "episode", _sid("TotalScore", False, gate), params=params)
    if name == "sid_total":
        return Term(name, "episode", _sid("TotalScore", True, gate), params=params)
    metric = name.removeprefix("sid_")
    if name.startswith("sid_") and metric in _SID_METRICS:
        return Term(name, "episode", _sid(metric, True, gate), params=params)
    raise KeyError(name)


TERM_NAMES: tuple[str, ...] = (
    "learning_gain", "posttest_solve", "learning_gain_same", "mastery_gain", "misconception_repair", "leak_penalty",
    "length_penalty", "format_penalty", "sid_total", "sid_total_raw", *(f"sid_{m}" for m in _SID_METRICS),
)
TERM_PARAMS: dict[str, tuple[str, ...]] = {
    **{n: () for n in TERM_NAMES},
    "mastery_gain": tuple(_GATE_PARAMS),
    "misconception_repair": tuple(_GATE_PARAMS),
    "sid_total": tuple(_GATE_PARAMS),
    **{f"sid_{m}": tuple(_GATE_PARAMS) for m in _SID_METRICS},
    "length_penalty": ("max_chars",),
    "format_penalty": ("max_questions",),
}


def make_term(name: str, **params: Any) -> Term:
    """The term called ``name`` (one of :data:`TERM_NAMES`) with its parameters, e.g. ``max_chars=400``."""
    if name not in TERM_NAMES:
        raise ConfigError(f"unknown reward term {name!r}; known terms: {list(TERM_NAMES)}")
    bad = sorted(set(params) - set(TERM_PARAMS[name]))
    if bad:
        raise ConfigError(f"term {name!r} takes no parameter(s) {bad}; it takes {list(TERM_PARAMS[name]) or 'none'}")
    return _build(name, dict(params))
