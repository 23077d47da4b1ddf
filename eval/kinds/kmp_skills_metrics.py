"""KMP-Skills' metrics (:mod:`tutorzoo.eval.kinds.kmp_skills` documents each one): the formulas (F1, MCC, MR-Score),
their
specs, and one tutor's summaries from its records.

The kind (units, prompts, reply parsing, grading) is in :mod:`tutorzoo.eval.kinds.kmp_skills`; its records carry the
grades
this module reads, so that a run's ``metrics.json`` is a pure function of its records.

Example::

    from tutorzoo.eval.kinds.kmp_skills_metrics import mr_score
    mr_score(0.5, 0.4, 0.2)   # 0.32
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tutorzoo.eval.kinds.item_common import NO_JUDGE, failure_rate, mean_summary, not_computed, spec, stat_summary

GEN_CRITERIA: tuple[str, ...] = ("construction", "solution_correctness", "solution_quality", "appropriateness")


# --- the metric formulas -----------------------------------------------------------------------------------


def f1_score(truth: Sequence[bool], pred: Sequence[bool]) -> float | None:
    """F1 of the positive class (True); None when there is no positive in truth nor in predictions."""
    tp = sum(t and p for t, p in zip(truth, pred, strict=True))
    fp = sum((not t) and p for t, p in zip(truth, pred, strict=True))
    fn = sum(t and (not p) for t, p in zip(truth, pred, strict=True))
    if tp + fp + fn == 0:
        return None
    return 2 * tp / (2 * tp + fp + fn)


def mcc(truth: Sequence[bool], pred: Sequence[bool]) -> float | None:
    """Matthews correlation coefficient; 0 when a margin is empty (the usual convention), None without data."""
    if not truth:
        return None
    tp = sum(t and p for t, p in zip(truth, pred, strict=True))
    tn = sum((not t) and (not p) for t, p in zip(truth, pred, strict=True))
    fp = sum((not t) and p for t, p in zip(truth, pred, strict=True))
    fn = sum(t and (not p) for t, p in zip(truth, pred, strict=True))
    den = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return 0.0 if den == 0 else (tp * tn - fp * fn) / den


def mr_score(mcc_value: float, acc_step: float, acc_reason: float) -> float:
    """MR-Score = 0.2·max(0, MCC) + 0.3·Acc_step + 0.5·Acc_reason (docs/spec.md §5)."""
    return 0.2 * max(0.0, mcc_value) + 0.3 * acc_step + 0.5 * acc_reason


# --- one tutor's summaries ---------------------------------------------------------------------------------


def metric_specs() -> dict[str, Any]:
    """``{name: MetricSpec}`` of every KMP-Skills metric."""
    specs = [
        *(spec(f"followup_acc_t{t}", True, f"Follow-up solving: share of chains whose turn-{t} answer (the "
               "'Answer:' line) is right by the exact checker; an unparsable reply is wrong.") for t in (1, 2, 3)),
        spec("detection_F1", True, "Error detection F1, positive class 'the solution has an error'; an "
             "unparsable verdict counts as the wrong verdict.", "pooled", "suite"),
        spec("detection_MCC", True, "Matthews correlation of the correct/incorrect verdicts.", "pooled", "suite"),
        spec("Acc_step", True, "First error step right / erroneous solutions.", "pooled", "suite"),
        spec("Acc_reason", True, "First error step and reason right / erroneous solutions; a named misconception "
             "id is checked exactly, a free-text reason by the kmp_error_reason judge.", "pooled", "suite"),
        spec("MR_Score", True, "0.2 max(0, MCC) + 0.3 Acc_step + 0.5 Acc_reason (MR-GSM8K).", "pooled", "suite"),
        spec("correction_acc", True, "Corrected solution's final answer right (exact checker), over correct and "
             "erroneous solutions."),
        spec("gen_format_ok", True, "Generated problem has Problem:, Solution: and a one-number Answer: line."),
        spec("gen_valid", True, "gen_format_ok and the problem is not a near copy of the seed (ratio < 0.9)."),
        spec("gen_pass_rate", True, "Judged (fail by default): mean share of the four criteria passed."),
        *(spec(f"gen_{c}", True, f"Judged pass rate of the problem-generation criterion {c}.")
          for c in GEN_CRITERIA),
        spec("format_failure_rate", False, "Share of units with a reply we could not parse (counted wrong)."),
        spec("tutor_failure_rate", False, "Share of units where the tutor raised or returned no text."),
        spec("judge_failure_rate", False, "Share of units with a failed judge sample (judged units only)."),
    ]
    return {s.name: s for s in specs}

def group_metrics(recs: list[dict], judged: bool) -> dict[str, Any]:
    """``{name: summary}`` of one tutor's KMP-Skills records (``judged``: a judge was configured)."""
    by = {s: [r for r in recs if (r.get("unit") or {}).get("skill") == s] for s in ("followup", "error",
                                                                                     "generation")}
    m: dict[str, Any] = {}
    for t in (1, 2, 3):
        m[f"followup_acc_t{t}"] = mean_summary([float(bool(r.get("grades", {}).get(f"t{t}", {}).get("correct")))
                                                for r in by["followup"]])
    rows = [_error_row(r) for r in by["error"]]
    erroneous = [x for x in rows if x["has_error"]]
    m["detection_F1"] = stat_summary(rows, lambda xs: f1_score([x["has_error"] for x in xs],
                                                               [x["pred_error"] for x in xs]))
    m["detection_MCC"] = stat_summary(rows, lambda xs: mcc([not x["has_error"] for x in xs],
                                                           [not x["pred_error"] for x in xs]))
    m["Acc_step"] = mean_summary([float(x["step_right"]) for x in erroneous])
    pending = sum(1 for x in erroneous if x["reason_right"] is None)
    if pending:
        why = f"{pending} free-text error reasons need a judge (--judge)" if not judged else \
            f"{pending} error reasons were not judged"
        m["Acc_reason"] = not_computed(why, len(erroneous))
        m["MR_Score"] = not_computed(why, len(rows))
    else:
        m["Acc_reason"] = mean_summary([float(bool(x["reason_right"])) for x in erroneous])
        m["MR_Score"] = stat_summary(rows, _mr_of_rows)
    m["correction_acc"] = mean_summary([float(x["correction_right"]) for x in rows])
    gens = by["generation"]
    m["gen_format_ok"] = mean_summary([float(bool(r.get("grades", {}).get("format_ok"))) for r in gens])
    m["gen_valid"] = mean_summary([float(bool(r.get("grades", {}).get("valid"))) for r in gens])
    if judged:
        m["gen_pass_rate"] = mean_summary([float(r.get("grades", {}).get("pass_rate", 0.0)) for r in gens])
        for c in GEN_CRITERIA:
            m[f"gen_{c}"] = mean_summary([float(bool(r.get("grades", {}).get("judged", {}).get(c))) for r in gens])
    else:
        m["gen_pass_rate"] = not_computed(NO_JUDGE)
        for c in GEN_CRITERIA:
            m[f"gen_{c}"] = not_computed(NO_JUDGE)
    m["format_failure_rate"] = failure_rate(recs, "format")
    m["tutor_failure_rate"] = failure_rate(recs, "tutor")
    m["judge_failure_rate"] = failure_rate(recs, "judge") if judged else not_computed(NO_JUDGE)
    return m


def _error_row(record: dict) -> dict[str, Any]:
    """The grades of an error unit; a record without grades (a unit that never ran) counts as all wrong."""
    g = record.get("grades") or {}
    unit = record.get("unit") or {}
    has_error = g.get("has_error", unit.get("variant") == "erroneous")
    return {"has_error": bool(has_error), "pred_error": bool(g.get("pred_error", not has_error)),
            "step_right": bool(g.get("step_right", False)),
            "reason_right": g.get("reason_right", False if has_error else None),
            "correction_right": bool(g.get("correction_right", False))}


def _mr_of_rows(rows: Sequence[dict]) -> float | None:
    erroneous = [x for x in rows if x["has_error"]]
    if not rows or not erroneous:
        return None
    m = mcc([not x["has_error"] for x in rows], [not x["pred_error"] for x in rows])
    acc_step = sum(x["step_right"] for x in erroneous) / len(erroneous)
    acc_reason = sum(bool(x["reason_right"]) for x in erroneous) / len(erroneous)
    return mr_score(m or 0.0, acc_step, acc_reason)
