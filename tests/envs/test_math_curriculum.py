"""The procedural K-8 math task set: every family builds valid, deterministic, correct tasks and KMP-Skills material."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.envs.grading import equivalent, parse_number
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.envs.tasks.base import Task
from tutorzoo.envs.tasks.math import (
    FAMILIES,
    LEVELS,
    MathTaskSet,
    erroneous_solution,
    follow_ups,
    seed_problem,
    similar,
)
from tutorzoo.envs.tasks.math.material import fill, load_material
from tutorzoo.envs.tasks.math.numbers import fmt_decimal, fmt_fraction, fmt_value

TASK_SET = MathTaskSet()
IDS = TASK_SET.task_ids()
SEEDS = (0, 1, 7)
CASES = [pytest.param(tid, seed, id=f"{tid}-s{seed}") for tid in IDS for seed in SEEDS]
BLOOM_BAND = {"L1": {"remember", "understand"}, "L2": {"understand", "apply"}, "L3": {"analyze", "evaluate", "create"}}


def build(tid: str, seed: int) -> Task:
    return TASK_SET.build(tid, np.random.default_rng(seed))


def value(s: str) -> Fraction:
    v = parse_number(s)
    assert v is not None, f"answer {s!r} does not parse as a number"
    return v


# --- the set as a whole ------------------------------------------------------------------------------------


def test_size_domains_and_grades() -> None:
    assert len(IDS) >= 12
    assert len({f.domain for f in FAMILIES}) >= 6
    assert IDS == [f.id for f in FAMILIES] == TASK_SET.task_ids()  # fixed order
    grades = {f.grade for f in FAMILIES}
    assert all(0 <= g <= 8 for g in grades) and min(grades) <= 3 and max(grades) >= 7


def test_registry_builds_the_math_set() -> None:
    ts = get_task_set("math")
    assert ts.name == "math" and ts.task_ids() == IDS


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        pytest.param(lambda: MathTaskSet(path="lessons/"), "procedural", id="path-given"),
        pytest.param(
            lambda: TASK_SET.build("fraction_additon", np.random.default_rng(0)), "fraction_addition", id="typo"
        ),
        pytest.param(lambda: similar("fraction_addition", "extreme", np.random.default_rng(0)), "easy", id="bad-level"),
        pytest.param(lambda: follow_ups("nope", np.random.default_rng(0)), "known", id="unknown-follow-up"),
    ],
)
def test_bad_input_raises_config_error(call, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        call()


def test_shared_kcs_have_one_definition() -> None:
    names: dict[str, str] = {}
    for tid in IDS:
        for kc in build(tid, 0).knowledge_components:
            assert names.setdefault(kc.id, kc.name) == kc.name
    shared = [k for k in names if sum(k in f.kcs for f in FAMILIES) > 1]
    assert {"fraction_equivalence", "unit_rate", "area_concept"} <= set(shared)


# --- one task ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("tid", "seed"), CASES)
def test_task_is_valid_and_complete(tid: str, seed: int) -> None:
    task = build(tid, seed)
    assert Task.model_validate(task.model_dump()) == task
    assert task.id == tid and task.task_set == "math" and task.disciplines == ("math",)
    assert task.title and task.summary and task.objectives and task.opening_question
    assert 2 <= len(task.knowledge_components) <= 4
    assert task.pretest[0].stem == task.statement and task.pretest[0].answer == task.answer
    assert task.solution == task.pretest[0].solution_steps
    assert task.answer in task.summary
    tested = {k for item in task.pretest for k in item.kcs}
    assert tested == {k.id for k in task.knowledge_components}


@pytest.mark.parametrize(("tid", "seed"), CASES)
def test_kc_teaching_material(tid: str, seed: int) -> None:
    task = build(tid, seed)
    links = [link for kc in task.knowledge_components for link in kc.links if link.discipline != "math"]
    assert links, "every task needs a cross-discipline link"
    assert all(link.bridge and link.keywords for link in links)
    for kc in task.knowledge_components:
        assert kc.keywords and kc.explanation and kc.hints and kc.analogies and kc.contexts
        assert task.solution[-1] not in kc.worked_example, f"{kc.id}: worked example shows the task's own solution"
        assert "{" not in kc.explanation + kc.worked_example + " ".join(q.text for q in kc.questions)
        for level, band in BLOOM_BAND.items():
            qs = [q for q in kc.questions if q.guidance_level == level]
            assert len(qs) >= 2, f"{kc.id}: fewer than 2 {level} questions"
            assert all(q.bloom in band for q in qs), f"{kc.id}: {level} question with bloom outside {band}"


@pytest.mark.parametrize(("tid", "seed"), CASES)
def test_misconceptions_named_and_wrong(tid: str, seed: int) -> None:
    task = build(tid, seed)
    assert len(task.misconceptions) >= 2
    named = {m for item in task.pretest for m in item.misconception_answers}
    assert named == {m.id for m in task.misconceptions}
    for m in task.misconceptions:
        assert m.belief and m.counterexample and m.negation and m.keywords and m.wrong_steps
    for item in task.pretest + task.posttest:
        for mid, wrong in item.misconception_answers.items():
            assert not equivalent(wrong, item.answer), f"{item.id}: {mid} gives the correct answer {wrong}"


@pytest.mark.parametrize(("tid", "seed"), CASES)
def test_items_and_isomorphic_posttest(tid: str, seed: int) -> None:
    task = build(tid, seed)
    assert len(task.pretest) == len(task.posttest) == 3
    for i, (pre, post) in enumerate(zip(task.pretest, task.posttest, strict=True)):
        assert (pre.id, post.id, post.parallel_of) == (f"{tid}.pre.{i}", f"{tid}.post.{i}", pre.id)
        assert pre.options is None and post.options is None
        assert pre.kcs == post.kcs and set(pre.misconception_answers) == set(post.misconception_answers)
        assert pre.stem != post.stem and not equivalent(pre.answer, post.answer)
        assert pre.solution_steps and post.solution_steps
        value(pre.answer), value(post.answer)


@pytest.mark.parametrize("tid", IDS)
def test_determinism_and_variation(tid: str) -> None:
    assert build(tid, 3).model_dump() == build(tid, 3).model_dump()
    statements = {build(tid, s).statement for s in range(6)}
    assert len(statements) >= 4


# --- exact answers -----------------------------------------------------------------------------------------

_NUM = r"-?\d+(?:\.\d+)?(?:/\d+)?"


def _nums(stem: str) -> list[Fraction]:
    return [Fraction(x) for x in re.findall(_NUM, stem)]


def _grab(pattern: str, stem: str) -> Fraction:
    m = re.search(pattern, stem)
    assert m, f"{pattern!r} not in {stem!r}"
    return Fraction(m.group(1))


def _ops(stem: str) -> Fraction:
    a, b, c, d = (int(x) for x in re.search(r"(\d+) - (\d+) \+ (\d+) × (\d+)", stem).groups())
    return Fraction(a - b + c * d)


def _equation(stem: str) -> Fraction:
    m = re.search(r"(\d+)x \+ (\d+) = (\d+)", stem)
    if m:
        a, b, c = (int(x) for x in m.groups())
    else:
        b, a, c = (int(x) for x in re.findall(r"\$(\d+)", stem))
    return Fraction(c - b, a)


def _triangle(stem: str) -> Fraction:
    base = _grab(r"base of (\d+)", stem) if "base of" in stem else _grab(r"(\d+) m along the bottom", stem)
    height = _grab(r"height of (\d+)", stem) if "height of" in stem else _grab(r"(\d+) m tall", stem)
    return base * height / 2


# An independent Fraction recomputation of the main problem from its worded stem (both wordings).
RECOMPUTE = {
    "two_digit_addition": lambda s: sum(_nums(s)),
    "decimal_comparison": lambda s: max(_nums(s)),
    "decimal_addition": lambda s: sum(_nums(s)),
    "fraction_comparison": lambda s: max(_nums(s)),
    "fraction_addition": lambda s: sum(_nums(s)),
    "integer_addition": lambda s: sum(_nums(s)[-2:]),
    "integer_subtraction": lambda s: _nums(s)[-2] - _nums(s)[-1],
    "order_of_operations": _ops,
    "two_step_equation": _equation,
    "ratio_scaling": lambda s: _nums(s)[0] * _nums(s)[2] / _nums(s)[1],
    "percent_discount": lambda s: _nums(s)[0] * (1 - _nums(s)[1] / 100),
    "rectangle_perimeter": lambda s: 2 * sum(_nums(s)),
    "triangle_area": _triangle,
    "travel_time": lambda s: _grab(r"(\d+) km(?!/)", s) / _grab(r"(\d+) km/h", s),
}


@pytest.mark.parametrize(("tid", "seed"), [c for c in CASES if c.values[0] in RECOMPUTE])
def test_answers_recomputed_independently(tid: str, seed: int) -> None:
    task = build(tid, seed)
    for item in (task.pretest[0], task.posttest[0]):
        assert value(item.answer) == RECOMPUTE[tid](item.stem), item.stem


def test_every_family_is_recomputed_or_converted() -> None:
    assert set(IDS) - set(RECOMPUTE) == {"unit_conversion"}
    factors = {("km", "m"): 1000, ("kg", "g"): 1000, ("L", "mL"): 1000, ("m", "cm"): 100}
    for seed in range(10):
        task = build("unit_conversion", seed)
        m = re.fullmatch(r"Convert (\S+) (\w+) to (\w+)\.", task.statement)
        assert m, task.statement
        assert value(task.answer) == Fraction(m.group(1)) * factors[(m.group(2), m.group(3))]


@pytest.mark.parametrize(
    ("x", "fraction", "decimal"),
    [
        pytest.param(Fraction(10, 12), "5/6", None, id="five-sixths"),
        pytest.param(Fraction(7, 20), "7/20", "0.35", id="point-35"),
        pytest.param(Fraction(-7), "-7", "-7", id="minus-seven"),
        pytest.param(Fraction(-1, 2), "-1/2", "-0.5", id="minus-half"),
    ],
)
def test_canonical_formats(x: Fraction, fraction: str, decimal: str | None) -> None:
    assert fmt_fraction(x) == fraction
    assert fmt_value(x) == (decimal if decimal is not None else fraction)
    if decimal is not None:
        assert fmt_decimal(x) == decimal and equivalent(decimal, fraction)


@pytest.mark.parametrize("tid", IDS)
def test_answers_equivalent_in_other_forms(tid: str) -> None:
    for seed in SEEDS:
        for item in build(tid, seed).pretest:
            v = value(item.answer)
            sign = "-" if v < 0 else ""
            assert equivalent(item.answer, f"{sign}\\frac{{{abs(v.numerator)}}}{{{v.denominator}}}")
            if v.denominator in (1, 2, 4, 5, 8, 10, 20, 25, 50, 100):
                assert equivalent(item.answer, fmt_decimal(v))


# --- KMP-Skills material -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("tid", "seed"), CASES)
def test_follow_ups_build_on_previous_answers(tid: str, seed: int) -> None:
    seed_p = seed_problem(tid, np.random.default_rng(seed))
    assert seed_p.statement == build(tid, seed).statement
    first, second = follow_ups(tid, np.random.default_rng(seed))
    for prev, p in ((seed_p, first), (first, second)):
        assert p.statement and p.solution
        value(p.answer)
        assert prev.answer in " ".join(p.solution), f"{p.statement!r} does not use the previous answer {prev.answer}"
        assert p.statement != prev.statement


@pytest.mark.parametrize("tid", IDS)
def test_similar_levels(tid: str) -> None:
    distinct_levels = 0
    for seed in SEEDS:
        statements = set()
        for level in LEVELS:
            p = similar(tid, level, np.random.default_rng(seed))
            assert p.statement and p.solution
            value(p.answer)
            statements.add(p.statement)
        distinct_levels += len(statements) == len(LEVELS)
    assert distinct_levels >= 2, "the levels should change the numbers for most seeds"


@pytest.mark.parametrize(("tid", "seed"), CASES)
def test_erroneous_solution(tid: str, seed: int) -> None:
    right = seed_problem(tid, np.random.default_rng(seed))
    wrong, i = erroneous_solution(tid, np.random.default_rng(seed))
    assert wrong.statement == right.statement
    assert 0 <= i < len(wrong.solution)
    assert wrong.solution[:i] == right.solution[:i]
    assert i >= len(right.solution) or wrong.solution[i] != right.solution[i]
    assert not equivalent(wrong.answer, right.answer)
    # the injected error is one of the family's misconceptions, so its answer is one the task knows
    assert wrong.answer in build(tid, seed).pretest[0].misconception_answers.values()


def test_erroneous_solutions_cover_several_misconceptions() -> None:
    answers = {erroneous_solution("fraction_addition", np.random.default_rng(s))[0].solution[0][:20] for s in range(12)}
    assert len(answers) >= 2


# --- the material files ------------------------------------------------------------------------------------


def test_every_yaml_record_is_used() -> None:
    material = load_material()
    used_kcs = {k for f in FAMILIES for k in f.kcs}
    used_mis = {m for f in FAMILIES for m in f.misconceptions}
    assert set(material.kcs) == used_kcs
    assert set(material.misconceptions) == used_mis


def test_duplicate_ids_across_files_are_rejected(tmp_path) -> None:
    record = "kcs:\n  same_id:\n    name: x\n"
    (tmp_path / "a.yaml").write_text(record)
    (tmp_path / "b.yaml").write_text(record)
    with pytest.raises(DatasetError, match="already defined in a.yaml"):
        load_material(str(tmp_path))


def test_unknown_field_is_rejected(tmp_path) -> None:
    (tmp_path / "a.yaml").write_text("misconceptions:\n  m:\n    kc: k\n    beleif: typo\n")
    with pytest.raises(DatasetError, match="beleif"):
        load_material(str(tmp_path))


def test_missing_template_field_names_it() -> None:
    with pytest.raises(DatasetError, match=r"frac9"):
        fill("Is {frac9} equal?", {"frac1": "1/2"}, "fractions.yaml: kcs.x.questions")
