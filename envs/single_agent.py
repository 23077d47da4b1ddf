"""Single-agent Gymnasium views of the tutoring env: train a tutor against an embedded student, or the reverse.

``gymnasium.make("tutorzoo/Tutor-v0", persona="weak_knowledge_partly_wrong")`` gives :class:`TutorEnv`: each
``step`` takes one tutor dialogue turn; the embedded student's turns and the test phases are played inside
the step. ``gymnasium.make("tutorzoo/Student-v0", tutor="socratic")`` gives :class:`StudentEnv`, where the
agent is the student and a tutor policy is embedded.

The embedded policies are given as objects or by name. Names are resolved through the agents' registries by
import path at construction time (``envs`` itself depends on no agent code).
"""

from __future__ import annotations

import copy
import importlib
from typing import Any

import gymnasium as gym
import numpy as np

from envs.tutoring import TutoringEnv


def _derive(seed: int, role: int) -> int:
    return int(np.random.SeedSequence([seed, role]).generate_state(1)[0])


class _Embedded(gym.Env):
    """Shared machinery: one seat is the learner, the other is played by an embedded policy."""

    metadata = {"render_modes": ["human", "ansi"]}
    seat = "tutor"

    def __init__(self, other: Any, render_mode: str | None = None, **env_kwargs: Any) -> None:
        self.aec = TutoringEnv(render_mode=render_mode, **env_kwargs)
        self.render_mode = render_mode
        self.other = other
        self.observation_space = self.aec.observation_space(self.seat)
        self.action_space = self.aec.action_space(self.seat)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**63))
        self.aec.reset(seed=episode_seed, options=options)
        self.other.reset(seed=_derive(episode_seed, 2))
        self._reward = 0.0
        self._advance()
        return self.aec.observe(self.seat), self._info()

    def step(self, action: Any):
        self._reward = 0.0
        self.aec.step(action)
        self._reward += self.aec.rewards[self.seat]
        self._advance()
        done = self.aec.terminations[self.seat]
        truncated = self.aec.truncations[self.seat]
        return self.aec.observe(self.seat), float(self._reward), bool(done), bool(truncated), self._info()

    def _info(self) -> dict:
        # Gymnasium's contract: every call returns fresh data the caller may keep and modify.
        info = copy.deepcopy(self.aec.infos[self.seat])
        if self.aec.outcome is not None:
            info["episode"] = self.aec.episode_record()
        return info

    def _advance(self) -> None:
        """Play the embedded seat (and this seat's observe-only turns) until this seat must decide."""
        aec = self.aec
        while not (aec.terminations[self.seat] or aec.truncations[self.seat]):
            agent = aec.agent_selection
            info = aec.infos[agent]
            if agent == self.seat and not (agent == "tutor" and info.get("observe_only")):
                return
            if agent == self.seat or (agent == "tutor" and info.get("observe_only")):
                aec.step("")
            else:
                aec.step(self.other.act(aec.observe(agent), info))
            self._reward += aec.rewards[self.seat]

    def render(self):
        return self.aec.render()


class TutorEnv(_Embedded):
    """The tutor's seat as a Gymnasium env; ``student`` is a policy object or a persona name.

    Example::

        import gymnasium as gym, envs
        env = gym.make("tutorzoo/Tutor-v0", persona="all_round_partly_wrong", action_mode="act")
        obs, info = env.reset(seed=0)
    """

    seat = "tutor"

    def __init__(self, student: Any = None, persona: str = "all_round_partly_wrong", render_mode: str | None = None,
                 **env_kwargs: Any) -> None:
        if student is None:
            student = importlib.import_module("agents.student").SimulatedStudent(persona)
        super().__init__(student, render_mode=render_mode, **env_kwargs)


class StudentEnv(_Embedded):
    """The student's seat as a Gymnasium env; ``tutor`` is a policy object or a registry name."""

    seat = "student"

    def __init__(self, tutor: Any = "socratic", render_mode: str | None = None, **env_kwargs: Any) -> None:
        if isinstance(tutor, str):
            tutor = importlib.import_module("agents.tutor.registry").make_tutor(tutor)
        super().__init__(tutor, render_mode=render_mode, **env_kwargs)
