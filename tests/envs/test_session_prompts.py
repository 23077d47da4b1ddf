"""The env's prompt texts are the files in ``envs/prompts/`` (:mod:`tutorzoo.envs.session_prompts`), word for word."""

from __future__ import annotations

import pytest

from tutorzoo.envs import tutoring_v0
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.session_prompts import (
    PROMPT_DIR,
    STUDENT_SYSTEM_PROMPT,
    TEST_ANSWER_FORMAT,
    TUTOR_SYSTEM_PROMPT,
    session_prompt,
)


def test_the_tutor_and_the_student_are_prompted_with_the_files() -> None:
    env = tutoring_v0.env()
    env.reset(seed=0)
    statement = env.unwrapped.task.statement
    assert env.infos["tutor"]["messages"][0] == {"role": "system", "content": TUTOR_SYSTEM_PROMPT}
    assert env.infos["student"]["messages"][0] == {"role": "system",
                                                   "content": STUDENT_SYSTEM_PROMPT.format(statement=statement)}


@pytest.mark.parametrize("name", ["tutor_system", "student_system", "test_answer_format"])
def test_a_prompt_file_is_its_text_without_the_final_newline(name: str) -> None:
    raw = (PROMPT_DIR / f"{name}.txt").read_text(encoding="utf-8")
    assert raw.endswith("\n") and session_prompt(name) == raw[:-1]
    assert "\n" not in session_prompt(name)  # one paragraph each: a model sees no stray line break


def test_the_answer_format_is_a_sentence_the_grader_reads() -> None:
    assert "The answer is" in TEST_ANSWER_FORMAT


def test_a_missing_prompt_names_the_file() -> None:
    with pytest.raises(ConfigError, match="no_such_prompt.txt"):
        session_prompt("no_such_prompt")
