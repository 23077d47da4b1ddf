"""Paired comparisons of tutors: every tutor of a run plays the same units, so two tutors are compared on the
units both scored, unit by unit, rather than through two independent confidence intervals.

For each metric (learning gain and the suite's headline metric) and each pair of tutors ``(a, b)`` in
leaderboard order: ``n`` shared units where both have a value, the mean difference ``a - b``, its 95%
percentile-bootstrap interval over those units (:mod:`tutorzoo.eval.metrics.stats`, resampling units, seeded), and the
share of units each tutor wins (``a_wins``, ``b_wins``, ``ties``). Records with a failure are left out: a
pair is compared only where both tutors' own play was scored. Values are in the metric's own unit, as in
``metrics.json`` (a learning gain is a fraction; the reports show it in percentage points).

Example::

    from tutorzoo.eval.report_paired import paired_comparisons
    table = paired_comparisons(records, ["socratic", "random"], ["ALG"])
    table["metrics"]["ALG"][0]  # {"a": "socratic", "b": "random", "n": 60, "diff": 0.14, ...}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.eval.metrics.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_mean_ci


def _key(record: Mapping) -> str | None:
    if record.get("key") is not None:
        return str(record["key"])
    if isinstance(record.get("spec"), Mapping):
        from tutorzoo.envs.config import EpisodeSpec

        try:
            return EpisodeSpec.model_validate(record["spec"]).key()
        except ValueError:
            return None
    return None


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def unit_values(records: Sequence[Mapping], metrics: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
    """``{metric: {tutor: {unit key: value}}}`` over the scored records: a top-level number of the record
    (``learning_gain``) or the episode-level metric of :func:`tutorzoo.eval.metrics.suite.parse_episode`."""
    from tutorzoo.eval.metrics.suite import parse_episode
    from tutorzoo.eval.runner import has_hard_failure

    out: dict[str, dict[str, dict[str, float]]] = {m: {} for m in metrics}
    for record in records:
        key = _key(record)
        if key is None or has_hard_failure(dict(record)):
            continue
        parsed: dict[str, Any] | None = None
        for metric in metrics:
            value = _finite(record.get(metric))
            if value is None and metric not in record and "transcript" in record:
                if parsed is None:
                    try:
                        parsed = parse_episode(record).metrics
                    except Exception:  # a record the scorer cannot read has no paired value
                        parsed = {}
                value = _finite(parsed.get(metric))
            if value is not None:
                out[metric].setdefault(str(record.get("tutor")), {})[key] = value
    return out


def paired_comparisons(
    records: Sequence[Mapping],
    tutors: Sequence[str],
    metrics: Sequence[str],
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Every pair of ``tutors`` (in the given order, ``a`` before ``b``) on each of ``metrics``; see the module
    docstring. Deterministic: one generator per (metric, pair) from ``seed``."""
    metrics = list(dict.fromkeys(metrics))
    values = unit_values(records, metrics)
    table: dict[str, list[dict[str, Any]]] = {}
    for metric in metrics:
        rows = []
        for i, a in enumerate(tutors):
            for b in tutors[i + 1:]:
                va, vb = values[metric].get(a, {}), values[metric].get(b, {})
                shared = sorted(set(va) & set(vb))
                row: dict[str, Any] = {"a": a, "b": b, "n": len(shared), "diff": None, "ci_low": None,
                                       "ci_high": None, "a_wins": None, "b_wins": None, "ties": None}
                if shared:
                    diffs = np.array([va[k] - vb[k] for k in shared])
                    row["diff"] = float(diffs.mean())
                    ci = (bootstrap_mean_ci(diffs, np.random.default_rng(seed), n_resamples, confidence)
                          if n_resamples and len(shared) > 1 else None)
                    if ci is not None:
                        row["ci_low"], row["ci_high"] = ci
                    row["a_wins"] = float(np.mean(diffs > 0))
                    row["b_wins"] = float(np.mean(diffs < 0))
                    row["ties"] = float(np.mean(diffs == 0))
                rows.append(row)
        table[metric] = rows
    return {"method": "paired percentile bootstrap over shared units", "n_resamples": n_resamples,
            "confidence": confidence, "seed": seed, "metrics": table}


def replicate_spread(records: Sequence[Mapping], tutors: Sequence[str], metrics: Sequence[str]) -> dict[str, Any]:
    """Test-retest: per metric and tutor, the mean over each replicate's scored units (records marked with
    ``replicate`` by ``tutorzoo eval --replicates K``) and the standard deviation of those means (ddof=1);
    empty when the run has no replicates."""
    by_rep: dict[int, list[Mapping]] = {}
    for record in records:
        if isinstance(record.get("replicate"), int):
            by_rep.setdefault(record["replicate"], []).append(record)
    if len(by_rep) < 2:
        return {}
    out: dict[str, Any] = {"replicates": sorted(by_rep), "metrics": {}}
    per_rep = {r: unit_values(recs, metrics) for r, recs in sorted(by_rep.items())}
    for metric in dict.fromkeys(metrics):
        rows = {}
        for tutor in tutors:
            means = []
            for r in sorted(by_rep):
                vals = list(per_rep[r][metric].get(tutor, {}).values())
                means.append(float(np.mean(vals)) if vals else None)
            defined = [m for m in means if m is not None]
            rows[tutor] = {"means": means,
                           "sd": float(np.std(defined, ddof=1)) if len(defined) > 1 else None}
        out["metrics"][metric] = rows
    return out


def verdict(row: Mapping) -> str:
    """``a better``, ``b better`` (the interval excludes 0) or ``unclear`` (it contains 0); ``n/a`` without
    shared units."""
    low, high = row.get("ci_low"), row.get("ci_high")
    if low is None or high is None:
        return "n/a" if row.get("diff") is None else "unclear"
    if low > 0:
        return "a better"
    if high < 0:
        return "b better"
    return "unclear"


def display_rows(pairs: Sequence[Mapping], scale: float = 1.0) -> list[list[str]]:
    """Rows ``[a vs b, shared, a - b, 95% CI, a wins, b wins, verdict]`` as text for one metric's pairs, in its
    leaderboard scale (``scale=100``: a learning gain in percentage points)."""
    rows = []
    for row in pairs:
        if row["diff"] is None:
            cells = ["n/a", "n/a", "n/a", "n/a"]
        else:
            ci = ("n/a" if row["ci_low"] is None
                  else f"[{row['ci_low'] * scale:+.2f}, {row['ci_high'] * scale:+.2f}]")
            cells = [f"{row['diff'] * scale:+.2f}", ci, f"{100 * row['a_wins']:.0f}%", f"{100 * row['b_wins']:.0f}%"]
        rows.append([f"{row['a']} vs {row['b']}", str(row["n"]), *cells, verdict(row)])
    return rows


def metric_title(metric: str, scale: float) -> str:
    unit = " (percentage points)" if metric.startswith(LEARNING_GAIN) and scale == 100.0 else ""
    return f"{metric}{unit}"


PAIRED_HEADER = ("a vs b", "Shared units", "a - b", "95% CI", "a wins", "b wins", "Verdict")
PAIRED_NOTE = ("Every tutor plays the same units, so each pair is compared on the units both scored: a - b is the "
               "mean difference with its 95% paired bootstrap interval over those units; a wins / b wins: share of "
               "them where that tutor did better; verdict: a or b better when the interval excludes 0, else "
               "unclear.")
