"""Dr.Academy kind: contexts, the strict JSON format, majority of 3 judge samples, criteria per context type,
built-in tutors offline, judged and fail-closed paths through the loopback server, and the CLI."""

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
from tutorzoo.eval.kinds.dr_academy import (
    CRITERIA,
    INTERDISCIPLINARY_CRITERIA,
    DrAcademyKind,
    majority,
    parse_questions,
)
from tutorzoo.eval.suite import load_suite

KIND = DrAcademyKind()
SMALL = suite("small", lessons=["water_rocket", "solar_oven"], interdisciplinary=True, math=["fraction_addition"])
LEVELS = ("remember", "understand", "apply", "analyze", "evaluate", "create")


def run(name, units, judge=None, tutor=None):
    return list(KIND.run(units, tutor or make_tutor(name), name, judge, 1))


def group(records, judged):
    return next(iter(KIND.metrics(records, judged)["groups"].values()))["metrics"]


def test_units_are_deterministic_and_typed():
    units = KIND.units(SMALL)
    assert [u.key() for u in units] == [u.key() for u in KIND.units(SMALL)]
    assert [u.context_type for u in units] == ["lesson", "interdisciplinary", "lesson", "interdisciplinary", "math"]
    inter = units[1]
    assert len(set(inter.disciplines)) == 2 and inter.criteria() == INTERDISCIPLINARY_CRITERIA
    assert units[0].criteria() == CRITERIA and "Newton" in units[0].context
    full = load_suite("dr-academy").units()
    assert len(full) == len({u.key() for u in full}) == 48 + 48 + 15
    with pytest.raises(ConfigError, match="unknown STEM lessons"):
        KIND.units(suite("x", lessons=["water_rockets"]))


def test_majority_of_three_and_the_json_format():
    assert majority([True, True, False]) and not majority([True, False, False])
    assert not majority([True, False]) and not majority([])  # a tie or nothing: fail
    good = json.dumps({lvl: [f"{lvl} q{i}?" for i in range(3)] for lvl in LEVELS})
    qs, why = parse_questions(good)
    assert why is None and sum(map(len, qs.values())) == 18
    assert parse_questions(f"```json\n{good}\n```")[1] is None
    assert parse_questions(f"Here you go: {good}") == ({}, parse_questions(f"Here you go: {good}")[1])
    assert parse_questions(f"Here you go: {good}")[1].startswith("invalid JSON")
    short = json.loads(good)
    short["create"] = ["only one", "only one", ""]
    qs, why = parse_questions(json.dumps(short))
    assert len(qs["create"]) == 1 and "create: 1 usable of 3" in why and sum(map(len, qs.values())) == 16


def test_builtin_tutors_offline():
    units = KIND.units(SMALL)
    for name in ("socratic", "lecturer", "random"):
        records = run(name, units)
        m = group(records, judged=False)
        assert m["format_valid"]["mean"] >= 0.8 and m["question_yield"]["mean"] > 0.9, name
        for c in ("Consistency", "Relevance", "Coverage", "Representativeness", "Average"):
            assert m[c]["mean"] is None and m[c]["not_computed"].startswith("no judge")
    socratic = run("socratic", units[:1])[0]
    water = json.loads(socratic["response"])
    assert water["remember"][0] == "What does Newton's third law say about forces?"  # the lesson's bank question


def test_judged_majority_of_three_with_criteria_per_context_type():
    units = KIND.units(SMALL)[:2]  # a lesson (4 criteria) and an interdisciplinary context (2)
    asked = []

    def responder(body, index):
        criteria = asked_criteria(body)
        asked.append(tuple(criteria))
        # relevance passes on 2 of the 3 samples, consistency on 1 of 3 (seeded samples differ by seed)
        out = {c: True for c in criteria}
        if "consistency" in out:
            out["consistency"] = body["seed"] % 3 == 0
        if "relevance" in out:
            out["relevance"] = body["seed"] % 3 != 0
        return json.dumps(out)

    with ChatServer(responder=responder) as server:
        records = run("socratic", units, judge=loopback_judge(server))
        assert server.request_count == 2 * 18 * 3  # every question, 3 samples each
    assert set(asked) == {CRITERIA, INTERDISCIPLINARY_CRITERIA}
    lesson, inter = records
    assert lesson["grades"]["scores"]["relevance"] == 1.0 and lesson["grades"]["scores"]["consistency"] == 0.0
    assert set(inter["grades"]["scores"]) == set(INTERDISCIPLINARY_CRITERIA)
    m = group(records, judged=True)
    assert m["Relevance"]["n"] == 2 and m["Coverage"]["n"] == 1 and m["Consistency"]["mean"] == 0.0
    assert m["Average"]["mean"] == pytest.approx(((0 + 1 + 1 + 1) / 4 + 1.0) / 2)
    assert all(j["n_samples"] == 3 for j in lesson["judgments"])


def test_garbage_judge_and_unparsable_tutor_fail_closed():
    units = KIND.units(SMALL)[:1]
    with ChatServer(responder=garbage_responder) as server:
        records = run("socratic", units, judge=loopback_judge(server, samples=1))
    m = group(records, judged=True)
    assert m["Average"]["mean"] == 0.0 and m["judge_failure_rate"]["mean"] == 1.0
    with ChatServer(responder=verdict_responder(binary=True)) as server:
        records = run("prose", units, judge=loopback_judge(server, samples=1), tutor=ScriptedTutor("Good questions!"))
        assert server.request_count == 0  # no question to judge
    m = group(records, judged=True)
    assert m["format_valid"]["mean"] == 0.0 and m["format_failure_rate"]["mean"] == 1.0
    assert m["Relevance"]["mean"] == 0.0  # 18 missing questions fail


def test_cli_end_to_end(tmp_path):
    from tutorzoo.eval.cli import main

    out = tmp_path / "run"
    assert main(["eval", "--suite", "dr-academy", "--limit", "5", "--workers", "1", "--out", str(out)]) == 0
    lines = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(lines) == 15 and all(r["grades"]["format_ok"] for r in lines if r["tutor"] != "random")
