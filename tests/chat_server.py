"""A loopback OpenAI-compatible chat server for tests: scripted replies, injected faults, request accounting.

It speaks ``POST /v1/chat/completions`` over real HTTP on ``127.0.0.1`` (port 0: the OS picks a free one), so a
client is exercised end to end without any other network. A request with ``"stream": true`` gets the reply as
server-sent events. Replies are taken from a script, in order; when the
script is empty a ``responder`` callable (request body, request index) -> reply answers. A reply is a plain
string (a normal completion) or a :class:`Reply` that can carry an HTTP error status, a delay (to trip a
client timeout or to overlap requests) or a raw body (truncated JSON, a non-chat JSON object).

Example::

    with ChatServer(["Hello!", Reply.error(429), "Again"]) as server:
        backend = OpenAIBackend("test-model", base_url=server.url, backoff=0.01)
        ...
        assert server.request_count == 3
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_STATUS_TYPES = {400: "invalid_request_error", 401: "invalid_api_key", 403: "permission_denied", 404: "not_found",
                 429: "rate_limit_exceeded", 500: "server_error", 502: "bad_gateway", 503: "overloaded"}


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a completion ``text``, or an HTTP ``status`` >= 400, or a ``raw`` body sent verbatim
    with status 200; ``delay`` seconds are slept first (interrupted when the server stops)."""

    text: str | None = None
    status: int = 200
    delay: float = 0.0
    raw: str | None = None
    message: str | None = None

    @classmethod
    def error(cls, status: int, message: str | None = None) -> Reply:
        """An HTTP error in the OpenAI error envelope, e.g. ``Reply.error(429)``."""
        return cls(status=status, message=message)

    @classmethod
    def slow(cls, seconds: float, text: str = "slow reply") -> Reply:
        """A completion that arrives after ``seconds`` (longer than the client timeout: a timeout)."""
        return cls(text=text, delay=seconds)

    @classmethod
    def truncated(cls) -> Reply:
        """A 200 whose JSON body is cut off mid-object."""
        return cls(raw='{"id": "chatcmpl-x", "object": "chat.completion", "choices": [{"index": 0, "mess')


ReplyLike = str | Reply


def stream_events(text: str, model: str, prompt_tokens: int = 7) -> str:
    """The server-sent events of a streamed completion (``"stream": true``): the text in one delta, the finish
    reason, the usage (an empty-choices chunk, as OpenAI sends with ``include_usage``), then ``[DONE]``."""
    base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0, "model": model}
    usage = completion(text, model, prompt_tokens)["usage"]
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                                    "finish_reason": None}]},
              {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
              {**base, "choices": [], "usage": usage}]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def completion(text: str, model: str, prompt_tokens: int = 7) -> dict[str, Any]:
    """A chat.completion object as the OpenAI API returns it."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(text.split()),
                  "total_tokens": prompt_tokens + len(text.split())},
    }


class ChatServer:
    """A threaded loopback server; ``requests`` holds every request body received, in arrival order."""

    def __init__(self, script: Iterable[ReplyLike] = (),
                 responder: Callable[[dict, int], ReplyLike] | None = None) -> None:
        self._script: deque[ReplyLike] = deque(script)
        self.responder = responder
        self.requests: list[dict] = []
        self.auth_headers: list[str] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> ChatServer:
        handler = type("_Handler", (_Handler,), {"chat": self})
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; sleeping handlers wake up at once and their (late) replies are dropped."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL a client takes (``http://127.0.0.1:<port>/v1``)."""
        if self._httpd is None:
            raise RuntimeError("the server is not running; call start() or use it as a context manager")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    # -- scripting ---------------------------------------------------------------------------------------------
    def script(self, *replies: ReplyLike) -> None:
        """Append replies to the script (answered before the responder)."""
        with self._lock:
            self._script.extend(replies)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def _next(self, body: dict) -> ReplyLike:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if self._script:
                return self._script.popleft()
        if self.responder is None:
            return Reply.error(500, "the test server's script is exhausted and it has no responder")
        return self.responder(body, index)

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1


class _Server(ThreadingHTTPServer):
    # socketserver's default backlog of 5 drops connections when dozens of clients connect at once (a batched
    # rollout's first round): the client then waits out a SYN retransmission or fails
    request_queue_size = 1024


class _Handler(BaseHTTPRequestHandler):
    chat: ChatServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read counts, not logs
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
            return
        self.chat.auth_headers.append(self.headers.get("Authorization", ""))
        reply = self.chat._next(body)
        done = False
        try:
            if isinstance(reply, str):
                reply = Reply(text=reply)
            if reply.delay and self.chat._stopping.wait(reply.delay):
                return  # stopping: the client has long given up
            # out of flight before the reply is written: once it is, the client may send its next request before
            # this thread runs again, and that request must not count as overlapping this one
            self.chat._done()
            done = True
            if reply.raw is not None:
                self._send(200, reply.raw)
            elif reply.status >= 400:
                self._send(reply.status, {"error": {
                    "message": reply.message or f"injected HTTP {reply.status}",
                    "type": _STATUS_TYPES.get(reply.status, "error"), "code": None}})
            elif body.get("stream"):
                self._send(200, stream_events(reply.text or "", str(body.get("model", ""))),
                           content_type="text/event-stream")
            else:
                self._send(200, completion(reply.text or "", str(body.get("model", ""))))
        finally:
            if not done:
                self.chat._done()

    def _send(self, status: int, payload: dict | str, content_type: str = "application/json") -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and closed the connection: the fault under test
