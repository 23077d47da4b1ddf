"""Cue words are no content: the reader finds a cross-discipline link only where the turn says it, a bare prompt
after a statement asks nothing to work on, and LaTeX reads as the plain text it typesets."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.envs.test_annotate import _ctx
from tutorzoo.envs.annotate import Annotator
from tutorzoo.envs.content import ContentReader
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


def test_a_question_after_a_fact_asks_with_its_own_demand() -> None:
    """The demand of a question on the sentence before is the asking sentence's: the fact's own "always" or "new"
    makes no transfer question of "Why does it work like that?"."""
    stem = get_task_set("stem")
    lesson = stem.build("floating_icebergs", np.random.default_rng(0))
    rd = ContentReader(lesson)
    fact = "Ice melting on land adds new water to the sea and raises sea level."  # a lesson fact with "new" in it
    assert rd.read(fact).claims and not any(c.question for c in rd.read(fact).claims)
    (q,) = [c for c in rd.read(f"{fact} Why does sea level work like that?").claims if c.question]
    assert q.demand == "explain"
    (q,) = [c for c in rd.read(f"{fact} What would happen to sea level in another case?").claims if c.question]
    assert q.demand == "transfer"


@pytest.mark.parametrize(("latex", "plain"), [
    (r"\(\frac{1}{2}\) = \(\frac{4}{8}\)", "1/2 = 4/8"),
    (r"$\dfrac{3}{4}$ of 8 is $3 \times 2$", "3/4 of 8 is 3 × 2"),
    (r"\[ x = \text{five} \]", "x = five"),
    ("You have $10 and spend $3.", "You have $10 and spend $3."),  # a dollar sign without a command is money
])
def test_latex_reads_as_the_plain_text_it_typesets(latex: str, plain: str) -> None:
    assert " ".join(plain_text(latex).split()) == plain


def test_a_leak_in_latex_is_the_same_leak_as_in_plain_text(task) -> None:
    """A hidden post-test item counts as given away when the turn states its answer beside the item's own numbers;
    written in LaTeX (``\\(\\frac{1}{2}\\)``) those numbers are the same numbers."""
    ann = Annotator.for_task(task)
    pre = {it.id for it in task.pretest}
    item = next(it for it in task.posttest if it.id not in pre and "/" in it.stem)
    first, second = re.findall(r"\d+(?:/\d+)?", item.stem)[:2]
    plain = f"Take {first} and {second}: the result is {item.answer}."
    latex = re.sub(r"(\d+)/(\d+)", r"\\(\\frac{\1}{\2}\\)", plain)
    assert latex != plain and "\\frac" in latex
    assert item.id in ann.annotate(plain, _ctx()).revealed_items
    assert item.id in ann.annotate(latex, _ctx()).revealed_items
