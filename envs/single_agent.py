"""Single-agent Gymnasium views of the tutoring env: train a tutor against an embedded student, or the reverse.

:class:`TutorEnv` is the tutor's seat: each ``step`` takes one tutor dialogue turn; the embedded student's turns
and the test phases are played inside the step. :class:`StudentEnv` is the student's seat with a tutor policy
embedded. The embedded seat is a policy *object* (:class:`tutorzoo.envs.protocols.Student` /
:class:`tutorzoo.envs.protocols.Tutor`);
the turns are played by the rollout engine's turn loop (:func:`tutorzoo.envs.engine.advance`) and seeded as the engine
seeds them (:mod:`tutorzoo.envs.seeding`), so the same spec and policies play the same episode here as in the harness.

Names (``persona="sid_core"``, ``tutor="socratic"``, ``reset(options={"persona": ...})``) are resolved by the
views that agents register: ``gymnasium.make("tutorzoo/Tutor-v0", ...)`` (:mod:`tutorzoo.agents.gym_views`). ``envs``
itself depends on no agent code.

``reset(options=...)`` takes ``task_id`` (this episode's task, from the env's task set); an unknown option is an
error, never ignored. Options hold for the one episode: the next reset without them returns to the
constructor's settings.

Example::

    from tutorzoo.agents.student import SimulatedStudent
    env = TutorEnv(SimulatedStudent("all_round_partly_wrong"), task_set="math")
    obs, info = env.reset(seed=0, options={"task_id": "fraction_addition"})
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym

from tutorzoo.envs.engine import advance
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.protocols import Student, Tutor
from tutorzoo.envs.seeding import derive_seed
from tutorzoo.envs.tutoring import TutoringEnv


class _Embedded(gym.Env):
    """Shared machinery: one seat is the learner, the other is played by an embedded policy."""

    metadata = {"render_modes": ["human", "ansi"]}
    seat = "tutor"
    reset_options: tuple[str, ...] = ("task_id",)

    def __init__(self, other: Any, render_mode: str | None = None, **env_kwargs: Any) -> None:
        self.aec = TutoringEnv(render_mode=render_mode, **env_kwargs)
        self.render_mode = render_mode
        self.other = other
        self._default_other = other
        self._default_config = self.aec.config
        self.observation_space = self.aec.observation_space(self.seat)
        self.action_space = self.aec.action_space(self.seat)

    def _apply_options(self, options: dict | None) -> None:
        """This episode's task (and a subclass's options); the constructor's settings otherwise."""
        options = dict(options or {})
        unknown = sorted(set(options) - set(self.reset_options))
        if unknown:
            raise ConfigError(f"reset options {unknown} are not understood; give any of {list(self.reset_options)}")
        config = self._default_config
        task_id = options.get("task_id")
        if task_id is not None:
            known = self.aec._task_ids
            if task_id not in known:
                raise ConfigError(f"reset option task_id {task_id!r} is not in task set {config.task_set!r}; see "
                                  f"`tutorzoo list tasks --task-set {config.task_set}`")
            config = config.model_copy(update={"task_id": task_id})
        self.aec.config, self.other = config, self._default_other
        self._episode_options(options)

    def _episode_options(self, options: dict) -> None:
        """A subclass's own reset options (``options`` holds only known names)."""

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._apply_options(options)
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**63))
        self.aec.reset(seed=episode_seed, options=options)
        # The embedded seat is seeded as the engine seeds it: one spec, one episode.
        self.other.reset(seed=derive_seed(episode_seed, "student" if self.seat == "tutor" else "tutor"))
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

    def _add_reward(self) -> None:
        self._reward += self.aec.rewards[self.seat]

    def _advance(self) -> None:
        """Play the embedded seat (and this seat's observe-only turns) until this seat must decide."""
        advance(self.aec, self.seat, self.other, after_step=self._add_reward)

    def render(self):
        return self.aec.render()


class TutorEnv(_Embedded):
    """The tutor's seat as a Gymnasium env, ``student`` embedded.

    Example::

        env = TutorEnv(SimulatedStudent("all_round_partly_wrong"), action_mode="act")
        obs, info = env.reset(seed=0)
    """

    seat = "tutor"

    def __init__(self, student: Student, render_mode: str | None = None, **env_kwargs: Any) -> None:
        super().__init__(student, render_mode=render_mode, **env_kwargs)


class StudentEnv(_Embedded):
    """The student's seat as a Gymnasium env, ``tutor`` embedded."""

    seat = "student"

    def __init__(self, tutor: Tutor, render_mode: str | None = None, **env_kwargs: Any) -> None:
        super().__init__(tutor, render_mode=render_mode, **env_kwargs)
