"""An OpenEnv server for TutorZoo: ``tutorzoo serve`` puts the tutor's seat on the network.

Each WebSocket session (``/ws``) plays one episode at a time with its own :class:`~tutorzoo.envs.single_agent.TutorEnv`
and simulated student; the client is the tutor. ``reset`` picks the episode (``index`` into the server's spec
list, ``seed`` for a spec of the server's persona and task set, or a whole ``spec``), ``step`` takes one tutor turn
(:class:`TutorAction`) and returns the student's reply and the step's reward (:class:`TutorObservation`; the steps'
rewards sum to the episode's); the last observation carries
the episode's :class:`Outcome` (learning gain, reward, its components, the SID metrics, the failure if any) as a
typed field, because openenv-core 0.3 drops ``metadata`` from the wire. The same spec played with the same tutor
replies is the same episode as ``tutorzoo rollout`` / :func:`tutorzoo.eval.rollout.run_episode` gives.

Only the WebSocket path holds an episode: OpenEnv's HTTP ``/reset`` and ``/step`` make a fresh env per request,
so the server registers OpenEnv's production routes (``/ws``, ``/health``, ``/schema``, ``/metadata``) and
``/tutorzoo/stats`` (the ledger's counts). ``--max-sessions`` bounds the sessions; one more is refused with
OpenEnv's ``CAPACITY_REACHED`` error.

The :class:`Ledger` keeps what finished: a finished episode's record goes to ``OUT/episodes.jsonl`` (a failed one
with ``ended_by="failure"``, as a rollout writes it, so it is counted and never scored); an episode whose session
closed, reset or timed out before its end goes to ``OUT/abandoned.jsonl`` and is counted as abandoned -- it has no
score.

Example::

    tutorzoo serve --suite default --split held_out --max-sessions 8 --port 8000 --out runs/served
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutorzoo.envs import records
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.protocols import Student
from tutorzoo.envs.records import json_form
from tutorzoo.eval.seat_episode import SID_METRICS, SeatEpisode, default_student


class TutorAction(Action):
    """One tutor turn: ``{"message": "..."}``; a turn with the end marker closes the dialogue (docs/design.md)."""

    message: str = Field(strict=True, description="What the tutor says to the student this turn.")


class Outcome(BaseModel):
    """How an episode ended. ``scored`` is False for a failed episode: its gain and reward are then None."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="The spec's key (EpisodeSpec.key()).")
    scored: bool = Field(description="True when the episode played to its end without a failure.")
    ended_by: str = Field(description="max_turns, end_marker, leak, failure, ...")
    failure: str | None = Field(default=None, description="The failure's error, when the episode failed.")
    learning_gain: float | None = Field(description="Post-test minus pre-test score (isomorphic items).")
    learning_gain_same: float | None = Field(default=None, description="The same-item gain, when it was tested.")
    reward: float | None = Field(description="The env-owned episode reward.")
    reward_components: dict[str, float] = Field(default_factory=dict, description="The reward's terms.")
    metrics: dict[str, float | None] = Field(default_factory=dict, description="SID objective metrics.")
    pretest_score: float | None = None
    posttest_score: float | None = None
    n_tutor_turns: int = 0


class TutorObservation(Observation):
    """What the tutor sees after a reset or a step (the env's tutor observation and info, as JSON)."""

    text: str = Field(default="", description="The student's latest turn.")
    features: list[float] = Field(default_factory=list, description="The env's tutor feature vector (what the "
                                  "built-in tutors read: the student's last cognition state, turn, ...).")
    messages: list[dict[str, str]] = Field(default_factory=list, description="The chat from the tutor's side, "
                                           "system prompt first, student turns as user.")
    task: dict[str, Any] = Field(default_factory=dict, description="The task: id, statement, solution, answer, ...")
    pretest: list[dict[str, Any]] = Field(default_factory=list, description="The student's pre-test as the tutor "
                                          "sees it.")
    turn: int = 0
    max_turns: int = 0
    phase: str = ""
    key: str = Field(default="", description="The episode's spec key.")
    outcome: Outcome | None = Field(default=None, description="Set on the last observation of an episode.")


class TutorState(State):
    """A session's state: the spec it plays and, once over, the outcome."""

    spec: dict[str, Any] | None = None
    key: str | None = None
    done: bool = False
    outcome: Outcome | None = None


def outcome_of(record: dict) -> Outcome:
    """The :class:`Outcome` of an ``episodes.jsonl`` record (a failed one is not scored: no gain, no reward)."""
    from tutorzoo.eval.metrics.suite import episode_metrics

    failed = bool(record.get("failures")) or record.get("ended_by") == "failure"
    failure = None
    if failed:
        first = (record.get("failures") or [{}])[0]
        failure = str(first.get("error") or first) if isinstance(first, dict) else str(first)
    metrics = episode_metrics(record)
    return Outcome(
        key=EpisodeSpec(**record["spec"]).key(), scored=not failed, ended_by=str(record.get("ended_by")),
        failure=failure,
        learning_gain=None if failed else records.learning_gain(record),
        learning_gain_same=None if failed else records.learning_gain_same(record),
        reward=None if failed else record.get("reward"),
        reward_components={k: float(v) for k, v in (record.get("reward_components") or {}).items()},
        metrics={} if failed else {name: metrics.get(name) for name in SID_METRICS},
        pretest_score=record.get("pretest_score"), posttest_score=record.get("posttest_score"),
        n_tutor_turns=int(record.get("n_tutor_turns") or 0),
    )


class Ledger:
    """The server's account of episodes (thread-safe): records to files under ``out`` when given, counts always."""

    def __init__(self, out: Path | None = None) -> None:
        self.out = out
        self._lock = threading.Lock()
        self.counts = {"started": 0, "scored": 0, "failed": 0, "abandoned": 0}
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)

    def _append(self, name: str, record: dict) -> None:
        if self.out is not None:
            with (self.out / name).open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(json_form(record), sort_keys=True, ensure_ascii=False) + "\n")

    def started(self) -> None:
        with self._lock:
            self.counts["started"] += 1

    def finished(self, record: dict, scored: bool) -> None:
        with self._lock:
            self.counts["scored" if scored else "failed"] += 1
            self._append("episodes.jsonl", record)

    def abandoned(self, spec: EpisodeSpec, reason: str, tutor_turns: int) -> None:
        with self._lock:
            self.counts["abandoned"] += 1
            self._append("abandoned.jsonl", {"key": spec.key(), "spec": spec.model_dump(), "reason": reason,
                                             "tutor_turns": tutor_turns})

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counts)


class SpecSource:
    """Which episode a ``reset`` plays: ``index`` into ``specs``, ``seed`` for a spec of the defaults, or ``spec``."""

    def __init__(self, specs: Sequence[EpisodeSpec] = (), *, persona: str = "all_round_partly_wrong",
                 task_set: str = "math", task_id: str | None = None, protocol: dict[str, Any] | None = None) -> None:
        self.specs = list(specs)
        self.persona, self.task_set, self.task_id = persona, task_set, task_id
        self.protocol = dict(protocol or {})

    def pick(self, index: int | None = None, seed: int | None = None, spec: dict | None = None) -> EpisodeSpec:
        given = [name for name, v in (("index", index), ("seed", seed), ("spec", spec)) if v is not None]
        if len(given) > 1:
            raise ValueError(f"reset takes one of index, seed or spec, got {given}; give only one")
        if spec is not None:
            try:
                return EpisodeSpec.model_validate(spec)
            except ValidationError as exc:
                err = exc.errors()[0]
                raise ValueError(f"reset spec is not an EpisodeSpec: {'.'.join(str(p) for p in err['loc'])}: "
                                 f"{err['msg']}; give task_set, task_id, persona, seed, protocol") from None
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.specs):
                raise ValueError(f"reset index must be an integer in [0, {len(self.specs)}), got {index!r}"
                                 + ("" if self.specs else "; this server has no spec list: start it with --suite, "
                                    "or reset with seed"))
            return self.specs[index]
        if seed is None:
            if self.specs:
                raise ValueError(f"reset needs index (0..{len(self.specs) - 1}), seed or spec")
            raise ValueError("reset needs seed (an episode seed >= 0) or spec")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"reset seed must be an integer >= 0, got {seed!r}")
        return EpisodeSpec(task_set=self.task_set, task_id=self.task_id, persona=self.persona, seed=seed,
                           protocol=self.protocol)


class TutorZooEnvironment(Environment[TutorAction, TutorObservation, TutorState]):
    """One session's env: the tutor's seat of one episode at a time, a simulated student embedded."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session builds its own env and student
    # Every session's env runs on one thread: CPython 3.11's AST constructor (the content reader parses math) is not
    # thread-safe ("AST constructor recursion depth mismatch" under 8 sessions), and the pure-Python engine gains
    # nothing from threads under the GIL. Sessions still interleave step by step.
    REQUIRES_SINGLE_THREAD_EXECUTOR = True

    def __init__(self, source: SpecSource, ledger: Ledger,
                 make_student: Callable[[str], Student] = default_student) -> None:
        super().__init__()
        self.source, self.ledger, self.make_student = source, ledger, make_student
        self._episode: SeatEpisode | None = None
        self._abandoned: str | None = None  # why the session's last episode was dropped unfinished
        self._state = TutorState()

    # ------------------------------------------------------------------ OpenEnv API
    def reset(self, seed: int | None = None, episode_id: str | None = None, index: int | None = None,
              spec: dict | None = None, tutor: str = "remote", **kwargs: Any) -> TutorObservation:
        if kwargs:
            raise ValueError(f"reset does not take {sorted(kwargs)}; it takes index, seed, spec, tutor, episode_id")
        chosen = self.source.pick(index=index, seed=seed, spec=spec)
        self._abandon("reset before the episode ended")
        self._episode, self._abandoned = SeatEpisode(chosen, self.make_student, tutor_name=str(tutor)), None
        self._state = TutorState(episode_id=episode_id or chosen.key(), spec=chosen.model_dump(), key=chosen.key())
        self.ledger.started()
        obs, info = self._episode.start()
        return self._after(obs, info)

    def step(self, action: TutorAction, timeout_s: float | None = None, **kwargs: Any) -> TutorObservation:
        if self._episode is None:
            if self._abandoned is not None:
                raise ValueError(f"the episode {self._state.key} was abandoned ({self._abandoned}) and is not scored; "
                                 "send reset to play another")
            if self._state.done and self._state.outcome is not None:
                raise ValueError(f"the episode {self._state.key} is over (ended_by={self._state.outcome.ended_by}); "
                                 "send reset to play another")
            raise ValueError("no episode in this session: send reset (index, seed or spec) first")
        obs, info = self._episode.step(action.message)
        self._state.step_count += 1
        return self._after(obs, info)

    @property
    def state(self) -> TutorState:
        return self._state

    def close(self) -> None:
        # OpenEnv closes the env when the socket goes, at shutdown, and when the idle reaper drops the session
        self._abandon("the session was closed or idle past --idle-timeout before the episode ended")

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name="tutorzoo", version="tutoring_v0",
                                   description="The tutor's seat of a TutorZoo session with a simulated student.")

    # ------------------------------------------------------------------ episodes
    def _after(self, obs: dict, info: dict) -> TutorObservation:
        episode = self._episode
        if episode is None:
            raise RuntimeError("no episode to observe")  # reset and step make one first
        if not episode.done:
            return TutorObservation(
                text=str(obs.get("text", "")), features=[float(x) for x in obs.get("features", ())],
                messages=info.get("messages", []), task=info.get("task", {}), pretest=info.get("pretest", []),
                turn=int(info.get("turn", 0)), max_turns=int(info.get("max_turns", 0)),
                phase=str(info.get("phase", "")), key=self._state.key or "", done=False, reward=episode.step_reward)
        record = episode.record or {}
        outcome = outcome_of(record)
        self.ledger.finished(record, outcome.scored)
        self._episode = None
        self._state.done, self._state.outcome = True, outcome
        last = record["transcript"][-1]["utterance"] if record.get("transcript") else ""
        # the step's reward, as on every step (they sum to the episode's); the episode's total is outcome.reward
        return TutorObservation(text=last, key=outcome.key, done=True, outcome=outcome, phase="done",
                                reward=episode.step_reward if outcome.scored else None)

    def _abandon(self, reason: str) -> None:
        if self._episode is not None:
            self.ledger.abandoned(self._episode.spec, reason, self._episode.tutor_turns)
            self._episode.close()
            self._abandoned = reason
        self._episode = None


def build_app(source: SpecSource, ledger: Ledger, max_sessions: int = 8, idle_timeout_s: float | None = 600.0,
              make_student: Callable[[str], Student] = default_student) -> Any:
    """The FastAPI app of ``tutorzoo serve``: OpenEnv's WebSocket sessions over :class:`TutorZooEnvironment`.

    Example::

        app = build_app(SpecSource(load_suite("default").specs("held_out")), Ledger(Path("runs/s")))
        uvicorn.run(app, host="127.0.0.1", port=8000)
    """
    from fastapi import FastAPI
    from openenv.core.env_server.http_server import HTTPEnvServer
    from openenv.core.env_server.types import ConcurrencyConfig, ServerMode

    if max_sessions < 1:
        raise ConfigError(f"--max-sessions must be >= 1, got {max_sessions}")
    if idle_timeout_s is not None and idle_timeout_s <= 0:
        raise ConfigError(f"--idle-timeout must be > 0 seconds, got {idle_timeout_s}")
    # a partial of the class: OpenEnv reads REQUIRES_SINGLE_THREAD_EXECUTOR from it
    factory = functools.partial(TutorZooEnvironment, source, ledger, make_student)
    server = HTTPEnvServer(factory, TutorAction, TutorObservation,
                           concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                                                session_timeout=idle_timeout_s))
    app = FastAPI(title="TutorZoo OpenEnv server", description=__doc__)
    # production mode: HTTP /reset and /step would make a fresh env per request, which cannot hold a dialogue
    server.register_routes(app, mode=ServerMode.PRODUCTION)

    @app.get("/tutorzoo/stats")
    def stats() -> dict[str, Any]:
        return {**ledger.snapshot(), "active_sessions": server.active_sessions, "max_sessions": max_sessions,
                "specs": len(source.specs)}

    return app


__all__ = ["SID_METRICS", "Ledger", "Outcome", "SpecSource", "TutorAction", "TutorObservation", "TutorState",
           "TutorZooEnvironment", "build_app", "outcome_of"]
