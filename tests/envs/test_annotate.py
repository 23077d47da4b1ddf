"""The rule-based annotator reads the SID act back from tutor utterances."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tutorzoo.envs.act_text import verbalise_act
from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.annotate import AnnotationContext, Annotator
from tutorzoo.envs.leak import AnswerKey
from tutorzoo.envs.tasks import get_task_set


@pytest.fixture(scope="module")
def task():
    return get_task_set("math").build("fraction_addition", np.random.default_rng(0))


@pytest.fixture(scope="module")
def annotator(task):
    keys = [AnswerKey(item_id=it.id, value=it.answer) for it in task.pretest]
    return Annotator(task, keys, givens=())


def _ctx(**kw):
    return AnnotationContext(focus_kc="adding_fractions", previous_disciplines=("math",), **kw)


CASES = {
    "scenario": ("Imagine you cut a pizza into 6 equal slices and eat 1. What fraction of the pizza is left?",
                 {"strategy": "scenario_question", "is_question": True}),
    "analogy": ("Adding fractions is like adding coins: you need the same kind of coin first.",
                {"strategy": "analogy", "intent": "introduce_concept"}),
    "hint": ("Here's a hint: look for a common denominator before you add.", {"strategy": "hint"}),
    "break-down": ("Let's break it down step by step. What is the least common multiple of 6 and 5?",
                   {"strategy": "break_down", "target_kc": "common_denominator"}),
    "corrective": ("Not quite. You cannot add the denominators.", {"strategy": "corrective_feedback"}),
    "encourage": ("Great job, keep going!", {"strategy": "encourage", "target_kc": None}),
    "why-is-L3": ("Why does adding the denominators give a smaller fraction?", {"guidance_level": "L3"}),
    "closed-is-L1": ("Is 1/6 an equivalent fraction to 5/30?",
                     {"guidance_level": "L1", "intent": "check_understanding", "target_kc": "fraction_equivalence"}),
    "explain-is-L2": ("Explain how you found the common denominator.", {"guidance_level": "L2"}),
    "summary-ends": ("To summarize: we found a common denominator, then added. [END]",
                     {"intent": "summarize", "ends_session": True}),
    "transfer": ("Think about how a physicist adds speeds: how would a common denominator help with a speed?",
                 {"intent": "trigger_transfer", "discipline_transfer": True, "guidance_level": "L3"}),
    "off-topic": ("Did you watch the football match yesterday?", {"target_kc": None}),
}


@pytest.mark.parametrize("text,expected", CASES.values(), ids=CASES.keys())
def test_annotation(annotator, text, expected):
    act = annotator.annotate(text, _ctx(student_spoke_last=True))
    for field, value in expected.items():
        assert getattr(act, field) == value, f"{field}: {getattr(act, field)!r} != {value!r} for {text!r}"


def test_stating_an_item_answer_is_a_leak(annotator, task):
    item = task.pretest[0]
    act = annotator.annotate(f"So the answer is {item.answer}.", _ctx())
    assert act.reveals_answer and item.id in act.revealed_items
    assert not annotator.annotate("What do you get when you add them?", _ctx()).reveals_answer


STRATEGIES = ["follow_up_question", "hint", "analogy", "scenario_question", "break_down", "encourage",
              "corrective_feedback", "contextualize"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_verbalised_strategy_reads_back(annotator, task, strategy):
    """What the act verbaliser says, the annotator reads back (over several seeds and every KC)."""
    hits = total = 0
    for seed in range(5):
        for kc in task.knowledge_components:
            act = TutorAct(intent="guide_reasoning", strategy=strategy, guidance_level="L2", target_kc=kc.id)
            text = verbalise_act(act, task, np.random.default_rng(seed))
            back = annotator.annotate(text, _ctx(student_spoke_last=True))
            hits += back.strategy == strategy
            total += 1
    assert hits / total >= 0.8, f"{strategy}: read back {hits}/{total}"


def test_verbalised_topic_reads_back(annotator, task):
    hits = total = 0
    for seed in range(5):
        for kc in task.knowledge_components:
            for level in ("L1", "L2", "L3"):
                act = TutorAct(intent="guide_reasoning", strategy=None, guidance_level=level, target_kc=kc.id)
                back = annotator.annotate(verbalise_act(act, task, np.random.default_rng(seed)), _ctx())
                hits += back.target_kc == kc.id
                total += 1
    assert hits / total >= 0.9, f"topic read back {hits}/{total}"


def test_step_labels_do_not_tie_a_worked_result_to_a_hidden_item():
    """A hidden post-test item's answer said in a worked example counts as given away only with the item's own
    numbers beside it; the numbers of "**Step 1:**" labels are layout, so a worked example laid out in steps
    reveals no more than the same steps in a paragraph."""
    task = get_task_set("math").build("order_of_operations", np.random.default_rng(3))
    ann = Annotator.for_task(task)
    pre = {it.id for it in task.pretest}
    hidden = next(it for it in task.posttest if it.id not in pre
                  and len({n for n in re.findall(r"\d+", it.stem) if int(n) <= 9}) >= 2)
    labels = sorted({int(n) for n in re.findall(r"\d+", hidden.stem) if int(n) <= 9})
    steps = [f"Work what comes first: the result is {hidden.answer}." if i == labels[-1] else "Look at the signs."
             for i in range(1, labels[-1] + 1)]
    laid_out = "Here's a worked example:\n\n" + "\n\n".join(f"**Step {i}:** {s}" for i, s in enumerate(steps, 1))
    paragraph = "Here's a worked example: " + " ".join(steps)
    assert hidden.id not in ann.annotate(paragraph, _ctx()).revealed_items
    assert hidden.id not in ann.annotate(laid_out, _ctx()).revealed_items
    stated = f"{paragraph} That is how {hidden.stem.rstrip('.?')} comes out."
    assert hidden.id in ann.annotate(stated, _ctx()).revealed_items
