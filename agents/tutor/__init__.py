"""Tutor policies: built-in rule-based tutors and the registry that resolves names and import paths."""

from tutorzoo.agents.tutor.base import ActTutor, TutorPolicy
from tutorzoo.agents.tutor.builtin import LecturerTutor, RandomTutor, SocraticTutor
from tutorzoo.agents.tutor.registry import BUILTIN_TUTORS, TUTORS, make_tutor

__all__ = [
    "BUILTIN_TUTORS", "ActTutor", "LecturerTutor", "RandomTutor", "SocraticTutor", "TUTORS", "TutorPolicy",
    "make_tutor",
]
