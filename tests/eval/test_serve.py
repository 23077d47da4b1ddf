"""``tutorzoo serve``: OpenEnv WebSocket sessions on loopback, each bounded in time.

Concurrent sessions play the engine's own episodes; a client that vanishes, a malformed action, a full server and a
server stopped mid-episode each end as the module docstring of :mod:`tutorzoo.eval.serve` says.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("openenv")
uvicorn = pytest.importorskip("uvicorn")

from tutorzoo.agents.student import SimulatedStudent  # noqa: E402
from tutorzoo.agents.tutor import make_tutor  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.envs.records import json_form  # noqa: E402
from tutorzoo.envs.seeding import derive_seed  # noqa: E402
from tutorzoo.eval.rollout import run_episode  # noqa: E402
from tutorzoo.eval.serve import Ledger, SpecSource, build_app, outcome_of  # noqa: E402
from tutorzoo.eval.serve_client import (  # noqa: E402
    ServerError,
    ServerGone,
    TutorZooClient,
    observation_pair,
    play_remote,
)

PROTOCOL = {"max_turns": 2}
LIMIT_S = 60.0  # every network wait of these tests ends by then


@contextmanager
def served(source: SpecSource, ledger: Ledger, max_sessions: int = 8, **kwargs) -> Iterator[str]:
    """A ``build_app`` server on a free loopback port in a thread; yields its URL, stops it on exit."""
    app = build_app(source, ledger, max_sessions=max_sessions, idle_timeout_s=None, **kwargs)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the test server did not start in 20 s"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive(), "the test server did not stop in 10 s"


def stats(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/tutorzoo/stats", timeout=10) as resp:
        return json.load(resp)


def wait_for(url: str, check, what: str) -> dict:
    deadline = time.monotonic() + 20
    while True:
        current = stats(url)
        if check(current):
            return current
        assert time.monotonic() < deadline, f"{what} did not happen in 20 s: {current}"
        time.sleep(0.05)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, LIMIT_S))


def test_eight_concurrent_sessions_play_the_engines_episodes(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    seeds = list(range(8))

    async def one(url: str, seed: int, go: asyncio.Event, tutor_seed: int):
        # play_remote's loop, waiting after the reset until every session holds an episode at the same moment
        tutor = make_tutor("socratic")
        async with TutorZooClient(url) as client:
            result = await client.reset(seed=seed, tutor="socratic")
            await go.wait()
            tutor.reset(seed=tutor_seed)
            turns = 0
            while not result.done:
                result = await client.step(tutor.act(*observation_pair(result.observation)))
                turns += 1
            return result.observation.outcome, turns

    async def all_at_once(url: str):
        go = asyncio.Event()
        tasks = [asyncio.create_task(one(url, s, go, derive_seed(s, "tutor"))) for s in seeds]
        while (await asyncio.to_thread(stats, url))["active_sessions"] < len(seeds):
            await asyncio.sleep(0.02)
        open_at_once = (await asyncio.to_thread(stats, url))["active_sessions"]
        go.set()
        return await asyncio.gather(*tasks), open_at_once

    with served(SpecSource(protocol=PROTOCOL), ledger, max_sessions=8) as url:
        played, open_at_once = run(all_at_once(url))
        final = stats(url)
    outcomes = [outcome for outcome, _turns in played]
    assert open_at_once == 8
    assert final["scored"] == 8 and final["abandoned"] == 0 and final["active_sessions"] == 0
    served_records = {json.loads(line)["spec"]["seed"]: json.loads(line)
                      for line in (tmp_path / "episodes.jsonl").read_text().splitlines()}
    for seed, outcome in zip(seeds, outcomes, strict=True):
        spec = EpisodeSpec(task_set="math", persona="all_round_partly_wrong", seed=seed, protocol=PROTOCOL)
        local = run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona), "socratic")
        assert outcome == outcome_of(local)
        assert outcome.scored and outcome.learning_gain == local["learning_gain"] and outcome.reward == local["reward"]
        assert json.dumps(served_records[seed], sort_keys=True) == json.dumps(json_form(local), sort_keys=True)


def test_one_session_more_than_the_limit_is_refused_with_the_fix() -> None:
    async def scenario(url: str) -> None:
        async with TutorZooClient(url) as first:
            await first.reset(seed=0)
            second = TutorZooClient(url)
            with pytest.raises(ServerError, match="--max-sessions") as err:
                await second.reset(seed=1)
            assert err.value.code == "CAPACITY_REACHED"
            await second.close()
            result = await first.step("What is the question asking for?")  # the open session plays on
            assert not result.done

    with served(SpecSource(protocol=PROTOCOL), Ledger(), max_sessions=1) as url:
        run(scenario(url))


def test_a_client_that_disconnects_mid_episode_frees_its_session_and_scores_nothing(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)

    async def vanish(url: str) -> None:
        client = TutorZooClient(url)
        await client.reset(seed=0)
        await client.step("What do you know about this task?")
        await client._ws.close()  # the socket goes away without OpenEnv's close message

    with served(SpecSource(protocol=PROTOCOL), ledger) as url:
        run(vanish(url))
        after = wait_for(url, lambda s: s["active_sessions"] == 0 and s["abandoned"] == 1, "freeing the session")
    assert after["scored"] == 0 and after["failed"] == 0 and after["started"] == 1
    assert not (tmp_path / "episodes.jsonl").exists()
    [abandoned] = [json.loads(line) for line in (tmp_path / "abandoned.jsonl").read_text().splitlines()]
    assert abandoned["spec"]["seed"] == 0 and abandoned["tutor_turns"] == 1


@pytest.mark.parametrize("message, expected", [
    ({"type": "step", "data": {"text": "hi"}}, "message: Field required"),
    ({"type": "step", "data": {"message": 7}}, "message: Input should be a valid string"),
    ({"type": "step", "data": {"message": "hi", "end": True}}, "end: Extra inputs are not permitted"),
])
def test_a_malformed_action_gets_a_clear_error_and_the_session_lives(message: dict, expected: str) -> None:
    async def scenario(url: str) -> None:
        async with TutorZooClient(url) as client:
            await client.reset(seed=0)
            with pytest.raises(ServerError, match=expected) as err:
                await client._send_and_receive(message)
            assert err.value.code == "VALIDATION_ERROR" and '{"message":' in str(err.value)
            result = await client.step("What is the question asking for?")
            assert result.observation.turn >= 1 and not result.done

    with served(SpecSource(protocol=PROTOCOL), Ledger()) as url:
        run(scenario(url))


@pytest.mark.parametrize("reset, expected", [
    ({"index": 0}, "no spec list: start it with --suite"),
    ({"seed": 1, "spec": {"persona": "anxious", "seed": 1}}, "one of index, seed or spec"),
    ({"spec": {"persona": "anxious"}}, "seed: Field required"),
    ({"colour": "blue", "seed": 1}, "does not take \\['colour'\\]"),
    ({}, "reset needs seed"),
])
def test_a_bad_reset_names_the_fix(reset: dict, expected: str) -> None:
    async def scenario(url: str) -> None:
        async with TutorZooClient(url) as client:
            with pytest.raises(ServerError, match="send reset"):
                await client.step("hello")
            with pytest.raises(ServerError, match=expected):
                await client.reset(**reset)
            assert not (await client.reset(seed=2)).done  # the session is still usable

    with served(SpecSource(protocol=PROTOCOL), Ledger()) as url:
        run(scenario(url))


def test_the_server_stopped_mid_episode_gives_the_client_an_error_and_scores_nothing(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    stop = threading.Event()

    async def scenario(url: str) -> None:
        client = TutorZooClient(url, message_timeout_s=20)
        await client.reset(seed=0)
        await client.step("What do you know about this task?")
        stop.set()
        with pytest.raises(ServerGone, match="not scored"):
            for _ in range(50):  # the stop reaches this session within a few steps
                await client.step("What could you try first?")
                await asyncio.sleep(0.1)
        await client.close()

    with served(SpecSource(protocol={"max_turns": 100}), ledger) as url:
        holder = threading.Thread(target=lambda: run(scenario(url)), daemon=True)
        holder.start()
        assert stop.wait(LIMIT_S)
    holder.join(LIMIT_S)  # the server has stopped (served's exit); the client's error ends the scenario
    assert not holder.is_alive()
    assert ledger.snapshot()["scored"] == 0 and ledger.snapshot()["failed"] == 0
    assert not (tmp_path / "episodes.jsonl").exists()


@pytest.mark.slow
def test_serve_cli_stopped_by_sigterm_mid_episode_scores_nothing(tmp_path: Path) -> None:
    out = tmp_path / "served"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-m", "tutorzoo", "serve", "--port", "0", "--max-turns", "100",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = ""
        deadline = time.monotonic() + 60
        while "listening on" not in line:
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() else ""
            line = proc.stdout.readline()
        url = line.split("listening on ")[1].split()[0]

        async def scenario() -> None:
            client = TutorZooClient(url, message_timeout_s=20)
            await client.reset(seed=0)
            await client.step("What do you know about this task?")
            proc.send_signal(signal.SIGTERM)
            with pytest.raises(ServerGone, match="not scored"):
                for _ in range(99):  # the stop reaches this session within the graceful-shutdown timeout (5 s)
                    await client.step("What could you try first?")
                    await asyncio.sleep(0.1)
            await client.close()

        run(scenario())
        assert proc.wait(timeout=30) is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert not (out / "episodes.jsonl").exists() or not (out / "episodes.jsonl").read_text().strip()


@pytest.mark.parametrize("argv, expected", [
    (["--suite", "no_such_suite"], "no suite 'no_such_suite'"),
    (["--max-sessions", "0"], "--max-sessions must be >= 1"),
    (["--persona", "no_such_persona"], "no_such_persona"),
    (["--suite", "default", "--limit", "0"], "--limit must be >= 1"),
    (["--suite", "default", "--persona", "no_such_persona"], "no_such_persona"),
    (["--max-turns", "0"], "max_turns"),
    (["--idle-timeout", "-1"], "--idle-timeout must be > 0"),
])
def test_serve_refuses_bad_options_before_listening(argv: list[str], expected: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from tutorzoo.eval.cli import main

    assert main(["serve", "--port", "0", *argv]) == 2
    assert expected in capsys.readouterr().out


def test_serve_refuses_a_port_it_cannot_bind(capsys: pytest.CaptureFixture[str]) -> None:
    from tutorzoo.eval.cli import main

    assert main(["serve", "--port", "70000"]) == 2
    assert "choose another --port" in capsys.readouterr().out


class BreakingStudent(SimulatedStudent):
    """A simulated student whose third dialogue turn raises (a crashed student backend)."""

    def __init__(self, persona: str) -> None:
        super().__init__(persona)
        self.calls = 0

    def act(self, observation, info):
        if info.get("phase") == "dialogue":
            self.calls += 1
            if self.calls == 3:
                raise RuntimeError("student backend crashed")
        return super().act(observation, info)


def test_a_failed_episode_is_recorded_and_counted_never_scored(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)

    async def scenario(url: str):
        async with TutorZooClient(url) as client:
            return await play_remote(client, make_tutor("socratic"), seed=0)

    with served(SpecSource(protocol={"max_turns": 8}), ledger, make_student=BreakingStudent) as url:
        outcome = run(scenario(url))
    assert not outcome.scored and outcome.ended_by == "failure" and "student backend crashed" in outcome.failure
    assert outcome.learning_gain is None and outcome.reward is None and outcome.metrics == {}
    assert ledger.snapshot() == {"started": 1, "scored": 0, "failed": 1, "abandoned": 0}
    [record] = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert record["ended_by"] == "failure" and record["failures"][0]["agent"] == "student"


@pytest.mark.slow
def test_an_idle_session_is_reaped_its_episode_abandoned_not_scored(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    app = build_app(SpecSource(protocol=PROTOCOL), ledger, idle_timeout_s=1.0)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def idle() -> None:
        async with TutorZooClient(url) as client:
            await client.reset(seed=0)
            deadline = time.monotonic() + 30
            while (await asyncio.to_thread(stats, url))["abandoned"] == 0:  # the reaper looks every 5 s
                assert time.monotonic() < deadline, "the idle session was not reaped in 30 s"
                await asyncio.sleep(0.2)
            with pytest.raises(ServerError, match="abandoned .*idle past --idle-timeout.* not scored"):
                await client.step("Are you still there?")

    try:
        run(idle())
    finally:
        server.should_exit = True
        thread.join(10)
    assert ledger.snapshot()["scored"] == 0 and ledger.snapshot()["abandoned"] == 1


def test_only_the_websocket_session_plays_episodes() -> None:
    """HTTP /reset and /step would make a fresh env per request: they are not served; /health and /schema are."""
    import urllib.error

    with served(SpecSource(protocol=PROTOCOL), Ledger()) as url:
        for path in ("/reset", "/step"):
            request = urllib.request.Request(f"{url}{path}", data=b"{}", method="POST",
                                             headers={"Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(request, timeout=10)
            assert err.value.code in (404, 405)
        with urllib.request.urlopen(f"{url}/schema", timeout=10) as resp:
            schema = json.load(resp)
    assert "message" in json.dumps(schema["action"]) and "outcome" in json.dumps(schema["observation"])
