"""Teaching material for the math KCs and misconceptions, read from the YAML files beside this module.

Each domain has one YAML file (``fractions.yaml`` ...) with two maps, ``kcs`` and ``misconceptions``; a KC
shared by several families (``fraction_equivalence``, ``unit_rate`` ...) is written once. Text may quote
the task's numbers through ``{field}`` templates filled from :meth:`Family.fields`; the worked example is
filled from a *different* instance so that it never shows the task's own answer.

Example::

    from tutorzoo.envs.tasks.math.material import load_material
    sorted(load_material().kcs)[:2]
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.tasks.base import BankQuestion, KCLink, KnowledgeComponent, Misconception

_DIR = Path(__file__).parent
_KC_KEYS = {
    "name",
    "keywords",
    "prerequisites",
    "difficulty",
    "explanation",
    "worked_example",
    "questions",
    "hints",
    "analogies",
    "contexts",
    "links",
}
_MIS_KEYS = {"kc", "belief", "counterexample", "negation", "keywords"}
_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True)
class Material:
    """Raw KC and misconception records by id, and the file each came from (for error messages)."""

    kcs: dict[str, dict[str, Any]]
    misconceptions: dict[str, dict[str, Any]]
    source: dict[str, str]


@cache
def load_material(directory: str | None = None) -> Material:
    """Every ``*.yaml`` file in ``directory`` (default: this package), merged; duplicate ids are an error."""
    folder = Path(directory) if directory is not None else _DIR
    kcs: dict[str, dict[str, Any]] = {}
    mis: dict[str, dict[str, Any]] = {}
    source: dict[str, str] = {}
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict) or set(data) - {"kcs", "misconceptions"}:
            raise DatasetError(
                f"{path}: expected a map with keys 'kcs' and 'misconceptions', got {type(data).__name__}"
            )
        for section, target, keys in (("kcs", kcs, _KC_KEYS), ("misconceptions", mis, _MIS_KEYS)):
            for rid, record in (data.get(section) or {}).items():
                where = f"{path.name}: {section}.{rid}"
                if rid in target:
                    raise DatasetError(f"{where} is already defined in {source[rid]}; keep one definition")
                if not isinstance(record, dict) or set(record) - keys:
                    extra = sorted(set(record) - keys) if isinstance(record, dict) else record
                    raise DatasetError(f"{where}: unknown fields {extra}; allowed: {sorted(keys)}")
                target[rid] = record
                source[rid] = path.name
    return Material(kcs=kcs, misconceptions=mis, source=source)


@lru_cache(maxsize=4096)
def _compiled(template: str) -> tuple[str | None, frozenset[str]]:
    """What ``template`` formats to when it has no replacement field at all (most material), else None; and the
    names of its ``{field}`` slots."""
    parsed = list(string.Formatter().parse(template))
    if all(name is None for _, name, _, _ in parsed):
        return template.format_map({}), frozenset()
    return None, frozenset(name for _, name, _, _ in parsed if name)


def fill(template: str, fields: dict[str, str], where: str) -> str:
    """``template`` with its ``{field}`` slots filled; a slot the family does not provide is named in the error."""
    return _fill(template, fields, where, None)


def _fill(template: str, fields: dict[str, str], where: str, part: str | None) -> str:
    """:func:`fill`, naming the place ``where.part`` in an error only (every env reset fills ~40 templates)."""
    constant, slots = _compiled(template)
    if constant is not None:  # most templates quote no number
        return constant
    if fields.keys() >= slots:
        return template.format_map(fields)
    missing = sorted(slots - fields.keys())
    where = where if part is None else f"{where}.{part}"
    raise DatasetError(f"{where}: template uses {missing}, which this family does not provide ({sorted(fields)})")


def make_kc(
    material: Material, kc_id: str, present: tuple[str, ...], fields: dict[str, str], example_fields: dict[str, str]
) -> KnowledgeComponent:
    """The KC ``kc_id`` for a task whose KCs are ``present`` (prerequisites outside the task are dropped)."""
    plan = _kc_plan(material, kc_id, present)
    if plan is not None and fields.keys() >= plan.slots and example_fields.keys() >= plan.example_slots:
        return plan.build(fields, example_fields)
    return _make_kc(material, kc_id, present, fields, example_fields)


@dataclass(frozen=True)
class _KCPlan:
    """:func:`_make_kc` for one (material, KC, present KCs), compiled: the values that quote no number are
    computed once, the others are functions of (fields, example_fields). It builds what ``_make_kc`` builds
    (equal models, shared nested ones) when the fields have every slot (else ``_make_kc`` raises as it did)."""

    constant: dict[str, Any]
    dynamic: tuple[tuple[str, Any], ...]
    slots: frozenset[str]
    example_slots: frozenset[str]

    def build(self, fields: dict[str, str], example_fields: dict[str, str]) -> KnowledgeComponent:
        values = self.constant.copy()
        for name, make in self.dynamic:
            values[name] = make(fields, example_fields)
        return _construct_from(KnowledgeComponent, values)


_KC_PLANS: dict[tuple[int, str, tuple[str, ...]], tuple[Material, _KCPlan | None]] = {}


def _kc_plan(material: Material, kc_id: str, present: tuple[str, ...]) -> _KCPlan | None:
    """The compiled plan, or None when the record is invalid or not yet validated in this process (then
    ``_make_kc`` builds the KC, validating it or raising the error it always raised)."""
    key = (id(material), kc_id, present)
    hit = _KC_PLANS.get(key)
    if hit is not None and hit[0] is material:
        return hit[1]
    if ("KnowledgeComponent", kc_id) not in _VALIDATED:
        return None
    try:
        plan = _compile_kc(material.kcs[kc_id], kc_id, present)
    except Exception:  # noqa: BLE001 -- an invalid record: _make_kc raises its own error
        plan = None
    _KC_PLANS[key] = (material, plan)
    return plan


def _compile_kc(r: dict[str, Any], kc_id: str, present: tuple[str, ...]) -> _KCPlan:
    constant: dict[str, Any] = {
        "id": kc_id,
        "name": r["name"],
        "discipline": "math",
        "keywords": tuple(r["keywords"]),
        "prerequisites": tuple(p for p in r.get("prerequisites", ()) if p in present),
        "analogies": tuple(r["analogies"]),
        "contexts": tuple(r.get("contexts", ())),
        "difficulty": r.get("difficulty", 0.5),
    }
    dynamic: list[tuple[str, Any]] = []
    slots: set[str] = set()
    example_slots: set[str] = set()

    def text(template: str, example: bool = False):
        """The filled text (a str) when ``template`` has no slot, else a function of (fields, example_fields)."""
        fixed, names = _compiled(template)
        if fixed is not None:
            return fixed
        (example_slots if example else slots).update(names)
        fmt = template.format_map
        return (lambda fields, ex: fmt(ex)) if example else (lambda fields, ex: fmt(fields))

    def add(name: str, part: Any) -> None:
        if callable(part):
            dynamic.append((name, part))
        else:
            constant[name] = part

    links = [(text(link["bridge"]), link["discipline"], tuple(link["keywords"])) for link in r.get("links", ())]
    add("links", _tuple_of_all(lambda bridge, disc, kw: _link(disc, bridge, kw), links))
    add("explanation", text(r["explanation"]))
    add("worked_example", text(r["worked_example"], example=True))
    questions = []
    for q in r["questions"]:
        expected = text(q["expected"]) if q.get("expected") else None
        questions.append((text(q["text"]), q["level"], q["bloom"], expected))
    add("questions", _tuple_of_all(_question, questions))
    add("hints", _tuple_of_all(lambda h: h, [(text(h),) for h in r["hints"]]))
    return _KCPlan(constant, tuple(dynamic), frozenset(slots), frozenset(example_slots))


def _tuple_of_all(make_one, parts: list[tuple]) -> Any:
    """``tuple(make_one(*args) for args in parts)`` with each callable argument filled first: the tuple itself
    when no argument is callable, else a function of (fields, example_fields) (the elements with no callable
    argument are made once)."""
    ready = [None if any(callable(a) for a in args) else make_one(*args) for args in parts]
    if all(r is not None for r in ready):
        return tuple(ready)
    todo = [(i, args) for i, (r, args) in enumerate(zip(ready, parts, strict=True)) if r is None]

    def build(fields: dict[str, str], ex: dict[str, str]) -> tuple:
        out = ready.copy()
        for i, args in todo:
            out[i] = make_one(*[a(fields, ex) if callable(a) else a for a in args])
        return tuple(out)

    return build


def _make_kc(
    material: Material, kc_id: str, present: tuple[str, ...], fields: dict[str, str], example_fields: dict[str, str]
) -> KnowledgeComponent:
    """:func:`make_kc`, template by template (the reference the compiled plan follows; it raises the errors)."""
    if kc_id not in material.kcs:
        raise DatasetError(f"math KC {kc_id!r} has no material in any YAML file of {_DIR}; add it under 'kcs'")
    r = material.kcs[kc_id]
    where = f"{material.source[kc_id]}: kcs.{kc_id}"

    def f(text: str, part: str, values: dict[str, str] = fields) -> str:
        return _fill(text, values, where, part)

    try:
        # Built on every env reset: the nested models skip validation (the static material is checked once per
        # process in _validated_once below and deeply by tests/envs/test_math_curriculum.py); Task validates the links.
        kc = _construct(
            KnowledgeComponent,
            id=kc_id,
            name=r["name"],
            discipline="math",
            keywords=tuple(r["keywords"]),
            prerequisites=tuple(p for p in r.get("prerequisites", ()) if p in present),
            links=tuple(
                _link(link["discipline"], f(link["bridge"], "links"), tuple(link["keywords"]))
                for link in r.get("links", ())
            ),
            explanation=f(r["explanation"], "explanation"),
            worked_example=f(r["worked_example"], "worked_example", example_fields),
            questions=tuple(
                _question(f(q["text"], "questions"), q["level"], q["bloom"],
                          f(q["expected"], "questions") if q.get("expected") else None)
                for q in r["questions"]
            ),
            hints=tuple(f(h, "hints") for h in r["hints"]),
            analogies=tuple(r["analogies"]),
            contexts=tuple(r.get("contexts", ())),
            difficulty=r.get("difficulty", 0.5),
        )
        _validated_once(kc)
        return kc
    except (KeyError, ValidationError, TypeError) as e:
        raise DatasetError(
            f"{where}: invalid KC record ({e}); see the KnowledgeComponent model in envs/tasks/base.py"
        ) from e


def make_misconception(
    material: Material, mis_id: str, wrong_steps: tuple[str, ...], fields: dict[str, str]
) -> Misconception:
    """The misconception ``mis_id`` with the wrong steps it produces on this task."""
    if mis_id not in material.misconceptions:
        raise DatasetError(
            f"math misconception {mis_id!r} has no material; add it under 'misconceptions' in a YAML file"
        )
    r = material.misconceptions[mis_id]
    where = f"{material.source[mis_id]}: misconceptions.{mis_id}"
    try:
        mis = _construct(
            Misconception,
            id=mis_id,
            kc=r["kc"],
            belief=_fill(r["belief"], fields, where, "belief"),
            wrong_steps=wrong_steps,
            counterexample=_fill(r["counterexample"], fields, where, "counterexample"),
            negation=_fill(r["negation"], fields, where, "negation"),
            keywords=tuple(r["keywords"]),
        )
        _validated_once(mis)
        return mis
    except (KeyError, ValidationError, TypeError) as e:
        raise DatasetError(f"{where}: invalid misconception record ({e}); see envs/tasks/base.py") from e


@lru_cache(maxsize=4096)  # most bridges have no number slots: the same object serves every build
def _link(discipline: str, bridge: str, keywords: tuple[str, ...]) -> KCLink:
    return _construct(KCLink, discipline=discipline, kc=None, bridge=bridge, keywords=keywords)


@lru_cache(maxsize=8192)  # many questions have no number slots: the same object serves every build
def _question(text: str, level: str, bloom: str, expected: str | None) -> BankQuestion:
    return _construct(BankQuestion, text=text, guidance_level=level, bloom=bloom, expected=expected)


@cache
def _template(cls: type[BaseModel]) -> tuple[dict[str, Any], frozenset[str]] | None:
    """The field -> default map (in field order) :func:`_construct` copies and the fields a call must give (the
    required ones and those with a default factory), or None when ``model_construct`` must do it (aliases,
    mutable defaults, post-init hooks, extra fields kept)."""
    if cls.__pydantic_post_init__ or cls.__pydantic_root_model__ or cls.model_config.get("extra") == "allow":
        return None
    out: dict[str, Any] = {}
    must: set[str] = set()
    for name, field in cls.__pydantic_fields__.items():
        if field.alias is not None or field.validation_alias is not None:
            return None
        if field.is_required() or field.default_factory is not None:
            must.add(name)
            out[name] = None  # a placeholder: the call gives it
            continue
        if not (field.default is None or field.default == () or isinstance(field.default, (str, int, float))):
            return None  # model_construct copies a mutable default per instance
        out[name] = field.default
    return out, frozenset(must)


def _construct(cls: type[_M], **values: Any) -> _M:
    """``cls.model_construct(**values)`` (the same ``__dict__``, in field order, and fields set) at half its cost,
    when ``values`` names every required field and nothing else (the case of every call here)."""
    return _construct_from(cls, values)


def _construct_from(cls: type[_M], values: dict[str, Any]) -> _M:
    """:func:`_construct` of a dict (not modified)."""
    spec = _template(cls)
    if spec is None or not spec[1] <= values.keys() <= spec[0].keys():
        return cls.model_construct(**values)
    data = spec[0].copy()
    data.update(values)  # an existing key keeps its place: the field order, as model_construct builds it
    model = cls.__new__(cls)
    _set = object.__setattr__
    _set(model, "__dict__", data)
    _set(model, "__pydantic_fields_set__", set(values))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def checked(cls: type[_M], values: dict[str, Any], constraints_hold: bool) -> _M:
    """``cls(**values)`` for ``values`` of the field types, built without pydantic's validation when the caller has
    checked ``constraints_hold`` (lengths, ranges) and ``cls``'s after-validators pass; else validated, so a bad
    value raises the ValidationError it always did. (Every env reset builds a task and its six items.)"""
    after = _after_validators(cls)
    if constraints_hold and after is not None:
        model = _construct_from(cls, values)
        try:
            for check in after:
                check(model)
            return model
        except ValueError:
            pass
    return cls(**values)


@cache
def _after_validators(cls: type[BaseModel]) -> tuple[Any, ...] | None:
    """``cls``'s model validators when all run after validation (they only check the model), else None."""
    decorators = cls.__pydantic_decorators__
    if decorators.field_validators or decorators.validators or decorators.root_validators:
        return None
    if any(d.info.mode != "after" for d in decorators.model_validators.values()):
        return None
    return tuple(d.func for d in decorators.model_validators.values())


_VALIDATED: set[tuple[str, str]] = set()


def _validated_once(model: KnowledgeComponent | Misconception) -> None:
    """Full validation of each KC / misconception record the first time this process builds it."""
    key = (type(model).__name__, model.id)
    if key not in _VALIDATED:
        type(model).model_validate(model.model_dump())
        _VALIDATED.add(key)
