"""The one number module (envs/reading/numbers.py): one table of number words for the whole tree, its words
read the same by the grader and the content reader, and text2num's values for number phrases."""

from __future__ import annotations

import ast
from fractions import Fraction
from pathlib import Path

import pytest

from tutorzoo.envs.grading import parse_number
from tutorzoo.envs.reading import numbers, units
from tutorzoo.envs.reading.normalise import normalise

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("envs", "agents", "rewards", "train", "eval")


def _code_strings(path: Path) -> list[str]:
    """The string constants of a module's code (docstrings left out: prose may name a number in words)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_one_number_word_table_in_the_tree() -> None:
    holders = sorted(str(p.relative_to(ROOT)) for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")
                     if any(w in s.split() or w in s.split("|") for s in _code_strings(p)
                            for w in ("seventeen", "thirteen", "ninety")))
    assert holders == ["envs/reading/numbers.py"]


# (name, text, value): the grader reads every denominator of the one table, the reader's ones included
GRADED = [
    ("sixteenths", "five sixteenths", Fraction(5, 16)),
    ("fifteenths", "two fifteenths", Fraction(2, 15)),
    ("one-fifteenth", "one fifteenth", Fraction(1, 15)),
    ("thirds", "two thirds", Fraction(2, 3)),
    ("compound", "three hundred and five", Fraction(305)),
    ("million", "two million", Fraction(2_000_000)),
]


@pytest.mark.parametrize(("text", "value"), [c[1:] for c in GRADED], ids=[c[0] for c in GRADED])
def test_grader_reads_the_tables_words(text: str, value: Fraction) -> None:
    assert parse_number(text) == value


# (name, sentence, normalised): the reader's words, from the same table, with text2num's values
READ = [
    ("compound", "three hundred and five", "305"),
    ("a-hundred", "a hundred and five", "105"),
    ("thousands", "two thousand and forty-two", "2042"),
    ("hyphen", "thirty-two", "32"),
    ("sixteenths", "5 sixteenths", "(5/16)"),
    ("zero-after-a-scale", "two hundred zero", "200"),  # text2num refuses it: the sum of its words
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in READ], ids=[c[0] for c in READ])
def test_reader_reads_the_tables_words(text: str, expected: str) -> None:
    assert normalise(text) == expected


def test_text2num_agrees_with_the_sum_of_the_words_on_every_phrase_below_a_thousand() -> None:
    """Every phrase below a thousand :data:`NUMBER_PHRASE` admits, written every way it admits, gets the value
    its words add up to (text2num, or the sum where text2num refuses the phrase)."""
    below100 = ["zero", *(w for w in numbers.ONES if w != "zero"), *numbers.TEENS, *numbers.TENS,
                *(f"{t}{sep}{o}" for t in numbers.TENS for o in numbers.ONES if o != "zero" for sep in "- ")]
    value = {w: v for w, v in numbers.CARDINALS.items()}
    value.update({f"{t}{sep}{o}": numbers.TENS[t] + numbers.ONES[o] for t in numbers.TENS for o in numbers.ONES
                  if o != "zero" for sep in "- "})
    cases = {w: value[w] for w in below100}
    for h, hv in [*((w, v) for w, v in numbers.ONES.items() if w != "zero"), ("a", 1)]:
        cases[f"{h} hundred"] = hv * 100
        for x in below100:
            for link in ("", " and"):
                cases[f"{h} hundred{link} {x}"] = hv * 100 + value[x]
    wrong = {}
    for text, expected in cases.items():
        m = numbers.NUMBER_PHRASE.fullmatch(text)
        assert m is not None, text
        if numbers.word_number(m) != str(expected):
            wrong[text] = numbers.word_number(m)
    assert not wrong
    assert len(cases) > 1800


# (name, text, value): one number in LaTeX beyond the digit forms, read by latex2sympy2_extended; None where it
# is not one rational number
LATEX = [
    ("negative-numerator", r"\frac{-3}{4}", Fraction(-3, 4)),
    ("negative-denominator", r"\dfrac{3}{-4}", Fraction(-3, 4)),
    ("left-right", r"\left(\frac{3}{4}\right)", Fraction(3, 4)),
    ("scientific", r"3\times 10^{2}", Fraction(300)),
    ("power", r"10^{2}", Fraction(100)),
    ("negative-power", r"2^{-1}", Fraction(1, 2)),
    ("root-of-a-square", r"\sqrt{4}", Fraction(2)),
    ("sum-left-to-compute", r"\frac{1}{2}+\frac{1}{4}", None),
    ("difference-left-to-compute", r"-\frac{1}{2}-\frac{1}{4}", None),
    ("irrational", r"\sqrt{2}", None),
    ("unknown", r"x^2", None),
    ("float-inside", r"\frac{0.5}{2}", None),
    ("division-by-zero", r"\frac{3}{0}", None),
    ("pi", r"\pi", None),
    ("unparseable", r"\frac{3}{", None),
]


@pytest.mark.parametrize(("text", "value"), [c[1:] for c in LATEX], ids=[c[0] for c in LATEX])
def test_one_number_in_latex(text: str, value: Fraction | None) -> None:
    assert parse_number(text) == value


def test_a_number_the_digit_forms_read_never_reaches_latex2sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numbers, "latex_value", lambda latex: pytest.fail(f"latex2sympy asked for {latex!r}"))
    numbers._parse.cache_clear()
    assert parse_number(r"\frac{3}{4}") == Fraction(3, 4)
    assert parse_number("75%") == Fraction(3, 4)


def test_unit_factors_are_pints_exact_conversions() -> None:
    pint = pytest.importorskip("pint")
    registry = pint.UnitRegistry(non_int_type=Fraction)
    reference = {"length": "m", "mass": "g", "volume": "l", "time": "s", "speed": "m/s"}
    got = {name: registry.Quantity(Fraction(1), name).to(reference[dim]).magnitude
           for name, (dim, _factor) in units.UNITS.items()}
    assert got == {name: factor for name, (_dim, factor) in units.UNITS.items()}
    assert all(isinstance(v, Fraction) for v in got.values())


def test_math_verify_is_not_the_graders_equivalence() -> None:
    """Why :func:`~tutorzoo.envs.grading.equivalent` does not call math-verify: it rounds, and it reads a percent
    both ways; the grader does neither."""
    math_verify = pytest.importorskip("math_verify")
    from tutorzoo.envs.grading import equivalent

    assert math_verify.verify(math_verify.parse("1/3"), math_verify.parse("0.333333"))
    assert not equivalent("0.333333", "1/3")
    assert math_verify.verify(math_verify.parse("$75$"), math_verify.parse("$75\\%$"))
    assert not equivalent("75%", "75")
