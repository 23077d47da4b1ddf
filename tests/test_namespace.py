"""One installed name, ``tutorzoo``: TutorZoo runs from a user's folder that holds modules named like its packages
(``train.py``, ``eval.py``, ``envs.py``, ``agents.py``, ``rewards.py``) and imports from that folder only the tutor
module the user names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tutorzoo

ROOT = Path(__file__).resolve().parents[1]
TUTORZOO = Path(sys.executable).with_name("tutorzoo")

# Each module a user may keep beside their tutor: importing any of them is a failure we can see.
SHADOWS = ("train", "eval", "envs", "agents", "rewards", "yaml", "rich")
MY_TUTOR = """
class Asker:
    def reset(self, seed=None):
        pass

    def act(self, observation, info):
        import my_helpers  # a sibling imported lazily, as users' code does

        return my_helpers.question()
"""


@pytest.fixture()
def user_folder(tmp_path: Path) -> Path:
    for name in SHADOWS:
        (tmp_path / f"{name}.py").write_text(f"raise SystemExit('the user\\'s {name}.py was imported')\n")
    (tmp_path / "my_tutor.py").write_text(MY_TUTOR)
    (tmp_path / "my_helpers.py").write_text("def question():\n    return 'What is 3/10 of 50? Show me your steps.'\n")
    return tmp_path


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"NO_COLOR": "1", "WANDB_MODE": "disabled"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_cli_runs_from_a_folder_of_same_named_modules(user_folder: Path) -> None:
    done = _run([str(TUTORZOO), "rollout", "--tutor", "my_tutor:Asker", "--episodes", "2", "--out", "r",
                 "--no-html"], user_folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "was imported" not in done.stdout + done.stderr
    records = [json.loads(line) for line in (user_folder / "r" / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2
    assert all(r["tutor"] == "my_tutor:Asker" for r in records)
    tutor_turns = [t["utterance"] for t in records[0]["transcript"] if t["speaker"] == "tutor"]
    assert tutor_turns and set(tutor_turns) == {"What is 3/10 of 50? Show me your steps."}


@pytest.mark.parametrize("command", [["list", "tutors"], ["--version"]], ids=["list", "version"])
def test_python_dash_m_tutorzoo_runs_from_a_folder_of_same_named_packages(user_folder: Path, command: list) -> None:
    # python -m puts the folder first on sys.path, as Python does for every -m; only the names TutorZoo itself
    # would have claimed must not be picked up from there (yaml.py and rich.py shadow the libraries, as for any tool)
    for name in ("yaml", "rich"):
        (user_folder / f"{name}.py").unlink()
    done = _run([sys.executable, "-m", "tutorzoo", *command], user_folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "was imported" not in done.stdout + done.stderr


def test_an_unknown_tutor_module_names_the_fix(user_folder: Path) -> None:
    done = _run([str(TUTORZOO), "rollout", "--tutor", "not_here:Tutor", "--episodes", "1", "--out", "r"], user_folder)
    assert done.returncode == 2
    assert "a module in the current folder, on PYTHONPATH, or installed" in " ".join(done.stdout.split())


def test_the_package_re_exports_its_entry_points_lazily() -> None:
    code = ("import sys, tutorzoo; heavy = {'torch', 'transformers', 'openai', 'wandb'} & set(sys.modules); "
            "print(sorted(heavy), 'tutorzoo.envs.tutoring_v0' in sys.modules)")
    done = _run([sys.executable, "-c", code], ROOT)
    assert done.stdout.split("]")[0] + "]" == "[]" and done.stdout.strip().endswith("False"), done.stdout + done.stderr
    assert tutorzoo.tutoring_v0.env.__module__ == "tutorzoo.envs.tutoring_v0"
    spec = tutorzoo.EpisodeSpec(task_set="math", persona="sid_core/all_round_asks_for_hint", seed=0)
    record = tutorzoo.run_episode(spec, tutorzoo.make_tutor("socratic"), tutorzoo.SimulatedStudent(spec.persona))
    assert record["learning_gain"] == record["posttest_score"] - record["pretest_score"]
    assert set(tutorzoo.__all__) <= set(dir(tutorzoo))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = tutorzoo.nope
