"""The benchmark harness: a suite's (tutor, unit) pairs run in chunks on local processes or Ray tasks, each
record appended to a JSONL file as it finishes, resumable after a kill, with the same metrics either way.

How a run goes (:func:`run_suite`):

1. The suite's kind (:mod:`eval.kinds`) gives the units of the split (first ``limit`` of them); the work is
   every tutor x every unit, in this *canonical order* (tutor order, then unit order).
2. ``OUT/run.json`` records what the run is (suite, version, kind, split, tutors, limit, judge settings). An
   existing non-empty output is never overwritten unless asked (``overwrite=True``): ``resume=True`` continues
   it when its ``run.json`` says it is the same run (else a :class:`~envs.errors.ConfigError` names the
   difference); without either the run refuses and names ``--resume``, ``--overwrite`` or a new ``--out``.
   A truncated last line (a writer killed mid-line) is dropped; the (tutor, key) pairs already recorded are skipped.
3. The remaining units are cut into chunks, each ``(tutor name, tutor kwargs, judge config, units)``: a
   model tutor with ``act_batch`` gets ``batch_size`` units per chunk (one model call per turn for all of
   them), cut at fixed positions of the unit list so that a resumed run hands the model the same batches
   as an uninterrupted one; a plain tutor gets small chunks, so that the workers stay balanced. Each worker
   process builds its own tutor and judge (once per process) and plays its chunks with the kind's ``run``.
4. Executors: ``workers=1`` runs the chunks in this process; ``workers=N`` on a
   :class:`~concurrent.futures.ProcessPoolExecutor` (forkserver, or spawn where there is none) with at most
   ``2N`` chunks in flight; ``executor="ray"`` submits the same chunks as Ray tasks (a local Ray instance by
   default, ``ray_address`` to join a cluster).
5. Each record is appended to ``OUT/episodes.jsonl`` (episodes kind) or ``OUT/records.jsonl`` (other kinds)
   as its chunk finishes, one flushed line per record; a rich progress bar with ETA counts units.
6. Failures: a tutor, student or judge failure is in its record's ``failures`` (the kind records it). A
   chunk whose worker process dies is first re-run alone, so that only the chunk that kills its worker is
   blamed; its units are then recorded as failures (``agent: "harness"``) and the run goes on. Finished
   records are never lost.
7. The result holds every record sorted into canonical order, so the metrics computed from it (and
   ``metrics.json``) are byte-identical between an uninterrupted run, an interrupted run plus its resume,
   one worker or many, the local executor or Ray.

Example::

    from eval.runner import run_suite
    from eval.suite import load_suite
    result = run_suite(load_suite("default"), Path("runs/default"), limit=10, workers=2)
    result.records[0]["tutor"], result.failures["n_records_with_failures"]
"""

from __future__ import annotations

import json
import math
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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from envs.errors import ConfigError, DatasetError
from eval.kinds import kind_for

if TYPE_CHECKING:
    from rich.console import Console

    from eval.suite import Suite

Executor = Literal["local", "ray"]
RUN_FILE = "run.json"
DEFAULT_RECORDS_FILE = "records.jsonl"
MAX_PLAIN_CHUNK = 16  # units per chunk for a tutor without act_batch (finer = better balance, less lost on a crash)
# tutor options that do not change what a run computes: they may differ on --resume
_NON_IDENTITY_KWARGS = ("base_url", "cache_dir")


def default_workers() -> int:
    """``min(2, cpu count)``: the default ``--workers``."""
    return max(1, min(2, os.cpu_count() or 1))


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
        from agents.tutor.registry import make_tutor

        _TUTORS[key] = make_tutor(name, **kwargs)
    return _TUTORS[key]


def _judge(config: dict[str, Any] | None) -> Any:
    if config is None:
        return None
    key = json.dumps(config, sort_keys=True, default=str)
    if key not in _JUDGES:
        from eval.judges import Judge, JudgeConfig

        _JUDGES[key] = Judge(JudgeConfig.model_validate(config))
    return _JUDGES[key]


def _dump(record: dict) -> str:
    """One JSONL line, exactly as :class:`eval.rollout.JsonlWriter` writes it."""
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
_PRELOAD = ["eval.runner", "eval.kinds.episodes", "eval.batch", "agents.student", "agents.tutor.registry",
            "envs.tutoring_v0", "eval.metrics"]


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
    return os.pathsep.join(dict.fromkeys([*keep, *(x for x in extra.split(os.pathsep) if x)]))


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


# ---------------------------------------------------------------------------------------------- output files


def read_records(path: Path, repair: bool = False) -> list[dict]:
    """The records of a JSONL output. A truncated or unparsable *last* line (a writer killed mid-line) is
    dropped, and with ``repair`` cut from the file so appends continue cleanly; a bad line elsewhere is a
    :class:`~envs.errors.DatasetError` (the file was edited or corrupted: nothing is guessed)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    records: list[dict] = []
    pos, number = 0, 0
    while pos < len(data):
        newline = data.find(b"\n", pos)
        end = len(data) if newline == -1 else newline + 1
        raw, number = data[pos:end], number + 1
        if raw.strip():
            try:
                record = json.loads(raw)
                if not isinstance(record, dict) or "tutor" not in record:
                    raise ValueError("not a record object with a 'tutor'")
            except ValueError as exc:
                if end < len(data):
                    raise DatasetError(f"{path}:{number}: not a JSON record ({exc}); the file is corrupted: remove "
                                       "the line or start a new --out") from None
                if repair:
                    with path.open("r+b") as fh:
                        fh.truncate(pos)
                break
            if newline == -1 and repair:  # a complete last record that lost only its newline: finish the line
                with path.open("ab") as fh:
                    fh.write(b"\n")
            records.append(record)
        pos = end
    return records


def _record_key(record: dict) -> str:
    if "key" in record:
        return str(record["key"])
    if "spec" in record:  # an episodes.jsonl written before records carried their key
        from envs.config import EpisodeSpec

        return EpisodeSpec.model_validate(record["spec"]).key()
    raise DatasetError(f"a record of tutor {record.get('tutor')!r} has no 'key'; it cannot be matched to a unit")


def _identity(suite: Suite, split: str, tutors: list[str], limit: int | None, n_units: int,
              tutor_kwargs: dict[str, Any], judge: dict[str, Any] | None, batch_size: int | None) -> dict[str, Any]:
    """What must match for ``--resume`` to continue a run (``batch_size`` only matters to batched tutors)."""
    from eval.tracking import scrub_secrets

    judge_id = None if judge is None else {k: v for k, v in judge.items() if k not in ("base_url", "cache_dir")}
    return scrub_secrets({
        "suite": suite.name, "version": suite.version, "kind": suite.kind, "split": split, "tutors": tutors,
        "limit": limit, "units": n_units,
        "tutor_kwargs": {k: v for k, v in sorted(tutor_kwargs.items()) if k not in _NON_IDENTITY_KWARGS},
        "judge": judge_id, "batch_size": batch_size,
    })


def _describe(ident: dict[str, Any]) -> str:
    if ident.get("command") == "rollout":
        return (f"a rollout of {ident.get('tutor')!r} with {ident.get('persona')!r} on {ident.get('task_set')} "
                f"({ident.get('episodes')} episodes, seed {ident.get('seed')})")
    if "suite" not in ident:
        return "another kind of run"
    return (f"suite {ident.get('suite')!r} v{ident.get('version')} (split {ident.get('split')}, tutors "
            f"{ident.get('tutors')}, limit {ident.get('limit')})")


def check_out_dir(out: Path) -> None:
    """``--out`` must be a folder (or not exist yet): a file there is a one-line error naming the fix."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, but --out takes a folder (the run writes episodes.jsonl, "
                          f"metrics.json and report.md into it); give a folder, e.g. --out {out.with_suffix('')}_run")


def prepare_output(out: Path, path: Path, ident: dict[str, Any], resume: bool, overwrite: bool = False) -> list[dict]:
    """The output rule of every command that writes runs (``eval``, ``rollout``): check ``out`` against this
    run and return the records already done there (empty for a fresh run).

    A non-empty records file is refused unless ``resume`` (continue it: ``run.json`` must describe the same
    run) or ``overwrite`` (start over; only then is anything deleted); ``out`` naming a file is refused."""
    out = Path(out)
    check_out_dir(out)
    if resume and overwrite:
        raise ConfigError("--resume continues the run in --out and --overwrite starts it over: give one of them")
    run_file = out / RUN_FILE
    has_records = path.exists() and path.stat().st_size > 0 and not overwrite
    if has_records and not resume:
        n = len(read_records(path))
        raise ConfigError(f"{path} already holds {n} finished records; pass --resume to continue that run, "
                          "--overwrite to start it over, or give a new --out (finished work is never deleted "
                          "unless you ask)")
    if has_records:
        if not run_file.exists():
            raise ConfigError(f"cannot resume {out}: it has {path.name} but no {RUN_FILE} saying which suite it "
                              "belongs to; give a new --out")
        try:
            saved = json.loads(run_file.read_text(encoding="utf-8"))
        except ValueError:
            raise ConfigError(f"cannot resume {out}: {run_file} is not valid JSON; give a new --out") from None
        diff = sorted(k for k in set(saved) | set(ident) if saved.get(k) != ident.get(k))
        if diff:
            changes = "; ".join(f"{k}: {saved.get(k)!r} there, {ident.get(k)!r} now" for k in diff)
            raise ConfigError(f"cannot resume {out}: it belongs to {_describe(saved)}, not to this run "
                              f"({changes}); rerun with the same suite and options, or give a new --out")
        return read_records(path, repair=True)
    out.mkdir(parents=True, exist_ok=True)
    run_file.write_text(json.dumps(ident, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    path.write_bytes(b"")
    return []


# ---------------------------------------------------------------------------------------------- the run


@dataclass
class RunResult:
    """What :func:`run_suite` did: every record in canonical order, and how they came about."""

    suite: Suite
    kind: Any
    path: Path
    tutors: list[str]
    n_units: int
    records: list[dict]
    judged: bool
    resumed: int
    ran: int
    elapsed: float
    failures: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def failure_summary(records: Sequence[dict]) -> dict[str, Any]:
    """Records with failures, per tutor and per ``agent: ErrorType`` (counting failures), in sorted order."""
    by_tutor: dict[str, int] = {}
    by_error: dict[str, int] = {}
    by_tutor_error: dict[str, dict[str, int]] = {}
    n_failures = 0
    for record in records:
        failures = record.get("failures") or []
        if not failures:
            continue
        tutor = str(record.get("tutor"))
        by_tutor[tutor] = by_tutor.get(tutor, 0) + 1
        for f in failures:
            n_failures += 1
            error = str(f.get("error", "")) if isinstance(f, dict) else str(f)
            etype = error.split(":", 1)[0].strip() if ":" in error else (error[:60] or "unknown")
            name = f"{f.get('agent', '?') if isinstance(f, dict) else '?'}: {etype}"
            by_error[name] = by_error.get(name, 0) + 1
            per = by_tutor_error.setdefault(tutor, {})
            per[name] = per.get(name, 0) + 1
    return {
        "n_records_with_failures": sum(by_tutor.values()),
        "n_failures": n_failures,
        "by_tutor": dict(sorted(by_tutor.items())),
        "by_error": dict(sorted(by_error.items())),
        "by_tutor_error": {t: dict(sorted(v.items())) for t, v in sorted(by_tutor_error.items())},
    }


def has_hard_failure(record: dict) -> bool:
    """A tutor, student or harness failure: the unit was not played to the end, so it is not scored. A judge
    failure loses a judged metric only."""
    return any(not (isinstance(f, dict) and f.get("agent") == "judge") for f in record.get("failures") or [])


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def tutor_health(records: Sequence[dict], tutors: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per tutor, what its numbers rest on: ``n`` records, ``scored`` (no failure recorded, so its metrics are
    the tutor's own play), ``failed``, the error types of its failures, and its tutor turns with the share that
    were invalid (empty, not text, not language) or clipped (over-long or with control characters).

    ``invalid_share`` / ``clipped_share`` are None for records without turn counts (item suites).
    Example: ``tutor_health(records)["socratic"]["invalid_share"]``."""
    health: dict[str, dict[str, Any]] = {str(t): {"n": 0, "scored": 0, "failed": 0, "errors": {}, "turns": 0,
                                                  "invalid_turns": 0, "clipped_turns": 0} for t in tutors or []}
    for record in records:
        h = health.setdefault(str(record.get("tutor")), {"n": 0, "scored": 0, "failed": 0, "errors": {},
                                                         "turns": 0, "invalid_turns": 0, "clipped_turns": 0})
        h["n"] += 1
        failures = record.get("failures") or []
        if has_hard_failure(record):
            h["failed"] += 1
        else:
            h["scored"] += 1
        if failures:
            for f in failures:
                error = str(f.get("error", "")) if isinstance(f, dict) else str(f)
                etype = error.split(":", 1)[0].strip() if ":" in error else (error[:60] or "unknown")
                name = f"{f.get('agent', '?') if isinstance(f, dict) else '?'}: {etype}"
                h["errors"][name] = h["errors"].get(name, 0) + 1
        turns = record.get("n_tutor_turns")
        if isinstance(turns, int):
            h["turns"] += turns
            h["invalid_turns"] += int((record.get("invalid_turns") or {}).get("tutor", 0))
            h["clipped_turns"] += int((record.get("clipped_turns") or {}).get("tutor", 0))
    for h in health.values():
        h["errors"] = dict(sorted(h["errors"].items()))
        h["invalid_share"] = _share(h["invalid_turns"], h["turns"])
        h["clipped_share"] = _share(h["clipped_turns"], h["turns"])
    return health


def health_warnings(health: dict[str, dict[str, Any]]) -> list[str]:
    """One plain sentence per tutor whose numbers cannot be trusted: nothing scored, some episodes failed,
    most turns invalid or clipped."""
    lines = []
    for tutor, h in health.items():
        errors = ", ".join(f"{e} x{n}" for e, n in h["errors"].items())
        if h["n"] and not h["scored"]:
            lines.append(f"error: tutor {tutor} scored nothing: all {h['n']} failed ({errors})")
        elif h["failed"]:
            lines.append(f"warning: tutor {tutor}: {h['failed']} of {h['n']} failed ({errors}); its metrics "
                         f"rest on the {h['scored']} scored")
        if h["invalid_share"] is not None and h["invalid_share"] > 0.5:
            lines.append(f"warning: tutor {tutor}: {h['invalid_turns']} of {h['turns']} turns were invalid (empty, "
                         "not text, or not language); its scores measure the env's fallback, not the tutor")
        if h["clipped_share"] is not None and h["clipped_share"] > 0.5:
            lines.append(f"warning: tutor {tutor}: {h['clipped_turns']} of {h['turns']} turns were clipped "
                         "(cut at 4,000 characters, or changed by text normalisation)")
    return lines


def unscored_tutors(health: dict[str, dict[str, Any]]) -> list[str]:
    """Tutors with records but not one scored: a command showing them must not exit 0."""
    return [t for t, h in health.items() if h["n"] and not h["scored"]]


def _check_tutors(tutors: list[str], kwargs_of: dict[str, dict[str, Any]], spec_of: dict[str, str]) -> dict[str, bool]:
    """Fail fast on a bad tutor name (with the registry's did-you-mean); ``{name: has act_batch}``.

    Rule-based and import-path tutors are built here (cheaply); model tutors are built by the workers only, so
    a model is not loaded into this process for nothing.
    """
    from agents.tutor.registry import MODEL_PREFIXES

    if len(set(tutors)) != len(tutors):
        raise ConfigError(f"tutors must be distinct, got {tutors}; give two runs of one tutor display names "
                          "(--tutor base=hf:m --tutor tuned=hf:m --tutor-arg tuned:adapter=DIR)")
    batched: dict[str, bool] = {}
    for name in tutors:
        spec = spec_of[name]
        if spec.startswith(MODEL_PREFIXES):
            batched[name] = True
            continue
        tutor = build_tutor(spec, kwargs_of[name])
        batched[name] = callable(getattr(tutor, "act_batch", None))
    return batched


def build_tutor(name: str, tutor_kwargs: dict[str, Any]) -> Any:
    """This process's tutor ``name``; a class whose constructor does not fit the given options is a
    :class:`~envs.errors.ConfigError` that says how to pass constructor arguments (``--tutor-arg``)."""
    try:
        return _tutor(name, tutor_kwargs)
    except TypeError as exc:
        given = (f"the options {sorted(tutor_kwargs)}" if tutor_kwargs else "no arguments")
        raise ConfigError(f"tutor {name!r} cannot be built with {given} ({exc}); pass its constructor arguments "
                          "with --tutor-arg KEY=VALUE (repeatable; values are read as YAML: numbers, booleans, "
                          "strings)") from None


def _chunks(suite: Suite, units: list[Any], pending: dict[str, set[str]], batched: dict[str, bool],
            tutor_kwargs: dict[str, Any], judge: dict[str, Any] | None, batch_size: int, workers: int,
            spec_of: dict[str, str] | None = None, kwargs_of: dict[str, dict[str, Any]] | None = None) -> list[Chunk]:
    """The chunks of the units still to run (``pending[tutor]`` = their keys), in canonical order.

    A batched tutor's chunks are the suite's units cut at fixed positions (``batch_size`` each) minus those
    already done: a fresh run and a resumed one hand a model the very same batches (a sampling model is seeded
    per batch call), whatever the worker count or executor. A plain tutor's records do not depend on their
    chunk, which is sized for balance (about four chunks per worker, at most ``MAX_PLAIN_CHUNK`` units).
    """
    chunks: list[Chunk] = []
    for tutor, keys in pending.items():
        if not keys:
            continue
        if batched[tutor]:
            groups = [units[i:i + batch_size] for i in range(0, len(units), batch_size)]
        else:
            size = max(1, min(MAX_PLAIN_CHUNK, math.ceil(len(keys) / (4 * max(1, workers)))))
            todo = [u for u in units if u.key() in keys]
            groups = [todo[i:i + size] for i in range(0, len(todo), size)]
        for group in groups:
            todo = tuple(u for u in group if u.key() in keys)
            if todo:
                spec = (spec_of or {}).get(tutor, tutor)
                kwargs = (kwargs_of or {}).get(tutor, tutor_kwargs)
                chunks.append(Chunk(len(chunks), suite, tutor, dict(kwargs), judge, todo, batch_size,
                                    "" if spec == tutor else spec))
    return chunks


def run_suite(
    suite: Suite,
    out: Path,
    *,
    tutors: list[str] | None = None,
    split: Literal["all", "train", "held_out"] = "all",
    limit: int | None = None,
    tutor_kwargs: dict[str, Any] | None = None,
    batch_size: int = 16,
    workers: int | None = None,
    executor: Executor = "local",
    ray_address: str | None = None,
    judge_config: Any | None = None,
    resume: bool = False,
    overwrite: bool = False,
    seed: int | None = None,
    replicates: int = 1,
    tutor_specs: dict[str, str] | None = None,
    tutor_options: dict[str, dict[str, Any]] | None = None,
    console: Console | None = None,
) -> RunResult:
    """Run ``suite`` (every tutor x every unit of ``split``, the first ``limit`` units) into ``out``.

    ``judge_config`` is a :class:`eval.judges.JudgeConfig` (or None: judge-only metrics are not computed);
    the suite's ``judge:`` defaults fill the fields it leaves unset. ``seed`` (episodes suites) replaces each
    episode's seed ``s`` by :func:`eval.rollout.episode_seed` ``(seed, s)``, so that runs with different seeds
    share no episode (None: the suite's own seeds); ``replicates=K`` plays the units K times, replicate ``r``
    with run seed ``seed + r`` (``seed`` defaults to 0 then), each record marked with its ``replicate`` and
    ``run_seed``, for test-retest variance. ``tutor_specs`` maps a tutor's display name (as in ``tutors`` and
    the records) to what builds it, so that one model can appear twice (``{"base": "hf:m", "tuned": "hf:m"}``);
    ``tutor_options`` adds per-tutor options over ``tutor_kwargs``. See the module docstring for the rest.
    With ``workers > 1`` a script must call it under ``if __name__ == "__main__":``, as any code that starts
    worker processes (the ``tutorzoo`` command does).

    Example::

        result = run_suite(load_suite("default"), Path("runs/d"), limit=4, workers=2)
        result = run_suite(load_suite("default"), Path("runs/d"), limit=4, resume=True)  # nothing left to do
    """
    if batch_size < 1:
        raise ConfigError(f"--batch-size must be >= 1, got {batch_size}")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}")
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {workers}")
    if executor not in ("local", "ray"):
        raise ConfigError(f"--executor must be local or ray, got {executor!r}")
    if resume and overwrite:
        raise ConfigError("--resume continues the run in --out and --overwrite starts it over: give one of them")
    if replicates < 1:
        raise ConfigError(f"--replicates must be >= 1, got {replicates}")
    if seed is not None and seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {seed}")
    if replicates > 1 and seed is None:
        seed = 0
    if seed is not None and suite.kind != "episodes":
        raise ConfigError(f"--seed and --replicates apply to episodes suites; suite {suite.name!r} is of kind "
                          f"{suite.kind!r}, whose units are fixed items")
    start = time.perf_counter()
    kind = kind_for(suite)
    tutors = list(tutors or suite.tutors)
    tutor_kwargs = dict(tutor_kwargs or {})
    units = suite.units(split)
    if limit is not None:
        units = units[:limit]
    if not units:
        raise ConfigError(f"suite {suite.name!r} has no units in split {split!r}")
    replicate_of: dict[str, tuple[int, int]] = {}
    if seed is not None:
        from eval.rollout import episode_seed

        seeded = []
        for r in range(replicates):
            for unit in units:
                new_unit = unit.model_copy(update={"seed": episode_seed(seed + r, unit.seed)})
                replicate_of[new_unit.key()] = (r, seed + r)
                seeded.append(new_unit)
        units = seeded
    notes: list[str] = []
    judge_config = suite.judge_config(judge_config)
    if judge_config is not None and not suite.rubrics:
        notes.append(f"suite {suite.name!r} scores no judge rubric; the judge is not used")
        judge_config = None
    judge = None if judge_config is None else judge_config.model_dump()
    spec_of = {t: (tutor_specs or {}).get(t, t) for t in tutors}
    kwargs_of = {t: {**tutor_kwargs, **(tutor_options or {}).get(t, {})} for t in tutors}
    unknown = sorted(set(tutor_options or {}) - set(tutors))
    if unknown:
        raise ConfigError(f"--tutor-arg names tutors {unknown}, which are not in this run (tutors: {tutors})")
    batched = _check_tutors(tutors, kwargs_of, spec_of)
    if judge is not None and not str(judge.get("backend", "")).startswith("hf:"):
        _judge(judge)  # an API judge is cheap to build: a bad setting fails here, not once per unit

    out = Path(out)
    path = out / getattr(kind, "records_file", DEFAULT_RECORDS_FILE)
    ident = _identity(suite, split, tutors, limit, len(units), tutor_kwargs, judge,
                      batch_size if any(batched.values()) else None)
    if seed is not None:  # absent otherwise, so that the run.json of an unseeded run is unchanged
        ident.update({"seed": seed, "replicates": replicates})
    if any(spec_of[t] != t for t in tutors) or tutor_options:  # likewise: only for runs that use them
        from eval.tracking import scrub_secrets

        ident["tutor_specs"] = {t: spec_of[t] for t in tutors}
        ident["tutor_options"] = scrub_secrets({t: {k: v for k, v in sorted((tutor_options or {}).get(t, {}).items())
                                                    if k not in _NON_IDENTITY_KWARGS} for t in tutors})
    previous = prepare_output(out, path, ident, resume, overwrite)

    order = {(t, u.key()): (i, j) for i, t in enumerate(tutors) for j, u in enumerate(units)}
    if len(order) != len(tutors) * len(units):
        raise ConfigError(f"suite {suite.name!r}: two units share a key; unit keys must be unique")
    done: dict[tuple[str, str], dict] = {}
    for record in previous:
        pair = (str(record["tutor"]), _record_key(record))
        if pair not in order:
            raise ConfigError(f"cannot resume {out}: {path.name} holds a record ({pair[0]}, {pair[1]}) that is not "
                              "part of this run; give a new --out")
        done.setdefault(pair, record)  # a duplicate line (never written by us) counts once
    pending = {t: {u.key() for u in units if (t, u.key()) not in done} for t in tutors}
    chunks = _chunks(suite, units, pending, batched, tutor_kwargs, judge, batch_size, workers, spec_of, kwargs_of)
    total = len(order)
    collected: dict[tuple[str, str], dict] = dict(done)
    if console is not None:
        what = "episodes" if kind.name == "episodes" else f"{kind.name} units"
        how = f"Ray{' at ' + ray_address if ray_address else ''}" if executor == "ray" else \
            f"{workers} worker{'s' if workers > 1 else ''}"
        console.print(f"Suite [bold]{suite.name}[/bold] v{suite.version} ({split}): {len(units)} {what} x "
                      f"{len(tutors)} tutors -> {out} ({how})")
        if done:
            console.print(f"Resuming: {len(done)} of {total} records already done, {total - len(done)} to run.")
        for note in notes:
            console.print(f"[yellow]{note}[/yellow]")

    progress = _progress(console) if console is not None else None
    fh = path.open("a", encoding="utf-8")
    try:
        bar = None
        if progress is not None:
            progress.start()
            bar = progress.add_task("units", total=total, completed=len(done))

        def on_done(chunk: Chunk, lines: list[str]) -> None:
            for line in lines:
                record = json.loads(line)  # the record as the file holds it: a resumed run reads the same
                if replicate_of:
                    key = _record_key(record)
                    if key in replicate_of:
                        record["replicate"], record["run_seed"] = replicate_of[key]
                        line = _dump(record)
                fh.write(line + "\n")
                fh.flush()
                collected.setdefault((chunk.tutor, _record_key(record)), record)
                if progress is not None:
                    progress.advance(bar)

        if not chunks:
            pass
        elif executor == "ray":
            _run_ray(chunks, workers, ray_address, on_done)
        elif workers == 1:
            _run_inline(chunks, on_done)
        else:
            _run_pool(chunks, workers, on_done)
    finally:
        fh.close()
        if progress is not None:
            progress.stop()

    missing = [pair for pair in order if pair not in collected]
    if missing:  # cannot happen unless a kind drops units; never report metrics over a partial run silently
        raise RuntimeError(f"{len(missing)} (tutor, unit) pairs have no record, e.g. {missing[0]}")
    records = [collected[pair] for pair in sorted(order, key=order.__getitem__)]
    return RunResult(suite=suite, kind=kind, path=path, tutors=tutors, n_units=len(units), records=records,
                     judged=judge is not None, resumed=len(done), ran=len(collected) - len(done),
                     elapsed=time.perf_counter() - start, failures=failure_summary(records), notes=notes)


def _progress(console: Console) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=console, transient=True)
