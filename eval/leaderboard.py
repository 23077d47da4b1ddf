"""The leaderboard of a run: tutors ranked by learning gain, with CIs, printed and written as a report."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from eval.metrics import METRICS, suite_metrics

# The columns of the printed leaderboard: (metric, header, scale). The report has every metric.
COLUMNS: tuple[tuple[str, str, float], ...] = (
    ("learning_gain", "Gain iso", 100.0),
    ("learning_gain_same", "Gain same", 100.0),
    ("ACC_pre", "Pre %", 1.0),
    ("ACC_post", "Post %", 1.0),
    ("TotalScore", "SID Total", 1.0),
)


def build(records: list[dict]) -> dict:
    """Suite metrics per tutor plus the ranking (by mean isomorphic learning gain, then name)."""
    metrics = suite_metrics(records, group_by="tutor")
    groups = metrics["groups"]

    def gain(name: str) -> float:
        value = groups[name]["metrics"]["learning_gain"]["mean"]
        return float("-inf") if value is None else value

    ranking = sorted(groups, key=lambda n: (-gain(n), n))
    failures = sum(1 for r in records if r.get("failures"))
    return {"ranking": ranking, "metrics": metrics, "n_episodes": len(records), "n_failed_episodes": failures}


def _cell(summary: dict, scale: float) -> str:
    """``mean ±half-width`` of the CI (compact enough for an 80-column terminal)."""
    if summary["mean"] is None:
        return "n/a"
    mean = summary["mean"] * scale
    if summary.get("ci_low") is None:
        return f"{mean:.2f}"
    half = (summary["ci_high"] - summary["ci_low"]) * scale / 2
    return f"{mean:.2f} ±{half:.2f}"


def render_table(board: dict, title: str) -> Table:
    table = Table(title=title, show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("Tutor")
    table.add_column("N", justify="right")
    for _, header, _ in COLUMNS:
        table.add_column(header, justify="right")
    groups = board["metrics"]["groups"]
    for rank, name in enumerate(board["ranking"], start=1):
        m = groups[name]["metrics"]
        table.add_row(str(rank), name, str(groups[name]["n_episodes"]),
                      *(_cell(m[key], scale) for key, _, scale in COLUMNS))
    return table


def print_leaderboard(board: dict, title: str, console: Console | None = None) -> None:
    console = console or Console()
    console.print(render_table(board, title))
    console.print("Gain: post-test minus pre-test score in percentage points, on isomorphic items (iso) and on the "
                  "pre-test items (same); ± half-width of the 95% bootstrap CI over episodes.")
    if board["n_failed_episodes"]:
        console.print(f"[red]{board['n_failed_episodes']} episodes recorded a failure (see episodes.jsonl).[/red]")


def write_report(board: dict, out_dir: Path, title: str, run_info: dict) -> None:
    """``metrics.json`` (every metric per tutor with CI and N) and ``report.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {
        "run": run_info,
        "ranking": board["ranking"],
        "n_episodes": board["n_episodes"],
        "n_failed_episodes": board["n_failed_episodes"],
        "metrics": {name: spec.to_dict() for name, spec in METRICS.items()},
        "groups": board["metrics"]["groups"],
        "bootstrap": board["metrics"].get("bootstrap"),
    }
    (out_dir / "metrics.json").write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    lines = [f"# {title}", ""]
    lines += [f"- {k}: {v}" for k, v in run_info.items()]
    lines += ["", "## Leaderboard", "", "| # | Tutor | N | " + " | ".join(h for _, h, _ in COLUMNS) + " |",
              "|---" * (3 + len(COLUMNS)) + "|"]
    groups = board["metrics"]["groups"]
    for rank, name in enumerate(board["ranking"], start=1):
        m = groups[name]["metrics"]
        cells = " | ".join(_cell(m[key], scale) for key, _, scale in COLUMNS)
        lines.append(f"| {rank} | {name} | {groups[name]['n_episodes']} | {cells} |")
    lines += ["", "## Every metric", "", "| Metric | higher is better | " + " | ".join(board["ranking"]) + " |",
              "|---|---|" + "---|" * len(board["ranking"])]
    for metric, spec in METRICS.items():
        row = [_cell(groups[n]["metrics"][metric], 1.0) for n in board["ranking"]]
        lines.append(f"| {metric} | {spec.higher_is_better} | " + " | ".join(row) + " |")
    lines += ["", "Values are suite means over episodes (EducationQ metrics pooled over item pairs, in %); "
              "± gives the half-width of the 95% percentile-bootstrap interval over episodes. "
              "n/a: not computable on this suite "
              "(for example judge-only or reference-dialogue metrics)."]
    (out_dir / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
