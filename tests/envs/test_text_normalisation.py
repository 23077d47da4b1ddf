"""Text crossing the env boundary keeps the characters the text spaces allow: a chat model's "½" and "cm²" reach the
content reader as written (NFKC used to turn "½" into "1?2" and "5²" into "52")."""

from __future__ import annotations

import pytest

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.engine import play
from tutorzoo.envs.spaces import CHARSET, MAX_UTTERANCE_CHARS, normalize_text


@pytest.mark.parametrize(("raw", "expected"), [
    ("Area = ½ × 6 × 4 = 12 cm².", "Area = ½ × 6 × 4 = 12 cm²."),
    ("¼ + ¾ = 1 and 2³ = 8, x¹", "¼ + ¾ = 1 and 2³ = 8, x¹"),
    ("Wait…", "Wait…"),
    ("3⁄4 of 8 is 6; 3∕4 too", "3/4 of 8 is 6; 3/4 too"),  # fraction slash and division slash
    ("⅓ + ⅙ = ½", "1/3 + 1/6 = ½"),  # vulgar fractions outside the charset: NFKC spells them with a slash
    ("x⁴ = 16 and y⁰ = 1", "x^4 = 16 and y^0 = 1"),  # superscripts outside the charset: a power
    ("ﬁve Ａ１ cafe\u0301", "five A1 café"),  # NFKC still folds ligatures, full width, combining accents
    ("α ∴ β\x00\x07\n", "? ? ?\n"),  # outside the charset: "?"; control characters dropped but newline
])
def test_normalize_text_keeps_the_charset(raw: str, expected: str) -> None:
    text, changed = normalize_text(raw, MAX_UTTERANCE_CHARS)
    assert text == expected
    assert changed == (text != raw)
    assert set(text) <= set(CHARSET)
    assert normalize_text(text, MAX_UTTERANCE_CHARS) == (text, False)  # idempotent


class _Says:
    """A text tutor with one line for the dialogue."""

    def __init__(self, line: str) -> None:
        self.line = line

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict, info: dict) -> str:
        return "" if info.get("observe_only") else self.line


def test_a_half_sign_is_read_as_content() -> None:
    """A worked area with "½" and "cm²" is the triangle-area component's true content in the env, as it is to the
    reader on its own (before the fix the env handed the reader "1?2 × 6 × 4 = 12 cm2": no content)."""
    spec = EpisodeSpec(task_set="math", task_id="triangle_area", persona="all_round_partly_wrong", seed=1,
                       protocol={"max_turns": 2})
    [record] = play([spec], _Says("Area = ½ × 6 × 4 = 12 cm²."), SimulatedStudent)
    tutor_turns = [t for t in record["transcript"] if t["speaker"] == "tutor"]
    assert tutor_turns[0]["utterance"] == "Area = ½ × 6 × 4 = 12 cm²."
    assert tutor_turns[0]["target_kc"] == "triangle_area"
