"""An LLM annotator: labels dialogue turns with the SID schema (docs/spec.md §1) through any :class:`ChatBackend`.

Each turn is one request: the system prompt ``prompts/annotate.txt`` (every label set with its definition) and a
user message from ``prompts/annotate_tutor.txt`` or ``prompts/annotate_student.txt`` (the lesson, the dialogue
so far, the turn to label) that asks for one strict JSON object. Every label in the reply is checked against
:mod:`tutorzoo.envs.labels`. A reply that is not that JSON object, lacks a field or uses an unknown label is a recorded
failure of that turn: its label fields are None and ``annotation_error`` says what was wrong — never a silent
default. ``discipline_transfer`` is not asked for: SPEC §1 defines it from the discipline labels, so it is
computed from them (true when the turn has two or more disciplines or one the previous labelled turn lacked).

With ``samples > 1`` each turn is asked ``samples`` times (seeds 0, 1, ...) and each field takes the majority
label over the valid replies (ties: the label of the earliest sample); a turn fails only when no reply is valid.

Example::

    annotator = LLMAnnotator(make_backend("openai:gpt-4o-mini"))
    labelled = annotator.annotate_turns(record["transcript"], task)
    annotation_summary(labelled)   # {"turns": 12, "failed": 0, "failure_rate": 0.0, "errors": {}}
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import Any

import numpy as np

from tutorzoo.agents.backends.base import ChatBackend, GenerationConfig, GenerationResult
from tutorzoo.agents.json_reply import JSONReplyError, parse_json_object
from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.labels import (
    BLOOM_LEVELS,
    COGNITION_STATES,
    DISCIPLINES,
    GUIDANCE_LEVELS,
    INTENTS,
    SPEAKERS,
    STRATEGIES,
)
from tutorzoo.envs.tasks import Task, get_task_set

log = logging.getLogger(__name__)

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
SYSTEM_PROMPT = "annotate.txt"
TURN_PROMPTS = {"tutor": "annotate_tutor.txt", "student": "annotate_student.txt"}
LABEL_FIELDS: tuple[str, ...] = (
    "teacher_intent", "teaching_strategy", "discipline", "discipline_transfer",
    "student_cognition_state", "teacher_guidance_level", "cognitive_level",
)
# the fields the model is asked for, per speaker, with the labels each may take (discipline: checked apart)
ASKED: dict[str, dict[str, tuple[Any, ...] | None]] = {
    "tutor": {"teacher_intent": INTENTS, "teaching_strategy": (*STRATEGIES, None),
              "teacher_guidance_level": GUIDANCE_LEVELS, "discipline": None},
    "student": {"student_cognition_state": COGNITION_STATES, "cognitive_level": BLOOM_LEVELS, "discipline": None},
}
HISTORY_TURNS = 8  # earlier turns shown as context; older ones rarely change a label and cost tokens


class AnnotationError(ValueError):
    """A model reply that is not a valid annotation; the message names the field and the offending value."""


def parse_reply(text: str, speaker: str) -> dict[str, Any]:
    """The labels of one reply for a ``speaker`` turn, or :class:`AnnotationError` saying what is wrong.

    Example::

        >>> parse_reply('{"student_cognition_state": "incorrect", "cognitive_level": "apply", '
        ...             '"discipline": ["math"]}', "student")["cognitive_level"]
        'apply'
    """
    try:
        data = parse_json_object(text)
    except JSONReplyError as exc:
        raise AnnotationError(str(exc)) from None
    labels: dict[str, Any] = {}
    for field, allowed in ASKED[speaker].items():
        if field not in data:
            raise AnnotationError(f"missing field: {field} (a {speaker} turn needs {list(ASKED[speaker])})")
        value = data[field]
        if field == "discipline":
            if not (isinstance(value, list) and value and all(isinstance(d, str) for d in value)):
                raise AnnotationError(f"invalid label: discipline must be a non-empty list of labels, got {value!r}")
            names = [d.strip().lower() for d in value]
            bad = [d for d in names if d not in DISCIPLINES]
            if bad:
                raise AnnotationError(f"invalid label: discipline {bad} not in {list(DISCIPLINES)}")
            labels[field] = sorted(set(names), key=DISCIPLINES.index)
            continue
        if isinstance(value, str):
            value = value.strip().upper() if field == "teacher_guidance_level" else value.strip().lower()
        assert allowed is not None
        if value not in allowed:
            raise AnnotationError(f"invalid label: {field} {data[field]!r} not in {list(allowed)}")
        labels[field] = value
    return labels


def _transfer(disciplines: Sequence[str], previous: Sequence[str] | None) -> bool:
    if previous is None:  # the first turn brings nothing in relative to nothing
        return len(disciplines) >= 2
    return len(disciplines) >= 2 or any(d not in previous for d in disciplines)


def _vote(samples: list[dict[str, Any]], field: str) -> Any:
    keys = [json.dumps(s[field]) for s in samples]
    counts = Counter(keys)
    top = max(counts.values())
    winner = next(k for k in keys if counts[k] == top)  # ties: the earliest sample's label
    return json.loads(winner)


class LLMAnnotator:
    """Labels turns through ``backend``; ``samples`` replies per turn, majority-voted, at ``temperature``."""

    def __init__(self, backend: ChatBackend, samples: int = 1, temperature: float = 0.0,
                 max_new_tokens: int = 200) -> None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        self.backend = backend
        self.samples = samples
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        self.system_prompt = (PROMPT_DIR / SYSTEM_PROMPT).read_text(encoding="utf-8")
        self.templates = {s: Template((PROMPT_DIR / f).read_text(encoding="utf-8")) for s, f in TURN_PROMPTS.items()}

    def conversations(self, turns: Sequence[dict], task: Task) -> list[list[dict]]:
        """The request of every turn (one per turn, in order); ``turns`` are checked first."""
        for i, turn in enumerate(turns):
            if not isinstance(turn, dict) or turn.get("speaker") not in SPEAKERS:
                raise DatasetError(f"turn {i}: speaker must be one of {SPEAKERS}, got "
                                   f"{turn.get('speaker') if isinstance(turn, dict) else turn!r}")
            if not isinstance(turn.get("utterance"), str) or not turn["utterance"].strip():
                raise DatasetError(f"turn {i}: utterance must be a non-empty text")
        lesson = {
            "title": task.title,
            "statement": task.statement,
            "disciplines": ", ".join(task.disciplines),
            "components": "; ".join(f"{k.name} ({k.discipline})" for k in task.knowledge_components),
        }
        out = []
        for i, turn in enumerate(turns):
            earlier = turns[max(0, i - HISTORY_TURNS):i]
            history = "\n".join(f"{t['speaker']}: {t['utterance']}" for t in earlier) or "(this is the first turn)"
            user = self.templates[turn["speaker"]].substitute(**lesson, history=history, utterance=turn["utterance"])
            out.append([{"role": "system", "content": self.system_prompt}, {"role": "user", "content": user}])
        return out

    def _configs(self) -> list[GenerationConfig]:
        return [GenerationConfig(max_new_tokens=self.max_new_tokens, temperature=self.temperature, seed=s)
                for s in range(self.samples)]

    def request_all(self, conversations: list[list[dict]]) -> list[list[GenerationResult]]:
        """Every conversation sent ``samples`` times (one backend batch per sample seed): ``[turn][sample]``."""
        per_sample = [self.backend.generate(conversations, config) for config in self._configs()]
        return [list(replies) for replies in zip(*per_sample, strict=True)] if conversations else []

    def label(self, turns: Sequence[dict], replies: list[list[GenerationResult]]) -> list[dict]:
        """Turn dicts with the label fields set from ``replies`` (``[turn][sample]``), in dialogue order."""
        out: list[dict] = []
        previous: list[str] | None = None
        for turn, results in zip(turns, replies, strict=True):
            speaker = turn["speaker"]
            valid: list[dict[str, Any]] = []
            errors: list[str] = []
            for r in results:
                if not r.ok:
                    errors.append(f"backend: {r.error}")
                    continue
                try:
                    valid.append(parse_reply(r.text or "", speaker))
                except AnnotationError as exc:
                    errors.append(str(exc))
            labelled = {**turn, **dict.fromkeys(LABEL_FIELDS), "annotation_error": None}
            if not valid:
                labelled["annotation_error"] = errors[0] if len(errors) == 1 else "; ".join(errors)
                out.append(labelled)
                continue
            for field in ASKED[speaker]:
                labelled[field] = _vote(valid, field)
            labelled["discipline_transfer"] = _transfer(labelled["discipline"], previous)
            if errors:
                labelled["annotation_failed_samples"] = len(errors)
            previous = labelled["discipline"]
            out.append(labelled)
        return out

    def annotate_turns(self, dialogue_turns: list[dict], task: Task) -> list[dict]:
        """Label one dialogue's turns (dicts with ``speaker`` and ``utterance``; other keys are kept).

        Returns a copy of every turn with the seven label fields (None where they do not apply or the turn
        failed) and ``annotation_error`` (None, or why the turn has no labels).
        """
        return self.label(dialogue_turns, self.request_all(self.conversations(dialogue_turns, task)))


def annotation_summary(annotated: Sequence[dict]) -> dict[str, Any]:
    """Turns, failed turns, the failure rate and failures by kind (``invalid JSON``, ``invalid label``, ...)."""
    errors = [t["annotation_error"] for t in annotated if t.get("annotation_error")]
    kinds = Counter(e.split(":", 1)[0] for e in errors)
    return {"turns": len(annotated), "failed": len(errors),
            "failure_rate": len(errors) / len(annotated) if annotated else 0.0,
            "errors": dict(sorted(kinds.items()))}


def predictions_for_gold(gold_records: Sequence[dict], backend: ChatBackend | str, samples: int = 1,
                         temperature: float = 0.0) -> list[dict]:
    """LLM labels for every turn of a gold set, in the predictions-file format ``tutorzoo.eval.agreement`` reads.

    ``backend`` is a backend or a spec for :func:`tutorzoo.agents.backends.make_backend` (``"openai:gpt-4o-mini"``; a
    local server via ``$OPENAI_BASE_URL``). All dialogues go to the backend as one batch per sample. A failed
    turn keeps only ``dialogue_id``, ``turn_index`` and ``annotation_error``, so agreement scores it as a miss
    rather than as the label ``null``.

    Example::

        preds = predictions_for_gold(load_gold(), "openai:gpt-4o-mini")
        annotations = {(p["dialogue_id"], p["turn_index"]): p for p in preds}
    """
    if isinstance(backend, str):
        from tutorzoo.agents.backends import make_backend

        backend = make_backend(backend)
    annotator = LLMAnnotator(backend, samples=samples, temperature=temperature)
    dialogues: dict[str, list[dict]] = {}
    for rec in gold_records:
        dialogues.setdefault(rec["dialogue_id"], []).append(rec)
    tasks: dict[tuple, Task] = {}
    spans: list[tuple[list[dict], int, int]] = []
    conversations: list[list[dict]] = []
    for turns in dialogues.values():
        ref = turns[0]["task"]
        key = (ref["task_set"], ref["task_id"], ref["seed"])
        if key not in tasks:
            tasks[key] = get_task_set(ref["task_set"]).build(ref["task_id"], np.random.default_rng(ref["seed"]))
        start = len(conversations)
        conversations += annotator.conversations(turns, tasks[key])
        spans.append((turns, start, len(conversations)))
    replies = annotator.request_all(conversations)
    predictions: list[dict] = []
    for turns, start, end in spans:
        for turn in annotator.label(turns, replies[start:end]):
            pred: dict[str, Any] = {"dialogue_id": turn["dialogue_id"], "turn_index": turn["turn_index"]}
            if turn["annotation_error"] is None:
                pred.update({f: turn[f] for f in LABEL_FIELDS if turn[f] is not None
                             or (f == "teaching_strategy" and turn["speaker"] == "tutor")})
            pred["annotation_error"] = turn["annotation_error"]
            predictions.append(pred)
    summary = annotation_summary([{"annotation_error": p["annotation_error"]} for p in predictions])
    if summary["failed"]:
        log.warning("LLM annotator: %d of %d turns failed %s", summary["failed"], summary["turns"], summary["errors"])
    return predictions
