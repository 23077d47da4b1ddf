"""What a run's numbers rest on: failures per tutor and error type, scored and failed records, invalid and
clipped turns, and the warnings a reader must not miss (printed by the CLI, shown in the reports).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def failure_kind(failure: Any) -> str:
    """``agent: ErrorType``, how failures are grouped (``"tutor: TimeoutError"``; ``"?: ..."`` without an agent)."""
    error = str(failure.get("error", "")) if isinstance(failure, Mapping) else str(failure)
    etype = error.split(":", 1)[0].strip() if ":" in error else (error[:60] or "unknown")
    return f"{failure.get('agent', '?') if isinstance(failure, Mapping) else '?'}: {etype}"


def failure_summary(records: Sequence[dict]) -> dict[str, Any]:
    """Records with failures, per tutor and per ``agent: ErrorType`` (counting failures), in sorted order."""
    by_tutor: dict[str, int] = {}
    by_error: dict[str, int] = {}
    by_tutor_error: dict[str, dict[str, int]] = {}
    n_failures = 0
    for record in records:
        failures = record.get("failures") or []
        if not failures:
            continue
        tutor = str(record.get("tutor"))
        by_tutor[tutor] = by_tutor.get(tutor, 0) + 1
        for f in failures:
            n_failures += 1
            name = failure_kind(f)
            by_error[name] = by_error.get(name, 0) + 1
            per = by_tutor_error.setdefault(tutor, {})
            per[name] = per.get(name, 0) + 1
    return {
        "n_records_with_failures": sum(by_tutor.values()),
        "n_failures": n_failures,
        "by_tutor": dict(sorted(by_tutor.items())),
        "by_error": dict(sorted(by_error.items())),
        "by_tutor_error": {t: dict(sorted(v.items())) for t, v in sorted(by_tutor_error.items())},
    }


def has_hard_failure(record: dict) -> bool:
    """A tutor, student or harness failure: the unit was not played to the end, so it is not scored. A judge
    failure loses a judged metric only."""
    return any(not (isinstance(f, dict) and f.get("agent") == "judge") for f in record.get("failures") or [])


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def tutor_health(records: Sequence[dict], tutors: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per tutor, what its numbers rest on: ``n`` records, ``scored`` (no failure recorded, so its metrics are
    the tutor's own play), ``failed``, the error types of its failures, and its tutor turns with the share that
    were invalid (empty, not text, not language) or clipped (over-long or with control characters).

    ``invalid_share`` / ``clipped_share`` are None for records without turn counts (item suites).
    Example: ``tutor_health(records)["socratic"]["invalid_share"]``."""
    def empty() -> dict[str, Any]:
        return {"n": 0, "scored": 0, "failed": 0, "errors": {}, "turns": 0, "invalid_turns": 0, "clipped_turns": 0}

    health: dict[str, dict[str, Any]] = {str(t): empty() for t in tutors or []}
    for record in records:
        h = health.setdefault(str(record.get("tutor")), empty())
        h["n"] += 1
        failures = record.get("failures") or []
        if has_hard_failure(record):
            h["failed"] += 1
        else:
            h["scored"] += 1
        if failures:
            for f in failures:
                name = failure_kind(f)
                h["errors"][name] = h["errors"].get(name, 0) + 1
        turns = record.get("n_tutor_turns")
        if isinstance(turns, int):
            h["turns"] += turns
            h["invalid_turns"] += int((record.get("invalid_turns") or {}).get("tutor", 0))
            h["clipped_turns"] += int((record.get("clipped_turns") or {}).get("tutor", 0))
    for h in health.values():
        h["errors"] = dict(sorted(h["errors"].items()))
        h["invalid_share"] = _share(h["invalid_turns"], h["turns"])
        h["clipped_share"] = _share(h["clipped_turns"], h["turns"])
    return health


def health_warnings(health: dict[str, dict[str, Any]]) -> list[str]:
    """One plain sentence per tutor whose numbers cannot be trusted: nothing scored, some episodes failed,
    most turns invalid or clipped."""
    lines = []
    for tutor, h in health.items():
        errors = ", ".join(f"{e} x{n}" for e, n in h["errors"].items())
        if h["n"] and not h["scored"]:
            lines.append(f"error: tutor {tutor} scored nothing: all {h['n']} failed ({errors})")
        elif h["failed"]:
            lines.append(f"warning: tutor {tutor}: {h['failed']} of {h['n']} failed ({errors}); its metrics "
                         f"rest on the {h['scored']} scored")
        if h["invalid_share"] is not None and h["invalid_share"] > 0.5:
            lines.append(f"warning: tutor {tutor}: {h['invalid_turns']} of {h['turns']} turns were invalid (empty, "
                         "not text, or not language); its scores measure the env's fallback, not the tutor")
        if h["clipped_share"] is not None and h["clipped_share"] > 0.5:
            lines.append(f"warning: tutor {tutor}: {h['clipped_turns']} of {h['turns']} turns were clipped "
                         "(cut at 4,000 characters, or changed by text normalisation)")
    return lines


def unscored_tutors(health: dict[str, dict[str, Any]]) -> list[str]:
    """Tutors with records but not one scored: a command showing them must not exit 0."""
    return [t for t, h in health.items() if h["n"] and not h["scored"]]
