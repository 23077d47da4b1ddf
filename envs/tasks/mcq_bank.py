"""Multiple-choice question banks as files: :class:`McqRecord` (one question, format-neutral), :func:`load_bank` and
:func:`dump_bank`, with errors that name the file, the record and the fix. The task set built on a bank is
:mod:`tutorzoo.envs.tasks.mcq`.

Bank formats, detected from the first record's keys (or forced with ``format=``):

- ``educationq``: EducationQ's released JSON array of ``{id, source, question, options, answer (letter),
  answer_index, category, difficulty, original_source}`` (``explanation`` optional, as in its GPQA part).
  TutorZoo's bank adds optional ``grade`` (0-12), ``isomorphic_of`` (id of the mirrored item) and
  ``misconceptions`` (``{id: {belief, counterexample, negation, option, keywords?}}``, ``option`` being the
  distractor letter the misconception produces). Every other key (GPQA's ``subdomain``, ...) is kept in
  ``McqRecord.meta`` and written back by :func:`dump_bank`.
- ``mmlu_pro``: MMLU-Pro's columns ``{question_id, question, options, answer, answer_index, cot_content,
  category, src}``; ``cot_content`` becomes the explanation and ``src`` the original source; EducationQ's
  stratified MMLU-Pro adds ``difficulty``, kept as such; other keys are kept in ``meta``.

Files: ``.json`` (an array), ``.jsonl`` (one record a line), ``.parquet`` (needs pyarrow).
Externally loaded items carry no grade (the task set takes them as grade :data:`EXTERNAL_GRADE`).

Example::

    from tutorzoo.envs.tasks.mcq_bank import dump_bank, load_bank
    records = load_bank("mmlu_pro_test.jsonl")   # any local EducationQ or MMLU-Pro file
    dump_bank(records, "bank.json")              # EducationQ's format
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.jsonl_lines import jsonl_values

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_BANK = DATA_DIR / "mcq_bank.json"

BankFormat = Literal["educationq", "mmlu_pro"]
FORMATS: tuple[str, ...] = ("educationq", "mmlu_pro")
# Grade of items whose bank gives none: MMLU-Pro/GPQA are undergraduate-level or harder.
EXTERNAL_GRADE = 12
MMLU_PRO_SOURCE = "mmlu-pro"

_REQUIRED: dict[str, tuple[str, ...]] = {
    "educationq": ("id", "question", "options", "answer", "category"),
    "mmlu_pro": ("question_id", "question", "options", "answer", "category"),
}
# The keys each format has a column for; everything else in a record is kept in ``McqRecord.meta``.
_COLUMNS: dict[str, frozenset[str]] = {
    "educationq": frozenset({"id", "source", "question", "options", "answer", "answer_index", "category",
                             "difficulty", "original_source", "explanation", "grade", "isomorphic_of",
                             "misconceptions"}),
    "mmlu_pro": frozenset({"question_id", "question", "options", "answer", "answer_index", "cot_content",
                           "category", "src", "difficulty"}),
}
_MISCONCEPTION_KEYS = ("belief", "counterexample", "negation", "option")
_MIS_ID = re.compile(r"^[a-z0-9_]+$")


@dataclass(frozen=True)
class McqMisconception:
    """A misconception a distractor reflects: the wrong belief, what repairs it, and the option it picks."""

    id: str
    belief: str
    counterexample: str
    negation: str
    option: str
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class McqRecord:
    """One multiple-choice question, format-neutral. ``answer`` is a letter; ``answer_index`` agrees with it."""

    id: str
    question: str
    options: tuple[str, ...]
    answer: str
    answer_index: int
    category: str
    source: str = ""
    difficulty: str = ""
    original_source: str = ""
    explanation: str = ""
    grade: int | None = None
    isomorphic_of: str | None = None
    misconceptions: tuple[McqMisconception, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, hash=False)
    """Every field of the source record that has no column here (GPQA's ``subdomain``, ...)."""

    @property
    def answer_text(self) -> str:
        return self.options[self.answer_index]


def option_letter(i: int) -> str:
    """The letter of option ``i``: 0 is ``A``."""
    return chr(ord("A") + i)


def snake_case(text: str) -> str:
    """A category name as a KC id: ``snake_case("Computer Science") == "computer_science"``."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


# --------------------------------------------------------------------------------------------- reading


def _read_raw(path: Path) -> list[Any]:
    """The file's records as parsed JSON values (not yet checked), by suffix."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such file; give the path of a local .json, .jsonl or .parquet bank")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as err:
            raise DatasetError(f"{path}: reading parquet needs pyarrow; `pip install pyarrow` or convert the "
                               "file to JSONL") from err
        return pq.read_table(path).to_pylist()
    text = path.read_text(encoding="utf-8")
    if suffix == ".jsonl":
        return [row for _, row in jsonl_values(
            text, lambda n, err: f"{path}: line {n} is not valid JSON ({err.msg} at column {err.colno}); each line "
            "of a .jsonl file must hold one JSON object")]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise DatasetError(f"{path}: not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}); "
                           "fix the syntax, or name a JSON Lines file with the .jsonl suffix") from err
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON array of question records, got a JSON "
                           f"{type(data).__name__}; wrap the records in [ ... ]")
    return data


def _detect(path: Path, first: dict) -> str:
    keys = set(first)
    if "question_id" in keys:
        return "mmlu_pro"
    if "id" in keys:
        return "educationq"
    raise DatasetError(
        f"{path}: record 0: cannot tell the bank format from its keys {sorted(keys)}; an EducationQ record has "
        f"{list(_REQUIRED['educationq'])}, an MMLU-Pro record {list(_REQUIRED['mmlu_pro'])}; fix the keys or pass "
        f"format= one of {FORMATS}"
    )


def _check_str(value: Any, where: str, key: str, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise DatasetError(f"{where}: field {key!r} must be a non-empty string, got {value!r}; fix the record")
    return value


def _parse_misconceptions(raw: Any, where: str, n_options: int, answer: str) -> tuple[McqMisconception, ...]:
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: field 'misconceptions' must be an object {{id: {{belief, counterexample, "
                           f"negation, option}}}}, got {type(raw).__name__}")
    letters = [option_letter(i) for i in range(n_options)]
    out = []
    for mid, spec in raw.items():
        if not _MIS_ID.match(mid):
            raise DatasetError(f"{where}: misconception id {mid!r} must be snake_case (a-z, 0-9, _); rename it")
        if not isinstance(spec, dict):
            raise DatasetError(
                f"{where}: misconception {mid!r} must be an object with keys {list(_MISCONCEPTION_KEYS)}"
            )
        missing = [k for k in _MISCONCEPTION_KEYS if k not in spec]
        if missing:
            raise DatasetError(f"{where}: misconception {mid!r} lacks {missing}; add them "
                               f"(every misconception needs {list(_MISCONCEPTION_KEYS)})")
        fields = {k: _check_str(spec[k], f"{where}: misconception {mid!r}", k) for k in _MISCONCEPTION_KEYS}
        if fields["option"] not in letters:
            raise DatasetError(f"{where}: misconception {mid!r} picks option {fields['option']!r}, which is not "
                               f"one of the item's letters {letters}; give the letter of the distractor it produces")
        if fields["option"] == answer:
            raise DatasetError(f"{where}: misconception {mid!r} picks option {answer!r}, the keyed answer; a "
                               "misconception must point at a wrong option")
        keywords = spec.get("keywords", [])
        if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            raise DatasetError(f"{where}: misconception {mid!r}: 'keywords' must be a list of strings")
        out.append(McqMisconception(id=mid, keywords=tuple(keywords), **fields))
    return tuple(out)


def _parse_record(raw: Any, index: int, path: Path, fmt: str) -> McqRecord:
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: record {index} must be a JSON object, got {type(raw).__name__}")
    id_key = "id" if fmt == "educationq" else "question_id"
    rid = raw.get(id_key)
    where = f"{path}: record {index} (id {rid!r})"
    missing = [k for k in _REQUIRED[fmt] if k not in raw]
    if missing:
        raise DatasetError(f"{where}: missing key(s) {missing}; a {fmt} record needs {list(_REQUIRED[fmt])}")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or str(rid).strip() == "":
        raise DatasetError(f"{where}: field {id_key!r} must be a non-empty string or integer; fix the record")
    question = _check_str(raw["question"], where, "question")
    options = raw["options"]
    if not isinstance(options, list) or not options:
        raise DatasetError(f"{where}: field 'options' must be a non-empty list of option texts, got {options!r}")
    if not all(isinstance(o, str) and o.strip() for o in options):
        raise DatasetError(f"{where}: every option must be a non-empty string; fix 'options'")
    if not 2 <= len(options) <= 26:
        raise DatasetError(f"{where}: a multiple-choice item needs 2 to 26 options, got {len(options)}")
    letters = [option_letter(i) for i in range(len(options))]
    answer = raw["answer"]
    if answer not in letters:
        raise DatasetError(f"{where}: answer {answer!r} is not one of the option letters {letters}; the answer "
                           "must be the capital letter of the correct option")
    answer_index = letters.index(answer)
    if "answer_index" in raw and raw["answer_index"] is not None:
        given = raw["answer_index"]
        if isinstance(given, bool) or not isinstance(given, int):
            raise DatasetError(f"{where}: answer_index must be an integer, got {given!r}")
        if given != answer_index:
            raise DatasetError(f"{where}: answer {answer!r} and answer_index {given} disagree (letter {answer!r} is "
                               f"index {answer_index}, counting from 0); correct one of them")
    category = _check_str(raw["category"], where, "category")
    if not snake_case(category):
        raise DatasetError(f"{where}: category {category!r} has no letters or digits; name the subject")

    def opt_str(key: str) -> str:
        value = raw.get(key)
        return "" if value is None else _check_str(value, where, key, allow_empty=True)

    meta = {k: v for k, v in raw.items() if k not in _COLUMNS[fmt]}
    if fmt == "mmlu_pro":
        return McqRecord(
            id=str(rid), question=question, options=tuple(options), answer=answer, answer_index=answer_index,
            category=category, source=MMLU_PRO_SOURCE, original_source=opt_str("src"),
            explanation=opt_str("cot_content"), difficulty=opt_str("difficulty"), meta=meta,
        )
    grade = raw.get("grade")
    if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 12):
        raise DatasetError(f"{where}: grade must be an integer from 0 to 12, got {grade!r}")
    iso = raw.get("isomorphic_of")
    if iso is not None:
        iso = _check_str(iso, where, "isomorphic_of")
    misconceptions = ()
    if raw.get("misconceptions") is not None:
        misconceptions = _parse_misconceptions(raw["misconceptions"], where, len(options), answer)
    return McqRecord(
        id=str(rid), question=question, options=tuple(options), answer=answer, answer_index=answer_index,
        category=category, source=opt_str("source"), difficulty=opt_str("difficulty"),
        original_source=opt_str("original_source"), explanation=opt_str("explanation"), grade=grade,
        isomorphic_of=iso, misconceptions=misconceptions, meta=meta,
    )


def _check_bank(path: Path, records: list[McqRecord]) -> None:
    """Cross-record checks: unique ids, twins that exist, share the category and pair one to one."""
    index: dict[str, int] = {}
    for i, rec in enumerate(records):
        if rec.id in index:
            raise DatasetError(f"{path}: record {i} (id {rec.id!r}) repeats the id of record {index[rec.id]}; "
                               "ids must be unique")
        index[rec.id] = i
    mirrored: dict[str, str] = {}
    for i, rec in enumerate(records):
        if rec.isomorphic_of is None:
            continue
        where = f"{path}: record {i} (id {rec.id!r})"
        target = rec.isomorphic_of
        if target == rec.id:
            raise DatasetError(f"{where}: isomorphic_of names the item itself; give the id of its twin")
        if target not in index:
            raise DatasetError(f"{where}: isomorphic_of names {target!r}, which is not in the bank; fix the id")
        twin = records[index[target]]
        if twin.isomorphic_of is not None:
            raise DatasetError(f"{where}: its twin {target!r} is itself marked isomorphic_of {twin.isomorphic_of!r}; "
                               "mark only one item of each pair")
        if target in mirrored:
            raise DatasetError(f"{where}: item {target!r} is already mirrored by {mirrored[target]!r}; each item "
                               "has at most one twin")
        if snake_case(twin.category) != snake_case(rec.category):
            raise DatasetError(f"{where}: category {rec.category!r} differs from its twin's {twin.category!r}; "
                               "twins test the same knowledge, so give them the same category")
        mirrored[target] = rec.id


def load_bank(path: str | Path, format: BankFormat | None = None) -> list[McqRecord]:
    """Load a multiple-choice bank from a local file, format auto-detected from the keys.

    Example::

        records = load_bank("educationq_full.json")   # or an MMLU-Pro .json / .jsonl / .parquet
        records[0].answer_text
    """
    path = Path(path)
    raw = _read_raw(path)
    if not raw:
        raise DatasetError(f"{path}: the bank holds no records; add at least one question")
    if format is not None and format not in FORMATS:
        raise DatasetError(f"{path}: unknown bank format {format!r}; use one of {FORMATS} or None to detect it")
    if format is None:
        if not isinstance(raw[0], dict):
            raise DatasetError(f"{path}: record 0 must be a JSON object, got {type(raw[0]).__name__}")
        format = _detect(path, raw[0])  # type: ignore[assignment]
    records = [_parse_record(r, i, path, format) for i, r in enumerate(raw)]  # type: ignore[arg-type]
    _check_bank(path, records)
    return records


# --------------------------------------------------------------------------------------------- writing


def _question_fields(rec: McqRecord) -> dict[str, Any]:
    """The question, its options and its key, as both export formats write them."""
    return {"question": rec.question, "options": list(rec.options), "answer": rec.answer,
            "answer_index": rec.answer_index}


def _to_educationq(rec: McqRecord) -> dict:
    out: dict[str, Any] = {
        "id": rec.id,
        "source": rec.source,
        **_question_fields(rec),
        "category": rec.category,
        "difficulty": rec.difficulty,
        "original_source": rec.original_source,
    }
    if rec.explanation:
        out["explanation"] = rec.explanation
    if rec.grade is not None:
        out["grade"] = rec.grade
    if rec.isomorphic_of is not None:
        out["isomorphic_of"] = rec.isomorphic_of
    if rec.misconceptions:
        out["misconceptions"] = {
            m.id: {"belief": m.belief, "counterexample": m.counterexample, "negation": m.negation,
                   "option": m.option, **({"keywords": list(m.keywords)} if m.keywords else {})}
            for m in rec.misconceptions
        }
    out.update({k: v for k, v in rec.meta.items() if k not in out})
    return out


def _to_mmlu_pro(rec: McqRecord) -> dict:
    out: dict[str, Any] = {
        "question_id": int(rec.id) if rec.id.isdigit() else rec.id,
        **_question_fields(rec),
        "cot_content": rec.explanation,
        "category": rec.category,
        "src": rec.original_source,
    }
    if rec.difficulty:
        out["difficulty"] = rec.difficulty
    out.update({k: v for k, v in rec.meta.items() if k not in out})
    return out


def dump_bank(records: list[McqRecord], path: str | Path, format: BankFormat = "educationq") -> None:
    """Write records as an EducationQ or MMLU-Pro bank (``.jsonl`` suffix: one record a line, else an array).

    MMLU-Pro has no columns for grade, twins or misconceptions: those are dropped (``difficulty`` and ``meta``
    are written, as EducationQ's stratified MMLU-Pro has them).

    Example::

        dump_bank(load_bank("bank.json"), "copy.jsonl", format="mmlu_pro")
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    convert = _to_educationq if format == "educationq" else _to_mmlu_pro
    rows = [convert(r) for r in records]
    path = Path(path)
    if path.suffix.lower() == ".jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    else:
        text = json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")


__all__ = [
    "DEFAULT_BANK",
    "EXTERNAL_GRADE",
    "FORMATS",
    "BankFormat",
    "McqMisconception",
    "McqRecord",
    "dump_bank",
    "load_bank",
    "option_letter",
    "snake_case",
]
