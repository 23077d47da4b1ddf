"""The tutoring session protocol: PettingZoo env, phases, spaces, task sets, annotation, wrappers.

Example::

        env = tutoring_v0.env(task_set="math")
"""

from __future__ import annotations

import gymnasium

from tutorzoo.envs.config import EnvConfig, EpisodeSpec
from tutorzoo.envs.errors import ConfigError, DatasetError, TutorZooError

# The views that resolve persona and tutor names live with those names in agents; gymnasium imports the entry
# point on make(), so importing envs imports no agent code.
for _id, _entry in (("tutorzoo/Tutor-v0", "tutorzoo.agents.gym_views:TutorView"),
                    ("tutorzoo/Student-v0", "tutorzoo.agents.gym_views:StudentView")):
    if _id not in gymnasium.registry:
        gymnasium.register(id=_id, entry_point=_entry)

__all__ = ["ConfigError", "DatasetError", "EnvConfig", "EpisodeSpec", "TutorZooError"]
# `from tutorzoo.envs import tutoring_v0` imports the env module on demand, keeping `import tutorzoo.envs.labels` light.
