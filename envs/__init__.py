"""The tutoring session protocol: PettingZoo env, phases, spaces, task sets, annotation, wrappers.

Example::

        env = tutoring_v0.env(task_set="math")
"""

from __future__ import annotations

import gymnasium

from envs.config import EnvConfig, EpisodeSpec
from envs.errors import ConfigError, DatasetError, TutorZooError

for _id, _entry in (("tutorzoo/Tutor-v0", "envs.single_agent:TutorEnv"),
                    ("tutorzoo/Student-v0", "envs.single_agent:StudentEnv")):
    if _id not in gymnasium.registry:
        gymnasium.register(id=_id, entry_point=_entry)

__all__ = ["ConfigError", "DatasetError", "EnvConfig", "EpisodeSpec", "TutorZooError"]
# `from envs import tutoring_v0` imports the env module on demand, keeping `import envs.labels` light.
