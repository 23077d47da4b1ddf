"""Read annotated turns (an env transcript or a SID-style dialogue) into one checked, canonical form.

Every metric reads turns through :func:`normalise_turns`, so a label spelled as in SID's Table IV
("Follow-up questioning", "Teacher", cognitive level ``3``) and a TutorZoo transcript give the same numbers.
Aliases live in ``label_aliases.yaml`` beside this file. A label that is neither canonical nor an alias is an
error naming the record, the turn and the field: a silently dropped label would change SV or 3C.

Canonical turn (a plain dict)::

    {"speaker": "tutor" | "student", "teacher_intent": str | None, "teaching_strategy": str | None,
     "discipline": [str], "discipline_transfer": bool, "student_cognition_state": str | None,
     "teacher_guidance_level": "L1" | "L2" | "L3" | None, "cognitive_level": int 0-5 | None,
     "reveals_answer": bool | None, "states_answer": bool | None, "mrbench": {dimension: label} | None}

Tutor-only fields of a student turn and student-only fields of a tutor turn are set to ``None`` whatever the
input says: SID marks them "leave blank", and no metric reads them.

Example::

    normalise_turns([{"speaker": "Teacher", "teaching_strategy": "Provide hints"}], where="dialogue 0")
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

import yaml

from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.labels import BLOOM_LEVELS, COGNITION_STATES, GUIDANCE_LEVELS, INTENTS, SPEAKERS, STRATEGIES
from tutorzoo.envs.records import LEGACY_TURN_KEYS
from tutorzoo.eval.metrics.registry import DAMR_DESIRED

_ALIAS_FILE = Path(__file__).with_name("label_aliases.yaml")
_CANONICAL: dict[str, tuple[str, ...]] = {
    "speaker": SPEAKERS,
    "teacher_intent": INTENTS,
    "teaching_strategy": STRATEGIES,
    "student_cognition_state": COGNITION_STATES,
    "teacher_guidance_level": GUIDANCE_LEVELS,
    "cognitive_level": BLOOM_LEVELS,
}
_TUTOR_FIELDS = ("teacher_intent", "teaching_strategy", "teacher_guidance_level")
_STUDENT_FIELDS = ("student_cognition_state", "cognitive_level")
_EMPTY = {"", "none", "null", "n/a", "na", "-", "nil"}
_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0", ""}
# MRBench's own column names, normalised, for the dimensions whose names differ from ours.
_DAMR_DIM_ALIASES = {"revealing_of_the_answer": "revealing_answer", "human_likeness": "humanlikeness"}


@cache
def _aliases() -> dict[str, dict[str, str]]:
    data = yaml.safe_load(_ALIAS_FILE.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or set(data) != set(_CANONICAL):
        raise DatasetError(f"{_ALIAS_FILE}: top-level keys must be exactly {sorted(_CANONICAL)}")
    out: dict[str, dict[str, str]] = {}
    for field, table in data.items():
        table = table or {}
        bad = {k: v for k, v in table.items() if v not in _CANONICAL[field]}
        if bad:
            raise DatasetError(f"{_ALIAS_FILE}: {field} aliases map to unknown labels {bad}")
        out[field] = {str(k): str(v) for k, v in table.items()}
    return out


def _key(text: str) -> str:
    return re.sub(r"[\s\-]+", "_", text.strip().lower())


def _label(value: object, field: str, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise DatasetError(f"{where}: field {field!r} must be a string label or null, got {value!r}")
    key = _key(value)
    if key in _EMPTY:
        return None
    canonical = _CANONICAL[field]
    if value.strip() in canonical:
        return value.strip()
    if key in canonical:
        return key
    alias = _aliases()[field].get(key)
    if alias is None:
        raise DatasetError(
            f"{where}: field {field!r} has unknown label {value!r}; use one of {list(canonical)} or null "
            f"(or add a spelling to {_ALIAS_FILE.name})"
        )
    return alias


def _bloom(value: object, where: str) -> int | None:
    if isinstance(value, bool):
        raise DatasetError(f"{where}: field 'cognitive_level' must be a Bloom level name or index 0-5, got {value}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # spreadsheet exports write 3 as 3.0
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        index = int(value)
        if not 0 <= index < len(BLOOM_LEVELS):
            raise DatasetError(f"{where}: field 'cognitive_level' index must be 0-5, got {value!r}")
        return index
    name = _label(value, "cognitive_level", where)
    return None if name is None else BLOOM_LEVELS.index(name)


def _flag(value: object, field: str, where: str, *, absent: bool | None) -> bool | None:
    if value is None:
        return absent
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and _key(value) in _TRUE | _FALSE:
        return _key(value) in _TRUE
    raise DatasetError(f"{where}: field {field!r} must be true/false (or yes/no), got {value!r}")


def _disciplines(value: object, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        # SID writes several disciplines as one comma-separated cell ("Biology, Geography").
        return [_key(v) for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [_key(v) for v in value]
    raise DatasetError(f"{where}: field 'discipline' must be a list of strings or a comma-separated string")


def _mrbench(value: object, where: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise DatasetError(f"{where}: field 'mrbench' must be an object {{dimension: label}}, got {value!r}")
    out: dict[str, str] = {}
    for dim, label in value.items():
        key = _key(str(dim))
        key = _DAMR_DIM_ALIASES.get(key, key)
        if key not in DAMR_DESIRED:
            raise DatasetError(
                f"{where}: field 'mrbench' has unknown dimension {dim!r}; use one of {list(DAMR_DESIRED)}"
            )
        if not isinstance(label, str):
            raise DatasetError(f"{where}: mrbench label of {dim!r} must be a string, got {label!r}")
        out[key] = _key(label)
    return out


def normalise_turn(raw: object, where: str) -> dict:
    """One turn in canonical form; ``where`` names it in errors, e.g. ``"episodes.jsonl line 3, turn 2"``."""
    if not isinstance(raw, Mapping):
        raise DatasetError(f"{where}: a turn must be a JSON object, got {type(raw).__name__}")
    fields = {_key(str(k)): v for k, v in raw.items()}
    for short, name in LEGACY_TURN_KEYS.items():  # a turn keyed as info["last_act"] once was (intent, ...)
        if short in fields and name not in fields:
            fields[name] = fields.pop(short)
    speaker = _label(fields.get("speaker", fields.get("role")), "speaker", where)
    if speaker is None:
        raise DatasetError(f"{where}: missing 'speaker'; give 'tutor'/'teacher' or 'student'")
    turn: dict = {
        "speaker": speaker,
        "discipline": _disciplines(fields.get("discipline"), where),
        "discipline_transfer": _flag(fields.get("discipline_transfer"), "discipline_transfer", where, absent=False),
        "invalid": _flag(fields.get("invalid"), "invalid", where, absent=False),
    }
    for field in _TUTOR_FIELDS:
        turn[field] = _label(fields.get(field), field, where) if speaker == "tutor" else None
    turn["student_cognition_state"] = (
        _label(fields.get("student_cognition_state"), "student_cognition_state", where)
        if speaker == "student" else None
    )
    turn["cognitive_level"] = _bloom(fields.get("cognitive_level"), where) if speaker == "student" else None
    # None (not False) when the source does not say, so MathDial metrics can tell "never" from "unknown".
    turn["reveals_answer"] = (
        _flag(fields.get("reveals_answer"), "reveals_answer", where, absent=None) if speaker == "tutor" else None
    )
    turn["states_answer"] = (
        _flag(fields.get("states_answer"), "states_answer", where, absent=None) if speaker == "student" else None
    )
    turn["mrbench"] = _mrbench(fields.get("mrbench"), where) if speaker == "tutor" else None
    return turn


def normalise_turns(raw: object, where: str) -> list[dict]:
    """All turns of a transcript in canonical form, in order; ``where`` names the dialogue in errors."""
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise DatasetError(f"{where}: the turns must be a JSON list of turn objects, got {type(raw).__name__}")
    return [normalise_turn(t, f"{where}, turn {i}") for i, t in enumerate(raw)]
