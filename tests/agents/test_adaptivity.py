"""Teaching must adapt (the student model's dynamics reward responding to the student, not a script).

Model-level properties use hand-built acts on one component over the default persona distribution (fixed
seeds, deterministic); episode-level checks play paired specs (math + stem, three personas of each family,
seeds 0..3) through the env, where the student reads each turn's content. ``benchmarks/fixed_act_search.py``
runs the full grid of 108 fixed acts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tutorzoo.agents.student.model import init_state, respond
from tutorzoo.agents.student.personas import load_distribution
from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.tasks import get_task_set

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from fixed_act_search import family_specs, search  # noqa: E402

# ICAP (Chi & Wylie 2014) as acts: passive = an explanation; active = a recall question; constructive = a
# question that asks the student to work at its level; interactive = a scaffold (hint) on the student's own turn
ICAP = {
    "passive": ("introduce_concept", None, "L2", False),
    "active": ("check_understanding", None, "L1", True),
    "constructive": ("guide_reasoning", "follow_up_question", "L2", True),
    "interactive": ("guide_reasoning", "hint", "L2", True),
}


def _mastery_gain(intent: str, strategy: str | None, level: str, question: bool, band: str | None,
                  seeds: int = 300, turns: int = 4) -> float:
    ts, dist = get_task_set("math"), load_distribution("default")
    gains = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        task = ts.build(ts.task_ids()[seed % len(ts.task_ids())], rng)
        state = init_state(task, dist.sample(rng), rng)
        kc = task.knowledge_components[0].id
        if band == "novice":
            state.mastery[kc] = 0.15
        elif band == "strong":
            state.mastery[kc], state.bloom = 0.75, max(state.bloom, 2)
        before = state.mastery[kc]
        act = TutorAct(intent=intent, strategy=strategy, guidance_level=level, target_kc=kc, is_question=question)
        for _ in range(turns):
            respond(state, act, rng)
        gains.append(state.mastery[kc] - before)
    return float(np.mean(gains))


def test_icap_ordering_holds_on_average() -> None:
    g = {name: _mastery_gain(*spec, band=None) for name, spec in ICAP.items()}
    assert g["passive"] < g["active"] < g["constructive"] < g["interactive"], g


def test_best_act_differs_between_a_novice_and_a_strong_student() -> None:
    novice = {name: _mastery_gain(*spec, band="novice") for name, spec in ICAP.items()}
    strong = {name: _mastery_gain(*spec, band="strong") for name, spec in ICAP.items()}
    assert max(novice, key=novice.get) != max(strong, key=strong.get), (novice, strong)
    # expertise reversal: the explanation is worth far more to the novice than to the strong student, and the
    # constructive question beats it for the strong student
    assert novice["passive"] > 3 * strong["passive"], (novice, strong)
    assert strong["constructive"] > strong["passive"], strong


# The strongest fixed acts of the full grid (benchmarks/fixed_act_search.py), each played every turn while
# cycling the task's components.
STRONG_FIXED = (
    ("check_understanding", "scenario_question", "L1"),
    ("introduce_concept", "corrective_feedback", "L1"),
    ("check_understanding", "corrective_feedback", "L2"),
    ("trigger_transfer", "scenario_question", "L1"),
    ("introduce_concept", "scenario_question", "L2"),
    ("trigger_transfer", "scenario_question", "L3"),
    ("introduce_concept", None, "L1"),
)


@pytest.fixture(scope="module")
def episodes() -> tuple[np.ndarray, dict]:
    specs = family_specs(4, per_family=3)
    res = search(list(STRONG_FIXED), specs, workers=2, extra=("socratic", "oracle"))
    return np.array([f for f, _ in specs]), res


def _z(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    d = a - b
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))


@pytest.mark.parametrize("act", STRONG_FIXED, ids=lambda a: "/".join(map(str, a)))
def test_no_fixed_act_out_teaches_socratic(episodes, act) -> None:
    fams, res = episodes
    soc = res["socratic"]
    assert res[act].mean() < soc.mean(), (act, res[act].mean(), soc.mean())
    for fam in sorted(set(fams)):
        m = fams == fam
        d, se = _z(res[act][m], soc[m])
        assert d <= 2 * se, f"{act} beats socratic in {fam}: {d:+.3f} ± {se:.3f}"


@pytest.mark.parametrize("act", STRONG_FIXED, ids=lambda a: "/".join(map(str, a)))
def test_oracle_beats_every_fixed_act_in_every_family(episodes, act) -> None:
    """The oracle (reads the hidden state, plans each turn with the student model) is ahead of the act in every
    family and ahead overall by more than two standard errors of the paired difference."""
    fams, res = episodes
    d, se = _z(res["oracle"], res[act])
    assert d > 2 * se, f"oracle vs {act} overall: {d:+.3f} ± {se:.3f}"
    for fam in sorted(set(fams)):
        m = fams == fam
        d, se = _z(res["oracle"][m], res[act][m])
        assert d > 0.02, f"oracle vs {act} in {fam}: {d:+.3f} ± {se:.3f}"


def test_oracle_is_ahead_of_socratic(episodes) -> None:
    """The upper reference is above the adaptive expert: a tutor that knows the state and the model teaches more
    than one that reads the student's words (else the reference, or the model, is wrong)."""
    _, res = episodes
    d, se = _z(res["oracle"], res["socratic"])
    assert d > 2 * se, f"oracle vs socratic: {d:+.3f} ± {se:.3f}"
