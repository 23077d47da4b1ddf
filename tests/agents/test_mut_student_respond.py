"""One ``respond`` step of the student model, exact: each case sets the state, scripts the random draws and
compares with the value the module docstring's equations give, written here with literal numbers (never the
module's constants), so a changed constant, a dropped factor or a flipped boundary changes a result.

The draws are scripted (:class:`Draws`) rather than seeded: a draw just under a probability makes the event
happen and one just over does not, which pins the probability itself; a draw of exactly 0 pins ``<`` against
``<=`` (a probability-0 event never happens). Learn rates are set by hand (``T = 0.3``), so these tests pin the
update rules, not the learn-rate constant (tests/agents/test_student_equations.py does that).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.student_fixtures import TASK
from tutorzoo.agents.student import get_persona
from tutorzoo.agents.student.model import StudentState, init_state, respond
from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.content import Claim, Reading

EQ, ADD, MIX = "equivalent_fractions", "fraction_addition", "mixing"  # ADD needs EQ; ADD <-> MIX linked
T = 0.3
EPS = 1e-9


class Draws:
    """Stands in for ``numpy.random.Generator``: ``random()`` returns the given draws in order, then ``rest``."""

    def __init__(self, *draws: float, rest: float = 0.999) -> None:
        self.draws, self.rest = list(draws), rest

    def random(self) -> float:
        return self.draws.pop(0) if self.draws else self.rest

    def integers(self, *args: object) -> int:
        return 0


NOTHING_HAPPENS = Draws()  # every draw 0.999: no chance event (irrelevance, firing, repair, success) happens


def student(bloom: int = 1, mastery: dict[str, float] | None = None, learn: float = T,
            **persona: object) -> StudentState:
    """A student with known parameters: mastery EQ 0.5, ADD 0.4, MIX 0.3, T = 0.3 everywhere, engagement 1,
    nothing held, Bloom level 1 ("understand")."""
    p = get_persona("all_round_partly_wrong").model_copy(update={
        "misconception_rate": 0.0, "distractibility": 0.0, "engagement": 1.0, "engagement_decay": 0.0,
        "explanation_uptake": 1.0, "strategy_preference": "none", "learning_speed": 1.0, "anxiety": 0.0,
        "slip": 0.1, "guess": 0.1, "misread_rate": 0.0, "curiosity": 0.0, "help_seeking": 0.0,
        "metacognition": 0.0, "confidence": 0.5, **persona,
    })
    state = init_state(TASK, p, np.random.default_rng(0))
    state.mastery.update({EQ: 0.5, ADD: 0.4, MIX: 0.3, **(mastery or {})})
    state.initial = dict(state.mastery)
    state.learn = dict.fromkeys(state.mastery, learn)
    state.bloom = bloom
    return state


def act(intent: str = "introduce_concept", strategy: str | None = None, level: str = "L2", kc: str | None = EQ,
        **kw: object) -> TutorAct:
    return TutorAct(intent=intent, strategy=strategy, guidance_level=level, target_kc=kc, **kw)  # type: ignore[arg-type]


def question(strategy: str | None = "follow_up_question", level: str = "L2", kc: str | None = EQ,
             **kw: object) -> TutorAct:
    return act("guide_reasoning", strategy, level, kc, is_question=True, **kw)


def said(*claims: Claim, intent: str = "introduce_concept", strategy: str | None = None, level: str = "L2",
         **kw: object) -> TutorAct:
    """An act whose content is the given claims (as the content reader would return them)."""
    return act(intent, strategy, level, None, content=Reading(claims=claims), **kw)


def bkt(lk: float, *factors: float) -> float:
    """The documented update ``L + (1 - L) min(0.95, T w ...)`` with T = 0.3."""
    return lk + (1 - lk) * min(0.95, T * math.prod(factors))


# ------------------------------------------------------------------ the learning step, one factor at a time
# (name, student(...) arguments, act, kc, expected mastery): w = 0.85 (1 - 0.8 L) uptake for an explanation,
# z 1 within / 0.15 above / 0.3 below, (0.2 + 0.8 e), rho, phi = 0.6 + 0.4 r for telling, mu, coherence, trust
EXPLAIN_CASES = [
    ("novice_within", {}, act(), EQ, bkt(0.5, 0.85 * (1 - 0.8 * 0.5))),
    ("uptake_and_engagement", {"explanation_uptake": 0.9, "engagement": 0.55, "engagement_decay": 0.05}, act(), EQ,
     bkt(0.5, 0.85 * (1 - 0.8 * 0.5) * 0.9, 0.2 + 0.8 * 0.5)),
    ("prerequisite_readiness", {}, act(kc=ADD), ADD, bkt(0.4, 0.85 * (1 - 0.8 * 0.4), 0.6 + 0.4 * 0.5)),
    ("above_the_zone", {}, act(level="L3"), EQ, bkt(0.5, 0.85 * (1 - 0.8 * 0.5), 0.15)),
    ("stretch_learns_fully", {"bloom": 2}, act(level="L3"), EQ, bkt(0.5, 0.85 * (1 - 0.8 * 0.5))),
    # below: boredom 0.15 max(L, b/5) off engagement first (MIX: L 0.3 < 2/5), then z 0.3
    ("below_the_zone", {"bloom": 2}, act(level="L1", kc=MIX), MIX,
     bkt(0.3, 0.85 * (1 - 0.8 * 0.3), 0.3, 0.2 + 0.8 * (1 - 0.15 * 0.4))),
    ("below_bored_by_mastery", {"bloom": 2, "mastery": {EQ: 0.7}}, act(level="L1"), EQ,
     bkt(0.7, 0.85 * (1 - 0.8 * 0.7), 0.3, 0.2 + 0.8 * (1 - 0.15 * 0.7))),
    ("one_level_below_is_within", {"bloom": 1}, act(level="L1"), EQ, bkt(0.5, 0.85 * (1 - 0.8 * 0.5))),
    ("step_capped_at_095", {"mastery": {EQ: 0.0}, "learn": 2.0}, act(), EQ, 0.95),  # T w = 2 * 0.85 > 0.95
    ("prefers_examples", {"strategy_preference": "examples"}, act(), EQ, bkt(0.5, 0.85 * 0.6, 1.15)),
    ("prefers_examples_contextualized", {"strategy_preference": "examples"}, act(strategy="contextualize"), EQ,
     bkt(0.5, 0.85 * 0.6, 1.15)),
    ("prefers_examples_not_analogies", {"strategy_preference": "examples"}, act(strategy="analogy"), EQ,
     bkt(0.5, 0.85 * 0.6)),
    ("prefers_analogies", {"strategy_preference": "analogy"}, act(strategy="analogy"), EQ,
     bkt(0.5, 0.85 * 0.6, 1.15)),
    ("prefers_analogies_not_plain", {"strategy_preference": "analogy"}, act(), EQ, bkt(0.5, 0.85 * 0.6)),
    ("prefers_questions_not_telling", {"strategy_preference": "questions"}, act(), EQ, bkt(0.5, 0.85 * 0.6)),
    ("relies_on_the_teacher", {"strategy_preference": "rely_on_teacher"}, act(), EQ, bkt(0.5, 0.85 * 0.6, 1.2)),
    ("transfer_on_a_base", {"mastery": {ADD: 0.5}},
     act("trigger_transfer", kc=ADD, disciplines=("math", "chemistry")), ADD,
     bkt(0.5, 0.85 * (1 - 0.8 * 0.5), 1.5, 0.6 + 0.4 * 0.5)),
    ("transfer_too_early", {"mastery": {ADD: 0.49}},
     act("trigger_transfer", kc=ADD, disciplines=("math", "chemistry")), ADD,
     bkt(0.49, 0.85 * (1 - 0.8 * 0.49), 0.6, 0.6 + 0.4 * 0.5)),
    ("transfer_flag_without_the_intent", {"mastery": {ADD: 0.5}},
     act(kc=ADD, disciplines=("math", "chemistry"), discipline_transfer=True), ADD,
     bkt(0.5, 0.85 * (1 - 0.8 * 0.5), 1.5, 0.6 + 0.4 * 0.5)),
    ("transfer_to_an_unlinked_discipline", {"mastery": {ADD: 0.5}},
     act("trigger_transfer", kc=ADD, disciplines=("math", "physics")), ADD,
     bkt(0.5, 0.85 * (1 - 0.8 * 0.5), 0.6 + 0.4 * 0.5)),
    ("reveal_weighs_01", {}, act(reveals_answer=True), EQ, bkt(0.5, 0.1)),
    ("reveal_to_a_teacher_reliant_student", {"strategy_preference": "rely_on_teacher"}, act(reveals_answer=True),
     EQ, bkt(0.5, 0.1)),
]


@pytest.mark.parametrize(("overrides", "tutor", "kc", "expected"),
                         [pytest.param(*c[1:], id=c[0]) for c in EXPLAIN_CASES])
def test_one_telling_step(overrides: dict, tutor: TutorAct, kc: str, expected: float) -> None:
    state = student(**overrides)
    respond(state, tutor, NOTHING_HAPPENS)
    assert state.mastery[kc] == pytest.approx(expected, abs=1e-12)


def test_hopping_to_another_component_costs_coherence() -> None:
    state = student()
    respond(state, act(kc=MIX), NOTHING_HAPPENS)
    respond(state, act(strategy="contextualize", kc=EQ), NOTHING_HAPPENS)  # another move: no repeat decay
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 0.85 * 0.6, 0.6), abs=1e-12)
    respond(state, act(strategy="analogy", kc=EQ), NOTHING_HAPPENS)  # staying on EQ: coherence 1
    lk = bkt(0.5, 0.85 * 0.6, 0.6)
    assert state.mastery[EQ] == pytest.approx(bkt(lk, 0.85 * (1 - 0.8 * lk)), abs=1e-12)


def test_transfer_on_a_base_teaches_the_linked_component() -> None:
    state = student(mastery={ADD: 0.5})
    respond(state, act("trigger_transfer", kc=ADD, disciplines=("math", "chemistry")), NOTHING_HAPPENS)
    assert state.mastery[MIX] == pytest.approx(0.3 + 0.7 * min(0.95, 0.8 * T), abs=1e-12)
    early = student(mastery={ADD: 0.49})
    respond(early, act("trigger_transfer", kc=ADD, disciplines=("math", "chemistry")), NOTHING_HAPPENS)
    assert early.mastery[MIX] == 0.3


def test_the_linked_step_is_capped() -> None:
    state = student(mastery={ADD: 0.5})
    state.learn[MIX] = 2.0
    respond(state, act("trigger_transfer", kc=ADD, disciplines=("math", "chemistry")), NOTHING_HAPPENS)
    assert state.mastery[MIX] == pytest.approx(0.3 + 0.7 * 0.95, abs=1e-12)


@pytest.mark.parametrize(("repeats", "weight", "cost"), [
    pytest.param(1, 0.85, 0.01, id="once"),
    pytest.param(3, 0.85 ** 3, 0.03, id="three"),
    pytest.param(4, 0.85 ** 4, 0.04, id="four"),
    pytest.param(5, 0.5, 0.04, id="five-floor-and-cost-cap"),  # 0.85^5 = 0.44 < 0.5
])
def test_a_repeated_move_decays_to_half_and_wears_engagement(repeats: int, weight: float, cost: float) -> None:
    state = student()
    for _ in range(repeats):
        respond(state, act(kc=MIX), NOTHING_HAPPENS)
    lk, e = state.mastery[MIX], state.engagement
    respond(state, act(kc=MIX), NOTHING_HAPPENS)
    assert state.engagement == pytest.approx(e - cost, abs=1e-12)
    assert state.mastery[MIX] == pytest.approx(
        bkt(lk, 0.85 * (1 - 0.8 * lk), weight, 0.2 + 0.8 * (e - cost)), abs=1e-12)


def test_an_act_taken_at_its_labels_is_one_true_statement() -> None:
    # a read turn's move is what it does: a second turn with one true statement is the first one's repeat (whatever
    # cue words the two use), one with two true statements (a worked example) is not
    state = student()
    respond(state, said(Claim(MIX, "true")), NOTHING_HAPPENS)
    lk = state.mastery[MIX]
    respond(state, said(Claim(MIX, "true"), strategy="analogy"), NOTHING_HAPPENS)
    assert state.mastery[MIX] == pytest.approx(bkt(lk, 0.85 * (1 - 0.8 * lk), 0.85, 0.2 + 0.8 * 0.99), abs=1e-12)
    other = student()
    respond(other, said(Claim(MIX, "true")), NOTHING_HAPPENS)
    respond(other, said(Claim(MIX, "true"), Claim(MIX, "true")), NOTHING_HAPPENS)
    assert other.mastery[MIX] == pytest.approx(bkt(lk, 0.85 * (1 - 0.8 * lk), 1.6), abs=1e-12)


def test_monotony_never_takes_engagement_below_002() -> None:
    state = student(engagement=0.03)
    for _ in range(3):
        respond(state, act(kc=MIX), NOTHING_HAPPENS)
    assert state.engagement == pytest.approx(0.02, abs=1e-12)


# ------------------------------------------------------------------ questions
S0 = (0.5 * (1 - (0.1 + 0.15 * 0.2)) + 0.5 * 0.1) * (1 - 0.05)  # L (1 - S') + (1 - L) G, times (1 - m); EQ
# anxiety 0.2 -> S' = 0.1 + 0.15 * 0.2; above the zone anxiety first rises by 0.1 (1 - 0.2) = 0.08
S_ABOVE = (0.5 * (1 - (0.1 + 0.15 * 0.28)) + 0.5 * 0.1) * (1 - 0.05) * 0.25
SUCCESS_CASES = [
    ("within", 1, question(), S0),
    ("stretch", 2, question(level="L3"), S0 * 0.8),
    ("above", 1, question(level="L3"), S_ABOVE),
    ("below", 2, question(level="L1"), S0),
    ("scaffold", 1, question("hint"), S0 + 0.4 * (1 - S0)),
    ("scaffold_at_l1", 1, question("break_down", level="L1"), S0 + 0.4 * (1 - S0)),
    ("answer_given_away", 1, question(reveals_answer=True), S0 + 0.5 * (1 - S0)),
]


@pytest.mark.parametrize(("bloom", "tutor", "p"), [pytest.param(*c[1:], id=c[0]) for c in SUCCESS_CASES])
def test_a_question_succeeds_with_the_documented_probability(bloom: int, tutor: TutorAct, p: float) -> None:
    kinds = {}
    for side, draw in (("under", p - EPS), ("over", p + EPS)):
        state = student(bloom=bloom, anxiety=0.2, misread_rate=0.05)
        kinds[side] = respond(state, tutor, Draws(0.999, draw)).kind  # not irrelevant, then the attempt
    assert kinds["under"] in ("correct", "higher_order")
    assert kinds["over"] in ("wrong", "confused", "ask_hint")


def test_a_success_teaches_twice_and_lifts_engagement_and_confidence() -> None:
    state = student(engagement=0.5)
    plan = respond(state, question(), Draws(0.999, 0.0))
    assert (plan.kind, plan.cognition_state, plan.bloom) == ("correct", "clear_understanding", 1)
    assert state.engagement == pytest.approx(0.52, abs=1e-12)
    assert state.confidence == pytest.approx(0.5 + 0.05 * 0.5, abs=1e-12)
    assert state.bloom == 1  # the demand (L2: 1) is not above the student's level
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 2.0, 0.2 + 0.8 * 0.52), abs=1e-12)


def test_a_success_caps_engagement_at_one() -> None:
    state = student(engagement=0.99)
    respond(state, question(), Draws(0.999, 0.0))
    assert state.engagement == 1.0
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 2.0), abs=1e-12)


def test_a_scaffold_lowers_the_demand_by_one() -> None:
    # a hint at L2 (demand 1 -> 0) to a student at Bloom 2: two below, so bored (0.15 max(0.5, 2/5)) and z 0.3
    state = student(bloom=2)
    respond(state, question("hint"), NOTHING_HAPPENS)
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 0.5, 0.3, 0.2 + 0.8 * (1 - 0.15 * 0.5)), abs=1e-12)


@pytest.mark.parametrize(("tutor", "kc", "expected"), [
    pytest.param(question(), EQ, bkt(0.5, 0.25), id="failure"),
    pytest.param(question("hint"), EQ, bkt(0.5, 0.5), id="failure-inside-a-scaffold"),
    pytest.param(question("hint", level="L1"), EQ, bkt(0.5, 0.5), id="scaffold-at-l1-stays-within"),
    pytest.param(question(kc=ADD), ADD, bkt(0.4, 0.25, 0.3 + 0.7 * 0.5), id="question-readiness"),
    pytest.param(question(level="L3"), EQ, bkt(0.5, 0.25, 0.15), id="above"),
    pytest.param(act("check_understanding", level="L2"), EQ, bkt(0.5, 0.25), id="generative-intent"),
    pytest.param(act(strategy="scenario_question"), EQ, bkt(0.5, 0.25), id="generative-strategy"),
])
def test_a_failed_attempt_teaches_a_quarter(tutor: TutorAct, kc: str, expected: float) -> None:
    state = student()
    plan = respond(state, tutor, NOTHING_HAPPENS)
    assert plan.kind in ("wrong", "confused")
    assert state.confidence == pytest.approx(0.5 * 0.95 * (0.95 if tutor.guidance_level == "L3" else 1), abs=1e-12)
    assert state.mastery[kc] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("preference", "expected"), [
    pytest.param("questions", 1.15, id="questions"), pytest.param("rely_on_teacher", 0.8, id="teacher-reliant"),
    pytest.param("examples", 1.0, id="examples"), pytest.param("analogy", 1.0, id="analogy"),
])
def test_preference_on_a_question(preference: str, expected: float) -> None:
    state = student(strategy_preference=preference)
    respond(state, question(), NOTHING_HAPPENS)
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 0.25, expected), abs=1e-12)


def test_a_solved_demand_above_the_level_raises_it_and_a_curious_student_extends() -> None:
    # L3 at Bloom 2: stretch; curiosity 0.4 (0.5 + 0.5 e) with e = 0.5 is 0.3
    for draw, kind, bloom in ((0.3 - EPS, "higher_order", 4), (0.3 + EPS, "correct", 3)):
        state = student(bloom=2, curiosity=0.4, engagement=0.5)
        plan = respond(state, question(level="L3"), Draws(0.999, 0.0, draw))
        assert (plan.kind, state.bloom, plan.bloom) == (kind, bloom, bloom)


def test_bloom_never_exceeds_create() -> None:
    state = student(bloom=5, curiosity=1.0)
    plan = respond(state, question(level="L3"), Draws(0.999, 0.0, 0.0))
    assert (plan.kind, state.bloom) == ("higher_order", 5)


@pytest.mark.parametrize(("draws", "kind", "cognition"), [
    pytest.param((0.45 - EPS,), "ask_hint", "vague_understanding", id="asks"),
    pytest.param((0.45 + EPS, 0.5 - EPS), "confused", "vague_understanding", id="knows-it-is-stuck"),
    pytest.param((0.45 + EPS, 0.5 + EPS), "wrong", "incorrect", id="wrong"),
])
def test_a_stuck_student_asks_with_help_seeking_times_metacognition(draws, kind, cognition) -> None:
    # P(ask) = help_seeking (0.5 + 0.5 metacognition) = 0.6 * 0.75
    state = student(help_seeking=0.6, metacognition=0.5)
    plan = respond(state, question(), Draws(0.999, 0.999, *draws))
    assert (plan.kind, plan.cognition_state, plan.bloom) == (kind, cognition, 1)


@pytest.mark.parametrize(("draws", "kind", "cognition"), [
    pytest.param((0.0, 0.5 - EPS), "ask_hint", "expression_difficulty", id="asks"),
    pytest.param((0.999, 0.5 + EPS), "confused", "vague_understanding", id="lost"),
])
def test_a_failure_above_the_zone(draws, kind, cognition) -> None:
    state = student(bloom=1, help_seeking=0.6)
    plan = respond(state, question(level="L3"), Draws(0.999, 0.999, *draws))
    assert (plan.kind, plan.cognition_state, plan.bloom) == (kind, cognition, 1)


@pytest.mark.parametrize(("claim_demand", "bloom", "z"), [
    pytest.param("recall", 1, 1.0, id="recall-within"), pytest.param(None, 1, 1.0, id="apply-by-default"),
    pytest.param("explain", 1, 1.0, id="explain-stretch"), pytest.param("transfer", 1, 0.15, id="transfer-above"),
    pytest.param(None, 2, 1.0, id="apply-one-below"), pytest.param("recall", 2, 0.3, id="recall-two-below"),
    pytest.param("recall", 3, 0.3, id="recall-three-below"),
    pytest.param("transfer", 2, 1.0, id="transfer-stretch"),
])
def test_a_read_question_sets_the_demand(claim_demand, bloom: int, z: float) -> None:
    state = student(bloom=bloom)
    respond(state, said(Claim(EQ, "true", question=True, demand=claim_demand)), NOTHING_HAPPENS)
    boredom = 0.15 * max(0.5, bloom / 5) if z == 0.3 else 0.0
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 0.25, z, 0.2 + 0.8 * (1 - boredom)), abs=1e-12)


# ------------------------------------------------------------------ what the turn says (content)
@pytest.mark.parametrize(("claims", "intent", "expected"), [
    pytest.param((Claim(EQ, "true"),), "introduce_concept", bkt(0.5, 0.85 * 0.6), id="one-true-step"),
    pytest.param((Claim(EQ, "true"), Claim(EQ, "true")), "introduce_concept", bkt(0.5, 0.85 * 0.6, 1.6),
                 id="worked-example"),
    pytest.param((Claim(EQ, "unchecked"),), "introduce_concept", 0.5, id="nothing-true"),
    pytest.param((Claim(EQ, "true"),), "summarize", bkt(0.5, 0.85 * 0.6, 0.3), id="summary"),
    pytest.param((Claim(EQ, "true"), Claim(None, "false")), "introduce_concept", bkt(0.5, 0.85 * 0.6, 0.5, 0.8),
                 id="one-falsehood"),
    pytest.param((Claim(EQ, "true"),) + (Claim(None, "false"),) * 4, "introduce_concept",
                 bkt(0.5, 0.85 * 0.6, 0.5 ** 3, 0.8 ** 4), id="falsehoods-cap-at-three"),
    pytest.param((Claim(EQ, "true"), Claim(None, "false")), "summarize", bkt(0.5, 0.85 * 0.6, 0.5, 0.3, 0.8),
                 id="summary-with-a-falsehood"),
    pytest.param((Claim(EQ, "true"), Claim(None, "false", question=True)), "introduce_concept",
                 bkt(0.5, 0.85 * 0.6), id="a-false-question-is-no-statement"),
])
def test_content_teaches_by_what_is_true(claims, intent: str, expected: float) -> None:
    state = student()
    respond(state, said(*claims, intent=intent), NOTHING_HAPPENS)
    assert state.mastery[EQ] == pytest.approx(expected, abs=1e-12)


def test_a_small_weight_is_halved_by_a_falsehood_too() -> None:
    # a told answer (w 0.1) and a weak explanation (w 0.85 * 0.6 * 0.1 = 0.051) are halved like any other
    told = student()
    respond(told, said(Claim(EQ, "unchecked"), Claim(None, "false"), reveals_answer=True), NOTHING_HAPPENS)
    assert told.mastery[EQ] == pytest.approx(bkt(0.5, 0.1, 0.5, 0.8), abs=1e-12)
    weak = student(explanation_uptake=0.1)
    respond(weak, said(Claim(EQ, "true"), Claim(None, "false")), NOTHING_HAPPENS)
    assert weak.mastery[EQ] == pytest.approx(bkt(0.5, 0.85 * 0.6 * 0.1, 0.5, 0.8), abs=1e-12)


def test_a_false_statement_on_the_component_first_takes_a_fifth() -> None:
    state = student()
    respond(state, said(Claim(EQ, "true"), Claim(EQ, "false")), NOTHING_HAPPENS)
    assert state.trust == pytest.approx(0.8)
    assert state.mastery[EQ] == pytest.approx(bkt(0.4, 0.85 * (1 - 0.8 * 0.4), 0.5, 0.8), abs=1e-12)


def test_true_steps_on_other_components_teach_them_at_half_weight() -> None:
    state = student()
    state.trust = 0.5
    respond(state, said(Claim(EQ, "true"), Claim(MIX, "true")), NOTHING_HAPPENS)
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 0.85 * 0.6, 0.5), abs=1e-12)
    assert state.mastery[MIX] == pytest.approx(bkt(0.3, 0.5 * 0.85 * (1 - 0.8 * 0.3), 0.5), abs=1e-12)
    assert state.mastery[ADD] == 0.4  # nothing said about it


def test_a_labelled_worked_example_is_one_explanation() -> None:
    state = student()
    respond(state, act(kc=EQ), NOTHING_HAPPENS)  # an act built by hand: its labels, no content
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 0.85 * 0.6), abs=1e-12)
    assert state.mastery[MIX] == 0.3 and state.mastery[ADD] == 0.4


@pytest.mark.parametrize(("setup", "draws", "status"), [
    pytest.param(None, (0.6 * (1 - 0.5) - EPS,), "active", id="adopted-under-06-1-minus-l"),
    pytest.param(None, (0.6 * (1 - 0.5) + EPS,), None, id="not-adopted-over"),
    pytest.param("active", (), "active", id="held-stays"),
    pytest.param("suppressed", (), "active", id="suppressed-reactivated"),
    pytest.param("repaired", (), "active", id="repaired-reactivated"),
])
def test_a_stated_wrong_rule(setup: str | None, draws: tuple, status: str | None) -> None:
    state = student(mastery={ADD: 0.5})
    if setup:
        state.status["add_across"] = setup
    respond(state, said(Claim(ADD, "false", affirms="add_across"), strategy="encourage"), Draws(*draws))
    assert state.status.get("add_across") == status
    assert state.mastery[ADD] == pytest.approx(0.4, abs=1e-12)
    assert state.trust == pytest.approx(0.8)


def test_a_false_claim_off_the_task_costs_trust_only() -> None:
    state = student()
    respond(state, said(Claim(None, "false", affirms="add_across")), Draws(0.0))
    assert state.trust == pytest.approx(0.8)
    assert state.status == {} and state.mastery == {EQ: 0.5, ADD: 0.4, MIX: 0.3}


def test_a_false_claim_affirming_an_unknown_idea_changes_only_its_component() -> None:
    state = student()
    respond(state, said(Claim(MIX, "false", affirms="not_a_misconception")), Draws(0.0))
    assert state.status == {}
    assert state.mastery[MIX] == pytest.approx(0.24, abs=1e-12)


def test_a_false_question_is_not_a_falsehood() -> None:
    state = student()
    respond(state, said(Claim(ADD, "false", question=True, affirms="add_across")), Draws(0.999, 0.0))
    assert state.trust == 1.0 and "add_across" not in state.status


# ------------------------------------------------------------------ misconceptions in the dialogue
@pytest.mark.parametrize(("tutor", "p", "kind"), [
    pytest.param(act(kc=ADD), 0.4 * (1 - 0.4 * 0.4), "misconception", id="explain-0.4"),
    pytest.param(question(kc=ADD), 0.75 * (1 - 0.4 * 0.4), "misconception", id="question-0.75"),
])
def test_an_active_misconception_fires(tutor: TutorAct, p: float, kind: str) -> None:
    fired = student()
    fired.status["add_across"] = "active"
    plan = fired_plan = respond(fired, tutor, Draws(0.999, p - EPS))
    assert (plan.kind, plan.cognition_state, plan.misconception, plan.bloom) == (kind, "incorrect", "add_across", 1)
    assert fired.last_shown == "add_across" and "add_across" in fired.voiced
    quiet = student()
    quiet.status["add_across"] = "active"
    plan = respond(quiet, tutor, Draws(0.999, p + EPS))
    assert plan.kind != "misconception" and quiet.last_shown is None and quiet.voiced == set()
    # a firing question teaches the failure weight, damped by the active idea (mu 0.6), and costs confidence
    if tutor.is_question:
        assert fired.confidence == pytest.approx(0.5 * 0.97, abs=1e-12)
        assert fired.mastery[ADD] == pytest.approx(bkt(0.4, 0.25, 0.3 + 0.7 * 0.5, 0.6), abs=1e-12)
    else:
        assert fired_plan.bloom == 1
        assert fired.mastery[ADD] == pytest.approx(bkt(0.4, 0.85 * (1 - 0.8 * 0.4), 0.6 + 0.4 * 0.5, 0.6),
                                                   abs=1e-12)


def test_an_active_misconception_on_another_component_does_not_damp() -> None:
    state = student()
    state.status["bigger_denominator"] = "active"  # on EQ
    respond(state, act(kc=MIX), NOTHING_HAPPENS)
    assert state.mastery[MIX] == pytest.approx(bkt(0.3, 0.85 * (1 - 0.8 * 0.3)), abs=1e-12)


def test_a_suppressed_misconception_fires_rarely_and_does_not_damp() -> None:
    for draw, kind in ((0.05 - EPS, "misconception"), (0.05 + EPS, "paraphrase")):
        state = student(mastery={ADD: 0.0})
        state.status["add_across"] = "suppressed"
        plan = respond(state, act(kc=ADD), Draws(0.999, draw))
        assert plan.kind == kind
    quiet = student()
    quiet.status["add_across"] = "suppressed"
    respond(quiet, act(kc=ADD), NOTHING_HAPPENS)
    assert quiet.mastery[ADD] == pytest.approx(bkt(0.4, 0.85 * (1 - 0.8 * 0.4), 0.6 + 0.4 * 0.5), abs=1e-12)


# (name, status, shown/voiced, act, probability of the change, status after)
# labelled: a counterexample repairs with 0.85 when the student voiced the idea and the act names it, else 0.3;
# plain corrective feedback suppresses with 0.9 voiced / 0.7; times (0.6 + 0.4 e) for repair; e = 0.5
REPAIR_CASES = [
    ("named_counter_after_voicing", "active", "shown", question("scenario_question", kc=ADD,
                                                                addresses_misconception="add_across"),
     0.85 * 0.8, "repaired"),
    ("named_counter_voiced_earlier", "active", "voiced", question("scenario_question", kc=ADD,
                                                                  addresses_misconception="add_across"),
     0.85 * 0.8, "repaired"),
    ("named_counter_unvoiced", "active", None, question("scenario_question", kc=ADD,
                                                        addresses_misconception="add_across"),
     0.3 * 0.8, "repaired"),
    ("scenario_on_its_component_unnamed", "active", "shown", question("scenario_question", kc=ADD),
     0.3 * 0.8, "repaired"),
    ("analogy_on_its_component", "suppressed", None, act(strategy="analogy", kc=ADD), 0.3 * 0.8, "repaired"),
    ("named_corrective_question", "active", "shown", question("corrective_feedback", kc=ADD,
                                                              addresses_misconception="add_across"),
     0.85 * 0.8, "repaired"),
    ("negation_voiced", "active", "shown", act(strategy="corrective_feedback", kc=ADD,
                                               addresses_misconception="add_across"), 0.9, "suppressed"),
    ("negation_voiced_earlier", "active", "voiced", act(strategy="corrective_feedback", kc=ADD), 0.9, "suppressed"),
    ("negation_unvoiced_on_its_component", "active", None, act(strategy="corrective_feedback", kc=ADD), 0.7,
     "suppressed"),
    ("negation_named_elsewhere", "active", None, act(strategy="corrective_feedback", kc=EQ,
                                                     addresses_misconception="add_across"), 0.7, "suppressed"),
    # content: a refutation repairs 0.85 right after the student used the idea, 0.3 voiced earlier, 0.15 blind
    ("read_counter_right_after", "active", "shown", said(Claim(ADD, "true", refutes=("add_across",))),
     0.85 * 0.8, "repaired"),
    ("read_counter_earlier", "active", "voiced", said(Claim(ADD, "true", refutes=("add_across",))),
     0.3 * 0.8, "repaired"),
    ("read_counter_blind", "suppressed", None, said(Claim(ADD, "true", refutes=("add_across",))),
     0.15 * 0.8, "repaired"),
]


@pytest.mark.parametrize(("status", "voicing", "tutor", "p", "after"), [pytest.param(*c[1:], id=c[0])
                                                                        for c in REPAIR_CASES])
def test_repair_and_suppression(status: str, voicing: str | None, tutor: TutorAct, p: float, after: str) -> None:
    for draw, expected in ((p - EPS, after), (p + EPS, status)):
        state = student(engagement=0.5)
        state.status["add_across"] = status
        if voicing is not None:  # said in the dialogue (a pre-test answer alone: test_student_equations.py)
            state.voiced.add("add_across")
            state.said.add("add_across")
        if voicing == "shown":
            state.last_shown = "add_across"
        respond(state, tutor, Draws(0.999, draw))
        assert state.status["add_across"] == expected


def test_a_repair_brings_understanding_before_the_step() -> None:
    state = student(engagement=0.5)
    state.status["add_across"] = "active"
    respond(state, act(strategy="analogy", kc=ADD), Draws(0.999, 0.0))
    assert state.status["add_across"] == "repaired"
    lk = 0.4 + 0.4 * (1 - 0.4)  # conceptual change, then the turn's own step with nothing held (mu 1)
    assert state.mastery[ADD] == pytest.approx(bkt(lk, 0.85 * (1 - 0.8 * lk), 0.6, 0.6 + 0.4 * 0.5), abs=1e-12)


@pytest.mark.parametrize(("status", "tutor"), [
    pytest.param("repaired", said(Claim(ADD, "true", refutes=("add_across",))), id="already-repaired"),
    pytest.param("active", said(Claim(ADD, "true", refutes=("add_across",)), Claim(None, "false")),
                 id="refuted-beside-a-falsehood"),
    pytest.param("active", act(strategy="analogy", kc=EQ), id="analogy-elsewhere"),
    pytest.param("suppressed", act(strategy="corrective_feedback", kc=ADD), id="negating-a-suppressed-idea"),
    pytest.param("active", act(strategy="corrective_feedback", kc=MIX), id="negation-elsewhere"),
])
def test_no_repair(status: str, tutor: TutorAct) -> None:
    state = student()
    state.status["add_across"] = status
    state.voiced.add("add_across")
    state.last_shown = "add_across"
    respond(state, tutor, Draws(0.999, 0.0, rest=0.999))
    assert state.status["add_across"] == status


# ------------------------------------------------------------------ turns without learning
def test_an_off_topic_turn_costs_008_engagement() -> None:
    state = student(engagement=0.5)
    plan = respond(state, act(kc=None), NOTHING_HAPPENS)
    assert (plan.kind, plan.cognition_state, plan.kc, plan.bloom) == ("off_topic", "vague_understanding", None, 0)
    assert state.engagement == pytest.approx(0.42, abs=1e-12)
    low = student(engagement=0.05)
    respond(low, act(kc="not_a_component"), NOTHING_HAPPENS)
    assert low.engagement == pytest.approx(0.02, abs=1e-12)


def test_an_invalid_turn_is_off_topic_even_with_a_target() -> None:
    state = student()
    plan = respond(state, act(kc=EQ, invalid=True), NOTHING_HAPPENS)
    assert (plan.kind, plan.cognition_state) == ("off_topic", "expression_difficulty")
    assert state.mastery[EQ] == 0.5


@pytest.mark.parametrize(("mastery", "label"), [(0.6, "vague_understanding"), (0.61, "clear_understanding")])
def test_closing_reads_mastery_over_06(mastery: float, label: str) -> None:
    state = student(bloom=2, mastery={EQ: mastery})
    plan = respond(state, act(ends_session=True), NOTHING_HAPPENS)
    assert (plan.kind, plan.cognition_state, plan.bloom) == ("closing", label, 1)
    assert state.mastery[EQ] == mastery


def test_closing_off_topic_is_vague() -> None:
    plan = respond(student(), act(kc=None, ends_session=True), NOTHING_HAPPENS)
    assert (plan.kind, plan.cognition_state) == ("closing", "vague_understanding")


@pytest.mark.parametrize(("engagement", "distractibility", "p"), [
    pytest.param(0.2, 0.2, 0.8 * (0.4 - 0.2) / 0.4 + 0.25 * 0.2, id="disengaged-and-distractible"),
    pytest.param(0.4, 0.0, 0.0, id="engaged-enough-never"),
    pytest.param(0.9, 0.4, 0.25 * 0.4, id="distractible-only"),
])
def test_an_irrelevant_turn(engagement: float, distractibility: float, p: float) -> None:
    kinds = []
    for draw in ((p - EPS, p + EPS) if p > 0 else (p,)):
        state = student(engagement=engagement, distractibility=distractibility)
        plan = respond(state, act(), Draws(draw))
        kinds.append((plan.kind, plan.cognition_state, plan.bloom))
    under_kind = ("irrelevant", "irrelevant", 0) if p > 0 else ("paraphrase", "vague_understanding", 1)
    assert kinds[0] == under_kind
    if p > 0:
        assert kinds[1] == ("paraphrase", "vague_understanding", 1)


def test_encouragement_lifts_engagement_and_calms() -> None:
    state = student(engagement=0.5, anxiety=0.2)
    plan = respond(state, act(strategy="encourage"), NOTHING_HAPPENS)
    assert plan.kind == "acknowledge"
    assert state.engagement == pytest.approx(0.5 + 0.3 * 0.5, abs=1e-12)
    assert state.anxiety == pytest.approx(0.2 * 0.85, abs=1e-12)
    assert state.confidence == pytest.approx(0.5 + 0.1 * 0.5, abs=1e-12)
    assert state.mastery[EQ] == 0.5  # plain encouragement teaches nothing


def test_above_the_zone_raises_anxiety_and_lowers_confidence() -> None:
    state = student(anxiety=0.2)
    respond(state, act(level="L3"), NOTHING_HAPPENS)
    assert state.anxiety == pytest.approx(0.2 + 0.1 * 0.8, abs=1e-12)
    assert state.confidence == pytest.approx(0.5 * 0.95, abs=1e-12)
    below = student(anxiety=0.2, bloom=3)
    respond(below, act(level="L1"), NOTHING_HAPPENS)
    assert (below.anxiety, below.confidence) == (0.2, 0.5)


def test_engagement_decays_and_is_clipped() -> None:
    state = student(engagement=0.5, engagement_decay=0.1)
    respond(state, act(), NOTHING_HAPPENS)
    assert state.engagement == pytest.approx(0.4, abs=1e-12)
    floor = student(engagement=0.05, engagement_decay=0.1)
    respond(floor, act(), Draws(1.0))
    assert floor.engagement == pytest.approx(0.02, abs=1e-12)


@pytest.mark.parametrize(("draw", "memorised"), [(0.95 - EPS, {"pre_add": 1}), (0.95 + EPS, {})])
def test_a_told_answer_is_memorised_with_095_for_seen_items_only(draw: float, memorised: dict) -> None:
    state = student()
    plan = respond(state, act(kc=ADD, reveals_answer=True, revealed_items=("post_add", "pre_add")),
                   Draws(0.999, draw))
    assert state.memorised == memorised
    assert plan.kind == "acknowledge"


def test_a_question_giving_the_answer_away_memorises_too() -> None:
    state = student()
    respond(state, question(kc=ADD, reveals_answer=True, revealed_items=("pre_add",)), NOTHING_HAPPENS)
    assert state.memorised == {}
    state = student()
    respond(state, question(kc=ADD, reveals_answer=True, revealed_items=("pre_add",)), Draws(0.999, 0.0))
    respond(state, question(kc=ADD, reveals_answer=True, revealed_items=("pre_mix",)), Draws(0.999, 0.0))
    assert state.memorised == {"pre_add": 1, "pre_mix": 2}  # keyed by the turn it was told


def test_a_paraphrase_is_clear_with_probability_l() -> None:
    for draw, label in ((0.5 - EPS, "clear_understanding"), (0.5 + EPS, "vague_understanding")):
        plan = respond(student(), act(), Draws(0.999, draw))
        assert (plan.kind, plan.cognition_state, plan.bloom) == ("paraphrase", label, 1)


def test_a_fixed_numpy_generator_gives_the_same_step() -> None:
    a, b = student(), student()
    plans = [respond(s, question(kc=ADD), np.random.default_rng(7)) for s in (a, b)]
    assert plans[0] == plans[1] and a.mastery == b.mastery


# ------------------------------------------------------------------ a draw equal to the probability: no event
def _held(status: str, voiced: bool = False, shown: bool = False):
    def setup(state: StudentState) -> None:
        state.status["add_across"] = status
        if voiced or shown:
            state.voiced.add("add_across")
            state.said.add("add_across")
        if shown:
            state.last_shown = "add_across"
    return setup


def _none(state: StudentState) -> None:
    return None


# (name, student(...) arguments, setup, act, draws: the one under test equals its probability, what must hold)
# numpy's random() is in [0, 1): P(draw < p) = p, so a draw of exactly p must not make the event happen
AT_BOUNDARY = [
    ("memorise_095", {}, _none, act(kc=ADD, reveals_answer=True, revealed_items=("pre_add",)), (0.999, 0.95),
     lambda s, plan: s.memorised == {}),
    ("memorise_in_a_question_095", {}, _none, question(kc=ADD, reveals_answer=True, revealed_items=("pre_add",)),
     (0.999, 0.95), lambda s, plan: s.memorised == {}),
    ("irrelevant_distractibility", {"engagement": 0.9, "distractibility": 0.4}, _none, act(),
     (0.8 * 0.0 + 0.25 * 0.4,), lambda s, plan: plan.kind == "paraphrase"),
    ("success", {"anxiety": 0.2, "misread_rate": 0.05}, _none, question(),
     (0.999, (0.5 * (1.0 - (0.1 + 0.15 * 0.2)) + (1.0 - 0.5) * 0.1) * ((1.0 - 0.05) * 1.0)),
     lambda s, plan: plan.kind == "wrong"),
    ("curiosity", {"bloom": 2, "curiosity": 0.4}, _none, question(level="L3"), (0.999, 0.0, 0.4),
     lambda s, plan: (plan.kind, s.bloom) == ("correct", 3)),
    ("asks_for_a_hint", {"help_seeking": 0.6, "metacognition": 0.5}, _none, question(),
     (0.999, 0.999, 0.6 * (0.5 + 0.5 * 0.5), 0.999), lambda s, plan: plan.kind == "wrong"),
    ("knows_it_is_stuck", {"metacognition": 0.5}, _none, question(), (0.999, 0.999, 0.999, 0.5),
     lambda s, plan: plan.kind == "wrong"),
    ("above_label", {}, _none, question(level="L3"), (0.999, 0.999, 0.999, 0.5),
     lambda s, plan: plan.cognition_state == "vague_understanding"),
    ("paraphrase_label", {}, _none, act(), (0.999, 0.5), lambda s, plan: plan.cognition_state == "vague_understanding"),
    ("fire_in_explanation_04", {"mastery": {ADD: 0.0}}, _held("active"), act(kc=ADD), (0.999, 0.4),
     lambda s, plan: plan.kind == "paraphrase"),
    ("fire_in_question_075", {"mastery": {ADD: 0.0}}, _held("active"), question(kc=ADD), (0.999, 0.75),
     lambda s, plan: plan.kind == "wrong"),
    ("fire_suppressed_005", {}, _held("suppressed"), act(kc=ADD), (0.999, 0.05),
     lambda s, plan: plan.kind == "paraphrase"),
    ("repair_voiced_named_085", {}, _held("active", shown=True),
     act(strategy="analogy", kc=ADD, addresses_misconception="add_across"), (0.999, 0.85),
     lambda s, plan: s.status["add_across"] == "active"),
    ("repair_unvoiced_03", {}, _held("active"), act(strategy="analogy", kc=ADD), (0.999, 0.3),
     lambda s, plan: s.status["add_across"] == "active"),
    ("read_repair_blind_015", {}, _held("active"), said(Claim(ADD, "true", refutes=("add_across",))), (0.999, 0.15),
     lambda s, plan: s.status["add_across"] == "active"),
    ("read_repair_earlier_03", {}, _held("active", voiced=True), said(Claim(ADD, "true", refutes=("add_across",))),
     (0.999, 0.3), lambda s, plan: s.status["add_across"] == "active"),
    ("read_repair_right_after_085", {}, _held("active", shown=True),
     said(Claim(ADD, "true", refutes=("add_across",))), (0.999, 0.85),
     lambda s, plan: s.status["add_across"] == "active"),
    ("suppress_voiced_09", {}, _held("active", voiced=True), act(strategy="corrective_feedback", kc=ADD),
     (0.999, 0.9), lambda s, plan: s.status["add_across"] == "active"),
    ("suppress_unvoiced_07", {}, _held("active"), act(strategy="corrective_feedback", kc=ADD), (0.999, 0.7),
     lambda s, plan: s.status["add_across"] == "active"),
    ("adopt_a_stated_rule_06", {"mastery": {ADD: 0.0}}, _none,
     said(Claim(ADD, "false", affirms="add_across"), strategy="encourage"), (0.6,),
     lambda s, plan: "add_across" not in s.status),
]


@pytest.mark.parametrize(("overrides", "setup", "tutor", "draws", "holds"),
                         [pytest.param(*c[1:], id=c[0]) for c in AT_BOUNDARY])
def test_a_draw_equal_to_the_probability_does_not_make_the_event(overrides, setup, tutor, draws, holds) -> None:
    state = student(**overrides)
    setup(state)
    plan = respond(state, tutor, Draws(*draws))
    assert holds(state, plan)
    # and just under it, it does
    twin = student(**overrides)
    setup(twin)
    under = list(draws)
    k = max(i for i, d in enumerate(draws) if d not in (0.999, 0.0)) if any(
        d not in (0.999, 0.0) for d in draws) else 0
    under[k] = draws[k] - EPS
    assert not holds(twin, respond(twin, tutor, Draws(*under)))


# ------------------------------------------------------------------ the planned reply's level and transfer
@pytest.mark.parametrize(("bloom", "tutor", "draws", "kind", "level"), [
    pytest.param(1, act(level="L1"), NOTHING_HAPPENS, "paraphrase", 0, id="explanation-at-demand-0"),
    pytest.param(2, act(level="L3"), NOTHING_HAPPENS, "paraphrase", 1, id="explanation-at-most-1"),
    pytest.param(2, act(reveals_answer=True), NOTHING_HAPPENS, "acknowledge", 0, id="told-answer-0"),
    pytest.param(2, act(strategy="encourage"), NOTHING_HAPPENS, "acknowledge", 0, id="encouragement-0"),
    pytest.param(1, question("hint"), Draws(0.999, 0.0), "correct", 0, id="solved-scaffold-at-demand-0"),
])
def test_the_level_of_the_reply(bloom: int, tutor: TutorAct, draws: Draws, kind: str, level: int) -> None:
    plan = respond(student(bloom=bloom), tutor, draws)
    assert (plan.kind, plan.bloom) == (kind, level)


def test_a_misconception_voiced_in_an_explanation_is_at_level_1_at_most() -> None:
    state = student(bloom=2)
    state.status["add_across"] = "active"
    plan = respond(state, act(kc=ADD), Draws(0.999, 0.0))
    assert (plan.kind, plan.bloom) == ("misconception", 1)


@pytest.mark.parametrize(("curiosity", "kind"), [(0.0, "correct"), (1.0, "higher_order")])
def test_a_solved_transfer_question_names_the_linked_component(curiosity: float, kind: str) -> None:
    state = student(bloom=3, curiosity=curiosity, mastery={ADD: 0.5})
    tutor = act("trigger_transfer", "follow_up_question", "L3", ADD, disciplines=("math", "chemistry"),
                is_question=True)
    plan = respond(state, tutor, Draws(0.999, 0.0, 0.0))
    assert (plan.kind, plan.disciplines, plan.discipline_transfer, plan.linked_kc) == (
        kind, ("math", "chemistry"), True, MIX)
    plain = respond(student(bloom=3, curiosity=curiosity), question(level="L3", kc=ADD), Draws(0.999, 0.0, 0.0))
    assert (plain.kind, plain.disciplines, plain.discipline_transfer, plain.linked_kc) == (kind, ("math",), False, None)


def test_a_turn_that_teaches_nothing_transfers_nothing() -> None:
    state = student(mastery={ADD: 0.5})
    respond(state, act("trigger_transfer", "encourage", kc=ADD, disciplines=("math", "chemistry")), NOTHING_HAPPENS)
    assert state.mastery[MIX] == 0.3 and state.mastery[ADD] == 0.5


def test_the_secondary_step_is_capped() -> None:
    state = student()
    state.learn[MIX] = 10.0
    respond(state, said(Claim(EQ, "true"), Claim(MIX, "true")), NOTHING_HAPPENS)
    assert state.mastery[MIX] == pytest.approx(0.3 + 0.7 * 0.95, abs=1e-12)


def test_a_told_answer_gets_one_chance_to_be_memorised() -> None:
    state = student()
    respond(state, act(kc=ADD, reveals_answer=True, revealed_items=("pre_add",)), Draws(0.999, 0.96, rest=0.0))
    assert state.memorised == {}


@pytest.mark.parametrize("linked", [None, ADD, "not_in_this_task"], ids=["no-component", "itself", "unknown"])
def test_a_link_without_another_component_boosts_but_teaches_no_other(linked: str | None) -> None:
    from tutorzoo.envs.tasks.base import KCLink

    state = student(mastery={ADD: 0.5})
    state.kcs[ADD] = state.kcs[ADD].model_copy(update={"links": (
        KCLink(discipline="physics", kc=linked, bridge="Pouring two jugs of water adds fractions of a litre."),)})
    respond(state, act("trigger_transfer", kc=ADD, disciplines=("math", "physics")), NOTHING_HAPPENS)
    assert state.mastery[ADD] == pytest.approx(bkt(0.5, 0.85 * (1 - 0.8 * 0.5), 1.5, 0.6 + 0.4 * 0.5), abs=1e-12)
    assert (state.mastery[EQ], state.mastery[MIX]) == (0.5, 0.3)


@pytest.mark.parametrize(("claims", "expected"), [
    # a question alone: a failed attempt teaches a quarter
    pytest.param((Claim(EQ, "true", question=True, demand="apply"),), bkt(0.5, 0.25), id="question-alone"),
    # a question with one true statement on its component: scaffolded, a failure is worked through (half), and
    # the problem is worked with the exposition in mind (an example-problem pair, x1.5)
    pytest.param((Claim(EQ, "true"), Claim(EQ, "true", question=True, demand="apply")), bkt(0.5, 0.5, 1.5),
                 id="with-a-true-step"),
    # ... and with a false statement beside it (on another component) it is no scaffold, and trust falls to 0.8
    pytest.param((Claim(EQ, "true"), Claim(MIX, "false"), Claim(EQ, "true", question=True, demand="apply")),
                 bkt(0.5, 0.25, 0.8), id="with-a-falsehood"),
])
def test_a_question_with_true_content_on_its_component_is_scaffolded(claims, expected: float) -> None:
    """Read from content: a question asked with a true statement on its component and nothing false is a scaffold
    (the failed attempt weighs 0.5, not 0.25); the labels say no hint or break-down."""
    state = student()
    plan = respond(state, said(*claims, intent="guide_reasoning", is_question=True), NOTHING_HAPPENS)
    assert plan.kind in ("wrong", "confused")
    assert state.mastery[EQ] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("strategy", ["hint", "break_down"])
def test_a_scaffold_cue_without_content_scaffolds_nothing(strategy: str) -> None:
    """Read from content, a hint or break-down is what the turn gives: the label alone (its cue words) with only a
    question on the component is no scaffold (a failed attempt weighs 0.25, not 0.5); with a true step beside the
    question it is one."""
    state = student()
    respond(state, said(Claim(EQ, "true", question=True, demand="apply"), intent="guide_reasoning",
                        strategy=strategy, is_question=True), NOTHING_HAPPENS)
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 0.25), abs=1e-12)
    state = student()
    respond(state, said(Claim(EQ, "true"), Claim(EQ, "true", question=True, demand="apply"), intent="guide_reasoning",
                        strategy=strategy, is_question=True), NOTHING_HAPPENS)
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 0.5, 1.5), abs=1e-12)  # 1.5: the example-problem pair


def test_an_explanation_that_tells_a_test_answer_still_teaches_as_an_explanation() -> None:
    """A turn that states the right idea on its component and happens to give a test item's answer away teaches
    as the explanation it is (w 0.85 (1 - 0.8 L)) and the answer is memorised; a told answer with nothing true
    stated weighs 0.1."""
    state = student()
    respond(state, said(Claim(EQ, "true"), reveals_answer=True, revealed_items=("pre_add",)), Draws(0.0, rest=0.0))
    assert state.mastery[EQ] == pytest.approx(bkt(0.5, 0.85 * 0.6), abs=1e-12)
    assert "pre_add" in state.memorised
    told = student()
    respond(told, said(Claim(EQ, "unchecked"), reveals_answer=True), NOTHING_HAPPENS)
    assert told.mastery[EQ] == pytest.approx(bkt(0.5, 0.1), abs=1e-12)


@pytest.mark.parametrize(("explained", "demand", "paired"), [
    pytest.param(True, "apply", True, id="example-then-problem"),
    pytest.param(True, "explain", True, id="example-then-why"),
    pytest.param(True, "recall", False, id="example-then-recall"),
    pytest.param(False, "apply", False, id="problem-alone"),
])
def test_a_problem_after_an_exposition_weighs_one_and_a_half(explained: bool, demand: str, paired: bool) -> None:
    """Example-problem pairs: a problem (not a recall) worked with an exposition of its component in mind, from an
    earlier turn not yet practised, weighs 1.5x; a recall question or a problem without the example does not."""
    state = student()
    if explained:
        respond(state, said(Claim(EQ, "true")), NOTHING_HAPPENS)
    before = state.mastery[EQ]
    respond(state, said(Claim(EQ, "true", question=True, demand=demand), intent="guide_reasoning", is_question=True),
            NOTHING_HAPPENS)
    assert state.mastery[EQ] == pytest.approx(bkt(before, 0.25, 1.5 if paired else 1.0), abs=1e-12)


# ------------------------------------------------------------------ read turns: what the words do, not the labels


def test_a_read_turn_transfers_only_through_a_link_it_makes() -> None:
    """Naming another discipline (a transfer label, the discipline in ``disciplines``) is no transfer; saying the
    link (``Reading.links``: its bridge or keywords) is."""
    named = student(mastery={ADD: 0.5})
    respond(named, said(Claim(ADD, "true"), intent="trigger_transfer", disciplines=("math", "chemistry")),
            NOTHING_HAPPENS)
    assert named.mastery[MIX] == 0.3
    linked = student(mastery={ADD: 0.5})
    respond(linked, act("introduce_concept", None, "L2", None, content=Reading(
        claims=(Claim(ADD, "true"),), links=((ADD, "chemistry"),))), NOTHING_HAPPENS)
    assert linked.mastery[MIX] == pytest.approx(0.3 + 0.7 * min(0.95, 0.8 * T), abs=1e-12)


def test_a_read_question_extends_by_its_demand_not_its_level_label() -> None:
    for demand, level, kind in (("transfer", "L1", "higher_order"), ("explain", "L3", "correct")):
        state = student(bloom=3, curiosity=1.0)
        plan = respond(state, said(Claim(EQ, "true", question=True, demand=demand), level=level),
                       Draws(0.999, 0.0, 0.0))
        assert plan.kind == kind, (demand, level, plan.kind)


def test_praise_is_heard_in_the_words_and_habituates() -> None:
    """``praise`` (from the turn's words) lifts whatever the turn's strategy label; each earlier encouraging turn
    halves the next one's lift: e + 0.3 h (1 - e), h = 0.5^n."""
    state = student(engagement=0.5, anxiety=0.2)
    state.engagement = 0.5
    respond(state, said(Claim(EQ, "true"), strategy="hint"), NOTHING_HAPPENS, praise=True)
    assert state.engagement == pytest.approx(0.5 + 0.3 * 0.5, abs=1e-12)
    state.engagement = 0.5
    respond(state, said(Claim(EQ, "true"), Claim(EQ, "true")), NOTHING_HAPPENS, praise=True)  # another move
    assert state.engagement == pytest.approx(0.5 + 0.5 * 0.3 * 0.5, abs=1e-12)
    plain = student()
    plain.engagement = 0.5
    respond(plain, said(Claim(EQ, "true"), strategy="encourage"), NOTHING_HAPPENS, praise=False)
    assert plain.engagement == 0.5  # the label alone, without praising words, lifts nothing


@pytest.mark.parametrize(("engagement", "lifted"), [(0.5, True), (0.3, True), (0.51, False), (0.9, False)])
def test_encouragement_lifts_a_flagging_student_not_an_engaged_one(engagement: float, lifted: bool) -> None:
    state = student()
    state.engagement = engagement
    respond(state, said(Claim(EQ, "true")), NOTHING_HAPPENS, praise=True)
    assert state.engagement == pytest.approx(engagement + 0.3 * (1 - engagement) if lifted else engagement, abs=1e-12)
    assert state.praised == 1  # heard either way: praise that lifts nothing still wears praise out
