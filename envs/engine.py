"""The rollout engine: the one loop that plays episodes of the tutoring env, for every entry point.

:func:`play` keeps up to ``batch_size`` episodes in flight (one env per spec, each with its own student). At every
step it plays each episode's student turns and the tutor's observe-only turns until the tutor must speak, then
asks the tutor for all the waiting episodes at once. An episode that ends leaves the batch and the next spec takes
its place, so a long episode never stalls the others. Sequential play is the same mechanism with a batch of one:
a plain :class:`~tutorzoo.envs.protocols.Tutor` is driven through :class:`BatchOfOne`, the one adapter that turns it
into
a batched tutor of one episode. The harness (``tutorzoo.eval.rollout.run_episode``), the batched rollout
(``tutorzoo.eval.batch.run_batched``), the item kinds, ``tutorzoo play``, GRPO's rollouts, DPO's replays and the
Gymnasium views' embedded seats all play through here (docs/design.md, "One engine, one episode per spec").

**Seeds** come from :mod:`tutorzoo.envs.seeding` only: the env is reset with the spec's seed, the student with
``derive_seed(seed, "student")``, a one-at-a-time tutor with ``derive_seed(seed, "tutor")``; a shared batched
tutor is reset once with the first spec's tutor seed, and an :class:`~tutorzoo.envs.protocols.EpisodeTutor` gets each
episode's tutor seed in ``begin_episode(index, seed)``, ``index`` being the spec's position in ``specs``.

**Model seats in lockstep**: when the student or the env's content reader calls a model (``calls_model = True``)
and no observer watches, each episode's turns between tutor calls run in a worker thread; a local model pools the
round's requests of every episode into one batch (:class:`~tutorzoo.envs.lockstep.Gate`), an endpoint has them
all in flight, and the env work of one episode overlaps the others' requests. Each episode keeps its own order
and seeds, so the records equal sequential play's.

**Failures** stay with their episodes: a seat's exception ends its own episode with ``ended_by="failure"`` and
a :class:`~tutorzoo.envs.protocols.FailureRecord`; a :class:`~tutorzoo.envs.protocols.PartialBatchError` fails only the
episodes
whose replies are missing, any other exception of a batched call fails the episodes of that call, and the rest
play on. With ``strict=True`` the exception is raised instead. A seat that raises
:class:`~tutorzoo.envs.protocols.StopEpisode` ends its episode without a failure.

Example::

    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor import make_tutor
    specs = [EpisodeSpec(task_set="math", persona="anxious", seed=s) for s in range(4)]
    records = play(specs, make_tutor("socratic"), SimulatedStudent, tutor_name="socratic")
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, cast

from tutorzoo.envs import tutoring_v0
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.lockstep import Gate
from tutorzoo.envs.protocols import (
    BatchedTutor,
    EpisodeTutor,
    FailureRecord,
    PartialBatchError,
    StopEpisode,
    Student,
    Tutor,
    TutorTurn,
    exception_failure,
    failure_record,
)
from tutorzoo.envs.records import EpisodeRecord
from tutorzoo.envs.reward_api import RewardModel
from tutorzoo.envs.seeding import derive_seed


@dataclass
class Episode:
    """One episode in flight: its position in the run, its spec, env and student, and how it stands."""

    index: int
    spec: EpisodeSpec
    env: Any
    student: Student
    failures: list[FailureRecord] = field(default_factory=list)
    waiting: tuple[dict, dict] | None = None  # (observation, info) the tutor must answer
    done: bool = False
    reply: str | None = None  # the tutor's reply a lockstep worker steps next

    def end(self, failure: FailureRecord | None = None) -> None:
        if failure is not None:
            self.failures.append(failure)
        self.waiting = None
        self.done = True


class Observer(Protocol):
    """Sees each episode around the tutor's turns (``tutorzoo play``'s screen, DPO's dialogue states)."""

    def before_tutor(self, episode: Episode, observation: dict | None, info: dict) -> None:
        """Called at every tutor turn, observe-only ones included, before the tutor is asked."""

    def after_tutor(self, episode: Episode, info: dict) -> None:
        """Called after a tutor turn the tutor spoke has been stepped."""


# ------------------------------------------------------------------------------------------ tutor seats
Reply = tuple[str | None, FailureRecord | None]  # the text, or why there is none


class TutorSeat:
    """How the engine drives a tutor: ``start`` once per run, ``begin`` per episode, ``ask`` per step."""

    limit: int | None = None  # most episodes per call (None: the run's batch size)

    def start(self, specs: Sequence[EpisodeSpec]) -> None:
        """Before the first episode."""

    def begin(self, index: int, seed: int) -> None:
        """As episode ``index`` starts; ``seed`` is its tutor seed."""

    def ask(self, episodes: Sequence[Episode], strict: bool = False) -> list[Reply]:
        """One reply per waiting episode; with ``strict`` a tutor's exception is raised, not recorded."""
        raise NotImplementedError


class BatchOfOne(TutorSeat):
    """A :class:`~tutorzoo.envs.protocols.Tutor` as a batched tutor of one episode: reset with each episode's tutor
    seed,
    asked with ``act``; the same instance plays every episode, one after the other."""

    limit = 1

    def __init__(self, tutor: Tutor) -> None:
        self.tutor = tutor

    def begin(self, index: int, seed: int) -> None:
        self.tutor.reset(seed=seed)

    def ask(self, episodes: Sequence[Episode], strict: bool = False) -> list[Reply]:
        out: list[Reply] = []
        for ep in episodes:
            obs, info = ep.waiting  # type: ignore[misc]
            try:
                out.append((self.tutor.act(obs, info), None))
            except Exception as exc:  # a tutor failure ends its own episode (recorded)
                if strict or isinstance(exc, StopEpisode):
                    raise
                out.append((None, exception_failure("tutor", info, exc)))
        return out


class _Shared(TutorSeat):
    """A :class:`~tutorzoo.envs.protocols.BatchedTutor` or :class:`~tutorzoo.envs.protocols.EpisodeTutor`: one
    instance, one call
    per step for every waiting episode."""

    def __init__(self, tutor: BatchedTutor | EpisodeTutor) -> None:
        self.tutor = tutor

    def start(self, specs: Sequence[EpisodeSpec]) -> None:
        if specs:
            self.tutor.reset(seed=derive_seed(specs[0].seed, "tutor"))

    def begin(self, index: int, seed: int) -> None:
        if isinstance(self.tutor, EpisodeTutor):
            self.tutor.begin_episode(index, seed)

    def _call(self, episodes: Sequence[Episode]) -> list[str]:
        if isinstance(self.tutor, EpisodeTutor):
            return self.tutor.act_turns([TutorTurn(ep.index, *ep.waiting) for ep in episodes])  # type: ignore[misc]
        return self.tutor.act_batch([ep.waiting for ep in episodes])  # type: ignore[misc]

    def ask(self, episodes: Sequence[Episode], strict: bool = False) -> list[Reply]:
        infos = [ep.waiting[1] for ep in episodes]  # type: ignore[index]
        try:
            texts: list[str | None] = list(self._call(episodes))
            if len(texts) != len(episodes):
                raise ValueError(f"act_batch returned {len(texts)} replies for {len(episodes)} episodes")
            return [(t, None if t is not None else failure_record(
                "tutor", info, "act_batch returned None without an error", "")) for t, info in zip(texts, infos,
                                                                                                   strict=True)]
        except PartialBatchError as exc:
            if strict:
                raise
            trace = traceback.format_exc(limit=3)
            # the error act() raises for one episode's missing reply, so batched and sequential failures read alike
            return [(t, None) if e is None and t is not None else
                    (None, failure_record("tutor", info, f"TutorBackendError: {e}" if e is not None
                                          else "act_batch returned None without an error", trace))
                    for t, e, info in zip(exc.texts, exc.errors, infos, strict=True)]
        except Exception as exc:  # the whole call failed: its episodes fail, later ones go on
            if strict or isinstance(exc, StopEpisode):
                raise
            return [(None, exception_failure("tutor", info, exc)) for info in infos]


def tutor_seat(tutor: Tutor | BatchedTutor | EpisodeTutor | TutorSeat) -> TutorSeat:
    """How ``tutor`` is driven: per-episode batched, shared batched, or one at a time (the only dispatch)."""
    if isinstance(tutor, TutorSeat):
        return tutor
    # A runtime-Protocol isinstance walks the protocol's MRO on every call (Python 3.11), and every play() asks:
    # a tutor with neither batched method is no batched tutor, so most tutors skip the two batched checks.
    batched = hasattr(tutor, "act_batch") or hasattr(tutor, "act_turns")
    if batched and isinstance(tutor, (EpisodeTutor, BatchedTutor)):
        return _Shared(tutor)
    # issubclass of the class is cached by the ABC machinery, and a class with both methods makes isinstance true
    # too (its first test); only an instance given them in __init__ needs the instance check
    if issubclass(type(tutor), Tutor) or isinstance(tutor, Tutor):
        return BatchOfOne(cast(Tutor, tutor))  # (the class check narrows nothing for a type checker)
    raise TypeError(f"{type(tutor).__name__} is not a tutor: give it reset(seed) and act(observation, info) "
                    "(or act_batch(batch) for a batched one); see tutorzoo.envs.protocols")


def is_batched(tutor: Any) -> bool:
    """Whether ``tutor`` answers many episodes per call (a model tutor), i.e. whether a batch size matters."""
    return tutor_seat(tutor).limit != 1


# ------------------------------------------------------------------------------------------ the loop
def episode_record(env: Any, spec: EpisodeSpec, tutor_name: str, student: Any,
                   failures: Sequence[FailureRecord]) -> EpisodeRecord:
    """The ``episodes.jsonl`` record of a played (or failed) episode, with the run's fields; closes the env."""
    record = env.unwrapped.episode_record(
        spec=spec.model_dump(), tutor=tutor_name, student=getattr(student, "name", f"simulated:{spec.persona}"),
        failures=list(failures))
    env.close()
    return record


def advance(
    env: Any,
    seat: str,
    other: Tutor | Student,
    *,
    before_tutor: Callable[[dict | None, dict], None] | None = None,
    after_step: Callable[[], None] | None = None,
) -> tuple[dict, dict] | None:
    """Play every turn that is not ``seat``'s own decision, the ``other`` seat's with ``other.act`` and the tutor's
    observe-only ones with ``""``; return ``seat``'s (observation, info) when it must decide, None when its
    episode is over. An ``other`` whose ``reads_observation`` is False (the simulated student acts from its info)
    gets ``None`` for an observation, and the env builds none. The one turn loop: the engine (``seat="tutor"``)
    and the Gymnasium views (either seat) call it. ``before_tutor(observation, info)`` sees every tutor turn,
    ``after_step()`` follows every step; a seat's exception propagates (the caller records or raises it).
    """
    raw = getattr(env, "unwrapped", env)  # read state from the env itself: each wrapper attribute costs a lookup chain
    reads_observation = getattr(other, "reads_observation", True)
    while not (raw.terminations[seat] or raw.truncations[seat]):
        agent = raw.agent_selection
        info = raw.infos[agent]
        if agent == "tutor" and info.get("observe_only"):  # nobody decides: the observation is built only if seen
            if before_tutor is not None:
                before_tutor(raw.observe(agent), info)
            action: Any = ""
        else:
            # a seat that acts from its info alone (``reads_observation = False``) is handed no observation
            seen = agent == seat or (agent == "tutor" and before_tutor is not None) or reads_observation
            obs = raw.observe(agent) if seen else None
            if agent == "tutor" and before_tutor is not None:
                before_tutor(obs, info)
            if agent == seat:
                assert obs is not None  # the deciding seat always sees its observation
                return obs, info
            action = other.act(obs, info)  # type: ignore[arg-type]  # None for a seat that reads none
        env.step(action)
        if after_step is not None:
            after_step()
    return None


def _advance(ep: Episode, observer: Observer | None, strict: bool) -> None:
    """Play the student and the observe-only tutor turns until the tutor must speak or the episode ends."""
    env = ep.env
    before = None if observer is None else (lambda obs, info: observer.before_tutor(ep, obs, info))
    try:
        # the engine made and reset this env: it steps the env itself (the order-enforcing wrapper's checks cannot
        # fail here, and its two calls per step are a few percent of an act-mode episode)
        ep.waiting = advance(env.unwrapped, "tutor", ep.student, before_tutor=before)
    except StopEpisode:
        ep.end()
        return
    except Exception as exc:  # a seat's failure ends its own episode only
        if strict:
            raise
        agent = env.agent_selection
        ep.end(exception_failure(agent, env.infos[agent], exc))
        return
    if ep.waiting is None:
        while env.agents:  # PettingZoo's dead steps: each finished agent leaves
            env.step(None)
        ep.done = True


def _calls_model(ep: Episode) -> bool:
    """Whether an episode's seats other than the tutor call a model (an LLM student, a model content reader)."""
    reader = getattr(ep.env.unwrapped, "_reader", None)
    return bool(getattr(ep.student, "calls_model", False) or getattr(reader, "calls_model", False))


def _step_and_advance(ep: Episode, strict: bool) -> None:
    """A lockstep worker's job: step the tutor's reply, then play on until the tutor must speak again."""
    if ep.reply is not None:
        text, ep.reply = ep.reply, None
        ep.env.unwrapped.step(text)
    _advance(ep, None, strict)


def _pipelined(specs: Sequence[EpisodeSpec], seat: TutorSeat, width: int, start: Callable[[int, EpisodeSpec], Episode],
               tutor_name: str, on_record: Callable[[EpisodeRecord], None] | None,
               strict: bool) -> list[EpisodeRecord]:
    """Every episode in its own worker from start to end, its tutor asked for it alone (a tutor whose turns are
    independent per episode and safe to ask from many threads, ``concurrent_turns``): an endpoint's requests of
    all episodes are in flight while other episodes' env work runs, and a local model's requests of a round are
    pooled into one batch by the gate. Records reach ``on_record`` in the order of ``specs``, as sequentially."""
    records: list[EpisodeRecord | None] = [None] * len(specs)
    queue = iter(enumerate(specs))
    lock = threading.Lock()
    emitted = 0

    def finish(ep: Episode) -> None:
        nonlocal emitted
        record = episode_record(ep.env, ep.spec, tutor_name, ep.student, ep.failures)
        with lock:
            records[ep.index] = record
            while emitted < len(records) and records[emitted] is not None:
                if on_record is not None:
                    on_record(records[emitted])  # type: ignore[arg-type]
                emitted += 1

    def drive(ep: Episode) -> None:
        while True:
            _step_and_advance(ep, strict)
            if ep.done:
                return
            try:
                [(text, failure)] = seat.ask([ep], strict)
            except StopEpisode:
                ep.end()
                return
            if failure is not None:
                ep.end(failure)
                return
            ep.waiting, ep.reply = None, text if text is not None else ""

    def work() -> None:
        while True:
            with lock:
                nxt = next(queue, None)
                episode = None if nxt is None else start(*nxt)  # started in spec order, as the tutor sees them
            if episode is None:
                return
            drive(episode)
            finish(episode)

    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="tutorzoo-episode") as pool:
        for future in Gate().run([work] * min(width, len(specs)), pool):
            future.result()
    return records  # type: ignore[return-value]


def play(
    specs: Iterable[EpisodeSpec],
    tutor: Tutor | BatchedTutor | EpisodeTutor | TutorSeat,
    make_student: Callable[[str], Student],
    *,
    batch_size: int = 1,
    reward: RewardModel | None = None,
    tutor_name: str = "tutor",
    on_record: Callable[[EpisodeRecord], None] | None = None,
    observer: Observer | None = None,
    strict: bool = False,
    reader: Callable[[Any], Any] | None = None,
) -> list[EpisodeRecord]:
    """Play every spec with ``tutor``, up to ``batch_size`` episodes in lockstep; records in the order of ``specs``.

    ``make_student(persona)`` builds each episode's student; ``on_record`` sees each record as it finishes;
    ``reader`` (a task -> content reader factory, e.g. ``reader_factory("llm:openai:M")``) replaces the env's rule
    reader. A plain tutor plays one episode at a time whatever ``batch_size`` is.

    When a seat besides the tutor calls a model (an LLM or hybrid student, a model reader) and no ``observer``
    watches, each episode's turns between tutor calls run in a worker thread (:mod:`tutorzoo.envs.lockstep`):
    endpoint requests of all episodes are in flight together, a local model answers every episode's request of
    a round in one batch, and each episode plays exactly as it would alone.

    Example::

        records = play(specs, LLMTutor(HFBackend("models/tiny")), SimulatedStudent, batch_size=16)
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    specs = list(specs)
    seat = tutor_seat(tutor)
    width = min(batch_size, seat.limit or batch_size)
    seat.start(specs)
    records: list[EpisodeRecord | None] = [None] * len(specs)
    queue = iter(enumerate(specs))
    active: list[Episode] = []
    env_kwargs: dict[str, Any] = {"reward": reward} if reader is None else {"reward": reward, "reader": reader}

    def start(index: int, spec: EpisodeSpec) -> Episode:
        env = tutoring_v0.env(**spec.env_kwargs(), **env_kwargs)
        env.reset(seed=spec.seed)
        seat.begin(index, derive_seed(spec.seed, "tutor"))
        student = make_student(spec.persona)
        student.reset(seed=derive_seed(spec.seed, "student"))
        return Episode(index, spec, env, student)

    if width > 1 and observer is None and getattr(getattr(seat, "tutor", None), "concurrent_turns", False):
        return _pipelined(specs, seat, width, start, tutor_name, on_record, strict)
    pool: ThreadPoolExecutor | None = None
    lockstep: bool | None = None  # decided on the first episode: threads pay off only when seats wait on a model
    exhausted = False
    try:
        while True:
            while not exhausted and len(active) < width:
                nxt = next(queue, None)
                if nxt is None:
                    exhausted = True
                    break
                active.append(start(*nxt))
            if lockstep is None and active:
                lockstep = width > 1 and observer is None and _calls_model(active[0])
                if lockstep:
                    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="tutorzoo-episode")
            todo = [ep for ep in active if ep.waiting is None and not ep.done]
            if pool is not None and len(todo) > 1:
                for future in Gate().run([partial(_step_and_advance, ep, strict) for ep in todo], pool):
                    future.result()  # a strict run's exception surfaces here, in episode order
            else:
                for ep in todo:
                    if ep.reply is not None:
                        _step_and_advance(ep, strict)
                    else:
                        _advance(ep, observer, strict)
            finished = [ep for ep in active if ep.done]
            for ep in finished:
                records[ep.index] = episode_record(ep.env, ep.spec, tutor_name, ep.student, ep.failures)
                if on_record is not None:
                    on_record(records[ep.index])  # type: ignore[arg-type]
            active = [ep for ep in active if not ep.done]
            if finished and not exhausted:
                continue  # fill the freed slots before the tutor's call, so the batch stays full
            if not active:
                break
            try:
                replies = seat.ask(active, strict)
            except StopEpisode:  # only a one-at-a-time tutor stops its (single) episode this way
                for ep in active:
                    ep.end()
                continue
            for ep, (text, failure) in zip(active, replies, strict=True):
                if failure is not None:
                    ep.end(failure)
                    continue
                info = ep.waiting[1]  # type: ignore[index]
                ep.waiting = None
                if lockstep:  # the reply is stepped by the episode's worker, beside the others' requests
                    ep.reply = text if text is not None else ""
                    continue
                ep.env.unwrapped.step(text)
                if observer is not None:
                    observer.after_tutor(ep, info)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return records  # type: ignore[return-value]


__all__ = [
    "BatchOfOne", "Episode", "Observer", "TutorSeat", "advance", "episode_record", "is_batched", "play", "tutor_seat",
]
