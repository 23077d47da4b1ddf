"""KMP-Skills kind: units, strict reply parsing, the metric formulas, built-in tutors offline, judged and
fail-closed generation/reason metrics through the loopback server, and the CLI end to end."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.chat_server import ChatServer
from tests.item_fixtures import ScriptedTutor, garbage_responder, loopback_judge, suite, verdict_responder
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.tasks.math import FAMILIES, erroneous_solution
from tutorzoo.eval.kinds.builtin_answers import answer_item
from tutorzoo.eval.kinds.item_common import parse_answer_line
from tutorzoo.eval.kinds.kmp_skills import (
    KmpSkillsKind,
    error_instance,
    f1_score,
    mcc,
    mr_score,
    parse_detection,
    parse_generated,
)
from tutorzoo.eval.suite import load_suite

KIND = KmpSkillsKind()
SMALL = suite("small", tasks=["fraction_addition", "two_step_equation", "travel_time"], seeds=1)


def run(tutor_name: str, units, judge=None, tutor=None) -> list[dict]:
    return list(KIND.run(units, tutor or make_tutor(tutor_name), tutor_name, judge, 1))


def values(records, judged=False, tutor=None):
    groups = KIND.metrics(records, judged)["groups"]
    return groups[tutor or next(iter(groups))]["metrics"]


def test_units_are_deterministic_and_cover_the_three_skills():
    s = load_suite("kmp-skills")
    a, b = KIND.units(s), KIND.units(s)
    assert [u.key() for u in a] == [u.key() for u in b]
    assert len({u.key() for u in a}) == len(a) == 15 * 2 * (1 + 2 + 4)
    assert {u.skill for u in a} == {"followup", "error", "generation"}
    assert KIND.unit_from_dict(a[5].model_dump()) == a[5]


def test_bad_settings_name_the_field():
    with pytest.raises(ConfigError, match="items.seeds"):
        KIND.units(suite("x", seeds="many"))
    with pytest.raises(ConfigError, match="unknown math families"):
        KIND.units(suite("x", tasks=["fraction_adition"]))


def test_error_instances_are_the_curriculums_erroneous_solutions():
    for fam in FAMILIES:
        for seed in range(3):
            x = error_instance(fam.id, seed, "erroneous")
            problem, index = erroneous_solution(fam.id, np.random.default_rng(seed))
            assert x["steps"] == list(problem.solution) and x["first_wrong"] == index
            assert x["shown_answer"] == problem.answer != x["answer"]
            assert x["misconception"] in fam.misconceptions
            ok = error_instance(fam.id, seed, "correct")
            assert ok["first_wrong"] is None and ok["shown_answer"] == ok["answer"] == x["answer"]


def test_metric_formulas_on_hand_computed_cases():
    # tp=1 fp=1 fn=1 tn=1
    assert f1_score([True, True, False, False], [True, False, True, False]) == pytest.approx(0.5)
    assert mcc([True, True, False, False], [True, False, True, False]) == pytest.approx(0.0)
    # tp=2 fn=1 tn=1 fp=0: F1 = 4/5, MCC = (2*1 - 0*1)/sqrt(2*3*1*2)
    assert f1_score([True, True, True, False], [True, True, False, False]) == pytest.approx(0.8)
    assert mcc([True, True, True, False], [True, True, False, False]) == pytest.approx(2 / math.sqrt(12))
    assert mcc([True, False], [True, True]) == 0.0  # an empty margin
    assert mr_score(0.5, 0.4, 0.2) == pytest.approx(0.2 * 0.5 + 0.3 * 0.4 + 0.5 * 0.2)
    assert mr_score(-0.3, 1.0, 0.0) == pytest.approx(0.3)  # max(0, MCC)


def test_metrics_from_hand_built_records():
    def rec(variant, pred_error, step_right=False, reason_right=None, corr=True):
        has = variant == "erroneous"
        return {"tutor": "t", "unit": {"skill": "error", "variant": variant}, "failures": [], "judgments": [],
                "grades": {"has_error": has, "pred_error": pred_error, "step_right": step_right,
                           "reason_right": reason_right if has else None, "correction_right": corr}}

    records = [rec("erroneous", True, True, True), rec("erroneous", True, True, False),
               rec("erroneous", False, reason_right=False, corr=False), rec("correct", False), rec("correct", True)]
    m = values(records)
    # errors detected: truth [T,T,T,F,F], pred [T,T,F,F,T]: tp=2 fn=1 fp=1 tn=1
    assert m["detection_F1"]["mean"] == pytest.approx(4 / 6)
    expected_mcc = (2 * 1 - 1 * 1) / math.sqrt(3 * 3 * 2 * 2)
    assert m["detection_MCC"]["mean"] == pytest.approx(expected_mcc)
    assert m["Acc_step"]["mean"] == pytest.approx(2 / 3)
    assert m["Acc_reason"]["mean"] == pytest.approx(1 / 3)
    assert m["MR_Score"]["mean"] == pytest.approx(0.2 * expected_mcc + 0.3 * 2 / 3 + 0.5 / 3)
    assert m["correction_acc"]["mean"] == pytest.approx(4 / 5)
    # a free-text reason nobody judged: Acc_reason and MR-Score are not computed, never guessed
    records[0]["grades"]["reason_right"] = None
    m = values(records)
    assert m["Acc_reason"]["mean"] is None and "need a judge" in m["Acc_reason"]["not_computed"]
    assert m["MR_Score"]["mean"] is None and m["Acc_step"]["mean"] == pytest.approx(2 / 3)


def test_strict_reply_parsing():
    assert parse_answer_line("Step 1: ...\nAnswer: 13/24") == ("13/24", None)
    assert parse_answer_line("**Answer:** 0.75.")[0] == "0.75"
    assert parse_answer_line("The answer is 3/4")[0] is None  # no "Answer:" line
    assert parse_answer_line("Answer: 3/4 or 0.75")[0] is None  # not one number
    assert parse_answer_line(None)[1] == "no reply"
    ids = ["a_mis", "b_mis"]
    assert parse_detection("ok\nVerdict: correct", 3, ids)["verdict"] == "correct"
    d = parse_detection("Verdict: incorrect\nFirst error step: 2\nReason: b_mis", 3, ids)
    assert (d["verdict"], d["step"], d["reason_id"], d["format_error"]) == ("incorrect", 2, "b_mis", None)
    d = parse_detection("Verdict: Incorrect\nFirst error step: Step 9\nReason: other: forgot to carry", 3, ids)
    assert d["step"] is None and d["reason_text"] == "forgot to carry" and "1..3" in d["format_error"]
    assert parse_detection("It looks fine to me.", 3, ids)["format_error"].startswith("no line")
    g = parse_generated("Problem: A car goes 120 km in 2 h. Speed?\nSolution:\nStep 1: 120 / 2 = 60.\nAnswer: 60")
    assert g["format_error"] is None and g["answer"] == "60" and g["problem"].startswith("A car")
    assert parse_generated("Here is a nice problem about cars.")["format_error"]


def test_builtin_tutors_offline_reference_beats_random():
    units = KIND.units(SMALL)
    records = run("socratic", units) + run("lecturer", units) + run("random", units)
    metrics = KIND.metrics(records, judged=False)["groups"]
    exact = ("followup_acc_t1", "followup_acc_t2", "followup_acc_t3", "detection_F1", "correction_acc", "MR_Score",
             "Acc_step")
    for name in ("socratic", "lecturer"):
        m = metrics[name]["metrics"]
        assert all(m[k]["mean"] == 1.0 for k in exact), name
        assert m["format_failure_rate"]["mean"] == 0.0 and m["gen_format_ok"]["mean"] == 1.0
        for k in exact:
            assert m[k]["mean"] > metrics["random"]["metrics"][k]["mean"] + 0.3, k
    for name in metrics:  # judge-only metrics are not computed offline
        m = metrics[name]["metrics"]
        assert m["gen_pass_rate"]["mean"] is None and m["gen_pass_rate"]["not_computed"].startswith("no judge")
    r = next(x for x in records if x["tutor"] == "socratic" and x["unit"]["skill"] == "followup")
    assert r["prompt"] and r["response"] and len(r["turns"]) == 3 and r["judgments"] == []
    # each unit's record does not depend on the batch it ran in
    assert run("random", units[3:5]) == [x for x in records if x["tutor"] == "random"][3:5]


def test_judged_generation_and_free_text_reasons_through_the_loopback_server():
    units = [u for u in KIND.units(SMALL) if u.skill in ("generation", "error")][:8]
    with ChatServer(responder=verdict_responder(binary=True)) as server:
        records = run("socratic", units, judge=loopback_judge(server))
        assert server.request_count == sum(u.skill == "generation" for u in units)
    m = values(records, judged=True)
    assert m["gen_pass_rate"]["mean"] == 1.0
    assert m["gen_construction"]["n"] == sum(u.skill == "generation" for u in units)
    assert m["judge_failure_rate"]["mean"] == 0.0
    gen = next(r for r in records if r["unit"]["skill"] == "generation")
    assert gen["judgments"][0]["rubric"] == "kmp_problem_generation" and gen["judgments"][0]["ok"]

    # a tutor that gives its reason in free text: judged where the step is right, not computed without a judge
    class FreeText:
        name = "free"

        def __init__(self):
            self.inner = make_tutor("socratic")

        def reset(self, seed=None):
            self.inner.reset(seed)

        def act(self, obs, info):
            text = answer_item(self.inner, obs, info)  # the socratic reference's answer to the item
            return text.replace("Reason: ", "Reason: other: the student used the wrong rule; was ")

    errs = [u for u in KIND.units(SMALL) if u.skill == "error"]
    offline = run("free", errs, tutor=FreeText())
    assert values(offline)["Acc_reason"]["mean"] is None
    with ChatServer(responder=verdict_responder(binary=True)) as server:
        judged = run("free", errs, judge=loopback_judge(server), tutor=FreeText())
    m = values(judged, judged=True)
    assert m["Acc_reason"]["mean"] == 1.0 and m["MR_Score"]["mean"] == 1.0
    assert any(j["rubric"] == "kmp_error_reason" for r in judged for j in r["judgments"])


def test_a_garbage_judge_fails_closed_and_is_counted():
    units = [u for u in KIND.units(SMALL) if u.skill == "generation"][:3]
    with ChatServer(responder=garbage_responder) as server:
        records = run("socratic", units, judge=loopback_judge(server))
    m = values(records, judged=True)
    assert m["gen_pass_rate"]["mean"] == 0.0 and m["judge_failure_rate"]["mean"] == 1.0
    assert all(any(f["agent"] == "judge" for f in r["failures"]) for r in records)
    assert all(not r["judgments"][0]["ok"] for r in records)


def test_unparsable_and_failing_tutors_are_counted_never_raised():
    units = KIND.units(SMALL)[:7]  # one instance: follow-up, two error units, four generations
    records = run("mumbler", units, tutor=ScriptedTutor("Hmm, hard to say."))
    m = values(records)
    assert m["followup_acc_t1"]["mean"] == 0.0 and m["correction_acc"]["mean"] == 0.0
    assert m["format_failure_rate"]["mean"] == 1.0 and m["gen_format_ok"]["mean"] == 0.0
    assert m["detection_F1"]["mean"] == 0.0  # unreadable verdicts count as the wrong verdict
    crashing = ScriptedTutor(error=RuntimeError("backend down"))
    records = run("crash", units, tutor=crashing)
    assert values(records)["tutor_failure_rate"]["mean"] == 1.0
    assert all(r["failures"][0]["agent"] == "tutor" and "backend down" in r["failures"][0]["error"] for r in records)
    # a failed first turn ends the conversation: the follow-ups are not asked
    assert len(records[0]["turns"]) == 1
    info = crashing.infos[0]
    assert info["messages"][0]["role"] == "system" and info["item"]["kind"] == "followup_solve"
    assert "answer" not in info["item"] and info["task"]["id"] == "fraction_addition"


def test_adversarial_tutors_do_not_crash_on_items():
    from tutorzoo.agents.tutor.adversarial import ADVERSARIAL_TUTORS

    units = KIND.units(SMALL)[:7]
    for name in ADVERSARIAL_TUTORS:
        records = run(name, units)
        assert len(records) == 7 and not any(f["agent"] == "tutor" for r in records for f in r["failures"]), name


def test_cli_end_to_end(tmp_path):
    from tutorzoo.eval.cli import main

    out = tmp_path / "run"
    assert main(["eval", "--suite", "kmp-skills", "--limit", "14", "--workers", "1", "--out", str(out)]) == 0
    lines = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(lines) == 14 * 3 and {r["tutor"] for r in lines} == {"socratic", "lecturer", "random"}
    metrics = json.loads((out / "metrics.json").read_text())
    assert "followup_acc_t1" in json.dumps(metrics) and "not_computed" in json.dumps(metrics)
