"""Per-episode and per-suite metrics of TutorZoo episode records (and of SID-style annotated dialogues).

:func:`episode_metrics` gives one flat ``{name: value | None}`` per episode with every episode-level metric
of :data:`tutorzoo.eval.metrics.registry.METRICS` (``None`` where the record cannot support it: no test items, no
answer flags, no tutor turn). :func:`suite_metrics` groups episodes (by tutor by default) and gives, per
group and metric, the suite value (``mean``: the mean over episodes, or the pooled/ratio/std/count value the
metric's ``aggregation`` declares), a percentile-bootstrap CI over episodes and ``n``, the number of units the
value is computed over (episodes with a defined value for ``mean``; test-item pairs for the EducationQ
metrics; labelled tutor responses for DAMR). UIC compares the groups with one another and has no CI.

Example::

    from tutorzoo.eval.metrics import episode_metrics, suite_metrics
    episode_metrics(record)["TotalScore"]
    suite_metrics(records)["groups"]["socratic"]["metrics"]["ALG"]  # {"mean", "ci_low", "ci_high", "n"}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.eval.metrics.educationq import (
    PAIR_KINDS,
    ItemKey,
    ItemPair,
    css,
    improved_items,
    item_pairs,
    pair_counts,
    pnir,
    subject_counts,
    uic,
)
from tutorzoo.eval.metrics.mathdial import success_telling
from tutorzoo.eval.metrics.mrbench import damr_counts, tutor_labels
from tutorzoo.eval.metrics.registry import DAMR_DESIRED, DEFAULT_KS, MetricSpec, build_registry
from tutorzoo.eval.metrics.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    nanmean_rows,
    percentile_interval,
    ratio_rows,
    resample_indices,
)
from tutorzoo.eval.metrics.turns import normalise_turns
from tutorzoo.rewards.sid import sid_metrics

UNSPECIFIED_GROUP = "(unspecified)"
_SUFFIX = {"isomorphic": "", "same": "_same"}
_PASSTHROUGH = (LEARNING_GAIN, "learning_gain_same", "reward")


@dataclass
class ScoredEpisode:
    """The scores of one record, what the suite statistics need: its episode-level metrics, EducationQ item
    pairs and DAMR counts. ``record`` is the record as given: an :class:`~tutorzoo.envs.records.EpisodeRecord`
    (or its JSON form, read from a file) or a SID-style annotated dialogue."""

    where: str
    """Where the record came from, for error messages (``record 3``, ``episodes.jsonl:12``)."""
    record: Mapping[str, Any]
    """The record scored."""
    metrics: dict[str, float | None]
    """Every episode-level metric of the registry, in its order (``None`` where the record cannot support it)."""
    pairs: dict[str, list[ItemPair]] = field(default_factory=dict)
    """Per post-test kind (``isomorphic``, ``same``): the pre/post item pairs of the EducationQ metrics."""
    damr: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per DAMR dimension: (tutor responses with the desired label, labelled tutor responses)."""


def _number(record: Mapping, name: str, where: str) -> float | None:
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DatasetError(f"{where}: field {name!r} must be a number or null, got {value!r}")
    return float(value)


def parse_episode(record: object, where: str = "record", ks: Sequence[int] = DEFAULT_KS) -> ScoredEpisode:
    """Validate and score one record: an env episode (has ``transcript``) or a SID dialogue (has ``turns``).

    Raises :class:`DatasetError` naming ``where`` and the field when the record is malformed.
    """
    if not isinstance(record, Mapping):
        raise DatasetError(f"{where}: expected a JSON object (an episode or a dialogue), got {type(record).__name__}")
    if "transcript" in record:
        turns = normalise_turns(record["transcript"], where)
        pairs = {kind: item_pairs(record, kind, where) for kind in PAIR_KINDS}
    elif "turns" in record:
        turns = normalise_turns(record["turns"], where)
        pairs = {kind: [] for kind in PAIR_KINDS}
    else:
        raise DatasetError(
            f"{where}: neither 'transcript' (a TutorZoo episode record) nor 'turns' (a SID-style annotated "
            "dialogue) is present; give one of them"
        )
    metrics: dict[str, float | None] = dict(sid_metrics(turns))
    for kind, suffix in _SUFFIX.items():
        counts = pair_counts(pairs[kind])
        metrics[f"ACC_pre{suffix}"] = counts.acc_pre
        metrics[f"ACC_post{suffix}"] = counts.acc_post
        metrics[f"ALG{suffix}"] = counts.alg
    metrics.update(success_telling(turns, ks))
    damr = damr_counts(tutor_labels(turns))
    for dim, (hit, total) in damr.items():
        metrics[f"DAMR_{dim}"] = 100.0 * hit / total if total else None
    for name in _PASSTHROUGH:
        metrics[name] = _number(record, name, where)
    posttest = record.get("posttest")
    if isinstance(posttest, list) and posttest and all(
        isinstance(p, Mapping) and p.get("kind") == "same" for p in posttest
    ):
        # Under ``posttest: same`` the env's headline gain is a same-item gain: it is learning_gain_same, never
        # an isomorphic learning_gain (telling the answer pays on the same item).
        metrics[LEARNING_GAIN] = None
    order = [s.name for s in build_registry(tuple(ks)).values() if s.level == "episode"]
    return ScoredEpisode(where, record, {name: metrics[name] for name in order}, pairs, damr)


def episode_metrics(record: dict, ks: Sequence[int] = DEFAULT_KS) -> dict[str, float | None]:
    """Every episode-level metric of one record, in registry order.

    Example::

        m = episode_metrics(record)
        m["SD"], m["3C"], m["ALG"], m["Success@3"]
    """
    return parse_episode(record, "record", ks).metrics


def group_of(record: Mapping, group_by: str) -> str:
    """The group name of a record: ``group_by`` is a top-level key, a key of ``spec``, or a dotted path."""
    for root in (record, record.get("spec")):
        node: object = root
        for part in group_by.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if node is not None and not isinstance(node, (Mapping, list)):
            return str(node)
    return UNSPECIFIED_GROUP


def _summary(value: float | None, ci: tuple[float, float] | None, n: int) -> dict:
    if value is None or not np.isfinite(value):
        return {"mean": None, "ci_low": None, "ci_high": None, "n": n}
    low, high = ci if ci is not None else (None, None)
    return {"mean": float(value), "ci_low": low, "ci_high": high, "n": n}


class _Group:
    """The per-episode arrays of one group and the statistics over them (point value and bootstrap CI)."""

    def __init__(self, episodes: Sequence[ScoredEpisode], idx: np.ndarray | None, confidence: float) -> None:
        self.episodes = episodes
        self.idx = idx
        self.confidence = confidence

    def _ci(self, rows: np.ndarray | None) -> tuple[float, float] | None:
        return None if rows is None else percentile_interval(rows, self.confidence)

    def mean(self, name: str) -> dict:
        values = np.array([np.nan if e.metrics[name] is None else e.metrics[name] for e in self.episodes], float)
        defined = values[~np.isnan(values)]
        point = float(defined.mean()) if defined.size else None
        rows = nanmean_rows(values, self.idx) if self.idx is not None and defined.size else None
        return _summary(point, self._ci(rows), int(defined.size))

    def ratio(self, num: np.ndarray, den: np.ndarray, scale: float) -> dict:
        total = float(den.sum())
        point = scale * float(num.sum()) / total if total > 0 else None
        rows = scale * ratio_rows(num, den, self.idx) if self.idx is not None and total > 0 else None
        return _summary(point, self._ci(rows), int(total))

    def educationq(self, kind: str) -> dict[str, dict]:
        counts = [pair_counts(e.pairs[kind]) for e in self.episodes]
        n = np.array([c.n for c in counts])
        pre = np.array([c.pre for c in counts])
        post = np.array([c.post for c in counts])
        pos = np.array([c.n_pos for c in counts])
        neg = np.array([c.n_neg for c in counts])
        suffix = _SUFFIX[kind]
        return {
            f"ACC_pre{suffix}": self.ratio(pre, n, 100.0),
            f"ACC_post{suffix}": self.ratio(post, n, 100.0),
            f"ALG{suffix}": self.ratio(post - pre, n, 100.0),
            f"PNIR{suffix}": self.pnir(pos, neg, int(n.sum())),
            f"CSS{suffix}": self.css(kind),
        }

    def pnir(self, pos: np.ndarray, neg: np.ndarray, n_pairs: int) -> dict:
        # One formula: educationq.pnir on the pooled counts and on each resample's pooled counts.
        point = pnir(int(pos.sum()), int(neg.sum()))
        rows = None
        if self.idx is not None and point is not None:
            per_row = (pnir(int(p), int(q)) for p, q in zip(pos[self.idx].sum(axis=1), neg[self.idx].sum(axis=1),
                                                            strict=True))
            rows = np.array([np.nan if v is None else v for v in per_row], dtype=float)
        return _summary(point, self._ci(rows), n_pairs)

    def css(self, kind: str) -> dict:
        per_episode = [subject_counts(e.pairs[kind]) for e in self.episodes]
        subjects = sorted({s for counts in per_episode for s in counts})
        all_pairs = [p for e in self.episodes for p in e.pairs[kind]]
        point = css(subject_counts(all_pairs))
        rows = None
        if self.idx is not None and subjects:
            shape = (len(self.episodes), len(subjects))
            n, gain = np.zeros(shape), np.zeros(shape)
            for i, counts in enumerate(per_episode):
                for j, subject in enumerate(subjects):
                    if subject in counts:
                        n[i, j] = counts[subject].n
                        gain[i, j] = counts[subject].post - counts[subject].pre
            n_rows, gain_rows = n[self.idx].sum(axis=1), gain[self.idx].sum(axis=1)
            present = n_rows > 0
            alg = np.where(present, 100.0 * gain_rows / np.where(present, n_rows, 1.0), 0.0)
            k = present.sum(axis=1)
            mean = alg.sum(axis=1) / np.maximum(k, 1)
            var = np.where(present, (alg - mean[:, None]) ** 2, 0.0).sum(axis=1) / np.maximum(k, 1)
            rows = np.where(k > 0, np.sqrt(var), np.nan)
        return _summary(point, self._ci(rows), len(all_pairs))

    def damr(self, dim: str) -> dict:
        hit = np.array([e.damr[dim][0] for e in self.episodes])
        total = np.array([e.damr[dim][1] for e in self.episodes])
        return self.ratio(hit, total, 100.0)


def suite_from_episodes(
    episodes: Sequence[ScoredEpisode],
    group_by: str = "tutor",
    ks: Sequence[int] = DEFAULT_KS,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> dict:
    """:func:`suite_metrics` over already parsed episodes (the scorer parses line by line to report errors)."""
    if n_resamples < 0:
        raise ValueError(f"n_resamples must be >= 0 (0 = no confidence intervals), got {n_resamples}")
    registry: dict[str, MetricSpec] = build_registry(tuple(ks))
    by_group: dict[str, list[ScoredEpisode]] = {}
    for episode in episodes:
        by_group.setdefault(group_of(episode.record, group_by), []).append(episode)
    groups: dict[str, dict] = {}
    improved: dict[str, dict[str, set[ItemKey]]] = {kind: {} for kind in PAIR_KINDS}
    seen: dict[str, dict[str, int]] = {kind: {} for kind in PAIR_KINDS}
    for name in sorted(by_group):
        members = by_group[name]
        # One generator per group from the same seed: a group's CIs do not depend on which others are scored.
        idx = resample_indices(len(members), n_resamples, np.random.default_rng(seed)) if n_resamples else None
        stats = _Group(members, idx, confidence)
        computed: dict[str, dict] = {}
        for kind in PAIR_KINDS:
            computed.update(stats.educationq(kind))
            pairs = [p for e in members for p in e.pairs[kind]]
            improved[kind][name] = improved_items(pairs)
            seen[kind][name] = len({p.key for p in pairs})
        for dim in DAMR_DESIRED:
            computed[f"DAMR_{dim}"] = stats.damr(dim)
        metrics = {}
        for spec in registry.values():
            if spec.name in computed:
                metrics[spec.name] = computed[spec.name]
            elif spec.aggregation == "mean":
                metrics[spec.name] = stats.mean(spec.name)
        groups[name] = {"n_episodes": len(members), "metrics": metrics}
    for kind in PAIR_KINDS:
        counts = uic(improved[kind])
        for name, group in groups.items():
            n_items = seen[kind][name]
            value = float(counts[name]) if n_items else None
            group["metrics"][f"UIC{_SUFFIX[kind]}"] = _summary(value, None, n_items)
    for group in groups.values():
        group["metrics"] = {name: group["metrics"][name] for name in registry}
    return {
        "group_by": group_by,
        "bootstrap": {"method": "percentile", "n_resamples": n_resamples, "confidence": confidence, "seed": seed,
                      "unit": "episode"},
        "groups": groups,
    }


def suite_metrics(
    records: list[dict],
    group_by: str = "tutor",
    ks: Sequence[int] = DEFAULT_KS,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> dict:
    """Suite metrics per group of ``records``, each ``{"mean", "ci_low", "ci_high", "n"}``; UIC across groups.

    Example::

        out = suite_metrics(records, group_by="tutor")
        out["groups"]["lecturer"]["metrics"]["UIC"]["mean"]
    """
    episodes = [parse_episode(r, f"record {i}", ks) for i, r in enumerate(records)]
    return suite_from_episodes(episodes, group_by, ks, n_resamples, confidence, seed)
