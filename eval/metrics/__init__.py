"""Pedagogy metrics: SID's objective metrics, EducationQ's learning metrics, MathDial's success/telling and
MRBench's DAMR, declared as data in :mod:`tutorzoo.eval.metrics.registry` and aggregated with bootstrap CIs.

Example::

    from tutorzoo.eval.metrics import METRICS, episode_metrics, suite_metrics
    episode_metrics(record)["TotalScore"]
"""

from __future__ import annotations

from tutorzoo.eval.metrics.educationq import ItemPair, PairCounts, css, item_pairs, pair_counts, pnir, uic
from tutorzoo.eval.metrics.mathdial import success_telling
from tutorzoo.eval.metrics.mrbench import damr
from tutorzoo.eval.metrics.registry import DAMR_DESIRED, DEFAULT_KS, METRICS, MetricSpec, build_registry
from tutorzoo.eval.metrics.stats import bootstrap_ci, bootstrap_mean_ci, percentile_interval
from tutorzoo.eval.metrics.suite import (
    ScoredEpisode,
    episode_metrics,
    parse_episode,
    suite_from_episodes,
    suite_metrics,
)
from tutorzoo.eval.metrics.turns import normalise_turn, normalise_turns
from tutorzoo.rewards.sid import TOTAL_SCORE_WEIGHTS, sid_metrics, total_score

__all__ = [
    "DAMR_DESIRED",
    "DEFAULT_KS",
    "METRICS",
    "TOTAL_SCORE_WEIGHTS",
    "ScoredEpisode",
    "ItemPair",
    "MetricSpec",
    "PairCounts",
    "bootstrap_ci",
    "bootstrap_mean_ci",
    "build_registry",
    "css",
    "damr",
    "episode_metrics",
    "item_pairs",
    "normalise_turn",
    "normalise_turns",
    "pair_counts",
    "parse_episode",
    "percentile_interval",
    "pnir",
    "sid_metrics",
    "success_telling",
    "suite_from_episodes",
    "suite_metrics",
    "total_score",
    "uic",
]
