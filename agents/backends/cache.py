"""An on-disk cache of model replies, so a rerun of the same requests is free and gives the same text.

One JSON file per request, named by the sha256 of the request's canonical JSON (sorted keys, no whitespace):
the model, the messages, every sampling parameter, the seed and the endpoint's base URL — never the API key.
Only successful replies are stored; writes go to a temporary file that is renamed into place, so a crash or
two processes writing at once never leave a half-written entry.

Example::

    cache = ResponseCache("runs/cache")
    key = cache.key({"model": "gpt-4o-mini", "messages": [...], "temperature": 0.0, ...})
    hit = cache.get(key)            # None on a miss
    cache.put(key, request, {"text": "Hello", "prompt_tokens": 9, "completion_tokens": 1})
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> str:
    """The one JSON text of a value: sorted keys, compact separators, UTF-8 kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class ResponseCache:
    """A directory of ``<2 hex>/<sha256>.json`` entries ``{"request": ..., "response": ...}``."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def key(request: dict[str, Any]) -> str:
        """The sha256 hex digest of the request's canonical JSON; the caller keeps secrets out of ``request``."""
        return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()

    def path(self, key: str) -> Path:
        # two-character shards keep directories small on long runs
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response of ``key``, or None on a miss (an unreadable entry is a miss and is rewritten)."""
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        response = entry.get("response") if isinstance(entry, dict) else None
        if not isinstance(response, dict) or not isinstance(response.get("text"), str):
            return None
        return response

    def put(self, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        """Store one successful response atomically (tmp file in the same directory, then rename)."""
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(canonical_json({"request": request, "response": response}))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json"))
