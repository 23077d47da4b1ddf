"""The student model's documented equations, pinned to exact values (agents/student/model.py docstring).

Each test sets a state by hand, plays one step with a fixed generator, and compares with the value the
docstring's equation gives, computed here with literal numbers (never the module's constants): a constant
changed by 10%, a dropped factor or a flipped comparison changes these values.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.student_fixtures import TASK
from tutorzoo.agents.student import get_persona
from tutorzoo.agents.student.model import answer_item, begin_posttest, init_state, respond
from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.content import ContentReader


def _state(prior: float = 0.3, **persona_updates):
    persona = get_persona("all_round_partly_wrong").model_copy(update={
        "misconception_rate": 0.0, "distractibility": 0.0, "engagement": 1.0, "engagement_decay": 0.0,
        "explanation_uptake": 1.0, "strategy_preference": "none", "learning_speed": 1.0, "prior_knowledge": prior,
        **persona_updates,
    })
    state = init_state(TASK, persona, np.random.default_rng(0))
    state.bloom = 1
    return state


def test_initial_mastery_follows_the_documented_equation() -> None:
    persona = get_persona("all_round_partly_wrong")
    state = init_state(TASK, persona, np.random.default_rng(3))
    eps = np.random.default_rng(3).normal(0.0, 0.05, size=len(TASK.knowledge_components))
    base = {k.id: min(0.99, max(0.01, persona.prior_knowledge * (1 - 0.5 * k.difficulty) + e))
            for k, e in zip(TASK.knowledge_components, eps, strict=True)}
    for k in TASK.knowledge_components:
        ready = min((base[p] * (0.6 + 0.4 * 1.0) if not TASK.kc(p).prerequisites else state.mastery[p]
                     for p in k.prerequisites), default=1.0)
        assert state.mastery[k.id] == pytest.approx(base[k.id] * (0.6 + 0.4 * ready), abs=1e-12)
        # learn rate T_k = 0.35 * speed * (1 - 0.4 d_k)
        assert state.learn[k.id] == pytest.approx(0.35 * persona.learning_speed * (1 - 0.4 * k.difficulty))


def test_one_explanation_step_is_the_documented_bkt_transition() -> None:
    state = _state()
    kc = "equivalent_fractions"  # no prerequisites
    lk, t = state.mastery[kc], state.learn[kc]
    act = TutorAct(intent="introduce_concept", strategy=None, guidance_level="L2", target_kc=kc)
    respond(state, act, np.random.default_rng(1))
    # w = 0.85 (1 - 0.8 L) uptake; zone within (demand L2 = 1 = bloom); engagement 1 -> 0.2 + 0.8 e = 1;
    # rho 1, phi 0.6 + 0.4 r (r = 1), mu 1, coherence 1, trust 1
    step = min(0.95, t * 0.85 * (1 - 0.8 * lk) * 1.0 * 1.0 * 1.0 * 1.0)
    assert state.mastery[kc] == pytest.approx(lk + (1 - lk) * step, abs=1e-12)


def test_a_repeated_move_keeps_085_of_its_weight_and_costs_engagement() -> None:
    state = _state()
    kc = "equivalent_fractions"
    act = TutorAct(intent="introduce_concept", strategy=None, guidance_level="L2", target_kc=kc)
    respond(state, act, np.random.default_rng(1))
    lk, t = state.mastery[kc], state.learn[kc]
    e_before = state.engagement
    respond(state, act, np.random.default_rng(1))
    e = e_before - 0.01 * 1  # monotony: 0.01 per earlier repeat (before the learning step reads engagement)
    step = min(0.95, t * 0.85 * (1 - 0.8 * lk) * 0.85 * (0.2 + 0.8 * e))
    assert state.engagement == pytest.approx(e, abs=1e-12)
    assert state.mastery[kc] == pytest.approx(lk + (1 - lk) * step, abs=1e-12)


def test_a_false_statement_takes_a_fifth_of_mastery_and_a_fifth_of_trust() -> None:
    state = _state()
    reader = ContentReader(TASK)
    kc = "fraction_addition"
    lk = state.mastery[kc]
    reading = reader.read("1/2 + 1/3 = 2/5.")
    assert reading.false_statements() == 1 and reading.claims[0].kc == kc
    assert reading.affirmed == ("add_across",)
    state.status["add_across"] = "repaired"  # a held (even repaired) idea stated as the rule is active at once
    act = TutorAct(intent="introduce_concept", strategy=None, guidance_level="L2", target_kc=kc, content=reading)
    respond(state, act, np.random.default_rng(1))
    assert state.trust == pytest.approx(0.8)
    assert state.mastery[kc] == pytest.approx(lk * 0.8, abs=1e-12)  # and nothing true was said: no learning
    assert state.status["add_across"] == "active"


def test_a_stated_wrong_rule_is_adopted_with_06_times_1_minus_l() -> None:
    reading = ContentReader(TASK).read("1/2 + 1/3 = 2/5.")
    act = TutorAct(intent="introduce_concept", strategy=None, guidance_level="L2", target_kc="fraction_addition",
                   content=reading)
    adopted = 0
    for seed in range(3000):
        state = _state()
        state.mastery["fraction_addition"] = 0.5  # L before the false statement: p = 0.6 (1 - 0.5) = 0.3
        respond(state, act, np.random.default_rng(seed))
        adopted += state.status.get("add_across") == "active"
    assert adopted / 3000 == pytest.approx(0.6 * (1 - 0.5), abs=0.03)


def test_trust_has_a_floor_of_three_tenths() -> None:
    state = _state()
    reading = ContentReader(TASK).read("1/2 + 1/3 = 2/5. 1/2 + 1/4 = 2/6. 1/3 + 1/4 = 2/7.")
    act = TutorAct(intent="introduce_concept", strategy=None, guidance_level="L2", target_kc=None, content=reading)
    for _ in range(4):
        respond(state, act, np.random.default_rng(1))
    assert state.trust == pytest.approx(0.3)


@pytest.mark.parametrize("mastery,expected", [(0.0, 0.8), (0.5, 0.8 * (1 - 0.4 * 0.5)), (1.0, 0.8 * 0.6)])
def test_an_active_misconception_fires_on_the_test_with_08_times_1_minus_04_l(mastery, expected) -> None:
    state = _state()
    state.status["add_across"] = "active"
    state.mastery["fraction_addition"] = mastery
    item = TASK.posttest[0]
    fired = sum(answer_item(state, item, np.random.default_rng(s)).how == "misconception" for s in range(4000))
    assert fired / 4000 == pytest.approx(expected, abs=0.025)


def test_forgetting_keeps_prior_knowledge_and_loses_f_of_the_session() -> None:
    state = _state(forget=0.1)
    kc = "mixing"
    l0 = state.initial[kc]
    state.mastery[kc] = l0 + 0.3
    begin_posttest(state, np.random.default_rng(0))
    assert state.mastery[kc] == pytest.approx(l0 + 0.3 * (1 - 0.1), abs=1e-12)


def test_counterexample_timing_085_right_after_03_earlier_015_blind() -> None:
    """0.85 right after the student showed the idea, 0.3 if it said it earlier in the dialogue, 0.15 otherwise; a
    pre-test answer that showed it counts as said only for the first refutation. Each earlier refutation of the
    same idea multiplies the chance by 0.75 when it answers a showing and by 0.5 when it is unsolicited."""
    reader = ContentReader(TASK)
    reading = reader.read("1/2 + 1/2 = 1, not 2/4.")
    assert "add_across" in reading.refuted
    act = TutorAct(intent="guide_reasoning", strategy="scenario_question", guidance_level="L2",
                   target_kc="fraction_addition", content=reading)
    cases = {  # when: (shown now, said in the dialogue, shown on the pre-test, earlier refutations)
        "just_now": (True, True, True, 0), "just_now_again": (True, True, True, 2),
        "earlier": (False, True, True, 0), "earlier_again": (False, True, True, 1),
        "pretest_only": (False, False, True, 0), "pretest_only_again": (False, False, True, 1),
        "blind": (False, False, False, 0),
    }
    rates = {}
    for when, (now, said, pretest, heard) in cases.items():
        repaired = 0
        for seed in range(3000):
            state = _state()
            state.status["add_across"] = "active"
            if now:
                state.last_shown = "add_across"
            if said:
                state.said.add("add_across")
            if pretest:
                state.voiced.add("add_across")
            if heard:
                state.unsolicited["add_across"] = heard
            respond(state, act, np.random.default_rng(seed))
            repaired += state.status["add_across"] == "repaired"
        rates[when] = repaired / 3000
    # p = base * (0.6 + 0.4 e), engagement 1
    assert rates["just_now"] == pytest.approx(0.85, abs=0.03)
    assert rates["just_now_again"] == pytest.approx(0.85 * 0.75 ** 2, abs=0.03)
    assert rates["earlier"] == pytest.approx(0.3, abs=0.03)
    assert rates["earlier_again"] == pytest.approx(0.15, abs=0.025)
    assert rates["pretest_only"] == pytest.approx(0.3, abs=0.03)
    assert rates["pretest_only_again"] == pytest.approx(0.15 * 0.5, abs=0.02)
    assert rates["blind"] == pytest.approx(0.15, abs=0.025)
