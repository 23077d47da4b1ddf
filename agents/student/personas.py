"""Student personas: the parameters of the simulated student, loaded from ``configs/personas/*.yaml``.

A persona fixes the knowledge-tracing parameters (docs/spec.md §8: prior, learn, guess, slip, forget) and the
dimensions SID leaves for future work (learning speed, affect, metacognition, strategy preference, prior
knowledge, help seeking, verbosity, grade). Every persona belongs to a *family*:

- ``sid_core``: SID's 3 core types x 5 scenarios, composed from two axes (15 personas);
- ``sid_state``: the five learning states of SID's student prompt;
- ``mathdial``: MathDial's six confusion profiles;
- ``profile``: single-dimension extremes (fast/slow learner, anxious, help seeker, ...).

A family file is ``{family, description, defaults, personas: [...], axes: [...]}``: ``defaults`` apply to
every persona of the file; each axis is ``{field, values: {label: overrides}}`` and the cartesian product of
the axes yields personas named ``<label1>_<label2>``, with ``field`` set to the label. Two axes may not set
the same field (the composition would silently depend on the axis order). A distribution file is
``{distribution, description, base, fields: {field: spec}}`` where a spec is a constant, ``{range: [lo, hi]}``
(uniform float), ``{int_range: [lo, hi]}`` or ``{choices: [...], weights: [...]}``.

Example::

    from tutorzoo.agents.student.personas import get_persona, load_distribution
    import numpy as np
    get_persona("weak_knowledge_asks_for_hint").help_seeking
    load_distribution("default").sample(np.random.default_rng(0)).prior_knowledge
"""

from __future__ import annotations

import difflib
import itertools
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutorzoo.envs.config import read_yaml_mapping
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.resources import config_dir
from tutorzoo.envs.tasks.base import Bloom

PERSONA_DIR = config_dir("personas")

CoreType = Literal["all_round", "weak_knowledge", "low_motivation"]
Scenario = Literal[
    "misunderstands_question", "partly_wrong", "guesses_by_analogy", "asks_for_hint", "correct_and_extends"
]
LearningState = Literal[
    "does_not_understand_question",
    "does_not_understand_explanation",
    "poor_knowledge_mastery",
    "weak_curiosity",
    "outstanding_ability",
]
Confusion = Literal[
    "steps_procedures",
    "underlying_principles",
    "relevant_vs_irrelevant_information",
    "what_the_problem_asks",
    "number_order_operation",
    "problem_type",
]
StrategyPreference = Literal["none", "analogy", "examples", "questions", "rely_on_teacher"]


class Persona(BaseModel):
    """The parameters of one simulated student. Ranges are enforced; see ``agents/student/model.py`` for use."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9_]+$", description="Unique persona id.")
    family: str = Field(pattern=r"^[a-z0-9_]+$", description="sid_core, sid_state, mathdial, profile, sampled.")
    description: str = ""
    core_type: CoreType | None = Field(default=None, description="SID core student type.")
    scenario: Scenario | None = Field(default=None, description="SID pedagogical scenario.")
    learning_state: LearningState | None = Field(default=None, description="SID student-prompt learning state.")
    confusion: Confusion | None = Field(default=None, description="MathDial confusion profile.")
    grade: int = Field(default=6, ge=0, le=12)
    # knowledge tracing
    prior_knowledge: float = Field(default=0.45, ge=0.0, le=1.0, description="Scales the initial mastery L0.")
    learning_speed: float = Field(default=1.0, ge=0.1, le=3.0, description="Multiplies the base learn rate T.")
    guess: float = Field(default=0.1, ge=0.0, le=0.5, description="BKT guess G on free answers.")
    slip: float = Field(default=0.1, ge=0.0, le=0.5, description="BKT slip S.")
    forget: float = Field(default=0.05, ge=0.0, le=0.5, description="BKT forget F, applied before the post-test.")
    misconception_rate: float = Field(default=0.4, ge=0.0, le=1.0, description="P(holds each task misconception).")
    relapse: float = Field(default=0.35, ge=0.0, le=1.0, description="P(a suppressed misconception returns).")
    bloom_start: Bloom = Field(default="understand", description="Bloom level at the start of the session.")
    # engagement and affect
    engagement: float = Field(default=0.8, ge=0.0, le=1.0, description="Initial engagement.")
    engagement_decay: float = Field(default=0.02, ge=0.0, le=0.3, description="Engagement lost per tutor turn.")
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    anxiety: float = Field(default=0.3, ge=0.0, le=1.0, description="Raises slip: S' = S + 0.15 anxiety.")
    # metacognition and strategies
    metacognition: float = Field(default=0.5, ge=0.0, le=1.0, description="Knows when it is stuck.")
    help_seeking: float = Field(default=0.15, ge=0.0, le=1.0, description="P(asks for a hint when stuck).")
    strategy_preference: StrategyPreference = "none"
    curiosity: float = Field(default=0.25, ge=0.0, le=1.0, description="P(extends a solved L3 demand).")
    misread_rate: float = Field(default=0.05, ge=0.0, le=1.0, description="P(misunderstands a question).")
    explanation_uptake: float = Field(default=1.0, ge=0.0, le=2.0, description="Scales learning from telling.")
    distractibility: float = Field(default=0.0, ge=0.0, le=1.0, description="Adds irrelevant turns.")
    verbosity: float = Field(default=0.5, ge=0.0, le=1.0, description="0 terse ... 1 verbose.")


_FIELDS = tuple(Persona.model_fields)


def _fix_for(err: dict) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return f"remove it; persona fields are: {', '.join(_FIELDS)}"
    if kind == "missing":
        return "add it"
    if kind == "literal_error":
        return "use one of the values listed above"
    return "give a value of the right type within the documented range (agents/student/personas.py)"


def _validate(data: dict, where: str) -> Persona:
    try:
        return Persona.model_validate(data)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "(record)"
            lines.append(f"{where}: field {loc!r}: {err['msg']} (got {err.get('input')!r}); fix: {_fix_for(err)}")
        raise ConfigError("\n".join(lines)) from None


def _read_yaml(path: Path) -> dict:
    return read_yaml_mapping(path, "a mapping with 'family' or 'distribution'")


def _mapping(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping of persona fields, got {value!r}")
    return value


def load_persona_file(path: str | Path) -> list[Persona]:
    """The personas of one family file, in file order (axes: product order)."""
    path = Path(path)
    data = _read_yaml(path)
    allowed = {"family", "description", "defaults", "personas", "axes"}
    extra = sorted(set(data) - allowed)
    if extra:
        raise ConfigError(f"{path}: unknown top-level keys {extra}; allowed: {sorted(allowed)}")
    family = data.get("family")
    if not isinstance(family, str):
        raise ConfigError(f"{path}: missing 'family' (a name such as sid_core); add `family: <name>`")
    defaults = _mapping(data.get("defaults"), f"{path}: defaults")
    records: list[tuple[str, dict]] = []
    for i, rec in enumerate(data.get("personas") or []):
        if not isinstance(rec, dict) or "name" not in rec:
            raise ConfigError(f"{path}: personas[{i}] must be a mapping with a 'name', got {rec!r}")
        records.append((f"{path}: persona {rec['name']!r}", {**defaults, **rec}))
    axes = data.get("axes") or []
    if axes:
        records.extend(_compose_axes(axes, defaults, path))
    if not records:
        raise ConfigError(f"{path}: no personas; add a 'personas' list or 'axes'")
    out = []
    for where, rec in records:
        rec.setdefault("family", family)
        if rec["family"] != family:
            raise ConfigError(f"{where}: family {rec['family']!r} differs from the file's {family!r}; remove it")
        out.append(_validate(rec, where))
    return out


def _compose_axes(axes: Any, defaults: dict, path: Path) -> list[tuple[str, dict]]:
    if not isinstance(axes, list):
        raise ConfigError(f"{path}: 'axes' must be a list of {{field, values}} mappings")
    parsed = []
    for i, axis in enumerate(axes):
        if not isinstance(axis, dict) or set(axis) != {"field", "values"} or not isinstance(axis["values"], dict):
            raise ConfigError(f"{path}: axes[{i}] must be a mapping with exactly 'field' and 'values' (label: fields)")
        values = {label: _mapping(v, f"{path}: axes[{i}].values.{label}") for label, v in axis["values"].items()}
        parsed.append((axis["field"], values))
    for (fa, va), (fb, vb) in itertools.combinations(parsed, 2):
        set_a = set().union(*(v.keys() for v in va.values())) | {fa}
        set_b = set().union(*(v.keys() for v in vb.values())) | {fb}
        both = sorted(set_a & set_b)
        if both:
            raise ConfigError(
                f"{path}: axes {fa!r} and {fb!r} both set {both}; the result would depend on axis order: "
                "set each field on one axis only (or in 'defaults')"
            )
    records = []
    for combo in itertools.product(*(list(values.items()) for _, values in parsed)):
        rec = dict(defaults)
        for (fld, _), (label, overrides) in zip(parsed, combo, strict=True):
            rec[fld] = label
            rec.update(overrides)
        rec["name"] = "_".join(label for label, _ in combo)
        records.append((f"{path}: persona {rec['name']!r}", rec))
    return records


@cache
def _load_all(directory: str) -> dict[str, Persona]:
    personas: dict[str, Persona] = {}
    where: dict[str, Path] = {}
    for path in sorted(Path(directory).glob("*.yaml")):
        if "distribution" in _read_yaml(path):
            continue
        for p in load_persona_file(path):
            if p.name in personas:
                raise ConfigError(f"{path}: persona {p.name!r} is already defined in {where[p.name]}; rename one")
            personas[p.name] = p
            where[p.name] = path
    return personas


def load_personas(directory: str | Path | None = None) -> dict[str, Persona]:
    """Every persona of every family file in ``directory`` (default ``configs/personas``), by name.

    Example: ``load_personas()["all_round_partly_wrong"].family == "sid_core"``.
    """
    return dict(_load_all(str(directory or PERSONA_DIR)))


def get_persona(name: str, directory: str | Path | None = None) -> Persona:
    """The persona called ``name`` (or ``family/name``); an unknown name raises :class:`ConfigError` with a
    did-you-mean."""
    personas = _load_all(str(directory or PERSONA_DIR))
    if name in personas:
        return personas[name]
    family, _, short = name.rpartition("/")  # "sid_core/all_round_partly_wrong" names the family too
    if family and short in personas and personas[short].family == family:
        return personas[short]
    close = difflib.get_close_matches(name, personas, n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ConfigError(f"unknown persona {name!r}; see `tutorzoo list` or configs/personas/*.yaml.{hint}")


class PersonaDistribution:
    """A distribution over personas: a base persona plus per-field ranges or choices.

    Example::

        dist = load_distribution("default")
        persona = dist.sample(np.random.default_rng(3))
    """

    def __init__(self, name: str, fields: dict[str, Any], base: Persona | None = None, description: str = "",
                 source: str = "<dict>") -> None:
        self.name = name
        self.description = description
        self.source = source
        self.base = base
        # sorted so the draw order (and hence every sample) never depends on the YAML key order
        self.specs: tuple[tuple[str, str, Any], ...] = tuple(
            self._parse(field, fields[field]) for field in sorted(fields)
        )
        self.sample(np.random.default_rng(0))  # checks that sampled values satisfy the Persona ranges

    def _parse(self, field: str, spec: Any) -> tuple[str, str, Any]:
        where = f"{self.source}: distribution {self.name!r}, field {field!r}"
        if field not in _FIELDS or field in ("name", "family"):
            raise ConfigError(f"{where}: not a sampled persona field; use one of {[f for f in _FIELDS[2:]]}")
        if not isinstance(spec, dict):
            return (field, "const", spec)
        if set(spec) == {"range"} or set(spec) == {"int_range"}:
            kind = next(iter(spec))
            lo_hi = spec[kind]
            if not (isinstance(lo_hi, list) and len(lo_hi) == 2 and all(isinstance(v, (int, float)) for v in lo_hi)
                    and lo_hi[0] <= lo_hi[1]):
                raise ConfigError(f"{where}: {kind} must be [lo, hi] with lo <= hi, got {lo_hi!r}")
            for v in lo_hi:  # both ends must be valid persona values
                self._check_value(field, v, where)
            return (field, kind, (lo_hi[0], lo_hi[1]))
        if "choices" in spec and set(spec) <= {"choices", "weights"}:
            choices = spec["choices"]
            if not isinstance(choices, list) or not choices:
                raise ConfigError(f"{where}: choices must be a non-empty list, got {choices!r}")
            weights = spec.get("weights")
            if weights is None:
                weights = [1.0] * len(choices)
            if len(weights) != len(choices) or any(not isinstance(w, (int, float)) or w < 0 for w in weights) \
                    or sum(weights) <= 0:
                raise ConfigError(f"{where}: weights must be {len(choices)} non-negative numbers with a positive sum")
            for c in choices:
                self._check_value(field, c, where)
            total = float(sum(weights))
            return (field, "choices", (tuple(choices), np.array([w / total for w in weights])))
        raise ConfigError(f"{where}: spec must be a constant, {{range: [lo, hi]}}, {{int_range: [lo, hi]}} or "
                          f"{{choices: [...], weights: [...]}}, got {spec!r}")

    def _check_value(self, field: str, value: Any, where: str) -> None:
        data = (self.base.model_dump() if self.base else {"name": "check", "family": "sampled"}) | {field: value}
        _validate(data, where)

    def sample(self, rng: np.random.Generator) -> Persona:
        """A persona drawn from the distribution with ``rng`` (deterministic in the generator's state)."""
        data: dict[str, Any] = self.base.model_dump() if self.base else {}
        for field, kind, arg in self.specs:
            if kind == "const":
                data[field] = arg
            elif kind == "range":
                data[field] = float(rng.uniform(arg[0], arg[1]))
            elif kind == "int_range":
                data[field] = int(rng.integers(arg[0], arg[1] + 1))
            else:
                choices, probs = arg
                data[field] = choices[int(rng.choice(len(choices), p=probs))]
        data["family"] = "sampled"
        data["name"] = f"{self.name}_{int(rng.integers(1_000_000)):06d}"
        return _validate(data, f"{self.source}: distribution {self.name!r}")

    @classmethod
    def from_yaml(cls, path: str | Path) -> PersonaDistribution:
        """Load a distribution file (see the module docstring for the format)."""
        path = Path(path)
        data = _read_yaml(path)
        allowed = {"distribution", "description", "base", "fields"}
        extra = sorted(set(data) - allowed)
        if extra:
            raise ConfigError(f"{path}: unknown top-level keys {extra}; allowed: {sorted(allowed)}")
        name = data.get("distribution")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{path}: missing 'distribution' (its name); add `distribution: <name>`")
        base = data.get("base")
        if base is not None and not isinstance(base, str):
            raise ConfigError(f"{path}: base must be a persona name, got {base!r}")
        base_persona = None
        if base is not None:  # a persona beside the file, else a shipped one
            base_persona = _load_all(str(path.parent)).get(base)
            if base_persona is None:
                try:
                    base_persona = get_persona(base)
                except ConfigError as exc:
                    raise ConfigError(f"{path}: base: {exc}") from None
        fields = _mapping(data.get("fields"), f"{path}: fields")
        return cls(name, fields, base_persona, str(data.get("description", "")), str(path))


def load_distribution(name: str, directory: str | Path | None = None) -> PersonaDistribution:
    """The persona distribution called ``name`` from ``directory`` (default ``configs/personas``)."""
    found = {}
    for path in sorted(Path(directory or PERSONA_DIR).glob("*.yaml")):
        data = _read_yaml(path)
        if "distribution" in data:
            found[data["distribution"]] = path
    if name not in found:
        close = difflib.get_close_matches(name, found, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown persona distribution {name!r}; known: {sorted(found)}.{hint}")
    return PersonaDistribution.from_yaml(found[name])
