"""The client of ``tutorzoo serve``: an OpenEnv ``EnvClient`` over the server's WebSocket session.

:class:`TutorZooClient` is async (``async with``); ``.sync()`` gives OpenEnv's synchronous wrapper. A server
error (a malformed action, a step after the end) raises :class:`ServerError` and the session goes on; a
connection that closes mid-episode (the server stopped) raises :class:`ServerGone`, and that episode has no
outcome. :func:`play_remote` plays one episode with a TutorZoo tutor policy (``reset(seed)``, ``act(obs, info)``)
as :func:`tutorzoo.eval.rollout.run_episode` plays it locally.

Example::

    async with TutorZooClient("http://127.0.0.1:8000") as client:
        result = await client.reset(index=0)
        while not result.done:
            result = await client.step(TutorAction(message="What do you notice about the numbers?"))
        print(result.observation.outcome.learning_gain)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from pydantic import ValidationError
from websockets.exceptions import ConnectionClosed

from tutorzoo.envs.errors import TutorZooError
from tutorzoo.envs.protocols import Tutor
from tutorzoo.envs.seeding import derive_seed
from tutorzoo.eval.serve import Outcome, TutorAction, TutorObservation, TutorState


class ServerError(TutorZooError):
    """The server refused a message (``code``: OpenEnv's WSErrorCode); the session is still open."""

    def __init__(self, message: str, code: str, errors: list | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.errors = errors or []


class ServerGone(TutorZooError, ConnectionError):
    """The connection closed under the client (server stopped, session reaped): the episode was not scored."""


def _explain(data: dict) -> str:
    code = str(data.get("code", "UNKNOWN"))
    message = str(data.get("message", "unknown error"))
    errors = data.get("errors") or []
    if code == "VALIDATION_ERROR" and errors:
        parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or '(action)'}: {e.get('msg')}" for e in errors]
        return (f"the server refused the action ({'; '.join(parts)}); send {{\"message\": \"<the tutor's turn>\"}}"
                " and nothing else")
    if code == "CAPACITY_REACHED":
        return (f"the server is full ({data.get('active_sessions')} of {data.get('max_sessions')} sessions); close "
                "a session or start the server with a larger --max-sessions")
    return f"{message} ({code})"


class TutorZooClient(EnvClient[TutorAction, TutorObservation, TutorState]):
    """One session of a ``tutorzoo serve`` server: ``reset(index=..|seed=..|spec=..)``, then ``step`` per turn."""

    def __init__(self, base_url: str, connect_timeout_s: float = 10.0, message_timeout_s: float = 120.0) -> None:
        super().__init__(base_url, connect_timeout_s=connect_timeout_s, message_timeout_s=message_timeout_s)

    def _step_payload(self, action: TutorAction | str) -> dict[str, Any]:
        if isinstance(action, str):
            action = TutorAction(message=action)
        return {"message": action.message}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[TutorObservation]:
        fields = dict(payload.get("observation", {}))
        fields.pop("metadata", None)
        try:
            obs = TutorObservation(**fields, done=bool(payload.get("done", False)), reward=payload.get("reward"))
        except ValidationError as exc:
            raise ServerError(f"the server's observation does not fit TutorObservation ({exc.errors()[0]['msg']}); "
                              "use a client of the same TutorZoo version as the server", "BAD_OBSERVATION") from None
        return StepResult(observation=obs, reward=obs.reward, done=obs.done)

    def _parse_state(self, payload: dict[str, Any]) -> TutorState:
        return TutorState.model_validate(payload)

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            await self._send(message)
            response = await self._receive()
        except ConnectionClosed as exc:
            refusal = await self._last_error()
            self._ws = None
            if refusal is not None:  # refused on connect (a full server): its error came before the close
                raise ServerError(_explain(refusal), str(refusal.get("code", "UNKNOWN")),
                                  refusal.get("errors")) from None
            raise ServerGone(f"the server at {self._ws_url} closed the session ({exc}); the episode in it was not "
                             "scored: reconnect and reset to play it again") from None
        except TimeoutError:
            raise ServerGone(f"no answer from {self._ws_url} in {self._message_timeout} s; the episode was not "
                             "scored") from None
        if response.get("type") == "error":
            data = response.get("data", {})
            raise ServerError(_explain(data), str(data.get("code", "UNKNOWN")), data.get("errors"))
        return response


    async def _last_error(self) -> dict | None:
        """An error message the server sent before it closed the connection, if one is still unread."""
        try:
            raw = await asyncio.wait_for(self._ws.recv(), 1.0)  # type: ignore[union-attr]
            message = json.loads(raw)
        except Exception:  # nothing left to read: the connection simply closed
            return None
        return message.get("data", {}) if isinstance(message, dict) and message.get("type") == "error" else None


def observation_pair(obs: TutorObservation) -> tuple[dict, dict]:
    """The (observation, info) a TutorZoo tutor policy reads, from a server observation."""
    info = {"messages": obs.messages, "task": obs.task, "pretest": obs.pretest, "turn": obs.turn,
            "max_turns": obs.max_turns, "phase": obs.phase}
    return {"text": obs.text, "features": np.asarray(obs.features, dtype=np.float32)}, info


async def play_remote(client: TutorZooClient, tutor: Tutor, *, index: int | None = None, seed: int | None = None,
                      spec: dict | None = None, tutor_name: str = "remote") -> Outcome:
    """Play one episode on the server with ``tutor`` (reset with the spec's tutor seed, as the engine does).

    Example::

        async with TutorZooClient(url) as client:
            outcome = await play_remote(client, make_tutor("socratic"), index=3)
    """
    kwargs: dict[str, Any] = {"tutor": tutor_name}
    kwargs.update({k: v for k, v in (("index", index), ("seed", seed), ("spec", spec)) if v is not None})
    result = await client.reset(**kwargs)
    from tutorzoo.envs.config import EpisodeSpec

    # the key is the spec's; its seed is what the engine derives the tutor's seed from
    state = await client.state()
    tutor.reset(seed=derive_seed(EpisodeSpec.model_validate(state.spec).seed, "tutor"))
    while not result.done:
        result = await client.step(TutorAction(message=tutor.act(*observation_pair(result.observation))))
    if result.observation.outcome is None:
        raise ServerError("the server ended the episode without an outcome; use a server of the same TutorZoo "
                          "version as the client", "NO_OUTCOME")
    return result.observation.outcome


__all__ = ["ServerError", "ServerGone", "TutorZooClient", "observation_pair", "play_remote"]
