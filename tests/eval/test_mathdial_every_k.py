"""``tutorzoo score`` reports MathDial's Success@k / Telling@k at every k from 1 to ``--max-k`` (default 10, as
MathDial's ``interactivetutoring/evaluate.py``): its unit-test cases (tests/data/mathdial_cases, written in
MathDial's format) at k = 1, 2, 3, and, when a snapshot of MathDial is on the machine, its test split at k = 10."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.peer_files import peer_file
from tutorzoo.eval.metrics.registry import mathdial_ks
from tutorzoo.eval.score import main as score_main

CASES = Path(__file__).resolve().parents[1] / "data" / "mathdial_cases"

# qid -> (Success@1, @2, @3), (Telling@1, @2, @3): the expected values of MathDial's test_metrics.py.
EXPECTED = {
    "1-0": ((0.0, 1.0, 1.0), (0.0, 0.0, 0.0)),
    "2-0": ((0.0, 0.0, 1.0), (0.0, 1.0, 1.0)),
    "3-0": ((1.0, 1.0, 1.0), (0.0, 0.0, 0.0)),
    "4-0": ((1.0, 1.0, 1.0), (0.0, 0.0, 0.0)),
}


def _score(path: Path, out: Path, *extra: str) -> dict:
    assert score_main([str(path), "--out", str(out), "--resamples", "0", *extra]) == 0
    return json.loads((out / "metrics.json").read_text())


@pytest.mark.parametrize("name", ["unit_cases.jsonl", "unit_cases.csv"])
def test_unit_cases_at_k_1_2_3(name: str, tmp_path: Path) -> None:
    result = _score(CASES / name, tmp_path)
    assert result["data_format"] == "mathdial"
    got = {e["dialogue_id"]: e["metrics"] for e in result["per_episode"]}
    assert set(got) == set(EXPECTED)
    for did, (success, telling) in EXPECTED.items():
        assert tuple(got[did][f"Success@{k}"] for k in (1, 2, 3)) == success, did
        assert tuple(got[did][f"Telling@{k}"] for k in (1, 2, 3)) == telling, did


def test_default_is_every_k_to_ten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _score(CASES / "unit_cases.jsonl", tmp_path)
    budgets = sorted(int(n.split("@")[1]) for n in result["metrics"] if n.startswith("Success@"))
    assert budgets == list(range(1, 11))
    (group,) = result["aggregate"]["groups"].values()
    assert group["metrics"]["Success@2"]["mean"] == pytest.approx(0.75)
    assert group["metrics"]["Telling@2"]["mean"] == pytest.approx(0.25)
    out = capsys.readouterr().out
    assert "Success@1..10 (%): 50.00 75.00 100.00" in out
    assert "Telling@1..10 (%): 0.00 25.00 25.00" in out


def test_max_k_sets_the_budgets(tmp_path: Path) -> None:
    result = _score(CASES / "unit_cases.jsonl", tmp_path, "--max-k", "3")
    assert sorted(n for n in result["metrics"] if n.startswith(("Success@", "Telling@"))) == [
        "Success@1", "Success@2", "Success@3", "Telling@1", "Telling@2", "Telling@3"]


@pytest.mark.parametrize("bad", ["0", "-2"])
def test_max_k_below_one_is_refused(bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        score_main([str(CASES / "unit_cases.jsonl"), "--out", str(tmp_path), "--max-k", bad])
    assert exc.value.code == 2
    assert "--max-k 1 or more" in capsys.readouterr().err
    assert not (tmp_path / "metrics.json").exists()


def test_mathdial_ks_rejects_non_integers() -> None:
    assert mathdial_ks(2) == (1, 2)
    with pytest.raises(ValueError, match="positive integer"):
        mathdial_ks(True)  # type: ignore[arg-type]


def test_test_split_at_ten(tmp_path: Path) -> None:
    """MathDial's evaluate.py over the 599 test dialogues (name-labelled student turns read as the student's)."""
    path = peer_file("eth-nlped/mathdial", "data/test.jsonl", tmp_path)
    result = _score(path, tmp_path / "out")
    (group,) = result["aggregate"]["groups"].values()
    success = [round(100 * group["metrics"][f"Success@{k}"]["mean"], 2) for k in range(1, 11)]
    telling = [round(100 * group["metrics"][f"Telling@{k}"]["mean"], 2) for k in range(1, 11)]
    assert success == [36.06, 47.41, 59.43, 68.78, 76.63, 81.14, 86.31, 88.81, 91.15, 92.15]
    assert telling == [2.67, 4.17, 5.01, 5.68, 7.68, 8.68, 9.68, 10.02, 10.85, 11.35]


def test_success_telling_defaults_to_every_k_to_ten() -> None:
    from tutorzoo.eval.metrics.mathdial import success_telling

    turns = [{"speaker": "tutor"}, {"speaker": "student", "states_answer": False},
             {"speaker": "tutor", "reveals_answer": False}, {"speaker": "student", "states_answer": True}]
    values = success_telling(turns)
    assert list(values) == [f"{kind}@{k}" for k in range(1, 11) for kind in ("Success", "Telling")]
    assert values["Success@1"] == 1.0 and values["Telling@10"] == 0.0
    assert list(success_telling(turns, max_k=2)) == ["Success@1", "Telling@1", "Success@2", "Telling@2"]
