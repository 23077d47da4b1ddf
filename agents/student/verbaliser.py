"""The template verbaliser: turns a :class:`~tutorzoo.agents.student.model.Plan` or a test answer into the student's
text.

Phrasings live in ``templates.yaml`` beside this file. The persona shapes the voice: the current affect picks
the tone of the opener (anxious / confident / neutral), ``verbosity`` decides how often an opener, an
elaboration or a checking question is added and how many solution steps a test answer shows. All choices
come from the Generator passed in, so a seeded student always says the same thing and two seeds (or two
personas) do not sound alike. When a misconception fires the text states its wrong steps; a correct turn
quotes a solution step (with its numbers); a help-seeking plan asks a question.

A test answer's reasoning reaches the answer it gives, with the item's own numbers: a correct answer quotes the
item's solution; a misconception's answer its wrong solution on *this* item (``Item.misconception_steps``; on a
choice item the chosen option), with the belief only when the belief's numbers are the item's; a slip the
solution up to the step that computes the answer, with the slipped value in its place; a guess no steps.

Example::

    v = TemplateVerbaliser()
    text = v.say(plan, state, rng)           # dialogue turn
    text = v.answer(item, answer, state, rng)  # "... The answer is (B)."
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache, partial
from pathlib import Path

import numpy as np
import yaml

from tutorzoo.agents.student.model import Answer, Plan, StudentState, nudge_answer
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.reading.numbers import NUMBER_WORDS, number_mentions, parse_number
from tutorzoo.envs.tasks.base import Item

TEMPLATES = Path(__file__).with_name("templates.yaml")
PLACEHOLDERS = frozenset({
    "opening", "kc", "keyword", "step", "steps", "answer", "belief", "wrong_steps", "wrong_value", "other",
    "link_word", "distraction",
})
KINDS = (
    "opening_question", "opening_attempt", "opening_misconception", "correct", "correct_transfer", "higher_order",
    "higher_order_transfer", "misconception", "wrong", "confused", "ask_hint", "irrelevant", "acknowledge",
    "paraphrase_clear", "paraphrase_vague", "off_topic", "closing",
)
ANSWER_KINDS = ("memorised", "known", "misconception", "slip", "slip_unshown", "guess")
# Answers that show no reasoning: a template there that quotes steps or a belief would argue for another answer.
_BARE_ANSWERS = ("memorised", "slip_unshown", "guess")
_REASONING = frozenset({"step", "steps", "wrong_steps", "belief", "wrong_value", "answer"})
TONES = ("anxious", "confident", "neutral")


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a non-empty list of strings, got {value!r}")
    for text in value:
        for _, name, _, _ in string.Formatter().parse(text):
            if name is not None and name not in PLACEHOLDERS:
                raise ConfigError(f"{where}: template {text!r} uses unknown placeholder {{{name}}}; "
                                  f"use one of {sorted(PLACEHOLDERS)}")
    return tuple(value)


@lru_cache(maxsize=16)  # every SimulatedStudent builds a verbaliser: parse each templates file once
def _read_templates(path: str) -> object:
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read templates ({exc}); fix the file or pass another path") from None


class _LazyFields(dict):
    """Template fields, each computed (once) by ``make(key)`` when ``str.format_map`` first asks for it (``make``
    raises KeyError for a key it does not know); a field set beforehand is used as set."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[str], str]) -> None:
        self.make = make

    def __missing__(self, key: str) -> str:
        value = self[key] = self.make(key)
        return value


class TemplateVerbaliser:
    """Writes student turns from templates (``templates.yaml`` or ``path``), deterministically in the rng."""

    def __init__(self, path: str | Path | None = None) -> None:
        path = Path(path or TEMPLATES)
        data = _read_templates(str(path))
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: templates must be a mapping with tone/kinds/answers/...")
        for key in ("tone", "kinds", "answers", "elaborations", "questions", "distractions"):
            if key not in data:
                raise ConfigError(f"{path}: missing section {key!r}; see agents/student/templates.yaml")
        self.tone = {t: _strings(data["tone"].get(t), f"{path}: tone.{t}") for t in TONES}
        self.kinds = {k: _strings(data["kinds"].get(k), f"{path}: kinds.{k}") for k in KINDS}
        self.answers = {k: _strings(data["answers"].get(k), f"{path}: answers.{k}") for k in ANSWER_KINDS}
        for k in _BARE_ANSWERS:
            for text in self.answers[k]:
                used = _placeholders(text) & _REASONING
                if used:
                    raise ConfigError(f"{path}: answers.{k} template {text!r} uses {sorted(used)}; a {k} answer "
                                      "shows no reasoning (its steps would reach another answer): drop them")
        self.elaborations = _strings(data["elaborations"], f"{path}: elaborations")
        self.questions = _strings(data["questions"], f"{path}: questions")
        self.distractions = _strings(data["distractions"], f"{path}: distractions")

    # -- material from the task -------------------------------------------------------------------------
    @staticmethod
    def _kc_steps(state: StudentState, kc: str | None) -> list[str]:
        cached = state.steps_cache.get(kc)
        if cached is not None:
            return cached
        task = state.task
        if kc is None or kc not in state.kcs:
            steps = list(task.solution)
        else:
            words = [w.lower() for w in state.kcs[kc].keywords]
            steps = [s for s in task.solution if any(w in s.lower() for w in words)] or [state.kcs[kc].worked_example]
        state.steps_cache[kc] = steps
        return steps

    @staticmethod
    def _misconception_value(state: StudentState, mid: str, rng: np.random.Generator) -> str:
        for item in state.task.pretest + state.task.posttest:
            wrong = item.misconception_answers.get(mid)
            if wrong is not None:
                if item.options is not None:
                    return item.options[ord(wrong) - ord("A")]
                return wrong
        return nudge_answer(state.task.answer, rng)

    @staticmethod
    def _pick(options: tuple[str, ...] | list[str], rng: np.random.Generator) -> str:
        return options[int(rng.integers(len(options)))]

    def _fields(self, kc_id: str | None, mid: str | None, other: str | None, state: StudentState,
                rng: np.random.Generator) -> _LazyFields:
        """The fields of a template on component ``kc_id`` (misconception ``mid``, the discipline ``other`` of a
        transfer): only those the chosen template names are computed, so only its drawn fields move the rng."""
        return _LazyFields(partial(self._field, kc_id, mid, other, state, rng))

    def _field(self, kc_id: str | None, mid: str | None, other: str | None, state: StudentState,
               rng: np.random.Generator, key: str) -> str:
        task = state.task
        kc = state.kcs.get(kc_id) if kc_id else None
        m = state.misconceptions[mid] if mid is not None else None
        if key == "opening":
            return task.opening_question
        if key == "kc":
            return kc.name if kc else task.title
        if key == "steps":
            return " ".join(self._kc_steps(state, kc_id)[:2])
        if key == "answer":
            return task.answer
        if key == "belief":
            return m.belief if m else ""
        if key == "wrong_steps":
            return (" ".join(m.wrong_steps) or m.belief) if m else ""
        if key == "other":
            return other or ""
        if key == "keyword":
            return self._pick(kc.keywords, rng) if kc else task.title
        if key == "step":
            return self._pick(self._kc_steps(state, kc_id), rng)
        if key == "distraction":
            return self._pick(self.distractions, rng)
        if key == "wrong_value":
            return self._misconception_value(state, mid, rng) if mid is not None else nudge_answer(task.answer, rng)
        if key == "link_word":
            return self._link_word(kc, other, rng)
        raise KeyError(key)

    def _link_word(self, kc, other: str | None, rng: np.random.Generator) -> str:
        if kc is not None and other:
            for link in kc.links:
                if link.discipline == other:
                    return self._pick(link.keywords, rng) if link.keywords else other
        return other or ""

    def _tone(self, state: StudentState) -> str:
        if state.anxiety > 0.55:
            return "anxious"
        if state.confidence > 0.65 and state.anxiety < 0.4:
            return "confident"
        return "neutral"

    # -- public -----------------------------------------------------------------------------------------
    def say(self, plan: Plan, state: StudentState, rng: np.random.Generator) -> str:
        """The utterance of a dialogue turn for ``plan``, in the persona's voice."""
        kind = plan.kind
        if kind == "opening_attempt" and plan.misconception is not None:
            kind = "opening_misconception"
        elif kind == "paraphrase":
            kind = "paraphrase_clear" if plan.cognition_state == "clear_understanding" else "paraphrase_vague"
        other = None
        if kind in ("correct", "higher_order") and plan.discipline_transfer:
            other = plan.disciplines[-1]
            kind += "_transfer"
        fields = self._fields(plan.kc, plan.misconception, other, state, rng)
        core = self._pick(self.kinds[kind], rng).format_map(fields)
        verbosity = state.persona.verbosity
        parts = []
        if kind not in ("opening_question", "irrelevant") and rng.random() < 0.25 + 0.5 * verbosity:
            parts.append(self._pick(self.tone[self._tone(state)], rng))
        opener = parts[0].rstrip() if parts else ""
        if opener and opener[-1] not in ".!?" and core[:1].isupper() and not core.startswith(("I ", "I'")):
            core = core[:1].lower() + core[1:]  # the opener starts the sentence
        parts.append(core)
        if kind not in ("irrelevant", "closing", "ask_hint", "opening_question") and rng.random() < verbosity**2:
            parts.append(self._pick(self.elaborations, rng))
        if kind in ("correct", "misconception", "paraphrase_clear") and rng.random() < 0.2 + 0.3 * state.anxiety:
            parts.append(self._pick(self.questions, rng))
        text = "".join(parts).strip()
        return text[:1].upper() + text[1:]

    def answer(self, item: Item, ans: Answer, state: StudentState, rng: np.random.Generator) -> str:
        """A test answer: short reasoning, then ``The answer is (B).`` (choice) or ``The answer is 3/4.``.

        The reasoning reaches the stated answer with the item's own numbers (see the module docstring)."""
        verbosity = state.persona.verbosity
        shown = 1 if verbosity < 0.34 else 2 if verbosity < 0.67 else None  # None: every step
        fields = self._fields(item.kcs[0], ans.misconception, None, state, rng)
        kind = ans.how
        if kind == "known":
            steps = self._known_steps(item, state)
            if not steps:  # nothing of this item's to quote: the answer alone
                return _with_final("", item, ans)
            fields["steps"] = " ".join(_last(steps, shown))
        elif kind == "slip":
            steps = _slip_steps(item, ans.answer)
            if steps:
                fields["steps"] = " ".join(_last(steps, shown))
            else:
                kind = "slip_unshown"
        elif kind == "misconception":
            return self._misconception_answer(item, ans, state, fields, shown, rng)
        reasoning = self._pick(self.answers[kind], rng).format_map(fields)
        return _with_final(reasoning, item, ans)

    def _known_steps(self, item: Item, state: StudentState) -> list[str]:
        """The item's own solution; without one, the KC's steps whose numbers are the item's (else the option)."""
        if item.solution_steps:
            return list(item.solution_steps)
        numbers = _item_numbers(item)
        steps = [s for s in self._kc_steps(state, item.kcs[0]) if _numbers(s) <= numbers]
        if not steps and item.is_choice:
            steps = [_sentence(item.options[ord(item.answer) - ord("A")])]
        return steps

    def _misconception_answer(self, item: Item, ans: Answer, state: StudentState, fields: dict,
                              shown: int | None, rng: np.random.Generator) -> str:
        m = state.misconceptions[ans.misconception]
        stated = _numbers_of(ans.answer)  # with the item's numbers, the numbers this answer may quote
        if item.is_choice:  # the chosen option is this item's wrong answer in the student's words
            wrong = [_sentence(item.options[ord(ans.answer) - ord("A")])]
        elif ans.misconception in item.misconception_steps:
            wrong = list(item.misconception_steps[ans.misconception])
            # a verbose student shows the whole wrong solution, a terse one from its first wrong step on
            first = min(_first_difference(wrong, item.solution_steps), len(wrong) - 1)
            wrong = wrong[0 if shown is None else min(first, max(0, len(wrong) - shown)) :]
        else:  # the task's wrong steps come from one of its items: said only if they are this item's
            text = " ".join(m.wrong_steps)
            fits = _item_states(item, _numbers_of(text), stated) and _last_number(text) == parse_number(ans.answer)
            wrong = list(m.wrong_steps) if text and fits else []
        belief = m.belief if _item_states(item, _numbers_of(m.belief), stated) else ""
        fields["wrong_steps"] = " ".join(wrong)
        fields["belief"] = belief
        # a template whose material this item lacks is not used; with wrong steps, one that shows them
        usable = [t for t in self.answers["misconception"]
                  if all(fields[name] for name in _placeholders(t) & {"wrong_steps", "belief"})]
        if wrong:
            usable = [t for t in usable if "wrong_steps" in _placeholders(t)]
        reasoning = self._pick(usable, rng).format_map(fields) if usable else ""
        return _with_final(reasoning, item, ans)


# -- test answers: reasoning that reaches the stated answer ---------------------------------------------

@lru_cache(maxsize=4096)  # asked for every misconception template at each misconception answer
def _placeholders(text: str) -> frozenset[str]:
    return frozenset(name for _, name, _, _ in string.Formatter().parse(text) if name)


def _with_final(reasoning: str, item: Item, ans: Answer) -> str:
    final = f"The answer is ({ans.answer})." if item.is_choice else f"The answer is {ans.answer}."
    return f"{reasoning} {final}".strip()


def _last(steps: list[str] | tuple[str, ...], shown: int | None) -> list[str]:
    return list(steps) if shown is None else list(steps[-shown:])


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


_FRACTION = re.compile(r"^\s*(-?\d+)\s*/\s*(\d+)\s*$")


def _numbers(text: str) -> set[int | Fraction]:
    """The values ``text`` states (a percent also as its number: 20% -> 1/5 and 20; a fraction also as its
    numerator and denominator: 1/3 -> 1 and 3)."""
    return set(_numbers_of(text))


# 1970s too; "6.4 / 0.04" is two decimals divided, not 6.4 over a zero (no denominator runs into a decimal point)
_DIGITS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*/\s*(\d+)(?!\.\d))?(\s*%)?(?=s?(?![\w]))")
_HAS_WORD_NUMBER = re.compile(r"(?<![A-Za-z])(?:" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) +
                              r")(?![A-Za-z])", re.IGNORECASE)


_LETTERS = re.compile(r"[A-Za-z]+")
_DIGIT_LETTER = re.compile(r"\d[^\W\d_]")


# A letter outside ASCII: only such a character can case-fold to an ASCII letter (İ ı ſ K) or lower to one.
_NON_ASCII_LETTER = re.compile(r"[^\W\d_\x00-\x7f]")


def _has_word_number(text: str) -> bool:
    """``_HAS_WORD_NUMBER.search(text)``; without non-ASCII letters (× ÷ − are common in steps, and case folding
    then stays in ASCII) a set lookup of the words, many times faster than the big case-insensitive alternation."""
    if text.isascii() or _NON_ASCII_LETTER.search(text) is None:
        return not NUMBER_WORDS.isdisjoint(_LETTERS.findall(text.lower()))
    return _HAS_WORD_NUMBER.search(text) is not None


def _exact(num: int, den: int) -> int | Fraction:
    """num / den exactly: an int when it divides (a zero ``den`` raises ZeroDivisionError, as Fraction does)."""
    whole, rest = divmod(num, den)
    return whole if not rest else Fraction(num, den)


@lru_cache(maxsize=16384)  # item texts repeat across an episode's turns and across episodes
def _numbers_of(text: str) -> frozenset[int | Fraction]:
    # digits only, none run into a letter ("10kg", "6CO₂", "3rd": number_mentions decides those): the same values
    # as number_mentions, far faster
    if not _has_word_number(text) and _DIGIT_LETTER.search(text) is None:
        # Integral values stay ints (equal, and hashing equal, to the Fractions; only compared in sets): parsing
        # a Fraction from a string costs more than the whole scan.
        fast: set[int | Fraction] = set()
        for whole, den, pct in _DIGITS.findall(text):
            if "." in whole:
                head, tail = whole.split(".")
                num, scale = int(head + tail), 10 ** len(tail)
            else:
                num, scale = int(whole), 1
            d = int(den) if den else 1
            value = _exact(num, scale * d)
            if pct:
                fast.update((_exact(num, scale * d * 100), value))
            else:
                fast.add(value)
            if den:
                fast.update((_exact(num, scale), d))
            if "-" + whole in text:
                fast.add(-value)
        return frozenset(fast)
    out = set()
    for m in number_mentions(text):
        out.add(m.value)
        if m.percent:
            out.add(m.value * 100)
        if parts := _FRACTION.match(m.text):
            out.update(Fraction(int(g)) for g in parts.groups())
    return frozenset(out)


def _item_texts(item: Item) -> list[str]:
    texts = [item.stem, item.answer, *(item.options or ()), *item.solution_steps,
             *(s for steps in item.misconception_steps.values() for s in steps)]
    if not item.is_choice:
        texts += list(item.misconception_answers.values())
    return texts


def _item_numbers(item: Item) -> set[int | Fraction]:
    out: set[int | Fraction] = set()
    for text in _item_texts(item):  # one text at a time: the same step and option strings recur, and each is cached
        out |= _numbers_of(text)
    return out


def _item_states(item: Item, values: frozenset[int | Fraction], also: frozenset[int | Fraction]) -> bool:
    """``values <= _item_numbers(item) | also``, reading the item's texts only until every value is found (most
    texts are new each episode, and the stem usually holds them all)."""
    left = values - also
    for text in _item_texts(item):
        if not left:
            break
        left = left - _numbers_of(text)
    return not left


def _last_number(text: str) -> Fraction | None:
    said = number_mentions(text)
    return said[-1].value if said else None


def _first_difference(wrong: list[str], right: tuple[str, ...]) -> int:
    for i, (a, b) in enumerate(zip(wrong, right, strict=False)):
        if a != b:
            return i
    return min(len(wrong), len(right))


def _slip_steps(item: Item, wrong: str) -> list[str]:
    """The item's solution up to the step that computes its answer, that step ending on ``wrong`` instead (a
    slip at the last moment); empty when no step ends on the answer, the answer is not a number, or ``wrong`` is
    a misconception's answer (the student does not hold it, so neither its steps nor a blunder are shown)."""
    target = parse_number(item.answer)
    if target is None or item.is_choice or not wrong.strip() or wrong in item.misconception_answers.values():
        return []  # a slip onto a misconception's value: a blunder that lands exactly there is not believable
    for i, step in enumerate(item.solution_steps):
        said = number_mentions(step)
        if said and said[-1].value == target and not said[-1].percent:
            last = said[-1]
            return [*item.solution_steps[:i], step[: last.start] + wrong + step[last.end :]]
    return []
