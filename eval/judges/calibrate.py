"""Judge calibration: how well a judge agrees with hand-labelled examples, per criterion.

Labelled examples live in ``eval/judges/calibration/RUBRIC.jsonl`` (format in :mod:`tutorzoo.eval.judges`). Every
example is judged (one batch per sample round) and compared with its gold values per criterion:

- ``accuracy``: share of examples whose verdict equals the gold value (a mean-aggregated likert verdict is
  rounded to the nearest integer, a half toward the fail value; a binary share to true above 0.5);
- ``kappa``: Cohen's kappa (:func:`tutorzoo.eval.agreement.cohen_kappa`) for binary and choice criteria, the
  quadratic-weighted kappa for likert ones; ``None`` when undefined (both sides constant and equal);
- ``mae`` and ``pearson`` (likert only): mean absolute error and Pearson's r of the raw verdict values;
- ``failed_verdicts``: examples with no parsable sample. They stay in the statistics with their fail values,
  exactly as a benchmark would score them (fail closed), so a judge that cannot follow the format scores low.

Example::

    report = calibrate(Judge(JudgeConfig(backend="openai:gpt-4o")), "sid_rubrics")
    report["criteria"]["X-SRG"]["kappa"], report["failed_verdicts"]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.envs.jsonl import json_object_line
from tutorzoo.eval.agreement import cohen_kappa
from tutorzoo.eval.judges.judge import Judge, Verdict
from tutorzoo.eval.judges.rubric import CALIBRATION_DIR, Criterion, RubricSpec

_KEYS = {"id", "variables", "gold", "rationale", "criteria"}


@dataclass(frozen=True)
class LabelledExample:
    """One calibration example: the rubric's variables and the gold value of each asked criterion."""

    id: str
    variables: dict[str, str]
    gold: dict[str, Any]
    rationale: str
    criteria: tuple[str, ...] | None = None


def labels_path(rubric: str) -> Path:
    return CALIBRATION_DIR / f"{rubric}.jsonl"


def load_labels(spec: RubricSpec, path: str | Path | None = None) -> list[LabelledExample]:
    """The labelled examples at ``path`` (default: the rubric's shipped file), checked against ``spec``.

    Raises :class:`DatasetError` naming the file, the line and the fix.
    """
    path = Path(path) if path is not None else labels_path(spec.name)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the calibration labels ({exc.strerror}); check the path, or "
                           f"write one JSON object per line as documented in eval/judges/__init__.py") from None
    examples: list[LabelledExample] = []
    seen: set[str] = set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        rec = json_object_line(line, where, "an example must be a JSON object")
        missing = sorted({"id", "variables", "gold"} - set(rec))
        unknown = sorted(set(rec) - _KEYS)
        if missing or unknown:
            raise DatasetError(f"{where}: missing {missing} / unknown {unknown} keys; an example has "
                               f"{sorted(_KEYS)} (rationale and criteria optional)")
        ex_id = str(rec["id"])
        if ex_id in seen:
            raise DatasetError(f"{where}: duplicate id {ex_id!r}; give every example its own id")
        seen.add(ex_id)
        variables = rec["variables"]
        if not (isinstance(variables, dict) and all(isinstance(v, str) for v in variables.values())):
            raise DatasetError(f"{where}: variables must be an object of strings")
        absent = [v for v in spec.variables if v not in variables]
        if absent:
            raise DatasetError(f"{where}: variables lack {absent}; the rubric {spec.name!r} needs "
                               f"{list(spec.variables)}")
        criteria = rec.get("criteria")
        if criteria is not None and not (isinstance(criteria, list) and criteria
                                         and all(c in spec.criteria for c in criteria)):
            raise DatasetError(f"{where}: criteria must be a non-empty list from {list(spec.criteria)}")
        asked = spec.select(criteria)
        gold = rec["gold"]
        if not isinstance(gold, dict) or set(gold) != set(asked):
            raise DatasetError(f"{where}: gold must hold exactly the asked criteria {list(asked)}, got "
                               f"{sorted(gold) if isinstance(gold, dict) else gold!r}")
        checked = {}
        for name in asked:
            try:
                checked[name] = spec.criteria[name].check(gold[name])
            except ValueError as exc:
                raise DatasetError(f"{where}: gold {exc}") from None
        examples.append(LabelledExample(ex_id, dict(variables), checked, str(rec.get("rationale", "")),
                                        None if criteria is None else tuple(criteria)))
    if not examples:
        raise DatasetError(f"{path}: no labelled examples; add one JSON object per line")
    return examples


def quadratic_weighted_kappa(gold: Sequence[int], predicted: Sequence[int], low: int, high: int) -> float | None:
    """Cohen's kappa with quadratic disagreement weights ``(i - j)^2 / (k - 1)^2`` on the scale ``low..high``.

    ``None`` when the expected weighted disagreement is 0 (both sides constant and equal).

    Example::

        >>> quadratic_weighted_kappa([1, 2, 3], [1, 2, 3], 1, 5)
        1.0
    """
    if len(gold) != len(predicted) or not gold:
        raise ValueError(f"need two labelings of the same non-empty items, got {len(gold)} and {len(predicted)}")
    k = high - low + 1
    observed = np.zeros((k, k))
    for g, p in zip(gold, predicted, strict=True):
        observed[g - low, p - low] += 1
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(gold)
    i, j = np.indices((k, k))
    weights = (i - j) ** 2 / (k - 1) ** 2
    denominator = float((weights * expected).sum())
    if denominator == 0.0:
        return None
    return 1.0 - float((weights * observed).sum()) / denominator


def as_label(criterion: Criterion, value: Any) -> Any:
    """A verdict value as a label comparable with gold (mean-aggregated values rounded toward the fail side)."""
    if criterion.type == "likert" and isinstance(value, float):
        low, high = math.floor(value), math.ceil(value)
        if value - low == 0.5:
            return low if abs(low - criterion.fail_value) <= abs(high - criterion.fail_value) else high
        return round(value)
    if criterion.type == "binary" and isinstance(value, float):
        return criterion.fail_value if value == 0.5 else value > 0.5
    return value


def _pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    if len(x) < 2 or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def agreement_stats(criterion: Criterion, gold: Sequence[Any], values: Sequence[Any]) -> dict[str, Any]:
    """Accuracy, kappa (and for likert MAE and Pearson's r) of verdict ``values`` against ``gold``."""
    predicted = [as_label(criterion, v) for v in values]
    n = len(gold)
    accuracy = sum(g == p for g, p in zip(gold, predicted, strict=True)) / n
    out: dict[str, Any] = {"n": n, "accuracy": accuracy}
    if criterion.type == "likert":
        assert criterion.min is not None and criterion.max is not None
        out["kappa"] = quadratic_weighted_kappa(gold, predicted, criterion.min, criterion.max)
        out["kappa_kind"] = "quadratic-weighted"
        out["mae"] = float(np.mean([abs(float(v) - g) for g, v in zip(gold, values, strict=True)]))
        out["pearson"] = _pearson([float(g) for g in gold], [float(v) for v in values])
    else:
        out["kappa"] = cohen_kappa([str(g) for g in gold], [str(p) for p in predicted])[0]
        out["kappa_kind"] = "cohen"
    return out


def calibrate(judge: Judge, rubric: str, labels: str | Path | None = None, limit: int | None = None) -> dict:
    """Judge every labelled example of ``rubric`` and report agreement per criterion (see the module doc).

    Examples with the same criteria subset go to the judge together (one batch per sample round).
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be >= 1 example, got {limit}")
    spec = judge.spec(rubric)
    examples = load_labels(spec, labels)
    if limit is not None:
        examples = examples[:limit]
    verdicts: dict[str, Verdict] = {}
    by_subset: dict[tuple[str, ...] | None, list[LabelledExample]] = {}
    for ex in examples:
        by_subset.setdefault(ex.criteria, []).append(ex)
    for subset, group in by_subset.items():
        for ex, verdict in zip(group, judge.judge_many(spec, [ex.variables for ex in group], subset), strict=True):
            verdicts[ex.id] = verdict
    criteria: dict[str, dict] = {}
    for name, criterion in spec.criteria.items():
        scored = [ex for ex in examples if name in ex.gold]
        if not scored:
            continue
        stats = agreement_stats(criterion, [ex.gold[name] for ex in scored],
                                [verdicts[ex.id].values[name] for ex in scored])
        stats["failed_verdicts"] = sum(verdicts[ex.id].failed for ex in scored)
        criteria[name] = stats
    return {
        "rubric": spec.name,
        "labels": str(Path(labels) if labels is not None else labels_path(spec.name)),
        "judge": judge.name,
        "settings": judge.settings(spec),
        "n_examples": len(examples),
        "failed_verdicts": sum(v.failed for v in verdicts.values()),
        "failed_samples": sum(v.n_failed for v in verdicts.values()),
        "samples": sum(v.n_samples for v in verdicts.values()),
        "criteria": criteria,
        "examples": [{"id": ex.id, "gold": ex.gold, "verdict": verdicts[ex.id].to_dict()} for ex in examples],
    }
