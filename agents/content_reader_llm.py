"""A model-backed content reader: what a tutor turn says about the task, read by a chat model.

Same interface as the rule reader :class:`tutorzoo.envs.content.ContentReader` (``read(text) -> Reading``), for users
with GPUs or an API who want a reader that follows paraphrase further than the rule matcher. Each turn is one
request: the system prompt ``prompts/content_reader.txt`` (what a claim, a verdict, an affirmation and a
counterexample are) and a user message from ``prompts/content_reader_turn.txt`` (the task, its components with
their facts, its misconceptions, the turn) asking for one strict JSON object ``{"claims": [...]}``.

The reply is validated with pydantic (:class:`ReadingReply`) and against the task: every ``kc``, ``affirms`` and
``refutes`` id must be the task's own, only a false claim may affirm and only a true one (or a question) may
refute. It **fails closed**: a reply that is not that object (prose, truncated JSON, an unknown id, a backend
error) is a recorded, counted failure (:meth:`LLMContentReader.summary`) and the turn reads as
:data:`tutorzoo.envs.content.EMPTY` — no credited content, never a pass.

Readers are chosen by spec with :func:`make_reader`: ``rule`` (the env's reader), ``llm:<backend spec>``
(``llm:openai:gpt-4o-mini``, a local server via ``$OPENAI_BASE_URL``) or ``hf:<path>`` (a local Hugging Face
model), mirroring ``--student llm:<backend>`` and ``--annotator llm:<backend>``.

Example::

    reader = make_reader("llm:openai:gpt-4o-mini", task)
    reading = reader.read("1/3 + 1/4 = 4/12 + 3/12 = 7/12.")
    reading.kc, reader.summary()["failed"]
"""

from __future__ import annotations

import difflib
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from string import Template
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutorzoo.agents.backends.base import ChatBackend, GenerationConfig
from tutorzoo.agents.json_reply import JSONReplyError, parse_json_object
from tutorzoo.envs.content import EMPTY, Claim, ContentReader, Reading
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.tasks import Task

log = logging.getLogger(__name__)

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
SYSTEM_PROMPT = "content_reader.txt"
TURN_PROMPT = "content_reader_turn.txt"
MAX_CLAIMS = 20  # a tutor turn states a handful of things; a longer list is a runaway reply
READERS = ("rule", "llm:<backend>", "hf:<path>")


class Reader(Protocol):
    """Anything that reads a tutor turn into a :class:`Reading` (the rule reader and the model reader)."""

    def read(self, text: str) -> Reading: ...


class ReaderReplyError(ValueError):
    """A model reply that is not a valid reading; the message starts with its kind (``invalid JSON``, ``invalid
    reply``, ``unknown id``, ``inconsistent claim``, ``backend``) so failures can be counted by kind."""


class ClaimReply(BaseModel):
    """One claim as the model reports it (the JSON schema of the prompt)."""

    model_config = ConfigDict(extra="forbid")

    kc: str | None = Field(description="The task component the claim works on, or null.")
    verdict: Literal["true", "false", "unchecked"]
    question: bool = False
    affirms: str | None = None
    refutes: list[str] = Field(default_factory=list)
    demand: Literal["recall", "apply", "explain", "transfer"] | None = None


class ReadingReply(BaseModel):
    """The whole reply: ``{"claims": [...]}``."""

    model_config = ConfigDict(extra="forbid")

    claims: list[ClaimReply] = Field(max_length=MAX_CLAIMS)


def parse_reading(text: str, task: Task) -> Reading:
    """The :class:`Reading` of one reply about ``task``, or :class:`ReaderReplyError` saying what is wrong.

    Example::

        parse_reading('{"claims": [{"kc": "adding_fractions", "verdict": "true"}]}', task).kc
    """
    try:
        data = parse_json_object(text)
    except JSONReplyError as exc:
        raise ReaderReplyError(str(exc)) from None
    try:
        reply = ReadingReply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(reply)"
        raise ReaderReplyError(f"invalid reply: {where}: {first['msg']}") from None
    kcs = {k.id for k in task.knowledge_components}
    mis = {m.id for m in task.misconceptions}
    claims: list[Claim] = []
    for i, c in enumerate(reply.claims):
        if c.kc is not None and c.kc not in kcs:
            raise ReaderReplyError(f"unknown id: claims.{i}.kc {c.kc!r} is not a component of {task.id} "
                                   f"({sorted(kcs)})")
        named = [m for m in (c.affirms, *c.refutes) if m is not None]
        bad = [m for m in named if m not in mis]
        if bad:
            raise ReaderReplyError(f"unknown id: claims.{i} names misconception(s) {bad}, not of {task.id}")
        if c.affirms is not None and (c.verdict != "false" or c.question):
            raise ReaderReplyError(f"inconsistent claim: claims.{i} affirms {c.affirms!r} but is not a false statement")
        if c.refutes and c.verdict != "true":
            raise ReaderReplyError(f"inconsistent claim: claims.{i} refutes {c.refutes} but its verdict is {c.verdict}")
        if c.demand is not None and not c.question:
            raise ReaderReplyError(f"inconsistent claim: claims.{i} has a demand but is not a question")
        claims.append(Claim(c.kc, c.verdict, c.question, c.affirms, tuple(dict.fromkeys(c.refutes)), c.demand,
                            "model"))
    return Reading(tuple(claims)) if claims else EMPTY


def _components(task: Task) -> str:
    lines = []
    for k in task.knowledge_components:
        facts = " ".join(k.facts) or k.explanation
        lines.append(f"- {k.id}: {k.name} — {facts}")
    return "\n".join(lines)


def _misconceptions(task: Task) -> str:
    return "\n".join(f"- {m.id} [{m.kc}]: {m.belief}" for m in task.misconceptions) or "(none)"


class LLMContentReader:
    """Reads tutor turns for one task through ``backend``; invalid replies are counted failures that read as
    :data:`tutorzoo.envs.content.EMPTY`. Readings are cached per text, so a repeated turn costs one request.

    Example::

        reader = LLMContentReader(make_backend("openai:gpt-4o-mini"), task)
        readings = reader.read_many(["What is 3/4 of 12?", "Great work!"])
        reader.summary()   # {"reads": 2, "failed": 0, "failure_rate": 0.0, "errors": {}}
    """

    calls_model = True  # the engine plays episodes read by a model in lockstep worker threads

    def __init__(self, backend: ChatBackend, task: Task, max_new_tokens: int = 400,
                 temperature: float = 0.0) -> None:
        self.backend = backend
        self.task = task
        self.config = GenerationConfig(max_new_tokens=max_new_tokens, temperature=temperature, seed=0)
        self.system_prompt = (PROMPT_DIR / SYSTEM_PROMPT).read_text(encoding="utf-8")
        template = Template((PROMPT_DIR / TURN_PROMPT).read_text(encoding="utf-8"))
        self._fields = {"title": task.title, "statement": task.statement, "answer": task.answer,
                        "components": _components(task), "misconceptions": _misconceptions(task)}
        self._template = template
        self._cache: dict[str, Reading] = {}
        self.reads = 0
        self.errors: Counter[str] = Counter()
        self.failures: list[tuple[str, str]] = []  # (turn, why), in order

    def conversation(self, text: str) -> list[dict]:
        """The request for one turn."""
        user = self._template.substitute(**self._fields, utterance=text)
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": user}]

    def read(self, text: str) -> Reading:
        """What ``text`` says about the task (an empty or failed reading has no content)."""
        return self.read_many([text])[0]

    def read_many(self, texts: Sequence[str]) -> list[Reading]:
        """Readings of several turns, the uncached ones sent to the backend as one batch."""
        todo = list(dict.fromkeys(t for t in texts if t and t.strip() and t not in self._cache))
        if todo:
            results = self.backend.generate([self.conversation(t) for t in todo], self.config)
            for text, result in zip(todo, results, strict=True):
                self._cache[text] = self._parse(text, result.text, result.error)
        self.reads += len(texts)
        return [self._cache.get(t, EMPTY) if t and t.strip() else EMPTY for t in texts]

    def _parse(self, text: str, reply: str | None, error: str | None) -> Reading:
        try:
            if reply is None:
                raise ReaderReplyError(f"backend: {error or 'no reply'}")
            return parse_reading(reply, self.task)
        except ReaderReplyError as exc:
            why = str(exc)
            self.errors[why.split(":", 1)[0]] += 1
            self.failures.append((text, why))
            log.warning("model content reader: turn not read (%s); it gets no credit", why)
            return EMPTY

    def summary(self) -> dict[str, Any]:
        """Turns read, distinct turns that failed, the failure rate over distinct turns, failures by kind."""
        distinct = len(self._cache)
        failed = len(self.failures)
        return {"reads": self.reads, "failed": failed, "failure_rate": failed / distinct if distinct else 0.0,
                "errors": dict(sorted(self.errors.items()))}


def reader_factory(spec: str, **backend_kwargs: Any) -> Callable[[Task], Reader]:
    """What the env takes as ``reader=``: ``task -> reader`` for ``spec`` (``rule``, ``llm:<backend spec>`` or
    ``hf:<path>``), with one backend shared by every episode's reader.

    Example::

        from tutorzoo import envs
        from tutorzoo.agents.content_reader_llm import reader_factory
        env = envs.tutoring_v0.env(reader=reader_factory("llm:openai:gpt-4o-mini", base_url="http://127.0.0.1:8000/v1"))
    """
    if spec == "rule":
        _no_arguments(backend_kwargs)
        return ContentReader.for_task
    backend = _backend(spec, backend_kwargs)
    return lambda task: LLMContentReader(backend, task)


def _no_arguments(backend_kwargs: dict[str, Any]) -> None:
    if backend_kwargs:
        raise ConfigError(f"reader arguments {sorted(backend_kwargs)} need a model reader (llm:<backend> or "
                          "hf:<path>), not 'rule'")


def _backend(spec: str, backend_kwargs: dict[str, Any]) -> Any:
    from tutorzoo.agents.backends import make_backend

    if spec.startswith("llm:") and spec.count(":") >= 2:
        return make_backend(spec.removeprefix("llm:"), **backend_kwargs)
    if spec.startswith("hf:") and spec.removeprefix("hf:"):
        return make_backend(spec, **backend_kwargs)
    close = difflib.get_close_matches(spec, ["rule"], n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"reader {spec!r} must be one of {list(READERS)} (e.g. 'llm:openai:gpt-4o-mini' or "
                      f"'hf:./models/tiny').{hint}")


def make_reader(spec: str, task: Task, **backend_kwargs: Any) -> Reader:
    """The content reader named by ``spec`` for ``task``: ``rule``, ``llm:<backend spec>`` or ``hf:<path>``.

    Example::

        make_reader("rule", task).read("What is 1/2 + 1/3?").kc
        make_reader("llm:openai:gpt-4o-mini", task, base_url="http://127.0.0.1:8000/v1")
    """
    if spec == "rule":
        _no_arguments(backend_kwargs)
        return ContentReader.for_task(task)
    return LLMContentReader(_backend(spec, backend_kwargs), task)


__all__ = ["LLMContentReader", "Reader", "ReaderReplyError", "ReadingReply", "make_reader", "parse_reading",
           "reader_factory"]
