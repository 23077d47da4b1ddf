"""Validated configuration of one tutoring env, and the episode spec that fully defines an episode."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutorzoo.envs.errors import ConfigError


class EnvConfig(BaseModel):
    """Arguments of ``tutoring_v0.env(...)``. Every field has a default; unknown fields are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_set: str = Field(default="math", description="Task set name: math, stem, mcq (or module:Factory).")
    task_id: str | None = Field(default=None, description="Task id in the set; None draws one from the reset seed.")
    task_path: str | None = Field(default=None, description="Data of the task set (mcq bank file, lesson folder).")
    max_turns: int = Field(default=8, ge=1, le=200, description="Most tutor turns in the dialogue.")
    opener: Literal["student", "tutor"] = Field(
        default="student", description="Who opens the dialogue: student (SID protocol) or tutor."
    )
    posttest: Literal["isomorphic", "same", "both"] = Field(
        default="isomorphic",
        description="Post-test items: isomorphic variants (default), the pre-test items (EducationQ), or both.",
    )
    action_mode: Literal["text", "act"] = Field(
        default="text", description="Tutor actions: free text (annotated) or MultiDiscrete dialogue acts."
    )
    max_cycles: int | None = Field(
        default=None, ge=1, description="Truncate after this many rounds (each agent acts once per round)."
    )
    render_mode: Literal["human", "ansi"] | None = None


_CONFIGS: dict[tuple, EnvConfig] = {}


def make_config(**kwargs: Any) -> EnvConfig:
    """An :class:`EnvConfig` from keyword arguments, with an error that names the field and the fix.

    A config is immutable: one already made from the same arguments (values and their types, all hashable) is
    returned again -- the engine makes an env per episode, and validating its config was 1 % of an act-mode
    episode."""
    try:
        key: tuple | None = tuple(sorted((k, type(v), v) for k, v in kwargs.items()))
        cached = _CONFIGS.get(key)
    except TypeError:  # an unhashable value (a list, a dict): made afresh
        key = cached = None
    if cached is not None:
        return cached
    config = _make_config(kwargs)
    if key is not None and len(_CONFIGS) < 256:
        _CONFIGS[key] = config
    return config


def _make_config(kwargs: dict[str, Any]) -> EnvConfig:
    try:
        config = EnvConfig(**kwargs)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "(config)"
            if err["type"] == "extra_forbidden":
                known = ", ".join(EnvConfig.model_fields)
                problems.append(f"unknown argument {field!r}; the env takes: {known}")
            else:
                desc = EnvConfig.model_fields[field].description if field in EnvConfig.model_fields else ""
                problems.append(f"{field}: {err['msg']} (got {err.get('input')!r}). {desc}".strip())
        raise ConfigError("invalid tutoring env config: " + "; ".join(problems)) from None
    if config.posttest != "same":
        # A bank without isomorphic twins cannot give an isomorphic post-test: refuse before anything runs.
        from tutorzoo.envs.tasks import get_task_set

        check = getattr(get_task_set(config.task_set, config.task_path), "check_posttest", None)
        if check is not None:
            check(config.posttest, config.task_id)
    return config


class EpisodeSpec(BaseModel):
    """Everything that defines one episode: train and eval run the very same specs.

    Example::

        EpisodeSpec(task_set="math", task_id="fraction_addition", persona="sid_core/all_round_asks_for_hint", seed=7)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_set: str = "math"
    task_id: str | None = None
    persona: str = Field(description="Student persona name (see `tutorzoo list personas`).")
    seed: int = Field(ge=0)
    protocol: dict[str, Any] = Field(default_factory=dict, description="EnvConfig overrides (max_turns, ...).")

    def env_kwargs(self) -> dict[str, Any]:
        return {"task_set": self.task_set, "task_id": self.task_id, **self.protocol}

    def key(self) -> str:
        """A stable identity for resumable runs and cross-tutor comparisons."""
        proto = ",".join(f"{k}={self.protocol[k]}" for k in sorted(self.protocol))
        return f"{self.task_set}/{self.task_id}/{self.persona}/{self.seed}/{proto}"


def read_yaml_mapping(path: str | Path, expected: str) -> dict:
    """A YAML config file whose top level is a mapping (``expected`` says with what, for the error message)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc.strerror}); check the path") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc}); fix the syntax") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be {expected}, got {type(data).__name__}")
    return data
