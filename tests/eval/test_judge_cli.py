"""``tutorzoo judge list | calibrate`` against the loopback server, and the ``--judge`` options of ``eval``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tests.chat_server import ChatServer
from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.cli import main as tutorzoo
from tutorzoo.eval.judges import load_rubric_spec
from tutorzoo.eval.judges.calibrate import agreement_stats, load_labels, quadratic_weighted_kappa
from tutorzoo.eval.judges.cli import add_judge_args, judge_config_from_args
from tutorzoo.eval.judges.sid import CRITERIA, RUBRIC

SPEC = load_rubric_spec(RUBRIC)
EXAMPLES = load_labels(SPEC)


def gold_responder(body: dict, index: int) -> str:
    """A judge that answers every example with its gold labels (found by the transcript in the prompt)."""
    prompt = body["messages"][-1]["content"]
    [example] = [ex for ex in EXAMPLES if ex.variables["transcript"] in prompt]
    return json.dumps({**example.gold, "reason": example.rationale})


def calibrate(server: ChatServer, out: Path, *extra: str) -> dict:
    code = tutorzoo(["judge", "calibrate", "--rubric", RUBRIC, "--judge", "openai:judge-model", "--base-url",
                     server.url, "--judge-arg", "max_retries=0", "--out", str(out), *extra])
    assert code == 0
    return json.loads((out / f"calibration_{RUBRIC}.json").read_text(encoding="utf-8"))


def test_the_shipped_sid_labels_cover_the_scale():
    assert len(EXAMPLES) >= 20
    for criterion in CRITERIA:
        assert {ex.gold[criterion] for ex in EXAMPLES} == {1, 2, 3, 4, 5}, criterion
    assert all(ex.rationale for ex in EXAMPLES)


def test_calibrate_against_a_judge_that_answers_the_gold_labels(tmp_path, capsys):
    with ChatServer(responder=gold_responder) as server:
        report = calibrate(server, tmp_path, "--samples", "2", "--temperature", "0.0")
        bodies = list(server.requests)
    assert len(bodies) == 2 * len(EXAMPLES) and {b["temperature"] for b in bodies} == {0.0}
    assert report["n_examples"] == len(EXAMPLES) and report["failed_verdicts"] == 0 == report["failed_samples"]
    for criterion in CRITERIA:
        stats = report["criteria"][criterion]
        assert stats["accuracy"] == 1.0 and stats["kappa"] == pytest.approx(1.0)
        assert stats["mae"] == 0.0 and stats["pearson"] == pytest.approx(1.0)
        assert stats["kappa_kind"] == "quadratic-weighted" and stats["failed_verdicts"] == 0
    assert report["config"]["backend"] == "openai:judge-model" and report["settings"]["samples"] == 2
    printed = capsys.readouterr().out
    assert "X-SRG" in printed and "0 of 23 verdicts failed" in printed


def test_calibrate_against_a_judge_that_answers_garbage(tmp_path, capsys):
    with ChatServer(responder=lambda body, i: "Overall a solid dialogue, I would say 4/5.") as server:
        report = calibrate(server, tmp_path)
    n = len(EXAMPLES)
    assert report["failed_verdicts"] == n and report["failed_samples"] == report["samples"] == n
    for criterion in CRITERIA:
        stats = report["criteria"][criterion]
        ones = sum(ex.gold[criterion] == 1 for ex in EXAMPLES)
        assert stats["failed_verdicts"] == n
        assert stats["accuracy"] == pytest.approx(ones / n)  # every verdict fell back to the fail value 1
        assert stats["kappa"] == pytest.approx(0.0)  # a constant judge agrees no better than chance
    assert all(ex["verdict"]["errors"][0].startswith("sample 0: invalid JSON") for ex in report["examples"])
    assert f"{n} of {n} verdicts failed" in capsys.readouterr().out


def test_calibrate_with_bad_labels_names_the_file(tmp_path, capsys):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "a", "variables": {"lesson": "x", "transcript": "y"},
                                  "gold": {"X-SRG": 7, "M-RCC": 1, "X-MSR": 1, "IRA": 1, "TCF": 1}}) + "\n")
    with ChatServer(responder=gold_responder) as server:
        code = tutorzoo(["judge", "calibrate", "--rubric", RUBRIC, "--judge", "openai:m", "--base-url", server.url,
                         "--labels", str(labels), "--out", str(tmp_path)])
        assert server.request_count == 0
    assert code == 2
    out = capsys.readouterr().out.replace("\n", "")
    assert "labels.jsonl:1" in out and "out of range" in out


def test_list(capsys):
    assert tutorzoo(["judge", "list", "--json"]) == 0
    rubrics = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert list(rubrics[RUBRIC]["criteria"]) == list(CRITERIA)
    assert rubrics[RUBRIC]["temperature"] == 0.1
    assert tutorzoo(["judge", "list"]) == 0
    assert RUBRIC in capsys.readouterr().out


def _eval_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_judge_args(parser)
    return parser


def test_judge_options_of_eval():
    assert judge_config_from_args(_eval_parser().parse_args([])) is None
    args = _eval_parser().parse_args(["--judge", "openai:gpt-4o", "--judge-base-url", "http://h:8000/v1",
                                      "--judge-samples", "3", "--judge-temperature", "0.5", "--judge-arg",
                                      "aggregate=majority", "--judge-arg", "cache_dir=.cache/j", "--judge-arg",
                                      "timeout=30"])
    config = judge_config_from_args(args)
    assert config.backend == "openai:gpt-4o" and config.base_url == "http://h:8000/v1"
    assert (config.samples, config.temperature, config.aggregate) == (3, 0.5, "majority")
    assert config.cache_dir == ".cache/j" and config.backend_args == {"timeout": 30}


@pytest.mark.parametrize("argv,message", [
    (["--judge-samples", "3"], "need.*--judge"),
    (["--judge", "openai:m", "--judge-arg", "timeout"], "KEY=VALUE"),
    (["--judge", "openai:m", "--judge-arg", "api_key=sk-1"], "secret"),
    (["--judge", "claude"], "openai:<model>"),
], ids=["option_without_judge", "arg_without_value", "secret_arg", "bad_backend"])
def test_judge_option_errors(argv, message):
    with pytest.raises(ConfigError, match=message):
        judge_config_from_args(_eval_parser().parse_args(argv))


KAPPA_CASES = {
    "perfect": ([1, 3, 5, 2], [1, 3, 5, 2], 1.0),
    "constant_prediction": ([1, 3, 5, 2], [3, 3, 3, 3], 0.0),
    "off_by_one_beats_far": ([1, 2, 3, 4, 5], [2, 3, 4, 5, 5], None),
}


@pytest.mark.parametrize("gold,pred,expected", KAPPA_CASES.values(), ids=KAPPA_CASES.keys())
def test_quadratic_weighted_kappa(gold, pred, expected):
    kappa = quadratic_weighted_kappa(gold, pred, 1, 5)
    if expected is None:
        far = quadratic_weighted_kappa(gold, [5, 4, 1, 2, 1], 1, 5)
        assert 0.5 < kappa < 1.0 and far < 0 < kappa
    else:
        assert kappa == pytest.approx(expected)


def test_mean_verdicts_are_rounded_toward_the_fail_side_for_accuracy():
    criterion = SPEC.criteria["X-SRG"]
    stats = agreement_stats(criterion, [2, 4, 5], [2.5, 3.6, 4.5])
    assert stats["accuracy"] == pytest.approx(2 / 3)  # 2.5 -> 2 (toward 1), 3.6 -> 4, 4.5 -> 4
    assert stats["mae"] == pytest.approx((0.5 + 0.4 + 0.5) / 3)
