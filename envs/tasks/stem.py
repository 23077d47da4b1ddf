"""The ``stem`` task set: interdisciplinary STEM lessons for grades 7-9, one YAML file per lesson.

SID's benchmark rests on 48 interdisciplinary lesson plans; TutorZoo ships its own 48 in
``configs/lessons/NN_<lesson_id>.yaml``. A lesson file holds exactly the fields of
:class:`tutorzoo.envs.tasks.base.Task`
except ``task_set``, which the loader sets to ``"stem"``; the lesson schema (:class:`Lesson`) also requires the
checkable content the content reader (:mod:`tutorzoo.envs.content`) reads tutor turns against: 3-6 ``facts`` per
knowledge
component and at least one ``refutations`` entry per misconception.

Example::

    import numpy as np
    from tutorzoo.envs.tasks.stem import StemTaskSet
    lessons = StemTaskSet()
    task = lessons.build(lessons.task_ids()[0], np.random.default_rng(0))
    task.opening_question
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import Field, ValidationError, field_validator

from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.envs.resources import config_dir
from tutorzoo.envs.tasks.base import KnowledgeComponent, Misconception, Task

DEFAULT_LESSONS_DIR = config_dir("lessons")
TASK_SET_NAME = "stem"

# The C loader is ~10x faster; the pure-Python one gives the same data.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# How to fix each kind of pydantic error, phrased for someone editing a lesson YAML file.
_FIXES: dict[str, str] = {
    "missing": "add this field",
    "extra_forbidden": "remove this field or correct its spelling (see envs/tasks/base.py for the schema)",
    "literal_error": "use one of the allowed values listed",
    "string_pattern_mismatch": "use snake_case: lowercase letters, digits and underscores only",
    "string_type": "write it as text; quote numbers and yes/no/on/off in YAML so they stay strings",
    "string_too_short": "write a non-empty text",
    "too_short": "add entries until the list is long enough",
    "too_long": "keep only the allowed number of entries",
    "tuple_type": "write a YAML list (block style: one '- ' entry per line)",
    "list_type": "write a YAML list (block style: one '- ' entry per line)",
    "dict_type": "write a YAML mapping (key: value lines)",
    "model_type": "write a YAML mapping with the record's fields",
    "model_attributes_type": "write a YAML mapping with the record's fields",
    "int_parsing": "write a whole number",
    "int_type": "write a whole number",
    "float_parsing": "write a number",
    "float_type": "write a number",
    "greater_than_equal": "raise the value to the allowed minimum",
    "less_than_equal": "lower the value to the allowed maximum",
    "value_error": "make the references and answer letters consistent as the message says",
}
# A missing field that has its own advice (the checkable content the content reader needs).
_FIELD_FIXES: dict[str, str] = {
    "facts": "add facts: 3-6 short true propositions about this KC in plain words, with the terms and quantities "
             "they involve (e.g. 'the net force on an object equals its mass times its acceleration')",
    "refutations": "add refutations: at least one observation that shows the belief is wrong, stated as a plain "
                   "true sentence",
}
_MAX_REPORTED_ERRORS = 8
_FACT_WORDS = (4, 30)  # a fact is a short sentence: enough words to be checkable, few enough to be one claim


def _check_statements(values: tuple[str, ...]) -> tuple[str, ...]:
    for v in values:
        n = len(v.split())
        if not _FACT_WORDS[0] <= n <= _FACT_WORDS[1]:
            raise ValueError(f"{v!r} has {n} words; write each as one plain sentence of "
                             f"{_FACT_WORDS[0]}-{_FACT_WORDS[1]} words")
        if "{" in v:
            raise ValueError(f"{v!r} contains '{{'; write the statement without template placeholders")
    return values


class LessonKnowledgeComponent(KnowledgeComponent):
    """A lesson's KC: :class:`KnowledgeComponent` with its checkable ``facts`` required."""

    facts: tuple[str, ...] = Field(
        min_length=3, max_length=6,
        description="3-6 short canonical true propositions, plain words, with the terms and quantities they involve.",
    )

    check_facts = field_validator("facts")(_check_statements)


class LessonMisconception(Misconception):
    """A lesson's misconception: :class:`Misconception` with at least one ``refutations`` entry required."""

    refutations: tuple[str, ...] = Field(
        min_length=1, description="Observations that refute the belief, each a plain true statement."
    )

    check_refutations = field_validator("refutations")(_check_statements)


class Lesson(Task):
    """A stem lesson: a :class:`Task` whose KCs carry ``facts`` and whose misconceptions carry ``refutations``."""

    knowledge_components: tuple[LessonKnowledgeComponent, ...] = Field(min_length=1)
    misconceptions: tuple[LessonMisconception, ...] = ()


def _format_loc(loc: tuple[Any, ...]) -> str:
    """Pydantic's loc as a path into the file, e.g. ``knowledge_components[2].questions[0].guidance_level``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(whole lesson)"


def _record_hint(data: Any, loc: tuple[Any, ...]) -> str:
    """The id of the innermost record on ``loc`` that has one, so a reader can find it without counting."""
    hint = ""
    node = data
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            hint = f" (record id {node['id']!r})"
    return hint


def _describe(err: dict[str, Any], data: Any) -> str:
    where = _format_loc(tuple(err["loc"]))
    msg = str(err["msg"])
    if err["type"] not in ("missing", "value_error"):
        shown = repr(err.get("input"))
        msg += f" (got {shown[:60] + '...' if len(shown) > 60 else shown})"
    fix = _FIXES.get(err["type"], "see the field's type in envs/tasks/base.py")
    if err["type"] == "missing" and err["loc"] and err["loc"][-1] in _FIELD_FIXES:
        fix = _FIELD_FIXES[err["loc"][-1]]
    elif err["type"] == "value_error" and set(err["loc"]) & set(_FIELD_FIXES):
        fix = "rewrite the statement as the message says"
    if err["type"] == "string_type" and isinstance(err.get("input"), dict):
        # The usual cause: an unquoted text containing ': ', which YAML reads as a key and a value.
        fix = "quote the text in YAML, it contains ': ' and was read as a mapping"
    return f"  {where}{_record_hint(data, tuple(err['loc']))}: {msg}; fix: {fix}"


def _without_cascades(errors: list[Any]) -> list[Any]:
    """Drop "list too short" errors caused only by a bad entry inside that list, which is reported itself."""
    locs = [tuple(e["loc"]) for e in errors]

    def caused_by_child(err: Any) -> bool:
        loc = tuple(err["loc"])
        return any(len(other) > len(loc) and other[: len(loc)] == loc for other in locs)

    kept = [e for e in errors if not (e["type"] == "too_short" and caused_by_child(e))]
    return kept or errors


def load_lesson(path: str | Path) -> Lesson:
    """Read and validate one lesson file; the task set is always ``stem``.

    Raises :class:`DatasetError` naming the file, the path of the bad field inside it and the fix.

    Example::

        task = load_lesson("configs/lessons/01_water_rocket.yaml")
        task.knowledge_components[0].id
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the lesson file ({exc}); check the path and permissions") from exc
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)  # a SafeLoader (C or Python)
    except yaml.YAMLError as exc:
        raise DatasetError(f"{path}: not valid YAML: {exc}; fix the syntax at the line shown") from exc
    if not isinstance(data, dict):
        raise DatasetError(
            f"{path}: a lesson file must be a YAML mapping of the Task fields (id, title, statement, ...), "
            f"got {type(data).__name__}; write one 'field: value' per top-level line"
        )
    given_set = data.get("task_set", TASK_SET_NAME)
    if given_set != TASK_SET_NAME:
        raise DatasetError(
            f"{path}: task_set is {given_set!r}, but lesson files belong to the {TASK_SET_NAME!r} task set; "
            "remove the task_set field (the loader sets it)"
        )
    try:
        return Lesson.model_validate({**data, "task_set": TASK_SET_NAME})
    except ValidationError as exc:
        errors = _without_cascades(exc.errors())
        lines = [_describe(e, data) for e in errors[:_MAX_REPORTED_ERRORS]]
        if len(errors) > _MAX_REPORTED_ERRORS:
            lines.append(f"  ... and {len(errors) - _MAX_REPORTED_ERRORS} more")
        lesson = f" (lesson {data['id']!r})" if isinstance(data.get("id"), str) else ""
        raise DatasetError(f"{path}{lesson}: invalid lesson, {len(errors)} error(s):\n" + "\n".join(lines)) from exc


class StemTaskSet:
    """The interdisciplinary lesson library: every ``*.yaml`` file of a folder is one lesson.

    Files are parsed once, on first use, and kept; ``build`` then only looks the lesson up.

    Example::

        import numpy as np
        lessons = StemTaskSet()                       # configs/lessons of the repository
        lessons.build("water_rocket", np.random.default_rng(0)).title
    """

    name = TASK_SET_NAME

    def __init__(self, path: str | None = None) -> None:
        self.folder = Path(path) if path is not None else DEFAULT_LESSONS_DIR
        if not self.folder.is_dir():
            raise DatasetError(
                f"lesson folder {self.folder} does not exist or is not a folder; pass path= a folder of "
                "lesson YAML files (default: configs/lessons of the repository)"
            )
        self._tasks: dict[str, Task] | None = None
        self._files: dict[str, Path] = {}

    def _load(self) -> dict[str, Task]:
        if self._tasks is not None:
            return self._tasks
        files = sorted(self.folder.glob("*.yaml"))
        if not files:
            raise DatasetError(f"lesson folder {self.folder} has no *.yaml lesson files; add NN_<lesson_id>.yaml files")
        tasks: dict[str, Task] = {}
        where: dict[str, Path] = {}
        for f in files:
            task = load_lesson(f)
            if task.id in tasks:
                raise DatasetError(
                    f"lesson id {task.id!r} is defined twice: in {where[task.id]} and in {f}; "
                    "give each lesson a unique id (the file name's <lesson_id> part)"
                )
            tasks[task.id] = task
            where[task.id] = f
        self._tasks, self._files = tasks, where
        return tasks

    def task_ids(self) -> list[str]:
        """Lesson ids in file-name order (``01_...`` first)."""
        return list(self._load())

    def file_of(self, task_id: str) -> Path:
        """The file a lesson was read from, for error messages and reports."""
        self._check_id(task_id)
        return self._files[task_id]

    def build(self, task_id: str, rng: np.random.Generator) -> Task:
        """The lesson ``task_id``. Lessons are fixed texts, so ``rng`` is accepted for the TaskSet protocol
        but not used: every seed gives the same task.

        Example::

            StemTaskSet().build("seasons_tilt", np.random.default_rng(0)).grade
        """
        self._check_id(task_id)
        return self._load()[task_id]

    def _check_id(self, task_id: str) -> None:
        tasks = self._load()
        if task_id not in tasks:
            close = difflib.get_close_matches(task_id, list(tasks), n=3)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ConfigError(
                f"unknown stem lesson {task_id!r} (folder {self.folder}); known: {list(tasks)}.{hint}"
            )

    load_lesson = staticmethod(load_lesson)


__all__ = ["DEFAULT_LESSONS_DIR", "Lesson", "LessonKnowledgeComponent", "LessonMisconception", "StemTaskSet",
           "load_lesson"]
