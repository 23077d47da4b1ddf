"""The values of a JSON Lines text (a gold file, a dataset export), line by line, blank lines skipped; a line that is
not JSON is a :class:`~tutorzoo.envs.errors.DatasetError` in the caller's words (its file, its fix).

What a value must be (an object, with which keys) is the caller's to check; :func:`tutorzoo.envs.jsonl.json_object_line`
does it for one line whose error wording is the shared one.

Example::

    from tutorzoo.envs.jsonl_lines import jsonl_values
    list(jsonl_values('{"a": 1}\\n\\n[2]', lambda n, err: f"data.jsonl:{n}: not JSON ({err.msg})"))
    # [(1, {'a': 1}), (3, [2])]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tutorzoo.envs.errors import DatasetError


def jsonl_values(text: str, bad_line: Callable[[int, json.JSONDecodeError], str]) -> Iterator[tuple[int, Any]]:
    """``(line number from 1, parsed value)`` for every non-blank line of ``text``; a line that is not JSON raises
    ``DatasetError(bad_line(n, err))`` chained to the ``JSONDecodeError``."""
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise DatasetError(bad_line(n, err)) from err
        yield n, value


def jsonl_file_values(path: Path, what: str, bad_line: Callable[[int, json.JSONDecodeError], str]
                      ) -> Iterator[tuple[int, Any]]:
    """:func:`jsonl_values` of the file ``path``; a file that cannot be read raises
    ``DatasetError("<path>: cannot read the <what> (<why>); check the path")``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the {what} ({exc}); check the path") from exc
    yield from jsonl_values(text, bad_line)


__all__ = ["jsonl_file_values", "jsonl_values"]
