"""MRBench's desired-annotation match rate (docs/spec.md §7): % of a tutor's responses with the desired label.

Labels come from a judge or annotator as ``{"mrbench": {dimension: label}}`` on a tutor turn (MRBench's own
column names such as ``Revealing_of_the_Answer`` are accepted). The env flags answer leaks itself
(``reveals_answer``), so "revealing the answer" falls back to that flag when a turn has no judge label.
A dimension with no labelled response has DAMR ``None``.

Example::

    from tutorzoo.eval.metrics.mrbench import damr
    damr([{"revealing_answer": "no"}, {"revealing_answer": "yes"}])["revealing_answer"]  # 50.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tutorzoo.eval.metrics.registry import DAMR_DESIRED


def damr_counts(responses: Iterable[Mapping[str, str]]) -> dict[str, tuple[int, int]]:
    """Per dimension, (responses with the desired label, labelled responses)."""
    counts = {dim: [0, 0] for dim in DAMR_DESIRED}
    for labels in responses:
        for dim, label in labels.items():
            if dim not in DAMR_DESIRED:
                raise ValueError(f"unknown MRBench dimension {dim!r}; use one of {list(DAMR_DESIRED)}")
            counts[dim][1] += 1
            counts[dim][0] += label == DAMR_DESIRED[dim]
    return {dim: (hit, total) for dim, (hit, total) in counts.items()}


def damr(responses: Iterable[Mapping[str, str]]) -> dict[str, float | None]:
    """DAMR in percent per dimension over ``responses`` (each ``{dimension: normalised label}``)."""
    return {dim: 100.0 * hit / total if total else None for dim, (hit, total) in damr_counts(responses).items()}


def tutor_labels(turns: Sequence[Mapping]) -> list[dict[str, str]]:
    """The MRBench labels of each tutor turn of canonical turns, with the ``reveals_answer`` fallback."""
    out: list[dict[str, str]] = []
    for turn in turns:
        if turn["speaker"] != "tutor":
            continue
        labels = dict(turn.get("mrbench") or {})
        if "revealing_answer" not in labels and turn.get("reveals_answer") is not None:
            labels["revealing_answer"] = "yes" if turn["reveals_answer"] else "no"
        out.append(labels)
    return out
