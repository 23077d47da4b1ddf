"""MathDial's interactive metrics (docs/spec.md §7), as MathDial's ``interactivetutoring/evaluate.py`` computes them.

s = the index, among student turns **counted from 0**, of the first student turn that states the task's
correct answer (``states_answer``); t = the same among tutor turns (``reveals_answer``); either is infinite
when it never happens. Success@k = 1[s <= k]; Telling@k = 1[t <= min(s, k)]. Counting from 0 makes round 0
the opening exchange, so Success@1 means "within the first two student turns": that is MathDial's
convention, and its published Success@k / Telling@k numbers are only comparable under it. Indices count
each speaker's own turns, so a dialogue the student opens and one the tutor opens are scored alike. Both are
``None`` for a transcript that carries neither flag (a SID dialogue), since "never" cannot be told from
"not recorded".

"States the answer" is MathDial's own answer matching (:func:`states_number`): the final number of the
ground-truth solution (:func:`mathdial_answer`) equals, within 1e-7, one of the unsigned decimal numbers of
the utterance with commas removed. TutorZoo's env sets the flags itself; files that carry only text (a
MathDial release, a plain chat) get them from :func:`answer_flags`.

Example::

    from tutorzoo.eval.metrics.mathdial import success_telling
    success_telling(turns, ks=(3,))  # {"Success@3": 1.0, "Telling@3": 0.0}
    success_telling(turns, max_k=2)  # {"Success@1": ..., "Telling@1": ..., "Success@2": ..., "Telling@2": ...}
    states_number("He has to pay $20 more, not $30.", "20")  # True
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from tutorzoo.eval.metrics.registry import MATHDIAL_MAX_K, mathdial_ks

# MathDial's number pattern: unsigned, optional decimal part; commas are removed first ("1,000" -> 1000).
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_TOLERANCE = 1e-7


def mathdial_answer(ground_truth: str) -> str:
    """The answer MathDial's evaluation compares with: the last line of the ground-truth solution.

    MathDial's solutions end with a line holding only the number (``"...=10 spoons.\\n 10"`` -> ``"10"``);
    a literal backslash-n (some exports) splits like a newline.
    """
    return ground_truth.split("\n")[-1].strip().split("\\n")[-1].strip()


def _as_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def numbers_in(text: str) -> list[str]:
    """The numbers of ``text`` as MathDial reads them: ``numbers_in("2+3=5, 1,000")`` -> ``['2', '3', '5', '1000']``."""
    return _NUMBER.findall(text.replace(",", ""))


def states_number(text: str, answer: str) -> bool:
    """Whether ``text`` states ``answer`` (MathDial's ``get_match``): a number equal within 1e-7, or, for an
    answer that is not a number, the exact string among the numbers (which then never matches a word)."""
    found = numbers_in(text)
    target = answer.replace(",", "")
    value = _as_float(target)
    if value is None:
        return target in found
    return any(abs(value - float(n)) < _TOLERANCE for n in found)


def answer_flags(turns: Sequence[Mapping], answer: str, text_key: str = "utterance") -> list[dict]:
    """Copies of ``turns`` with MathDial's flags set from their text: ``states_answer`` on student turns,
    ``reveals_answer`` on tutor turns (other speakers are left as they are)."""
    out = []
    for turn in turns:
        turn = dict(turn)
        text = str(turn.get(text_key) or "")
        if turn.get("speaker") == "student":
            turn["states_answer"] = states_number(text, answer)
        elif turn.get("speaker") == "tutor":
            turn["reveals_answer"] = states_number(text, answer)
        out.append(turn)
    return out


def first_index(turns: Sequence[Mapping], speaker: str, flag: str) -> float:
    """0-based index among ``speaker``'s turns of the first with ``flag`` true; ``math.inf`` if none."""
    index = 0
    for turn in turns:
        if turn["speaker"] != speaker:
            continue
        if turn.get(flag):
            return index
        index += 1
    return math.inf


def success_telling(turns: Sequence[Mapping], ks: Sequence[int] | None = None,
                    max_k: int = MATHDIAL_MAX_K) -> dict[str, float | None]:
    """Success@k and Telling@k over canonical turns (see ``turns.py``) for each k in ``ks``, by default every k
    from 1 to ``max_k`` (10, as MathDial's evaluate.py)."""
    ks = mathdial_ks(max_k) if ks is None else ks
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
