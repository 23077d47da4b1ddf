"""A suite's episode specs as a verifiers v1 Taskset, and the Env in which the simulated student plays the user.

Each task is one :class:`~tutorzoo.envs.config.EpisodeSpec` of a suite split (``--env.taskset.suite``,
``--env.taskset.split``, ``--env.taskset.max-turns``). :class:`TutorZooEnv` runs the session host-side, as the
tutor's user: the student's pre-test and opening are played, the tutor (the ``tutor`` agent, the model under
evaluation or training) gets the tutor's view of them as its first user turn, each tutor reply is one tutor turn,
and the student's reply comes back as the next user turn. A reply containing the end marker ``[END]`` closes the
session, as in ``tutorzoo rollout``; the env's turn limit (``max_turns``) ends it too. The session is
:class:`tutorzoo.train.trl_env.TutorZooEnv`, the TRL integration's, so one spec and one list of tutor replies give
the same episode record here, through TRL and through ``run_episode``.

The trace gets the episode record's ``reward`` as its one reward (``tutorzoo``, weight 1) and every rubric
component, the learning gain and the pre-/post-test scores as metrics (logged, not rewarded); the record itself is
in ``trace.info["tutorzoo_record"]``. An episode whose tutor run ended before the session closed (the agent's own
turn limit, a model error) or whose student failed is not scored: ``run()`` raises, and verifiers records the
episode as failed with the reason.

The student is never a verifiers agent: its words are the env's, so nothing of it is trained on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.session_prompts import TUTOR_SYSTEM_PROMPT


class TutorZooTasksetConfig(vf.TasksetConfig):
    suite: str = "default"
    """Suite name (configs/suites/) or path."""
    split: str = "held_out"
    """all, train or held_out."""
    max_turns: int | None = Field(default=None, ge=1)
    """Override of every spec's max_turns (None: the suite's protocol)."""


class TutorZooData(vf.TaskData):
    spec: dict
    """The episode spec (``EpisodeSpec.model_dump()``)."""


class TutorZooTask(vf.Task[TutorZooData, vf.State, vf.TaskConfig]):
    @property
    def key(self) -> str:
        return EpisodeSpec.model_validate(self.data.spec).key()


class TutorZooEnvConfig(vf.EnvConfig):
    tutor: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime={"type": "subprocess"})
    """The tutor under evaluation: a plain chat loop (null harness) run locally."""
    rubric: str = "default"
    """Reward rubric: configs/rewards/<name>.yaml or a path."""


class SessionUnscored(RuntimeError):
    """The episode ended without a scorable record (failed, or the tutor stopped before the session closed)."""


class TutorZooEnv(vf.Env[TutorZooEnvConfig]):
    async def run(self, task: TutorZooTask, agents: Any) -> None:
        from tutorzoo.rewards import load_rubric
        from tutorzoo.train.trl_env import TutorZooEnv as Session
        from tutorzoo.train.trl_env import spec_row

        spec = EpisodeSpec.model_validate(task.data.spec)
        session = Session(load_rubric(self.config.rubric), tutor_name="verifiers")
        view = session.reset(**spec_row(spec, system_prompt=""))
        async with agents.tutor.interaction(task) as tutor:
            segment = await tutor.turn(view)
            while not segment.terminated and not session.is_over:
                reply = session.say(segment.last_reply)
                if session.is_over:
                    break
                segment = await tutor.turn(reply)
            reward = session.get_reward()  # settles the record: scored, failed or unfinished
            trace = tutor.trace
            record = session.record or {}
            trace.info["tutorzoo_record"] = record
            if reward is None:
                first = (record.get("failures") or [{}])[0].get("error", "")
                raise SessionUnscored(f"episode {spec.key()} is {session.status}, not scored: {first}")
            trace.record_reward("tutorzoo", reward, 1.0)
            metrics = {f"tutorzoo/{k}": float(v) for k, v in record.get("reward_components", {}).items()}
            for name in ("learning_gain", "pretest_score", "posttest_score", "n_tutor_turns"):
                if record.get(name) is not None:
                    metrics[f"tutorzoo/{name}"] = float(record[name])
            trace.record_metrics(metrics)


class TutorZooTaskset(vf.Taskset[TutorZooTask, TutorZooTasksetConfig]):
    def load(self) -> Iterator[TutorZooTask]:
        from tutorzoo.eval.suite import load_suite

        for spec in load_suite(self.config.suite).specs(self.config.split):  # type: ignore[arg-type]
            if self.config.max_turns is not None:
                spec = spec.model_copy(update={"protocol": {**spec.protocol, "max_turns": self.config.max_turns}})
            yield TutorZooTask(TutorZooData(id=spec.key(), name=spec.key(), prompt=None,
                                            system_prompt=TUTOR_SYSTEM_PROMPT, spec=spec.model_dump()),
                               self.config.task)
