"""Teaching material for the math KCs and misconceptions, read from the YAML files beside this module.

Each domain has one YAML file (``fractions.yaml`` ...) with two maps, ``kcs`` and ``misconceptions``; a KC
shared by several families (``fraction_equivalence``, ``unit_rate`` ...) is written once. Text may quote
the task's numbers through ``{field}`` templates filled from :meth:`Family.fields`; the worked example is
filled from a *different* instance so that it never shows the task's own answer.

Example::

    from envs.tasks.math.material import load_material
    sorted(load_material().kcs)[:2]
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from envs.errors import DatasetError
from envs.tasks.base import BankQuestion, KCLink, KnowledgeComponent, Misconception

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
def _slots(template: str) -> frozenset[str]:
    return frozenset(name for _, name, _, _ in string.Formatter().parse(template) if name)


@lru_cache(maxsize=4096)
def _constant(template: str) -> str | None:
    """What ``template`` formats to when it has no replacement field at all (most material), else None."""
    if all(name is None for _, name, _, _ in string.Formatter().parse(template)):
        return template.format_map({})
    return None


def fill(template: str, fields: dict[str, str], where: str) -> str:
    """``template`` with its ``{field}`` slots filled; a slot the family does not provide is named in the error."""
    constant = _constant(template)
    if constant is not None:  # on every env reset: most templates quote no number
        return constant
    missing = sorted(_slots(template) - fields.keys())
    if missing:
        raise DatasetError(f"{where}: template uses {missing}, which this family does not provide ({sorted(fields)})")
    return template.format_map(fields)


def make_kc(
    material: Material, kc_id: str, present: tuple[str, ...], fields: dict[str, str], example_fields: dict[str, str]
) -> KnowledgeComponent:
    """The KC ``kc_id`` for a task whose KCs are ``present`` (prerequisites outside the task are dropped)."""
    if kc_id not in material.kcs:
        raise DatasetError(f"math KC {kc_id!r} has no material in any YAML file of {_DIR}; add it under 'kcs'")
    r = material.kcs[kc_id]
    where = f"{material.source[kc_id]}: kcs.{kc_id}"

    def f(text: str, part: str, values: dict[str, str] = fields) -> str:
        return fill(text, values, f"{where}.{part}")

    try:
        # Built on every env reset: the nested models skip validation (the static material is checked once per
        # process in _validated_once below and deeply by tests/envs/test_math_curriculum.py); Task validates the links.
        kc = KnowledgeComponent.model_construct(
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
        mis = Misconception.model_construct(
            id=mis_id,
            kc=r["kc"],
            belief=fill(r["belief"], fields, f"{where}.belief"),
            wrong_steps=wrong_steps,
            counterexample=fill(r["counterexample"], fields, f"{where}.counterexample"),
            negation=fill(r["negation"], fields, f"{where}.negation"),
            keywords=tuple(r["keywords"]),
        )
        _validated_once(mis)
        return mis
    except (KeyError, ValidationError, TypeError) as e:
        raise DatasetError(f"{where}: invalid misconception record ({e}); see envs/tasks/base.py") from e


@lru_cache(maxsize=4096)  # most bridges have no number slots: the same object serves every build
def _link(discipline: str, bridge: str, keywords: tuple[str, ...]) -> KCLink:
    return KCLink.model_construct(discipline=discipline, kc=None, bridge=bridge, keywords=keywords)


@lru_cache(maxsize=8192)  # many questions have no number slots: the same object serves every build
def _question(text: str, level: str, bloom: str, expected: str | None) -> BankQuestion:
    return BankQuestion.model_construct(text=text, guidance_level=level, bloom=bloom, expected=expected)


_VALIDATED: set[tuple[str, str]] = set()


def _validated_once(model: KnowledgeComponent | Misconception) -> None:
    """Full validation of each KC / misconception record the first time this process builds it."""
    key = (type(model).__name__, model.id)
    if key not in _VALIDATED:
        type(model).model_validate(model.model_dump())
        _VALIDATED.add(key)
