"""`tutorzoo rollout --tutor openai:<model> --base-url ...` on every task set, against a loopback server; a failing
endpoint never loses the episodes already finished."""

from __future__ import annotations

import json

import pytest
from chat_server import ChatServer, Reply

from tutorzoo.eval.cli import main

TASK_SETS = ("math", "stem", "mcq")


@pytest.mark.parametrize("task_set", TASK_SETS)
def test_openai_tutor_runs_on_every_task_set(task_set, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer(responder=lambda body, i: "Imagine you had to explain this to a friend: what is the first step?") \
            as server:
        code = main(["rollout", "--tutor", "openai:test-model", "--base-url", server.url, "--task-set", task_set,
                     "--episodes", "3", "--max-turns", "3", "--out", str(tmp_path)])
        assert code == 0
        assert server.request_count > 0
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 3
    assert all(r["tutor"] == "openai:test-model" and not r["failures"] for r in records)
    tutor_turns = [t for r in records for t in r["transcript"] if t["speaker"] == "tutor"]
    assert tutor_turns and all(t["utterance"].startswith("Imagine") for t in tutor_turns)


def test_failing_endpoint_keeps_finished_episodes(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def responder(body, index):  # healthy for the first episodes' turns, then a hard 401
        return "What do you think comes next?" if index < 6 else Reply.error(401, "invalid api key")

    with ChatServer(responder=responder) as server:
        code = main(["rollout", "--tutor", "openai:test-model", "--base-url", server.url, "--episodes", "6",
                     "--max-turns", "2", "--batch-size", "2", "--out", str(tmp_path)])
    assert code == 0
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 6, "every episode is recorded, failed or not"
    finished = [r for r in records if not r["failures"]]
    failed = [r for r in records if r["failures"]]
    assert finished and failed
    assert all(r["ended_by"] == "failure" and "401" in r["failures"][0]["error"] for r in failed)
    assert all(r["posttest"] for r in finished)


@pytest.mark.parametrize("task_set", TASK_SETS)
def test_hf_tutor_runs_on_every_task_set(task_set, tmp_path, tiny_model_dir):
    code = main(["rollout", "--tutor", f"hf:{tiny_model_dir}", "--task-set", task_set, "--episodes", "2",
                 "--max-turns", "2", "--tutor-arg", "max_new_tokens=12", "--out", str(tmp_path)])
    assert code == 0
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2 and not any(r["failures"] for r in records)
    assert all(r["n_tutor_turns"] >= 1 and r["posttest"] for r in records)
