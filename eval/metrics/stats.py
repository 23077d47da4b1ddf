"""Percentile-bootstrap confidence intervals over episodes, deterministic under a seed.

The suite scorer draws one (n_resamples, n) matrix of episode indices per group from
``numpy.random.default_rng(seed)`` and evaluates every metric's statistic on the same resamples, so a group's
intervals depend only on its own episodes and the seed, never on the other groups or the metric order.
A resample on which a statistic is undefined (e.g. PNIR with N_pos = 0) is left out of the percentiles.

Example::

    import numpy as np
    from tutorzoo.eval.metrics.stats import bootstrap_mean_ci
    bootstrap_mean_ci(np.array([0.2, 0.4, 0.9]), np.random.default_rng(0))  # (low, high)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 0


def resample_indices(n: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """An ``(n_resamples, n)`` matrix of indices drawn with replacement from ``range(n)``."""
    if n < 1:
        raise ValueError(f"cannot bootstrap an empty sample (n = {n})")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    return rng.integers(0, n, size=(n_resamples, n))


def percentile_interval(samples: np.ndarray, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
    """The central ``confidence`` percentile interval of the finite ``samples``; ``None`` if there are none."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return None
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


def nanmean_rows(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Per resample, the mean of the defined (non-NaN) values; NaN where a resample has none."""
    taken = values[indices]
    defined = ~np.isnan(taken)
    count = defined.sum(axis=1)
    total = np.where(defined, taken, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def ratio_rows(numerator: np.ndarray, denominator: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Per resample, sum(numerator) / sum(denominator); NaN where the denominator sums to 0."""
    num = numerator[indices].sum(axis=1).astype(float)
    den = denominator[indices].sum(axis=1).astype(float)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def bootstrap_ci(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    rng: np.random.Generator,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[float, float] | None:
    """Percentile CI of ``statistic`` (index matrix -> one value per resample, NaN when undefined)."""
    return percentile_interval(statistic(resample_indices(n, n_resamples, rng)), confidence)


def bootstrap_mean_ci(
    values: np.ndarray,
    rng: np.random.Generator,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[float, float] | None:
    """Percentile CI of the mean of ``values`` (NaN = undefined, skipped)."""
    values = np.asarray(values, dtype=float)
    return bootstrap_ci(lambda idx: nanmean_rows(values, idx), len(values), rng, n_resamples, confidence)
