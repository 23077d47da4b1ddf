"""The benchmark harness: a suite's (tutor, unit) pairs run in chunks on local processes or Ray tasks, each
record appended to a JSONL file as it finishes, resumable after a kill, with the same metrics either way.

How a run goes (:func:`run_suite`):

1. The suite's kind (:mod:`tutorzoo.eval.kinds`) gives the units of the split (first ``limit`` of them); the work is
   every tutor x every unit, in this *canonical order* (tutor order, then unit order).
2. ``OUT/run.json`` records what the run is (suite, version, kind, split, tutors, limit, judge settings). An
   existing non-empty output is never overwritten unless asked (``overwrite=True``): ``resume=True`` continues
   it when its ``run.json`` says it is the same run (else a :class:`~tutorzoo.envs.errors.ConfigError` names the
   difference); without either the run refuses and names ``--resume``, ``--overwrite`` or a new ``--out``.
   A truncated last line (a writer killed mid-line) is dropped; the (tutor, key) pairs already recorded are skipped.
3. The remaining units are cut into chunks, each ``(tutor name, tutor kwargs, judge config, units)``: a
   batched (model) tutor gets ``batch_size`` units per chunk (one model call per turn for all of
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

    from tutorzoo.eval.runner import run_suite
    from tutorzoo.eval.suite import load_suite
    result = run_suite(load_suite("default"), Path("runs/default"), limit=10, workers=2)
    result.records[0]["tutor"], result.failures["n_records_with_failures"]
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.executors import (
    Chunk,
    failure_lines,
    jsonl_line,
    run_chunk,
    run_inline,
    run_pool,
    run_ray,
    worker_judge,
    worker_tutor,
)
from tutorzoo.eval.kinds import kind_for
from tutorzoo.eval.run_folder import (
    DEFAULT_RECORDS_FILE,
    NON_IDENTITY_KWARGS,
    RUN_FILE,
    check_out_dir,
    prepare_output,
    read_records,
    record_key,
    run_identity,
)
from tutorzoo.eval.run_health import (
    failure_kind,
    failure_summary,
    has_hard_failure,
    health_warnings,
    tutor_health,
    unscored_tutors,
)

if TYPE_CHECKING:
    from rich.console import Console

    from tutorzoo.eval.suite import Suite

Executor = Literal["local", "ray"]
MAX_PLAIN_CHUNK = 16  # units per chunk for an unbatched tutor (finer = better balance, less lost on a crash)


def default_workers() -> int:
    """``min(2, cpu count)``: the default ``--workers``."""
    return max(1, min(2, os.cpu_count() or 1))

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


def _check_tutors(tutors: list[str], kwargs_of: dict[str, dict[str, Any]], spec_of: dict[str, str]) -> dict[str, bool]:
    """Fail fast on a bad tutor name (with the registry's did-you-mean); ``{name: batched}``, as
    :func:`tutorzoo.envs.engine.is_batched` says.

    Rule-based and import-path tutors are built here (cheaply); model tutors are built by the workers only, so
    a model is not loaded into this process for nothing.
    """
    from tutorzoo.agents.tutor.registry import MODEL_PREFIXES
    from tutorzoo.envs.engine import is_batched

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
        batched[name] = is_batched(tutor)
    return batched


def build_tutor(name: str, tutor_kwargs: dict[str, Any]) -> Any:
    """This process's tutor ``name``; a class whose constructor does not fit the given options is a
    :class:`~tutorzoo.envs.errors.ConfigError` that says how to pass constructor arguments (``--tutor-arg``)."""
    try:
        return worker_tutor(name, tutor_kwargs)
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

    ``judge_config`` is a :class:`tutorzoo.eval.judges.JudgeConfig` (or None: judge-only metrics are not computed);
    the suite's ``judge:`` defaults fill the fields it leaves unset. ``seed`` (episodes suites) replaces each
    episode's seed ``s`` by :func:`tutorzoo.eval.rollout.episode_seed` ``(seed, s)``, so that runs with different seeds
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
        from tutorzoo.eval.rollout import episode_seed

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
        worker_judge(judge)  # an API judge is cheap to build: a bad setting fails here, not once per unit

    out = Path(out)
    path = out / getattr(kind, "records_file", DEFAULT_RECORDS_FILE)
    ident = run_identity(suite, split, tutors, limit, len(units), tutor_kwargs, judge,
                         batch_size if any(batched.values()) else None)
    if seed is not None:  # absent otherwise, so that the run.json of an unseeded run is unchanged
        ident.update({"seed": seed, "replicates": replicates})
    if any(spec_of[t] != t for t in tutors) or tutor_options:  # likewise: only for runs that use them
        from tutorzoo.eval.tracking import scrub_secrets

        ident["tutor_specs"] = {t: spec_of[t] for t in tutors}
        ident["tutor_options"] = scrub_secrets({t: {k: v for k, v in sorted((tutor_options or {}).get(t, {}).items())
                                                    if k not in NON_IDENTITY_KWARGS} for t in tutors})
    previous = prepare_output(out, path, ident, resume, overwrite)

    order = {(t, u.key()): (i, j) for i, t in enumerate(tutors) for j, u in enumerate(units)}
    if len(order) != len(tutors) * len(units):
        raise ConfigError(f"suite {suite.name!r}: two units share a key; unit keys must be unique")
    done: dict[tuple[str, str], dict] = {}
    for record in previous:
        pair = (str(record["tutor"]), record_key(record))
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

    progress = progress_bar(console) if console is not None else None
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
                    key = record_key(record)
                    if key in replicate_of:
                        record["replicate"], record["run_seed"] = replicate_of[key]
                        line = jsonl_line(record)
                fh.write(line + "\n")
                fh.flush()
                collected.setdefault((chunk.tutor, record_key(record)), record)
                if progress is not None:
                    progress.advance(bar)

        if not chunks:
            pass
        elif executor == "ray":
            run_ray(chunks, workers, ray_address, on_done)
        elif workers == 1:
            run_inline(chunks, on_done)
        else:
            run_pool(chunks, workers, on_done)
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


def progress_bar(console: Console) -> Any:
    """A transient rich progress bar with a count and ETA (``tutorzoo eval`` and ``rollout``)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=console, transient=True)


# Re-exported: the harness's public names, wherever they live.
__all__ = [
    "DEFAULT_RECORDS_FILE", "MAX_PLAIN_CHUNK", "RUN_FILE", "Chunk", "Executor", "RunResult", "build_tutor",
    "check_out_dir", "default_workers", "failure_kind", "failure_lines", "failure_summary", "has_hard_failure",
    "health_warnings", "prepare_output", "progress_bar", "read_records", "run_chunk", "run_suite", "tutor_health",
    "unscored_tutors",
]
