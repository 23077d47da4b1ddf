"""Model backends: local Hugging Face models and OpenAI-compatible endpoints behind one chat interface.

``make_backend("hf:<path or hub id>")`` or ``make_backend("openai:<model>", base_url=...)``; heavy imports
(torch, transformers, openai) happen inside the backend modules, never here.
"""

from __future__ import annotations

import importlib
import threading
import weakref
from pathlib import Path
from typing import Any

from tutorzoo.agents.backends.base import BackendError, ChatBackend, GenerationConfig, GenerationResult
from tutorzoo.envs.errors import ConfigError

# prefix -> "module:Class"; the class takes the part after the prefix as its first argument.
BACKENDS: dict[str, str] = {
    "hf": "tutorzoo.agents.backends.hf:HFBackend",
    "openai": "tutorzoo.agents.backends.openai_compat:OpenAIBackend",
}
# Backends whose instances hold a model in this process: one instance serves every seat that asks for the same model
# with the same options (see make_backend).
SHARED_PREFIXES = ("hf",)
_shared: weakref.WeakValueDictionary[tuple, Any] = weakref.WeakValueDictionary()
_shared_lock = threading.Lock()


def make_backend(spec: str, **kwargs: Any) -> ChatBackend:
    """A backend from ``prefix:target`` (``hf:./models/tiny``, ``openai:gpt-4o-mini``).

    A local model (``hf:``) asked for again with the same options while the first backend is in use is that same
    backend: a tutor and a student of one model (self-play, ``--tutor hf:M --student llm:hf:M``) hold one copy of
    the weights, and inside a lockstep round (:mod:`tutorzoo.envs.lockstep`) their requests go out as one batch. A
    model or adapter folder whose files changed since (a training run saving over it) is loaded anew. An endpoint
    (``openai:``) is a new client each time: each keeps its own ``max_concurrency``.
    """
    prefix, sep, target = spec.partition(":")
    if not sep or prefix not in BACKENDS or not target:
        raise ConfigError(f"backend {spec!r} must be one of {[p + ':<model>' for p in BACKENDS]}, "
                          "e.g. 'hf:./models/tiny' or 'openai:gpt-4o-mini'")
    module, _, cls = BACKENDS[prefix].partition(":")
    try:
        factory = getattr(importlib.import_module(module), cls)
    except ImportError as exc:
        extra = "hf" if prefix == "hf" else "openai"
        raise ConfigError(f"backend {prefix!r} needs optional packages ({exc}); install with "
                          f"`pip install -e '.[{extra}]'`") from exc
    if prefix not in SHARED_PREFIXES:
        return factory(target, **kwargs)
    key = (prefix, target, repr(sorted(kwargs.items())), _files_state(target), _files_state(kwargs.get("adapter")))
    with _shared_lock:  # one load of a model, however many threads ask for it at once
        backend = _shared.get(key)
        if backend is None:
            backend = factory(target, **kwargs)
            _shared[key] = backend
        return backend


def _files_state(path: Any) -> tuple:
    """Name, size and modification time of each file in the folder ``path`` (a model or adapter), or ``()`` when
    ``path`` is no local folder (a hub id, nothing given): what tells a folder rewritten since it was loaded."""
    if not isinstance(path, str) or not Path(path).is_dir():
        return ()
    state = []
    for entry in sorted(Path(path).iterdir()):
        if entry.is_file():
            stat = entry.stat()
            state.append((entry.name, stat.st_size, stat.st_mtime_ns))
    return tuple(state)


__all__ = ["BACKENDS", "BackendError", "ChatBackend", "GenerationConfig", "GenerationResult", "make_backend"]
