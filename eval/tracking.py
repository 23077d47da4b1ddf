"""What every tracked run shares (evaluation and training): its name and a config safe to log.

Secrets are read from the environment by the backends and never stored in a config; :func:`scrub_secrets`
is the second line of defence for anything written to a transcript, a log or a W&B run config: every value
under a key that names a secret is replaced, and every string that contains the value of a secret-named
environment variable is masked.

Example::

    run_name("sft", "tiny", 0)                 # 'sft__tiny__0__20261129-204501'
    scrub_secrets({"api_key": "sk-1", "lr": 1e-4})  # {'api_key': '***', 'lr': 0.0001}
    run_metadata(["tutorzoo", "eval"], started=time.time() - 5.0, seed=0)  # date, version, commit, wall time...
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
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


def version() -> str:
    """The installed ``tutorzoo`` version (``tutorzoo --version``), or ``unknown`` when run from a bare checkout."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("tutorzoo")
    except PackageNotFoundError:
        return "unknown"


def git_commit() -> str | None:
    """The commit of the code that runs (``+dirty`` when it has uncommitted changes); None outside a git
    checkout or without git."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def scrub_argv(argv: Sequence[str]) -> list[str]:
    """A command line with secrets masked: ``KEY=VALUE`` items whose key names a secret, the value after a
    secret-named flag (``--api-key X``), and any secret-named environment variable's value."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        flag, eq, value = arg.partition("=")
        name = flag.lstrip("-")
        if eq and is_secret_key(name):
            out.append(f"{flag}={MASK}")
        elif arg.startswith("--") and is_secret_key(name):
            out.append(arg)
            mask_next = True
        else:
            out.append(scrub_secrets(arg))
    return out


def run_metadata(argv: Sequence[str], started: float, seed: int | None = None,
                 tutor_options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a report needs to say which run it is: start date (UTC), ``tutorzoo`` version, git commit (when
    the code is a git checkout), the command line, the seed, the wall time and the tutor options, with
    secrets masked."""
    meta: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "tutorzoo version": version(),
        "git commit": git_commit() or "unknown (not a git checkout)",
        "command": " ".join(scrub_argv(argv)),
        "seed": "the suite's own episode seeds" if seed is None else seed,
        "wall time": f"{time.time() - started:.1f} s",
    }
    if tutor_options:
        meta["tutor options"] = scrub_secrets(dict(tutor_options))
    return meta
