"""MathDial's interactive metrics (SPEC.md §7): does the student get there, and did the tutor tell?

s = the 1-based index, among student turns, of the first student turn that states the task's correct answer
(``states_answer``); t = the 1-based index, among tutor turns, of the first tutor turn that states it
(``reveals_answer``); either is infinite when it never happens. Success@k = 1[s <= k];
Telling@k = 1[t <= min(s, k)]. Indices count each speaker's own turns, so a dialogue the student opens and one
the tutor opens are scored alike. Both are ``None`` for a transcript that carries neither flag (a SID
dialogue), since "never" cannot be told from "not recorded".

Example::

    from eval.metrics.mathdial import success_telling
    success_telling(turns, ks=(3,))  # {"Success@3": 1.0, "Telling@3": 0.0}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from eval.metrics.registry import DEFAULT_KS


def first_index(turns: Sequence[Mapping], speaker: str, flag: str) -> float:
    """1-based index among ``speaker``'s turns of the first with ``flag`` true; ``math.inf`` if none."""
    index = 0
    for turn in turns:
        if turn["speaker"] != speaker:
            continue
        index += 1
        if turn.get(flag):
            return index
    return math.inf


def success_telling(turns: Sequence[Mapping], ks: Sequence[int] = DEFAULT_KS) -> dict[str, float | None]:
    """Success@k and Telling@k for each k in ``ks`` over canonical turns (see ``turns.py``)."""
    for k in ks:
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"every k must be a positive integer, got {k!r}")
    recorded = any(t.get("states_answer") is not None or t.get("reveals_answer") is not None for t in turns)
    out: dict[str, float | None] = {}
    s = first_index(turns, "student", "states_answer")
    t = first_index(turns, "tutor", "reveals_answer")
    for k in ks:
        out[f"Success@{k}"] = float(s <= k) if recorded else None
        out[f"Telling@{k}"] = float(t <= min(s, k)) if recorded else None
    return out
