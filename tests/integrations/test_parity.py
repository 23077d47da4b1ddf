"""One set of specs, one list of scripted tutor replies: ``tutorzoo rollout`` (an OpenAI-compatible tutor on a
loopback server), run_episode and the TRL tool env give the same episode, learning gain and reward to the float,
under the CLI's reward (the env's default, the learning gain; the rubric's is compared in tests/train/test_trl_env.py).
(The verifiers env is checked against run_episode in tests/integrations/test_verifiers.py, from its own venv.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_server import ChatServer

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.eval.cli import main as tutorzoo
from tutorzoo.eval.rollout import run_episode
from tutorzoo.train.trl_env import TutorZooEnv, spec_row

SAYS = ["What do you already know about this task?", "Try a smaller case first: what changes if we double it?"]
SUMMARY = "To summarize: we checked each step against the main idea."
REPLIES = [*SAYS, f"{SUMMARY} [END]"]


def _reply(body: dict, index: int) -> str:
    """The tutor's n-th reply of its episode, n = its own earlier turns in the request."""
    return REPLIES[sum(m.get("role") == "assistant" for m in body["messages"])]


class Scripted:
    def reset(self, seed: int | None = None) -> None:
        self.i = 0

    def act(self, observation: dict, info: dict) -> str:
        self.i += 1
        return REPLIES[self.i - 1]


def _without_tutor(record: dict) -> str:
    """The record but for who played the tutor (and the resumable-run ``key`` the CLI adds)."""
    return json.dumps({k: v for k, v in record.items() if k not in ("tutor", "key")}, sort_keys=True)


@pytest.mark.parametrize(("task_set", "extra"), [("math", []), ("stem", ["--posttest", "both"])], ids=["math", "stem"])
def test_rollout_cli_run_episode_and_trl_env_agree(task_set: str, extra: list[str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from tutorzoo.agents.student import SimulatedStudent

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with ChatServer(responder=_reply) as server:
        code = tutorzoo(["rollout", "--tutor", "openai:scripted", "--base-url", server.url, "--task-set", task_set,
                         "--episodes", "3", "--seed", "5", "--max-turns", "4",
                         "--persona", "sid_core/all_round_partly_wrong",
                         "--out", str(tmp_path / "rollout"), "--no-html", *extra])
        assert code == 0 and server.request_count == 3 * len(REPLIES)
    cli_records = [json.loads(x) for x in (tmp_path / "rollout" / "episodes.jsonl").read_text().splitlines()]
    assert len(cli_records) == 3
    for cli in cli_records:
        spec = EpisodeSpec.model_validate(cli["spec"])
        harness = run_episode(spec, Scripted(), SimulatedStudent(spec.persona), "scripted")
        env = TutorZooEnv()
        env.reset(**spec_row(spec))
        for message in SAYS:
            env.say(message)
        env.end_session(SUMMARY)
        reward = env.get_reward()
        assert cli["ended_by"] == "end_marker" and cli["failures"] == []
        assert _without_tutor(cli) == _without_tutor(harness) == _without_tutor(env.record)
        assert reward == cli["reward"] == harness["reward"]
        assert env.record["learning_gain"] == cli["learning_gain"] == harness["learning_gain"]
