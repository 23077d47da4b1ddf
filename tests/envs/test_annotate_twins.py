"""The annotator reads ASCII turns (and turns whose other characters are caseless symbols) lower-cased, with
case-sensitive twins of its cue patterns and one pass of its phrase index: the same acts as the patterns as
written."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tutorzoo.envs import annotate
from tutorzoo.envs.annotate import AnnotationContext, Annotator
from tutorzoo.envs.phrase_index import readable
from tutorzoo.envs.tasks import get_task_set

# mixed case on purpose: the twins see these lower-cased, the patterns as written see them as they are
UTTERANCES = {
    "scenario-caps": "IMAGINE you cut a Pizza into 6 equal slices and eat 1. What FRACTION of the pizza is left?",
    "analogy": "Adding Fractions Is Like adding coins: you need the same kind of coin first.",
    "hint": "Here's A Hint: look for a Common Denominator before you add 1/6 and 2/5.",
    "transfer": "In Physics, a Force can be split into parts. How would you Connect that to adding fractions?",
    "summary-end": "To Summarise: we found a common denominator and added the numerators. [End]",
    "closed": "Is 3/4 bigger than 2/3? Explain your reasoning.",
    "prompt": "Now Write 40% as a decimal. Then Compare it with 0.4.",
    "misconception": "Some people ADD THE DENOMINATORS too: 1/2 + 1/3 = 2/5. Why is that not right?",
    "encourage": "Great job, Keep Going! You're on the right track.",
    "map": "On a MAP of the river, the Scale is a ratio. What does the scale mean?",
    "symbols": "So 3 × 4 = 12 and 12 ÷ 6 = 2 — Think: is ADDING Fractions like 1/2 + 1/3 − 1/6 the same?",
    "quotes": "That’s the “common Denominator” idea: Ratio and Area are other topics… in Physics too.",
    "units": "A square of 3 m² has Area 3 m²; at 20 °C, what FRACTION of 1/4 is 1/8?",
}


@pytest.fixture(scope="module")
def task():
    return get_task_set("math").build("fraction_addition", np.random.default_rng(0))


def _as_written(ann: Annotator) -> Annotator:
    """The same annotator reading every turn with the patterns as written (no phrase index)."""
    slow = Annotator.for_task(ann.task)
    slow._phrases = None
    return slow


@pytest.mark.parametrize("name", list(UTTERANCES))
@pytest.mark.parametrize("student_spoke_last", [False, True])
def test_twins_read_ascii_turns_as_the_patterns_as_written(task, monkeypatch, name, student_spoke_last):
    text = UTTERANCES[name]
    assert readable(text)
    fast = Annotator.for_task(task)
    assert fast._phrases is not None

    def ctx() -> AnnotationContext:
        return AnnotationContext(focus_kc=task.knowledge_components[0].id, previous_disciplines=("math",),
                                 student_spoke_last=student_spoke_last)

    got = fast.annotate(text, ctx())
    slow = _as_written(fast)
    monkeypatch.setattr(annotate, "_LOWERED", annotate._AS_WRITTEN)
    want = slow.annotate(text, ctx())
    assert dataclasses.asdict(got) == dataclasses.asdict(want)


def test_twins_are_case_sensitive_and_non_ascii_turns_keep_the_patterns_as_written(task):
    assert all(not p.flags & annotate.re.IGNORECASE for _, p in annotate._LOWERED.strategies)
    assert annotate._AS_WRITTEN.end.flags & annotate.re.IGNORECASE
    ann = Annotator.for_task(task)
    # a non-ASCII turn is read as written: the Latin-1 capitals still count as the cue and the discipline
    act = ann.annotate("IMAGINE a café sells 6 equal slices of PIZZA. In PHYSICS, what FORCE cuts them?",
                       AnnotationContext(focus_kc=None, previous_disciplines=("math",)))
    assert act.strategy == "scenario_question"
    assert "physics" in act.disciplines

