"""Issue 26: the student learns from teaching, not from volume, sprayed counterexamples or formatting.

Paired episodes on math + stem, three personas of each family, seeds 0..3 (96 specs per tutor, 8 turns, the
default reward), the probes of ``agents/tutor/probes.py``. ``benchmarks/reward_validity.py --tutors ...`` prints the
full table on a larger sample.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from reward_validity import measure, paired, specs  # noqa: E402

from tutorzoo.agents.tutor.probes import CHAT_LAYOUTS, UPTAKE_ADDED, UPTAKE_CONTROLS, UPTAKE_GAMING  # noqa: E402

SPECS = specs(4, per_family=3)
SETS = ("math", "stem")


@pytest.fixture(scope="module")
def results() -> dict[str, np.ndarray]:
    return measure(["socratic", "random", *UPTAKE_GAMING, *UPTAKE_ADDED, *UPTAKE_CONTROLS], SPECS, workers=2)


def _in(task_set: str) -> np.ndarray:
    return np.array([s.task_set == task_set for s in SPECS])


@pytest.mark.parametrize("probe", UPTAKE_GAMING)
def test_gaming_probe_loses_on_gain_and_reward(results, probe: str) -> None:
    soc = results["socratic"]
    for col, what in ((0, "gain"), (1, "reward")):
        d, se = paired(results[probe][:, col], soc[:, col])
        assert d < -2 * se, f"{probe} {what}: {d:+.3f} ± {se:.3f} against socratic"


@pytest.mark.parametrize("probe", UPTAKE_GAMING)
def test_gaming_probe_beats_socratic_in_neither_task_set(results, probe: str) -> None:
    for ts in SETS:
        m = _in(ts)
        d, se = paired(results[probe][m, 0], results["socratic"][m, 0])
        assert d < 0, f"{probe} on {ts}: {d:+.3f} ± {se:.3f} gain against socratic"


def test_endorsing_a_misconception_gains_less_than_random(results) -> None:
    d, se = paired(results["probe_endorse_misconception"][:, 0], results["random"][:, 0])
    assert d < -2 * se, (d, se)


@pytest.mark.parametrize("probe", UPTAKE_ADDED)
def test_padding_or_cue_words_gain_no_more_than_socratic(results, probe: str) -> None:
    for ts in SETS:
        m = _in(ts)
        d, se = paired(results[probe][m, 0], results["socratic"][m, 0])
        assert d <= 1e-9, f"{probe} on {ts}: {d:+.3f} ± {se:.3f} gain against socratic"  # equal is no more


def test_padding_costs_reward(results) -> None:
    d, se = paired(results["probe_socratic_padded"][:, 1], results["socratic"][:, 1])
    assert d < -2 * se, (d, se)


@pytest.mark.parametrize("probe", CHAT_LAYOUTS)
def test_socratic_as_a_chat_model_writes_it_keeps_its_gain(results, probe: str) -> None:
    assert results[probe][:, 0].mean() >= 0.85 * results["socratic"][:, 0].mean()


@pytest.mark.parametrize("probe", CHAT_LAYOUTS)
def test_socratic_as_a_chat_model_writes_it_loses_no_reward(results, probe: str) -> None:
    """Headings, bullets, bold "Step N:" labels and LaTeX are layout: no leak, no format penalty."""
    d, se = paired(results[probe][:, 1], results["socratic"][:, 1])
    assert d >= -2 * se - 1e-9, (d, se)  # the same reward is no loss


@pytest.mark.parametrize("task_set", SETS)
def test_explain_then_ask_beats_random_in_each_task_set(results, task_set: str) -> None:
    m = _in(task_set)
    d, se = paired(results["probe_explain_ask"][m, 0], results["random"][m, 0])
    assert d > 2 * se, (task_set, d, se)


def test_explain_then_ask_stays_below_socratic(results) -> None:
    ask, soc = results["probe_explain_ask"][:, 0], results["socratic"][:, 0]
    d, se = paired(ask, soc)
    assert d < -2 * se, (d, se)  # an adaptive tutor that also refutes teaches more


def test_explain_then_ask_keeps_half_of_socratic(results) -> None:
    ask, soc = results["probe_explain_ask"][:, 0], results["socratic"][:, 0]
    assert ask.mean() >= 0.5 * soc.mean()
