"""Judge rubric files: load and check ``rubrics/NAME.yaml`` with its prompt templates, render requests.

The file format is documented in :mod:`tutorzoo.eval.judges`. Everything that can be wrong with a rubric file is found
when it is loaded, and is a :class:`~tutorzoo.envs.errors.ConfigError` naming the file and the fix.

Example::

    spec = load_rubric_spec("sid_rubrics")
    spec.criteria["X-SRG"].min, spec.temperature       # 1, 0.1
    messages = spec.render({"lesson": "...", "transcript": "..."})
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutorzoo.envs.config import read_yaml_mapping
from tutorzoo.envs.errors import ConfigError

JUDGES_DIR = Path(__file__).resolve().parent
RUBRIC_DIR = JUDGES_DIR / "rubrics"
PROMPT_DIR = JUDGES_DIR / "prompts"
CALIBRATION_DIR = JUDGES_DIR / "calibration"

CRITERION_TYPES: tuple[str, ...] = ("likert", "binary", "choice")
AGGREGATES: tuple[str, ...] = ("majority", "mean")
BUILTIN_VARIABLES: tuple[str, ...] = ("criteria", "reply_format")
REASON_KEY = "reason"
DEFAULT_MAX_NEW_TOKENS = 512
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

Value = int | float | bool | str


@dataclass(frozen=True)
class Criterion:
    """One criterion of a rubric: ``type`` likert (``min``..``max``), binary or choice (``labels``)."""

    name: str
    type: Literal["likert", "binary", "choice"]
    description: str
    fail_value: int | bool | str
    min: int | None = None
    max: int | None = None
    labels: tuple[str, ...] = ()

    def describe(self) -> str:
        """The value the reply must hold, in words (used in ``{criteria}`` and ``{reply_format}``)."""
        if self.type == "likert":
            return f"an integer from {self.min} to {self.max}"
        if self.type == "binary":
            return "true or false"
        return "one of " + ", ".join(f'"{label}"' for label in self.labels)

    def check(self, value: Any) -> Value:
        """``value`` as this criterion's value, or ValueError saying what is wrong (strict: no coercion)."""
        if self.type == "likert":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"wrong type: {self.name} must be {self.describe()}, got {value!r}")
            assert self.min is not None and self.max is not None
            if not self.min <= value <= self.max:
                raise ValueError(f"out of range: {self.name} must be {self.describe()}, got {value!r}")
            return value
        if self.type == "binary":
            if not isinstance(value, bool):
                raise ValueError(f"wrong type: {self.name} must be {self.describe()}, got {value!r}")
            return value
        if not isinstance(value, str):
            raise ValueError(f"wrong type: {self.name} must be {self.describe()}, got {value!r}")
        label = value.strip().lower()
        by_lower = {lab.lower(): lab for lab in self.labels}
        if label not in by_lower:
            raise ValueError(f"out of range: {self.name} must be {self.describe()}, got {value!r}")
        return by_lower[label]


class _CriterionFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    description: str = Field(min_length=1)
    min: int | None = None
    max: int | None = None
    labels: list[str] | None = None
    fail_value: int | bool | str | None = None


class _RubricFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = Field(min_length=1)
    prompt: str
    system_prompt: str | None = None
    variables: list[str] = Field(default_factory=list)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    samples: int = Field(default=1, ge=1, le=32)
    aggregate: Literal["majority", "mean"] = "majority"
    max_new_tokens: int = Field(default=DEFAULT_MAX_NEW_TOKENS, ge=1)
    criteria: dict[str, _CriterionFile] = Field(min_length=1)


@dataclass(frozen=True)
class RubricSpec:
    """A loaded, checked rubric: its criteria, default sampling settings and prompt templates."""

    name: str
    description: str
    criteria: dict[str, Criterion]
    variables: tuple[str, ...]
    temperature: float
    samples: int
    aggregate: Literal["majority", "mean"]
    max_new_tokens: int
    prompt_template: str
    system_template: str | None = None
    path: Path = field(default=RUBRIC_DIR)

    def select(self, criteria: Sequence[str] | None) -> tuple[str, ...]:
        """The asked criteria: all (None) or the given subset, checked, in the rubric's order."""
        if criteria is None:
            return tuple(self.criteria)
        unknown = [c for c in criteria if c not in self.criteria]
        if unknown or not criteria:
            raise ConfigError(f"{self.path}: criteria {list(criteria)} must be a non-empty subset of "
                              f"{list(self.criteria)}; unknown: {unknown}")
        wanted = set(criteria)
        return tuple(c for c in self.criteria if c in wanted)

    def render(self, variables: Mapping[str, Any], criteria: Sequence[str] | None = None) -> list[dict[str, str]]:
        """The chat messages of one request: the system prompt (if any) and the filled user prompt."""
        asked = self.select(criteria)
        missing = [v for v in self.variables if v not in variables]
        if missing:
            raise ConfigError(f"{self.path}: missing variable(s) {missing}; the rubric {self.name!r} needs "
                              f"{list(self.variables)}")
        values: dict[str, str] = {}
        for name in self.variables:
            value = variables[name]
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise ConfigError(f"{self.path}: variable {name!r} must be a string, got {type(value).__name__}")
            values[name] = str(value)
        values["criteria"] = "\n".join(
            f"- {c}: {self.criteria[c].describe()}. {self.criteria[c].description.strip()}" for c in asked)
        values["reply_format"] = reply_format(self, asked)
        messages = []
        if self.system_template is not None:
            messages.append({"role": "system", "content": fill(self.system_template, values)})
        messages.append({"role": "user", "content": fill(self.prompt_template, values)})
        return messages


def reply_format(spec: RubricSpec, asked: Sequence[str]) -> str:
    """The JSON object a reply must be, spelled out, e.g. ``{"X-SRG": <an integer from 1 to 5>, ...}``."""
    parts = [f'"{c}": <{spec.criteria[c].describe()}>' for c in asked]
    parts.append(f'"{REASON_KEY}": "<one or two sentences>"')
    return "{" + ", ".join(parts) + "}"


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with every ``{name}`` placeholder replaced in one pass; other braces are left alone."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), template)


def placeholders(template: str) -> set[str]:
    return set(_PLACEHOLDER.findall(template))


def _criterion(name: str, raw: _CriterionFile, where: Path) -> Criterion:
    if raw.type not in CRITERION_TYPES:
        raise ConfigError(f"{where}: criterion {name!r} has unknown type {raw.type!r}; use one of "
                          f"{list(CRITERION_TYPES)}")
    if raw.type == "likert":
        if raw.min is None or raw.max is None or raw.min >= raw.max or raw.labels is not None:
            raise ConfigError(f"{where}: likert criterion {name!r} needs integer min < max (and no labels), got "
                              f"min={raw.min!r} max={raw.max!r}")
        fail = raw.min if raw.fail_value is None else raw.fail_value
        if isinstance(fail, bool) or not isinstance(fail, int) or not raw.min <= fail <= raw.max:
            raise ConfigError(f"{where}: criterion {name!r} fail_value must be an integer in [{raw.min}, {raw.max}],"
                              f" got {fail!r}")
        return Criterion(name, "likert", raw.description, fail, min=raw.min, max=raw.max)
    if raw.min is not None or raw.max is not None:
        raise ConfigError(f"{where}: criterion {name!r} of type {raw.type} takes no min/max; remove them")
    if raw.type == "binary":
        fail = False if raw.fail_value is None else raw.fail_value
        if not isinstance(fail, bool) or raw.labels is not None:
            raise ConfigError(f"{where}: binary criterion {name!r} takes no labels and fail_value true or false, "
                              f"got {fail!r}")
        return Criterion(name, "binary", raw.description, fail)
    labels = tuple(raw.labels or ())
    if len(labels) < 2 or len({lab.lower() for lab in labels}) != len(labels):
        raise ConfigError(f"{where}: choice criterion {name!r} needs at least two distinct labels, got {labels}")
    if raw.fail_value not in labels:
        raise ConfigError(f"{where}: choice criterion {name!r} needs fail_value set to one of its labels "
                          f"{list(labels)} (the verdict when no sample parses), got {raw.fail_value!r}")
    return Criterion(name, "choice", raw.description, str(raw.fail_value), labels=labels)


def _read_template(name: str, where: Path) -> str:
    """A prompt file: ``prompts/NAME`` beside the rubric's folder (``eval/judges/prompts/`` for shipped rubrics),
    else next to the rubric file."""
    folder = where.parent.parent / "prompts"
    path = folder / name if (folder / name).exists() else where.parent / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read prompt file {name!r} ({exc.strerror}); put it in {folder}") from None


def rubric_path(name_or_path: str | Path) -> Path:
    """``rubrics/NAME.yaml`` for a name, or the path itself for a ``.yaml`` path."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml"):
        return path
    return RUBRIC_DIR / f"{name_or_path}.yaml"


def load_rubric_spec(name: str | Path) -> RubricSpec:
    """A rubric by name (``eval/judges/rubrics/NAME.yaml``) or path, checked; ConfigError naming the file."""
    path = rubric_path(name)
    if not path.exists():
        raise ConfigError(f"no judge rubric {str(name)!r}: {path} does not exist; known rubrics: {list_rubrics()}")
    data = read_yaml_mapping(path, "a mapping with name, description, prompt and criteria")
    try:
        raw = _RubricFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        hint = " (unknown key: remove it or fix its spelling)" if err["type"] == "extra_forbidden" else ""
        raise ConfigError(f"{path}: {loc}: {err['msg']}{hint} (got {err.get('input')!r})") from None
    if raw.name != path.stem:
        raise ConfigError(f"{path}: name {raw.name!r} must equal the file name {path.stem!r}")
    if REASON_KEY in raw.criteria:
        raise ConfigError(f"{path}: {REASON_KEY!r} is reserved for the reply's reason; rename that criterion")
    criteria = {name: _criterion(name, c, path) for name, c in raw.criteria.items()}
    clash = sorted(set(raw.variables) & set(BUILTIN_VARIABLES))
    if clash or len(set(raw.variables)) != len(raw.variables):
        raise ConfigError(f"{path}: variables {raw.variables} must be distinct and must not use the built-in "
                          f"names {list(BUILTIN_VARIABLES)}")
    prompt = _read_template(raw.prompt, path)
    system = _read_template(raw.system_prompt, path) if raw.system_prompt is not None else None
    used = placeholders(prompt) | (placeholders(system) if system is not None else set())
    undeclared = sorted(used - set(raw.variables) - set(BUILTIN_VARIABLES))
    if undeclared:
        raise ConfigError(f"{path}: the prompt uses undeclared variable(s) {undeclared}; declare them under "
                          f"'variables' or use a built-in {list(BUILTIN_VARIABLES)}")
    unused = sorted(set(raw.variables) - used)
    if unused:
        raise ConfigError(f"{path}: declared variable(s) {unused} appear in no prompt template; add "
                          f"{{{unused[0]}}} to {raw.prompt} or remove it from 'variables'")
    return RubricSpec(name=raw.name, description=raw.description.strip(), criteria=criteria,
                      variables=tuple(raw.variables), temperature=raw.temperature, samples=raw.samples,
                      aggregate=raw.aggregate, max_new_tokens=raw.max_new_tokens, prompt_template=prompt,
                      system_template=system, path=path)


def list_rubrics() -> list[str]:
    """The names of the shipped rubrics (``eval/judges/rubrics/*.yaml``), sorted."""
    return sorted(p.stem for p in RUBRIC_DIR.glob("*.yaml"))
