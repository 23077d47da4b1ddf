"""Strict parsing of a model reply that must be one JSON object (annotators, judges).

The reply is the object itself, or the object inside a single fenced ```` ```json ```` block; any other
text around it (prose, a second object) makes it invalid. Errors are :class:`JSONReplyError` with a message
that starts with ``invalid JSON:`` and quotes the start of the reply, so failure counts can group by kind.

Example::

    >>> parse_json_object('```json\\n{"a": 1}\\n```')
    {'a': 1}
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class JSONReplyError(ValueError):
    """A reply that is not exactly one JSON object; the message says why."""


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object of a reply, or :class:`JSONReplyError`."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:  # a single ```json fence around the object is tolerated; any other prose is not
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise JSONReplyError(f"invalid JSON: {exc.msg} at char {exc.pos}: {text[:80]!r}") from None
    if not isinstance(data, dict):
        raise JSONReplyError(f"invalid JSON: expected an object, got {type(data).__name__}")
    return data
