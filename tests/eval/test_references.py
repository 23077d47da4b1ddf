"""Reference-dialogue loaders: MathDial (JSONL / JSON / CSV) and MRBench, with round trips and bad files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tutorzoo.envs.errors import DatasetError
from tutorzoo.eval.references import (
    MRBENCH_DESIRED,
    MRBENCH_DIMENSIONS,
    ReferenceDialogue,
    ReferenceTurn,
    dump_mathdial,
    dump_mrbench,
    is_desired,
    load_mathdial,
    load_mrbench,
    parse_mathdial_conversation,
)

# Shaped like MathDial's data/test.jsonl: the same qid recurs, and one record labels the student by name.
MATHDIAL = [
    {"qid": 6000025, "scenario": 1, "question": "Julia had 12 spoons after using 3 ... How many did she buy?",
     "ground_truth": "12+3=15\n15-5=10\n 10", "student_incorrect_solution": "12-3=9\n9-5=4\n 4",
     "student_profile": "Mariana is a 7th grade student.", "teacher_described_confusion": "subtracting",
     "self-correctness": "Yes", "self-typical-confusion": 4.0, "self-typical-interactions": 4.0,
     "conversation": "Teacher: (generic)Hi Mariana, please talk me through your solution|EOM|Student: I subtracted "
                     "3 from 12: 12 - 3 = 9.|EOM|Teacher: (focus)She still has the spoons she used. How many in "
                     "total? |EOM|Student: 12 + 3 = 15, so she bought 10.|EOM|Teacher: Yes, that's it"},
    {"qid": 6000025, "scenario": 1, "question": "Julia had 12 spoons after using 3 ... How many did she buy?",
     "conversation": "Teacher: (probing)Why did you subtract?|EOM|Cody: Because she used 3 spoons.|EOM|"
                     "Teacher: (telling)Used spoons still count: 12 + 3 = 15."},
]

MRBENCH = [
    {"conversation_id": "2895106109",
     "conversation_history": "Tutor: What is the name of a 5-sided polygon? \n\xa0Student: a octogon",
     "Data": "Bridge", "Split": "train", "Topic": "4.5A.Geometric Lines", "Ground_Truth_Solution": "Not Available",
     "anno_llm_responses": {
         "Expert": {"response": "Great try! An octagon has 8 sides. The prefix for 5 is pent.",
                    "annotation": {"Mistake_Identification": "Yes", "Mistake_Location": "Yes",
                                   "Revealing_of_the_Answer": "No", "Providing_Guidance": "Yes",
                                   "Actionability": "To some extent", "humanlikeness": "Yes", "Coherence": "Yes",
                                   "Tutor_Tone": "Encouraging"}},
         "Novice": {"response": "Try to recheck your answer.",
                    "annotation": {"Mistake_Identification": "Yes", "Revealing_of_the_Answer": "No"}}}},
    {"conversation_id": 930, "conversation_history": "Tutor: Step by step, please.\nStudent: 5000 + 1000 = 6000\n"
                                                     "so 4000 steps.\nTutor: How did you get 4000?",
     "tutor_responses": {"GPT4": {"response": "Let's recheck the last step."}}},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict]) -> Path:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


# --------------------------------------------------------------------------------------------- MathDial


def test_mathdial_parse(tmp_path: Path) -> None:
    first, second = load_mathdial(write_jsonl(tmp_path / "md.jsonl", MATHDIAL))
    assert (first.id, second.id) == ("6000025-0", "6000025-1")
    assert first.turns[0] == ReferenceTurn("tutor", "Hi Mariana, please talk me through your solution", "generic")
    assert first.turns[1] == ReferenceTurn("student", "I subtracted 3 from 12: 12 - 3 = 9.")
    assert first.turns[2].text.endswith("How many in total?")  # trailing space trimmed
    assert first.turns[-1] == ReferenceTurn("tutor", "Yes, that's it", None)
    assert [t.speaker for t in second.turns] == ["tutor", "student", "tutor"]  # "Cody:" is the student
    assert [t.move for t in second.turns if t.speaker == "tutor"] == ["probing", "telling"]
    assert first.ground_truth == "12+3=15\n15-5=10\n 10" and second.ground_truth is None
    assert first.meta["self-typical-confusion"] == 4.0 and "conversation" not in first.meta


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"], ids=["jsonl", "json", "csv"])
def test_mathdial_round_trip(tmp_path: Path, suffix: str) -> None:
    src = tmp_path / f"src{suffix}"
    if suffix == ".csv":
        write_csv(src, MATHDIAL)
    elif suffix == ".json":
        src.write_text(json.dumps(MATHDIAL), encoding="utf-8")
    else:
        write_jsonl(src, MATHDIAL)
    dialogues = load_mathdial(src)
    assert len(dialogues) == 2 and len(dialogues[0].turns) == 5
    out = tmp_path / f"out{suffix}"
    dump_mathdial(dialogues, out)
    assert load_mathdial(out) == dialogues


def test_mathdial_csv_reads_like_jsonl(tmp_path: Path) -> None:
    from_csv = load_mathdial(write_csv(tmp_path / "md.csv", MATHDIAL))
    from_jsonl = load_mathdial(write_jsonl(tmp_path / "md.jsonl", MATHDIAL))
    assert [d.turns for d in from_csv] == [d.turns for d in from_jsonl]
    assert from_csv[0].meta["qid"] == "6000025"  # CSV cells are strings
    assert "ground_truth" not in from_csv[1].meta and from_csv[1].ground_truth is None  # empty cell = absent


def test_dump_rejects_ambiguous_turns(tmp_path: Path) -> None:
    bad = [ReferenceDialogue("d", [ReferenceTurn("tutor", "(hint) try again")])]
    with pytest.raises(DatasetError, match="would read back as a move"):
        dump_mathdial(bad, tmp_path / "x.jsonl")
    with pytest.raises(DatasetError, match="separator"):
        dump_mathdial([ReferenceDialogue("d", [ReferenceTurn("student", "a|EOM|b")])], tmp_path / "x.jsonl")


MATHDIAL_BAD = [
    ("no-conversation", [{"qid": 7, "question": "q"}], ["record 0", "qid 7", "missing or empty 'conversation'"]),
    ("unlabelled-turn", [MATHDIAL[0], {"qid": 8, "conversation": "Teacher: (focus)Hi|EOM|12 - 3 = 9: so 9"}],
     ["record 1", "qid 8", "turn 1", "must start with 'Teacher:' or 'Student:'"]),
    ("question-not-text", [{"qid": 9, "question": 3, "conversation": "Student: hi"}],
     ["record 0", "'question' must be a string"]),
    ("duplicate-ids", [{"id": "a", "conversation": "Student: hi"}, {"id": "a", "conversation": "Student: yo"}],
     ["id 'a' occurs twice"]),
    ("not-an-object", ["Teacher: hi"], ["record 0 must be an object"]),
]


@pytest.mark.parametrize(("rows", "expected"), [c[1:] for c in MATHDIAL_BAD], ids=[c[0] for c in MATHDIAL_BAD])
def test_mathdial_malformed(tmp_path: Path, rows: list, expected: list[str]) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DatasetError) as err:
        load_mathdial(path)
    assert str(path) in str(err.value)
    for part in expected:
        assert part in str(err.value)


def test_parse_conversation_alone() -> None:
    turns = parse_mathdial_conversation("Teacher: (Probing) Why 9?|EOM|Student: Because 12 - 3 = 9.")
    assert turns == [ReferenceTurn("tutor", "Why 9?", "probing"), ReferenceTurn("student", "Because 12 - 3 = 9.")]


# --------------------------------------------------------------------------------------------- MRBench


def test_mrbench_parse(tmp_path: Path) -> None:
    path = tmp_path / "mrbench.json"
    path.write_text(json.dumps(MRBENCH), encoding="utf-8")
    bridge, mathdial = load_mrbench(path)
    assert (bridge.id, bridge.data, bridge.split, bridge.topic) == ("2895106109", "Bridge", "train",
                                                                     "4.5A.Geometric Lines")
    expert = bridge.responses[0]
    assert expert.tutor == "Expert" and set(expert.annotation) == set(MRBENCH_DIMENSIONS)  # humanlikeness -> canon
    assert bridge.turns == [ReferenceTurn("tutor", "What is the name of a 5-sided polygon?"),
                            ReferenceTurn("student", "a octogon")]
    assert mathdial.id == "930" and mathdial.data is None
    assert mathdial.responses[0].annotation == {}  # BEA-style file: responses without labels
    assert [t.speaker for t in mathdial.turns] == ["tutor", "student", "tutor"]
    assert mathdial.turns[1].text == "5000 + 1000 = 6000\nso 4000 steps."  # multi-line turn kept whole


def test_mrbench_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "mrbench.json"
    path.write_text(json.dumps(MRBENCH), encoding="utf-8")
    conversations = load_mrbench(path)
    dump_mrbench(conversations, tmp_path / "copy.json")
    assert load_mrbench(tmp_path / "copy.json") == conversations
    raw = json.loads((tmp_path / "copy.json").read_text(encoding="utf-8"))
    assert "Data" not in raw[1] and "anno_llm_responses" in raw[1]


MRBENCH_BAD = [
    ("not-an-array", {"conversation_id": "1"}, ["expected a JSON array"]),
    ("missing-history", [{"conversation_id": "c1"}], ["record 0", "'c1'", "missing key(s) ['conversation_history']"]),
    ("response-not-text", [{"conversation_id": "c2", "conversation_history": "Tutor: hi",
                            "anno_llm_responses": {"GPT4": {"response": 5}}}],
     ["record 0", "'c2'", "tutor 'GPT4'", "'response' must be the tutor's text"]),
    ("label-not-text", [{"conversation_id": "c3", "conversation_history": "Tutor: hi",
                         "anno_llm_responses": {"GPT4": {"response": "ok", "annotation": {"Coherence": 1}}}}],
     ["tutor 'GPT4'", "annotation 'Coherence' must be a label string"]),
    ("topic-not-text", [{"conversation_id": "c4", "conversation_history": "Tutor: hi", "Topic": ["a"]}],
     ["record 0", "'Topic' must be a string"]),
]


@pytest.mark.parametrize(("data", "expected"), [c[1:] for c in MRBENCH_BAD], ids=[c[0] for c in MRBENCH_BAD])
def test_mrbench_malformed(tmp_path: Path, data: object, expected: list[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        load_mrbench(path)
    assert str(path) in str(err.value)
    for part in expected:
        assert part in str(err.value)


@pytest.mark.parametrize(
    ("dimension", "label", "desired"),
    [("Revealing_of_the_Answer", "No", True), ("Revealing_of_the_Answer", "Yes (and the answer is correct)", False),
     ("Tutor_Tone", "Encouraging", True), ("Tutor_Tone", "Neutral", False), ("humanlikeness", "Yes", True),
     ("Actionability", "To some extent", False)],
    ids=["no-reveal", "reveal", "encouraging", "neutral", "lowercase-dim", "partial"],
)
def test_is_desired(dimension: str, label: str, desired: bool) -> None:
    assert is_desired(dimension, label) is desired


def test_desired_labels_cover_all_dimensions() -> None:
    assert set(MRBENCH_DESIRED) == set(MRBENCH_DIMENSIONS)
    with pytest.raises(KeyError, match="unknown MRBench dimension"):
        is_desired("Empathy", "Yes")
