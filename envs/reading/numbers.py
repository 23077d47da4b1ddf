r"""Numbers in text, exactly: digits, decimals, fractions and mixed numbers, percents, LaTeX fractions, vulgar
fractions (``½``) and number words ("thirty-two", "three hundred and five", "five sixths", "seventeen point five");
the units a quantity may carry are :mod:`~tutorzoo.envs.reading.units`'. Values are :class:`fractions.Fraction`,
never floats.

One table of number words serves the whole tree (:data:`CARDINALS`, :data:`SCALES`, :data:`DENOMINATORS`): the
grader's and the leak detector's :func:`number_mentions` / :func:`parse_quantity`, the content reader's
:data:`NUMBER_PHRASE` / :func:`word_number` and :data:`ORDINALS`, and the student verbaliser's
:data:`NUMBER_WORDS` all derive their words from it.

Libraries, each where it is exact:

- the value of a number phrase in words is :func:`text_to_num.text2num`'s (exact on every phrase
  :data:`NUMBER_PHRASE` admits but the few with a "zero" after a scale, which read as the sum of their words);
- one number written in LaTeX beyond the forms :data:`_NUMBER_RE` reads (``\frac{-3}{4}``, ``10^{2}``) is
  :mod:`latex2sympy2_extended`'s (:func:`latex_value`, imported on first use: it loads sympy);
- the unit factors of :data:`~tutorzoo.envs.reading.units.UNITS` are checked against :mod:`pint`'s exact
  ``Fraction`` conversions by ``tests/envs/test_reading_numbers.py``, not computed by it at import: pint's import
  and registry cost 0.4-1.5 s per process (with and without its disk cache, on a loaded or idle machine:
  ``python benchmarks/reader_libraries.py``) for fourteen constant factors.

Kept here because no library does it the way the grader's contract needs: where a number in words starts and ends
in running text ("one" as a pronoun, "a third attempt" as an ordinal, "one and a half"), which text2num's
``alpha2digit`` does not decide (it writes "two thirds" as "two 3rds" and leaves "negative one" alone), and the
digit forms' exact rules (``0.33`` is not ``1/3``, ``3x`` is no number, a percent keeps its sign).

Example::

    >>> [m.value for m in number_mentions("Is it five sixths, or 56, or \\frac{10}{12}?")]
    [Fraction(5, 6), Fraction(56, 1), Fraction(5, 6)]
    >>> parse_quantity("75%"), parse_number("1 1/2")
    ((Fraction(3, 4), True), Fraction(3, 2))
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from text_to_num import text2num

__all__ = [
    "CARDINALS",
    "DENOMINATORS",
    "DENOMINATORS_PLURAL",
    "NUMBER_WORDS",
    "ORDINALS",
    "SCALES",
    "VULGAR_FRACTIONS",
    "NumberMention",
    "normalise_math",
    "number_mentions",
    "parse_number",
    "latex_value",
    "parse_quantity",
    "plain_number",
    "sum_of_words",
    "same_number",
    "word_number",
]

# --- the number words -------------------------------------------------------------------------------------

# The one table of number words in the tree (every other list of them is derived from it).
ONES: dict[str, int] = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
TEENS: dict[str, int] = {
    w: i + 10
    for i, w in enumerate("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split())
}
TENS: dict[str, int] = {
    w: (i + 2) * 10 for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
CARDINALS: dict[str, int] = {**ONES, **TEENS, **TENS}
SCALES: dict[str, int] = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
# A fraction's denominator in words. Singular denominators double as ordinals ("the third step"), so the grader
# counts a singular one only after "one"/"a".
DENOMINATORS: dict[str, int] = {
    "half": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "fifteenth": 15, "sixteenth": 16, "twentieth": 20,
    "hundredth": 100, "thousandth": 1000,
}  # fmt: skip
DENOMINATORS_PLURAL: dict[str, int] = {("halves" if w == "half" else w + "s"): d for w, d in DENOMINATORS.items()}
# (the grader's parser reads "hundred" on its own: it multiplies what is before it, the larger scales add)
_LARGE_SCALES = {w: v for w, v in SCALES.items() if w != "hundred"}


# --- a number found in a text ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
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


# --- numbers written as words ----------------------------------------------------------------------------

_ONE_CUES = frozenset({"is", "s", "was", "be", "equals", "get", "gets", "got", "makes", "gives", "answer"})
_WORD_RE = re.compile(r"[A-Za-z]+")
NUMBER_WORDS = frozenset(
    {*ONES, *TEENS, *TENS, *SCALES, *DENOMINATORS, *DENOMINATORS_PLURAL, "hundreds", "dozen"}
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
        if w in ONES:
            if last not in (None, "hundred", "scale", "tens"):
                break
            small, last = small + ONES[w], "ones"
        elif w in TEENS or w in TENS:
            if last not in (None, "hundred", "scale"):
                break
            small, last = small + TEENS.get(w, 0) + TENS.get(w, 0), "tens" if w in TENS else "teens"
        elif w == "hundred":
            if last not in ("ones", "teens") or small >= 100:
                break
            small, last = small * 100, "hundred"
        elif w in _LARGE_SCALES:
            if last is None or last == "scale":
                break
            total, small, last = total + small * _LARGE_SCALES[w], 0, "scale"
        elif w == "and" and last in ("hundred", "scale") and j + 1 < n and _adjacent(text, words, j + 1):
            nxt = words[j + 1][0]
            if nxt not in ONES and nxt not in TEENS and nxt not in TENS:
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
        if i + 1 >= n or not _adjacent(text, words, i + 1) or words[i + 1][0] not in DENOMINATORS:
            return None
        d = DENOMINATORS[words[i + 1][0]]
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
    if nw in DENOMINATORS_PLURAL and num != 1:
        return Fraction(num, DENOMINATORS_PLURAL[nw]), j + 1
    if nw in DENOMINATORS and num == 1:
        return Fraction(1, DENOMINATORS[nw]), j + 1
    return None


# The words a number written in words can start with (every other word makes the parsers below return None).
_FIRST_WORDS = frozenset({*ONES, *TEENS, *TENS, "a", "an", "half"})
# A number in words holds one of these: "a"/"an" start one only before a denominator ("a half", "a third of").
_NEEDED_WORDS = frozenset({*ONES, *TEENS, *TENS, *DENOMINATORS})


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
                    while k < n and _adjacent(text, words, k) and words[k][0] in ONES:
                        digits, k = digits + str(ONES[words[k][0]]), k + 1
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
    return not NUMBER_WORDS.isdisjoint(_words_lower(text))


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
    found = [_with_denominator_word(clean, m) for m in found]  # (in order: each match starts after the last)
    words = _word_mentions(clean, bare_one=False)
    if words:
        found.extend(words)
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
    den = DENOMINATORS_PLURAL.get(word) if m.value != 1 else DENOMINATORS.get(word)
    if den is None:
        return m
    return NumberMention(text[m.start : after.end()], m.value / den, False, None, m.start, after.end())


# --- whole-string parsing ---------------------------------------------------------------------------------

VULGAR_FRACTIONS = "½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒"  # the unicode fractions a text may use
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
    if not text.isascii():  # (a vulgar fraction and a no-break space are not ASCII)
        text = text.translate(_VULGAR_MAP).replace("\u00a0", " ")
    text = text.replace("{,}", ",")
    if "\\" not in text:  # (every LaTeX form below starts with a backslash)
        return text
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
    if "\\" in t or "^" in t:
        value = latex_value(t)
        if value is not None:
            return value, False
    return None


_LATEX_MAX = 200  # longer than any number written in LaTeX: no parse of a whole paragraph
# a plus or minus after an operand: "\frac{1}{2} + \frac{1}{4}" is a computation, not the number it makes (a sign
# before a number, "-\frac{3}{4}", "10^{-1}", is part of it)
_BINARY_SIGN = re.compile(r"(?<=[\w}).])\s*[-+−]")


@lru_cache(maxsize=4096)
def latex_value(latex: str) -> Fraction | None:
    r"""The exact value of one number written in LaTeX beyond the forms :data:`_NUMBER_RE` reads (``\frac{-3}{4}``,
    ``\left(\frac{3}{4}\right)``, ``3\times 10^{2}``, ``2^{-1}``, ``\sqrt{4}``), read by
    :mod:`latex2sympy2_extended` (imported on first use: it loads sympy); ``None`` when it is not one rational
    number: a sum or difference left to compute, an unknown, a decimal (sympy reads it as a float, which is not
    exact), an irrational value, a percent (read by :data:`_NUMBER_RE`), or LaTeX the library cannot parse.

    Example::

        >>> latex_value("\\frac{-3}{4}"), latex_value("3 \\times 10^{2}"), latex_value("\\frac{1}{2} + \\frac{1}{4}")
        (Fraction(-3, 4), Fraction(300, 1), None)
    """
    if len(latex) > _LATEX_MAX or "%" in latex or _BINARY_SIGN.search(latex):
        return None
    import sympy
    from latex2sympy2_extended import latex2sympy

    try:
        expr = latex2sympy(latex)
    except Exception:  # the library raises a bare Exception on LaTeX it cannot parse
        return None
    if not isinstance(expr, sympy.Expr) or expr.free_symbols or expr.atoms(sympy.Float):
        return None
    value = expr.doit()
    if not isinstance(value, sympy.Rational):  # (an Integer is one)
        return None
    return Fraction(int(value.p), int(value.q))


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




# --- the content reader's number forms ------------------------------------------------------------------


# The content reader's words: the cardinals, "hundred" and "thousand" (its phrases stop below a million), and the
# denominators singular and plural
NUM_WORDS: dict[str, int] = {**CARDINALS, "hundred": 100, "a hundred": 100, "one hundred": 100, "thousand": 1000}
ORDINALS: dict[str, int] = {**DENOMINATORS, **DENOMINATORS_PLURAL}
NUM_WORDS_ALT = "|".join(sorted(NUM_WORDS, key=len, reverse=True))
ORDINALS_ALT = "|".join(sorted(ORDINALS, key=len, reverse=True))
VULGAR: dict[str, Fraction] = {c: Fraction(unicodedata.numeric(c)).limit_denominator(10) for c in VULGAR_FRACTIONS}
VULGAR_RE = re.compile(r"(\d+)?\s*([" + "".join(VULGAR) + "])")


def written_vulgar(m: re.Match) -> str:
    """A vulgar fraction match (``1½``) written as arithmetic (`` (1 + 1/2)``)."""
    value = VULGAR[m.group(2)]
    n, d = value.numerator, value.denominator
    return f" ({m.group(1)} + {n}/{d})" if m.group(1) else f" ({n}/{d})"


# numbers written in words, compounds included ("thirty-two", "three hundred and five"); a bare "hundred" and
# "a hundred" are in NUM_WORDS
_ONES_W = "|".join(w for w in ONES if w != "zero")
_TEENS_W = "|".join(TEENS)
_TENS_W = "|".join(TENS)
_BELOW100 = rf"(?:(?:{_TENS_W})(?:[- ](?:{_ONES_W}))?|{_TEENS_W}|{_ONES_W}|zero)"
_BELOW1000 = rf"(?:(?:{_ONES_W}|a) hundred(?:(?: and)? {_BELOW100})?|{_BELOW100})"
NUMBER_PHRASE = re.compile(rf"\b{_BELOW1000}(?: thousand(?:(?: and)? {_BELOW1000})?)?\b", re.IGNORECASE)


def word_number(m: re.Match) -> str:
    """A :data:`NUMBER_PHRASE` match written in digits ("three hundred and five" -> "305")."""
    phrase = m.group(0).lower()
    try:
        return str(text2num(_A_HUNDRED.sub("one hundred", phrase), "en"))
    except ValueError:
        # text2num refuses the few phrases the pattern admits with a "zero" after a scale ("two hundred zero"): they
        # read as the sum of their words
        return sum_of_words(phrase)


def sum_of_words(phrase: str) -> str:
    """A lower-case number phrase's value in digits, word by word: each word's value summed, "hundred" and
    "thousand" scaling what comes before ("two hundred zero" -> "200")."""
    total = current = 0
    for w in re.split(r"[- ]+", phrase):
        if w == "hundred":
            current = max(current, 1) * 100
        elif w == "thousand":
            total, current = total + max(current, 1) * 1000, 0
        elif w in NUM_WORDS:
            current += NUM_WORDS[w]
    return str(total + current)


_A_HUNDRED = re.compile(r"\ba hundred\b")  # text2num reads "one hundred", not "a hundred"



# --- digits --------------------------------------------------------------------------------------------

QUANTITY = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:/\d+)?(?![\w.])")
DIGIT_RUN = re.compile(r"\d+")
ANY_DIGIT = re.compile(r"\d")
_NO_DIGITS = str.maketrans("", "", "0123456789")


@functools.lru_cache(maxsize=65536)  # a reader is built per episode; most of a math task's sentences recur
def no_digits(text: str) -> str:
    """``text`` with its digits removed (a math task's words, whatever its draw's numbers)."""
    return text.translate(_NO_DIGITS)


def plain_number(value: Fraction) -> str | None:
    """``value`` written as a whole number or a terminating decimal, else ``None``."""
    if value.denominator == 1:
        return str(value.numerator)
    d, places = value.denominator, 0
    while d % 10 == 0 or d % 2 == 0 or d % 5 == 0:
        d //= 10 if d % 10 == 0 else 2 if d % 2 == 0 else 5
        places += 1
    if d != 1 or places > 6:
        return None
    digits = str(abs(value.numerator) * 10 ** places // value.denominator).rjust(places + 1, "0")
    return ("-" if value < 0 else "") + digits[:-places] + "." + digits[-places:]
