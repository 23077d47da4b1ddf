"""``tutorzoo score``: score_file and main on files written in tmp_path."""

from __future__ import annotations

import json

import pytest

from tutorzoo.envs.errors import DatasetError
from tutorzoo.eval.score import EXIT_ERROR, EXIT_OK, EXIT_PARTIAL, main, score_file

SPEC_NAMES = ("SD", "SV", "IKT", "BP", "SC", "L3GR", "3C", "TotalScore", "ACC_pre", "ACC_post", "ALG", "PNIR", "CSS",
              "UIC")


def turn(speaker, **labels):
    base = {"speaker": speaker, "utterance": "x", "teacher_intent": None, "teaching_strategy": None,
            "discipline": ["math"], "discipline_transfer": False, "student_cognition_state": None,
            "teacher_guidance_level": None, "cognitive_level": None, "turn": 0, "target_kc": None,
            "reveals_answer": False, "states_answer": False, "invalid": False}
    return {**base, **labels}


def episode(tutor, seed, pre_ok, post_ok, strategy="hint"):
    transcript = [
        turn("student", student_cognition_state="incorrect", cognitive_level="remember"),
        turn("tutor", teacher_intent="guide_reasoning", teaching_strategy=strategy, teacher_guidance_level="L3"),
        turn("student", student_cognition_state="clear_understanding", cognitive_level="apply", states_answer=True),
    ]
    pre = [{"item_id": "q0", "kcs": ["k"], "subject": "math", "response": "r", "extracted": "A", "valid": True,
            "correct": pre_ok}]
    post = [{"item_id": "q0_iso", "kind": "isomorphic", "parallel_of": "q0", "kcs": ["k"], "subject": "math",
             "response": "r", "extracted": "B", "valid": True, "correct": post_ok}]
    return {
        "spec": {"task_set": "math", "task_id": "t", "persona": "p", "seed": seed, "protocol": {}},
        "tutor": tutor, "student": "sim", "task": {"id": "t", "title": "T", "disciplines": ["math"]},
        "transcript": transcript, "pretest": pre, "posttest": post,
        "pretest_score": float(pre_ok), "posttest_score": float(post_ok), "posttest_same_score": None,
        "learning_gain": float(post_ok) - float(pre_ok), "learning_gain_same": None,
        "reward": 0.5, "reward_components": {"gain": 0.5}, "n_tutor_turns": 1, "ended_by": "max_turns",
        "failures": [],
    }


def write_jsonl(path, lines):
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


GOOD = [episode("socratic", 0, False, True), episode("socratic", 1, True, True),
        episode("lecturer", 0, False, False, strategy=None), episode("lecturer", 1, True, False, strategy=None)]


def test_score_file_writes_spec_metric_names(tmp_path):
    src = write_jsonl(tmp_path / "episodes.jsonl", GOOD)
    result = score_file(src, tmp_path / "out", n_resamples=50)
    written = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert written == result
    assert set(SPEC_NAMES) <= set(written["metrics"])
    for group in ("lecturer", "socratic"):
        assert set(SPEC_NAMES) <= set(written["aggregate"]["groups"][group]["metrics"])
    assert [e["location"] for e in written["per_episode"]] == ["line 1", "line 2", "line 3", "line 4"]
    assert written["skipped"] == [] and written["n_records"] == 4
    socratic = written["aggregate"]["groups"]["socratic"]["metrics"]
    lecturer = written["aggregate"]["groups"]["lecturer"]["metrics"]
    # socratic: pairs w->r and r->r -> ALG 50, PNIR 0, UIC 1 (lecturer improved nothing); SD 1 vs 0.
    assert (socratic["ALG"]["mean"], socratic["PNIR"]["mean"], socratic["UIC"]["mean"]) == (50.0, 0.0, 1.0)
    assert (lecturer["ALG"]["mean"], lecturer["PNIR"]["mean"], lecturer["UIC"]["mean"]) == (-50.0, None, 0.0)
    assert (socratic["SD"]["mean"], lecturer["SD"]["mean"]) == (1.0, 0.0)
    assert written["metrics"]["PNIR"]["higher_is_better"] is False


def test_output_is_byte_identical_across_runs(tmp_path):
    src = write_jsonl(tmp_path / "episodes.jsonl", GOOD)
    score_file(src, tmp_path / "a")
    score_file(src, tmp_path / "b")
    assert (tmp_path / "a" / "metrics.json").read_bytes() == (tmp_path / "b" / "metrics.json").read_bytes()


BAD_STRATEGY = episode("socratic", 2, False, True, strategy="lecture")


@pytest.mark.parametrize(
    ("bad_line", "fragment"),
    [
        pytest.param('{"spec": {"task_set": "math"', "not valid JSON", id="truncated-json"),
        pytest.param(json.dumps(BAD_STRATEGY), "'teaching_strategy'", id="unknown-label"),
        pytest.param('{"tutor": "x"}', "neither 'transcript'", id="not-an-episode"),
        pytest.param("[1, 2]", "expected a JSON object", id="array-line"),
    ],
)
def test_bad_line_is_skipped_and_reported(tmp_path, capsys, bad_line, fragment):
    src = write_jsonl(tmp_path / "episodes.jsonl", [GOOD[0], bad_line, "", GOOD[1]])
    assert main([str(src), "--out", str(tmp_path / "out"), "--resamples", "20"]) == EXIT_PARTIAL
    written = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert written["n_records"] == 2
    assert [s["location"] for s in written["skipped"]] == ["line 2"]
    assert "line 2" in written["skipped"][0]["error"] and fragment in written["skipped"][0]["error"]
    assert [e["location"] for e in written["per_episode"]] == ["line 1", "line 4"]
    err = capsys.readouterr().err
    assert "line 2" in err and fragment in err


def test_strict_fails_on_the_first_bad_line_and_writes_nothing(tmp_path, capsys):
    src = write_jsonl(tmp_path / "episodes.jsonl", [GOOD[0], json.dumps(BAD_STRATEGY)])
    assert main([str(src), "--out", str(tmp_path / "out"), "--strict"]) == EXIT_ERROR
    assert not (tmp_path / "out" / "metrics.json").exists()
    assert "line 2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        pytest.param("tutor,ALG\nsocratic,3\n", "unknown format", id="csv"),
        pytest.param("", "unknown format", id="empty"),
        pytest.param('[{"turns": []},\n  {"turns": [}]\n', "line 2", id="broken-json-array"),
        pytest.param('{"oops": 1}\n', "no valid episode", id="no-valid-record"),
    ],
)
def test_unusable_file_is_an_error(tmp_path, capsys, content, fragment):
    src = tmp_path / "in.jsonl"
    src.write_text(content)
    with pytest.raises(DatasetError, match=fragment):
        score_file(src, tmp_path / "out")
    assert main([str(src), "--out", str(tmp_path / "out")]) == EXIT_ERROR
    assert fragment in capsys.readouterr().err
    assert not (tmp_path / "out" / "metrics.json").exists()


def test_sid_style_json_array_gets_sid_metrics(tmp_path):
    dialogues = [{"dialogue_id": "d1", "turns": [
        {"speaker": "Teacher", "utterance": "a", "teacher_intent": "Introduce concepts",
         "teaching_strategy": "Use analogies", "discipline": "Biology, Geography", "discipline_transfer": "Yes",
         "teacher_guidance_level": "L3"},
        {"speaker": "Student", "utterance": "b", "student_cognition_state": "Incorrect answer", "cognitive_level": 1},
        {"speaker": "Teacher", "utterance": "c", "teacher_intent": "Summarize and elevate",
         "teaching_strategy": None, "discipline": "Biology", "discipline_transfer": "No",
         "teacher_guidance_level": "L1"},
        {"speaker": "Student", "utterance": "d", "student_cognition_state": "Higher-order thinking",
         "cognitive_level": 4},
    ]}]
    src = tmp_path / "sid.json"
    src.write_text(json.dumps(dialogues, indent=1))
    result = score_file(src, tmp_path, n_resamples=10)
    m = result["per_episode"][0]["metrics"]
    assert result["format"] == "json_array" and result["per_episode"][0]["dialogue_id"] == "d1"
    # SD 1/2, SV 1/8, IKT 1/2, BP (4-1)/5, SC 2/4, L3GR 1/2, 3C 1/1.
    expected = {"SD": 0.5, "SV": 0.125, "IKT": 0.5, "BP": 0.6, "SC": 0.5, "L3GR": 0.5, "3C": 1.0}
    assert {k: m[k] for k in expected} == pytest.approx(expected)
    assert m["TotalScore"] == pytest.approx(0.075 + 0.0125 + 0.075 + 0.09 + 0.075 + 0.05 + 0.2)
    assert m["ALG"] is None and m["Success@3"] is None
    assert list(result["aggregate"]["groups"]) == ["(unspecified)"]


def test_pretty_printed_single_record(tmp_path):
    src = tmp_path / "one.json"
    src.write_text(json.dumps(GOOD[0], indent=2))
    result = score_file(src, tmp_path / "out", n_resamples=0)
    assert result["format"] == "json_object" and result["n_records"] == 1
    assert result["aggregate"]["groups"]["socratic"]["metrics"]["ALG"]["ci_low"] is None


def test_main_defaults_out_to_the_files_folder(tmp_path, capsys):
    src = write_jsonl(tmp_path / "episodes.jsonl", GOOD)
    assert main([str(src), "--k", "1", "--group-by", "persona", "--resamples", "10"]) == EXIT_OK
    written = json.loads((tmp_path / "metrics.json").read_text())
    assert list(written["aggregate"]["groups"]) == ["p"]
    assert "Success@1" in written["metrics"] and "Success@3" not in written["metrics"]
    assert "wrote" in capsys.readouterr().out
