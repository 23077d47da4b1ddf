"""Rollouts, the tutor registry, suites and the ``tutorzoo`` CLI end to end."""

from __future__ import annotations

import json

import pytest

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor import BUILTIN_TUTORS, make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.records import json_form
from tutorzoo.eval.cli import main
from tutorzoo.eval.rollout import episode_seed, run_episode, run_specs
from tutorzoo.eval.suite import SUITE_DIR, load_suite


def _spec(seed: int = 0, **protocol) -> EpisodeSpec:
    return EpisodeSpec(task_set="math", persona="all_round_partly_wrong", seed=seed, protocol=protocol)


@pytest.mark.parametrize("tutor", sorted(BUILTIN_TUTORS))
def test_same_seed_same_episode_to_the_byte(tutor):
    a = run_episode(_spec(3), make_tutor(tutor), SimulatedStudent("all_round_partly_wrong"), tutor)
    b = run_episode(_spec(3), make_tutor(tutor), SimulatedStudent("all_round_partly_wrong"), tutor)
    assert json.dumps(json_form(a), sort_keys=True) == json.dumps(json_form(b), sort_keys=True)
    c = run_episode(_spec(4), make_tutor(tutor), SimulatedStudent("all_round_partly_wrong"), tutor)
    assert json.dumps(json_form(a), sort_keys=True) != json.dumps(json_form(c), sort_keys=True)


def test_import_path_tutor_works_like_a_name():
    record = run_episode(_spec(), make_tutor("tutor_fixtures:EchoTutor"), SimulatedStudent("all_round_partly_wrong"))
    assert record["n_tutor_turns"] == 8 and record["ended_by"] == "max_turns"


@pytest.mark.parametrize(
    "name,needle",
    [("socratc", "Did you mean 'socratic'"), ("tutor_fixtures:Missing", "cannot load tutor"),
     ("tutor_fixtures:NotATutor", "lacks reset")],
    ids=["typo", "missing-class", "not-a-tutor"],
)
def test_bad_tutor_names(name, needle):
    with pytest.raises(ConfigError, match=needle):
        make_tutor(name)


def test_failing_backend_is_recorded_and_the_run_goes_on():
    specs = [_spec(0), _spec(1)]
    records = list(run_specs(specs, ["tutor_fixtures:FlakyTutor", "socratic"], make_tutor, SimulatedStudent))
    assert len(records) == 4
    flaky = [r for r in records if r["tutor"] == "tutor_fixtures:FlakyTutor"]
    assert all(r["ended_by"] == "failure" for r in flaky)
    assert all("TimeoutError" in r["failures"][0]["error"] for r in flaky)
    assert all(r["n_tutor_turns"] == 2 for r in flaky)  # the finished turns are kept
    assert all(not r["failures"] for r in records if r["tutor"] == "socratic")


@pytest.mark.parametrize("path", sorted(SUITE_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_suite_loads_and_splits(path):
    suite = load_suite(str(path))
    all_units = suite.units()
    train, held = suite.units("train"), suite.units("held_out")
    assert all_units and train and held
    assert {s.key() for s in train}.isdisjoint({s.key() for s in held})
    assert len(train) + len(held) == len(all_units)
    if suite.kind == "episodes":  # what the training scripts read
        assert [s.key() for s in suite.specs("train")] == [s.key() for s in train]


@pytest.mark.parametrize(
    "content,needle",
    [("name: x\nversion: 1\ntutors: [socratic]\nblocks: [{personas: {names: [nobody]}}]\n", "unknown persona"),
     ("name: x\nversion: 0\ntutors: [socratic]\nblocks: []\n", "version"),
     ("name: x\nversion: 1\ntutors: [socratic]\nblocks: [{personas: {families: [sid_core]}, "
      "protocol: {max_turns: 0}}]\n", "max_turns"),
     ("name: [unclosed\n", "not valid YAML")],
    ids=["unknown-persona", "bad-version", "bad-protocol", "broken-yaml"],
)
def test_bad_suite_files(tmp_path, content, needle):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=needle):
        load_suite(str(path)).specs()


def test_cli_eval_writes_leaderboard_and_report(tmp_path, capsys):
    assert main(["eval", "--suite", "default", "--limit", "4", "--no-html", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "socratic" in out and "lecturer" in out and "random" in out
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 12
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert sorted(metrics["ranking"]) == ["lecturer", "random", "socratic"]
    assert metrics["groups"]["socratic"]["metrics"]["learning_gain"]["n"] == 4
    assert "## Leaderboard" in (tmp_path / "report.md").read_text()


def test_cli_rollout_and_score(tmp_path):
    assert main(["rollout", "--tutor", "lecturer", "--persona", "weak_knowledge_partly_wrong", "--task-set", "stem",
                 "--episodes", "2", "--out", str(tmp_path)]) == 0
    records = [json.loads(x) for x in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [r["spec"]["seed"] for r in records] == [episode_seed(0, 0), episode_seed(0, 1)]  # (run seed, index)
    assert main(["score", str(tmp_path / "episodes.jsonl"), "--out", str(tmp_path / "scored")]) == 0
    scored = json.loads((tmp_path / "scored" / "metrics.json").read_text())
    assert len(scored["per_episode"]) == 2


@pytest.mark.parametrize("what", ["tutors", "personas", "tasks", "task-sets", "suites"])
def test_cli_list(what, capsys):
    assert main(["list", what]) == 0
    assert capsys.readouterr().out.strip()


def test_cli_reports_a_bad_persona_with_a_fix(capsys, tmp_path):
    assert main(["rollout", "--persona", "all_round_partly_wrang", "--out", str(tmp_path)]) == 2
    assert "Did you mean" in capsys.readouterr().out
