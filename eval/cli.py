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
    tutorzoo list personas
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from envs.errors import ConfigError, TutorZooError

EXIT_OK, EXIT_ERROR = 0, 2


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=console, transient=True)


def _tutor_kwargs(args: argparse.Namespace) -> dict:
    """Backend options for model tutors: ``--base-url`` and repeatable ``--tutor-arg KEY=VALUE``."""
    kwargs: dict = {}
    for item in getattr(args, "tutor_arg", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--tutor-arg takes KEY=VALUE, got {item!r}")
        kwargs[key] = yaml.safe_load(value)  # numbers and booleans as such, the rest as strings
    if getattr(args, "base_url", None):
        kwargs["base_url"] = args.base_url
    return kwargs


def _run(specs, tutors: list[str], out: Path, console: Console, tutor_kwargs: dict | None = None,
         batch_size: int = 16) -> list[dict]:
    """Every spec with every tutor; records appended to ``out/episodes.jsonl`` as they finish. A tutor with
    ``act_batch`` (model tutors) plays ``batch_size`` episodes in lockstep, one model call per turn."""
    from agents.student import SimulatedStudent
    from agents.tutor.registry import make_tutor
    from eval.batch import run_batched
    from eval.rollout import JsonlWriter, run_specs

    out.mkdir(parents=True, exist_ok=True)
    path = out / "episodes.jsonl"
    path.unlink(missing_ok=True)  # a fresh run; resuming is the harness issue's --resume
    records: list[dict] = []
    with JsonlWriter(path) as writer, _progress(console) as progress:
        bar = progress.add_task("episodes", total=len(specs) * len(tutors))

        def on_record(record: dict) -> None:
            writer(record)
            progress.advance(bar)

        for name in tutors:
            tutor = make_tutor(name, **(tutor_kwargs or {}))
            if hasattr(tutor, "act_batch"):
                records += run_batched(specs, tutor, SimulatedStudent, batch_size=batch_size, on_record=on_record,
                                       tutor_name=name)
            else:
                records += run_specs(specs, [name], lambda _name, t=tutor: t, SimulatedStudent, on_record=on_record)
    return records


def _judge_config(args: argparse.Namespace):
    """The judge of ``--judge ...`` flags (a JudgeConfig), or None when no judge is given."""
    if not getattr(args, "judge", None):
        return None
    from eval.judges.cli import judge_config_from_args

    return judge_config_from_args(args)



def cmd_eval(args: argparse.Namespace, console: Console) -> int:
    from eval.leaderboard import build, print_leaderboard, write_report
    from eval.runner import run_suite
    from eval.suite import load_suite

    suite = load_suite(args.suite)
    out = Path(args.out or f"runs/{suite.name}")
    judge_config = _judge_config(args)
    try:
        result = run_suite(suite, out, tutors=args.tutor, split=args.split, limit=args.limit,
                           tutor_kwargs=_tutor_kwargs(args), batch_size=args.batch_size, workers=args.workers,
                           executor=args.executor, ray_address=args.ray_address, judge_config=judge_config,
                           resume=args.resume, overwrite=args.overwrite, console=console)
    except KeyboardInterrupt:
        console.print(f"[yellow]Interrupted: the finished records are kept in {out}; continue with --resume.[/yellow]")
        return 130
    board = build(result.records, result.kind, result.judged)
    title = f"TutorZoo leaderboard: suite {suite.name} v{suite.version} ({args.split})"
    print_leaderboard(board, title, console)
    episodes = result.kind.name == "episodes"
    run_info = {"suite": suite.name, "version": suite.version, "split": args.split,
                "tutors": ", ".join(result.tutors),
                ("episodes per tutor" if episodes else "units per tutor"): result.n_units}
    if not episodes:
        run_info["kind"] = result.kind.name
    if suite.rubrics:
        run_info["judge"] = judge_config.backend if result.judged else "none (judge-only metrics not computed)"
    write_report(board, out, title, run_info)
    written = [result.path, out / "metrics.json", out / "report.md"]
    code = EXIT_OK
    if not args.no_html:
        if importlib.util.find_spec("matplotlib") is None:
            console.print("report.html not written: it needs matplotlib (pip install 'tutorzoo[report]').")
        else:
            from eval.report_html import write_html_report

            try:
                written.append(write_html_report(out, board, result.records, run_info))
            except Exception as exc:  # the records and metrics are written already; say what failed
                console.print(f"[red]report.html failed: {type(exc).__name__}: {exc}[/red]")
                code = EXIT_ERROR
    if args.wandb:
        from eval.wandb_log import log_run

        info = {**run_info, "limit": args.limit, "workers": args.workers, "executor": args.executor,
                "batch_size": args.batch_size, "judge_config": judge_config.model_dump() if judge_config else None}
        run_dir = log_run(out, info, result.records, board, project=args.wandb_project)
        if run_dir is not None:
            console.print(f"W&B run: {run_dir}")
    unit = "episodes" if episodes else "records"
    resumed = f" ({result.resumed} resumed, {result.ran} run now)" if result.resumed else ""
    console.print(f"{len(result.records)} {unit}{resumed} in {result.elapsed:.1f} s. Wrote "
                  + ", ".join(str(p) for p in written if p is not None))
    return code


def cmd_rollout(args: argparse.Namespace, console: Console) -> int:
    from agents.student.personas import get_persona
    from envs.config import EpisodeSpec, make_config

    get_persona(args.persona)  # fail early with a did-you-mean
    protocol = {"max_turns": args.max_turns, "opener": args.opener, "posttest": args.posttest}
    if args.task_path:
        protocol["task_path"] = args.task_path
    make_config(task_set=args.task_set, task_id=args.task_id, **protocol)
    specs = [EpisodeSpec(task_set=args.task_set, task_id=args.task_id, persona=args.persona, seed=args.seed + i,
                         protocol=protocol) for i in range(args.episodes)]
    out = Path(args.out)
    records = _run(specs, [args.tutor], out, console, _tutor_kwargs(args), args.batch_size)
    gains = [r["learning_gain"] for r in records if r["learning_gain"] is not None]
    failed = sum(1 for r in records if r["failures"])
    mean = sum(gains) / len(gains) if gains else float("nan")
    console.print(f"{len(records)} episodes ({failed} with failures); mean learning gain {100 * mean:.1f} points. "
                  f"Wrote {out / 'episodes.jsonl'}")
    return EXIT_OK


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    if args.what == "tutors":
        from agents.tutor.registry import TUTORS

        for name, cls in TUTORS.items():  # built-ins first, then the adversarial probes
            console.print(f"{name:10s} {(cls.__doc__ or '').strip().splitlines()[0]}")
        console.print("Any class with reset(seed) and act(observation, info): --tutor package.module:ClassName")
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
            console.print(f"{suite.name:14s} v{suite.version}  {suite.description}")
    return EXIT_OK


def cmd_score(args: argparse.Namespace, console: Console) -> int:
    from eval.score import main as score_main

    return score_main(args.rest)


def cmd_play(args: argparse.Namespace, console: Console) -> int:
    from eval.play import main as play_main

    return play_main(args.rest)


def cmd_agreement(args: argparse.Namespace, console: Console) -> int:
    from eval.agreement import main as agreement_main

    return agreement_main(args.rest)


def cmd_train(args: argparse.Namespace, console: Console) -> int:
    from train.cli import main as train_main

    return train_main(args.rest)


def cmd_judge(args: argparse.Namespace, console: Console) -> int:
    from eval.judges.cli import main as judge_main

    return judge_main(args.rest)


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint for --tutor openai:<model>")
    p.add_argument("--tutor-arg", action="append", metavar="KEY=VALUE",
                   help="backend option for model tutors (repeatable), e.g. adapter=./lora max_new_tokens=150")
    p.add_argument("--batch-size", type=int, default=16, help="episodes in lockstep for model tutors (act_batch)")


def _judge_args(p: argparse.ArgumentParser) -> None:
    """``--judge`` and its options, from :mod:`eval.judges.cli`."""
    from eval.judges.cli import add_judge_args

    add_judge_args(p)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tutorzoo",
                                description="Train and benchmark AI tutors against simulated students.")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("eval", help="run a benchmark suite with its tutors and print the leaderboard")
    e.add_argument("--suite", default="default", help="suite name (configs/suites/NAME.yaml) or path")
    e.add_argument("--tutor", action="append", help="tutor(s) to compare instead of the suite's (repeatable)")
    e.add_argument("--split", choices=["all", "train", "held_out"], default="all")
    e.add_argument("--limit", type=int, default=None, help="only the first N units of the suite (smoke runs)")
    e.add_argument("--out", default=None, help="output folder (default runs/SUITE)")
    e.add_argument("--resume", action="store_true",
                   help="continue the run in --out: skip what it has finished (it must be the same suite and options)")
    e.add_argument("--overwrite", action="store_true",
                   help="start over in --out, replacing the records a previous run left there")
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
    r.add_argument("--episodes", type=int, default=1)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--max-turns", type=int, default=8)
    r.add_argument("--opener", choices=["student", "tutor"], default="student")
    r.add_argument("--posttest", choices=["isomorphic", "same", "both"], default="isomorphic")
    r.add_argument("--out", required=True)
    _model_args(r)
    r.set_defaults(func=cmd_rollout)

    s = sub.add_parser("score", help="compute every metric for an episodes.jsonl (or SID-style dialogues)",
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in PASSTHROUGH:
        args = argparse.Namespace(command=argv[0], rest=argv[1:])
        args.func = {"score": cmd_score, "play": cmd_play, "agreement": cmd_agreement, "train": cmd_train,
                     "judge": cmd_judge}[argv[0]]
    else:
        args = parser().parse_args(argv)
    console = Console()
    try:
        return args.func(args, console)
    except TutorZooError as exc:
        console.print(f"[red]tutorzoo {args.command}: {exc}[/red]")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
