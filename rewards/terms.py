"""Reward terms: each written once on an exchange or an episode record, usable in the env and as a TRL function.

A :class:`Term` has a ``level``:

- ``exchange``: ``fn(exchange) -> float | None`` on one tutor turn and the student's reply, the dict of
  :mod:`tutorzoo.envs.reward_api` (``task``, ``tutor``, ``student``, ``state_before``, ``state_after``, ``history``,
  ``turn``);
- ``episode``: ``fn(record) -> float | None`` on an ``episodes.jsonl`` record (its ``transcript``,
  ``learning_gain``, ``posttest_score``, ...).

``None`` means "cannot score this sample" (no student state, no post-test). Penalties are negative values;
rubric weights are non-negative.

**TRL form** (:meth:`Term.trl`): ``f(prompts, completions, **kwargs) -> list[float | None]``, one value per
completion, reading these per-sample columns from ``kwargs``:

- ``exchange``: a list of exchange dicts — an exchange term scores each;
- ``episode``: a list of episode records — every term reads the component the env's rubric logged,
  ``record["reward_components"][name]`` (summed over the turns for an exchange term), so a term is computed
  once, while the episode plays. A record without that component (played under another rubric) is scored
  here: an episode term on the record, a text-only exchange term (length, format) summed over its tutor
  turns; any other exchange term gives ``None``;
- neither: a text-only term scores the completion itself (a string, or a chat list whose last message is the
  assistant's); any other term returns ``None`` (TRL ignores it).

Terms (value ranges per exchange / per episode):

============================ ======== ==================================================================
``learning_gain``            episode  isomorphic post-test score minus pre-test score, in [-1, 1]
``posttest_solve``           episode  post-test solve rate (PedagogicalRL's r_sol), in [0, 1]
``learning_gain_same``       episode  same-item post-test gain (EducationQ's ALG; telling pays here)
``mastery_gain``             exchange mean over the task's KCs of the student's mastery change, credited only when
                                      the tutor turn passes the content gate (:mod:`tutorzoo.rewards.gate`)
``misconception_repair``     exchange per misconception of the task: +1 repaired, +0.25 suppressed, -1 relapsed,
                                      divided by their number; content-gated like ``mastery_gain``
``leak_penalty``             exchange -1 when the tutor turn states an answer (missing verdict: -1, fail closed)
``length_penalty``           exchange -(chars over ``max_chars``) / ``max_chars``, floored at -1; chars of the text
                                      the student reads (markdown layout dropped, blanks collapsed)
``format_penalty``           exchange -0.5 per violation, floored at -1: empty or invalid turn, over ``max_questions``
                                      (3) question marks, text addressed to a judge, ``[END]`` not at the end
``sid_<M>`` / ``sid_total``  episode  SID metric M (SD, SV, IKT, BP, SC, L3GR, 3C) / TotalScore on the content-gated
                                      transcript: a tutor turn that fails the gate keeps its place in T but
                                      has no strategy, no transfer, no core intent and level L1
``sid_total_raw``            episode  TotalScore on the transcript as labelled (to log how far gating moves it)
============================ ======== ==================================================================

**The registry** (:data:`TERMS`): a term is registered by name with :func:`register_term`; a rubric may also
name any function ``factory(**params) -> Term`` by import path, ``package.module:factory``, as tutors and task
sets are named. The term then appears under that name in ``reward_components`` and in TRL's logs.

Example::

    from tutorzoo.rewards.terms import make_term
    solve = make_term("posttest_solve")
    solve.trl()([""], ["..."], episode=[{"posttest_score": 0.5}])  # -> [0.5]
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from difflib import get_close_matches
from functools import cache
from typing import Any, Literal, cast

import numpy as np

from tutorzoo.envs import records
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.import_path import load_import_path
from tutorzoo.envs.labels import BLOOM_LEVELS
from tutorzoo.envs.reading.normalise import plain_text, sentences
from tutorzoo.envs.records import LEARNING_GAIN, reward_components, turn_from_json
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.envs.tasks.base import Task
from tutorzoo.rewards.gate import ContentGate, addresses_judge, said_anything
from tutorzoo.rewards.sid import sid_metrics

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
        reward.__doc__ = f"TutorZoo reward term {self.name!r} ({self.level} level); see tutorzoo.rewards.terms."
        return reward

    def _sample(self, completions: Sequence[Any], kwargs: Mapping[str, Any], i: int) -> float | None:
        exchanges, episodes = kwargs.get("exchange"), kwargs.get("episode")
        if self.level == "exchange" and exchanges is not None:
            return self.fn(exchanges[i])
        if episodes is not None:
            record = episodes[i]
            # the env's rubric computed this term while the episode played: read it, never recompute it
            logged = reward_components(record).get(self.name)
            if logged is not None:
                return float(logged)
            if self.level == "episode":
                return self.fn(record)  # a record this term did not score while it played (another rubric)
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


def canonical_transcript(transcript: Sequence[Mapping]) -> list[dict]:
    """Env transcript records in the form :func:`tutorzoo.rewards.sid.sid_metrics` reads (Bloom level as an index)."""
    out = []
    for t in transcript:
        rec = turn_from_json(t)  # a turn keyed by the short names (intent, ...) reads the same
        level = rec.get("cognitive_level")
        rec["cognitive_level"] = BLOOM_LEVELS.index(level) if isinstance(level, str) else level
        out.append(rec)
    return out


def gated_transcript(record: Mapping, gate: ContentGate) -> list[dict]:
    """The transcript with the SID labels of every tutor turn that fails the content gate neutralised; with the
    task's content reader, a transfer also needs content: the turn makes one of the task's cross-discipline links
    (its bridge or keywords said), or works on a component of another discipline than the tutor's turn before
    (naming another discipline is no transfer)."""
    transcript = canonical_transcript(record.get("transcript", []))
    last_discipline: str | None = None
    for rec, counts in zip(transcript, gate.mask(transcript), strict=True):
        if rec["speaker"] != "tutor":
            continue
        if not counts:
            rec.update(teaching_strategy=None, discipline_transfer=False, teacher_intent="check_understanding",
                       teacher_guidance_level="L1")
        if gate.reader is None:
            continue
        reading = gate.reader.read(str(rec.get("utterance", "")))
        kc = gate.reader.task.kc(reading.kc) if reading.kc is not None else None
        if rec["discipline_transfer"] and not reading.links and (
                kc is None or last_discipline is None or kc.discipline == last_discipline):
            rec["discipline_transfer"] = False
        if kc is not None:
            last_discipline = kc.discipline
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


# a greeting and a sign-off ("Of course! Let's go through this.", "Let me know if anything is unclear!"): up to this
# many characters of sentences made of cue words and filler alone are not counted; a wall of them still is
COURTESY_CHARS = 150


def read_length(text: str) -> int:
    """The length of what the student reads: ``text`` without its markdown layout (headings, bullets, bold, step
    labels), runs of blanks collapsed, less up to :data:`COURTESY_CHARS` of sentences that say nothing."""
    plain = plain_text(text)
    courtesy = sum(len(" ".join(sent.split())) + 1 for sent in sentences(plain) if not said_anything(sent))
    return max(0, len(" ".join(plain.split())) - min(COURTESY_CHARS, courtesy))


def _length(max_chars: int) -> Callable[[Mapping], float]:
    def score(exchange: Mapping) -> float:
        n = read_length(str((exchange.get("tutor") or {}).get("utterance", "")))
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

TermFactory = Callable[..., Term]


@dataclass(frozen=True)
class TermEntry:
    """A registered term: ``factory(**params) -> Term`` and the parameter names it takes."""

    factory: TermFactory
    params: tuple[str, ...] = ()


TERMS: dict[str, TermEntry] = {}
"""The registry: term name -> :class:`TermEntry`. Add to it with :func:`register_term`; a rubric may also name
a term by import path, ``package.module:factory`` (see :func:`make_term`)."""


def register_term(name: str, params: Sequence[str] = ()) -> Callable[[TermFactory], TermFactory]:
    """A decorator registering ``factory(**params) -> Term`` as the term ``name``.

    Example::

        @register_term("turn_count")
        def turn_count() -> Term:
            return Term("turn_count", "episode", lambda record: float(record["n_tutor_turns"]))
    """

    def add(factory: TermFactory) -> TermFactory:
        if name in TERMS:
            raise ConfigError(f"reward term {name!r} is registered twice; give the second one another name")
        TERMS[name] = TermEntry(factory, tuple(params))
        return factory

    return add


_GATE_PARAMS = {"min_content_words": 2, "max_overlap": 0.8}


def _gate(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: params.get(k, v) for k, v in _GATE_PARAMS.items()}


def _record_field(name: str, read: Callable[[Mapping], float | None]) -> None:
    register_term(name)(lambda **params: Term(name, "episode", read, params=params))


# the record's own numbers, read through its typed accessors (None where the protocol has no such post-test)
_record_field(LEARNING_GAIN, records.learning_gain)
_record_field("posttest_solve", records.posttest_score)
_record_field("learning_gain_same", records.learning_gain_same)


@register_term("mastery_gain", tuple(_GATE_PARAMS))
def _mastery_gain_term(**params: Any) -> Term:
    return Term("mastery_gain", "exchange", _mastery_gain(_gate(params)), params=params)


@register_term("misconception_repair", tuple(_GATE_PARAMS))
def _misconception_repair_term(**params: Any) -> Term:
    return Term("misconception_repair", "exchange", _misconception_repair(_gate(params)), params=params)


@register_term("leak_penalty")
def _leak_term(**params: Any) -> Term:
    return Term("leak_penalty", "exchange", _leak, params=params)


@register_term("length_penalty", ("max_chars",))
def _length_term(**params: Any) -> Term:
    return Term("length_penalty", "exchange", _length(int(params.get("max_chars", 600))), text_only=True,
                params=params)


@register_term("format_penalty", ("max_questions",))
def _format_term(**params: Any) -> Term:
    return Term("format_penalty", "exchange", _format(int(params.get("max_questions", 3))), text_only=True,
                params=params)


def _sid_term(name: str, metric: str, gated: bool) -> None:
    def factory(**params: Any) -> Term:
        return Term(name, "episode", _sid(metric, gated, _gate(params)), params=params)

    register_term(name, tuple(_GATE_PARAMS) if gated else ())(factory)


_sid_term("sid_total", "TotalScore", True)
_sid_term("sid_total_raw", "TotalScore", False)
for _metric in _SID_METRICS:
    _sid_term(f"sid_{_metric}", _metric, True)


TERM_NAMES: tuple[str, ...] = tuple(TERMS)
"""The built-in terms (the registry as shipped)."""
TERM_PARAMS: dict[str, tuple[str, ...]] = {name: entry.params for name, entry in TERMS.items()}


def _import_path(name: str) -> TermEntry:
    """The entry of a ``package.module:factory`` term name; errors name the fix."""
    module_name, _, attr = name.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"reward term {name!r}: an import path is 'package.module:factory', with both parts")
    factory = load_import_path(
        name,
        cannot_import=lambda module, exc: f"reward term {name!r}: cannot import {module!r} ({type(exc).__name__}: "
        f"{exc}). Make the module importable: put its folder on PYTHONPATH or install its package",
        has_no=lambda module, attr: f"reward term {name!r}: module {module!r} has no {attr!r}; name a function that "
        "returns a tutorzoo.rewards.terms.Term (or a Term object)",
    )
    if isinstance(factory, Term):
        return TermEntry(lambda: factory)
    if not callable(factory):
        raise ConfigError(f"reward term {name!r}: {attr!r} is a {type(factory).__name__}, not a factory; name a "
                          "function that returns a tutorzoo.rewards.terms.Term")
    params = inspect.signature(factory).parameters.values()
    takes = tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        takes = ("**",)
    return TermEntry(cast(TermFactory, factory), takes)  # what it returns is checked where it is called


def term_entry(name: str) -> TermEntry:
    """The registry entry of ``name``: a registered term or a ``package.module:factory`` import path."""
    entry = TERMS.get(name)
    if entry is not None:
        return entry
    if ":" in name:
        return _import_path(name)
    close = get_close_matches(name, TERMS, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"unknown reward term {name!r}.{hint} Known terms: {sorted(TERMS)}; for your own term give "
                      "'package.module:factory' (a function returning tutorzoo.rewards.terms.Term) or register it with "
                      "tutorzoo.rewards.terms.register_term")


def make_term(name: str, **params: Any) -> Term:
    """The term called ``name`` with its parameters, e.g. ``make_term("length_penalty", max_chars=400)``.

    ``name`` is a registered term (:data:`TERMS`) or ``package.module:factory``, a function called with the
    parameters that returns a :class:`Term` (or a :class:`Term` object itself). The term is named ``name``
    whatever the factory called it: that is the key of its component in ``reward_components`` and the name TRL
    logs it under.
    """
    entry = term_entry(name)
    if "**" not in entry.params:
        bad = sorted(set(params) - set(entry.params))
        if bad:
            raise ConfigError(f"term {name!r} takes no parameter(s) {bad}; it takes {list(entry.params) or 'none'}")
    try:
        term = entry.factory(**params)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"reward term {name!r}: its factory raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(term, Term):
        raise ConfigError(f"reward term {name!r}: its factory returned a {type(term).__name__}, not a "
                          "tutorzoo.rewards.terms.Term; return Term(name, 'exchange' | 'episode', fn) with "
                          "fn(exchange or record) -> float | None")
    if term.level not in ("exchange", "episode"):
        raise ConfigError(f"reward term {name!r}: level must be 'exchange' or 'episode', got {term.level!r}")
    return term if term.name == name else replace(term, name=name)
