"""LLM students from the command line and in suites: ``--student llm:hf:<path>`` on rollout and eval, the suite's
``items.student``, and the errors that name the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tutorzoo.envs.errors import ConfigError

pytest.importorskip("transformers")


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / "episodes.jsonl").read_text().splitlines() if line.strip()]


def test_rollout_with_an_llm_student(tiny_model_dir: Path, tmp_path: Path) -> None:
    from tutorzoo.eval.cli import main

    rc = main(["rollout", "--tutor", "socratic", "--episodes", "2", "--max-turns", "2", "--out", str(tmp_path / "r"),
               "--no-html", "--student", f"llm:hf:{tiny_model_dir}", "--student-arg", "threads=1",
               "--student-arg", "max_new_tokens=8"])
    records = _records(tmp_path / "r")
    assert rc == 0 and len(records) == 2
    for r in records:
        assert r["student"].startswith("llm:") and r["student"].endswith(f"hf:{tiny_model_dir}")
        assert r["ended_by"] != "failure" and r["pretest"]  # it answered the pre-test itself


def test_eval_with_a_hybrid_student(tiny_model_dir: Path, tmp_path: Path) -> None:
    from tutorzoo.eval.cli import main

    rc = main(["eval", "--suite", "default", "--limit", "1", "--workers", "1", "--tutor", "socratic", "--no-html",
               "--out", str(tmp_path / "e"), "--student", f"hybrid:hf:{tiny_model_dir}", "--student-arg",
               "threads=1", "--student-arg", "max_new_tokens=8"])
    [record] = _records(tmp_path / "e")
    assert rc == 0 and record["student"].startswith("hybrid:") and record["ended_by"] != "failure"


@pytest.mark.parametrize(
    ("name", "argv", "message"),
    [
        ("unknown kind", ["--student", "robot"], "must be 'simulated'"),
        ("backend missing", ["--student", "llm"], "must be 'simulated'"),
        ("args without student", ["--student-arg", "threads=1"], "need --student"),
        ("bad arg", ["--student", "llm:hf:x", "--student-arg", "threads"], "KEY=VALUE"),
    ],
)
def test_bad_student_options_name_the_fix(tmp_path: Path, name: str, argv: list[str], message: str,
                                          capsys: pytest.CaptureFixture) -> None:
    from tutorzoo.eval.cli import main

    rc = main(["rollout", "--out", str(tmp_path / "x"), *argv])
    assert rc == 2, name
    captured = capsys.readouterr()
    assert message in captured.out + captured.err, name


def test_suite_student_setting_is_checked() -> None:
    from tutorzoo.eval.kinds.episodes import EpisodeSettings

    assert EpisodeSettings(student="llm:hf:models/tiny").student == "llm:hf:models/tiny"
    with pytest.raises(ValueError, match="student must be"):
        EpisodeSettings(student="simulated:x")


def test_make_student_factory() -> None:
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.student.llm import make_student_factory

    assert make_student_factory("simulated") is SimulatedStudent
    with pytest.raises(ConfigError, match="need an LLM student"):
        make_student_factory("simulated", threads=1)


def test_play_against_an_llm_student(tiny_model_dir: Path) -> None:
    from tutorzoo.agents.student.llm import make_student_factory
    from tutorzoo.envs.config import EpisodeSpec
    from tutorzoo.eval.play import play_episode

    spec = EpisodeSpec(task_set="math", persona="anxious", seed=0, protocol={"max_turns": 2})
    student = make_student_factory(f"llm:hf:{tiny_model_dir}", threads=1, max_new_tokens=8)(spec.persona)
    lines = iter(["What is the first step?", "/end"])
    record = play_episode(spec, lambda _prompt: next(lines), student=student)
    assert record["student"].startswith("llm:anxious:") and record["ended_by"] == "end_marker"
