"""Pedagogy metrics against values computed by hand from the formulas of docs/spec.md §2, §4 and §7."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tutorzoo.envs.errors import DatasetError
from tutorzoo.eval.metrics import (
    METRICS,
    MetricSpec,
    bootstrap_mean_ci,
    damr,
    episode_metrics,
    normalise_turns,
    sid_metrics,
    success_telling,
    suite_metrics,
    total_score,
    uic,
)
from tutorzoo.eval.metrics.educationq import css, item_pairs, pair_counts, subject_counts
from tutorzoo.eval.metrics.mrbench import tutor_labels

BLOOM = {"remember": 0, "understand": 1, "apply": 2, "analyze": 3, "evaluate": 4, "create": 5}


def tutor(strategy=None, intent="check_understanding", level="L1", transfer=False, reveals=None, mrbench=None):
    turn = {"speaker": "tutor", "utterance": "t", "teacher_intent": intent, "teaching_strategy": strategy,
            "discipline": ["math"], "discipline_transfer": transfer, "student_cognition_state": None,
            "teacher_guidance_level": level, "cognitive_level": None}
    if reveals is not None:
        turn["reveals_answer"] = reveals
    if mrbench is not None:
        turn["mrbench"] = mrbench
    return turn


def student(state="vague_understanding", bloom="remember", transfer=False, states=None):
    turn = {"speaker": "student", "utterance": "s", "teacher_intent": None, "teaching_strategy": None,
            "discipline": ["math"], "discipline_transfer": transfer, "student_cognition_state": state,
            "teacher_guidance_level": None, "cognitive_level": bloom}
    if states is not None:
        turn["states_answer"] = states
    return turn


def sid(turns):
    return sid_metrics(normalise_turns(turns, "test"))


BASIC = [
    tutor("hint", "introduce_concept", "L2"),
    student("incorrect", "remember"),
    tutor("analogy", "guide_reasoning", "L3", transfer=True),
    student("clear_understanding", "apply", transfer=True),
    tutor(None, "summarize", "L1"),
    student("higher_order", "analyze"),
]

# (turns, metric, expected) — every expected value worked out by hand from docs/spec.md §2.
SID_CASES = [
    pytest.param(BASIC, "SD", 2 / 3, id="SD-two-of-three-tutor-turns-use-a-strategy"),
    pytest.param(BASIC, "SV", 2 / 8, id="SV-two-distinct-of-eight"),
    pytest.param(BASIC, "IKT", 1 / 3, id="IKT-paper-counts-tutor-transfers-only"),
    pytest.param(BASIC, "IKT_with_students", 2 / 3, id="IKT-variant-counts-student-transfer-too"),
    pytest.param(BASIC, "BP", 3 / 5, id="BP-remember-to-analyze"),
    pytest.param(BASIC, "SC", 3 / 4, id="SC-three-core-intents"),
    pytest.param(BASIC, "L3GR", 1 / 3, id="L3GR-one-L3-turn"),
    pytest.param(BASIC, "3C", 1.0, id="3C-error-then-clear-is-corrected"),
    pytest.param([tutor("hint"), tutor("hint"), tutor("analogy")], "SV", 2 / 8, id="SV-repeats-count-once"),
    pytest.param([tutor(s) for s in ("follow_up_question", "hint", "analogy", "scenario_question", "break_down",
                                     "encourage", "corrective_feedback", "contextualize")],
                 "SV", 1.0, id="SV-all-eight-strategies"),
    pytest.param([tutor(intent="check_understanding")] * 3, "SC", 0.0, id="SC-check-understanding-is-not-core"),
    pytest.param([tutor(intent=i) for i in ("introduce_concept", "guide_reasoning", "trigger_transfer",
                                            "summarize")], "SC", 1.0, id="SC-all-four-core-intents"),
    pytest.param([tutor(), student("clear_understanding"), tutor(), student("vague_understanding")],
                 "3C", 1.0, id="3C-no-error-is-one"),
    pytest.param([tutor(), student("clear_understanding"), tutor(), student("incorrect")],
                 "3C", 0.0, id="3C-error-at-last-student-turn-not-corrected"),
    pytest.param([student("incorrect"), tutor(), student("vague_understanding"), tutor(),
                  student("clear_understanding")], "3C", 0.0, id="3C-only-the-next-student-turn-counts"),
    pytest.param([student("incorrect"), tutor(), student("incorrect"), tutor(), student("higher_order")],
                 "3C", 0.5, id="3C-two-errors-one-corrected"),
    pytest.param([tutor(), student(bloom="create")], "BP", 0.0, id="BP-one-student-turn-is-zero"),
    pytest.param([tutor(), student(bloom=None)], "BP", None, id="BP-no-labelled-student-turn-is-none"),
    pytest.param([tutor()], "3C", 1.0, id="3C-no-student-turn-is-one"),
    pytest.param([student(), student()], "SD", None, id="no-tutor-turn-SD-none"),
    pytest.param([student(), student()], "IKT", None, id="no-tutor-turn-IKT-none"),
    pytest.param([student(), student()], "L3GR", None, id="no-tutor-turn-L3GR-none"),
    pytest.param([student(), student()], "SV", 0.0, id="no-tutor-turn-SV-zero"),
    pytest.param([student(), student()], "SC", 0.0, id="no-tutor-turn-SC-zero"),
    pytest.param([student(), student()], "TotalScore", None, id="no-tutor-turn-TotalScore-none"),
    pytest.param([tutor(transfer=True), student(transfer=True), student(transfer=True)], "IKT_with_students", 3.0,
                 id="IKT-variant-can-exceed-one"),
]


@pytest.mark.parametrize(("turns", "metric", "expected"), SID_CASES)
def test_sid_metric(turns, metric, expected):
    value = sid(turns)[metric]
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected, abs=1e-12)


def test_total_score_weights_by_hand():
    # 0.15*2/3 + 0.10*0.25 + 0.15*1/3 + 0.15*0.6 + 0.15*0.75 + 0.10*1/3 + 0.20*1
    expected = 0.1 + 0.025 + 0.05 + 0.09 + 0.1125 + 0.1 / 3 + 0.2
    assert sid(BASIC)["TotalScore"] == pytest.approx(expected, abs=1e-12)
    assert total_score({"SD": 1, "SV": 1, "IKT": 1, "BP": 1, "SC": 1, "L3GR": 1, "3C": 1}) == pytest.approx(1.0)
    assert total_score({"SD": 1, "SV": 0, "IKT": 0, "BP": 0, "SC": 0, "L3GR": 0, "3C": 0}) == pytest.approx(0.15)


def test_invalid_tutor_turn_stays_in_the_denominator():
    turns = [tutor("hint", level="L3"), {**tutor(None), "invalid": True}]
    assert sid(turns)["SD"] == pytest.approx(0.5)
    assert sid(turns)["L3GR"] == pytest.approx(0.5)


def test_sid_style_dialogue_spelling_gives_the_same_metrics():
    sid_style = [
        {"Speaker": "Teacher", "Utterance": "a", "Teacher_intent": "Introduce concepts",
         "Teaching_strategy": "Provide hints", "Discipline": "Math", "discipline_transfer": "No",
         "Teacher_guidance_level": "L2"},
        {"speaker": "student", "utterance": "b", "student_cognition_state": "Incorrect answer",
         "cognitive_level": 0, "discipline_transfer": "no"},
        {"speaker": "teacher", "utterance": "c", "teacher_intent": "Guide reasoning",
         "teaching_strategy": "Use analogies", "discipline": "Math, Physics", "discipline_transfer": "Yes",
         "teacher_guidance_level": "L3"},
        {"speaker": "student", "utterance": "d", "student_cognition_state": "Clear understanding",
         "cognitive_level": 2.0, "discipline_transfer": True},
        {"speaker": "teacher", "utterance": "e", "teacher_intent": "Summarize and elevate",
         "teaching_strategy": "", "teacher_guidance_level": "l1"},
        {"speaker": "student", "utterance": "f", "student_cognition_state": "Higher-order thinking",
         "cognitive_level": "Analyze"},
    ]
    assert sid(sid_style) == sid(BASIC)


@pytest.mark.parametrize(
    ("turn", "fragment"),
    [
        pytest.param({"speaker": "tutor", "teaching_strategy": "lecture"}, "'teaching_strategy'",
                     id="unknown-strategy"),
        pytest.param({"speaker": "student", "cognitive_level": 6}, "0-5", id="bloom-index-out-of-range"),
        pytest.param({"speaker": "student", "cognitive_level": 2.5}, "'cognitive_level'", id="bloom-fraction"),
        pytest.param({"speaker": "student", "cognitive_level": "Synthesize"}, "'cognitive_level'",
                     id="bloom-unknown-name"),
        pytest.param({"speaker": "robot"}, "'speaker'", id="unknown-speaker"),
        pytest.param({"utterance": "x"}, "missing 'speaker'", id="no-speaker"),
        pytest.param({"speaker": "student", "discipline_transfer": "maybe"}, "discipline_transfer", id="bad-flag"),
        pytest.param({"speaker": "tutor", "mrbench": {"politeness": "yes"}}, "politeness", id="bad-damr-dimension"),
    ],
)
def test_bad_turn_names_record_turn_and_field(turn, fragment):
    with pytest.raises(DatasetError) as err:
        normalise_turns([{"speaker": "tutor"}, turn], "dialogue 7")
    assert "dialogue 7, turn 1" in str(err.value)
    assert fragment in str(err.value)


# ---------------------------------------------------------------- EducationQ


def item(item_id, correct, subject="math", kind=None, parallel_of=None):
    out = {"item_id": item_id, "kcs": ["k"], "subject": subject, "response": "r", "extracted": "A",
           "valid": True, "correct": correct}
    if kind is not None:
        out["kind"] = kind
        out["parallel_of"] = parallel_of
    return out


def record(pre, post, tutor_name="socratic", persona="p", seed=0, transcript=None, **extra):
    return {
        "spec": {"task_set": "math", "task_id": "t1", "persona": persona, "seed": seed, "protocol": {}},
        "tutor": tutor_name, "student": "sim", "task": {"id": "t1", "title": "T", "disciplines": ["math"]},
        "transcript": transcript if transcript is not None else list(BASIC),
        "pretest": pre, "posttest": post, **extra,
    }


def iso_record(results, tutor_name="socratic", subjects=None, seed=0):
    """One record with one isomorphic pair per (pre_correct, post_correct) in ``results``."""
    subjects = subjects or ["math"] * len(results)
    pre = [item(f"q{i}", a, s) for i, ((a, _), s) in enumerate(zip(results, subjects, strict=True))]
    post = [item(f"q{i}_iso", b, s, "isomorphic", f"q{i}") for i, ((_, b), s) in enumerate(zip(results, subjects,
                                                                                               strict=True))]
    return record(pre, post, tutor_name=tutor_name, seed=seed)


FOUR = [(False, True), (True, False), (False, True), (True, True)]


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        pytest.param("ACC_pre", 50.0, id="ACC-pre-two-of-four"),
        pytest.param("ACC_post", 75.0, id="ACC-post-three-of-four"),
        pytest.param("ALG", 25.0, id="ALG-percentage-points"),
        pytest.param("ACC_pre_same", None, id="no-same-items-no-same-variant"),
    ],
)
def test_educationq_episode(metric, expected):
    assert episode_metrics(iso_record(FOUR))[metric] == expected


def test_same_and_isomorphic_pairs_are_scored_separately():
    pre = [item("q0", False), item("q1", False)]
    post = [item("q0", True, kind="same"), item("q1", True, kind="same"),
            item("q0_iso", False, kind="isomorphic", parallel_of="q0"),
            item("q1_iso", True, kind="isomorphic", parallel_of="q1")]
    m = episode_metrics(record(pre, post))
    assert (m["ALG_same"], m["ALG"]) == (100.0, 50.0)


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        pytest.param(FOUR, 0.5, id="one-neg-two-pos"),
        pytest.param([(True, False), (False, False), (True, True)], None, id="no-positive-is-none"),
        pytest.param([(False, True)], 0.0, id="no-negative-is-zero"),
    ],
)
def test_pnir(results, expected):
    out = suite_metrics([iso_record(results)], n_resamples=0)["groups"]["socratic"]["metrics"]["PNIR"]
    assert out["mean"] == expected


@pytest.mark.parametrize(
    ("results", "subjects", "expected"),
    [
        pytest.param(FOUR, ["math"] * 4, 0.0, id="single-subject-is-zero"),
        # math: w->r, r->r gives ALG 50; physics: r->w, w->w gives -50; population std = 50 (sample std 70.7).
        pytest.param([(False, True), (True, True), (True, False), (False, False)],
                     ["math", "math", "physics", "physics"], 50.0, id="two-subjects-population-std"),
        # math ALG 100, physics 0, chemistry 0: std of [100, 0, 0] = sqrt(20000/9).
        pytest.param([(False, True), (True, True), (False, False)], ["math", "physics", "chemistry"],
                     math.sqrt(20000 / 9), id="three-subjects"),
    ],
)
def test_css(results, subjects, expected):
    rec = iso_record(results, subjects=subjects)
    assert css(subject_counts(item_pairs(rec, "isomorphic", "t"))) == pytest.approx(expected)
    out = suite_metrics([rec], n_resamples=0)["groups"]["socratic"]["metrics"]["CSS"]
    assert out["mean"] == pytest.approx(expected)


def test_subject_falls_back_to_task_discipline():
    rec = iso_record([(False, True)], subjects=[None])
    rec["task"]["disciplines"] = ["physics"]
    assert item_pairs(rec, "isomorphic", "t")[0].subject == "physics"


def test_uic_three_tutors_by_hand():
    k = [("math", "t1", "p", 0, f"q{i}") for i in range(4)]
    assert uic({"a": {k[0], k[1], k[2]}, "b": {k[1]}, "c": {k[2], k[3]}}) == {"a": 1, "b": 0, "c": 1}


def test_uic_across_three_tutors_in_suite():
    # Same spec for all: items q0..q3. a improves q0, q1, q2; b improves q1; c improves q2, q3.
    improves = {"a": {0, 1, 2}, "b": {1}, "c": {2, 3}}
    records = [iso_record([(False, i in improves[t]) for i in range(4)], tutor_name=t) for t in "abc"]
    groups = suite_metrics(records, n_resamples=0)["groups"]
    assert {t: groups[t]["metrics"]["UIC"]["mean"] for t in "abc"} == {"a": 1.0, "b": 0.0, "c": 1.0}
    assert groups["a"]["metrics"]["UIC"]["ci_low"] is None


def test_uic_items_differ_by_seed():
    records = [iso_record([(False, True)], tutor_name="a", seed=0), iso_record([(False, True)], tutor_name="b", seed=1)]
    groups = suite_metrics(records, n_resamples=0)["groups"]
    assert groups["a"]["metrics"]["UIC"]["mean"] == groups["b"]["metrics"]["UIC"]["mean"] == 1.0


def test_suite_accuracy_is_pooled_over_items():
    # ep1: 1 pair w->r (ALG 100); ep2: r->r, w->w, w->w (ALG 0). Pooled: pre 1/4, post 2/4.
    records = [iso_record([(False, True)]), iso_record([(True, True), (False, False), (False, False)], seed=1)]
    m = suite_metrics(records, n_resamples=0)["groups"]["socratic"]["metrics"]
    assert (m["ACC_pre"]["mean"], m["ACC_post"]["mean"], m["ALG"]["mean"], m["ALG"]["n"]) == (25.0, 50.0, 25.0, 4)


@pytest.mark.parametrize(
    ("post", "fragment"),
    [
        pytest.param([item("q9_iso", True, kind="isomorphic", parallel_of="q9")], "parallel_of='q9'", id="iso-orphan"),
        pytest.param([item("q9", True, kind="same")], "item_id='q9'", id="same-orphan"),
        pytest.param([item("q0_iso", True, kind="rephrased", parallel_of="q0")], "'kind'", id="unknown-kind"),
    ],
)
def test_unpaired_post_item_is_an_error(post, fragment):
    with pytest.raises(DatasetError) as err:
        episode_metrics(record([item("q0", False)], post))
    assert fragment in str(err.value)


def test_pair_counts_by_hand():
    counts = pair_counts(item_pairs(iso_record(FOUR), "isomorphic", "t"))
    assert (counts.n, counts.pre, counts.post, counts.n_pos, counts.n_neg) == (4, 2, 3, 2, 1)


# ---------------------------------------------------------------- MathDial


def dialogue(reveal_at=None, state_at=None, n=4):
    """n tutor/student exchanges; the tutor reveals at its turn ``reveal_at``, the student states at ``state_at``,
    each speaker's turns counted from 0 as MathDial does (exchange 0 is the opening one)."""
    turns = []
    for i in range(n):
        turns.append(tutor(reveals=(i == reveal_at)))
        turns.append(student(states=(i == state_at)))
    return normalise_turns(turns, "t")


@pytest.mark.parametrize(
    ("reveal_at", "state_at", "expected"),
    [
        pytest.param(None, 2, {"Success@1": 0, "Success@2": 1, "Success@3": 1, "Telling@1": 0, "Telling@2": 0,
                               "Telling@3": 0}, id="student-solves-alone-at-2"),
        pytest.param(1, 2, {"Success@1": 0, "Success@2": 1, "Success@3": 1, "Telling@1": 1, "Telling@2": 1,
                            "Telling@3": 1}, id="told-then-solved"),
        pytest.param(3, 2, {"Success@1": 0, "Success@2": 1, "Success@3": 1, "Telling@1": 0, "Telling@2": 0,
                            "Telling@3": 0}, id="told-after-solved-is-not-telling"),
        pytest.param(2, None, {"Success@1": 0, "Success@2": 0, "Success@3": 0, "Telling@1": 0, "Telling@2": 1,
                               "Telling@3": 1}, id="told-never-solved"),
        pytest.param(2, 2, {"Success@1": 0, "Success@2": 1, "Success@3": 1, "Telling@1": 0, "Telling@2": 1,
                            "Telling@3": 1}, id="told-in-the-same-exchange"),
    ],
)
def test_success_telling(reveal_at, state_at, expected):
    assert success_telling(dialogue(reveal_at, state_at), ks=(1, 2, 3)) == expected


def test_success_telling_unrecorded_is_none():
    assert set(success_telling(normalise_turns(BASIC, "t"), ks=(3,)).values()) == {None}


# ---------------------------------------------------------------- MRBench


@pytest.mark.parametrize(
    ("labels", "dimension", "expected"),
    [
        pytest.param([{"revealing_answer": "no"}, {"revealing_answer": "yes"}], "revealing_answer", 50.0,
                     id="revealing-desired-no"),
        pytest.param([{"tutor_tone": "encouraging"}, {"tutor_tone": "neutral"}, {"tutor_tone": "encouraging"},
                      {"tutor_tone": "offensive"}], "tutor_tone", 50.0, id="tone-desired-encouraging"),
        pytest.param([{"mistake_identification": "yes"}, {"mistake_identification": "to_some_extent"},
                      {"mistake_identification": "yes"}], "mistake_identification", 200 / 3,
                     id="partial-is-not-desired"),
        pytest.param([{"coherence": "yes"}], "actionability", None, id="unlabelled-dimension-none"),
    ],
)
def test_damr(labels, dimension, expected):
    value = damr(labels)[dimension]
    assert value == (None if expected is None else pytest.approx(expected))


def test_damr_from_transcript_uses_judge_label_then_reveal_flag():
    turns = normalise_turns([
        tutor(reveals=True), student(), tutor(reveals=False), student(),
        tutor(reveals=True, mrbench={"Revealing_of_the_Answer": "No", "Tutor_Tone": "Encouraging"}),
    ], "t")
    labels = tutor_labels(turns)
    assert [lab["revealing_answer"] for lab in labels] == ["yes", "no", "no"]
    assert damr(labels)["revealing_answer"] == pytest.approx(200 / 3)
    assert damr(labels)["tutor_tone"] == 100.0


# ---------------------------------------------------------------- registry and bootstrap


def test_registry_declares_every_episode_metric():
    metrics = episode_metrics(iso_record(FOUR))
    assert list(metrics) == [n for n, s in METRICS.items() if s.level == "episode"]
    assert {n: METRICS[n].higher_is_better for n in ("TotalScore", "ALG", "PNIR", "CSS", "UIC")} == {
        "TotalScore": True, "ALG": True, "PNIR": False, "CSS": False, "UIC": True}


@pytest.mark.parametrize(("level", "aggregation"), [("dialogue", "mean"), ("episode", "median")],
                         ids=["bad-level", "bad-aggregation"])
def test_metric_spec_rejects_unknown_values(level, aggregation):
    with pytest.raises(ValueError, match="must be one of"):
        MetricSpec("X", True, aggregation, level, "x")


def varied_records(tutor_name="socratic", n=12):
    rng = np.random.default_rng(3)
    records = []
    for seed in range(n):
        transcript = []
        for _ in range(int(rng.integers(1, 5))):
            transcript.append(tutor(["hint", None, "analogy"][int(rng.integers(3))], level=["L1", "L3"][seed % 2]))
            transcript.append(student(["incorrect", "clear_understanding"][int(rng.integers(2))],
                                      list(BLOOM)[int(rng.integers(6))]))
        results = [(bool(rng.integers(2)), bool(rng.integers(2))) for _ in range(3)]
        rec = iso_record(results, tutor_name=tutor_name, seed=seed)
        rec["transcript"] = transcript
        records.append(rec)
    return records


@pytest.mark.parametrize("metric", ["TotalScore", "SD", "BP", "ACC_post", "ALG"])
def test_bootstrap_ci_contains_mean_and_is_deterministic(metric):
    records = varied_records()
    first = suite_metrics(records)["groups"]["socratic"]["metrics"][metric]
    again = suite_metrics(records)["groups"]["socratic"]["metrics"][metric]
    assert first == again
    assert first["ci_low"] <= first["mean"] <= first["ci_high"]
    assert first["ci_low"] < first["ci_high"]
    other_seed = suite_metrics(records, seed=1)["groups"]["socratic"]["metrics"][metric]
    assert other_seed["mean"] == first["mean"]


def test_bootstrap_seed_changes_the_interval_not_the_mean():
    records = varied_records()
    first = suite_metrics(records)["groups"]["socratic"]["metrics"]["TotalScore"]
    other = suite_metrics(records, seed=1)["groups"]["socratic"]["metrics"]["TotalScore"]
    assert other["mean"] == first["mean"]
    assert (other["ci_low"], other["ci_high"]) != (first["ci_low"], first["ci_high"])


def test_group_cis_do_not_depend_on_other_groups():
    alone = suite_metrics(varied_records("a"))["groups"]["a"]
    together = suite_metrics(varied_records("a") + varied_records("b", n=5))["groups"]["a"]
    assert {k: v for k, v in alone["metrics"].items() if not k.startswith("UIC")} == {
        k: v for k, v in together["metrics"].items() if not k.startswith("UIC")}


def test_bootstrap_mean_ci_by_hand():
    assert bootstrap_mean_ci(np.array([0.4, 0.4, 0.4]), np.random.default_rng(0)) == pytest.approx((0.4, 0.4))
    low, high = bootstrap_mean_ci(np.array([0.0, 1.0] * 20), np.random.default_rng(0))
    # Mean of 40 fair coins: sd 0.079, so a 95% interval is about 0.5 +- 0.155.
    assert 0.3 < low < 0.42 and 0.58 < high < 0.7


def test_group_by_spec_key():
    records = varied_records(n=4)
    for i, rec in enumerate(records):
        rec["spec"]["persona"] = ["fast", "slow"][i % 2]
    out = suite_metrics(records, group_by="persona", n_resamples=10)
    assert list(out["groups"]) == ["fast", "slow"]
    assert [g["n_episodes"] for g in out["groups"].values()] == [2, 2]
