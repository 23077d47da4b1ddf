"""Model backends: local Hugging Face models and OpenAI-compatible endpoints behind one chat interface.

``make_backend("hf:<path or hub id>")`` or ``make_backend("openai:<model>", base_url=...)``; heavy imports
(torch, transformers, openai) happen inside the backend modules, never here.
"""

from __future__ import annotations

import importlib
from typing import Any

from tutorzoo.agents.backends.base import BackendError, ChatBackend, GenerationConfig, GenerationResult
from tutorzoo.envs.errors import ConfigError

# prefix -> "module:Class"; the class takes the part after the prefix as its first argument.
BACKENDS: dict[str, str] = {
    "hf": "tutorzoo.agents.backends.hf:HFBackend",
    "openai": "tutorzoo.agents.backends.openai_compat:OpenAIBackend",
}


def make_backend(spec: str, **kwargs: Any) -> ChatBackend:
    """A backend from ``prefix:target`` (``hf:./models/tiny``, ``openai:gpt-4o-mini``)."""
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
    return factory(target, **kwargs)


__all__ = ["BACKENDS", "BackendError", "ChatBackend", "GenerationConfig", "GenerationResult", "make_backend"]
