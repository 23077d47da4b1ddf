"""Tutor classes the tests load by import path (``tutor_fixtures:ClassName``)."""

from __future__ import annotations


class EchoTutor:
    """Repeats the student's last words back as a question."""

    def reset(self, seed: int | None = None) -> None:
        self.turns = 0

    def act(self, observation: dict, info: dict) -> str:
        if info.get("observe_only"):
            return ""
        self.turns += 1
        return f"You said: {observation['text'][:200]}?"


class FlakyTutor(EchoTutor):
    """A backend that fails on its third dialogue turn (a timeout, say)."""

    def act(self, observation: dict, info: dict) -> str:
        if not info.get("observe_only") and self.turns == 2:
            raise TimeoutError("backend timed out after 30 s")
        return super().act(observation, info)


class NotATutor:
    """Lacks act(): the registry must refuse it."""


class PrefixTutor(EchoTutor):
    """Needs a constructor argument: says ``prefix`` before echoing (per-tutor options in suites)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def act(self, observation: dict, info: dict) -> str:
        text = super().act(observation, info)
        return f"{self.prefix} {text}" if text else text
