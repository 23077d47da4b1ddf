"""Tutors the harness tests load by import path (``runner_fixtures:ClassName``), in worker processes too."""

from __future__ import annotations

import os
import time

from tutorzoo.agents.tutor.builtin import SocraticTutor
from tutorzoo.envs.seeding import derive_seed

CRASH_SEED = 1  # the episode seed whose episodes kill their worker process


class SlowSocratic(SocraticTutor):
    """The socratic tutor, 10 ms slower per turn: a run lasts long enough to be killed midway."""

    def act(self, observation: dict, info: dict) -> str:
        time.sleep(0.01)
        return super().act(observation, info)


class CrashingTutor(SocraticTutor):
    """Kills its whole process (no exception, no cleanup) when reset for an episode of seed ``CRASH_SEED``:
    what a segfaulting backend or an out-of-memory kill does to a worker."""

    def reset(self, seed: int | None = None) -> None:
        if seed == derive_seed(CRASH_SEED, "tutor"):
            os._exit(17)
        super().reset(seed)
