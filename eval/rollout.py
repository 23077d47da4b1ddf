"""Rolling out episodes: one spec + one tutor + one student -> one ``episodes.jsonl`` record.

A failure of the tutor or the student (a backend that raises, times out, returns garbage) never loses
finished work: the episode is recorded with the failure and ``ended_by="failure"``, and the run goes on.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from agents.tutor.base import TutorPolicy
from envs import tutoring_v0
from envs.config import EpisodeSpec
from envs.reward_api import RewardModel

# Re-exported for the callers that import them from here; they are defined in envs.seeding.
from envs.seeding import derive_seed as derive_seed
from envs.seeding import episode_seed as episode_seed


def run_episode(
    spec: EpisodeSpec, tutor: TutorPolicy, student: Any, tutor_name: str = "tutor", reward: RewardModel | None = None
) -> dict:
    """Play one episode to the end and return its record.

    Example::

        from agents.student import SimulatedStudent
        from agents.tutor import make_tutor
        spec = EpisodeSpec(task_set="math", persona="sid_core/all_round", seed=0)
        record = run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona), "socratic")
    """
    env = tutoring_v0.env(**spec.env_kwargs(), reward=reward)
    env.reset(seed=spec.seed)
    tutor.reset(seed=derive_seed(spec.seed, "tutor"))
    student.reset(seed=derive_seed(spec.seed, "student"))
    failures: list[dict] = []
    for agent in env.agent_iter():
        obs, _reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "tutor" and info.get("observe_only"):
            env.step("")
            continue
        policy = tutor if agent == "tutor" else student
        try:
            action = policy.act(obs, info)
        except Exception as exc:  # a policy failure is recorded, never fatal to the run
            failures.append({
                "agent": agent,
                "phase": info.get("phase"),
                "turn": info.get("turn"),
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=3),
            })
            break
        env.step(action)
    return finish_record(env, spec, tutor_name, student, failures)


def finish_record(env: Any, spec: EpisodeSpec, tutor_name: str, student: Any, failures: list[dict]) -> dict:
    """The ``episodes.jsonl`` record of a played (or failed) episode; closes the env."""
    record = env.unwrapped.episode_record()
    if failures:
        record["ended_by"] = "failure"
    env.close()
    return {
        "spec": spec.model_dump(),
        "tutor": tutor_name,
        "student": getattr(student, "name", f"simulated:{spec.persona}"),
        **record,
        "failures": failures,
    }


def run_specs(
    specs: Iterable[EpisodeSpec],
    tutor_names: Iterable[str],
    make_tutor: Callable[[str], TutorPolicy],
    make_student: Callable[[str], Any],
    on_record: Callable[[dict], None] | None = None,
    reward: RewardModel | None = None,
) -> Iterator[dict]:
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

    def __call__(self, record: dict) -> None:
        self._fh.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
