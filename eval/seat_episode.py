"""One episode played turn by turn from the tutor's seat, for adapters whose tutor lives elsewhere.

The OpenEnv server (:mod:`tutorzoo.eval.serve`) and the inspect-ai solver (:mod:`tutorzoo.eval.inspect_tasks`) get
each tutor turn from outside the process (a client, an inspect model), so they cannot hand the engine a tutor
object. :class:`SeatEpisode` plays the spec in a :class:`~tutorzoo.envs.single_agent.TutorEnv`, seeded as the engine
seeds it, and ends with the engine's own ``episodes.jsonl`` record: the same spec with the same tutor replies is
the episode :func:`tutorzoo.eval.rollout.run_episode` plays. A seat's exception ends the episode with a failure
record, as the engine records it (``ended_by="failure"``: counted, never scored).

Example::

    episode = SeatEpisode(spec)
    obs, info = episode.start()
    while not episode.done:
        obs, info = episode.step("What do you notice about the numbers?")
    record = episode.record
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.engine import episode_record
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.protocols import FailureRecord, Student, exception_failure
from tutorzoo.envs.single_agent import TutorEnv

# the SID objective metrics of SPEC.md section 2, in its order: what the adapters report beside gain and reward
SID_METRICS = ("SD", "SV", "IKT", "BP", "SC", "L3GR", "3C", "TotalScore")


def default_student(persona: str) -> Student:
    """The simulated student of a persona, family or ``distribution:NAME`` (as ``tutorzoo/Tutor-v0`` builds it)."""
    from tutorzoo.agents.gym_views import simulated_student

    return simulated_student(persona)


class SeatEpisode:
    """The tutor's seat of one episode: ``start``, then ``step(text)`` per tutor turn until ``done``."""

    def __init__(self, spec: EpisodeSpec, make_student: Callable[[str], Student] = default_student,
                 tutor_name: str = "tutor") -> None:
        self.spec, self.tutor_name = spec, tutor_name
        self.student = make_student(spec.persona)
        try:
            self.env = TutorEnv(self.student, **spec.env_kwargs())
        except ConfigError as exc:
            raise ValueError(f"spec {spec.key()}: {exc}") from None
        self.record: dict | None = None
        self.step_reward: float | None = None  # the last step's reward (the steps' rewards sum to the episode's)

    @property
    def done(self) -> bool:
        return self.record is not None

    @property
    def tutor_turns(self) -> int:
        return int(getattr(self.env.aec, "tutor_turns", 0))

    def start(self) -> tuple[dict, dict]:
        """Reset with the spec's seed and play until the tutor must speak; (observation, info) of that turn."""
        try:
            return self.env.reset(seed=self.spec.seed)
        except Exception as exc:  # a student's failure ends its own episode
            self._fail(exc)
            return {}, {}

    def step(self, text: Any) -> tuple[dict, dict]:
        """One tutor turn; the next (observation, info), or ``({}, {})`` once the episode is over."""
        if self.done:
            raise ValueError(f"episode {self.spec.key()} is over (ended_by={self.record['ended_by']}); start another")
        try:
            obs, reward, terminated, truncated, info = self.env.step(text)
        except Exception as exc:
            self.step_reward = None
            self._fail(exc)
            return {}, {}
        self.step_reward = reward
        if terminated or truncated:
            aec = self.env.aec
            while aec.agents:  # PettingZoo's dead steps, as the engine plays them before it takes the record
                aec.step(None)
            self._finish([])
            return {}, {}
        return obs, info

    def close(self) -> None:
        self.env.close()

    def _fail(self, exc: BaseException) -> None:
        """Called inside the ``except`` block: the failure record takes its traceback."""
        aec = self.env.aec
        agent = aec.agent_selection
        self._finish([exception_failure(agent, aec.infos.get(agent, {}), exc)])

    def _finish(self, failures: list[FailureRecord]) -> None:
        self.record = episode_record(self.env.aec, self.spec, self.tutor_name, self.student, failures)


__all__ = ["SID_METRICS", "SeatEpisode", "default_student"]
