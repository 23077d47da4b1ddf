"""What every tracked run shares (evaluation and training): its name and a config safe to log.

Secrets are read from the environment by the backends and never stored in a config; :func:`scrub_secrets`
is the second line of defence for anything written to a transcript, a log or a W&B run config: every value
under a key that names a secret is replaced, and every string that contains the value of a secret-named
environment variable is masked.

Example::

    run_name("sft", "tiny", 0)                 # 'sft__tiny__0__20261129-204501'
    scrub_secrets({"api_key": "sk-1", "lr": 1e-4})  # {'api_key': '***', 'lr': 0.0001}
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from typing import Any

MASK = "***"
_SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|passwd|authorization|credential)", re.IGNORECASE)
_SAFE_KEYS = {"max_new_tokens", "max_tokens", "prompt_tokens", "completion_tokens", "pad_token", "eos_token",
              "bos_token", "max_completion_tokens", "tokens", "tokens_per_second"}


def is_secret_key(key: str) -> bool:
    return key.lower() not in _SAFE_KEYS and bool(_SECRET_KEY.search(key))


def secret_values() -> list[str]:
    """Values of environment variables whose name says they are secret (long enough to mask safely)."""
    return [v for k, v in os.environ.items() if is_secret_key(k) and len(v) >= 8]


def scrub_secrets(obj: Any, _values: list[str] | None = None) -> Any:
    """A copy of ``obj`` (mappings, lists, strings, scalars) with secrets masked; other values unchanged."""
    values = secret_values() if _values is None else _values
    if isinstance(obj, Mapping):
        return {k: (MASK if isinstance(k, str) and is_secret_key(k) and v not in (None, "")
                    else scrub_secrets(v, values)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(scrub_secrets(v, values) for v in obj)
    if isinstance(obj, str):
        for secret in values:
            obj = obj.replace(secret, MASK)
        return obj
    return obj


def run_name(recipe: str, exp: str, seed: int, when: float | None = None) -> str:
    """``{recipe}__{exp}__{seed}__{time}``, the name of every W&B run (time in UTC, to the second)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if when is None else when))
    return f"{recipe}__{exp}__{seed}__{stamp}"
