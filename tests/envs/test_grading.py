"""Tests of tutorzoo.envs.grading: answer extraction, exact number parsing, equivalence and item grading."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tutorzoo.envs.grading import (
    Grade,
    equivalent,
    extract_choice,
    extract_value,
    grade,
    mentions_value,
    number_mentions,
    parse_number,
    parse_quantity,
)
from tutorzoo.envs.tasks.base import Item


def _rows(cases: list[tuple]) -> list:
    """Table rows named by their first column."""
    return [pytest.param(*c[1:], id=c[0]) for c in cases]


PARSE_CASES = [
    ("0.75", Fraction(3, 4)),
    (".75", Fraction(3, 4)),
    ("3/4", Fraction(3, 4)),
    ("3 / 4", Fraction(3, 4)),
    ("\\frac{3}{4}", Fraction(3, 4)),
    ("\\dfrac{3}{4}", Fraction(3, 4)),
    ("\\tfrac34", Fraction(3, 4)),
    ("$\\frac{5}{6}$", Fraction(5, 6)),
    ("\\boxed{7}", Fraction(7)),
    ("-\\frac{1}{2}", Fraction(-1, 2)),
    ("2\\frac{1}{3}", Fraction(7, 3)),
    ("75%", Fraction(3, 4)),
    ("75 percent", Fraction(3, 4)),
    ("12.5%", Fraction(1, 8)),
    ("1 1/2", Fraction(3, 2)),
    ("-1 1/2", Fraction(-3, 2)),
    ("1½", Fraction(3, 2)),
    ("-2", Fraction(-2)),
    ("\u22122", Fraction(-2)),
    ("1,250", Fraction(1250)),
    ("1,250.50", Fraction(2501, 2)),
    ("x = 4", Fraction(4)),
    ("y=-3.5", Fraction(-7, 2)),
    ("4 cm", Fraction(4)),
    ("12cm", Fraction(12)),
    ("60 km/h", Fraction(60)),
    ("$12.50", Fraction(25, 2)),
    ("five sixths", Fraction(5, 6)),
    ("twelve", Fraction(12)),
    ("twenty-five percent", Fraction(1, 4)),
    ("one and a half", Fraction(3, 2)),
    ("zero point seven five", Fraction(3, 4)),
    ("negative five", Fraction(-5)),
    ("three quarters", Fraction(3, 4)),
    ("4 tenths", Fraction(2, 5)),
    ("Zero", Fraction(0)),
    ("0.1", Fraction(1, 10)),  # exact: a float would give 3602879701896397/36028797018963968
]
PARSE_NONE = ["3/0", "4 or 5", "1e3", "abc", "3x", "5th", "", "2x + 3 = 11", "the third step"]


@pytest.mark.parametrize(("text", "expected"), PARSE_CASES, ids=[c[0] for c in PARSE_CASES])
def test_parse_number(text: str, expected: Fraction) -> None:
    assert parse_number(text) == expected


@pytest.mark.parametrize("text", PARSE_NONE, ids=[repr(t) for t in PARSE_NONE])
def test_parse_number_rejects(text: str) -> None:
    assert parse_number(text) is None


def test_parse_quantity_flags_percent() -> None:
    assert parse_quantity("75%") == (Fraction(3, 4), True)
    assert parse_quantity("0.75") == (Fraction(3, 4), False)


CHOICE_CASES = [
    ("answer_is_paren", "Both look close, but the answer is (C).", 4, "C"),
    ("answer_is_lowercase", "so the answer is b", 4, "B"),
    ("answer_is_last_wins", "The answer is (A)... no wait, the answer is (C).", 4, "C"),
    ("answer_is_option_word", "I believe the answer is option D.", 4, "D"),
    ("answer_is_markdown", "The answer is **(B)**", 4, "B"),
    ("answer_is_A_because", "The answer is A because mass does not change.", 4, "A"),
    ("answer_is_a_fraction_then_letter", "The answer is a fraction, so I pick (D).", 4, "D"),
    ("answer_colon", "Reasoning...\nAnswer: C", 4, "C"),
    ("answer_colon_markdown", "**Answer:** (b)", 4, "B"),
    ("answer_is_before_colon", "Answer: B. Actually, the answer is D.", 4, "D"),
    ("standalone_last", "I was torn between A and C, I'll go with C.", 4, "C"),
    ("article_not_letter", "A cat has four legs. I think B.", 4, "B"),
    ("article_only", "A force keeps it moving.", 4, None),
    ("pronoun_not_letter", "I think it is the second one.", 9, None),
    ("letter_is_right", "I think A is right.", 4, "A"),
    ("function_call_not_letter", "f(x) grows, so no idea.", 4, None),
    ("out_of_range", "I think it's E", 4, None),
    ("out_of_range_answer_falls_back", "The answer is (E). Hmm, or (B)", 4, "B"),
    ("contraction_not_letter", "I'm not sure.", 9, None),
    ("no_answer", "I don't know.", 4, None),
]


@pytest.mark.parametrize(("text", "n", "expected"), _rows(CHOICE_CASES))
def test_extract_choice(text: str, n: int, expected: str | None) -> None:
    assert extract_choice(text, n) == expected


VALUE_CASES = [
    ("closing_equals", "1/2 + 1/3 = 3/6 + 2/6 = 5/6", "5/6"),
    ("answer_is_thousands", "The answer is 1,250 apples because they add up.", "1,250"),
    ("answer_is_not_earlier_number", "The answer is 12 since 3 times 4 is 12, not 7.", "12"),
    ("answer_colon_words", "My answer: five sixths", "five sixths"),
    ("boxed_latex", "so \\boxed{\\frac{5}{6}} is it", "\\frac{5}{6}"),
    ("variable_equals", "so x = 4.", "4"),
    ("negative", "the answer is -3", "-3"),
    ("unicode_minus", "I got \u22123 in the end", "\u22123"),
    ("mixed_number", "I think it is 3 1/2 cups", "3 1/2"),
    ("percent", "About 40% of them", "40%"),
    ("last_number", "First 7, then 8", "8"),
    ("text_answer", "The answer is photosynthesis.", "photosynthesis"),
    ("no_answer", "Not sure.", None),
    ("one_is_pronoun", "It's one of those things.", None),
]


@pytest.mark.parametrize(("text", "expected"), _rows(VALUE_CASES))
def test_extract_value(text: str, expected: str | None) -> None:
    assert extract_value(text) == expected


EQUIV_CASES = [
    ("fraction_decimal", "0.75", "3/4", True),
    ("latex_percent", "\\frac{3}{4}", "75%", True),
    ("decimal_percent_key", "0.75", "75%", True),
    ("bare_number_percent_key", "75", "75%", True),
    ("percent_vs_plain_key", "75%", "75", False),
    ("percent_vs_fraction_key", "75%", "3/4", True),
    ("unreduced", "10/12", "5/6", True),
    ("mixed_improper", "1 1/2", "3/2", True),
    ("words_digits", "five sixths", "5/6", True),
    ("equation_key", "4", "x = 4", True),
    ("money", "12.5", "$12.50", True),
    ("rounded_is_not_exact", "0.33", "1/3", False),
    ("wrong_sign", "5", "-5", False),
    ("text_article_case", "The Mitochondrion", "mitochondrion", True),
    ("text_punctuation", "photosynthesis!", "Photosynthesis", True),
    ("text_different", "respiration", "photosynthesis", False),
    ("number_vs_text", "4", "four apples", True),
]


@pytest.mark.parametrize(("a", "b", "expected"), _rows(EQUIV_CASES))
def test_equivalent(a: str, b: str, expected: bool) -> None:
    assert equivalent(a, b) is expected


MENTION_CASES = [
    ("unreduced_inside_sentence", "So we get 10/12, which simplifies.", "5/6", True),
    ("digits_glued", "I have 56 apples", "5/6", False),
    ("larger_fraction", "Is it 15/6?", "5/6", False),
    ("percent_key_bare", "roughly 75 of every 100", "75%", True),
    ("words", "It is three quarters of the cake", "0.75", True),
    ("text_containment", "It happens by photosynthesis in the leaves", "photosynthesis", True),
    ("text_inside_word", "photosynthesiser", "photosynthesis", False),
    ("variable_coefficient", "3x + 2 = 11", "3", False),
    ("ordinal", "the 5th step", "5", False),
]


@pytest.mark.parametrize(("text", "value", "expected"), _rows(MENTION_CASES))
def test_mentions_value(text: str, value: str, expected: bool) -> None:
    assert mentions_value(text, value) is expected


def test_number_mentions_positions_and_values() -> None:
    text = "Is it five sixths, or 56, or 1,250?"
    found = number_mentions(text)
    assert [(m.text, m.value) for m in found] == [
        ("five sixths", Fraction(5, 6)),
        ("56", Fraction(56)),
        ("1,250", Fraction(1250)),
    ]
    assert all(text[m.start : m.end] == m.text for m in found)
    assert [m.places for m in number_mentions("0.83 and 83.3% and 5/6")] == [2, 3, None]


FREE = Item(id="f1", stem="What is 1/2 + 1/3?", answer="5/6", kcs=("add",))
PERCENT = Item(id="p1", stem="15 of 20 passed: what percent?", answer="75%", kcs=("pct",))
TEXT = Item(id="t1", stem="What process makes glucose from light?", answer="photosynthesis", kcs=("bio",))
CHOICE = Item(id="c1", stem="Net force?", options=("A push", "Zero", "A pull", "Weight"), answer="B", kcs=("f",))

GRADE_CASES = [
    ("free_unreduced", FREE, "It is 10/12.", Grade(True, "10/12", True)),
    ("free_latex_boxed", FREE, "\\boxed{\\frac{5}{6}}", Grade(True, "\\frac{5}{6}", True)),
    ("free_wrong", FREE, "The answer is 2/5.", Grade(False, "2/5", True)),
    ("free_invalid", FREE, "I have no idea.", Grade(False, None, False)),
    ("percent_bare", PERCENT, "The answer is 75", Grade(True, "75", True)),
    ("percent_decimal", PERCENT, "0.75", Grade(True, "0.75", True)),
    ("text_lead_in", TEXT, "I think it's photosynthesis.", Grade(True, "photosynthesis", True)),
    ("text_wrong", TEXT, "The answer is respiration.", Grade(False, "respiration", True)),
    ("choice_right", CHOICE, "Nothing pushes it, so the answer is (B).", Grade(True, "B", True)),
    ("choice_wrong", CHOICE, "Answer: A", Grade(False, "A", True)),
    ("choice_invalid", CHOICE, "A push, I guess?", Grade(False, None, False)),
    ("choice_option_text_only", CHOICE, "Zero", Grade(False, None, False)),
]


@pytest.mark.parametrize(("item", "response", "expected"), _rows(GRADE_CASES))
def test_grade(item: Item, response: str, expected: Grade) -> None:
    assert grade(item, response) == expected


def test_invalid_is_never_correct() -> None:
    for item in (FREE, PERCENT, CHOICE):
        g = grade(item, "")
        assert not g.valid and not g.correct and g.extracted is None
