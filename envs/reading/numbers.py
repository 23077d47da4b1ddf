"""Numbers as the content reader writes them: number words and ordinals ("thirty-two", "three quarters"), vulgar
fractions (``½``), the units a quantity may carry (to an exact :class:`~fractions.Fraction` factor of its SI unit),
and a :class:`~fractions.Fraction` written back as a plain decimal."""

from __future__ import annotations

import functools
import re
import unicodedata
from fractions import Fraction

from tutorzoo.envs.grading import VULGAR_FRACTIONS

# ---------------------------------------------------------------------------------------------- normalising

NUM_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
NUM_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                   "ninety": 90, "hundred": 100, "a hundred": 100, "one hundred": 100, "thousand": 1000})
ORDINALS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4,
             "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7,
             "eighth": 8, "eighths": 8, "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10, "twelfth": 12,
             "twelfths": 12, "eleventh": 11, "elevenths": 11, "fifteenth": 15, "fifteenths": 15, "sixteenth": 16,
             "sixteenths": 16, "twentieth": 20, "twentieths": 20, "hundredth": 100, "hundredths": 100,
             "thousandth": 1000, "thousandths": 1000}
NUM_WORDS_ALT = "|".join(sorted(NUM_WORDS, key=len, reverse=True))
ORDINALS_ALT = "|".join(sorted(ORDINALS, key=len, reverse=True))
VULGAR = {c: Fraction(unicodedata.numeric(c)).limit_denominator(10) for c in VULGAR_FRACTIONS}
VULGAR_RE = re.compile(r"(\d+)?\s*([" + "".join(VULGAR) + "])")


def written_vulgar(m: re.Match) -> str:
    value = VULGAR[m.group(2)]
    n, d = value.numerator, value.denominator
    return f" ({m.group(1)} + {n}/{d})" if m.group(1) else f" ({n}/{d})"


# numbers written in words, compounds included ("thirty-two", "three hundred and five"); a bare "hundred" and
# "a hundred" are in NUM_WORDS
_ONES_W = "one|two|three|four|five|six|seven|eight|nine"
_TEENS_W = "ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
_TENS_W = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_BELOW100 = rf"(?:(?:{_TENS_W})(?:[- ](?:{_ONES_W}))?|{_TEENS_W}|{_ONES_W}|zero)"
_BELOW1000 = rf"(?:(?:{_ONES_W}|a) hundred(?:(?: and)? {_BELOW100})?|{_BELOW100})"
NUMBER_PHRASE = re.compile(rf"\b{_BELOW1000}(?: thousand(?:(?: and)? {_BELOW1000})?)?\b", re.IGNORECASE)


def word_number(m: re.Match) -> str:
    total = current = 0
    for w in re.split(r"[- ]+", m.group(0).lower()):
        if w == "hundred":
            current = max(current, 1) * 100
        elif w == "thousand":
            total, current = total + max(current, 1) * 1000, 0
        elif w in NUM_WORDS:
            current += NUM_WORDS[w]
    return str(total + current)


# ---------------------------------------------------------------------------------------------- expressions

UNITS: dict[str, tuple[str, Fraction]] = {}
for _names, _dim, _factor in (
    (("mm", "millimeter", "millimeters", "millimetre", "millimetres"), "length", Fraction(1, 1000)),
    (("cm", "centimeter", "centimeters", "centimetre", "centimetres"), "length", Fraction(1, 100)),
    (("m", "meter", "meters", "metre", "metres"), "length", Fraction(1)),
    (("km", "kilometer", "kilometers", "kilometre", "kilometres"), "length", Fraction(1000)),
    (("mg", "milligram", "milligrams"), "mass", Fraction(1, 1000)),
    (("g", "gram", "grams"), "mass", Fraction(1)),
    (("kg", "kilogram", "kilograms"), "mass", Fraction(1000)),
    (("ml", "milliliter", "milliliters", "millilitre", "millilitres"), "volume", Fraction(1, 1000)),
    (("l", "liter", "liters", "litre", "litres"), "volume", Fraction(1)),
    (("s", "sec", "second", "seconds"), "time", Fraction(1)),
    (("min", "mins", "minute", "minutes"), "time", Fraction(60)),
    (("h", "hr", "hrs", "hour", "hours"), "time", Fraction(3600)),
    (("km/h", "kph", "km per hour", "kilometers per hour", "kilometres per hour"), "speed", Fraction(1000, 3600)),
    (("m/s", "meters per second", "metres per second"), "speed", Fraction(1)),
):
    for _n in _names:
        UNITS[_n] = (_dim, _factor)
UNIT_ALT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
QUANTITY = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:/\d+)?(?![\w.])")
DIGIT_RUN = re.compile(r"\d+")
ANY_DIGIT = re.compile(r"\d")
_NO_DIGITS = str.maketrans("", "", "0123456789")


@functools.lru_cache(maxsize=65536)  # a reader is built per episode; most of a math task's sentences recur
def no_digits(text: str) -> str:
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
