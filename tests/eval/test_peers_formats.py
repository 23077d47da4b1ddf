"""What ``tutorzoo score`` detects, and what it does with dialogues that carry no SID labels: plain chats and
unlabelled SID-style dialogues get SID metrics only from an annotator (rule or LLM), never zeros; a ranking led by a
tutor that told the answer is flagged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tutorzoo.eval.formats import detect
from tutorzoo.eval.score import main as score_main


def _score(path: Path, out: Path, *extra: str) -> dict:
    assert score_main([str(path), "--out", str(out), "--resamples", "0", *extra]) == 0
    return json.loads((out / "metrics.json").read_text())


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
    src = tmp_path / "plain.json"
    src.write_text(json.dumps([{"turns": [{"speaker": "tutor", "utterance": "Why?"}]}]))
    assert score_main([str(src), "--out", str(tmp_path), "--annotator", "gpt4"]) == 2
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


def test_same_item_episodes_report_no_isomorphic_gain(tmp_path: Path) -> None:
    """Under posttest: same the env's headline gain is a same-item gain: learning_gain (isomorphic) stays null."""
    record = {"tutor": "lecturer", "spec": {"task_set": "mcq", "task_id": "q", "persona": "p", "seed": 0},
              "learning_gain": 1.0, "learning_gain_same": 1.0,
              "transcript": [{"speaker": "tutor", "utterance": "B.", "teacher_intent": "introduce_concept",
                              "teaching_strategy": None, "teacher_guidance_level": "L1"}],
              "pretest": [{"item_id": "q", "correct": False}],
              "posttest": [{"item_id": "q", "kind": "same", "correct": True}]}
    src = tmp_path / "episodes.jsonl"
    src.write_text(json.dumps(record) + "\n")
    metrics = _score(src, tmp_path / "out")["per_episode"][0]["metrics"]
    assert metrics["learning_gain"] is None and metrics["ALG"] is None
    assert metrics["learning_gain_same"] == 1.0 and metrics["ALG_same"] == 100.0
