"""Test-item answers, forgetting and relapse of the student model, exact (agents/student/model.py docstring).

As in tests/agents/test_mut_student_respond.py the draws are scripted: a draw just under a documented probability
makes the event happen, one at or just over it does not, so each probability is pinned by a literal value.
"""

from __future__ import annotations

import pytest

from tests.agents.test_mut_student_respond import ADD, EPS, EQ, MIX, student
from tests.student_fixtures import TASK
from tutorzoo.agents.student.model import answer_item, begin_posttest, item_mastery, p_correct
from tutorzoo.envs.tasks.base import Item

PRE_ADD, PRE_COMPARE = TASK.pretest[0], TASK.pretest[1]  # 5/6 (add_across answers 2/5); choice B of 3


class Draws:
    """``random()`` returns the given draws, then ``rest``; ``integers`` returns the given ints, then its low
    bound (``integers(n)``: 0), each checked to lie in the range asked for."""

    def __init__(self, *draws: float, ints: tuple[int, ...] = (), rest: float = 0.999) -> None:
        self.draws, self.ints, self.rest = list(draws), list(ints), rest

    def random(self) -> float:
        return self.draws.pop(0) if self.draws else self.rest

    def integers(self, low: int, high: int | None = None) -> int:
        low, high = (0, low) if high is None else (low, high)
        if high <= low:  # as numpy: an empty range is an error
            raise ValueError(f"high <= low: {low}, {high}")
        value = self.ints.pop(0) if self.ints else low
        assert low <= value < high, f"scripted {value} outside [{low}, {high})"
        return value


def test_p_correct_is_the_bkt_probability_with_anxious_slip() -> None:
    state = student(anxiety=0.2, slip=0.1, guess=0.1)
    assert p_correct(state, ADD) == pytest.approx(0.4 * (1 - (0.1 + 0.15 * 0.2)) + 0.6 * 0.1, abs=1e-12)


def test_slip_is_capped_at_06() -> None:
    state = student(anxiety=1.0, slip=0.5, guess=0.0, mastery={ADD: 1.0})
    assert p_correct(state, ADD) == pytest.approx(1 - 0.6, abs=1e-12)


def test_item_mastery_is_the_product_and_an_unknown_component_counts_half() -> None:
    state = student()
    two = Item(id="two", stem="?", answer="1", kcs=(ADD, MIX))
    assert item_mastery(state, two) == pytest.approx(0.4 * 0.3, abs=1e-12)
    unknown = Item(id="unknown", stem="?", answer="1", kcs=(EQ, "not_in_this_task"))
    assert item_mastery(state, unknown) == pytest.approx(0.5 * 0.5, abs=1e-12)


@pytest.mark.parametrize(("draw", "how"), [(0.9 - EPS, "memorised"), (0.9 + EPS, "known")])
def test_a_memorised_answer_is_recalled_with_09(draw: float, how: str) -> None:
    state = student(mastery={ADD: 1.0})
    state.memorised["pre_add"] = 1
    state.last_shown = "add_across"
    answer = answer_item(state, PRE_ADD, Draws(draw, 0.0, 0.5))  # then: knows (0 < 1), not misread (0.5 >= 0)
    assert (answer.how, answer.answer, answer.correct) == (how, "5/6", True)
    assert state.last_shown is None


@pytest.mark.parametrize(("status", "mastery", "draw", "how"), [
    pytest.param("active", 0.5, 0.8 * (1 - 0.4 * 0.5) - EPS, "misconception", id="fires-under-08-1-minus-04l"),
    pytest.param("active", 0.5, 0.8 * (1 - 0.4 * 0.5) + EPS, "guess", id="quiet-over"),
    pytest.param("suppressed", 0.0, 0.0, "guess", id="suppressed-never-on-the-test"),
    pytest.param("repaired", 0.0, 0.0, "guess", id="repaired-never"),
])
def test_an_active_misconception_answers_with_its_wrong_answer(status: str, mastery: float, draw: float,
                                                               how: str) -> None:
    state = student(mastery={ADD: mastery}, guess=0.0)
    state.status["add_across"] = status
    answer = answer_item(state, PRE_ADD, Draws(draw, 0.999, 0.999, 0.999))  # then: does not know, no guess
    assert answer.how == how
    if how == "misconception":
        assert (answer.answer, answer.correct, answer.misconception) == ("2/5", False, "add_across")
        assert state.last_shown == "add_across" and "add_across" in state.voiced
    else:
        assert state.last_shown is None and state.voiced == set()


def test_a_misconception_fires_only_on_items_of_its_component() -> None:
    state = student()
    state.status["add_across"] = "active"
    other = Item(id="other", stem="?", answer="5/6", kcs=(EQ,), misconception_answers={"add_across": "2/5"})
    assert answer_item(state, other, Draws(0.0, 0.0, 0.5, 0.5)).how == "known"


def test_a_misconception_whose_answer_is_right_is_graded_right() -> None:
    state = student()
    state.status["add_across"] = "active"
    same = Item(id="same", stem="?", answer="5/6", kcs=(ADD,), misconception_answers={"add_across": "5/6"})
    answer = answer_item(state, same, Draws(0.0))
    assert (answer.how, answer.correct) == ("misconception", True)


S = 0.1 + 0.15 * 0.2  # S' = S + 0.15 anxiety


# knows with P = item mastery (ADD: 0.4) and not misread (m = 0.05), then slips with S'
@pytest.mark.parametrize(("draws", "how", "answer", "correct"), [
    pytest.param((0.4 - EPS, 0.05, S), "known", "5/6", True, id="knows-misread-and-slip-boundaries"),
    pytest.param((0.4 - EPS, 0.05, S - EPS, 0.5 - EPS), "slip", "2/5", False, id="slips-to-a-known-wrong-answer"),
    pytest.param((0.4 - EPS, 0.05, S - EPS, 0.5 + EPS), "slip", "6/6", False, id="slips-to-a-near-miss"),
    pytest.param((0.4 + EPS, 0.1 - EPS), "guess", "5/6", True, id="does-not-know-guesses-right"),
    pytest.param((0.4 + EPS, 0.1, 0.999), "guess", "6/6", False, id="does-not-know-guesses-wrong"),
    pytest.param((0.4 - EPS, 0.05 - EPS, 0.1 - EPS), "guess", "5/6", True, id="misread-then-guesses"),
])
def test_a_free_answer(draws: tuple, how: str, answer: str, correct: bool) -> None:
    state = student(anxiety=0.2, slip=0.1, guess=0.1, misread_rate=0.05)
    got = answer_item(state, PRE_ADD, Draws(*draws))
    assert (got.how, got.answer, got.correct) == (how, answer, correct)


@pytest.mark.parametrize(("letter", "correct"), [(0, False), (1, True), (2, False)])
def test_a_multiple_choice_guess_is_a_uniform_letter(letter: int, correct: bool) -> None:
    state = student(mastery={EQ: 0.0})
    got = answer_item(state, PRE_COMPARE, Draws(0.5, ints=(letter,)))
    assert (got.how, got.answer, got.correct) == ("guess", "ABC"[letter], correct)


def test_a_multiple_choice_slip_picks_another_letter() -> None:
    state = student(mastery={EQ: 1.0}, slip=0.2)
    got = answer_item(state, PRE_COMPARE, Draws(0.5, 0.5, 0.0, ints=(1,)))  # knows, not misread, slips
    assert (got.how, got.answer, got.correct) == ("slip", "C", False)  # the other letters: A, C


@pytest.mark.parametrize(("before", "after"), [
    pytest.param(0.3 + 0.2, 0.3 + 0.2 * (1 - 0.1), id="learned-part-fades"),
    pytest.param(0.3, 0.3, id="nothing-learned"),
    pytest.param(0.2, 0.2, id="below-the-start-is-kept"),
])
def test_forgetting_takes_f_of_what_was_learned(before: float, after: float) -> None:
    state = student(forget=0.1)
    state.mastery[MIX] = before  # initial 0.3
    begin_posttest(state, Draws())
    assert state.mastery[MIX] == pytest.approx(after, abs=1e-12)
    begin_posttest(state, Draws())  # once only
    assert state.mastery[MIX] == pytest.approx(after, abs=1e-12)


@pytest.mark.parametrize(("status", "draw", "after"), [
    pytest.param("suppressed", 0.35 - EPS, "active", id="relapses-under"),
    pytest.param("suppressed", 0.35, "suppressed", id="holds-at"),
    pytest.param("repaired", 0.0, "repaired", id="repaired-never-relapses"),
])
def test_a_suppressed_misconception_relapses_before_the_posttest(status: str, draw: float, after: str) -> None:
    state = student(relapse=0.35)
    state.status["add_across"] = status
    begin_posttest(state, Draws(draw))
    assert state.status["add_across"] == after


def _active(state) -> None:
    state.status["add_across"] = "active"


# (name, student(...) arguments, setup, draws with the one under test equal to its probability, how it answers)
AT_BOUNDARY = [
    ("recall_09", {"mastery": {ADD: 0.0}, "guess": 0.0}, lambda s: s.memorised.update(pre_add=1), (0.9,), "guess"),
    ("fires_08_at_l0", {"mastery": {ADD: 0.0}, "guess": 0.0}, _active, (0.8,), "guess"),
    ("knows_with_item_mastery", {"guess": 0.0}, lambda s: None, (0.4,), "guess"),
]


@pytest.mark.parametrize(("overrides", "setup", "draws", "how"), [pytest.param(*c[1:], id=c[0])
                                                                   for c in AT_BOUNDARY])
def test_a_draw_equal_to_the_probability_does_not_make_the_event(overrides, setup, draws, how) -> None:
    state = student(**overrides)
    setup(state)
    assert answer_item(state, PRE_ADD, Draws(*draws)).how == how


def test_a_slip_picks_a_known_wrong_answer_with_probability_half() -> None:
    state = student(mastery={ADD: 1.0}, slip=0.2)
    assert answer_item(state, PRE_ADD, Draws(0.0, 0.5, 0.0, 0.5)).answer == "6/6"  # 0.5: not under 0.5
    assert answer_item(state, PRE_ADD, Draws(0.0, 0.5, 0.0, 0.5 - EPS)).answer == "2/5"
