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

import numpy as np

Number = int | Fraction

# Decimal answers with more places than this are written as fractions; no family needs more.
_MAX_PLACES = 4


def fmt_fraction(x: Number) -> str:
    """``x`` in lowest terms: ``'5/6'``, ``'-3/4'``, or an integer ``'2'``."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def decimal_places(x: Number) -> int | None:
    """The number of decimal places ``x`` needs, or ``None`` when its decimal does not terminate."""
    den = x.denominator if isinstance(x, Fraction) else Fraction(x).denominator
    for places in range(_MAX_PLACES + 1):  # integer test: den divides 10**places (on the env's reset path)
        if (10**places) % den == 0:
            return places
    return None


@lru_cache(maxsize=65536)  # a task build formats ~50 numbers, mostly small values seen before
def fmt_decimal(x: Number, places: int | None = None) -> str:
    """``x`` as an exact decimal: ``'4.15'``, ``'-0.5'``, ``'12'`` (``places`` pads with zeros, e.g. money)."""
    x = x if isinstance(x, Fraction) else Fraction(x)
    need = decimal_places(x)
    if need is None:
        raise ValueError(f"{x} has no terminating decimal of at most {_MAX_PLACES} places")
    places = need if places is None else max(places, need)
    sign = "-" if x.numerator < 0 else ""
    scaled = abs(x.numerator) * 10**places // x.denominator  # exact: the denominator divides 10**places
    whole, frac = divmod(scaled, 10**places)
    return f"{sign}{whole}" if places == 0 else f"{sign}{whole}.{frac:0{places}d}"


@lru_cache(maxsize=65536)
def fmt_value(x: Number) -> str:
    """An integer, a short decimal when it terminates, else a fraction: ``'24'``, ``'2.5'``, ``'1/3'``."""
    x = x if isinstance(x, Fraction) else Fraction(x)
    return fmt_decimal(x) if decimal_places(x) is not None else fmt_fraction(x)


def randint(rng: np.random.Generator, low: int, high: int) -> int:
    """An integer in ``[low, high]`` (both ends included) as a plain ``int``."""
    return int(rng.integers(low, high + 1))


def pick(rng: np.random.Generator, options: tuple | list):
    """One element of ``options``, chosen by ``rng``."""
    return options[int(rng.integers(len(options)))]
