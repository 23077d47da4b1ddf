"""The open registry of reward terms (rewards/terms.py): a rubric YAML names a built-in term or its own
``package.module:factory``; errors name the fix; a term is computed once, by the env's rubric, and TRL's reward
functions read what it logged."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.rollout import run_episode
from tutorzoo.rewards import Rubric, make_term
from tutorzoo.rewards.terms import TERMS, Term, register_term

SPEC = EpisodeSpec(task_set="math", persona="weak_knowledge_partly_wrong", seed=3)

MODULE = '''
from tutorzoo.rewards.terms import Term

CALLS = {"turns": 0}


def turn_count(scale: float = 1.0) -> Term:
    def score(record):
        CALLS["turns"] += 1
        return scale * record["n_tutor_turns"]
    return Term("turn_count", "episode", score)


def short_turn(max_chars: int = 600) -> Term:
    return Term("short_turn", "exchange", lambda ex: float(len(ex["tutor"]["utterance"]) <= max_chars))


def not_a_term():
    return 42


ALREADY = Term("already", "episode", lambda record: 1.0)
'''


@pytest.fixture
def my_terms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "user_code"
    folder.mkdir()
    (folder / "my_terms.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    import importlib

    module = importlib.import_module("my_terms")
    yield module
    import sys

    sys.modules.pop("my_terms", None)


def test_a_custom_term_from_a_rubric_yaml_scores_an_episode(my_terms, tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(textwrap.dedent("""\
        name: mine
        terms:
          learning_gain: 1.0
          my_terms:turn_count: {weight: 0.5, scale: 2}
          my_terms:short_turn: 0.1
          my_terms:ALREADY: 0
        """), encoding="utf-8")
    rubric = Rubric.from_yaml(path)
    record = run_episode(SPEC, make_tutor("socratic"), SimulatedStudent(SPEC.persona), "socratic", reward=rubric)
    comps = record["reward_components"]
    assert comps["my_terms:turn_count"] == 2 * record["n_tutor_turns"]
    assert 0 < comps["my_terms:short_turn"] <= record["n_tutor_turns"]
    assert comps["my_terms:ALREADY"] == 1.0
    assert record["reward"] == pytest.approx(comps["learning_gain"] + 0.5 * comps["my_terms:turn_count"]
                                             + 0.1 * comps["my_terms:short_turn"])
    assert my_terms.CALLS["turns"] == 1

    # TRL's reward functions read what the env's rubric logged: the term is not computed a second time
    funcs, weights = rubric.reward_funcs()
    values = [f(["p"], ["c"], episode=[record])[0] for f in funcs]
    assert my_terms.CALLS["turns"] == 1
    assert [f.__name__ for f in funcs][:4] == ["learning_gain", "my_terms:turn_count", "my_terms:short_turn",
                                               "my_terms:ALREADY"]
    assert sum(w * (v or 0.0) for w, v in zip(weights, values, strict=True)) == pytest.approx(record["reward"])


def test_a_record_without_the_component_is_scored_by_the_term(my_terms) -> None:
    term = make_term("my_terms:turn_count", scale=3)
    assert term.name == "my_terms:turn_count"
    assert term.trl()(["p"], ["c"], episode=[{"n_tutor_turns": 2, "reward_components": {}}]) == [6]


@pytest.mark.parametrize(("name", "params", "message"), [
    pytest.param("lerning_gain", {}, "Did you mean 'learning_gain'", id="typo"),
    pytest.param("politeness", {}, "'package.module:factory'", id="unknown-names-the-import-path"),
    pytest.param("no_such_module_xyz:f", {}, "put its folder on PYTHONPATH", id="module-not-importable"),
    pytest.param("my_terms:missing", {}, "has no 'missing'", id="no-such-factory"),
    pytest.param("my_terms:not_a_term", {}, "returned a int, not a tutorzoo.rewards.terms.Term", id="wrong-return"),
    pytest.param("my_terms:CALLS", {}, "is a dict, not a factory", id="not-callable"),
    pytest.param("my_terms:turn_count", {"scael": 2}, "takes no parameter(s) ['scael']; it takes ['scale']",
                 id="bad-param"),
    pytest.param("length_penalty", {"max_char": 3}, "it takes ['max_chars']", id="builtin-bad-param"),
])
def test_term_errors_name_the_fix(my_terms, name: str, params: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        make_term(name, **params)
    assert message in str(err.value)


def test_an_unknown_term_in_a_rubric_yaml_names_file_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nterms: {learning_gian: 1, politeness: 1}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        Rubric.from_yaml(path)
    text = str(err.value)
    assert "bad.yaml" in text and "'learning_gian'" in text and "Did you mean 'learning_gain'" in text
    assert "package.module:factory" in text


def test_register_term_adds_a_name_and_refuses_a_second() -> None:
    assert "constant" not in TERMS

    @register_term("constant", params=("value",))
    def constant(value: float = 1.0) -> Term:
        return Term("constant", "episode", lambda record: value)

    try:
        assert make_term("constant", value=0.25).fn({}) == 0.25
        assert Rubric({"constant": 1.0}).episode({}) == {"constant": 1.0}
        with pytest.raises(ConfigError, match="registered twice"):
            register_term("constant")(constant)
    finally:
        TERMS.pop("constant", None)
