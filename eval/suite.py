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

A suite has a ``kind`` (default ``episodes``; registry in :mod:`tutorzoo.eval.kinds`) that turns it into *units*:
``episodes`` expands the blocks into :class:`~tutorzoo.envs.config.EpisodeSpec` s, the item kinds (``kmp_dialogue``,
``kmp_skills``, ``dr_academy``) build their units from the kind-specific ``items`` settings. ``judge`` holds
the suite's defaults for a judge given on the command line (sample count, temperature); the CLI flags win.

    name: sid
    version: 1
    tutors: [socratic, lecturer, random]
    items: {rubrics: [sid_rubrics]}      # episodes kind: judge SID's five rubrics when --judge is given
    judge: {temperature: 0.1}
    blocks: [...]

``Suite.units(split)`` works for every kind; ``Suite.specs(split)`` is the same list for an episodes suite.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tutorzoo.envs.config import EpisodeSpec, make_config, read_yaml_mapping
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.resources import config_dir
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.eval.kinds import check_kind_name, kind_for

if TYPE_CHECKING:
    from tutorzoo.eval.kinds.base import Unit

Split = Literal["all", "train", "held_out"]

SUITE_DIR = config_dir("suites")


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


class JudgeDefaults(BaseModel):
    """The suite's defaults for a judge given with ``--judge``; a CLI flag (``--judge-samples``...) wins."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    samples: int | None = Field(default=None, ge=1, description="Judge samples per item (None: the rubric's).")
    temperature: float | None = Field(default=None, ge=0.0, description="Judge temperature (None: the rubric's).")


class Suite(BaseModel):
    """A fixed, versioned list of units (episodes by default) and the tutors compared on them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: int = Field(ge=1)
    description: str = ""
    kind: str = Field(default="episodes", description="How units are built and scored (eval/kinds/).")
    tutors: list[str] = Field(min_length=1, description="Tutor specs, or NAME=SPEC to show one under a name "
                                                        "(the same model twice: base=hf:m, tuned=hf:m).")
    tutor_args: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Per-tutor options by display "
                                                  "name (as --tutor-arg NAME:KEY=VALUE), e.g. {tuned: {adapter: p}}.")
    blocks: list[Block] = Field(default_factory=list, description="Episode blocks (episodes kind only).")
    items: dict[str, Any] = Field(default_factory=dict, description="Kind-specific settings, checked by the kind.")
    judge: JudgeDefaults | None = None
    held_out_fraction: float = Field(default=0.25, ge=0.0, le=1.0)

    @field_validator("kind")
    @classmethod
    def _check_kind(cls, value: str) -> str:
        return check_kind_name(value)

    @model_validator(mode="after")
    def _check_tutor_args(self) -> Suite:
        names = [t.partition("=")[0] if "=" in t else t for t in self.tutors]
        unknown = sorted(set(self.tutor_args) - set(names))
        if unknown:
            raise ValueError(f"tutor_args names {unknown}, which are not among the tutors {names}; key them by the "
                             "tutor's display name (NAME in NAME=SPEC)")
        return self

    @model_validator(mode="after")
    def _check_blocks(self) -> Suite:
        if self.kind == "episodes":
            if not self.blocks:
                raise ValueError("an episodes suite needs at least one block (task_set, tasks, personas, seeds)")
            kind_for(self)  # validates the episodes settings under items
        elif self.blocks:
            raise ValueError(f"blocks are for episodes suites; kind {self.kind!r} takes its settings under items")
        return self

    @property
    def rubrics(self) -> tuple[str, ...]:
        """The judge rubrics this suite scores when a judge is configured (from its kind and settings)."""
        return tuple(kind_for(self).rubrics)

    def units(self, split: Split = "all") -> list[Unit]:
        """The suite's units in their fixed order (every kind), or those of one split."""
        return _split(list(kind_for(self).units(self)), split, self.held_out_fraction)

    def specs(self, split: Split = "all") -> list[EpisodeSpec]:
        """The episode specs of an episodes suite (what the training scripts run), or those of one split."""
        if self.kind != "episodes":
            raise ConfigError(f"suite {self.name!r} is of kind {self.kind!r}, not episodes: it has units "
                              "(Suite.units), not episode specs")
        return _split(self.block_specs(), split, self.held_out_fraction)

    def block_specs(self) -> list[EpisodeSpec]:
        """Every block expanded: task ids x personas x seeds, in file order."""
        from tutorzoo.agents.student.personas import load_personas

        personas = load_personas()
        out: list[EpisodeSpec] = []
        for block in self.blocks:
            task_set = get_task_set(block.task_set, block.task_path)
            if hasattr(task_set, "check_posttest"):  # no isomorphic post-test from a bank without twins
                task_set.check_posttest(block.protocol.get("posttest", "isomorphic"))
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
        return out

    def judge_config(self, config: Any) -> Any:
        """``config`` (a :class:`tutorzoo.eval.judges.JudgeConfig` or None) with the suite's defaults filled in where
        the
        command line left a field unset (None)."""
        if config is None or self.judge is None:
            return config
        update = {k: v for k, v in self.judge.model_dump().items() if v is not None and getattr(config, k) is None}
        return config.model_copy(update=update) if update else config


def _split(units: list, split: Split, held_out_fraction: float) -> list:
    """Train / held-out by a stable hash of each unit's key (the same split for every run and machine)."""
    if split == "all":
        return units
    if split not in ("train", "held_out"):
        raise ConfigError(f"split must be one of all, train, held_out; got {split!r}")
    return [u for u in units if (_fraction(u.key()) < held_out_fraction) == (split == "held_out")]


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
        msg = err["msg"].removeprefix("Value error, ")
        if not loc:  # a whole-suite check (model validator): the input is the whole file, not worth echoing
            raise ConfigError(f"{path}: {msg}") from None
        raise ConfigError(f"{path}: {loc}: {msg} (got {err.get('input')!r})") from None
