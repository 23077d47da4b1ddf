"""The ``tutorzoo`` command line: ``eval``, ``rollout``, ``play``, ``train``, ``judge``, ``score``, ``agreement``,
``serve``, ``list``.

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
    tutorzoo serve --suite default --split held_out --max-sessions 8 --port 8000   # an OpenEnv server
    tutorzoo list personas

The output rule, for every command that writes runs (``eval``, ``rollout``): ``--out`` is a folder; if it
already holds records the command refuses, unless ``--resume`` (continue that run) or ``--overwrite`` (start
over: the only way anything there is deleted). ``play`` appends each session to ``--out`` and says so.

Exit status: 0 ok; 1 the run finished and its files are written, but some tutor scored nothing (every unit
failed: the error types are printed); 2 bad input (a one-line error naming the fix), nothing run; 130
interrupted (finished records kept).

This module parses the command line and dispatches; :mod:`tutorzoo.eval.cli_runs` implements the commands that write
runs
(``eval``, ``rollout``, ``report``) and :mod:`tutorzoo.eval.cli_options` the options and checks they share. The
subcommands with a parser of their own (``score``, ``play``, ``agreement``, ``train``, ``judge``) get the rest
of the command line; ``train`` is imported here, inside its dispatch only (``tests/test_layering.py``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

from tutorzoo.envs.errors import ConfigError, TutorZooError
from tutorzoo.eval.cli_options import (
    EXIT_ERROR,
    EXIT_NOT_SCORED,
    EXIT_OK,
    PROTOCOL_HELP,
    TRAIN_EXTRAS,
    check_out_arg,
    require_extra,
    tutor_names,
)
from tutorzoo.eval.cli_runs import cmd_eval, cmd_report, cmd_rollout, write_reports


def first_sentence(doc: str) -> str:
    """The first sentence of a docstring's first paragraph, however many lines it spans (brackets kept whole)."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    depth = 0
    for i, char in enumerate(paragraph):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char in ".!?" and depth <= 0 and (i + 1 == len(paragraph) or paragraph[i + 1] == " "):
            return paragraph[: i + 1]
    return paragraph


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    if args.what == "tutors":
        from tutorzoo.agents.tutor.registry import TUTORS

        width = max(map(len, TUTORS))
        for name, cls in TUTORS.items():  # built-ins first, then the adversarial probes
            console.print(f"{name:{width}s}  {first_sentence(cls.__doc__ or '')}", markup=False, soft_wrap=True)
        console.print("Any class with reset(seed) and act(observation, info): --tutor package.module:ClassName "
                      "(imported from the current folder or PYTHONPATH).", markup=False, soft_wrap=True)
    elif args.what == "personas":
        from tutorzoo.agents.student.personas import load_personas

        for name, p in sorted(load_personas().items(), key=lambda kv: (kv[1].family, kv[0])):
            console.print(f"{p.family:10s} {name}")
    elif args.what == "tasks":
        from tutorzoo.envs.tasks import get_task_set

        for task_id in get_task_set(args.task_set, args.task_path).task_ids():
            console.print(task_id)
    elif args.what == "task-sets":
        from tutorzoo.envs.tasks import TASK_SETS

        for name in TASK_SETS:
            console.print(name)
    elif args.what == "suites":
        from tutorzoo.eval.suite import SUITE_DIR, load_suite

        for path in sorted(SUITE_DIR.glob("*.yaml")):
            suite = load_suite(str(path))
            console.print(f"{suite.name:14s} v{suite.version}  {suite.description}", markup=False)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    """``tutorzoo serve``: the OpenEnv server of :mod:`tutorzoo.eval.serve` until interrupted."""
    import socket

    from tutorzoo.envs.config import make_config

    require_extra(["openenv", "uvicorn", "fastapi"], "openenv", "tutorzoo serve")
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {args.limit}")
    out = None
    if args.out is not None:
        out = Path(args.out)
        check_out_arg(out)
        held = [n for n in ("episodes.jsonl", "abandoned.jsonl") if (out / n).exists()]
        if held:
            raise ConfigError(f"--out {out} already holds {', '.join(held)}; give a new folder (a server's records "
                              "are never appended to another run's)")
    protocol = {"max_turns": args.max_turns, "opener": args.opener, "posttest": args.posttest}
    if args.task_path:
        protocol["task_path"] = args.task_path
    from tutorzoo.agents.gym_views import simulated_student

    # the defaults make the specs of reset(seed=...), with or without --suite: checked either way
    make_config(task_set=args.task_set, task_id=args.task_id, **protocol)
    simulated_student(args.persona)  # an unknown persona fails here, with a did-you-mean
    specs = []
    if args.suite is not None:
        from tutorzoo.eval.suite import load_suite

        specs = load_suite(args.suite).specs(args.split)[: args.limit]
        if not specs:
            raise ConfigError(f"suite {args.suite!r} has no specs in split {args.split!r}; choose another --split")
    from tutorzoo.eval.serve import Ledger, SpecSource, build_app

    source = SpecSource(specs, persona=args.persona, task_set=args.task_set, task_id=args.task_id, protocol=protocol)
    app = build_app(source, Ledger(out), max_sessions=args.max_sessions, idle_timeout_s=args.idle_timeout or None)
    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except (OSError, OverflowError) as exc:
        raise ConfigError(f"cannot listen on {args.host}:{args.port} ({getattr(exc, 'strerror', None) or exc}); "
                          "choose another --port (0 picks a free one) or --host") from None
    sock.listen(2048)  # connections wait in the backlog from here, so the line below is true when printed
    host, port = sock.getsockname()[:2]
    what = f"{len(specs)} specs of suite {args.suite}" if specs else f"persona {args.persona} on {args.task_set}"
    # one plain line a script can read the port from (port 0 picks a free one)
    print(f"tutorzoo serve: listening on http://{host}:{port} (ws://{host}:{port}/ws), {what}, at most "
          f"{args.max_sessions} sessions", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5,
                                           ws_ping_interval=20.0))
    server.run(sockets=[sock])
    return EXIT_OK


def _score_argv(rest: list[str]) -> list[str]:
    """The output rules for ``score``: a run folder stands for its ``episodes.jsonl`` (scored into
    ``FOLDER/score/`` unless ``--out`` says otherwise, so that an eval's own ``metrics.json`` is not replaced);
    ``--out`` naming a file is refused (one line, before any work)."""
    rest = list(rest)
    has_out = False
    for i, arg in enumerate(rest):
        if arg == "--out" and i + 1 < len(rest):
            check_out_arg(Path(rest[i + 1]))
            has_out = True
        elif arg.startswith("--out="):
            check_out_arg(Path(arg.split("=", 1)[1]))
            has_out = True
    takes_value = {"--out", "--group-by", "--k", "--max-k", "--resamples", "--confidence", "--seed", "--annotator"}
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
    from tutorzoo.eval.score import main as score_main

    return score_main(_score_argv(args.rest))


def cmd_play(args: argparse.Namespace, console: Console) -> int:
    from tutorzoo.eval.play import main as play_main

    return play_main(args.rest)


def cmd_agreement(args: argparse.Namespace, console: Console) -> int:
    from tutorzoo.eval.agreement import main as agreement_main

    return agreement_main(args.rest)


def cmd_train(args: argparse.Namespace, console: Console) -> int:
    recipe = next((a for a in args.rest if not a.startswith("-")), None)
    if recipe in TRAIN_EXTRAS:  # before importing the recipe: a raw ImportError traceback helps nobody
        require_extra(TRAIN_EXTRAS[recipe], "train", f"tutorzoo train {recipe}")
    from tutorzoo.train.cli import main as train_main

    return train_main(args.rest)


def cmd_judge(args: argparse.Namespace, console: Console) -> int:
    from tutorzoo.eval.judges.cli import main as judge_main

    return judge_main(args.rest)


# Subcommands with a parser of their own: everything after the name is theirs (``--help`` included, which an
# argparse REMAINDER would not pass on when it comes first). Name -> (help in ``tutorzoo --help``, command).
PASSTHROUGH: dict[str, tuple[str, Callable[[argparse.Namespace, Console], int]]] = {
    "score": ("compute every metric a file supports: episodes.jsonl, SID dialogues, chats, MathDial, MRBench, "
              "EducationQ logs", cmd_score),
    "play": ("sit in the tutor's seat at the terminal against a simulated student", cmd_play),
    "agreement": ("annotator accuracy and Cohen's kappa per field against the gold set", cmd_agreement),
    "train": ("train a tutor: corpus, sft, grpo, dpo or ppo (tutorzoo train RECIPE --config F)", cmd_train),
    "judge": ("LLM judges: list rubrics, calibrate a judge against labelled examples", cmd_judge),
}


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

def _judge_args(p: argparse.ArgumentParser) -> None:
    """``--judge`` and its options, from :mod:`tutorzoo.eval.judges.cli`."""
    from tutorzoo.eval.judges.cli import add_judge_args

    add_judge_args(p)


def parser() -> argparse.ArgumentParser:
    from tutorzoo.eval.tracking import version

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
    e.add_argument("--split", choices=["all", "train", "held_out"], default="all",
                   help="the suite's units to run: all (default), train (what the recipes train on) or held_out")
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
    r.add_argument("--persona", default="all_round_partly_wrong", help=PROTOCOL_HELP["persona"])
    r.add_argument("--task-set", default="math", help=PROTOCOL_HELP["task_set"])
    r.add_argument("--task-id", default=None, help="default: drawn from each episode's seed")
    r.add_argument("--task-path", default=None, help="data for the task set (mcq bank file, lesson folder)")
    r.add_argument("--episodes", type=int, default=1, help="episodes to play (>= 1)")
    r.add_argument("--seed", type=int, default=0,
                   help="run seed: episode i gets a seed derived from (seed, i); different seeds share no episode")
    r.add_argument("--max-turns", type=int, default=8, help=PROTOCOL_HELP["max_turns"])
    r.add_argument("--opener", choices=["student", "tutor"], default="student", help=PROTOCOL_HELP["opener"])
    r.add_argument("--posttest", choices=["isomorphic", "same", "both"], default="isomorphic",
                   help=PROTOCOL_HELP["posttest"])
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

    for name, (help_text, func) in PASSTHROUGH.items():  # the parsing is theirs: the rest of the line goes on
        own = sub.add_parser(name, help=help_text, add_help=False)
        own.add_argument("rest", nargs=argparse.REMAINDER, help=f"the options of tutorzoo {name} --help")
        own.set_defaults(func=func)

    sv = sub.add_parser("serve", help="serve the tutor's seat as an OpenEnv environment (WebSocket sessions)")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback only)")
    sv.add_argument("--port", type=int, default=8000, help="port (0: a free one, printed on start)")
    sv.add_argument("--max-sessions", type=int, default=8, help="most concurrent sessions; one more is refused")
    sv.add_argument("--idle-timeout", type=float, default=600.0,
                    help="seconds a session may stay silent before it is closed (0: never); its episode is abandoned")
    sv.add_argument("--suite", default=None, help="serve this suite's specs (reset with index=I); reset with seed=S "
                                                  "plays a spec of --persona, --task-set and the protocol options")
    sv.add_argument("--split", choices=["all", "train", "held_out"], default="all",
                    help="which of the suite's specs to serve (default: all)")
    sv.add_argument("--limit", type=int, default=None, help="only the first N specs of the suite")
    sv.add_argument("--persona", default="all_round_partly_wrong", help="persona, family or distribution:NAME")
    sv.add_argument("--task-set", default="math", help="task set of seed-drawn episodes: math, stem or mcq")
    sv.add_argument("--task-id", default=None, help="default: drawn from each episode's seed")
    sv.add_argument("--task-path", default=None, help="data for the task set (mcq bank file, lesson folder)")
    sv.add_argument("--max-turns", type=int, default=8, help="most tutor turns of an episode (default 8)")
    sv.add_argument("--opener", choices=["student", "tutor"], default="student",
                    help="who opens the dialogue (default: the student, with its question)")
    sv.add_argument("--posttest", choices=["isomorphic", "same", "both"], default="isomorphic",
                    help="post-test items: isomorphic (default), the pre-test's (same), or both")
    sv.add_argument("--out", default=None, help="folder for episodes.jsonl (finished episodes) and abandoned.jsonl")
    sv.set_defaults(func=cmd_serve)

    ls = sub.add_parser("list", help="list tutors, personas, tasks, task sets or suites")
    ls.add_argument("what", choices=["tutors", "personas", "tasks", "task-sets", "suites"], help="what to list")
    ls.add_argument("--task-set", default="math", help="the task set whose tasks `list tasks` shows (default math)")
    ls.add_argument("--task-path", default=None, help="data for that task set (an mcq bank file, a lesson folder)")
    ls.set_defaults(func=cmd_list)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    given = None if argv is None else list(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in PASSTHROUGH:
        args = argparse.Namespace(command=argv[0], rest=argv[1:])
        args.func = PASSTHROUGH[argv[0]][1]
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


__all__ = ["EXIT_ERROR", "EXIT_NOT_SCORED", "EXIT_OK", "cmd_eval", "cmd_report", "cmd_rollout",
           "main", "parser", "require_extra", "tutor_names", "write_reports"]


if __name__ == "__main__":
    sys.exit(main())
