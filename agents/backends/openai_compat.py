"""A chat backend for OpenAI-compatible endpoints: the OpenAI API, vLLM, llama.cpp server, Ollama, ...

Requests go through the official ``openai`` client with its own retries switched off: this backend retries by
itself (logged, counted in :attr:`OpenAIBackend.stats`, deterministic exponential backoff) on HTTP 408/409/429,
5xx, timeouts, connection errors and replies that are not a valid chat completion (e.g. truncated JSON). Other
4xx answers (400, 401, 403, 404, 422) cannot be fixed by waiting: the result's ``error`` names the fix at once.
A request that still fails has ``text=None`` and ``error`` set; :meth:`generate` never raises for one.

Messages go out through the shared conversation shaping (:mod:`tutorzoo.agents.backends.chat_render`): runs of one role
are merged (servers that apply Gemma-style templates demand alternation), ``fold_system=True`` folds the system
prompt into the first user turn (for a served model whose template refuses a system role), and
``chat_template_kwargs`` (e.g. ``{"enable_thinking": false}`` for Qwen3 on vLLM/SGLang) is sent to servers that
take it. Reasoning blocks (``<think>…</think>``) are stripped from every reply.

The API key is read from the environment variable named by ``api_key_env``. It is never logged, never shown by
``repr``, never part of a cache key, and it is scrubbed from every error message (servers like to echo keys).

Example::

    backend = OpenAIBackend("qwen2.5-7b-instruct", base_url="http://127.0.0.1:8000/v1", cache_dir="runs/cache")
    [reply] = backend.generate([[{"role": "user", "content": "Hi"}]], GenerationConfig(max_new_tokens=20))
    reply.text, reply.cached, backend.stats
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai

try:  # the HTTP library the openai client is built on: httpx2 from openai 3, httpx before
    import httpx2 as _http
except ImportError:  # pragma: no cover - older openai clients
    import httpx as _http  # type: ignore[no-redef]

from tutorzoo.agents.backends.base import GenerationConfig, GenerationResult
from tutorzoo.agents.backends.cache import ResponseCache
from tutorzoo.agents.backends.chat_render import fold_system, merge_roles, strip_reasoning
from tutorzoo.envs.errors import ConfigError

log = logging.getLogger(__name__)

# Statuses a later attempt can succeed on: request timeout, conflict, rate limit (5xx are added below).
RETRY_STATUSES = frozenset({408, 409, 429})
MAX_RETRY_AFTER = 60.0  # seconds; a server asking for more than this is treated as down, not busy
PLACEHOLDER_KEY = "EMPTY"  # what local servers (vLLM, llama.cpp) accept when they check no key
REQUESTS_PER_POOL = 8  # requests in flight per HTTP connection pool (see OpenAIBackend._make_clients)


class _Retryable(Exception):
    """One attempt failed in a way a later attempt may not: ``retry_after`` is the server's hint in seconds."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIBackend:
    """:class:`~tutorzoo.agents.backends.base.ChatBackend` over ``POST {base_url}/chat/completions``.

    Args:
        model: the model name the endpoint serves.
        base_url: the endpoint (``http://host:port/v1``); None is ``$OPENAI_BASE_URL`` if set, else the OpenAI API.
        api_key_env: the environment variable that holds the key. Unset is fine for a local ``base_url``.
        max_concurrency: most requests in flight at once, over all threads using this backend (one HTTP connection
            pool per :data:`REQUESTS_PER_POOL` of them).
        max_retries: further attempts after the first one fails retryably.
        timeout: seconds one attempt may take.
        cache_dir: a directory for the response cache (:mod:`tutorzoo.agents.backends.cache`); None disables it.
        backoff: the first retry waits ``backoff`` seconds, each later one twice the previous.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_concurrency: int = 4,
        max_retries: int = 4,
        timeout: float = 60.0,
        cache_dir: str | None = None,
        backoff: float = 0.5,
        fold_system: bool = False,
        chat_template_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if not model:
            raise ConfigError("OpenAIBackend needs a model name, e.g. 'openai:gpt-4o-mini'")
        for field, value, low in (("max_concurrency", max_concurrency, 1), ("max_retries", max_retries, 0)):
            if not isinstance(value, int) or value < low:
                raise ConfigError(f"OpenAIBackend {field} must be an integer >= {low}, got {value!r}")
        if not timeout > 0:
            raise ConfigError(f"OpenAIBackend timeout must be > 0 seconds, got {timeout!r}")
        if not backoff >= 0:
            raise ConfigError(f"OpenAIBackend backoff must be >= 0 seconds, got {backoff!r}")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = os.environ.get(api_key_env) or None
        if key is None and base_url is None:
            raise ConfigError(f"no API key: set ${api_key_env} for the OpenAI API, or give base_url for a local "
                              "OpenAI-compatible server (which needs no key)")
        self.model = model
        self.fold_system = bool(fold_system)
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.name = f"openai:{model}"
        self.api_key_env = api_key_env
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.timeout = float(timeout)
        self.backoff = float(backoff)
        self._key = key or PLACEHOLDER_KEY
        self._clients = self._make_clients(base_url, math.ceil(max_concurrency / REQUESTS_PER_POOL))
        self._client = self._clients[0]
        self._turn = itertools.count()  # which client the next request goes through
        self.base_url = str(self._client.base_url).rstrip("/")
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._stats = {"requests": 0, "retries": 0, "failures": 0, "cache_hits": 0}

    def _make_clients(self, base_url: str | None, n: int) -> list[openai.OpenAI]:
        """``n`` clients, each with its own connection pool, sharing one TLS context.

        One pool serves its requests under one lock, and each request takes it twice (to get a connection, to give
        it back), scanning the pool's connections each time: with dozens of requests in flight the client's CPU
        per request grows with the number in flight, and a round of requests ends that much later than the
        server's latency. Pools of :data:`REQUESTS_PER_POOL` requests keep that cost flat.
        """
        if n == 1:
            return [openai.OpenAI(base_url=base_url, api_key=self._key, timeout=self.timeout, max_retries=0)]
        tls = _http.create_ssl_context()  # building one reads the CA bundle: tens of ms, once
        return [openai.OpenAI(base_url=base_url, api_key=self._key, timeout=self.timeout, max_retries=0,
                              http_client=openai.DefaultHttpxClient(verify=tls)) for _ in range(n)]

    def __repr__(self) -> str:
        return (f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, api_key_env={self.api_key_env!r}, "
                f"max_concurrency={self.max_concurrency}, max_retries={self.max_retries}, timeout={self.timeout}, "
                f"cache_dir={str(self.cache.directory) if self.cache else None!r})")

    @property
    def stats(self) -> dict[str, int]:
        """Counts since construction: HTTP ``requests`` sent, ``retries``, failed results, ``cache_hits``."""
        with self._lock:
            return dict(self._stats)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for client in self._clients:
            client.close()

    def generate(self, conversations: list[list[dict]], config: GenerationConfig) -> list[GenerationResult]:
        """One result per conversation, in order; up to ``max_concurrency`` requests run at once."""
        return self.generate_many([(conv, config) for conv in conversations])

    def generate_many(self, requests: list[tuple[list[dict], GenerationConfig]]) -> list[GenerationResult]:
        """One result per ``(conversation, config)``, in order; up to ``max_concurrency`` requests run at once."""
        for i, (conv, _) in enumerate(requests):
            if not (isinstance(conv, list) and conv
                    and all(isinstance(m, dict) and "role" in m and "content" in m for m in conv)):
                raise ValueError(f"conversation {i} must be a non-empty list of {{'role', 'content'}} messages")
        if len(requests) <= 1:
            return [self._one(conv, config) for conv, config in requests]
        with self._lock:  # one pool for the backend's life: a rollout calls this every turn, from many threads
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="openai-backend")
            pool = self._pool
        return list(pool.map(lambda request: self._one(*request), requests))

    # -- one request ---------------------------------------------------------------------------------------------
    def _request(self, messages: list[dict], config: GenerationConfig) -> dict[str, Any]:
        shaped = merge_roles(messages)
        if self.fold_system:
            shaped = merge_roles(fold_system(shaped))
        body: dict[str, Any] = {
            "model": self.model,
            "messages": shaped,
            "max_tokens": config.max_new_tokens,
            "temperature": config.temperature,
            "top_p": config.top_p,
        }
        if config.seed is not None:
            body["seed"] = config.seed
        if config.stop:
            body["stop"] = list(config.stop)
        if self.chat_template_kwargs:
            body["chat_template_kwargs"] = dict(self.chat_template_kwargs)
        return body

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._stats[name] += n

    def _one(self, messages: list[dict], config: GenerationConfig) -> GenerationResult:
        body = self._request(messages, config)
        cache_key = None
        if self.cache is not None:
            cache_request = {**body, "base_url": self.base_url}  # the key is not part of the request
            cache_key = ResponseCache.key(cache_request)
            hit = self.cache.get(cache_key)
            if hit is not None:
                self._count("cache_hits")
                return GenerationResult(text=strip_reasoning(hit["text"]),
                                        prompt_tokens=int(hit.get("prompt_tokens", 0)),
                                        completion_tokens=int(hit.get("completion_tokens", 0)), cached=True,
                                        meta={"attempts": 0, "finish_reason": hit.get("finish_reason")})
        last = ""
        for attempt in range(1, self.max_retries + 2):
            self._count("requests")
            try:
                reply = self._attempt(body)
            except _Retryable as exc:
                last = str(exc)
                if attempt > self.max_retries:
                    break
                delay = self.backoff * 2 ** (attempt - 1)
                if exc.retry_after is not None:
                    delay = max(delay, exc.retry_after)
                log.warning("%s: attempt %d/%d failed (%s); retrying in %.2fs", self.name, attempt,
                            self.max_retries + 1, last, delay)
                self._count("retries")
                time.sleep(delay)
                continue
            except _Fatal as exc:
                self._count("failures")
                return GenerationResult(text=None, error=str(exc), meta={"attempts": attempt, "status": exc.status})
            if self.cache is not None and cache_key is not None:
                self.cache.put(cache_key, {**body, "base_url": self.base_url}, reply)
            return GenerationResult(text=strip_reasoning(reply["text"]), prompt_tokens=reply["prompt_tokens"],
                                    completion_tokens=reply["completion_tokens"],
                                    meta={"attempts": attempt, "finish_reason": reply["finish_reason"]})
        self._count("failures")
        attempts = self.max_retries + 1
        return GenerationResult(text=None, meta={"attempts": attempts},
                                error=f"{self.name} at {self.base_url}: gave up after {attempts} attempt(s); last "
                                      f"error: {last}. Check that the server is up and not overloaded, or raise "
                                      "max_retries / timeout")

    def _attempt(self, body: dict[str, Any]) -> dict[str, Any]:
        """One HTTP exchange; returns the parsed reply or raises :class:`_Retryable` / :class:`_Fatal`."""
        try:
            with self._slots:
                # the body is already the wire JSON (chat_template_kwargs included): posted as it is, the reply
                # parsed by _parse_completion; the typed create() costs ~4x the CPU and wall time per request
                client = self._clients[next(self._turn) % len(self._clients)]
                text = client.post("/chat/completions", body=body, cast_to=_http.Response).text
        except openai.APIStatusError as exc:
            status = exc.status_code
            detail = self._scrub(_server_message(exc))
            if status in RETRY_STATUSES or status >= 500:
                raise _Retryable(f"HTTP {status}: {detail}", _retry_after(exc.response)) from None
            raise _Fatal(status, f"{self.name} at {self.base_url}: HTTP {status}: {detail}. "
                                 f"{self._fix(status)}") from None
        except openai.APITimeoutError:
            raise _Retryable(f"no reply within the {self.timeout:g}s timeout") from None
        except openai.APIConnectionError as exc:
            raise _Retryable(f"connection failed: {self._scrub(str(exc.__cause__ or exc))}") from None
        return _parse_completion(text)

    def _fix(self, status: int) -> str:
        return {
            400: "The server rejected the request: check the messages and the sampling parameters "
                 "(max_new_tokens, temperature, top_p, stop, seed) this model accepts",
            401: f"Authentication failed: check the API key in ${self.api_key_env}",
            403: f"Permission denied: check that the key in ${self.api_key_env} may use model {self.model!r}",
            404: f"Not found: check the model name {self.model!r} / base_url {self.base_url!r} "
                 "(it usually ends in /v1)",
            422: "The server could not process the request: check the messages and sampling parameters",
        }.get(status, "This error is not retried; check the request and the server's documentation")

    def _scrub(self, text: str) -> str:
        if self._key != PLACEHOLDER_KEY and len(self._key) >= 4:
            text = text.replace(self._key, "***")
        return text


class _Fatal(Exception):
    """An attempt failed in a way no retry fixes (a 4xx other than 408/409/429)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
    return exc.message


def _retry_after(response: Any) -> float | None:
    try:
        value = float(response.headers.get("retry-after"))
    except (AttributeError, TypeError, ValueError):
        return None
    return min(max(value, 0.0), MAX_RETRY_AFTER)


def _parse_completion(text: str) -> dict[str, Any]:
    """The text, token counts and finish reason of a chat.completion JSON body; anything else is retryable."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Retryable(f"the reply is not valid JSON ({exc.msg} at char {exc.pos} of {len(text)})") from None
    try:
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise _Retryable(f"the reply is not a chat completion (no choices[0].message.content): "
                         f"{text[:120]!r}") from None
    if not isinstance(content, str):
        raise _Retryable(f"the reply has no text content (finish_reason={choice.get('finish_reason')!r})")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return {
        "text": content,
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "finish_reason": choice.get("finish_reason"),
    }
