"""Socratic never states a test answer, and what it says instead still teaches: when the material beside a
counterexample leaks an answer it says the counterexample alone, and when every move on a component leaks it asks
another of the component's questions or reasons about one of its facts, not a question with no content."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from reward_validity import play, specs  # noqa: E402

CONTENT_FREE = ("What would be your first step with", "Does that idea still work there?")


def _episodes(task_id: str, task_set: str, n: int = 3) -> list[dict]:
    out = []
    for spec in specs(6, (task_set,), 2, first_seed=10):
        record = play(spec, "socratic")
        if record["task"]["id"] == task_id:
            out.append(record)
            if len(out) == n:
                break
    assert out, f"no {task_id} episode among the specs"
    return out


def _tutor_turns(record: dict) -> list[str]:
    return [m["utterance"] for m in record["transcript"] if m["speaker"] == "tutor"]


def test_a_counterexample_whose_worked_example_leaks_is_said_alone() -> None:
    # ratio_scaling: the worked example of equivalent ratios is a pre-test item worked out; the additive-scaling
    # counterexample (the recipe) states no answer and is said alone (the unit-price one collides with an item's
    # numbers: the student's own idea is tested instead)
    turns = [t for record in _episodes("ratio_scaling", "math") for t in _tutor_turns(record)]
    assert any(t.startswith("Consider this scenario: Recipe:") for t in turns), turns


def test_a_component_whose_every_move_leaks_gets_a_question_or_fact_of_its_own() -> None:
    # seasons_tilt: "Explain why Australia has summer in December" gives away the pre-test's "Summer"
    for record in _episodes("seasons_tilt", "stem"):
        turns = _tutor_turns(record)
        assert not any(t.startswith(CONTENT_FREE[0]) for t in turns), turns
