"""Integers: adding and subtracting signed numbers on the number line (grades 6-7)."""

from __future__ import annotations

import numpy as np

from tutorzoo.envs.tasks.math.family import Family, Kind, Level, Params, Problem, Solved
from tutorzoo.envs.tasks.math.numbers import randint


def _signed(n: int) -> str:
    """A signed number as written inside an expression: ``-4`` in brackets, ``5`` bare."""
    return f"({n})" if n < 0 else str(n)


def add_steps(a: int, b: int) -> tuple[str, ...]:
    """Correct number-line steps for ``a + b``."""
    direction = "right (up)" if b >= 0 else "left (down)"
    return (
        f"Start at {a} on the number line.",
        f"Adding {b} moves {abs(b)} steps to the {direction}.",
        f"So {a} + {_signed(b)} = {a + b}.",
    )


# --- integer addition --------------------------------------------------------------------------------------


def _sample_add(rng: np.random.Generator, level: Level) -> Params:
    high = {"easy": 9, "medium": 15, "hard": 40}[level]
    a = -randint(rng, 2, high)
    b = randint(rng, -a + 1, -a + high)
    return {"a": a, "b": b}


def _solve_add(p: Params, wording: int) -> Solved:
    a, b = p["a"], p["b"]
    stem = (
        f"At 6 a.m. the temperature was {a}°C. By noon it had risen {b} degrees. What was the temperature at noon, "
        "in °C?"
        if wording == 0
        else f"A diver is at {a} m (below sea level) and swims {b} m straight up. At what height is she now, in m?"
    )
    steps = (
        f"Start at {a} on the number line.",
        f"Adding {b} moves {b} steps to the right (up): {-a} steps reach 0.",
        f"The remaining {b + a} steps go past 0, so the result is {a + b}.",
        f"So {a} + {b} = {a + b}.",
    )
    wrong = {
        "ignore_signs": (
            (
                f"Drop the signs and add: {-a} + {b} = {b - a}.",
                f"So {a} + {b} = {b - a}.",
            ),
            str(b - a),
        ),
        "sign_of_first_number": (
            (
                steps[0],
                steps[1],
                f"The remaining {b + a} steps, and the answer keeps the sign of the first number, {a}: {-(a + b)}.",
                f"So {a} + {b} = {-(a + b)}.",
            ),
            str(-(a + b)),
        ),
    }
    return Solved(stem, f"{a} + {b}", steps, str(a + b), wrong)


def _sample_two_neg(rng: np.random.Generator, level: Level) -> Params:
    return {"a": -randint(rng, 2, 12), "b": -randint(rng, 2, 12)}


def _solve_two_neg(p: Params, wording: int) -> Solved:
    a, b = p["a"], p["b"]
    stem = (
        f"Work out {a} + {_signed(b)}."
        if wording == 0
        else f"Jo owes ${-a} and then borrows ${-b} more. Write her balance as a signed number of dollars."
    )
    steps = add_steps(a, b)
    wrong = {
        "ignore_signs": (
            (f"Drop the signs and add: {-a} + {-b} = {-a - b}.", f"So the answer is {-a - b}."),
            str(-a - b),
        )
    }
    return Solved(stem, f"{a} + {_signed(b)}", steps, str(a + b), wrong)


def _sample_order(rng: np.random.Generator, level: Level) -> Params:
    a, b = sorted(int(x) for x in rng.choice(np.arange(1, 15), size=2, replace=False))
    return {"a": -a, "b": -b}  # a > b


def _solve_order(p: Params, wording: int) -> Solved:
    a, b = p["a"], p["b"]
    stem = (
        f"Which is greater, {b} or {a}?"
        if wording == 0
        else f"One freezer is at {a}°C and another at {b}°C. Which temperature is warmer? Give it in °C."
    )
    steps = (
        f"On the number line, {a} is to the right of {b}.",
        f"Numbers further right are greater, so {a} > {b}.",
    )
    wrong = {
        "ignore_signs": (
            (f"Drop the signs: {-b} > {-a}.", f"So {b} is greater."),
            str(b),
        )
    }
    return Solved(stem, f"{b} vs {a}", steps, str(a), wrong)


def _add_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    first = p["a"] + p["b"]
    c = -randint(rng, first + 3, first + 15)
    second = first + c
    d = -randint(rng, 2, 9)
    third = second - d
    return (
        Problem(
            f"Follow-up: then the value changes by {c}. What is it now?",
            (f"The previous answer is {first}.", *add_steps(first, c)),
            str(second),
        ),
        Problem(
            f"Follow-up: subtract {d} from that result.",
            (
                f"The previous answer is {second}.",
                f"Subtracting {d} is adding its opposite, {-d}: {second} - ({d}) = {second} + {-d}.",
                *add_steps(second, -d)[1:],
            ),
            str(third),
        ),
    )


INTEGER_ADDITION = Family(
    id="integer_addition",
    domain="integers",
    grade=6,
    title="Adding a positive number to a negative number",
    kcs=("number_line", "adding_integers"),
    misconceptions=("ignore_signs", "sign_of_first_number"),
    main=Kind(("number_line", "adding_integers"), _sample_add, _solve_add),
    probes=(
        Kind(("number_line",), _sample_order, _solve_order),
        Kind(("adding_integers",), _sample_two_neg, _solve_two_neg),
    ),
    follow_ups=_add_follow_ups,
    opening="Is {expr} negative because it starts with a minus sign? I'm confused by negatives.",
    summary=(
        "Adding a positive number moves right on the number line. For {expr}, start at {a} and move {b} steps "
        "right: you cross 0 and land on {answer}. The sign comes from where you land, not from the first number."
    ),
    objectives=("Place negative numbers on a number line.", "Add a positive number to a negative number."),
    extra_fields=lambda p: {"a": str(p["a"]), "b": str(p["b"])},
)


# --- integer subtraction -----------------------------------------------------------------------------------


def _sample_sub(rng: np.random.Generator, level: Level) -> Params:
    high = {"easy": 9, "medium": 15, "hard": 40}[level]
    a = -randint(rng, 1, high) if level != "hard" else randint(rng, -high, high)
    b = -randint(rng, 2, high)
    return {"a": a, "b": b}


def _solve_sub(p: Params, wording: int) -> Solved:
    a, b = p["a"], p["b"]
    stem = (
        f"Work out {a} - ({b})."
        if wording == 0
        else f"A lake's surface is at {b} m and a boat's deck is at {a} m, both relative to sea level. The height of "
        f"the deck above the surface is {a} - ({b}) m (negative means below). Work it out."
    )
    steps = (
        f"Subtracting a number is adding its opposite: {a} - ({b}) = {a} + {-b}.",
        f"Start at {a} and move {-b} steps to the right.",
        f"So {a} - ({b}) = {a - b}.",
    )
    wrong = {
        "minus_negative_is_minus": (
            (
                f"Subtracting a negative is just subtracting: {a} - ({b}) = {a} - {-b}.",
                f"Start at {a} and move {-b} steps to the left.",
                f"So {a} - ({b}) = {a + b}.",
            ),
            str(a + b),
        ),
        "ignore_signs": (
            (f"Drop the signs: {abs(a)} - {abs(b)} = {abs(a) - abs(b)}.", f"So the answer is {abs(a) - abs(b)}."),
            str(abs(a) - abs(b)),
        ),
    }
    return Solved(stem, f"{a} - ({b})", steps, str(a - b), wrong)


def _sample_small_minus_big(rng: np.random.Generator, level: Level) -> Params:
    a = randint(rng, 1, 9)
    return {"a": a, "b": randint(rng, a + 1, a + 12)}


def _solve_small_minus_big(p: Params, wording: int) -> Solved:
    a, b = p["a"], p["b"]
    stem = (
        f"Work out {a} - {b}."
        if wording == 0
        else f"The temperature is {a}°C and then drops {b} degrees. What is the new temperature, in °C?"
    )
    steps = (f"Start at {a} and move {b} steps to the left.", f"{a} steps reach 0, and {b - a} more reach {a - b}.")
    wrong = {
        "ignore_signs": (
            (f"Take the smaller number from the larger: {b} - {a} = {b - a}.", f"So the answer is {b - a}."),
            str(b - a),
        )
    }
    return Solved(stem, f"{a} - {b}", steps, str(a - b), wrong)


def _sample_mixed_add(rng: np.random.Generator, level: Level) -> Params:
    b = randint(rng, 2, 12)
    return {"a": -randint(rng, b + 1, b + 12), "b": b}


def _solve_mixed_add(p: Params, wording: int) -> Solved:
    a, b = p["a"], p["b"]
    stem = (
        f"Work out {a} + {b}."
        if wording == 0
        else f"A submarine is at {a} m and rises {b} m. What is its new depth as a signed number of metres?"
    )
    steps = add_steps(a, b)
    wrong = {
        "ignore_signs": ((f"Drop the signs and add: {-a} + {b} = {b - a}.", f"So the answer is {b - a}."), str(b - a))
    }
    return Solved(stem, f"{a} + {b}", steps, str(a + b), wrong)


def _sub_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    first = p["a"] - p["b"]
    c = -randint(rng, 2, 12)
    second = first - c
    d = randint(rng, second + 2, second + 15)
    third = second - d
    return (
        Problem(
            f"Follow-up: now subtract {c} from your answer.",
            (
                f"The previous answer is {first}.",
                f"Subtracting {c} is adding {-c}: {first} + {-c}.",
                f"So {first} - ({c}) = {second}.",
            ),
            str(second),
        ),
        Problem(
            f"Follow-up: subtract {d} from that result.",
            (
                f"The previous answer is {second}.",
                f"Subtracting {d} is adding {-d}: start at {second} and move {d} steps to the left.",
                f"So {second} - {d} = {third}.",
            ),
            str(third),
        ),
    )


INTEGER_SUBTRACTION = Family(
    id="integer_subtraction",
    domain="integers",
    grade=7,
    title="Subtracting negative numbers",
    kcs=("number_line", "adding_integers", "subtracting_integers"),
    misconceptions=("minus_negative_is_minus", "ignore_signs"),
    main=Kind(("number_line", "adding_integers", "subtracting_integers"), _sample_sub, _solve_sub),
    probes=(
        Kind(("number_line", "subtracting_integers"), _sample_small_minus_big, _solve_small_minus_big),
        Kind(("adding_integers",), _sample_mixed_add, _solve_mixed_add),
    ),
    follow_ups=_sub_follow_ups,
    opening="What does it mean to subtract a negative, like {expr}? Don't the two minuses just stay minus?",
    summary=(
        "Subtracting a number is adding its opposite, so {a} - ({b}) = {a} + {neg_b}: move right on the number "
        "line and land on {answer}."
    ),
    objectives=("Rewrite subtraction as adding the opposite.", "Subtract a negative number using the number line."),
    extra_fields=lambda p: {"a": str(p["a"]), "b": str(p["b"]), "neg_b": str(-p["b"])},
)

FAMILIES: tuple[Family, ...] = (INTEGER_ADDITION, INTEGER_SUBTRACTION)
