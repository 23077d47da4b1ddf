"""Annotator agreement with the hand-labelled gold set: accuracy and Cohen's κ per SID field (SID Table VI).

``python -m eval.agreement`` (CLI: ``tutorzoo agreement``) prints, for each annotator, the accuracy and κ of
every field against ``eval/data/gold_annotations.jsonl``. Annotators: ``rule`` (the env's
:class:`envs.annotate.Annotator` on tutor turns, :mod:`envs.annotate_student` on student turns, each given the
context the env would keep), ``majority`` (always the gold set's most frequent label: κ = 0 by construction,
the chance floor), or a path to a JSONL file of predictions (``dialogue_id``, ``turn_index`` and any label
fields), e.g. an LLM annotator's output.

Labelling guide of the gold set (written by hand from docs/spec.md §1 and SID Table IV; how ambiguous cases were
decided):

- ``teacher_intent`` — what the turn is *for*. ``introduce_concept``: presents a concept, definition, rule,
  fact or the problem setting as new material (a statement, possibly ending in a question). ``check_understanding``:
  asks the student to confirm, recall or restate something already taught ("So is $41.60 what you pay?",
  "explain it back in one sentence"). ``guide_reasoning``: moves the student's own reasoning a step on (the
  default for questions, hints and corrections inside the task's discipline). ``trigger_transfer``: asks the
  student to carry the idea into another discipline or a new domain (a discipline other than the one being
  worked in must appear). ``summarize``: closes or consolidates what was learned (usually the last turn).
- ``teaching_strategy`` — the tactic that does the teaching work; a bare "Right." or "Good." is not a
  strategy. ``follow_up_question``: a question that probes the student's last answer ("why?", "and then?").
  ``hint``: a clue or tip pointing at the next idea without doing it. ``analogy``: a comparison with a
  familiar thing (bank balance, bike chain, arrow feathers). ``scenario_question``: a hypothetical to reason
  through ("imagine", "suppose", counterexamples such as "1/2 + 1/2 by your method?"). ``break_down``: the turn
  splits the problem into steps and asks for one. ``encourage``: praise or an invitation to go on is the main
  move ("That's a great start — tell me more"). ``corrective_feedback``: the turn says the answer is wrong or
  partly wrong and supplies or points to the correct version. ``contextualize``: places the content in a real
  setting (a market scale, NASA's lost orbiter, Dutch greenhouses) rather than a hypothetical. When a turn
  combines tactics, the one that carries the repair or the question wins: "Not quite — imagine ..." is a
  scenario question; praise followed by a demanding question is encourage only when the praise dominates.
  ``null`` for plain questions that open a new step, plain explanations and plain summaries.
- ``discipline`` — the subject(s) whose content the turn actually uses: arithmetic is math even in a STEM
  lesson; a number-free student reply ("Back.") takes the discipline of the question it answers.
- ``discipline_transfer`` — SPEC §1 applied mechanically to the discipline labels: true when the turn has two
  or more disciplines (it links them) or one the previous turn did not have; the first turn of a dialogue is
  true only with two or more.
- ``teacher_guidance_level`` — the demand of what the turn asks; a turn that asks nothing gets the level of the
  content it delivers. ``L1``: closed, one-word/number answers, yes/no, definitions, single computation steps.
  ``L2``: explain, describe, how does it work, a worked explanation. ``L3``: why/predict/what-if, comparison,
  transfer to another discipline, design, justification, and summaries that link disciplines.
- ``student_cognition_state`` — ``clear_understanding``: correct and confident; ``vague_understanding``:
  right direction but hedged or partial ("Is it 8?", "I think"); ``expression_difficulty``: the student says or
  shows they cannot put it into words; ``irrelevant``: does not address the question; ``incorrect``: states a
  wrong fact, belief or answer (even confidently); ``higher_order``: goes beyond the question — explains a
  causal chain unprompted, connects disciplines, proposes a test or design. A hedged wrong answer is
  ``incorrect``; a correct answer that also extends the idea is ``higher_order``.
- ``cognitive_level`` — the Bloom level the turn *shows*: ``remember`` recalls a fact, term or number fact (8 +
  9 = 17); ``understand`` explains or paraphrases; ``apply`` carries out a procedure on the case (including a
  wrong procedure); ``analyze`` gives reasons, compares, finds where something breaks; ``evaluate`` judges or
  justifies a choice; ``create`` proposes a new design, plan, experiment or example. An off-topic turn is
  ``remember``.

Example::

    from eval.agreement import agreement
    report = agreement("rule")
    report["fields"]["teacher_intent"]["kappa"]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from envs.annotate import AnnotationContext, Annotator
from envs.annotate_student import StudentAnnotator, StudentContext
from envs.errors import ConfigError, DatasetError
from envs.labels import BLOOM_LEVELS, COGNITION_STATES, DISCIPLINES, GUIDANCE_LEVELS, INTENTS, SPEAKERS, STRATEGIES
from envs.tasks import TASK_SETS, Task, get_task_set

GOLD_PATH = Path(__file__).resolve().parent / "data" / "gold_annotations.jsonl"

# field -> (speakers it applies to, allowed labels); None labels means "checked by its own rule".
FIELDS: dict[str, tuple[tuple[str, ...], tuple[Any, ...] | None]] = {
    "teacher_intent": (("tutor",), INTENTS),
    "teaching_strategy": (("tutor",), (*STRATEGIES, None)),
    "discipline": (("tutor", "student"), None),
    "discipline_transfer": (("tutor", "student"), (True, False)),
    "student_cognition_state": (("student",), COGNITION_STATES),
    "teacher_guidance_level": (("tutor",), GUIDANCE_LEVELS),
    "cognitive_level": (("student",), BLOOM_LEVELS),
}
_KEYS = ("dialogue_id", "turn_index", "task", "speaker", "utterance")

Key = tuple[str, int]


def cohen_kappa(gold: Sequence[Any], predicted: Sequence[Any]) -> tuple[float | None, float, float]:
    """Cohen's κ of two labelings of the same items: ``(kappa, p_o, p_e)``; kappa is ``None`` when p_e = 1.

    p_o is the observed agreement, p_e = Σ_k p_gold(k)·p_pred(k) the agreement expected from the two marginals;
    κ = (p_o − p_e) / (1 − p_e). When both sides use one and the same label p_e = 1 and κ is undefined.

    Example::

        >>> cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"])
        (0.5, 0.75, 0.5)
    """
    if len(gold) != len(predicted):
        raise ValueError(f"cohen_kappa needs two labelings of the same items, got {len(gold)} and {len(predicted)}")
    if not gold:
        raise ValueError("cohen_kappa needs at least one item")
    n = len(gold)
    p_o = sum(g == p for g, p in zip(gold, predicted, strict=True)) / n
    g_counts, p_counts = Counter(gold), Counter(predicted)
    p_e = sum(g_counts[k] * p_counts[k] for k in g_counts) / (n * n)
    if p_e >= 1.0:
        return None, p_o, p_e
    return (p_o - p_e) / (1.0 - p_e), p_o, p_e


def load_gold(path: str | Path = GOLD_PATH) -> list[dict]:
    """Read and validate a gold annotation file (one JSON object per line, see the module docstring).

    Raises :class:`DatasetError` naming the file, the line and the field, with the fix.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the gold file ({exc}); check the path") from exc
    records: list[dict] = []
    last: dict[str, dict] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: not valid JSON ({exc}); write one JSON object per line") from exc
        if not isinstance(rec, dict):
            raise DatasetError(f"{where}: a record must be a JSON object, got {type(rec).__name__}")
        _check_record(rec, where, last.get(str(rec.get("dialogue_id"))))
        last[rec["dialogue_id"]] = rec
        records.append(rec)
    if not records:
        raise DatasetError(f"{path}: no records; add one JSON object per annotated turn")
    return records


def _check_record(rec: dict, where: str, previous: dict | None) -> None:
    missing = [k for k in (*_KEYS, *FIELDS) if k not in rec]
    if missing:
        raise DatasetError(f"{where}: missing field(s) {missing}; every record has {list(_KEYS) + list(FIELDS)}")
    extra = sorted(set(rec) - set(_KEYS) - set(FIELDS))
    if extra:
        raise DatasetError(f"{where}: unknown field(s) {extra}; remove them or fix their spelling")
    speaker, did = rec["speaker"], rec["dialogue_id"]
    if speaker not in SPEAKERS:
        raise DatasetError(f"{where}: speaker {speaker!r} must be one of {SPEAKERS}")
    if not isinstance(rec["utterance"], str) or not rec["utterance"].strip():
        raise DatasetError(f"{where}: utterance must be a non-empty text")
    task = rec["task"]
    if not (isinstance(task, dict) and set(task) == {"task_set", "task_id", "seed"}
            and task["task_set"] in TASK_SETS and isinstance(task["seed"], int)):
        raise DatasetError(f"{where}: task must be {{'task_set': one of {sorted(TASK_SETS)}, 'task_id', 'seed': int}}"
                           f", got {task!r}")
    expected_index = 0 if previous is None else previous["turn_index"] + 1
    if rec["turn_index"] != expected_index:
        raise DatasetError(f"{where}: dialogue {did!r} turn_index is {rec['turn_index']!r}, expected {expected_index};"
                           " keep a dialogue's lines together and number its turns 0, 1, 2, ...")
    if previous is not None and previous["task"] != task:
        raise DatasetError(f"{where}: dialogue {did!r} changes task; a dialogue is about one task")
    for field, (speakers, allowed) in FIELDS.items():
        value = rec[field]
        if speaker not in speakers:
            if value is not None:
                raise DatasetError(f"{where}: {field} is a {'/'.join(speakers)} field; set it to null on "
                                   f"{speaker} turns")
            continue
        if field == "discipline":
            if not (isinstance(value, list) and value and all(d in DISCIPLINES for d in value)
                    and len(set(value)) == len(value)):
                raise DatasetError(f"{where}: discipline must be a non-empty list of distinct labels from "
                                   f"{DISCIPLINES}, got {value!r}")
        elif allowed is not None and value not in allowed:
            raise DatasetError(f"{where}: {field} {value!r} is not a label; use one of {list(allowed)}")


def label(field: str, value: Any) -> str:
    """The comparable label of a field value: disciplines as a set (``"math+physics"``), null as ``"none"``."""
    if field == "discipline":
        return "+".join(sorted(set(value), key=DISCIPLINES.index))
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _dialogues(records: Sequence[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for rec in records:
        out.setdefault(rec["dialogue_id"], []).append(rec)
    return out


def _build_task(ref: dict, cache: dict[tuple, Task]) -> Task:
    key = (ref["task_set"], ref["task_id"], ref["seed"])
    if key not in cache:
        cache[key] = get_task_set(ref["task_set"]).build(ref["task_id"], np.random.default_rng(ref["seed"]))
    return cache[key]


def _transfer(disciplines: Sequence[str], previous: Sequence[str]) -> bool:
    if not previous:  # the first turn brings nothing in relative to nothing
        return len(disciplines) >= 2
    return len(disciplines) >= 2 or any(d not in previous for d in disciplines)


def rule_annotations(records: Sequence[dict]) -> dict[Key, dict]:
    """The rule-based annotators' labels for every turn, each dialogue annotated in order as the env would.

    Tutor turns: :class:`envs.annotate.Annotator` with the env's :class:`AnnotationContext` (focus KC, previous
    turn's disciplines, tutor history, whether the student spoke last), built from the annotators' own labels
    of the earlier turns. Student turns: :class:`envs.annotate_student.StudentAnnotator`.
    """
    tasks: dict[tuple, Task] = {}
    out: dict[Key, dict] = {}
    for did, turns in _dialogues(records).items():
        task = _build_task(turns[0]["task"], tasks)
        tutor, student = Annotator.for_task(task), StudentAnnotator(task)
        ctx = AnnotationContext(focus_kc=task.knowledge_components[0].id)
        previous_text = ""
        for rec in turns:
            text = rec["utterance"]
            if rec["speaker"] == "tutor":
                act = tutor.annotate(text, ctx)
                out[(did, rec["turn_index"])] = {
                    "teacher_intent": act.intent, "teaching_strategy": act.strategy,
                    "discipline": list(act.disciplines), "discipline_transfer": act.discipline_transfer,
                    "teacher_guidance_level": act.guidance_level,
                }
                if act.target_kc is not None:
                    ctx.focus_kc = act.target_kc
                ctx.tutor_history.append(text)
                ctx.previous_disciplines = act.disciplines
                ctx.student_spoke_last = False
            else:
                seen = StudentContext(previous_text, ctx.previous_disciplines)
                state, level, disciplines = student.annotate(text, seen)
                out[(did, rec["turn_index"])] = {
                    "student_cognition_state": state, "cognitive_level": level, "discipline": list(disciplines),
                    "discipline_transfer": _transfer(disciplines, ctx.previous_disciplines),
                }
                ctx.previous_disciplines = disciplines
                ctx.student_spoke_last = True
            previous_text = text
    return out


def majority_annotations(records: Sequence[dict]) -> dict[Key, dict]:
    """Every turn gets each field's most frequent gold label (ties: the first in label order): the κ = 0 floor."""
    most: dict[str, Any] = {}
    for field, (speakers, _allowed) in FIELDS.items():
        counts = Counter(label(field, r[field]) for r in records if r["speaker"] in speakers)
        top = max(counts.values())
        chosen = min(lab for lab, c in counts.items() if c == top)
        most[field] = next(r[field] for r in records if r["speaker"] in speakers and label(field, r[field]) == chosen)
    return {(r["dialogue_id"], r["turn_index"]): {f: most[f] for f, (sp, _a) in FIELDS.items() if r["speaker"] in sp}
            for r in records}


def file_annotations(path: str | Path) -> dict[Key, dict]:
    """Predictions read from a JSONL file: ``{"dialogue_id", "turn_index", <label fields>...}`` per line."""
    path = Path(path)
    out: dict[Key, dict] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the predictions file ({exc}); check the path") from exc
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            key = (str(rec["dialogue_id"]), int(rec["turn_index"]))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise DatasetError(f"{path}:{n}: each line must be a JSON object with dialogue_id and turn_index "
                               f"({exc})") from exc
        out[key] = {f: rec[f] for f in FIELDS if f in rec}
    return out


ANNOTATORS: dict[str, Callable[[Sequence[dict]], dict[Key, dict]]] = {
    "rule": rule_annotations,
    "majority": majority_annotations,
}


def agreement(annotator_name: str = "rule", path: str | Path = GOLD_PATH) -> dict:
    """Accuracy and Cohen's κ per field of one annotator against the gold set at ``path``.

    ``annotator_name`` is ``rule``, ``majority``, ``llm:<backend spec>`` (the LLM annotator of
    :mod:`agents.annotate_llm` over that backend) or a path to a JSONL predictions file. A field is scored on the
    turns it applies to (tutor fields on tutor turns, ...); a turn the annotator did not label counts as a
    disagreement. Returns ``{"annotator", "gold", "turns": {"tutor", "student"}, "fields": {field: {"n",
    "accuracy", "kappa", "p_o", "p_e", "note", "confusions"}}}``; ``kappa`` is ``None`` (with a ``note``) when
    undefined.

    Example::

        agreement("rule")["fields"]["teacher_guidance_level"]["accuracy"]
    """
    records = load_gold(path)
    if annotator_name in ANNOTATORS:
        predictions = ANNOTATORS[annotator_name](records)
    elif annotator_name.startswith("llm:"):  # llm:<backend spec>, e.g. llm:openai:gpt-4o-mini
        from agents.annotate_llm import predictions_for_gold

        preds = predictions_for_gold(records, annotator_name.removeprefix("llm:"))
        predictions = {(p["dialogue_id"], p["turn_index"]): p for p in preds}
    elif Path(annotator_name).suffix == ".jsonl":
        predictions = file_annotations(annotator_name)
    else:
        raise ConfigError(f"unknown annotator {annotator_name!r}; use one of {sorted(ANNOTATORS)}, "
                          "'llm:<backend>' (e.g. llm:openai:gpt-4o-mini) or a path to a .jsonl file of predictions")
    fields: dict[str, dict] = {}
    for field, (speakers, _allowed) in FIELDS.items():
        scored = [r for r in records if r["speaker"] in speakers]
        gold = [label(field, r[field]) for r in scored]
        pred = []
        for r in scored:
            labels = predictions.get((r["dialogue_id"], r["turn_index"]), {})
            pred.append(label(field, labels[field]) if field in labels else "<missing>")
        kappa, p_o, p_e = cohen_kappa(gold, pred)
        confusions = Counter((g, p) for g, p in zip(gold, pred, strict=True) if g != p)
        fields[field] = {
            "n": len(scored),
            "accuracy": p_o,
            "kappa": kappa,
            "p_o": p_o,
            "p_e": p_e,
            "note": "kappa undefined: both sides use a single label (p_e = 1)" if kappa is None else None,
            "confusions": [[g, p, c] for (g, p), c in sorted(confusions.items(), key=lambda kv: (-kv[1], kv[0]))[:5]],
        }
    speakers = Counter(r["speaker"] for r in records)
    return {"annotator": annotator_name, "gold": str(path),
            "turns": {s: speakers.get(s, 0) for s in SPEAKERS}, "fields": fields}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m eval.agreement [--annotator NAME ...] [--gold FILE] [--json]``: the agreement table."""
    parser = argparse.ArgumentParser(prog="tutorzoo agreement",
                                     description="Accuracy and Cohen's kappa per SID field against the gold set.")
    parser.add_argument("--annotator", action="append", default=None,
                        help="rule, majority or a predictions .jsonl (repeatable; default: rule and majority)")
    parser.add_argument("--gold", default=str(GOLD_PATH), help="gold annotations JSONL (default: the shipped set)")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON instead of a table")
    args = parser.parse_args(argv)
    names = args.annotator or ["rule", "majority"]
    reports = [agreement(name, args.gold) for name in names]
    if args.json:
        print(json.dumps(reports, indent=2))
        return 0

    from rich.console import Console
    from rich.table import Table

    turns = reports[0]["turns"]
    table = Table(title=f"Annotator agreement with {Path(args.gold).name} "
                        f"({turns['tutor']} tutor, {turns['student']} student turns)")
    table.add_column("field", no_wrap=True)
    table.add_column("n", justify="right")
    for name in names:
        table.add_column(f"{name} acc", justify="right")
        table.add_column(f"{name} κ", justify="right")
    for field in FIELDS:
        row = [field, str(reports[0]["fields"][field]["n"])]
        for rep in reports:
            f = rep["fields"][field]
            row += [f"{f['accuracy']:.3f}", "undefined" if f["kappa"] is None else f"{f['kappa']:.3f}"]
        table.add_row(*row)
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
