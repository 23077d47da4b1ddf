"""``gymnasium.make("tutorzoo/Tutor-v0", persona=...)`` with something that is not a persona name is a
ConfigError naming the fix, not an AttributeError from inside the env."""

from __future__ import annotations

import gymnasium
import pytest

import tutorzoo.envs  # noqa: F401  (registers the Gymnasium ids)
from tutorzoo.envs.errors import ConfigError


@pytest.mark.parametrize("persona", [..., None, 3, ""], ids=["ellipsis", "none", "int", "empty"])
def test_a_persona_that_is_not_a_name_is_a_config_error(persona: object) -> None:
    with pytest.raises(ConfigError, match="persona must be a persona name.*tutorzoo list personas"):
        gymnasium.make("tutorzoo/Tutor-v0", persona=persona)


def test_a_persona_name_plays() -> None:
    env = gymnasium.make("tutorzoo/Tutor-v0", persona="weak_knowledge_partly_wrong", action_mode="text")
    obs, info = env.reset(seed=0)
    assert isinstance(obs, dict) and obs["text"]
