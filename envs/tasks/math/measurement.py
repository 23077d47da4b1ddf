"""Measurement: metric unit conversion (grade 5) and travel time from speed (grade 6)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tutorzoo.envs.tasks.math.family import Family, Kind, Level, Params, Problem, Solved, cached_solve
from tutorzoo.envs.tasks.math.numbers import fmt_value, pick, randint

# (big unit, small unit, how many small in one big, what is measured)
_UNITS: tuple[tuple[str, str, int, str], ...] = (
    ("km", "m", 1000, "distance"),
    ("kg", "g", 1000, "mass"),
    ("L", "mL", 1000, "volume"),
    ("m", "cm", 100, "length"),
)

# --- unit conversion: big -> small -------------------------------------------------------------------------


def _sample_conv(rng: np.random.Generator, level: Level) -> Params:
    unit = randint(rng, 0, len(_UNITS) - 1)
    den = {"easy": 1, "medium": pick(rng, (2, 4, 10)), "hard": pick(rng, (4, 8, 20, 100))}[level]
    return {"unit": unit, "q": Fraction(randint(rng, 1, 9 * den), den)}


@cached_solve  # a few hundred parameter sets
def _solve_conv(p: Params, wording: int) -> Solved:
    big, small, f, what = _UNITS[p["unit"]]
    q = p["q"]
    stem = f"Convert {fmt_value(q)} {big} to {small}."
    if wording == 1:
        stem = {
            "distance": f"A hiking trail is {fmt_value(q)} {big} long. How many {small} long is it?",
            "mass": f"A bag of flour has a mass of {fmt_value(q)} {big}. What is its mass in {small}?",
            "volume": f"A fish tank holds {fmt_value(q)} {big} of water. How many {small} is that?",
            "length": f"A rope is {fmt_value(q)} {big} long. How long is it in {small}?",
        }[what]
    steps = (
        f"1 {big} = {f} {small}.",
        f"A {small} is smaller than a {big}, so there are more of them: multiply by {f}.",
        f"{fmt_value(q)} × {f} = {fmt_value(q * f)} {small}.",
    )
    wrong_f = f // 10
    wrong = {
        "smaller_unit_smaller_number": (
            (
                steps[0],
                f"Changing to a smaller unit makes the number smaller: divide by {f}.",
                f"{fmt_value(q)} ÷ {f} = {fmt_value(q / f)} {small}.",
            ),
            fmt_value(q / f),
        ),
        "wrong_conversion_factor": (
            (
                f"1 {big} = {wrong_f} {small}.",
                f"A {small} is smaller than a {big}, so there are more of them: multiply by {wrong_f}.",
                f"{fmt_value(q)} × {wrong_f} = {fmt_value(q * wrong_f)} {small}.",
            ),
            fmt_value(q * wrong_f),
        ),
    }
    return Solved(stem, f"{fmt_value(q)} {big} = ? {small}", steps, fmt_value(q * f), wrong)


def _solve_factor(p: Params, wording: int) -> Solved:
    big, small, f, what = _UNITS[p["unit"]]
    stem = f"How many {small} are in 1 {big}?" if wording == 0 else f"Fill in the blank: 1 {big} = ___ {small}."
    steps = (f"The prefix tells the size: 1 {big} = {f} {small}.",)
    wrong = {"wrong_conversion_factor": ((f"1 {big} = {f // 10} {small}.",), str(f // 10))}
    return Solved(stem, f"1 {big} = ? {small}", steps, str(f), wrong)


def _sample_small_to_big(rng: np.random.Generator, level: Level) -> Params:
    unit = randint(rng, 0, len(_UNITS) - 1)
    f = _UNITS[unit][2]
    return {"unit": unit, "n": randint(rng, 2, 95) * f // 10}


@cached_solve  # a few hundred parameter sets
def _solve_small_to_big(p: Params, wording: int) -> Solved:
    big, small, f, _ = _UNITS[p["unit"]]
    n = p["n"]
    stem = (
        f"Convert {n} {small} to {big}."
        if wording == 0
        else f"A parcel label says {n} {small}. Write that amount in {big}."
    )
    steps = (
        f"1 {big} = {f} {small}.",
        f"A {big} is bigger, so there are fewer of them: divide by {f}.",
        f"{n} ÷ {f} = {fmt_value(Fraction(n, f))} {big}.",
    )
    wrong = {
        "smaller_unit_smaller_number": (
            (
                steps[0],
                f"{big} sounds bigger, so the number should get bigger: multiply by {f}.",
                f"{n} × {f} = {n * f} {big}.",
            ),
            str(n * f),
        )
    }
    return Solved(stem, f"{n} {small} = ? {big}", steps, fmt_value(Fraction(n, f)), wrong)


def _conv_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    big, small, f, _ = _UNITS[p["unit"]]
    first = p["q"] * f
    extra = randint(rng, 2, 9) * f // 10 + randint(rng, 1, 9)
    second = first + extra
    parts = pick(rng, (2, 4, 5))
    return (
        Problem(
            f"Follow-up: add {extra} {small} to your answer. Give the total in {big}.",
            (
                f"The previous answer is {fmt_value(first)} {small}.",
                f"{fmt_value(first)} + {extra} = {fmt_value(second)} {small}.",
                f"Divide by {f} to change to {big}: {fmt_value(second / f)} {big}.",
            ),
            fmt_value(second / f),
        ),
        Problem(
            f"Follow-up: split that total into {parts} equal parts. How many {small} is each part?",
            (
                f"The total is {fmt_value(second / f)} {big} = {fmt_value(second)} {small}.",
                f"{fmt_value(second)} ÷ {parts} = {fmt_value(second / parts)} {small}.",
            ),
            fmt_value(second / parts),
        ),
    )


def _conv_fields(p: Params) -> dict[str, str]:
    big, small, f, what = _UNITS[p["unit"]]
    return {"big": big, "small": small, "factor": str(f), "quantity": fmt_value(p["q"]), "measure": what}


UNIT_CONVERSION = Family(
    id="unit_conversion",
    domain="measurement",
    grade=5,
    title="Converting metric units",
    kcs=("metric_prefixes", "conversion_direction"),
    misconceptions=("smaller_unit_smaller_number", "wrong_conversion_factor"),
    main=Kind(("metric_prefixes", "conversion_direction"), _sample_conv, _solve_conv),
    probes=(
        Kind(("metric_prefixes",), _sample_conv, _solve_factor),
        Kind(("conversion_direction",), _sample_small_to_big, _solve_small_to_big),
    ),
    follow_ups=_conv_follow_ups,
    opening="To change {quantity} {big} into {small}, do I multiply or divide by {factor}?",
    summary=(
        "1 {big} = {factor} {small}. Going to a smaller unit needs more of them, so multiply: {quantity} × {factor} "
        "= {answer} {small}; going back to {big} you divide."
    ),
    objectives=(
        "Recall the metric prefixes kilo-, centi- and milli-.",
        "Decide whether to multiply or divide when converting units.",
    ),
    extra_fields=_conv_fields,
)


# --- travel time from speed and distance -------------------------------------------------------------------


def _sample_travel(rng: np.random.Generator, level: Level) -> Params:
    speeds = {"easy": (20, 40, 50, 60), "medium": (40, 50, 60, 70, 80, 90), "hard": (45, 48, 72, 75, 96)}[level]
    times = {
        "easy": (Fraction(2), Fraction(3), Fraction(4)),
        "medium": (Fraction(3, 2), Fraction(5, 2), Fraction(2), Fraction(3), Fraction(7, 2)),
        "hard": (Fraction(5, 4), Fraction(9, 4), Fraction(8, 3), Fraction(10, 3)),
    }[level]
    v, t = pick(rng, speeds), pick(rng, times)
    d = v * t
    return {"v": v, "t": t} if d.denominator == 1 else _sample_travel(rng, level)


@cached_solve  # a few hundred parameter sets
def _solve_travel(p: Params, wording: int) -> Solved:
    v, t = p["v"], p["t"]
    d = int(v * t)
    stem = (
        f"A train travels at a steady {v} km/h. How many hours does it take to travel {d} km?"
        if wording == 0
        else f"A support car drives {d} km at a constant {v} km/h. How long does the trip take, in hours?"
    )
    steps = (
        "Speed = distance ÷ time, so time = distance ÷ speed.",
        f"Time = {d} ÷ {v}.",
        f"{d} ÷ {v} = {fmt_value(t)} hours.",
    )
    wrong = {
        "multiply_distance_speed": (
            ("Time = distance × speed.", f"Time = {d} × {v}.", f"{d} × {v} = {d * v} hours."),
            str(d * v),
        ),
        "invert_rate": (
            ("Time = speed ÷ distance.", f"Time = {v} ÷ {d}.", f"{v} ÷ {d} = {fmt_value(Fraction(v, d))} hours."),
            fmt_value(Fraction(v, d)),
        ),
    }
    return Solved(stem, f"{d} km at {v} km/h", steps, fmt_value(t), wrong)


@cached_solve  # a few hundred parameter sets
def _solve_speed(p: Params, wording: int) -> Solved:
    v, t = p["v"], p["t"]
    d = int(v * t)
    stem = (
        f"A car goes {d} km in {fmt_value(t)} hours at a steady speed. How many km does it go in 1 hour?"
        if wording == 0
        else f"A bird flies {d} km in {fmt_value(t)} hours at a constant pace. What is its speed in km/h?"
    )
    steps = ("Speed is the distance for one hour: distance ÷ time.", f"{d} ÷ {fmt_value(t)} = {v} km/h.")
    wrong = {
        "invert_rate": (
            ("Speed = time ÷ distance.", f"{fmt_value(t)} ÷ {d} = {fmt_value(t / d)}."),
            fmt_value(t / d),
        ),
        "multiply_distance_speed": (
            ("Multiply the two numbers.", f"{d} × {fmt_value(t)} = {fmt_value(d * t)}."),
            fmt_value(d * t),
        ),
    }
    return Solved(stem, f"{d} km in {fmt_value(t)} h", steps, str(v), wrong)


@cached_solve  # a few hundred parameter sets
def _solve_distance(p: Params, wording: int) -> Solved:
    v, t = p["v"], p["t"]
    stem = (
        f"A bus drives at {v} km/h for {fmt_value(t)} hours. How far does it go, in km?"
        if wording == 0
        else f"A boat keeps a speed of {v} km/h for {fmt_value(t)} hours. What distance, in km, does it cover?"
    )
    steps = ("Distance = speed × time.", f"{v} × {fmt_value(t)} = {fmt_value(v * t)} km.")
    wrong = {
        "invert_rate": (
            ("Distance = speed ÷ time.", f"{v} ÷ {fmt_value(t)} = {fmt_value(v / t)} km."),
            fmt_value(v / t),
        )
    }
    return Solved(stem, f"{v} km/h for {fmt_value(t)} h", steps, fmt_value(v * t), wrong)


def _travel_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    v, t = p["v"], p["t"]
    d = v * t
    stop = pick(rng, (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)))
    total = t + stop
    ret = v + pick(rng, (10, 20, 30))
    back = d / ret
    return (
        Problem(
            f"Follow-up: the train also stops for {fmt_value(stop)} hour on the way. How many hours does the whole "
            "trip take?",
            (f"The travel time was {fmt_value(t)} hours.", f"{fmt_value(t)} + {fmt_value(stop)} = {fmt_value(total)}."),
            fmt_value(total),
        ),
        Problem(
            f"Follow-up: it comes back the same {fmt_value(d)} km at {ret} km/h. What is the total time there and "
            "back, in hours, including the stop?",
            (
                f"Return time = {fmt_value(d)} ÷ {ret} = {fmt_value(back)} hours.",
                f"Total = {fmt_value(total)} + {fmt_value(back)} = {fmt_value(total + back)} hours.",
            ),
            fmt_value(total + back),
        ),
    )


TRAVEL_TIME = Family(
    id="travel_time",
    domain="measurement",
    grade=6,
    title="Speed, distance and time",
    kcs=("unit_rate", "speed_distance_time"),
    misconceptions=("multiply_distance_speed", "invert_rate"),
    main=Kind(("unit_rate", "speed_distance_time"), _sample_travel, _solve_travel),
    probes=(
        Kind(("unit_rate",), _sample_travel, _solve_speed),
        Kind(("speed_distance_time",), _sample_travel, _solve_distance),
    ),
    follow_ups=_travel_follow_ups,
    opening="A train goes {v} km/h and the trip is {d} km. Do I multiply {d} by {v} to get the time?",
    summary=(
        "Speed is distance per hour, so time = distance ÷ speed: {d} ÷ {v} = {answer} hours. Check the units: "
        "km ÷ (km per hour) gives hours."
    ),
    objectives=("Interpret speed as a unit rate.", "Find time from distance and speed, checking units."),
    extra_fields=lambda p: {"v": str(p["v"]), "d": fmt_value(p["v"] * p["t"]), "t": fmt_value(p["t"])},
)

FAMILIES: tuple[Family, ...] = (UNIT_CONVERSION, TRAVEL_TIME)
