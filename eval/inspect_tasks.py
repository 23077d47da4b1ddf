"""inspect-ai tasks: a TutorZoo suite benchmarked with inspect's model as the tutor.

A sample is one episode spec of the suite; the solver (:func:`tutor_dialogue`) plays it from the tutor's seat
(:class:`~tutorzoo.eval.seat_episode.SeatEpisode`), asking inspect's model for each tutor turn with the env's chat
(system prompt first, the student's turns as user), against the simulated student; the scorer
(:func:`tutoring_outcome`) reports the learning gain, the env's reward and the SID metrics, each with mean and
stderr. An episode that fails (the student's seat raised) is an inspect sample error, never a score. The same
spec with the same tutor replies is the episode ``tutorzoo rollout`` plays.

Example (a loopback or hosted OpenAI-compatible endpoint as the tutor)::

    inspect eval "$(python -c 'import tutorzoo.eval.inspect_tasks as m; print(m.__file__)')@tutorzoo" \\
        -T suite=default -T split=held_out -T limit=8 --model openai-api/vllm/Qwen3-8B

``VLLM_BASE_URL`` and ``VLLM_API_KEY`` name the endpoint of ``openai-api/vllm/...``. The named tasks
``tutorzoo_default``, ``tutorzoo_sid`` and ``tutorzoo_educationq`` are the factory for those suites.
"""

from __future__ import annotations

import math

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.eval.seat_episode import SID_METRICS, SeatEpisode

SCORE_KEYS = (LEARNING_GAIN, "reward", *SID_METRICS)
RECORD_KEY = "tutorzoo_record"  # where the solver leaves the episode record for the scorer (state.store)


class EpisodeFailed(RuntimeError):
    """An episode ended by a failure: inspect records the sample as an error, not a score."""


def suite_samples(suite: str = "default", split: str = "all", limit: int | None = None) -> list[Sample]:
    """One :class:`Sample` per spec of an episodes suite, in the suite's order (``limit``: the first N)."""
    from tutorzoo.eval.suite import load_suite

    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be >= 1, got {limit}")
    specs = load_suite(suite).specs(split)[:limit]  # type: ignore[arg-type]
    if not specs:
        raise ConfigError(f"suite {suite!r} has no specs in split {split!r}; choose another split")
    return [Sample(input=spec.key(), id=index, metadata={"spec": spec.model_dump(), "key": spec.key()})
            for index, spec in enumerate(specs)]


def chat_messages(messages: list[dict]) -> list[ChatMessage]:
    """The env's chat from the tutor's side as inspect messages (the tutor is the assistant)."""
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"]) for m in messages]


@solver
def tutor_dialogue() -> Solver:
    """Play the sample's episode: each tutor turn is one ``generate`` on the env's chat."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = EpisodeSpec.model_validate(state.metadata["spec"])
        episode = SeatEpisode(spec, tutor_name=str(state.model))
        _obs, info = episode.start()
        while not episode.done:
            state.messages = chat_messages(info["messages"])
            state = await generate(state)
            _obs, info = episode.step(state.output.completion)
        record = episode.record or {}  # done means recorded
        state.store.set(RECORD_KEY, record)
        if record["failures"]:
            raise EpisodeFailed(f"episode {spec.key()} failed: {record['failures'][0]['error']}; it is not scored")
        return state

    return solve


def _number(value: object) -> float:
    # NaN, not 0, for a metric the episode does not define (learning_gain under posttest: same): it must not
    # pass for a measured zero
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


@scorer(metrics={key: [mean(), stderr()] for key in SCORE_KEYS})
def tutoring_outcome() -> Scorer:
    """Learning gain, reward and the SID metrics of the episode the solver played."""

    async def score(state: TaskState, target: Target) -> Score:
        from tutorzoo.eval.metrics.suite import episode_metrics

        record = state.store.get(RECORD_KEY)
        if record is None:
            raise EpisodeFailed("the sample has no finished episode (a sample limit or an error stopped the solver, "
                                "or it is not tutor_dialogue): it is not scored")
        metrics = episode_metrics(record)
        value = {LEARNING_GAIN: _number(record[LEARNING_GAIN]), "reward": _number(record["reward"]),
                 **{name: _number(metrics[name]) for name in SID_METRICS}}
        return Score(value=value, answer=record["ended_by"],
                     explanation=f"ended_by={record['ended_by']}, {record['n_tutor_turns']} tutor turns",
                     metadata={"key": state.metadata["key"], "reward_components": record["reward_components"],
                               "learning_gain_same": record.get("learning_gain_same"),
                               "pretest_score": record["pretest_score"], "posttest_score": record["posttest_score"]})

    return score


def suite_task(suite: str = "default", split: str = "all", limit: int | None = None) -> Task:
    """The inspect task of a suite: its specs as samples, :func:`tutor_dialogue`, :func:`tutoring_outcome`."""
    return Task(dataset=suite_samples(suite, split, limit), solver=tutor_dialogue(), scorer=tutoring_outcome(),
                name=f"tutorzoo_{suite.replace('-', '_')}")


@task
def tutorzoo(suite: str = "default", split: str = "all", limit: int | None = None) -> Task:
    """Any episodes suite by name or path (``-T suite=sid -T split=held_out -T limit=8``)."""
    return suite_task(suite, split, limit)


@task
def tutorzoo_default(split: str = "all", limit: int | None = None) -> Task:
    """The default suite (math and stem, every persona family)."""
    return suite_task("default", split, limit)


@task
def tutorzoo_sid(split: str = "all", limit: int | None = None) -> Task:
    """The SID suite."""
    return suite_task("sid", split, limit)


@task
def tutorzoo_educationq(split: str = "all", limit: int | None = None) -> Task:
    """The EducationQ suite (the tutor opens; the same-item post-test beside the isomorphic one)."""
    return suite_task("educationq", split, limit)


__all__ = ["EpisodeFailed", "SCORE_KEYS", "chat_messages", "suite_samples", "suite_task", "tutor_dialogue",
           "tutoring_outcome", "tutorzoo", "tutorzoo_default", "tutorzoo_educationq", "tutorzoo_sid"]
