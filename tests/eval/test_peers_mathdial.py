"""MathDial's metrics as MathDial computes them: its own unit-test cases, an excerpt of its test split scored through
``tutorzoo score`` against numbers MathDial's ``interactivetutoring/evaluate.py`` gives on the same excerpt, and
(when the fetched repository is on this machine) the full 599-dialogue test split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.peer_files import peer_file
from tutorzoo.eval.metrics.mathdial import answer_flags, mathdial_answer, states_number, success_telling
from tutorzoo.eval.metrics.turns import normalise_turns
from tutorzoo.eval.references import load_mathdial
from tutorzoo.eval.score import main as score_main

DATA = Path(__file__).resolve().parents[1] / "data" / "peers" / "mathdial"


def _utterances_to_turns(utterances: list[str]) -> list[dict]:
    turns = []
    for u in utterances:
        label, _, text = u.partition(":")
        turns.append({"speaker": "tutor" if label == "Teacher" else "student", "utterance": text.strip()})
    return turns


def _evaluate_at_k(utterances: list[str], answer: str, k: int) -> tuple[bool, bool]:
    turns = normalise_turns(answer_flags(_utterances_to_turns(utterances), answer), "case")
    values = success_telling(turns, ks=(k,))
    return values[f"Success@{k}"] == 1.0, values[f"Telling@{k}"] == 1.0


# MathDial's tests/test_metrics.py, case for case.
@pytest.mark.parametrize(
    ("text", "answer"),
    [
        pytest.param("Sure! I think Tammy has gotten 70 haircuts in total. Here's how I got my answer: I know that for "
                     "every 14 haircuts, Tammy gets a free one. So if she's gotten 5 free haircuts already, that means "
                     "she's gotten 5 groups of 14 haircuts, or 70 haircuts in total. She's also 5 haircuts away from "
                     "her next free one, which means she's gotten 79 haircuts without a free one. ", "79",
                     id="haircuts"),
        pytest.param("Sure! He has to pay $20 more, not $30.", "20", id="dollars"),
    ],
)
def test_mathdial_match_answer_in_text(text: str, answer: str) -> None:
    assert states_number(text, answer)


SOLVED = ["Teacher: Can you walk me through?", "Student: This is my solution: 2+3=5",
          "Teacher: I don't think it is correct, why did you include 2?",
          "Student: Oh I see, sorry for my incorrect answer.",
          "Teacher: What is the answer?", "Student: My corrected asnwer is is 2+4=6",
          "Teacher: Good job, you are right, the answer is 6.", "Student: Thanks"]
TOLD = ["Teacher: Can you walk me through?", "Student: This is my solution: 2+3=5",
        "Teacher: I don't think it is correct, why did you include 2?",
        "Student: Oh I see, sorry for my incorrect answer.",
        "Teacher: I'll tell you the answer, it is 6. Just do 2+4", "Student: Thanks",
        "Teacher: You are welcome", "Student: Bye. I will remember the answer is 6."]


@pytest.mark.parametrize(
    ("utterances", "k", "success", "telling"),
    [
        pytest.param(SOLVED, 1, False, False, id="solved-k1"),
        pytest.param(SOLVED, 2, True, False, id="solved-k2"),
        pytest.param(SOLVED, 3, True, False, id="solved-k3"),
        pytest.param(TOLD, 1, False, False, id="told-k1"),
        pytest.param(TOLD, 2, False, True, id="told-k2"),
        pytest.param(TOLD, 3, True, True, id="told-k3"),
    ],
)
def test_mathdial_evaluate_at_k(utterances: list[str], k: int, success: bool, telling: bool) -> None:
    assert _evaluate_at_k(utterances, "6", k) == (success, telling)


@pytest.mark.parametrize(
    ("text", "answer", "expected"),
    [
        pytest.param("It costs 1,500 dollars", "1500", True, id="commas-removed"),
        pytest.param("It is 10.0 now", "10", True, id="float-equal"),
        pytest.param("It is 100", "10", False, id="whole-number-only"),
        pytest.param("It is -6", "-6", False, id="no-signed-numbers-as-in-mathdial"),
        pytest.param("six", "6", False, id="words-are-not-numbers"),
    ],
)
def test_mathdial_matching_edges(text: str, answer: str, expected: bool) -> None:
    assert states_number(text, answer) is expected


@pytest.mark.parametrize(
    ("ground_truth", "answer"),
    [
        pytest.param("12+3=15 spoons.\n15-5=10 spoons.\n 10", "10", id="newline"),
        pytest.param("5*2=10\\n 10", "10", id="literal-backslash-n"),
    ],
)
def test_mathdial_answer(ground_truth: str, answer: str) -> None:
    assert mathdial_answer(ground_truth) == answer


def _score(path: Path, out: Path, *extra: str) -> dict:
    code = score_main([str(path), "--out", str(out), "--resamples", "0", "--k", "1", "--k", "3", "--k", "5", *extra])
    assert code == 0
    return json.loads((out / "metrics.json").read_text())


def _metric(result: dict, name: str) -> float | None:
    (group,) = result["aggregate"]["groups"].values()
    return group["metrics"][name]["mean"]


# Numbers of MathDial's evaluate.py (its evaluate_at_k, k = 1..7) on the same excerpt; see PROVENANCE.md.
EXCERPT_NUMBERS = {"Success@1": 0.40, "Success@3": 0.50, "Success@5": 0.55,
                   "Telling@1": 0.05, "Telling@3": 0.05, "Telling@5": 0.05}


@pytest.mark.parametrize("name", ["test_excerpt.jsonl", "test_excerpt.csv"])
def test_mathdial_excerpt_reproduces_reference_code(name: str, tmp_path: Path) -> None:
    result = _score(DATA / name, tmp_path)
    assert result["data_format"] == "mathdial"
    assert result["n_records"] == 20
    for metric, value in EXCERPT_NUMBERS.items():
        assert _metric(result, metric) == pytest.approx(value), metric


def test_mathdial_excerpt_keeps_every_field(tmp_path: Path) -> None:
    result = _score(DATA / "test_excerpt.jsonl", tmp_path, "--with-meta")
    meta = result["per_episode"][0]["meta"]
    source = json.loads((DATA / "test_excerpt.jsonl").read_text().splitlines()[0])
    assert set(source) - {"conversation"} <= set(meta)  # the conversation is the record's turns
    assert meta["self-correctness"] == source["self-correctness"]
    assert meta["ground_truth"] == source["ground_truth"]


def test_mathdial_sid_metrics_not_computed_without_annotator(tmp_path: Path) -> None:
    result = _score(DATA / "test_excerpt.jsonl", tmp_path)
    assert _metric(result, "TotalScore") is None and _metric(result, "SD") is None
    assert "SID" in result["not_computed"]


def test_mathdial_generated_dialogues_are_their_own_tutor(tmp_path: Path) -> None:
    """MathDial's README example: evaluate.py on output/example_model_output.jsonl gives 100 everywhere."""
    result = _score(DATA / "example_model_output.jsonl", tmp_path)
    groups = result["aggregate"]["groups"]
    assert set(groups) == {"chatgpt_baseline", "mathdial_human"}
    for k in (1, 3, 5):
        assert groups["chatgpt_baseline"]["metrics"][f"Success@{k}"]["mean"] == 1.0
        assert groups["chatgpt_baseline"]["metrics"][f"Telling@{k}"]["mean"] == 1.0


def test_mathdial_rule_annotator_fills_sid(tmp_path: Path) -> None:
    result = _score(DATA / "test_excerpt.jsonl", tmp_path, "--annotator", "rule")
    assert result["not_computed"] == {}
    assert result["annotator"]["annotator"] == "rule" and result["annotator"]["dialogues"] == 20
    assert 0.0 <= _metric(result, "TotalScore") <= 1.0
    assert _metric(result, "Success@1") == pytest.approx(0.40)  # the answer flags are MathDial's, kept


def test_mathdial_full_test_split(tmp_path: Path) -> None:
    """MathDial's evaluate.py over its 599 test dialogues (student turns under a name label read as the student's):
    Success@1 36.06, Success@3 59.43, Success@5 76.63; Telling@1 2.67, Telling@3 5.01, Telling@5 7.68."""
    path = peer_file("eth-nlped/mathdial", "data/test.jsonl", tmp_path)
    assert len(load_mathdial(path)) == 599
    result = _score(path, tmp_path / "out")
    expected = {"Success@1": 36.06, "Success@3": 59.43, "Success@5": 76.63,
                "Telling@1": 2.67, "Telling@3": 5.01, "Telling@5": 7.68}
    for metric, value in expected.items():
        assert 100 * _metric(result, metric) == pytest.approx(value, abs=0.005), metric
