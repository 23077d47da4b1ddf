"""The procedural K-8 math curriculum (task set ``math``) and its KMP-Skills generators.

Families by domain: place value and decimals, fractions, integers, order of operations and linear
equations, ratio and percent, area and perimeter, unit conversion and rates. See :mod:`.family` for the
problem model and :mod:`.material` for the teaching material.

Example::

    import numpy as np
    from tutorzoo.envs.tasks.math import MathTaskSet, follow_ups, similar
    task = MathTaskSet().build("fraction_addition", np.random.default_rng(0))
    first, second = follow_ups("fraction_addition", np.random.default_rng(0))
    hard = similar("fraction_addition", "hard", np.random.default_rng(1))
"""

from __future__ import annotations

from tutorzoo.envs.tasks.math.family import LEVELS, Family, Kind, Problem, Solved
from tutorzoo.envs.tasks.math.taskset import (
    FAMILIES,
    MathTaskSet,
    erroneous_solution,
    family,
    follow_ups,
    seed_problem,
    similar,
)

__all__ = [
    "FAMILIES",
    "LEVELS",
    "Family",
    "Kind",
    "MathTaskSet",
    "Problem",
    "Solved",
    "erroneous_solution",
    "family",
    "follow_ups",
    "seed_problem",
    "similar",
]
