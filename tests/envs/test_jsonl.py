"""``tutorzoo.envs.jsonl.json_object_line``: one JSON Lines record, or an error naming the line and the fix."""

from __future__ import annotations

import pytest

from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.jsonl import json_object_line


@pytest.mark.parametrize(("raw", "message"), [
    ("{not json", r"^f.jsonl:3: not valid JSON \(.+\); write one JSON object per line$"),
    ("[1, 2]", r"^f.jsonl:3: expected a JSON object, got list$"),
    ('"text"', r"^f.jsonl:3: expected a JSON object, got str$"),
], ids=["not-json", "array", "string"])
def test_a_bad_line_names_its_place(raw: str, message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        json_object_line(raw, "f.jsonl:3")


def test_an_object_is_returned_and_the_caller_words_the_type_error() -> None:
    assert json_object_line('{"id": "a", "n": 1}', "f.jsonl:1") == {"id": "a", "n": 1}
    with pytest.raises(DatasetError, match="^f.jsonl:2: an example must be a JSON object, got int$"):
        json_object_line("7", "f.jsonl:2", "an example must be a JSON object")
