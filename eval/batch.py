"""Batched rollouts: many episodes in lockstep, so a batched tutor answers all of them with one model call.

:func:`run_batched` is the benchmark's name for the rollout engine (:func:`tutorzoo.envs.engine.play`): up to
``batch_size`` episodes in flight, one env and one student per spec, one tutor call per step for every
episode waiting for the tutor; records are those of :func:`tutorzoo.eval.rollout.run_episode`, field for field, in the
order of ``specs``.

How the tutor is driven (:mod:`tutorzoo.envs.protocols`, chosen by :func:`tutorzoo.envs.engine.tutor_seat`):

- a :class:`~tutorzoo.envs.protocols.BatchedTutor` (``act_batch``) is one shared instance, reset once per run
  with the first spec's tutor seed, with one ``act_batch`` call per step; a sampling tutor of this kind seeds
  per call, so its batched samples differ from a sequential run's (both are reproducible).
- an :class:`~tutorzoo.envs.protocols.EpisodeTutor` (GRPO's token tutor, and
  :class:`tutorzoo.agents.tutor.llm.LLMTutor`) also gets ``begin_episode(index, seed)`` as each episode starts and
  the waiting episodes as :class:`~tutorzoo.envs.protocols.TutorTurn` objects naming their index. LLMTutor samples
  each episode's turn with that episode's seed, so its batched episodes equal sequential ones.
- any other tutor plays one episode at a time (:class:`tutorzoo.envs.engine.BatchOfOne`), reset with each episode's
tutor
  seed, exactly as ``run_episode`` does.

Model students and a model content reader play in lockstep worker threads (:mod:`tutorzoo.envs.lockstep`): one
batched generate per round on HF, every episode's requests in flight on an endpoint; records as sequential play.
Failures stay with their episodes (see :mod:`tutorzoo.envs.engine`).

Example::

    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor import make_tutor
    specs = [EpisodeSpec(task_set="math", persona="anxious", seed=s) for s in range(32)]
    records = run_batched(specs, make_tutor("hf:models/tiny"), SimulatedStudent, batch_size=16)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.engine import play
from tutorzoo.envs.protocols import BatchedTutor, EpisodeTutor, Tutor
from tutorzoo.envs.reward_api import RewardModel


def run_batched(
    specs: Iterable[EpisodeSpec],
    tutor: Tutor | BatchedTutor | EpisodeTutor,
    make_student: Callable[[str], Any],
    batch_size: int = 16,
    on_record: Callable[[dict], None] | None = None,
    reward: RewardModel | None = None,
    tutor_name: str = "tutor",
) -> list[dict]:
    """Play every spec with ``tutor``, ``batch_size`` episodes at a time; records in the order of ``specs``.

    ``make_student(persona)`` builds each episode's student; ``on_record`` sees each record as it finishes.

    Example::

        records = run_batched(specs, LLMTutor(HFBackend("models/tiny")), SimulatedStudent, batch_size=16)
    """
    return play(specs, tutor, make_student, batch_size=batch_size, reward=reward, tutor_name=tutor_name,
                on_record=on_record)
