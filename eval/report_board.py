"""What ``report.html`` reads from a leaderboard and its records, and how text goes into the page's HTML.

The shared vocabulary of the report's modules (:mod:`tutorzoo.eval.report_plots`, :mod:`tutorzoo.eval.report_sections`,
:mod:`tutorzoo.eval.report_browser`, :mod:`tutorzoo.eval.report_html`): a board's metric specs, summaries, columns and
display scales; a record's persona, family, task and failures; escaping (every value from a record is untrusted
text) and the page's table, note and section markup.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from tutorzoo.envs.records import LEARNING_GAIN


def esc(value: Any) -> str:
    """HTML-escaped text; ``://`` written as ``&#58;//`` so that no URL, even one quoted from a record,
    appears literally in the file (the browser shows it unchanged)."""
    return html.escape(str(value), quote=True).replace("://", "&#58;//")


def finite_float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def round_finite(value: Any, digits: int = 4) -> float | None:
    number = finite_float(value)
    return None if number is None else round(number, digits)


def board_specs(board: Mapping) -> dict[str, dict]:
    """Metric name -> spec dict (``higher_is_better``, ``description``), the board's own or the registry's."""
    raw = board.get("specs") or board.get("metrics", {}).get("specs")
    if not raw:
        from tutorzoo.eval.metrics import METRICS

        raw = METRICS
    specs = {name: (s.to_dict() if hasattr(s, "to_dict") else dict(s)) for name, s in raw.items()}
    for group in board["metrics"]["groups"].values():  # a metric the specs do not declare is still shown
        for name in sorted(group["metrics"]):
            specs.setdefault(name, {"name": name, "higher_is_better": None, "description": ""})
    return specs


def metric_summary(board: Mapping, tutor: str, metric: str) -> dict | None:
    return board["metrics"]["groups"][tutor]["metrics"].get(metric)


def n_of(group: Mapping) -> int:
    return int(group.get("n_episodes", group.get("n_units", 0)) or 0)


def is_computed(board: Mapping, metric: str) -> bool:
    return any((metric_summary(board, t, metric) or {}).get("mean") is not None for t in board["ranking"])


def not_computed_reason(board: Mapping, metric: str) -> str | None:
    for tutor in board["ranking"]:
        reason = (metric_summary(board, tutor, metric) or {}).get("not_computed")
        if reason:
            return str(reason)
    return None


def direction_arrow(spec: Mapping) -> str:
    return {True: " \u2191", False: " \u2193"}.get(spec.get("higher_is_better"), "")


def board_columns(board: Mapping, specs: Mapping) -> list[tuple[str, str, float]]:
    columns = board.get("columns")
    if not columns:
        from tutorzoo.eval.leaderboard import COLUMNS

        columns = COLUMNS
    chosen = [(str(m), str(h), float(s)) for m, h, s in columns if m in specs]
    if not chosen:  # a kind without declared columns: its first metrics
        chosen = [(m, m, 1.0) for m in specs if is_computed(board, m)][:5]
    return chosen


def metric_scale(board: Mapping, metric: str) -> float:
    """One unit per quantity: a metric is shown on its leaderboard column's scale everywhere (a learning gain in
    percentage points, as in the gain plots), else as computed."""
    from tutorzoo.eval.leaderboard import display_scale

    return display_scale(dict(board), metric)


def metric_unit(board: Mapping, metric: str) -> str:
    return " (points)" if metric.startswith(LEARNING_GAIN) and metric_scale(board, metric) == 100.0 else ""


def summary_cell(summary: Mapping | None, scale: float = 1.0) -> tuple[str, str]:
    """(text, title) of one table cell: ``mean ±half-width``, *not computed* or n/a."""
    if not summary:
        return "n/a", "not reported for this suite"
    if summary.get("mean") is None:
        if summary.get("not_computed"):
            return "not computed", str(summary["not_computed"])
        return "n/a", f"undefined on this run (N = {summary.get('n', 0)})"
    mean = summary["mean"] * scale
    low, high = summary.get("ci_low"), summary.get("ci_high")
    n = summary.get("n")
    if low is None or high is None:
        return f"{mean:.3g}" if abs(mean) >= 100 else f"{mean:.2f}", f"N = {n}; no CI"
    half = (high - low) * scale / 2
    return f"{mean:.2f} \u00b1{half:.2f}", f"95% CI [{low * scale:.3f}, {high * scale:.3f}], N = {n}"


def persona_families() -> dict[str, str]:
    from tutorzoo.envs.errors import TutorZooError

    try:
        from tutorzoo.agents.student.personas import load_personas

        return {name: p.family for name, p in load_personas().items()}
    except (OSError, TutorZooError):  # the report still renders; personas then show under "other"
        return {}


def family_of(persona: str, families: Mapping[str, str]) -> str:
    if "/" in persona:
        return persona.split("/", 1)[0]
    return families.get(persona, "other")


def is_episode(record: Mapping) -> bool:
    return isinstance(record.get("transcript"), list)


def record_spec(record: Mapping) -> Mapping:
    for key in ("spec", "unit"):
        value = record.get(key)
        if isinstance(value, Mapping):
            return value
    return {}


def persona_label(record: Mapping) -> str:
    persona = record_spec(record).get("persona")
    return str(persona) if persona else "\u2014"


def task_label(record: Mapping) -> str:
    spec = record_spec(record)
    task_id = next((spec[k] for k in ("task_id", "lesson_id", "lesson", "task", "context_id", "family")
                    if isinstance(spec.get(k), (str, int)) and spec.get(k) != ""), None)
    task_set = spec.get("task_set")
    if task_id is None:
        return str(record.get("key") or (task_set or "\u2014"))
    return f"{task_set}/{task_id}" if task_set else str(task_id)


def failure_text(failure: Any) -> str:
    if isinstance(failure, Mapping):
        where = failure.get("agent") or failure.get("stage") or failure.get("kind") or failure.get("phase") or ""
        error = str(failure.get("error") or failure.get("message") or json.dumps(failure, sort_keys=True))
        return f"{where}: {error}" if where else error
    return str(failure)


# ----------------------------------------------------------------------------------------------- markup


def note_html(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def section_html(sid: str, title: str, body: str) -> str:
    return f'<section id="{sid}"><h2>{esc(title)}</h2>\n{body}\n</section>'


def table_html(header: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "") -> str:
    """A table of escaped cells; a cell may be ``(text, title)`` for a tooltip."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    out = [f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>']
    for row in rows:
        cells = []
        for cell in row:
            if isinstance(cell, tuple):
                cells.append(f'<td title="{esc(cell[1])}">{esc(cell[0])}</td>')
            else:
                cells.append(f"<td>{esc(cell)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "".join(out) + "</tbody></table>"
