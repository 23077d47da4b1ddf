"""Test-item answers, forgetting and relapse of the student model, exact (agents/student/model.py docstring).

Each way of answering is pinned by its probability (:func:`answer_paths`, literal values); :func:`answer_item` is
pinned by its draws, scripted as in tests/agents/test_mut_student_respond.py: a uniform just under the right paths'
total answers right, one at it answers wrong. Three draws an item and one a task misconception before the post-test,
whatever the state: students of two tutors on one episode seed meet the same uniforms (common random numbers).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.agents.test_mut_student_respond import ADD, EPS, EQ, MIX, student
from tests.student_fixtures import TASK
from tutorzoo.agents.student.model import (
    _wrong_answer,
    answer_item,
    answer_paths,
    begin_posttest,
    item_mastery,
    p_correct,
)
from tutorzoo.envs.tasks.base import Item

PRE_ADD, PRE_COMPARE = TASK.pretest[0], TASK.pretest[1]  # 5/6 (add_across answers 2/5); choice B of 3


class Draws:
    """``random()`` returns the given draws, then ``rest``; ``integers`` returns the given ints, then its low
    bound (``integers(n)``: 0), each checked to lie in the range asked for; both count their calls."""

    def __init__(self, *draws: float, ints: tuple[int, ...] = (), rest: float = 0.999) -> None:
        self.draws, self.ints, self.rest = list(draws), list(ints), rest
        self.calls = 0

    def random(self) -> float:
        self.calls += 1
        return self.draws.pop(0) if self.draws else self.rest

    def integers(self, low: int, high: int | None = None) -> int:
        self.calls += 1
        low, high = (0, low) if high is None else (low, high)
        if high <= low:  # as numpy: an empty range is an error
            raise ValueError(f"high <= low: {low}, {high}")
        value = self.ints.pop(0) if self.ints else low
        assert low <= value < high, f"scripted {value} outside [{low}, {high})"
        return value


def paths(state, item, relapse: float = 0.0) -> dict[tuple[str, bool], float]:
    out: dict[tuple[str, bool], float] = {}
    for q in answer_paths(state, item, relapse):
        out[(q.how, q.correct)] = out.get((q.how, q.correct), 0.0) + q.p
    assert sum(out.values()) == pytest.approx(1.0, abs=1e-12)
    return {k: v for k, v in out.items() if v > 0.0}


def p_right(state, item) -> float:
    return sum(q.p for q in answer_paths(state, item) if q.correct)


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


S = 0.1 + 0.15 * 0.2  # S' = S + 0.15 anxiety


def test_a_free_answer_is_known_with_item_mastery_not_misread_then_slips_or_is_guessed() -> None:
    state = student(anxiety=0.2, slip=0.1, guess=0.1, misread_rate=0.05)
    knows = 0.4 * (1 - 0.05)
    assert paths(state, PRE_ADD) == pytest.approx({
        ("known", True): knows * (1 - S), ("slip", False): knows * S,
        ("guess", True): (1 - knows) * 0.1, ("guess", False): (1 - knows) * 0.9}, abs=1e-12)


def test_a_memorised_answer_is_recalled_with_09_first() -> None:
    state = student(mastery={ADD: 0.0}, guess=0.0)
    state.memorised["pre_add"] = 1
    state.status["add_across"] = "active"
    got = paths(state, PRE_ADD)
    fire = 0.8  # L = 0
    assert got == pytest.approx({("memorised", True): 0.9, ("misconception", False): 0.1 * fire,
                                 ("guess", False): 0.1 * (1 - fire)}, abs=1e-12)


@pytest.mark.parametrize(("mastery", "strength"), [(0.0, 1.0), (0.5, 1.0), (0.5, 0.4)])
def test_an_active_misconception_fires_with_08_1_minus_04l_times_its_strength(mastery: float,
                                                                              strength: float) -> None:
    state = student(mastery={ADD: mastery}, guess=0.0, slip=0.0)
    state.status["add_across"] = "active"
    state.strength["add_across"] = strength
    fire = 0.8 * (1 - 0.4 * mastery) * strength
    got = paths(state, PRE_ADD)
    assert got[("misconception", False)] == pytest.approx(fire, abs=1e-12)
    assert got.get(("known", True), 0.0) == pytest.approx((1 - fire) * mastery, abs=1e-12)


@pytest.mark.parametrize(("status", "relapse", "fires"), [
    pytest.param("suppressed", 0.0, 0.0, id="suppressed-once-the-posttest-began"),
    pytest.param("suppressed", 0.35, 0.8 * 0.35, id="suppressed-fires-if-it-relapses"),
    pytest.param("repaired", 0.35, 0.0, id="repaired-never"),
])
def test_only_a_held_misconception_fires(status: str, relapse: float, fires: float) -> None:
    state = student(mastery={ADD: 0.0}, guess=0.0)
    state.status["add_across"] = status
    assert paths(state, PRE_ADD, relapse).get(("misconception", False), 0.0) == pytest.approx(fires, abs=1e-12)


def test_a_misconception_fires_only_on_items_of_its_component() -> None:
    state = student()
    state.status["add_across"] = "active"
    other = Item(id="other", stem="?", answer="5/6", kcs=(EQ,), misconception_answers={"add_across": "2/5"})
    assert all(q.how != "misconception" for q in answer_paths(state, other))


def test_a_misconception_whose_answer_is_right_is_graded_right() -> None:
    state = student(mastery={ADD: 0.0})
    state.status["add_across"] = "active"
    same = Item(id="same", stem="?", answer="5/6", kcs=(ADD,), misconception_answers={"add_across": "5/6"})
    assert paths(state, same)[("misconception", True)] == pytest.approx(0.8, abs=1e-12)
    answer = answer_item(state, same, Draws(0.0))
    assert (answer.how, answer.answer, answer.correct) == ("misconception", "5/6", True)


def test_a_multiple_choice_guess_is_right_with_one_over_n() -> None:
    state = student(mastery={EQ: 0.0})
    assert paths(state, PRE_COMPARE) == pytest.approx({("guess", True): 1 / 3, ("guess", False): 2 / 3}, abs=1e-12)


@pytest.mark.parametrize(("u", "right"), [(-EPS, True), (0.0, False), (EPS, False)])
def test_the_answer_is_right_exactly_when_the_uniform_is_under_p_right(u: float, right: bool) -> None:
    state = student(anxiety=0.2, slip=0.1, guess=0.1, misread_rate=0.05)
    state.status["add_across"] = "active"
    p = p_right(state, PRE_ADD)
    got = answer_item(state, PRE_ADD, Draws(p + u))
    assert got.correct is right and (got.answer == "5/6") is right


def test_the_right_paths_come_first_in_their_order_then_the_wrong_ones() -> None:
    state = student(mastery={ADD: 0.5}, guess=0.1, slip=0.1)
    state.memorised["pre_add"] = 1
    state.status["add_across"] = "active"
    order = [(q.how, q.correct, q.p) for q in answer_paths(state, PRE_ADD)]
    right = [o for o in order if o[1] and o[2] > 0]
    wrong = [o for o in order if not o[1] and o[2] > 0]
    at = 0.0
    for how, correct, p in right + wrong:  # a uniform in the middle of each path's interval takes that path
        got = answer_item(state, PRE_ADD, Draws(at + p / 2))
        assert (got.how, got.correct) == (how, correct)
        at += p
    assert at == pytest.approx(1.0, abs=1e-12)


def test_a_fired_misconception_is_shown_and_voiced_and_another_answer_shows_none() -> None:
    state = student(mastery={ADD: 0.0}, guess=0.0)
    state.status["add_across"] = "active"
    got = answer_item(state, PRE_ADD, Draws(0.5))  # P(right) = 0: the misconception's path is [0, 0.8)
    assert (got.how, got.answer, got.correct, got.misconception) == ("misconception", "2/5", False, "add_across")
    assert state.last_shown == "add_across" and "add_across" in state.voiced
    got = answer_item(state, PRE_ADD, Draws(0.9))
    assert got.how == "guess" and got.misconception is None and state.last_shown is None


@pytest.mark.parametrize("setup", ["nothing", "memorised", "misconception", "mastered", "choice"])
def test_an_item_takes_three_draws_whatever_the_answer(setup: str) -> None:
    state = student(mastery={ADD: 1.0 if setup == "mastered" else 0.2})
    if setup == "memorised":
        state.memorised["pre_add"] = 1
    if setup == "misconception":
        state.status["add_across"] = "active"
    item = PRE_COMPARE if setup == "choice" else PRE_ADD
    for u in (0.0, 0.3, 0.6, 0.999):
        rng = Draws(u)
        answer_item(state, item, rng)
        assert rng.calls == 3


def test_a_wrong_choice_is_another_letter() -> None:
    assert [_wrong_answer(PRE_COMPARE, Draws(ints=(i,))) for i in (0, 1)] == ["A", "C"]


def test_a_wrong_free_answer_is_a_known_wrong_one_with_probability_half_else_a_near_miss() -> None:
    assert _wrong_answer(PRE_ADD, Draws(0.5 - EPS)) == "2/5"
    assert _wrong_answer(PRE_ADD, Draws(0.5, ints=(1,))) == "6/6"


@pytest.mark.parametrize(("item", "v", "w", "answer"), [
    (PRE_COMPARE, 0.49, 0.0, "A"), (PRE_COMPARE, 0.5, 0.0, "C"),  # the letters other than B, by v
    (PRE_ADD, 0.49, 0.0, "2/5"),  # v under 0.5: the known wrong answer
    (PRE_ADD, 0.5, 0.49, "6/6"), (PRE_ADD, 0.5, 0.5, "7/6"),  # else nudged by 1 + floor(2 w)
])
def test_a_wrong_answer_is_made_from_the_items_second_and_third_uniforms(item, v: float, w: float,
                                                                         answer: str) -> None:
    state = student(mastery={EQ: 0.0, ADD: 0.0}, guess=0.0)
    got = answer_item(state, item, Draws(0.999, v, w))
    assert (got.correct, got.answer) == (False, answer)


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
    begin_posttest(state, Draws(draw))  # add_across is the task's first misconception: the first draw
    assert state.status["add_across"] == after


@pytest.mark.parametrize("statuses", [{}, {"add_across": "suppressed"}, {"bigger_denominator": "suppressed",
                                                                          "add_across": "repaired"}])
def test_relapse_takes_one_draw_per_task_misconception_in_the_tasks_order(statuses: dict) -> None:
    state = student(relapse=0.35)
    state.status.update(statuses)
    rng = Draws(0.9, 0.0)  # add_across holds, bigger_denominator relapses if suppressed
    begin_posttest(state, rng)
    assert rng.calls == len(TASK.misconceptions) == 2
    assert state.status.get("bigger_denominator") == ("active" if "bigger_denominator" in statuses else None)


def _post_test(state, seed: int) -> list[bool]:
    rng = np.random.default_rng(seed)
    begin_posttest(state, rng)
    return [answer_item(state, item, rng).correct for item in TASK.posttest * 4]


def test_a_better_taught_student_is_right_wherever_a_worse_one_is_on_the_same_draws() -> None:
    """Common random numbers: on one stream, an item is answered right exactly when its uniform is under P(right),
    so a student whose every P(right) is higher is right on a superset of the items, draw for draw."""
    for seed in range(200):
        worse = student(guess=0.1)
        worse.status["add_across"] = "active"
        better = student(guess=0.1, mastery={EQ: 0.8, ADD: 0.7, MIX: 0.6})
        better.status["add_across"] = "repaired"
        w, b = _post_test(worse, seed), _post_test(better, seed)
        assert all(bi or not wi for wi, bi in zip(w, b, strict=True)), seed


def test_each_dialogue_turn_draws_from_its_own_point_whatever_the_turns_before_drew() -> None:
    """The dialogue's common random numbers: turn n's first uniforms are the same however many turn n - 1 took."""
    from tutorzoo.agents.student import SimulatedStudent

    student_ = SimulatedStudent("all_round_partly_wrong")
    student_._seed_streams([7, 1])
    first = student_._rng_of_turn(3).random(4)
    student_._rng_of_turn(2).random(50)  # another tutor's turn 2 made the student draw more
    assert (student_._rng_of_turn(3).random(4) == first).all()
    assert not (student_._rng_of_turn(4).random(4) == first).any()
    other = SimulatedStudent("all_round_partly_wrong")
    other._seed_streams([7, 1])
    assert (other._rng_of_turn(3).random(4) == first).all()
