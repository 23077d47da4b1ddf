"""Place value and decimals: two-digit addition with regrouping, comparing and adding decimals (grades 2-5)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tutorzoo.envs.tasks.math.family import Family, Kind, Level, Params, Problem, Solved, cached_solve
from tutorzoo.envs.tasks.math.numbers import decimal_places, fmt_decimal, randint


def _times(v: Fraction, k: int) -> int:
    """``int(v * k)`` without Fraction arithmetic, exact when ``v``'s denominator divides ``k`` (every use here)."""
    q, r = divmod(k, v.denominator)
    return v.numerator * q if r == 0 else int(v * k)


# --- two-digit addition with regrouping --------------------------------------------------------------------


def _sample_two_digit(rng: np.random.Generator, level: Level) -> Params:
    high = {"easy": 4, "medium": 7, "hard": 9}[level]
    while True:
        a, b = randint(rng, 1, high) * 10 + randint(rng, 1, 9), randint(rng, 1, high) * 10 + randint(rng, 1, 9)
        if a % 10 + b % 10 >= 10 and (level == "hard" or a + b < 100):
            return {"a": a, "b": b}


def _column_steps(a: int, b: int) -> tuple[tuple[str, ...], dict[str, tuple[tuple[str, ...], str]]]:
    ones = a % 10 + b % 10
    tens = a // 10 + b // 10
    total = a + b
    steps = (
        f"Add the ones: {a % 10} + {b % 10} = {ones}.",
        f"{ones} ones is 1 ten and {ones - 10} ones: write {ones - 10} in the ones place and carry the 1 ten.",
        f"Add the tens, including the carried ten: {a // 10} + {b // 10} + 1 = {tens + 1} tens.",
        f"So {a} + {b} = {total}.",
    )
    wrong = {
        "no_regrouping": (
            (
                steps[0],
                f"Write {ones - 10} in the ones place.",
                f"Add the tens: {a // 10} + {b // 10} = {tens} tens.",
                f"So {a} + {b} = {total - 10}.",
            ),
            str(total - 10),
        ),
        "write_whole_column_sum": (
            (
                steps[0],
                f"Write all of {ones} under the ones column.",
                f"Add the tens: {a // 10} + {b // 10} = {tens}; write {tens} in front.",
                f"So {a} + {b} = {tens}{ones}.",
            ),
            f"{tens}{ones}",
        ),
    }
    return steps, wrong


def _solve_two_digit(p: Params, wording: int) -> Solved:
    a, b = p["a"], p["b"]
    stem = (
        f"What is {a} + {b}?"
        if wording == 0
        else f"A class collected {a} cans on Monday and {b} cans on Tuesday. How many cans did they collect in all?"
    )
    steps, wrong = _column_steps(a, b)
    return Solved(stem, f"{a} + {b}", steps, str(a + b), wrong)


def _sample_tens_ones(rng: np.random.Generator, level: Level) -> Params:
    return {"t": randint(rng, 2, 8), "o": randint(rng, 11, 19)}


def _solve_tens_ones(p: Params, wording: int) -> Solved:
    t, o = p["t"], p["o"]
    value = 10 * t + o
    stem = (
        f"What number is {t} tens and {o} ones?"
        if wording == 0
        else f"Lena has {t} bundles of ten sticks and {o} loose sticks. How many sticks does she have?"
    )
    steps = (
        f"{t} tens is {10 * t}.",
        f"{o} ones is 1 ten and {o - 10} ones, so there are {t + 1} tens and {o - 10} ones.",
        f"{t + 1} tens and {o - 10} ones is {value}.",
    )
    wrong = {
        "no_regrouping": (
            (
                steps[0],
                f"Keep only the ones digit of {o}: {o - 10} ones.",
                f"{t} tens and {o - 10} ones is {value - 10}.",
            ),
            str(value - 10),
        ),
        "write_whole_column_sum": (
            (steps[0], f"Write the digits side by side: {t} then {o}.", f"The number is {t}{o}."),
            f"{t}{o}",
        ),
    }
    return Solved(stem, f"{t} tens + {o} ones", steps, str(value), wrong)


def _sample_cross_ten(rng: np.random.Generator, level: Level) -> Params:
    while True:
        a, b = randint(rng, 12, 88), randint(rng, 3, 9)
        if a % 10 + b >= 10:
            return {"a": a, "b": b}


def _solve_cross_ten(p: Params, wording: int) -> Solved:
    a, b = p["a"], p["b"]
    stem = (
        f"What is {a} + {b}?"
        if wording == 0
        else f"A book has {a} pages. Sam reads it and then {b} more pages of another book. How many pages is that?"
    )
    steps, wrong = _column_steps(a, b)
    return Solved(stem, f"{a} + {b}", steps, str(a + b), wrong)


def _two_digit_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    first = p["a"] + p["b"]
    # The next sum regroups too, unless the ones digit is 0 and it cannot.
    c = randint(rng, 2, 6) * 10 + (randint(rng, 10 - first % 10, 9) if first % 10 else randint(rng, 1, 9))
    second = first + c
    # Pick d so the subtraction trades a ten whenever the ones digit allows it (not when it is 9).
    ones = randint(rng, second % 10 + 1, 9) if second % 10 < 9 else randint(rng, 0, 9)
    d = randint(rng, 1, max(1, second // 10 - 2)) * 10 + ones
    third = second - d
    return (
        Problem(
            f"Follow-up: add {c} to your answer.",
            (f"The previous answer is {first}.", *_column_addition(first, c)),
            str(second),
        ),
        Problem(
            f"Follow-up: now take away {d} from that total.",
            (f"The previous answer is {second}.", *_column_subtraction(second, d)),
            str(third),
        ),
    )


def _column_addition(a: int, b: int) -> tuple[str, ...]:
    if a % 10 + b % 10 >= 10:
        return _column_steps(a, b)[0]
    return (
        f"Ones: {a % 10} + {b % 10} = {a % 10 + b % 10}.",
        f"Tens: {a // 10} + {b // 10} = {a // 10 + b // 10}.",
        f"So {a} + {b} = {a + b}.",
    )


def _column_subtraction(a: int, b: int) -> tuple[str, ...]:
    if a % 10 >= b % 10:
        return (
            f"Ones: {a % 10} - {b % 10} = {a % 10 - b % 10}.",
            f"Tens: {a // 10} - {b // 10} = {a // 10 - b // 10}.",
            f"So {a} - {b} = {a - b}.",
        )
    return (
        f"{a % 10} ones is less than {b % 10} ones, so trade 1 ten for 10 ones: {a // 10 - 1} tens and "
        f"{a % 10 + 10} ones.",
        f"Ones: {a % 10 + 10} - {b % 10} = {a % 10 + 10 - b % 10}.",
        f"Tens: {a // 10 - 1} - {b // 10} = {a // 10 - 1 - b // 10}.",
        f"So {a} - {b} = {a - b}.",
    )


def _fields_two_digit(p: Params) -> dict[str, str]:
    a, b = p["a"], p["b"]
    ones = a % 10 + b % 10
    return {"num1": str(a), "num2": str(b), "ones_sum": str(ones), "ones_left": str(ones - 10)}


TWO_DIGIT_ADDITION = Family(
    id="two_digit_addition",
    domain="place_value_decimals",
    grade=2,
    title="Adding two-digit numbers with regrouping",
    kcs=("place_value", "regrouping"),
    misconceptions=("no_regrouping", "write_whole_column_sum"),
    main=Kind(("place_value", "regrouping"), _sample_two_digit, _solve_two_digit),
    probes=(
        Kind(("place_value",), _sample_tens_ones, _solve_tens_ones),
        Kind(("regrouping",), _sample_cross_ten, _solve_cross_ten),
    ),
    follow_ups=_two_digit_follow_ups,
    opening="When I add {num1} and {num2} the ones make {ones_sum}. Where do I write the {ones_sum}?",
    summary=(
        "In {expr} the ones make {ones_sum}, which is 1 ten and {ones_left} ones: write {ones_left}, carry the ten "
        "into the tens column, and add it there. {expr} = {answer}."
    ),
    objectives=("Say what each digit of a two-digit number is worth.", "Regroup 10 ones as 1 ten when adding."),
    extra_fields=_fields_two_digit,
)


# --- comparing decimals ------------------------------------------------------------------------------------


def _sample_decimals3(rng: np.random.Generator, level: Level) -> Params:
    # One decimal of each length; the largest is the 2-place one, so both "length" rules pick a wrong one.
    while True:
        # x, y, z are these tenths, hundredths and thousandths; the test is on the ints (no Fractions per try):
        # y needs 2 places and z 3 when their last digit is not 0, and y > x, y > z
        xt, yh, zt = randint(rng, 1, 9), randint(rng, 11, 99), randint(rng, 101, 999)
        if yh % 10 and zt % 10 and yh > 10 * xt and 10 * yh > zt:
            x, y, z = Fraction(xt, 10), Fraction(yh, 100), Fraction(zt, 1000)
            order = [int(i) for i in rng.permutation(3)]
            # Easy puts the largest first, hard gives all three the same whole part (2.4, 2.38, 2.405).
            if level == "easy":
                order = [1, *(i for i in order if i != 1)]
            whole = randint(rng, 1, 9) if level == "hard" else 0
            return {"x": x + whole, "y": y + whole, "z": z + whole, "order": order}


def _solve_decimals3(p: Params, wording: int) -> Solved:
    x, y, z = p["x"], p["y"], p["z"]
    shown = [fmt_decimal(v) for v in (x, y, z)]
    listed = ", ".join(shown[i] for i in p["order"])
    stem = (
        f"Which number is the largest: {listed}?"
        if wording == 0
        else f"Three snails crawled {listed} metres. Which distance, in metres, is the longest?"
    )
    padded = ", ".join(f"{s} = {fmt_decimal(v, 3)}" for s, v in zip(shown, (x, y, z), strict=True))
    steps = (
        f"Give all three numbers three decimal places: {padded}.",
        f"Compare thousandths: {_times(x, 1000)}, {_times(y, 1000)} and {_times(z, 1000)}; "
        f"the largest is {_times(y, 1000)} thousandths.",
        f"The largest number is {shown[1]}.",
    )
    wrong = {
        "longer_decimal_larger": (
            (
                f"{shown[2]} has the most digits after the point ({_times(z, 1000)} is the biggest number), so it is "
                "the largest.",
                f"The largest number is {shown[2]}.",
            ),
            shown[2],
        ),
        "shorter_decimal_larger": (
            (
                f"{shown[0]} has only tenths, and tenths are bigger than hundredths or thousandths, so it is the "
                "largest.",
                f"The largest number is {shown[0]}.",
            ),
            shown[0],
        ),
    }
    return Solved(stem, f"largest of {listed}", steps, shown[1], wrong)


def _two_places(rng: np.random.Generator) -> Fraction:
    return Fraction(_two_places_hundredths(rng), 100)


def _two_places_hundredths(rng: np.random.Generator) -> int:
    """The hundredths of a decimal in (0.1, 1) that needs two places (its last digit is not 0)."""
    while True:
        v = randint(rng, 11, 99)
        if v % 10:
            return v


def _pair_solver(longer_is_smaller: bool):
    def solve(p: Params, wording: int) -> Solved:
        s, lg = p["short"], p["long"]
        big, small = (s, lg) if s > lg else (lg, s)
        a, b = fmt_decimal(s), fmt_decimal(lg)
        stem = (
            f"Which is larger, {a} or {b}?"
            if wording == 0
            else f"One bottle holds {b} litres and another holds {a} litres. Which holds more, in litres?"
        )
        steps = (
            f"Write both with two decimal places: {a} = {fmt_decimal(s, 2)} and {b} = {b}.",
            f"Compare hundredths: {_times(s, 100)} and {_times(lg, 100)}.",
            f"The larger number is {fmt_decimal(big)}.",
        )
        rule = "longer_decimal_larger" if longer_is_smaller else "shorter_decimal_larger"
        reason = (
            f"{b} has more digits after the point, so it is larger."
            if longer_is_smaller
            else f"{a} is in tenths and tenths are bigger than hundredths, so it is larger."
        )
        wrong = {rule: ((reason, f"The larger number is {fmt_decimal(small)}."), fmt_decimal(small))}
        return Solved(stem, f"{a} vs {b}", steps, fmt_decimal(big), wrong)

    return solve


def _pair_kind(longer_is_smaller: bool) -> Kind:
    def sample(rng: np.random.Generator, level: Level) -> Params:
        while True:  # a tenths and a two-place hundredths decimal, compared as ints
            tenths = randint(rng, 1, 9)
            hundredths = _two_places_hundredths(rng)
            if (hundredths < 10 * tenths) == longer_is_smaller:
                return {"short": Fraction(tenths, 10), "long": Fraction(hundredths, 100)}

    # a few hundred parameter sets: the solutions are kept
    return Kind(("decimal_place_value", "comparing_decimals"), sample, cached_solve(_pair_solver(longer_is_smaller)))


def _compare_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    x, y, z = p["x"], p["y"], p["z"]
    smallest = min(x, z)
    diff = y - smallest
    k = randint(rng, 2, 5)
    return (
        Problem(
            "Follow-up: how much larger is the largest number than the smallest one?",
            (
                f"The largest is {fmt_decimal(y)} and the smallest is {fmt_decimal(smallest)}.",
                f"Line up the decimal points: {fmt_decimal(y, 3)} - {fmt_decimal(smallest, 3)} = "
                f"{fmt_decimal(diff, 3)}.",
                f"The difference is {fmt_decimal(diff)}.",
            ),
            fmt_decimal(diff),
        ),
        Problem(
            f"Follow-up: multiply that difference by {k}. Is the result more or less than 1? Give the product.",
            (
                f"The difference was {fmt_decimal(diff)}.",
                f"{fmt_decimal(diff)} × {k} = {fmt_decimal(diff * k)}, which is {'more' if diff * k > 1 else 'less'} "
                "than 1.",
            ),
            fmt_decimal(diff * k),
        ),
    )


def _fields_compare(p: Params) -> dict[str, str]:
    x, y, z = p["x"], p["y"], p["z"]
    return {
        "dec_short": fmt_decimal(x),
        "dec_mid": fmt_decimal(y),
        "dec_long": fmt_decimal(z),
        "dec_short_padded": fmt_decimal(x, 3),
        "dec_mid_padded": fmt_decimal(y, 3),
        "dec_long_padded": fmt_decimal(z, 3),
    }


DECIMAL_COMPARISON = Family(
    id="decimal_comparison",
    domain="place_value_decimals",
    grade=4,
    title="Comparing decimals",
    kcs=("decimal_place_value", "comparing_decimals"),
    misconceptions=("longer_decimal_larger", "shorter_decimal_larger"),
    main=Kind(("decimal_place_value", "comparing_decimals"), _sample_decimals3, _solve_decimals3),
    probes=(_pair_kind(longer_is_smaller=False), _pair_kind(longer_is_smaller=True)),
    follow_ups=_compare_follow_ups,
    opening="Isn't {dec_long} the biggest? It has the most digits.",
    summary=(
        "Compare decimals place by place from the left, or give them the same number of decimal places: "
        "{dec_short_padded}, {dec_mid_padded} and {dec_long_padded} show that {answer} is the largest. "
        "More digits does not mean a larger number."
    ),
    objectives=(
        "Name the value of tenths, hundredths and thousandths digits.",
        "Compare decimals of different lengths by place value.",
    ),
    extra_fields=_fields_compare,
)


# --- adding decimals ---------------------------------------------------------------------------------------


def _sample_dec_add(rng: np.random.Generator, level: Level) -> Params:
    whole = {"easy": 5, "medium": 9, "hard": 19}[level]
    x = Fraction(randint(rng, 1, whole) * 10 + randint(rng, 1, 9), 10)
    y = Fraction(randint(rng, 0, whole) * 100 + randint(rng, 11, 99), 100)
    if decimal_places(y) != 2:
        return _sample_dec_add(rng, level)
    return {"x": x, "y": y}


def _dec_digits(v: Fraction | int) -> int:
    """The digits of a decimal read as a whole number, ignoring the point (3.4 -> 34)."""
    places = decimal_places(v)
    if places is None:  # fmt_decimal raises
        return int(fmt_decimal(v).replace(".", "").replace("-", ""))
    return abs(v.numerator) * 10**places // v.denominator  # the digits fmt_decimal writes, as an int


def _frac_digits(v: Fraction) -> int:
    """``_dec_digits(v - int(v))``: the digits after the point read as a whole number (3.45 -> 45)."""
    num, den = v.numerator, v.denominator
    places = decimal_places(v)
    if places is None:
        return _dec_digits(v - int(v))
    # v - int(v) is (num - int(v) * den) / den, in lowest terms as v is, or 0 (whose digits are 0 too)
    return abs(num - int(v) * den) * 10**places // den


def _solve_dec_add(p: Params, wording: int) -> Solved:
    x, y = p["x"], p["y"]
    a, b = fmt_decimal(x), fmt_decimal(y)
    stem = (
        f"A bag of apples weighs {a} kg and a bag of pears weighs {b} kg. What is the total weight in kg?"
        if wording == 0
        else f"Sam ran {a} km on Monday and {b} km on Tuesday. How far did he run in all, in km?"
    )
    total = x + y
    steps = (
        f"Line up the decimal points: write {a} as {fmt_decimal(x, 2)} so both numbers have two decimal places.",
        f"Add the hundredths as whole numbers: {_times(x, 100)} + {_times(y, 100)} = {_times(total, 100)}.",
        f"Put the decimal point back two places from the right: {fmt_decimal(total)}.",
    )
    dx, dy = _dec_digits(x), _dec_digits(y)
    right = fmt_decimal(Fraction(dx + dy, 100))
    wx, wy = int(x), int(y)
    whole_parts = wx + wy
    fx, fy = _frac_digits(x), _frac_digits(y)
    frac_parts = fx + fy
    # The student writes the two parts side by side; report that as a canonical decimal value.
    if whole_parts >= 0 and frac_parts >= 0:  # Fraction(f"{whole_parts}.{frac_parts}"), without parsing
        shift = 10 ** len(str(frac_parts))
        separate = fmt_decimal(Fraction(whole_parts * shift + frac_parts, shift))
    else:
        separate = fmt_decimal(Fraction(f"{whole_parts}.{frac_parts}"))
    wrong = {
        "align_last_digits": (
            (
                f"Line up the last digits of {a} and {b}, ignoring the decimal points.",
                f"Add as whole numbers: {dx} + {dy} = {dx + dy}.",
                f"Put the decimal point two places from the right: {right}.",
            ),
            right,
        ),
        "add_parts_separately": (
            (
                f"Add the whole-number parts: {wx} + {wy} = {whole_parts}.",
                f"Add the parts after the point as whole numbers: {fx} + {fy} = {frac_parts}.",
                f"Put them together: {whole_parts}.{frac_parts} = {separate}.",
            ),
            separate,
        ),
    }
    return Solved(stem, f"{a} + {b}", steps, fmt_decimal(total), wrong)


def _sample_whole_plus(rng: np.random.Generator, level: Level) -> Params:
    return {"w": randint(rng, 2, 9), "y": _two_places(rng)}


def _solve_whole_plus(p: Params, wording: int) -> Solved:
    w, y = p["w"], p["y"]
    b = fmt_decimal(y)
    stem = (
        f"What is {w} + {b}?"
        if wording == 0
        else f"A parcel weighs {w} kg. Its wrapping adds {b} kg. What is the total weight in kg?"
    )
    total = fmt_decimal(w + y)
    steps = (
        f"A whole number has its decimal point at the end: {w} = {w}.00.",
        f"Line up the points and add: {w}.00 + {b} = {total}.",
    )
    dy = _dec_digits(y)
    wrong_v = fmt_decimal(Fraction(w + dy, 100))
    wrong = {
        "align_last_digits": (
            (
                f"Line up the last digits of {w} and {b}.",
                f"Add {w} + {dy} = {w + dy} and put the point two places from the right: {wrong_v}.",
            ),
            wrong_v,
        )
    }
    return Solved(stem, f"{w} + {b}", steps, total, wrong)


def _sample_tenths_digit(rng: np.random.Generator, level: Level) -> Params:
    while True:
        tenths = randint(rng, 11, 99)
        if tenths % 10:  # tenths / 10 needs one decimal place
            return {"x": Fraction(tenths, 10), "y": Fraction(randint(rng, 1, 9), 100)}


def _solve_tenths_digit(p: Params, wording: int) -> Solved:
    x, y = p["x"], p["y"]
    a, b = fmt_decimal(x), fmt_decimal(y)
    stem = (
        f"What is {a} + {b}?"
        if wording == 0
        else f"A plant was {a} cm tall and grew {b} cm more. How tall is it now, in cm?"
    )
    x2, total = fmt_decimal(x, 2), fmt_decimal(x + y)
    steps = (
        f"{b} has 0 tenths and {_times(y, 100)} hundredths; {a} has no hundredths, so write it as {x2}.",
        f"Add place by place: {x2} + {b} = {total}.",
    )
    dx, dy = _dec_digits(x), _dec_digits(y)
    right = fmt_decimal(Fraction(dx + dy, 10))
    wrong = {
        "align_last_digits": (
            (
                f"Line up the last digits: {dx} and {dy}.",
                f"Add {dx} + {dy} = {dx + dy} and keep one decimal place: {right}.",
            ),
            right,
        )
    }
    return Solved(stem, f"{a} + {b}", steps, total, wrong)


def _dec_add_follow_ups(p: Params, rng: np.random.Generator) -> tuple[Problem, Problem]:
    total = p["x"] + p["y"]
    z = Fraction(randint(rng, 101, 999), 1000)
    second = total + z
    target = int(second) + randint(rng, 2, 5)
    gap = target - second
    return (
        Problem(
            f"Follow-up: add {fmt_decimal(z)} to your total.",
            (
                f"The previous answer is {fmt_decimal(total)}.",
                f"Line up the decimal points: {fmt_decimal(total, 3)} + {fmt_decimal(z)} = {fmt_decimal(second)}.",
            ),
            fmt_decimal(second),
        ),
        Problem(
            f"Follow-up: how much more is needed to reach {target}?",
            (
                f"The previous answer is {fmt_decimal(second)}.",
                f"Subtract with the points lined up: {target}.000 - {fmt_decimal(second, 3)} = {fmt_decimal(gap)}.",
            ),
            fmt_decimal(gap),
        ),
    )


def _fields_dec_add(p: Params) -> dict[str, str]:
    x, y = p["x"], p["y"]
    return {"dec1": fmt_decimal(x), "dec2": fmt_decimal(y), "dec1_padded": fmt_decimal(x, 2)}


DECIMAL_ADDITION = Family(
    id="decimal_addition",
    domain="place_value_decimals",
    grade=5,
    title="Adding decimals with different numbers of places",
    kcs=("decimal_place_value", "adding_decimals"),
    misconceptions=("align_last_digits", "add_parts_separately"),
    main=Kind(("decimal_place_value", "adding_decimals"), _sample_dec_add, _solve_dec_add),
    probes=(
        Kind(("decimal_place_value",), _sample_tenths_digit, _solve_tenths_digit),
        Kind(("adding_decimals",), _sample_whole_plus, _solve_whole_plus),
    ),
    follow_ups=_dec_add_follow_ups,
    opening="I need to add {dec1} and {dec2}. Do I line up the numbers on the right like normal?",
    summary=(
        "Line up the decimal points, not the last digits: {dec1} = {dec1_padded}, so tenths add to tenths and "
        "hundredths to hundredths. {expr} = {answer}."
    ),
    objectives=("Line up decimal points when adding.", "Use zeros to give decimals the same number of places."),
    extra_fields=_fields_dec_add,
)

FAMILIES: tuple[Family, ...] = (TWO_DIGIT_ADDITION, DECIMAL_COMPARISON, DECIMAL_ADDITION)
