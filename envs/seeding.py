"""The seeds of an episode: one derivation for every way of playing it.

An episode is fixed by its spec, and its spec's ``seed`` is the only seed: the env is reset with it, and each
policy seat is reset with ``derive_seed(seed, role)``. The harness (:func:`tutorzoo.eval.rollout.run_episode`), the
batched rollout (:mod:`tutorzoo.eval.batch`), ``tutorzoo play`` and the Gymnasium views
(:mod:`tutorzoo.envs.single_agent`) all
call this function, so the same spec and tutor play the same transcript through each of them
(``tests/envs/test_one_spec_one_episode.py``).

The role is folded in as the sum of its bytes. That is a weak mix (anagrams collide), kept because every
recorded seed and benchmark number rests on it; the roles in use (``tutor``, ``student``, ``persona``) differ.

Example::

    from tutorzoo.envs.seeding import derive_seed, episode_seed
    spec_seed = episode_seed(0, 3)                 # the 4th episode of a run seeded 0
    derive_seed(spec_seed, "student")              # the student's reset seed in that episode
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Role = Literal["tutor", "student", "persona"]


def derive_seed(seed: int, role: Role | str) -> int:
    """A seed for one role of an episode seeded ``seed``: independent of the other roles, stable across runs.

    ``"persona"`` is the draw of a persona from a family or a distribution, apart from the student's own seed.
    """
    return int(np.random.SeedSequence([seed, sum(role.encode())]).generate_state(1)[0])


def episode_seed(run_seed: int, index: int) -> int:
    """The seed of episode ``index`` of a run seeded ``run_seed``: mixed by :class:`numpy.random.SeedSequence`,
    so runs with different seeds share no episode (``run_seed + index`` would make seeds 0 and 1 share all
    but one). Both must be >= 0.

    Example::

        [episode_seed(0, i) for i in range(3)]  # three unrelated 32-bit seeds; episode_seed(1, 0) is another
    """
    if run_seed < 0 or index < 0:
        raise ValueError(f"seeds must be >= 0, got run seed {run_seed} and index {index}")
    return int(np.random.SeedSequence([run_seed, index]).generate_state(1)[0])


__all__ = ["Role", "derive_seed", "episode_seed"]
