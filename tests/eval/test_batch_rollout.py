"""Batched rollouts: the same records as one-at-a-time rollouts for a deterministic tutor, failures that stay
with their episodes, and a batched LLM tutor on the tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor.builtin import SocraticTutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.protocols import PartialBatchError, TutorTurn
from tutorzoo.envs.records import json_form
from tutorzoo.eval.batch import run_batched
from tutorzoo.eval.rollout import run_episode

PERSONAS = ("all_round_partly_wrong", "weak_knowledge_asks_for_hint", "anxious", "chatty")
# mcq with low_motivation_correct_and_extends is avoided: the Socratic tutor recurses without end there
SPECS = [
    EpisodeSpec(task_set=("math", "stem", "mcq")[i % 3], persona=PERSONAS[i % 4], seed=i,
                protocol={"max_turns": 2 + i % 4})  # unequal lengths: episodes end at different steps
    for i in range(7)
]


def comparable(record: dict) -> str:
    return json.dumps(json_form(record), sort_keys=True)


def sequential(specs: list[EpisodeSpec]) -> list[dict]:
    return [run_episode(s, SocraticTutor(), SimulatedStudent(s.persona), tutor_name="socratic") for s in specs]


class BatchedSocratic:
    """The Socratic tutor as an episode tutor: one tutor per episode, keyed by the index the engine names."""

    def __init__(self, fail: dict[int, int] | None = None, crash_on_call: int | None = None) -> None:
        self.fail = fail or {}  # episode index -> its dialogue turn whose reply goes missing
        self.crash_on_call = crash_on_call
        self.calls: list[int] = []

    def reset(self, seed: int | None = None) -> None:
        self.tutors: dict[int, SocraticTutor] = {}
        self.turns: dict[int, int] = {}

    def begin_episode(self, index: int, seed: int) -> None:
        self.tutors[index] = SocraticTutor()
        self.tutors[index].reset(seed=seed)
        self.turns[index] = 0

    def act(self, observation: dict, info: dict) -> str:
        raise AssertionError("run_batched must call act_turns on an episode tutor")

    def act_turns(self, batch: list[TutorTurn]) -> list[str]:
        self.calls.append(len(batch))
        if self.crash_on_call == len(self.calls):
            raise ConnectionError("the inference server went away")
        texts: list[str | None] = []
        errors: list[str | None] = []
        for i, obs, info in batch:
            self.turns[i] += 1
            missing = self.fail.get(i) == self.turns[i]
            texts.append(None if missing else self.tutors[i].act(obs, info))
            errors.append("HTTP 500 from the model server" if missing else None)
        if any(errors):
            raise PartialBatchError(texts, errors)
        return texts  # type: ignore[return-value]


@pytest.fixture(scope="module")
def reference() -> list[dict]:
    return sequential(SPECS)


@pytest.mark.parametrize("batch_size", [1, 3, 16], ids=["batch-1", "batch-3-refills", "batch-16-all-at-once"])
def test_batched_records_equal_sequential_ones(reference: list[dict], batch_size: int) -> None:
    tutor = BatchedSocratic()
    seen: list[dict] = []
    records = run_batched(SPECS, tutor, SimulatedStudent, batch_size=batch_size, on_record=seen.append,
                          tutor_name="socratic")
    assert [comparable(r) for r in records] == [comparable(r) for r in reference]
    assert sorted(comparable(r) for r in seen) == sorted(comparable(r) for r in reference)
    assert max(tutor.calls) == min(batch_size, len(SPECS))  # the tutor really got batches that size


def test_a_tutor_without_act_batch_plays_one_episode_at_a_time(reference: list[dict]) -> None:
    class Counting(SocraticTutor):
        resets = 0

        def reset(self, seed: int | None = None) -> None:
            Counting.resets += 1
            super().reset(seed=seed)

    records = run_batched(SPECS, Counting(), SimulatedStudent, batch_size=4, tutor_name="socratic")
    assert [comparable(r) for r in records] == [comparable(r) for r in reference]
    assert Counting.resets == len(SPECS)  # the one instance, reset per episode (a batch of one)


def test_a_partial_batch_error_fails_only_its_episodes(reference: list[dict]) -> None:
    records = run_batched(SPECS, BatchedSocratic(fail={1: 2, 4: 1}), SimulatedStudent, batch_size=4,
                          tutor_name="socratic")
    for i, (got, want) in enumerate(zip(records, reference, strict=True)):
        if i in (1, 4):
            assert got["ended_by"] == "failure"
            [failure] = got["failures"]
            assert failure["agent"] == "tutor" and failure["phase"] == "dialogue"
            assert failure["error"] == "TutorBackendError: HTTP 500 from the model server"
            assert got["n_tutor_turns"] == (1 if i == 1 else 0) and got["posttest"] == []
        else:
            assert comparable(got) == comparable(want)


def test_a_crashed_batch_call_fails_its_episodes_and_later_ones_go_on(reference: list[dict]) -> None:
    tutor = BatchedSocratic(crash_on_call=1)
    records = run_batched(SPECS, tutor, SimulatedStudent, batch_size=3, tutor_name="socratic")
    failed = [i for i, r in enumerate(records) if r["ended_by"] == "failure"]
    assert failed == [0, 1, 2]
    assert all("ConnectionError: the inference server went away" in records[i]["failures"][0]["error"]
               for i in failed)
    assert [comparable(r) for r in records[3:]] == [comparable(r) for r in reference[3:]]


class BrokenStudent(SimulatedStudent):
    def act(self, observation: dict, info: dict):
        if info.get("phase") == "dialogue":
            raise ValueError("student model crashed")
        return super().act(observation, info)


def test_a_failing_student_ends_only_its_episode(reference: list[dict]) -> None:
    def make_student(persona: str) -> SimulatedStudent:
        return BrokenStudent(persona) if persona == "anxious" else SimulatedStudent(persona)

    records = run_batched(SPECS, BatchedSocratic(), make_student, batch_size=16, tutor_name="socratic")
    for spec, got, want in zip(SPECS, records, reference, strict=True):
        if spec.persona == "anxious":
            assert got["ended_by"] == "failure" and got["failures"][0]["agent"] == "student"
            assert got["failures"][0]["error"] == "ValueError: student model crashed"
        else:
            assert comparable(got) == comparable(want)


def test_bad_batch_size_is_refused() -> None:
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        run_batched(SPECS, SocraticTutor(), SimulatedStudent, batch_size=0)


def test_llm_tutor_on_the_tiny_model_runs_batched_and_reproducibly(tiny_model_dir: Path) -> None:
    pytest.importorskip("torch")
    from tutorzoo.agents.backends.base import GenerationConfig
    from tutorzoo.agents.backends.hf import HFBackend
    from tutorzoo.agents.tutor.llm import LLMTutor

    backend = HFBackend(str(tiny_model_dir), batch_size=8, threads=1)
    calls: list[int] = []

    class Counting:
        name = backend.name

        def generate(self, conversations, config):
            calls.append(len(conversations))
            return backend.generate(conversations, config)

    specs = SPECS[:5]

    def run() -> list[dict]:
        tutor = LLMTutor(Counting(), GenerationConfig(max_new_tokens=16, temperature=0.8))
        return run_batched(specs, tutor, SimulatedStudent, batch_size=8, tutor_name="tiny")

    first = run()
    first_calls = list(calls)
    again = run()
    assert [comparable(r) for r in first] == [comparable(r) for r in again]
    assert all(r["failures"] == [] and r["n_tutor_turns"] >= 1 for r in first)
    # one model call per step answers every waiting episode; episodes that end leave the batch
    assert first_calls[0] == len(specs) and first_calls == sorted(first_calls, reverse=True)
    assert len(first_calls) == max(r["n_tutor_turns"] for r in first)
    assert sum(first_calls) == sum(r["n_tutor_turns"] for r in first)
