"""Answer grading: pull a student's answer out of free text and compare it with the key, exactly.

Used by the env to grade every pre/post-test answer and by the annotator. Numbers are compared as
:class:`fractions.Fraction`, never floats, so ``3/4``, ``0.75``, ``.75``, ``\\frac{3}{4}``, ``75%`` and
``three quarters`` are the same value and ``0.33`` is *not* ``1/3``.

Multiple choice follows EducationQ (docs/spec.md §4): ``answer is (X)``, then ``Answer: X``, then the last
standalone option letter; otherwise the answer is invalid. Within one pattern the *last* match wins (a student
who writes "the answer is (A)... no wait, the answer is (C)" answered C). A standalone letter is

- a letter in brackets not glued to a word: ``(B)``, ``[c]`` (either case; ``f(x)`` is not one), or
- an uppercase letter with no letter, digit, apostrophe, hyphen or dot glued to it (``B``, ``B)``, ``B.``),
  except that ``A`` and ``I`` followed by a lowercase word are read as the article/pronoun ("A cat", "I think")
  unless that word is a copula or connective ("A is right", "A because ...").

Free answers: the last ``answer is X`` / ``Answer: X`` / ``\\boxed{X}``, else ``= X`` closing the text, else
the last number-like token. A percent key is asymmetric: ``equivalent("75", "75%")`` is true (the student
dropped the sign of a percent question) but ``equivalent("75%", "75")`` is false (75% is 0.75).

Numbers are read by :mod:`tutorzoo.envs.reading.numbers` (digits, fractions, mixed numbers, percents, LaTeX, number
words), the one number parser the content reader, the leak detector and the student's words share; its public names
are re-exported here for the grader's callers. Equivalence is exact :class:`~fractions.Fraction` equality, not
math-verify's ``verify``: that one rounds (``1/3`` and ``0.333333`` verify as equal) and reads a percent both ways
(``75%`` and ``75``), both against the contract above.

Example::

    >>> extract_choice("Both look close, but the answer is (C).", 4)
    'C'
    >>> equivalent("\\\\frac{3}{4}", "0.75"), equivalent("75", "75%"), parse_number("1 1/2")
    (True, True, Fraction(3, 2))
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tutorzoo.envs.reading.numbers import (
    NumberMention,
    normalise_math,
    number_mentions,
    parse_number,
    parse_quantity,
    same_number,
)

if TYPE_CHECKING:
    from tutorzoo.envs.tasks.base import Item

__all__ = [
    "Grade",
    "NumberMention",
    "equivalent",
    "extract_choice",
    "extract_value",
    "grade",
    "mentions_value",
    "normalise_math",
    "number_mentions",
    "parse_number",
    "normalise_text",
    "parse_quantity",
    "same_number",
]


@dataclass(frozen=True, slots=True)
class Grade:
    """The grade of one answer. ``valid`` is false when no answer could be extracted (then not correct)."""

    correct: bool
    extracted: str | None
    valid: bool



# --- text normalisation -----------------------------------------------------------------------------------

_NON_WORD_RE = re.compile(r"[^\w]+")
_ARTICLE_RE = re.compile(r"^(?:a|an|the) ")


def normalise_text(s: str, strip_article: bool = True) -> str:
    """Lowercase words separated by single spaces; punctuation dropped; a leading article dropped."""
    s = _NON_WORD_RE.sub(" ", unicodedata.normalize("NFKC", s).casefold().replace("_", " ")).strip()
    return _ARTICLE_RE.sub("", s, count=1) if strip_article else s


def equivalent(a: str, b: str) -> bool:
    """Whether response ``a`` states expected answer ``b``: numerically when both parse, else as normalised text.

    Asymmetric for percents: if ``b`` is a percent, ``a`` may drop the sign ("75" for "75%") or give the
    fraction ("0.75"); a plain ``b`` is not matched by a percent ``a`` of the same digits.

    Example::

        >>> equivalent("0.75", "3/4"), equivalent("75", "75%"), equivalent("75%", "75"), equivalent("The Moon", "moon")
        (True, True, False, True)
    """
    pa, pb = parse_quantity(a), parse_quantity(b)
    if pa is not None and pb is not None:
        return same_number(pa[0], pa[1], pb[0], pb[1])
    nb = normalise_text(b)
    return bool(nb) and normalise_text(a) == nb


def mentions_value(text: str, value: str) -> bool:
    """Whether ``text`` states ``value`` anywhere: an equivalent number, or the normalised words of ``value``.

    Example::

        >>> mentions_value("So we get 10/12, which simplifies.", "5/6"), mentions_value("56 apples", "5/6")
        (True, False)
    """
    parsed = parse_quantity(value)
    if parsed is not None:
        return any(same_number(m.value, m.percent, parsed[0], parsed[1]) for m in number_mentions(text))
    nv = normalise_text(value, strip_article=True)
    return bool(nv) and f" {nv} " in f" {normalise_text(text, strip_article=False)} "


# --- answer extraction ------------------------------------------------------------------------------------

_LETTER = r"(?:(?<!\w)[(\[]\s*(?P<p>[A-Za-z])\s*[)\]]|(?P<b>[A-Za-z])(?![\w'’\-]))"
_ANSWER_IS_RE = re.compile(
    r"(?i:\banswer\s+(?:is|would\s+be|will\s+be|should\s+be|must\s+be)|\b(?:correct|right|best)\s+(?:option|choice)\s+is)"
    r"\s*:?\s*[*_]*\s*(?i:(?:option|choice|letter)\s+)?" + _LETTER
)
_ANSWER_COLON_RE = re.compile(r"(?i:\banswer)\s*[*_]*\s*:\s*[*_]*\s*(?i:(?:option|choice|letter)\s+)?" + _LETTER)
_STANDALONE_RE = re.compile(r"(?<!\w)[(\[]\s*(?P<p>[A-Za-z])\s*[)\]]|(?<![\w'’.\-])(?P<b>[A-Z])(?![\w'’\-])")
_NEXT_WORD_RE = re.compile(r"\s+([a-z]+)")
_LOWER_END_RE = re.compile(r"\s*(?:[.,;:!?)*_]|$)")
# A capital A or I followed by one of these is still an option letter ("A is correct", "A because ...").
_CONNECTIVES = frozenset({"is", "seems", "looks", "fits", "matches", "because", "since", "as", "and", "or"})


def _letter_of(m: re.Match[str], text: str) -> str | None:
    """The option letter a match names, or None when the bare letter reads as a word ("a cat", "I think")."""
    if m.group("p") is not None:
        return m.group("p").upper()
    letter = m.group("b")
    if letter.islower():
        # "the answer is a fraction": a lowercase bare letter counts only when nothing follows it.
        return letter.upper() if _LOWER_END_RE.match(text, m.end()) else None
    if letter in "AI":
        nxt = _NEXT_WORD_RE.match(text, m.end())
        if nxt is not None and nxt.group(1) not in _CONNECTIVES:
            return None
    return letter


def extract_choice(text: str, n_options: int) -> str | None:
    """The option letter a student chose (EducationQ's order; the last match of a pattern wins), else None.

    Example::

        >>> extract_choice("A cat has four legs, so I pick (B).", 4), extract_choice("Answer: e", 4)
        ('B', None)
    """
    valid = {chr(ord("A") + i) for i in range(max(0, min(n_options, 26)))}
    for pattern in (_ANSWER_IS_RE, _ANSWER_COLON_RE, _STANDALONE_RE):
        chosen = None
        for m in pattern.finditer(text):
            letter = _letter_of(m, text)
            if letter in valid:
                chosen = letter
        if chosen is not None:
            return chosen
    return None


_VALUE_MARKER_RE = re.compile(
    r"(?i:\banswer\s*(?:(?:is|was|would\s+be|will\s+be|should\s+be|=)\s*[*_]*\s*:?|[*_]*\s*:))|\\boxed\s*\{"
)
_SPAN_END_RE = re.compile(r"[.!?;](?=\s|$)|\n|,\s|\s(?:because|since|which|so)\b", re.IGNORECASE)
_CLOSING_EQ_RE = re.compile(r"=\s*([^=\n]+?)\s*[.!]?\s*$")
_SPAN_STRIP = " \t*_$\"'`:"


def _value_markers(text: str) -> list[re.Match[str]]:
    """``list(_VALUE_MARKER_RE.finditer(text))``; in an ASCII text the pattern is tried only where "answer" or
    "\\boxed" starts (a student's reasoning is long, and scanning every position was most of the grading)."""
    if not text.isascii():
        return list(_VALUE_MARKER_RE.finditer(text))
    starts = []
    for word, hay in (("answer", text.lower()), ("\\boxed", text)):
        at = hay.find(word)
        while at != -1:
            starts.append(at)
            at = hay.find(word, at + 1)
    out: list[re.Match[str]] = []
    end = 0
    for at in sorted(starts):
        if at >= end and (m := _VALUE_MARKER_RE.match(text, at)) is not None:
            out.append(m)
            end = m.end()
    return out


def _value_in(span: str) -> str | None:
    """The first number in a span after an answer marker, else the span's text, else None."""
    nums = number_mentions(span)
    if nums:
        return nums[0].text
    span = span.strip(_SPAN_STRIP).rstrip(".!?").strip(_SPAN_STRIP)
    return span or None


def _braced(rest: str) -> str:
    """The text up to the brace closing an already opened ``{`` (all of it if unbalanced)."""
    depth = 1
    for pos, ch in enumerate(rest):
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if depth == 0:
            return rest[:pos]
    return rest


def extract_value(text: str) -> str | None:
    """The raw answer string of a free answer: after the last answer marker, a closing ``= X``, else the
    last number-like token; None when there is none.

    Example::

        >>> extract_value("1/2 + 1/3 = 3/6 + 2/6 = 5/6"), extract_value("The answer is 1,250 apples because ...")
        ('5/6', '1,250')
    """
    for m in reversed(_value_markers(text)):
        rest = text[m.end() :]
        if m.group().endswith("{"):
            span = _braced(rest)
        else:
            cut = _SPAN_END_RE.search(rest)
            span = rest[: cut.start()] if cut else rest
        value = _value_in(span)
        if value is not None:
            return value
    closing = _CLOSING_EQ_RE.search(text.strip())
    if closing is not None:
        value = _value_in(closing.group(1))
        if value is not None:
            return value
    nums = number_mentions(text)
    return nums[-1].text if nums else None


_LEAD_IN_RE = re.compile(
    r"^(?:(?:i\s+think|i\s+believe|i\s+guess|maybe|probably|so|well)\W*)?(?:it'?s|it\s+is|that'?s|that\s+is)?\s*",
    re.IGNORECASE,
)


def grade(item: Item, response: str) -> Grade:
    """Grade a student's response to a test item.

    Choice items compare the extracted letter; free items compare the extracted value with
    :func:`equivalent`. For a non-numeric key with no answer marker, the response's last line (lead-ins such as
    "I think it's" dropped) is the answer.

    Example::

        >>> from tutorzoo.envs.tasks.base import Item
        >>> grade(Item(id="q", stem="1/2 + 1/3?", answer="5/6", kcs=("add",)), "It is 10/12.")
        Grade(correct=True, extracted='10/12', valid=True)
    """
    if item.options is not None:
        letter = extract_choice(response, len(item.options))
        if letter is None:
            return Grade(correct=False, extracted=None, valid=False)
        return Grade(correct=letter == item.answer, extracted=letter, valid=True)
    value = extract_value(response)
    if value is None and parse_quantity(item.answer) is None:
        lines = [ln.strip() for ln in response.strip().splitlines() if ln.strip()]
        if lines:
            value = _LEAD_IN_RE.sub("", lines[-1], count=1).strip(_SPAN_STRIP).rstrip(".!?") or None
    if value is None:
        return Grade(correct=False, extracted=None, valid=False)
    return Grade(correct=equivalent(value, item.answer), extracted=value, valid=True)
