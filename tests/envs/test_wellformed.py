"""The annotator fails closed on text that is not language: gibberish earns no strategy, transfer, discipline or L3.

Random tokens of the tiny model's vocabulary and hand-written word salad get the no-credit labels; every turn of
every built-in tutor and every gold-set tutor utterance passes the check (so keeps the labels it had); the
simulated student learns nothing from a malformed turn.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from tutorzoo.agents.student import SimulatedStudent, load_personas
from tutorzoo.agents.student.model import init_state, respond
from tutorzoo.agents.student.personas import get_persona
from tutorzoo.agents.tutor import TUTORS, make_tutor
from tutorzoo.envs import wellformed
from tutorzoo.envs.annotate import AnnotationContext, Annotator
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.eval.rollout import run_episode

GOLD = Path(__file__).resolve().parents[2] / "eval" / "data" / "gold_annotations.jsonl"

# The labels of a malformed turn (envs/wellformed.py and envs/annotate.py docstrings).
NO_CREDIT = {"intent": "check_understanding", "strategy": None, "guidance_level": "L1", "discipline_transfer": False,
             "target_kc": None, "addresses_misconception": None, "is_question": False, "invalid": True}

WORD_SALAD = [
    "Photosynthesis gravity imagine fraction why velocity ecosystem hint denominator energy scenario?",
    "imagine hint scenario analogy counterexample step-by-step physics biology chemistry transfer predict justify",
    "Fraction numerator scenario? Analogy hint counterexample! Velocity acceleration, momentum; ecosystem cells.",
    "rocket nozzle thrust pressure water bottle launch angle height fins nose cone",
    "xqzv blorptic fanwhistle? snerg quandalop, vimbly trosk!",
    "largestMame thinking wrote Yes motater?ivalentessure donengthium? might raise yearsorey centimetres "
    "consistentree otheres lemon? waves neededansro that j pushed cle days can?ible sugar",
    "???",
    "12 / 7 = ?? 3.5 !!",
]


@pytest.fixture(scope="module")
def stem_task():
    ts = get_task_set("stem")
    return ts.build(ts.task_ids()[0], np.random.default_rng(0))


def _labels(act) -> dict:
    return {k: getattr(act, k) for k in NO_CREDIT}


@pytest.mark.parametrize("text", WORD_SALAD)
def test_word_salad_gets_the_no_credit_labels(stem_task, text):
    assert not wellformed.check(text).ok
    ctx = AnnotationContext(focus_kc=stem_task.knowledge_components[0].id, previous_disciplines=("physics",),
                            student_spoke_last=True)
    act = Annotator.for_task(stem_task).annotate(text, ctx)
    assert _labels(act) == NO_CREDIT
    assert act.disciplines == ("physics",)  # the previous turn's: nothing brought in, nothing reset


def test_first_turn_malformed_gets_the_main_discipline(stem_task):
    act = Annotator.for_task(stem_task).annotate(WORD_SALAD[0], AnnotationContext())
    assert act.disciplines == (stem_task.disciplines[0],) and not act.discipline_transfer


def test_random_tokens_of_the_tiny_model_are_flagged(tiny_model_dir, stem_task):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(tiny_model_dir) / "tokenizer.json"))
    rng = np.random.default_rng(0)
    size = tok.get_vocab_size()
    ann = Annotator.for_task(stem_task)
    passed = []
    for _ in range(200):
        text = tok.decode(rng.integers(0, size, int(rng.integers(5, 150))).tolist())
        if wellformed.check(text).ok:
            passed.append(text)
        else:
            ctx = AnnotationContext(focus_kc=stem_task.knowledge_components[0].id, previous_disciplines=("math",))
            assert _labels(ann.annotate(text, ctx)) == NO_CREDIT
    # 586 of 600 such strings are flagged (envs/wellformed.py); the rest happen to be mostly words
    assert len(passed) <= 10, passed[:3]


@pytest.mark.slow
def test_an_untrained_model_tutor_earns_no_sid_credit(tiny_model_dir):
    from tutorzoo.rewards.sid import sid_metrics
    from tutorzoo.rewards.terms import canonical_transcript

    spec = EpisodeSpec(task_set="stem", persona="weak_knowledge_partly_wrong", seed=0)
    tutor = make_tutor(f"hf:{tiny_model_dir}", threads=1)
    record = run_episode(spec, tutor, SimulatedStudent(spec.persona), "tiny")
    tutor_turns = [t for t in record["transcript"] if t["speaker"] == "tutor"]
    assert tutor_turns and all(t["invalid"] for t in tutor_turns)
    assert record["invalid_turns"]["tutor"] == len(tutor_turns)  # counted like garbage actions
    assert all(t["teaching_strategy"] is None and not t["discipline_transfer"] and t["teacher_guidance_level"] == "L1"
               for t in tutor_turns)
    m = sid_metrics(canonical_transcript(record["transcript"]))
    assert m["SD"] == m["SV"] == m["IKT"] == m["SC"] == m["L3GR"] == 0.0


def test_every_gold_tutor_utterance_is_wellformed():
    rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    flagged = [(r["dialogue_id"], r["turn_index"], wellformed.check(r["utterance"]).reason)
               for r in rows if r["speaker"] == "tutor" and not wellformed.check(r["utterance"]).ok]
    assert len([r for r in rows if r["speaker"] == "tutor"]) > 300
    assert not flagged, flagged[:5]


@pytest.mark.parametrize("task_set", ["math", "stem", "mcq"])
def test_no_builtin_tutor_turn_is_flagged(task_set):
    flagged, n = [], 0
    for tutor in sorted(TUTORS):
        for persona in sorted(load_personas())[::2]:
            spec = EpisodeSpec(task_set=task_set, persona=persona, seed=3)
            record = run_episode(spec, make_tutor(tutor), SimulatedStudent(persona), tutor)
            for turn in record["transcript"]:
                if turn["speaker"] == "tutor":
                    n += 1
                    if turn["invalid"]:
                        flagged.append((tutor, turn["utterance"], wellformed.check(turn["utterance"]).reason))
    assert n > 200
    assert not flagged, flagged[:3]


def test_leak_and_end_marker_still_apply_to_gibberish():
    task = get_task_set("math").build("fraction_addition", np.random.default_rng(0))
    ann = Annotator.for_task(task)
    text = f"zorbly quarnix {task.answer} flimbo trazzle wubber snark [END]"
    act = ann.annotate(text, AnnotationContext(previous_disciplines=("math",)))
    assert act.invalid and act.reveals_answer and act.ends_session
    assert act.strategy is None and act.intent == "check_understanding"


def test_the_student_learns_nothing_from_a_malformed_turn(stem_task):
    ann = Annotator.for_task(stem_task)
    act = ann.annotate(WORD_SALAD[0], AnnotationContext(previous_disciplines=("physics",)))
    state = init_state(stem_task, get_persona(sorted(load_personas())[0]), np.random.default_rng(0))
    before = copy.deepcopy((state.mastery, state.status, state.memorised, state.bloom))
    plan = respond(state, act, np.random.default_rng(0))
    assert (state.mastery, state.status, state.memorised, state.bloom) == before
    assert plan.kind == "off_topic" and plan.kc is None and plan.cognition_state == "expression_difficulty"


def test_checks_are_deterministic_and_the_vocabulary_is_built_once():
    assert wellformed.vocabulary() is wellformed.vocabulary()
    assert {"the", "fraction", "denominator", "photosynthesis"} <= wellformed.vocabulary()
    text = "Imagine you cut a pizza into 6 slices. What fraction is one slice?"
    assert wellformed.check(text) == wellformed.check(text)
    assert wellformed.check(text).ok
    assert wellformed.check("Why?").ok and wellformed.check("Good job!").ok


@pytest.mark.parametrize("text", [
    r"$$\begin{aligned} 4x + 6 &= 30 \\ 4x &= 24 \end{aligned}$$ Next?",
    r"$\sqrt{\frac{m}{V}}$ equals what?",
    r"$$\rho = \frac{m}{V}$$ So?",
    r"| $\frac{1}{2}$ | $\mathrm{cm}^2$ | $\approx$ |",
    r"$\text{speed} = \dfrac{\text{distance}}{\text{time}}$",
    "### Step 1: shade 3/10\n- **Bold** point\n- $x = 2$",
])
def test_typeset_maths_and_markdown_are_language(text: str) -> None:
    """LaTeX commands, braces and markdown are formula and layout, not unknown words."""
    assert wellformed.check(text).ok, wellformed.check(text).reason


@pytest.mark.parametrize("text", [WORD_SALAD[4], WORD_SALAD[5]])
def test_word_salad_inside_latex_is_still_salad(text: str) -> None:
    assert not wellformed.check(rf"$\frac{{1}}{{2}}$ \[ x \] {text} $\text{{km}}$").ok


# Greetings and short social turns are language (valid, content-free turns); garbage around them is not.
@pytest.mark.parametrize("text", ["Hello", "Hello!", "Hey", "Hi!", "Howdy", "Bye!", "Cheers!", "Hello again",
                                  "Good afternoon, Leo.", "Hi Maya, welcome back!", "Thanks, see you next time."])
def test_greetings_are_valid_turns(stem_task, text):
    assert wellformed.check(text).ok, wellformed.check(text).reason
    ctx = AnnotationContext(focus_kc=stem_task.knowledge_components[0].id, previous_disciplines=("physics",),
                            student_spoke_last=True)
    assert Annotator.for_task(stem_task).annotate(text, ctx).invalid is False


@pytest.mark.parametrize("text", ["xqzv", "hellooo", "blorp snerg", "Hello xqzv blorp", "hello blorptic", "asdf!"])
def test_garbage_beside_a_greeting_stays_invalid(text):
    assert not wellformed.check(text).ok
