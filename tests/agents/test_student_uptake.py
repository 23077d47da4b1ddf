"""Issue 26's uptake rules of the student model, one respond step each (agents/student/model.py, *Uptake*):
a turn saturates, a long turn tires, refutations need the idea engaged now, exposition weakens a held wrong rule."""

from __future__ import annotations

import numpy as np
import pytest

from tests.agents.test_mut_student_respond import ADD, EQ, MIX, NOTHING_HAPPENS, Draws, said, student
from tutorzoo.agents.student.model import answer_item, respond
from tutorzoo.envs.content import Claim

EPS = 1e-9


def _mix_gain(before_mix: int) -> float:
    """MIX's step when its one true statement comes after ``before_mix`` true statements on ADD."""
    state = student()
    l0 = state.mastery[MIX]
    claims = [Claim(ADD, "true")] * before_mix + [Claim(MIX, "true")]
    respond(state, said(*claims), NOTHING_HAPPENS)
    return state.mastery[MIX] - l0


def test_material_past_the_first_two_ideas_teaches_little() -> None:
    early, late = _mix_gain(1), _mix_gain(6)
    assert early > 0
    assert late == pytest.approx(early * 0.5 ** 5, rel=1e-9)  # position 7: half the attention of the one before


def test_the_primary_component_is_not_diluted_when_it_comes_first() -> None:
    short, padded = student(), student()
    respond(short, said(Claim(ADD, "true"), Claim(ADD, "true")), NOTHING_HAPPENS)
    respond(padded, said(Claim(ADD, "true"), Claim(ADD, "true"), *[Claim(EQ, "true")] * 1), NOTHING_HAPPENS)
    assert padded.mastery[ADD] == pytest.approx(short.mastery[ADD], abs=1e-12)  # more material adds nothing to it


@pytest.mark.parametrize(("chars", "cost"), [(0, 0.0), (900, 0.0), (1650, 0.075), (2400, 0.15), (9000, 0.15)])
def test_a_long_turn_costs_engagement(chars: int, cost: float) -> None:
    state = student(engagement=0.8)
    respond(state, said(Claim(ADD, "true")), NOTHING_HAPPENS, chars=chars)
    assert state.engagement == pytest.approx(0.8 - cost, abs=1e-12)


def test_refuting_many_ideas_at_once_splits_the_attention() -> None:
    # four ideas refuted: each repairs 1/4 as often, the one the student just showed too (add_across):
    # 0.85 x 0.25 x (0.6 + 0.4 e)
    p = 0.85 * 0.25 * (0.6 + 0.4 * 0.5)
    claim = Claim(ADD, "true", refutes=("add_across", "bigger_denominator", "other_a", "other_b"))
    for draw, expected in ((p - EPS, "repaired"), (p + EPS, "active")):
        state = student(engagement=0.5)
        state.status["add_across"] = "active"
        state.voiced.add("add_across")
        state.said.add("add_across")
        state.last_shown = "add_across"
        respond(state, said(claim), Draws(0.999, draw))
        assert state.status["add_across"] == expected


def test_a_second_refutation_beside_the_answer_to_a_showing_halves_it() -> None:
    """Refuting what the student just showed and another idea in the same turn (a spray of every counterexample)
    is no focused answer to the student: 0.85 x 1/2 x (0.6 + 0.4 e), against 0.85 x (0.6 + 0.4 e) alone."""
    for refutes, p in ((("add_across",), 0.85 * 0.8), (("add_across", "bigger_denominator"), 0.85 * 0.5 * 0.8)):
        for draw, expected in ((p - EPS, "repaired"), (p + EPS, "active")):
            state = student(engagement=0.5)
            state.status["add_across"] = "active"
            state.voiced.add("add_across")
            state.last_shown = "add_across"
            respond(state, said(Claim(ADD, "true", refutes=refutes)), Draws(0.999, draw))
            assert state.status["add_across"] == expected, (refutes, draw)


def test_unsolicited_refutations_weaken_with_each_repeat() -> None:
    """The pre-test showed the idea; the tutor refutes it every turn unasked: 0.3, then 0.15 x 0.5, 0.15 x 0.25."""
    state = student(engagement=1.0)
    state.status["add_across"] = "active"
    state.voiced.add("add_across")  # a pre-test answer
    turn = said(Claim(ADD, "true", refutes=("add_across",)))
    for p in (0.3, 0.15 * 0.5, 0.15 * 0.25):
        respond(state, turn, Draws(0.999, p + EPS))  # just over: not repaired, and the next one is weaker
        assert state.status["add_across"] == "active"
    twin = student(engagement=1.0)
    twin.status["add_across"] = "active"
    twin.voiced.add("add_across")
    twin.unsolicited["add_across"] = 3
    respond(twin, turn, Draws(0.999, 0.15 * 0.125 - EPS))
    assert twin.status["add_across"] == "repaired"


def _fires_on_test(state) -> float:
    from tests.student_fixtures import TASK

    item = next(i for i in TASK.posttest if "add_across" in i.misconception_answers)
    fired = 0
    for seed in range(4000):
        s = state.__class__(**{f: getattr(state, f) for f in state.__slots__})
        s.strength = dict(state.strength)
        s.memorised = {}
        fired += answer_item(s, item, np.random.default_rng(seed)).how == "misconception"
    return fired / 4000


def test_exposition_weakens_a_held_wrong_rule_and_practice_consolidates_it() -> None:
    state = student(engagement=1.0)
    state.status["add_across"] = "active"
    base = _fires_on_test(state)
    respond(state, said(Claim(ADD, "true"), Claim(ADD, "true")), NOTHING_HAPPENS)  # a worked example on ADD
    assert state.status["add_across"] == "active"  # still held: only a counterexample repairs
    assert state.strength["add_across"] == pytest.approx(1 - 0.8 * 0.15, abs=1e-12)  # 15% of the cut at once
    again = state.strength["add_across"]
    respond(state, said(Claim(ADD, "true"), Claim(ADD, "true")), NOTHING_HAPPENS)
    assert state.strength["add_across"] == pytest.approx(again, abs=1e-12)  # the same exposition adds nothing
    respond(state, said(Claim(ADD, "true", question=True, demand="apply")), NOTHING_HAPPENS)  # works a question
    assert state.strength["add_across"] == pytest.approx(0.88 * (1 - 0.8 * 0.85), abs=1e-12)
    after = _fires_on_test(state)
    assert after < 0.7 * base, (base, after)


def test_exposition_beside_a_falsehood_weakens_nothing() -> None:
    state = student(engagement=1.0)
    state.status["add_across"] = "active"
    respond(state, said(Claim(ADD, "true"), Claim(ADD, "true"), Claim(ADD, "false")), NOTHING_HAPPENS)
    assert state.strength.get("add_across", 1.0) == 1.0


def _right_answers(explained_first: bool) -> int:
    """Right answers out of 400 to a question on ADD (no hint beside it), asked right after an exposition of ADD
    or cold."""
    right = 0
    for seed in range(400):
        state = student(engagement=1.0)
        if explained_first:
            respond(state, said(Claim(ADD, "true"), Claim(ADD, "true")), NOTHING_HAPPENS)
        state.mastery[ADD] = 0.3
        plan = respond(state, said(Claim(ADD, "true", question=True, demand="apply")), np.random.default_rng(seed))
        right += plan.kind in ("correct", "higher_order")
    return right


def test_a_question_right_after_an_example_is_answered_more_often() -> None:
    """Example-problem pairs (Trafton & Reiser, 1993): the fresh example helps as a hint would."""
    cold, paired = _right_answers(False), _right_answers(True)
    assert paired > cold * 1.3, (cold, paired)
