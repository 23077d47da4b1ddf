"""Cue words are no content: the reader finds a cross-discipline link only where the turn says it, a bare prompt
after a statement asks nothing to work on, and LaTeX reads as the plain text it typesets."""

from __future__ import annotations

import numpy as np
import pytest

from tutorzoo.envs.annotate import answer_key
from tutorzoo.envs.content import ContentReader
from tutorzoo.envs.leak import find_leaks
from tutorzoo.envs.reading.normalise import plain_text
from tutorzoo.envs.tasks import get_task_set

EXPLANATION = "Two fractions are equivalent when they name the same amount."


@pytest.fixture(scope="module")
def task():
    return get_task_set("math").build("fraction_addition", np.random.default_rng(0))


@pytest.fixture(scope="module")
def reader(task):
    return ContentReader(task)


def test_a_link_is_made_by_its_bridge_or_keywords_not_by_naming_a_discipline(task, reader) -> None:
    kc = task.kc("fraction_equivalence")
    chemistry = next(link for link in kc.links if link.discipline == "chemistry")
    assert reader.read(f"Let's connect this to chemistry: {chemistry.bridge}").links == (
        ("fraction_equivalence", "chemistry"),)
    assert ("fraction_equivalence", "chemistry") in reader.read(
        f"{EXPLANATION} A chemist dilutes a solution and keeps its concentration the same way.").links
    for named in ("How would a chemist or an artist use this idea in another subject?",
                  "Let's connect this to chemistry and art, like a physicist would.",
                  "Think like a chemist: this idea shows up in another discipline too."):
        assert reader.read(f"{EXPLANATION} {named}").links == (), named


@pytest.mark.parametrize("prompt", [
    "Why do you think so?", "What makes you say that?", "Predict what would happen in general, and justify it.",
    "How would a physicist or an artist use this idea in another subject?",
])
def test_a_bare_prompt_after_a_statement_is_no_question_on_it(reader, prompt: str) -> None:
    alone = reader.read(EXPLANATION).claims
    assert alone and not any(c.question for c in alone)
    assert reader.read(f"{EXPLANATION} {prompt}").claims == alone, prompt


def test_a_question_after_a_case_asks_about_it_with_its_own_demand() -> None:
    stem = get_task_set("stem")
    lesson = stem.build(stem.task_ids()[2], np.random.default_rng(0))  # floating icebergs
    rd = ContentReader(lesson)
    fact = lesson.knowledge_components[0].explanation.split(". ")[0].rstrip(".") + "."
    name = lesson.knowledge_components[0].keywords[0]
    (q,) = [c for c in rd.read(f"{fact} So why does that happen with {name}, in a new case?").claims if c.question]
    assert q.demand == "transfer"  # the asking sentence's words set the demand
    (q,) = [c for c in rd.read(f"{fact} Why does {name} work like that?").claims if c.question]
    assert q.demand == "explain"  # not the case's: the fact before may say "new" or "another"


@pytest.mark.parametrize(("latex", "plain"), [
    (r"\(\frac{1}{2}\) = \(\frac{4}{8}\)", "1/2 = 4/8"),
    (r"$\dfrac{3}{4}$ of 8 is $3 \times 2$", "3/4 of 8 is 3 × 2"),
    (r"\[ x = \text{five} \]", "x = five"),
    ("You have $10 and spend $3.", "You have $10 and spend $3."),  # a dollar sign without a command is money
])
def test_latex_reads_as_the_plain_text_it_typesets(latex: str, plain: str) -> None:
    assert " ".join(plain_text(latex).split()) == plain


def test_a_leak_in_latex_is_the_same_leak_as_in_plain_text(task) -> None:
    keys = [answer_key(i) for i in task.posttest]
    item = next(i for i in task.posttest if "/" in i.answer)
    top, bottom = item.answer.split("/")
    said = f"So the answer to that one is {item.answer}."
    latex = said.replace(item.answer, rf"\(\frac{{{top}}}{{{bottom}}}\)")
    assert latex != said and find_leaks(said, keys, (task.statement,)).leaked
    assert find_leaks(latex, keys, (task.statement,)).item_ids == find_leaks(said, keys, (task.statement,)).item_ids
