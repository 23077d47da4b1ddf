"""Shared helpers of the item-suite tests (kmp_dialogue, kmp_skills, dr_academy): judges on the loopback server
and tutors that misbehave.

Example::

    with ChatServer(responder=verdict_responder("win")) as server:
        judge = loopback_judge(server)
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Any

from tests.chat_server import ChatServer
from tutorzoo.agents.backends.openai_compat import OpenAIBackend
from tutorzoo.eval.judges import Judge, JudgeConfig

_KEY_RE = re.compile(r'"([A-Za-z0-9_\-]+)": <([^>]*)>')


def asked_criteria(body: dict) -> dict[str, str]:
    """Criterion -> its value description, read from the reply format line of a judge request."""
    user = body["messages"][-1]["content"]
    return dict(_KEY_RE.findall(user))


def verdict_responder(choice: str = "win", binary: bool = True):
    """A 'model' that answers every judge request with a valid verdict: ``choice`` for win/tie/lose criteria,
    ``binary`` for true/false ones, the top of a Likert scale."""
    def respond(body: dict, index: int) -> str:
        out: dict[str, Any] = {}
        for name, kind in asked_criteria(body).items():
            if kind.startswith("one of"):
                out[name] = choice
            elif kind.startswith("true or false"):
                out[name] = binary
            else:
                out[name] = int(re.findall(r"\d+", kind)[-1])
        out["reason"] = "scripted"
        return json.dumps(out)
    return respond


def garbage_responder(body: dict, index: int) -> str:
    return "I think the tutor did a fine job overall!"


def loopback_judge(server: ChatServer, **config: Any) -> Judge:
    backend = OpenAIBackend("judge-model", base_url=server.url, max_retries=0, timeout=5.0, backoff=0.01)
    return Judge(JudgeConfig(backend="openai:judge-model", base_url=server.url, **config), backend=backend)


def suite(name: str, **items: Any) -> SimpleNamespace:
    """A stand-in suite with only what a kind reads (``name``, ``items``)."""
    return SimpleNamespace(name=name, items=items)


class ScriptedTutor:
    """A tutor whose every reply is ``text`` (or raises ``error``), with the usual interface."""

    name = "scripted"

    def __init__(self, text: str = "I am not sure.", error: Exception | None = None) -> None:
        self.text, self.error = text, error
        self.infos: list[dict] = []

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict, info: dict) -> str:
        self.infos.append(info)
        if self.error is not None:
            raise self.error
        return self.text
