"""SID's seven objective metrics and TotalScore (docs/spec.md §2, SID Table VIII), over one annotated dialogue.

Lives in ``rewards`` (not ``eval``) because reward terms need it and ``eval`` depends on ``rewards``, not the reverse.

Conventions where the paper is silent (each a test in tests/eval/test_metrics.py):

- no tutor turn: SD, IKT, IKT_with_students and L3GR are ``None`` (0/0 is undefined, and scoring an empty
  dialogue 0 or 1 would pretend to a measurement); SV and SC are 0 (no strategy, no intent was used);
- BP is ``None`` when no student turn carries a Bloom level, 0 with one such turn;
- 3C is 1.0 when no student turn is ``incorrect`` (docs/spec.md §2); an error in the last student turn has no next
  student turn, so it counts as an error that was not corrected;
- TotalScore is ``None`` when any of its components is ``None``, so it is never a sum over fewer metrics;
- invalid tutor turns (``invalid: true``) stay in T: an unusable turn is still a turn the tutor spent.

Example::

    from tutorzoo.rewards.sid import sid_metrics
    sid_metrics(turns)["TotalScore"]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tutorzoo.envs.labels import STRATEGIES

# docs/spec.md §2: weights of the seven metrics in TotalScore (they sum to 1).
TOTAL_SCORE_WEIGHTS: dict[str, float] = {
    "SD": 0.15,
    "SV": 0.10,
    "IKT": 0.15,
    "BP": 0.15,
    "SC": 0.15,
    "L3GR": 0.10,
    "3C": 0.20,
}
CORE_INTENTS: frozenset[str] = frozenset({"introduce_concept", "guide_reasoning", "trigger_transfer", "summarize"})
CORRECTED_STATES: frozenset[str] = frozenset({"clear_understanding", "higher_order"})
SID_METRIC_NAMES: tuple[str, ...] = ("SD", "SV", "IKT", "IKT_with_students", "BP", "SC", "L3GR", "3C", "TotalScore")


def _rate(count: int, total: int) -> float | None:
    return count / total if total else None


def cognitive_correction(student_turns: Sequence[Mapping]) -> tuple[int, int]:
    """(corrections, errors) over the student turns in order, e.g. incorrect -> clear counts (1, 1)."""
    corrections = errors = 0
    for i, turn in enumerate(student_turns):
        if turn["student_cognition_state"] != "incorrect":
            continue
        errors += 1
        if i + 1 < len(student_turns) and student_turns[i + 1]["student_cognition_state"] in CORRECTED_STATES:
            corrections += 1
    return corrections, errors


def total_score(values: Mapping[str, float | None]) -> float | None:
    """SID's TotalScore from the seven metrics; ``None`` if any of them is ``None``."""
    parts = [values.get(name) for name in TOTAL_SCORE_WEIGHTS]
    if any(p is None for p in parts):
        return None
    return sum(w * float(p) for w, p in zip(TOTAL_SCORE_WEIGHTS.values(), parts, strict=True)
               if p is not None)  # (none is None: checked above)


def sid_metrics(turns: Sequence[Mapping]) -> dict[str, float | None]:
    """SD, SV, IKT, IKT_with_students, BP, SC, L3GR, 3C and TotalScore of canonical turns (see ``turns.py``).

    Example: one tutor turn with strategy ``hint`` at L3 and one ``incorrect`` student turn give
    SD = 1, SV = 1/8, L3GR = 1 and 3C = 0.
    """
    tutor = [t for t in turns if t["speaker"] == "tutor"]
    student = [t for t in turns if t["speaker"] == "student"]
    n_tutor = len(tutor)
    strategies = [t["teaching_strategy"] for t in tutor if t["teaching_strategy"] is not None]
    tutor_transfers = sum(1 for t in tutor if t["discipline_transfer"])
    student_transfers = sum(1 for t in student if t["discipline_transfer"])
    levels = [t["cognitive_level"] for t in student if t["cognitive_level"] is not None]
    corrections, errors = cognitive_correction(student)
    values: dict[str, float | None] = {
        "SD": _rate(len(strategies), n_tutor),
        "SV": len(set(strategies)) / len(STRATEGIES),
        "IKT": _rate(tutor_transfers, n_tutor),
        "IKT_with_students": _rate(tutor_transfers + student_transfers, n_tutor),
        "BP": (max(levels) - min(levels)) / 5 if levels else None,
        "SC": len(CORE_INTENTS & {t["teacher_intent"] for t in tutor}) / len(CORE_INTENTS),
        "L3GR": _rate(sum(1 for t in tutor if t["teacher_guidance_level"] == "L3"), n_tutor),
        "3C": corrections / errors if errors else 1.0,
    }
    values["TotalScore"] = total_score(values)
    return values
