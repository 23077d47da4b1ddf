"""The units a quantity may carry, each name with its dimension and the exact factor of its reference unit (metre,
gram, litre, second, metre per second): "9500 m = 9.5 km" converts exactly. The factors are pint's exact
``Fraction`` conversions, checked by ``tests/envs/test_reading_numbers.py`` rather than computed at import (see
:mod:`tutorzoo.envs.reading.numbers`)."""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["UNITS", "UNIT_ALT"]

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
# every name, longest first: an alternation for the reader's patterns
UNIT_ALT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
