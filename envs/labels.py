"""The SID annotation label sets (docs/spec.md §1), the single source of every label name in TutorZoo.

Every turn of a transcript carries the nine fields of :data:`TURN_FIELDS`; tutor-only fields are ``None``
on student turns and vice versa.
"""

from __future__ import annotations

TURN_FIELDS: tuple[str, ...] = (
    "speaker",
    "utterance",
    "teacher_intent",
    "teaching_strategy",
    "discipline",
    "discipline_transfer",
    "student_cognition_state",
    "teacher_guidance_level",
    "cognitive_level",
)

SPEAKERS: tuple[str, ...] = ("tutor", "student")

INTENTS: tuple[str, ...] = (
    "introduce_concept",
    "check_understanding",
    "guide_reasoning",
    "trigger_transfer",
    "summarize",
)

# SID's Table IV lists 7 strategies and its text names an 8th (contextualize); SV divides by 8.
STRATEGIES: tuple[str, ...] = (
    "follow_up_question",
    "hint",
    "analogy",
    "scenario_question",
    "break_down",
    "encourage",
    "corrective_feedback",
    "contextualize",
)

DISCIPLINES: tuple[str, ...] = (
    "math",
    "physics",
    "chemistry",
    "biology",
    "geography",
    "history",
    "technology",
    "art",
    "language",
)

COGNITION_STATES: tuple[str, ...] = (
    "clear_understanding",
    "vague_understanding",
    "expression_difficulty",
    "irrelevant",
    "incorrect",
    "higher_order",
)

GUIDANCE_LEVELS: tuple[str, ...] = ("L1", "L2", "L3")

# Bloom's taxonomy; the index is the level used by the BP metric (remember=0 ... create=5).
BLOOM_LEVELS: tuple[str, ...] = ("remember", "understand", "apply", "analyze", "evaluate", "create")

# The Bloom band a guidance level asks for: L1 closed/definition, L2 explanation, L3 transfer/reasoning.
GUIDANCE_TO_BLOOM: dict[str, int] = {"L1": 0, "L2": 1, "L3": 3}


def bloom_index(level: str) -> int:
    """Index of a Bloom level name, e.g. ``bloom_index("apply") == 2``."""
    return BLOOM_LEVELS.index(level)
