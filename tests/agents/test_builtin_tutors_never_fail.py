"""Every built-in tutor finishes every episode it starts, for every persona on every task set.

A tutor that raises is recorded by the rollout as a failure (so a run goes on); this test makes sure the
built-in tutors never rely on that: no failure record, whatever the persona, task set or seed.
"""

from __future__ import annotations

import pytest

from tutorzoo.agents.student import SimulatedStudent, load_personas
from tutorzoo.agents.tutor import BUILTIN_TUTORS, make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.eval.rollout import run_episode


@pytest.mark.parametrize("task_set", ["math", "stem", "mcq"])
@pytest.mark.parametrize("tutor", sorted(BUILTIN_TUTORS))
def test_no_failures(tutor, task_set):
    failed = []
    for persona in sorted(load_personas()):
        for seed in (2, 14):
            spec = EpisodeSpec(task_set=task_set, persona=persona, seed=seed)
            record = run_episode(spec, make_tutor(tutor), SimulatedStudent(persona), tutor)
            if record["failures"]:
                failed.append((persona, seed, record["failures"][0]["error"]))
    assert not failed, failed[:3]
