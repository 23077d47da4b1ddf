"""No silent success, as a user meets it (the ``tutorzoo`` console script in a subprocess): a tutor whose turns
are invalid or clipped is named in the summary, a tutor that scored nothing makes the command exit 1 with the
error types, install hints keep their ``[extra]``, ordinary mistakes are one-line errors, tutors are imported
from the folder the user is in, names are whole at 80 columns, run seeds share no episode, and
``tutorzoo report`` rebuilds the reports of any ``episodes.jsonl``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tutorzoo.eval.rollout import episode_seed

TUTORZOO = Path(sys.executable).with_name("tutorzoo")
LONG_MODULE = "a_rather_long_module_for_tutors"
LONG_CLASS = "AVeryLongTutorClassNameIndeed"

TUTORS_PY = '''
class NoneTutor:
    def reset(self, seed=None): pass
    def act(self, obs, info): return None

class DictTutor:
    def reset(self, seed=None): pass
    def act(self, obs, info): return {"text": "hello"}

class HugeTutor:
    def reset(self, seed=None): pass
    def act(self, obs, info): return "Why do you think that? " * 5000  # ~115 kB

class Raises:
    def reset(self, seed=None): pass
    def act(self, obs, info): raise RuntimeError("backend down")

class NeedsDepth:
    def __init__(self, depth):
        self.depth = depth
    def reset(self, seed=None): pass
    def act(self, obs, info): return f"At depth {self.depth}: what do you think the first step is?"
'''

# Hides installed packages from the CLI (what a venv without the extra looks like): find_spec gives None and
# import fails, as for a package that is not there.
SITECUSTOMIZE = '''
import os, sys
for name in filter(None, os.environ.get("TZ_HIDE", "").split(",")):
    sys.modules[name] = None
'''


@pytest.fixture()
def cwd(tmp_path: Path) -> Path:
    """A user's folder holding their own tutor modules (not installed, not on PYTHONPATH)."""
    (tmp_path / "my_tutors.py").write_text(TUTORS_PY)
    (tmp_path / f"{LONG_MODULE}.py").write_text(f"from my_tutors import NeedsDepth\n\nclass {LONG_CLASS}:\n"
                                                "    def reset(self, seed=None): pass\n"
                                                "    def act(self, obs, info): return 'What is 2 + 2?'\n")
    return tmp_path


def tutorzoo(*args: str, cwd: Path, columns: int = 200, hide: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1", "WANDB_MODE": "disabled"}
    env.pop("PYTHONPATH", None)
    if hide:
        shim = cwd / "shim"
        shim.mkdir(exist_ok=True)
        (shim / "sitecustomize.py").write_text(SITECUSTOMIZE)
        env["PYTHONPATH"] = str(shim)
        env["TZ_HIDE"] = hide
    return subprocess.run([str(TUTORZOO), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def flat(done: subprocess.CompletedProcess) -> str:
    return " ".join((done.stdout + done.stderr).split())


@pytest.mark.parametrize(
    "tutor,needle",
    [("my_tutors:NoneTutor", "16 of 16 turns were invalid"),
     ("my_tutors:DictTutor", "16 of 16 turns were invalid"),
     ("my_tutors:HugeTutor", "16 of 16 turns were clipped")],
    ids=["returns-None", "returns-dict", "returns-115kB"],
)
def test_a_tutor_of_invalid_or_clipped_turns_is_named(cwd: Path, tutor: str, needle: str) -> None:
    done = tutorzoo("rollout", "--tutor", tutor, "--episodes", "2", "--out", "r", "--no-html", cwd=cwd)
    assert done.returncode == 0, flat(done)  # played and scored, but not silently
    assert f"warning: tutor {tutor}: {needle}" in flat(done)
    metrics = json.loads((cwd / "r" / "metrics.json").read_text())
    health = metrics["health"][tutor]
    assert health["scored"] == 2 and health["turns"] == 16
    assert max(health["invalid_share"], health["clipped_share"]) == 1.0
    assert f"warning: tutor {tutor}" in (cwd / "r" / "report.md").read_text()


def test_a_tutor_that_scored_nothing_fails_the_command(cwd: Path) -> None:
    done = tutorzoo("rollout", "--tutor", "my_tutors:Raises", "--episodes", "2", "--out", "r", "--no-html", cwd=cwd)
    assert done.returncode == 1, flat(done)
    assert "2 episodes: 0 scored, 2 failed; no learning gain (nothing scored)" in flat(done)
    assert "tutor my_tutors:Raises scored nothing (tutor: RuntimeError x2)" in flat(done)
    assert "nan" not in flat(done)

    done = tutorzoo("eval", "--limit", "2", "--tutor", "socratic", "--tutor", "my_tutors:Raises", "--workers", "1",
                    "--no-html", "--out", "e", cwd=cwd)
    assert done.returncode == 1, flat(done)
    assert "tutor my_tutors:Raises scored nothing (tutor: RuntimeError x2)" in flat(done)
    metrics = json.loads((cwd / "e" / "metrics.json").read_text())
    assert metrics["groups"]["my_tutors:Raises"]["n_scored"] == 0  # the leaderboard's N
    # no number made from the empty transcripts of failed episodes: every metric undefined
    assert all(m["mean"] is None for m in metrics["groups"]["my_tutors:Raises"]["metrics"].values())
    assert metrics["health"]["socratic"] == {**metrics["health"]["socratic"], "n": 2, "scored": 2, "failed": 0}


@pytest.mark.parametrize(
    "args,hide,needle",
    [(["eval", "--limit", "1", "--tutor", "random", "--wandb", "--out", "e"], "wandb",
      "--wandb needs wandb, which is not installed: pip install -e '.[wandb]'"),
     (["train", "sft"], "torch", "tutorzoo train sft needs torch, which is not installed: pip install -e '.[train]'"),
     (["rollout", "--tutor", "hf:./models/tiny", "--out", "r"], "torch,transformers",
      "tutor 'hf:./models/tiny' needs torch, transformers, which are not installed: pip install -e '.[hf]'"),
     (["eval", "--limit", "1", "--tutor", "random", "--executor", "ray", "--out", "e"], "ray",
      "--executor ray needs ray, which is not installed: pip install -e '.[ray]'")],
    ids=["wandb", "train", "hf-tutor", "ray"],
)
def test_missing_extras_are_named_before_any_work(cwd: Path, args: list[str], hide: str, needle: str) -> None:
    done = tutorzoo(*args, cwd=cwd, hide=hide)
    assert done.returncode == 2, flat(done)
    text = (done.stdout + done.stderr).strip()
    assert needle in text and "(or `make install`" in text  # brackets printed literally
    assert "Traceback" not in text and len(text.splitlines()) == 1
    assert not (cwd / "e").exists() and not (cwd / "r").exists()  # checked before the run, not after


def test_missing_matplotlib_is_said_before_the_run(cwd: Path) -> None:
    done = tutorzoo("eval", "--limit", "1", "--tutor", "random", "--workers", "1", "--out", "e", cwd=cwd,
                    hide="matplotlib")
    assert done.returncode == 0, flat(done)  # the run and its other reports still happen
    note = "report.html will not be written: it needs matplotlib: pip install -e '.[report]'"
    assert note in flat(done) and flat(done).index(note) < flat(done).index("Suite default")
    assert (cwd / "e" / "report.md").exists() and not (cwd / "e" / "report.html").exists()


@pytest.mark.parametrize("command", ["rollout", "eval"])
def test_a_class_tutor_takes_constructor_arguments(cwd: Path, command: str) -> None:
    base = [command, "--tutor", "my_tutors:NeedsDepth", "--out", "o", "--no-html"]
    base += ["--episodes", "1"] if command == "rollout" else ["--limit", "1", "--workers", "1"]
    done = tutorzoo(*base, cwd=cwd)
    text = (done.stdout + done.stderr).strip()
    assert done.returncode == 2 and len(text.splitlines()) == 1 and "Traceback" not in text, text
    assert "cannot be built with no arguments" in text and "missing 1 required positional argument: 'depth'" in text
    assert "pass its constructor arguments with --tutor-arg KEY=VALUE" in text
    assert "are for model tutors" not in text  # the old, wrong advice
    done = tutorzoo(*base, "--tutor-arg", "depth=3", cwd=cwd)
    assert done.returncode == 0, flat(done)


def test_one_class_twice_under_display_names_with_its_own_options(cwd: Path) -> None:
    done = tutorzoo("eval", "--limit", "2", "--tutor", "shallow=my_tutors:NeedsDepth", "--tutor",
                    "deep=my_tutors:NeedsDepth", "--tutor-arg", "shallow:depth=2", "--tutor-arg", "deep:depth=5",
                    "--workers", "2", "--no-html", "--out", "e", cwd=cwd)
    assert done.returncode == 0, flat(done)
    records = [json.loads(x) for x in (cwd / "e" / "episodes.jsonl").open()]
    said = {r["tutor"]: {t["utterance"].split(":")[0] for t in r["transcript"] if t["speaker"] == "tutor"}
            for r in records}
    assert said == {"shallow": {"At depth 2"}, "deep": {"At depth 5"}}  # each built with its own options
    assert "shallow vs deep" in flat(done) or "deep vs shallow" in flat(done)
    run = json.loads((cwd / "e" / "run.json").read_text())
    assert run["tutor_specs"] == {"shallow": "my_tutors:NeedsDepth", "deep": "my_tutors:NeedsDepth"}

    done = tutorzoo("eval", "--limit", "1", "--tutor", "my_tutors:NeedsDepth", "--tutor-arg", "other:depth=2",
                    "--out", "x", cwd=cwd)
    assert done.returncode == 2 and "names tutor 'other', which is not in this run" in flat(done)
    done = tutorzoo("eval", "--limit", "1", "--tutor", "socratic", "--tutor", "socratic", "--out", "x", cwd=cwd)
    assert done.returncode == 2 and "give two runs of one tutor display names" in flat(done)


def test_full_tutor_names_at_80_columns(cwd: Path) -> None:
    name = f"{LONG_MODULE}:{LONG_CLASS}"
    done = tutorzoo("eval", "--limit", "1", "--tutor", name, "--tutor", "socratic", "--workers", "1", "--no-html",
                    "--out", "e", cwd=cwd, columns=80)
    assert done.returncode == 0, flat(done)
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    assert "\u2026" not in done.stdout  # no name cut to "pkg.mod…"
    board = done.stdout.split("TutorZoo leaderboard")[1].split("Gain:")[0]
    column = "".join(line.split("\u2502")[2].strip() for line in board.splitlines() if line.count("\u2502") > 3)
    assert name in column


def test_run_seeds_share_no_episode(cwd: Path) -> None:
    seeds = {}
    for seed in ("0", "1"):
        done = tutorzoo("rollout", "--tutor", "random", "--episodes", "5", "--seed", seed, "--out", f"s{seed}",
                        "--no-html", cwd=cwd)
        assert done.returncode == 0, flat(done)
        seeds[seed] = [json.loads(x)["spec"]["seed"] for x in (cwd / f"s{seed}" / "episodes.jsonl").open()]
    assert seeds["0"] == [episode_seed(0, i) for i in range(5)]
    assert not set(seeds["0"]) & set(seeds["1"]) and len(set(seeds["0"])) == 5


def test_eval_replicates_measure_test_retest(cwd: Path) -> None:
    done = tutorzoo("eval", "--limit", "3", "--tutor", "socratic", "--tutor", "random", "--seed", "5",
                    "--replicates", "2", "--workers", "1", "--no-html", "--out", "e", cwd=cwd)
    assert done.returncode == 0, flat(done)
    records = [json.loads(x) for x in (cwd / "e" / "episodes.jsonl").open()]
    assert len(records) == 2 * 2 * 3
    assert sorted({(r["replicate"], r["run_seed"]) for r in records}) == [(0, 5), (1, 6)]
    metrics = json.loads((cwd / "e" / "metrics.json").read_text())
    spread = metrics["replicates"]["metrics"]["learning_gain"]
    assert set(spread) == {"socratic", "random"} and all(len(v["means"]) == 2 for v in spread.values())
    assert "## Test-retest across replicates" in (cwd / "e" / "report.md").read_text()
    run = json.loads((cwd / "e" / "run.json").read_text())
    assert run["seed"] == 5 and run["replicates"] == 2
    done = tutorzoo("eval", "--limit", "3", "--tutor", "random", "--seed", "6", "--workers", "1", "--no-html",
                    "--out", "e6", cwd=cwd)
    other = {json.loads(x)["spec"]["seed"] for x in (cwd / "e6" / "episodes.jsonl").open()}
    assert other == {r["spec"]["seed"] for r in records if r["replicate"] == 1}  # replicate 1 is run seed 6


def test_report_rebuilds_any_episodes_file(cwd: Path) -> None:
    done = tutorzoo("eval", "--limit", "3", "--tutor", "socratic", "--tutor", "random", "--workers", "1",
                    "--no-html", "--out", "e", cwd=cwd)
    assert done.returncode == 0, flat(done)
    (cwd / "bare").mkdir()
    shutil.copy(cwd / "e" / "episodes.jsonl", cwd / "bare" / "episodes.jsonl")  # nothing but the records
    done = tutorzoo("report", "bare", cwd=cwd)
    assert done.returncode == 0, flat(done)
    metrics = json.loads((cwd / "bare" / "metrics.json").read_text())
    original = json.loads((cwd / "e" / "metrics.json").read_text())
    assert metrics["groups"] == original["groups"] and metrics["paired"] == original["paired"]
    pair = metrics["paired"]["metrics"]["learning_gain"][0]
    assert {pair["a"], pair["b"]} == {"socratic", "random"} and pair["n"] == 3
    report = (cwd / "bare" / "report.md").read_text()
    assert "## Paired comparisons" in report
    assert "socratic vs random" in report or "random vs socratic" in report
    assert "## Run metadata" in report and "saved no metadata" in report
    assert (cwd / "bare" / "report.html").exists()
    done = tutorzoo("report", "nowhere", cwd=cwd)
    assert done.returncode == 2 and "no such file or folder" in flat(done)


def test_version(cwd: Path) -> None:
    done = tutorzoo("--version", cwd=cwd)
    assert done.returncode == 0 and done.stdout.startswith("tutorzoo ")
