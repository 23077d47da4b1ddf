"""The ``tutorzoo`` commands that write runs and their reports: ``eval`` (a suite through the harness),
``rollout`` (one tutor against one persona) and ``report`` (the reports of an existing run folder).

The output rule is :func:`tutorzoo.eval.run_folder.prepare_output`'s; the exit status is :mod:`tutorzoo.eval.cli`'s.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

from rich.console import Console

from tutorzoo.envs.errors import ConfigError, TutorZooError
from tutorzoo.envs.install import install_hint
from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.eval.cli_options import (
    EXIT_ERROR,
    EXIT_NOT_SCORED,
    EXIT_OK,
    MODEL_EXTRAS,
    check_out_arg,
    check_positive,
    check_tutor_extras,
    judge_config_of,
    require_extra,
    student_of,
    tutor_kwargs_of,
    tutor_names,
)


def _run(specs, tutors: list[str], out: Path, console: Console, tutor_kwargs: dict | None = None,
         batch_size: int = 16, make_student=None) -> list[dict]:
    """Every spec with every tutor; records appended to ``out/episodes.jsonl`` as they finish (the caller
    applies the output rule first: :func:`tutorzoo.eval.runner.prepare_output`). A batched tutor (model
    tutors) plays ``batch_size`` episodes in lockstep, one model call per turn."""
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.envs.config import EpisodeSpec
    from tutorzoo.envs.engine import is_batched
    from tutorzoo.envs.records import EpisodeRecord, json_form
    from tutorzoo.eval.batch import run_batched
    from tutorzoo.eval.rollout import JsonlWriter, run_specs
    from tutorzoo.eval.runner import build_tutor, progress_bar

    make_student = make_student or SimulatedStudent
    path = out / "episodes.jsonl"
    records: list[dict] = []
    tutors_built = {name: build_tutor(name, dict(tutor_kwargs or {})) for name in tutors}  # fail before playing
    if not specs:
        return records
    with JsonlWriter(path) as writer, progress_bar(console) as progress:
        bar = progress.add_task("episodes", total=len(specs) * len(tutors))

        def keyed(record: EpisodeRecord) -> dict:
            row = json_form(record)
            row.setdefault("key", EpisodeSpec.model_validate(row["spec"]).key())
            return row

        def on_record(record: EpisodeRecord) -> None:
            writer(keyed(record))
            progress.advance(bar)

        for name in tutors:
            tutor = tutors_built[name]
            if is_batched(tutor):
                records += map(keyed, run_batched(specs, tutor, make_student, batch_size=batch_size,
                                                  on_record=on_record, tutor_name=name))
            else:
                records += map(keyed, run_specs(specs, [name], lambda _name, t=tutor: t, make_student,
                                                on_record=on_record))
    return records


def write_reports(out: Path, board: dict, records: list[dict], title: str, run_info: dict, meta: dict | None,
                  console: Console, html: bool = True) -> tuple[list[Path], int]:
    """``metrics.json``, ``report.md`` and (unless ``html`` is off) ``report.html`` of a run; the paths
    written and an exit status (``EXIT_ERROR`` when report.html failed after the rest was written)."""
    from tutorzoo.eval.leaderboard import write_report

    write_report(board, out, title, run_info, meta)
    written = [out / "metrics.json", out / "report.md"]
    code = EXIT_OK
    if html:
        if importlib.util.find_spec("matplotlib") is None:
            console.print("report.html not written: it needs matplotlib: " + install_hint("report"),
                          markup=False)
        else:
            from tutorzoo.eval.report_html import write_html_report

            try:
                written.append(write_html_report(out, board, records, {**run_info, **(meta or {})}))
            except Exception as exc:  # the records and metrics are written already; say what failed
                console.print(f"report.html failed: {type(exc).__name__}: {exc}", style="red", markup=False)
                code = EXIT_ERROR
    return written, code


def _scored_status(board: dict, console: Console) -> int:
    """``EXIT_NOT_SCORED`` (with the error types) when some tutor scored nothing, else ``EXIT_OK``."""
    from tutorzoo.eval.run_health import unscored_tutors

    health = board.get("health") or {}
    unscored = unscored_tutors(health)
    for tutor in unscored:
        errors = ", ".join(f"{e} x{n}" for e, n in health[tutor]["errors"].items()) or "no error recorded"
        console.print(f"tutorzoo: tutor {tutor} scored nothing ({errors}); its row is not a result. See the "
                      "failures in the records file.", style="red", markup=False, soft_wrap=True)
    return EXIT_NOT_SCORED if unscored else EXIT_OK


def cmd_eval(args: argparse.Namespace, console: Console) -> int:
    from tutorzoo.eval.leaderboard import build, print_leaderboard
    from tutorzoo.eval.runner import run_suite
    from tutorzoo.eval.suite import load_suite
    from tutorzoo.eval.tracking import run_metadata

    started = time.time()
    suite = load_suite(args.suite)
    out = Path(args.out or f"runs/{suite.name}")
    check_out_arg(out)
    check_positive("--replicates", args.replicates)
    if args.seed is not None and args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    tutors, specs = tutor_names(args.tutor or suite.tutors)
    check_tutor_extras([specs.get(t, t) for t in tutors])
    if args.wandb:  # before the run, not after it
        require_extra(["wandb"], "wandb", "--wandb")
    if args.executor == "ray":
        require_extra(["ray"], "ray", "--executor ray")
    judge_config = judge_config_of(args)
    if judge_config is not None:
        for prefix, (modules, extra) in MODEL_EXTRAS.items():
            if str(judge_config.backend).startswith(prefix):
                require_extra(modules, extra, f"--judge {judge_config.backend}")
    if not args.no_html and importlib.util.find_spec("matplotlib") is None:  # said now, not after the run
        console.print("report.html will not be written: it needs matplotlib: " + install_hint("report")
                      + "; or pass --no-html", markup=False, soft_wrap=True)
    tutor_kwargs, per_tutor = tutor_kwargs_of(args, tutors, specs)
    for name, options in suite.tutor_args.items():  # the suite's per-tutor options; --tutor-arg overrides them
        if name in tutors:
            per_tutor[name] = {**options, **per_tutor.get(name, {})}
    student, student_kwargs = student_of(args)
    if student is not None:
        if suite.kind != "episodes":
            raise ConfigError(f"--student applies to episodes suites; suite {suite.name!r} is of kind {suite.kind!r}")
        suite = suite.model_copy(update={"items": {**suite.items, "student": student, "student_args": student_kwargs}})
        suite.units("all")  # a bad --student is an error now (the suite's settings check it)
    try:
        result = run_suite(suite, out, tutors=tutors, split=args.split, limit=args.limit,
                           tutor_kwargs=tutor_kwargs, batch_size=args.batch_size, workers=args.workers,
                           executor=args.executor, ray_address=args.ray_address, judge_config=judge_config,
                           resume=args.resume, overwrite=args.overwrite, seed=args.seed,
                           replicates=args.replicates, tutor_specs=specs or None, tutor_options=per_tutor or None,
                           console=console)
    except KeyboardInterrupt:
        console.print(f"Interrupted: the finished records are kept in {out}; continue with --resume.",
                      style="yellow", markup=False)
        return 130
    board = build(result.records, result.kind, result.judged)
    title = f"TutorZoo leaderboard: suite {suite.name} v{suite.version} ({args.split})"
    print_leaderboard(board, title, console)
    episodes = result.kind.name == "episodes"
    run_info = {"suite": suite.name, "version": suite.version, "split": args.split,
                "tutors": ", ".join(result.tutors),
                ("episodes per tutor" if episodes else "units per tutor"): result.n_units}
    if args.seed is not None or args.replicates > 1:
        run_info["run seeds"] = (f"{args.seed or 0}..{(args.seed or 0) + args.replicates - 1} "
                                 f"({args.replicates} replicates)" if args.replicates > 1 else args.seed)
    if not episodes:
        run_info["kind"] = result.kind.name
    if suite.rubrics:
        run_info["judge"] = judge_config.backend if result.judged else "none (judge-only metrics not computed)"
    options = {**tutor_kwargs, **({"per tutor": per_tutor} if per_tutor else {}),
               **({"tutor specs": specs} if specs else {})}
    meta = run_metadata(sys.argv if args.argv is None else ["tutorzoo", *args.argv], started, args.seed, options)
    written, code = write_reports(out, board, result.records, title, run_info, meta, console, not args.no_html)
    written.insert(0, result.path)
    if args.wandb:
        from tutorzoo.eval.wandb_log import log_run

        info = {**run_info, **meta, "limit": args.limit, "workers": args.workers, "executor": args.executor,
                "batch_size": args.batch_size, "judge_config": judge_config.model_dump() if judge_config else None}
        run_dir = log_run(out, info, result.records, board, project=args.wandb_project)
        if run_dir is not None:
            console.print(f"W&B run: {run_dir}", markup=False)
    unit = "episodes" if episodes else "records"
    resumed = f" ({result.resumed} resumed, {result.ran} run now)" if result.resumed else ""
    console.print(f"{len(result.records)} {unit}{resumed} in {result.elapsed:.1f} s. Wrote "
                  + ", ".join(str(p) for p in written if p is not None), markup=False)
    return code or _scored_status(board, console)


def _rollout_identity(args: argparse.Namespace, protocol: dict, tutor_kwargs: dict) -> dict:
    from tutorzoo.eval.run_folder import NON_IDENTITY_KWARGS
    from tutorzoo.eval.tracking import scrub_secrets

    return scrub_secrets({"command": "rollout", "tutor": args.tutor, "persona": args.persona,
                          "task_set": args.task_set, "task_id": args.task_id, "protocol": protocol,
                          "seed": args.seed, "episodes": args.episodes,
                          **({"student": args.student} if getattr(args, "student", None) else {}),
                          "tutor_kwargs": {k: v for k, v in sorted(tutor_kwargs.items())
                                           if k not in NON_IDENTITY_KWARGS}})


def cmd_rollout(args: argparse.Namespace, console: Console) -> int:
    from tutorzoo.agents.student.personas import get_persona
    from tutorzoo.envs.config import EpisodeSpec, make_config
    from tutorzoo.eval.kinds import get_kind
    from tutorzoo.eval.leaderboard import build, print_leaderboard
    from tutorzoo.eval.rollout import episode_seed
    from tutorzoo.eval.run_folder import prepare_output
    from tutorzoo.eval.tracking import run_metadata

    started = time.time()
    out = Path(args.out)
    check_out_arg(out)
    check_positive("--episodes", args.episodes)
    check_positive("--batch-size", args.batch_size)
    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    get_persona(args.persona)  # fail early with a did-you-mean
    check_tutor_extras([args.tutor])
    protocol = {"max_turns": args.max_turns, "opener": args.opener, "posttest": args.posttest}
    if args.task_path:
        protocol["task_path"] = args.task_path
    make_config(task_set=args.task_set, task_id=args.task_id, **protocol)
    specs = [EpisodeSpec(task_set=args.task_set, task_id=args.task_id, persona=args.persona,
                         seed=episode_seed(args.seed, i), protocol=protocol) for i in range(args.episodes)]
    tutor_kwargs, own = tutor_kwargs_of(args, [args.tutor])  # one tutor: TUTOR:KEY=VALUE is the same as KEY=VALUE
    tutor_kwargs = {**tutor_kwargs, **own.get(args.tutor, {})}
    from tutorzoo.eval.runner import build_tutor

    build_tutor(args.tutor, dict(tutor_kwargs))  # a class that needs arguments fails here, before the output
    from tutorzoo.agents.student.llm import make_student_factory

    student, student_kwargs = student_of(args)
    make_student = make_student_factory(student or "simulated", **student_kwargs)  # loads its model before the run
    path = out / "episodes.jsonl"
    previous = prepare_output(out, path, _rollout_identity(args, protocol, tutor_kwargs), args.resume,
                              args.overwrite)
    done = {str(r.get("key")) for r in previous}
    todo = [s for s in specs if s.key() not in done]
    if previous:
        console.print(f"Resuming: {len(previous)} of {len(specs)} episodes already done, {len(todo)} to run.",
                      markup=False)
    try:
        new = _run(todo, [args.tutor], out, console, tutor_kwargs, args.batch_size, make_student)
    except KeyboardInterrupt:
        console.print(f"Interrupted: the finished episodes are kept in {path}; continue with --resume.",
                      style="yellow", markup=False)
        return 130
    by_key = {str(r.get("key")): r for r in [*previous, *new]}
    records = [by_key[s.key()] for s in specs if s.key() in by_key]
    board = build(records, get_kind("episodes"), judged=False)
    title = f"TutorZoo rollout: {args.tutor} with {args.persona} on {args.task_set}"
    print_leaderboard(board, title, console)
    run_info = {"command": "rollout", "tutors": args.tutor, "persona": args.persona, "task set": args.task_set,
                "episodes per tutor": len(records)}
    meta = run_metadata(sys.argv if args.argv is None else ["tutorzoo", *args.argv], started, args.seed,
                        tutor_kwargs)
    written, code = write_reports(out, board, records, title, run_info, meta, console, not args.no_html)
    h = board["health"].get(args.tutor, {"n": 0, "scored": 0, "failed": 0})
    gains = [r[LEARNING_GAIN] for r in records if r[LEARNING_GAIN] is not None and not r["failures"]]
    gain = (f"mean learning gain {100 * sum(gains) / len(gains):.1f} points" if gains
            else "no learning gain (nothing scored)")
    console.print(f"{h['n']} episodes: {h['scored']} scored, {h['failed']} failed; {gain}. Wrote "
                  + ", ".join(str(p) for p in [path, *written]), markup=False)
    return code or _scored_status(board, console)


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    """``tutorzoo report DIR``: the reports of any folder holding an ``episodes.jsonl`` (or a run's
    ``records.jsonl`` with its ``run.json``), or of the file itself."""
    import json

    from tutorzoo.eval.kinds import get_kind, kind_for
    from tutorzoo.eval.leaderboard import build, print_leaderboard
    from tutorzoo.eval.run_folder import RUN_FILE, read_records

    started = time.time()
    target = Path(args.path)
    if target.is_file():
        folder, path = target.parent, target
    elif target.is_dir():
        folder = target
        candidates = [target / "episodes.jsonl", target / "records.jsonl"]
        path = next((c for c in candidates if c.exists()), None)
        if path is None:
            raise ConfigError(f"{target} holds no episodes.jsonl or records.jsonl; give the folder of a run "
                              "(tutorzoo eval/rollout --out) or a records file")
    else:
        raise ConfigError(f"{target}: no such file or folder; give the --out folder of a run")
    out = Path(args.out) if args.out else folder
    check_out_arg(out)
    records = read_records(path)
    if not records:
        raise ConfigError(f"{path} holds no record; nothing to report")
    saved: dict = {}
    if (folder / RUN_FILE).exists():
        try:
            saved = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
        except ValueError:
            saved = {}
    kind = get_kind("episodes") if path.name == "episodes.jsonl" else None
    suite_name = saved.get("suite")
    if suite_name:
        from tutorzoo.eval.suite import load_suite

        try:
            kind = kind_for(load_suite(suite_name))
        except TutorZooError:
            pass  # a suite file that is gone: the kind's defaults still score the records
    if kind is None:
        if not saved.get("kind"):
            raise ConfigError(f"cannot tell what kind of records {path} holds: it has no {RUN_FILE}; "
                              "give an episodes.jsonl")
        kind = get_kind(saved["kind"])
    judged = any(r.get("judgments") for r in records)
    board = build(records, kind, judged)
    title = f"TutorZoo report: {path}"
    tutors = list(dict.fromkeys(str(r.get("tutor")) for r in records))
    run_info = {"source": str(path), "tutors": ", ".join(tutors), "records": len(records)}
    if suite_name:
        run_info["suite"] = suite_name
    meta = None
    if (folder / "run_meta.json").exists():  # the run's own metadata, kept as it was
        try:
            meta = json.loads((folder / "run_meta.json").read_text(encoding="utf-8"))
        except ValueError:
            meta = None
    if meta is None:  # records without their run's metadata: say so, and describe this report instead
        from tutorzoo.eval.tracking import run_metadata

        meta = {"note": "the run that wrote these records saved no metadata; below: this report's",
                **run_metadata(sys.argv if args.argv is None else ["tutorzoo", *args.argv], started)}
        meta.pop("seed", None)
    print_leaderboard(board, title, console)
    written, code = write_reports(out, board, records, title, run_info, meta, console, not args.no_html)
    console.print("Wrote " + ", ".join(str(p) for p in written), markup=False)
    return code or _scored_status(board, console)
