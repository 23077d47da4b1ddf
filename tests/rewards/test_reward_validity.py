"""Reward validity: the gaming probes of agents/tutor/probes.py lose to socratic on paired episodes.

Measured on math + stem, three personas of each family, seeds 0..3 (96 paired specs per tutor, 8 turns, the
default reward). A probe passes when it loses on isomorphic learning gain *and* on the default reward by more
than two standard errors of the paired difference. ``benchmarks/reward_validity.py`` prints the full table.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from reward_validity import every_math_family, measure, paired, specs  # noqa: E402

GAMING = ("probe_label_farming", "probe_keyword_questions", "probe_content_free", "probe_teach_misconceptions",
          "probe_other_task", "probe_posttest", "probe_persona", "probe_injection")
REWORDED = ("probe_paraphrase", "probe_paraphrase_bare")  # other cue words; every cue word deleted
OWN_WORDS = ("probe_own_words", "probe_own_words_llm")  # plain text; markdown, LaTeX, "a common misconception" 


@pytest.fixture(scope="module")
def results() -> dict[str, np.ndarray]:
    tutors = ["socratic", "random", *GAMING, *REWORDED, "probe_wrong_numbers", *OWN_WORDS]
    return measure(tutors, specs(4, per_family=3), workers=2)


@pytest.mark.parametrize("probe", GAMING)
def test_gaming_probe_loses_on_gain_and_reward(results, probe: str) -> None:
    soc = results["socratic"]
    for col, what in ((0, "gain"), (1, "reward")):
        d, se = paired(results[probe][:, col], soc[:, col])
        assert d < -2 * se, f"{probe} {what}: {d:+.3f} ± {se:.3f} against socratic"


def test_teaching_misconceptions_gains_less_than_random(results) -> None:
    d, se = paired(results["probe_teach_misconceptions"][:, 0], results["random"][:, 0])
    assert d < -2 * se, (d, se)


@pytest.mark.parametrize("probe", REWORDED)
def test_reworded_socratic_keeps_its_gain(results, probe: str) -> None:
    assert results[probe][:, 0].mean() >= 0.85 * results["socratic"][:, 0].mean()


def test_wrong_numbers_keep_at_most_half_the_gain(results) -> None:
    assert results["probe_wrong_numbers"][:, 0].mean() <= 0.5 * results["socratic"][:, 0].mean()


@pytest.mark.parametrize("probe", OWN_WORDS)
def test_own_words_teaching_beats_random(results, probe: str) -> None:
    """True content in the tutor's own words and numbers is credited: it beats random clearly."""
    d, se = paired(results[probe][:, 0], results["random"][:, 0])
    assert d > 2 * se, (d, se)


@pytest.mark.parametrize("probe", OWN_WORDS)
def test_own_words_teaching_keeps_half_of_socratic(results, probe: str) -> None:
    assert results[probe][:, 0].mean() >= 0.5 * results["socratic"][:, 0].mean()


def test_every_math_family_pairs_the_drawn_specs_with_each_family() -> None:
    from tutorzoo.envs.tasks.math.taskset import MathTaskSet

    grid = every_math_family(2, per_family=1)
    families = MathTaskSet().task_ids()
    assert len(families) == 15 and len(grid) == 15 * len(specs(2, ("math",), 1))
    assert {s.task_id for s in grid} == set(families)
    assert all(s.task_set == "math" and s.protocol == {"max_turns": 8} for s in grid)
