"""End to end: socratic's content written as a chat model writes it (warm opener, ``###`` headings, bullets, bold,
LaTeX) plays through the env and loses neither gain nor reward against socratic on paired specs; injection
tutors still get no content credit. ``benchmarks/gate_chat_format.py`` prints the full table."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from gate_chat_format import chat_format, play  # noqa: E402
from reward_validity import paired, specs  # noqa: E402

from tutorzoo.agents.student import SimulatedStudent  # noqa: E402
from tutorzoo.agents.tutor.adversarial import ADVERSARIAL_TUTORS  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.eval.rollout import run_episode  # noqa: E402
from tutorzoo.rewards import load_rubric  # noqa: E402
from tutorzoo.rewards.gate import addresses_judge  # noqa: E402


@cache
def _records(name: str, seeds: int, per_family: int) -> tuple[dict, ...]:
    return tuple(play(s, name) for s in specs(seeds, per_family=per_family))


def _tutor_turns(records: tuple[dict, ...]) -> list[str]:
    return [t["utterance"] for r in records for t in r["transcript"] if t["speaker"] == "tutor"]


def test_chat_format_is_markdown_and_latex_around_the_same_words() -> None:
    text = "Let's test that idea with a counterexample: What is 1/2 × 10? Think of 3/10 of a bar."
    out = chat_format(text, 0)
    assert out.startswith("Great question") and "### Let's test that idea with a counterexample" in out
    assert r"- What is $\frac{1}{2} \times 10$?" in out and r"- Think of $\frac{3}{10}$ of a bar." in out
    assert chat_format(text, 0, headers="bold").count("**Let's test that idea with a counterexample**") == 1
    assert chat_format("Good summary. [END]", 1).endswith("[END]")


def test_chat_socratic_plays_without_format_penalty_and_keeps_gain_and_reward() -> None:
    soc, chat = _records("socratic", 1, 1), _records("chat_socratic", 1, 1)
    turns = _tutor_turns(chat)
    assert sum("###" in t for t in turns) >= len(turns) // 2 and any("$" in t for t in turns)
    assert not any(addresses_judge(t) for t in turns)
    assert all(r["reward_components"]["format_penalty"] == 0.0 for r in chat)
    gain_s, gain_c = np.array([r["learning_gain"] for r in soc]), np.array([r["learning_gain"] for r in chat])
    d, se = paired(np.array([r["reward"] for r in chat]), np.array([r["reward"] for r in soc]))
    assert d > -2 * se - 1e-9, (d, se)
    assert gain_c.mean() >= 0.85 * gain_s.mean(), (gain_c.mean(), gain_s.mean())


def test_socratic_turns_never_address_a_judge() -> None:
    """Socratic teaches fractions over 5 and 10 ("3/10", "2/5"): none of its turns reads as a judge address."""
    assert not [t for t in _tutor_turns(_records("socratic", 1, 1)) if addresses_judge(t)]


@pytest.mark.parametrize("task_set", ["math", "stem"])
def test_injection_tutor_gets_no_content_credit(task_set: str) -> None:
    spec = EpisodeSpec(task_set=task_set, persona=specs(1, per_family=1)[0].persona, seed=0,
                       protocol={"max_turns": 8})
    rec = run_episode(spec, ADVERSARIAL_TUTORS["adv_judge_injection"](), SimulatedStudent(spec.persona),
                      "adv_judge_injection", reward=load_rubric("default"))
    turns = [t["utterance"] for t in rec["transcript"] if t["speaker"] == "tutor"]
    assert turns and all(addresses_judge(t) for t in turns)
    assert rec["reward_components"]["mastery_gain"] == 0.0
    assert rec["reward_components"]["format_penalty"] <= -0.5 * len(turns) + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("name", ["chat_socratic", "chat_socratic_bold"])
def test_chat_socratic_on_more_specs(name: str) -> None:
    soc, chat = _records("socratic", 4, 2), _records(name, 4, 2)
    d, se = paired(np.array([r["reward"] for r in chat]), np.array([r["reward"] for r in soc]))
    assert d > -2 * se, (d, se)
    gain_s = np.mean([r["learning_gain"] for r in soc])
    assert np.mean([r["learning_gain"] for r in chat]) >= 0.85 * gain_s
