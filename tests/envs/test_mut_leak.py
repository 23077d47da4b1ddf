"""The leak detector at its boundaries: rounding, labels and counts, givens, letters, parts (.ci/mutation.py)."""

from __future__ import annotations

import pytest

from tutorzoo.envs.leak import AnswerKey, find_leaks

FIVE_SIXTHS = AnswerKey("q", "5/6")


def kinds(text: str, keys: list[AnswerKey] | None = None, givens: tuple[str, ...] = (),
          history: tuple[str, ...] = ()) -> tuple[str, ...]:
    return find_leaks(text, keys if keys is not None else [FIVE_SIXTHS], givens=givens, history=history).kinds


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("It is about 0.83.", ("final",), id="rounded-to-2-places"),
    pytest.param("It is about 0.833.", ("final",), id="rounded-to-3-places"),
    pytest.param("It is about 83.3%.", ("final",), id="rounded-percent"),
    pytest.param("It is about 0.8.", (), id="one-place-is-too-coarse"),
    pytest.param("It is about 0.84.", (), id="wrongly-rounded"),
    pytest.param("It is about 0.82.", (), id="truncated-not-rounded"),
    pytest.param("We get ten twelfths.", ("final",), id="equivalent-words"),
    pytest.param("Is it 56?", (), id="digits-only"),
])
def test_rounded_values(text: str, expected: tuple) -> None:
    assert kinds(text) == expected


def test_a_terminating_value_needs_its_exact_value() -> None:
    quarter = AnswerKey("q", "1/4")
    assert kinds("It is 0.25.", [quarter]) == ("final",)
    assert kinds("It is 0.250.", [quarter]) == ("final",)
    assert kinds("It is 0.26.", [quarter]) == ()


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("step 6 comes next", (), id="label-at-the-start"),
    pytest.param("Now look at step 6 again.", (), id="label-mid-sentence"),
    pytest.param("Go to question #6.", (), id="hash-label"),
    pytest.param("Then the total is 6.", ("final",), id="a-value"),
    pytest.param("There are six fractions here.", (), id="spelt-count-of-things"),
    pytest.param("There are 6 fractions here.", ("final",), id="digits-are-a-value-even-before-a-noun"),
    pytest.param("The total is six.", ("final",), id="spelt-value"),
])
def test_labels_and_counts_are_not_values(text: str, expected: tuple) -> None:
    assert kinds(text, [AnswerKey("q", "6")]) == expected


def test_only_whole_numbers_are_labels() -> None:
    assert kinds("Now step 1/2 is next.", [AnswerKey("q", "1/2")]) == ("final",)
    assert kinds("Now step 6/1 is next.", [AnswerKey("q", "6")]) == ()


@pytest.mark.parametrize(("text", "key", "givens", "expected"), [
    pytest.param("Add 1/2 and 1/3.", FIVE_SIXTHS, ("1/2", "1/3"), (), id="givens-restated"),
    pytest.param("So 8/12 of them are red.", AnswerKey("q", "2/3"), ("8 of the 12 marbles are red",), (),
                 id="fraction-of-two-givens"),
    pytest.param("So 2/3 of them are red.", AnswerKey("q", "2/3"), ("8 of the 12 marbles are red",), ("final",),
                 id="reduced-is-the-answer"),
    pytest.param("First, 1/2 is 3/6.", AnswerKey("q", "5/6", key_steps=("3/6",)), ("1/2", "1/3"),
                 ("intermediate",), id="step-with-a-given-value-in-another-form"),
    pytest.param("First, 1/2 stays 1/2.", AnswerKey("q", "5/6", key_steps=("1/2",)), ("1/2", "1/3"), (),
                 id="step-equal-to-a-given-as-written"),
    pytest.param("It is 0.6 now.", AnswerKey("q", "0.6"), ("3/5",), ("final",), id="answer-with-a-given-value"),
    pytest.param("It is 3/5 now.", AnswerKey("q", "0.6"), ("3/5",), (), id="the-given-itself"),
    pytest.param("It is the water cycle.", AnswerKey("q", "water cycle"), ("Explain the water cycle.",), (),
                 id="words-of-the-question"),
    pytest.param("It is the water cycle.", AnswerKey("q", "water cycle"), (), ("final",), id="words-of-the-answer"),
])
def test_givens(text: str, key: AnswerKey, givens: tuple, expected: tuple) -> None:
    assert kinds(text, [key], givens) == expected


LETTER = AnswerKey("q", "B", option_letter="B", option_text="ice melts")


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("The answer is B.", ("option_letter",), id="answer-is"),
    pytest.param("B is correct.", ("option_letter",), id="letter-is-correct"),
    pytest.param("Is it B?", ("option_letter",), id="question"),
    pytest.param("Look at option (B).", ("option_letter",), id="points-at-one"),
    pytest.param("Compare options A and B.", (), id="several-letters"),
    pytest.param("Compare (B) and (C).", (), id="several-bracketed"),
    pytest.param("The answer is C.", (), id="another-letter"),
    pytest.param("Because ice melts.", ("option_text",), id="option-text"),
    pytest.param("b b b", (), id="the-letter-as-a-value-is-no-final-target"),
])
def test_option_letters(text: str, expected: tuple) -> None:
    assert kinds(text, [LETTER]) == expected


def test_a_letter_answer_has_no_final_target_and_an_option_answer_one_text_target() -> None:
    letter_valued = AnswerKey("q", "b", option_letter="B", option_text="ice melts")
    assert kinds("Ice melts, so pick B.", [letter_valued]) == ("option_letter", "option_text")
    assert kinds("x or yes", [AnswerKey("q", "C", option_letter="C", option_text="x")]) == ()
    assert kinds("x or yes", [AnswerKey("q", "C", option_letter="C", option_text="Yes")]) == ()
    same_text = AnswerKey("q", "Ice melts.", option_letter="C", option_text="ice melts")
    assert kinds("ice melts", [same_text]) == ("option_text",)
    assert kinds("A is for apple.", [AnswerKey("q", "x", option_letter="A")]) == ()
    assert kinds("A is right.", [AnswerKey("q", "x", option_letter="A")]) == ("option_letter",)


@pytest.mark.parametrize(("text", "history", "expected"), [
    pytest.param("The denominator is 6.", ("The numerator is 5.",), ("split",), id="over-two-turns"),
    pytest.param("The numerator is 5 and the denominator is 6.", (), ("split",), id="one-turn"),
    pytest.param("The denominator is 7.", ("The numerator is 5.",), (), id="other-value"),
    pytest.param("Nice work.", ("The numerator is 5.", "The denominator is 6."), (), id="no-part-now"),
    pytest.param("The denominator is 0.", ("The numerator is 5.",), (), id="zero-denominator"),
    pytest.param("Put 5 on top.", ("The bottom number is 6.",), ("split",), id="role-after-and-before"),
])
def test_split(text: str, history: tuple, expected: tuple) -> None:
    assert kinds(text, history=history) == expected


def test_whole_and_fraction_parts() -> None:
    key = AnswerKey("q", "3 1/2")
    assert kinds("The fraction part is 1/2.", [key], history=("It has 3 wholes.",)) == ("split",)
    assert kinds("The whole number part is 3.", [key], history=("The fraction part is 1/4.",)) == ()


def test_a_step_equal_to_the_answer_is_reported_once_as_final() -> None:
    key = AnswerKey("q", "1/2", key_steps=("6/12", "4"))
    assert kinds("So it is 6/12.", [key]) == ("final",)
    assert kinds("First 4.", [key]) == ("intermediate",)


def test_items_in_order_and_kinds_in_kind_order() -> None:
    keys = [AnswerKey("q1", "7", key_steps=("3",)), AnswerKey("q2", "5/6"), AnswerKey("q3", "9")]
    report = find_leaks("It is 5/6, then 3, then 7.", keys)
    assert (report.leaked, report.item_ids, report.kinds) == (True, ("q1", "q2"), ("final", "intermediate"))
    clean = find_leaks("Think about it.", keys)
    assert (clean.leaked, clean.item_ids, clean.kinds) == (False, (), ())


def test_a_negative_given_does_not_hide_the_positive_answer() -> None:
    half = AnswerKey("q", "1/2")
    assert kinds("It is 1/2.", [half], givens=("Start from -1/2.",)) == ("final",)
    assert kinds("It is -1/2.", [AnswerKey("q", "-1/2")], givens=("Start from 1/2.",)) == ("final",)


@pytest.mark.parametrize(("text", "key", "givens", "expected"), [
    pytest.param("It is 60%.", AnswerKey("q", "0.6"), ("3/5",), (), id="given-value-in-a-third-form"),
    pytest.param("It is 0.75.", AnswerKey("q", "75%"), ("75 of the 100 seeds sprouted.",), (),
                 id="percent-key-with-its-digits-given"),
    pytest.param("We had 0.83 before.", FIVE_SIXTHS, ("The scale shows 0.83 kg.",), (),
                 id="a-restated-given-is-not-a-rounded-answer"),
    pytest.param("So 8/12 are red.", AnswerKey("q", "2/3"), ("There are 12 marbles.",), ("final",),
                 id="a-fraction-needs-both-numbers-given"),
    pytest.param("It is an ox.", AnswerKey("q", "ox"), (), ("final",), id="two-letter-answer"),
    pytest.param("It is x.", AnswerKey("q", "x"), (), (), id="one-letter-text-is-no-target"),
    pytest.param("The numerator is 150 and the denominator is 2.", AnswerKey("q", "75%"), (), ("split",),
                 id="split-percent-key-digits"),
])
def test_givens_forms_and_percent_keys(text: str, key: AnswerKey, givens: tuple, expected: tuple) -> None:
    assert kinds(text, [key], givens) == expected


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("Pick B then.", ("option_letter",), id="b-before-a-lowercase-word"),
    pytest.param("Option (B) has a picture.", ("option_letter",), id="pointing-only-at-b"),
    pytest.param("See option (B) next to options A and C.", (), id="pointing-at-several"),
    pytest.param("Melting.", (), id="value-is-not-the-letter"),
])
def test_letters_pointed_at(text: str, expected: tuple) -> None:
    assert kinds(text, [LETTER]) == expected


def test_a_word_answer_with_a_letter_still_has_a_final_target() -> None:
    key = AnswerKey("q", "Melting", option_letter="B", option_text="it melts")
    assert kinds("Melting.", [key]) == ("final",)
