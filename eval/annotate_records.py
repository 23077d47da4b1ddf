"""SID labels for dialogues that have none (peers' data, plain chats), for ``tutorzoo score --annotator``.

Annotators:

- ``none`` (the default): nothing is labelled, and the scorer reports the SID metrics of unlabelled dialogues
  as not computed (``null`` with a reason), never as zeros;
- ``rule``: TutorZoo's rule-based annotators (:mod:`tutorzoo.envs.annotate` for tutor turns,
:mod:`tutorzoo.envs.annotate_student`
  for student turns), run over each dialogue in order with the env's context, as :mod:`tutorzoo.eval.agreement` runs
  them;
- ``llm:<backend>:<model>`` (e.g. ``llm:openai:gpt-4o-mini``): :class:`tutorzoo.agents.annotate_llm.LLMAnnotator`; a
turn
  whose reply is unusable keeps no labels and is counted in the summary.

Both need a task (its vocabulary, its answer): a peer's dialogue gets a one-item task from the problem text the
converter kept (``task_text``: question, answer, category, options; see :func:`tutorzoo.envs.tasks.mcq.task_from_text`).
Labels the rule annotators give peers' dialogues are TutorZoo's reading of them, not the peers' annotation:
``metrics.json`` names the annotator beside the numbers.

Example::

    from tutorzoo.eval.annotate_records import annotate_records
    labelled, summary = annotate_records(records, "rule")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tutorzoo.envs.annotate import AnnotationContext, Annotator
from tutorzoo.envs.annotate_student import StudentAnnotator, StudentContext
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.tasks.base import Task
from tutorzoo.envs.tasks.mcq import task_from_text

DEFAULT_ANNOTATOR = "none"
_TUTOR_FIELDS = ("teacher_intent", "teaching_strategy", "teacher_guidance_level")
_STUDENT_FIELDS = ("student_cognition_state", "cognitive_level")


def check_annotator(spec: str) -> str:
    """``spec`` if it names an annotator, else a :class:`ConfigError` that lists the choices."""
    if spec in ("none", "rule") or (spec.startswith("llm:") and spec.count(":") >= 2):
        return spec
    raise ConfigError(f"unknown annotator {spec!r}; use none, rule or llm:<backend>:<model> "
                      "(e.g. llm:openai:gpt-4o-mini)")


def _turns_key(record: Mapping) -> str:
    return "transcript" if "transcript" in record else "turns"


def record_task(record: Mapping, fallback_id: str) -> Task:
    """The task the annotators read for one converted record (see the module docstring)."""
    hint = record.get("task_text") if isinstance(record.get("task_text"), Mapping) else {}
    options = hint.get("options")
    return task_from_text(
        str(record.get("dialogue_id") or fallback_id),
        str(hint.get("question") or "(a tutoring dialogue)"),
        hint.get("answer") if isinstance(hint.get("answer"), str) else None,
        str(hint.get("category") or "other"),
        [str(o) for o in options] if isinstance(options, list) else None,
    )


def _transfer(disciplines: Sequence[str], previous: Sequence[str]) -> bool:
    if not previous:  # the first turn brings nothing in relative to nothing
        return len(disciplines) >= 2
    return len(disciplines) >= 2 or any(d not in previous for d in disciplines)


def rule_label(turns: Sequence[Mapping], task: Task) -> list[dict]:
    """Copies of ``turns`` (``speaker``, ``utterance``) with the rule annotators' SID labels, in order."""
    tutor, student = Annotator.for_task(task), StudentAnnotator(task)
    ctx = AnnotationContext(focus_kc=task.knowledge_components[0].id)
    previous_text = ""
    out = []
    for raw in turns:
        turn = dict(raw)
        text = str(turn.get("utterance") or "")
        if turn.get("speaker") == "tutor":
            act = tutor.annotate(text, ctx)
            turn.update(teacher_intent=act.intent, teaching_strategy=act.strategy,
                        teacher_guidance_level=act.guidance_level, discipline=list(act.disciplines),
                        discipline_transfer=act.discipline_transfer)
            ctx.after_tutor(act, text)
        else:
            state, level, disciplines = student.annotate(text, StudentContext(previous_text, ctx.previous_disciplines))
            turn.update(student_cognition_state=state, cognitive_level=level, discipline=list(disciplines),
                        discipline_transfer=_transfer(disciplines, ctx.previous_disciplines))
            ctx.after_student(disciplines)
        previous_text = text
        out.append(turn)
    return out


def _llm_labeller(spec: str) -> Any:
    from tutorzoo.agents.annotate_llm import LLMAnnotator
    from tutorzoo.agents.backends import make_backend

    annotator = LLMAnnotator(make_backend(spec.removeprefix("llm:")))

    def label(turns: Sequence[Mapping], task: Task) -> list[dict]:
        usable = [dict(t, utterance=str(t.get("utterance") or "").strip() or "(empty)") for t in turns]
        labelled = annotator.annotate_turns(usable, task)
        return [{**dict(orig), **{k: v for k, v in new.items() if k != "utterance"}}
                for orig, new in zip(turns, labelled, strict=True)]

    return label


def annotate_records(records: Sequence[tuple[str, object]], spec: str,
                     only: set[str] | None = None) -> tuple[list[tuple[str, object]], dict]:
    """``records`` with the turns of those at locations in ``only`` (default: all) labelled by ``spec``.

    Returns the records and a summary ``{"annotator", "dialogues", "turns", "failed_turns"}``.
    """
    check_annotator(spec)
    summary = {"annotator": spec, "dialogues": 0, "turns": 0, "failed_turns": 0}
    if spec == "none":
        return list(records), summary
    label = rule_label if spec == "rule" else _llm_labeller(spec)
    out: list[tuple[str, object]] = []
    for location, record in records:
        if (only is not None and location not in only) or not isinstance(record, Mapping):
            out.append((location, record))
            continue
        key = _turns_key(record)
        turns = record.get(key)
        if not isinstance(turns, list) or not all(isinstance(t, Mapping) for t in turns):
            out.append((location, record))  # malformed: the scorer says why
            continue
        labelled = label(turns, record_task(record, location))
        summary["dialogues"] += 1
        summary["turns"] += len(labelled)
        summary["failed_turns"] += sum(1 for t in labelled if t.get("annotation_error"))
        out.append((location, {**record, key: labelled}))
    return out, summary
