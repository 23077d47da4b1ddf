"""``tutorzoo judge``: list the judge rubrics, calibrate a judge against labelled examples.

Examples::

    tutorzoo judge list
    tutorzoo judge calibrate --rubric sid_rubrics --judge openai:gpt-4o                 # key: $OPENAI_API_KEY
    tutorzoo judge calibrate --rubric sid_rubrics --judge openai:Qwen/Qwen2.5-72B-Instruct \\
        --base-url http://127.0.0.1:8000/v1 --samples 3 --out runs/calibration          # a vLLM server
    tutorzoo judge calibrate --rubric dr_academy --judge hf:./models/judge --labels my_labels.jsonl

``calibrate`` prints a table per criterion (accuracy, kappa — quadratic-weighted for likert —, MAE, failed
verdicts) and writes ``OUT/calibration_RUBRIC.json`` with every verdict. :func:`add_judge_args` and
:func:`judge_config_from_args` give ``tutorzoo eval`` its ``--judge ...`` options.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from tutorzoo.envs.errors import ConfigError, TutorZooError
from tutorzoo.eval.judges.judge import Judge, JudgeConfig, make_judge_config

EXIT_OK, EXIT_ERROR = 0, 2
_CONFIG_KEYS = ("aggregate", "max_new_tokens", "cache_dir")  # --judge-arg keys that are JudgeConfig fields


def _parse_judge_args(items: Sequence[str] | None, flag: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``KEY=VALUE`` items split into JudgeConfig fields and backend options (values read as YAML scalars)."""
    fields: dict[str, Any] = {}
    backend: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} takes KEY=VALUE, got {item!r}")
        parsed = yaml.safe_load(value) if value else value
        (fields if key in _CONFIG_KEYS else backend)[key] = parsed
    return fields, backend


def add_judge_args(parser: argparse.ArgumentParser) -> None:
    """The judge options of ``tutorzoo eval``: ``--judge``, ``--judge-base-url``, ``--judge-samples``,
    ``--judge-temperature`` and repeatable ``--judge-arg KEY=VALUE``."""
    g = parser.add_argument_group("judge (judge-only metrics are 'not computed' without one)")
    g.add_argument("--judge", default=None, metavar="BACKEND",
                   help="LLM judge: openai:<model> (key from $OPENAI_API_KEY) or hf:<path>")
    g.add_argument("--judge-base-url", default=None, metavar="URL",
                   help="OpenAI-compatible endpoint of the judge, e.g. a vLLM server http://host:8000/v1")
    g.add_argument("--judge-samples", type=int, default=None, metavar="N",
                   help="replies per judged item (default: the rubric's)")
    g.add_argument("--judge-temperature", type=float, default=None, metavar="T",
                   help="judge sampling temperature (default: the rubric's, SID 0.1)")
    g.add_argument("--judge-arg", action="append", default=None, metavar="KEY=VALUE",
                   help="judge option (repeatable): aggregate=majority|mean, max_new_tokens=N, cache_dir=DIR, "
                        "or a backend option such as timeout=120")


def judge_config_from_args(args: argparse.Namespace) -> JudgeConfig | None:
    """The :class:`JudgeConfig` of ``--judge ...`` options, or None without ``--judge``."""
    backend = getattr(args, "judge", None)
    extras = {"--judge-base-url": getattr(args, "judge_base_url", None),
              "--judge-samples": getattr(args, "judge_samples", None),
              "--judge-temperature": getattr(args, "judge_temperature", None),
              "--judge-arg": getattr(args, "judge_arg", None)}
    if not backend:
        given = [flag for flag, value in extras.items() if value is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} need(s) --judge BACKEND (e.g. --judge openai:gpt-4o)")
        return None
    fields, backend_args = _parse_judge_args(args.judge_arg, "--judge-arg")
    return make_judge_config(backend=backend, base_url=args.judge_base_url, samples=args.judge_samples,
                             temperature=args.judge_temperature, backend_args=backend_args, **fields)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tutorzoo judge", description="LLM judges: rubrics and calibration.")
    sub = p.add_subparsers(dest="action", required=True)
    ls = sub.add_parser("list", help="the judge rubrics with their criteria")
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")
    c = sub.add_parser("calibrate", help="agreement of a judge with a rubric's labelled examples")
    c.add_argument("--rubric", required=True, help="rubric name (eval/judges/rubrics/NAME.yaml) or path")
    c.add_argument("--judge", required=True, metavar="BACKEND", help="openai:<model> or hf:<path>")
    c.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (vLLM, llama.cpp, ...)")
    c.add_argument("--samples", type=int, default=None, help="replies per example (default: the rubric's)")
    c.add_argument("--temperature", type=float, default=None, help="default: the rubric's")
    c.add_argument("--aggregate", choices=["majority", "mean"], default=None, help="default: the rubric's")
    c.add_argument("--judge-arg", action="append", default=None, metavar="KEY=VALUE",
                   help="max_new_tokens=N, cache_dir=DIR or a backend option (repeatable)")
    c.add_argument("--labels", default=None, help="labelled examples JSONL (default: "
                                                  "eval/judges/calibration/RUBRIC.jsonl)")
    c.add_argument("--limit", type=int, default=None, help="only the first N examples")
    c.add_argument("--out", default="runs/judge_calibration", help="folder for calibration_RUBRIC.json")
    return p


def cmd_list(args: argparse.Namespace, console: Any) -> int:
    from tutorzoo.eval.judges.rubric import list_rubrics, load_rubric_spec

    specs = [load_rubric_spec(name) for name in list_rubrics()]
    if args.json:
        print(json.dumps([{"name": s.name, "description": s.description, "variables": list(s.variables),
                           "temperature": s.temperature, "samples": s.samples, "aggregate": s.aggregate,
                           "criteria": {c.name: c.describe() for c in s.criteria.values()}} for s in specs], indent=2))
        return EXIT_OK
    from rich.table import Table

    table = Table(title="Judge rubrics (eval/judges/rubrics/)")
    for column in ("rubric", "criteria", "defaults", "variables"):
        table.add_column(column)
    for s in specs:
        criteria = "\n".join(f"{c.name} {_short(c)}" for c in s.criteria.values())
        defaults = f"temperature {s.temperature}\nsamples {s.samples}\n{s.aggregate}"
        table.add_row(f"{s.name}\n[dim]{s.description}[/dim]", criteria, defaults, ", ".join(s.variables))
    console.print(table)
    return EXIT_OK


def _short(c: Any) -> str:
    kind = {"likert": f"{c.min}-{c.max}", "binary": "true/false"}.get(c.type, "|".join(c.labels))
    return f"{kind} (fail {json.dumps(c.fail_value)})"


def _fmt(value: Any) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def cmd_calibrate(args: argparse.Namespace, console: Any) -> int:
    from tutorzoo.eval.judges.calibrate import calibrate
    from tutorzoo.eval.tracking import scrub_secrets

    fields, backend_args = _parse_judge_args(args.judge_arg, "--judge-arg")
    if args.aggregate is not None:
        fields["aggregate"] = args.aggregate
    config = make_judge_config(backend=args.judge, base_url=args.base_url, samples=args.samples,
                               temperature=args.temperature, backend_args=backend_args, **fields)
    judge = Judge(config)
    report = calibrate(judge, args.rubric, args.labels, args.limit)
    report["config"] = config.model_dump()
    report = scrub_secrets(report)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"calibration_{report['rubric']}.json"
    path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    from rich.table import Table

    s = report["settings"]
    table = Table(title=f"Judge {report['judge']} on {report['rubric']}: {report['n_examples']} labelled examples "
                        f"(temperature {s['temperature']}, {s['samples']} sample(s), {s['aggregate']})")
    for column in ("criterion", "n", "accuracy", "kappa", "MAE", "pearson r", "failed verdicts"):
        table.add_column(column, justify="left" if column == "criterion" else "right")
    for name, c in report["criteria"].items():
        kappa = _fmt(c["kappa"]) + (" (qw)" if c["kappa_kind"] == "quadratic-weighted" else "")
        table.add_row(name, str(c["n"]), _fmt(c["accuracy"]), kappa, _fmt(c.get("mae", "-")),
                      _fmt(c.get("pearson", "-")), str(c["failed_verdicts"]))
    console.print(table)
    console.print(f"{report['failed_verdicts']} of {report['n_examples']} verdicts failed (no parsable sample; fail "
                  f"values used), {report['failed_samples']} of {report['samples']} samples failed. Wrote {path}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    from rich.console import Console

    args = _parser().parse_args(argv)
    console = Console()
    try:
        return {"list": cmd_list, "calibrate": cmd_calibrate}[args.action](args, console)
    except TutorZooError as exc:
        console.print(f"[red]tutorzoo judge {args.action}: {exc}[/red]")
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
