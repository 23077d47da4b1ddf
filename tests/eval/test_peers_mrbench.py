"""MRBench through ``tutorzoo score``: DAMR per tutor equal to the released labels, every field kept, tolerant
speaker labels (BEA 2025's ``Turor:``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.peer_files import peer_file
from tutorzoo.eval.references import load_mrbench, mrbench_speaker
from tutorzoo.eval.score import main as score_main

DATA = Path(__file__).resolve().parents[1] / "data" / "peers" / "mrbench"
V1 = DATA / "MRBench_V1_excerpt.json"
V3 = DATA / "mrbench_v3_devset_excerpt.json"


def _score(path: Path, out: Path, *extra: str) -> dict:
    assert score_main([str(path), "--out", str(out), "--resamples", "0", *extra]) == 0
    return json.loads((out / "metrics.json").read_text())


def _desired_share(path: Path, tutor: str, dimension: str, desired: str) -> float:
    """DAMR counted straight from the released labels (no TutorZoo code)."""
    labels = [c["anno_llm_responses"][tutor]["annotation"][dimension] for c in json.loads(path.read_text())
              if tutor in c["anno_llm_responses"]]
    return 100 * sum(label == desired for label in labels) / len(labels)


@pytest.mark.parametrize(
    ("tutor", "dimension", "metric", "desired"),
    [
        pytest.param("GPT4", "Revealing_of_the_Answer", "DAMR_revealing_answer", "No", id="gpt4-reveals"),
        pytest.param("Expert", "Mistake_Identification", "DAMR_mistake_identification", "Yes", id="expert-mi"),
        pytest.param("Expert", "Tutor_Tone", "DAMR_tutor_tone", "Encouraging", id="expert-tone"),
        pytest.param("Sonnet", "humanlikeness", "DAMR_humanlikeness", "Yes", id="sonnet-lowercase-key"),
        pytest.param("Llama318B", "Providing_Guidance", "DAMR_providing_guidance", "Yes", id="llama8b-guidance"),
    ],
)
def test_damr_per_tutor_matches_the_labels(tutor: str, dimension: str, metric: str, desired: str,
                                           tmp_path: Path) -> None:
    result = _score(V1, tmp_path)
    assert result["data_format"] == "mrbench"
    value = result["aggregate"]["groups"][tutor]["metrics"][metric]["mean"]
    assert value == pytest.approx(_desired_share(V1, tutor, dimension, desired))


def test_mrbench_by_hand(tmp_path: Path) -> None:
    groups = _score(V1, tmp_path)["aggregate"]["groups"]
    assert groups["GPT4"]["metrics"]["DAMR_revealing_answer"]["mean"] == pytest.approx(100 / 3)
    assert groups["Expert"]["metrics"]["DAMR_tutor_tone"]["mean"] == pytest.approx(100 / 3)
    assert groups["Novice"]["metrics"]["DAMR_mistake_identification"]["n"] == 1


def test_mrbench_keeps_every_field(tmp_path: Path) -> None:
    result = _score(V1, tmp_path, "--with-meta")
    source = json.loads(V1.read_text())[0]
    entry = next(e for e in result["per_episode"] if e["dialogue_id"] == source["conversation_id"])
    for key in ("conversation_history", "Data", "Split", "Topic", "Ground_Truth_Solution"):
        assert entry["meta"][key] == source[key]


def test_turor_typo_is_a_tutor_turn() -> None:
    (conversation,) = load_mrbench(V3)
    speakers = [t.speaker for t in conversation.turns]
    assert speakers == ["tutor", "student", "tutor", "student"]
    assert conversation.turns[2].text == "Walk me through your answer"


@pytest.mark.parametrize(
    ("label", "speaker"),
    [("Tutor", "tutor"), ("Turor", "tutor"), ("TUTOR", "tutor"), ("Teacher", "tutor"), ("Student", "student"),
     ("Studemt", "student"), ("Stuent", "student"), ("Note", None), ("Answer", None), ("Step", None)],
)
def test_mrbench_speaker_labels(label: str, speaker: str | None) -> None:
    assert mrbench_speaker(label) == speaker


def test_mrbench_v3_has_four_dimensions(tmp_path: Path) -> None:
    result = _score(V3, tmp_path)
    expert = result["aggregate"]["groups"]["Expert"]["metrics"]
    assert expert["DAMR_mistake_identification"]["mean"] == 100.0
    assert expert["DAMR_revealing_answer"]["mean"] is None  # not annotated in V3: not computed, not 0


def test_full_mrbench_v1(tmp_path: Path) -> None:
    path = peer_file("kaushal0494/UnifyingAITutorEvaluation", "MRBench/MRBench_V1.json", tmp_path)
    conversations = load_mrbench(path)
    assert len(conversations) == 192  # the paper's 192 conversations
    result = _score(path, tmp_path / "out")
    assert result["n_records"] == sum(len(c.responses) for c in conversations) == 1589
