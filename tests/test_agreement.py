"""The gold annotation set is valid and complete, κ is computed right, and the agreement command reports."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from envs.errors import DatasetError
from envs.labels import BLOOM_LEVELS, COGNITION_STATES, DISCIPLINES, GUIDANCE_LEVELS, INTENTS, STRATEGIES
from envs.tasks import get_task_set
from eval.agreement import FIELDS, GOLD_PATH, agreement, cohen_kappa, load_gold, main

KAPPA_CASES = {
    "perfect": (["a", "b", "c", "a"], ["a", "b", "c", "a"], 1.0),
    # Both raters say "a" half the time, independently of each other: p_o = p_e = 0.5.
    "chance": (["a", "a", "b", "b"], ["a", "b", "a", "b"], 0.0),
    # 2x2 by hand: 20 a/a, 5 a/b, 10 b/a, 15 b/b -> p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.4.
    "2x2": (["a"] * 25 + ["b"] * 25, ["a"] * 20 + ["b"] * 5 + ["a"] * 10 + ["b"] * 15, 0.4),
    "worse-than-chance": (["a", "b"], ["b", "a"], -1.0),
}


@pytest.mark.parametrize("gold,pred,expected", KAPPA_CASES.values(), ids=KAPPA_CASES.keys())
def test_kappa_by_hand(gold, pred, expected):
    kappa, p_o, p_e = cohen_kappa(gold, pred)
    assert kappa == pytest.approx(expected)
    assert p_o == pytest.approx(sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold))


def test_kappa_undefined_when_both_use_one_label():
    assert cohen_kappa(["x", "x", "x"], ["x", "x", "x"]) == (None, 1.0, 1.0)


def test_kappa_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa(["a"], ["a", "b"])


@pytest.fixture(scope="module")
def gold():
    return load_gold(GOLD_PATH)


def test_gold_size(gold):
    speakers = Counter(r["speaker"] for r in gold)
    assert speakers["tutor"] >= 300 and speakers["student"] >= 150
    lengths = Counter(r["dialogue_id"] for r in gold)
    assert all(4 <= n <= 10 for n in lengths.values()), {d: n for d, n in lengths.items() if not 4 <= n <= 10}


LABEL_SETS = {
    "teacher_intent": INTENTS,
    "teaching_strategy": (*STRATEGIES, None),
    "teacher_guidance_level": GUIDANCE_LEVELS,
    "student_cognition_state": COGNITION_STATES,
    "cognitive_level": BLOOM_LEVELS,
    "discipline_transfer": (True, False),
}


@pytest.mark.parametrize("field,labels", LABEL_SETS.items(), ids=LABEL_SETS.keys())
def test_every_label_used_at_least_twice(gold, field, labels):
    speakers = FIELDS[field][0]
    counts = Counter(r[field] for r in gold if r["speaker"] in speakers)
    assert set(counts) <= set(labels)
    assert {lab: counts[lab] for lab in labels if counts[lab] < 2} == {}


def test_every_discipline_used_at_least_twice_by_each_speaker_kind(gold):
    counts = Counter(d for r in gold for d in r["discipline"])
    assert {d: counts[d] for d in DISCIPLINES if counts[d] < 2} == {}
    assert any(len(r["discipline"]) >= 2 for r in gold if r["speaker"] == "student")


def test_transfer_follows_spec_rule(gold):
    """SPEC §1: true when the turn has a discipline the previous turn lacked, or links two (first turn: links)."""
    previous: dict[str, list[str]] = {}
    for r in gold:
        prev = previous.get(r["dialogue_id"])
        expected = len(r["discipline"]) >= 2 or (prev is not None and any(d not in prev for d in r["discipline"]))
        assert r["discipline_transfer"] == expected, (r["dialogue_id"], r["turn_index"])
        previous[r["dialogue_id"]] = r["discipline"]


def test_gold_tasks_exist_and_use_both_task_sets(gold):
    refs = {(r["task"]["task_set"], r["task"]["task_id"], r["task"]["seed"]) for r in gold}
    for task_set, task_id, seed in sorted(refs):
        assert task_id in get_task_set(task_set).task_ids()
        assert seed == 0
    assert {ts for ts, _, _ in refs} == {"math", "stem"}
    assert len(refs) >= 30


def test_utterances_are_unique(gold):
    counts = Counter(r["utterance"] for r in gold)
    assert [u for u, c in counts.items() if c > 1] == []


BAD_RECORDS = {
    "student-field-on-tutor": ({"student_cognition_state": "incorrect"}, "set it to null on tutor turns"),
    "unknown-intent": ({"teacher_intent": "lecture"}, "is not a label"),
    "unknown-discipline": ({"discipline": ["maths"]}, "discipline must be"),
    "missing-field": ({"cognitive_level": "<drop>"}, "missing field"),
    "bad-turn-index": ({"turn_index": 3}, "expected 0"),
}


@pytest.mark.parametrize("change,message", BAD_RECORDS.values(), ids=BAD_RECORDS.keys())
def test_bad_gold_record_is_reported(tmp_path, gold, change, message):
    rec = dict(gold[0])
    for key, value in change.items():
        if value == "<drop>":
            del rec[key]
        else:
            rec[key] = value
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=message) as err:
        load_gold(path)
    assert f"{path}:1" in str(err.value)


@pytest.fixture(scope="module")
def rule_report():
    return agreement("rule")


def test_rule_annotator_reports_every_field(rule_report):
    assert set(rule_report["fields"]) == set(FIELDS)
    for field, f in rule_report["fields"].items():
        assert f["n"] > 0, field
        assert 0.0 <= f["accuracy"] <= 1.0 and f["kappa"] is not None, field
        # The rule annotators are better than chance on every field.
        assert f["kappa"] > 0.1, (field, f)


def test_rule_agreement_is_deterministic(rule_report):
    assert json.dumps(agreement("rule"), sort_keys=True) == json.dumps(rule_report, sort_keys=True)


def test_majority_baseline_is_chance(gold):
    report = agreement("majority")
    for field, f in report["fields"].items():
        assert f["kappa"] == pytest.approx(0.0), field


def test_predictions_file_equal_to_gold_scores_one(tmp_path, gold):
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in gold), encoding="utf-8")
    for field, f in agreement(str(path))["fields"].items():
        assert f["accuracy"] == 1.0 and f["kappa"] == pytest.approx(1.0), field


def test_main_prints_table_for_every_field(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for field in FIELDS:
        assert field in out
    assert "rule" in out and "majority" in out


def test_main_json(capsys):
    assert main(["--annotator", "rule", "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert all(isinstance(f["kappa"], float) for f in report["fields"].values())
