"""The content gate with the task's reader: substance is checkable content, a repeat stays a repeat whatever words
are added around it, a greeting costs no length, and a transfer needs its link said."""

from __future__ import annotations

import pytest
from test_rewards import TASK, student, tutor

from tutorzoo.rewards import ContentGate
from tutorzoo.rewards.terms import COURTESY_CHARS, gated_transcript, read_length

GATE = ContentGate.for_task(TASK)
EQUIVALENCE = "fraction_equivalence"
QUESTION = "Is 2/4 the same as 1/2?"  # a short question on a component: every word is a keyword, a cue or filler


def test_a_short_question_on_a_component_has_substance() -> None:
    assert GATE.reader is not None and GATE.reader.read(QUESTION).has_content
    assert GATE.counts(tutor(QUESTION))
    # without the task's reader (a public view of the task) substance is counted in words, and it has none
    assert not ContentGate.for_task({"knowledge_components": [k.model_dump() for k in TASK.knowledge_components]}
                                    ).counts(tutor(QUESTION))


def test_words_without_content_give_no_substance() -> None:
    assert not GATE.counts(tutor("Imagine the fractions, step by step: equivalent fractions!"))


@pytest.mark.parametrize("added", [
    "How would a physicist or an artist use this idea in another subject?",
    "It's like a puzzle: in real life this matters!",
    "Great thinking, buddy, you are doing wonderfully.",
])
def test_words_added_around_a_repeat_do_not_make_it_new(added: str) -> None:
    earlier = "Multiply the top and bottom of 1/2 by 2 to get 2/4, the same amount. " + QUESTION
    assert not GATE.counts(tutor(earlier), earlier_tutor_texts=[earlier])
    assert not GATE.counts(tutor(f"{earlier} {added}"), earlier_tutor_texts=[earlier])


def test_the_same_words_with_other_numbers_are_a_new_exercise() -> None:
    earlier = "Multiply the top and bottom of 1/2 by 2 to get 2/4, the same amount. Is 2/4 the same as 1/2?"
    again = "Multiply the top and bottom of 1/3 by 2 to get 2/6, the same amount. Is 2/6 the same as 1/3?"
    assert GATE.counts(tutor(again), earlier_tutor_texts=[earlier])


def test_a_greeting_and_a_sign_off_cost_no_length_but_a_wall_of_them_does() -> None:
    body = "Multiply the top and bottom of 1/2 by 2 to get 2/4, the same amount."
    greeted = f"Of course! Let's go through this carefully.\n\n{body}\n\nLet me know if anything is unclear!"
    assert read_length(greeted) == len(body)
    wall = " ".join(["Let me know if anything is unclear!"] * 20)
    assert read_length(f"{wall} {body}") == len(wall) + 1 + len(body) - COURTESY_CHARS


def _record(*turns: dict) -> dict:
    return {"transcript": list(turns), "config": {"task_set": "math"}, "task": {"id": TASK.id}}


def test_a_transfer_needs_its_link_said_not_a_discipline_named() -> None:
    chemistry = next(link for link in TASK.kc(EQUIVALENCE).links if link.discipline == "chemistry")
    explanation = TASK.kc(EQUIVALENCE).explanation
    named = tutor(f"{explanation} How would a chemist or an artist use this idea in another subject?",
                  discipline=["math", "chemistry"], discipline_transfer=True)
    made = tutor(f"{explanation} {chemistry.bridge}", discipline=["math", "chemistry"], discipline_transfer=True)
    out = gated_transcript(_record(student(), named, student(), made, student()), GATE)
    assert [t["discipline_transfer"] for t in out if t["speaker"] == "tutor"] == [False, True]
