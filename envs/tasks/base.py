"""The task model shared by every task set: a task, its knowledge components, misconceptions and test items.

A *task* is what one tutoring session is about. Task sets build tasks (procedurally for ``math``, from
lesson files for ``stem``, from question banks for ``mcq``); the environment only ever sees :class:`Task`.

The tutor is shown :meth:`Task.public_view` (statement, solution, answer, disciplines, knowledge components
with their teaching material, the catalogue of known misconceptions — domain knowledge every teacher has);
never the student's hidden state. The simulated student reads the same objects to know which
misconceptions it may hold and what wrong answers they produce.

Example::

    from tutorzoo.envs.tasks import get_task_set
    import numpy as np
    task = get_task_set("math").build("fraction_addition", np.random.default_rng(0))
    task.pretest[0].stem
"""

from __future__ import annotations

from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tutorzoo.envs.labels import BLOOM_LEVELS, DISCIPLINES, GUIDANCE_LEVELS

Discipline = Literal[
    "math", "physics", "chemistry", "biology", "geography", "history", "technology", "art", "language"
]
GuidanceLevel = Literal["L1", "L2", "L3"]
Bloom = Literal["remember", "understand", "apply", "analyze", "evaluate", "create"]

assert set(Discipline.__args__) == set(DISCIPLINES)  # type: ignore[attr-defined]
assert set(GuidanceLevel.__args__) == set(GUIDANCE_LEVELS)  # type: ignore[attr-defined]
assert set(Bloom.__args__) == set(BLOOM_LEVELS)  # type: ignore[attr-defined]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BankQuestion(_Frozen):
    """A question a tutor can ask about one knowledge component."""

    text: str = Field(min_length=1, description="The question as the tutor says it.")
    guidance_level: GuidanceLevel = Field(description="L1 closed/definition, L2 explanation, L3 transfer.")
    bloom: Bloom = Field(description="The Bloom level the question asks the student to work at.")
    expected: str | None = Field(default=None, description="A model answer, when one is short.")


class KCLink(_Frozen):
    """A cross-discipline link a tutor can use to trigger transfer (SID's IKT)."""

    discipline: Discipline
    kc: str | None = Field(default=None, description="Id of the linked component in the same task, if any.")
    bridge: str = Field(min_length=1, description="A sentence a tutor can say to make the link.")
    keywords: tuple[str, ...] = Field(default=(), description="Words that show the link is being used.")


class KnowledgeComponent(_Frozen):
    """One knowledge component (KC) with the material a tutor and a verbaliser draw on."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    name: str
    discipline: Discipline
    keywords: tuple[str, ...] = Field(min_length=1, description="Words whose use marks this KC as the topic.")
    prerequisites: tuple[str, ...] = Field(default=(), description="Ids of KCs this one builds on.")
    links: tuple[KCLink, ...] = ()
    explanation: str = Field(min_length=1, description="A short explanation (L2) of the KC.")
    worked_example: str = Field(min_length=1, description="A short worked example for novices.")
    questions: tuple[BankQuestion, ...] = Field(min_length=3)
    hints: tuple[str, ...] = Field(min_length=1)
    analogies: tuple[str, ...] = Field(min_length=1)
    contexts: tuple[str, ...] = Field(default=(), description="Real-world contexts (contextualize).")
    difficulty: float = Field(default=0.5, ge=0.0, le=1.0, description="0 easy … 1 hard for the grade.")
    facts: tuple[str, ...] = Field(
        default=(), description="Short canonical true propositions about the KC, in plain words with the terms and "
        "quantities they involve; the content reader checks tutor turns against them (required in stem lessons)."
    )


class Misconception(_Frozen):
    """A wrong belief a student may hold about one KC, and what repairs it."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    kc: str
    belief: str = Field(min_length=1, description="The wrong belief, in the student's words.")
    wrong_steps: tuple[str, ...] = Field(default=(), description="The steps it produces on the task.")
    counterexample: str = Field(min_length=1, description="A counterexample or scenario that repairs it.")
    negation: str = Field(min_length=1, description="The plain correction ('No, that's wrong because ...').")
    keywords: tuple[str, ...] = Field(default=(), description="Words that show a tutor addresses it.")
    refutations: tuple[str, ...] = Field(
        default=(), description="Observations that refute the belief, each a plain true statement; stating one is "
        "a counterexample to the misconception (required in stem lessons)."
    )


class Item(_Frozen):
    """A test item: multiple choice (``options`` set, ``answer`` a letter) or free answer."""

    id: str
    stem: str = Field(min_length=1)
    options: tuple[str, ...] | None = Field(default=None, description="Option texts; letters are A, B, ...")
    answer: str = Field(min_length=1, description="A letter for multiple choice, else the exact answer.")
    kcs: tuple[str, ...] = Field(min_length=1)
    misconception_answers: dict[str, str] = Field(
        default_factory=dict, description="Misconception id -> the answer it produces (letter or value)."
    )
    solution_steps: tuple[str, ...] = ()
    misconception_steps: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="Misconception id -> the full wrong solution it produces on this item, with the item's numbers "
        "(optional; the simulated student says these when its answer is that misconception's).",
    )
    subject: str | None = Field(default=None, description="Subject/category, for per-subject metrics (CSS).")
    parallel_of: str | None = Field(default=None, description="For a post-test item, the pre-test item it mirrors.")

    @model_validator(mode="after")
    def _check_choice(self) -> Item:
        if self.options is not None:
            letters = [chr(ord("A") + i) for i in range(len(self.options))]
            if len(self.options) < 2:
                raise ValueError(f"item {self.id}: a multiple-choice item needs at least 2 options")
            if self.answer not in letters:
                raise ValueError(f"item {self.id}: answer {self.answer!r} must be one of {letters}")
            bad = {m: a for m, a in self.misconception_answers.items() if a not in letters}
            if bad:
                raise ValueError(f"item {self.id}: misconception answers {bad} must be option letters")
        extra = sorted(set(self.misconception_steps) - set(self.misconception_answers))
        if extra:
            raise ValueError(f"item {self.id}: misconception_steps names {extra}, which have no misconception_answers "
                             "entry; give each its answer or drop its steps")
        return self

    @property
    def is_choice(self) -> bool:
        return self.options is not None

    def render(self, with_options: bool = True) -> str:
        """The item as shown to a student (with options) or a tutor (EducationQ: without)."""
        if not with_options or self.options is None:
            return self.stem
        lines = [self.stem] + [f"({chr(ord('A') + i)}) {o}" for i, o in enumerate(self.options)]
        return "\n".join(lines)


class Task(_Frozen):
    """One tutoring task: the problem or lesson, its KCs, misconceptions and pre/post-test items."""

    id: str
    task_set: str
    title: str
    statement: str = Field(min_length=1, description="The problem or driving question.")
    solution: tuple[str, ...] = Field(min_length=1, description="Step-by-step solution.")
    answer: str = Field(min_length=1)
    disciplines: tuple[Discipline, ...] = Field(min_length=1)
    grade: int = Field(ge=0, le=12)
    knowledge_components: tuple[KnowledgeComponent, ...] = Field(min_length=1)
    misconceptions: tuple[Misconception, ...] = ()
    pretest: tuple[Item, ...] = Field(min_length=1)
    posttest: tuple[Item, ...] = Field(min_length=1, description="Isomorphic items: same KCs, new surface.")
    opening_question: str = Field(min_length=1, description="What a student says to open (SID protocol).")
    summary: str = Field(min_length=1, description="The summary a good session reaches.")
    objectives: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _check_links(self) -> Task:
        kc_ids = {k.id for k in self.knowledge_components}
        where = f"task {self.id}"
        if len(kc_ids) != len(self.knowledge_components):
            raise ValueError(f"{where}: knowledge component ids must be unique")
        for k in self.knowledge_components:
            for p in k.prerequisites:
                if p not in kc_ids:
                    raise ValueError(f"{where}: KC {k.id} has prerequisite {p!r}, which is not a KC of the task")
            for link in k.links:
                if link.kc is not None and link.kc not in kc_ids:
                    raise ValueError(f"{where}: KC {k.id} links to {link.kc!r}, which is not a KC of the task")
        mis_ids = {m.id for m in self.misconceptions}
        for m in self.misconceptions:
            if m.kc not in kc_ids:
                raise ValueError(f"{where}: misconception {m.id} is about {m.kc!r}, which is not a KC of the task")
        for item in self.pretest + self.posttest:
            for kc in item.kcs:
                if kc not in kc_ids:
                    raise ValueError(f"{where}: item {item.id} tests {kc!r}, which is not a KC of the task")
            for mid in item.misconception_answers:
                if mid not in mis_ids:
                    raise ValueError(f"{where}: item {item.id} names misconception {mid!r}, which the task lacks")
        return self

    def kc(self, kc_id: str) -> KnowledgeComponent:
        for k in self.knowledge_components:
            if k.id == kc_id:
                return k
        raise KeyError(f"task {self.id} has no knowledge component {kc_id!r}")

    def public_view(self) -> dict:
        """What the tutor sees as ``info['task']`` (docs/design.md, "Public contract"), as plain JSON-able data: every
        field but the test items and the student's opening question, in field order."""
        return self.model_dump(mode="json", include=_PUBLIC_TASK_FIELDS)


_PUBLIC_TASK_FIELDS: set[str] = {  # model_dump's include is typed as a set
    "id", "task_set", "title", "statement", "solution", "answer", "disciplines", "grade", "knowledge_components",
    "misconceptions", "summary", "objectives",
}


class TaskSet(Protocol):
    """A named collection of tasks. ``build`` must be deterministic in ``rng``."""

    name: str

    def task_ids(self) -> list[str]:
        """Every task id, in a fixed order."""
        ...

    def build(self, task_id: str, rng: np.random.Generator) -> Task:
        """The task instance for ``task_id`` (procedural sets draw surface details from ``rng``)."""
        ...
