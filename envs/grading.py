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

Why one module of ~600 lines: extraction (choice letters, free answers), the number parser (digits, fractions,
mixed numbers, percents, number words) and the equivalence test are one contract -- "the student answered X" --
whose edge cases interact (a percent key changes what extraction must keep; a number word changes what counts as
a mention); the leak detector and the student's words reuse the same parser, so a split would only add imports.

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
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

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


@dataclass(frozen=True)
class Grade:
    """The grade of one answer. ``valid`` is false when no answer could be extracted (then not correct)."""

    correct: bool
    extracted: str | None
    valid: bool


@dataclass(frozen=True)
class NumberMention:
    """A number stated in a text, with its exact value and where it is.

    ``percent``: written as a percent (``value`` is already divided by 100). ``places``: decimal places of the
    value as written (``0.83`` -> 2, ``83.3%`` -> 3, an integer -> 0), ``None`` for fractions and words; the
    leak detector uses it to recognise a rounded non-terminating value.
    """

    text: str
    value: Fraction
    percent: bool
    places: int | None
    start: int
    end: int


# --- numbers written with digits --------------------------------------------------------------------------

# One alternative per written form; order matters (longest forms first). The lookbehind keeps us out of words
# (H2O), exponents/subscripts (x^2, a_1), LaTeX commands and the middle of other numbers; the lookaheads reject
# a number glued to a variable (3x, 2n) or an ordinal suffix (5th), while units (12cm, 5m, 3kg) stay numbers.
_NUMBER_RE = re.compile(
    r"""
    (?<![\w.^_\\/])
    (?P<sign>[-−](?=[$£€]?[\d.\\]))?
    (?P<cur>[$£€])?
    (?:
        (?P<lwhole>\d+)?\s*\\[dt]?frac\s*\{\s*(?P<lnum>\d+)\s*\}\s*\{\s*(?P<lden>\d+)\s*\}
      | \\[dt]?frac(?P<snum>\d)(?P<sden>\d)
      | (?P<mwhole>\d+)[ \t]+(?P<mnum>\d+)[ \t]*/[ \t]*(?P<mden>\d+)
      | (?P<fnum>\d+)[ \t]*/[ \t]*(?P<fden>\d+)
      | (?P<dec>(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)
    )
    (?!\d)(?!\.\d)(?![ \t]*/[ \t]*\d)
    (?P<pct>[ \t]?(?:\\?%|percent\b|per[ \t]?cent\b))?
    (?![abcdefhijknopqrtuvwxyz](?![A-Za-z]))
    (?!(?:st|nd|rd|th)\b)
    """,
    re.VERBOSE,
)

# --- numbers written as words -----------------------------------------------------------------------------

_ONES = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
_TEENS = {
    w: i + 10
    for i, w in enumerate("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split())
}
_TENS = {w: (i + 2) * 10 for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"thousand": 1000, "million": 1_000_000}
# Singular denominators double as ordinals ("the third step"), so a singular one only counts after "one"/"a".
_DENOM_SINGULAR = {
    "half": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "twentieth": 20, "hundredth": 100, "thousandth": 1000,
}  # fmt: skip
_DENOM_PLURAL = {("halves" if w == "half" else w + "s"): d for w, d in _DENOM_SINGULAR.items()}
# A bare "one" is usually a pronoun ("this one", "one of them"); it is a number only after one of these.
_ONE_CUES = frozenset({"is", "s", "was", "be", "equals", "get", "gets", "got", "makes", "gives", "answer"})
_WORD_RE = re.compile(r"[A-Za-z]+")
_NUMBER_WORDS = frozenset(
    {*_ONES, *_TEENS, *_TENS, *_SCALES, *_DENOM_SINGULAR, *_DENOM_PLURAL, "hundred", "hundreds", "dozen"}
)
_JOIN_RE = re.compile(r"[ \t]*-?[ \t]*|[ \t]+")


def _words_lower(text: str) -> list[str]:
    """The text's ASCII words, lowercased (an ASCII text is lowercased at once: the same words, fewer calls)."""
    if text.isascii():
        return _WORD_RE.findall(text.lower())
    return [w.lower() for w in _WORD_RE.findall(text)]


def _adjacent(text: str, words: list[tuple[str, int, int]], j: int) -> bool:
    """Whether word j directly follows word j-1 (only blanks or one hyphen between them)."""
    gap = text[words[j - 1][2] : words[j][1]]
    return _JOIN_RE.fullmatch(gap) is not None


def _cardinal(text: str, words: list[tuple[str, int, int]], i: int) -> tuple[int, int] | None:
    """Parse a cardinal ("twenty-five", "two hundred and five") starting at word i -> (value, next index)."""
    total, small, last, j, n = 0, 0, None, i, len(words)
    while j < n:
        w = words[j][0]
        if j > i and not _adjacent(text, words, j):
            break
        if w == "zero":
            if last is not None:
                break
            return 0, j + 1
        if w in _ONES:
            if last not in (None, "hundred", "scale", "tens"):
                break
            small, last = small + _ONES[w], "ones"
        elif w in _TEENS or w in _TENS:
            if last not in (None, "hundred", "scale"):
                break
            small, last = small + _TEENS.get(w, 0) + _TENS.get(w, 0), "tens" if w in _TENS else "teens"
        elif w == "hundred":
            if last not in ("ones", "teens") or small >= 100:
                break
            small, last = small * 100, "hundred"
        elif w in _SCALES:
            if last is None or last == "scale":
                break
            total, small, last = total + small * _SCALES[w], 0, "scale"
        elif w == "and" and last in ("hundred", "scale") and j + 1 < n and _adjacent(text, words, j + 1):
            nxt = words[j + 1][0]
            if nxt not in _ONES and nxt not in _TEENS and nxt not in _TENS:
                break
        else:
            break
        j += 1
    if last is None:
        return None
    return total + small, j


def _fraction_word(text: str, words: list[tuple[str, int, int]], i: int) -> tuple[Fraction, int] | None:
    """Parse "a half", "one third", "five sixths", "a third of" starting at word i -> (value, next index)."""
    n = len(words)
    w = words[i][0]
    if w == "a" or w == "an":
        if i + 1 >= n or not _adjacent(text, words, i + 1) or words[i + 1][0] not in _DENOM_SINGULAR:
            return None
        d = _DENOM_SINGULAR[words[i + 1][0]]
        # "a third attempt" is an ordinal; "a third of", "a half" are fractions.
        followed_by_of = i + 2 < n and words[i + 2][0] == "of"
        return (Fraction(1, d), i + 2) if d == 2 or followed_by_of else None
    card = _cardinal(text, words, i)
    if card is None:
        return None
    num, j = card
    if j >= n or not _adjacent(text, words, j):
        return None
    nw = words[j][0]
    if nw in _DENOM_PLURAL and num != 1:
        return Fraction(num, _DENOM_PLURAL[nw]), j + 1
    if nw in _DENOM_SINGULAR and num == 1:
        return Fraction(1, _DENOM_SINGULAR[nw]), j + 1
    return None


# The words a number written in words can start with (every other word makes the parsers below return None).
_FIRST_WORDS = frozenset({*_ONES, *_TEENS, *_TENS, "a", "an", "half"})
# A number in words holds one of these: "a"/"an" start one only before a denominator ("a half", "a third of").
_NEEDED_WORDS = frozenset({*_ONES, *_TEENS, *_TENS, *_DENOM_SINGULAR})


def _word_mentions(text: str, bare_one: bool) -> list[NumberMention]:
    """Numbers written as words. ``bare_one``: count a lone "one" even without a cue word before it."""
    if _NEEDED_WORDS.isdisjoint(_words_lower(text)):  # most texts: no number in words
        return []
    words = [(m.group().lower(), m.start(), m.end()) for m in _WORD_RE.finditer(text)]
    out: list[NumberMention] = []
    n, i = len(words), 0
    while i < n:
        if words[i][0] not in _FIRST_WORDS:  # no number starts here (most words): skip the parsers
            i += 1
            continue
        start = words[i][1]
        value: Fraction | None = None
        percent, places, nxt = False, None, i + 1
        frac = _fraction_word(text, words, i)
        if frac is not None:
            value, nxt = frac
        elif words[i][0] == "half" and i + 1 < n and words[i + 1][0] == "of":
            value, nxt = Fraction(1, 2), i + 1
        else:
            card = _cardinal(text, words, i)
            if card is not None:
                whole, j = card
                value, nxt = Fraction(whole), j
                follows = j < n and _adjacent(text, words, j)
                w = words[j][0] if follows else ""
                if w == "and" and j + 1 < n and _adjacent(text, words, j + 1):
                    mixed = _fraction_word(text, words, j + 1)
                    if mixed is not None:  # "one and a half", "two and three quarters"
                        value, nxt = whole + mixed[0], mixed[1]
                elif w == "percent" or (w == "per" and j + 1 < n and words[j + 1][0] == "cent"):
                    value, percent, nxt = Fraction(whole, 100), True, j + (1 if w == "percent" else 2)
                elif w == "point":
                    digits, k = "", j + 1
                    while k < n and _adjacent(text, words, k) and words[k][0] in _ONES:
                        digits, k = digits + str(_ONES[words[k][0]]), k + 1
                    if digits:
                        value, places, nxt = whole + Fraction(int(digits), 10 ** len(digits)), len(digits), k
        if value is not None and i > 0 and words[i - 1][0] == "negative" and _adjacent(text, words, i):
            value, start = -value, words[i - 1][1]
        if value == 1 and nxt == i + 1 and words[i][0] == "one" and not bare_one:
            prev = words[i - 1][0] if i > 0 else ""
            one_of = nxt < n and words[nxt][0] == "of"  # "it's one of those"
            if one_of or not (text[:start].rstrip().endswith("=") or prev in _ONE_CUES):
                value = None
        if value is not None:
            end = words[nxt - 1][2]
            out.append(NumberMention(text[start:end], value, percent, places, start, end))
            i = nxt
        else:
            i += 1
    return out


def _match_value(m: re.Match[str]) -> tuple[Fraction, bool, int | None] | None:
    """The exact value of a :data:`_NUMBER_RE` match -> (value, percent, places); None on a zero denominator."""
    g = m.groupdict()
    places: int | None = None
    try:
        if g["lnum"] is not None:
            v = int(g["lwhole"] or 0) + Fraction(int(g["lnum"]), int(g["lden"]))
        elif g["snum"] is not None:
            v = Fraction(int(g["snum"]), int(g["sden"]))
        elif g["mnum"] is not None:
            v = int(g["mwhole"]) + Fraction(int(g["mnum"]), int(g["mden"]))
        elif g["fnum"] is not None:
            v = Fraction(int(g["fnum"]), int(g["fden"]))
        else:
            dec = g["dec"].replace(",", "")
            if "." in dec:  # from ints: parsing a Fraction from a string is the slow part of a mention
                head, tail = dec.split(".")
                v, places = Fraction(int(head + tail), 10 ** len(tail)), len(tail)
            else:
                v, places = Fraction(int(dec)), 0
    except ZeroDivisionError:
        return None
    if g["sign"]:
        v = -v
    percent = g["pct"] is not None
    if percent:
        v /= 100
        places = None if places is None else places + 2
    return v, percent, places


_DIGIT_RE = re.compile(r"\d")


def _could_hold_a_number(text: str) -> bool:
    """False only when ``text`` has no digit and none of the words any number word starts from."""
    if _DIGIT_RE.search(text):
        return True
    return not _NUMBER_WORDS.isdisjoint(_words_lower(text))


@lru_cache(maxsize=4096)
def number_mentions(text: str) -> tuple[NumberMention, ...]:
    """Every number stated in ``text`` (digits, fractions, LaTeX, percents, number words), in order.

    A lone "one" counts only after a cue ("is one", "= one"): it is usually a pronoun. Offsets index
    :func:`normalise_math` of ``text``.

    Example::

        >>> [m.value for m in number_mentions("Is it five sixths, or 56, or \\\\frac{10}{12}?")]
        [Fraction(5, 6), Fraction(56, 1), Fraction(5, 6)]
    """
    if not _could_hold_a_number(text):  # the common case on the env's hot path: plain words, no number
        return ()
    clean = normalise_math(text)
    found: list[NumberMention] = []
    for m in _number_matches(clean):
        parsed = _match_value(m)
        if parsed is not None:
            found.append(NumberMention(m.group().strip(), parsed[0], parsed[1], parsed[2], m.start(), m.end()))
    found = [_with_denominator_word(clean, m) for m in found]
    found.extend(_word_mentions(clean, bare_one=False))
    found.sort(key=lambda x: (x.start, x.end))
    return tuple(found)


# Where a match of _NUMBER_RE can start: a sign, a currency, a digit, a point or a backslash, or a blank before a
# backslash (``\s*\\frac`` with no whole part).
_NUMBER_START_RE = re.compile(r"[-−$£€\d.\\]")


def _number_matches(text: str) -> list[re.Match[str]]:
    """``list(_NUMBER_RE.finditer(text))``, trying the pattern only where a match can start: scanning every
    position of a long sentence costs more than all the rest of :func:`number_mentions` (same matches, same
    order; the pattern's lookbehind sees the text before the position it is tried at)."""
    out: list[re.Match[str]] = []
    end = 0
    for c in _NUMBER_START_RE.finditer(text):
        p = c.start()
        if p < end:
            continue
        m = None
        if text[p] == "\\":  # the leftmost start may be a blank before the backslash
            q = p
            while q > end and text[q - 1].isspace():
                q -= 1
            for r in range(q, p):
                m = _NUMBER_RE.match(text, r)
                if m is not None:
                    break
        if m is None:
            m = _NUMBER_RE.match(text, p)
        if m is not None:
            out.append(m)
            end = m.end()
    return out


_DENOM_AFTER_RE = re.compile(r"[ \t]+([A-Za-z]+)\b")


def _with_denominator_word(text: str, m: NumberMention) -> NumberMention:
    """"4 tenths", "3 quarters": a whole number followed by a denominator word is a fraction."""
    if m.percent or m.value.denominator != 1 or m.value.numerator < 0:  # (cheapest test first)
        return m
    after = _DENOM_AFTER_RE.match(text, m.end)
    if after is None:
        return m
    word = after.group(1).lower()
    den = _DENOM_PLURAL.get(word) if m.value != 1 else _DENOM_SINGULAR.get(word)
    if den is None:
        return m
    return NumberMention(text[m.start : after.end()], m.value / den, False, None, m.start, after.end())


# --- whole-string parsing ---------------------------------------------------------------------------------

VULGAR_FRACTIONS = "½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒"  # the unicode fractions a text may use (the content reader reads them too)
_VULGAR_MAP = {ord(c): " " + unicodedata.normalize("NFKC", c).replace("\u2044", "/") for c in VULGAR_FRACTIONS}
_LATEX_WRAP_RE = re.compile(r"\\(?:boxed|text|textbf|mathrm|mbox|operatorname)\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_LATEX_DROP_RE = re.compile(r"\\[,;!: ]|\\left|\\right|\\\(|\\\)|\\\[|\\\]")
_LHS_RE = re.compile(r"^\s*[A-Za-z][\w']*\s*(?:=|≈)\s*")
_UNIT_TAIL_RE = re.compile(r"\s*(?:[A-Za-z°µ²³][A-Za-z°µ²³./\s]*)?[.!]?\s*")


def normalise_math(text: str) -> str:
    """The text as :func:`number_mentions` reads it (offsets of mentions index this string).

    Vulgar fractions spelt out ("1½" -> "1 1/2"), LaTeX spacing/delimiters blanked, ``\\boxed{}``/``\\text{}``
    unwrapped, a LaTeX thousands separator ``{,}`` made a comma.
    """
    text = text.translate(_VULGAR_MAP).replace("\u2212", "−").replace("\u00a0", " ").replace("{,}", ",")
    text = _LATEX_DROP_RE.sub(" ", text)
    while True:
        unwrapped = _LATEX_WRAP_RE.sub(r"\1", text)
        if unwrapped == text:
            return text
        text = unwrapped


@lru_cache(maxsize=8192)  # answers and extracted values repeat across turns and episodes; the result is immutable
def _parse(s: str) -> tuple[Fraction, bool] | None:
    """The value of a string holding one number (+ optional variable LHS and unit) -> (value, is_percent)."""
    t = normalise_math(s).strip()
    if len(t) > 1 and t.startswith("$") and t.endswith("$"):
        t = t.strip("$").strip()
    t = _LHS_RE.sub("", t, count=1)
    m = _NUMBER_RE.match(t)
    parsed = None if m is None else _match_value(m)
    if m is not None and parsed is not None:
        mention = _with_denominator_word(t, NumberMention(m.group(), parsed[0], parsed[1], parsed[2], 0, m.end()))
        if _UNIT_TAIL_RE.fullmatch(t, mention.end):
            return mention.value, mention.percent
    words = _word_mentions(t, bare_one=True)
    if words and words[0].start == 0 and _UNIT_TAIL_RE.fullmatch(t, words[0].end):
        return words[0].value, words[0].percent
    return None


def parse_quantity(s: str) -> tuple[Fraction, bool] | None:
    """Like :func:`parse_number`, also saying whether the number was written as a percent.

    Example::

        >>> parse_quantity("75%"), parse_quantity("0.75")
        ((Fraction(3, 4), True), (Fraction(3, 4), False))
    """
    return _parse(s)


def parse_number(s: str) -> Fraction | None:
    """Exact value of a string that states one number, else None. Percents are divided by 100.

    Accepts integers, decimals, fractions, mixed numbers, LaTeX fractions, percents, thousands separators,
    a unicode minus, a currency sign, a variable on the left (``x = 4``), a trailing unit and number words.

    Example::

        >>> [parse_number(s) for s in ["0.75", "\\\\frac{3}{4}", "75%", "−2", "x = 4", "$12.50", "4 or 5"]]
        [Fraction(3, 4), Fraction(3, 4), Fraction(3, 4), Fraction(-2, 1), Fraction(4, 1), Fraction(25, 2), None]
    """
    parsed = _parse(s)
    return None if parsed is None else parsed[0]


def same_number(value: Fraction, percent: bool, expected: Fraction, expected_percent: bool) -> bool:
    """Numeric match; a plain number also matches a percent key stated without its sign (75 vs 75%).

    Example::

        >>> same_number(Fraction(75), False, Fraction(3, 4), True)  # "75" for a 75% key
        True
        >>> same_number(Fraction(3, 4), True, Fraction(75), False)  # "75%" for a key of 75
        False
    """
    return value == expected or (expected_percent and not percent and value == expected * 100)


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
    pa, pb = _parse(a), _parse(b)
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
    parsed = _parse(value)
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
    if value is None and _parse(item.answer) is None:
        lines = [ln.strip() for ln in response.strip().splitlines() if ln.strip()]
        if lines:
            value = _LEAD_IN_RE.sub("", lines[-1], count=1).strip(_SPAN_STRIP).rstrip(".!?") or None
    if value is None:
        return Grade(correct=False, extracted=None, valid=False)
    return Grade(correct=equivalent(value, item.answer), extracted=value, valid=True)
