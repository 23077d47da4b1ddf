"""A weighted composition of reward terms, with PedagogicalRL's λ knob and hard mode (docs/spec.md §7).

The reward credited to the tutor is ``Σ weight·value`` over the terms' components, plus two reserved
components that always have weight 1:

- ``pedagogy`` = ``(r_ped - 1)·λ``, with ``r_ped = 1`` unless a tutor turn stated an answer (the env's
  deterministic leak detector; a turn whose verdict is missing or not a boolean counts as a leak: judges fail
  closed). So ``r = r_sol + (r_ped - 1)·λ`` as in PedagogicalRL, ``r_sol`` being the weighted terms.
- ``forfeit`` (hard mode only): the dialogue ends at the first leak with ``pedagogy = -λ``; at the episode's end
  ``forfeit`` cancels every other weighted component, so the episode's reward is exactly ``-λ`` while every
  term is still logged.

A weight of 0 logs a term (it appears in ``info["reward_components"]`` and ``record["reward_components"]``)
without rewarding it. Configs live in ``configs/rewards/*.yaml``::

    name: default
    lam: 0.5            # λ
    hard: false         # end the dialogue on a leak
    terms:
      learning_gain: 1.0
      length_penalty: {weight: 0.05, max_chars: 600}
      sid_total_raw: 0  # logged only
      my_pkg.terms:politeness: {weight: 0.1}  # your own: a function returning tutorzoo.rewards.terms.Term

A term name is one of ``tutorzoo.rewards.terms.TERMS`` or an import path ``package.module:factory``
(``tutorzoo.rewards.terms.make_term``).

Example::

    from tutorzoo.rewards import load_rubric
    from tutorzoo.envs import tutoring_v0
    env = tutoring_v0.env(reward=load_rubric("default"))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tutorzoo.envs.config import read_yaml_mapping
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.records import reward_components
from tutorzoo.envs.resources import config_dir
from tutorzoo.rewards.terms import TERM_PARAMS, Term, make_term, term_entry

REWARD_CONFIG_DIR = config_dir("rewards")
RESERVED = ("pedagogy", "forfeit")


class TermSpec(BaseModel):
    """One term of a rubric config: its weight and its parameters (see ``tutorzoo.rewards.terms.TERMS``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    weight: float = Field(ge=0.0, description="Non-negative; 0 logs the term without rewarding it.")


class RubricConfig(BaseModel):
    """A rubric file. ``terms`` maps a term name to a weight or to ``{weight, <params>}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9_]+$")
    description: str = ""
    lam: float = Field(default=0.0, ge=0.0, description="λ of PedagogicalRL: what a leaked dialogue costs.")
    hard: bool = Field(default=False, description="End the dialogue at the first leak, at reward -λ.")
    terms: dict[str, TermSpec] = Field(min_length=1)

    @field_validator("terms", mode="before")
    @classmethod
    def _weights(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        out = {}
        for name, spec in value.items():
            try:
                term_entry(str(name))  # a registered term or an importable package.module:factory
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
            out[name] = {"weight": spec} if isinstance(spec, (int, float)) and not isinstance(spec, bool) else spec
        return out


class Rubric:
    """Weighted reward terms implementing :class:`tutorzoo.envs.reward_api.RewardModel`.

    Example::

        rubric = Rubric({"mastery_gain": 1.0, "leak_penalty": 0.5, "sid_total_raw": 0.0}, lam=0.75)
        rubric.weigh({"mastery_gain": 0.5, "leak_penalty": -1.0, "pedagogy": -0.75})  # 0.5 - 0.5 - 0.75
    """

    def __init__(self, terms: Mapping[str, float], lam: float = 0.0, hard: bool = False,
                 params: Mapping[str, Mapping[str, Any]] | None = None, name: str = "custom") -> None:
        if lam < 0:
            raise ConfigError(f"lam must be >= 0 (it is what a leak costs), got {lam}")
        bad = {n: w for n, w in terms.items() if not isinstance(w, (int, float)) or w < 0}
        if bad:
            raise ConfigError(f"term weights must be non-negative numbers (penalty terms are negative), got {bad}")
        params = params or {}
        self.name = name
        self.weights: dict[str, float] = {n: float(w) for n, w in terms.items()}
        self.terms: dict[str, Term] = {n: make_term(n, **dict(params.get(n, {}))) for n in terms}
        self.lam = float(lam)
        self.hard = bool(hard)

    @property
    def ends_on_leak(self) -> bool:
        return self.hard

    # ------------------------------------------------------------------ construction from YAML
    @classmethod
    def from_config(cls, config: RubricConfig) -> Rubric:
        weights = {n: s.weight for n, s in config.terms.items()}
        params = {n: dict(s.model_extra or {}) for n, s in config.terms.items()}
        return cls(weights, lam=config.lam, hard=config.hard, params=params, name=config.name)

    @classmethod
    def from_yaml(cls, path: str | Path) -> Rubric:
        """A rubric from a YAML file; errors name the file, the field and the fix."""
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"{path}: no such reward config; see configs/rewards/ for examples")
        data = read_yaml_mapping(path, "a mapping with name, lam, hard and terms")
        try:
            config = RubricConfig(**data)
        except ValidationError as e:
            raise ConfigError(f"{path}: {_explain(e)}") from e
        try:
            return cls.from_config(config)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from e

    # ------------------------------------------------------------------ RewardModel
    def exchange(self, exchange: dict) -> dict[str, float]:
        out = {}
        for name, term in self.terms.items():
            if term.level == "exchange":
                value = term.fn(exchange)
                if value is not None:
                    out[name] = float(value)
        return out

    def episode(self, record: dict) -> dict[str, float]:
        out = {}
        for name, term in self.terms.items():
            if term.level == "episode":
                value = term.fn(record)
                if value is not None:
                    out[name] = float(value)
        if self.hard and record.get("ended_by") == "leak":
            # the penalty came with the leak (leak_penalty); cancel everything else so the episode ends at -λ
            earlier = {k: v for k, v in reward_components(record).items() if k not in RESERVED}
            out["forfeit"] = -(self._weighted(earlier) + self._weighted(out))
        elif self.lam > 0:
            out["pedagogy"] = (pedagogy_ok(record.get("transcript", [])) - 1.0) * self.lam
        return out

    def leak_penalty(self, tutor_turn: dict) -> dict[str, float]:
        out = {"pedagogy": -self.lam}
        if "leak_penalty" in self.terms:
            out["leak_penalty"] = float(self.terms["leak_penalty"].fn({"tutor": tutor_turn}) or 0.0)
        return out

    def weigh(self, components: dict[str, float]) -> float:
        reserved = sum(float(components.get(k, 0.0)) for k in RESERVED)
        return self._weighted({k: v for k, v in components.items() if k not in RESERVED}) + reserved

    def _weighted(self, components: Mapping[str, float]) -> float:
        return float(sum(self.weights.get(k, 0.0) * float(v) for k, v in components.items()))

    # ------------------------------------------------------------------ TRL
    def reward_funcs(self) -> tuple[list[Callable[..., list[float | None]]], list[float]]:
        """TRL's ``reward_funcs`` and ``reward_weights`` (for ``GRPOConfig``): one function per term, then the
        reserved ``pedagogy`` and (hard mode) ``forfeit`` at weight 1, each reading the ``episode`` column.

        Each function reads the component this rubric logged in ``record["reward_components"]`` while the
        episode played (one computation per term, and the weighted sum is the env's ``record["reward"]``); it
        computes the term itself only for a record that lacks the component."""
        funcs = [t.trl() for t in self.terms.values()]
        weights = list(self.weights.values())
        funcs.append(_named("pedagogy", self._pedagogy_from_record))
        weights.append(1.0)
        if self.hard:
            funcs.append(_named("forfeit", lambda rec: self._forfeit_from_record(rec)))
            weights.append(1.0)
        return funcs, weights

    def total(self, record: Mapping) -> float:
        """The weighted reward of a finished episode record from its logged components (as the env credited it)."""
        return self.weigh(reward_components(record))

    def _pedagogy_from_record(self, record: Mapping) -> float:
        logged = reward_components(record).get("pedagogy")
        if logged is not None:  # the env credited it while the episode played
            return float(logged)
        if self.hard:
            return -self.lam if record.get("ended_by") == "leak" else 0.0
        return (pedagogy_ok(record.get("transcript", [])) - 1.0) * self.lam

    def _forfeit_from_record(self, record: Mapping) -> float:
        logged = reward_components(record).get("forfeit")
        if logged is not None:
            return float(logged)
        if record.get("ended_by") != "leak":
            return 0.0
        return -self._weighted({k: v for k, v in reward_components(record).items()
                                if k not in RESERVED})


def pedagogy_ok(transcript: Sequence[Mapping]) -> float:
    """PedagogicalRL's ``r_ped``: 1.0 when no tutor turn stated an answer, else 0.0 (a missing verdict fails)."""
    tutor = [t for t in transcript if t.get("speaker") == "tutor"]
    return 0.0 if any(t.get("reveals_answer") is not False for t in tutor) else 1.0


def _named(name: str, fn: Callable[[Mapping], float]) -> Callable[..., list[float | None]]:
    def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        episodes = kwargs.get("episode")
        if episodes is None:
            return [None] * len(completions)
        return [float(fn(rec)) for rec in episodes]

    reward.__name__ = name
    return reward


def _explain(error: ValidationError) -> str:
    parts = []
    for err in error.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = f"unknown field; allowed fields: {sorted(RubricConfig.model_fields)}"
        elif err["type"] == "missing":
            msg = "required field is missing; add it"
        parts.append(f"field {loc!r}: {msg}")
    return "; ".join(parts)


def load_rubric(name: str = "default", directory: str | Path | None = None) -> Rubric:
    """The rubric ``configs/rewards/<name>.yaml`` (or a path to a YAML file)."""
    if name.endswith((".yaml", ".yml")) or "/" in name:
        return Rubric.from_yaml(name)
    folder = Path(directory) if directory is not None else REWARD_CONFIG_DIR
    path = folder / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.yaml"))
        close = get_close_matches(name, known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"no reward config {name!r} in {folder}.{hint} Known: {known}")
    return Rubric.from_yaml(path)


__all__ = ["RESERVED", "REWARD_CONFIG_DIR", "TERM_PARAMS", "Rubric", "RubricConfig", "TermSpec", "load_rubric",
           "pedagogy_ok"]
