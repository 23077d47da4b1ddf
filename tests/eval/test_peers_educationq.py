"""EducationQ's interaction logs scored through ``tutorzoo score`` (same-item metrics only), its question files under
the ``educationq`` protocol (refused in one line without twins), and the paper's numbers on the full log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.peer_files import peer_file
from tutorzoo.envs.config import make_config
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.tasks.mcq import McqTaskSet, dump_bank, load_bank
from tutorzoo.eval.score import main as score_main
from tutorzoo.eval.suite import load_suite

DATA = Path(__file__).resolve().parents[1] / "data" / "peers" / "educationq"
LLAMA = DATA / "GPQA-diamond_Teacher-llama31-70b-instruct_excerpt.json"
MINI = DATA / "GPQA-diamond_Teacher-gpt-4o-mini_excerpt.json"
LOG_DIR = "src/data/output/EduQ-Bench_Student-llama31-70b-instruct/GPQA-diamond/interactions_results"
BANK = "src/data/dataset/educationq/educationq_gpqa_diamond.json"


def _score(paths: list[Path], out: Path, *extra: str) -> dict:
    assert score_main([*map(str, paths), "--out", str(out), "--resamples", "0", *extra]) == 0
    return json.loads((out / "metrics.json").read_text())


def _metrics(result: dict, tutor: str) -> dict:
    return {k: v["mean"] for k, v in result["aggregate"]["groups"][tutor]["metrics"].items()}


def _their_accuracy(path: Path, phase: str) -> float:
    """EducationQ's own per-item scores, written into the log by its code."""
    (teacher,) = json.loads(path.read_text()).values()
    items = [item for name, student in teacher.items() if name != "config"
             for key, item in student.items() if key != "config"]
    return 100 * sum(item[phase]["scores"]["overall_accuracy"] for item in items) / len(items)


@pytest.mark.parametrize("path", [LLAMA, MINI], ids=["llama31-70b", "gpt-4o-mini"])
def test_excerpt_matches_educationqs_own_scores(path: Path, tmp_path: Path) -> None:
    result = _score([path], tmp_path)
    assert result["data_format"] == "educationq_log" and result["n_records"] == 4
    (tutor,) = result["aggregate"]["groups"]
    m = _metrics(result, tutor)
    assert m["ACC_pre_same"] == pytest.approx(_their_accuracy(path, "pre_test"))
    assert m["ACC_post_same"] == pytest.approx(_their_accuracy(path, "post_test"))
    assert m["ALG_same"] == pytest.approx(_their_accuracy(path, "post_test") - _their_accuracy(path, "pre_test"))


def test_excerpt_gains_are_same_item_only(tmp_path: Path) -> None:
    result = _score([LLAMA, MINI], tmp_path)
    llama, mini = _metrics(result, "llama31-70b-instruct"), _metrics(result, "gpt-4o-mini")
    # Pairs by hand from the excerpt: llama F->T, F->T, T->F, T->T; gpt-4o-mini F->F, F->T, T->T, T->T.
    assert (llama["ALG_same"], llama["PNIR_same"], llama["UIC_same"]) == pytest.approx((25.0, 0.5, 1.0))
    assert (mini["ALG_same"], mini["PNIR_same"], mini["UIC_same"]) == pytest.approx((25.0, 0.0, 0.0))
    # Per-subject ALG of llama: Biology 0, Chemistry 0, Physics 100 -> population std 47.14.
    assert llama["CSS_same"] == pytest.approx(47.1404, abs=1e-3)
    assert llama["ALG"] is None and llama["UIC"] is None  # no isomorphic gain is made up
    assert "same-item" in " ".join(result["notes"])
    assert "SID" in result["not_computed"] and llama["TotalScore"] is None


def test_excerpt_keeps_every_field(tmp_path: Path) -> None:
    result = _score([LLAMA], tmp_path, "--with-meta")
    entry = next(e for e in result["per_episode"] if e["dialogue_id"] == "rec4JrWy7Il8ho5vk")
    (teacher,) = json.loads(LLAMA.read_text()).values()
    source = teacher["Student-llama31-70b-instruct"]["rec4JrWy7Il8ho5vk"]
    assert entry["meta"]["item"] == source and entry["meta"]["teacher_config"] == teacher["config"]


def test_full_log_reproduces_the_paper(tmp_path: Path) -> None:
    """EducationQ paper: Llama-3.1-70B teaching Llama-3.1-70B on GPQA-Diamond, pre-test 46.97, ALG 12.63."""
    name = "GPQA-diamond_Teacher-llama31-70b-instruct_Student-llama31-70b-intruct_results_1.0.0_0420.json"
    path = peer_file("SunriserFuture/EducationQ", f"{LOG_DIR}/{name}", tmp_path)
    m = _metrics(_score([path], tmp_path / "out"), "llama31-70b-instruct")
    assert round(m["ACC_pre_same"], 2) == 46.97
    assert round(m["ALG_same"], 2) == 12.63


# ---------------------------------------------------------------- the protocol on EducationQ's question file


@pytest.fixture
def lonely_bank(tmp_path: Path) -> Path:
    """Three GPQA-style items without twins, with GPQA's subdomain (a field we have no column for)."""
    items = [{"id": f"gpqa_{i}", "source": "gpqa-diamond", "question": f"Question {i}?",
              "options": ["a", "b", "c", "d"], "answer": "A", "answer_index": 0, "category": "physics",
              "difficulty": "", "subdomain": "Physics (general)", "explanation": "Because."} for i in range(3)]
    path = tmp_path / "gpqa.json"
    path.write_text(json.dumps(items))
    return path


@pytest.mark.parametrize("posttest", ["isomorphic", "both"])
def test_bank_without_twins_is_refused_in_one_line(lonely_bank: Path, posttest: str) -> None:
    with pytest.raises(ConfigError) as err:
        make_config(task_set="mcq", task_path=str(lonely_bank), posttest=posttest)
    message = str(err.value)
    assert "\n" not in message and "posttest: same" in message and "3 of 3" in message


def test_bank_without_twins_runs_same_item(lonely_bank: Path) -> None:
    assert make_config(task_set="mcq", task_path=str(lonely_bank), posttest="same").posttest == "same"


def test_suite_on_a_bank_without_twins_stops_at_the_start(lonely_bank: Path, tmp_path: Path) -> None:
    suite = tmp_path / "eduq.yaml"
    suite.write_text(f"""name: eduq-gpqa
version: 1
description: EducationQ protocol on a bank without twins
tutors: [socratic]
blocks:
  - task_set: mcq
    task_path: {lonely_bank}
    tasks: all
    personas: {{names: [all_round_partly_wrong]}}
    seeds: 1
    protocol: {{max_turns: 5, opener: tutor, posttest: both}}
""")
    with pytest.raises(ConfigError, match="posttest: same"):
        load_suite(str(suite)).block_specs()


def test_subdomain_and_difficulty_are_kept(lonely_bank: Path, tmp_path: Path) -> None:
    records = load_bank(lonely_bank)
    assert records[0].meta == {"subdomain": "Physics (general)"}
    dump_bank(records, tmp_path / "copy.json")
    assert json.loads((tmp_path / "copy.json").read_text())[0]["subdomain"] == "Physics (general)"
    mmlu = [{"question_id": 70, "question": "q?", "options": ["x", "y"], "answer": "A", "answer_index": 0,
             "cot_content": "", "category": "business", "src": "ori_mmlu-business_ethics", "difficulty": "-----"}]
    (tmp_path / "mmlu.json").write_text(json.dumps(mmlu))
    rec = load_bank(tmp_path / "mmlu.json")[0]
    assert rec.difficulty == "-----"
    dump_bank([rec], tmp_path / "mmlu_copy.json", format="mmlu_pro")
    assert json.loads((tmp_path / "mmlu_copy.json").read_text())[0]["difficulty"] == "-----"


def test_educationq_gpqa_file_loads_and_is_refused_or_run(tmp_path: Path) -> None:
    path = peer_file("SunriserFuture/EducationQ", BANK, tmp_path)
    bank = McqTaskSet(str(path))
    assert len(bank.task_ids()) == 198 and bank.records[0].meta["subdomain"]
    with pytest.raises(ConfigError, match="posttest: same"):
        bank.check_posttest("both")
    bank.check_posttest("same")
