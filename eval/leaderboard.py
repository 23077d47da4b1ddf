"""The leaderboard of a run: tutors ranked by the suite kind's metric, with CIs, printed and written as a report.

Any suite kind (:mod:`tutorzoo.eval.kinds`) works: the kind gives the metrics per tutor, their declarations
(``MetricSpec``: direction, aggregation, meaning), the ranking metric and the printed columns. A judge-only
metric that was not computed (no ``--judge``) is shown as "not computed", with the reason in ``report.md`` and
``metrics.json`` — never as a number.

Example::

    from tutorzoo.eval.leaderboard import build, print_leaderboard, write_report
    board = build(records)                               # episodes records (the default kind)
    board = build(records, kind_for(suite), judged=False)
    print_leaderboard(board, "TutorZoo leaderboard")
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.eval.kinds.episodes import COLUMNS  # noqa: F401  (the episodes kind's default columns, kept importable here)

NOT_COMPUTED = "not computed"
MAX_LISTED = 8  # not-computed metric names printed under the leaderboard (all of them are in metrics.json)


def _spec_dict(spec: Any) -> dict:
    if isinstance(spec, Mapping):
        return dict(spec)
    if hasattr(spec, "to_dict"):
        return spec.to_dict()
    raise TypeError(f"a metric spec must be a MetricSpec or a mapping, got {type(spec).__name__}")


def _rank(groups: Mapping[str, dict], metric: str, higher_is_better: bool | None) -> list[str]:
    """Tutors by ``metric`` (its direction; undefined values last), then by name."""
    def key(name: str) -> tuple[float, str]:
        summary = groups[name]["metrics"].get(metric) or {}
        value = summary.get("mean")
        if value is None or not math.isfinite(value):
            return (math.inf, name)
        return (value if higher_is_better is False else -value, name)

    return sorted(groups, key=key)


def not_computed(groups: Mapping[str, dict]) -> dict[str, str]:
    """``{metric: reason}`` for every metric some tutor has as not computed (judge-only without a judge)."""
    out: dict[str, str] = {}
    for group in groups.values():
        for name, summary in group["metrics"].items():
            if isinstance(summary, Mapping) and summary.get("not_computed") and name not in out:
                out[name] = str(summary["not_computed"])
    return out


def build(records: Sequence[dict], kind: Any | None = None, judged: bool = False) -> dict:
    """Metrics per tutor (the kind's), the ranking, the failure summary and what was not computed.

    ``kind`` defaults to the ``episodes`` kind; ``records`` should be in canonical order (the runner's).
    For episodes, the metrics rest on the scored episodes only (no tutor, student or harness failure): an
    episode cut short by a failure is counted and listed, never averaged in; a tutor with none scored has
    every metric undefined (n/a), not a number computed from empty transcripts.
    """
    from tutorzoo.eval.kinds import get_kind
    from tutorzoo.eval.report_paired import paired_comparisons, replicate_spread
    from tutorzoo.eval.runner import failure_summary, has_hard_failure, tutor_health

    kind = kind if kind is not None else get_kind("episodes")
    # item kinds count their own failures as metrics (e.g. tutor_failure_rate): they see every record
    scored = [r for r in records if not has_hard_failure(r)] if kind.name == "episodes" else list(records)
    metrics = dict(kind.metrics(scored, judged))
    specs = {name: _spec_dict(spec) for name, spec in metrics.pop("specs", {}).items()}
    groups = metrics["groups"]
    for tutor in dict.fromkeys(str(r.get("tutor")) for r in records):
        if tutor not in groups:  # nothing scored: every metric undefined
            groups[tutor] = {"n_episodes": 0, "n_units": 0, "metrics": {
                name: {"mean": None, "ci_low": None, "ci_high": None, "n": 0} for name in specs}}
    for group in groups.values():
        group.setdefault("n_units", group.get("n_episodes", 0))
    rank_metric = kind.rank_metric
    ranking = _rank(groups, rank_metric, specs.get(rank_metric, {}).get("higher_is_better", True))
    failed = sum(1 for r in records if r.get("failures"))
    board = {
        "kind": kind.name,
        "rank_metric": rank_metric,
        "columns": [list(c) for c in kind.columns],
        "legend": getattr(kind, "legend", ""),
        "ranking": ranking,
        "metrics": metrics,
        "specs": specs,
        "n_units": len(records),
        "n_failed_units": failed,
        "failures": failure_summary(records),
        "not_computed": not_computed(groups),
        "health": tutor_health(records, ranking),
        "paired": (paired_comparisons(records, ranking, list(dict.fromkeys(
            [m for m in (LEARNING_GAIN, rank_metric) if m in specs or m == rank_metric])))
            if kind.name == "episodes" else
            {"metrics": {}, "not_computed": f"paired comparisons need per-unit values of the metrics; the "
                                            f"{kind.name} kind does not give them yet"}),
    }
    spread = replicate_spread(records, ranking, list(board["paired"]["metrics"]))
    if spread:
        board["replicates"] = spread
    for name, group in groups.items():  # N is what the numbers rest on: the scored units
        group["n_scored"] = board["health"].get(name, {}).get("scored", _n(group))
    if kind.name == "episodes":
        board["n_episodes"] = len(records)
        board["n_failed_episodes"] = failed
    return board


def _cell(summary: Mapping | None, scale: float) -> str:
    """``mean ±half-width`` of the CI (compact enough for an 80-column terminal)."""
    if not summary:
        return "n/a"
    if summary.get("mean") is None:
        return NOT_COMPUTED if summary.get("not_computed") else "n/a"
    mean = summary["mean"] * scale
    if summary.get("ci_low") is None:
        return f"{mean:.2f}"
    half = (summary["ci_high"] - summary["ci_low"]) * scale / 2
    return f"{mean:.2f} ±{half:.2f}"


def _columns(board: dict) -> list[tuple[str, str, float]]:
    return [tuple(c) for c in board.get("columns") or COLUMNS]  # type: ignore[misc]


def _n(group: Mapping) -> int:
    return int(group.get("n_scored", group.get("n_units", group.get("n_episodes", 0))))


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.0f}%"


def health_rows(board: dict) -> list[list[str]]:
    """Per tutor (leaderboard order): records, scored, failed, invalid and clipped shares of its turns."""
    rows = []
    for name in board["ranking"]:
        h = (board.get("health") or {}).get(name)
        if h is None:
            continue
        rows.append([name, str(h["n"]), str(h["scored"]), str(h["failed"]), _pct(h["invalid_share"]),
                     _pct(h["clipped_share"])])
    return rows


HEALTH_HEADER = ("Tutor", "Run", "Scored", "Failed", "Invalid turns", "Clipped turns")


def display_scale(board: dict, metric: str) -> float:
    """The scale a metric is shown on in every table and plot: its leaderboard column's, and a learning gain in
    percentage points even when it is not a column (one unit per quantity)."""
    for key, _, scale in _columns(board):
        if key == metric:
            return scale
    return 100.0 if metric in (LEARNING_GAIN, "learning_gain_same") else 1.0


def paired_scales(board: dict) -> dict[str, float]:
    """The display scale of each paired metric: its leaderboard column's (a gain in points)."""
    return {metric: display_scale(board, metric) for metric in (LEARNING_GAIN, "learning_gain_same",
                                                                 *(m for m, _, _ in _columns(board)))}


def render_table(board: dict, title: str) -> Table:
    """The leaderboard; a tutor's name is folded over lines rather than cut, at any terminal width."""
    table = Table(title=title, show_lines=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("Tutor", overflow="fold", min_width=8)
    table.add_column("N", justify="right", no_wrap=True)
    columns = _columns(board)
    for _, header, _ in columns:
        table.add_column(header, justify="right", overflow="fold")
    groups = board["metrics"]["groups"]
    for rank, name in enumerate(board["ranking"], start=1):
        m = groups[name]["metrics"]
        table.add_row(str(rank), name, str(_n(groups[name])), *(_cell(m.get(key), scale) for key, _, scale in columns))
    return table


def render_health(board: dict) -> Table:
    """What each tutor's numbers rest on (see :func:`tutorzoo.eval.runner.tutor_health`)."""
    table = Table(title="What the numbers rest on: units run, scored (no failure), failed; share of turns "
                        "invalid or clipped")
    for i, header in enumerate(HEALTH_HEADER):
        table.add_column(header, justify="left" if i == 0 else "right", overflow="fold" if i == 0 else "ellipsis",
                         min_width=8 if i == 0 else None, no_wrap=i > 0)
    for row in health_rows(board):
        table.add_row(*row)
    return table


def render_paired(board: dict) -> list[Table]:
    """One table per paired metric (see :mod:`tutorzoo.eval.report_paired`)."""
    from tutorzoo.eval.report_paired import PAIRED_HEADER, display_rows, metric_title

    scales = paired_scales(board)
    tables = []
    for metric, pairs in ((board.get("paired") or {}).get("metrics") or {}).items():
        table = Table(title=f"Paired comparison on shared units: {metric_title(metric, scales.get(metric, 1.0))}")
        for i, header in enumerate(PAIRED_HEADER):
            table.add_column(header, justify="left" if i in (0, 6) else "right", overflow="fold",
                             no_wrap=i in (2, 4, 5))
        for row in display_rows(pairs, scales.get(metric, 1.0)):
            table.add_row(*row)
        tables.append(table)
    return tables


def print_warnings(board: dict, console: Console) -> None:
    """The lines a user must not miss: a tutor that scored nothing, failed episodes, mostly invalid turns."""
    from tutorzoo.eval.runner import health_warnings

    for line in health_warnings(board.get("health") or {}):
        console.print(line, style="red" if line.startswith("error") else "yellow", markup=False, highlight=False,
                      soft_wrap=True)


def print_leaderboard(board: dict, title: str, console: Console | None = None) -> None:
    console = console or Console()
    console.print(render_table(board, title))
    if board.get("legend"):
        console.print(board["legend"], markup=False)
    console.print(render_health(board))
    if len(board["ranking"]) > 1:
        for table in render_paired(board):
            console.print(table)
    missing = board.get("not_computed") or {}
    for reason in sorted(set(missing.values())):
        names = [n for n, r in missing.items() if r == reason]
        shown = ", ".join(names[:MAX_LISTED]) + (f" and {len(names) - MAX_LISTED} more (see metrics.json)"
                                                  if len(names) > MAX_LISTED else "")
        console.print(f"[yellow]Not computed: {shown} — {reason}.[/yellow]")
    failures = board.get("failures") or {}
    n_failed = board.get("n_failed_units", board.get("n_failed_episodes", 0))
    if n_failed:
        what = "episodes" if board.get("kind", "episodes") == "episodes" else "units"
        console.print(f"[red]{n_failed} {what} recorded a failure (see the records file).[/red]")
        for tutor, per in (failures.get("by_tutor_error") or {}).items():
            console.print(f"  {tutor}: " + ", ".join(f"{err} x{n}" for err, n in per.items()), style="red",
                          markup=False)
    print_warnings(board, console)


def write_report(board: dict, out_dir: Path, title: str, run_info: dict, meta: dict | None = None) -> None:
    """``metrics.json`` (every metric per tutor with CI and N, per-tutor health, paired comparisons, the
    failure summary, what was not computed and why) and ``report.md``. Nothing in ``metrics.json`` depends on
    timing or on how the run was executed (a resumed run writes the same bytes); ``meta`` (date, version,
    commit, command line, wall time: :func:`tutorzoo.eval.tracking.run_metadata`) goes to ``run_meta.json`` and to the
    last section of ``report.md``. Secrets are masked."""
    from tutorzoo.eval.report_paired import PAIRED_HEADER, PAIRED_NOTE, display_rows, metric_title
    from tutorzoo.eval.runner import health_warnings
    from tutorzoo.eval.tracking import scrub_secrets

    run_info = scrub_secrets(run_info)
    out_dir.mkdir(parents=True, exist_ok=True)
    metrics = board["metrics"]
    payload = {
        "run": run_info,
        "kind": board.get("kind", "episodes"),
        "rank_metric": board.get("rank_metric"),
        "ranking": board["ranking"],
        "n_units": board.get("n_units"),
        "n_failed_units": board.get("n_failed_units"),
        "failures": board.get("failures"),
        "not_computed": board.get("not_computed", {}),
        "metrics": board.get("specs", {}),
        "groups": metrics["groups"],
        "bootstrap": metrics.get("bootstrap"),
        "health": board.get("health"),
        "paired": board.get("paired"),
    }
    if board.get("replicates"):
        payload["replicates"] = board["replicates"]
    for extra in ("judge_failures", "notes"):
        if extra in metrics:
            payload[extra] = metrics[extra]
    if "n_episodes" in board:
        payload["n_episodes"] = board["n_episodes"]
        payload["n_failed_episodes"] = board["n_failed_episodes"]
    (out_dir / "metrics.json").write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if meta is not None:
        meta = scrub_secrets(meta)
        (out_dir / "run_meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    columns = _columns(board)
    groups = metrics["groups"]
    lines = [f"# {title}", ""]
    lines += [f"- {k}: {v}" for k, v in run_info.items()]
    lines += ["", "## Leaderboard", "", f"Ranked by {board.get('rank_metric')}.", "",
              "| # | Tutor | N | " + " | ".join(h for _, h, _ in columns) + " |", "|---" * (3 + len(columns)) + "|"]
    for rank, name in enumerate(board["ranking"], start=1):
        m = groups[name]["metrics"]
        cells = " | ".join(_cell(m.get(key), scale) for key, _, scale in columns)
        lines.append(f"| {rank} | {name} | {_n(groups[name])} | {cells} |")
    lines += ["", "N: units scored (played without a failure); the metrics rest on them.", "",
              "## Per tutor: what the numbers rest on", "",
              "| " + " | ".join(HEALTH_HEADER) + " |", "|---" * len(HEALTH_HEADER) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in health_rows(board)]
    warnings = health_warnings(board.get("health") or {})
    if warnings:
        lines += [""] + [f"- **{w}**" for w in warnings]
    paired = (board.get("paired") or {}).get("metrics") or {}
    if len(board["ranking"]) > 1 and (board.get("paired") or {}).get("not_computed"):
        lines += ["", "## Paired comparisons", "", f"Not computed: {board['paired']['not_computed']}."]
    if len(board["ranking"]) > 1 and paired:
        scales = paired_scales(board)
        lines += ["", "## Paired comparisons", "", PAIRED_NOTE]
        for metric, pairs in paired.items():
            lines += ["", f"### {metric_title(metric, scales.get(metric, 1.0))}", "",
                      "| " + " | ".join(PAIRED_HEADER) + " |", "|---" * len(PAIRED_HEADER) + "|"]
            lines += ["| " + " | ".join(row) + " |" for row in display_rows(pairs, scales.get(metric, 1.0))]
    spread = board.get("replicates") or {}
    if spread:
        scales = paired_scales(board)
        reps = spread["replicates"]
        lines += ["", "## Test-retest across replicates", "",
                  f"Each replicate replays the units with its own run seed ({len(reps)} replicates). Per tutor: the "
                  "mean of each replicate and the standard deviation of those means (the run-to-run noise).", ""]
        for metric, rows in spread["metrics"].items():
            scale = scales.get(metric, 1.0)
            lines += [f"### {metric_title(metric, scale)}", "",
                      "| Tutor | " + " | ".join(f"replicate {r}" for r in reps) + " | SD |",
                      "|---" * (len(reps) + 2) + "|"]
            for tutor, row in rows.items():
                cells = ["n/a" if m is None else f"{m * scale:.2f}" for m in row["means"]]
                sd = "n/a" if row["sd"] is None else f"{row['sd'] * scale:.2f}"
                lines.append(f"| {tutor} | " + " | ".join(cells) + f" | {sd} |")
            if metric != list(spread["metrics"])[-1]:
                lines.append("")
    specs = board.get("specs", {})
    lines += ["", "## Every metric", "", "| Metric | higher is better | " + " | ".join(board["ranking"]) + " |",
              "|---|---|" + "---|" * len(board["ranking"])]
    for metric, spec in specs.items():
        scale = display_scale(board, metric)
        row = [_cell(groups[n]["metrics"].get(metric), scale) for n in board["ranking"]]
        unit = " (points)" if metric.startswith(LEARNING_GAIN) and scale == 100.0 else ""
        lines.append(f"| {metric}{unit} | {spec.get('higher_is_better')} | " + " | ".join(row) + " |")
    missing = board.get("not_computed") or {}
    if missing:
        lines += ["", "## Not computed", ""]
        lines += [f"- {name}: {reason}" for name, reason in missing.items()]
    failures = board.get("failures") or {}
    if failures.get("n_records_with_failures"):
        lines += ["", "## Failures", "", f"{failures['n_records_with_failures']} records with "
                  f"{failures['n_failures']} failures.", "", "| Tutor | Failure | Count |", "|---|---|---|"]
        for tutor, per in failures["by_tutor_error"].items():
            lines += [f"| {tutor} | {err} | {n} |" for err, n in per.items()]
    lines += ["", "Values are suite means over units (EducationQ metrics pooled over item pairs, in %; learning "
              "gains in percentage points, as on the leaderboard); "
              "± gives the half-width of the 95% percentile-bootstrap interval over units. "
              "n/a: not computable on this suite (for example reference-dialogue metrics); "
              "not computed: judge-only metrics of a run without a judge."]
    glossary = [(name, spec.get("description") or spec.get("meaning") or "") for name, spec in specs.items()]
    if glossary:
        lines += ["", "## Glossary", ""]
        lines += [f"- **{name}**: {text}" if text else f"- **{name}**" for name, text in glossary]
    if meta:  # last, so that everything above is the same bytes for a resumed run
        lines += ["", "## Run metadata", ""]
        lines += [f"- {k}: {v}" for k, v in meta.items()]
    (out_dir / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
