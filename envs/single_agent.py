"""Single-agent Gymnasium views of the tutoring env: train a tutor against an embedded student, or the reverse.

``gymnasium.make("tutorzoo/Tutor-v0", persona="weak_knowledge_partly_wrong")`` gives :class:`TutorEnv`: each
``step`` takes one tutor dialogue turn; the embedded student's turns and the test phases are played inside
the step. ``gymnasium.make("tutorzoo/Student-v0", tutor="socratic")`` gives :class:`StudentEnv`, where the
agent is the student and a tutor policy is embedded.

The embedded policies are given as objects or by name. Names are resolved through the agents' registries by
import path at construction time (``envs`` itself depends on no agent code).

``persona`` (TutorEnv) is a persona name, a persona *family* (``sid_core``: each episode draws one of its
personas from the reset seed) or ``distribution:NAME`` (a persona distribution of ``configs/personas``,
sampled per episode). ``reset(options=...)`` takes ``task_id`` (this episode's task, from the env's task set)
and, in TutorEnv with a built-in student, ``persona`` (this episode's persona, family or distribution); an
unknown option is an error, never ignored. Options hold for the one episode: the next reset without them
returns to the constructor's settings.

Example::

    env = gym.make("tutorzoo/Tutor-v0", persona="sid_core")          # a sid_core persona per episode
    obs, info = env.reset(seed=0, options={"task_id": "fraction_addition", "persona": "all_round_partly_wrong"})
"""

from __future__ import annotations

import copy
import importlib
from typing import Any

import gymnasium as gym
import numpy as np

from envs.errors import ConfigError
from envs.seeding import derive_seed
from envs.tutoring import TutoringEnv

RESET_OPTIONS = ("task_id", "persona")


class _FamilyStudent:
    """The simulated students of one persona family: each reset picks one of them from the seed."""

    def __init__(self, family: str, names: list[str]) -> None:
        student = importlib.import_module("agents.student").SimulatedStudent
        self.family = family
        self.students = {name: student(name) for name in names}
        self.current = next(iter(self.students.values()))

    @property
    def name(self) -> str:
        return self.current.name

    def reset(self, seed: int | None = None) -> None:
        names = sorted(self.students)
        pick = int(np.random.default_rng(derive_seed(0 if seed is None else seed, "persona")).integers(len(names)))
        self.current = self.students[names[pick]]
        self.current.reset(seed=seed)

    def act(self, observation: Any, info: dict) -> Any:
        return self.current.act(observation, info)


def simulated_student(persona: str) -> Any:
    """A simulated student for a persona name, a family name (one of its personas per episode) or
    ``distribution:NAME`` (sampled per episode); an unknown name is a ConfigError with a did-you-mean."""
    personas = importlib.import_module("agents.student.personas")
    student = importlib.import_module("agents.student").SimulatedStudent
    if persona.startswith("distribution:"):
        return student(personas.load_distribution(persona.partition(":")[2]))
    every = personas.load_personas()
    family = sorted(n for n, p in every.items() if p.family == persona)
    if persona not in every and family:
        return _FamilyStudent(persona, family)
    return student(persona)  # a name (or family/name); get_persona's did-you-mean when unknown


class _Embedded(gym.Env):
    """Shared machinery: one seat is the learner, the other is played by an embedded policy."""

    metadata = {"render_modes": ["human", "ansi"]}
    seat = "tutor"

    def __init__(self, other: Any, render_mode: str | None = None, **env_kwargs: Any) -> None:
        self.aec = TutoringEnv(render_mode=render_mode, **env_kwargs)
        self.render_mode = render_mode
        self.other = other
        self._default_other = other
        self._default_config = self.aec.config
        self.observation_space = self.aec.observation_space(self.seat)
        self.action_space = self.aec.action_space(self.seat)

    def _apply_options(self, options: dict | None) -> None:
        """This episode's task and persona (see the module docstring); the constructor's otherwise."""
        options = dict(options or {})
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            raise ConfigError(f"reset options {unknown} are not understood; give any of {list(RESET_OPTIONS)}")
        config, other = self._default_config, self._default_other
        task_id = options.get("task_id")
        if task_id is not None:
            known = self.aec._task_ids
            if task_id not in known:
                raise ConfigError(f"reset option task_id {task_id!r} is not in task set {config.task_set!r}; see "
                                  f"`tutorzoo list tasks --task-set {config.task_set}`")
            config = config.model_copy(update={"task_id": task_id})
        persona = options.get("persona")
        if persona is not None:
            if not getattr(self, "_owns_student", False):
                raise ConfigError("reset option persona needs the env's own simulated student (TutorEnv built with "
                                  "persona=..., not student=...)")
            other = simulated_student(str(persona))
        self.aec.config, self.other = config, other

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._apply_options(options)
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**63))
        self.aec.reset(seed=episode_seed, options=options)
        # The embedded seat is seeded as in the harness (eval.rollout.run_episode): one spec, one episode.
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
        owns = student is None
        if student is None:
            student = simulated_student(persona)
        super().__init__(student, render_mode=render_mode, **env_kwargs)
        self._owns_student = owns


class StudentEnv(_Embedded):
    """The student's seat as a Gymnasium env; ``tutor`` is a policy object or a registry name."""

    seat = "student"

    def __init__(self, tutor: Any = "socratic", render_mode: str | None = None, **env_kwargs: Any) -> None:
        if isinstance(tutor, str):
            tutor = importlib.import_module("agents.tutor.registry").make_tutor(tutor)
        super().__init__(tutor, render_mode=render_mode, **env_kwargs)
