"""Fractions: adding unlike fractions and comparing fractions (grades 3-5)."""

from __future__ import annotations

from fractions import Fraction
from math import gcd, lcm

import numpy as np

from tutorzoo.envs.tasks.math.family import Family, Kind, Level, Params, Problem, Solved, cached_solve
from tutorzoo.envs.tasks.math.numbers import fmt_fraction, pick, randint

_DENOMS: dict[Level, tuple[int, ...]] = {
    "easy": (2, 3, 4, 6),
    "medium": (2, 3, 4, 5, 6, 8, 9),
    "hard": (5, 6, 7, 8, 9, 10, 12),
}


def _proper(rng: np.random.Generator, den: int, low: int = 1) -> int:
    """A numerator in lowest terms with ``den``."""
    integers = rng.integers  # randint(rng, low, den - 1), inlined: a task build calls this ~10 times
    while True:
        num = int(integers(low, den))
        if gcd(num, den) == 1:
            return num


def _f(num: int, den: int) -> str:
    return f"{num}/{den}"


# --- equivalent fraction: a/b = ?/n ------------------------------------------------------------------------


def _sample_equiv(rng: np.random.Generator, level: Level) -> Params:
    b = pick(rng, _DENOMS[level])
    return {"a": _proper(rng, b), "b": b, "k": randint(rng, 2, 4 if level == "easy" else 6)}


@cached_solve  # a few hundred parameter sets
def _solve_equiv(p: Params, wording: int) -> Solved:
    a, b, k = p["a"], p["b"], p["k"]
    n = b * k
    stem = (
        f"Fill in the missing numerator so that the fractions are equal: {a}/{b} = ?/{n}. What number replaces the ?"
        if wording == 0
        else f"A ruler is marked in {n}ths of an inch. How many {n}ths of an inch make {a}/{b} inch?"
    )
    steps = (
        f"The new denominator {n} is {b} × {k}.",
        f"To keep the value the same, multiply the numerator by the same number: {a} × {k} = {a * k}.",
        f"So {a}/{b} = {a * k}/{n}; the missing numerator is {a * k}.",
    )
    wrong_add = a + (n - b)
    wrong = {
        "add_same_to_top_and_bottom": (
            (
                f"The new denominator {n} is {b} + {n - b}.",
                f"Add the same number to the numerator: {a} + {n - b} = {wrong_add}.",
                f"So {a}/{b} = {wrong_add}/{n}; the missing numerator is {wrong_add}.",
            ),
            str(wrong_add),
        )
    }
    return Solved(stem, f"{a}/{b} = ?/{n}", steps, str(a * k), wrong)


EQUIVALENT_NUMERATOR = Kind(("fraction_equivalence",), _sample_equiv, _solve_equiv)


# --- adding unlike fractions -------------------------------------------------------------------------------


def _sample_add(rng: np.random.Generator, level: Level) -> Params:
    while True:
        b, d = pick(rng, _DENOMS[level]), pick(rng, _DENOMS[level])
        if b == d:
            continue
        a, c = _proper(rng, b), _proper(rng, d)
        if a * d + c * b < b * d or level == "hard":  # a/b + c/d < 1 (positive denominators)
            return {"a": a, "b": b, "c": c, "d": d}


def add_steps(x: Fraction, y: Fraction, sign: int = 1) -> tuple[str, ...]:
    """Correct steps for ``x + y`` (``sign=1``) or ``x - y`` (``sign=-1``) over a common denominator."""
    op = "+" if sign > 0 else "-"
    den = lcm(x.denominator, y.denominator)
    xn, yn = x.numerator * den // x.denominator, y.numerator * den // y.denominator
    total = xn + sign * yn
    if x.denominator == y.denominator:
        first = f"The denominators are both {den}, so they are already common."
    else:
        first = f"The denominators {x.denominator} and {y.denominator} differ; their least common multiple is {den}."
    return (
        first,
        f"Rewrite with denominator {den}: {fmt_fraction(x)} = {xn}/{den} and {fmt_fraction(y)} = {yn}/{den}.",
        f"{op.replace('+', 'Add').replace('-', 'Subtract')} the numerators and keep the denominator: "
        f"{xn}/{den} {op} {yn}/{den} = {total}/{den}.",
        _simplify(total, den),
    )


def _simplify(num: int, den: int) -> str:
    simple = fmt_fraction(Fraction(num, den))
    if simple == f"{num}/{den}":
        return f"{num}/{den} is already in lowest terms."
    return f"In lowest terms, {num}/{den} = {simple}."


@cached_solve  # a few hundred parameter sets
def _solve_add(p: Params, wording: int) -> Solved:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    x, y = Fraction(a, b), Fraction(c, d)
    stem = (
        f"Maya ate {a}/{b} of a pizza and her brother ate {c}/{d} of the same pizza. "
        "What fraction of the pizza did they eat together? Give the answer in lowest terms."
        if wording == 0
        else f"A recipe needs {a}/{b} cup of milk and {c}/{d} cup of water. "
        "How many cups of liquid is that in all? Give the answer as a fraction in lowest terms."
    )
    steps = add_steps(x, y)
    den = lcm(b, d)
    across = Fraction(a + c, b + d)
    unscaled = Fraction(a + c, den)
    wrong = {
        "add_numerators_and_denominators": (
            (
                f"Add the numerators and add the denominators: ({a} + {c})/({b} + {d}).",
                f"That gives {a + c}/{b + d}.",
                _simplify(a + c, b + d),
            ),
            fmt_fraction(across),
        ),
        "numerators_not_scaled": (
            (
                steps[0],
                f"Rewrite with denominator {den}: {a}/{b} = {a}/{den} and {c}/{d} = {c}/{den}.",
                f"Add the numerators and keep the denominator: {a}/{den} + {c}/{den} = {a + c}/{den}.",
                _simplify(a + c, den),
            ),
            fmt_fraction(unscaled),
        ),
    }
    return Solved(stem, f"{a}/{b} + {c}/{d}", steps, fmt_fraction(x + y), wrong)


def _sample_like(rng: np.random.Generator, level: Level) -> Params:
    n = pick(rng, (5, 7, 8, 9, 10, 11, 12))
    a = randint(rng, 1, n - 2)
    return {"a": a, "c": randint(rng, 1, n - 1 - a), "n": n}


@cached_solve  # a few hundred parameter sets
def _solve_like(p: Params, wording: int) -> Solved:
    a, c, n = p["a"], p["c"], p["n"]
    total = Fraction(a + c, n)
    stem = (
        f"Work out {a}/{n} + {c}/{n}. Give the answer in lowest terms."
        if wording == 0
        else f"A garden is split into {n} equal beds. Tom plants {a} of them with beans and {c} with peas. "
        "What fraction of the garden is planted? Answer in lowest terms."
    )
    steps = (
        f"The denominators are both {n}: the pieces are the same size.",
        f"Add the numerators and keep the denominator: {a}/{n} + {c}/{n} = {a + c}/{n}.",
        _simplify(a + c, n),
    )
    across = Fraction(a + c, 2 * n)
    wrong = {
        "add_numerators_and_denominators": (
            (
                f"Add the numerators and add the denominators: ({a} + {c})/({n} + {n}).",
                f"That gives {a + c}/{2 * n}.",
                _simplify(a + c, 2 * n),
            ),
            fmt_fraction(across),
        )
    }
    return Solved(stem, f"{a}/{n} + {c}/{n}", steps, fmt_fraction(total), wrong)


LIKE_ADDITION = Kind(("adding_fractions",), _sample_like, _solve_like)


def _add_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    first = Fraction(p["a"], p["b"]) + Fraction(p["c"], p["d"])
    while True:
        e = pick(rng, (3, 4, 5, 6, 7, 8, 10, 12))
        y = Fraction(_proper(rng, e), e)
        if y.denominator not in (p["b"], p["d"], first.denominator):
            break
    second = first + y
    while True:
        g = pick(rng, (2, 3, 4, 5, 6, 8, 9))
        z = Fraction(_proper(rng, g), g)
        if z < second and z.denominator != second.denominator:
            break
    third = second - z
    intro = f"The previous answer is {fmt_fraction(first)}."
    return (
        Problem(
            f"Follow-up: add {fmt_fraction(y)} to your previous answer. Give the result in lowest terms.",
            (intro, *add_steps(first, y)),
            fmt_fraction(second),
        ),
        Problem(
            f"Follow-up: now subtract {fmt_fraction(z)} from that result. Give the answer in lowest terms.",
            (f"The previous answer is {fmt_fraction(second)}.", *add_steps(second, z, sign=-1)),
            fmt_fraction(third),
        ),
    )


def _fields_two_fractions(p: Params) -> dict[str, str]:
    """The two fractions of an add/compare task and their forms over the common denominator."""
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    den = lcm(b, d)
    return {
        "frac1": _f(a, b),
        "frac2": _f(c, d),
        "den1": str(b),
        "den2": str(d),
        "common_den": str(den),
        "frac1_scaled": _f(a * den // b, den),
        "frac2_scaled": _f(c * den // d, den),
    }


FRACTION_ADDITION = Family(
    id="fraction_addition",
    domain="fractions",
    grade=5,
    title="Adding fractions with unlike denominators",
    kcs=("fraction_equivalence", "common_denominator", "adding_fractions"),
    misconceptions=("add_numerators_and_denominators", "numerators_not_scaled", "add_same_to_top_and_bottom"),
    main=Kind(("fraction_equivalence", "common_denominator", "adding_fractions"), _sample_add, _solve_add),
    probes=(EQUIVALENT_NUMERATOR, LIKE_ADDITION),
    follow_ups=_add_follow_ups,
    opening="I don't get how to add {frac1} and {frac2} when the bottom numbers are different. Can you help?",
    summary=(
        "To add {frac1} and {frac2}, rename both with a common denominator ({common_den}): "
        "{frac1} = {frac1_scaled} and {frac2} = {frac2_scaled}, then add only the numerators and simplify: "
        "{expr} = {answer}."
    ),
    objectives=(
        "Rename a fraction as an equivalent fraction with a given denominator.",
        "Find a common denominator for two fractions.",
        "Add fractions with unlike denominators and simplify the result.",
    ),
    extra_fields=_fields_two_fractions,
)


# --- comparing fractions -----------------------------------------------------------------------------------


def _sample_compare(rng: np.random.Generator, level: Level) -> Params:
    # The larger fraction has both the smaller numerator and the smaller denominator, so "bigger numbers
    # mean a bigger fraction" picks the wrong one.
    # The easy addition set admits no such pair, so easy comparison adds fifths.
    denoms = (2, 3, 4, 5, 6) if level == "easy" else _DENOMS[level]
    n, integers = len(denoms), rng.integers  # pick(rng, denoms), inlined: ~10 tries per sample
    while True:
        b, d = denoms[int(integers(n))], denoms[int(integers(n))]
        if b == d:
            continue
        if b > d:
            b, d = d, b
        a, c = _proper(rng, b), _proper(rng, d)
        if a < c and a * d > c * b:  # a/b > c/d (positive denominators)
            return {"a": a, "b": b, "c": c, "d": d}


@cached_solve  # a few hundred parameter sets
def _solve_compare(p: Params, wording: int) -> Solved:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    den = lcm(b, d)
    an, cn = a * den // b, c * den // d
    stem = (
        f"Which fraction is larger, {a}/{b} or {c}/{d}? Write the larger fraction."
        if wording == 0
        else f"Ana ran {c}/{d} of a mile and Ben ran {a}/{b} of a mile. Which distance, in miles, is longer? "
        "Write it as a fraction."
    )
    steps = (
        f"Give both fractions a common denominator: the least common multiple of {b} and {d} is {den}.",
        f"{a}/{b} = {an}/{den} and {c}/{d} = {cn}/{den}.",
        f"With equal denominators compare the numerators: {an} > {cn}, so {a}/{b} > {c}/{d}.",
        f"The larger fraction is {a}/{b}.",
    )
    wrong = {
        "larger_denominator_larger": (
            (
                f"{c}/{d} has the larger denominator ({d} > {b}), so it must be the larger fraction.",
                f"The larger fraction is {c}/{d}.",
            ),
            _f(c, d),
        ),
        "larger_numerator_larger": (
            (
                f"{c}/{d} has the larger numerator ({c} > {a}), so it must be the larger fraction.",
                f"The larger fraction is {c}/{d}.",
            ),
            _f(c, d),
        ),
    }
    return Solved(stem, f"{a}/{b} vs {c}/{d}", steps, _f(a, b), wrong)


def _sample_same_numerator(rng: np.random.Generator, level: Level) -> Params:
    b, d = sorted(int(x) for x in rng.choice(np.arange(3, 13), size=2, replace=False))
    a = randint(rng, 1, b - 1)
    return {"a": a, "b": b, "d": d}


@cached_solve  # a few hundred parameter sets
def _solve_same_numerator(p: Params, wording: int) -> Solved:
    a, b, d = p["a"], p["b"], p["d"]
    stem = (
        f"Which is larger, {a}/{b} or {a}/{d}? Write the larger fraction."
        if wording == 0
        else f"Two equal cakes are cut, one into {d} slices and one into {b} slices. Is {a}/{d} of the first cake or "
        f"{a}/{b} of the second cake more cake? Write that fraction."
    )
    steps = (
        f"Both fractions have {a} pieces, so compare the size of one piece.",
        f"A whole cut into {b} parts has bigger parts than a whole cut into {d} parts, so 1/{b} > 1/{d}.",
        f"So {a}/{b} > {a}/{d}; the larger fraction is {fmt_fraction(Fraction(a, b))}.",
    )
    wrong = {
        "larger_denominator_larger": (
            (steps[0], f"{d} is bigger than {b}, so 1/{d} > 1/{b}.", f"So {a}/{d} > {a}/{b}; the larger is {a}/{d}."),
            fmt_fraction(Fraction(a, d)),
        )
    }
    return Solved(stem, f"{a}/{b} vs {a}/{d}", steps, fmt_fraction(Fraction(a, b)), wrong)


def _compare_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    x, y = Fraction(p["a"], p["b"]), Fraction(p["c"], p["d"])
    diff = x - y
    mid = y + diff / 2
    return (
        Problem(
            f"Follow-up: how much larger is the larger fraction than the smaller one? Compute "
            f"{fmt_fraction(x)} - {fmt_fraction(y)} in lowest terms.",
            (f"The larger fraction was {fmt_fraction(x)}.", *add_steps(x, y, sign=-1)),
            fmt_fraction(diff),
        ),
        Problem(
            "Follow-up: which fraction lies exactly halfway between the two? Use your difference: add half of it "
            "to the smaller fraction.",
            (
                f"The difference was {fmt_fraction(diff)}; half of it is {fmt_fraction(diff / 2)}.",
                *add_steps(y, diff / 2),
            ),
            fmt_fraction(mid),
        ),
    )


FRACTION_COMPARISON = Family(
    id="fraction_comparison",
    domain="fractions",
    grade=4,
    title="Comparing fractions with different denominators",
    kcs=("fraction_equivalence", "common_denominator", "comparing_fractions"),
    misconceptions=("larger_denominator_larger", "larger_numerator_larger", "add_same_to_top_and_bottom"),
    main=Kind(("fraction_equivalence", "common_denominator", "comparing_fractions"), _sample_compare, _solve_compare),
    probes=(EQUIVALENT_NUMERATOR, Kind(("comparing_fractions",), _sample_same_numerator, _solve_same_numerator)),
    follow_ups=_compare_follow_ups,
    opening="How can I tell which is bigger, {frac1} or {frac2}? {frac2} has bigger numbers, so isn't it bigger?",
    summary=(
        "To compare {frac1} and {frac2}, rename them with the common denominator {common_den}: {frac1_scaled} and "
        "{frac2_scaled}. Same-size pieces can be compared by counting them, so {answer} is larger; bigger numbers "
        "in a fraction do not mean a bigger value."
    ),
    objectives=(
        "Explain why a larger denominator means smaller pieces.",
        "Compare two fractions by renaming them with a common denominator.",
    ),
    extra_fields=_fields_two_fractions,
)

FAMILIES: tuple[Family, ...] = (FRACTION_COMPARISON, FRACTION_ADDITION)
