"""Canonical answer strings for exact numbers: ``5/6``, ``0.35``, ``-7``, ``24``.

Every answer the math set produces goes through these functions, so two equal values always print the same.

Example::

    from fractions import Fraction
    fmt_fraction(Fraction(10, 12))  # '5/6'
    fmt_value(Fraction(7, 2))       # '3.5'
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import gcd

import numpy as np

Number = int | Fraction

# Decimal answers with more places than this are written as fractions; no family needs more.
_MAX_PLACES = 4


def _num_den(x: Number) -> tuple[int, int]:
    """``x``'s numerator and denominator in lowest terms."""
    if isinstance(x, Fraction):
        return x.numerator, x.denominator
    if isinstance(x, int):
        return int(x), 1
    f = Fraction(x)
    return f.numerator, f.denominator


def fmt_fraction(x: Number) -> str:
    """``x`` in lowest terms: ``'5/6'``, ``'-3/4'``, or an integer ``'2'``."""
    num, den = _num_den(x)
    return str(num) if den == 1 else f"{num}/{den}"


def _places(den: int) -> int | None:
    for places in range(_MAX_PLACES + 1):  # integer test: den divides 10**places (on the env's reset path)
        if (10**places) % den == 0:
            return places
    return None


def decimal_places(x: Number) -> int | None:
    """The number of decimal places ``x`` needs, or ``None`` when its decimal does not terminate."""
    return _places(x.denominator if isinstance(x, Fraction) else Fraction(x).denominator)


# The caches below are keyed on (numerator, denominator) ints, not on the Fraction: hashing a Fraction costs
# a modular inverse, and a task build formats ~50 numbers.


def fmt_decimal(x: Number, places: int | None = None) -> str:
    """``x`` as an exact decimal: ``'4.15'``, ``'-0.5'``, ``'12'`` (``places`` pads with zeros, e.g. money)."""
    num, den = _num_den(x)
    return _fmt_decimal(num, den, places)


@lru_cache(maxsize=65536)  # mostly small values seen before
def _fmt_decimal(num: int, den: int, places: int | None) -> str:
    need = _places(den)
    if need is None:
        raise ValueError(f"{Fraction(num, den)} has no terminating decimal of at most {_MAX_PLACES} places")
    places = need if places is None else max(places, need)
    sign = "-" if num < 0 else ""
    scaled = abs(num) * 10**places // den  # exact: the denominator divides 10**places
    whole, frac = divmod(scaled, 10**places)
    return f"{sign}{whole}" if places == 0 else f"{sign}{whole}.{frac:0{places}d}"


def fmt_value(x: Number) -> str:
    """An integer, a short decimal when it terminates, else a fraction: ``'24'``, ``'2.5'``, ``'1/3'``."""
    return _fmt_value(*_num_den(x))


def fmt_ratio(num: int, den: int) -> str:
    """``fmt_value(Fraction(num, den))`` for ints, without building the Fraction (solvers call it per sample)."""
    if den == 0:
        return fmt_value(Fraction(num, den))  # raises ZeroDivisionError as Fraction does
    g = gcd(num, den)
    if den < 0:  # Fraction keeps the sign on the numerator
        g = -g
    return _fmt_value(num // g, den // g)


@lru_cache(maxsize=65536)
def _fmt_value(num: int, den: int) -> str:
    if _places(den) is not None:
        return _fmt_decimal(num, den, None)
    return str(num) if den == 1 else f"{num}/{den}"


def randint(rng: np.random.Generator, low: int, high: int) -> int:
    """An integer in ``[low, high]`` (both ends included) as a plain ``int``."""
    return int(rng.integers(low, high + 1))


def pick(rng: np.random.Generator, options: tuple | list):
    """One element of ``options``, chosen by ``rng``."""
    return options[int(rng.integers(len(options)))]
