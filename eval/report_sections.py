"""The sections of ``report.html`` below the header: leaderboard, run health, paired comparisons, metric bars,
learning gain by persona, SID profile, pre/post transitions, failures and the glossary.

Each ``_*_section`` returns its HTML body (tables, notes and the plots of :mod:`tutorzoo.eval.report_plots`), or a
one-line note when the run has no data for it; :func:`tutorzoo.eval.report_html.render_html` puts them in order.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence

from tutorzoo.eval.report_board import (
    _arrow,
    _cell,
    _columns,
    _computed,
    _esc,
    _failure_text,
    _family,
    _finite,
    _is_episode,
    _n_of,
    _not_computed_reason,
    _note,
    _persona,
    _scale,
    _summary,
    _table,
    _unit,
)
from tutorzoo.eval.report_plots import (
    PAIR_KINDS,
    TRANSITIONS,
    _plot_family_gain,
    _plot_metric_bars,
    _plot_persona_heatmap,
    _plot_sid_profile,
    _plot_transitions,
)
from tutorzoo.eval.run_health import failure_kind, health_warnings
from tutorzoo.eval.tracking import scrub_secrets

SID_PROFILE: tuple[str, ...] = ("SD", "SV", "IKT", "BP", "SC", "L3GR", "3C")
# Metrics drawn as bars when a suite has them (besides its printed columns), in this order.
HEADLINE: tuple[str, ...] = ("learning_gain", "learning_gain_same", "ALG", "ALG_same", "ACC_post", "ACC_post_same",
                             "PNIR", "PNIR_same", "TotalScore", "Success@5", "Telling@5", "reward")
MAX_PANELS = 12


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
    from tutorzoo.eval.leaderboard import HEALTH_HEADER, health_rows

    rows = health_rows(dict(board))
    if not rows:
        return _note("No per-tutor counts for this run.")
    warnings = "".join(f'<p class="warning">{_esc(w)}</p>' for w in health_warnings(board.get("health") or {}))
    return (_table(HEALTH_HEADER, rows, "health") + warnings
            + _note("Scored: played without a failure (the leaderboard's N); invalid turns: empty, not text or not "
                    "language; clipped turns: cut at 4,000 characters or changed by text normalisation."))


def _paired_section(board: Mapping) -> str:
    """One table per paired metric (:mod:`tutorzoo.eval.report_paired`), and the replicate spread when there is one."""
    from tutorzoo.eval.leaderboard import paired_scales
    from tutorzoo.eval.report_paired import PAIRED_HEADER, PAIRED_NOTE, display_rows, metric_title

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

    from tutorzoo.eval.metrics.stats import bootstrap_mean_ci

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
    from tutorzoo.envs.errors import DatasetError
    from tutorzoo.eval.metrics.educationq import item_pairs

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


def _failure_section(board: Mapping, records: Sequence[Mapping]) -> str:
    tutors = list(board["ranking"])
    failed = Counter(str(r.get("tutor")) for r in records if r.get("failures"))
    kinds: Counter = Counter()
    example: dict[str, str] = {}
    per_kind_tutor: Counter = Counter()
    for r in records:
        for f in r.get("failures") or []:
            kind = failure_kind(f)
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
