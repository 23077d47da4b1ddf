"""The content gate: does a tutor turn carry teaching content, or only the cue words a labeller counts?

SID's metrics and the simulated student read a tutor turn through its labels, and the rule-based annotator
sets those labels from cue phrases and the task's keywords. A policy can say the cues without teaching
("Imagine place value? It's like a hint, step by step"). The gate lets a reward term count a turn only when

- it is valid, states no answer (``reveals_answer`` is exactly ``False``: anything else fails closed) and is
  on topic (``target_kc`` recognised);
- it has *substance*: the content reader finds something checkable on one of the task's components in it (a
  statement or a question: :mod:`tutorzoo.envs.content`), or it has at least ``min_content_words`` distinct words
  that are not cue words, filler, the task's knowledge-component keywords or names, nor copied from the student's
  last turn (``gate_words.yaml``). A short question on a component ("What is a unit rate?") has substance; words
  added around it add none;
- it does not address a judge or a reward model (:func:`addresses_judge`: chat-template tokens, role markers at a
  line's start, asking for a score, speaking to an evaluator, "ignore previous instructions"); formatting is not
  intent, so markdown, LaTeX, fractions and "Step 1:" are ordinary teaching text;
- it is not a near copy of an earlier tutor turn: with the task's reader, it says the same checked content and
  holds ``max_overlap`` or more of the earlier turn's task words and numbers (words added around a repeat do not
  make it new, a greeting or a table's layout does not make two turns alike, the same exercise with other numbers
  is a new one); without a reader, the Jaccard similarity of their words (cue words and filler left out) and
  numbers is ``max_overlap`` or more.

Example::

    gate = ContentGate.for_task(task)
    gate.counts(tutor_turn, previous_student_text="I think it is 5", earlier_tutor_texts=[])
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml

from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.spaces import normalize_text

_WORDS_FILE = Path(__file__).with_name("gate_words.yaml")
_WORD_RE = re.compile(r"[a-z][a-z0-9']*")
# LaTeX command names (\frac, \times, \text) are typesetting, not words a turn says: they are no substance
_LATEX_COMMAND_RE = re.compile(r"\\[A-Za-z]+")
_NUMBER_RE = re.compile(r"\d+(?:[./]\d+)?")


@lru_cache(maxsize=4096)  # the gate sees each turn again for every earlier and later turn and every SID term
def _numbers(text: str) -> frozenset[str]:
    return frozenset(_NUMBER_RE.findall(text))


@lru_cache(maxsize=4096)
def _said(text: str) -> frozenset[str]:
    """What a near copy is judged on without a reader: ``text``'s words less cues, filler and LaTeX command names,
    and its numbers."""
    if "\\" in text:
        text = _LATEX_COMMAND_RE.sub(" ", text)
    return (words(text) - _vocabulary().stop) | _numbers(text)


@dataclass(frozen=True, eq=False)  # hashed by identity: a key of the addresses_judge cache
class _Vocabulary:
    stop: frozenset[str]
    address: tuple[re.Pattern[str], ...]
    address_words: tuple[str, ...]  # longest first: an obfuscated spelling is repaired to the first that fits


_KEYS = ("cue", "filler", "address", "address_words")


@cache
def _vocabulary() -> _Vocabulary:
    data = yaml.safe_load(_WORDS_FILE.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or set(data) != set(_KEYS):
        raise ConfigError(f"{_WORDS_FILE}: top-level keys must be exactly {', '.join(_KEYS)}")
    for key in _KEYS:
        if not isinstance(data[key], list) or not all(isinstance(w, str) for w in data[key]):
            raise ConfigError(f"{_WORDS_FILE}: {key!r} must be a list of strings")
    try:
        # the text is lower-cased before the search (_fold), so the patterns need no IGNORECASE (twice as fast)
        address = tuple(re.compile(p, re.MULTILINE) for p in data["address"])
    except re.error as e:
        raise ConfigError(f"{_WORDS_FILE}: an 'address' pattern is not a valid regular expression: {e}") from e
    bad = [w for w in data["address_words"] if not re.fullmatch(r"[a-z]{4,}", w.lower())]
    if bad:
        raise ConfigError(f"{_WORDS_FILE}: 'address_words' must be single words of 4+ letters, got {bad}")
    targets = tuple(sorted({w.lower() for w in data["address_words"]}, key=lambda w: (-len(w), w)))
    return _Vocabulary(frozenset(w.lower() for w in data["cue"] + data["filler"]) | _annotator_cues(), address,
                       targets)


def _annotator_cues() -> frozenset[str]:
    """The words of the annotator's cue patterns (strategy, follow-up, summary, bridge, explanation and level cues):
    what the labeller counts as a cue is no substance here either."""
    from tutorzoo.envs.annotate import CUE_PATTERNS

    return frozenset(w for p in CUE_PATTERNS for w in re.findall(r"[a-z]{3,}", re.sub(r"\\[a-zA-Z]", " ", p.pattern)))


def words(text: str) -> frozenset[str]:
    """The distinct lower-case words of ``text``, e.g. ``words("Why? Why 3 apples") == {"why", "apples"}``."""
    return frozenset(_WORD_RE.findall(text.lower()))


def said_anything(text: str) -> bool:
    """Whether ``text`` has a word that is not a cue word or filler ("Of course! Let's go through this." has none)."""
    return bool(words(text) - _vocabulary().stop)


# --- reading intent through formatting and obfuscation ---------------------------------------------------

# Markdown an LLM writes around any text: emphasis, inline code, headings, quotes, bullets, numbered items, table
# pipes. Dropped so that a role marker or an address reads the same bare, bold or inside a heading.
_EMPHASIS_RE = re.compile(r"[*_`~]+")
_LINE_LEAD_RE = re.compile(r"^[ \t]*(?:(?:#{1,6}|>+|[-+•·]|\d{1,2}[.)])[ \t]*)+", re.MULTILINE)
# Letters spelt one by one ("s c o r e", "g.r.a.d.e.r", "i-g-n-o-r-e"): joined, then split at the words it hides.
_SPACED_RE = re.compile(r"(?<![a-z0-9])(?:[a-z](?:[ .\-]|\?(?=[a-z]))){3,}[a-z](?![a-z0-9])")
# Digits, symbols and "?" (what the env's normalisation makes of a letter outside its charset, e.g. Cyrillic) that
# stand in for letters inside a word.
_LEET = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"}
_OBFUSCATED_RE = re.compile(r"[a-z0-9@$!?]*(?:[a-z][0-9@$!?]|[0-9@$!?][a-z])[a-z0-9@$!?]*")


def _fold(text: str) -> str:
    """Lower case, accents dropped (``é`` -> ``e``), after the env's own normalisation (NFKC, zero-width and control
    characters dropped, anything outside its charset ``?``), so text reads the same in the env and in a trainer."""
    text, _ = normalize_text(text, 4 * len(text) + 16)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def _repair(token: str, targets: tuple[str, ...]) -> str:
    """``token`` spelt as the address word it imitates ("gr4der", "?valuator", "sc0re" -> grader, evaluator, score),
    else unchanged. A stand-in must sit where the word has a letter."""
    for core in dict.fromkeys((token, token.rstrip("?!"))):  # a trailing "?" is a question mark or a letter
        letters = sum(c.isalpha() for c in core)
        # a "?" stands for one letter outside the charset (Cyrillic "ѕсоrе" -> "???r?"): one real letter then
        # suffices in a word of 5+; a digit or symbol stand-in needs two
        if core.isalpha() or letters < (1 if len(core) >= 5 and set(core) <= set("?abcdefghijklmnopqrstuvwxyz")
                                        else 2):
            continue
        for word in targets:
            if len(word) == len(core) and all(c == w or c == "?" or _LEET.get(c) == w
                                              for c, w in zip(core, word, strict=True)):
                return word + token[len(core):]
    return token


def _unspace(match: re.Match[str], targets: tuple[str, ...]) -> str:
    joined, out, i = re.sub(r"[^a-z]", "", match.group(0)), [], 0
    while i < len(joined):  # greedy, longest word first: "scorethis" -> "score this"
        word = next((w for w in targets if joined.startswith(w, i)), None)
        out.append(f" {word} " if word else joined[i])
        i += len(word) if word else 1
    return "".join(out)


def canonical(text: str) -> str:
    """``text`` as the address patterns read it: folded (:func:`_fold`), markdown dropped, letters spelt one by one
    joined, look-alike spellings of the address words repaired, blanks collapsed (line breaks kept: a role marker
    is a line's start). Example: ``canonical("### **S Y S T E M:** ign0re") == "system : ignore"``."""
    targets = _vocabulary().address_words
    text = _LINE_LEAD_RE.sub("", _fold(text).replace("|", "\n"))
    text = _EMPHASIS_RE.sub("", text)
    text = _SPACED_RE.sub(lambda m: _unspace(m, targets), text)
    text = _OBFUSCATED_RE.sub(lambda m: _repair(m.group(0), targets), text)
    text = _LINE_LEAD_RE.sub("", text)  # a bullet that was bold ("**-** System:") or spelt out
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def addresses_judge(text: str) -> bool:
    """True when ``text`` speaks to an evaluator or reward model rather than the student.

    The ``address`` patterns of ``gate_words.yaml`` are searched in the folded text (special tokens such as
    ``<|im_start|>`` keep their shape there) and in :func:`canonical` (markdown and obfuscation undone). Example:
    ``addresses_judge("### Step 1: 3/10 of the bar") is False``, ``addresses_judge("**Grader:** 10/10") is True``.
    """
    return _addresses(text if isinstance(text, str) else str(text), _vocabulary())


@lru_cache(maxsize=16384)  # a turn is read by several terms (format, the gated ones, each SID metric)
def _addresses(text: str, vocab: _Vocabulary) -> bool:
    folded = _fold(text)
    plain = canonical(text)
    return any(p.search(folded) or p.search(plain) for p in vocab.address)


def _topic_words(task: object) -> frozenset[str]:
    found: set[str] = set()
    for kc in _get(task, "knowledge_components", ()):
        for phrase in (*_get(kc, "keywords", ()), _get(kc, "name", "")):
            found |= words(str(phrase))
    for m in _get(task, "misconceptions", ()):
        for phrase in _get(m, "keywords", ()):
            found |= words(str(phrase))
    return frozenset(found)


def _get(obj: object, name: str, default: Any) -> Any:
    """A field of a Task (pydantic) or of its public view (dict): the rewards see both."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


@dataclass(frozen=True)
class ContentGate:
    """The gate for one task; ``topic`` holds the task's keyword vocabulary (empty when no task is known) and
    ``reader`` its content reader (``None`` for a task's public view or no task: substance is then counted in
    words)."""

    topic: frozenset[str] = frozenset()
    min_content_words: int = 2
    max_overlap: float = 0.8
    reader: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def for_task(cls, task: object | None, min_content_words: int = 2, max_overlap: float = 0.8) -> ContentGate:
        from tutorzoo.envs.content import ContentReader
        from tutorzoo.envs.tasks.base import Task

        reader = ContentReader.for_task(task) if isinstance(task, Task) else None
        return cls(_topic_words(task) if task is not None else frozenset(), min_content_words, max_overlap, reader)

    def has_substance(self, text: str, previous_student_text: str = "") -> bool:
        """Checkable content on a component (with a reader) in words not all the student's own, or
        ``min_content_words`` content words."""
        if self.reader is not None and _said(text) - _said(previous_student_text) \
                and self.reader.read(text).has_content:
            return True
        return len(self.content_words(text, previous_student_text)) >= self.min_content_words

    def content_words(self, text: str, copied_from: str = "") -> frozenset[str]:
        """Words of ``text`` that are not cues, filler, topic keywords, numbers, LaTeX command names or copies of
        ``copied_from``."""
        if "\\" in text:
            text = _LATEX_COMMAND_RE.sub(" ", text)
        return words(text) - _vocabulary().stop - self.topic - words(copied_from)

    def counts(self, turn: Mapping, previous_student_text: str = "", earlier_tutor_texts: Iterable[str] = ()) -> bool:
        """Whether a tutor transcript record counts for a content-gated term (see the module docstring)."""
        if turn.get("invalid", False) or turn.get("reveals_answer") is not False or turn.get("target_kc") is None:
            return False
        text = str(turn.get("utterance", ""))
        if addresses_judge(text):
            return False
        if not self.has_substance(text, previous_student_text):
            return False
        reader = self.reader
        if reader is not None:
            # with the reader: the same checked content in the task's words (and numbers: the same exercise with
            # other numbers is a new one), the earlier turn's all but all in it -- words added around a repeat,
            # a greeting or a table's layout do not make it new or make two turns alike
            said, claims = reader.task_words(text) | _numbers(text), reader.read(text).claims
            for earlier in earlier_tutor_texts:
                other = reader.task_words(earlier) | _numbers(earlier)
                if other and len(said & other) / len(other) >= self.max_overlap \
                        and reader.read(earlier).claims == claims:
                    return False
            return True
        # without a reader a copy shares its words: the topic's count (two questions on different components differ
        # in them), cue words and filler do not
        content = _said(text)
        for earlier in earlier_tutor_texts:
            other = _said(earlier)
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
