"""Annotator agreement with the hand-labelled gold set: accuracy and Cohen's κ per SID field (SID Table VI).

``python -m tutorzoo.eval.agreement`` (CLI: ``tutorzoo agreement``; ``--reader`` scores content readers instead, see
:mod:`tutorzoo.eval.reader_agreement`) prints, for each annotator, the accuracy and κ of
every field against ``eval/data/gold_annotations.jsonl``, beside the field's majority-class baseline (the share of
its most frequent gold label), and flags the fields whose accuracy is not above that baseline. Annotators:
``rule`` (the env's labels: :class:`tutorzoo.envs.annotate.Annotator` on tutor turns combined with the content reader
:mod:`tutorzoo.envs.content` exactly as the env combines them, see :func:`env_tutor_act`;
:mod:`tutorzoo.envs.annotate_student` on
student turns; each given the context the env would keep), ``majority`` (always the gold set's most frequent
label: κ = 0 by construction, the chance floor), or a path to a JSONL file of predictions (``dialogue_id``,
``turn_index`` and any label fields), e.g. an LLM annotator's output.

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
- ``target_kc`` (tutor turns; optional: the records that carry it are the *content* gold set) — the task's
  component whose content the turn actually works on: the computation it performs or asks for (math: the KC
  whose procedure the numbers go through, whatever KC name the words say), or the proposition it states or asks
  about (STEM). A wrong computation still works on its component (``13 + 28 = 31`` is on ``regrouping``); a
  misconception stated as the rule is on the misconception's component. ``null`` when the turn has no content
  of this task: praise only, a KC's name or keywords with no relation stated or asked, moves without content
  ("let's go step by step"), another task's material.
- ``addresses_misconception`` — the misconception whose counterexample the turn gives: a concrete case on which
  the misconception's rule and the correct rule give different results, with the correct result stated or asked
  for (STEM: an observation that refutes the belief). ``null`` otherwise, in particular when the turn states the
  misconception as the rule, only names it, or only says "that's wrong".
- ``variant`` (optional, not a label) — how a content record was written: ``curriculum`` (the lesson's own
  style and numbers), ``paraphrase`` (the same content in other words and other numbers), or the adversarial
  kind: ``keyword_stuffing``, ``name_only``, ``wrong_arithmetic``, ``misconception_as_rule``, ``other_task``,
  ``praise_only``. The report breaks the content fields down by it.

Example::

    from tutorzoo.eval.agreement import agreement
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

from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.annotate import AnnotationContext, Annotator
from tutorzoo.envs.annotate_student import StudentAnnotator, StudentContext
from tutorzoo.envs.content import EMPTY as EMPTY_READING
from tutorzoo.envs.content import ContentReader, with_reading
from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.envs.jsonl_lines import jsonl_file_values
from tutorzoo.envs.labels import (
    BLOOM_LEVELS,
    COGNITION_STATES,
    DISCIPLINES,
    GUIDANCE_LEVELS,
    INTENTS,
    SPEAKERS,
    STRATEGIES,
)
from tutorzoo.envs.tasks import TASK_SETS, Task, get_task_set

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
# The content fields: optional per record (both or neither), their labels are the record's task's own ids.
CONTENT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[Any, ...] | None]] = {
    "target_kc": (("tutor",), None),
    "addresses_misconception": (("tutor",), None),
}
ALL_FIELDS = {**FIELDS, **CONTENT_FIELDS}
VARIANTS = ("curriculum", "paraphrase", "keyword_stuffing", "name_only", "wrong_arithmetic", "misconception_as_rule",
            "other_task", "praise_only")
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
    records: list[dict] = []
    last: dict[str, dict] = {}
    tasks: dict[tuple, Task] = {}
    for n, rec in jsonl_file_values(path, "gold file", lambda n, exc: f"{path}:{n}: not valid JSON ({exc}); write one "
                                    "JSON object per line"):
        where = f"{path}:{n}"
        if not isinstance(rec, dict):
            raise DatasetError(f"{where}: a record must be a JSON object, got {type(rec).__name__}")
        _check_record(rec, where, last.get(str(rec.get("dialogue_id"))))
        _check_content(rec, where, tasks)
        last[rec["dialogue_id"]] = rec
        records.append(rec)
    if not records:
        raise DatasetError(f"{path}: no records; add one JSON object per annotated turn")
    return records


def _check_record(rec: dict, where: str, previous: dict | None) -> None:
    missing = [k for k in (*_KEYS, *FIELDS) if k not in rec]
    if missing:
        raise DatasetError(f"{where}: missing field(s) {missing}; every record has {list(_KEYS) + list(FIELDS)}")
    extra = sorted(set(rec) - set(_KEYS) - set(ALL_FIELDS) - {"variant"})
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


def _check_content(rec: dict, where: str, tasks: dict[tuple, Task]) -> None:
    present = [f for f in CONTENT_FIELDS if f in rec]
    if "variant" in rec and rec["variant"] not in VARIANTS:
        raise DatasetError(f"{where}: variant {rec['variant']!r} is not one of {list(VARIANTS)}")
    if not present:
        if "variant" in rec:
            raise DatasetError(f"{where}: a variant belongs to a content record; add {list(CONTENT_FIELDS)} or drop it")
        return
    if len(present) != len(CONTENT_FIELDS):
        raise DatasetError(f"{where}: a content record has all of {list(CONTENT_FIELDS)}, got only {present}; "
                           "add the missing one (null when none)")
    if rec["speaker"] != "tutor":
        if any(rec[f] is not None for f in CONTENT_FIELDS):
            raise DatasetError(f"{where}: {list(CONTENT_FIELDS)} are tutor fields; set them to null on student turns")
        return
    task = _build_task(rec["task"], tasks)
    allowed = {"target_kc": [k.id for k in task.knowledge_components],
               "addresses_misconception": [m.id for m in task.misconceptions]}
    for field, ids in allowed.items():
        if rec[field] is not None and rec[field] not in ids:
            raise DatasetError(f"{where}: {field} {rec[field]!r} is not an id of task {rec['task']['task_id']!r}; "
                               f"use null or one of {ids}")


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


def env_tutor_act(annotator: Annotator, reader: ContentReader, text: str, ctx: AnnotationContext) -> TutorAct:
    """The act the env gives a text-mode tutor turn: the annotator's labels with what the content reader reads.

    The env's own combination, :func:`tutorzoo.envs.content.with_reading`: ``target_kc`` is the reading's component and
    ``addresses_misconception`` the first misconception the turn refutes; a turn the annotator finds malformed
    keeps its no-credit labels and an empty reading.

    Example::

        act = env_tutor_act(Annotator.for_task(task), ContentReader.for_task(task), "What is 3 + 8?",
                            AnnotationContext(focus_kc=task.knowledge_components[0].id))
        act.target_kc, act.addresses_misconception
    """
    act = annotator.annotate(text, ctx)
    return with_reading(act, EMPTY_READING if act.invalid else reader.read(text))


def rule_annotations(records: Sequence[dict]) -> dict[Key, dict]:
    """The env's labels for every turn, each dialogue annotated in order as the env would.

    Tutor turns: :func:`env_tutor_act` (the annotator with the env's :class:`AnnotationContext`: focus KC,
    previous turn's disciplines, tutor history, whether the student spoke last; then the content reader), the
    context built from the labels of the earlier turns. Student turns:
    :class:`tutorzoo.envs.annotate_student.StudentAnnotator`.
    """
    tasks: dict[tuple, Task] = {}
    out: dict[Key, dict] = {}
    for did, turns in _dialogues(records).items():
        task = _build_task(turns[0]["task"], tasks)
        tutor, reader, student = Annotator.for_task(task), ContentReader.for_task(task), StudentAnnotator(task)
        ctx = AnnotationContext(focus_kc=task.knowledge_components[0].id)
        previous_text = ""
        for rec in turns:
            text = rec["utterance"]
            if rec["speaker"] == "tutor":
                act = env_tutor_act(tutor, reader, text, ctx)
                out[(did, rec["turn_index"])] = {
                    "teacher_intent": act.intent, "teaching_strategy": act.strategy,
                    "discipline": list(act.disciplines), "discipline_transfer": act.discipline_transfer,
                    "teacher_guidance_level": act.guidance_level,
                    "target_kc": act.target_kc, "addresses_misconception": act.addresses_misconception,
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


def _scored(records: Sequence[dict], field: str) -> list[dict]:
    """The records a field is scored on: its speakers' turns that carry the field (content fields are optional)."""
    speakers = ALL_FIELDS[field][0]
    return [r for r in records if r["speaker"] in speakers and field in r]


def majority_label(records: Sequence[dict], field: str) -> tuple[Any, float] | None:
    """The field's most frequent gold label (ties: the first in label order) and its share: the majority baseline.

    ``None`` when no record carries the field.

    Example::

        majority_label(load_gold(), "teacher_intent")  # ("guide_reasoning", 0.5...)
    """
    scored = _scored(records, field)
    if not scored:
        return None
    counts = Counter(label(field, r[field]) for r in scored)
    top = max(counts.values())
    chosen = min(lab for lab, c in counts.items() if c == top)
    return next(r[field] for r in scored if label(field, r[field]) == chosen), top / len(scored)


def majority_annotations(records: Sequence[dict]) -> dict[Key, dict]:
    """Every turn gets each field's most frequent gold label (ties: the first in label order): the κ = 0 floor."""
    most = {f: m[0] for f in ALL_FIELDS if (m := majority_label(records, f)) is not None}
    return {(r["dialogue_id"], r["turn_index"]): {f: v for f, v in most.items() if r["speaker"] in ALL_FIELDS[f][0]}
            for r in records}


def file_annotations(path: str | Path) -> dict[Key, dict]:
    """Predictions read from a JSONL file: ``{"dialogue_id", "turn_index", <label fields>...}`` per line."""
    path = Path(path)
    out: dict[Key, dict] = {}

    def bad(n: int, exc: Exception) -> str:
        return f"{path}:{n}: each line must be a JSON object with dialogue_id and turn_index ({exc})"

    for n, rec in jsonl_file_values(path, "predictions file", bad):
        try:
            key = (str(rec["dialogue_id"]), int(rec["turn_index"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(bad(n, exc)) from exc
        out[key] = {f: rec[f] for f in ALL_FIELDS if f in rec}
    return out


ANNOTATORS: dict[str, Callable[[Sequence[dict]], dict[Key, dict]]] = {
    "rule": rule_annotations,
    "majority": majority_annotations,
}


def agreement(annotator_name: str = "rule", path: str | Path = GOLD_PATH) -> dict:
    """Accuracy and Cohen's κ per field of one annotator against the gold set at ``path``, with the baseline.

    ``annotator_name`` is ``rule``, ``majority``, ``llm:<backend spec>`` (the LLM annotator of
    :mod:`tutorzoo.agents.annotate_llm` over that backend) or a path to a JSONL predictions file. A field is scored on
    the
    turns it applies to that carry it (tutor fields on tutor turns; ``target_kc`` and
    ``addresses_misconception`` on the content records); a turn the annotator did not label counts as a
    disagreement. ``baseline`` is the accuracy of always answering the field's majority gold label
    (``majority_label``) and ``below_baseline`` says the accuracy is not above it. Returns ``{"annotator",
    "gold", "turns": {"tutor", "student"}, "fields": {field: {"n", "accuracy", "kappa", "p_o", "p_e", "note",
    "majority_label", "baseline", "below_baseline", "confusions"}}, "by_variant": {variant: {"n", field:
    accuracy}}}``; ``kappa`` is ``None`` (with a ``note``) when undefined; a field no record carries has ``n`` 0
    and ``None`` scores.

    Example::

        agreement("rule")["fields"]["target_kc"]["below_baseline"]
    """
    records = load_gold(path)
    if annotator_name in ANNOTATORS:
        predictions = ANNOTATORS[annotator_name](records)
    elif annotator_name.startswith("llm:"):  # llm:<backend spec>, e.g. llm:openai:gpt-4o-mini
        from tutorzoo.agents.annotate_llm import predictions_for_gold

        preds = predictions_for_gold(records, annotator_name.removeprefix("llm:"))
        predictions = {(p["dialogue_id"], p["turn_index"]): p for p in preds}
    elif Path(annotator_name).suffix == ".jsonl":
        predictions = file_annotations(annotator_name)
    else:
        raise ConfigError(f"unknown annotator {annotator_name!r}; use one of {sorted(ANNOTATORS)}, "
                          "'llm:<backend>' (e.g. llm:openai:gpt-4o-mini) or a path to a .jsonl file of predictions")
    fields: dict[str, dict] = {}
    for field in ALL_FIELDS:
        scored = _scored(records, field)
        if not scored:
            fields[field] = {"n": 0, "accuracy": None, "kappa": None, "p_o": None, "p_e": None,
                             "note": "no gold record carries this field", "majority_label": None, "baseline": None,
                             "below_baseline": None, "confusions": []}
            continue
        gold = [label(field, r[field]) for r in scored]
        pred = [_predicted(predictions, r, field) for r in scored]
        kappa, p_o, p_e = cohen_kappa(gold, pred)
        majority = majority_label(records, field)
        assert majority is not None  # scored is not empty
        confusions = Counter((g, p) for g, p in zip(gold, pred, strict=True) if g != p)
        fields[field] = {
            "n": len(scored),
            "accuracy": p_o,
            "kappa": kappa,
            "p_o": p_o,
            "p_e": p_e,
            "note": "kappa undefined: both sides use a single label (p_e = 1)" if kappa is None else None,
            "majority_label": label(field, majority[0]),
            "baseline": majority[1],
            "below_baseline": p_o <= majority[1],
            "confusions": [[g, p, c] for (g, p), c in sorted(confusions.items(), key=lambda kv: (-kv[1], kv[0]))[:5]],
        }
    by_variant: dict[str, dict] = {}
    for variant in VARIANTS:
        recs = [r for r in records if r.get("variant") == variant and r["speaker"] == "tutor"]
        if recs:
            by_variant[variant] = {"n": len(recs), **{
                f: sum(_predicted(predictions, r, f) == label(f, r[f]) for r in recs) / len(recs)
                for f in (*CONTENT_FIELDS, "teacher_intent", "teaching_strategy", "teacher_guidance_level")}}
    speakers = Counter(r["speaker"] for r in records)
    return {"annotator": annotator_name, "gold": str(path),
            "turns": {s: speakers.get(s, 0) for s in SPEAKERS}, "fields": fields, "by_variant": by_variant}


def _predicted(predictions: dict[Key, dict], rec: dict, field: str) -> str:
    labels = predictions.get((rec["dialogue_id"], rec["turn_index"]), {})
    return label(field, labels[field]) if field in labels else "<missing>"


_SHORT = {"target_kc": "kc", "addresses_misconception": "misconc.", "teacher_intent": "intent",
          "teaching_strategy": "strategy", "teacher_guidance_level": "level"}


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tutorzoo.eval.agreement [--annotator NAME ...] [--gold FILE] [--json]``: the agreement table.

    Beside each field: its majority-class baseline (label and share). An accuracy not above the baseline is
    marked ``!`` and listed under the table; the ``majority`` annotator is the baseline itself and is never
    flagged. Exit code 0 (the flags are information, not a failure).
    """
    parser = argparse.ArgumentParser(prog="tutorzoo agreement",
                                     description="Accuracy and Cohen's kappa per SID field against the gold set, "
                                                 "beside the majority-class baseline.")
    parser.add_argument("--annotator", action="append", default=None,
                        help="rule, majority or a predictions .jsonl (repeatable; default: rule and majority)")
    parser.add_argument("--gold", default=str(GOLD_PATH), help="gold annotations JSONL (default: the shipped set)")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON instead of a table")
    parser.add_argument("--reader", action="append", default=None,
                        help="score content readers instead of annotators: rule, llm:<backend> or hf:<path> "
                             "(repeatable; the rule reader is always scored beside a model reader)")
    parser.add_argument("--reader-gold", default=None,
                        help="labelled tutor turns for --reader (default: eval/data/reader_gold.jsonl)")
    args = parser.parse_args(argv)
    if args.reader:
        return _readers_main(args.reader, args.reader_gold, args.json)
    names = args.annotator or ["rule", "majority"]
    reports = [agreement(name, args.gold) for name in names]
    if args.json:
        print(json.dumps(reports, indent=2))
        return 0

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    turns = reports[0]["turns"]
    table = Table(title=f"Annotator agreement with {Path(args.gold).name} "
                        f"({turns['tutor']} tutor, {turns['student']} student turns)",
                  caption="! = accuracy not above the majority baseline")
    table.add_column("field", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("majority baseline", justify="right")  # its label is in --json
    for name in names:
        table.add_column(f"{escape(name)} acc", justify="right")
        table.add_column(f"{escape(name)} κ", justify="right")
    flagged: list[str] = []
    for field in ALL_FIELDS:
        base = reports[0]["fields"][field]
        row = [field, str(base["n"]), _score(base["baseline"])]
        for name, rep in zip(names, reports, strict=True):
            f = rep["fields"][field]
            flag = bool(f["below_baseline"]) and name != "majority"
            if flag:
                flagged.append(f"{name} {field} {f['accuracy']:.3f} <= {f['baseline']:.3f}")
            kappa = "undefined" if f["kappa"] is None and f["n"] else _score(f["kappa"])
            row += [_score(f["accuracy"]) + (" !" if flag else ""), kappa]
        table.add_row(*row)
    console = Console()
    console.print(table)
    for rep in reports:
        if rep["by_variant"] and rep["annotator"] != "majority":
            vt = Table(title=f"{escape(rep['annotator'])}: accuracy by how the content records were written")
            vt.add_column("variant", no_wrap=True)
            vt.add_column("n", justify="right")
            cols = [c for c in next(iter(rep["by_variant"].values())) if c != "n"]
            for c in cols:
                vt.add_column(_SHORT.get(c, c), justify="right")
            for variant, v in rep["by_variant"].items():
                vt.add_row(variant, str(v["n"]), *(f"{v[c]:.2f}" for c in cols))
            console.print(vt)
    # Plain lines, so the flags survive any terminal width and are easy to grep.
    print("below the majority baseline: " + ("; ".join(flagged) if flagged else "none"))
    return 0


def _readers_main(specs: list[str], gold: str | None, as_json: bool) -> int:
    """``--reader``: the content readers' agreement with the reader gold set (:mod:`tutorzoo.eval.reader_agreement`)."""
    from tutorzoo.eval.reader_agreement import READER_GOLD_PATH, print_reports, reader_agreement

    names = list(dict.fromkeys(["rule", *specs]))
    reports = [reader_agreement(name, gold or READER_GOLD_PATH) for name in names]
    if as_json:
        print(json.dumps(reports, indent=2))
    else:
        print_reports(reports)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
