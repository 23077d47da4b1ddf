"""A hand-built Task and an episode driver for the simulated-student tests.

The task has three KCs (equivalent fractions -> fraction addition, and a chemistry KC on mixing linked to
addition), two misconceptions with their item answers, three pre-test items and their isomorphic twins.
:func:`run_episode` feeds a student the info dicts the env gives it (pre-test, dialogue, post-test).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tutorzoo.envs.acts import StudentTurn, TutorAct
from tutorzoo.envs.tasks.base import BankQuestion, Item, KCLink, KnowledgeComponent, Misconception, Task


def _questions(kc: str) -> tuple[BankQuestion, ...]:
    return (
        BankQuestion(text=f"What is {kc}?", guidance_level="L1", bloom="remember"),
        BankQuestion(text=f"Why does {kc} work?", guidance_level="L2", bloom="understand"),
        BankQuestion(text=f"Where else could you use {kc}?", guidance_level="L3", bloom="analyze"),
    )


EQUIV = KnowledgeComponent(
    id="equivalent_fractions",
    name="equivalent fractions",
    discipline="math",
    keywords=("equivalent", "common denominator", "same size"),
    explanation="Multiplying top and bottom by the same number gives an equivalent fraction of the same size.",
    worked_example="1/2 = 3/6 because 1x3 = 3 and 2x3 = 6.",
    questions=_questions("an equivalent fraction"),
    hints=("Try multiplying the top and the bottom by the same number.",),
    analogies=("Cutting a pizza into more slices does not make more pizza.",),
    difficulty=0.3,
)
ADD = KnowledgeComponent(
    id="fraction_addition",
    name="adding fractions",
    discipline="math",
    keywords=("add", "sum", "denominator"),
    prerequisites=("equivalent_fractions",),
    links=(
        KCLink(discipline="chemistry", kc="mixing", bridge="Mixing two juice amounts adds fractions of a litre.",
               keywords=("mixture", "litre")),
    ),
    explanation="To add fractions, rewrite them with a common denominator, then add the numerators.",
    worked_example="1/2 + 1/3 = 3/6 + 2/6 = 5/6.",
    questions=_questions("adding fractions"),
    hints=("Find a denominator both fractions can use.",),
    analogies=("You can only add apples to apples: make the pieces the same size first.",),
    difficulty=0.5,
)
MIX = KnowledgeComponent(
    id="mixing",
    name="parts of a mixture",
    discipline="chemistry",
    keywords=("mixture", "juice", "litre"),
    links=(KCLink(discipline="math", kc="fraction_addition", bridge="A mixture's parts add like fractions."),),
    explanation="The amount of one part of a mixture is its fraction times the total amount.",
    worked_example="A drink that is 1/3 juice has 2 litre of juice in 6 litre of drink: 1/3 x 6 = 2.",
    questions=_questions("a mixture"),
    hints=("Multiply the fraction by the total amount.",),
    analogies=("A third of a class of 30 pupils is 10 pupils.",),
    difficulty=0.5,
)

ADD_ACROSS = Misconception(
    id="add_across",
    kc="fraction_addition",
    belief="you add the tops and add the bottoms.",
    wrong_steps=("1 + 1 = 2 on top.", "2 + 3 = 5 on the bottom, so 2/5."),
    counterexample="1/2 + 1/2 would be 2/4 = 1/2: adding a half to a half cannot give a half.",
    negation="No, you must not add the denominators.",
    keywords=("add the bottoms",),
)
BIG_DENOM = Misconception(
    id="bigger_denominator",
    kc="equivalent_fractions",
    belief="a bigger bottom number means a bigger fraction.",
    wrong_steps=("8 is bigger than 4,", "so 1/8 is bigger than 1/4."),
    counterexample="Would you rather have 1/8 or 1/4 of the same pizza?",
    negation="No, 1/8 is smaller than 1/4.",
)

PRETEST = (
    Item(id="pre_add", stem="What is 1/2 + 1/3?", answer="5/6", kcs=("fraction_addition",),
         misconception_answers={"add_across": "2/5"}, solution_steps=("1/2 + 1/3 = 3/6 + 2/6.", "3/6 + 2/6 = 5/6.")),
    Item(id="pre_compare", stem="Which is larger?", options=("1/8", "1/4", "They are equal"), answer="B",
         kcs=("equivalent_fractions",), misconception_answers={"bigger_denominator": "A"},
         solution_steps=("1/4 = 2/8.", "2/8 is more than 1/8, so 1/4 is larger.")),
    Item(id="pre_mix", stem="A drink is 1/3 juice. How many litres of juice are in 6 litres?", answer="2",
         kcs=("mixing",), solution_steps=("1/3 x 6 = 2.",)),
)
POSTTEST = (
    Item(id="post_add", stem="What is 2/3 + 1/4?", answer="11/12", kcs=("fraction_addition",),
         misconception_answers={"add_across": "3/7"}, parallel_of="pre_add",
         solution_steps=("2/3 + 1/4 = 8/12 + 3/12.", "8/12 + 3/12 = 11/12.")),
    Item(id="post_compare", stem="Which is larger?", options=("1/6", "1/3", "They are equal"), answer="B",
         kcs=("equivalent_fractions",), misconception_answers={"bigger_denominator": "A"}, parallel_of="pre_compare",
         solution_steps=("1/3 = 2/6.", "2/6 is more than 1/6, so 1/3 is larger.")),
    Item(id="post_mix", stem="A drink is 1/4 juice. How many litres of juice are in 12 litres?", answer="3",
         kcs=("mixing",), parallel_of="pre_mix", solution_steps=("1/4 x 12 = 3.",)),
)

TASK = Task(
    id="fractions_fixture",
    task_set="test",
    title="Adding fractions",
    statement="Ana drinks 1/2 of a bottle and Ben drinks 1/3 of it. How much of the bottle did they drink?",
    solution=("Use a common denominator: 1/2 = 3/6 and 1/3 = 2/6.", "Add the numerators: 3/6 + 2/6 = 5/6.",
              "They drank 5/6 of the bottle."),
    answer="5/6",
    disciplines=("math", "chemistry"),
    grade=5,
    knowledge_components=(EQUIV, ADD, MIX),
    misconceptions=(ADD_ACROSS, BIG_DENOM),
    pretest=PRETEST,
    posttest=POSTTEST,
    opening_question="How do I add 1/2 and 1/3? They have different bottoms.",
    summary="Fractions are added after rewriting them over a common denominator.",
)


def act(intent: str, strategy: str | None, level: str, kc: str | None = "fraction_addition", **kw: object) -> TutorAct:
    """A TutorAct with the usual defaults of a question on ``kc``."""
    kw.setdefault("is_question", strategy not in (None, "encourage", "corrective_feedback", "analogy"))
    return TutorAct(intent=intent, strategy=strategy, guidance_level=level, target_kc=kc, **kw)  # type: ignore[arg-type]


_ANSWER = re.compile(r"answer is\s*\(?([^()]+?)\)?\.?\s*$", re.IGNORECASE)


def grade(item: Item, text: str) -> bool:
    """EducationQ-style extraction of the final answer (``The answer is (B).`` / ``The answer is 5/6.``)."""
    m = _ANSWER.search(text.strip())
    return bool(m) and m.group(1).strip() == item.answer


@dataclass
class Episode:
    pre: list[bool]
    post: list[bool]
    turns: list[StudentTurn]
    texts: list[str] = field(default_factory=list)
    post_texts: list[str] = field(default_factory=list)


ActsFn = Callable[[int, StudentTurn | None], TutorAct]


def run_episode(student: Any, acts: Sequence[TutorAct] | ActsFn, seed: int, posttest: str = "isomorphic",
                task: Task = TASK, student_opens: bool = True) -> Episode:
    """One session with info dicts as the env builds them; ``acts`` is a list or ``f(turn, last_turn)``."""
    student.reset(seed=seed)
    n_turns = len(acts) if isinstance(acts, Sequence) else 8
    messages: list[dict] = []
    base = {"task": task, "max_turns": n_turns, "messages": messages}
    pre = []
    for i, item in enumerate(task.pretest):
        text = student.act({"text": item.render()}, {**base, "phase": "pretest", "turn": 0, "item": item,
                                                    "item_index": i, "n_items": len(task.pretest)})
        pre.append(grade(item, text))
    turns: list[StudentTurn] = []
    if student_opens:
        turns.append(student.act({"text": ""}, {**base, "phase": "dialogue", "turn": 0, "tutor_act": None,
                                               "tutor_utterance": ""}))
    for t in range(n_turns):
        a = acts[t] if isinstance(acts, Sequence) else acts(t, turns[-1] if turns else None)
        turn = student.act({"text": "..."}, {**base, "phase": "dialogue", "turn": t + 1, "tutor_act": a,
                                             "tutor_utterance": "..."})
        turns.append(turn)
    items = task.pretest if posttest == "same" else task.posttest
    post, post_texts = [], []
    for i, item in enumerate(items):
        text = student.act({"text": item.render()}, {**base, "phase": "posttest", "turn": n_turns, "item": item,
                                                    "item_index": i, "n_items": len(items), "posttest_kind": posttest})
        post.append(grade(item, text))
        post_texts.append(text)
    return Episode(pre, post, turns, [t.utterance for t in turns], post_texts)
