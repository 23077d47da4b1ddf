"""Expressions and equations: order of operations (grade 6) and two-step linear equations (grade 7)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tutorzoo.envs.tasks.math.family import Family, Kind, Level, Params, Problem, Solved
from tutorzoo.envs.tasks.math.numbers import fmt_ratio, fmt_value, randint

# --- order of operations: a - b + c × d --------------------------------------------------------------------


def _sample_ops(rng: np.random.Generator, level: Level) -> Params:
    top = {"easy": 6, "medium": 9, "hard": 12}[level]
    a = randint(rng, 12, 40)
    return {"a": a, "b": randint(rng, 2, a - 2), "c": randint(rng, 2, top), "d": randint(rng, 2, top)}


def _solve_ops(p: Params, wording: int) -> Solved:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    expr = f"{a} - {b} + {c} × {d}"
    stem = (
        f"Evaluate {expr}."
        if wording == 0
        else f"Kim had {a} stickers, gave away {b}, then bought {c} packs of {d} stickers. "
        f"Her total is {expr}. Evaluate it."
    )
    cd, ab = c * d, a - b
    steps = (
        f"Multiplication comes before addition and subtraction: {c} × {d} = {cd}.",
        f"The expression is now {a} - {b} + {cd}.",
        f"Add and subtract from left to right: {a} - {b} = {ab}.",
        f"{ab} + {cd} = {ab + cd}.",
    )
    wrong = {
        "strictly_left_to_right": (
            (
                f"Work from left to right: {a} - {b} = {ab}.",
                f"{ab} + {c} = {ab + c}.",
                f"{ab + c} × {d} = {(ab + c) * d}.",
            ),
            str((ab + c) * d),
        ),
        "addition_before_subtraction": (
            (
                steps[0],
                steps[1],
                f"Addition comes before subtraction: {b} + {cd} = {b + cd}.",
                f"{a} - {b + cd} = {a - b - cd}.",
            ),
            str(a - b - cd),
        ),
    }
    return Solved(stem, expr, steps, str(ab + cd), wrong)


def _sample_plus_times(rng: np.random.Generator, level: Level) -> Params:
    return {"a": randint(rng, 2, 20), "b": randint(rng, 2, 9), "c": randint(rng, 2, 9)}


def _solve_plus_times(p: Params, wording: int) -> Solved:
    a, b, c = p["a"], p["b"], p["c"]
    expr = f"{a} + {b} × {c}"
    stem = (
        f"Evaluate {expr}."
        if wording == 0
        else f"A taxi costs ${a} plus ${b} for each of {c} miles: {expr}. Evaluate it."
    )
    steps = (f"Multiply first: {b} × {c} = {b * c}.", f"Then add: {a} + {b * c} = {a + b * c}.")
    wrong = {
        "strictly_left_to_right": (
            (f"Left to right: {a} + {b} = {a + b}.", f"Then {a + b} × {c} = {(a + b) * c}."),
            str((a + b) * c),
        )
    }
    return Solved(stem, expr, steps, str(a + b * c), wrong)


def _sample_minus_plus(rng: np.random.Generator, level: Level) -> Params:
    a = randint(rng, 15, 40)
    b = randint(rng, 2, a - 5)
    return {"a": a, "b": b, "c": randint(rng, 2, 15)}


def _solve_minus_plus(p: Params, wording: int) -> Solved:
    a, b, c = p["a"], p["b"], p["c"]
    expr = f"{a} - {b} + {c}"
    stem = (
        f"Evaluate {expr}."
        if wording == 0
        else f"A bus had {a} riders; {b} got off and then {c} got on. Evaluate {expr}."
    )
    steps = (f"Addition and subtraction go left to right: {a} - {b} = {a - b}.", f"Then {a - b} + {c} = {a - b + c}.")
    wrong = {
        "addition_before_subtraction": (
            (f"Add first: {b} + {c} = {b + c}.", f"Then {a} - {b + c} = {a - b - c}."),
            str(a - b - c),
        )
    }
    return Solved(stem, expr, steps, str(a - b + c), wrong)


def _ops_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    n = p["a"] - p["b"] + p["c"] * p["d"]
    e, f = randint(rng, 2, 5), randint(rng, 2, 9)
    m = n - e * f + 2**2
    g = randint(rng, 2, 6)
    q = Fraction(m + g, g * 2)
    return (
        Problem(
            f"Follow-up: let n be your answer. Evaluate n - {e} × {f} + 2^2.",
            (
                f"n = {n}.",
                f"Powers first: 2^2 = 4. Then multiplication: {e} × {f} = {e * f}.",
                f"Left to right: {n} - {e * f} = {n - e * f}, then {n - e * f} + 4 = {m}.",
            ),
            str(m),
        ),
        Problem(
            f"Follow-up: let m be that result. Evaluate (m + {g}) ÷ ({g} × 2).",
            (
                f"m = {m}.",
                f"Brackets first: {m} + {g} = {m + g} and {g} × 2 = {g * 2}.",
                f"Divide: {m + g} ÷ {g * 2} = {fmt_value(q)}.",
            ),
            fmt_value(q),
        ),
    )


ORDER_OF_OPERATIONS = Family(
    id="order_of_operations",
    domain="expressions",
    grade=6,
    title="Order of operations",
    kcs=("operation_precedence", "left_to_right_rule"),
    misconceptions=("strictly_left_to_right", "addition_before_subtraction"),
    main=Kind(("operation_precedence", "left_to_right_rule"), _sample_ops, _solve_ops),
    probes=(
        Kind(("operation_precedence",), _sample_plus_times, _solve_plus_times),
        Kind(("left_to_right_rule",), _sample_minus_plus, _solve_minus_plus),
    ),
    follow_ups=_ops_follow_ups,
    opening="For {expr} I just went from left to right and my answer was marked wrong. Why?",
    summary=(
        "Multiplication and division come before addition and subtraction; operations of the same rank go left to "
        "right. So in {expr} do {c} × {d} first, then {a} - {b}, then add: {answer}."
    ),
    objectives=(
        "Apply multiplication before addition and subtraction.",
        "Evaluate addition and subtraction from left to right.",
    ),
    extra_fields=lambda p: {k: str(p[k]) for k in ("a", "b", "c", "d")},
)


# --- two-step equations: a x + b = c -----------------------------------------------------------------------


def _sample_eq(rng: np.random.Generator, level: Level) -> Params:
    top = {"easy": 5, "medium": 9, "hard": 15}[level]
    x = randint(rng, 2, top) if level != "hard" else randint(rng, -top, top)
    a = randint(rng, 2, 9)
    b = randint(rng, 1, 20)
    return {"a": a, "b": b, "x": x}


def _solve_eq(p: Params, wording: int) -> Solved:
    a, b, x = p["a"], p["b"], p["x"]
    c = a * x + b
    stem = (
        f"Solve for x: {a}x + {b} = {c}."
        if wording == 0
        else f"A taxi charges ${b} to start plus ${a} per mile. A ride cost ${c}. How many miles long was it?"
    )
    steps = (
        f"Undo the addition first: subtract {b} from both sides: {a}x = {c} - {b} = {c - b}.",
        f"Undo the multiplication: divide both sides by {a}: x = {c - b} ÷ {a} = {x}.",
        f"Check: {a} × {x} + {b} = {c}.",
    )
    c_over_a = fmt_ratio(c, a)
    div_first = fmt_ratio(c - a * b, a)  # c/a - b
    undo = fmt_ratio(c + b, a)
    wrong = {
        "divide_only_one_term": (
            (
                f"Divide by {a} first, but only the x term and the right side: x + {b} = {c_over_a}.",
                f"Subtract {b}: x = {c_over_a} - {b} = {div_first}.",
            ),
            div_first,
        ),
        "same_operation_to_undo": (
            (
                f"Move {b} to the other side: {a}x = {c} + {b} = {c + b}.",
                f"Divide both sides by {a}: x = {c + b} ÷ {a} = {undo}.",
            ),
            undo,
        ),
    }
    return Solved(stem, f"{a}x + {b} = {c}", steps, str(x), wrong)


def _sample_one_add(rng: np.random.Generator, level: Level) -> Params:
    return {"b": randint(rng, 2, 30), "x": randint(rng, 2, 30)}


def _solve_one_add(p: Params, wording: int) -> Solved:
    b, x = p["b"], p["x"]
    c = x + b
    stem = (
        f"Solve for x: x + {b} = {c}."
        if wording == 0
        else f"After getting {b} more marbles, Raj has {c}. How many did he have before?"
    )
    steps = (f"Subtract {b} from both sides: x = {c} - {b}.", f"x = {x}.")
    wrong = {"same_operation_to_undo": ((f"Move {b} across: x = {c} + {b}.", f"x = {c + b}."), str(c + b))}
    return Solved(stem, f"x + {b} = {c}", steps, str(x), wrong)


def _sample_one_mul(rng: np.random.Generator, level: Level) -> Params:
    return {"a": randint(rng, 2, 9), "x": randint(rng, 2, 12)}


def _solve_one_mul(p: Params, wording: int) -> Solved:
    a, x = p["a"], p["x"]
    c = a * x
    stem = (
        f"Solve for x: {a}x = {c}."
        if wording == 0
        else f"{a} identical notebooks cost ${c} in total. How many dollars does one cost?"
    )
    steps = (f"Divide both sides by {a}: x = {c} ÷ {a}.", f"x = {x}.")
    wrong = {"same_operation_to_undo": ((f"Move {a} across: x = {c} × {a}.", f"x = {c * a}."), str(c * a))}
    return Solved(stem, f"{a}x = {c}", steps, str(x), wrong)


def _eq_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    x = p["x"]
    e, f = randint(rng, 2, 6), randint(rng, 1, 9)
    v = e * x - f
    g, h = randint(rng, 2, 5), randint(rng, 1, 12)
    y = Fraction(v + h, g)
    return (
        Problem(
            f"Follow-up: use your value of x to find {e}x - {f}.",
            (f"x = {x}.", f"{e} × {x} = {e * x}.", f"{e * x} - {f} = {v}."),
            str(v),
        ),
        Problem(
            f"Follow-up: that result equals {g}y - {h}. Solve for y.",
            (
                f"{g}y - {h} = {v}.",
                f"Add {h} to both sides: {g}y = {v + h}.",
                f"Divide both sides by {g}: y = {fmt_value(y)}.",
            ),
            fmt_value(y),
        ),
    )


TWO_STEP_EQUATION = Family(
    id="two_step_equation",
    domain="equations",
    grade=7,
    title="Solving two-step linear equations",
    kcs=("inverse_operations", "balance_principle", "two_step_equations"),
    misconceptions=("divide_only_one_term", "same_operation_to_undo"),
    main=Kind(("inverse_operations", "balance_principle", "two_step_equations"), _sample_eq, _solve_eq),
    probes=(
        Kind(("inverse_operations", "balance_principle"), _sample_one_add, _solve_one_add),
        Kind(("inverse_operations",), _sample_one_mul, _solve_one_mul),
    ),
    follow_ups=_eq_follow_ups,
    opening="How do I solve {expr}? Do I divide by {a} first or move the {b}?",
    summary=(
        "Undo the operations in reverse order, doing the same to both sides: subtract {b} (the inverse of adding "
        "{b}), then divide by {a}. {expr} gives x = {answer}; check by substituting."
    ),
    objectives=(
        "Use inverse operations to isolate a variable.",
        "Keep an equation balanced by doing the same to both sides.",
        "Solve and check a two-step equation.",
    ),
    extra_fields=lambda p: {
        "a": str(p["a"]),
        "b": str(p["b"]),
        "c": str(p["a"] * p["x"] + p["b"]),
        "c_minus_b": str(p["a"] * p["x"]),
    },
)

FAMILIES: tuple[Family, ...] = (ORDER_OF_OPERATIONS, TWO_STEP_EQUATION)
