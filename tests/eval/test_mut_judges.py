"""The SID judge metrics' failure counts and fail-closed paths, with exact values (see .ci/mutation.py)."""

from __future__ import annotations

import pytest
from test_judges import FakeBackend, reply, toy  # noqa: F401 - toy is a fixture

from tutorzoo.agents.backends.base import GenerationResult
from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.judges import Judge, JudgeConfig
from tutorzoo.eval.judges.judge import aggregate
from tutorzoo.eval.judges.rubric import Criterion
from tutorzoo.eval.judges.sid import AVG, CRITERIA, RUBRIC, sid_rubric_metrics


def verdict(values: dict, n_samples: int = 3, n_failed: int = 0) -> dict:
    return {"rubric": RUBRIC, "values": values, "n_samples": n_samples, "n_failed": n_failed}


def rec(tutor: str, *verdicts: dict) -> dict:
    return {"tutor": tutor, "transcript": [], "judgments": list(verdicts)}


ALL4 = {c: 4 for c in CRITERIA}


@pytest.mark.parametrize(("n_failed", "verdicts_failed"), [
    pytest.param(0, 0, id="0-of-3-failed"),
    pytest.param(1, 0, id="1-of-3-failed-is-not-a-failed-verdict"),
    pytest.param(2, 0, id="2-of-3-failed-is-not-a-failed-verdict"),
    pytest.param(3, 1, id="3-of-3-failed-is-a-failed-verdict"),
])
def test_failed_verdict_means_every_sample_failed(n_failed: int, verdicts_failed: int) -> None:
    out = sid_rubric_metrics([rec("a", verdict(ALL4, 3, n_failed))], judged=True, n_resamples=0)
    expected = {"verdicts_failed": verdicts_failed, "samples_failed": n_failed, "samples": 3, "missing": 0}
    assert out["groups"]["a"]["judge_failures"] == expected
    assert out["judge_failures"] == expected


def test_failures_are_summed_over_groups_and_records() -> None:
    records = [rec("a", verdict(ALL4, 3, 1)), rec("a", verdict(ALL4, 3, 3)), rec("b", verdict(ALL4, 1, 0)),
               rec("b"), {"tutor": "b", "transcript": []}]
    out = sid_rubric_metrics(records, judged=True, n_resamples=0)
    assert out["groups"]["a"]["judge_failures"] == {"verdicts_failed": 1, "samples_failed": 4, "samples": 6,
                                                    "missing": 0}
    assert out["groups"]["b"]["judge_failures"] == {"verdicts_failed": 0, "samples_failed": 0, "samples": 1,
                                                    "missing": 2}
    assert out["judge_failures"] == {"verdicts_failed": 1, "samples_failed": 4, "samples": 7, "missing": 2}


def test_the_last_sid_verdict_counts_and_other_rubrics_are_ignored() -> None:
    other = {**verdict({c: 1 for c in CRITERIA}), "rubric": "dr_academy"}
    out = sid_rubric_metrics([rec("a", verdict({c: 2 for c in CRITERIA}), verdict(ALL4), other)], judged=True,
                             n_resamples=0)
    assert out["groups"]["a"]["metrics"]["IRA"] == {"mean": 4.0, "ci_low": None, "ci_high": None, "n": 1}


def test_avg_score_needs_every_criterion_and_ignores_non_numbers() -> None:
    partial = {**ALL4, "TCF": None}
    flagged = {**ALL4, "IRA": True}  # a boolean is not a score
    records = [rec("a", verdict(ALL4)), rec("a", verdict(partial)), rec("a", verdict(flagged)),
               rec("a", verdict({c: 2 for c in CRITERIA}))]
    m = sid_rubric_metrics(records, judged=True, n_resamples=0)["groups"]["a"]["metrics"]
    assert (m[AVG]["mean"], m[AVG]["n"]) == (3.0, 2)
    assert (m["TCF"]["mean"], m["TCF"]["n"]) == (pytest.approx(10 / 3), 3)
    assert (m["IRA"]["mean"], m["IRA"]["n"]) == (pytest.approx(10 / 3), 3)
    assert (m["X-SRG"]["mean"], m["X-SRG"]["n"]) == (3.5, 4)


def test_sid_interval_is_pinned_under_the_seed() -> None:
    records = [rec("a", verdict({c: s for c in CRITERIA})) for s in (1, 2, 3, 4, 5)]
    m = sid_rubric_metrics(records, judged=True)["groups"]["a"]["metrics"][AVG]
    assert (m["mean"], m["n"]) == (3.0, 5)
    assert (m["ci_low"], m["ci_high"]) == pytest.approx((1.8, 4.2), abs=1e-12)
    narrow = sid_rubric_metrics(records, judged=True, confidence=0.9)["groups"]["a"]["metrics"][AVG]
    assert (narrow["ci_low"], narrow["ci_high"]) == pytest.approx((2.0, 4.0), abs=1e-12)


def test_a_group_without_verdicts_is_not_computed() -> None:
    out = sid_rubric_metrics([rec("a")], judged=True)
    m = out["groups"]["a"]["metrics"]["IRA"]
    assert m["mean"] is None and m["n"] == 0 and "no sid_rubrics verdict" in m["not_computed"]
    assert out["groups"]["a"]["n_units"] == 1


# --- the judge: one failed sample of three --------------------------------------------------------------------


def test_one_failed_sample_of_three_keeps_the_verdict(toy) -> None:  # noqa: F811
    replies = iter([reply(quality=2), "not json", reply(quality=2)])
    judge = Judge(JudgeConfig(backend="openai:fake", samples=3),
                  backend=FakeBackend(lambda conv, cfg: GenerationResult(text=next(replies))))
    v = judge.judge(toy, {"question": "q", "answer": "a"})
    assert (v.n_samples, v.n_failed, v.ok, v.failed) == (3, 1, False, False)
    assert v.values["quality"] == 2
    assert judge.stats == {"items": 1, "requests": 3, "failed_samples": 1, "failed_verdicts": 0}


def test_every_sample_failed_is_counted_once_per_verdict(toy) -> None:  # noqa: F811
    judge = Judge(JudgeConfig(backend="openai:fake", samples=2),
                  backend=FakeBackend(lambda conv, cfg: GenerationResult(text=None, error="HTTP 500")))
    verdicts = judge.judge_many(toy, [{"question": "q", "answer": "a"}, {"question": "r", "answer": "b"}])
    assert [(v.n_failed, v.failed, v.ok) for v in verdicts] == [(2, True, False), (2, True, False)]
    assert verdicts[0].errors == ["sample 0: backend: HTTP 500", "sample 1: backend: HTTP 500"]
    assert judge.stats == {"items": 2, "requests": 4, "failed_samples": 4, "failed_verdicts": 2}


def test_all_samples_parsed_is_ok(toy) -> None:  # noqa: F811
    judge = Judge(JudgeConfig(backend="openai:fake", samples=2),
                  backend=FakeBackend(lambda conv, cfg: GenerationResult(text=reply())))
    v = judge.judge(toy, {"question": "q", "answer": "a"})
    assert (v.n_failed, v.ok, v.failed) == (0, True, False)
    assert judge.stats["failed_verdicts"] == 0


class _Short:
    name = "short"

    def generate(self, conversations, config):
        return [GenerationResult(text=reply())]  # one result for every batch: wrong when there are two items


def test_a_backend_returning_the_wrong_number_of_results_fails_the_round(toy) -> None:  # noqa: F811
    judge = Judge(JudgeConfig(backend="openai:fake", samples=1), backend=_Short())
    one = judge.judge(toy, {"question": "q", "answer": "a"})
    assert one.ok
    two = judge.judge_many(toy, [{"question": "q", "answer": "a"}, {"question": "r", "answer": "b"}])
    assert all(v.failed for v in two) and "returned 1 results for 2 requests" in two[0].errors[0]


def test_a_misconfigured_backend_raises(toy) -> None:  # noqa: F811
    def bad(conv, cfg):
        raise ConfigError("no such model")

    with pytest.raises(ConfigError, match="no such model"):
        Judge(JudgeConfig(backend="openai:fake"), backend=FakeBackend(bad)).judge(toy, {"question": "q", "answer": "a"})


def test_no_items_no_request(toy) -> None:  # noqa: F811
    backend = FakeBackend(lambda conv, cfg: GenerationResult(text=reply()))
    assert Judge(JudgeConfig(backend="openai:fake"), backend=backend).judge_many(toy, []) == []
    assert backend.calls == []


def test_without_a_judge_every_summary_is_empty() -> None:
    out = sid_rubric_metrics([rec("a", verdict(ALL4)), rec("a")], judged=False)
    assert out["groups"]["a"]["n_units"] == 2
    assert out["groups"]["a"]["metrics"]["IRA"] == {"mean": None, "ci_low": None, "ci_high": None, "n": 0,
                                                     "not_computed": "no judge configured (--judge)"}


# --- aggregation at its edges -----------------------------------------------------------------------------------


def test_aggregate_rejects_an_unknown_method(toy) -> None:  # noqa: F811
    with pytest.raises(ConfigError, match="aggregate must be 'majority' or 'mean'"):
        aggregate(toy.criteria["quality"], [3, 4], "median")


@pytest.mark.parametrize(("fail_value", "values", "expected"), [
    pytest.param(5, [2, 4], 4, id="tie-toward-a-high-fail-value"),
    pytest.param(5, [1, 3], 3, id="tie-nearest-the-fail-value"),
    pytest.param(3, [2, 4], 2, id="equal-distance-takes-the-lower"),
    pytest.param(1, [2, 4], 2, id="tie-toward-a-low-fail-value"),
])
def test_likert_ties_break_toward_the_fail_value(fail_value: int, values: list, expected: int) -> None:
    criterion = Criterion("q", "likert", "d", fail_value, min=1, max=5)
    assert aggregate(criterion, values, "majority") == expected


def test_choice_ties_at_equal_distance_take_the_later_label() -> None:
    criterion = Criterion("c", "choice", "d", "tie", labels=("win", "tie", "lose"))
    assert aggregate(criterion, ["win", "lose"], "majority") == "lose"
    assert aggregate(criterion, ["win", "lose", "tie"], "majority") == "tie"
