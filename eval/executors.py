"""Where a run's chunks are played: in this process, on a local process pool, or as Ray tasks.

A :class:`Chunk` is one task for a worker (some units of one tutor, with what rebuilds tutor, judge and kind);
:func:`run_chunk` plays it in whatever process runs it and returns one JSONL line per unit. The executors
(``_run_inline``, ``_run_pool``, ``_run_ray``) hand each finished chunk's lines to the harness's ``on_done``
(:func:`tutorzoo.eval.runner.run_suite` writes them). A chunk whose worker dies is re-run alone, then recorded as a
``harness`` failure; see steps 4 and 6 of :mod:`tutorzoo.eval.runner`.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.kinds import kind_for

if TYPE_CHECKING:
    from tutorzoo.eval.suite import Suite


# ---------------------------------------------------------------------------------------------- chunks


@dataclass(frozen=True)
class Chunk:
    """One task for a worker: some units of one tutor (and the settings to rebuild tutor, judge and kind)."""

    index: int
    suite: Suite
    tutor: str
    tutor_kwargs: dict[str, Any]
    judge: dict[str, Any] | None  # JudgeConfig.model_dump(); None = no judge
    units: tuple[Any, ...]
    batch_size: int
    spec: str = ""  # what builds the tutor (registry name, model, import path) when ``tutor`` is a display name


_TUTORS: dict[tuple[str, str], Any] = {}
_JUDGES: dict[str, Any] = {}


def _tutor(name: str, kwargs: dict[str, Any]) -> Any:
    """This process's tutor for ``(name, kwargs)``, built once (a model tutor loads its model once per worker)."""
    key = (name, json.dumps(kwargs, sort_keys=True, default=str))
    if key not in _TUTORS:
        from tutorzoo.agents.tutor.registry import make_tutor

        _TUTORS[key] = make_tutor(name, **kwargs)
    return _TUTORS[key]


def _judge(config: dict[str, Any] | None) -> Any:
    if config is None:
        return None
    key = json.dumps(config, sort_keys=True, default=str)
    if key not in _JUDGES:
        from tutorzoo.eval.judges import Judge, JudgeConfig

        _JUDGES[key] = Judge(JudgeConfig.model_validate(config))
    return _JUDGES[key]


def _dump(record: dict) -> str:
    """One JSONL line, exactly as :class:`tutorzoo.eval.rollout.JsonlWriter` writes it."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


def _failure(agent: str, error: str, trace: str = "") -> dict:
    return {"agent": agent, "phase": None, "turn": None, "error": error, "traceback": trace}


def failure_lines(chunk: Chunk, failure: dict) -> list[str]:
    """Records (as JSONL lines) for the units of a chunk that could not be run, each holding ``failure``."""
    kind = kind_for(chunk.suite)
    make = getattr(kind, "failure_record", None)
    lines = []
    for unit in chunk.units:
        record = None
        if callable(make):
            try:
                record = make(unit, chunk.tutor, dict(failure))
            except Exception:  # the kind cannot even describe the unit: the base fields still record it
                record = None
        if record is None:
            record = {"key": unit.key(), "tutor": chunk.tutor, "unit": unit.model_dump(), "failures": [dict(failure)],
                      "judgments": []}
        lines.append(_dump(record))
    return lines


def run_chunk(chunk: Chunk) -> list[str]:
    """Play one chunk (in whatever process runs it); one JSONL line per unit, in the chunk's order.

    A tutor that cannot be built, or a kind's ``run`` that raises, fails the units it did not finish (recorded
    as failures); the records it finished are kept.
    """
    kind = kind_for(chunk.suite)
    agent = "tutor"
    try:  # a tutor or judge that cannot be built (a model path that does not exist...) fails the chunk's units
        tutor = _tutor(chunk.spec or chunk.tutor, chunk.tutor_kwargs)
        agent = "judge"
        judge = _judge(chunk.judge)
    except Exception as exc:
        return failure_lines(chunk, _failure(agent, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=3)))
    lines: list[str] = []
    try:
        for unit, record in zip(chunk.units, kind.run(chunk.units, tutor, chunk.tutor, judge, chunk.batch_size),
                                strict=False):
            record.setdefault("key", unit.key())
            if record["key"] != unit.key() or record.get("tutor") != chunk.tutor:
                raise RuntimeError(f"kind {kind.name!r} returned the record of ({record.get('tutor')!r}, "
                                   f"{record['key']!r}) for ({chunk.tutor!r}, {unit.key()!r}); run must keep order")
            lines.append(_dump(record))
    except Exception as exc:  # the units played so far keep their records; the rest record the error
        lines += failure_lines(replace(chunk, units=chunk.units[len(lines):]),
                               _failure("harness", f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=3)))
    if len(lines) < len(chunk.units):
        lines += failure_lines(replace(chunk, units=chunk.units[len(lines):]),
                               _failure("harness", f"RuntimeError: kind {kind.name!r} returned fewer records "
                                                   "than units"))
    return lines


def _worker_init(main_pid: int) -> None:
    """Worker start-up: exit when the main process is gone (a killed run must not leave orphans behind)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent or not _alive(main_pid):
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="tutorzoo-orphan-watch").start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---------------------------------------------------------------------------------------------- executors

OnDone = Callable[[Chunk, list[str]], None]


def _crash_lines(chunk: Chunk, what: str) -> list[str]:
    return failure_lines(chunk, _failure("harness", f"WorkerCrashed: {what}; the chunk's {len(chunk.units)} units "
                                                    "were not played"))


def _run_inline(chunks: Iterable[Chunk], on_done: OnDone) -> None:
    for chunk in chunks:
        on_done(chunk, run_chunk(chunk))


# imported once by the fork server, so that every worker forked from it starts warm
_PRELOAD = ["tutorzoo.eval.executors", "tutorzoo.eval.kinds.episodes", "tutorzoo.eval.batch", "tutorzoo.agents.student",
            "tutorzoo.agents.tutor.registry", "tutorzoo.envs.tutoring_v0", "tutorzoo.eval.metrics"]


def _mp_context() -> Any:
    """forkserver (workers fork from a clean, pre-warmed server process) where the platform has it, else spawn;
    never plain fork, which would copy this process's threads and locks."""
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return mp.get_context("spawn")


def _run_pool(chunks: Sequence[Chunk], workers: int, on_done: OnDone) -> None:
    """Chunks on a process pool, at most ``2 * workers`` in flight. When a worker dies (the pool breaks), the
    chunks that were in flight are re-run one at a time on a fresh pool: a chunk that kills its worker alone is
    recorded as failed, the others are played normally."""
    ctx = _mp_context()
    pending: deque[Chunk] = deque(chunks)
    suspects: deque[Chunk] = deque()
    while pending or suspects:
        isolated = bool(suspects)
        source = suspects if isolated else pending
        limit = 1 if isolated else 2 * workers
        pool = ProcessPoolExecutor(max_workers=1 if isolated else workers, mp_context=ctx, initializer=_worker_init,
                                   initargs=(os.getpid(),))
        in_flight: dict[Future, Chunk] = {}
        broken = False
        try:
            while (source or in_flight) and not broken:
                while source and len(in_flight) < limit:
                    chunk = source.popleft()
                    in_flight[pool.submit(run_chunk, chunk)] = chunk
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                if any(isinstance(f.exception(), BrokenProcessPool) for f in done):
                    broken = True
                    wait(in_flight)  # the others resolve at once: with a result, or broken too
                    done = set(in_flight)
                for fut in sorted(done, key=lambda f: in_flight[f].index):
                    chunk = in_flight.pop(fut)
                    exc = fut.exception()
                    if exc is None:
                        on_done(chunk, fut.result())
                    elif isinstance(exc, BrokenProcessPool):
                        if isolated:
                            on_done(chunk, _crash_lines(chunk, f"the worker process died ({exc})"))
                        else:
                            suspects.append(chunk)
                    else:  # e.g. a unit that cannot be pickled: the chunk fails, the pool is fine
                        on_done(chunk, failure_lines(chunk, _failure("harness", f"{type(exc).__name__}: {exc}")))
        except BaseException:  # Ctrl-C (or a bug here): stop the workers now; what is written stays written
            _terminate(pool)
            raise
        finally:
            pool.shutdown(wait=not broken, cancel_futures=True)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop a pool's worker processes at once (their unfinished chunks are re-run by ``--resume``)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def _ray_module() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("--executor ray needs Ray: pip install 'tutorzoo[ray]'") from exc
    return ray


def _user_pythonpath() -> str:
    """This process's import path minus the interpreter's own folders, for local Ray workers (so import-path
    tutors such as ``my_pkg.tutors:MyTutor`` resolve there too)."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    keep = [p for p in sys.path if p and os.path.isdir(p)
            and not any(os.path.realpath(p).startswith(pre) for pre in prefixes)]
    extra = os.environ.get("PYTHONPATH", "")
    # the folder the command runs in last: import-path tutors are looked up there (envs.import_path)
    return os.pathsep.join(dict.fromkeys([*keep, *(x for x in extra.split(os.pathsep) if x), os.getcwd()]))


def _run_ray(chunks: Sequence[Chunk], workers: int, ray_address: str | None, on_done: OnDone) -> None:
    """The same chunks as Ray tasks. Joins ``ray_address`` (``"auto"`` or ``ray://host:10001``), or a Ray
    instance this process already started, or starts a local one (shut down at the end).

    Tutors and judges are built on the workers, and their backends read API keys from the workers'
    environment (``$OPENAI_API_KEY``): a local instance inherits this process's; on a cluster, set it there
    (never in a config). The code must be importable on the workers (the package installed, or a
    ``runtime_env`` with a ``working_dir``)."""
    ray = _ray_module()
    started = False
    if not ray.is_initialized():
        if ray_address:
            ray.init(address=ray_address, log_to_driver=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": {"PYTHONPATH": _user_pythonpath()}})
        started = True
    try:
        task = ray.remote(max_retries=0)(run_chunk)
        capacity = int(ray.cluster_resources().get("CPU", workers) or workers)
        limit = 2 * max(1, capacity)
        pending: deque[Chunk] = deque(chunks)
        in_flight: dict[Any, Chunk] = {}
        while pending or in_flight:
            while pending and len(in_flight) < limit:
                chunk = pending.popleft()
                in_flight[task.remote(chunk)] = chunk
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in ready:
                chunk = in_flight.pop(ref)
                try:
                    lines = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # raised by our code outside the kind's run
                    lines = failure_lines(chunk, _failure("harness", f"{type(exc.cause).__name__}: {exc.cause}"))
                except ray.exceptions.RayError as exc:  # the worker died, the node was lost...
                    lines = _crash_lines(chunk, f"Ray task failed ({type(exc).__name__}: {str(exc).splitlines()[0]})")
                on_done(chunk, lines)
    finally:
        if started:
            ray.shutdown()
