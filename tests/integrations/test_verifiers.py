"""verifiers 0.4 (integrations/verifiers/): ``vf-eval`` runs the TutorZoo taskset and env from their own venv
against a loopback OpenAI-compatible server whose scripted tutor replies give the very records of run_episode.

The venv is built by ``make verifiers-venv`` (verifiers needs openai<3; the main pins hold openai 3.x); without it
the test is skipped and says so. Any network use besides loopback fails the run (proxies point at a dead port).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from chat_server import ChatServer
from doc_blocks import section_blocks

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.records import json_form
from tutorzoo.eval.rollout import run_episode
from tutorzoo.eval.suite import load_suite
from tutorzoo.rewards import load_rubric

ROOT = Path(__file__).resolve().parents[2]
VF_EVAL = ROOT / "integrations" / "verifiers" / ".venv" / "bin" / "vf-eval"
REPLIES = ["What do you already know about this task?",
           "Try a smaller case first: what changes if we double it, and why?",
           "To summarize: we checked each step against the main idea. [END]"]


def doc_command(base_url: str, out: Path) -> list[str]:
    """The vf-eval command docs/integrations.md shows, with its placeholders filled in."""
    [block] = section_blocks("integrations.md", "verifiers", "sh")
    argv = shlex.split(block.replace("\\\n", " ").splitlines()[2])  # after the make and activate lines
    assert argv[0] == VF_EVAL.name
    return [str(VF_EVAL), *(base_url if a == "$BASE_URL" else str(out) if a == "$OUT" else a
                                   for a in argv[1:])]


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not VF_EVAL.is_file(), reason=f"{VF_EVAL} is absent: build the verifiers venv with `make verifiers-venv`")]


class Scripted:
    def __init__(self) -> None:
        self.i = 0

    def reset(self, seed: int | None = None) -> None:
        self.i = 0

    def act(self, observation: dict, info: dict) -> str:
        self.i += 1
        return REPLIES[self.i - 1]


def _reply(body: dict, index: int) -> str:
    """The tutor's n-th reply of its episode: n = the user turns in the request (the view, then each student
    reply)."""
    users = sum(m.get("role") == "user" for m in body["messages"])
    return REPLIES[min(users, len(REPLIES)) - 1]


def _offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    dead = "http://127.0.0.1:9"  # nothing listens: any request that is not loopback fails
    env.update(HTTP_PROXY=dead, HTTPS_PROXY=dead, http_proxy=dead, https_proxy=dead, ALL_PROXY=dead,
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", TZ_TEST_KEY="test-key",
               UV_OFFLINE="1", HF_HUB_OFFLINE="1", PATH=f"{VF_EVAL.parent}:{env.get('PATH', '')}")
    return env


def test_vf_eval_plays_suite_specs_to_the_harness_records(tmp_path: Path) -> None:
    with ChatServer(responder=_reply) as server:
        cmd = doc_command(server.url, tmp_path / "out")
        done = subprocess.run(cmd, cwd=tmp_path, env=_offline_env(tmp_path), capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert server.request_count == int(_flag(cmd, "-n")) * len(REPLIES)
    suite, split = _flag(cmd, "--env.taskset.suite"), _flag(cmd, "--env.taskset.split")
    max_turns, n = int(_flag(cmd, "--env.taskset.max-turns")), int(_flag(cmd, "-n"))
    [traces] = list((tmp_path / "out").rglob("traces.jsonl"))
    rows = [json.loads(line) for line in traces.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [t["info"]["tutorzoo_record"] for row in rows for t in _traces(row)]
    assert len(records) == n
    specs = [s.model_copy(update={"protocol": {**s.protocol, "max_turns": max_turns}})
             for s in load_suite(suite).specs(split)[:n]]
    for spec, record, trace in zip(specs, records, [t for row in rows for t in _traces(row)], strict=True):
        from tutorzoo.agents.student import SimulatedStudent

        assert EpisodeSpec.model_validate(record["spec"]) == spec
        expected = run_episode(spec, Scripted(), SimulatedStudent(spec.persona), "verifiers",
                               reward=load_rubric("default"))
        assert json.dumps(json_form(record), sort_keys=True) == json.dumps(json_form(expected), sort_keys=True)
        reward = trace["rewards"]["tutorzoo"]
        assert reward["score"] == expected["reward"] and reward["weight"] == 1.0
        assert trace["metrics"]["tutorzoo/learning_gain"] == expected["learning_gain"]


def _traces(row: dict) -> list[dict]:
    """The traces of one traces.jsonl row (an episode, or a trace on its own)."""
    return row["traces"] if "traces" in row else [row]


def test_vf_eval_records_a_tutor_that_fails_as_failed_never_scored(tmp_path: Path) -> None:
    from chat_server import Reply

    with ChatServer(responder=lambda body, index: Reply.error(500, "model down")) as server:
        cmd = doc_command(server.url, tmp_path / "out")
        cmd[cmd.index("-n") + 1] = "1"
        done = subprocess.run(cmd, cwd=tmp_path, env=_offline_env(tmp_path), capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert server.request_count >= 1
    [traces] = list((tmp_path / "out").rglob("traces.jsonl"))
    [row] = [json.loads(line) for line in traces.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert row["ok"] is False and "not scored" in json.dumps(row["errors"])
    [trace] = _traces(row)
    assert "tutorzoo" not in trace["rewards"]
    record = trace["info"]["tutorzoo_record"]
    assert record["ended_by"] == "unfinished" and record["learning_gain"] is None
