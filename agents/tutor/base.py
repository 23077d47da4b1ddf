"""The act-speaking base of the built-in rule-based tutors (the tutor protocol:
:class:`tutorzoo.envs.protocols.Tutor`)."""

from __future__ import annotations

import numpy as np

from tutorzoo.envs.act_text import verbalise_act
from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.protocols import Tutor
from tutorzoo.envs.tasks.base import Task

# The tutor protocol is defined beside the engine that drives it; the old name stays for the callers using it.
TutorPolicy = Tutor


class ActTutor:
    """A rule-based tutor that decides a dialogue act each turn and speaks it with the template verbaliser.

    Subclasses implement :meth:`choose`. The task arrives as ``info["task"]`` (the public view); it is
    rebuilt into a :class:`Task` once per episode so the verbaliser can use its teaching material.
    """

    name = "act-tutor"

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)
        self._task: Task | None = None

    def reset(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)
        self._task = None
        self.on_reset()

    def on_reset(self) -> None:
        """Clear per-episode state."""

    def act(self, observation: dict, info: dict) -> str:
        if info.get("observe_only", False):
            return ""
        task = self._task_from(info)
        act, misconception = self.choose(observation, info, task)
        return self.speak(act, task, misconception, info)

    def speak(self, act: TutorAct, task: Task, misconception: str | None, info: dict) -> str:
        return verbalise_act(act, task, self._rng, misconception=misconception)

    def choose(self, observation: dict, info: dict, task: Task) -> tuple[TutorAct, str | None]:
        raise NotImplementedError

    def _task_from(self, info: dict) -> Task:
        view = info["task"]
        if self._task is None or self._task.id != view["id"]:
            self._task = task_from_view(view)
        return self._task


def task_from_view(view: dict) -> Task:
    """A :class:`Task` holding what the tutor's public view holds (test items are not part of it)."""
    from tutorzoo.envs.tasks.base import Item

    placeholder = (Item(id="hidden", stem="(not shown to the tutor)", answer=view["answer"],
                        kcs=(view["knowledge_components"][0]["id"],)),)
    return Task(
        id=view["id"],
        task_set=view["task_set"],
        title=view["title"],
        statement=view["statement"],
        solution=tuple(view["solution"]),
        answer=view["answer"],
        disciplines=tuple(view["disciplines"]),
        grade=view["grade"],
        knowledge_components=tuple(view["knowledge_components"]),
        misconceptions=tuple(view["misconceptions"]),
        pretest=placeholder,
        posttest=placeholder,
        opening_question="(tutor view)",
        summary=view["summary"],
        objectives=tuple(view["objectives"]),
    )
