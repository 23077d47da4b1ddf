"""The plots of ``report.html``: matplotlib figures written as inline SVG.

Text stays text (``svg.fonttype: none``), every id is prefixed per plot so that several SVGs share one page,
the XML prologue and metadata go, and a fixed hash salt keeps the bytes the same for the same inputs. No pyplot:
no global backend or figure registry is touched. The page (:func:`tutorzoo.eval.report_html.render_html`) draws inside
``matplotlib.rc_context(SVG_RC)``.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from tutorzoo.eval.report_board import direction_arrow, esc, finite_float, metric_scale, metric_summary, metric_unit

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
SVG_RC = {"svg.hashsalt": "tutorzoo-report", "svg.fonttype": "none", "font.size": 9.0,
          "axes.spines.top": False, "axes.spines.right": False}
_SVG_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}


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
    return text.replace("<svg ", f'<svg class="plot" data-plot="{esc(name)}" role="img" aria-label="{esc(label)}" ',
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


def plot_metric_bars(board: Mapping, specs: Mapping, metrics: Sequence[str]) -> str:
    tutors = list(board["ranking"])
    ncols = min(4, len(metrics))
    nrows = math.ceil(len(metrics) / ncols)
    fig = _figure(2.6 * ncols + 0.4, 2.3 * nrows + 0.2)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, metric in zip(axes.flat, metrics, strict=False):  # extra axes are hidden below
        scale = metric_scale(board, metric)
        for i, tutor in enumerate(tutors):
            s = metric_summary(board, tutor, metric) or {}
            mean = finite_float(s.get("mean"))
            if mean is None:
                ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=7, color="#555555")
                continue
            low_ci, high_ci = finite_float(s.get("ci_low")), finite_float(s.get("ci_high"))
            mean = mean * scale
            low, high = _yerr(mean, None if low_ci is None else low_ci * scale,
                              None if high_ci is None else high_ci * scale)
            ax.bar(i, mean, color=_tutor_color(i), width=0.7)
            if low or high:
                ax.errorbar(i, mean, yerr=[[low], [high]], color="#222222", capsize=3, linewidth=1)
        ax.set_title(_mpl(metric + metric_unit(board, metric) + direction_arrow(specs.get(metric, {}))), fontsize=9)
        tilt = len(tutors) >= 3 or max((len(t) for t in tutors), default=0) > 10  # labels must not overlap
        ax.set_xticks(range(len(tutors)), [_mpl(t) for t in tutors], rotation=30 if tilt else 0,
                      ha="right" if tilt else "center", fontsize=8)
        ax.axhline(0, color="#999999", linewidth=0.6)
        ax.tick_params(axis="y", labelsize=7)
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    return _svg(fig, "metrics", "Per-metric bars with 95% CI error bars, one panel per metric")


def plot_family_gain(tutors: Sequence[str], fams: Sequence[str], cells: Mapping) -> str:
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


def plot_persona_heatmap(tutors: Sequence[str], personas: Sequence[tuple[str, str]], means: Mapping) -> str:
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


def plot_sid_profile(board: Mapping, metrics: Sequence[str]) -> str:
    tutors = list(board["ranking"])
    width = 0.8 / max(len(tutors), 1)
    fig = _figure(max(6.0, 0.9 * len(metrics) + 0.45 * len(metrics) * len(tutors) / 2), 3.2)
    ax = fig.subplots()
    for i, tutor in enumerate(tutors):
        xs, ys, lows, highs = [], [], [], []
        for j, metric in enumerate(metrics):
            s = metric_summary(board, tutor, metric) or {}
            mean = finite_float(s.get("mean"))
            if mean is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(mean)
            low, high = _yerr(mean, finite_float(s.get("ci_low")), finite_float(s.get("ci_high")))
            lows.append(low)
            highs.append(high)
        ax.bar(xs, ys, width=width * 0.95, color=_tutor_color(i), label=_mpl(tutor))
        ax.errorbar(xs, ys, yerr=[lows, highs], fmt="none", ecolor="#222222", capsize=2, linewidth=0.8)
    ax.set_xticks(range(len(metrics)), [_mpl(m) for m in metrics])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score (0-1)")
    ax.legend(fontsize=7, frameon=False, ncols=min(len(tutors), 5), loc="upper left", bbox_to_anchor=(0, 1.15))
    return _svg(fig, "sid-profile", "SID metric profile per tutor (SD, SV, IKT, BP, SC, L3GR, 3C) with 95% CIs")


def plot_transitions(tutors: Sequence[str], counts: Mapping[str, Mapping[str, Counter]]) -> str:
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
