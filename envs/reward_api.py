"""The interface between the env and a reward model (implemented by :class:`rewards.Rubric`).

The env calls :meth:`RewardModel.exchange` once per dialogue exchange — a tutor turn and the student's reply
to it — and :meth:`RewardModel.episode` once at the end. Each returns named components; the env credits
``weigh(components)`` to the tutor, sums each component over the episode into
``record["reward_components"]`` and reports the per-exchange components in the tutor's ``info``.

The exchange is an :class:`Exchange`: ``task`` (the :class:`~tutorzoo.envs.tasks.base.Task`), ``tutor`` and
``student`` (the two transcript records), ``state_before`` / ``state_after`` (the student's hidden state around
the reply as the env holds it, a :class:`~tutorzoo.envs.records.StudentSnapshot`; empty for a student that reports
none), ``history`` (the transcript so far) and ``turn``.

With ``ends_on_leak`` (PedagogicalRL's hard mode) a tutor turn that states an answer ends the dialogue at
once; the env then asks :meth:`RewardModel.leak_penalty` for the components of that ending.

Without a reward model the env's reward is the learning gain alone (:class:`LearningGain`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypedDict, runtime_checkable

from tutorzoo.envs.records import LEARNING_GAIN, EpisodeRecord, StudentSnapshot, TurnRecord

if TYPE_CHECKING:
    from tutorzoo.envs.tasks.base import Task


class Exchange(TypedDict):
    """One dialogue exchange, what :meth:`RewardModel.exchange` scores."""

    task: Task
    """The episode's task."""
    tutor: TurnRecord
    """The tutor's turn."""
    student: TurnRecord
    """The student's reply to it."""
    state_before: StudentSnapshot
    """The student's hidden state before the reply (empty for a student that reports none)."""
    state_after: StudentSnapshot
    """The student's hidden state after the reply."""
    history: list[TurnRecord]
    """The transcript so far, the reply included."""
    turn: int
    """Tutor turns taken so far."""


@runtime_checkable
class RewardModel(Protocol):
    """What the env asks a reward model (module docstring); :class:`LearningGain` is the default."""

    ends_on_leak: bool

    def exchange(self, exchange: Exchange) -> dict[str, float]: ...

    def episode(self, record: EpisodeRecord) -> dict[str, float]: ...

    def leak_penalty(self, tutor_turn: TurnRecord) -> dict[str, float]: ...

    def weigh(self, components: dict[str, float]) -> float: ...


class LearningGain:
    """The default: the isomorphic post-test score minus the pre-test score, at the end; nothing per turn."""

    ends_on_leak = False

    def exchange(self, exchange: Exchange) -> dict[str, float]:
        return {}

    def episode(self, record: EpisodeRecord) -> dict[str, float]:
        gain = record.learning_gain
        return {LEARNING_GAIN: float(gain) if gain is not None else 0.0}

    def leak_penalty(self, tutor_turn: TurnRecord) -> dict[str, float]:
        return {}

    def weigh(self, components: dict[str, float]) -> float:
        return float(sum(components.values()))
