"""The Gymnasium view honours ``reset(options=...)`` (task and persona for one episode) and ``persona`` takes a
family or a distribution; an unknown option is an error, never silently ignored."""

from __future__ import annotations

import gymnasium as gym
import pytest

from tutorzoo import envs  # noqa: F401  (registers tutorzoo/Tutor-v0)
from tutorzoo.envs.errors import ConfigError


def _persona(env: gym.Env) -> str:
    return env.unwrapped.other.name.removeprefix("simulated:")


def _play_student_turns(env: gym.Env) -> None:
    """A few tutor turns, so that the student has spoken and the episode is under way."""
    for _ in range(2):
        env.step("What do you think the first step is?")


def test_options_set_task_and_persona_for_one_episode():
    env = gym.make("tutorzoo/Tutor-v0", persona="all_round_partly_wrong")
    env.reset(seed=0, options={"task_id": "decimal_addition", "persona": "weak_knowledge_partly_wrong"})
    assert env.unwrapped.aec.task.id == "decimal_addition"
    assert _persona(env) == "weak_knowledge_partly_wrong"
    _play_student_turns(env)
    env.reset(seed=0)  # no options: the constructor's persona and the seed's task again
    assert _persona(env) == "all_round_partly_wrong"
    plain = gym.make("tutorzoo/Tutor-v0", persona="all_round_partly_wrong")
    plain.reset(seed=0)
    assert env.unwrapped.aec.task.id == plain.unwrapped.aec.task.id


@pytest.mark.parametrize(
    "options,needle",
    [({"task": "decimal_addition"}, "not understood"),
     ({"task_id": "no_such_task"}, "not in task set 'math'"),
     ({"persona": "all_round_partly_wrang"}, "Did you mean")],
    ids=["unknown-key", "unknown-task", "unknown-persona"],
)
def test_bad_options_are_errors(options, needle):
    env = gym.make("tutorzoo/Tutor-v0")
    with pytest.raises(ConfigError, match=needle):
        env.reset(seed=0, options=options)


def test_a_family_draws_one_of_its_personas_per_episode():
    from tutorzoo.agents.student.personas import load_personas

    family = sorted(n for n, p in load_personas().items() if p.family == "sid_core")
    env = gym.make("tutorzoo/Tutor-v0", persona="sid_core")
    seen = set()
    for seed in range(12):
        env.reset(seed=seed)
        seen.add(_persona(env))
    assert seen <= set(family) and len(seen) > 1
    again = gym.make("tutorzoo/Tutor-v0", persona="sid_core")
    again.reset(seed=5)
    env.reset(seed=5)
    assert _persona(again) == _persona(env)  # drawn from the reset seed


def test_a_distribution_is_sampled_per_episode():
    env = gym.make("tutorzoo/Tutor-v0", persona="distribution:default")
    obs, info = env.reset(seed=0)
    _play_student_turns(env)
    assert env.unwrapped.other.source.name == "default"
