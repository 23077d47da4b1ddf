"""Benchmark suites: a versioned YAML file that expands into a fixed list of episode specs.

A suite names its tutors and one or more *blocks*; each block crosses task ids x personas x seeds under one
protocol. Specs are split into ``train`` and ``held_out`` by a stable hash of the spec, so the training
scripts and the evaluation use disjoint episodes of the same suite.

Example (``configs/suites/default.yaml``)::

    name: default
    version: 1
    tutors: [socratic, lecturer, random]
    blocks:
      - task_set: math
        tasks: all
        personas: {families: [sid_core, sid_state, mathdial, profile]}
        seeds: 1
        protocol: {max_turns: 8}
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from envs.config import EpisodeSpec, make_config, read_yaml_mapping
from envs.errors import ConfigError
from envs.tasks import get_task_set

SUITE_DIR = Path(__file__).resolve().parents[1] / "configs" / "suites"


class PersonaSelection(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    names: list[str] = Field(default_factory=list, description="Persona names.")
    families: list[str] = Field(default_factory=list, description="Every persona of these families.")
    per_family: int | None = Field(default=None, ge=1, description="At most this many personas per family.")


class Block(BaseModel):
    """Task ids x personas x seeds under one protocol."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_set: str = "math"
    task_path: str | None = None
    tasks: Literal["all"] | list[str] = Field(default="all", description="'all' or a list of task ids.")
    personas: PersonaSelection
    seeds: int | list[int] = Field(default=1, description="A count (0..n-1) or explicit seeds.")
    protocol: dict[str, Any] = Field(default_factory=dict, description="EnvConfig overrides.")

    @field_validator("protocol")
    @classmethod
    def _check_protocol(cls, value: dict[str, Any]) -> dict[str, Any]:
        make_config(**value)  # raises ConfigError naming the bad field
        return value


class Suite(BaseModel):
    """A fixed, versioned list of episodes and the tutors compared on them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: int = Field(ge=1)
    description: str = ""
    tutors: list[str] = Field(min_length=1)
    blocks: list[Block] = Field(min_length=1)
    held_out_fraction: float = Field(default=0.25, ge=0.0, le=1.0)

    def specs(self, split: Literal["all", "train", "held_out"] = "all") -> list[EpisodeSpec]:
        from agents.student.personas import load_personas

        personas = load_personas()
        out: list[EpisodeSpec] = []
        for block in self.blocks:
            task_set = get_task_set(block.task_set, block.task_path)
            ids = task_set.task_ids() if block.tasks == "all" else list(block.tasks)
            unknown = [t for t in ids if t not in task_set.task_ids()]
            if unknown:
                raise ConfigError(f"suite {self.name!r}: unknown task ids {unknown} in task set {block.task_set!r}")
            names = _select_personas(block.personas, personas, self.name)
            seeds = list(range(block.seeds)) if isinstance(block.seeds, int) else list(block.seeds)
            protocol = dict(block.protocol)
            if block.task_path is not None:
                protocol["task_path"] = block.task_path
            for task_id in ids:
                for persona in names:
                    for seed in seeds:
                        out.append(EpisodeSpec(task_set=block.task_set, task_id=task_id, persona=persona,
                                               seed=seed, protocol=protocol))
        if split == "all":
            return out
        return [s for s in out if (_fraction(s.key()) < self.held_out_fraction) == (split == "held_out")]


def _select_personas(sel: PersonaSelection, personas: dict, suite: str) -> list[str]:
    names = list(sel.names)
    for n in names:
        if n not in personas:
            raise ConfigError(f"suite {suite!r}: unknown persona {n!r}; see configs/personas/")
    known_families = sorted({p.family for p in personas.values()})
    for fam in sel.families:
        if fam not in known_families:
            raise ConfigError(f"suite {suite!r}: unknown persona family {fam!r}; known: {known_families}")
        members = sorted(n for n, p in personas.items() if p.family == fam)
        if sel.per_family is not None:
            step = max(1, len(members) // sel.per_family)
            members = members[::step][: sel.per_family]
        names += [m for m in members if m not in names]
    if not names:
        raise ConfigError(f"suite {suite!r}: a block selects no persona; give personas.names or personas.families")
    return names


def _fraction(key: str) -> float:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def load_suite(name_or_path: str) -> Suite:
    """A suite by name (``configs/suites/<name>.yaml``) or path, validated with errors that name the field."""
    path = Path(name_or_path)
    if not path.suffix:
        path = SUITE_DIR / f"{name_or_path}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in SUITE_DIR.glob("*.yaml"))
        raise ConfigError(f"no suite {name_or_path!r}: {path} does not exist; known suites: {known}")
    data = read_yaml_mapping(path, "a mapping with name, version, tutors and blocks")
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{path}: {loc}: {err['msg']} (got {err.get('input')!r})") from None
