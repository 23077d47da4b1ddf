"""Dialogue acts: what a tutor turn *does* (SID tutor fields) and what a student turn shows.

In ``text`` action mode the env's rule-based annotator turns the tutor's utterance into a :class:`TutorAct`;
in ``act`` mode the tutor chooses the act directly and a template verbaliser writes the utterance. Either way
the student sees the same :class:`TutorAct` in ``info["tutor_act"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from tutorzoo.envs.labels import BLOOM_LEVELS, COGNITION_STATES, DISCIPLINES, GUIDANCE_LEVELS, INTENTS, STRATEGIES

# TutorAct attribute -> the key of the same SID field in every dict (a transcript turn, info["last_act"]):
# the attributes keep their short Python names, a dict or a file uses SID's (docs/spec.md §1).
ACT_FIELD_KEYS: dict[str, str] = {
    "intent": "teacher_intent",
    "strategy": "teaching_strategy",
    "guidance_level": "teacher_guidance_level",
    "disciplines": "discipline",
}


@dataclass(frozen=True, slots=True)
class TutorAct:
    """The SID labels of one tutor turn plus what the simulator needs to know about it.

    ``intent``, ``strategy``, ``guidance_level`` and ``disciplines`` are SID's ``teacher_intent``,
    ``teaching_strategy``, ``teacher_guidance_level`` and ``discipline``, the names :meth:`to_dict`, the
    transcript and every file use (:data:`ACT_FIELD_KEYS`).

    ``target_kc`` is the knowledge component the turn is about (``None``: no KC recognised, off topic);
    ``reveals_answer`` is true when the turn states the task's answer or a test item's; ``revealed_items`` names
    the pre-test items whose answers it states;
    ``addresses_misconception`` names a misconception whose counterexample/negation the turn uses;
    ``ends_session`` is true when the tutor closes the dialogue with the end marker.
    """

    intent: str
    strategy: str | None
    guidance_level: str
    disciplines: tuple[str, ...] = ("math",)
    discipline_transfer: bool = False
    target_kc: str | None = None
    reveals_answer: bool = False
    revealed_items: tuple[str, ...] = ()
    addresses_misconception: str | None = None
    is_question: bool = False
    ends_session: bool = False
    invalid: bool = False
    # What the turn says, checked against the task (tutorzoo.envs.content.Reading); the simulated student learns from
    # it. ``None`` only for acts built by hand (unit tests, oracles): their labels are then taken as the content.
    content: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.intent not in INTENTS:
            raise ValueError(f"intent must be one of {INTENTS}, got {self.intent!r}")
        if self.strategy is not None and self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES} or None, got {self.strategy!r}")
        if self.guidance_level not in GUIDANCE_LEVELS:
            raise ValueError(f"guidance_level must be one of {GUIDANCE_LEVELS}, got {self.guidance_level!r}")
        bad = [d for d in self.disciplines if d not in DISCIPLINES]
        if bad or not self.disciplines:
            raise ValueError(f"disciplines must be a non-empty subset of {DISCIPLINES}, got {self.disciplines!r}")

    def to_dict(self) -> dict:
        """The act as a dict keyed as a transcript turn is (``info["last_act"]``): the SID fields under SID's
        names (``teacher_intent``, ``teaching_strategy``, ``teacher_guidance_level``, ``discipline``; the map is
        :data:`ACT_FIELD_KEYS`), the other attributes under their own. ``content`` is left out."""
        d = {key: getattr(self, name) for name, key in _DICT_KEYS}
        d["discipline"] = list(self.disciplines)
        d["revealed_items"] = list(self.revealed_items)
        return d


# (attribute, key) of each field :meth:`TutorAct.to_dict` gives, in field order
_DICT_KEYS: tuple[tuple[str, str], ...] = tuple(
    (f.name, ACT_FIELD_KEYS.get(f.name, f.name)) for f in fields(TutorAct) if f.name != "content")


@dataclass(frozen=True)
class StudentTurn:
    """A student's dialogue turn with its ground-truth SID labels (a simulated student knows them exactly).

    ``privileged`` carries the student's hidden state after the turn, for analysis only: the env puts it in
    the *student's* and the record's ``privileged_student_state``, never in the tutor's observation.
    """

    utterance: str
    cognition_state: str
    cognitive_level: str
    disciplines: tuple[str, ...] = ("math",)
    discipline_transfer: bool = False
    privileged: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.cognition_state not in COGNITION_STATES:
            raise ValueError(f"cognition_state must be one of {COGNITION_STATES}, got {self.cognition_state!r}")
        if self.cognitive_level not in BLOOM_LEVELS:
            raise ValueError(f"cognitive_level must be one of {BLOOM_LEVELS}, got {self.cognitive_level!r}")
