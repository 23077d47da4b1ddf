"""The ``mcq`` task set: bank loaders (EducationQ, MMLU-Pro), the shipped bank, and task construction."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.envs.labels import DISCIPLINES
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.envs.tasks.base import Task
from tutorzoo.envs.tasks.mcq import DEFAULT_BANK, McqTaskSet, dump_bank, load_bank, snake_case

EDUQ_RECORDS = [
    {"id": "mmlu_pro_70", "source": "mmlu-pro-stratified",
     "question": "Which gas do plants take in for photosynthesis?",
     "options": ["Oxygen", "Nitrogen", "Carbon dioxide", "Helium", "Argon"], "answer": "C", "answer_index": 2,
     "category": "biology", "difficulty": "-----", "original_source": "ori_mmlu-high_school_biology"},
    {"id": "gpqa_diamond_1", "source": "gpqa-diamond", "question": "What is the SI unit of force?",
     "options": ["joule", "newton", "watt", "pascal"], "answer": "B", "answer_index": 1, "category": "physics",
     "difficulty": "", "original_source": "", "explanation": "Force is measured in newtons.\n1 N = 1 kg m/s^2.",
     "subdomain": "Physics (general)"},
    {"id": "mmlu_pro_9", "source": "mmlu-pro-stratified", "question": "Which data structure is last-in, first-out?",
     "options": ["queue", "stack", "heap", "tree"], "answer": "B", "answer_index": 1,
     "category": "computer science", "difficulty": "++", "original_source": "ori_mmlu-college_computer_science"},
]
MMLU_RECORDS = [
    {"question_id": 70, "question": "What is 7 x 8?", "options": ["54", "56", "58", "64", "48", "63", "72", "49",
     "57", "65"], "answer": "B", "answer_index": 1, "cot_content": "A: 7 x 8 = 56.", "category": "math",
     "src": "ori_mmlu-elementary_mathematics"},
    {"question_id": 71, "question": "A contract needs offer, acceptance and what else?", "options": ["consideration",
     "a witness", "a seal"], "answer": "A", "answer_index": 0, "cot_content": "", "category": "law",
     "src": "stemez-Law"},
]


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def shipped() -> McqTaskSet:
    return McqTaskSet()


# --------------------------------------------------------------------------------------------- formats


@pytest.mark.parametrize(
    ("fmt", "records", "suffix"),
    [("educationq", EDUQ_RECORDS, ".json"), ("mmlu_pro", MMLU_RECORDS, ".json"), ("mmlu_pro", MMLU_RECORDS, ".jsonl")],
    ids=["educationq-json", "mmlu_pro-json", "mmlu_pro-jsonl"],
)
def test_round_trip(tmp_path: Path, fmt: str, records: list[dict], suffix: str) -> None:
    src = tmp_path / f"bank{suffix}"
    if suffix == ".jsonl":
        src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        write_json(src, records)
    loaded = load_bank(src)
    out = tmp_path / f"copy{suffix}"
    dump_bank(loaded, out, format=fmt)  # type: ignore[arg-type]
    assert load_bank(out) == loaded
    assert load_bank(out, format=fmt) == loaded  # type: ignore[arg-type]
    assert [r.id for r in loaded] == [str(r.get("id", r.get("question_id"))) for r in records]


def test_shipped_bank_round_trips(tmp_path: Path) -> None:
    records = load_bank(DEFAULT_BANK)
    dump_bank(records, tmp_path / "bank.json")
    assert load_bank(tmp_path / "bank.json") == records


def test_mmlu_pro_fields_map(tmp_path: Path) -> None:
    rec = load_bank(write_json(tmp_path / "m.json", MMLU_RECORDS))[0]
    assert (rec.id, rec.answer, rec.answer_index, rec.answer_text) == ("70", "B", 1, "56")
    assert (rec.source, rec.original_source, rec.explanation) == ("mmlu-pro", "ori_mmlu-elementary_mathematics",
                                                                  "A: 7 x 8 = 56.")
    assert len(rec.options) == 10


def test_parquet(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(MMLU_RECORDS), tmp_path / "m.parquet")
    assert load_bank(tmp_path / "m.parquet") == load_bank(write_json(tmp_path / "m.json", MMLU_RECORDS))


def _mutated(i: int, **changes: object) -> list[dict]:
    records = [dict(r) for r in EDUQ_RECORDS]
    for k, v in changes.items():
        if v is _DROP:
            del records[i][k]
        else:
            records[i][k] = v
    return records


_DROP = object()
_MIS = {"belief": "b", "counterexample": "c", "negation": "n"}

MALFORMED = [
    ("missing-key", _mutated(1, category=_DROP), ["record 1", "'gpqa_diamond_1'", "missing key(s) ['category']"]),
    ("letter-out-of-range", _mutated(1, answer="E", answer_index=4), ["record 1", "'gpqa_diamond_1'",
                                                                       "not one of the option letters"]),
    ("lowercase-letter", _mutated(0, answer="c"), ["record 0", "'mmlu_pro_70'", "capital letter"]),
    ("index-disagrees", _mutated(2, answer_index=3), ["record 2", "'mmlu_pro_9'", "disagree", "correct one of them"]),
    ("empty-options", _mutated(0, options=[]), ["record 0", "'mmlu_pro_70'", "non-empty list"]),
    ("one-option", _mutated(0, options=["x"], answer="A", answer_index=0), ["record 0", "2 to 26 options"]),
    ("empty-question", _mutated(2, question="  "), ["record 2", "'question'", "non-empty string"]),
    ("duplicate-id", _mutated(2, id="mmlu_pro_70"), ["record 2", "repeats the id of record 0", "unique"]),
    ("twin-missing", _mutated(1, isomorphic_of="nope"), ["record 1", "'nope'", "not in the bank"]),
    ("twin-other-subject", _mutated(1, isomorphic_of="mmlu_pro_70"), ["record 1", "same category"]),
    ("twin-self", _mutated(1, isomorphic_of="gpqa_diamond_1"), ["record 1", "the item itself"]),
    ("misconception-on-answer", _mutated(1, misconceptions={"m": {**_MIS, "option": "B"}}),
     ["record 1", "'m'", "keyed answer", "wrong option"]),
    ("misconception-bad-letter", _mutated(1, misconceptions={"m": {**_MIS, "option": "Q"}}),
     ["record 1", "not one of the item's letters"]),
    ("misconception-missing-field", _mutated(1, misconceptions={"m": {"belief": "b", "option": "A"}}),
     ["record 1", "lacks ['counterexample', 'negation']"]),
    ("grade-out-of-range", _mutated(0, grade=14), ["record 0", "grade must be an integer from 0 to 12"]),
    ("not-an-array", {"questions": EDUQ_RECORDS}, ["expected a JSON array", "wrap the records"]),
    ("record-not-object", ["just text"], ["record 0 must be a JSON object"]),
    ("unknown-layout", [{"prompt": "x", "label": 1}], ["record 0", "cannot tell the bank format", "format="]),
    ("empty-bank", [], ["no records"]),
]


@pytest.mark.parametrize(("data", "expected"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_bank(tmp_path: Path, data: object, expected: list[str]) -> None:
    path = write_json(tmp_path / "broken.json", data)
    with pytest.raises(DatasetError) as err:
        load_bank(path)
    message = str(err.value)
    assert str(path) in message
    for part in expected:
        assert part in message


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [("bad-json", "[{", "not valid JSON"), ("bad-jsonl-line", '{"id": 1}\n{oops\n', "line 2 is not valid JSON")],
    ids=["bad-json", "bad-jsonl-line"],
)
def test_unparsable_files(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = tmp_path / (name + (".jsonl" if "jsonl" in name else ".json"))
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=expected):
        load_bank(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        load_bank(tmp_path / "absent.json")


# --------------------------------------------------------------------------------------------- shipped bank


def test_shipped_bank_shape(shipped: McqTaskSet) -> None:
    records = shipped.records
    assert len(records) >= 40
    categories = {r.category for r in records}
    assert {"physics", "chemistry", "biology", "math", "history", "economics"} <= categories
    assert all(len(r.options) == 4 for r in records)
    pairs = [(r.isomorphic_of, r.id) for r in records if r.isomorphic_of]
    assert len(pairs) == 20
    assert sorted(i for p in pairs for i in p) == sorted(r.id for r in records)  # every item is in one pair
    assert all(8 <= (r.grade or 0) <= 12 for r in records)
    assert sum(bool(r.misconceptions) for r in records) >= 30
    # Keys are spread over the letters, so a student cannot score by always answering one letter.
    counts = {letter: sum(r.answer == letter for r in records) for letter in "ABCD"}
    assert max(counts.values()) <= len(records) // 2, counts


def test_every_shipped_task_builds(shipped: McqTaskSet) -> None:
    for task_id in shipped.task_ids():
        task = shipped.build(task_id, np.random.default_rng(0))
        assert isinstance(task, Task)
        pre, post = task.pretest[0], task.posttest[0]
        twin = shipped.twin_of(task_id)
        assert twin is not None and post.id == twin and post.parallel_of == task_id
        assert pre.subject == post.subject == shipped._by_id[task_id].category
        assert pre.stem != post.stem
        assert pre.kcs == post.kcs == (task.knowledge_components[0].id,)
        assert task.disciplines[0] in DISCIPLINES
        assert task.answer == pre.options[ord(pre.answer) - ord("A")]
        assert pre.render(with_options=False) == task.statement
        mis_ids = {m.id for m in task.misconceptions}
        for item in (pre, post):
            assert set(item.misconception_answers) <= mis_ids
            assert item.answer not in item.misconception_answers.values()


def _opt(shipped: McqTaskSet, item_id: str) -> str:
    return shipped._by_id[item_id].answer_text


# Recompute the keyed answers of the computational items, so a wrong key in the bank fails here.
KEYS = [
    ("phys_series_circuit_a", f"{12 / (4 + 2):g} A"),
    ("phys_series_circuit_b", f"{9 / (1 + 2):g} A"),
    ("phys_kinetic_energy_b", f"{(15 / 5) ** 2:g}"),
    ("chem_moles_a", f"{36 / 18:g} mol"),
    ("chem_moles_b", f"{88 / 44:g} mol"),
    ("chem_ph_a", f"{-np.log10(1e-3):.0f}"),
    ("chem_ph_b", f"pH {-np.log10(1e-9):.0f}, basic"),
    ("bio_punnett_a", str(Fraction(sum(a + b == "pp" for a in "Pp" for b in "Pp"), 4))),
    ("bio_punnett_b", str(Fraction(sum(a + b == "bb" for a in "Bb" for b in "Bb"), 4))),
    ("math_fraction_add_a", str(Fraction(3, 4) + Fraction(2, 5))),
    ("math_fraction_add_b", str(Fraction(5, 6) + Fraction(3, 8))),
    ("math_linear_eq_a", f"{(20 - 5) / 3:g}"),
    ("math_linear_eq_b", f"{(21 + 7) / 4:g}"),
    ("math_percent_change_a", f"{round(100 - 100 * 1.2 * 0.8)}% lower"),
    ("math_percent_change_b", f"{round(100 - 100 * 1.1 * 0.9)}% lower"),
    ("math_exponent_rules_a", f"x^{3 + 4}"),
    ("math_exponent_rules_b", f"2^{5 + 3}"),
]


@pytest.mark.parametrize(("item_id", "expected"), KEYS, ids=[k[0] for k in KEYS])
def test_keyed_answers_are_right(shipped: McqTaskSet, item_id: str, expected: str) -> None:
    assert _opt(shipped, item_id) == expected


def test_misconceptions_map_onto_task(shipped: McqTaskSet) -> None:
    task = shipped.build("phys_free_fall_b", np.random.default_rng(0))
    (mis,) = task.misconceptions
    assert mis.id == "heavier_falls_faster" and mis.kc == "physics"
    assert task.pretest[0].misconception_answers == {"heavier_falls_faster": "A"}
    assert "Moon" in mis.counterexample and mis.negation.startswith("No")


def test_build_is_deterministic(shipped: McqTaskSet) -> None:
    for task_id in shipped.task_ids()[:6]:
        a = shipped.build(task_id, np.random.default_rng(3)).model_dump_json()
        b = McqTaskSet().build(task_id, np.random.default_rng(3)).model_dump_json()
        assert a == b


def test_unknown_task_id(shipped: McqTaskSet) -> None:
    with pytest.raises(ConfigError, match="Did you mean 'phys_inertia_a'"):
        shipped.build("phys_inertai_a", np.random.default_rng(0))


# --------------------------------------------------------------------------------------------- external banks


def test_external_bank_tasks(tmp_path: Path) -> None:
    path = write_json(tmp_path / "eduq.json", EDUQ_RECORDS + [
        {"id": "x1", "question": "Which painter made Guernica?", "options": ["Picasso", "Monet", "Dali"],
         "answer": "A", "category": "Art History"}])
    bank = get_task_set("mcq", path=str(path))
    assert bank.task_ids() == ["mmlu_pro_70", "gpqa_diamond_1", "mmlu_pro_9", "x1"]
    expected = {  # id -> (kc id, discipline, difficulty)
        "mmlu_pro_70": ("biology", "biology", 0.0),
        "gpqa_diamond_1": ("physics", "physics", 0.5),
        "mmlu_pro_9": ("computer_science", "technology", 0.7),
        "x1": ("art_history", "language", 0.5),
    }
    for task_id, (kc_id, discipline, difficulty) in expected.items():
        task = bank.build(task_id, np.random.default_rng(0))
        kc = task.knowledge_components[0]
        assert (kc.id, kc.discipline, kc.difficulty) == (kc_id, discipline, difficulty)
        assert task.posttest == task.pretest  # no twins in EducationQ's data: same-item post-test
        assert task.grade == 12
    art = bank.build("x1", np.random.default_rng(0))
    assert art.knowledge_components[0].name == "Art History"  # unknown subject keeps its name, 'other' material
    assert art.pretest[0].subject == "Art History"
    gpqa = bank.build("gpqa_diamond_1", np.random.default_rng(0))
    assert gpqa.solution == ("Force is measured in newtons.", "1 N = 1 kg m/s^2.", "So the answer is: newton.")


@pytest.mark.parametrize(
    ("category", "kc_id"),
    [("Computer Science", "computer_science"), ("  law ", "law"), ("earth science", "earth_science")],
    ids=["title-case", "padded", "alias"],
)
def test_snake_case(category: str, kc_id: str) -> None:
    assert snake_case(category) == kc_id


def test_alias_uses_geography_material(tmp_path: Path) -> None:
    rec = {"id": "e1", "question": "What drives plate motion?", "options": ["Mantle convection", "Tides"],
           "answer": "A", "category": "earth science"}
    bank = McqTaskSet(str(write_json(tmp_path / "e.json", [rec])))
    kc = bank.build("e1", np.random.default_rng(0)).knowledge_components[0]
    assert (kc.id, kc.discipline, kc.name) == ("earth_science", "geography", "Geography and earth science")


def test_shipped_bank_spreads_its_answer_letters():
    """A student who always picks one letter must not score well: no letter keys more than 30% of the items."""
    from collections import Counter

    records = load_bank(DEFAULT_BANK)
    counts = Counter(r.answer for r in records)
    assert max(counts.values()) <= 0.3 * len(records), counts
