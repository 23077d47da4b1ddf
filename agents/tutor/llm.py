"""A tutor backed by a chat model (a local Hugging Face model or an OpenAI-compatible endpoint).

It sends the env's ``info["messages"]`` (the system prompt first, the pre-test summary and the student's turns
as ``user``, its own turns as ``assistant``) and returns the reply. ``act_batch`` answers many episodes with
one backend call, which is how batched rollouts and training use it.

Example::

    tutor = make_tutor("openai:gpt-4o-mini", base_url="http://127.0.0.1:8000/v1")
    tutor = make_tutor("hf:./models/tiny")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from tutorzoo.agents.backends.base import ChatBackend, GenerationConfig
from tutorzoo.envs.protocols import PartialBatchError as PartialBatchError  # defined beside the engine that reads it
from tutorzoo.envs.protocols import TutorTurn


class TutorBackendError(RuntimeError):
    """The backend produced no reply for this episode's turn (the error is recorded with the episode)."""


class LLMTutor:
    """Tutor policy over a :class:`ChatBackend`; EducationQ's per-turn cap of 150 tokens by default."""

    def __init__(self, backend: ChatBackend, config: GenerationConfig | None = None, name: str | None = None) -> None:
        self.backend = backend
        self.config = config or GenerationConfig(max_new_tokens=150)
        self.name = name or backend.name
        self.reset(None)

    def reset(self, seed: int | None = None) -> None:
        self._seed = seed
        self._turn = 0
        self._episodes: dict[int, list] = {}  # episode index -> [seed, turn], for act_turns

    @property
    def concurrent_turns(self) -> bool:
        """Whether the engine may ask for each episode's turn from its own thread: true when turns are sampled per
        episode (a backend with ``generate_many``, whose requests the engine pools or sends concurrently)."""
        return hasattr(self.backend, "generate_many")

    def begin_episode(self, index: int, seed: int) -> None:
        """Episode ``index`` starts with the seed a sequential run resets the tutor with."""
        self._episodes[index] = [seed, 0]

    def _turn_config(self) -> GenerationConfig:
        self._turn += 1
        return self._seeded(self._seed, self._turn)

    def _seeded(self, seed: int | None, turn: int) -> GenerationConfig:
        if seed is None:
            return self.config
        # a seed per (episode, turn): reruns are reproducible, turns are not all sampled alike
        return replace(self.config, seed=int(np.random.SeedSequence([seed, turn]).generate_state(1)[0]))

    def act_turns(self, turns: Sequence[TutorTurn]) -> list[str]:
        """One reply per waiting episode, each sampled with its own episode's seed and turn, as ``act`` would in a
        sequential run (so batched episodes equal sequential ones); a backend without ``generate_many`` gets one
        call with one seed for the batch, as ``act_batch``."""
        if not hasattr(self.backend, "generate_many"):
            return self.act_batch([(t.observation, t.info) for t in turns])
        todo = [k for k, t in enumerate(turns) if not t.info.get("observe_only")]
        requests = []
        for k in todo:
            state = self._episodes.setdefault(turns[k].episode, [None, 0])
            state[1] += 1
            requests.append((list(turns[k].info["messages"]), self._seeded(state[0], state[1])))
        texts: list[str | None] = [""] * len(turns)
        errors: list[str | None] = [None] * len(turns)
        if requests:
            for k, r in zip(todo, self.backend.generate_many(requests), strict=True):  # type: ignore[attr-defined]
                texts[k] = r.text
                errors[k] = None if r.ok else (r.error or "the backend returned no text")
        if any(e is not None for e in errors):
            raise PartialBatchError(texts, errors)
        return [t or "" for t in texts]

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
