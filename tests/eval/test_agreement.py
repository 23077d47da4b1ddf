"""The gold annotation set is valid and complete, κ is computed right, and the agreement command reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.labels import BLOOM_LEVELS, COGNITION_STATES, DISCIPLINES, GUIDANCE_LEVELS, INTENTS, STRATEGIES
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.eval.agreement import (
    ALL_FIELDS,
    CONTENT_FIELDS,
    FIELDS,
    GOLD_PATH,
    VARIANTS,
    agreement,
    cohen_kappa,
    load_gold,
    main,
    majority_label,
)

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
        assert isinstance(seed, int)
    assert {ts for ts, _, _ in refs} == {"math", "stem"}
    assert len(refs) >= 30
    # The content records build math tasks from another seed: their labels are about those tasks' numbers.
    assert {seed for ts, _, seed in refs if ts == "math"} >= {0, 7}


def test_content_gold_set(gold):
    """>= 150 tutor turns carry target_kc and addresses_misconception, on both task sets, every variant present."""
    content = [r for r in gold if "target_kc" in r]
    assert all(r["speaker"] == "tutor" and set(CONTENT_FIELDS) <= set(r) for r in content)
    assert len(content) >= 150
    assert {r["task"]["task_set"] for r in content} == {"math", "stem"}
    variants = Counter(r["variant"] for r in content)
    assert {v: variants[v] for v in VARIANTS if variants[v] < 5} == {}
    # Both labels and their absence are represented: a content-free turn has no component.
    assert sum(r["target_kc"] is None for r in content) >= 30
    assert sum(r["addresses_misconception"] is not None for r in content) >= 40
    content_free = ("keyword_stuffing", "name_only", "praise_only", "other_task")
    assert all(r["target_kc"] is None and r["addresses_misconception"] is None
               for r in content if r["variant"] in content_free)
    # Stating the misconception never counts as addressing it.
    assert all(r["addresses_misconception"] is None for r in content if r["variant"] == "misconception_as_rule")


def test_utterances_are_unique(gold):
    counts = Counter(r["utterance"] for r in gold)
    assert [u for u, c in counts.items() if c > 1] == []


BAD_RECORDS = {
    "student-field-on-tutor": ({"student_cognition_state": "incorrect"}, "set it to null on tutor turns"),
    "unknown-intent": ({"teacher_intent": "lecture"}, "is not a label"),
    "unknown-discipline": ({"discipline": ["maths"]}, "discipline must be"),
    "missing-field": ({"cognitive_level": "<drop>"}, "missing field"),
    "bad-turn-index": ({"turn_index": 3}, "expected 0"),
    "unknown-kc": ({"target_kc": "photosynthesis", "addresses_misconception": None}, "not an id of task"),
    "unknown-misconception": ({"target_kc": None, "addresses_misconception": "no_such_belief"}, "not an id of task"),
    "half-a-content-record": ({"target_kc": None}, "add the missing one"),
    "unknown-variant": ({"target_kc": None, "addresses_misconception": None, "variant": "sarcasm"}, "variant"),
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
    assert set(rule_report["fields"]) == set(ALL_FIELDS)
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


def test_baseline_is_the_majority_share(gold, rule_report):
    for field, f in rule_report["fields"].items():
        scored = [r for r in gold if r["speaker"] in ALL_FIELDS[field][0] and field in r]
        share = Counter(json.dumps(r[field], sort_keys=True) for r in scored).most_common(1)[0][1] / len(scored)
        assert f["baseline"] == pytest.approx(share), field
        assert f["below_baseline"] == (f["accuracy"] <= f["baseline"]), field
    assert majority_label(gold, "addresses_misconception") == (None, pytest.approx(rule_report["fields"][
        "addresses_misconception"]["baseline"]))


def test_content_fields_scored_only_on_content_records(rule_report, gold):
    n_content = sum("target_kc" in r for r in gold)
    assert rule_report["fields"]["target_kc"]["n"] == rule_report["fields"]["addresses_misconception"]["n"] == n_content
    assert set(rule_report["by_variant"]) == set(VARIANTS)


def _run_agreement(*args: str) -> subprocess.CompletedProcess:
    """`tutorzoo agreement ...` as a user runs it (the venv's console script), on a wide terminal."""
    exe = Path(sys.executable).with_name("tutorzoo")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "tutorzoo.eval.cli"]
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([*cmd, "agreement", *args], capture_output=True, text=True, env=env, timeout=300,
                          cwd=Path(__file__).resolve().parents[2])


def _rows(out: str) -> dict[str, list[str]]:
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and cells[0] in ALL_FIELDS:
            rows[cells[0]] = cells[1:]
    return rows


def test_command_prints_baseline_beside_every_field(rule_report):
    proc = _run_agreement()
    assert proc.returncode == 0, proc.stderr
    assert "majority baseline" in proc.stdout
    rows = _rows(proc.stdout)
    assert set(rows) == set(ALL_FIELDS)
    for field, cells in rows.items():
        f = rule_report["fields"][field]
        n, baseline, rule_acc = cells[0], cells[1], cells[2]
        assert (int(n), float(baseline)) == (f["n"], round(f["baseline"], 3)), field
        assert float(rule_acc.rstrip(" !")) == round(f["accuracy"], 3), field
        assert rule_acc.endswith("!") == f["below_baseline"], field
    flagged = [f for f, v in rule_report["fields"].items() if v["below_baseline"]]
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("below the majority baseline:")
    assert all(f"rule {f} " in last for f in flagged) and (flagged or last.endswith("none"))


def test_command_flags_a_field_below_its_baseline(tmp_path, gold):
    """A predictions file right on every field but target_kc, where it always answers a rare component."""
    rare = Counter(r["target_kc"] for r in gold if "target_kc" in r).most_common()[-1][0]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({**r, "target_kc": rare} if "target_kc" in r else r) + "\n" for r in gold),
                     encoding="utf-8")
    proc = _run_agreement("--annotator", str(preds), "--annotator", "majority")
    assert proc.returncode == 0, proc.stderr
    rows = _rows(proc.stdout)
    assert rows["target_kc"][2].endswith("!")
    assert all(not cells[2].endswith("!") for field, cells in rows.items() if field != "target_kc")
    # The majority annotator is the baseline itself: never flagged.
    assert all(not cells[4].endswith("!") for cells in rows.values())
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("below the majority baseline:") and "target_kc" in last
    assert [part.split()[1] for part in last.split(": ", 1)[1].split("; ")] == ["target_kc"]


def test_command_rejects_a_bad_gold_file(tmp_path):
    bad = tmp_path / "gold.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    proc = _run_agreement("--gold", str(bad))
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr  # the CLI reports errors on its console
    assert f"{bad}:1" in said and "not valid JSON" in said
