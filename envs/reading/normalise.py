"""Sentences, and each sentence as math-friendly text (:func:`normalise`): LaTeX, signs, markdown, number words,
prose arithmetic ("subtracting 7 from 8", "25% off 80"), relation words ("is equal to", "we get"), blanks to fill
in (``□``) and the families' relational claims said in prose ("a triangle with base 6 and height 4 has an area of
12") written as the computation they state."""

from __future__ import annotations

import functools
import re
from fractions import Fraction

from tutorzoo.envs.reading.expressions import REL
from tutorzoo.envs.reading.numbers import (
    NUM_WORDS,
    NUM_WORDS_ALT,
    NUMBER_PHRASE,
    ORDINALS,
    ORDINALS_ALT,
    VULGAR,
    VULGAR_RE,
    word_number,
    written_vulgar,
)
from tutorzoo.envs.reading.units import UNIT_ALT

# Each rewrite with the words or signs it needs (lower case): a rewrite runs only when one of them is in the text
# (None: always). Most turns hold few of them, and normalising is on the env's hot path (every turn is read).
_ORD_STEMS = ("half", "halves", "third", "quarter", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
              "tenth", "eleventh", "twelfth", "fifteenth", "sixteenth", "twentieth", "hundredth", "thousandth")
_REPLACE: tuple[tuple[re.Pattern[str], str, tuple[str, ...] | None], ...] = tuple(
    (re.compile(p, re.IGNORECASE), r, needs) for p, r, needs in (
        # an area's unit after a number (30 cm², 30 cm^2, 30 square metres): the number is the claim
        (r"(?<=\d)\s*(?:(?:square|sq\.?)\s+(?:units?|(?:centi|milli|kilo)?met(?:re|er)s?|[ckm]?m)\b|"
         r"[ckm]?m\s*(?:²|\^\s*2)(?!\d|\.\d))", "", ("sq", "²", "^")),
        (r"\\[dt]?frac\s*\{([^{}]+)\}\s*\{([^{}]+)\}", r"(\1)/(\2)", ("\\",)),
        (r"\\[dt]?frac\s*(\d)\s*(\d)", r"(\1)/(\2)", ("\\",)),  # \tfrac12
        (r"\\(?:times|cdot|ast)", "*", ("\\",)), (r"\\div", "/", ("\\",)),
        (r"\\(?:left\b|right\b|,|;|!|quad\b)", " ", ("\\",)), (r"\\%", "%", ("\\",)),
        # an aligned block: its rows are steps ("6x + 16 &= 46 \\\\ 6x &= 30")
        (r"\\(?:begin|end)\{[a-z]+\*?\}|&(?=\s*[=<>])", " ", ("\\", "&")), (r"\\\\", " ; ", ("\\",)),
        (r"\\(?:lt)", "<", ("\\",)), (r"\\(?:gt)", ">", ("\\",)), (r"\\neq", "!=", ("\\",)),
        (r"\\(?:Rightarrow|Longrightarrow|implies|rightarrow|to)\b|[→⇒⟹]|=>|->", " → ", ("\\", "→", "⇒", "⟹", ">")),
        (r"\\?[\$`]|\*\*|\\\(|\\\)|\\\[|\\\]", " ", ("$", "`", "**", "\\")),
        (r"[×·⋅∗]", "*", ("×", "·", "⋅", "∗")), (r"÷", "/", ("÷",)), (r"[−–—](?=\s*[\d(])", "-", ("−", "–", "—")),
        (r"≠", "!=", ("≠",)),
        (r"(?<=\d),(?=\d{3}(?!\d))", "", (",",)),  # 1,000
        (r"(?<=\b\d)\s(?=\d{3}\b)|(?<=\b\d\d)\s(?=\d{3}\b)|(?<=\b\d\d\d)\s(?=\d{3}\b)", "", None),  # 1 000
        (rf"\b({NUM_WORDS_ALT})[- ]({ORDINALS_ALT})\b", r"\1/\2", _ORD_STEMS),  # three quarters, one-half
        (rf"\ba ({ORDINALS_ALT})\b", r"1/\1", _ORD_STEMS),
        (r"\bdivided by\b", "/", ("divided by",)), (r"\b(?:multiplied by|times)\b", "*", ("multiplied by", "times")),
        (r"\bplus\b", "+", ("plus",)),
        (r"\b(?:minus|take away)\b", "-", ("minus", "take away")),
        (r"\bpercent\b|\bper cent\b", "%", ("percent", "per cent")),
        (r"\b(?:is equal to|equals|is the same as|is equivalent to|gives you|gives|makes|comes? out to|comes to|"
         r"works out to|results in|leaves)\b", "=",
         ("equal", "same as", "equivalent", "gives", "makes", "comes to", "out to", "works out to", "results in",
          "leaves")),
        # the unknown's value said in words ("if x is 5", "x must be 5"), and a solution named after its equation
        # ("the solution of 3x = 15 is x = 5": the equation, then the value, two relations)
        (r"(?<![\w'])x\s+(?:is|must be|has to be|should be|would be|will be)\s+(?=[-(]?\d)", "x = ", ("x ",)),
        (r"(?<=[\d)])\s+(?:is|means|gives(?: us)?|so|then|therefore)\s+(?=x\s*=)", " ; ", ("x",)),
        (r"\b(?:(?:is|are|be|was) )?(?:greater|bigger|larger|more) than\b", ">", ("than",)),
        (r"\b(?:(?:is|are|be|was) )?(?:less|smaller|fewer) than\b", "<", ("than",)),
        (r"\b(?:(?:is|are) )?(?:equal to|the same (?:ratio |fraction |number |amount )?as)\b", "=",
         ("equal to", "the same")),
        # a step's result: "4 × 5 becomes 20", "6 + 32, which is 38", "so we get 41"
        (r"\s*,?\s*\b(?:which|that) (?:is|gives(?: us| you)?|makes|equals|comes to)\b", " = ", ("which", "that")),
        (r"\b(?:becomes?|turns into|(?:we|you|I) get|to get|to give|costs?|you pay)\b", "=",
         ("become", "turns into", "get", "give", "cost", "pay")),
        (r"\b(?:one |a )?half of\b", "1/2 of", ("half",)),
    ))


# arithmetic said in words, once its numbers are digits: "subtracting -7 from -8", "multiply 4 by 5"
_N = r"(-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?)"
_VERBAL: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = tuple(
    (re.compile(p, re.IGNORECASE), r, needs) for p, r, needs in (
        (rf"\b(?:subtract(?:ing|ed)?|tak(?:e|ing) away)\s+{_N}\s+from\s+{_N}", r"(\2) - (\1)", ("from",)),
        (rf"\b(?:add(?:ing|ed)?|the sum of)\s+{_N}\s+(?:and|to)\s+{_N}", r"(\1) + (\2)", ("add", "sum")),
        (rf"\b(?:multipl(?:y|ying|ied)|the product of)\s+{_N}\s+(?:by|and)\s+{_N}", r"(\1) * (\2)",
         ("multipl", "product")),
        (rf"\b(?:divid(?:e|ing|ed))\s+{_N}\s+by\s+{_N}", r"(\1) / (\2)", ("divid",)),
        (rf"\b(?:the difference between)\s+{_N}\s+and\s+{_N}", r"(\1) - (\2)", ("difference",)),
        (r"(\d+(?:\.\d+)?)\s*%\s+off\s+(?:of\s+)?(?:an?\s+|the\s+)?(\d+(?:\.\d+)?)", r"(\2 - \1% of \2)",
         ("off",)),
        (r"(\d+(?:\.\d+)?)\s+with\s+(?:a\s+)?(\d+(?:\.\d+)?)\s*%\s+(?:off|discount)\b", r"(\1 - \2% of \1)",
         ("off", "discount")),
        # "a bike priced at $120 is reduced by 20%"
        (r"(\d+(?:\.\d+)?)\s+(?:is\s+|are\s+|was\s+|gets\s+)?(?:reduced|marked down|discounted|lowered|decreased)\s+"
         r"by\s+(\d+(?:\.\d+)?)\s*%", r"(\1 - \2% of \1)", ("reduced", "marked down", "discounted", "lowered",
                                                             "decreased")),
        # "multiply the top and bottom of 2/3 by 4": the fraction with both scaled
        (r"\b(?:multipl(?:y|ying|ied))\s+(?:both\s+)?(?:the\s+)?(?:top|numerator)\s+and\s+(?:the\s+)?(?:bottom|denominator)"
         r"\s+of\s+(\d+)\s*/\s*(\d+)\s+by\s+(\d+)", r"\1/\2 = (\1 * \3)/(\2 * \3)", ("multipl",)),
        (r"(?<=\d) x (?=\d)", " * ", (" x ",)),  # 4 x 5
        # a number in tens and ones ("7 tens + 11 ones", "3 tens and 12 ones"): its expanded form
        (r"\b(\d+) tens?\s*(?:and|\+)\s*(\d+) ones?\b", r"(\1 * 10 + \2)", ("ones",)),
        (r"(?<=\d) over (?=\d)", "/", (" over ",)),  # three over four
        (r"\b(\d+) point (\d(?: \d)*)\b", "", ("point",)),  # seventeen point five (joined below)
        (r"\bnegative (?=\d)", "-", ("negative",)),
        # a 3:4 ratio, in a sentence that says it is one (07:00 + 12:25 = 19:25 is a clock)
        (r"(\d+)(?::|\s:\s)(\d+)(?=\s*(?:=|is\b|are\b|and\b|,|\.|;|\)|$))", r"(\1/\2)", ("ratio",)),
    ))
# two ratios equated, said "ratio" or not ("2:5 = 6:15", "2:5 = 6:__"; a clock's 07:00 + 12:25 = 19:25 adds)
_RATIOS_EQUATED = re.compile(r"(?<![\d:.])(\d+)\s?:\s?(\d+)\s*(=|is the same as|is equivalent to|scales? (?:up )?to)\s*"
                             r"(\d+|□)\s*:\s*(\d+|□)(?![\d:]|\.\d)", re.IGNORECASE)
_RATIO_PAIR = re.compile(r"(?<![\d:.])(\d+|□)\s*:\s*(\d+|□)(?![\d:]|\.\d)")
_WORD_NUM = re.compile(rf"\b({NUM_WORDS_ALT})\b", re.IGNORECASE)
_ORD_NUM = re.compile(rf"\b(\d+)/({ORDINALS_ALT})\b", re.IGNORECASE)
_OF = re.compile(r"(\d+(?:\.\d+)?\s*%|\d+\s*/\s*\d+)\s+of\s+(?=[\d(])")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
# "= 5/6" written as "is 5/6" between two math expressions
_IS = re.compile(r"(?<=[\d)%])\s+(?:is|are|was|will be|would be|as|=)\s+(?=[-(]?\d)")


@functools.lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """Math-friendly text: operators as symbols, numbers as digits (see the module docstring)."""
    # Each rewrite runs only when the words or signs it needs are in the text (the env reads every turn: most
    # sentences need few of them). No rewrite writes a word another one needs.
    s = text
    s = marked_blanks(s)
    low = s.lower()
    present = {n for n in _ALL_NEEDS if n in low}
    for pat, rep, needs in _REPLACE:
        if needs is None or not present.isdisjoint(needs):
            out = pat.sub(rep, s)
            if out != s:
                s, low = out, out.lower()
    if any(c in s for c in VULGAR):
        s = VULGAR_RE.sub(written_vulgar, s)
    if not _NUM_WORD_SET.isdisjoint(_ALPHA.findall(low)):
        s = NUMBER_PHRASE.sub(word_number, s)
        s = _WORD_NUM.sub(lambda m: str(NUM_WORDS[m.group(1).lower()]), s)
        low = s.lower()
    if ":" in s and "+" not in s and _RATIOS_EQUATED.search(s):
        s = _RATIO_PAIR.sub(r"(\1/\2)", _RATIOS_EQUATED.sub(r"\1:\2 = \4:\5", s))
    for pat, rep, needs in _VERBAL:
        if any(n in low for n in needs):
            if "point" in needs:
                s = pat.sub(lambda m: m.group(1) + "." + m.group(2).replace(" ", ""), s)
            else:
                s = pat.sub(rep, s)
            low = s.lower()
    if not REL.search(s):
        s = _relational(s)
    if "→" in s:  # arrows: a step to the next expression, or from one equation to the next
        parts = s.split("→")
        s = (" ; " if sum(bool(REL.search(p)) for p in parts) > 1 else " = ").join(parts)
    words = set(_ALPHA.findall(s.lower()))
    if not _IS_WORDS.isdisjoint(words) and not _SCALE_WORDS.search(s):  # "on the map, 1 cm is 10 km": a scale
        s = _UNIT_IS.sub(r"\1 = ", s)
    if "%" in s and "of" in words:  # "10% of 60 is 6, so 5% is 3": the percents after of the same whole
        s = _elliptic_percent(s)
    if not words.isdisjoint(_ORD_PLURALS):  # "70 hundredths", "3 fourths"
        s = _DIGIT_ORD.sub(lambda m: f"({m.group(1)}/{ORDINALS[m.group(2).lower()]})", s)
    if "/" in s and any(o in words for o in ORDINALS):
        s = _ORD_NUM.sub(lambda m: f"{m.group(1)}/{ORDINALS[m.group(2).lower()]}", s)
    if "of" in words:
        s = _OF.sub(lambda m: m.group(1) + " * ", s)
    if "%" in s:
        s = _PERCENT.sub(lambda m: f"({m.group(1)}/100)", s)
    if "=" in s or not _IS_WORDS.isdisjoint(words):
        s = _IS.sub(" = ", s)
    return s


def marked_blanks(text: str) -> str:
    """``text`` with each blank to fill in written ``□`` (the whole turn's, before it is split into sentences: a
    "?" blank does not end a sentence)."""
    # (the pattern is slow to scan: it runs only when a blank's sign is there -- a "?" only after "=", "(", an
    # operator or nothing, not the one that ends a question)
    if "__" in text or "\\" in text or "□" in text or "☐" in text or "▢" in text or (
            "[" in text and _EMPTY_BRACKETS.search(text)) or ("?" in text and _blank_mark(text)) or (
            "=" in text and "how many" in text.lower()):
        return _BLANK.sub("□", text)  # (no space added: "6:__" is no sentence ending in a colon)
    return text


_EMPTY_BRACKETS = re.compile(r"\[\s*\]")  # "[ ]" is a blank, "[END]" is not


def _blank_mark(text: str) -> bool:
    """Whether a "?" in ``text`` follows "=", "(", an operator or only blanks: where :data:`_BLANK` reads one."""
    i = text.find("?")
    while i >= 0:
        j = i - 1
        while j >= 0 and text[j].isspace():
            j -= 1
        if j < 0 or text[j] in "=(-+*/×÷":
            return True
        i = text.find("?", i + 1)
    return False


_ORD_PLURALS = frozenset(w for w in ORDINALS if w.endswith("s"))
_DIGIT_ORD = re.compile(r"(?<![\d.])(\d+)\s+(" + "|".join(sorted(_ORD_PLURALS, key=len, reverse=True)) + r")\b",
                        re.IGNORECASE)
_PCT_OF_WHOLE = re.compile(r"\d\s*%\s+of\s+(\d+(?:\.\d+)?)(?!\.?\d|\s*[%/])")
_BARE_PCT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*%(?!\s*of\b)(?=\s*(?:=|is|are|would be|will be)\s+(\d+(?:\.\d+)?)"
                       r"(?!\.?\d|\s*[%/]))")


def _elliptic_percent(s: str) -> str:
    """A bare percent said to be a number after a percent of a whole is that percent of the whole ("10% of 60 is 6,
    so 5% is 3"), unless the number is the percent as a decimal ("25% is 0.25")."""
    m = _PCT_OF_WHOLE.search(s)
    if m is None:
        return s
    whole = m.group(1)

    def of_whole(p: re.Match) -> str:
        if Fraction(p.group(2)) == Fraction(p.group(1)) / 100:
            return p.group(0)
        return f"{p.group(1)}% of {whole}"
    return s[:m.end()] + _BARE_PCT.sub(of_whole, s[m.end():])


_ALL_NEEDS = frozenset(n for _p, _r, needs in _REPLACE if needs for n in needs)
_ALPHA = re.compile(r"[a-z]+")
_NUM_WORD_SET = frozenset(NUM_WORDS)
_IS_WORDS = frozenset({"is", "are", "was", "will", "would", "as", "equals"})
# the families' relational claims said in prose, written out as the computation they state ("a triangle with
# base 6 and height 4 has an area of 12" is 1/2 × 6 × 4 = 12)
_Q = r"(\d+(?:\.\d+)?)"
_U = rf"(?:\s*(?:{UNIT_ALT})\b)?"
_BASE = re.compile(rf"\bbase\s+(?:of\s+|is\s+|=\s*)?{_Q}|{_Q}{_U}\s+base\b", re.IGNORECASE)
_HEIGHT = re.compile(rf"\b(?:height|tall)\s+(?:of\s+|is\s+|=\s*)?{_Q}|{_Q}{_U}\s+(?:high|tall|height)\b", re.IGNORECASE)
_AREA = re.compile(rf"\barea\b.{{0,30}}?(?:\bof|\bis|=|\bcomes to|\bbe)\s*(?:only\s+)?{_Q}(?!\s*(?:by|\*|x)\b)",
                   re.IGNORECASE)
_BY = re.compile(rf"{_Q}{_U}\s*(?:by|\*)\s*{_Q}{_U}", re.IGNORECASE)
_PERIM = re.compile(rf"\bperimeter\b.{{0,30}}?(?:\bof|\bis|=|\bcomes to|\bbe)\s*(?:only\s+)?{_Q}(?!\s*(?:by|\*|x)\b)",
                    re.IGNORECASE)
_OPERATOR_NEXT = re.compile(r"\s*(?:[-+*/×÷x]|by\b)", re.IGNORECASE)
_LENGTH = re.compile(rf"\blength\s+(?:is|of|=)\s*{_Q}", re.IGNORECASE)
_WIDTH = re.compile(rf"\bwidth\s+(?:is|of|=|must be|has to be|will be|would be)\s*{_Q}", re.IGNORECASE)
_TRIP = re.compile(rf"(?:{_Q}\s*(km|m|miles?)\b.{{0,30}}?\bat\s+{_Q}\s*(?:km/h|km per hour|kph|m/s)|"
                   rf"\bat\s+{_Q}\s*(?:km/h|km per hour|kph|m/s)\W{{0,3}}\s*{_Q}\s*(km|m|miles?)\b)"
                   rf".{{0,20}}?\btakes?\s+{_Q}\s*(?:h|hours?|hrs?)\b", re.IGNORECASE)

_TU = r"(h|hours?|hrs?|min|minutes?|s|seconds?)"
_VU = r"(km/h|km per hour|kph|m/s)"
# "covering 120 km in 3 hours is a speed of 40 km/h", "at 20 km/h for 3 hours you travel 60 km"
_SPEED_OF = re.compile(rf"{_Q}\s*(km|m)\b.{{0,20}}?\bin\s+{_Q}\s*{_TU}\b.{{0,30}}?\b(?:speed|rate|pace|velocity)\b"
                       rf".{{0,15}}?(?<![\d/.]){_Q}\s*{_VU}", re.IGNORECASE)
_DIST_FOR = re.compile(rf"{_Q}\s*{_VU}\s+for\s+{_Q}\s*{_TU}\b.{{0,30}}?\b(?:travel|go|goes|cover|covers|drive|"
                       rf"drives|fly|flies|ride|rides|distance|get|gets|reach|reaches|move|moves)\b.{{0,15}}?"
                       rf"(?<![\d/.]){_Q}\s*(km|m)\b", re.IGNORECASE)


def _relational(s: str) -> str:
    low = s.lower()
    if "area" in low and ("triangl" in low or "rectangl" in low or "parallelogram" in low):
        b, h = _BASE.search(s), _HEIGHT.search(s)
        # (the area's number is none of the lengths: "the area of a triangle with a base of 10" says no area)
        lengths = (b.start(1), b.start(2), h.start(1), h.start(2)) if b and h else ()
        a = next((m for m in _AREA.finditer(s) if m.start(1) not in lengths), None) if b and h else None
        if b and h and a:
            half = "1/2 * " if "triangl" in low else ""
            return f"{s} ; {half}{b.group(1) or b.group(2)} * {h.group(1) or h.group(2)} = {a.group(1)}"
    if "area" in low and "rectangl" in low:  # "a 9 by 3 rectangle has an area of 27 square units"
        by, a = _BY.search(s), _AREA.search(s)
        if by and a and not _OPERATOR_NEXT.match(s, a.end()):  # "its area is 14 × 9": a computation, not a value
            return f"{s} ; {by.group(1)} * {by.group(2)} = {a.group(1)}"
    if "perimeter" in low and "rectangl" in low:
        by, per = _BY.search(s), _PERIM.search(s)
        if by and per:
            return f"{s} ; 2 * ({by.group(1)} + {by.group(2)}) = {per.group(1)}"
    if "perimeter" in low and ("width" in low or "length" in low):
        # "if the perimeter is 36 and the length is 11, the width must be 7"
        per, length, width = _PERIM.search(s), _LENGTH.search(s), _WIDTH.search(s)
        if per and length and width:
            return f"{s} ; 2 * ({length.group(1)} + {width.group(1)}) = {per.group(1)}"
    if "take" in low:
        m = _TRIP.search(s)
        if m:
            dist, unit, speed = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(5), m.group(6),
                                                                                       m.group(4))
            return f"{s} ; {dist} {unit} / {speed} km/h = {m.group(7)} h"
    if "speed" in low or "rate" in low or "pace" in low or "velocity" in low:
        m = _SPEED_OF.search(s)
        if m:
            return f"{s} ; {m.group(1)} {m.group(2)} / {m.group(3)} {m.group(4)} = {m.group(5)} {m.group(6)}"
    if " for " in low:
        m = _DIST_FOR.search(s)
        if m:
            return f"{s} ; {m.group(1)} {m.group(2)} * {m.group(3)} {m.group(4)} = {m.group(5)} {m.group(6)}"
    return s


_TRIP_ASKED = (
    (re.compile(rf"{_Q}\s*(km|m)\s+at\s+{_Q}\s*{_VU}", re.IGNORECASE), "{0} {1} / {2} {3}"),  # the time
    (re.compile(rf"{_Q}\s*(km|m)\s+in\s+{_Q}\s*{_TU}\b", re.IGNORECASE), "{0} {1} / {2} {3}"),  # the speed
    (re.compile(rf"{_Q}\s*{_VU}\s+for\s+{_Q}\s*{_TU}\b", re.IGNORECASE), "{0} {1} * {2} {3}"),  # the distance
)


def asked_quantity(norm: str) -> str | None:
    """The computation of the families' quantity a question names with its case and no value: a rectangle's
    perimeter or area ("perimeter of a 4 by 3 rectangle = ?"), a triangle's area from its base and height, a trip's
    time, speed or distance ("120 km at 40 km/h")."""
    low = norm.lower()
    if "rectangl" in low and ("perimeter" in low or "area" in low) and (by := _BY.search(norm)):
        if ("perimeter" in low) != ("area" in low):
            a, b = by.group(1), by.group(2)
            return f"2 * ({a} + {b})" if "perimeter" in low else f"{a} * {b}"
    if "triangl" in low and "area" in low and (b := _BASE.search(norm)) and (h := _HEIGHT.search(norm)):
        return f"1/2 * {b.group(1) or b.group(2)} * {h.group(1) or h.group(2)}"
    if " at " in low or " in " in low or " for " in low:
        for pat, form in _TRIP_ASKED:
            if m := pat.search(norm):
                return form.format(*m.groups())
    return None


# "Which is larger, 0.2 or 0.21?", "Which fraction is the smallest of 1/3, 2/7 and 1/4?" (normalise writes "which
# is" as "="): a comparison asked for, the word that says which way and the options
_COMPARED = re.compile(r"(?:(?<![<>=!])=|\bwhich\s+(?:[a-z]+\s+){0,2}?is)\s+(?:the\s+)?(larger|bigger|greater|more|"
                       r"higher|smaller|less|lesser|lower|largest|biggest|greatest|highest|smallest|least|lowest)"
                       r"(?:\s+(?:one|number|value|fraction|decimal|integer))?(?:\s+of)?\s*[,:]?\s*([^?]+)\?",
                       re.IGNORECASE)
_OPTIONS = re.compile(r"\s*(?:,\s*(?:or|and)\b|,|\bor\b|\band\b)\s*", re.IGNORECASE)
_SMALL = ("smaller", "less", "lesser", "lower", "smallest", "least", "lowest")


def compared_asked(norm: str) -> tuple[bool, list[str]] | None:
    """A comparison asked for in ``norm`` (normalised): whether it asks for the smaller one, and the options as
    written ("0.2", "0.21"); None when the sentence asks no such thing or names fewer than two options."""
    m = _COMPARED.search(norm)
    if m is None:
        return None
    options = [o.strip(" .") for o in _OPTIONS.split(m.group(2)) if o.strip(" .")]
    return (m.group(1).lower() in _SMALL, options) if len(options) >= 2 else None


UNITS_ASKED = re.compile(rf"\bhow many ({UNIT_ALT}) (?:(?:are|is|make|makes|equal|equals|there|in|does|do)\s+)+"
                          rf"(\d+(?:\.\d+)?) ?({UNIT_ALT})\b", re.IGNORECASE)
# "Convert 9500 m to km.", "What is 9500 m in km?", "Write 2.5 kg in grams": a conversion asked for
CONVERT_ASKED = re.compile(rf"(?<![\d.])(\d+(?:\.\d+)?) ?({UNIT_ALT}) (?:to|into|in|as) ({UNIT_ALT})\b",
                            re.IGNORECASE)
_SCALE_WORDS = re.compile(r"\b(?:maps?|scales?|models?|drawings?|plans?|represents?|stands? for)\b", re.IGNORECASE)
# "3 metres is 300 centimetres": "is" between a quantity and a number
_UNIT_IS = re.compile(rf"(\d\s*(?:{UNIT_ALT})\.?)\s+(?:is|are|was|equals)\s+(?=[-(]?\d)", re.IGNORECASE)
# a blank to fill in ("2/3 = __/9", "1 L = ? mL", "[ ]", "= how many km?"), written as one sign: ``□``
_BLANK = re.compile(rf"(?<![A-Za-z0-9_])_{{2,}}(?![A-Za-z0-9_])|[□☐▢]|\[\s*\]|"
                    rf"\\(?:square|Box|underline\{{\s*\}})(?![a-z])|"
                    rf"(?:(?<=[=(])|(?<=[=(]\s)|^\s*)\?(?=\s*(?:[-+*/×÷]\s*[\d(]|(?:{UNIT_ALT})\b))|(?<=[-+*/×÷])\s*\?|"
                    rf"(?<==)\s*how many(?=\s+(?:{UNIT_ALT})\b)", re.IGNORECASE)
FILLER = re.compile(r"(?<=[\d)%])\s+(?:really|actually|truly)(?=\s*[<>=!])")


# a ratio "3 : 4" stays whole, and so does a comparison asked before its options ("Which is bigger: 0.2 or 0.21?")
_KEPT_COLONS = "".join(f"(?<!{w}:)" for w in ("larger", "bigger", "greater", "smaller", "less", "largest", "biggest",
                                                 "greatest", "smallest", "least", "higher", "lower"))
_SENT = re.compile(rf"(?<=[.!?;])\s+|(?<=\S:){_KEPT_COLONS}\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (a ratio "3 : 4" stays whole)."""
    return list(_sentences(text))


@functools.lru_cache(maxsize=65536)
def _sentences(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _SENT.split(text) if s.strip())


# markdown an LLM writes: a step label at a line's or a sentence's start ("**Step 2:**"), emphasis, headings, list
# bullets and numbers at a line's start (a "- 21 + 20" bullet is not a negative number), a table row's number cell
# ("| 2 | …") and a table's rule ("|---|---|")
# (a run of underscores between spaces or signs is a blank to fill in: "2/3 = __/9")
_MARKDOWN = re.compile(r"(?:^[ \t]*|(?<=[.!?:] ))(?:\*\*)?(?:[Ss]tep|STEP)[ \t]+\d{1,2}[ \t]*[:.)](?:\*\*)?(?=\s|$)|"
                       r"\*\*|(?<=[A-Za-z0-9])__(?!_)|(?<!_)__(?=[A-Za-z0-9])|"
                       r"^[ \t]*(?:#{1,6}[ \t]+(?:\d{1,2}[.)][ \t]+)?|(?:[-*+•]|\d{1,2}[.)])[ \t]+)|"
                       r"^[ \t]*\|(?:[ \t]*\d{1,2}[ \t]*\||[ \t:|-]*$)", re.MULTILINE)


# LaTeX an LLM writes for school math, as plain text: math delimiters (a dollar pair only around a command: "$5" is
# money), fractions, operators, \\text{...}, sizing and spacing commands
_LATEX = tuple((re.compile(p), r) for p, r in (
    (r"\$\$?([^$\n]*?\\[^$\n]*?)\$\$?", r"\1"), (r"\\[()\[\]]", " "),
    (r"\\[dt]?frac\s*\{([^{}]+)\}\s*\{([^{}]+)\}", r"\1/\2"), (r"\\text(?:bf|rm)?\s*\{([^{}]*)\}", r"\1"),
    (r"\\times(?![a-z])", "×"), (r"\\cdot(?![a-z])", "·"), (r"\\div(?![a-z])", "÷"), (r"\\%", "%"),
    (r"\\(?:left|right)(?![a-z])|\\[,;!]", " "),
))


@functools.lru_cache(maxsize=8)  # a tutor turn is made plain by the annotator, the leak detector, the reader
def plain_text(text: str) -> str:  # and the student, one after the other: once
    """``text`` without the markdown an LLM writes (emphasis, headings, list bullets and numbers, step labels such
    as "**Step 2:**", a table's row numbers and rules) and with its LaTeX as plain text (``\\(\\frac{3}{4}\\)`` is
    3/4, ``\\times`` is ×)."""
    if "\\" in text:
        text = text.replace("\\$", "\x00")  # an escaped dollar is a dollar sign, not a math delimiter
        for pattern, repl in _LATEX:
            text = pattern.sub(repl, text)
        text = text.replace("\x00", "$")
    return _MARKDOWN.sub(" ", text) if ("*" in text or "_" in text or "#" in text or "\n" in text
                                         or "tep " in text or "TEP " in text or text.lstrip()[:1] in "-+•|") else text
