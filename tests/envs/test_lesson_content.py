"""The checkable content of the stem lessons: every KC's ``facts`` and every misconception's ``refutations``.

The lesson schema (:class:`tutorzoo.envs.tasks.stem.Lesson`) requires them, a lesson without them is refused with the
file,
the field and the fix, and the content reader (:mod:`tutorzoo.envs.content`) credits each of them when a tutor states
it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from tutorzoo.envs.content import FALSE, TRUE, ContentReader
from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.tasks.stem import DEFAULT_LESSONS_DIR, StemTaskSet, load_lesson

LESSONS = StemTaskSet()
TASKS = {tid: LESSONS.build(tid, np.random.default_rng(0)) for tid in LESSONS.task_ids()}


def _good() -> dict:
    return yaml.safe_load((DEFAULT_LESSONS_DIR / "01_water_rocket.yaml").read_text(encoding="utf-8"))


def _drop_facts(d: dict) -> None:
    del d["knowledge_components"][1]["facts"]


def _two_facts(d: dict) -> None:
    d["knowledge_components"][0]["facts"] = d["knowledge_components"][0]["facts"][:2]


def _seven_facts(d: dict) -> None:
    d["knowledge_components"][0]["facts"] = [f"Fact number {i} about thrust and forces." for i in range(7)]


def _one_word_fact(d: dict) -> None:
    d["knowledge_components"][2]["facts"][0] = "Fins."


def _drop_refutations(d: dict) -> None:
    del d["misconceptions"][0]["refutations"]


def _empty_refutations(d: dict) -> None:
    d["misconceptions"][3]["refutations"] = []


SCHEMA_ERRORS: dict[str, tuple[Callable[[dict], None], tuple[str, ...]]] = {
    "missing-facts": (_drop_facts, ("knowledge_components[1].facts", "'pressure_and_fill'", "Field required",
                                    "add facts: 3-6 short true propositions")),
    "too-few-facts": (_two_facts, ("knowledge_components[0].facts", "at least 3")),
    "too-many-facts": (_seven_facts, ("knowledge_components[0].facts", "at most 6")),
    "fact-not-a-sentence": (_one_word_fact, ("knowledge_components[2].facts", "'Fins.' has 1 words")),
    "missing-refutations": (_drop_refutations, ("misconceptions[0].refutations", "'pushes_on_ground'",
                                                "add refutations: at least one observation")),
    "empty-refutations": (_empty_refutations, ("misconceptions[3].refutations", "at least 1")),
}


@pytest.mark.parametrize("case", SCHEMA_ERRORS.values(), ids=SCHEMA_ERRORS.keys())
def test_lesson_without_checkable_content_is_refused(tmp_path: Path, case) -> None:
    mutate, expected = case
    data = _good()
    mutate(data)
    path = tmp_path / "01_water_rocket.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        load_lesson(path)
    message = str(err.value)
    assert str(path) in message and "fix:" in message
    for needle in expected:
        assert needle in message, f"{needle!r} not in {message}"


@pytest.mark.parametrize("tid", TASKS)
def test_every_fact_is_credited_as_true_on_its_kc(tid: str) -> None:
    task = TASKS[tid]
    reader = ContentReader.for_task(task)
    for k in task.knowledge_components:
        for fact in k.facts:
            reading = reader.read(fact)
            assert any(c.kc == k.id and c.verdict == TRUE for c in reading.claims), (k.id, fact, reading.to_dict())
            assert not reading.false_statements() and not reading.affirmed, (k.id, fact, reading.to_dict())


@pytest.mark.parametrize("tid", TASKS)
def test_every_refutation_is_a_counterexample_to_its_misconception(tid: str) -> None:
    task = TASKS[tid]
    reader = ContentReader.for_task(task)
    for m in task.misconceptions:
        for observation in m.refutations:
            reading = reader.read(observation)
            assert m.id in reading.refuted and not reading.affirmed, (m.id, observation, reading.to_dict())


READINGS = {
    # a fact in the tutor's own words (inflection, synonyms) is still the fact
    "own-words-fact": ("water_rocket", "Forces always come in pairs, acting on two different objects.",
                       "action_reaction", TRUE),
    "negated-fact": ("water_rocket", "Forces never come in pairs that act on two different objects.",
                     "action_reaction", FALSE),
    "changed-quantity": ("floating_icebergs", "About 40% of an iceberg floats below the surface of seawater.",
                         "buoyancy_fraction", FALSE),
    "kc-name-only": ("water_rocket", "Let's talk about Newton's third law: action and reaction.", None, None),
}


@pytest.mark.parametrize("case", READINGS.values(), ids=READINGS.keys())
def test_facts_are_read_with_polarity_and_quantities(case) -> None:
    tid, text, kc, verdict = case
    reading = ContentReader.for_task(TASKS[tid]).read(text)
    if verdict is None:
        assert not reading.has_content, reading.to_dict()
        return
    assert any(c.kc == kc and c.verdict == verdict for c in reading.claims), reading.to_dict()
