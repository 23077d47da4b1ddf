"""One record of a JSON Lines data file (a leak case, a judge's labelled example), parsed with an error that names
the file, the line and the fix.

Example::

    from tutorzoo.envs.jsonl import json_object_line
    json_object_line('{"id": "a"}', "cases.jsonl:3")   # {'id': 'a'}
    json_object_line("[1]", "cases.jsonl:4")           # DatasetError: cases.jsonl:4: expected a JSON object, got list
"""

from __future__ import annotations

import json
from typing import Any

from tutorzoo.envs.errors import DatasetError


def json_object_line(raw: str, where: str, not_object: str = "expected a JSON object") -> dict[str, Any]:
    """The JSON object on one line; a :class:`DatasetError` starting with ``where`` (``path:line``) when the line is
    not JSON, or ``f"{where}: {not_object}, got <type>"`` when it is JSON but not an object."""
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: not valid JSON ({exc.msg}); write one JSON object per line") from None
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: {not_object}, got {type(record).__name__}")
    return record
