"""The tutoring env against PettingZoo's and Gymnasium's own checks, and its handling of bad input."""

from __future__ import annotations

import functools
import types

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
)

from tutorzoo import envs  # noqa: F401 - registers the Gymnasium ids
from tutorzoo.envs import tutoring_v0
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.labels import TURN_FIELDS

CONFIGS = {
    "math-text": {"task_set": "math"},
    "math-act": {"task_set": "math", "action_mode": "act"},
    "math-tutor-opens-both": {"task_set": "math", "opener": "tutor", "posttest": "both", "max_turns": 3},
    "stem-text": {"task_set": "stem", "max_turns": 4},
    "mcq-same": {"task_set": "mcq", "posttest": "same", "max_turns": 5},
}


@pytest.mark.parametrize("kwargs", CONFIGS.values(), ids=CONFIGS.keys())
def test_pettingzoo_api(kwargs):
    api_test(tutoring_v0.env(**kwargs), num_cycles=200)


@pytest.mark.parametrize("kwargs", CONFIGS.values(), ids=CONFIGS.keys())
def test_parallel_api(kwargs):
    parallel_api_test(tutoring_v0.parallel_env(**kwargs), num_cycles=200)


@pytest.mark.parametrize("kwargs", [CONFIGS["math-text"], CONFIGS["math-act"]], ids=["text", "act"])
def test_seed(kwargs):
    seed_test(functools.partial(tutoring_v0.env, **kwargs), num_cycles=100)
    parallel_seed_test(functools.partial(tutoring_v0.parallel_env, **kwargs), num_cycles=100)


def test_max_cycles():
    max_cycles_test(tutoring_v0)
    max_cycles_test(types.SimpleNamespace(
        env=functools.partial(tutoring_v0.env, action_mode="act"),
        parallel_env=functools.partial(tutoring_v0.parallel_env, action_mode="act"),
    ))


def test_render():
    render_test(tutoring_v0.env)


@pytest.mark.parametrize(
    "env_id,kwargs",
    [
        ("tutorzoo/Tutor-v0", {"action_mode": "text"}),
        ("tutorzoo/Tutor-v0", {"action_mode": "act", "task_set": "stem"}),
        ("tutorzoo/Student-v0", {"tutor": "socratic"}),
    ],
    ids=["tutor-text", "tutor-act-stem", "student"],
)
def test_gymnasium_check_env(env_id, kwargs):
    env = gymnasium.make(env_id, **kwargs)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert "messages" in info or "item" in info


GARBAGE = {
    "empty": "",
    "one-megabyte": "x" * 1_000_000,
    "control-chars": "\x00\x01\x1b[31m\x7f\u200b\ufeff",
    "unicode": "分数 😀 ∑ ﷽ \U0010ffff",
    "not-a-string": 12345,
    "none-like-dict": {"utterance": None},
    "act-wrong-shape": np.array([1, 2]),
    "act-out-of-range": np.array([99, -4, 7, 100, 3]),
}


@pytest.mark.parametrize("mode", ["text", "act"])
@pytest.mark.parametrize("garbage", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_actions_are_handled(mode, garbage):
    env = tutoring_v0.env(action_mode=mode, max_turns=3)
    env.reset(seed=1)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        assert env.observation_space(agent).contains(obs)
        env.step(None if term or trunc else garbage)
    record = env.unwrapped.episode_record()
    assert record["ended_by"] in ("max_turns", "end_marker")
    flagged = sum(record["invalid_turns"].values()) + sum(record["clipped_turns"].values())
    assert flagged >= 1, "garbage went through unflagged"
    for turn in record["transcript"]:
        assert len(turn["utterance"]) <= 4000


def test_stepping_after_the_end_is_the_pettingzoo_warning(caplog):
    env = tutoring_v0.env(max_turns=1)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else "What do you think?")
    assert env.agents == []
    before = env.unwrapped.episode_record()
    env.step("one more")
    assert "Should reset() first" in caplog.text
    assert env.unwrapped.episode_record() == before


def test_dead_agent_rejects_a_real_action():
    env = tutoring_v0.env(max_turns=1)
    env.reset(seed=0)
    while not env.terminations[env.agent_selection]:
        env.step("Why?")
    with pytest.raises(ValueError, match="None"):
        env.step("not None")


def test_step_before_reset_is_an_error():
    env = tutoring_v0.env()
    with pytest.raises(Exception, match="reset"):
        env.step("hello")


BAD_CONFIGS = {
    "negative-turns": ({"max_turns": -1}, "max_turns"),
    "unknown-opener": ({"opener": "teacher"}, "opener"),
    "typo-argument": ({"max_turn": 5}, "unknown argument 'max_turn'"),
    "unknown-task-set": ({"task_set": "maths"}, "Did you mean 'math'"),
    "unknown-task": ({"task_id": "fraction_adition"}, "task_id"),
}


@pytest.mark.parametrize("kwargs,needle", BAD_CONFIGS.values(), ids=BAD_CONFIGS.keys())
def test_bad_config_names_the_field(kwargs, needle):
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(")):
        tutoring_v0.env(**kwargs)


def test_record_has_the_nine_sid_fields_on_every_turn():
    env = tutoring_v0.env(task_set="stem", max_turns=4)
    env.reset(seed=2)
    for _agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else "Imagine a heavier rocket: why would it fly lower? Think about force.")
    record = env.unwrapped.episode_record()
    assert record["transcript"], "the dialogue produced no turns"
    for turn in record["transcript"]:
        assert set(TURN_FIELDS) <= set(turn)
        if turn["speaker"] == "tutor":
            assert turn["student_cognition_state"] is None and turn["cognitive_level"] is None
            assert turn["teacher_intent"] is not None
        else:
            assert turn["teacher_intent"] is None and turn["teacher_guidance_level"] is None
    assert record["pretest"] and record["posttest"]
    assert record["learning_gain"] == pytest.approx(record["posttest_score"] - record["pretest_score"])


def test_tutor_never_sees_the_hidden_state_or_the_options():
    env = tutoring_v0.env(task_set="mcq", max_turns=2)
    env.reset(seed=0)
    task = env.unwrapped.task
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if agent == "tutor" and not (term or trunc):
            assert "privileged_student_state" not in info
            for item in task.pretest:
                for option in item.options:
                    if option not in item.stem and option != item.options[ord(item.answer) - 65]:
                        assert option not in obs["text"]
        env.step(None if term or trunc else "Why do you think so?")


def test_make_config_returns_the_same_immutable_config_for_the_same_arguments():
    from tutorzoo.envs.config import make_config

    a = make_config(task_set="math", max_turns=4, action_mode="act")
    assert make_config(action_mode="act", max_turns=4, task_set="math") is a  # validated once
    assert make_config(task_set="math", max_turns=5, action_mode="act") is not a
    with pytest.raises(Exception):  # noqa: B017, PT011 - pydantic's frozen-instance error
        a.max_turns = 9
    for _ in range(2):  # an error is raised every time, never cached
        with pytest.raises(ConfigError, match="max_turns"):
            make_config(task_set="math", max_turns=4.5)
