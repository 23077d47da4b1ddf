"""The default reward cannot be climbed cheaply: socratic beats every built-in and adversarial tutor.

Every tutor plays the same episode specs (fixed seeds; per persona family its personas x seeds x both task
sets). A ranking holds when the mean paired difference (socratic minus the other tutor, on the same spec)
exceeds two standard errors, so it cannot pass by luck of a few episodes. The fast version runs in ~20 s;
``-m slow`` runs four times the seeds.

Learning gain alone is the noisier signal (a few post-test items per episode): the fast check asks that socratic
is not worse than any tutor beyond two standard errors; ``-m slow`` asks, over four times the episodes, that it
is better, except the near-ties listed in ``LEARNING_GAIN_KNOWN_FAILURES``. The simulated student reacts to the
annotated labels of a turn, so an echo tutor's "You said X. Why do you think that?" works as a self-explanation
prompt, which the student rewards (as self-explanation prompts do for real students).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from functools import cache

import pytest

from tutorzoo.agents.student import SimulatedStudent, load_personas
from tutorzoo.agents.tutor.adversarial import ADVERSARIAL_TUTORS
from tutorzoo.agents.tutor.registry import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.eval.rollout import run_episode
from tutorzoo.rewards import load_rubric

FAMILIES = ("sid_core", "sid_state", "mathdial", "profile")
OTHERS = ("lecturer", "random", *ADVERSARIAL_TUTORS)
PERSONAS_PER_FAMILY = 5


def _tutor(name: str):
    return ADVERSARIAL_TUTORS[name]() if name in ADVERSARIAL_TUTORS else make_tutor(name)


def _specs(family: str, seeds: int) -> list[EpisodeSpec]:
    names = sorted(n for n, p in load_personas().items() if p.family == family)[:PERSONAS_PER_FAMILY]
    return [
        EpisodeSpec(task_set=task_set, persona=name, seed=100 + 13 * i + s, protocol={"max_turns": 8})
        for i, name in enumerate(names) for s in range(seeds) for task_set in ("math", "stem")
    ]


@cache
def _results(seeds: int) -> dict[tuple[str, str], list[dict]]:
    rubric = load_rubric("default")
    out: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for family in FAMILIES:
        for spec in _specs(family, seeds):
            for name in ("socratic", *OTHERS):
                record = run_episode(spec, _tutor(name), SimulatedStudent(spec.persona), name, reward=rubric)
                out[(name, family)].append(record)
    return out


def _paired(seeds: int, other: str, family: str, key: str) -> tuple[float, float]:
    """Mean and standard error of socratic's minus ``other``'s ``key`` over the shared specs."""
    results = _results(seeds)
    diffs = [a[key] - b[key] for a, b in zip(results[("socratic", family)], results[(other, family)], strict=True)]
    return statistics.fmean(diffs), statistics.stdev(diffs) / len(diffs) ** 0.5


# (tutor, family) pairs where socratic does not clearly beat the tutor on learning gain (mean paired difference,
# socratic minus tutor, 80 episodes with seeds=8, measured after the student's streams were keyed by the episode).
LEARNING_GAIN_KNOWN_FAILURES: dict[tuple[str, str], str] = {
    ("adv_echo", "sid_core"): "near-tie, -0.015 +/- 0.040: echoing the student's answer with 'why?' is a "
                              "self-explanation prompt",
    ("lecturer", "sid_core"): "near-tie, -0.040 +/- 0.032 over math + STEM: socratic and lecturer tie on the STEM "
                              "lessons (benchmarks/tutor_ranking.py --task-set stem); the reward ranks them",
}


def _cases(known: dict[tuple[str, str], str], strict: bool = True) -> list:
    cases = []
    for other in OTHERS:
        for family in FAMILIES:
            reason = known.get((other, family))
            marks = [pytest.mark.xfail(strict=strict, reason=reason)] if reason else []
            cases.append(pytest.param(other, family, marks=marks, id=f"{other}-{family}"))
    return cases


@pytest.mark.parametrize(("other", "family"), _cases({}))
def test_socratic_beats_tutor_on_default_reward(other: str, family: str) -> None:
    mean, se = _paired(2, other, family, "reward")
    assert mean > 2 * se, f"socratic - {other} reward under {family}: {mean:+.3f} (se {se:.3f})"


@pytest.mark.parametrize(("other", "family"), _cases({}))
def test_no_tutor_beats_socratic_on_learning_gain_beyond_noise(other: str, family: str) -> None:
    mean, se = _paired(2, other, family, "learning_gain")
    assert mean > -2 * se, f"socratic - {other} learning gain under {family}: {mean:+.3f} (se {se:.3f})"


@pytest.mark.slow
@pytest.mark.parametrize(("other", "family"), _cases(LEARNING_GAIN_KNOWN_FAILURES, strict=False))
def test_socratic_beats_tutor_on_learning_gain_many_seeds(other: str, family: str) -> None:
    mean, se = _paired(8, other, family, "learning_gain")
    assert mean > 0, f"socratic - {other} learning gain under {family}: {mean:+.3f} (se {se:.3f})"


def test_reward_components_reach_the_record() -> None:
    record = _results(2)[("socratic", "sid_core")][0]
    rubric = load_rubric("default")
    assert {"learning_gain", "mastery_gain", "sid_total", "sid_total_raw", "format_penalty"} <= set(
        record["reward_components"])
    assert record["reward"] == pytest.approx(rubric.total(record))


@pytest.mark.slow
@pytest.mark.parametrize("other", OTHERS)
def test_socratic_beats_tutor_on_default_reward_many_seeds(other: str) -> None:
    for family in FAMILIES:
        mean, se = _paired(8, other, family, "reward")
        assert mean > 2 * se, f"socratic - {other} reward under {family}: {mean:+.3f} (se {se:.3f})"
