"""The OpenAI-compatible backend against a real HTTP server on loopback (tests/chat_server.py): replies, retries,
faults that are not retried, the response cache, the concurrency bound, and whole rollouts through LLMTutor."""

from __future__ import annotations

import json

import pytest
from chat_server import ChatServer, Reply

pytest.importorskip("openai")

from tutorzoo.agents.backends import make_backend  # noqa: E402
from tutorzoo.agents.backends.base import ChatBackend, GenerationConfig  # noqa: E402
from tutorzoo.agents.backends.openai_compat import OpenAIBackend  # noqa: E402
from tutorzoo.agents.student import SimulatedStudent  # noqa: E402
from tutorzoo.agents.tutor import make_tutor  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.envs.errors import ConfigError  # noqa: E402
from tutorzoo.eval.rollout import run_episode, run_specs  # noqa: E402

SECRET = "sk-test-SECRET-0123456789"
HELLO = [{"role": "system", "content": "You are a tutor."}, {"role": "user", "content": "Hi"}]
CONFIG = GenerationConfig(max_new_tokens=32, temperature=0.2, top_p=0.9, seed=11, stop=("\n\n",))


@pytest.fixture
def server():
    with ChatServer() as s:
        yield s


def backend_for(server: ChatServer, **kwargs) -> OpenAIBackend:
    kwargs = {"backoff": 0.01, "timeout": 5.0, **kwargs}
    return OpenAIBackend("test-model", base_url=server.url, **kwargs)


def test_normal_reply_sends_every_sampling_parameter(server: ChatServer) -> None:
    server.script("Hello, what do you already know?")
    backend = backend_for(server)
    [result] = backend.generate([HELLO], CONFIG)
    assert isinstance(backend, ChatBackend)
    assert result.text == "Hello, what do you already know?" and result.error is None and not result.cached
    assert (result.prompt_tokens, result.completion_tokens) == (7, 6)
    assert result.meta == {"attempts": 1, "finish_reason": "stop"}
    assert server.requests == [{"model": "test-model", "messages": HELLO, "max_tokens": 32, "temperature": 0.2,
                                "top_p": 0.9, "seed": 11, "stop": ["\n\n"]}]
    assert server.auth_headers == ["Bearer EMPTY"]  # a local server without a key gets the placeholder


@pytest.mark.parametrize("fault", [
    pytest.param(Reply.error(429), id="rate-limit-429"),
    pytest.param(Reply.error(500), id="server-error-500"),
    pytest.param(Reply.error(503), id="overloaded-503"),
    pytest.param(Reply.slow(1.5), id="timeout"),
    pytest.param(Reply.truncated(), id="truncated-json"),
    pytest.param(Reply(raw='{"object": "list", "data": []}'), id="not-a-chat-completion"),
])
def test_retryable_fault_then_success(server: ChatServer, fault: Reply) -> None:
    server.script(fault, "Second time lucky.")
    backend = backend_for(server, timeout=0.4)
    [result] = backend.generate([HELLO], CONFIG)
    assert result.text == "Second time lucky." and result.error is None
    assert result.meta["attempts"] == 2
    assert server.request_count == 2
    assert backend.stats == {"requests": 2, "retries": 1, "failures": 0, "cache_hits": 0}


def test_backoff_doubles_deterministically(server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import tutorzoo.agents.backends.openai_compat as mod

    slept: list[float] = []
    monkeypatch.setattr(mod.time, "sleep", slept.append)
    server.script(Reply.error(500), Reply.error(502), Reply.error(429), "ok")
    [result] = backend_for(server, backoff=0.25).generate([HELLO], CONFIG)
    assert result.text == "ok"
    assert slept == [0.25, 0.5, 1.0]


@pytest.mark.parametrize(("status", "fix"), [
    pytest.param(400, "check the messages and the sampling parameters", id="400"),
    pytest.param(401, "check the API key in $TUTORZOO_TEST_KEY", id="401"),
    pytest.param(403, "check that the key in $TUTORZOO_TEST_KEY may use model 'test-model'", id="403"),
    pytest.param(404, "check the model name 'test-model' / base_url", id="404"),
])
def test_client_errors_are_not_retried_and_name_the_fix(server: ChatServer, monkeypatch: pytest.MonkeyPatch,
                                                        status: int, fix: str) -> None:
    monkeypatch.setenv("TUTORZOO_TEST_KEY", SECRET)
    # real servers echo the key they rejected; it must not reach the error
    server.script(Reply.error(status, f"Incorrect API key provided: {SECRET}"), "never sent")
    backend = backend_for(server, api_key_env="TUTORZOO_TEST_KEY")
    [result] = backend.generate([HELLO], CONFIG)
    assert result.text is None and not result.ok
    assert f"HTTP {status}" in result.error and fix in result.error
    assert SECRET not in result.error and SECRET not in repr(backend) and "***" in result.error
    assert server.request_count == 1 and server.auth_headers == [f"Bearer {SECRET}"]
    assert backend.stats["retries"] == 0 and backend.stats["failures"] == 1


def test_retry_log_never_shows_the_key(server: ChatServer, monkeypatch: pytest.MonkeyPatch,
                                      caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("TUTORZOO_TEST_KEY", SECRET)
    server.script(Reply.error(503, f"overloaded, key {SECRET}"), "ok")
    with caplog.at_level("WARNING", logger="tutorzoo.agents.backends.openai_compat"):
        [result] = backend_for(server, api_key_env="TUTORZOO_TEST_KEY").generate([HELLO], CONFIG)
    assert result.text == "ok"
    assert "attempt 1/5 failed (HTTP 503: overloaded, key ***)" in caplog.text and SECRET not in caplog.text


def test_retries_exhausted_is_a_counted_failure(server: ChatServer) -> None:
    server.responder = lambda body, i: Reply.error(500, "model crashed")
    backend = backend_for(server, max_retries=2)
    results = backend.generate([HELLO, HELLO], CONFIG)
    assert [r.text for r in results] == [None, None]
    assert all("gave up after 3 attempt(s)" in r.error and "HTTP 500: model crashed" in r.error for r in results)
    assert server.request_count == 6
    assert backend.stats == {"requests": 6, "retries": 4, "failures": 2, "cache_hits": 0}


def test_one_failure_does_not_lose_the_batch(server: ChatServer) -> None:
    def responder(body: dict, i: int) -> str | Reply:
        last = body["messages"][-1]["content"]
        return Reply.error(404, "no such model") if last == "bad" else f"echo {last}"

    server.responder = responder
    convs = [[{"role": "user", "content": c}] for c in ("a", "bad", "c")]
    results = backend_for(server).generate(convs, CONFIG)
    assert [r.text for r in results] == ["echo a", None, "echo c"]
    assert "check the model name" in results[1].error


def test_cache_makes_a_rerun_free_and_identical(server: ChatServer, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TUTORZOO_TEST_KEY", SECRET)
    server.responder = lambda body, i: f"reply {i} to {body['messages'][-1]['content']}"
    convs = [[{"role": "user", "content": c}] for c in ("x", "y", "z")]
    kwargs = {"cache_dir": str(tmp_path / "cache"), "api_key_env": "TUTORZOO_TEST_KEY"}
    first = backend_for(server, **kwargs).generate(convs, CONFIG)
    assert server.request_count == 3 and not any(r.cached for r in first)
    rerun = backend_for(server, **kwargs)
    second = rerun.generate(convs, CONFIG)
    assert server.request_count == 3  # zero new requests
    assert [r.text for r in second] == [r.text for r in first] and all(r.cached for r in second)
    assert rerun.stats["cache_hits"] == 3
    entries = sorted((tmp_path / "cache").glob("*/*.json"))
    assert len(entries) == 3 and not list((tmp_path / "cache").glob("*/*.tmp"))
    for entry in entries:
        assert SECRET not in entry.read_text() and json.loads(entry.read_text())["request"]["base_url"] == server.url
    # another seed is another request
    [other] = rerun.generate(convs[:1], GenerationConfig(max_new_tokens=32, temperature=0.2, top_p=0.9, seed=12))
    assert not other.cached and server.request_count == 4


def test_failures_are_not_cached(server: ChatServer, tmp_path) -> None:
    server.script(Reply.error(400, "bad"), "fine now")
    backend = backend_for(server, cache_dir=str(tmp_path))
    assert backend.generate([HELLO], CONFIG)[0].text is None
    [again] = backend.generate([HELLO], CONFIG)
    assert again.text == "fine now" and not again.cached and server.request_count == 2


@pytest.mark.parametrize("bound", [1, 3, 20], ids=["serial", "three", "three-pools"])
def test_concurrency_bound_and_order(server: ChatServer, bound: int) -> None:
    delay = 0.05 if bound < 8 else 0.5  # long enough for every request to be sent before the first reply
    server.responder = lambda body, i: Reply(text=f"re: {body['messages'][-1]['content']}", delay=delay)
    convs = [[{"role": "user", "content": f"q{i}"}] for i in range(max(7, bound))]
    backend = backend_for(server, max_concurrency=bound)
    results = backend.generate(convs, CONFIG)
    assert [r.text for r in results] == [f"re: q{i}" for i in range(len(convs))]
    assert server.max_in_flight == bound
    assert len(backend._clients) == -(-bound // 8)  # one connection pool per 8 requests in flight
    assert {r.meta["attempts"] for r in results} == {1} and backend.stats["requests"] == len(convs)
    backend.close()


@pytest.mark.parametrize(("kwargs", "message"), [
    pytest.param({}, "set $TUTORZOO_UNSET_KEY", id="no-key-no-url"),
    pytest.param({"base_url": "http://127.0.0.1:9/v1", "max_concurrency": 0}, "max_concurrency", id="concurrency"),
    pytest.param({"base_url": "http://127.0.0.1:9/v1", "timeout": 0}, "timeout", id="timeout"),
])
def test_bad_config_is_a_config_error(monkeypatch: pytest.MonkeyPatch, kwargs: dict, message: str) -> None:
    monkeypatch.delenv("TUTORZOO_UNSET_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match=message.replace("$", r"\$")):
        OpenAIBackend("gpt-4o-mini", api_key_env="TUTORZOO_UNSET_KEY", **kwargs)


def test_make_backend_builds_it(server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = make_backend("openai:test-model", base_url=server.url, max_retries=0)
    assert isinstance(backend, OpenAIBackend) and backend.name == "openai:test-model"
    assert backend.base_url == server.url
    # a bare spec reaches a local server through $OPENAI_BASE_URL (how `llm:openai:<model>` finds one)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script("from the env url")
    assert make_backend("openai:test-model").generate([HELLO], CONFIG)[0].text == "from the env url"


# -- whole episodes through LLMTutor --------------------------------------------------------------------------
TUTOR_LINES = [
    "What do you think the height of this triangle is, and why?",
    "Imagine a ladder leaning on a wall: is its length the height it reaches?",
    "To summarize: the area is half of base times the perpendicular height. [END]",
]


def _spec(seed: int) -> EpisodeSpec:
    return EpisodeSpec(task_set="math", task_id="triangle_area", persona="all_round_partly_wrong", seed=seed,
                       protocol={"max_turns": 3})


def test_rollout_with_scripted_tutor(server: ChatServer) -> None:
    server.script(*TUTOR_LINES)
    spec = _spec(0)
    record = run_episode(spec, make_tutor("openai:test-model", base_url=server.url), SimulatedStudent(spec.persona),
                         tutor_name="openai:test-model")
    assert record["failures"] == [] and record["ended_by"] != "failure"
    assert [t["utterance"] for t in record["transcript"] if t["speaker"] == "tutor"] == TUTOR_LINES
    assert server.request_count == 3
    # the tutor saw the conversation: the system prompt first, then the student's opening as a user turn
    first = server.requests[0]["messages"]
    assert first[0]["role"] == "system" and first[-1]["role"] == "user"
    assert len(server.requests[2]["messages"]) > len(first)


def test_server_failing_mid_run_records_a_failure_and_keeps_earlier_episodes(server: ChatServer) -> None:
    server.responder = lambda body, i: TUTOR_LINES[i] if i < len(TUTOR_LINES) else Reply.error(500, "GPU on fire")
    records = list(run_specs(
        [_spec(0), _spec(1)], ["openai:test-model"],
        make_tutor=lambda name: make_tutor(name, base_url=server.url, max_retries=1, backoff=0.01),
        make_student=SimulatedStudent,
    ))
    assert len(records) == 2
    ok, failed = records
    assert ok["failures"] == [] and ok["ended_by"] != "failure" and ok["n_tutor_turns"] == 3
    assert [t["utterance"] for t in ok["transcript"] if t["speaker"] == "tutor"] == TUTOR_LINES
    assert failed["ended_by"] == "failure" and failed["spec"]["seed"] == 1
    assert "TutorBackendError" in failed["failures"][0]["error"] and "GPU on fire" in failed["failures"][0]["error"]
    assert server.request_count == 3 + 2  # the failing turn: the first attempt and one retry
