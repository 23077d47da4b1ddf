"""Issue 26's criteria on tutors written outside the project (``outsider_tutors.py``: the public tutor protocol only).

Paired episodes on math + stem, two personas of each family, seeds 0..2 (96 specs per tutor, 8 turns, the default
reward). Each gaming tutor loses to socratic on learning gain and on reward by more than two standard errors of the
paired difference and gains less than socratic in each task set; each control beats random by more than two standard
errors in each task set and keeps at least half of socratic's gain.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from outsider_tutors import CONTROLS, GAMING, TUTORS  # noqa: E402
from reward_validity import paired, paired_map, specs  # noqa: E402

from tutorzoo.agents.student import SimulatedStudent  # noqa: E402
from tutorzoo.agents.tutor import make_tutor  # noqa: E402
from tutorzoo.eval.rollout import run_episode  # noqa: E402
from tutorzoo.rewards.rubric import load_rubric  # noqa: E402

SPECS = specs(3, per_family=2)


def _play(job) -> tuple[float, float]:
    spec, name = job
    tutor = TUTORS[name]() if name in TUTORS else make_tutor(name)
    rec = run_episode(spec, tutor, SimulatedStudent(spec.persona), name, reward=load_rubric("default"))
    return float(rec["learning_gain"] or 0.0), float(rec["reward"])


@pytest.fixture(scope="module")
def results() -> dict[str, np.ndarray]:
    return paired_map(_play, ["socratic", "random", *TUTORS], SPECS, workers=1)


def _in(task_set: str) -> np.ndarray:
    return np.array([s.task_set == task_set for s in SPECS])


@pytest.mark.parametrize("name", [cls.name for cls in GAMING])
def test_outsider_gaming_tutor_loses_to_socratic(results, name: str) -> None:
    soc = results["socratic"]
    for col, what in ((0, "gain"), (1, "reward")):
        d, se = paired(results[name][:, col], soc[:, col])
        assert d < -2 * se, f"{name} {what}: {d:+.3f} ± {se:.3f} against socratic"
    for ts in ("math", "stem"):
        m = _in(ts)
        assert results[name][m, 0].mean() < soc[m, 0].mean(), (name, ts)


@pytest.mark.parametrize("name", [cls.name for cls in CONTROLS])
def test_outsider_exposition_teaches(results, name: str) -> None:
    for ts in ("math", "stem"):
        m = _in(ts)
        d, se = paired(results[name][m, 0], results["random"][m, 0])
        assert d > 2 * se, f"{name} on {ts}: {d:+.3f} ± {se:.3f} against random"
    assert results[name][:, 0].mean() >= 0.5 * results["socratic"][:, 0].mean()


def _bench(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent)}
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "reward_validity.py"
    return subprocess.run([sys.executable, str(script), "--seeds", "1", "--per-family", "1", "--task-set", "math",
                           "--workers", "1", *args], capture_output=True, text=True, env=env, timeout=300)


def test_the_benchmark_plays_a_users_tutor_by_import_path() -> None:
    """``--tutors package.module:ClassName`` plays a user's own tutor beside socratic and lists it against random;
    a path that does not import is refused with the fix, before anything is played."""
    run = _bench("--tutors", "random", "outsider_tutors:ExplainChat")
    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines() if line.startswith("outsider_tutors:ExplainChat")]
    assert len(rows) == 2, run.stdout  # in the table against socratic and in the controls against random
    bad = _bench("--tutors", "no_such_module:Tutor")
    assert bad.returncode == 2 and "package.module:ClassName" in bad.stderr, bad.stderr
