"""The ``tutorzoo`` command line: ``eval``, ``rollout``, ``play``, ``train``, ``judge``, ``score``, ``agreement``,
``list``.

Examples::

    tutorzoo eval --suite default --out runs/default        # the README's main command
    tutorzoo eval --suite default --out runs/default --resume   # continue a killed run where it stopped
    tutorzoo eval --suite sid --judge openai:gpt-4o --workers 4  # judged SID rubrics, 4 worker processes
    tutorzoo eval --suite educationq --executor ray --ray-address auto   # Ray tasks on a cluster
    tutorzoo rollout --tutor socratic --persona weak_knowledge_partly_wrong --episodes 5 --out runs/r1
    tutorzoo rollout --tutor my_pkg.tutors:MyTutor --task-set stem --episodes 48 --out runs/mine
    tutorzoo score runs/r1/episodes.jsonl --out runs/r1
    tutorzoo report runs/r1                                  # metrics.json, report.md, report.html of any run
    tutorzoo eval --suite default --seed 1 --replicates 3 --out runs/retest   # test-retest over run seeds
    tutorzoo list personas

The output rule, for every command that writes runs (``eval``, ``rollout``): ``--out`` is a folder; if it
already holds records the command refuses, unless ``--resume`` (continue that run) or ``--overwrite`` (start
over: the only way anything there is deleted). ``play`` appends each session to ``--out`` and says so.

Exit status: 0 ok; 1 the run finished and its files are written, but some tutor scored nothing (every unit
failed: the error types are printed); 2 bad input (a one-line error naming the fix), nothing run; 130
interrupted (finished records kept).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from envs.errors import ConfigError, TutorZooError

EXIT_OK, EXIT_NOT_SCORED, EXIT_ERROR = 0, 1, 2
INSTALL_HINT = "pip install -e '.[{extra}]' (or `make install`, which installs every extra)"

# Optional packages, checked before any work: (modules, extra that installs them)
_MODEL_EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "hf:": (("torch", "transformers"), "hf"),
    "openai:": (("openai",), "openai"),
}
_TRAIN_EXTRAS: dict[str, tuple[str, ...]] = {
    "corpus": ("datasets",),
    "sft": ("torch", "transformers", "peft", "trl", "datasets"),
    "grpo": ("torch", "transformers", "peft", "trl", "datasets"),
    "dpo": ("torch", "transformers", "peft", "trl", "datasets"),
    "ppo": ("torch", "stable_baselines3"),
}


def _missing(modules: Sequence[str]) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require_extra(modules: Sequence[str], extra: str, what: str) -> None:
    """Fail before any work when ``what`` needs optional packages that are not installed, naming the extra."""
    missing = _missing(modules)
    if missing:
        raise ConfigError(f"{what} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
                          "installed: " + INSTALL_HINT.format(extra=extra))


def _check_tutor_extras(tutors: Sequence[str]) -> None:
    for name in tutors:
        for prefix, (modules, extra) in _MODEL_EXTRAS.items():
            if name.startswith(prefix):
                require_extra(modules, extra, f"tutor {name!r}")


def _check_out_arg(out: Path) -> None:
    from eval.runner import check_out_dir

    check_out_dir(out)


def _positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise ConfigError(f"{name} must be >= 1, got {value}; give a positive count, e.g. {name} 5")


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=console, transient=True)


_DISPLAY_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


def tutor_names(given: Sequence[str] | None) -> tuple[list[str], dict[str, str]]:
    """``--tutor [NAME=]SPEC`` values: the display names (as in tables and records) and ``{name: spec}`` for
    those given a name, so that one model can be compared with itself (``base=hf:m``, ``tuned=hf:m``)."""
    names: list[str] = []
    specs: dict[str, str] = {}
    for item in given or []:
        name, sep, spec = item.partition("=")
        if sep and spec and _DISPLAY_NAME.match(name):
            names.append(name)
            specs[name] = spec
        else:
            names.append(item)
    return names, specs


def _tutor_kwargs(args: argparse.Namespace, tutors: Sequence[str] = (),
                  specs: dict[str, str] | None = None) -> tuple[dict, dict[str, dict]]:
    """Tutor options: ``--base-url`` and repeatable ``--tutor-arg [TUTOR:]KEY=VALUE`` (values read as YAML);
    without ``TUTOR:`` an option goes to every tutor, with it to that tutor only (its display name or spec).
    Returns (options for all, ``{tutor: its own options}``)."""
    kwargs: dict = {}
    per_tutor: dict[str, dict] = {}
    by_spec = {spec: name for name, spec in (specs or {}).items()}
    for item in getattr(args, "tutor_arg", None) or []:
        key, sep, value = item.partition("=")
        owner, colon, key = key.rpartition(":")
        if not sep or not key or (colon and not owner):
            raise ConfigError(f"--tutor-arg takes KEY=VALUE or TUTOR:KEY=VALUE, got {item!r}")
        parsed = yaml.safe_load(value)  # numbers and booleans as such, the rest as strings
        if not colon:
            kwargs[key] = parsed
            continue
        owner = by_spec.get(owner, owner)
        if owner not in tutors:
            raise ConfigError(f"--tutor-arg {item!r} names tutor {owner!r}, which is not in this run; tutors: "
                              f"{list(tutors)}")
        per_tutor.setdefault(owner, {})[key] = parsed
    if getattr(args, "base_url", None):
        kwargs["base_url"] = args.base_url
    return kwargs, per_tutor


def _run(specs, tutors: list[str], out: Path, console: Console, tutor_kwargs: dict | None = None,
         batch_size: int = 16, make_student=None) -> list[dict]:
    """Every spec with every tutor; records appended to ``out/episodes.jsonl`` as they finish (the caller
    applies the output rule first: :func:`eval.runner.prepare_output`). A tutor with ``act_batch`` (model
    tutors) plays ``batch_size`` episodes in lockstep, one model call per turn."""
    from agents.student import SimulatedStudent
    from envs.config import EpisodeSpec
    from eval.batch import run_batched
    from eval.rollout import JsonlWriter, run_specs
    from eval.runner import build_tutor

    make_student = make_student or SimulatedStudent
    path = out / "episodes.jsonl"
    records: list[dict] = []
    tutors_built = {name: build_tutor(name, dict(tutor_kwargs or {})) for name in tutors}  # fail before playing
    if not specs:
        return records
    with JsonlWriter(path) as writer, _progress(console) as progress:
        bar = progress.add_task("episodes", total=len(specs) * len(tutors))

        def on_record(record: dict) -> None:
            record.setdefault("key", EpisodeSpec.model_validate(record["spec"]).key())
            writer(record)
            progress.advance(bar)

        for name in tutors:
            tutor = tutors_built[name]
            if hasattr(tutor, "act_batch"):
                records += run_batched(specs, tutor, make_student, batch_size=batch_size, on_record=on_record,
                                       tutor_name=name)
            else:
                records += run_specs(specs, [name], lambda _name, t=tutor: t, make_student, on_record=on_record)
    return records


def _judge_config(args: argparse.Namespace):
    """The judge of ``--judge ...`` flags (a JudgeConfig), or None when no judge is given."""
    if not getattr(args, "judge", None):
        return None
    from eval.judges.cli import judge_config_from_args

    return judge_config_from_args(args)



def write_reports(out: Path, board: dict, records: list[dict], title: str, run_info: dict, meta: dict | None,
                  console: Console, html: bool = True) -> tuple[list[Path], int]:
    """``metrics.json``, ``report.md`` and (unless ``html`` is off) ``report.html`` of a run; the paths
    written and an exit status (``EXIT_ERROR`` when report.html failed after the rest was written)."""
    from eval.leaderboard import write_report

    write_report(board, out, title, run_info, meta)
    written = [out / "metrics.json", out / "report.md"]
    code = EXIT_OK
    if html:
        if importlib.util.find_spec("matplotlib") is None:
            console.print("report.html not written: it needs matplotlib: " + INSTALL_HINT.format(extra="report"),
                          markup=False)
        else:
            from eval.report_html import write_html_report

            try:
                written.append(write_html_report(out, board, records, {**run_info, **(meta or {})}))
            except Exception as exc:  # the records and metrics are written already; say what failed
                console.print(f"report.html failed: {type(exc).__name__}: {exc}", style="red", markup=False)
                code = EXIT_ERROR
    return written, code


def _scored_status(board: dict, console: Console) -> int:
    """``EXIT_NOT_SCORED`` (with the error types) when some tutor scored nothing, else ``EXIT_OK``."""
    from eval.runner import unscored_tutors

    health = board.get("health") or {}
    unscored = unscored_tutors(health)
    for tutor in unscored:
        errors = ", ".join(f"{e} x{n}" for e, n in health[tutor]["errors"].items()) or "no error recorded"
        console.print(f"tutorzoo: tutor {tutor} scored nothing ({errors}); its row is not a result. See the "
                      "failures in the records file.", style="red", markup=False, soft_wrap=True)
    return EXIT_NOT_SCORED if unscored else EXIT_OK


def cmd_eval(args: argparse.Namespace, console: Console) -> int:
    from eval.leaderboard import build, print_leaderboard
    from eval.runner import run_suite
    from eval.suite import load_suite
    from eval.tracking import run_metadata

    started = time.time()
    suite = load_suite(args.suite)
    out = Path(args.out or f"runs/{suite.name}")
    _check_out_arg(out)
    _positive("--replicates", args.replicates)
    if args.seed is not None and args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    tutors, specs = tutor_names(args.tutor or suite.tutors)
    _check_tutor_extras([specs.get(t, t) for t in tutors])
    if args.wandb:  # before the run, not after it
        require_extra(["wandb"], "wandb", "--wandb")
    if args.executor == "ray":
        require_extra(["ray"], "ray", "--executor ray")
    judge_config = _judge_config(args)
    if judge_config is not None:
        for prefix, (modules, extra) in _MODEL_EXTRAS.items():
            if str(judge_config.backend).startswith(prefix):
                require_extra(modules, extra, f"--judge {judge_config.backend}")
    if not args.no_html and importlib.util.find_spec("matplotlib") is None:  # said now, not after the run
        console.print("report.html will not be written: it needs matplotlib: " + INSTALL_HINT.format(extra="report")
                      + "; or pass --no-html", markup=False, soft_wrap=True)
    tutor_kwargs, per_tutor = _tutor_kwargs(args, tutors, specs)
    for name, options in suite.tutor_args.items():  # the suite's per-tutor options; --tutor-arg overrides them
        if name in tutors:
            per_tutor[name] = {**options, **per_tutor.get(name, {})}
    student, student_kwargs = _student(args)
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
        from eval.wandb_log import log_run

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
    from eval.runner import _NON_IDENTITY_KWARGS
    from eval.tracking import scrub_secrets

    return scrub_secrets({"command": "rollout", "tutor": args.tutor, "persona": args.persona,
                          "task_set": args.task_set, "task_id": args.task_id, "protocol": protocol,
                          "seed": args.seed, "episodes": args.episodes,
                          **({"student": args.student} if getattr(args, "student", None) else {}),
                          "tutor_kwargs": {k: v for k, v in sorted(tutor_kwargs.items())
                                           if k not in _NON_IDENTITY_KWARGS}})


def cmd_rollout(args: argparse.Namespace, console: Console) -> int:
    from agents.student.personas import get_persona
    from envs.config import EpisodeSpec, make_config
    from eval.kinds import get_kind
    from eval.leaderboard import build, print_leaderboard
    from eval.rollout import episode_seed
    from eval.runner import prepare_output
    from eval.tracking import run_metadata

    started = time.time()
    out = Path(args.out)
    _check_out_arg(out)
    _positive("--episodes", args.episodes)
    _positive("--batch-size", args.batch_size)
    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    get_persona(args.persona)  # fail early with a did-you-mean
    _check_tutor_extras([args.tutor])
    protocol = {"max_turns": args.max_turns, "opener": args.opener, "posttest": args.posttest}
    if args.task_path:
        protocol["task_path"] = args.task_path
    make_config(task_set=args.task_set, task_id=args.task_id, **protocol)
    specs = [EpisodeSpec(task_set=args.task_set, task_id=args.task_id, persona=args.persona,
                         seed=episode_seed(args.seed, i), protocol=protocol) for i in range(args.episodes)]
    tutor_kwargs, own = _tutor_kwargs(args, [args.tutor])  # one tutor: TUTOR:KEY=VALUE is the same as KEY=VALUE
    tutor_kwargs = {**tutor_kwargs, **own.get(args.tutor, {})}
    from eval.runner import build_tutor

    build_tutor(args.tutor, dict(tutor_kwargs))  # a class that needs arguments fails here, before the output
    from agents.student.llm import make_student_factory

    student, student_kwargs = _student(args)
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
    gains = [r["learning_gain"] for r in records if r["learning_gain"] is not None and not r["failures"]]
    gain = (f"mean learning gain {100 * sum(gains) / len(gains):.1f} points" if gains
            else "no learning gain (nothing scored)")
    console.print(f"{h['n']} episodes: {h['scored']} scored, {h['failed']} failed; {gain}. Wrote "
                  + ", ".join(str(p) for p in [path, *written]), markup=False)
    return code or _scored_status(board, console)


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    """``tutorzoo report DIR``: the reports of any folder holding an ``episodes.jsonl`` (or a run's
    ``records.jsonl`` with its ``run.json``), or of the file itself."""
    import json

    from eval.kinds import get_kind, kind_for
    from eval.leaderboard import build, print_leaderboard
    from eval.runner import RUN_FILE, read_records

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
    _check_out_arg(out)
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
        from eval.suite import load_suite

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
        from eval.tracking import run_metadata

        meta = {"note": "the run that wrote these records saved no metadata; below: this report's",
                **run_metadata(sys.argv if args.argv is None else ["tutorzoo", *args.argv], started)}
        meta.pop("seed", None)
    print_leaderboard(board, title, console)
    written, code = write_reports(out, board, records, title, run_info, meta, console, not args.no_html)
    console.print("Wrote " + ", ".join(str(p) for p in written), markup=False)
    return code or _scored_status(board, console)


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    if args.what == "tutors":
        from agents.tutor.registry import TUTORS

        for name, cls in TUTORS.items():  # built-ins first, then the adversarial probes
            console.print(f"{name:10s} {(cls.__doc__ or '').strip().splitlines()[0]}", markup=False)
        console.print("Any class with reset(seed) and act(observation, info): --tutor package.module:ClassName "
                      "(imported from the current folder or PYTHONPATH)", markup=False)
    elif args.what == "personas":
        from agents.student.personas import load_personas

        for name, p in sorted(load_personas().items(), key=lambda kv: (kv[1].family, kv[0])):
            console.print(f"{p.family:10s} {name}")
    elif args.what == "tasks":
        from envs.tasks import get_task_set

        for task_id in get_task_set(args.task_set, args.task_path).task_ids():
            console.print(task_id)
    elif args.what == "task-sets":
        from envs.tasks import TASK_SETS

        for name in TASK_SETS:
            console.print(name)
    elif args.what == "suites":
        from eval.suite import SUITE_DIR, load_suite

        for path in sorted(SUITE_DIR.glob("*.yaml")):
            suite = load_suite(str(path))
            console.print(f"{suite.name:14s} v{suite.version}  {suite.description}", markup=False)
    return EXIT_OK


def _score_argv(rest: list[str]) -> list[str]:
    """The output rules for ``score``: a run folder stands for its ``episodes.jsonl`` (scored into
    ``FOLDER/score/`` unless ``--out`` says otherwise, so that an eval's own ``metrics.json`` is not replaced);
    ``--out`` naming a file is refused (one line, before any work)."""
    rest = list(rest)
    has_out = False
    for i, arg in enumerate(rest):
        if arg == "--out" and i + 1 < len(rest):
            _check_out_arg(Path(rest[i + 1]))
            has_out = True
        elif arg.startswith("--out="):
            _check_out_arg(Path(arg.split("=", 1)[1]))
            has_out = True
    takes_value = {"--out", "--group-by", "--k", "--resamples", "--confidence", "--seed", "--annotator"}
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg in takes_value:
            i += 2
            continue
        if not arg.startswith("-") and Path(arg).is_dir():
            episodes = Path(arg) / "episodes.jsonl"
            if not episodes.exists():
                raise ConfigError(f"{arg} is a folder without an episodes.jsonl; give the episodes.jsonl (or "
                                  "dialogue file) to score, or the --out folder of a rollout or eval")
            rest[i] = str(episodes)
            if not has_out:
                rest += ["--out", str(Path(arg) / "score")]
            break
        i += 1
    return rest


def cmd_score(args: argparse.Namespace, console: Console) -> int:
    from eval.score import main as score_main

    return score_main(_score_argv(args.rest))


def cmd_play(args: argparse.Namespace, console: Console) -> int:
    from eval.play import main as play_main

    return play_main(args.rest)


def cmd_agreement(args: argparse.Namespace, console: Console) -> int:
    from eval.agreement import main as agreement_main

    return agreement_main(args.rest)


def cmd_train(args: argparse.Namespace, console: Console) -> int:
    recipe = next((a for a in args.rest if not a.startswith("-")), None)
    if recipe in _TRAIN_EXTRAS:  # before importing the recipe: a raw ImportError traceback helps nobody
        require_extra(_TRAIN_EXTRAS[recipe], "train", f"tutorzoo train {recipe}")
    from train.cli import main as train_main

    return train_main(args.rest)


def cmd_judge(args: argparse.Namespace, console: Console) -> int:
    from eval.judges.cli import main as judge_main

    return judge_main(args.rest)


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint for --tutor openai:<model>")
    p.add_argument("--tutor-arg", action="append", metavar="[TUTOR:]KEY=VALUE",
                   help="repeatable: a constructor argument of a class tutor (pkg.mod:Class), e.g. depth=3, or a "
                        "backend option of a model tutor, e.g. adapter=./lora; values are read as YAML; built-in "
                        "tutors ignore the options they do not take; TUTOR: gives it to one tutor only")
    p.add_argument("--batch-size", type=int, default=16, help="episodes in lockstep for model tutors (act_batch)")
    p.add_argument("--student", default=None, help="simulated (default), llm:<backend> (a chat model is the student "
                   "and answers the tests itself, e.g. llm:hf:models/tiny) or hybrid:<backend> (the simulated "
                   "student, its words reworded by the model); eval: episodes suites (overrides items.student)")
    p.add_argument("--student-arg", action="append", metavar="KEY=VALUE",
                   help="repeatable: a backend option of an LLM student (threads=1, max_new_tokens=120, ...)")
    p.add_argument("--student-base-url", default=None, help="OpenAI-compatible endpoint for --student llm:openai:M")


def _student(args: argparse.Namespace) -> tuple[str | None, dict]:
    """``--student`` and its backend options (``--student-arg``, ``--student-base-url``); None: not given."""
    kwargs: dict = {}
    for item in getattr(args, "student_arg", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--student-arg takes KEY=VALUE, got {item!r}")
        kwargs[key] = yaml.safe_load(value)
    if getattr(args, "student_base_url", None):
        kwargs["base_url"] = args.student_base_url
    if kwargs and not getattr(args, "student", None):
        raise ConfigError("--student-arg / --student-base-url need --student llm:<backend> or hybrid:<backend>")
    return getattr(args, "student", None), kwargs


def _judge_args(p: argparse.ArgumentParser) -> None:
    """``--judge`` and its options, from :mod:`eval.judges.cli`."""
    from eval.judges.cli import add_judge_args

    add_judge_args(p)


def parser() -> argparse.ArgumentParser:
    from eval.tracking import version

    p = argparse.ArgumentParser(prog="tutorzoo",
                                description="Train and benchmark AI tutors against simulated students.",
                                epilog="Exit status: 0 ok; 1 written, but some tutor scored nothing; 2 bad input "
                                       "(nothing run). Tutors given as pkg.mod:Class are imported from the "
                                       "current folder or PYTHONPATH.")
    p.add_argument("--version", action="version", version=f"tutorzoo {version()}")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("eval", help="run a benchmark suite with its tutors and print the leaderboard")
    e.add_argument("--suite", default="default", help="suite name (configs/suites/NAME.yaml) or path")
    e.add_argument("--tutor", action="append", metavar="[NAME=]TUTOR",
                   help="tutor(s) to compare instead of the suite's (repeatable); NAME= shows it under a name of its "
                        "own, so one model can run twice: --tutor base=hf:m --tutor tuned=hf:m "
                        "--tutor-arg tuned:adapter=DIR")
    e.add_argument("--split", choices=["all", "train", "held_out"], default="all")
    e.add_argument("--limit", type=int, default=None, help="only the first N units of the suite (smoke runs)")
    e.add_argument("--out", default=None, help="output folder (default runs/SUITE)")
    e.add_argument("--resume", action="store_true",
                   help="continue the run in --out: skip what it has finished (it must be the same suite and options)")
    e.add_argument("--overwrite", action="store_true",
                   help="start over in --out, replacing the records a previous run left there")
    e.add_argument("--seed", type=int, default=None,
                   help="run seed: every episode's seed is derived from (seed, the suite's seed), so runs with "
                        "different seeds share no episode (default: the suite's own seeds)")
    e.add_argument("--replicates", type=int, default=1,
                   help="play the suite K times with run seeds SEED..SEED+K-1 (test-retest variance; metrics.json "
                        "gives the spread of each tutor's mean across replicates)")
    e.add_argument("--workers", type=int, default=None,
                   help="parallel worker processes (default: min(2, CPUs)); 1 runs everything in this process; "
                        "--executor ray uses the Ray cluster's CPUs instead")
    e.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local worker processes, or Ray tasks (pip install 'tutorzoo[ray]')")
    e.add_argument("--ray-address", default=None,
                   help="Ray cluster to join with --executor ray (e.g. auto, ray://head:10001); default a local Ray")
    e.add_argument("--no-html", action="store_true", help="skip report.html (its plots take a few seconds)")
    e.add_argument("--wandb", action="store_true", help="log metrics, transcripts and the report to Weights & Biases")
    e.add_argument("--wandb-project", default="tutorzoo", help="W&B project for --wandb")
    _model_args(e)
    _judge_args(e)
    e.set_defaults(func=cmd_eval)

    r = sub.add_parser("rollout", help="roll out one tutor against one student persona")
    r.add_argument("--tutor", default="socratic", help="registry name or package.module:ClassName")
    r.add_argument("--persona", default="all_round_partly_wrong")
    r.add_argument("--task-set", default="math")
    r.add_argument("--task-id", default=None, help="default: drawn from each episode's seed")
    r.add_argument("--task-path", default=None, help="data for the task set (mcq bank file, lesson folder)")
    r.add_argument("--episodes", type=int, default=1, help="episodes to play (>= 1)")
    r.add_argument("--seed", type=int, default=0,
                   help="run seed: episode i gets a seed derived from (seed, i); different seeds share no episode")
    r.add_argument("--max-turns", type=int, default=8)
    r.add_argument("--opener", choices=["student", "tutor"], default="student")
    r.add_argument("--posttest", choices=["isomorphic", "same", "both"], default="isomorphic")
    r.add_argument("--out", required=True, help="output folder (refused if it holds records, unless --resume or "
                                                "--overwrite)")
    r.add_argument("--resume", action="store_true",
                   help="continue the rollout in --out: play only the missing episodes")
    r.add_argument("--overwrite", action="store_true", help="start over in --out, replacing its records")
    r.add_argument("--no-html", action="store_true", help="skip report.html")
    _model_args(r)
    r.set_defaults(func=cmd_rollout)

    rp = sub.add_parser("report", help="metrics.json, report.md and report.html for any run folder or episodes.jsonl")
    rp.add_argument("path", help="a run folder (with episodes.jsonl, or records.jsonl and run.json) or a records file")
    rp.add_argument("--out", default=None, help="folder for the reports (default: the run's folder)")
    rp.add_argument("--no-html", action="store_true", help="skip report.html")
    rp.set_defaults(func=cmd_report)

    s = sub.add_parser("score", help="compute every metric a file supports: episodes.jsonl, SID dialogues, chats, "
                       "MathDial, MRBench, EducationQ logs",
                       add_help=False)
    s.add_argument("rest", nargs=argparse.REMAINDER)
    s.set_defaults(func=cmd_score)

    pl = sub.add_parser("play", help="sit in the tutor's seat at the terminal against a simulated student",
                        add_help=False)
    pl.add_argument("rest", nargs=argparse.REMAINDER)
    pl.set_defaults(func=cmd_play)

    a = sub.add_parser("agreement", help="annotator accuracy and Cohen's kappa per field against the gold set",
                       add_help=False)
    a.add_argument("rest", nargs=argparse.REMAINDER)
    a.set_defaults(func=cmd_agreement)

    t = sub.add_parser("train", help="train a tutor: corpus, sft, grpo, dpo or ppo (tutorzoo train RECIPE --config F)",
                       add_help=False)
    t.add_argument("rest", nargs=argparse.REMAINDER)
    t.set_defaults(func=cmd_train)

    j = sub.add_parser("judge", help="LLM judges: list rubrics, calibrate a judge against labelled examples",
                       add_help=False)
    j.add_argument("rest", nargs=argparse.REMAINDER)
    j.set_defaults(func=cmd_judge)

    ls = sub.add_parser("list", help="list tutors, personas, tasks, task sets or suites")
    ls.add_argument("what", choices=["tutors", "personas", "tasks", "task-sets", "suites"])
    ls.add_argument("--task-set", default="math")
    ls.add_argument("--task-path", default=None)
    ls.set_defaults(func=cmd_list)
    return p


# Subcommands with a parser of their own: everything after the name is theirs (``--help`` included, which an
# argparse REMAINDER would not pass on when it comes first).
PASSTHROUGH = ("score", "play", "agreement", "train", "judge")


def _cwd_importable() -> None:
    """Tutors given as ``pkg.mod:Class`` are found in the folder the command runs from, as ``python -m``
    would (the console script alone does not put it on ``sys.path``); worker processes inherit the path."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if cwd not in paths:  # Ray workers and other subprocesses read PYTHONPATH
        os.environ["PYTHONPATH"] = os.pathsep.join([*paths, cwd])


def main(argv: Sequence[str] | None = None) -> int:
    given = None if argv is None else list(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    _cwd_importable()
    if argv and argv[0] in PASSTHROUGH:
        args = argparse.Namespace(command=argv[0], rest=argv[1:])
        args.func = {"score": cmd_score, "play": cmd_play, "agreement": cmd_agreement, "train": cmd_train,
                     "judge": cmd_judge}[argv[0]]
    else:
        args = parser().parse_args(argv)
    args.argv = given
    console = Console()
    try:
        return args.func(args, console)
    except TutorZooError as exc:
        # printed literally: an install hint such as pip install -e '.[hf]' must keep its brackets
        console.print(f"tutorzoo {args.command}: {exc}", style="red", markup=False, highlight=False, soft_wrap=True)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
