"""TutorZoo's tutoring session for verifiers 0.4 (``verifiers.v1``): a Taskset of episode specs and the Env that
plays them (:mod:`tutorzoo_verifiers.taskset`). ``vf-eval tutorzoo-verifiers`` finds both through ``__all__``."""

from __future__ import annotations

from tutorzoo_verifiers.taskset import (
    TutorZooData,
    TutorZooEnv,
    TutorZooEnvConfig,
    TutorZooTask,
    TutorZooTaskset,
    TutorZooTasksetConfig,
)

__all__ = ["TutorZooData", "TutorZooEnv", "TutorZooEnvConfig", "TutorZooTask", "TutorZooTaskset",
           "TutorZooTasksetConfig"]
