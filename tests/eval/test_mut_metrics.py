"""Exact values for the bootstrap statistics and PNIR: each case fails on a small bug (see .ci/mutation.py).

The pinned intervals were computed with ``numpy.random.default_rng(seed)``; numpy's ``Generator.integers`` is
stable across releases for a given seed, so a change here is a change in the resampling, not in numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_metrics import iso_record, student, tutor, varied_records

from tutorzoo.envs.errors import DatasetError
from tutorzoo.eval.metrics import episode_metrics, pnir, suite_metrics
from tutorzoo.eval.metrics.educationq import PairCounts, item_pairs
from tutorzoo.eval.metrics.mathdial import states_number, success_telling
from tutorzoo.eval.metrics.mrbench import damr_counts, tutor_labels
from tutorzoo.eval.metrics.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    bootstrap_ci,
    bootstrap_mean_ci,
    nanmean_rows,
    percentile_interval,
    ratio_rows,
    resample_indices,
)

# ---------------------------------------------------------------- stats.py


def test_defaults_are_1000_resamples_at_95_percent():
    assert (DEFAULT_RESAMPLES, DEFAULT_CONFIDENCE) == (1000, 0.95)


@pytest.mark.parametrize(
    ("values", "confidence", "expected"),
    [
        pytest.param([0.0, 1.0, 2.0, 3.0, 4.0], None, (0.8, 3.2), id="seed0-95pct"),
        pytest.param([0.0, 1.0, 2.0, 3.0, 4.0], 0.9, (1.0, 3.0), id="seed0-90pct-is-narrower"),
        pytest.param([0.0, 1.0, np.nan, 3.0, 4.0], None, (0.39666666666666806, 3.6666666666666665),
                     id="seed0-nan-skipped"),
    ],
)
def test_bootstrap_mean_ci_pinned(values, confidence, expected):
    kwargs = {} if confidence is None else {"confidence": confidence}
    got = bootstrap_mean_ci(np.array(values), np.random.default_rng(0), **kwargs)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("confidence", "expected"),
    [
        pytest.param(None, (2.5, 97.5), id="default-is-95pct"),
        pytest.param(0.95, (2.5, 97.5), id="95pct"),
        pytest.param(0.9, (5.0, 95.0), id="90pct"),
        pytest.param(0.5, (25.0, 75.0), id="50pct"),
        pytest.param(0.05, (47.5, 52.5), id="5pct-is-allowed"),
    ],
)
def test_percentile_interval_of_0_to_100(confidence, expected):
    samples = np.arange(101.0)
    got = percentile_interval(samples) if confidence is None else percentile_interval(samples, confidence)
    assert got == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.05, -0.5])
def test_percentile_interval_rejects_confidence_outside_0_1(confidence):
    with pytest.raises(ValueError, match="confidence must be in"):
        percentile_interval(np.arange(5.0), confidence)


@pytest.mark.parametrize(
    ("samples", "expected"),
    [
        pytest.param([np.nan, np.inf, -np.inf], None, id="no-finite-sample-is-none"),
        pytest.param([np.nan, 7.0], (7.0, 7.0), id="one-finite-sample"),
    ],
)
def test_percentile_interval_uses_finite_samples_only(samples, expected):
    assert percentile_interval(np.array(samples)) == expected


def test_resampling_draws_every_index_including_the_first_and_last():
    idx = resample_indices(3, 1000, np.random.default_rng(0))
    assert idx.shape == (1000, 3)
    assert set(np.unique(idx)) == {0, 1, 2}


def test_resampling_one_episode_once_is_allowed():
    assert resample_indices(1, 1, np.random.default_rng(0)).tolist() == [[0]]


@pytest.mark.parametrize(("n", "n_resamples", "fragment"), [(0, 10, "empty sample"), (3, 0, "n_resamples")])
def test_resampling_rejects_empty_input(n, n_resamples, fragment):
    with pytest.raises(ValueError, match=fragment):
        resample_indices(n, n_resamples, np.random.default_rng(0))


ROWS = np.array([[0, 1, 2], [1, 1, 1], [2, 2, 0]])


def test_nanmean_rows_by_hand():
    # row 0: mean(1, 3) = 2; row 1: only NaN -> NaN; row 2: mean(3, 3, 1) = 7/3
    got = nanmean_rows(np.array([1.0, np.nan, 3.0]), ROWS)
    assert got[0] == 2.0 and np.isnan(got[1]) and got[2] == pytest.approx(7 / 3)


def test_ratio_rows_by_hand_and_without_dividing_by_zero():
    # row 0: 6/6; row 1: 6/0 -> NaN; row 2: (3+3+1)/(4+4+2)
    with np.errstate(all="raise"):
        got = ratio_rows(np.array([1, 2, 3]), np.array([2, 0, 4]), ROWS)
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == pytest.approx(0.7)


def test_bootstrap_ci_leaves_undefined_resamples_out():
    # the statistic is undefined (NaN) on every resample without index 0: only the others make the interval
    got = bootstrap_ci(lambda idx: np.where((idx == 0).any(axis=1), 1.0, np.nan), 2, np.random.default_rng(0))
    assert got == (1.0, 1.0)


# ---------------------------------------------------------------- PNIR: one formula, used by the suite too


@pytest.mark.parametrize(
    ("n_pos", "n_neg", "expected"),
    [
        pytest.param(2, 1, 0.5, id="one-neg-two-pos"),
        pytest.param(1, 3, 3.0, id="more-neg-than-pos"),
        pytest.param(4, 0, 0.0, id="no-neg-is-zero"),
        pytest.param(0, 3, None, id="no-pos-is-none"),
    ],
)
def test_pnir_is_neg_over_pos(n_pos, n_neg, expected):
    assert pnir(n_pos, n_neg) == expected
    assert PairCounts(n=10, n_pos=n_pos, n_neg=n_neg).pnir == expected


def test_suite_pnir_and_its_interval_are_pinned():
    m = suite_metrics(varied_records())["groups"]["socratic"]["metrics"]["PNIR"]
    assert m["mean"] == pytest.approx(9 / 7)
    assert m["n"] == 36
    assert (m["ci_low"], m["ci_high"]) == pytest.approx((0.5995833333333337, 2.668749999999998), rel=1e-12)


def test_suite_pnir_pools_counts_over_episodes():
    # ep1: 2 pos, 0 neg; ep2: 1 pos, 3 neg -> pooled 3/3 = 1.0 (the mean of per-episode ratios would be 1.5)
    records = [iso_record([(False, True), (False, True)]), iso_record([(False, True)] + [(True, False)] * 3, seed=1)]
    m = suite_metrics(records, n_resamples=0)["groups"]["socratic"]["metrics"]["PNIR"]
    assert (m["mean"], m["n"], m["ci_low"]) == (1.0, 6, None)


def test_suite_pnir_interval_skips_resamples_without_a_positive():
    # ep0 has the only positive pair; resamples without it have no PNIR and are left out, so the CI is 0..0
    records = [iso_record([(False, True)]), iso_record([(False, False)], seed=1), iso_record([(True, True)], seed=2)]
    m = suite_metrics(records, n_resamples=200)["groups"]["socratic"]["metrics"]["PNIR"]
    assert (m["mean"], m["ci_low"], m["ci_high"], m["n"]) == (0.0, 0.0, 0.0, 3)


# ---------------------------------------------------------------- the suite's pooled metrics and their CIs


def _three_subject_records() -> list[dict]:
    """8 episodes, 15 isomorphic pairs over 3 subjects. By subject (pre, post of 5 pairs): math 4 -> 1 (ALG -60),
    physics 2 -> 3 (+20), chemistry 2 -> 3 (+20); pooled pre 8/15, post 7/15; 4 wrong->right, 5 right->wrong."""
    t, f = True, False
    episodes = [
        ([(t, t)], ["math"]),
        ([(t, t), (t, t)], ["physics", "chemistry"]),
        ([(t, f), (f, f), (f, t)], ["chemistry", "math", "physics"]),
        ([(t, f)], ["math"]),
        ([(f, t), (f, t)], ["physics", "chemistry"]),
        ([(f, f), (t, f), (f, f)], ["chemistry", "math", "physics"]),
        ([(t, f)], ["math"]),
        ([(t, f), (f, t)], ["physics", "chemistry"]),
    ]
    return [iso_record(results, subjects=subjects, seed=i) for i, (results, subjects) in enumerate(episodes)]


@pytest.mark.parametrize(("metric", "mean", "ci"), [
    pytest.param("ACC_pre", 100 * 8 / 15, (31.57072368421053, 83.33333333333334), id="ACC_pre"),
    pytest.param("ACC_post", 100 * 7 / 15, (21.419172932330834, 76.92307692307693), id="ACC_post"),
    pytest.param("ALG", -100 / 15, (-41.66666666666667, 31.25), id="ALG"),
    pytest.param("PNIR", 5 / 4, (0.375, 6.0), id="PNIR"),
    pytest.param("CSS", float(np.std([-60.0, 20.0, 20.0])), (18.856180831641264, 72.0454586617661), id="CSS"),
])
def test_suite_pooled_metrics_and_cis_pinned(metric, mean, ci):
    m = suite_metrics(_three_subject_records())["groups"]["socratic"]["metrics"][metric]
    assert m["mean"] == pytest.approx(mean, rel=1e-12)
    assert (m["ci_low"], m["ci_high"]) == pytest.approx(ci, rel=1e-12)
    assert m["n"] == 15


def test_suite_without_resamples_has_no_cis_and_rejects_negative_counts():
    m = suite_metrics(_three_subject_records(), n_resamples=0)["groups"]["socratic"]["metrics"]
    assert all(m[k]["ci_low"] is None and m[k]["ci_high"] is None for k in ("ALG", "PNIR", "CSS", "SD"))
    assert m["CSS"]["mean"] == pytest.approx(float(np.std([-60.0, 20.0, 20.0])))
    with pytest.raises(ValueError, match="n_resamples must be >= 0"):
        suite_metrics(_three_subject_records(), n_resamples=-1)


def test_suite_bootstrap_block_states_the_method():
    out = suite_metrics(_three_subject_records(), n_resamples=50, confidence=0.9, seed=3)
    assert out["bootstrap"] == {"method": "percentile", "n_resamples": 50, "confidence": 0.9, "seed": 3,
                                "unit": "episode"}


def test_ratio_rows_with_a_denominator_of_one():
    got = ratio_rows(np.array([3, 0]), np.array([1, 0]), np.array([[0], [1], [0]]))
    assert got[0] == 3.0 and np.isnan(got[1]) and got[2] == 3.0


def test_pair_counts_default_to_zero():
    empty = PairCounts()
    assert (empty.n, empty.pre, empty.post, empty.n_pos, empty.n_neg) == (0, 0, 0, 0, 0)
    assert (empty.acc_pre, empty.acc_post, empty.alg, empty.pnir) == (None, None, None, None)
    only_n = PairCounts(n=4)
    assert (only_n.acc_pre, only_n.acc_post, only_n.alg, only_n.pnir) == (0.0, 0.0, 0.0, None)
    assert PairCounts(n=4, pre=1, post=3, n_pos=2, n_neg=0).alg == 50.0


# ---------------------------------------------------------------- parsing, grouping, DAMR


@pytest.mark.parametrize(("record", "fragment"), [
    pytest.param([1, 2], "expected a JSON object", id="not-an-object"),
    pytest.param({"tutor": "a"}, "neither 'transcript'", id="no-turns"),
    pytest.param({"transcript": [], "reward": True}, "'reward' must be a number or null", id="boolean-number"),
    pytest.param({"transcript": [], "learning_gain": "0.5"}, "'learning_gain' must be a number", id="string-number"),
])
def test_parse_errors_name_the_field(record, fragment):
    with pytest.raises(DatasetError, match="record 0") as err:
        suite_metrics([record])
    assert fragment in str(err.value)


def test_passthrough_numbers():
    m = episode_metrics({"transcript": [], "reward": 2, "learning_gain": None, "learning_gain_same": -0.5})
    assert (m["reward"], m["learning_gain"], m["learning_gain_same"]) == (2.0, None, -0.5)


@pytest.mark.parametrize(("group_by", "expected"), [
    pytest.param("tutor", ["a", "b"], id="top-level-key"),
    pytest.param("persona", ["p1", "p2"], id="spec-key"),
    pytest.param("spec.persona", ["p1", "p2"], id="dotted-path"),
    pytest.param("meta.level", ["(unspecified)", "2"], id="nested-path-number"),
    pytest.param("task", ["(unspecified)"], id="a-mapping-is-no-group"),
    pytest.param("nothing", ["(unspecified)"], id="missing"),
])
def test_group_of(group_by, expected):
    a = {**iso_record([(False, True)], tutor_name="a"), "spec": {"persona": "p1", "seed": 0}}
    b = {**iso_record([(True, True)], tutor_name="b", seed=1), "spec": {"persona": "p2", "seed": 1},
         "meta": {"level": 2}}
    assert list(suite_metrics([a, b], group_by=group_by, n_resamples=0)["groups"]) == expected


def test_mean_metric_of_a_group_without_values():
    records = [iso_record([(False, True)]), iso_record([(True, True)], seed=1)]
    for r in records:
        r["transcript"] = [student(), student()]  # no tutor turn: SD undefined
    m = suite_metrics(records)["groups"]["socratic"]["metrics"]
    assert m["SD"] == {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    assert m["SV"]["mean"] == 0.0 and m["SV"]["n"] == 2


def test_uic_without_items_is_none():
    rec = iso_record([(False, True)])
    rec["posttest"], rec["pretest"] = [], []
    m = suite_metrics([rec], n_resamples=0)["groups"]["socratic"]["metrics"]
    assert m["UIC"] == {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    assert m["ACC_pre"] == {"mean": None, "ci_low": None, "ci_high": None, "n": 0}


def test_damr_pooled_over_responses_with_a_pinned_interval():
    def labelled(*reveals):
        rec = iso_record([(False, True)])
        rec["transcript"] = [tutor(reveals=r) for r in reveals]
        return rec

    records = [labelled(False, False, True), labelled(True), labelled(False, False)]
    m = suite_metrics(records, n_resamples=200)["groups"]["socratic"]["metrics"]["DAMR_revealing_answer"]
    assert (m["mean"], m["n"]) == (pytest.approx(400 / 6), 6)
    assert m["ci_low"] < m["mean"] < m["ci_high"]
    assert episode_metrics(records[0])["DAMR_revealing_answer"] == pytest.approx(200 / 3)
    assert episode_metrics(records[0])["DAMR_coherence"] is None


def test_damr_counts_and_unknown_dimension():
    assert damr_counts([{"coherence": "yes"}, {"coherence": "no", "tutor_tone": "encouraging"}])["coherence"] == (
        1, 2)
    with pytest.raises(ValueError, match="unknown MRBench dimension 'tone'"):
        damr_counts([{"tone": "yes"}])
    turns = [{"speaker": "tutor", "mrbench": {"revealing_answer": "yes"}, "reveals_answer": False},
             {"speaker": "student"}, {"speaker": "tutor", "reveals_answer": None}, {"speaker": "tutor"}]
    assert tutor_labels(turns) == [{"revealing_answer": "yes"}, {}, {}]


@pytest.mark.parametrize(("seed", "expected"), [(7, 7), (True, -1), ("7", -1), (None, -1)])
def test_item_key_seed_is_an_int_or_minus_one(seed, expected):
    rec = iso_record([(False, True)])
    rec["spec"]["seed"] = seed
    assert item_pairs(rec, "isomorphic", "t")[0].key == ("math", "t1", "p", expected, "q0")
    rec["spec"] = "not a mapping"
    assert item_pairs(rec, "isomorphic", "t")[0].key == ("", "", "", -1, "q0")


def test_one_pair_is_enough_for_a_value_and_an_interval():
    m = suite_metrics([iso_record([(False, True)])], n_resamples=20)["groups"]["socratic"]["metrics"]
    assert m["ACC_pre"] == {"mean": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 1}
    assert m["ACC_post"] == {"mean": 100.0, "ci_low": 100.0, "ci_high": 100.0, "n": 1}


def _rare_subject_records() -> list[dict]:
    """Chemistry in one episode of six, and one episode without pairs: many resamples lack a subject."""
    t, f = True, False
    episodes = [([(f, t)], ["math"]), ([(t, t)], ["math"]), ([(t, f)], ["physics"]), ([(f, f)], ["math"]),
                ([(f, t)], ["chemistry"]), ([], [])]
    return [iso_record(results, subjects=subjects or None, seed=i) for i, (results, subjects) in enumerate(episodes)]


def test_css_interval_when_resamples_lack_a_subject():
    m = suite_metrics(_rare_subject_records())["groups"]["socratic"]["metrics"]["CSS"]
    # math: 3 pairs, pre 1 -> post 2 (ALG 33.3); physics -100; chemistry +100. A resample with one subject has
    # CSS 0, hence the lower end.
    assert m["mean"] == pytest.approx(float(np.std([100 / 3, -100.0, 100.0])))
    assert (m["ci_low"], m["ci_high"], m["n"]) == pytest.approx((0.0, 94.28090415820634, 5), rel=1e-12)


@pytest.mark.parametrize(("kinds", "gain"), [
    pytest.param(["same", "same"], None, id="same-only-has-no-iso-gain"),
    pytest.param(["same", "isomorphic"], 0.5, id="mixed-keeps-it"),
    pytest.param([], 0.5, id="no-posttest-keeps-it"),
])
def test_learning_gain_of_a_same_only_posttest(kinds, gain):
    pre = [{"item_id": f"q{i}", "correct": False, "kcs": ["k"], "subject": "math"} for i in range(2)]
    post = [{"item_id": "q0" if k == "same" else "q1_iso", "correct": True, "kind": k,
             "parallel_of": None if k == "same" else "q1", "subject": "math"} for k in kinds]
    rec = {**iso_record([]), "pretest": pre, "posttest": post, "learning_gain": 0.5, "learning_gain_same": 1.0}
    m = episode_metrics(rec)
    assert (m["learning_gain"], m["learning_gain_same"]) == (gain, 1.0)


# ---------------------------------------------------------------- MathDial's answer matching


@pytest.mark.parametrize(("text", "answer", "expected"), [
    pytest.param("It is 0.10000001", "0.1", True, id="within-1e-7"),
    pytest.param("It is 0.100000105", "0.1", False, id="just-over-1e-7"),
    pytest.param("It is 0.0000001", "0", False, id="exactly-1e-7-is-not-equal"),
    pytest.param("It is 1,000", "1000", True, id="commas-dropped"),
    pytest.param("It is abc 5", "abc", False, id="a-word-answer-never-matches"),
    pytest.param("It is 3/4", "3/4", False, id="a-fraction-answer-is-not-a-number"),
])
def test_states_number(text, answer, expected):
    assert states_number(text, answer) is expected


@pytest.mark.parametrize(("turns", "expected"), [
    pytest.param([{"speaker": "student", "states_answer": True}], {"Success@1": 1.0, "Telling@1": 0.0},
                 id="only-the-student-flag-recorded"),
    pytest.param([{"speaker": "tutor", "reveals_answer": True}], {"Success@1": 0.0, "Telling@1": 1.0},
                 id="only-the-tutor-flag-recorded"),
    pytest.param([{"speaker": "tutor"}], {"Success@1": None, "Telling@1": None}, id="nothing-recorded"),
])
def test_success_telling_needs_one_recorded_flag(turns, expected):
    assert success_telling(turns, ks=(1,)) == expected


def test_css_resamples_without_any_pair_are_left_out():
    # ep0: math +100, physics -100 (CSS 100); ep1 has no pairs: a resample of ep1 only has no CSS at all
    records = [iso_record([(False, True), (True, False)], subjects=["math", "physics"]), iso_record([], seed=1)]
    m = suite_metrics(records)["groups"]["socratic"]["metrics"]["CSS"]
    assert (m["mean"], m["ci_low"], m["ci_high"], m["n"]) == (100.0, 100.0, 100.0, 2)


@pytest.mark.parametrize("k", [0, -1, True, "3", 1.5])
def test_success_telling_rejects_a_bad_k(k):
    with pytest.raises(ValueError, match="every k must be a positive integer"):
        success_telling([{"speaker": "tutor"}], ks=(k,))
