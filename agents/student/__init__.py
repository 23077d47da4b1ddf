"""Students: the persona-driven simulated student (cognitive model + template verbaliser).

Example::

    from tutorzoo.agents.student import SimulatedStudent, load_personas
    student = SimulatedStudent("all_round_asks_for_hint")
    student.reset(seed=0)
"""

from __future__ import annotations

from tutorzoo.agents.student.llm import LLMStudent
from tutorzoo.agents.student.model import (
    Answer,
    Plan,
    StudentState,
    answer_item,
    begin_posttest,
    init_state,
    open_dialogue,
    p_correct,
    respond,
    snapshot,
)
from tutorzoo.agents.student.personas import Persona, PersonaDistribution, get_persona, load_distribution, load_personas
from tutorzoo.agents.student.policy import SimulatedStudent
from tutorzoo.agents.student.verbaliser import TemplateVerbaliser

__all__ = [
    "Answer",
    "LLMStudent",
    "Persona",
    "PersonaDistribution",
    "Plan",
    "SimulatedStudent",
    "StudentState",
    "TemplateVerbaliser",
    "answer_item",
    "begin_posttest",
    "get_persona",
    "init_state",
    "load_distribution",
    "load_personas",
    "open_dialogue",
    "p_correct",
    "respond",
    "snapshot",
]
