"""What the rollout engine (:mod:`tutorzoo.envs.engine`) needs from the seats it drives, and what it records when one
fails.

A **tutor** (:class:`Tutor`) answers one episode at a time; a **batched tutor** (:class:`BatchedTutor`) is one
shared instance answering many episodes with one call (a model tutor: one forward pass per step); an
**episode tutor** (:class:`EpisodeTutor`) is a batched tutor that keeps state per episode, so the engine names
each episode explicitly: ``begin_episode(index, seed)`` as it starts and :class:`TutorTurn` objects (episode
index, observation, info) when it must speak. A **student** (:class:`Student`) has the tutor's shape. These are
the public contract of docs/design.md, "Public contract"; the engine picks the way to drive a tutor from them
with ``isinstance`` (the protocols are ``runtime_checkable``), nowhere else.

Example::

    from tutorzoo.envs.protocols import Tutor
    class Parrot:
        def reset(self, seed: int | None = None) -> None: ...
        def act(self, observation: dict, info: dict) -> str:
            return "Tell me more."
    assert isinstance(Parrot(), Tutor)
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, TypedDict, runtime_checkable


@runtime_checkable
class Tutor(Protocol):
    """One episode at a time: reset with the episode's tutor seed, then asked turn by turn."""

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: dict, info: dict) -> str: ...


@runtime_checkable
class BatchedTutor(Protocol):
    """One shared instance for every episode of a run, reset once with the first episode's tutor seed; each
    ``act_batch`` call answers every episode waiting for the tutor, in order. It keeps no per-episode state
    (a tutor that must is an :class:`EpisodeTutor`)."""

    def reset(self, seed: int | None = None) -> None: ...

    def act_batch(self, batch: list[tuple[dict, dict]]) -> list[str]: ...


class TutorTurn(NamedTuple):
    """One episode waiting for the tutor: its index in the run (the position of its spec), what it observes."""

    episode: int
    observation: dict
    info: dict


@runtime_checkable
class EpisodeTutor(Protocol):
    """A batched tutor with state per episode (GRPO's token histories): ``begin_episode(index, seed)`` as each
    episode starts, with the seed a sequential run would reset it with; ``act_turns`` answers the waiting
    episodes, each named by its index."""

    def reset(self, seed: int | None = None) -> None: ...

    def begin_episode(self, index: int, seed: int) -> None: ...

    def act_turns(self, turns: Sequence[TutorTurn]) -> list[str]: ...


@runtime_checkable
class Student(Protocol):
    """A student seat: reset with the episode's student seed, then asked at each of its turns. A student that
    acts from ``info`` alone may say so with a class attribute ``reads_observation = False``: the engine then
    passes ``None`` for the observation and the env does not build one (the simulated student does this)."""

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: Any, info: dict) -> Any: ...


class FailureRecord(TypedDict):
    """A seat's exception, as an episode record's ``failures`` entry (docs/design.md, the episode record)."""

    agent: str
    phase: str | None
    turn: int | None
    error: str
    traceback: str


def failure_record(agent: str, info: dict, error: str, trace: str) -> FailureRecord:
    """The one constructor of a :class:`FailureRecord`: who failed, where (the info's phase and turn), why."""
    return {"agent": agent, "phase": info.get("phase"), "turn": info.get("turn"), "error": error, "traceback": trace}


def exception_failure(agent: str, info: dict, exc: BaseException) -> FailureRecord:
    """The :class:`FailureRecord` of an exception being handled (call it inside the ``except`` block)."""
    return failure_record(agent, info, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=3))


class PartialBatchError(RuntimeError):
    """Some replies of a batch failed: ``texts[i]`` is None exactly where ``errors[i]`` says why. Only those
    episodes fail; the others take their replies."""

    def __init__(self, texts: list[str | None], errors: list[str | None]) -> None:
        failed = sum(e is not None for e in errors)
        super().__init__(f"{failed} of {len(errors)} replies failed; first: {next(e for e in errors if e)}")
        self.texts = texts
        self.errors = errors


class StopEpisode(Exception):  # noqa: N818 (a signal, not an error)
    """Raised by a seat to end its episode where it stands, without a failure (``tutorzoo play`` at end of
    input, an item kind that only needs the tutor's reply at one turn). The record is the env's as it stands."""


__all__ = [
    "BatchedTutor", "EpisodeTutor", "FailureRecord", "PartialBatchError", "StopEpisode", "Student", "Tutor",
    "TutorTurn", "exception_failure", "failure_record",
]
