"""The simulated student's words agree with its state (issue 12, item 3).

An LLM tutor conditioned on the student's text learns from what the text says, so the text must not contradict
the student's answer or borrow another item's numbers. Checked on many socratic episodes (math and stem,
several personas and seeds) with the content reader (:mod:`tutorzoo.envs.content`) and the grader
(:mod:`tutorzoo.envs.grading`):

- **numbers**: every number a test answer's reasoning states is one of the item's own (its stem, options,
  correct and misconception solutions, answers), the stated answer, or derived from those by a relation the
  reasoning states (``8 × 3 = 24`` makes 24 the item's once 8 and 3 are); a dialogue turn that voices a
  misconception uses only the current task's numbers;
- **free answers**: a correct answer's reasoning contains no relation the reader finds false (beyond what it
  misreads in the item's own worked solution); a wrong answer's reasoning ends on the answer it gives (the last
  number it states is the stated answer);
- **choice answers**: a correct answer's reasoning says nothing the reader finds false; a misconception's answer
  is not argued with a refutation of that misconception; any other wrong answer is not argued with true
  statements.

``survey()`` also measures the rate of inconsistent answers (the number reported for the issue)::

    .venv/bin/python -c "from tests.agents.test_student_words import report; report()"
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.student_fixtures import TASK as FIXTURE
from tutorzoo.agents.student import SimulatedStudent, TemplateVerbaliser, get_persona
from tutorzoo.agents.student.model import Answer, init_state, nudge_answer
from tutorzoo.agents.student.verbaliser import TEMPLATES
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.content import FALSE, TRUE, ContentReader, normalise, sentences
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.grading import equivalent, extract_choice, extract_value, number_mentions, parse_number
from tutorzoo.envs.reading.chains import relation_chains
from tutorzoo.envs.reading.expressions import REL
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.envs.tasks.base import Item, Task
from tutorzoo.eval.rollout import run_episode

PERSONAS = (
    "all_round_partly_wrong", "weak_knowledge_partly_wrong", "poor_knowledge_mastery", "chatty", "terse",
    "anxious", "overconfident", "outstanding_ability",
)
SEEDS = {"math": range(8), "stem": range(2)}  # per task (15 math families, 48 lessons), personas in turn
FINAL = "The answer is"


# ---------------------------------------------------------------------------------------------- the checker

def _values(text: str) -> list[Fraction]:
    """The numbers ``text`` states; a percent counts both as a fraction and as its number (20% -> 1/5 and 20),
    a fraction also as its numerator and denominator (1/3 -> 1 and 3)."""
    out = []
    for m in number_mentions(text):
        out.append(m.value)
        if m.percent:
            out.append(m.value * 100)
        if parts := re.match(r"^\s*(-?\d+)\s*/\s*(\d+)\s*$", m.text):
            out += [Fraction(int(g)) for g in parts.groups()]
    return out


def _stray(text: str, allowed: set[Fraction]) -> list[str]:
    """Numbers of ``text`` that are not in ``allowed`` and not derived from it by a relation the text states."""
    allowed = set(allowed)
    for sent in sentences(text):
        for chain in relation_chains(normalise(sent)):
            sides = REL.split(chain)[0::2]
            for i in range(1, len(sides)):
                if all(v in allowed for side in sides[:i] for v in _values(side)):
                    allowed.update(_values(sides[i]))
    stray = []
    for m in number_mentions(text):
        if m.value not in allowed and not (m.percent and m.value * 100 in allowed):
            stray.append(m.text)
    return stray


def item_numbers(item: Item) -> set[Fraction]:
    texts = [item.stem, item.answer, *(item.options or ()), *item.solution_steps,
             *(s for steps in item.misconception_steps.values() for s in steps)]
    if not item.is_choice:
        texts += list(item.misconception_answers.values())
    return set(_values(" ".join(texts)))


def task_numbers(task: Task) -> set[Fraction]:
    texts = [task.statement, *task.solution, task.answer, task.opening_question]
    for m in task.misconceptions:
        texts += [m.belief, *m.wrong_steps]
    nums = set(_values(" ".join(texts)))
    for item in task.pretest + task.posttest:
        nums |= item_numbers(item)
    return nums


def _own(sentence: str, material: Iterable[str]) -> bool:
    """``sentence`` quotes one of the sentences of ``material`` (a template may put words around it)."""
    low = sentence.lower()
    return any(ref.lower().rstrip(".") in low for text in material for ref in sentences(text) if len(ref) > 8)


def _argued(reader: ContentReader, reasoning: str, material: Iterable[str], bad) -> list[str]:  # noqa: ANN001
    """Sentences of ``reasoning`` with a claim ``bad`` accepts, each read on its own. A sentence that quotes the
    item's own material for the answer given is not held against it: the reader's misreadings of that material
    (a true step read as false, a wrong option read as a refutation) are not the student's contradictions."""
    material = list(material)
    return [s for s in sentences(reasoning) if any(bad(c) for c in reader.read(s).claims) and not _own(s, material)]


def answer_problems(task: Task, item: Item, text: str) -> list[str]:
    """Why the test answer ``text`` to ``item`` contradicts itself (empty when it is consistent)."""
    reasoning, found, _ = text.rpartition(FINAL)
    if not found:
        return [f"no final {FINAL!r}"]
    problems = []
    reader = ContentReader.for_task(task)
    if item.is_choice:
        letter = extract_choice(text, len(item.options or ()))
        stated = {item.options[ord(letter) - ord("A")]} if letter else set()
    else:
        letter = None
        stated = {extract_value(text) or ""}
    stray = _stray(reasoning, item_numbers(item) | set(_values(" ".join(stated))))
    if stray:
        problems.append(f"numbers that are not the item's: {stray}")
    solution = [*item.solution_steps, *task.solution, *(task.kc(k).worked_example for k in item.kcs)]
    if item.is_choice:
        mids = {m for m, a in item.misconception_answers.items() if a == letter}
        if letter == item.answer:
            if _argued(reader, reasoning, [*solution, *stated], lambda c: c.verdict == FALSE and not c.question):
                problems.append("a correct choice argued with a false statement")
        elif mids:
            own = [*stated, *(t for m in task.misconceptions if m.id in mids for t in (m.belief, *m.wrong_steps))]
            if _argued(reader, reasoning, own, lambda c: set(c.refutes) & mids):
                problems.append("a misconception's choice argued with its refutation")
        elif _argued(reader, reasoning, stated, lambda c: c.verdict == TRUE and not c.question):
            problems.append("a wrong choice argued with true statements")
        return problems
    value = next(iter(stated))
    if equivalent(value, item.answer):
        wrong = _argued(reader, reasoning, solution, lambda c: c.verdict == FALSE and not c.question)
        if wrong:
            problems.append(f"a correct answer argued with false relations: {wrong}")
        return problems
    said = number_mentions(reasoning)
    target = parse_number(value)
    if said and target is not None and said[-1].value != target:
        problems.append(f"the reasoning reaches {said[-1].text}, the answer is {value}")
    return problems


def turn_problems(task: Task, text: str) -> list[str]:
    """Why a dialogue turn that voices a misconception uses numbers that are not the task's."""
    stray = _stray(text, task_numbers(task))
    return [f"numbers that are not the task's: {stray}"] if stray else []


# ---------------------------------------------------------------------------------------------- the survey

@dataclass(frozen=True)
class Said:
    phase: str
    task: Task
    item: Item | None
    text: str
    misconception: str | None = None  # a dialogue turn's voiced misconception


class RecordingStudent(SimulatedStudent):
    """The simulated student, keeping what it says with the item or task it said it about."""

    def __init__(self, persona: str, verbaliser: object | None = None) -> None:
        super().__init__(persona, verbaliser)
        self.said: list[Said] = []

    def act(self, observation: dict, info: dict):  # noqa: ANN201 - the parent's union
        out = super().act(observation, info)
        phase = info.get("phase")
        if phase in ("pretest", "posttest"):
            self.said.append(Said(phase, self.state.task, info["item"], out))
        elif phase == "dialogue":
            self.said.append(Said(phase, self.state.task, None, out.utterance, out.privileged["misconception_shown"]))
        return out


def episodes(task_set: str, personas: Iterable[str] = PERSONAS, seeds: Iterable[int] | None = None,
             verbaliser: object | None = None) -> list[Said]:
    """Socratic episodes on every task of ``task_set``, each task with the personas in turn over ``seeds``."""
    said: list[Said] = []
    tutor = make_tutor("socratic")
    personas = list(personas)
    for i, task_id in enumerate(get_task_set(task_set).task_ids()):
        for j, seed in enumerate(SEEDS[task_set] if seeds is None else seeds):
            persona = personas[(i + j) % len(personas)]
            student = RecordingStudent(persona, verbaliser)
            spec = EpisodeSpec(task_set=task_set, task_id=task_id, persona=persona, seed=seed)
            record = run_episode(spec, tutor, student, "socratic")
            assert not record["failures"], record["failures"]
            said += student.said
    return said


def survey(said: list[Said]) -> tuple[list[tuple[Said, list[str]]], list[tuple[Said, list[str]]], int, int]:
    """(inconsistent answers, inconsistent misconception turns, answers, misconception turns)."""
    answers = [s for s in said if s.item is not None]
    turns = [s for s in said if s.misconception is not None]
    bad_answers = [(s, p) for s in answers if (p := answer_problems(s.task, s.item, s.text))]
    bad_turns = [(s, p) for s in turns if (p := turn_problems(s.task, s.text))]
    return bad_answers, bad_turns, len(answers), len(turns)


def _kind(problem: str) -> str:
    return "the reasoning reaches another value" if problem.startswith("the reasoning reaches") else \
        problem.split(":")[0]


def report(verbaliser: object | None = None) -> None:
    """Print the inconsistency rates of the default survey (the number quoted for issue 12, item 3)."""
    for task_set in ("math", "stem"):
        bad_answers, bad_turns, n_answers, n_turns = survey(episodes(task_set, verbaliser=verbaliser))
        print(f"{task_set}: inconsistent test answers {len(bad_answers)}/{n_answers} "
              f"({len(bad_answers) / max(n_answers, 1):.1%}); misconception turns with foreign numbers "
              f"{len(bad_turns)}/{n_turns}")
        kinds = Counter(_kind(p) for _, problems in bad_answers for p in problems)
        for kind, count in kinds.most_common():
            print(f"    {count:4d} {kind}")
        for s, p in bad_answers[:4]:
            print("   ", s.item.id, "|", s.text, "|", p)


# ---------------------------------------------------------------------------------------------- tests

def _math_tasks(n: int = 4) -> list[Task]:
    ts = get_task_set("math")
    return [ts.build(t, np.random.default_rng(seed)) for seed in range(n) for t in ts.task_ids()]


def test_the_checker_accepts_every_items_own_solutions() -> None:
    """The items' own worked solutions, right and wrong, pass: the checker flags the student, not the curriculum."""
    checked = 0
    for task in _math_tasks():
        for item in task.pretest + task.posttest:
            text = f"{' '.join(item.solution_steps)} {FINAL} {item.answer}."
            assert answer_problems(task, item, text) == [], text
            for mid, steps in item.misconception_steps.items():
                text = f"{' '.join(steps)} {FINAL} {item.misconception_answers[mid]}."
                assert answer_problems(task, item, text) == [], text
                checked += 1
    assert checked > 200


def _triangle() -> Task:
    return get_task_set("math").build("triangle_area", np.random.default_rng(0))


@pytest.mark.parametrize("case", ["correct_steps_wrong_answer", "another_items_wrong_steps", "foreign_numbers",
                                  "steps_reach_another_value"])
def test_the_checker_flags_the_reported_contradictions(case: str) -> None:
    task = _triangle()
    main, post = task.pretest[0], task.posttest[0]
    mid = next(iter(main.misconception_steps))
    text = {
        "correct_steps_wrong_answer": f"{' '.join(post.solution_steps)} {FINAL} {int(post.answer) + 1}.",
        "another_items_wrong_steps": f"{' '.join(main.misconception_steps[mid])} {FINAL} "
                                     f"{post.misconception_answers[mid]}.",
        "foreign_numbers": f"The base is 9137 and the height is 4271. {FINAL} {post.answer}.",
        "steps_reach_another_value": f"4 + 72 = 76. {FINAL} 77.",
    }[case]
    assert answer_problems(task, post, text), text


@functools.lru_cache(maxsize=2)
def _survey(task_set: str) -> tuple:
    return survey(episodes(task_set))


@pytest.mark.parametrize("task_set", ["math", "stem"])
def test_test_answers_agree_with_their_reasoning(task_set: str) -> None:
    bad, _, n, _ = _survey(task_set)
    assert n > 300
    shown = "\n".join(f"{s.item.id}: {s.text!r} -> {p}" for s, p in bad[:5])
    assert not bad, f"{len(bad)}/{n} test answers contradict themselves:\n{shown}"


@pytest.mark.parametrize("task_set", ["math", "stem"])
def test_misconception_turns_use_the_tasks_numbers(task_set: str) -> None:
    _, bad, _, n = _survey(task_set)
    assert n > 20
    shown = "\n".join(f"{s.task.id}: {s.text!r} -> {p}" for s, p in bad[:5])
    assert not bad, f"{len(bad)}/{n} misconception turns use other numbers:\n{shown}"


# ---------------------------------------------------------------------------------------------- the verbaliser

def _state(task: Task, persona: str, seed: int = 0):  # noqa: ANN202 - StudentState
    return init_state(task, get_persona(persona), np.random.default_rng(seed))


@pytest.mark.parametrize("persona", ["terse", "weak_knowledge_partly_wrong", "chatty"])  # 1, 2 and all steps
def test_a_misconception_answer_says_this_items_wrong_solution(persona: str) -> None:
    verbaliser, rng, n = TemplateVerbaliser(), np.random.default_rng(0), 0
    for task in _math_tasks(2):
        state = _state(task, persona)
        for item in task.pretest + task.posttest:
            for mid, steps in item.misconception_steps.items():
                text = verbaliser.answer(item, Answer("misconception", item.misconception_answers[mid], False, mid),
                                         state, rng)
                assert steps[-1] in text, text
                assert answer_problems(task, item, text) == [], text
                n += 1
    assert n > 100


@pytest.mark.parametrize("persona", ["terse", "weak_knowledge_partly_wrong", "chatty"])
def test_a_slip_ends_on_the_value_it_gives(persona: str) -> None:
    verbaliser, rng = TemplateVerbaliser(), np.random.default_rng(0)
    shown = []
    for task in _math_tasks(2):
        state = _state(task, persona)
        for item in task.pretest + task.posttest:
            wrong = nudge_answer(item.answer, rng)
            text = verbaliser.answer(item, Answer("slip", wrong, False), state, rng)
            assert answer_problems(task, item, text) == [], text
            reasoning = text.rpartition(FINAL)[0]
            if number_mentions(reasoning):
                assert number_mentions(reasoning)[-1].value == parse_number(wrong), text
                shown.append(True)
            else:
                shown.append(False)
    assert np.mean(shown) > 0.8, "most slips show the working that went wrong"


def test_without_the_items_wrong_steps_the_student_says_no_other_items_numbers() -> None:
    """The fixture's items carry no ``misconception_steps``: the task's wrong steps (worked on 1/2 + 1/3) are
    said on that item and never on its twin 2/3 + 1/4."""
    pre, post = FIXTURE.pretest[0], FIXTURE.posttest[0]
    verbaliser, rng = TemplateVerbaliser(), np.random.default_rng(0)
    state = _state(FIXTURE, "chatty")
    on_pre = [verbaliser.answer(pre, Answer("misconception", "2/5", False, "add_across"), state, rng)
              for _ in range(20)]
    on_post = [verbaliser.answer(post, Answer("misconception", "3/7", False, "add_across"), state, rng)
               for _ in range(20)]
    assert any("so 2/5." in t for t in on_pre), on_pre
    for text in on_post:
        assert "2/5" not in text and "1 + 1 = 2" not in text, text
        assert answer_problems(FIXTURE, post, text) == [], text


def test_a_bare_answer_template_that_shows_reasoning_is_rejected(tmp_path: Path) -> None:
    data = yaml.safe_load(TEMPLATES.read_text(encoding="utf-8"))
    data["answers"]["guess"] = ["{steps} I'm guessing."]
    path = tmp_path / "templates.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="shows no reasoning"):
        TemplateVerbaliser(path)


def test_an_items_wrong_steps_need_the_misconceptions_answer() -> None:
    with pytest.raises(ValueError, match="misconception_steps names"):
        Item(id="q", stem="1/2 + 1/3?", answer="5/6", kcs=("add",), misconception_steps={"add_across": ("2/5",)})


def test_the_words_are_the_same_under_the_same_seed() -> None:
    first = [s.text for s in episodes("math", personas=["chatty"], seeds=[3])]
    again = [s.text for s in episodes("math", personas=["chatty"], seeds=[3])]
    assert first == again


def test_a_decimal_divided_by_a_decimal_is_two_numbers_not_a_fraction_over_zero() -> None:
    from tutorzoo.agents.student import verbaliser

    stated = verbaliser._numbers("The biceps at 0.04 m must give 6.4 / 0.04 = 160 N.")
    assert stated == {Fraction(1, 25), Fraction(32, 5), 160}


@pytest.mark.parametrize("text", ["Balanced, 6CO₂ + 6H₂O → C₆H₁₂O₆ + 6O₂.", "A 10kg box on a 100m track.",
                                  "Draw it in 3D.", "the 3rd one", "2x + 3 = 7", "in the 1970s", "20% of 1/4"])
def test_the_student_reads_a_texts_numbers_as_the_reader_does(text: str) -> None:
    """The student quotes a step only if its numbers are the item's; it reads them as number_mentions does (a
    digit run into a letter included), else it quotes numbers the item does not have."""
    from tutorzoo.agents.student import verbaliser

    expected = set()
    for m in number_mentions(text):
        expected.add(m.value)
        if m.percent:
            expected.add(m.value * 100)
        if parts := re.fullmatch(r"(\d+)\s*/\s*(\d+)", m.text):
            expected.update(Fraction(int(g)) for g in parts.groups())
    assert verbaliser._numbers(text) == expected
