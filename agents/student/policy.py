"""The simulated student policy: the cognitive model (``model.py``) driven by a persona, voiced by a verbaliser.

The env calls ``reset(seed)`` then ``act(observation, info)`` on each student turn. The first ``act`` after
``reset`` builds the hidden state from ``info["task"]`` and the persona. Generators are spawned from the seed *and
the episode's identity* (task set, task id, persona name): one for the model's set-up and pre-test, one for the
text (changing a template never changes the learning dynamics), one for the post-test and one for the dialogue,
each turn from its own fixed point of it (common random numbers: every tutor's student meets the same uniforms at
each turn's start and on the post-test, so a paired difference measures the tutors, not the dice). The identity
is part of the stream because a suite runs every task x persona under the same few seeds: with the seed alone,
all those episodes would draw the same uniforms at the same points (the same "knows the item" draw on every
one-item pre-test, the same post-test draw after a dialogue that draws nothing), and the educationq suite's 320
episodes per seed would be one sample. Every tutor still meets the same student on the same spec (paired
comparison); an unseeded ``reset()`` stays fresh entropy.

Example::

    student = SimulatedStudent("weak_knowledge_partly_wrong")
    student.reset(seed=7)
    text = student.act({}, {"phase": "pretest", "task": task, "item": task.pretest[0], ...})
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

from tutorzoo.agents.student.model import (
    StudentState,
    answer_item,
    begin_posttest,
    init_state,
    open_dialogue,
    respond,
    snapshot,
)
from tutorzoo.agents.student.personas import Persona, PersonaDistribution, get_persona
from tutorzoo.envs.acts import StudentTurn, TutorAct
from tutorzoo.envs.annotate import encourages
from tutorzoo.envs.labels import BLOOM_LEVELS
from tutorzoo.envs.reading.normalise import plain_text
from tutorzoo.envs.tasks.base import Item, Task

PHASES = ("pretest", "dialogue", "posttest")
TURN_DRAWS_LOG2 = 40  # a dialogue turn's draws come from its own 2**40 of the turn stream (a turn takes tens)


class SimulatedStudent:
    """A persona-driven simulated student (non-trainable). ``persona`` may be a name, a Persona or a distribution.

    With a :class:`PersonaDistribution`, each episode draws its persona from the reset seed.
    """

    trainable = False
    reads_observation = False  # it acts from info (the task, the item, the tutor's act): the env builds no observation

    def __init__(self, persona: Persona | PersonaDistribution | str, verbaliser: object | None = None) -> None:
        from tutorzoo.agents.student.verbaliser import TemplateVerbaliser

        self.source = get_persona(persona) if isinstance(persona, str) else persona
        if not isinstance(self.source, (Persona, PersonaDistribution)):
            raise TypeError(f"persona must be a Persona, PersonaDistribution or name, got {type(persona).__name__}")
        self.verbaliser = verbaliser if verbaliser is not None else TemplateVerbaliser()
        self.persona: Persona | None = self.source if isinstance(self.source, Persona) else None
        self.state: StudentState | None = None
        self.reset(None)

    @property
    def name(self) -> str:
        return f"simulated:{self.persona.name if self.persona else self.source.name}"

    def reset(self, seed: int | None = None) -> None:
        """Forget the episode; the next ``act`` starts a new one with generators seeded from ``seed`` and the
        episode's task and persona (see the module docstring)."""
        self._seed = seed
        if seed is None:  # a seeded episode's streams are made by _start, before anything is drawn from them
            self._seed_streams(np.random.SeedSequence().entropy)
        self.state = None

    def _seed_streams(self, entropy: int | list[int]) -> None:
        # Common random numbers, so paired comparisons measure the tutors, not the dice: the post-test answers
        # draw from their own stream, and each dialogue turn starts at its own point of another stream (turn n at
        # 2**40 n draws in), so every tutor's student meets the same uniforms on the post-test and at the start of
        # every turn, however many the turns before drew.
        # The four are SeedSequence(entropy).spawn(4)'s children, built directly: spawn() costs twice as much
        # and the parent's own pool is never used.
        model_seq, text_seq, test_seq, turn_seq = (np.random.SeedSequence(entropy, spawn_key=(i,)) for i in range(4))
        self._rng = np.random.default_rng(model_seq)
        self._text_rng = np.random.default_rng(text_seq)
        self._test_rng = np.random.default_rng(test_seq)
        self._turn_bits = np.random.PCG64(turn_seq)
        self._turn_start = self._turn_bits.state
        self._turn_rng = np.random.Generator(self._turn_bits)

    def _rng_of_turn(self, turn: int) -> np.random.Generator:
        """The dialogue's generator set to the start of turn ``turn``'s draws (an advance is a few multiplications:
        no generator is built per turn)."""
        self._turn_bits.state = self._turn_start
        self._turn_bits.advance(turn << TURN_DRAWS_LOG2)
        return self._turn_rng

    def _start(self, info: dict) -> StudentState:
        task = info.get("task")
        if not isinstance(task, Task):
            raise ValueError(f"info['task'] must be the full tutorzoo.envs.tasks.base.Task, got {type(task).__name__}; "
                             "the env must pass the Task object to the student, not its public view")
        if self._seed is not None:  # nothing is drawn before this: the streams start here, per episode identity
            identity = f"{task.task_set}/{task.id}/{self.source.name}"
            self._seed_streams([self._seed, _stable_hash(identity)])
        if isinstance(self.source, PersonaDistribution):
            self.persona = self.source.sample(self._rng)
        assert self.persona is not None
        self.state = init_state(task, self.persona, self._rng)
        return self.state

    def act(self, observation: dict | None, info: dict) -> str | StudentTurn:
        """A test answer (``str``) in the pre-/post-test, a labelled :class:`StudentTurn` in the dialogue."""
        phase = info.get("phase")
        if phase == "done":  # the env may still poll agents after the post-test
            return ""
        if phase not in PHASES:
            raise ValueError(f"info['phase'] must be one of {PHASES}, got {phase!r}")
        state = self.state if self.state is not None else self._start(info)
        if phase == "dialogue":
            return self._dialogue(state, info)
        item = info.get("item")
        if not isinstance(item, Item):
            raise ValueError(f"info['item'] must be an Item in the {phase} phase, got {type(item).__name__}")
        rng = self._test_rng if phase == "posttest" else self._rng
        if phase == "posttest":
            begin_posttest(state, rng)
        ans = answer_item(state, item, rng)
        return self.verbaliser.answer(item, ans, state, self._text_rng)

    def _dialogue(self, state: StudentState, info: dict) -> StudentTurn:
        act = info.get("tutor_act")
        # the opening draws at 0, the reply to the tutor's n-th turn at n (respond counts them: n - 1 before it)
        rng = self._rng_of_turn(state.turns + (act is not None))
        if act is None:
            plan = open_dialogue(state, rng)
        elif isinstance(act, TutorAct):
            # what the student reads: markdown layout and runs of blanks are no load; praise is heard wherever it is
            text = plain_text(info.get("tutor_utterance") or "")
            plan = respond(state, act, rng, chars=len(" ".join(text.split())),
                           praise=encourages(text) if text else None)
        else:
            raise ValueError(f"info['tutor_act'] must be a TutorAct or None, got {type(act).__name__}")
        text = self.verbaliser.say(plan, state, self._text_rng)
        privileged = snapshot(state)
        privileged["response"] = plan.kind
        privileged["misconception_shown"] = plan.misconception
        return StudentTurn(
            utterance=text,
            cognition_state=plan.cognition_state,
            cognitive_level=BLOOM_LEVELS[plan.bloom],
            disciplines=plan.disciplines,
            discipline_transfer=plan.discipline_transfer,
            privileged=privileged,
        )


@lru_cache(maxsize=1024)  # one per task and persona: asked at every episode's start
def _stable_hash(text: str) -> int:
    """A 64-bit hash of ``text`` that is the same in every process (Python's ``hash`` is salted per process)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
