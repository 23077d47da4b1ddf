"""Grading edge cases that a small bug would get wrong: percents, empty answers, boundaries (.ci/mutation.py)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tutorzoo.envs.grading import (
    equivalent,
    extract_choice,
    extract_value,
    grade,
    mentions_value,
    number_mentions,
    parse_number,
    same_number,
)
from tutorzoo.envs.tasks.base import Item


def _rows(cases: list[tuple]) -> list:
    return [pytest.param(*c[1:], id=c[0]) for c in cases]


PERCENT_CASES = [
    # a bare number matches a percent key only as that percent's digits: "75" for "75%", never for "3/4"
    ("bare_75_is_not_3_quarters", "75", "3/4", False),
    ("bare_75_is_not_0.75", "75", "0.75", False),
    ("bare_75_for_75_percent", "75", "75%", True),
    ("bare_0.75_for_75_percent", "0.75", "75%", True),
    ("percent_for_plain_key", "75%", "75", False),
    ("percent_for_percent_key", "75%", "75%", True),
    ("percent_for_fraction_key", "75%", "3/4", True),
    ("bare_50_for_half", "50", "1/2", False),
]


@pytest.mark.parametrize(("a", "b", "expected"), _rows(PERCENT_CASES))
def test_percent_check(a: str, b: str, expected: bool) -> None:
    assert equivalent(a, b) is expected


@pytest.mark.parametrize(("value", "percent", "expected", "expected_percent", "same"), [
    pytest.param(Fraction(75), False, Fraction(3, 4), True, True, id="digits-of-a-percent-key"),
    pytest.param(Fraction(75), False, Fraction(3, 4), False, False, id="digits-of-a-plain-key"),
    pytest.param(Fraction(75), True, Fraction(3, 4), True, False, id="a-percent-is-divided-already"),
    pytest.param(Fraction(3, 4), True, Fraction(3, 4), False, True, id="same-value"),
])
def test_same_number(value: Fraction, percent: bool, expected: Fraction, expected_percent: bool, same: bool) -> None:
    assert same_number(value, percent, expected, expected_percent) is same


EMPTY_CASES = [
    # a key that normalises to nothing matches nothing, not even a punctuation-only reply
    ("punctuation_key_punctuation_reply", "?!", "...", False),
    ("punctuation_key_same_punctuation", "...", "...", False),
    ("empty_key_empty_reply", "", "", False),
    ("article_only_key", "the", "a", False),
    ("word_vs_punctuation_key", "moon", "!", False),
]


@pytest.mark.parametrize(("a", "b", "expected"), _rows(EMPTY_CASES))
def test_empty_normalised_key_matches_nothing(a: str, b: str, expected: bool) -> None:
    assert equivalent(a, b) is expected


@pytest.mark.parametrize(("text", "value", "expected"), [
    pytest.param("?? ...", "!!", False, id="punctuation-value"),
    pytest.param("", "", False, id="empty"),
    pytest.param("the moon", "The Moon", True, id="article-dropped-from-the-value-only"),
    pytest.param("a moonlit night", "moon", False, id="whole-words-only"),
])
def test_mentions_value_text(text: str, value: str, expected: bool) -> None:
    assert mentions_value(text, value) is expected


def test_punctuation_only_reply_to_a_text_item_is_not_correct() -> None:
    item = Item(id="q", stem="Name the process.", answer="photosynthesis", kcs=("k",))
    assert grade(item, "?!").correct is False
    assert grade(item, "Photosynthesis.").correct is True


NUMBER_WORD_CASES = [
    ("half", "one half", Fraction(1, 2)),
    ("third", "one third", Fraction(1, 3)),
    ("quarter", "one quarter", Fraction(1, 4)),
    ("fourth", "one fourth", Fraction(1, 4)),
    ("fifth", "one fifth", Fraction(1, 5)),
    ("sixth", "one sixth", Fraction(1, 6)),
    ("seventh", "one seventh", Fraction(1, 7)),
    ("eighth", "one eighth", Fraction(1, 8)),
    ("ninth", "one ninth", Fraction(1, 9)),
    ("tenth", "one tenth", Fraction(1, 10)),
    ("eleventh", "one eleventh", Fraction(1, 11)),
    ("twelfth", "one twelfth", Fraction(1, 12)),
    ("twentieth", "one twentieth", Fraction(1, 20)),
    ("hundredth", "one hundredth", Fraction(1, 100)),
    ("thousandth", "one thousandth", Fraction(1, 1000)),
    ("halves", "three halves", Fraction(3, 2)),
    ("thirds", "two thirds", Fraction(2, 3)),
    ("digit-and-plural-word", "4 tenths", Fraction(2, 5)),
    ("digit-one-and-singular-word", "1 third", Fraction(1, 3)),
    ("thousand", "two thousand", Fraction(2000)),
    ("million", "three million", Fraction(3_000_000)),
    ("scales-combined", "two million three thousand and four", Fraction(2_003_004)),
    ("hundred-and", "two hundred and five", Fraction(205)),
    ("hyphenated", "twenty-five", Fraction(25)),
    ("teen", "nineteen", Fraction(19)),
    ("tens", "ninety", Fraction(90)),
    ("ten", "ten", Fraction(10)),
    ("zero", "zero", Fraction(0)),
    ("nine", "nine", Fraction(9)),
    ("mixed-words", "two and three quarters", Fraction(11, 4)),
    ("point-digits", "one point two five", Fraction(5, 4)),
    ("per-cent", "fifty per cent", Fraction(1, 2)),
    ("negative", "negative three", Fraction(-3)),
]


@pytest.mark.parametrize(("text", "expected"), _rows(NUMBER_WORD_CASES))
def test_number_words(text: str, expected: Fraction) -> None:
    assert parse_number(text) == expected


@pytest.mark.parametrize(("text", "values"), [
    pytest.param("twenty, five", [Fraction(20), Fraction(5)], id="comma-separates-words"),
    pytest.param("twenty five", [Fraction(25)], id="blank-joins-words"),
    pytest.param("two hundred. Five", [Fraction(200), Fraction(5)], id="full-stop-separates"),
    pytest.param("one third. Of", [Fraction(1, 3)], id="fraction-word"),
    pytest.param("three; quarters", [Fraction(3)], id="semicolon-breaks-a-fraction"),
])
def test_number_words_join_only_when_adjacent(text: str, values: list) -> None:
    assert [m.value for m in number_mentions(text)] == values


@pytest.mark.parametrize(("text", "values"), [
    pytest.param("twelve hundred", [Fraction(1200)], id="teens-hundred"),
    pytest.param("twenty hundred", [Fraction(20)], id="tens-hundred-stops"),
    pytest.param("one hundred hundred", [Fraction(100)], id="hundred-hundred-stops"),
    pytest.param("thousand", [], id="a-scale-alone-is-no-number"),
    pytest.param("two million thousand", [Fraction(2_000_000)], id="scale-after-scale-stops"),
    pytest.param("two hundred and apples", [Fraction(200)], id="and-needs-a-number-after-it"),
    pytest.param("five and six", [Fraction(5), Fraction(6)], id="and-between-ones-separates"),
    pytest.param("two hundred and, five", [Fraction(200), Fraction(5)], id="and-not-adjacent-to-the-next-word"),
    pytest.param("twenty three", [Fraction(23)], id="tens-ones"),
    pytest.param("three twenty", [Fraction(3), Fraction(20)], id="ones-tens-separate"),
    pytest.param("seven eight", [Fraction(7), Fraction(8)], id="ones-ones-separate"),
    pytest.param("twenty zero", [Fraction(20), Fraction(0)], id="zero-after-a-number-separates"),
    pytest.param("a half", [Fraction(1, 2)], id="a-half"),
    pytest.param("a third of it", [Fraction(1, 3)], id="a-third-of"),
    pytest.param("a third attempt", [], id="a-third-is-an-ordinal"),
    pytest.param("is a third", [], id="a-third-at-the-end-is-an-ordinal"),
    pytest.param("take a", [], id="a-at-the-end"),
    pytest.param("a, half", [], id="a-not-adjacent"),
    pytest.param("a fifths", [], id="a-with-a-plural"),
    pytest.param("three, halves", [Fraction(3)], id="denominator-not-adjacent"),
    pytest.param("it is three", [Fraction(3)], id="cardinal-at-the-end"),
    pytest.param("it is one thirds", [Fraction(1)], id="one-with-a-plural-denominator-is-no-fraction"),
    pytest.param("two third", [Fraction(2)], id="two-with-a-singular-denominator-is-no-fraction"),
])
def test_cardinal_grammar(text: str, values: list) -> None:
    assert [m.value for m in number_mentions(text)] == values


@pytest.mark.parametrize(("text", "spans"), [
    pytest.param("two hundred and apples", [("two hundred", 0, 11)], id="and-not-followed-by-a-number-is-left-out"),
    pytest.param("two hundred and", [("two hundred", 0, 11)], id="and-at-the-end-is-left-out"),
    pytest.param("two thousand and fifteen", [("two thousand and fifteen", 0, 24)], id="and-teen"),
    pytest.param("one hundred and twenty", [("one hundred and twenty", 0, 22)], id="and-tens"),
    pytest.param("is one of them", [], id="one-of-is-a-pronoun"),
    pytest.param("x = one", [("one", 4, 7)], id="one-after-equals"),
    pytest.param("negative two", [("negative two", 0, 12)], id="negative-word"),
    pytest.param("two hundred and, five", [("two hundred", 0, 11), ("five", 17, 21)], id="and-then-a-comma"),
    pytest.param("a third of", [("a third", 0, 7)], id="a-third-of-at-the-end"),
    pytest.param("one third", [("one third", 0, 9)], id="one-third"),
    pytest.param("five sixths", [("five sixths", 0, 11)], id="five-sixths"),
])
def test_number_word_spans(text: str, spans: list) -> None:
    assert [(m.text, m.start, m.end) for m in number_mentions(text)] == spans


@pytest.mark.parametrize(("text", "found"), [
    pytest.param("half of the cake", [("half", Fraction(1, 2), False, None)], id="half-of"),
    pytest.param("half the cake", [], id="half-alone-is-no-number"),
    pytest.param("half of", [("half", Fraction(1, 2), False, None)], id="half-of-at-the-end"),
    pytest.param("two and, a half", [("two", Fraction(2), False, None), ("a half", Fraction(1, 2), False, None)],
                 id="and-not-adjacent-to-the-fraction"),
    pytest.param("twelve per", [("twelve", Fraction(12), False, None)], id="per-at-the-end"),
    pytest.param("and half", [], id="half-at-the-end"),
    pytest.param("two and", [("two", Fraction(2), False, None)], id="and-at-the-end"),
    pytest.param("one and a half", [("one and a half", Fraction(3, 2), False, None)], id="mixed"),
    pytest.param("two and apples", [("two", Fraction(2), False, None)], id="and-without-a-fraction"),
    pytest.param("twelve percent", [("twelve percent", Fraction(3, 25), True, None)], id="percent-word"),
    pytest.param("twelve per cent", [("twelve per cent", Fraction(3, 25), True, None)], id="per-cent-words"),
    pytest.param("twelve per day", [("twelve", Fraction(12), False, None)], id="per-without-cent"),
    pytest.param("three point one four", [("three point one four", Fraction(157, 50), False, 2)], id="point"),
    pytest.param("three point", [("three", Fraction(3), False, None)], id="point-without-digits"),
    pytest.param("three point, one", [("three", Fraction(3), False, None)], id="point-digits-not-adjacent"),
    pytest.param("negative, two", [("two", Fraction(2), False, None)], id="negative-not-adjacent"),
    pytest.param("twelve", [("twelve", Fraction(12), False, None)], id="a-word-is-no-percent"),
])
def test_word_mentions(text: str, found: list) -> None:
    assert [(m.text, m.value, m.percent, m.places) for m in number_mentions(text)] == found


def test_negative_must_come_before_the_number() -> None:
    assert [m.value for m in number_mentions("two negative")] == [Fraction(2)]


@pytest.mark.parametrize(("text", "values"), [
    pytest.param("is one", [Fraction(1)], id="one-after-a-cue-word"),
    pytest.param("one cat is", [], id="one-first-is-a-pronoun"),
    pytest.param("the answer one", [Fraction(1)], id="one-after-answer"),
])
def test_a_bare_one(text: str, values: list) -> None:
    assert [m.value for m in number_mentions(text)] == values


@pytest.mark.parametrize(("text", "found"), [
    pytest.param("6", [("6", Fraction(6), False, 0)], id="integer-has-no-places"),
    pytest.param("0.5", [("0.5", Fraction(1, 2), False, 1)], id="decimal-is-no-percent"),
    pytest.param("4 tenths", [("4 tenths", Fraction(2, 5), False, None)], id="denominator-word-is-no-percent"),
    pytest.param("0 tenths", [("0 tenths", Fraction(0), False, None)], id="zero-with-a-denominator-word"),
    pytest.param("-4 tenths", [("-4", Fraction(-4), False, 0)], id="negative-takes-no-denominator-word"),
    pytest.param("3/4 quarters", [("3/4", Fraction(3, 4), False, None)], id="a-fraction-takes-no-denominator-word"),
    pytest.param("40% tenths", [("40%", Fraction(2, 5), True, 2)], id="a-percent-takes-no-denominator-word"),
])
def test_digit_mentions(text: str, found: list) -> None:
    assert [(m.text, m.value, m.percent, m.places) for m in number_mentions(text)] == found


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("one", Fraction(1), id="a-bare-one-is-a-whole-answer"),
    pytest.param("5$", None, id="a-trailing-dollar-is-no-unit"),
    pytest.param("x = y = 4", None, id="only-one-variable-on-the-left"),
    pytest.param("$5$", Fraction(5), id="latex-dollars"),
])
def test_parse_number_edges(text: str, expected: Fraction | None) -> None:
    assert parse_number(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("So \\boxed{x} then 9", "x", id="boxed-text-before-a-number"),
    pytest.param("So \\boxed{\\frac{3}{4}} is it. Then 7.", "\\frac{3}{4}", id="nested-braces"),
    pytest.param("So \\boxed{{x}} then 9", "{x}", id="double-braces"),
    pytest.param("\\boxed{12", "12", id="unbalanced"),
    pytest.param("\\boxed{} 7", "7", id="empty-box"),
])
def test_boxed_values(text: str, expected: str) -> None:
    assert extract_value(text) == expected


def test_text_and_number_compare_as_text() -> None:
    assert equivalent("5", "photosynthesis") is False
    assert equivalent("photosynthesis", "5") is False
    assert mentions_value("a moon rises", "The Moon") is True
    assert extract_choice("A is right", 0) is None
    assert extract_choice("A is right", 1) == "A"


def test_a_closing_equation_gives_its_right_side_even_when_it_is_not_a_number() -> None:
    assert extract_value("3 + 4 = x") == "x"
    assert extract_value("3 + 4 = 7") == "7"
