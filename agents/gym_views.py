"""The registered Gymnasium views ``tutorzoo/Tutor-v0`` and ``tutorzoo/Student-v0``: the views of
:mod:`tutorzoo.envs.single_agent` with their embedded seat given by name.

``gymnasium.make("tutorzoo/Tutor-v0", persona="weak_knowledge_partly_wrong")`` gives :class:`TutorView`, the
tutor's seat with a simulated student embedded; ``gymnasium.make("tutorzoo/Student-v0", tutor="socratic")``
gives :class:`StudentView`, where the agent is the student and a tutor from the registry is embedded. Policy
objects are accepted too (``student=...``, ``tutor=...``). The ids are registered by ``from tutorzoo import envs``, with
their entry points here (``envs`` names them as strings and imports no agent code).

``persona`` (TutorView) is a persona name, a persona *family* (``sid_core``: each episode draws one of its
personas from the reset seed) or ``distribution:NAME`` (a persona distribution of ``configs/personas``,
sampled per episode). ``reset(options=...)`` takes ``task_id`` (this episode's task, from the env's task set)
and, in TutorView with a built-in student, ``persona`` (this episode's persona, family or distribution); an
unknown option is an error, never ignored. Options hold for the one episode: the next reset without them
returns to the constructor's settings.

Example::

    import gymnasium as gym, envs
    env = gym.make("tutorzoo/Tutor-v0", persona="sid_core")          # a sid_core persona per episode
    obs, info = env.reset(seed=0, options={"task_id": "fraction_addition", "persona": "all_round_partly_wrong"})
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.student.personas import load_distribution, load_personas
from tutorzoo.agents.tutor.registry import make_tutor
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.protocols import Student, Tutor
from tutorzoo.envs.seeding import derive_seed
from tutorzoo.envs.single_agent import StudentEnv, TutorEnv

RESET_OPTIONS = ("task_id", "persona")


class _FamilyStudent:
    """The simulated students of one persona family: each reset picks one of them from the seed."""

    def __init__(self, family: str, names: list[str]) -> None:
        self.family = family
        self.students = {name: SimulatedStudent(name) for name in names}
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


def simulated_student(persona: str) -> Student:
    """A simulated student for a persona name, a family name (one of its personas per episode) or
    ``distribution:NAME`` (sampled per episode); an unknown name is a ConfigError with a did-you-mean."""
    if not isinstance(persona, str) or not persona:
        raise ConfigError(f"persona must be a persona name, a family or distribution:NAME (tutorzoo list personas), "
                          f"e.g. persona='weak_knowledge_partly_wrong'; got {persona!r}")
    if persona.startswith("distribution:"):
        return SimulatedStudent(load_distribution(persona.partition(":")[2]))
    every = load_personas()
    family = sorted(n for n, p in every.items() if p.family == persona)
    if persona not in every and family:
        return _FamilyStudent(persona, family)
    return SimulatedStudent(persona)  # a name (or family/name); get_persona's did-you-mean when unknown


class TutorView(TutorEnv):
    """``tutorzoo/Tutor-v0``: the tutor's seat; ``student`` is a policy object, else ``persona`` names one.

    Example::

        import gymnasium as gym, envs
        env = gym.make("tutorzoo/Tutor-v0", persona="all_round_partly_wrong", action_mode="act")
        obs, info = env.reset(seed=0)
    """

    reset_options = RESET_OPTIONS

    def __init__(self, student: Student | None = None, persona: str = "all_round_partly_wrong",
                 render_mode: str | None = None, **env_kwargs: Any) -> None:
        self._owns_student = student is None
        super().__init__(simulated_student(persona) if student is None else student, render_mode=render_mode,
                         **env_kwargs)

    def _episode_options(self, options: dict) -> None:
        persona = options.get("persona")
        if persona is not None:
            if not self._owns_student:
                raise ConfigError("reset option persona needs the env's own simulated student (TutorEnv built with "
                                  "persona=..., not student=...)")
            self.other = simulated_student(str(persona))


class StudentView(StudentEnv):
    """``tutorzoo/Student-v0``: the student's seat; ``tutor`` is a policy object or a registry name."""

    def __init__(self, tutor: Tutor | str = "socratic", render_mode: str | None = None, **env_kwargs: Any) -> None:
        super().__init__(make_tutor(tutor) if isinstance(tutor, str) else tutor, render_mode=render_mode,
                         **env_kwargs)


__all__ = ["RESET_OPTIONS", "StudentView", "TutorView", "simulated_student"]
