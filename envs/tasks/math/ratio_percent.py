"""Ratio and percent: percent discounts and scaling a ratio (grades 6-7)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tutorzoo.envs.tasks.math.family import Family, Kind, Level, Params, Problem, Solved, cached_solve
from tutorzoo.envs.tasks.math.numbers import fmt_value, pick, randint

_RATES: dict[Level, tuple[int, ...]] = {
    "easy": (10, 20, 25, 50),
    "medium": (10, 15, 20, 25, 30, 40, 60, 75),
    "hard": (12, 15, 35, 45, 65, 85),
}

# --- percent discount --------------------------------------------------------------------------------------


def _sample_discount(rng: np.random.Generator, level: Level) -> Params:
    return {"price": randint(rng, 3, 30) * 4, "rate": pick(rng, _RATES[level])}


@cached_solve  # a few hundred parameter sets
def _solve_discount(p: Params, wording: int) -> Solved:
    price, r = p["price"], p["rate"]
    rate = Fraction(r, 100)
    off = price * rate
    sale = price - off
    stem = (
        f"A jacket costs ${price}. It is on sale for {r}% off. What is the sale price in dollars?"
        if wording == 0
        else f"A bike priced at ${price} is reduced by {r}%. How many dollars does it cost now?"
    )
    steps = (
        f"{r}% means {r} per 100, so {r}% = {fmt_value(rate)}.",
        f"The discount is {r}% of ${price}: {fmt_value(rate)} × {price} = {fmt_value(off)}.",
        f"The sale price is {price} - {fmt_value(off)} = {fmt_value(sale)}.",
    )
    wrong = {
        "subtract_percent_as_dollars": (
            (f"Take {r} off the price: {price} - {r} = {price - r}.", f"The sale price is {price - r}."),
            str(price - r),
        ),
        "discount_as_price": (
            (steps[0], steps[1], f"So the sale price is {fmt_value(off)}."),
            fmt_value(off),
        ),
    }
    return Solved(stem, f"{price} - {r}% of {price}", steps, fmt_value(sale), wrong)


def _sample_percent_of(rng: np.random.Generator, level: Level) -> Params:
    return {"q": randint(rng, 2, 20) * 20, "rate": pick(rng, _RATES["medium"])}


@cached_solve  # a few hundred parameter sets
def _solve_percent_of(p: Params, wording: int) -> Solved:
    q, r = p["q"], p["rate"]
    val = Fraction(r * q, 100)
    stem = (
        f"What is {r}% of {q}?"
        if wording == 0
        else f"{r}% of the {q} students in a school walk to school. How many students walk?"
    )
    steps = (
        f"{r}% = {r}/100.",
        f"{r}/100 × {q} = {r * q}/100 = {fmt_value(val)}.",
    )
    wrong = {
        "subtract_percent_as_dollars": (
            (f"Take {r} away from {q}: {q} - {r} = {q - r}.", f"So it is {q - r}."),
            str(q - r),
        )
    }
    return Solved(stem, f"{r}% of {q}", steps, fmt_value(val), wrong)


def _sample_pct_dec(rng: np.random.Generator, level: Level) -> Params:
    return {"rate": pick(rng, (3, 5, 8, 12, 15, 35, 45, 60, 75, 120))}


@cached_solve  # a few hundred parameter sets
def _solve_pct_dec(p: Params, wording: int) -> Solved:
    r = p["rate"]
    stem = (
        f"Write {r}% as a decimal."
        if wording == 0
        else f"A bank pays {r}% interest. Write that rate as a decimal you could multiply by."
    )
    steps = (f"Percent means per hundred: {r}% = {r}/100.", f"{r} ÷ 100 = {fmt_value(Fraction(r, 100))}.")
    return Solved(stem, f"{r}%", steps, fmt_value(Fraction(r, 100)), {})


def _discount_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    sale = p["price"] * (1 - Fraction(p["rate"], 100))
    tax = pick(rng, (5, 8, 10))
    after = sale * (1 + Fraction(tax, 100))
    budget = int(after) + randint(rng, 5, 40)
    return (
        Problem(
            f"Follow-up: a {tax}% sales tax is added to the sale price. What do you pay, in dollars?",
            (
                f"The sale price was {fmt_value(sale)}.",
                f"Tax: {tax}% of {fmt_value(sale)} = {fmt_value(sale * Fraction(tax, 100))}.",
                f"Total: {fmt_value(sale)} + {fmt_value(sale * Fraction(tax, 100))} = {fmt_value(after)}.",
            ),
            fmt_value(after),
        ),
        Problem(
            f"Follow-up: you have ${budget}. How much money is left after paying that total?",
            (f"The total was {fmt_value(after)}.", f"{budget} - {fmt_value(after)} = {fmt_value(budget - after)}."),
            fmt_value(budget - after),
        ),
    )


PERCENT_DISCOUNT = Family(
    id="percent_discount",
    domain="ratio_percent",
    grade=7,
    title="Finding a sale price after a percent discount",
    kcs=("percent_meaning", "percent_of_quantity", "percent_change"),
    misconceptions=("subtract_percent_as_dollars", "discount_as_price"),
    main=Kind(("percent_meaning", "percent_of_quantity", "percent_change"), _sample_discount, _solve_discount),
    probes=(
        Kind(("percent_meaning",), _sample_pct_dec, _solve_pct_dec),
        Kind(("percent_meaning", "percent_of_quantity"), _sample_percent_of, _solve_percent_of),
    ),
    follow_ups=_discount_follow_ups,
    opening="A ${price} jacket is {rate}% off. Do I just take {rate} dollars off?",
    summary=(
        "A percent is a number per hundred, so {rate}% off means taking {rate} hundredths of the price: the discount "
        "is {discount} dollars and the sale price is {price} - {discount} = {answer} dollars."
    ),
    objectives=(
        "Write a percent as a fraction or decimal.",
        "Find a percent of a quantity.",
        "Compute a price after a percent decrease.",
    ),
    extra_fields=lambda p: {
        "price": str(p["price"]),
        "rate": str(p["rate"]),
        "discount": fmt_value(p["price"] * Fraction(p["rate"], 100)),
    },
)


# --- scaling a ratio ---------------------------------------------------------------------------------------


def _sample_ratio(rng: np.random.Generator, level: Level) -> Params:
    # easy: whole-number factor and small parts; hard: a fractional factor (x1.5, x2.5 ...) and bigger parts.
    top = {"easy": 3, "medium": 5, "hard": 9}[level]
    while True:
        a, b = randint(rng, 1, top), randint(rng, 2, top + 2)
        if a != b and Fraction(a, b).denominator == b:
            if level == "hard":
                k = pick(rng, (Fraction(3, 2), Fraction(5, 2), Fraction(7, 2), Fraction(4, 3), Fraction(5, 3)))
            else:
                k = randint(rng, 2, 4 if level == "easy" else 6)
            if (k * b).denominator == 1:
                return {"a": a, "b": b, "k": k}


@cached_solve  # a few hundred parameter sets
def _solve_ratio(p: Params, wording: int) -> Solved:
    a, b, k = p["a"], p["b"], Fraction(p["k"])
    n = int(k * b)
    ans = a * k
    stem = (
        f"A lemonade recipe uses {a} cups of lemon juice for every {b} cups of water. How many cups of lemon juice "
        f"are needed for {n} cups of water?"
        if wording == 0
        else f"A paint mix uses {a} litres of blue for every {b} litres of white. How many litres of blue go with "
        f"{n} litres of white?"
    )
    steps = (
        f"The ratio of juice to water is {a} : {b}.",
        f"{n} ÷ {b} = {fmt_value(k)}, so {n} is {fmt_value(k)} times {b}.",
        f"Scale the other part by the same factor: {a} × {fmt_value(k)} = {fmt_value(ans)}.",
    )
    wrong = {
        "additive_scaling": (
            (
                steps[0],
                f"{n} is {n - b} more than {b}.",
                f"Add the same amount to the other part: {a} + {n - b} = {a + n - b}.",
            ),
            str(a + n - b),
        ),
        "inverted_ratio": (
            (
                f"For each cup of water use {b}/{a} cups of juice.",
                f"{n} × {b}/{a} = {fmt_value(Fraction(n * b, a))}.",
            ),
            fmt_value(Fraction(n * b, a)),
        ),
    }
    return Solved(stem, f"{a} : {b} = ? : {n}", steps, fmt_value(ans), wrong)


def _sample_equiv_ratio(rng: np.random.Generator, level: Level) -> Params:
    return {"a": randint(rng, 2, 9), "b": randint(rng, 2, 9), "k": randint(rng, 2, 7)}


def _solve_equiv_ratio(p: Params, wording: int) -> Solved:
    a, b, k = p["a"], p["b"], p["k"]
    stem = (
        f"Fill in the missing number: {a} : {b} = ? : {b * k}."
        if wording == 0
        else f"A recipe for green paint is {a} parts yellow to {b} parts blue. With {b * k} parts blue, how many "
        "parts yellow keep the same colour?"
    )
    steps = (f"{b * k} = {b} × {k}.", f"Multiply the other term by {k} too: {a} × {k} = {a * k}.")
    wrong = {
        "additive_scaling": (
            (f"{b * k} is {b * k - b} more than {b}.", f"Add {b * k - b} to {a}: {a + b * k - b}."),
            str(a + b * k - b),
        )
    }
    return Solved(stem, f"{a} : {b} = ? : {b * k}", steps, str(a * k), wrong)


def _sample_unit_price(rng: np.random.Generator, level: Level) -> Params:
    return {"n": randint(rng, 3, 9), "each": Fraction(randint(rng, 3, 40), 4)}


@cached_solve  # a few hundred parameter sets
def _solve_unit_price(p: Params, wording: int) -> Solved:
    n, each = p["n"], p["each"]
    cost = n * each
    stem = (
        f"{n} notebooks cost ${fmt_value(cost)}. How many dollars does one notebook cost?"
        if wording == 0
        else f"A pack of {n} juice boxes costs ${fmt_value(cost)}. What is the price of one box in dollars?"
    )
    steps = ("Unit price = total cost ÷ number of items.", f"{fmt_value(cost)} ÷ {n} = {fmt_value(each)}.")
    inv = Fraction(n) / cost
    wrong = {
        "inverted_ratio": (
            ("Unit price = number of items ÷ total cost.", f"{n} ÷ {fmt_value(cost)} = {fmt_value(inv)}."),
            fmt_value(inv),
        )
    }
    return Solved(stem, f"{fmt_value(cost)} ÷ {n}", steps, fmt_value(each), wrong)


def _ratio_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    a, b, k = p["a"], p["b"], Fraction(p["k"])
    juice = a * k
    water = k * b
    total = juice + water
    glass = pick(rng, (Fraction(1, 2), Fraction(1, 4)))
    glasses = total / glass
    return (
        Problem(
            "Follow-up: how many cups of lemonade does that batch make in total?",
            (
                f"The batch has {fmt_value(juice)} cups of juice and {fmt_value(water)} cups of water.",
                f"Total: {fmt_value(juice)} + {fmt_value(water)} = {fmt_value(total)} cups.",
            ),
            fmt_value(total),
        ),
        Problem(
            f"Follow-up: each glass holds {fmt_value(glass)} cup. How many glasses can you fill?",
            (
                f"The batch is {fmt_value(total)} cups.",
                f"{fmt_value(total)} ÷ {fmt_value(glass)} = {fmt_value(glasses)} glasses.",
            ),
            fmt_value(glasses),
        ),
    )


RATIO_SCALING = Family(
    id="ratio_scaling",
    domain="ratio_percent",
    grade=6,
    title="Scaling a ratio in a recipe",
    kcs=("equivalent_ratios", "unit_rate"),
    misconceptions=("additive_scaling", "inverted_ratio"),
    main=Kind(("equivalent_ratios", "unit_rate"), _sample_ratio, _solve_ratio),
    probes=(
        Kind(("equivalent_ratios",), _sample_equiv_ratio, _solve_equiv_ratio),
        Kind(("unit_rate",), _sample_unit_price, _solve_unit_price),
    ),
    follow_ups=_ratio_follow_ups,
    opening="If the recipe is {a} cups of juice to {b} cups of water, and I use {n} cups of water, do I just add "
    "the same extra to the juice?",
    summary=(
        "A ratio stays the same when both parts are multiplied by the same factor, not when the same amount is "
        "added. {n} cups of water is {k} times {b}, so the juice is {a} × {k} = {answer} cups."
    ),
    objectives=("Find equivalent ratios by multiplying both terms.", "Use a scale factor or unit rate in a recipe."),
    extra_fields=lambda p: {
        "a": str(p["a"]),
        "b": str(p["b"]),
        "k": fmt_value(Fraction(p["k"])),
        "n": str(int(Fraction(p["k"]) * p["b"])),
        "unit": fmt_value(Fraction(p["a"], p["b"])),
    },
)

FAMILIES: tuple[Family, ...] = (RATIO_SCALING, PERCENT_DISCOUNT)
