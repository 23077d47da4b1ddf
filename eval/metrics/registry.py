"""Every metric TutorZoo reports, declared as data: name, direction, aggregation, level and meaning.

A report, a leaderboard or a W&B logger reads :data:`METRICS` to know how to sort and label a column; the
scorer writes the same declarations into ``metrics.json`` so a results file explains itself.

``level`` says where a value first exists: ``"episode"`` metrics have a value per episode (and a suite value
aggregated from them); ``"suite"`` metrics exist only for a set of episodes (PNIR, CSS, UIC).
``aggregation`` says how the suite value is formed:

- ``mean``: mean of the per-episode values, episodes where the value is undefined (``None``) left out;
- ``pooled``: one ratio over all units of the group (test-item pairs, tutor responses), so long episodes
  weigh by their size, as in the source papers;
- ``ratio``: a ratio of pooled counts (PNIR = N_neg / N_pos);
- ``population_std``: population standard deviation over subjects (CSS);
- ``unique_count``: a count that depends on the other groups compared (UIC).

Example::

    from tutorzoo.eval.metrics.registry import METRICS
    METRICS["PNIR"].higher_is_better  # False
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tutorzoo.envs.records import LEARNING_GAIN

LEVELS: tuple[str, ...] = ("episode", "suite")
AGGREGATIONS: tuple[str, ...] = ("mean", "pooled", "ratio", "population_std", "unique_count")

# An episodes suite reports success and telling at a few budgets; 5 is EducationQ's number of rounds.
DEFAULT_KS: tuple[int, ...] = (1, 3, 5)
# `tutorzoo score` reports every budget 1..max_k, as MathDial's interactivetutoring/evaluate.py does (its max_k).
MATHDIAL_MAX_K = 10


def mathdial_ks(max_k: int = MATHDIAL_MAX_K) -> tuple[int, ...]:
    """Every MathDial budget from 1 to ``max_k``: ``mathdial_ks(3)`` -> ``(1, 2, 3)``."""
    if not isinstance(max_k, int) or isinstance(max_k, bool) or max_k < 1:
        raise ValueError(f"max_k must be a positive integer, got {max_k!r}; pass --max-k 1 or more")
    return tuple(range(1, max_k + 1))

# MRBench's eight dimensions and the label a good tutor response carries (docs/spec.md §7).
DAMR_DESIRED: dict[str, str] = {
    "mistake_identification": "yes",
    "mistake_location": "yes",
    "revealing_answer": "no",
    "providing_guidance": "yes",
    "actionability": "yes",
    "coherence": "yes",
    "tutor_tone": "encouraging",
    "humanlikeness": "yes",
}


@dataclass(frozen=True)
class MetricSpec:
    """The declaration of one metric; ``higher_is_better`` is ``None`` for descriptive values."""

    name: str
    higher_is_better: bool | None
    aggregation: str
    level: str
    description: str

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"MetricSpec {self.name!r}: level must be one of {LEVELS}, got {self.level!r}")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(
                f"MetricSpec {self.name!r}: aggregation must be one of {AGGREGATIONS}, got {self.aggregation!r}"
            )

    def to_dict(self) -> dict:
        return asdict(self)


def _sid() -> list[MetricSpec]:
    t = "per dialogue, T = tutor turns, S = student turns; suite value = mean over dialogues"
    return [
        MetricSpec("SD", True, "mean", "episode", f"Strategy density: |t in T with a strategy| / |T| ({t})."),
        MetricSpec("SV", True, "mean", "episode", f"Strategy variety: |distinct strategies in T| / 8 ({t})."),
        MetricSpec(
            "IKT", True, "mean", "episode",
            f"Interdisciplinary transfer: |t in T with discipline_transfer| / |T|, SID Table VIII ({t}).",
        ),
        MetricSpec(
            "IKT_with_students", True, "mean", "episode",
            "IKT variant of a reproduction: transfer turns of tutor AND student / |T| (can exceed 1).",
        ),
        MetricSpec(
            "BP", True, "mean", "episode",
            f"Bloom progression: (max - min Bloom index over S) / 5; None without a labelled student turn ({t}).",
        ),
        MetricSpec(
            "SC", True, "mean", "episode",
            "Structure completeness: |intents in T among introduce_concept, guide_reasoning, trigger_transfer, "
            f"summarize| / 4 ({t}).",
        ),
        MetricSpec("L3GR", True, "mean", "episode", f"L3 guidance rate: |t in T at level L3| / |T| ({t})."),
        MetricSpec(
            "3C", True, "mean", "episode",
            "Cognitive correction: corrected errors / errors; an error is a student turn labelled incorrect, "
            "corrected when the next student turn is clear_understanding or higher_order; 1.0 with no error.",
        ),
        MetricSpec(
            "TotalScore", True, "mean", "episode",
            "SID TotalScore = 0.15 SD + 0.10 SV + 0.15 IKT + 0.15 BP + 0.15 SC + 0.10 L3GR + 0.20 3C; "
            "None when a component is undefined.",
        ),
    ]


def _educationq() -> list[MetricSpec]:
    specs: list[MetricSpec] = []
    for suffix, which in (("", "isomorphic post-test items paired with their pre-test item"),
                          ("_same", "same-item post-test (EducationQ's original protocol)")):
        specs += [
            MetricSpec(f"ACC_pre{suffix}", None, "pooled", "episode",
                       f"Pre-test accuracy in percent over the {which}."),
            MetricSpec(f"ACC_post{suffix}", True, "pooled", "episode",
                       f"Post-test accuracy in percent over the {which}."),
            MetricSpec(f"ALG{suffix}", True, "pooled", "episode",
                       f"Absolute learning gain ACC_post - ACC_pre in percentage points over the {which}."),
            MetricSpec(f"PNIR{suffix}", False, "ratio", "suite",
                       f"N_neg / N_pos (right->wrong over wrong->right) over the {which}; None when N_pos = 0."),
            MetricSpec(f"CSS{suffix}", False, "population_std", "suite",
                       f"Population std of per-subject ALG, in percentage points, over the {which}; 0 with one "
                       "subject. EducationQ prints it on the 0-1 scale (0.041 = 4.1 points)."),
            MetricSpec(f"UIC{suffix}", True, "unique_count", "suite",
                       f"Items this group and no other group compared turned wrong->right, over the {which}; "
                       "item = (task_set, task_id, persona, seed, pre-test item_id). No CI."),
        ]
    return specs


def mathdial_specs(ks: tuple[int, ...] = DEFAULT_KS) -> list[MetricSpec]:
    """The Success@k / Telling@k declarations for budgets ``ks``, e.g. ``mathdial_specs((3,))``."""
    specs: list[MetricSpec] = []
    for k in ks:
        specs.append(MetricSpec(
            f"Success@{k}", True, "mean", "episode",
            f"MathDial: 1 if the student states the answer by its student turn {k}, counted from 0 (s <= {k}).",
        ))
        specs.append(MetricSpec(
            f"Telling@{k}", False, "mean", "episode",
            f"MathDial: 1 if a tutor turn states the answer at or before min(s, {k}), from 0 (t <= min(s, {k})).",
        ))
    return specs


def _mrbench() -> list[MetricSpec]:
    return [
        MetricSpec(
            f"DAMR_{dim}", True, "pooled", "episode",
            f"MRBench desired-annotation match rate for {dim}: % of tutor responses labelled {label!r}.",
        )
        for dim, label in DAMR_DESIRED.items()
    ]


def _record() -> list[MetricSpec]:
    return [
        MetricSpec(LEARNING_GAIN, True, "mean", "episode",
                   "The env's learning gain (post-test score - pre-test score, isomorphic post-test)."),
        MetricSpec("learning_gain_same", True, "mean", "episode",
                   "The env's learning gain on the same-item post-test, when it was given."),
        MetricSpec("reward", True, "mean", "episode", "The env's episode reward (weighted reward components)."),
    ]


def build_registry(ks: tuple[int, ...] = DEFAULT_KS) -> dict[str, MetricSpec]:
    """All metric declarations, in report order, with Success/Telling at budgets ``ks``."""
    specs = _sid() + _educationq() + mathdial_specs(ks) + _mrbench() + _record()
    return {s.name: s for s in specs}


METRICS: dict[str, MetricSpec] = build_registry()
