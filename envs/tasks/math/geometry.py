"""Area and perimeter: perimeter of a rectangle (grade 3) and area of a triangle (grade 6)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tutorzoo.envs.tasks.math.family import Family, Kind, Level, Params, Problem, Solved, cached_solve
from tutorzoo.envs.tasks.math.numbers import fmt_ratio, fmt_value, randint

# --- rectangle perimeter -----------------------------------------------------------------------------------


def _sample_rect(rng: np.random.Generator, level: Level) -> Params:
    top = {"easy": 9, "medium": 15, "hard": 40}[level]
    length = randint(rng, 3, top)
    return {"l": length, "w": randint(rng, 2, length - 1)}


@cached_solve  # a few hundred parameter sets
def _solve_rect(p: Params, wording: int) -> Solved:
    length, w = p["l"], p["w"]
    per = 2 * (length + w)
    stem = (
        f"A rectangular garden is {length} m long and {w} m wide. How many metres of fence go all the way around it?"
        if wording == 0
        else f"A picture is {length} cm by {w} cm. How many centimetres of ribbon frame all four edges?"
    )
    steps = (
        f"A rectangle has two sides of {length} and two sides of {w}.",
        f"The perimeter is the distance all the way around: {length} + {w} + {length} + {w}.",
        f"{length} + {w} + {length} + {w} = {per}.",
    )
    wrong = {
        "confuse_area_perimeter": (
            (steps[0], f"Multiply length by width: {length} × {w}.", f"{length} × {w} = {length * w}."),
            str(length * w),
        ),
        "two_sides_only": (
            (steps[0], f"Add the length and the width: {length} + {w}.", f"{length} + {w} = {length + w}."),
            str(length + w),
        ),
    }
    return Solved(stem, f"perimeter of a {length} by {w} rectangle", steps, str(per), wrong)


@cached_solve  # a few hundred parameter sets
def _solve_rect_area(p: Params, wording: int) -> Solved:
    length, w = p["l"], p["w"]
    stem = (
        f"How many 1-cm squares are needed to cover a rectangle {length} cm long and {w} cm wide?"
        if wording == 0
        else f"A floor is {length} m by {w} m. How many square metres of carpet cover it?"
    )
    steps = (f"{w} rows of {length} squares cover it.", f"{w} × {length} = {length * w} squares.")
    per = 2 * (length + w)
    wrong = {
        "confuse_area_perimeter": (
            (f"Add all four sides: {length} + {w} + {length} + {w}.", f"That is {per}."),
            str(per),
        )
    }
    return Solved(stem, f"area of a {length} by {w} rectangle", steps, str(length * w), wrong)


def _sample_missing_side(rng: np.random.Generator, level: Level) -> Params:
    length = randint(rng, 4, 20)
    return {"l": length, "w": randint(rng, 2, length - 1)}


def _solve_missing_side(p: Params, wording: int) -> Solved:
    length, w = p["l"], p["w"]
    per = 2 * (length + w)
    stem = (
        f"A rectangle has a perimeter of {per} cm and a length of {length} cm. How wide is it, in cm?"
        if wording == 0
        else f"A rectangular pen uses {per} m of fence. One side is {length} m long. How long is the shorter side, "
        "in m?"
    )
    steps = (
        f"Opposite sides are equal, so length + width is half the perimeter: {per} ÷ 2 = {per // 2}.",
        f"Width = {per // 2} - {length} = {w}.",
    )
    wrong = {
        "two_sides_only": (
            (f"Perimeter = length + width, so width = {per} - {length}.", f"Width = {per - length}."),
            str(per - length),
        )
    }
    return Solved(stem, f"rectangle with perimeter {per} and length {length}", steps, str(w), wrong)


def _rect_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    length, w = p["l"], p["w"]
    per = 2 * (length + w)
    cost = Fraction(randint(rng, 6, 30), 2)
    total = per * cost
    budget = (int(total) // 50 + randint(rng, 1, 4)) * 50
    return (
        Problem(
            f"Follow-up: the fence costs ${fmt_value(cost)} per metre. How many dollars does the whole fence cost?",
            (f"The perimeter is {per} m.", f"{per} × {fmt_value(cost)} = {fmt_value(total)}."),
            fmt_value(total),
        ),
        Problem(
            f"Follow-up: the budget for the garden is ${budget}. How many dollars are left after buying the fence?",
            (
                f"The fence costs {fmt_value(total)} dollars.",
                f"{budget} - {fmt_value(total)} = {fmt_value(budget - total)}.",
            ),
            fmt_value(budget - total),
        ),
    )


RECTANGLE_PERIMETER = Family(
    id="rectangle_perimeter",
    domain="geometry",
    grade=3,
    title="Perimeter of a rectangle",
    kcs=("rectangle_properties", "perimeter", "area_concept"),
    misconceptions=("confuse_area_perimeter", "two_sides_only"),
    main=Kind(("rectangle_properties", "perimeter"), _sample_rect, _solve_rect),
    probes=(
        Kind(("area_concept",), _sample_rect, _solve_rect_area),
        Kind(("rectangle_properties", "perimeter"), _sample_missing_side, _solve_missing_side),
    ),
    follow_ups=_rect_follow_ups,
    opening="For the fence around a {l} by {w} garden, do I multiply {l} and {w}?",
    summary=(
        "Perimeter is the distance around: a rectangle has two lengths and two widths, so {l} + {w} + {l} + {w} = "
        "{answer}. Multiplying {l} × {w} gives the area, the space inside, which is a different question."
    ),
    objectives=(
        "Use the fact that opposite sides of a rectangle are equal.",
        "Find the perimeter of a rectangle.",
        "Tell perimeter (around) from area (inside).",
    ),
    extra_fields=lambda p: {
        "l": str(p["l"]),
        "w": str(p["w"]),
        "dim1": str(p["l"]),
        "dim2": str(p["w"]),
        "rect_area": str(p["l"] * p["w"]),
    },
)


# --- triangle area -----------------------------------------------------------------------------------------


def _sample_tri(rng: np.random.Generator, level: Level) -> Params:
    top = {"easy": 10, "medium": 16, "hard": 30}[level]
    b, h = randint(rng, 3, top), randint(rng, 3, top)
    return {"b": b, "h": h, "s": h + randint(rng, 1, 5)}


def _solve_tri(p: Params, wording: int) -> Solved:
    b, h, s = p["b"], p["h"], p["s"]
    area = fmt_ratio(b * h, 2)
    stem = (
        f"A triangle has a base of {b} cm, a slanted side of {s} cm, and a height of {h} cm measured straight up "
        "from the base. What is its area in square centimetres?"
        if wording == 0
        else f"A triangular sail is {b} m along the bottom, {h} m tall (measured at a right angle to the bottom) and "
        f"its sloping edge is {s} m. What is its area in square metres?"
    )
    steps = (
        "Area of a triangle = 1/2 × base × height, with the height at a right angle to the base.",
        f"The base is {b} and the perpendicular height is {h}; the {s} side is slanted and not used.",
        f"1/2 × {b} × {h} = {area}.",
    )
    slant_area = fmt_ratio(b * s, 2)
    wrong = {
        "forget_half": (
            ("Area of a triangle = base × height.", steps[1], f"{b} × {h} = {b * h}."),
            str(b * h),
        ),
        "slant_side_as_height": (
            (
                steps[0],
                f"The base is {b} and the height is the side {s}.",
                f"1/2 × {b} × {s} = {slant_area}.",
            ),
            slant_area,
        ),
    }
    return Solved(stem, f"1/2 × {b} × {h}", steps, area, wrong)


def _solve_height_choice(p: Params, wording: int) -> Solved:
    b, h, s = p["b"], p["h"], p["s"]
    stem = (
        f"A triangle has a base of {b} cm, a sloping side of {s} cm, and a height of {h} cm at a right "
        "angle to the base. Which length, in cm, do you use as the height for its area?"
        if wording == 0
        else f"A roof gable is {b} m wide, one sloping edge is {s} m long, and it rises {h} m straight up. "
        "Which length in metres is the height for the area formula?"
    )
    steps = (
        "The height must be perpendicular (at a right angle) to the base.",
        f"Only the {h} length is; the height is {h}.",
    )
    wrong = {
        "slant_side_as_height": (
            (f"The height is the side going up from the base: {s}.", f"The height is {s}."),
            str(s),
        )
    }
    return Solved(stem, f"height of a triangle with base {b}", steps, str(h), wrong)


def _sample_half_rect(rng: np.random.Generator, level: Level) -> Params:
    return {"l": randint(rng, 3, 14), "w": randint(rng, 3, 14)}


@cached_solve  # a few hundred parameter sets
def _solve_half_rect(p: Params, wording: int) -> Solved:
    length, w = p["l"], p["w"]
    half = Fraction(length * w, 2)
    stem = (
        f"A {length} cm by {w} cm rectangle is cut along a diagonal into two equal triangles. What is the area of one "
        "triangle, in square centimetres?"
        if wording == 0
        else f"A right triangle has legs of {length} m and {w} m. What is its area in square metres?"
    )
    steps = (
        f"The rectangle has area {length} × {w} = {length * w}.",
        f"Each triangle is half of it: {length * w} ÷ 2 = {fmt_value(half)}.",
    )
    wrong = {"forget_half": ((steps[0], f"The triangle's area is {length * w}."), str(length * w))}
    return Solved(stem, f"1/2 × {length} × {w}", steps, fmt_value(half), wrong)


def _tri_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    area = Fraction(p["b"] * p["h"], 2)
    n = randint(rng, 2, 6)
    total = n * area
    cover = randint(rng, 2, 5)
    return (
        Problem(
            f"Follow-up: a design uses {n} copies of that triangle. What is their total area?",
            (f"One triangle has area {fmt_value(area)}.", f"{n} × {fmt_value(area)} = {fmt_value(total)}."),
            fmt_value(total),
        ),
        Problem(
            f"Follow-up: one can of paint covers {cover} square units. How many cans are needed, at least, to paint "
            "that total area?",
            (
                f"The total area is {fmt_value(total)}.",
                f"{fmt_value(total)} ÷ {cover} = {fmt_value(total / cover)}, so round up to whole cans.",
                f"{-(-total // cover)} cans.",
            ),
            str(-(-total // cover)),
        ),
    )


TRIANGLE_AREA = Family(
    id="triangle_area",
    domain="geometry",
    grade=6,
    title="Area of a triangle",
    kcs=("area_concept", "base_and_height", "triangle_area"),
    misconceptions=("forget_half", "slant_side_as_height"),
    main=Kind(("area_concept", "base_and_height", "triangle_area"), _sample_tri, _solve_tri),
    probes=(
        Kind(("base_and_height",), _sample_tri, _solve_height_choice),
        Kind(("area_concept", "triangle_area"), _sample_half_rect, _solve_half_rect),
    ),
    follow_ups=_tri_follow_ups,
    opening="The triangle has sides {b}, {s} and a height {h}. Which numbers do I multiply for the area?",
    summary=(
        "A triangle is half of a rectangle with the same base and height, so area = 1/2 × base × height, with the "
        "height at a right angle to the base: 1/2 × {b} × {h} = {answer}. The slanted side {s} is not the height."
    ),
    objectives=(
        "Explain area as the number of unit squares covering a shape.",
        "Identify the perpendicular height of a triangle.",
        "Compute the area of a triangle as half base times height.",
    ),
    extra_fields=lambda p: {
        "b": str(p["b"]),
        "h": str(p["h"]),
        "s": str(p["s"]),
        "dim1": str(p["b"]),
        "dim2": str(p["h"]),
        "rect_area": str(p["b"] * p["h"]),
    },
)

FAMILIES: tuple[Family, ...] = (RECTANGLE_PERIMETER, TRIANGLE_AREA)
