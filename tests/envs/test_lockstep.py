"""Every model seat in lockstep (envs/lockstep.py, envs/engine.py): the gate pools the workers' requests, and
episodes with model students play the same records batched as one at a time, on the tiny HF model and on a
loopback endpoint, with the requests of the episodes in flight together."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from chat_server import ChatServer, Reply

from tutorzoo.agents.student.llm import make_student_factory
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.engine import play
from tutorzoo.envs.lockstep import Gate, current_gate
from tutorzoo.envs.records import json_form

SPECS = [EpisodeSpec(task_set=("math", "mcq")[i % 2], persona=("anxious", "all_round_partly_wrong")[i % 2], seed=i,
                     protocol={"max_turns": 2 + i % 2}) for i in range(4)]


def canonical(records: list[dict]) -> list[str]:
    return [json.dumps(json_form(r), sort_keys=True, default=str) for r in records]


class Doubler:
    """A pooled backend that records the size of each pooled run."""

    def __init__(self, fail: bool = False) -> None:
        self.runs: list[int] = []
        self.fail = fail

    def run_pooled(self, requests: list[int]) -> list[int]:
        self.runs.append(len(requests))
        if self.fail:
            raise RuntimeError("backend down")
        return [2 * r for r in requests]

    def call(self, values: list[int]) -> list[int]:
        gate = current_gate()
        return gate.submit(self, values) if gate is not None else self.run_pooled(values)


def test_the_gate_runs_every_workers_requests_in_one_pooled_call_per_round() -> None:
    backend, gate = Doubler(), Gate()
    with ThreadPoolExecutor(4) as pool:
        jobs = [lambda k=k: [backend.call([k, k + 10]), backend.call([k])] for k in range(4)]
        results = [f.result() for f in gate.run(jobs, pool)]
    assert results == [[[2 * k, 2 * k + 20], [2 * k]] for k in range(4)]
    assert backend.runs == [8, 4] and gate.rounds == 2  # two rounds, all four workers in each
    assert current_gate() is None  # the engine's own thread never pools


def test_a_pooled_failure_reaches_every_worker_of_the_round() -> None:
    backend, gate = Doubler(fail=True), Gate()
    with ThreadPoolExecutor(2) as pool:
        futures = gate.run([lambda: backend.call([1]), lambda: backend.call([2])], pool)
    for future in futures:
        with pytest.raises(RuntimeError, match="backend down"):
            future.result()


def test_a_worker_that_needs_no_model_does_not_hold_the_others_back() -> None:
    backend, gate, seen = Doubler(), Gate(), threading.Event()
    with ThreadPoolExecutor(2) as pool:
        futures = gate.run([lambda: backend.call([3]), lambda: seen.set() or "no model"], pool)
        assert [f.result() for f in futures] == [[6], "no model"]
    assert backend.runs == [1]


@pytest.mark.parametrize("mode", ["llm", "hybrid"])
def test_hf_students_play_the_same_episodes_batched_as_one_at_a_time(tiny_model_dir: Path, mode: str) -> None:
    from tutorzoo.agents.backends.hf import HFBackend

    options = {"threads": 1, "batch_size": 8, "max_new_tokens": 10}
    tutor = make_tutor(f"hf:{tiny_model_dir}", **options)
    make_student = make_student_factory(f"{mode}:hf:{tiny_model_dir}", **options)
    rows: list[int] = []
    original = HFBackend._generate_chunk

    def counting(self, prompts, config, seeds):  # rows per model.generate call, tutor's and student's
        rows.append(len(prompts))
        return original(self, prompts, config, seeds)

    HFBackend._generate_chunk = counting  # type: ignore[method-assign]
    try:
        one = play(SPECS, tutor, make_student, batch_size=1)
        one_rows = list(rows)
        rows.clear()
        batched = play(SPECS, tutor, make_student, batch_size=4)
    finally:
        HFBackend._generate_chunk = original  # type: ignore[method-assign]
    assert all(not r["failures"] for r in one + batched)
    assert canonical(batched) == canonical(one)
    assert sum(rows) == sum(one_rows)  # the same requests...
    assert len(rows) < len(one_rows) / 2 and max(rows) >= len(SPECS)  # ...in batches across the episodes
    if mode == "llm":
        assert max(one_rows) > 1  # the post-test items of one episode go out together, even alone


@pytest.mark.parametrize("mode", ["llm", "hybrid"])
def test_endpoint_students_play_the_same_episodes_with_the_requests_in_flight_together(mode: str) -> None:
    def reply(body: dict, index: int) -> Reply:  # depends on the request only, never on arrival order
        last = str(body["messages"][-1]["content"])
        text = "The answer is (A)." if "test question" in last else f"I think it is {len(last) % 7}, or not?"
        return Reply(text=text if body["model"] == "student" else f"Why {len(body['messages'])}?", delay=0.02)

    with ChatServer(responder=reply) as server:
        options = {"base_url": server.url, "max_concurrency": 8, "max_retries": 0}
        tutor = make_tutor("openai:tutor", **options)
        make_student = make_student_factory(f"{mode}:openai:student", **options)
        one = play(SPECS, tutor, make_student, batch_size=1)
        alone, server.max_in_flight = server.max_in_flight, 0
        sequential_requests = server.request_count
        seen: list[dict] = []
        batched = play(SPECS, tutor, make_student, batch_size=4, on_record=seen.append)
        assert server.request_count == 2 * sequential_requests  # the same requests...
        assert server.max_in_flight >= len(SPECS)  # ...every episode's in flight at once
    assert all(not r["failures"] for r in one + batched)
    assert canonical(batched) == canonical(one)
    assert (alone > 1) == (mode == "llm")  # alone, only an "llm" student's post-test items overlap
    assert canonical(seen) == canonical(one)  # on_record in the order of the specs, whichever episode ends first


def test_an_endpoint_tutor_with_simulated_students_plays_the_same_episodes_pipelined() -> None:
    from tutorzoo.agents.student import SimulatedStudent

    with ChatServer(responder=lambda body, i: Reply(text=f"Why {len(body['messages'])}?", delay=0.02)) as server:
        tutor = make_tutor("openai:tutor", base_url=server.url, max_concurrency=8, max_retries=0)
        one = play(SPECS, tutor, SimulatedStudent, batch_size=1)
        server.max_in_flight = 0
        batched = play(SPECS, tutor, SimulatedStudent, batch_size=4)
        assert server.max_in_flight == len(SPECS)
    assert all(not r["failures"] for r in batched) and canonical(batched) == canonical(one)


def test_a_student_backend_failure_ends_only_its_own_episode_in_lockstep() -> None:
    def reply(body: dict, index: int) -> Reply:  # the anxious persona's student requests are refused
        if body["model"] == "student" and "anxious" in str(body["messages"][0]["content"]):
            return Reply.error(400, "bad request")
        last = str(body["messages"][-1]["content"])
        return Reply(text="The answer is (A)." if "test question" in last else "Hmm?")

    with ChatServer(responder=reply) as server:
        options = {"base_url": server.url, "max_concurrency": 8, "max_retries": 0}
        records = play(SPECS, make_tutor("openai:tutor", **options),
                       make_student_factory("llm:openai:student", **options), batch_size=4)
    assert [bool(r["failures"]) for r in records] == [s.persona == "anxious" for s in SPECS]
    for r in records:
        if r["failures"]:
            assert r["ended_by"] == "failure" and r["failures"][0]["agent"] == "student"
            assert "HTTP 400" in r["failures"][0]["error"] and r["failures"][0]["phase"] == "pretest"
        else:
            assert r["ended_by"] != "failure" and r["n_tutor_turns"] >= 2
