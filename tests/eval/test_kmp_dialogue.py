"""KMP-Dialogue kind: reference dialogues and their cuts, the SID -> principle mapping, the accuracy formulas,
the built-in tutors taking over a session offline, judged win/tie/lose through the loopback server, and the
fail-closed paths."""

from __future__ import annotations

import json

import pytest

from tests.chat_server import ChatServer
from tests.item_fixtures import (
    ScriptedTutor,
    asked_criteria,
    garbage_responder,
    loopback_judge,
    suite,
    verdict_responder,
)
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.kinds.kmp_dialogue import (
    ALL_CRITERIA,
    GENERAL_CRITERIA,
    PRINCIPLE_CRITERIA,
    PRINCIPLES,
    KmpDialogueKind,
    criteria_for,
    overall_acc,
    principles_of,
)
from tutorzoo.eval.suite import load_suite

KIND = KmpDialogueKind()
SMALL = suite("small", tasks=["fraction_addition", "two_step_equation"], personas=["weak_knowledge_partly_wrong"],
              cuts_per_dialogue=3)


@pytest.fixture(scope="module")
def units():
    return KIND.units(SMALL)


def run(name, units, judge=None, tutor=None):
    return list(KIND.run(units, tutor or make_tutor(name), name, judge, 1))


def group(records, judged):
    return next(iter(KIND.metrics(records, judged)["groups"].values()))["metrics"]


def test_units_are_deterministic_cuts_of_socratic_reference_dialogues(units):
    again = KIND.units(SMALL)
    assert [u.key() for u in units] == [u.key() for u in again] and len(units) == 6
    assert len({u.key() for u in units}) == 6
    for u in units:
        assert u.history and u.history[-1]["speaker"] == "student"  # cut just before a tutor turn
        assert sum(h["speaker"] == "tutor" for h in u.history) == u.cut - 1
        assert 1 <= len(u.principles) <= 2 and set(u.principles) <= set(PRINCIPLES)
        assert u.principles == principles_of(u.annotation)
        assert u.annotation["teacher_intent"] != "summarize" and "[END]" not in u.reference
        assert all(p in u.system_prompt for p in u.principles) and "Student profile" in u.system_prompt
        assert KIND.unit_from_dict(u.model_dump()) == u
    assert len(ALL_CRITERIA) == 22 and len(set(ALL_CRITERIA)) == 22
    assert len(load_suite("kmp-dialogue").units()) == 60


def test_bad_settings_name_the_field():
    with pytest.raises(ConfigError, match="items.cuts_per_dialogue"):
        KIND.units(suite("x", cuts_per_dialogue=0))
    with pytest.raises(ConfigError, match="persona"):
        KIND.units(suite("x", personas=["nobody_at_all"]))


def test_principles_from_sid_annotations():
    def p(intent, strategy=None, level="L2", prev=None):
        return principles_of({"teacher_intent": intent, "teaching_strategy": strategy,
                              "teacher_guidance_level": level, "previous_student_state": prev})

    assert p("trigger_transfer", level="L3") == ["Challenge"]
    assert p("guide_reasoning", "break_down") == ["Modelling", "Questioning"]
    assert p("introduce_concept") == ["Explanation"]
    assert p("guide_reasoning", "hint", prev="incorrect") == ["Practice", "Feedback"]
    assert p("guide_reasoning", "scenario_question", "L3") == ["Practice", "Challenge"]
    assert p("check_understanding", "follow_up_question") == ["Questioning"]
    assert p("guide_reasoning", "encourage") == ["Feedback", "Questioning"]
    assert criteria_for(["Feedback", "Challenge"]) == [*GENERAL_CRITERIA, *PRINCIPLE_CRITERIA["Challenge"],
                                                       *PRINCIPLE_CRITERIA["Feedback"], "overall"]


def test_overall_acc_on_a_hand_computed_case():
    win_all = {c: "win" for c in criteria_for(["Questioning"])}
    mixed = {**{c: "lose" for c in GENERAL_CRITERIA}, "general_coherence": "win",
             **dict(zip(PRINCIPLE_CRITERIA["Feedback"], ("win", "tie", "lose"), strict=True)), "overall": "tie"}
    # General: coherence 2/2, the other three 1/2 -> (1 + .5 + .5 + .5)/4 = 0.625
    # Questioning: 1.0 (one unit); Feedback: (1 + 0 + 0)/3 = 1/3 -> mean 2/3; Overall = (0.625 + 2/3)/2
    assert overall_acc([win_all, mixed]) == pytest.approx((0.625 + (1 + 1 / 3) / 2) / 2)
    assert overall_acc([]) is None
    records = [{"tutor": "t", "unit": {"principles": ["Questioning"]}, "failures": [],
                "judgments": [{"rubric": "kmp_dialogue", "values": win_all}]},
               {"tutor": "t", "unit": {"principles": ["Feedback"]}, "failures": [],
                "judgments": [{"rubric": "kmp_dialogue", "values": mixed}]}]
    m = group(records, judged=True)
    assert m["Overall_Acc"]["mean"] == pytest.approx((0.625 + (1 + 1 / 3) / 2) / 2)
    assert m["General_Acc"]["mean"] == pytest.approx(0.625)
    assert m["Feedback_Acc"]["mean"] == pytest.approx(1 / 3) and m["Challenge_Acc"]["mean"] is None
    assert m["feedback_tone_lose"]["mean"] == 1.0 and m["overall_tie"]["mean"] == 0.5


def test_builtin_tutors_take_over_offline(units):
    records = {name: run(name, units) for name in ("socratic", "lecturer", "random")}
    for name, recs in records.items():
        assert all(not r["failures"] and isinstance(r["response"], str) and r["response"] for r in recs), name
        m = group(recs, judged=False)
        assert m["Overall_Acc"]["mean"] is None and m["Overall_Acc"]["not_computed"].startswith("no judge")
        assert m["General_Acc"]["mean"] is None and m["general_coherence_win"]["mean"] is None
        assert m["reply_words"]["mean"] > 3 and m["tutor_failure_rate"]["mean"] == 0.0
    assert records["lecturer"][0]["response"].startswith("Let me explain")  # its own first lecture turn
    r = records["socratic"][0]
    assert r["prompt"].startswith("The problem the student is working on") and "Student:" in r["prompt"]
    assert run("random", units[1:3]) == records["random"][1:3]  # per unit, not per batch


def test_a_diverged_replay_is_a_recorded_failure(units):
    tampered = units[0].model_copy(update={"history": [{**units[0].history[0], "text": "something else"},
                                                       *units[0].history[1:]]})
    [rec] = run("socratic", [tampered])
    assert rec["response"] is None and "differs from the unit's history" in rec["failures"][0]["error"]


def test_judged_through_the_loopback_server(units):
    seen = []

    def responder(body, index):
        seen.append(list(asked_criteria(body)))
        return verdict_responder("win")(body, index)

    with ChatServer(responder=responder) as server:
        records = run("socratic", units, judge=loopback_judge(server))
    assert sorted(map(tuple, seen)) == sorted(tuple(criteria_for(u.principles)) for u in units)
    m = group(records, judged=True)
    assert m["Overall_Acc"]["mean"] == 1.0 and m["General_Acc"]["mean"] == 1.0
    assert m["judge_failure_rate"]["mean"] == 0.0 and m["overall_judgement_win"]["mean"] == 1.0
    assert all(r["grades"]["outcomes"] == {c: "win" for c in criteria_for(r["unit"]["principles"])} for r in records)


def test_garbage_judge_and_failed_tutor_lose_every_criterion(units):
    with ChatServer(responder=garbage_responder) as server:
        records = run("socratic", units[:3], judge=loopback_judge(server))
    m = group(records, judged=True)
    assert m["Overall_Acc"]["mean"] == 0.0 and m["general_accuracy_lose"]["mean"] == 1.0
    assert m["judge_failure_rate"]["mean"] == 1.0
    with ChatServer(responder=verdict_responder("win")) as server:
        records = run("crash", units[:3], judge=loopback_judge(server), tutor=ScriptedTutor(error=ValueError("no")))
        assert server.request_count == 0  # nothing to judge
    m = group(records, judged=True)
    assert m["Overall_Acc"]["mean"] == 0.0 and m["tutor_failure_rate"]["mean"] == 1.0


def test_cli_end_to_end(tmp_path):
    from tutorzoo.eval.cli import main

    out = tmp_path / "run"
    assert main(["eval", "--suite", "kmp-dialogue", "--limit", "4", "--workers", "1", "--out", str(out)]) == 0
    lines = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(lines) == 12 and all(r["response"] for r in lines)
    assert '"Overall_Acc"' in (out / "metrics.json").read_text()
