"""One spec, one episode, for the training entry points on the rollout engine: DPO's state collection and
replays give the harness's episode for the deterministic ``socratic`` tutor (the CLI, the batched rollout, the
Gymnasium views and ``play`` are tests/envs/test_one_spec_one_episode.py; GRPO's rollout_func is exercised on the tiny
model in tests/train/test_train_grpo.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.eval.rollout import run_episode
from tutorzoo.train.dpo_pairs import ReplayTutor, collect_states, replay

SPECS = [
    EpisodeSpec(task_set="math", persona="weak_knowledge_partly_wrong", seed=1, protocol={"max_turns": 4}),
    EpisodeSpec(task_set="stem", persona="low_motivation_asks_for_hint", seed=3, protocol={"max_turns": 3}),
]
IDS = [f"{s.task_set}-{s.seed}" for s in SPECS]
RECORD_ONLY = ("spec", "tutor", "student", "failures")


def _episode(record: dict) -> str:
    return json.dumps({k: v for k, v in record.items() if k not in RECORD_ONLY}, sort_keys=True, ensure_ascii=False)


class _Typist:
    """The socratic tutor, keeping each action it took."""

    def __init__(self) -> None:
        self.tutor = make_tutor("socratic")
        self.typed: list[str] = []

    def reset(self, seed: int | None = None) -> None:
        self.tutor.reset(seed=seed)

    def act(self, observation: Any, info: dict) -> Any:
        self.typed.append(self.tutor.act(observation, info))
        return self.typed[-1]


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_dpo_states_and_replays_reproduce_the_harness_episode(spec: EpisodeSpec) -> None:
    typist = _Typist()
    harness = run_episode(spec, typist, SimulatedStudent(spec.persona), "socratic")
    assert len(typist.typed) >= 2

    failures: list[dict] = []
    states = collect_states(spec, make_tutor("socratic"), SimulatedStudent, {}, make_tutor, failures=failures)
    assert failures == [] and len(states) == len(typist.typed)
    for state in states:
        assert state.prefix == tuple(typist.typed[: state.turn])
        assert state.transcript == harness["transcript"][: len(state.transcript)]
        # the state's own turn said again, then the socratic tutor on: the harness episode
        again = replay(state, typist.typed[state.turn], make_tutor("socratic"), SimulatedStudent)
        assert _episode(again) == _episode(harness)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_forced_turns_then_the_tutor_is_the_harness_episode(spec: EpisodeSpec) -> None:
    typist = _Typist()
    harness = run_episode(spec, typist, SimulatedStudent(spec.persona), "socratic")
    forced = ReplayTutor(typist.typed[:2], make_tutor("socratic"))  # shadowing keeps the tutor's plan in step
    assert _episode(run_episode(spec, forced, SimulatedStudent(spec.persona), "replay")) == _episode(harness)
