"""``report.html``: one self-contained page with a run's leaderboard, plots and a transcript browser.

The page needs nothing from the network: the plots are inline SVG drawn by matplotlib (text kept as text, ids
prefixed per plot, the XML prologue and metadata removed), the data of the browser is one JSON document in a
``<script type="application/json">`` tag, and a small vanilla script renders it. A Content-Security-Policy
allows only that script (by hash), so markup smuggled into a transcript could not run even if it escaped.
Everything taken from a record is untrusted text: Python escapes what it writes into the HTML, the JSON has
``<``, ``>`` and ``&`` as ``\\u`` escapes, and the script writes text with ``textContent`` only.

Sections: run info; the leaderboard and every metric per tutor (mean, 95% CI, N; judge-only metrics without
a judge shown as *not computed* with the reason); per-metric bars with CI error bars; learning gain by persona
family (bars, bootstrap CIs) and by persona (heat map); the SID metric profile per tutor; pre/post transitions
per tutor (wrong->right, right->wrong, ... on isomorphic and same items); failures and how episodes ended; the
transcript browser (filter by tutor, persona, task; the selected episode's turns with their 9 SID fields,
pre/post results and gain; for item suites the prompt, response, grades and judgments). A section the run
has no data for is replaced by a one-line note.

The browser's state lives in the URL hash (``report.html#tutor=random&persona=...&task=math/fractions&ep=3``),
so a link opens a filtered view. The same inputs give the same bytes (fixed SVG hash salt, no dates).

Example::

    from eval.leaderboard import build
    from eval.report_html import write_html_report
    path = write_html_report(Path("runs/default"), build(records), records, {"suite": "default"})
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from eval.tracking import scrub_secrets

SID_PROFILE: tuple[str, ...] = ("SD", "SV", "IKT", "BP", "SC", "L3GR", "3C")
# Metrics drawn as bars when a suite has them (besides its printed columns), in this order.
HEADLINE: tuple[str, ...] = ("learning_gain", "learning_gain_same", "ALG", "ALG_same", "ACC_post", "ACC_post_same",
                             "PNIR", "PNIR_same", "TotalScore", "Success@5", "Telling@5", "reward")
MAX_PANELS = 12
TRANSITIONS: tuple[tuple[str, str, str], ...] = (
    ("wrong_to_right", "wrong \u2192 right", "#2ca02c"),
    ("right_to_right", "right \u2192 right", "#9ecae1"),
    ("wrong_to_wrong", "wrong \u2192 wrong", "#c7c7c7"),
    ("right_to_wrong", "right \u2192 wrong", "#d62728"),
)
PAIR_KINDS: tuple[tuple[str, str], ...] = (("isomorphic", "isomorphic post-test items"),
                                           ("same", "same items (pre-test items asked again)"))
TUTOR_COLORS: tuple[str, ...] = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                                 "#7f7f7f", "#bcbd22", "#17becf")
TURN_FIELDS: tuple[str, ...] = ("speaker", "utterance", "teacher_intent", "teaching_strategy", "discipline",
                                "discipline_transfer", "student_cognition_state", "teacher_guidance_level",
                                "cognitive_level")
_SVG_RC = {"svg.hashsalt": "tutorzoo-report", "svg.fonttype": "none", "font.size": 9.0,
           "axes.spines.top": False, "axes.spines.right": False}
_SVG_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}


# ----------------------------------------------------------------------------------------------- helpers


def _esc(value: Any) -> str:
    """HTML-escaped text; ``://`` written as ``&#58;//`` so that no URL, even one quoted from a record,
    appears literally in the file (the browser shows it unchanged)."""
    return html.escape(str(value), quote=True).replace("://", "&#58;//")


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _round(value: Any, digits: int = 4) -> float | None:
    number = _finite(value)
    return None if number is None else round(number, digits)


def _specs(board: Mapping) -> dict[str, dict]:
    """Metric name -> spec dict (``higher_is_better``, ``description``), the board's own or the registry's."""
    raw = board.get("specs") or board.get("metrics", {}).get("specs")
    if not raw:
        from eval.metrics import METRICS

        raw = METRICS
    specs = {name: (s.to_dict() if hasattr(s, "to_dict") else dict(s)) for name, s in raw.items()}
    for group in board["metrics"]["groups"].values():  # a metric the specs do not declare is still shown
        for name in sorted(group["metrics"]):
            specs.setdefault(name, {"name": name, "higher_is_better": None, "description": ""})
    return specs


def _summary(board: Mapping, tutor: str, metric: str) -> dict | None:
    return board["metrics"]["groups"][tutor]["metrics"].get(metric)


def _n_of(group: Mapping) -> int:
    return int(group.get("n_episodes", group.get("n_units", 0)) or 0)


def _computed(board: Mapping, metric: str) -> bool:
    return any((_summary(board, t, metric) or {}).get("mean") is not None for t in board["ranking"])


def _not_computed_reason(board: Mapping, metric: str) -> str | None:
    for tutor in board["ranking"]:
        reason = (_summary(board, tutor, metric) or {}).get("not_computed")
        if reason:
            return str(reason)
    return None


def _arrow(spec: Mapping) -> str:
    return {True: " \u2191", False: " \u2193"}.get(spec.get("higher_is_better"), "")


def _columns(board: Mapping, specs: Mapping) -> list[tuple[str, str, float]]:
    columns = board.get("columns")
    if not columns:
        from eval.leaderboard import COLUMNS

        columns = COLUMNS
    chosen = [(str(m), str(h), float(s)) for m, h, s in columns if m in specs]
    if not chosen:  # a kind without declared columns: its first metrics
        chosen = [(m, m, 1.0) for m in specs if _computed(board, m)][:5]
    return chosen


def _scale(board: Mapping, metric: str) -> float:
    """One unit per quantity: a metric is shown on its leaderboard column's scale everywhere (a learning gain in
    percentage points, as in the gain plots), else as computed."""
    from eval.leaderboard import display_scale

    return display_scale(dict(board), metric)


def _unit(board: Mapping, metric: str) -> str:
    return " (points)" if metric.startswith("learning_gain") and _scale(board, metric) == 100.0 else ""


def _cell(summary: Mapping | None, scale: float = 1.0) -> tuple[str, str]:
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


def _persona_families() -> dict[str, str]:
    from envs.errors import TutorZooError

    try:
        from agents.student.personas import load_personas

        return {name: p.family for name, p in load_personas().items()}
    except (OSError, TutorZooError):  # the report still renders; personas then show under "other"
        return {}


def _family(persona: str, families: Mapping[str, str]) -> str:
    if "/" in persona:
        return persona.split("/", 1)[0]
    return families.get(persona, "other")


def _is_episode(record: Mapping) -> bool:
    return isinstance(record.get("transcript"), list)


def _spec(record: Mapping) -> Mapping:
    for key in ("spec", "unit"):
        value = record.get(key)
        if isinstance(value, Mapping):
            return value
    return {}


def _persona(record: Mapping) -> str:
    persona = _spec(record).get("persona")
    return str(persona) if persona else "\u2014"


def _task(record: Mapping) -> str:
    spec = _spec(record)
    task_id = next((spec[k] for k in ("task_id", "lesson_id", "lesson", "task", "context_id", "family")
                    if isinstance(spec.get(k), (str, int)) and spec.get(k) != ""), None)
    task_set = spec.get("task_set")
    if task_id is None:
        return str(record.get("key") or (task_set or "\u2014"))
    return f"{task_set}/{task_id}" if task_set else str(task_id)


# ----------------------------------------------------------------------------------------------- plots


def _svg(fig: Any, name: str, label: str) -> str:
    """The figure as an inline ``<svg>``: no prologue or metadata, every id prefixed with ``name``."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata=_SVG_METADATA)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)

    def fix_tag(match: re.Match) -> str:  # ids live in tags only (text content has < and > escaped)
        tag = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{name}-{m[1]}"', match[0])
        tag = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{name}-{m[1]})", tag)
        return re.sub(r'href="#([^"]+)"', lambda m: f'href="#{name}-{m[1]}"', tag)

    text = re.sub(r"<[^<>]*>", fix_tag, text)
    return text.replace("<svg ", f'<svg class="plot" data-plot="{_esc(name)}" role="img" aria-label="{_esc(label)}" ',
                        1).strip()


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure  # no pyplot: no global backend or figure registry is touched

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _mpl(text: str) -> str:
    """Plain text for matplotlib: a ``$`` in a name must not start mathtext."""
    return str(text).replace("$", r"\$")


def _tutor_color(index: int) -> str:
    return TUTOR_COLORS[index % len(TUTOR_COLORS)]


def _yerr(mean: float, low: float | None, high: float | None) -> tuple[float, float]:
    if low is None or high is None:
        return 0.0, 0.0
    return max(mean - low, 0.0), max(high - mean, 0.0)


def _plot_metric_bars(board: Mapping, specs: Mapping, metrics: Sequence[str]) -> str:
    tutors = list(board["ranking"])
    ncols = min(4, len(metrics))
    nrows = math.ceil(len(metrics) / ncols)
    fig = _figure(2.6 * ncols + 0.4, 2.3 * nrows + 0.2)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, metric in zip(axes.flat, metrics, strict=False):  # extra axes are hidden below
        scale = _scale(board, metric)
        for i, tutor in enumerate(tutors):
            s = _summary(board, tutor, metric) or {}
            mean = _finite(s.get("mean"))
            if mean is None:
                ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=7, color="#555555")
                continue
            low_ci, high_ci = _finite(s.get("ci_low")), _finite(s.get("ci_high"))
            mean = mean * scale
            low, high = _yerr(mean, None if low_ci is None else low_ci * scale,
                              None if high_ci is None else high_ci * scale)
            ax.bar(i, mean, color=_tutor_color(i), width=0.7)
            if low or high:
                ax.errorbar(i, mean, yerr=[[low], [high]], color="#222222", capsize=3, linewidth=1)
        ax.set_title(_mpl(metric + _unit(board, metric) + _arrow(specs.get(metric, {}))), fontsize=9)
        tilt = len(tutors) >= 3 or max((len(t) for t in tutors), default=0) > 10  # labels must not overlap
        ax.set_xticks(range(len(tutors)), [_mpl(t) for t in tutors], rotation=30 if tilt else 0,
                      ha="right" if tilt else "center", fontsize=8)
        ax.axhline(0, color="#999999", linewidth=0.6)
        ax.tick_params(axis="y", labelsize=7)
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    return _svg(fig, "metrics", "Per-metric bars with 95% CI error bars, one panel per metric")


def _plot_family_gain(tutors: Sequence[str], fams: Sequence[str], cells: Mapping) -> str:
    width = 0.8 / max(len(tutors), 1)
    fig = _figure(max(5.0, 1.2 * len(fams) * max(1, len(tutors)) / 2 + 2), 3.2)
    ax = fig.subplots()
    for i, tutor in enumerate(tutors):
        xs, ys, lows, highs = [], [], [], []
        for j, fam in enumerate(fams):
            cell = cells.get((tutor, fam))
            if cell is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(cell["mean"])
            low, high = _yerr(cell["mean"], cell["ci_low"], cell["ci_high"])
            lows.append(low)
            highs.append(high)
        ax.bar(xs, ys, width=width * 0.95, color=_tutor_color(i), label=_mpl(tutor))
        ax.errorbar(xs, ys, yerr=[lows, highs], fmt="none", ecolor="#222222", capsize=2, linewidth=0.8)
    ax.axhline(0, color="#999999", linewidth=0.6)
    ax.set_xticks(range(len(fams)), [_mpl(f) for f in fams])
    ax.set_ylabel("learning gain (points)")
    ax.legend(fontsize=7, frameon=False, ncols=min(len(tutors), 5), loc="upper left", bbox_to_anchor=(0, 1.15))
    return _svg(fig, "gain-family", "Learning gain by persona family per tutor, with 95% bootstrap CIs")


def _plot_persona_heatmap(tutors: Sequence[str], personas: Sequence[tuple[str, str]], means: Mapping) -> str:
    import numpy as np

    grid = np.full((len(personas), len(tutors)), np.nan)
    for r, (_, persona) in enumerate(personas):
        for c, tutor in enumerate(tutors):
            value = means.get((tutor, persona))
            if value is not None:
                grid[r, c] = value
    finite = grid[np.isfinite(grid)]
    bound = max(float(np.abs(finite).max()) if finite.size else 1.0, 1e-9)
    fig = _figure(2.8 + 1.1 * len(tutors), 0.9 + 0.24 * len(personas))
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
    for r in range(len(personas)):
        for c in range(len(tutors)):
            value = grid[r, c]
            text = "n/a" if not np.isfinite(value) else f"{value:+.1f}"
            dark = np.isfinite(value) and abs(value) > 0.6 * bound
            ax.text(c, r, text, ha="center", va="center", fontsize=7, color="white" if dark else "black")
    ax.set_xticks(range(len(tutors)), [_mpl(t) for t in tutors], fontsize=8)
    ax.set_yticks(range(len(personas)), [_mpl(f"{fam} / {p}") for fam, p in personas], fontsize=7)
    ax.spines[:].set_visible(False)
    fig.colorbar(image, ax=ax, label="mean learning gain (points)", shrink=0.8)
    return _svg(fig, "gain-persona", "Mean learning gain per persona and tutor (heat map)")


def _plot_sid_profile(board: Mapping, metrics: Sequence[str]) -> str:
    tutors = list(board["ranking"])
    width = 0.8 / max(len(tutors), 1)
    fig = _figure(max(6.0, 0.9 * len(metrics) + 0.45 * len(metrics) * len(tutors) / 2), 3.2)
    ax = fig.subplots()
    for i, tutor in enumerate(tutors):
        xs, ys, lows, highs = [], [], [], []
        for j, metric in enumerate(metrics):
            s = _summary(board, tutor, metric) or {}
            mean = _finite(s.get("mean"))
            if mean is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(mean)
            low, high = _yerr(mean, _finite(s.get("ci_low")), _finite(s.get("ci_high")))
            lows.append(low)
            highs.append(high)
        ax.bar(xs, ys, width=width * 0.95, color=_tutor_color(i), label=_mpl(tutor))
        ax.errorbar(xs, ys, yerr=[lows, highs], fmt="none", ecolor="#222222", capsize=2, linewidth=0.8)
    ax.set_xticks(range(len(metrics)), [_mpl(m) for m in metrics])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score (0-1)")
    ax.legend(fontsize=7, frameon=False, ncols=min(len(tutors), 5), loc="upper left", bbox_to_anchor=(0, 1.15))
    return _svg(fig, "sid-profile", "SID metric profile per tutor (SD, SV, IKT, BP, SC, L3GR, 3C) with 95% CIs")


def _plot_transitions(tutors: Sequence[str], counts: Mapping[str, Mapping[str, Counter]]) -> str:
    kinds = [k for k, _ in PAIR_KINDS if k in counts]
    fig = _figure(8.0, 0.8 + (0.35 * len(tutors) + 0.5) * len(kinds))
    axes = fig.subplots(len(kinds), 1, squeeze=False)[:, 0]
    for ax, kind in zip(axes, kinds, strict=True):
        names = [t for t in tutors if sum(counts[kind].get(t, Counter()).values())]
        for r, tutor in enumerate(names):
            c = counts[kind][tutor]
            total = sum(c.values())
            left = 0.0
            for key, label, color in TRANSITIONS:
                share = 100.0 * c[key] / total
                ax.barh(r, share, left=left, color=color, label=label if r == 0 else None, height=0.7)
                if share >= 7:
                    ax.text(left + share / 2, r, f"{share:.0f}%", ha="center", va="center", fontsize=7)
                left += share
        ax.set_yticks(range(len(names)), [_mpl(n) for n in names], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_title(f"{kind} pairs (% of pre/post item pairs)", fontsize=9)
    axes[0].legend(fontsize=7, frameon=False, ncols=4, loc="lower left", bbox_to_anchor=(0, 1.12))
    axes[-1].set_xlabel("% of item pairs")
    return _svg(fig, "transitions", "Pre/post transitions per tutor: wrong to right, right to wrong and the rest")


# ----------------------------------------------------------------------------------------------- sections


def _note(text: str) -> str:
    return f'<p class="note">{_esc(text)}</p>'


def _section(sid: str, title: str, body: str) -> str:
    return f'<section id="{sid}"><h2>{_esc(title)}</h2>\n{body}\n</section>'


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "") -> str:
    """A table of escaped cells; a cell may be ``(text, title)`` for a tooltip."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    out = [f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>']
    for row in rows:
        cells = []
        for cell in row:
            if isinstance(cell, tuple):
                cells.append(f'<td title="{_esc(cell[1])}">{_esc(cell[0])}</td>')
            else:
                cells.append(f"<td>{_esc(cell)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "".join(out) + "</tbody></table>"


def _header(title: str, run_info: Mapping, board: Mapping, n_records: int) -> str:
    items = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v if isinstance(v, str) else json.dumps(v, sort_keys=True))}</dd>"
                    for k, v in run_info.items())
    failed = board.get("n_failed_episodes", board.get("n_failed_units", 0))
    return (f'<header><h1>{_esc(title)}</h1><dl class="run">{items}</dl>'
            f'<p class="counts">{n_records} records ({_esc(failed)} with a failure), '
            f"{len(board['ranking'])} tutors.</p></header>")


def _leaderboard(board: Mapping, specs: Mapping) -> str:
    columns = _columns(board, specs)
    groups = board["metrics"]["groups"]
    rows = []
    for rank, tutor in enumerate(board["ranking"], start=1):
        rows.append([rank, tutor, _n_of(groups[tutor]),
                     *(_cell(_summary(board, tutor, m), scale) for m, _, scale in columns)])
    headers = ["#", "Tutor", "N", *(h + _arrow(specs.get(m, {})) for m, h, _ in columns)]
    scaled = [h for m, h, scale in columns if scale != 1.0]
    note = ("Mean \u00b1 half-width of the 95% bootstrap CI (hover a cell for the interval and N)"
            + (f"; {', '.join(scaled)} \u00d7100 (percent, or percentage points for gains)." if scaled else "."))
    every = []
    for metric, spec in specs.items():
        cells = [_cell(_summary(board, t, metric), _scale(board, metric)) for t in board["ranking"]]
        every.append([(metric + _unit(board, metric) + _arrow(spec), spec.get("description", "")), *cells])
    full = _table(["Metric", *board["ranking"]], every, "metrics")
    return (_table(headers, rows, "leaderboard") + _note(note)
            + f"<details><summary>Every metric ({len(specs)})</summary>{full}"
            + _note("\u2191 higher is better, \u2193 lower is better. n/a: undefined on this run; not computed: "
                    "needs something the run did not have (hover for why).") + "</details>")


def _health_section(board: Mapping) -> str:
    """Per tutor: units run, scored, failed, invalid and clipped turns; the warnings a reader must not miss."""
    from eval.leaderboard import HEALTH_HEADER, health_rows
    from eval.runner import health_warnings

    rows = health_rows(dict(board))
    if not rows:
        return _note("No per-tutor counts for this run.")
    warnings = "".join(f'<p class="warning">{_esc(w)}</p>' for w in health_warnings(board.get("health") or {}))
    return (_table(HEALTH_HEADER, rows, "health") + warnings
            + _note("Scored: played without a failure (the leaderboard's N); invalid turns: empty, not text or not "
                    "language; clipped turns: cut at 4,000 characters or changed by text normalisation."))


def _paired_section(board: Mapping) -> str:
    """One table per paired metric (:mod:`eval.report_paired`), and the replicate spread when there is one."""
    from eval.leaderboard import paired_scales
    from eval.report_paired import PAIRED_HEADER, PAIRED_NOTE, display_rows, metric_title

    paired = (board.get("paired") or {}).get("metrics") or {}
    if len(board["ranking"]) < 2:
        return _note("One tutor: nothing to compare.")
    if not paired:
        return _note(f"Not computed: {(board.get('paired') or {}).get('not_computed') or 'no paired metric'}.")
    scales = paired_scales(dict(board))
    parts = [_note(PAIRED_NOTE)]
    for metric, pairs in paired.items():
        scale = scales.get(metric, 1.0)
        parts.append(f"<h3>{_esc(metric_title(metric, scale))}</h3>")
        parts.append(_table(PAIRED_HEADER, display_rows(pairs, scale), "paired"))
    spread = board.get("replicates") or {}
    if spread:
        reps = spread["replicates"]
        parts.append(f"<h3>Test-retest across {len(reps)} replicates</h3>")
        for metric, rows in spread["metrics"].items():
            scale = scales.get(metric, 1.0)
            body = [[tutor, *("n/a" if m is None else f"{m * scale:.2f}" for m in row["means"]),
                     "n/a" if row["sd"] is None else f"{row['sd'] * scale:.2f}"] for tutor, row in rows.items()]
            parts.append(_table([f"Tutor ({metric_title(metric, scale)})", *(f"replicate {r}" for r in reps), "SD"],
                                body, "replicates"))
    return "".join(parts)


def _glossary_section(specs: Mapping) -> str:
    """Every metric with its direction and definition, visible (not only as tooltips)."""
    items = "".join(f"<dt>{_esc(name + _arrow(spec))}</dt><dd>{_esc(spec.get('description', ''))}</dd>"
                    for name, spec in specs.items())
    return f'<dl class="glossary">{items}</dl>' + _note("\u2191 higher is better, \u2193 lower is better.")


def _metric_section(board: Mapping, specs: Mapping) -> str:
    order = [m for m, _, _ in _columns(board, specs)] + list(HEADLINE)
    chosen = [m for m in dict.fromkeys(order) if m in specs and m not in SID_PROFILE and _computed(board, m)]
    if len(chosen) < 4:  # item suites: their own metrics
        extra = [m for m in specs if m not in SID_PROFILE and m not in chosen and _computed(board, m)]
        chosen += extra[: MAX_PANELS - len(chosen)]
    chosen = chosen[:MAX_PANELS]
    skipped = [m for m in specs if not _computed(board, m) and _not_computed_reason(board, m)]
    note = _note("Not computed on this run: " + ", ".join(skipped) + " (see the metric table).") if skipped else ""
    if not chosen:
        return _note("No metric has a value on this run; nothing to plot.") + note
    return (_plot_metric_bars(board, specs, chosen)
            + _note("Suite means per tutor with 95% bootstrap CI error bars, on each metric's own scale; "
                    "\u2191 higher is better, \u2193 lower is better.") + note)


def _gain_section(board: Mapping, records: Sequence[Mapping], families: Mapping[str, str]) -> str:
    import numpy as np

    from eval.metrics.stats import bootstrap_mean_ci

    tutors = list(board["ranking"])
    by_family: dict[tuple[str, str], list[float]] = {}
    by_persona: dict[tuple[str, str], list[float]] = {}
    persona_family: dict[str, str] = {}
    for r in records:
        gain = _finite(r.get("learning_gain"))
        if gain is None or not _is_episode(r):
            continue
        persona = _persona(r)
        fam = _family(persona, families)
        persona_family[persona] = fam
        by_family.setdefault((str(r.get("tutor")), fam), []).append(100.0 * gain)
        by_persona.setdefault((str(r.get("tutor")), persona), []).append(100.0 * gain)
    if not by_family:
        return _note("This suite records no learning gain (no pre/post tests); no gain-by-persona plots.")
    fams = sorted({f for _, f in by_family})
    cells = {}
    for key, values in sorted(by_family.items()):
        arr = np.asarray(values, dtype=float)
        ci = bootstrap_mean_ci(arr, np.random.default_rng(0)) if len(arr) > 1 else None
        cells[key] = {"mean": float(arr.mean()), "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
                      "n": len(arr)}
    personas = sorted(persona_family.items(), key=lambda kv: (kv[1], kv[0]))
    means = {k: float(np.mean(v)) for k, v in by_persona.items()}
    rows = [[fam, *(f"{cells[(t, fam)]['mean']:+.1f} (n={cells[(t, fam)]['n']})" if (t, fam) in cells else "n/a"
                    for t in tutors)] for fam in fams]
    return (_plot_family_gain(tutors, fams, cells)
            + _note("Mean isomorphic learning gain in percentage points per persona family, 95% percentile-bootstrap "
                    "CI over episodes (seed 0).")
            + _table(["Family", *tutors], rows, "small")
            + _plot_persona_heatmap(tutors, [(f, p) for p, f in personas], means)
            + _note("Mean learning gain in points per persona (rows, grouped by family) and tutor (columns)."))


def _sid_section(board: Mapping, specs: Mapping) -> str:
    metrics = [m for m in SID_PROFILE if m in specs and _computed(board, m)]
    if not metrics:
        return _note("This suite has no SID dialogue metrics (no annotated tutor turns).")
    missing = [m for m in SID_PROFILE if m not in metrics]
    extra = _note(f"Undefined on this run: {', '.join(missing)}.") if missing else ""
    return (_plot_sid_profile(board, metrics)
            + _note("SID's objective metrics per tutor (means over dialogues, 95% bootstrap CIs). SD strategy "
                    "density, SV strategy variety, IKT interdisciplinary transfer, BP Bloom progression, SC "
                    "structure completeness, L3GR L3 guidance rate, 3C cognitive correction.") + extra)


def transition_counts(records: Sequence[Mapping]) -> tuple[dict[str, dict[str, Counter]], int]:
    """Per pair kind and tutor, counts of wrong_to_right / right_to_right / wrong_to_wrong / right_to_wrong over
    pre/post item pairs, and the number of records whose tests could not be paired (left out, counted)."""
    from envs.errors import DatasetError
    from eval.metrics.educationq import item_pairs

    counts: dict[str, dict[str, Counter]] = {}
    skipped = 0
    for i, r in enumerate(records):
        if not r.get("pretest") or not r.get("posttest"):
            continue
        try:
            per_kind = {kind: item_pairs(r, kind, where=f"record {i}") for kind, _ in PAIR_KINDS}
        except DatasetError:
            skipped += 1
            continue
        for kind, pairs in per_kind.items():
            for p in pairs:
                key = f"{'right' if p.pre_correct else 'wrong'}_to_{'right' if p.post_correct else 'wrong'}"
                counts.setdefault(kind, {}).setdefault(str(r.get("tutor")), Counter())[key] += 1
    return counts, skipped


def _transition_section(board: Mapping, records: Sequence[Mapping]) -> str:
    counts, skipped = transition_counts(records)
    if not counts:
        return _note("This suite has no pre/post tests; no transitions to show.")
    tutors = [t for t in board["ranking"] if any(t in c for c in counts.values())]
    rows = []
    for kind, _ in PAIR_KINDS:
        for tutor in tutors:
            c = counts.get(kind, {}).get(tutor)
            if c:
                n_pos, n_neg = c["wrong_to_right"], c["right_to_wrong"]
                pnir = f"{n_neg / n_pos:.2f}" if n_pos else "n/a"
                rows.append([kind, tutor, sum(c.values()), *(c[k] for k, _, _ in TRANSITIONS), pnir])
    note = _note(f"{skipped} records with unpairable tests were left out.") if skipped else ""
    return (_plot_transitions(tutors, counts)
            + _table(["Pairs", "Tutor", "N", *(label for _, label, _ in TRANSITIONS), "PNIR"], rows, "small")
            + _note("Each post-test item paired with the pre-test item it re-tests (isomorphic: same knowledge, new "
                    "surface; same: the pre-test item again). PNIR = (right \u2192 wrong) / (wrong \u2192 right).")
            + note)


def _failure_text(failure: Any) -> str:
    if isinstance(failure, Mapping):
        where = failure.get("agent") or failure.get("stage") or failure.get("kind") or failure.get("phase") or ""
        error = str(failure.get("error") or failure.get("message") or json.dumps(failure, sort_keys=True))
        return f"{where}: {error}" if where else error
    return str(failure)


def _failure_kind(failure: Any) -> str:
    """``agent: ErrorType``, the grouping of :func:`eval.runner.failure_summary`."""
    error = str(failure.get("error", "")) if isinstance(failure, Mapping) else str(failure)
    etype = error.split(":", 1)[0].strip() if ":" in error else (error[:60] or "unknown")
    agent = failure.get("agent", "?") if isinstance(failure, Mapping) else "?"
    return f"{agent}: {etype}"


def _failure_section(board: Mapping, records: Sequence[Mapping]) -> str:
    tutors = list(board["ranking"])
    failed = Counter(str(r.get("tutor")) for r in records if r.get("failures"))
    kinds: Counter = Counter()
    example: dict[str, str] = {}
    per_kind_tutor: Counter = Counter()
    for r in records:
        for f in r.get("failures") or []:
            kind = _failure_kind(f)
            kinds[kind] += 1
            per_kind_tutor[(kind, str(r.get("tutor")))] += 1
            example.setdefault(kind, scrub_secrets(_failure_text(f))[:300])
    parts = []
    totals = Counter(str(r.get("tutor")) for r in records)
    if kinds:
        rows = [[t, totals[t], failed[t], f"{100.0 * failed[t] / max(totals[t], 1):.1f}%"] for t in tutors]
        parts.append(_table(["Tutor", "Records", "With a failure", "Share"], rows, "small"))
        rows = [[k, *(per_kind_tutor[(k, t)] for t in tutors), example[k]] for k, _ in kinds.most_common(20)]
        parts.append(_table(["Failure", *tutors, "Example"], rows, "small failures"))
    else:
        parts.append(_note(f"No failures: all {len(records)} records finished without a recorded failure."))
    ended = Counter((str(r.get("tutor")), str(r.get("ended_by"))) for r in records if _is_episode(r))
    reasons = sorted({e for _, e in ended})
    if reasons:
        rows = [[t, *(ended[(t, e)] for e in reasons)] for t in tutors]
        parts.append("<h3>How episodes ended</h3>" + _table(["Tutor", *reasons], rows, "small"))
    return "".join(parts)


# ----------------------------------------------------------------------------------------------- browser data


class _Strings:
    """A string table: index 0 is null, every other string stored once (secrets masked)."""

    def __init__(self) -> None:
        from eval.tracking import secret_values

        self.table: list[str | None] = [None]
        self.index: dict[str, int] = {}
        self.secrets = secret_values()  # read once, not per string

    def __call__(self, value: Any) -> int:
        if value is None:
            return 0
        if not isinstance(value, str):
            value = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.table)
            self.table.append(scrub_secrets(value, self.secrets))
        return found


def _jsonable(value: Any) -> Any:
    """A copy with non-finite floats as null (the page's JSON must parse) and other objects as text."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        return _round(value, 6)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def _tests(items: Any, strings: _Strings) -> list[list]:
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        correct = item.get("correct")
        out.append([strings(item.get("item_id")), 1 if correct is True else 0 if correct is False else -1,
                    strings(item.get("extracted")), strings(item.get("response")), strings(item.get("kind")),
                    strings(item.get("parallel_of")), 0 if item.get("valid") is False else 1])
    return out


def browser_data(records: Sequence[Mapping], families: Mapping[str, str]) -> dict:
    """The transcript browser's data: a string table ``s`` (index 0 = null) and one compact entry per record.

    Episode entry: ``t`` tutor, ``p`` persona, ``f`` family, ``k`` task, ``s`` seed, ``g``/``h`` gain on
    isomorphic / same items, ``a``/``b``/``c`` pre, post and same-item post scores, ``e`` ended_by, ``x``
    failures, ``T`` turns (``TURN_FIELDS`` order, then flags: 1 invalid, 2 reveals answer, 4 states answer,
    then the target KC), ``P`` / ``Q`` pre / post items ``[item_id, correct (1/0/-1), extracted, response,
    kind, parallel_of, valid]``. Item entry: ``K`` key, ``u`` unit, ``i`` prompt, ``r`` response, ``G``
    grades, ``J`` judgments.
    """
    strings = _Strings()
    entries = []
    for r in records:
        persona = _persona(r)
        entry: dict[str, Any] = {"t": strings(str(r.get("tutor"))), "p": strings(persona),
                                 "f": strings(_family(persona, families)), "k": strings(_task(r)),
                                 "x": [strings(_failure_text(f)) for f in r.get("failures") or []]}
        seed = _spec(r).get("seed")
        if isinstance(seed, int):
            entry["s"] = seed
        if _is_episode(r):
            task = r.get("task") if isinstance(r.get("task"), Mapping) else {}
            entry.update({"n": strings(task.get("title")), "g": _round(r.get("learning_gain")),
                          "h": _round(r.get("learning_gain_same")), "a": _round(r.get("pretest_score")),
                          "b": _round(r.get("posttest_score")), "c": _round(r.get("posttest_same_score")),
                          "e": strings(r.get("ended_by")), "P": _tests(r.get("pretest"), strings),
                          "Q": _tests(r.get("posttest"), strings), "T": []})
            for turn in r["transcript"]:
                if not isinstance(turn, Mapping):
                    continue
                row: list[Any] = [strings(turn.get(f)) for f in TURN_FIELDS]
                row[5] = 1 if turn.get("discipline_transfer") else 0
                flags = ((1 if turn.get("invalid") else 0) | (2 if turn.get("reveals_answer") else 0)
                         | (4 if turn.get("states_answer") else 0))
                row += [flags, strings(turn.get("target_kc"))]
                entry["T"].append(row)
        else:
            entry.update({"K": strings(r.get("key")), "i": strings(r.get("prompt")), "r": strings(r.get("response")),
                          **scrub_secrets({"u": _jsonable(r.get("unit")), "G": _jsonable(r.get("grades")),
                                           "J": _jsonable(r.get("judgments") or [])}, strings.secrets)})
        entries.append(entry)
    return {"s": strings.table, "fields": list(TURN_FIELDS), "e": entries}


def _json_for_script(data: Any) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>``, ``&`` and the JS line separators as ``\\u`` escapes, and
    ``://`` as ``:\\/\\/`` (the same string to JSON.parse, but no literal URL in the file)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char in ("<", ">", "&", "\u2028", "\u2029"):
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text.replace("://", ":\\/\\/")


_BROWSER_HTML = """<div class="filters">
<label>Tutor <select id="f-tutor"></select></label>
<label>Persona <select id="f-persona"></select></label>
<label>Task <select id="f-task"></select></label>
<span id="match-count" class="note"></span>
</div>
<div class="browser"><div class="list-pane"><ol id="ep-list"></ol>
<button id="more" type="button" hidden>Show more</button></div><div id="ep-view" class="view"></div></div>
<noscript><p class="note">The transcript browser needs JavaScript; the episodes are in episodes.jsonl.</p></noscript>"""

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header,section{max-width:1250px;margin:0 auto;padding:8px 20px}
section{border-top:1px solid #ddd}
h1{font-size:22px} h2{font-size:18px;margin:14px 0 6px} h3{font-size:15px;margin:10px 0 4px}
nav{max-width:1250px;margin:0 auto;padding:0 20px} nav a{margin-right:12px}
dl.run,dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0}
dl.run dt,dl.kv dt{font-weight:600} dl.run dd,dl.kv dd{margin:0;word-break:break-word}
table{border-collapse:collapse;margin:6px 0;background:#fff}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
td{font-variant-numeric:tabular-nums} table.failures td:last-child{font-family:monospace;font-size:12px}
.note{color:#555;font-size:13px;margin:4px 0}
svg.plot{max-width:100%;height:auto;display:block;margin:6px 0;background:#fff}
.filters{display:flex;flex-wrap:wrap;gap:12px;align-items:center;margin:6px 0}
.filters select{max-width:260px}
.browser{display:grid;grid-template-columns:minmax(260px,1fr) 2.2fr;gap:12px;align-items:start}
.list-pane{max-height:80vh;overflow:auto;background:#fff;border:1px solid #ddd}
#ep-list{list-style:none;margin:0;padding:0}
#ep-list li{padding:4px 8px;border-bottom:1px solid #eee;cursor:pointer;font-size:13px}
#ep-list li:hover{background:#f0f4ff} #ep-list li.sel{background:#dbe6ff}
.view{background:#fff;border:1px solid #ddd;padding:8px 12px;min-height:200px;max-height:80vh;overflow:auto}
.turn{margin:6px 0;padding:6px 8px;border-radius:6px;border:1px solid #e5e5e5}
.turn.tutor{background:#eef5ff} .turn.student{background:#f6f6f2}
.speaker{font-weight:600;font-size:12px;color:#333}
.utt{white-space:pre-wrap;word-break:break-word;margin:2px 0}
.chip{display:inline-block;font-size:11px;padding:0 6px;margin:2px 4px 0 0;border-radius:9px;background:#e3e3e3}
.chip.flag{background:#ffd9d9}
pre.text{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:6px;border:1px solid #eee}
.ok{color:#1a7f37} .bad{color:#c62828}
.warning{color:#8a4b00;background:#fff4e0;border:1px solid #f0c27a;padding:4px 8px;margin:4px 0;font-weight:600}
dl.glossary{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}
dl.glossary dt{font-weight:600} dl.glossary dd{margin:0}
"""

# The browser: vanilla JS, text written with textContent only; state in the URL hash.
_JS = r"""(function () {
"use strict";
var data = JSON.parse(document.getElementById("tz-data").textContent);
var S = data.s, E = data.e, PAGE = 200;
var state = {tutor: "", persona: "", task: "", ep: -1, shown: PAGE};
function s(i) { return i ? S[i] : null; }
function el(tag, cls, text) {
  var n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined && text !== null) n.textContent = String(text);
  return n;
}
function pts(x) { return x === null || x === undefined ? "n/a" : (x >= 0 ? "+" : "") + (100 * x).toFixed(1) + " pts"; }
function pct(x) { return x === null || x === undefined ? "n/a" : (100 * x).toFixed(0) + "%"; }
function mark(c) { return c === 1 ? "\u2713" : c === 0 ? "\u2717" : "?"; }
function readHash() {
  var h = location.hash.replace(/^#/, "");
  if (h.indexOf("=") < 0) return false;
  var p = new URLSearchParams(h);
  state.tutor = p.get("tutor") || ""; state.persona = p.get("persona") || ""; state.task = p.get("task") || "";
  state.ep = p.has("ep") ? parseInt(p.get("ep"), 10) : -1;
  if (isNaN(state.ep)) state.ep = -1;
  state.shown = PAGE;
  return true;
}
function writeHash() {
  var p = new URLSearchParams();
  if (state.tutor) p.set("tutor", state.tutor);
  if (state.persona) p.set("persona", state.persona);
  if (state.task) p.set("task", state.task);
  if (state.ep >= 0) p.set("ep", String(state.ep));
  var h = "#" + p.toString();
  try { history.replaceState(null, "", h); } catch (err) { location.hash = h; }
}
function fill(select, values, groups, current) {
  while (select.firstChild) select.removeChild(select.firstChild);
  var all = el("option", null, "all (" + values.length + ")"); all.value = ""; select.appendChild(all);
  var known = false, parents = {};
  values.forEach(function (v) {
    var parent = select;
    if (groups) {
      var g = groups[v];
      if (!parents[g]) { parents[g] = el("optgroup"); parents[g].label = g; select.appendChild(parents[g]); }
      parent = parents[g];
    }
    var o = el("option", null, v); o.value = v; parent.appendChild(o);
    if (v === current) known = true;
  });
  if (current && !known) {
    var extra = el("option", null, current + " (no such value)");
    extra.value = current;
    select.appendChild(extra);
  }
  select.value = current;
}
function distinct(key) {
  var seen = {}, out = [];
  E.forEach(function (e) { var v = s(e[key]); if (v !== null && !seen[v]) { seen[v] = 1; out.push(v); } });
  return out.sort();
}
var families = {};
E.forEach(function (e) { families[s(e.p)] = s(e.f); });
var sel = {tutor: document.getElementById("f-tutor"), persona: document.getElementById("f-persona"),
           task: document.getElementById("f-task")};
function matches(e) {
  return (!state.tutor || s(e.t) === state.tutor) && (!state.persona || s(e.p) === state.persona) &&
         (!state.task || s(e.k) === state.task);
}
function label(e, i) {
  var parts = e.T ? ["#" + i, s(e.t), s(e.p), s(e.k)] : ["#" + i, s(e.t), s(e.K) || s(e.k)];
  if (!e.T && s(e.p) !== "\u2014") parts.push(s(e.p));
  if (e.s !== undefined) parts.push("seed " + e.s);
  if (e.T) parts.push("gain " + pts(e.g));
  if (e.x && e.x.length) parts.push("FAILED");
  return parts.join(" \u00b7 ");
}
function kv(parent, obj) {
  var dl = el("dl", "kv");
  Object.keys(obj || {}).forEach(function (k) {
    var v = obj[k];
    dl.appendChild(el("dt", null, k));
    dl.appendChild(el("dd", null, typeof v === "string" ? v : JSON.stringify(v)));
  });
  parent.appendChild(dl);
}
function testTable(title, rows, post) {
  var wrap = el("div", "tests");
  wrap.appendChild(el("h4", null, title));
  if (!rows.length) { wrap.appendChild(el("p", "note", "none")); return wrap; }
  var t = el("table", "small"), head = el("tr");
  (post ? ["item", "kind", "re-tests", "result", "answer", "response"] : ["item", "result", "answer", "response"])
    .forEach(function (h) { head.appendChild(el("th", null, h)); });
  t.appendChild(head);
  rows.forEach(function (r) {
    var tr = el("tr");
    tr.appendChild(el("td", null, s(r[0])));
    if (post) { tr.appendChild(el("td", null, s(r[4]))); tr.appendChild(el("td", null, s(r[5]) || s(r[0]))); }
    tr.appendChild(el("td", r[1] === 1 ? "ok" : "bad", mark(r[1]) + (r[6] ? "" : " (invalid)")));
    tr.appendChild(el("td", null, s(r[2])));
    tr.appendChild(el("td", null, s(r[3])));
    t.appendChild(tr);
  });
  wrap.appendChild(t);
  return wrap;
}
var ANN = [[2, "intent"], [3, "strategy"], [4, "discipline"], [6, "cognition"], [7, "guidance"], [8, "Bloom"],
           [10, "target KC"]];
function renderEpisode(view, e) {
  var facts = {"task title": s(e.n), "gain (isomorphic)": pts(e.g), "gain (same items)": pts(e.h),
               "pre-test": pct(e.a), "post-test": pct(e.b), "post-test (same items)": pct(e.c), "ended by": s(e.e)};
  kv(view, facts);
  view.appendChild(testTable("Pre-test", e.P, false));
  view.appendChild(testTable("Post-test", e.Q, true));
  view.appendChild(el("h4", null, "Dialogue (" + e.T.length + " turns)"));
  var turns = el("div", "turns");
  e.T.forEach(function (r, j) {
    var who = s(r[0]) || "?";
    var d = el("div", "turn " + (who === "tutor" ? "tutor" : "student"));
    d.appendChild(el("div", "speaker", who + " \u00b7 " + (j + 1)));
    d.appendChild(el("div", "utt", s(r[1])));
    var ann = el("div", "ann");
    ANN.forEach(function (a) {
      var v = s(r[a[0]]);
      if (v !== null && v !== "") ann.appendChild(el("span", "chip", a[1] + ": " + v));
    });
    if (r[5]) ann.appendChild(el("span", "chip", "discipline transfer"));
    if (r[9] & 1) ann.appendChild(el("span", "chip flag", "invalid"));
    if (r[9] & 2) ann.appendChild(el("span", "chip flag", "reveals answer"));
    if (r[9] & 4) ann.appendChild(el("span", "chip flag", "states answer"));
    d.appendChild(ann);
    turns.appendChild(d);
  });
  view.appendChild(turns);
}
function renderItem(view, e) {
  view.appendChild(el("h4", null, "Unit")); kv(view, e.u);
  view.appendChild(el("h4", null, "Prompt")); view.appendChild(el("pre", "text prompt", s(e.i)));
  view.appendChild(el("h4", null, "Response")); view.appendChild(el("pre", "text response", s(e.r)));
  view.appendChild(el("h4", null, "Grades")); kv(view, e.G);
  view.appendChild(el("h4", null, "Judgments (" + (e.J || []).length + ")"));
  (e.J || []).forEach(function (j) { kv(view, j); });
}
function renderView(i) {
  var view = document.getElementById("ep-view");
  while (view.firstChild) view.removeChild(view.firstChild);
  if (i < 0) { view.appendChild(el("p", "note", "No record matches the filters.")); return; }
  var e = E[i];
  view.setAttribute("data-ep", String(i));
  view.appendChild(el("h3", null, label(e, i)));
  if (e.x && e.x.length) {
    var f = el("div", "failures"); f.appendChild(el("h4", "bad", "Failures"));
    e.x.forEach(function (x) { f.appendChild(el("pre", "text", s(x))); });
    view.appendChild(f);
  }
  if (e.T) renderEpisode(view, e); else renderItem(view, e);
}
function render() {
  fill(sel.tutor, distinct("t"), null, state.tutor);
  fill(sel.persona, distinct("p"), families, state.persona);
  fill(sel.task, distinct("k"), null, state.task);
  var hits = [];
  E.forEach(function (e, i) { if (matches(e)) hits.push(i); });
  var chosen = hits.indexOf(state.ep) >= 0 ? state.ep : (hits.length ? hits[0] : -1);
  document.getElementById("match-count").textContent = hits.length + " of " + E.length + " records";
  var list = document.getElementById("ep-list");
  while (list.firstChild) list.removeChild(list.firstChild);
  var shown = hits.slice(0, Math.max(state.shown, hits.indexOf(chosen) + 1));
  shown.forEach(function (i) {
    var e = E[i], li = el("li", i === chosen ? "ep sel" : "ep", label(e, i));
    li.setAttribute("data-ep", String(i));
    li.setAttribute("data-tutor", s(e.t));
    li.setAttribute("data-persona", s(e.p));
    li.setAttribute("data-task", s(e.k));
    li.addEventListener("click", function () { state.ep = i; writeHash(); render(); });
    list.appendChild(li);
  });
  var more = document.getElementById("more");
  more.hidden = shown.length >= hits.length;
  more.textContent = "Show more (" + (hits.length - shown.length) + " left)";
  renderView(chosen);
}
["tutor", "persona", "task"].forEach(function (k) {
  sel[k].addEventListener("change", function () {
    state[k] = sel[k].value; state.ep = -1; state.shown = PAGE;
    writeHash(); render();
  });
});
document.getElementById("more").addEventListener("click", function () { state.shown += PAGE; render(); });
window.addEventListener("hashchange", function () { if (readHash()) render(); });
readHash();
render();
document.body.setAttribute("data-browser", "ready");
})();
"""


# ----------------------------------------------------------------------------------------------- the page


def render_html(board: Mapping, records: Sequence[Mapping], run_info: Mapping) -> str:
    """The whole page as a string (see the module docstring); deterministic in its inputs."""
    import matplotlib

    run_info = scrub_secrets(dict(run_info))
    specs = _specs(board)
    families = _persona_families()
    suite = run_info.get("suite")
    title = str(run_info.get("title") or (f"TutorZoo report: suite {suite}" if suite else "TutorZoo report"))
    episodes = any(_is_episode(r) for r in records)
    with matplotlib.rc_context(_SVG_RC):
        sections = [
            ("leaderboard", "Leaderboard", _leaderboard(board, specs)),
            ("health", "What the numbers rest on", _health_section(board)),
            ("paired", "Paired comparisons", _paired_section(board)),
            ("metrics", "Metrics per tutor", _metric_section(board, specs)),
            ("gain", "Learning gain by persona", _gain_section(board, records, families)),
            ("sid", "SID metric profile", _sid_section(board, specs)),
            ("transitions", "Pre/post transitions", _transition_section(board, records)),
            ("failures", "Failures", _failure_section(board, records)),
            ("glossary", "Glossary", _glossary_section(specs)),
        ]
    data = browser_data(records, families)
    what = "episode" if episodes else "record"
    browser_note = _note(f"Every {what} of the run ({len(records)}); filter by tutor, persona and task. The URL "
                         "keeps the view (e.g. #tutor=socratic&ep=3).")
    sections.append(("browser", "Transcripts" if episodes else "Records", browser_note + _BROWSER_HTML))
    script_hash = base64.b64encode(hashlib.sha256(_JS.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{script_hash}'; style-src 'unsafe-inline'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    nav = "".join(f'<a href="#{sid}">{_esc(name)}</a>' for sid, name, _ in sections)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_esc(csp)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        _header(title, run_info, board, len(records)),
        f"<nav>{nav}</nav>",
        *(_section(sid, name, body) for sid, name, body in sections),
        f'<script type="application/json" id="tz-data">{_json_for_script(data)}</script>',
        f"<script>{_JS}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_html_report(out_dir: Path, board: dict, records: list[dict], run_info: dict) -> Path:
    """Write ``out_dir/report.html`` and return its path.

    ``board`` is :func:`eval.leaderboard.build`'s output (optionally with ``specs``, ``columns`` and ``kind``),
    ``records`` the run's records (episodes, or item records with prompt/response/grades), ``run_info`` the
    run's description shown in the header (secrets masked).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "report.html"
    # A lone surrogate (possible in untrusted text read from JSON) becomes "?" rather than failing the write.
    path.write_bytes(render_html(board, records, run_info).encode("utf-8", errors="replace"))
    return path
