"""Loaders of reference tutoring dialogues from local files: MathDial and MRBench.

**MathDial** (Macina et al. 2023; ``data/*.jsonl`` / ``*.csv`` of github.com/eth-nlped/mathdial): one record per
dialogue with ``qid, scenario, question, ground_truth, student_incorrect_solution, student_profile,
teacher_described_confusion, self-correctness, self-typical-confusion, self-typical-interactions,
conversation``. ``conversation`` joins the turns with ``|EOM|``; a teacher turn is ``Teacher: (move)text``
with the move one of focus / probing / telling / generic; a student turn is ``Student: text``, and in some
records the student's name stands in for ``Student`` (``Cody: ...``). Speakers are normalised to TutorZoo's
``tutor`` / ``student``. The same ``qid`` recurs (one problem, several teachers), so a dialogue's id is
``{qid}-{k}`` for its k-th occurrence in the file, unless the record has an ``id`` (as :func:`dump_mathdial`
writes). In CSV files every value is a string and an empty cell counts as absent.

**MRBench** (Maurya et al., NAACL 2025; github.com/kaushal0494/UnifyingAITutorEvaluation): a JSON array of
``{conversation_id, conversation_history, Data, Split, Topic, Ground_Truth_Solution, anno_llm_responses:
{tutor: {response, annotation: {Mistake_Identification, Mistake_Location, Revealing_of_the_Answer,
Providing_Guidance, Actionability, Coherence, Tutor_Tone, Humanlikeness}}}}``, as its README documents. The
BEA 2025 shared-task files name the responses ``tutor_responses`` instead: both are read (and written back as
``anno_llm_responses``). Annotation keys are matched case-insensitively to the eight dimensions, since the
released data may spell ``humanlikeness`` in lower case; other keys are kept as they are.

Example::

    from tutorzoo.eval.references import load_mathdial, load_mrbench
    dialogues = load_mathdial("mathdial/data/test.jsonl")
    dialogues[0].turns[0]     # ReferenceTurn(speaker='tutor', text='Hi ...', move='generic')
    conversations = load_mrbench("MRBench_V2.json")
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.jsonl_lines import jsonl_values

EOM = "|EOM|"
MATHDIAL_MOVES: tuple[str, ...] = ("focus", "probing", "telling", "generic")
# Fields MathDial carries that ReferenceDialogue keeps as attributes rather than in ``meta``.
_MATHDIAL_TEXT_FIELDS = ("question", "ground_truth", "student_incorrect_solution")
# Column order of MathDial's CSV release; dumping writes these first, then any other meta keys sorted.
MATHDIAL_COLUMNS: tuple[str, ...] = (
    "qid", "scenario", "question", "ground_truth", "student_incorrect_solution", "student_profile",
    "teacher_described_confusion", "self-correctness", "self-typical-confusion", "self-typical-interactions",
    "conversation",
)

MRBENCH_DIMENSIONS: tuple[str, ...] = (
    "Mistake_Identification",
    "Mistake_Location",
    "Revealing_of_the_Answer",
    "Providing_Guidance",
    "Actionability",
    "Coherence",
    "Tutor_Tone",
    "Humanlikeness",
)
# The label a good tutor response gets on each dimension (docs/spec.md §7); DAMR = share of responses with it.
MRBENCH_DESIRED: dict[str, str] = {
    "Mistake_Identification": "Yes",
    "Mistake_Location": "Yes",
    "Revealing_of_the_Answer": "No",
    "Providing_Guidance": "Yes",
    "Actionability": "Yes",
    "Coherence": "Yes",
    "Tutor_Tone": "Encouraging",
    "Humanlikeness": "Yes",
}
_MRBENCH_CANON = {d.lower(): d for d in MRBENCH_DIMENSIONS}
_MRBENCH_OPTIONAL = (("data", "Data"), ("split", "Split"), ("topic", "Topic"),
                     ("ground_truth_solution", "Ground_Truth_Solution"))

_TEACHER_TURN = re.compile(r"^\((?P<move>[A-Za-z][A-Za-z _-]*)\)\s*(?P<text>.*)$", re.DOTALL)
# A label is Teacher, Student, or a student's name of up to three capitalised words (MathDial uses both).
_LABEL = re.compile(
    r"^\s*(?P<label>[Tt]eacher|[Ss]tudent|[A-Z][A-Za-z'-]*(?: [A-Z][A-Za-z'-]*){0,2})\s*:\s*(?P<body>.*)$",
    re.DOTALL,
)
# MRBench turns start a line (after optional spaces, often U+00A0) with "Tutor:" or "Student:". The labels are
# matched tolerantly: any case, "Teacher" for the tutor, and one-letter typos of the data (BEA 2025's "Turor:").
_MRBENCH_TURN = re.compile(r"(?:^|\n)[ \t\xa0]*([A-Za-z]{4,8})[ \t\xa0]*:")
_MRBENCH_SPEAKERS = {"tutor": "tutor", "teacher": "tutor", "student": "student"}


def _within_one_edit(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by at most one substitution, insertion or deletion."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) <= 1
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def mrbench_speaker(label: str) -> str | None:
    """``tutor`` / ``student`` for an MRBench turn label, tolerating case and one-letter typos; else ``None``.

    Example: ``mrbench_speaker("Turor")`` -> ``"tutor"``; ``mrbench_speaker("Note")`` -> ``None``.
    """
    key = label.strip().lower()
    if key in _MRBENCH_SPEAKERS:
        return _MRBENCH_SPEAKERS[key]
    for name in ("tutor", "student"):
        if len(key) >= 4 and _within_one_edit(key, name):
            return name
    return None


@dataclass(frozen=True)
class ReferenceTurn:
    """One turn of a reference dialogue: ``speaker`` is ``tutor`` or ``student``; ``move`` the tutor's move."""

    speaker: str
    text: str
    move: str | None = None


@dataclass(frozen=True)
class ReferenceDialogue:
    """A reference dialogue with its problem fields (when the source has them) and the rest in ``meta``."""

    id: str
    turns: list[ReferenceTurn]
    meta: dict = field(default_factory=dict)
    question: str | None = None
    ground_truth: str | None = None
    student_incorrect_solution: str | None = None


# --------------------------------------------------------------------------------------------- MathDial


def parse_mathdial_conversation(conversation: str, where: str = "conversation") -> list[ReferenceTurn]:
    """Split a MathDial ``conversation`` string into turns.

    Example::

        parse_mathdial_conversation("Teacher: (probing)Why?|EOM|Student: Because 3 + 4 = 7.")
        # [ReferenceTurn('tutor', 'Why?', 'probing'), ReferenceTurn('student', 'Because 3 + 4 = 7.')]
    """
    turns = []
    for n, chunk in enumerate(conversation.split(EOM)):
        m = _LABEL.match(chunk)
        if m is None:
            raise DatasetError(f"{where}: turn {n} ({chunk.strip()[:40]!r}) has no speaker label; each turn "
                               f"must start with 'Teacher:' or 'Student:' (or the student's name) and turns are "
                               f"separated by {EOM!r}")
        body = m["body"].strip()
        if m["label"].lower() == "teacher":
            tm = _TEACHER_TURN.match(body)
            if tm is not None:
                turns.append(ReferenceTurn("tutor", tm["text"].strip(), tm["move"].strip().lower()))
            else:
                turns.append(ReferenceTurn("tutor", body))
        else:
            turns.append(ReferenceTurn("student", body))
    return turns


def _format_turn(turn: ReferenceTurn, where: str) -> str:
    if EOM in turn.text:
        raise DatasetError(f"{where}: turn text contains the separator {EOM!r}; remove it before dumping")
    if turn.speaker == "tutor":
        if turn.move is None and _TEACHER_TURN.match(turn.text):
            raise DatasetError(f"{where}: tutor text {turn.text[:30]!r} starts with a parenthesised word, which "
                               "would read back as a move; set the move or reword the text")
        return f"Teacher: ({turn.move}){turn.text}" if turn.move else f"Teacher: {turn.text}"
    if turn.speaker == "student":
        return f"Student: {turn.text}"
    raise DatasetError(f"{where}: speaker {turn.speaker!r} must be 'tutor' or 'student'")


def format_mathdial_conversation(turns: Iterable[ReferenceTurn], where: str = "dialogue") -> str:
    """The inverse of :func:`parse_mathdial_conversation` (student name labels become ``Student``)."""
    return EOM.join(_format_turn(t, where) for t in turns)


def _read_mathdial_rows(path: Path) -> list[Any]:
    if not path.is_file():
        raise DatasetError(f"{path}: no such file; give the path of a local MathDial .jsonl, .json or .csv file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as fh:
            # An empty cell is absent, so that a CSV round trip does not invent empty fields.
            return [{k: v for k, v in row.items() if v not in ("", None)} for row in csv.DictReader(fh)]
    text = path.read_text(encoding="utf-8")
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise DatasetError(f"{path}: not valid JSON ({err.msg} at line {err.lineno}); fix the syntax") from err
        if not isinstance(data, list):
            raise DatasetError(f"{path}: expected a JSON array of dialogue records; wrap them in [ ... ]")
        return data
    return [row for _, row in jsonl_values(text, lambda n, err: f"{path}: line {n} is not valid JSON ({err.msg}); "
                                           "each line must hold one MathDial record")]


def load_mathdial(path: str | Path) -> list[ReferenceDialogue]:
    """MathDial dialogues from a local ``.jsonl`` (one record a line), ``.json`` (array) or ``.csv`` file.

    Example::

        dialogues = load_mathdial("mathdial/data/test.jsonl")
        [t.move for t in dialogues[0].turns if t.speaker == "tutor"]
    """
    path = Path(path)
    seen: dict[str, int] = {}
    out = []
    for index, row in enumerate(_read_mathdial_rows(path)):
        if not isinstance(row, dict):
            raise DatasetError(f"{path}: record {index} must be an object, got {type(row).__name__}")
        rid = row.get("id", row.get("qid"))
        where = f"{path}: record {index} (qid {row.get('qid')!r})"
        conversation = row.get("conversation")
        if not isinstance(conversation, str) or not conversation.strip():
            raise DatasetError(f"{where}: missing or empty 'conversation'; a MathDial record needs the dialogue "
                               f"as one string with turns joined by {EOM!r}")
        for key in _MATHDIAL_TEXT_FIELDS:
            if key in row and not isinstance(row[key], str):
                raise DatasetError(f"{where}: field {key!r} must be a string, got {type(row[key]).__name__}")
        if "id" in row:
            did = str(row["id"])
        else:
            base = str(rid) if rid is not None else "mathdial"
            k = seen.get(base, 0)
            seen[base] = k + 1
            did = f"{base}-{k}"
        meta = {k: v for k, v in row.items() if k not in ("id", "conversation", *_MATHDIAL_TEXT_FIELDS)}
        out.append(ReferenceDialogue(
            id=did,
            turns=parse_mathdial_conversation(conversation, where),
            meta=meta,
            question=row.get("question"),
            ground_truth=row.get("ground_truth"),
            student_incorrect_solution=row.get("student_incorrect_solution"),
        ))
    ids = [d.id for d in out]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise DatasetError(f"{path}: dialogue id {dup!r} occurs twice; 'id' values must be unique")
    return out


def _mathdial_record(d: ReferenceDialogue) -> dict:
    rec: dict[str, Any] = {"id": d.id, **d.meta}
    for key in _MATHDIAL_TEXT_FIELDS:
        value = getattr(d, key)
        if value is not None:
            rec[key] = value
    rec["conversation"] = format_mathdial_conversation(d.turns, f"dialogue {d.id!r}")
    return rec


def dump_mathdial(dialogues: Iterable[ReferenceDialogue], path: str | Path) -> None:
    """Write dialogues in MathDial's layout (plus an ``id`` field): ``.csv``, ``.json`` array, else JSONL.

    ``load_mathdial(p)`` after ``dump_mathdial(x, p)`` gives back ``x``; in CSV, meta values come back as
    strings, so a CSV round trip is exact for dialogues that were themselves read from CSV.

    Example::

        dump_mathdial(load_mathdial("test.csv"), "copy.jsonl")
    """
    path = Path(path)
    records = [_mathdial_record(d) for d in dialogues]
    suffix = path.suffix.lower()
    if suffix == ".csv":
        extra = sorted({k for r in records for k in r} - set(MATHDIAL_COLUMNS) - {"id"})
        columns = ["id", *MATHDIAL_COLUMNS[:-1], *extra, "conversation"]
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            for r in records:
                writer.writerow({k: r.get(k, "") for k in columns})
    elif suffix == ".json":
        path.write_text(json.dumps(records, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


# --------------------------------------------------------------------------------------------- MRBench


@dataclass(frozen=True)
class TutorResponse:
    """One candidate tutor response of MRBench with its human annotation (dimension -> label)."""

    tutor: str
    response: str
    annotation: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MRBenchConversation:
    """One MRBench item: the dialogue so far, the problem's metadata and the annotated tutor responses."""

    id: str
    history: str
    responses: list[TutorResponse]
    data: str | None = None
    split: str | None = None
    topic: str | None = None
    ground_truth_solution: str | None = None

    @property
    def turns(self) -> list[ReferenceTurn]:
        """The history split into turns at each line-initial ``Tutor:`` / ``Student:`` label (see
        :func:`mrbench_speaker` for the spellings accepted)."""
        matches = [m for m in _MRBENCH_TURN.finditer(self.history) if mrbench_speaker(m[1]) is not None]
        turns = []
        for i, m in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(self.history)
            text = self.history[m.end():end].replace("\xa0", " ").strip()
            turns.append(ReferenceTurn(mrbench_speaker(m[1]) or "student", text))
        return turns


def is_desired(dimension: str, label: str) -> bool:
    """Whether an MRBench label is the desired one (DAMR), e.g. ``is_desired("Revealing_of_the_Answer", "No")``."""
    canon = _MRBENCH_CANON.get(dimension.lower())
    if canon is None:
        raise KeyError(f"unknown MRBench dimension {dimension!r}; known: {MRBENCH_DIMENSIONS}")
    return label.strip().lower() == MRBENCH_DESIRED[canon].lower()


def _parse_response(tutor: Any, raw: Any, where: str) -> TutorResponse:
    where = f"{where}, tutor {tutor!r}"
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: a response must be an object {{response, annotation}}, got {type(raw).__name__}")
    response = raw.get("response")
    if not isinstance(response, str):
        raise DatasetError(f"{where}: 'response' must be the tutor's text (a string), got {response!r}")
    annotation = raw.get("annotation") or {}
    if not isinstance(annotation, dict):
        raise DatasetError(f"{where}: 'annotation' must be an object of dimension -> label")
    labels = {}
    for key, value in annotation.items():
        if not isinstance(value, str):
            raise DatasetError(f"{where}: annotation {key!r} must be a label string such as 'Yes', got {value!r}")
        labels[_MRBENCH_CANON.get(key.lower(), key)] = value
    return TutorResponse(tutor=tutor, response=response, annotation=labels)


def load_mrbench(path: str | Path) -> list[MRBenchConversation]:
    """MRBench conversations from a local JSON file (V1, V2 or the BEA 2025 shared-task layout).

    Example::

        conversations = load_mrbench("MRBench_V1.json")
        conversations[0].responses[0].annotation["Mistake_Identification"]
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file; give the path of a local MRBench .json file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DatasetError(f"{path}: not valid JSON ({err.msg} at line {err.lineno}); fix the syntax") from err
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON array of conversations, got a JSON {type(data).__name__}")
    out = []
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            raise DatasetError(f"{path}: record {index} must be an object, got {type(item).__name__}")
        cid = item.get("conversation_id")
        where = f"{path}: record {index} (conversation_id {cid!r})"
        missing = [k for k in ("conversation_id", "conversation_history") if k not in item]
        if missing:
            raise DatasetError(f"{where}: missing key(s) {missing}; every MRBench record needs conversation_id "
                               "and conversation_history")
        if isinstance(cid, bool) or not isinstance(cid, (str, int)):
            raise DatasetError(f"{where}: conversation_id must be a string or integer")
        history = item["conversation_history"]
        if not isinstance(history, str):
            raise DatasetError(f"{where}: conversation_history must be a string of 'Tutor:'/'Student:' turns")
        key = "anno_llm_responses" if "anno_llm_responses" in item else "tutor_responses"
        responses = item.get(key) or {}
        if not isinstance(responses, dict):
            raise DatasetError(f"{where}: {key!r} must be an object of tutor name -> {{response, annotation}}")
        optional = {}
        for attr, src in _MRBENCH_OPTIONAL:
            value = item.get(src)
            if value is not None and not isinstance(value, str):
                raise DatasetError(f"{where}: {src!r} must be a string, got {value!r}")
            optional[attr] = value
        out.append(MRBenchConversation(
            id=str(cid),
            history=history,
            responses=[_parse_response(t, r, where) for t, r in responses.items()],
            **optional,
        ))
    return out


def dump_mrbench(conversations: Iterable[MRBenchConversation], path: str | Path) -> None:
    """Write conversations as an MRBench JSON array (``anno_llm_responses``); absent fields are left out.

    Example::

        dump_mrbench(load_mrbench("MRBench_V1.json"), "copy.json")
    """
    rows = []
    for c in conversations:
        row: dict[str, Any] = {"conversation_id": c.id, "conversation_history": c.history}
        for attr, src in _MRBENCH_OPTIONAL:
            value = getattr(c, attr)
            if value is not None:
                row[src] = value
        row["anno_llm_responses"] = {
            r.tutor: {"response": r.response, "annotation": dict(r.annotation)} for r in c.responses
        }
        rows.append(row)
    Path(path).write_text(json.dumps(rows, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


__all__ = [
    "EOM",
    "MATHDIAL_MOVES",
    "MRBENCH_DESIRED",
    "MRBENCH_DIMENSIONS",
    "MRBenchConversation",
    "ReferenceDialogue",
    "ReferenceTurn",
    "TutorResponse",
    "dump_mathdial",
    "dump_mrbench",
    "format_mathdial_conversation",
    "is_desired",
    "load_mathdial",
    "load_mrbench",
    "mrbench_speaker",
    "parse_mathdial_conversation",
]
