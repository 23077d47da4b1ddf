"""The content reader (envs/content.py): claims checked against the task, credited by computation."""

from __future__ import annotations

import numpy as np
import pytest

from tutorzoo.envs.content import FALSE, TRUE, ContentReader, normalise, sentences
from tutorzoo.envs.tasks import get_task_set


@pytest.fixture(scope="module")
def fractions():
    task = get_task_set("math").build("fraction_addition", np.random.default_rng(0))
    return ContentReader.for_task(task)


def _claims(reader, text):
    return [(c.kc, c.verdict, c.question, c.affirms, c.refutes) for c in reader.read(text).claims]


@pytest.mark.parametrize("text", [
    "1/2 + 1/3 = 5/6", "\\frac{1}{2} + \\frac{1}{3} = \\frac{5}{6}", "one half plus one third equals five sixths",
    "$\\dfrac{1}{2}+\\dfrac{1}{3}=\\dfrac{5}{6}$", "**1/2 + 1/3 = 5/6**",
])
def test_true_sum_in_any_notation_is_true_and_counts_against_adding_tops_and_bottoms(fractions, text) -> None:
    (kc, verdict, question, affirms, refutes), = _claims(fractions, text)
    assert verdict == TRUE and not question and affirms is None
    assert kc in ("common_denominator", "adding_fractions")
    assert not refutes  # a case alone states no contrast with any wrong rule
    contrasted = fractions.read(f"{text}. Adding tops and bottoms would give 2/5.").refuted
    assert contrasted == ("add_numerators_and_denominators",), contrasted


def test_wrong_sum_is_false_and_affirms_the_misconception_that_produces_it(fractions) -> None:
    (kc, verdict, _q, affirms, _r), = _claims(fractions, "1/2 + 1/3 = 2/5")
    assert verdict == FALSE and affirms == "add_numerators_and_denominators"
    (_kc, verdict, _q, affirms, _r), = _claims(fractions, "1/2 + 1/3 = 3/5")
    assert verdict == FALSE and affirms is None  # wrong, but no known rule gives 3/5


def test_component_is_the_computation_not_the_name(fractions) -> None:
    # names "equivalent fractions" but performs an addition: credited to the addition
    reading = fractions.read("Equivalent fractions: 1/4 + 1/4 = 2/4.")
    assert reading.kc == "adding_fractions"
    assert fractions.read("Equivalent fractions are great, step by step, with 3 pencils!").kc is None


def test_questions_whose_answer_is_computable_are_questions(fractions) -> None:
    (kc, _v, question, _a, refutes), = _claims(fractions, "What is 1/4 + 1/3?")
    assert question and kc is not None and not refutes  # a question to work asks for no contrast
    assert fractions.read("What do you think?").claims == ()


def test_equivalence_and_its_additive_misconception(fractions) -> None:
    assert _claims(fractions, "2/3 = 4/6")[0][:2] == ("fraction_equivalence", TRUE)
    kc, verdict, _q, affirms, _r = _claims(fractions, "2/3 = 3/4")[0]
    assert verdict == FALSE and affirms == "add_same_to_top_and_bottom"


def test_equations_in_one_unknown_are_checked_by_their_solution() -> None:
    task = get_task_set("math").build("two_step_equation", np.random.default_rng(0))
    reader = ContentReader.for_task(task)
    good = reader.read("Solve 3x + 5 = 20: 3x = 15, so x = 5.")
    bad = reader.read("Solve 3x + 5 = 20: 3x = 25, so x = 25/3.")
    assert good.false_statements() == 0 and good.kc is not None
    assert bad.false_statements() >= 1


def test_units_convert() -> None:
    task = get_task_set("math").build("unit_conversion", np.random.default_rng(0))
    reader = ContentReader.for_task(task)
    assert [c.verdict for c in reader.read("3 km = 3000 m").claims] == [TRUE]
    assert [c.verdict for c in reader.read("3 km = 300 m").claims] == [FALSE]


def test_stem_statements_of_belief_affirm_and_quoted_beliefs_do_not() -> None:
    ts = get_task_set("stem")
    task = ts.build(ts.task_ids()[0], np.random.default_rng(0))
    reader = ContentReader.for_task(task)
    m = task.misconceptions[0]
    stated = reader.read(m.belief)
    assert m.id in stated.affirmed
    quoted = reader.read(f"A friend says that {m.belief[0].lower()}{m.belief[1:]}")
    assert m.id not in quoted.affirmed


def test_normalise_words_and_symbols() -> None:
    assert normalise("three quarters") == "3/4"
    assert "*" in normalise("4 × 5") and "/" in normalise("8 ÷ 2") and "-" in normalise("7 − 2")
    assert normalise("12 divided by 4 equals 3") == "12 / 4 = 3"


@pytest.mark.parametrize("task_set,limit", [("math", 0.03), ("stem", 0.03)])
def test_the_curriculum_itself_is_almost_never_read_as_false(task_set: str, limit: float) -> None:
    """The task material is correct: the reader may call at most a few percent of its sentences false."""
    ts = get_task_set(task_set)
    n = false = 0
    for tid in ts.task_ids():
        task = ts.build(tid, np.random.default_rng(0))
        reader = ContentReader.for_task(task)
        texts = [t for k in task.knowledge_components for t in (k.explanation, k.worked_example, *k.hints)]
        texts += list(task.solution) + [m.counterexample for m in task.misconceptions]
        for t in texts:
            for s in sentences(t):
                n += 1
                false += reader.read(s).false_statements() > 0
    assert false / n <= limit, (false, n)


@pytest.mark.parametrize("task_set", ["math", "stem"])
def test_the_curriculum_said_whole_is_never_read_as_false(task_set: str) -> None:
    """A tutor that says a component's facts, explanation, worked example or hint as the lesson writes them, in
    one turn, says nothing false: a worked example that poses a second equation ("… x = 5. Solve 4x = 28: … x =
    7."), a quantity of one kind set against one of another ("Four times as long (1.0 m) gives 2.0 s.") or a
    step that divides before it multiplies is read as the lesson means it, on every draw."""
    ts = get_task_set(task_set)
    wrong = []
    for tid in ts.task_ids():
        for seed in (0, 1, 2):
            task = ts.build(tid, np.random.default_rng(seed))
            reader = ContentReader.for_task(task)
            for k in task.knowledge_components:
                for text in (*k.facts, k.explanation, k.worked_example, *k.hints):
                    if text and reader.read(text).false_statements():
                        wrong.append((tid, seed, text[:80]))
    assert not wrong, wrong


@pytest.fixture(scope="module")
def icebergs():
    return ContentReader.for_task(get_task_set("stem").build("floating_icebergs", np.random.default_rng(0)))


@pytest.mark.parametrize("text, verdict", [
    ("An object floats if its density is less than the density of the liquid.", TRUE),
    ("An object floats if its density is greater than the density of the liquid.", FALSE),  # the opposite direction
    ("An object sinks if its density is less than the density of the liquid.", FALSE),
    ("Ice floats because it is less dense than water.", TRUE),  # a clause of a longer fact, in other words
    ("Density is mass divided by volume.", TRUE),  # a fact made of the topic's own words, restated closely
])
def test_direction_words_decide_whether_a_restated_fact_is_true(icebergs, text, verdict) -> None:
    assert [(c.kc, c.verdict) for c in icebergs.read(text).claims] == [("density", verdict)]


@pytest.mark.parametrize("text", ["density mass volume", "Let's think about density step by step, like 3 lamps."])
def test_topic_words_alone_are_not_a_fact(icebergs, text) -> None:
    assert icebergs.read(text).claims == ()


def test_a_run_of_steps_is_credited_as_one_computation() -> None:
    reader = ContentReader.for_task(get_task_set("math").build("triangle_area", np.random.default_rng(0)))
    assert [c.kc for c in reader.read("24 ÷ 2 = 12").claims] == [None]  # a division alone: no component
    claims = reader.read("Multiply base by height: 6 × 4 = 24. Then divide by 2: 24 ÷ 2 = 12.").claims
    assert [(c.kc, c.verdict) for c in claims] == [("area_concept", TRUE), ("triangle_area", TRUE)]
    assert not claims[1].refutes  # the halving worked, with no contrast stated
    named = reader.read("Multiply base by height: 6 × 4 = 24. Then divide by 2: 24 ÷ 2 = 12. Does the triangle fill "
                        "the whole rectangle, or about half of it?").claims  # the misconception's case, said
    assert "forget_half" in named[1].refutes, named


def test_a_blank_asked_after_a_question_on_the_computation_before_reads_without_error() -> None:
    """The sentence before a question is read as the computation asked for; a blank asked after that reads the
    turn's step count, not that sentence (the two once shared a name: a TypeError)."""
    task = get_task_set("math").build("order_of_operations", np.random.default_rng(0))
    reading = ContentReader(task).read("Her total is 36 - 20 + 6 × 2. What is it? What goes in the blank?")
    assert [c.question for c in reading.claims] == [True]
