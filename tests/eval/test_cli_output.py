"""The output rule, run as a user runs it (the ``tutorzoo`` console script in a subprocess, exit status and
message checked): nothing in ``--out`` is deleted without ``--overwrite``; ``--out`` naming a file, ``score``
given a folder and non-positive counts get one-line errors naming the fix (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORZOO = Path(sys.executable).with_name("tutorzoo")


def tutorzoo(*args: str, cwd: Path, columns: int = 200, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1", "WANDB_MODE": "disabled"}
    env.pop("PYTHONPATH", None)  # what a user has: the installed package and the folder they are in
    return subprocess.run([str(TUTORZOO), *args], cwd=cwd, env=env, capture_output=True, text=True, input=stdin,
                          timeout=600)


def one_line_error(done: subprocess.CompletedProcess, *needles: str) -> str:
    """The run failed with status 2 and one line (no traceback) that holds every needle."""
    text = (done.stdout + done.stderr).strip()
    assert done.returncode == 2, text[-2000:]
    assert "Traceback" not in text, text[-2000:]
    assert len(text.splitlines()) == 1, text
    for needle in needles:
        assert needle in text, text
    return text


def rollout(cwd: Path, out: str, *extra: str, episodes: int = 2,
            tutor: str = "socratic") -> subprocess.CompletedProcess:
    return tutorzoo("rollout", "--tutor", tutor, "--episodes", str(episodes), "--out", out, "--no-html", *extra,
                    cwd=cwd)


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a finished 2-episode rollout."""
    cwd = tmp_path_factory.mktemp("cwd")
    done = rollout(cwd, "run")
    assert done.returncode == 0, done.stdout + done.stderr
    return cwd


def test_rollout_refuses_a_folder_that_holds_records(first_run: Path, tmp_path: Path) -> None:
    cwd = tmp_path
    (cwd / "run").mkdir()
    before = (first_run / "run" / "episodes.jsonl").read_bytes()
    (cwd / "run" / "episodes.jsonl").write_bytes(before)
    (cwd / "run" / "run.json").write_bytes((first_run / "run" / "run.json").read_bytes())
    one_line_error(rollout(cwd, "run", tutor="random"), "already holds 2 finished records", "--resume",
                   "--overwrite")
    assert (cwd / "run" / "episodes.jsonl").read_bytes() == before  # nothing lost

    done = rollout(cwd, "run")  # the same rollout with --resume: nothing left to play, nothing changed
    assert done.returncode == 2
    done = rollout(cwd, "run", "--resume")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 of 2 episodes already done, 0 to run" in done.stdout
    assert (cwd / "run" / "episodes.jsonl").read_bytes() == before

    one_line_error(rollout(cwd, "run", "--resume", episodes=3), "cannot resume", "episodes: 2 there, 3 now")
    one_line_error(rollout(cwd, "run", "--resume", "--overwrite"), "give one of them")

    done = rollout(cwd, "run", "--overwrite", episodes=1, tutor="random")  # asked for: replaced
    assert done.returncode == 0, done.stdout + done.stderr
    records = [json.loads(line) for line in (cwd / "run" / "episodes.jsonl").read_text().splitlines()]
    assert [r["tutor"] for r in records] == ["random"]


def test_rollout_resume_plays_only_the_missing_episodes(first_run: Path, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    lines = (first_run / "run" / "episodes.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "run" / "episodes.jsonl").write_text(lines[0] + lines[1][:50])  # killed mid-line
    (tmp_path / "run" / "run.json").write_bytes((first_run / "run" / "run.json").read_bytes())
    done = rollout(tmp_path, "run", "--resume")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 2 episodes already done, 1 to run" in done.stdout
    now = (tmp_path / "run" / "episodes.jsonl").read_text().splitlines(keepends=True)
    assert now[0] == lines[0] and len(now) == 2  # the finished record kept, the cut one replayed
    assert [json.loads(x)["key"] for x in now] == [json.loads(x)["key"] for x in lines]


@pytest.mark.parametrize(
    "args",
    [["rollout", "--episodes", "1", "--out", "afile"],
     ["eval", "--limit", "1", "--tutor", "random", "--out", "afile"],
     ["score", "run/episodes.jsonl", "--out", "afile"],
     ["report", "run", "--out", "afile"],
     ["play", "--out", "afile"]],
    ids=["rollout", "eval", "score", "report", "play"],
)
def test_out_naming_a_file_is_one_line(first_run: Path, args: list[str]) -> None:
    (first_run / "afile").write_text("my notes\n")
    text = one_line_error(tutorzoo(*args, cwd=first_run), "--out afile is a file", "give a folder")
    assert text.startswith(f"tutorzoo {args[0]}:")
    assert (first_run / "afile").read_text() == "my notes\n"


@pytest.mark.parametrize("count", ["0", "-3"])
@pytest.mark.parametrize("flag,command", [("--episodes", "rollout"), ("--batch-size", "rollout"),
                                          ("--replicates", "eval"), ("--limit", "eval")])
def test_non_positive_counts_are_refused(tmp_path: Path, flag: str, command: str, count: str) -> None:
    one_line_error(tutorzoo(command, flag, count, "--out", "x", cwd=tmp_path), f"{flag} must be >= 1, got {count}")
    assert not (tmp_path / "x").exists()  # nothing written


def test_score_given_a_folder_scores_its_episodes(first_run: Path) -> None:
    done = tutorzoo("score", "run", cwd=first_run)
    assert done.returncode == 0, done.stdout + done.stderr
    scored = json.loads((first_run / "run" / "score" / "metrics.json").read_text())
    assert len(scored["per_episode"]) == 2
    assert "ranking" in json.loads((first_run / "run" / "metrics.json").read_text())  # the run's own, kept
    (first_run / "empty").mkdir(exist_ok=True)
    one_line_error(tutorzoo("score", "empty", cwd=first_run), "empty is a folder without an episodes.jsonl")


def test_play_says_it_appends(first_run: Path) -> None:
    before = (first_run / "run" / "episodes.jsonl").read_bytes()
    done = tutorzoo("play", "--out", "run", cwd=first_run, stdin="")  # EOF at the first prompt
    assert done.returncode == 0, done.stdout + done.stderr
    assert "appended to run/episodes.jsonl (2 records there already; nothing in it is replaced)" in \
        " ".join(done.stdout.split())
    assert (first_run / "run" / "episodes.jsonl").read_bytes().startswith(before)


def test_eval_refuses_a_folder_with_records(tmp_path: Path) -> None:
    args = ["eval", "--limit", "1", "--tutor", "random", "--workers", "1", "--no-html", "--out", "e"]
    assert tutorzoo(*args, cwd=tmp_path).returncode == 0
    before = (tmp_path / "e" / "episodes.jsonl").read_bytes()
    one_line_error(tutorzoo(*args, cwd=tmp_path), "--resume", "--overwrite")
    assert (tmp_path / "e" / "episodes.jsonl").read_bytes() == before
