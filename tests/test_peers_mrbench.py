"""MRBench through ``tutorzoo score`` (DAMR per tutor, every field kept, tolerant speaker labels), and the other
formats the scorer detects: plain chats and unlabelled SID-style dialogues (SID metrics not computed, never 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.formats import detect
from eval.references import load_mrbench, mrbench_speaker
from eval.score import main as score_main
from tests.peer_files import peer_file

DATA = Path(__file__).parent / "data" / "peers" / "mrbench"
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


# ---------------------------------------------------------------- chats and unlabelled dialogues


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param({"transcript": []}, "episodes", id="episode"),
        pytest.param({"turns": []}, "sid_dialogues", id="sid"),
        pytest.param({"messages": []}, "chat", id="chat"),
        pytest.param({"qid": 1, "ground_truth": "1", "conversation": "Teacher: hi|EOM|Student: 1"}, "mathdial",
                     id="mathdial"),
        pytest.param({"conversation_id": "1", "conversation_history": "Tutor: hi"}, "mrbench", id="mrbench"),
        pytest.param({"Teacher-x": {"config": {}, "Student-y": {"config": {}, "q1": {"pre_test": {},
                                                                                  "post_test": {}}}}},
                     "educationq_log", id="educationq-log"),
    ],
)
def test_detect(record: dict, expected: str) -> None:
    assert detect(record) == expected


def test_chat_is_scored_and_sid_not_computed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chats = [{"model": "my-tutor", "messages": [
        {"role": "system", "content": "You are a tutor."},
        {"role": "user", "content": "What is 3/4 + 1/8?"},
        {"role": "assistant", "content": "What do you need before you can add two fractions?"},
        {"role": "user", "content": "The same denominator, so 6/8 + 1/8 = 7/8."},
    ]}]
    src = tmp_path / "chats.jsonl"
    src.write_text("".join(json.dumps(c) + "\n" for c in chats))
    result = _score(src, tmp_path / "out", "--with-meta")
    assert result["data_format"] == "chat"
    group = result["aggregate"]["groups"]["my-tutor"]["metrics"]
    assert all(group[m]["mean"] is None for m in ("SD", "SV", "IKT", "SC", "L3GR", "3C", "TotalScore"))
    assert result["per_episode"][0]["meta"]["system"] == ["You are a tutor."]
    out = capsys.readouterr().out
    assert "SID annotator: none (the default)" in out and "not computed: SID" in out
    labelled = _score(src, tmp_path / "rule", "--annotator", "rule")
    assert labelled["aggregate"]["groups"]["my-tutor"]["metrics"]["SD"]["mean"] is not None


def test_unlabelled_sid_dialogue_is_not_zero(tmp_path: Path) -> None:
    src = tmp_path / "plain.json"
    src.write_text(json.dumps([{"dialogue_id": "d", "turns": [{"speaker": "tutor", "utterance": "Why?"},
                                                              {"speaker": "student", "utterance": "Because."}]}]))
    metrics = _score(src, tmp_path / "out")["per_episode"][0]["metrics"]
    assert metrics["SD"] is None and metrics["3C"] is None and metrics["TotalScore"] is None


def test_unknown_annotator_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert score_main([str(V1), "--out", str(tmp_path), "--annotator", "gpt4"]) == 2
    assert "llm:<backend>:<model>" in capsys.readouterr().err


def _episode(tutor: str, reveals: bool, post_correct: bool, seed: int) -> dict:
    return {"tutor": tutor, "spec": {"task_set": "mcq", "task_id": "q", "persona": "p", "seed": seed},
            "transcript": [{"speaker": "tutor", "utterance": "The answer is B.", "teaching_strategy": None,
                            "teacher_intent": "introduce_concept", "teacher_guidance_level": "L1",
                            "reveals_answer": reveals},
                           {"speaker": "student", "utterance": "OK.", "student_cognition_state": "clear_understanding",
                            "cognitive_level": "remember", "states_answer": False}],
            "pretest": [{"item_id": "q", "correct": False, "subject": "physics"}],
            "posttest": [{"item_id": "q", "kind": "same", "correct": post_correct, "subject": "physics"}]}


def test_ranking_led_by_a_teller_is_flagged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "episodes.jsonl"
    records = [_episode("teller", True, True, s) for s in range(3)] + [_episode("socratic", False, s == 0, s)
                                                                        for s in range(3)]
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = _score(src, tmp_path / "out")
    (warning,) = result["warnings"]
    assert warning.startswith("teller ranks first by ALG_same (same-item post-test gain) and told the answer")
    assert "warning: teller ranks first" in capsys.readouterr().out
    honest = [_episode("teller", False, True, s) for s in range(3)] + records[3:]
    src.write_text("".join(json.dumps(r) + "\n" for r in honest))
    assert _score(src, tmp_path / "out2")["warnings"] == []


def test_llm_annotator_labels_unlabelled_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.chat_server import ChatServer

    def responder(body: dict, index: int) -> str:
        if "TURN TO LABEL (tutor)" in body["messages"][-1]["content"]:
            return json.dumps({"teacher_intent": "guide_reasoning", "teaching_strategy": "hint",
                               "teacher_guidance_level": "L3", "discipline": ["math"]})
        if '"""\n4\n"""' in body["messages"][-1]["content"]:
            return "not JSON"  # one failed turn: counted, its labels left empty
        return json.dumps({"student_cognition_state": "clear_understanding", "cognitive_level": "apply",
                           "discipline": ["math"]})

    src = tmp_path / "plain.json"
    src.write_text(json.dumps([{"dialogue_id": "d", "tutor": "t", "turns": [
        {"speaker": "tutor", "utterance": "Hint: what is 2 + 2?"}, {"speaker": "student", "utterance": "4"},
        {"speaker": "tutor", "utterance": "And 2 + 3?"}, {"speaker": "student", "utterance": "5"}]}]))
    with ChatServer(responder=responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        result = _score(src, tmp_path / "out", "--annotator", "llm:openai:test-model")
    assert result["annotator"]["failed_turns"] == 1 and result["not_computed"] == {}
    metrics = result["per_episode"][0]["metrics"]
    assert metrics["SD"] == 1.0 and metrics["L3GR"] == 1.0 and metrics["SV"] == pytest.approx(1 / 8)
