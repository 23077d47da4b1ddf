"""A tutor backed by a chat model (a local Hugging Face model or an OpenAI-compatible endpoint).

It sends the env's ``info["messages"]`` (the system prompt first, the pre-test summary and the student's turns
as ``user``, its own turns as ``assistant``) and returns the reply. ``act_batch`` answers many episodes with
one backend call, which is how batched rollouts and training use it.

Example::

    tutor = make_tutor("openai:gpt-4o-mini", base_url="http://127.0.0.1:8000/v1")
    tutor = make_tutor("hf:./models/tiny")
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tutorzoo.agents.backends.base import ChatBackend, GenerationConfig
from tutorzoo.envs.protocols import PartialBatchError as PartialBatchError  # defined beside the engine that reads it


class TutorBackendError(RuntimeError):
    """The backend produced no reply for this episode's turn (the error is recorded with the episode)."""


class LLMTutor:
    """Tutor policy over a :class:`ChatBackend`; EducationQ's per-turn cap of 150 tokens by default."""

    def __init__(self, backend: ChatBackend, config: GenerationConfig | None = None, name: str | None = None) -> None:
        self.backend = backend
        self.config = config or GenerationConfig(max_new_tokens=150)
        self.name = name or backend.name
        self._seed: int | None = None
        self._turn = 0

    def reset(self, seed: int | None = None) -> None:
        self._seed = seed
        self._turn = 0

    def _turn_config(self) -> GenerationConfig:
        self._turn += 1
        if self._seed is None:
            return self.config
        # a seed per (episode, turn): reruns are reproducible, turns are not all sampled alike
        return replace(self.config, seed=int(np.random.SeedSequence([self._seed, self._turn]).generate_state(1)[0]))

    def act(self, observation: dict, info: dict) -> str:
        if info.get("observe_only"):
            return ""
        [result] = self.backend.generate([list(info["messages"])], self._turn_config())
        if not result.ok:
            raise TutorBackendError(result.error or "the backend returned no text")
        return result.text or ""

    def act_batch(self, batch: list[tuple[dict, dict]]) -> list[str]:
        """One reply per (observation, info); observe-only turns answer "" without a model call."""
        todo = [i for i, (_, info) in enumerate(batch) if not info.get("observe_only")]
        texts: list[str | None] = [""] * len(batch)
        errors: list[str | None] = [None] * len(batch)
        if todo:
            results = self.backend.generate([list(batch[i][1]["messages"]) for i in todo], self._turn_config())
            for i, r in zip(todo, results, strict=True):
                texts[i] = r.text
                errors[i] = None if r.ok else (r.error or "the backend returned no text")
        if any(e is not None for e in errors):
            raise PartialBatchError(texts, errors)
        return [t or "" for t in texts]
