"""TutorZoo: a PettingZoo environment for training and benchmarking AI tutors against simulated students.

The repository's top-level packages are installed under this one name: ``tutorzoo.envs``, ``tutorzoo.agents``,
``tutorzoo.rewards``, ``tutorzoo.train`` and ``tutorzoo.eval``. The names a user needs most are re-exported here
and imported on first use, so ``import tutorzoo`` loads no model library.

Example::

    import tutorzoo
    env = tutorzoo.tutoring_v0.env(task_set="math", max_turns=8)   # the PettingZoo AEC env
    spec = tutorzoo.EpisodeSpec(task_set="math", persona="sid_core/all_round_asks_for_hint", seed=0)
    record = tutorzoo.run_episode(spec, tutorzoo.make_tutor("socratic"), tutorzoo.SimulatedStudent(spec.persona))
    print(record["learning_gain"])
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "tutoring_v0": "tutorzoo.envs",
    "EnvConfig": "tutorzoo.envs.config",
    "EpisodeSpec": "tutorzoo.envs.config",
    "ConfigError": "tutorzoo.envs.errors",
    "DatasetError": "tutorzoo.envs.errors",
    "TutorZooError": "tutorzoo.envs.errors",
    "SimulatedStudent": "tutorzoo.agents.student",
    "make_tutor": "tutorzoo.agents.tutor",
    "load_rubric": "tutorzoo.rewards",
    "run_episode": "tutorzoo.eval.rollout",
    "load_suite": "tutorzoo.eval.suite",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tutorzoo' has no attribute {name!r}")
    if name == "tutoring_v0":
        value = importlib.import_module("tutorzoo.envs.tutoring_v0")
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
