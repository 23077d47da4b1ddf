"""The ``stem`` task set under the SID protocol: every built-in tutor and persona runs, and the socratic tutor
triggers interdisciplinary transfer on (nearly) every lesson."""

from __future__ import annotations

import pytest

from tutorzoo.agents.student import SimulatedStudent, load_personas
from tutorzoo.agents.tutor import BUILTIN_TUTORS, make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.eval.rollout import run_episode

SID = {"max_turns": 8, "opener": "student", "posttest": "both"}


def test_socratic_triggers_transfer_on_at_least_40_of_48_lessons():
    lessons = get_task_set("stem").task_ids()
    assert len(lessons) == 48
    with_transfer = 0
    for i, lesson in enumerate(lessons):
        spec = EpisodeSpec(task_set="stem", task_id=lesson, persona="all_round_correct_and_extends", seed=i,
                           protocol=SID)
        record = run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona), "socratic")
        with_transfer += any(t["speaker"] == "tutor" and t["discipline_transfer"] for t in record["transcript"])
    assert with_transfer >= 40, f"transfer on {with_transfer}/48 lessons"


@pytest.mark.parametrize("tutor", sorted(BUILTIN_TUTORS))
def test_every_persona_runs_on_stem(tutor):
    lessons = get_task_set("stem").task_ids()
    for i, persona in enumerate(sorted(load_personas())):
        spec = EpisodeSpec(task_set="stem", task_id=lessons[i % len(lessons)], persona=persona, seed=i, protocol=SID)
        record = run_episode(spec, make_tutor(tutor), SimulatedStudent(persona), tutor)
        assert not record["failures"], record["failures"]
        assert record["ended_by"] in ("end_marker", "max_turns")
        assert len(record["posttest"]) == 2 * len(record["pretest"])  # isomorphic and same-item post-tests
