"""The inspect-ai tasks through ``inspect eval`` (a subprocess) against a loopback OpenAI-compatible server, and
parity: the same specs with the same scripted tutor replies give the same learning gain and reward, to the float,
through ``run_episode``, the OpenEnv server and client, and the inspect task."""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from chat_server import ChatServer, Reply  # noqa: E402

from tutorzoo.agents.student import SimulatedStudent  # noqa: E402
from tutorzoo.agents.tutor import make_tutor  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.eval.inspect_tasks import SCORE_KEYS, suite_samples  # noqa: E402
from tutorzoo.eval.rollout import run_episode  # noqa: E402
from tutorzoo.eval.suite import load_suite  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TASKS_FILE = ROOT / "tutorzoo" / "eval" / "inspect_tasks.py"
SUITE, LIMIT = "default", 2


class ScriptedTutor:
    """Replays fixed tutor turns: the reply to a chat is ``script[the chat so far, as JSON]``."""

    def __init__(self, script: dict[str, str]) -> None:
        self.script = script

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict, info: dict) -> str:
        return reply_for(self.script, info["messages"])


def chat_key(messages: list[dict]) -> str:
    return json.dumps([[m["role"], m["content"]] for m in messages])


def reply_for(script: dict[str, str], messages: list[dict]) -> str:
    return script[chat_key(messages)]


class Recorder:
    """The socratic tutor, each reply kept under the chat it answered: a script of real teaching to replay."""

    def __init__(self) -> None:
        self.inner = make_tutor("socratic")
        self.script: dict[str, str] = {}

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed=seed)

    def act(self, observation: dict, info: dict) -> str:
        text = self.inner.act(observation, info)
        self.script[chat_key(info["messages"])] = text
        return text


@pytest.fixture(scope="module")
def scripted() -> tuple[list[EpisodeSpec], dict[str, str], list[dict]]:
    """The suite's first specs, the socratic tutor's replies on them, and run_episode's records of the replay."""
    specs = load_suite(SUITE).specs()[:LIMIT]
    recorder = Recorder()
    for spec in specs:
        run_episode(spec, recorder, SimulatedStudent(spec.persona), "socratic")
        recorder.inner = make_tutor("socratic")
    records = [run_episode(spec, ScriptedTutor(recorder.script), SimulatedStudent(spec.persona), "scripted")
               for spec in specs]
    assert any(r["learning_gain"] != 0 for r in records), "a script that teaches nothing proves little"
    return specs, recorder.script, records


def chat_responder(script: dict[str, str]):
    def respond(body: dict, index: int) -> str | Reply:
        messages = [{"role": m["role"], "content": m["content"] if isinstance(m["content"], str)
                     else "".join(part.get("text", "") for part in m["content"])} for m in body["messages"]]
        try:
            return reply_for(script, messages)
        except (KeyError, IndexError):
            return Reply.error(400, "no scripted reply for this chat")
    return respond


def inspect_eval(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LOOP_BASE_URL": url, "LOOP_API_KEY": "test-key",
           "INSPECT_LOG_DIR": str(tmp_path / "logs")}
    command = [sys.executable, "-m", "inspect_ai", "eval", f"{TASKS_FILE}@tutorzoo", "--model",
               "openai-api/loop/scripted", "--log-format", "json", "--display", "none", "--max-retries", "0", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)


def read_log(tmp_path: Path) -> dict:
    [log] = sorted((tmp_path / "logs").glob("*.json"))
    return json.loads(log.read_text())


def test_samples_are_the_suites_specs_and_bad_arguments_name_the_fix() -> None:
    samples = suite_samples(SUITE, "held_out", 3)
    assert [s.metadata["spec"] for s in samples] == [s.model_dump() for s in load_suite(SUITE).specs("held_out")[:3]]
    with pytest.raises(Exception, match="limit must be >= 1"):
        suite_samples(SUITE, "all", 0)
    with pytest.raises(Exception, match="no suite 'no_such'"):
        suite_samples("no_such")


@pytest.mark.slow
def test_inspect_eval_matches_run_episode_and_the_server_to_the_float(tmp_path: Path, scripted) -> None:
    specs, script, records = scripted
    with ChatServer(responder=chat_responder(script)) as server:
        done = inspect_eval(tmp_path, server.url, "-T", f"suite={SUITE}", "-T", f"limit={LIMIT}")
    assert done.returncode == 0, done.stderr[-3000:]
    log = read_log(tmp_path)
    assert log["status"] == "success"
    by_id = {s["id"]: s for s in log["samples"]}
    for index, (spec, record) in enumerate(zip(specs, records, strict=True)):
        value = by_id[index]["scores"]["tutoring_outcome"]["value"]
        assert by_id[index]["metadata"]["key"] == spec.key()
        assert value["learning_gain"] == record["learning_gain"] and value["reward"] == record["reward"]
    results = {entry["name"]: entry["metrics"] for entry in log["results"]["scores"]}
    assert set(results) == set(SCORE_KEYS)
    for key in SCORE_KEYS:  # every score has its mean and stderr
        assert set(results[key]) == {"mean", "stderr"}
    gains = [r["learning_gain"] for r in records]
    assert math.isclose(results["learning_gain"]["mean"]["value"], sum(gains) / len(gains), abs_tol=1e-12)

    pytest.importorskip("openenv")
    from test_serve import served

    from tutorzoo.eval.serve import Ledger, SpecSource
    from tutorzoo.eval.serve_client import TutorZooClient, play_remote

    async def remote(url: str) -> list:
        async with TutorZooClient(url) as client:
            return [await play_remote(client, ScriptedTutor(script), index=i) for i in range(len(specs))]

    with served(SpecSource(specs), Ledger()) as url:
        outcomes = asyncio.run(asyncio.wait_for(remote(url), 60))
    for outcome, record in zip(outcomes, records, strict=True):
        assert outcome.learning_gain == record["learning_gain"] and outcome.reward == record["reward"]
        assert outcome.reward_components == record["reward_components"]


@pytest.mark.slow
def test_a_model_failure_is_a_counted_sample_error_not_a_score(tmp_path: Path) -> None:
    with ChatServer(responder=lambda body, index: Reply.error(400, "scripted refusal")) as server:
        done = inspect_eval(tmp_path, server.url, "-T", f"suite={SUITE}", "-T", "limit=1")
    assert done.returncode != 0 or read_log(tmp_path)["status"] == "error"
    log = read_log(tmp_path)
    assert log["status"] == "error"
    assert not any(s.get("scores") for s in log.get("samples", []))


def test_parity_solver_and_scorer_server_and_run_episode(scripted) -> None:
    """The default run's parity check: the inspect solver and scorer (driven here with a scripted ``generate``;
    the slow test above goes through ``inspect eval``) and the OpenEnv server give run_episode's learning gain,
    reward and reward components, to the float."""
    from inspect_ai.model import ModelName, ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    from tutorzoo.eval.inspect_tasks import tutor_dialogue, tutoring_outcome

    specs, script, records = scripted
    solve, score = tutor_dialogue(), tutoring_outcome()

    async def generate(state: TaskState, **_: object) -> TaskState:
        messages = [{"role": m.role, "content": m.text} for m in state.messages]
        state.output = ModelOutput.from_content("scripted", reply_for(script, messages))
        return state

    async def one(sample) -> object:
        state = TaskState(ModelName("openai-api/scripted"), sample.id, 1, sample.input, [], metadata=sample.metadata)
        return await score(await solve(state, generate), Target(""))

    scores = [asyncio.run(asyncio.wait_for(one(sample), 60)) for sample in suite_samples(SUITE, "all", LIMIT)]
    for result, record in zip(scores, records, strict=True):
        assert result.value["learning_gain"] == record["learning_gain"] and result.value["reward"] == record["reward"]
        assert result.metadata["reward_components"] == record["reward_components"]

    pytest.importorskip("openenv")
    from test_serve import served

    from tutorzoo.eval.serve import Ledger, SpecSource
    from tutorzoo.eval.serve_client import TutorZooClient, play_remote

    async def remote(url: str) -> list:
        async with TutorZooClient(url) as client:
            return [await play_remote(client, ScriptedTutor(script), index=i) for i in range(len(specs))]

    with served(SpecSource(specs), Ledger()) as url:
        outcomes = asyncio.run(asyncio.wait_for(remote(url), 60))
    for outcome, record in zip(outcomes, records, strict=True):
        assert outcome.learning_gain == record["learning_gain"] and outcome.reward == record["reward"]
        assert outcome.reward_components == record["reward_components"]
