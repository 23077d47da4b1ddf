"""Persona files: every YAML in configs/personas loads, families are complete, bad files fail clearly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tutorzoo.agents.student import (
    Persona,
    PersonaDistribution,
    SimulatedStudent,
    get_persona,
    load_distribution,
    load_personas,
)
from tutorzoo.agents.student.personas import PERSONA_DIR, load_persona_file
from tutorzoo.envs.errors import ConfigError

YAMLS = sorted(PERSONA_DIR.glob("*.yaml"))


@pytest.mark.parametrize("path", YAMLS, ids=[p.name for p in YAMLS])
def test_every_persona_yaml_loads(path: Path) -> None:
    if "distribution:" in path.read_text():
        dist = PersonaDistribution.from_yaml(path)
        assert isinstance(dist.sample(np.random.default_rng(0)), Persona)
    else:
        personas = load_persona_file(path)
        assert personas and all(isinstance(p, Persona) for p in personas)


@pytest.mark.parametrize(
    "family,label_field,labels",
    [
        ("sid_state", "learning_state", {"does_not_understand_question", "does_not_understand_explanation",
                                         "poor_knowledge_mastery", "weak_curiosity", "outstanding_ability"}),
        ("mathdial", "confusion", {"steps_procedures", "underlying_principles", "relevant_vs_irrelevant_information",
                                   "what_the_problem_asks", "number_order_operation", "problem_type"}),
    ],
)
def test_families_cover_the_papers(family: str, label_field: str, labels: set[str]) -> None:
    members = [p for p in load_personas().values() if p.family == family]
    assert {getattr(p, label_field) for p in members} == labels
    assert len(members) == len(labels)


def test_sid_core_is_three_types_by_five_scenarios() -> None:
    core = [p for p in load_personas().values() if p.family == "sid_core"]
    pairs = {(p.core_type, p.scenario) for p in core}
    assert len(core) == 15 and len(pairs) == 15
    assert {c for c, _ in pairs} == {"all_round", "weak_knowledge", "low_motivation"}
    p = get_persona("weak_knowledge_asks_for_hint")
    assert p.help_seeking > get_persona("weak_knowledge_partly_wrong").help_seeking
    assert p.prior_knowledge < get_persona("all_round_asks_for_hint").prior_knowledge


def test_unknown_persona_suggests_a_name() -> None:
    with pytest.raises(ConfigError, match="all_round_partly_wrong"):
        get_persona("all_round_partly_wrng")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("family: x\npersonas:\n  - name: a\n    learning_sped: 2\n", r"learning_sped.*remove it"),
        ("family: x\npersonas:\n  - name: a\n    prior_knowledge: 1.5\n", r"prior_knowledge.*less than or equal"),
        ("family: x\npersonas:\n  - name: a\n    strategy_preference: cramming\n", r"strategy_preference.*one of"),
        ("personas:\n  - name: a\n", r"missing 'family'"),
        ("family: x\npersonas:\n  - {prior_knowledge: 0.3}\n", r"personas\[0\] must be a mapping with a 'name'"),
        ("family: x\n", r"no personas"),
        ("- just\n- a list\n", r"top level must be a mapping"),
        ("family: x\npersonas: [\n", r"not valid YAML"),
        ("family: x\nextra: 1\npersonas:\n  - name: a\n", r"unknown top-level keys \['extra'\]"),
        ("family: x\naxes:\n  - field: core_type\n    values: {all_round: {slip: 0.1}}\n"
         "  - field: scenario\n    values: {partly_wrong: {slip: 0.2}}\n", r"both set \['slip'\]"),
    ],
    ids=["unknown_field", "out_of_range", "bad_choice", "no_family", "no_name", "empty", "not_mapping", "bad_yaml",
         "unknown_key", "axes_overlap"],
)
def test_malformed_persona_file_names_file_and_fix(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=expected) as err:
        load_persona_file(path)
    assert "bad.yaml" in str(err.value)


def test_duplicate_persona_names_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("family: x\npersonas:\n  - name: same\n")
    (tmp_path / "b.yaml").write_text("family: y\npersonas:\n  - name: same\n")
    with pytest.raises(ConfigError, match="already defined"):
        load_personas(tmp_path)


def test_distribution_samples_in_range_and_deterministically() -> None:
    dist = load_distribution("default")
    a = [dist.sample(np.random.default_rng(s)) for s in range(50)]
    b = [dist.sample(np.random.default_rng(s)) for s in range(50)]
    assert a == b
    assert len({p.prior_knowledge for p in a}) == 50
    assert all(0.1 <= p.prior_knowledge <= 0.8 and 3 <= p.grade <= 9 and p.family == "sampled" for p in a)
    assert {p.bloom_start for p in a} <= {"remember", "understand", "apply", "analyze"}
    assert len({p.strategy_preference for p in a}) >= 3


@pytest.mark.parametrize(
    "fields,expected",
    [
        ({"prior_knowledge": {"range": [0.8, 0.1]}}, "lo <= hi"),
        ({"prior_knowledge": {"range": [0.1, 1.4]}}, "less than or equal"),
        ({"name": "x"}, "not a sampled persona field"),
        ({"speed": 1.0}, "not a sampled persona field"),
        ({"bloom_start": {"choices": ["remember", "genius"]}}, "bloom_start"),
        ({"bloom_start": {"choices": ["remember"], "weights": [1, 2]}}, "weights must be 1"),
        ({"slip": {"mean": 0.1}}, "spec must be"),
    ],
    ids=["reversed_range", "range_out_of_bounds", "name_field", "unknown_field", "bad_choice", "bad_weights",
         "bad_spec"],
)
def test_bad_distribution_is_rejected(fields: dict, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        PersonaDistribution("bad", fields)


def test_distribution_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "dist.yaml"
    path.write_text("distribution: d\nbase: all_round_partly_wrng\nfields: {}\n")
    with pytest.raises(ConfigError, match="Did you mean"):
        PersonaDistribution.from_yaml(path)
    path.write_text("distribution: d\nfields:\n  slip: {range: [0.3, 0.1]}\n")
    with pytest.raises(ConfigError, match="dist.yaml"):
        PersonaDistribution.from_yaml(path)


def test_student_from_a_distribution_draws_a_persona_per_episode() -> None:
    from tests.student_fixtures import TASK

    student = SimulatedStudent(load_distribution("default"))
    names = set()
    for seed in range(5):
        student.reset(seed)
        student.act({}, {"phase": "pretest", "task": TASK, "item": TASK.pretest[0], "turn": 0, "max_turns": 3,
                         "messages": [], "item_index": 0, "n_items": 3})
        names.add(student.persona.name)
    assert len(names) == 5


@pytest.mark.parametrize(
    "name,ok",
    [("sid_core/all_round_partly_wrong", True), ("mathdial/all_round_partly_wrong", False)],
    ids=["right_family", "wrong_family"],
)
def test_family_qualified_names(name: str, ok: bool) -> None:
    if ok:
        assert get_persona(name).name == "all_round_partly_wrong"
    else:
        with pytest.raises(ConfigError, match="unknown persona"):
            get_persona(name)
