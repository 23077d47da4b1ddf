"""The chat-model backend interface every model-backed agent uses (tutors, LLM students, annotators, judges).

A backend turns a batch of chat conversations into replies. Failures are per conversation: a reply that
could not be produced has ``text=None`` and ``error`` set, so one bad request never loses the others.

Example::

    backend = make_backend("openai:gpt-4o-mini", base_url="http://127.0.0.1:8000/v1")
    [result] = backend.generate([[{"role": "user", "content": "Hi"}]], GenerationConfig(max_new_tokens=20))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class GenerationConfig:
    """Sampling settings of one call. ``seed`` makes local generation reproducible (and is sent to APIs)."""

    max_new_tokens: int = 150
    temperature: float = 0.7
    top_p: float = 1.0
    seed: int | None = None
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if not 0.0 <= self.temperature <= 2.0:
            raise ValueError(f"temperature must be in [0, 2], got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")


@dataclass(frozen=True)
class GenerationResult:
    """One reply: ``text`` (None on failure), the ``error`` that explains a failure, token counts, cache hit."""

    text: str | None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.text is not None


def row_seed(seed: int | None, row: int) -> int | None:
    """The sampling seed of conversation ``row`` of a call seeded ``seed``: each reply is sampled from its own
    stream, so it does not depend on the other conversations of its call or batch."""
    if seed is None:
        return None
    return int(np.random.SeedSequence([seed, row]).generate_state(1)[0])


def generate_many(backend: ChatBackend, requests: Sequence[tuple[list[dict], GenerationConfig]]
                  ) -> list[GenerationResult]:
    """One result per ``(conversation, config)``, each as ``backend.generate([conversation], config)`` gives it.

    Backends with their own ``generate_many`` answer all requests together (one batch on HF, up to
    ``max_concurrency`` in flight on an endpoint); any other backend is called once per request.

    Example::

        a, b = generate_many(backend, [(conv_a, GenerationConfig(seed=1)), (conv_b, GenerationConfig(seed=2))])
    """
    own = getattr(backend, "generate_many", None)
    if own is not None:
        return list(own(list(requests)))
    return [backend.generate([conversation], config)[0] for conversation, config in requests]


@runtime_checkable
class ChatBackend(Protocol):
    """``generate`` returns one :class:`GenerationResult` per conversation, in order; it never raises for a
    failure of one request (that is the result's ``error``), only for misuse (bad arguments, bad config)."""

    name: str

    def generate(self, conversations: list[list[dict]], config: GenerationConfig) -> list[GenerationResult]: ...


class BackendError(RuntimeError):
    """A request failed in a way retrying cannot fix (e.g. HTTP 401/404): the message names the fix."""
