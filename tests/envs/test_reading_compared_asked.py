"""A comparison asked in words ("Which is larger, 0.2 or 0.21?") is a question on the comparing component, with the
misconceptions its case tells apart: practising a comparison is the way to practise comparing."""

from __future__ import annotations

import numpy as np
import pytest

from tutorzoo.envs.content import TRUE, ContentReader
from tutorzoo.envs.reading.normalise import compared_asked, normalise, sentences
from tutorzoo.envs.tasks.math.taskset import MathTaskSet


def _reader(family: str) -> ContentReader:
    return ContentReader.for_task(MathTaskSet().build(family, np.random.default_rng(0)))


@pytest.mark.parametrize(("family", "text", "kc", "refutes"), [
    ("decimal_comparison", "Your turn: which is larger, 0.2 or 0.21?", "comparing_decimals",
     {"shorter_decimal_larger"}),
    ("decimal_comparison", "Which is bigger: 0.2 or 0.21?", "comparing_decimals", {"shorter_decimal_larger"}),
    ("decimal_comparison", "Which decimal is smaller, 0.45 or 0.5?", "comparing_decimals", {"longer_decimal_larger"}),
    ("decimal_comparison", "Which is the largest of 0.3, 0.25 and 0.7?", "comparing_decimals",
     {"longer_decimal_larger"}),
    ("fraction_comparison", r"Which fraction is smaller, \(\frac{1}{3}\) or 2/7?", "comparing_fractions",
     {"larger_denominator_larger", "larger_numerator_larger"}),
    ("fraction_comparison", "**Your turn:** which is larger, $\\frac{1}{8}$ or $\\frac{1}{4}$?", "comparing_fractions",
     {"larger_denominator_larger"}),
    ("integer_addition", "Which number is greater: -7 or 2?", "number_line", set()),
])
def test_a_comparison_asked_in_words_is_a_question_on_comparing(family: str, text: str, kc: str,
                                                               refutes: set[str]) -> None:
    claims = _reader(family).read(text).claims
    assert claims and all(c.question and c.verdict == TRUE and c.kc == kc for c in claims), claims
    assert set().union(*(c.refutes for c in claims)) == refutes


@pytest.mark.parametrize("text", ["Which is larger?", "Which is larger, 0.5 or 0.50?",
                                  "Which is larger, the cat or the dog?", "The larger one is 0.21.",
                                  "Which is larger, 0.2 or 0.21"])
def test_no_comparison_is_asked_without_two_different_values_and_a_question(text: str) -> None:
    assert not any(c.question for c in _reader("decimal_comparison").read(text).claims)


def test_the_options_and_the_direction_are_read() -> None:
    assert compared_asked(normalise("Which is the smallest of 3/4, 2/3 and 5/6?")) == (True, ["3/4", "2/3", "5/6"])
    assert compared_asked(normalise("Which is larger, 0.2 or 0.21?")) == (False, ["0.2", "0.21"])
    assert compared_asked(normalise("What is 0.2 + 0.21?")) is None


def test_a_comparison_asked_before_its_options_stays_one_sentence_and_a_label_still_splits() -> None:
    assert sentences("Which is bigger: 0.2 or 0.21? Rename: 0.2 = 0.20.") == [
        "Which is bigger: 0.2 or 0.21?", "Rename:", "0.2 = 0.20."]
