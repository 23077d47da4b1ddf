"""Random actions from both agents, many episodes: the env raises nothing and every observation is in its space.

The default run plays 300 episodes; ``pytest -m slow`` plays the issue's 10,000.
"""

from __future__ import annotations

import numpy as np
import pytest

from tutorzoo.envs import tutoring_v0

CONFIGS = (
    {"task_set": "math", "action_mode": "text"},
    {"task_set": "math", "action_mode": "act", "opener": "tutor"},
    {"task_set": "stem", "action_mode": "text", "posttest": "both"},
    {"task_set": "mcq", "action_mode": "act", "posttest": "same"},
)
_EXTRA = ("", "\x00\x1b[2J", "x" * 20_000, "分数 😀 ∑", None, 7, {"utterance": 3}, np.array([9, 9]))


def _fuzz(n_episodes: int) -> int:
    rng = np.random.default_rng(0)
    steps = 0
    envs = [tutoring_v0.env(max_turns=int(rng.integers(1, 9)), **c) for c in CONFIGS]
    for episode in range(n_episodes):
        env = envs[episode % len(envs)]
        env.reset(seed=episode)
        for agent in env.agent_iter(max_iter=500):
            obs, _, term, trunc, _ = env.last()
            assert env.observation_space(agent).contains(obs)
            if term or trunc:
                action = None
            elif rng.random() < 0.1:
                action = _EXTRA[int(rng.integers(len(_EXTRA)))]
            else:
                space = env.action_space(agent)
                space.seed(int(rng.integers(2**31)))
                action = space.sample()
            env.step(action)
            steps += 1
        assert not env.agents, "an episode did not end"
    return steps


def test_fuzz_random_actions():
    assert _fuzz(300) > 300 * 10


@pytest.mark.slow
def test_fuzz_ten_thousand_episodes():
    assert _fuzz(10_000) > 10_000 * 10
