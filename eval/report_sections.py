"""The sections of ``report.html`` below the header: leaderboard, run health, paired comparisons, metric bars,
learning gain by persona, SID profile, pre/post transitions, failures and the glossary.

Each ``*_section`` returns its HTML body (tables, notes and the plots of :mod:`tutorzoo.eval.report_plots`), or a
one-line note when the run has no data for it; :func:`tutorzoo.eval.report_html.render_html` puts them in order.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence

from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.eval.report_board import (
    board_columns,
    direction_arrow,
    esc,
    failure_text,
    family_of,
    finite_float,
    is_computed,
    is_episode,
    metric_scale,
    metric_summary,
    metric_unit,
    n_of,
    not_computed_reason,
    note_html,
    persona_label,
    summary_cell,
    table_html,
)
from tutorzoo.eval.report_plots import (
    PAIR_KINDS,
    TRANSITIONS,
    plot_family_gain,
    plot_metric_bars,
    plot_persona_heatmap,
    plot_sid_profile,
    plot_transitions,
)
from tutorzoo.eval.run_health import failure_kind, health_warnings
from tutorzoo.eval.tracking import scrub_secrets

SID_PROFILE: tuple[str, ...] = ("SD", "SV", "IKT", "BP", "SC", "L3GR", "3C")
# Metrics drawn as bars when a suite has them (besides its printed columns), in this order.
HEADLINE: tuple[str, ...] = (LEARNING_GAIN, f"{LEARNING_GAIN}_same", "ALG", "ALG_same", "ACC_post", "ACC_post_same",
                             "PNIR", "PNIR_same", "TotalScore", "Success@5", "Telling@5", "reward")
MAX_PANELS = 12


def header_html(title: str, run_info: Mapping, board: Mapping, n_records: int) -> str:
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v if isinstance(v, str) else json.dumps(v, sort_keys=True))}</dd>"
                    for k, v in run_info.items())
    failed = board.get("n_failed_episodes", board.get("n_failed_units", 0))
    return (f'<header><h1>{esc(title)}</h1><dl class="run">{items}</dl>'
            f'<p class="counts">{n_records} records ({esc(failed)} with a failure), '
            f"{len(board['ranking'])} tutors.</p></header>")


def leaderboard_section(board: Mapping, specs: Mapping) -> str:
    columns = board_columns(board, specs)
    groups = board["metrics"]["groups"]
    rows = []
    for rank, tutor in enumerate(board["ranking"], start=1):
        rows.append([rank, tutor, n_of(groups[tutor]),
                     *(summary_cell(metric_summary(board, tutor, m), scale) for m, _, scale in columns)])
    headers = ["#", "Tutor", "N", *(h + direction_arrow(specs.get(m, {})) for m, h, _ in columns)]
    scaled = [h for m, h, scale in columns if scale != 1.0]
    note = ("Mean \u00b1 half-width of the 95% bootstrap CI (hover a cell for the interval and N)"
            + (f"; {', '.join(scaled)} \u00d7100 (percent, or percentage points for gains)." if scaled else "."))
    every = []
    for metric, spec in specs.items():
        cells = [summary_cell(metric_summary(board, t, metric), metric_scale(board, metric)) for t in board["ranking"]]
        every.append([(metric + metric_unit(board, metric) + direction_arrow(spec), spec.get("description", "")),
                      *cells])
    full = table_html(["Metric", *board["ranking"]], every, "metrics")
    return (table_html(headers, rows, "leaderboard") + note_html(note)
            + f"<details><summary>Every metric ({len(specs)})</summary>{full}"
            + note_html("\u2191 higher is better, \u2193 lower is better. n/a: undefined on this run; not computed: "
                        "needs something the run did not have (hover for why).") + "</details>")


def health_section(board: Mapping) -> str:
    """Per tutor: units run, scored, failed, invalid and clipped turns; the warnings a reader must not miss."""
    from tutorzoo.eval.leaderboard import HEALTH_HEADER, health_rows

    rows = health_rows(dict(board))
    if not rows:
        return note_html("No per-tutor counts for this run.")
    warnings = "".join(f'<p class="warning">{esc(w)}</p>' for w in health_warnings(board.get("health") or {}))
    return (table_html(HEALTH_HEADER, rows, "health") + warnings
            + note_html("Scored: played without a failure (the leaderboard's N); invalid turns: empty, not text or not "
                        "language; clipped turns: cut at 4,000 characters or changed by text normalisation."))


def paired_section(board: Mapping) -> str:
    """One table per paired metric (:mod:`tutorzoo.eval.report_paired`), and the replicate spread when there is one."""
    from tutorzoo.eval.leaderboard import paired_scales
    from tutorzoo.eval.report_paired import PAIRED_HEADER, PAIRED_NOTE, display_rows, metric_title

    paired = (board.get("paired") or {}).get("metrics") or {}
    if len(board["ranking"]) < 2:
        return note_html("One tutor: nothing to compare.")
    if not paired:
        return note_html(f"Not computed: {(board.get('paired') or {}).get('not_computed') or 'no paired metric'}.")
    scales = paired_scales(dict(board))
    parts = [note_html(PAIRED_NOTE)]
    for metric, pairs in paired.items():
        scale = scales.get(metric, 1.0)
        parts.append(f"<h3>{esc(metric_title(metric, scale))}</h3>")
        parts.append(table_html(PAIRED_HEADER, display_rows(pairs, scale), "paired"))
    spread = board.get("replicates") or {}
    if spread:
        reps = spread["replicates"]
        parts.append(f"<h3>Test-retest across {len(reps)} replicates</h3>")
        for metric, rows in spread["metrics"].items():
            scale = scales.get(metric, 1.0)
            body = [[tutor, *("n/a" if m is None else f"{m * scale:.2f}" for m in row["means"]),
                     "n/a" if row["sd"] is None else f"{row['sd'] * scale:.2f}"] for tutor, row in rows.items()]
            parts.append(table_html([f"Tutor ({metric_title(metric, scale)})", *(f"replicate {r}" for r in reps), "SD"],
                                    body, "replicates"))
    return "".join(parts)


def glossary_section(specs: Mapping) -> str:
    """Every metric with its direction and definition, visible (not only as tooltips)."""
    items = "".join(f"<dt>{esc(name + direction_arrow(spec))}</dt><dd>{esc(spec.get('description', ''))}</dd>"
                    for name, spec in specs.items())
    return f'<dl class="glossary">{items}</dl>' + note_html("\u2191 higher is better, \u2193 lower is better.")


def metric_section(board: Mapping, specs: Mapping) -> str:
    order = [m for m, _, _ in board_columns(board, specs)] + list(HEADLINE)
    chosen = [m for m in dict.fromkeys(order) if m in specs and m not in SID_PROFILE and is_computed(board, m)]
    if len(chosen) < 4:  # item suites: their own metrics
        extra = [m for m in specs if m not in SID_PROFILE and m not in chosen and is_computed(board, m)]
        chosen += extra[: MAX_PANELS - len(chosen)]
    chosen = chosen[:MAX_PANELS]
    skipped = [m for m in specs if not is_computed(board, m) and not_computed_reason(board, m)]
    note = note_html("Not computed on this run: " + ", ".join(skipped) + " (see the metric table).") if skipped else ""
    if not chosen:
        return note_html("No metric has a value on this run; nothing to plot.") + note
    return (plot_metric_bars(board, specs, chosen)
            + note_html("Suite means per tutor with 95% bootstrap CI error bars, on each metric's own scale; "
                        "\u2191 higher is better, \u2193 lower is better.") + note)


def gain_section(board: Mapping, records: Sequence[Mapping], families: Mapping[str, str]) -> str:
    import numpy as np

    from tutorzoo.eval.metrics.stats import bootstrap_mean_ci

    tutors = list(board["ranking"])
    by_family: dict[tuple[str, str], list[float]] = {}
    by_persona: dict[tuple[str, str], list[float]] = {}
    persona_family: dict[str, str] = {}
    for r in records:
        gain = finite_float(r.get(LEARNING_GAIN))
        if gain is None or not is_episode(r):
            continue
        persona = persona_label(r)
        fam = family_of(persona, families)
        persona_family[persona] = fam
        by_family.setdefault((str(r.get("tutor")), fam), []).append(100.0 * gain)
        by_persona.setdefault((str(r.get("tutor")), persona), []).append(100.0 * gain)
    if not by_family:
        return note_html("This suite records no learning gain (no pre/post tests); no gain-by-persona plots.")
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
    return (plot_family_gain(tutors, fams, cells)
            + note_html("Mean isomorphic learning gain in percentage points per persona family, 95% percentile-"
                        "bootstrap CI over episodes (seed 0).")
            + table_html(["Family", *tutors], rows, "small")
            + plot_persona_heatmap(tutors, [(f, p) for p, f in personas], means)
            + note_html("Mean learning gain in points per persona (rows, grouped by family) and tutor (columns)."))


def sid_section(board: Mapping, specs: Mapping) -> str:
    metrics = [m for m in SID_PROFILE if m in specs and is_computed(board, m)]
    if not metrics:
        return note_html("This suite has no SID dialogue metrics (no annotated tutor turns).")
    missing = [m for m in SID_PROFILE if m not in metrics]
    extra = note_html(f"Undefined on this run: {', '.join(missing)}.") if missing else ""
    return (plot_sid_profile(board, metrics)
            + note_html("SID's objective metrics per tutor (means over dialogues, 95% bootstrap CIs). SD strategy "
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


def transition_section(board: Mapping, records: Sequence[Mapping]) -> str:
    counts, skipped = transition_counts(records)
    if not counts:
        return note_html("This suite has no pre/post tests; no transitions to show.")
    tutors = [t for t in board["ranking"] if any(t in c for c in counts.values())]
    rows = []
    for kind, _ in PAIR_KINDS:
        for tutor in tutors:
            c = counts.get(kind, {}).get(tutor)
            if c:
                n_pos, n_neg = c["wrong_to_right"], c["right_to_wrong"]
                pnir = f"{n_neg / n_pos:.2f}" if n_pos else "n/a"
                rows.append([kind, tutor, sum(c.values()), *(c[k] for k, _, _ in TRANSITIONS), pnir])
    note = note_html(f"{skipped} records with unpairable tests were left out.") if skipped else ""
    return (plot_transitions(tutors, counts)
            + table_html(["Pairs", "Tutor", "N", *(label for _, label, _ in TRANSITIONS), "PNIR"], rows, "small")
            + note_html("Each post-test item paired with the pre-test item it re-tests (isomorphic: same knowledge, "
                        "new surface; same: the pre-test item again). PNIR = (right \u2192 wrong) / "
                        "(wrong \u2192 right).")
            + note)


def failure_section(board: Mapping, records: Sequence[Mapping]) -> str:
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
            example.setdefault(kind, scrub_secrets(failure_text(f))[:300])
    parts = []
    totals = Counter(str(r.get("tutor")) for r in records)
    if kinds:
        rows = [[t, totals[t], failed[t], f"{100.0 * failed[t] / max(totals[t], 1):.1f}%"] for t in tutors]
        parts.append(table_html(["Tutor", "Records", "With a failure", "Share"], rows, "small"))
        rows = [[k, *(per_kind_tutor[(k, t)] for t in tutors), example[k]] for k, _ in kinds.most_common(20)]
        parts.append(table_html(["Failure", *tutors, "Example"], rows, "small failures"))
    else:
        parts.append(note_html(f"No failures: all {len(records)} records finished without a recorded failure."))
    ended = Counter((str(r.get("tutor")), str(r.get("ended_by"))) for r in records if is_episode(r))
    reasons = sorted({e for _, e in ended})
    if reasons:
        rows = [[t, *(ended[(t, e)] for e in reasons)] for t in tutors]
        parts.append("<h3>How episodes ended</h3>" + table_html(["Tutor", *reasons], rows, "small"))
    return "".join(parts)
