"""Batched rollouts: many episodes in lockstep, so a batched tutor answers all of them with one model call.

``run_batched`` keeps up to ``batch_size`` episodes running (one env per spec, each with its own student);
at every step it plays each episode's student and observe-only turns until the tutor must speak, then asks
the tutor for all the waiting episodes at once. An episode that ends leaves the batch and the next spec
takes its place, so a long episode never stalls the others. Records are those of
:func:`eval.rollout.run_episode`, field for field, and come back in the order of ``specs``.

How the tutor is driven:

- a tutor with ``act_batch`` (e.g. :class:`agents.tutor.llm.LLMTutor`) is one shared instance, reset once per
  run with the first spec's tutor seed, and gets one ``act_batch`` call per step; each ``info`` carries
  ``episode_index`` (the spec's position). Such a tutor must keep no per-episode state, or key it by
  ``episode_index``: it may define ``begin_episode(index, seed)``, called as each episode starts with the
  seed ``run_episode`` would have reset it with. A sampling LLM tutor's turns are seeded per call, so its
  batched samples differ from a sequential run's (both are reproducible); a deterministic tutor's agree.
- any other tutor is copied per episode (``copy.deepcopy``), reset with the episode's tutor seed and asked
  with ``act``, exactly as ``run_episode`` does.

Failures stay with their episodes: a :class:`~agents.tutor.llm.PartialBatchError` fails only the episodes
whose replies are missing (``ended_by="failure"`` and a ``failures`` entry, as ``run_episode`` records them),
any other exception from ``act_batch`` fails the episodes of that call, and a student's exception fails its
own episode; the rest play on.

Example::

    from agents.student import SimulatedStudent
    from agents.tutor import make_tutor
    specs = [EpisodeSpec(task_set="math", persona="anxious", seed=s) for s in range(32)]
    records = run_batched(specs, make_tutor("hf:models/tiny"), SimulatedStudent, batch_size=16)
"""

from __future__ import annotations

import copy
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agents.tutor.base import TutorPolicy
from agents.tutor.llm import PartialBatchError
from envs import tutoring_v0
from envs.config import EpisodeSpec
from envs.reward_api import RewardModel
from envs.seeding import derive_seed
from eval.rollout import finish_record


@dataclass
class _Episode:
    index: int
    spec: EpisodeSpec
    env: Any
    student: Any
    tutor: Any | None  # this episode's own copy, for tutors without act_batch
    failures: list[dict] = field(default_factory=list)
    waiting: tuple[dict, dict] | None = None  # (observation, info) the tutor must answer
    done: bool = False

    def fail(self, agent: str, info: dict, error: str, trace: str) -> None:
        self.failures.append({
            "agent": agent, "phase": info.get("phase"), "turn": info.get("turn"), "error": error, "traceback": trace,
        })
        self.waiting = None
        self.done = True

    def advance(self) -> None:
        """Play the student and the observe-only tutor turns until the tutor must speak or the episode ends."""
        env = self.env
        while env.agents:
            obs, _reward, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            if env.agent_selection == "tutor":
                if info.get("observe_only"):
                    env.step("")
                    continue
                self.waiting = (obs, info)
                return
            try:
                action = self.student.act(obs, info)
            except Exception as exc:  # a student failure ends its own episode only
                self.fail("student", info, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=3))
                return
            env.step(action)
        self.done = True

    def answer(self, text: str) -> None:
        self.waiting = None
        self.env.step(text)

    def record(self, tutor_name: str) -> dict:
        return finish_record(self.env, self.spec, tutor_name, self.student, self.failures)


def _ask_batched(tutor: Any, episodes: list[_Episode]) -> None:
    batch = [(ep.waiting[0], {**ep.waiting[1], "episode_index": ep.index}) for ep in episodes]  # type: ignore[index]
    errors: list[str | None]
    trace = ""
    try:
        texts: list[str | None] = list(tutor.act_batch(batch))
        errors = [None] * len(batch)
        if len(texts) != len(batch):
            raise ValueError(f"act_batch returned {len(texts)} replies for {len(batch)} episodes")
    except PartialBatchError as exc:
        texts = list(exc.texts)
        # the error act() raises for one episode's missing reply, so batched and sequential failures read alike
        errors = [None if e is None else f"TutorBackendError: {e}" for e in exc.errors]
        trace = traceback.format_exc(limit=3)
    except Exception as exc:  # the whole call failed: every episode in it fails, later batches go on
        texts, errors = [None] * len(batch), [f"{type(exc).__name__}: {exc}"] * len(batch)
        trace = traceback.format_exc(limit=3)
    for ep, (_obs, info), text, error in zip(episodes, batch, texts, errors, strict=True):
        if error is not None or text is None:
            ep.fail("tutor", info, error or "act_batch returned None without an error", trace)
        else:
            ep.answer(text)


def _ask_each(episodes: list[_Episode]) -> None:
    for ep in episodes:
        obs, info = ep.waiting  # type: ignore[misc]
        try:
            text = ep.tutor.act(obs, info)
        except Exception as exc:  # recorded like run_episode does
            ep.fail("tutor", info, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=3))
            continue
        ep.answer(text)


def run_batched(
    specs: Iterable[EpisodeSpec],
    tutor: TutorPolicy,
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
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    specs = list(specs)
    batched = callable(getattr(tutor, "act_batch", None))
    if batched and specs:
        tutor.reset(seed=derive_seed(specs[0].seed, "tutor"))
    begin = getattr(tutor, "begin_episode", None) if batched else None
    records: list[dict | None] = [None] * len(specs)
    queue = iter(enumerate(specs))
    active: list[_Episode] = []

    def start(index: int, spec: EpisodeSpec) -> _Episode:
        env = tutoring_v0.env(**spec.env_kwargs(), reward=reward)
        env.reset(seed=spec.seed)
        own = None
        if batched:
            if callable(begin):
                begin(index, derive_seed(spec.seed, "tutor"))
        else:
            own = copy.deepcopy(tutor)
            own.reset(seed=derive_seed(spec.seed, "tutor"))
        student = make_student(spec.persona)
        student.reset(seed=derive_seed(spec.seed, "student"))
        return _Episode(index, spec, env, student, own)

    exhausted = False
    while True:
        while not exhausted and len(active) < batch_size:
            nxt = next(queue, None)
            if nxt is None:
                exhausted = True
                break
            active.append(start(*nxt))
        for ep in active:
            if ep.waiting is None and not ep.done:
                ep.advance()
        finished = [ep for ep in active if ep.done]
        for ep in finished:
            records[ep.index] = ep.record(tutor_name)
            if on_record is not None:
                on_record(records[ep.index])  # type: ignore[arg-type]
        active = [ep for ep in active if not ep.done]
        if finished and not exhausted:
            continue  # fill the freed slots before the tutor's call, so the batch stays full
        if not active:
            break
        if batched:
            _ask_batched(tutor, active)
        else:
            _ask_each(active)
    return records  # type: ignore[return-value]
