"""The session's prompt texts, kept in files beside the env (``envs/prompts/*.txt``), as the judges' prompts are
kept beside the judges (``eval/judges/prompts``, read by :mod:`tutorzoo.eval.judges.rubric`) and the students' beside
the students (``agents/prompts``).

- ``tutor_system.txt``: the tutor's system message, the first of its ``info["messages"]``;
- ``student_system.txt``: the student's system message, with ``{statement}`` for the task's statement;
- ``test_answer_format.txt``: the line after each pre-/post-test question.

The files ship as package data (``*.txt``). A file's final newline is not part of its prompt, so that an editor
that adds one changes nothing; ``tests/envs/test_session_prompts.py`` checks that the env's messages are the files'.

Example::

    from tutorzoo.envs.session_prompts import TUTOR_SYSTEM_PROMPT
    TUTOR_SYSTEM_PROMPT.startswith("You are a patient expert tutor.")   # True
"""

from __future__ import annotations

from pathlib import Path

from tutorzoo.envs.errors import ConfigError

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"


def session_prompt(name: str) -> str:
    """The text of ``envs/prompts/NAME.txt`` without its final newline."""
    path = PROMPT_DIR / f"{name}.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the session prompt {name!r} ({exc.strerror}); restore the file "
                          "from the repository or reinstall the package") from None
    return text.removesuffix("\n")


TUTOR_SYSTEM_PROMPT = session_prompt("tutor_system")
STUDENT_SYSTEM_PROMPT = session_prompt("student_system")
TEST_ANSWER_FORMAT = session_prompt("test_answer_format")

__all__ = ["PROMPT_DIR", "STUDENT_SYSTEM_PROMPT", "TEST_ANSWER_FORMAT", "TUTOR_SYSTEM_PROMPT", "session_prompt"]
