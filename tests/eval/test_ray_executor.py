"""``--executor ray``: the same chunks as Ray tasks give the records and metrics of the local executor.

A real local Ray instance (``ray.init(num_cpus=2, include_dashboard=False)``) runs the suite; a stand-in
``ray`` module that runs the tasks in this process checks the executor's bookkeeping without starting Ray.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from runner_fixtures import CRASH_SEED

import tutorzoo.eval.executors as executors
from tutorzoo.envs.records import json_form
from tutorzoo.eval.leaderboard import build, write_report
from tutorzoo.eval.runner import run_suite
from tutorzoo.eval.suite import load_suite

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def _metrics_bytes(result, out: Path) -> bytes:
    board = build(result.records, result.kind, result.judged)
    write_report(board, out, "t", {"suite": result.suite.name})
    return (out / "metrics.json").read_bytes()


def _dumps(records: list[dict]) -> list[str]:
    return [json.dumps(json_form(r), sort_keys=True) for r in records]


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT)])}})
    yield ray
    ray.shutdown()


def test_ray_executor_equals_the_local_one(tmp_path, local_ray):
    suite = load_suite("default")
    local = run_suite(suite, tmp_path / "local", limit=4, workers=1)
    remote = run_suite(suite, tmp_path / "ray", limit=4, executor="ray")
    assert _dumps(remote.records) == _dumps(local.records)
    assert _metrics_bytes(remote, tmp_path / "ray") == _metrics_bytes(local, tmp_path / "local")
    assert local_ray.is_initialized(), "a Ray instance the caller started is left running"


def test_a_crashed_ray_task_is_recorded_and_the_run_goes_on(tmp_path, local_ray):
    result = run_suite(load_suite("default"), tmp_path, limit=2, executor="ray",
                       tutors=["runner_fixtures:CrashingTutor", "random"])
    assert len(result.records) == 4
    crashed = [r for r in result.records if r["failures"]]
    assert [(r["tutor"], r["spec"]["seed"]) for r in crashed] == [("runner_fixtures:CrashingTutor", CRASH_SEED)]
    assert crashed[0]["failures"][0]["error"].startswith("WorkerCrashed: Ray task failed")


class _FakeRay:
    """Enough of the ``ray`` API for :func:`tutorzoo.eval.executors.run_ray`: tasks run at ``.remote`` time, in
    order."""

    def __init__(self) -> None:
        self.submitted: list[executors.Chunk] = []
        self.exceptions = SimpleNamespace(RayTaskError=type("RayTaskError", (Exception,), {}),
                                          RayError=type("RayError", (Exception,), {}))

    def is_initialized(self) -> bool:
        return True

    def cluster_resources(self) -> dict:
        return {"CPU": 1.0}

    def remote(self, **_options):
        def wrap(fn):
            def submit(chunk):
                self.submitted.append(chunk)
                return (len(self.submitted), tuple(fn(chunk)))  # an object ref is hashable
            return SimpleNamespace(remote=submit)
        return wrap

    def wait(self, refs, num_returns=1):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        return list(ref[1])


def test_the_ray_executor_runs_every_chunk_once_without_ray(tmp_path, monkeypatch):
    fake = _FakeRay()
    monkeypatch.setattr(executors, "_ray_module", lambda: fake)
    suite = load_suite("default")
    local = run_suite(suite, tmp_path / "local", limit=3, workers=1)
    via = run_suite(suite, tmp_path / "fake", limit=3, executor="ray", workers=2)
    assert _dumps(via.records) == _dumps(local.records)
    units = [(c.tutor, u.key()) for c in fake.submitted for u in c.units]
    assert len(units) == len(set(units)) == 9
