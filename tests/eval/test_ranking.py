"""docs/design.md property 8 and issue 2's done-criterion: the built-in tutors rank socratic > lecturer > random on
isomorphic-post-test learning gain under every persona family (math curriculum and stem lessons, the same episodes
for all)."""

from __future__ import annotations

import collections

import pytest

from tutorzoo.agents.student import SimulatedStudent, load_personas
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.eval.rollout import run_episode

SEEDS = range(16)
TUTORS = ("socratic", "lecturer", "random")


@pytest.fixture(scope="module", params=["math", "stem"])
def gains_by_family(request) -> dict[str, dict[str, list[float]]]:
    personas = load_personas()
    out: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for tutor_name in TUTORS:
        tutor = make_tutor(tutor_name)
        for name, persona in personas.items():
            for seed in SEEDS:
                spec = EpisodeSpec(task_set=request.param, persona=name, seed=seed, protocol={"max_turns": 8})
                record = run_episode(spec, tutor, SimulatedStudent(name), tutor_name)
                out[persona.family][tutor_name].append(record["learning_gain"])
    return out


@pytest.mark.parametrize("family", ["sid_core", "sid_state", "mathdial", "profile"])
def test_socratic_beats_lecturer_beats_random(gains_by_family, family):
    gains = gains_by_family[family]
    mean = {t: sum(gains[t]) / len(gains[t]) for t in TUTORS}
    assert len(gains["socratic"]) >= 80, "too few episodes to rank"
    assert mean["socratic"] > mean["lecturer"] > mean["random"], mean
