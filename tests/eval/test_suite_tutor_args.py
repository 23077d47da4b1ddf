"""Per-tutor options and display names in a suite file: one tutor class twice on one leaderboard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]

SUITE = """
name: twins
version: 1
tutors: ["plain=tutor_fixtures:PrefixTutor", "loud=tutor_fixtures:PrefixTutor"]
tutor_args:
  plain: {prefix: "Well,"}
  loud: {prefix: "LISTEN:"}
blocks:
  - task_set: math
    tasks: [fraction_addition]
    personas: {names: [all_round_partly_wrong]}
    seeds: 2
    protocol: {max_turns: 3}
"""


def test_suite_tutor_args_reach_each_tutor(tmp_path: Path) -> None:
    path = tmp_path / "twins.yaml"
    path.write_text(SUITE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "tutorzoo.eval.cli", "eval", "--suite", str(path), "--out", str(out),
                           "--no-html", "--workers", "1"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "plain" in proc.stdout and "loud" in proc.stdout
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    said = {r["tutor"]: [t["utterance"] for t in r["transcript"] if t["speaker"] == "tutor"] for r in records}
    assert all(u.startswith("Well,") for u in said["plain"] if u)
    assert all(u.startswith("LISTEN:") for u in said["loud"] if u)


def test_tutor_args_for_an_unknown_tutor_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(SUITE.replace("loud: {prefix", "lod: {prefix"), encoding="utf-8")
    with pytest.raises(ConfigError, match="tutor_args names"):
        load_suite(str(path))
