"""Task sets: ``math`` (procedural K-8 curriculum), ``stem`` (interdisciplinary lessons), ``mcq`` (question banks).

Example::

    from tutorzoo.envs.tasks import get_task_set
    math = get_task_set("math")
    math.task_ids()[:3]
"""

from __future__ import annotations

import difflib
import importlib
from functools import cache

from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.tasks.base import BankQuestion, Item, KCLink, KnowledgeComponent, Misconception, Task, TaskSet

# name -> "module:factory"; a factory takes an optional ``path`` (a file or folder of the set's data; ``None``
# means the data shipped with TutorZoo) and returns a TaskSet.
TASK_SETS: dict[str, str] = {
    "math": "tutorzoo.envs.tasks.math:MathTaskSet",
    "stem": "tutorzoo.envs.tasks.stem:StemTaskSet",
    "mcq": "tutorzoo.envs.tasks.mcq:McqTaskSet",
}


@cache
def get_task_set(name: str, path: str | None = None) -> TaskSet:
    """The task set registered as ``name`` (or given as ``package.module:Factory``), on ``path``'s data."""
    target = TASK_SETS.get(name)
    if target is None and ":" in name:
        target = name
    if target is None:
        close = difflib.get_close_matches(name, TASK_SETS, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown task set {name!r}; known: {sorted(TASK_SETS)}.{hint}")
    module, _, attr = target.partition(":")
    factory = getattr(importlib.import_module(module), attr)
    return factory() if path is None else factory(path=path)


__all__ = [
    "TASK_SETS",
    "BankQuestion",
    "Item",
    "KCLink",
    "KnowledgeComponent",
    "Misconception",
    "Task",
    "TaskSet",
    "get_task_set",
]
