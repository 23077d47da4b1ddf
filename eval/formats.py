"""What ``tutorzoo score`` reads: the file's format is detected, and peers' data are turned into scorable records.

Detected formats (``data_format`` in ``metrics.json``) and the metrics each supports:

====================  ==============================================================  ============================
format                how it is recognised                                            metrics
====================  ==============================================================  ============================
``episodes``          records with ``transcript`` (TutorZoo's ``episodes.jsonl``)      all that the record carries
``sid_dialogues``     records with ``turns`` (SID-style annotated dialogues)           SID; others if flagged
``chat``              records with ``messages`` (user = student, assistant = tutor)    SID after annotation
``mathdial``          MathDial ``.csv`` / ``.jsonl`` / ``.json`` (``conversation``     Success@k, Telling@k; SID
                      with ``|EOM|``); extra ``<EOM>`` columns = generated dialogues   after annotation
``mrbench``           MRBench / BEA 2025 JSON array (``conversation_history``)         DAMR per tutor
``educationq_log``    EducationQ interaction results (``{teacher: {config,            ACC, ALG, PNIR, CSS, UIC on
                      student: {config, item: {pre_test, interaction, post_test}}}}``) the same item (``*_same``)
====================  ==============================================================  ============================

Converted records are ordinary scorer records (``turns``, ``pretest``/``posttest`` item results) with every
field of the source kept under ``meta``; peers' turns carry no SID labels, which the scorer reports as not
computed unless an annotator labels them (:mod:`tutorzoo.eval.annotate_records`).

Example::

    from tutorzoo.eval.formats import read_scorable
    loaded = read_scorable(Path("mathdial/data/test.csv"))
    loaded.data_format, len(loaded.records)   # ('mathdial', 599)
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutorzoo.envs.errors import DatasetError
from tutorzoo.eval.metrics.mathdial import answer_flags, mathdial_answer
from tutorzoo.eval.references import (
    EOM,
    MRBENCH_DIMENSIONS,
    load_mathdial,
    load_mrbench,
    parse_mathdial_conversation,
)

DATA_FORMATS: tuple[str, ...] = ("episodes", "sid_dialogues", "chat", "mathdial", "mrbench", "educationq_log")
# The group name of MathDial's own (human) teachers; a generated column is grouped under its column name.
MATHDIAL_HUMAN = "mathdial_human"
GENERATED_EOM = "<EOM>"
# Fields of a turn that carry SID labels: a dialogue none of whose turns has one is unlabelled.
SID_LABEL_FIELDS: tuple[str, ...] = ("teacher_intent", "teaching_strategy", "teacher_guidance_level",
                                     "student_cognition_state", "cognitive_level")
_CHAT_ROLES = {"user": "student", "assistant": "tutor"}


@dataclass
class Loaded:
    """Records ready for :func:`tutorzoo.eval.metrics.suite.parse_episode`, in file order, with what was skipped."""

    container: str  # jsonl, json_array, json_object or csv
    data_format: str
    records: list[tuple[str, object]]
    skipped: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------- reading


def _read_json(path: Path) -> tuple[str, list[tuple[str, object]], list[dict]]:
    """(container, [(location, parsed JSON)], [skipped lines]) of a JSON, JSONL or pretty-printed JSON file."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file; give the episodes.jsonl a rollout wrote") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg}); a file that starts "
                "with '[' must be one JSON array of records"
            ) from None
        return "json_array", [(f"element {i}", item) for i, item in enumerate(data)], []
    if not stripped.startswith("{"):
        raise DatasetError(
            f"{path}: unknown format; expected JSONL (one JSON object per line, e.g. an episodes.jsonl), a JSON "
            "array of records (SID dialogues, chats, MathDial, MRBench), an EducationQ interaction log, or a "
            "MathDial .csv"
        )
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip())
    try:
        json.loads(lines[first])
    except json.JSONDecodeError:
        # Not JSONL after all: maybe one pretty-printed record (or an EducationQ log).
        try:
            return "json_object", [("line 1", json.loads(text))], []
        except json.JSONDecodeError:
            pass
    records: list[tuple[str, object]] = []
    skipped: list[dict] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            skipped.append({
                "location": f"line {number}",
                "error": f"{path.name} line {number}: not valid JSON ({exc.msg} at column {exc.colno}); "
                "each line must be one complete JSON object",
            })
    return "jsonl", records, skipped


def _csv_header(path: Path) -> list[str]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            return next(csv.reader(fh), [])
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file; give the path of a local file to score") from None


# --------------------------------------------------------------------------------------------- detection


def is_educationq_log(obj: object) -> bool:
    """An EducationQ interaction-results object: ``{teacher: {"config": ..., student: {"config": ..., item: {
    "pre_test", "interaction", "post_test"}}}}``."""
    if not isinstance(obj, Mapping) or not obj:
        return False
    for teacher in obj.values():
        if not isinstance(teacher, Mapping) or "config" not in teacher:
            return False
        for name, student in teacher.items():
            if name == "config":
                continue
            if not isinstance(student, Mapping):
                return False
            items = [v for k, v in student.items() if k != "config"]
            if not items or not all(isinstance(v, Mapping) and "pre_test" in v and "post_test" in v for v in items):
                return False
    return True


def detect(first: object) -> str:
    """The data format of a file from its first record (a parsed JSON value)."""
    if not isinstance(first, Mapping):
        return "episodes"  # the scorer reports the record as malformed
    if is_educationq_log(first):
        return "educationq_log"
    if "conversation_history" in first:
        return "mrbench"
    conversation = first.get("conversation")
    if isinstance(conversation, str) and (EOM in conversation or "ground_truth" in first):
        return "mathdial"
    if "messages" in first and "transcript" not in first and "turns" not in first:
        return "chat"
    if "turns" in first and "transcript" not in first:
        return "sid_dialogues"
    return "episodes"


def read_scorable(path: Path) -> Loaded:
    """Read ``path``, detect its format and convert peers' records into scorer records."""
    if path.suffix.lower() == ".csv":
        header = _csv_header(path)
        if "conversation" not in header:
            raise DatasetError(f"{path}: unknown format; the only CSV the scorer reads is MathDial's (a "
                               f"'conversation' column of turns joined by {EOM!r}), got columns {header[:8]}")
        return Loaded("csv", "mathdial", *_mathdial(path))
    container, raw, skipped = _read_json(path)
    if not raw:
        return Loaded(container, "episodes", [], skipped)
    fmt = detect(raw[0][1])
    if fmt == "educationq_log":
        records, notes = _educationq_log(raw[0][1], path)
        return Loaded(container, fmt, records, skipped, notes)
    if fmt == "mathdial":
        return Loaded(container, fmt, *_mathdial(path))
    if fmt == "mrbench":
        return Loaded(container, fmt, *_mrbench(path))
    if fmt == "chat":
        converted: list[tuple[str, object]] = []
        for location, record in raw:
            try:
                converted.append((location, chat_record(record, f"{path.name} {location}")))
            except DatasetError as exc:
                skipped.append({"location": location, "error": str(exc)})
        return Loaded(container, fmt, converted, skipped)
    return Loaded(container, fmt, raw, skipped)


# --------------------------------------------------------------------------------------------- labels


def is_labelled(record: Mapping) -> bool:
    """Whether any turn of a record carries a SID label (a dialogue none of whose turns does is unlabelled)."""
    turns = record.get("transcript", record.get("turns"))
    if not isinstance(turns, list):
        return True  # malformed: let the scorer say why
    for turn in turns:
        if isinstance(turn, Mapping) and any(turn.get(f) not in (None, "") for f in SID_LABEL_FIELDS):
            return True
    return False


# --------------------------------------------------------------------------------------------- chat


def chat_record(record: object, where: str) -> dict:
    """A ``{"messages": [{role, content}]}`` record as a dialogue: user -> student, assistant -> tutor; system
    messages and every other field are kept in ``meta``."""
    if not isinstance(record, Mapping):
        raise DatasetError(f"{where}: expected a JSON object with 'messages', got {type(record).__name__}")
    messages = record.get("messages")
    if not isinstance(messages, list):
        raise DatasetError(f"{where}: 'messages' must be a list of {{role, content}} objects")
    turns, system = [], []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str):
            raise DatasetError(f"{where}: messages[{i}] must be an object with a string 'role'")
        content = m.get("content")
        if not isinstance(content, str):
            raise DatasetError(f"{where}: messages[{i}] 'content' must be a string (text chats only)")
        role = m["role"].strip().lower()
        if role == "system":
            system.append(content)
        elif role in _CHAT_ROLES:
            turns.append({"speaker": _CHAT_ROLES[role], "utterance": content})
        else:
            raise DatasetError(f"{where}: messages[{i}] has role {m['role']!r}; a chat to score uses user (the "
                               "student), assistant (the tutor) and system")
    out: dict[str, Any] = {"turns": turns, "meta": {k: v for k, v in record.items() if k != "messages"}}
    if system:
        out["meta"]["system"] = system
    for key in ("tutor", "student", "dialogue_id"):
        if key in record:
            out[key] = record[key]
    if "tutor" not in out and isinstance(record.get("model"), str):
        out["tutor"] = record["model"]
    first_user = next((t["utterance"] for t in turns if t["speaker"] == "student"), "")
    out["task_text"] = {"question": first_user or "(chat)", "answer": str(record.get("answer", "")) or None}
    return out


# --------------------------------------------------------------------------------------------- MathDial


def _generated_turns(text: str) -> tuple[list[dict], int]:
    """Turns of a generated ``Teacher: ...<EOM>Student: ...`` dialogue, and how many chunks had no label
    (MathDial's evaluation skips those too)."""
    turns, unlabelled = [], 0
    for chunk in text.split(GENERATED_EOM):
        chunk = chunk.strip()
        if not chunk:
            continue
        try:
            (turn,) = parse_mathdial_conversation(chunk)
        except DatasetError:
            unlabelled += 1
            continue
        turns.append({"speaker": turn.speaker, "utterance": turn.text, **({"move": turn.move} if turn.move else {})})
    return turns, unlabelled


def _mathdial(path: Path) -> tuple[list[tuple[str, object]], list[dict], list[str]]:
    dialogues = load_mathdial(path)
    records: list[tuple[str, object]] = []
    notes: list[str] = []
    no_answer = unlabelled_chunks = 0
    for index, d in enumerate(dialogues):
        meta = {**d.meta, "question": d.question, "ground_truth": d.ground_truth,
                "student_incorrect_solution": d.student_incorrect_solution}
        meta = {k: v for k, v in meta.items() if v is not None}
        answer = mathdial_answer(d.ground_truth) if d.ground_truth else None
        no_answer += answer is None
        human = [{"speaker": t.speaker, "utterance": t.text, **({"move": t.move} if t.move else {})} for t in d.turns]
        dialogues_of_row = [(MATHDIAL_HUMAN, human)]
        for key, value in d.meta.items():
            if isinstance(value, str) and GENERATED_EOM in value:
                turns, bad = _generated_turns(value)
                unlabelled_chunks += bad
                dialogues_of_row.append((key, turns))
        for tutor, turns in dialogues_of_row:
            if answer is not None:
                turns = answer_flags(turns, answer)
            records.append((f"record {index}" + ("" if tutor == MATHDIAL_HUMAN else f" ({tutor})"), {
                "dialogue_id": d.id, "tutor": tutor, "turns": turns, "answer": answer,
                "meta": {k: v for k, v in meta.items() if not (isinstance(v, str) and GENERATED_EOM in v)},
                "task_text": {"question": d.question or "(MathDial problem)", "answer": answer, "category": "math"},
            }))
    if no_answer:
        notes.append(f"MathDial: {no_answer} dialogue(s) have no ground_truth, so Success@k / Telling@k are not "
                     "computed for them")
    if unlabelled_chunks:
        notes.append(f"MathDial: {unlabelled_chunks} generated chunk(s) had no 'Teacher:'/'Student:' label and were "
                     "left out, as MathDial's evaluate.py leaves them out")
    return records, [], notes


# --------------------------------------------------------------------------------------------- MRBench


def _mrbench(path: Path) -> tuple[list[tuple[str, object]], list[dict], list[str]]:
    known = set(MRBENCH_DIMENSIONS)
    records: list[tuple[str, object]] = []
    for index, c in enumerate(load_mrbench(path)):
        history = [{"speaker": t.speaker, "utterance": t.text} for t in c.turns]
        meta = {"conversation_history": c.history, "Data": c.data, "Split": c.split, "Topic": c.topic,
                "Ground_Truth_Solution": c.ground_truth_solution}
        meta = {k: v for k, v in meta.items() if v is not None}
        for r in c.responses:
            labels = {k: v for k, v in r.annotation.items() if k in known}
            other = {k: v for k, v in r.annotation.items() if k not in known}
            response = {"speaker": "tutor", "utterance": r.response, "mrbench": labels or None}
            records.append((f"element {index} ({r.tutor})", {
                "dialogue_id": c.id, "tutor": r.tutor, "turns": [*history, response],
                "meta": {**meta, **({"other_annotation": other} if other else {})},
                "task_text": {"question": c.history[:500] or "(MRBench dialogue)", "answer": None, "category": "math"},
            }))
    return records, [], []


# --------------------------------------------------------------------------------------------- EducationQ


def _correct(response: Mapping) -> bool:
    """EducationQ's scoring: the extracted letter equals the key; an invalid (missing) prediction is wrong."""
    prediction, key = response.get("model_prediction"), response.get("correct_answer")
    return isinstance(prediction, str) and isinstance(key, str) and prediction.strip().upper() == key.strip().upper()


def _test_response(item: Mapping, phase: str, where: str) -> Mapping:
    block = item.get(phase)
    responses = block.get("responses") if isinstance(block, Mapping) else None
    if not isinstance(responses, list) or not responses or not isinstance(responses[0], Mapping):
        raise DatasetError(f"{where}: '{phase}.responses' must be a non-empty list of answers")
    return responses[0]


def _educationq_log(obj: Mapping, path: Path) -> tuple[list[tuple[str, object]], list[str]]:
    """One record per (teacher, student, item): the pre-test answer, the rounds, the same-item post-test."""
    records: list[tuple[str, object]] = []
    dataset = path.name.split("_Teacher-")[0] if "_Teacher-" in path.name else path.stem
    for teacher_key, teacher in obj.items():
        for student_key, student in teacher.items():
            if student_key == "config":
                continue
            for item_id, item in student.items():
                if item_id == "config":
                    continue
                where = f"{path.name}: {teacher_key} / {student_key} / {item_id}"
                pre = _test_response(item, "pre_test", where)
                post = _test_response(item, "post_test", where)
                subject = item.get("category") or pre.get("category")
                turns = []
                for r, exchange in enumerate(item.get("interaction") or []):
                    if not isinstance(exchange, Mapping):
                        raise DatasetError(f"{where}: interaction[{r}] must be an object {{question, answer}}")
                    turns.append({"speaker": "tutor", "utterance": str(exchange.get("question", ""))})
                    turns.append({"speaker": "student", "utterance": str(exchange.get("answer", ""))})
                options = pre.get("options")
                key = pre.get("correct_answer_index")
                answer = (options[key] if isinstance(options, list) and isinstance(key, int)
                          and 0 <= key < len(options) else None)
                records.append((where, {
                    "tutor": teacher_key.removeprefix("Teacher-"),
                    "student": student_key.removeprefix("Student-"),
                    "dialogue_id": item_id,
                    "spec": {"task_set": f"educationq:{dataset}", "task_id": item_id,
                             "persona": student_key, "seed": 0},
                    "pretest": [{"item_id": item_id, "correct": _correct(pre), "subject": subject}],
                    "posttest": [{"item_id": item_id, "kind": "same", "correct": _correct(post), "subject": subject}],
                    "transcript": turns,
                    "meta": {"item": dict(item), "teacher_config": teacher.get("config"),
                             "student_config": student.get("config")},
                    "task_text": {"question": str(pre.get("question", "")) or item_id, "answer": answer,
                                  "options": options, "category": subject or "other"},
                }))
    notes = ["EducationQ logs: the post-test is the pre-test item itself, so every gain is same-item (ACC_*_same, "
             "ALG_same, PNIR_same, CSS_same, UIC_same); the isomorphic metrics are not computed"]
    return records, notes
