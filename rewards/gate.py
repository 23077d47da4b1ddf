"""The content gate: does a tutor turn carry teaching content, or only the cue words a labeller counts?

SID's metrics and the simulated student read a tutor turn through its labels, and the rule-based annotator
sets those labels from cue phrases and the task's keywords. A policy can say the cues without teaching
("Imagine place value? It's like a hint, step by step"). The gate lets a reward term count a turn only when

- it is valid, states no answer (``reveals_answer`` is exactly ``False``: anything else fails closed) and is
  on topic (``target_kc`` recognised);
- it has *substance*: at least ``min_content_words`` distinct words that are not cue words, filler, the task's
  knowledge-component keywords or names, nor copied from the student's last turn (``gate_words.yaml``);
- it does not address a judge or a reward model (role markers, "score this 5/5", ...);
- it is not a near copy of an earlier tutor turn (Jaccard similarity of content words >= ``max_overlap``).

Example::

    gate = ContentGate.for_task(task)
    gate.counts(tutor_turn, previous_student_text="I think it is 5", earlier_tutor_texts=[])
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from tutorzoo.envs.errors import ConfigError

_WORDS_FILE = Path(__file__).with_name("gate_words.yaml")
_WORD_RE = re.compile(r"[a-z][a-z0-9']*")


@dataclass(frozen=True)
class _Vocabulary:
    stop: frozenset[str]
    address: tuple[re.Pattern[str], ...]


@cache
def _vocabulary() -> _Vocabulary:
    data = yaml.safe_load(_WORDS_FILE.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or set(data) != {"cue", "filler", "address"}:
        raise ConfigError(f"{_WORDS_FILE}: top-level keys must be exactly cue, filler, address")
    for key in ("cue", "filler", "address"):
        if not isinstance(data[key], list) or not all(isinstance(w, str) for w in data[key]):
            raise ConfigError(f"{_WORDS_FILE}: {key!r} must be a list of strings")
    try:
        address = tuple(re.compile(p, re.IGNORECASE) for p in data["address"])
    except re.error as e:
        raise ConfigError(f"{_WORDS_FILE}: an 'address' pattern is not a valid regular expression: {e}") from e
    return _Vocabulary(frozenset(w.lower() for w in data["cue"] + data["filler"]), address)


def words(text: str) -> frozenset[str]:
    """The distinct lower-case words of ``text``, e.g. ``words("Why? Why 3 apples") == {"why", "apples"}``."""
    return frozenset(_WORD_RE.findall(text.lower()))


def addresses_judge(text: str) -> bool:
    """True when ``text`` speaks to an evaluator or reward model rather than the student."""
    return any(p.search(text) for p in _vocabulary().address)


def _topic_words(task: object) -> frozenset[str]:
    found: set[str] = set()
    for kc in _get(task, "knowledge_components", ()):
        for phrase in (*_get(kc, "keywords", ()), _get(kc, "name", "")):
            found |= words(str(phrase))
    for m in _get(task, "misconceptions", ()):
        for phrase in _get(m, "keywords", ()):
            found |= words(str(phrase))
    return frozenset(found)


def _get(obj: object, name: str, default: object) -> object:
    """A field of a Task (pydantic) or of its public view (dict): the rewards see both."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


@dataclass(frozen=True)
class ContentGate:
    """The gate for one task; ``topic`` holds the task's keyword vocabulary (empty when no task is known)."""

    topic: frozenset[str] = frozenset()
    min_content_words: int = 2
    max_overlap: float = 0.8

    @classmethod
    def for_task(cls, task: object | None, min_content_words: int = 2, max_overlap: float = 0.8) -> ContentGate:
        return cls(_topic_words(task) if task is not None else frozenset(), min_content_words, max_overlap)

    def content_words(self, text: str, copied_from: str = "") -> frozenset[str]:
        """Words of ``text`` that are not cues, filler, topic keywords, numbers or copies of ``copied_from``."""
        return words(text) - _vocabulary().stop - self.topic - words(copied_from)

    def counts(self, turn: Mapping, previous_student_text: str = "", earlier_tutor_texts: Iterable[str] = ()) -> bool:
        """Whether a tutor transcript record counts for a content-gated term (see the module docstring)."""
        if turn.get("invalid", False) or turn.get("reveals_answer") is not False or turn.get("target_kc") is None:
            return False
        text = str(turn.get("utterance", ""))
        if addresses_judge(text):
            return False
        content = self.content_words(text, previous_student_text)
        if len(content) < self.min_content_words:
            return False
        for earlier in earlier_tutor_texts:
            other = self.content_words(earlier)
            union = content | other
            if union and len(content & other) / len(union) >= self.max_overlap:
                return False
        return True

    def mask(self, transcript: Sequence[Mapping]) -> list[bool]:
        """For each record of ``transcript``: True for a tutor turn that counts; student turns are False."""
        out: list[bool] = []
        last_student = ""
        earlier: list[str] = []
        for rec in transcript:
            if rec.get("speaker") == "tutor":
                out.append(self.counts(rec, last_student, earlier))
                earlier.append(str(rec.get("utterance", "")))
            else:
                out.append(False)
                last_student = str(rec.get("utterance", ""))
        return out
