"""Rolling out episodes: one spec + one tutor + one student -> one ``episodes.jsonl`` record.

Every episode is played by the rollout engine (:mod:`tutorzoo.envs.engine`); this module is its harness-side face.

A failure of the tutor or the student (a backend that raises, times out, returns garbage) never loses
finished work: the episode is recorded with the failure and ``ended_by="failure"``, and the run goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.engine import BatchOfOne, episode_record, play
from tutorzoo.envs.protocols import Student, Tutor
from tutorzoo.envs.records import EpisodeRecord, json_form
from tutorzoo.envs.reward_api import RewardModel

# Re-exported for the callers that import them from here; they are defined in tutorzoo.envs.seeding.
from tutorzoo.envs.seeding import derive_seed as derive_seed
from tutorzoo.envs.seeding import episode_seed as episode_seed


def run_episode(
    spec: EpisodeSpec, tutor: Tutor, student: Student, tutor_name: str = "tutor", reward: RewardModel | None = None
) -> EpisodeRecord:
    """Play one episode to the end and return its record (:func:`tutorzoo.envs.engine.play` with a batch of one: the
    tutor is reset with the spec's tutor seed and asked with ``act``, even a batched one).

    Example::

        from tutorzoo.agents.student import SimulatedStudent
        from tutorzoo.agents.tutor import make_tutor
        spec = EpisodeSpec(task_set="math", persona="sid_core/all_round_asks_for_hint", seed=0)
        record = run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona), "socratic")
    """
    [record] = play([spec], BatchOfOne(tutor), lambda _persona: student, reward=reward, tutor_name=tutor_name)
    return record


# The record of a played (or failed) episode, for the callers that import it from here.
finish_record = episode_record


def run_specs(
    specs: Iterable[EpisodeSpec],
    tutor_names: Iterable[str],
    make_tutor: Callable[[str], Tutor],
    make_student: Callable[[str], Any],
    on_record: Callable[[EpisodeRecord], None] | None = None,
    reward: RewardModel | None = None,
) -> Iterator[EpisodeRecord]:
    """Every spec with every tutor, in a fixed order; ``on_record`` sees each record as it finishes."""
    specs = list(specs)
    for name in tutor_names:
        tutor = make_tutor(name)
        for spec in specs:
            record = run_episode(spec, tutor, make_student(spec.persona), tutor_name=name, reward=reward)
            if on_record is not None:
                on_record(record)
            yield record


class JsonlWriter:
    """Appends records to ``episodes.jsonl`` as they finish (flushed each line, so a crash loses nothing)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh = path.open("a", encoding="utf-8")

    def __call__(self, record: Mapping[str, Any]) -> None:
        self._fh.write(json.dumps(json_form(record), sort_keys=True, ensure_ascii=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
