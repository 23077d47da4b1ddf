"""DPO's preference pairs from the environment: dialogue states, candidate tutor turns, their continuations
through the rollout engine, the ranking (steps 1-4 of :mod:`tutorzoo.train.dpo`'s docstring, which describes the recipe;
this module is its pair-building half, :mod:`tutorzoo.train.dpo` the config, training and evaluation).

Example::

    from tutorzoo.train.dpo_pairs import PairSettings, build_pairs
    pairs = build_pairs(PairSettings(candidates={"socratic": 1, "random": 2}), specs, seed=0).rows
"""

from __future__ import annotations

import copy
import json
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from tutorzoo.agents.tutor.base import TutorPolicy
from tutorzoo.agents.tutor.registry import MODEL_PREFIXES, TUTORS
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.engine import play
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.protocols import BatchedTutor
from tutorzoo.envs.reward_api import RewardModel
from tutorzoo.eval.rollout import run_episode

POLICY = "policy"  # the candidate source / tutor name that means "the model being trained"


# ---------------------------------------------------------------------------------------------- settings
class PairSettings(BaseModel):
    """How preference pairs are built from the env (module docstring, steps 1-4)."""

    model_config = ConfigDict(extra="forbid")

    suite: str = Field(default="default", description="Suite (name or path) whose train split gives the specs.")
    episodes: int = Field(default=32, ge=1, description="Train specs to draw states from (a seeded sample).")
    states_per_episode: int = Field(default=2, ge=1, description="Dialogue states drawn from each episode.")
    prefix_tutor: str = Field(default="socratic", description="Plays each episode up to its states.")
    candidates: dict[str, int] = Field(
        default_factory=lambda: {POLICY: 2, "socratic": 1, "lecturer": 1, "random": 2},
        description="Candidate turns per state by source: 'policy' (samples of the model) or a tutor name.")
    continuation_tutor: str = Field(default="socratic", description="Plays the rest of the episode after a "
                                                                    "candidate: a tutor name or 'policy'.")
    rubric: str = Field(default="default", description="Reward rubric (configs/rewards/<name>.yaml or a path).")
    min_margin: float = Field(default=0.05, ge=0.0, description="Smallest best-minus-worst reward for a pair.")
    max_new_tokens: int = Field(default=96, ge=1, description="Longest policy candidate, in tokens.")
    temperature: float = Field(default=1.0, gt=0.0, le=2.0, description="Sampling temperature of the policy.")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling of the policy (1: off).")
    generation_batch_size: int = Field(default=16, ge=1, description="Conversations per model call.")

    @field_validator("candidates")
    @classmethod
    def _check_candidates(cls, value: dict[str, int]) -> dict[str, int]:
        for name, count in value.items():
            _check_tutor_name(name, "candidates")
            if not isinstance(count, int) or count < 0:
                raise ValueError(f"candidates[{name!r}] must be a count >= 0, got {count!r}")
        if sum(value.values()) < 2:
            raise ValueError(f"candidates must propose at least 2 turns per state to rank, got {value}; "
                             "e.g. {policy: 2, socratic: 1, lecturer: 1, random: 2}")
        return value

    @field_validator("prefix_tutor", "continuation_tutor")
    @classmethod
    def _check_tutor(cls, value: str, info: Any) -> str:
        _check_tutor_name(value, info.field_name)
        return value

    def uses_policy(self) -> bool:
        return bool(self.candidates.get(POLICY)) or POLICY in (self.prefix_tutor, self.continuation_tutor)


def _check_tutor_name(name: str, where: str) -> None:
    if name == POLICY or name in TUTORS:
        return
    if name.startswith(MODEL_PREFIXES):
        raise ValueError(f"{where}: {name!r} is a model; the model being trained is named {POLICY!r} "
                         "(its base and adapter come from the recipe's config)")
    if ":" not in name:
        raise ValueError(f"{where}: unknown tutor {name!r}; use {POLICY!r}, one of {sorted(TUTORS)} or an "
                         "import path 'package.module:ClassName'")


# ---------------------------------------------------------------------------------------------- pair building
@dataclass(frozen=True)
class Candidate:
    """One proposed tutor turn and where it came from (``policy`` or a tutor name)."""

    text: str
    source: str


@dataclass
class DialogueState:
    """A point of an episode where the tutor is to speak, replayable from ``spec`` + ``prefix``."""

    spec: EpisodeSpec
    turn: int  # dialogue tutor turns said before this state
    prefix: tuple[str, ...]  # those turns, as said
    messages: list[dict]  # the tutor's chat at this state (the prompt)
    transcript: list[dict]  # the env's transcript at this state (the replay must reproduce it)
    proposals: dict[str, list[str]] = field(default_factory=dict)  # source -> candidate texts

    def candidates(self, order: Sequence[str]) -> list[Candidate]:
        """The state's candidates in source order, each text once (the first source keeps a duplicate)."""
        seen: set[str] = set()
        out = []
        for source in order:
            for text in self.proposals.get(source, []):
                if text not in seen:
                    seen.add(text)
                    out.append(Candidate(text, source))
        return out


@dataclass(frozen=True)
class Scored:
    """A candidate's continuation: the episode reward, or the error that kept it from being scored."""

    candidate: Candidate
    reward: float | None
    learning_gain: float | None = None
    ended_by: str | None = None
    error: str | None = None


@dataclass
class PairBuild:
    """The pairs and the bookkeeping of how they were built (``summary()`` for the report)."""

    rows: list[dict] = field(default_factory=list)
    states: int = 0
    scored: int = 0
    failures: list[dict] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def summary(self) -> dict:
        margins = [r["reward_chosen"] - r["reward_rejected"] for r in self.rows]
        return {
            "pairs": len(self.rows),
            "states": self.states,
            "candidates_scored": self.scored,
            "failures": len(self.failures),
            "failures_by_kind": dict(sorted(Counter(f["kind"] for f in self.failures).items())),
            "skipped_states": dict(sorted(self.skipped.items())),
            "margin_mean": float(np.mean(margins)) if margins else None,
            "margin_min": float(np.min(margins)) if margins else None,
            "reward_chosen_mean": float(np.mean([r["reward_chosen"] for r in self.rows])) if self.rows else None,
            "reward_rejected_mean": float(np.mean([r["reward_rejected"] for r in self.rows])) if self.rows else None,
            "chosen_sources": dict(sorted(Counter(r["source_chosen"] for r in self.rows).items())),
            "rejected_sources": dict(sorted(Counter(r["source_rejected"] for r in self.rows).items())),
            "seconds": round(self.seconds, 2),
        }

    def dataset(self) -> Any:
        """The pairs as a ``datasets.Dataset`` (conversational preference format of TRL)."""
        from datasets import Dataset

        if not self.rows:
            return Dataset.from_dict({k: [] for k in PAIR_COLUMNS})
        return Dataset.from_list(self.rows)


PAIR_COLUMNS = ("prompt", "chosen", "rejected", "reward_chosen", "reward_rejected", "source_chosen",
                "source_rejected", "turn", "n_candidates", "spec")


class ReplayTutor:
    """Says the ``forced`` turns in order, then lets ``then`` speak.

    With ``shadow`` the continuation tutor is asked at every turn, forced ones included (its answer then goes
    unsaid), so a stateful rule-based tutor's plan follows the whole dialogue; a batched model tutor keeps no
    per-episode state and is asked only once it speaks.

    Example::

        record = run_episode(spec, ReplayTutor(["Hi!", "What is 3/4?"], make_tutor("socratic")), student)
    """

    name = "replay"

    def __init__(self, forced: Sequence[str], then: TutorPolicy, shadow: bool | None = None) -> None:
        self.forced = list(forced)
        self.then = then
        self.shadow = (not isinstance(then, BatchedTutor)) if shadow is None else shadow
        self._i = 0

    def reset(self, seed: int | None = None) -> None:
        self._i = 0
        self.then.reset(seed=seed)

    def act(self, observation: dict, info: dict) -> str:
        if info.get("observe_only"):
            return ""
        i, self._i = self._i, self._i + 1
        if i < len(self.forced):
            if self.shadow:
                self.then.act(observation, info)
            return self.forced[i]
        return self.then.act(observation, info)


def source_seed(seed: int, source: str, index: int) -> int:
    """The reset seed of the ``index``-th shadow tutor of ``source`` in the episode of ``seed`` (stable)."""
    return int(np.random.SeedSequence([seed, index, zlib.crc32(source.encode())]).generate_state(1)[0])


def collect_states(
    spec: EpisodeSpec,
    prefix_tutor: TutorPolicy,
    make_student: Callable[[str], Any],
    shadows: Mapping[str, int],
    make_tutor_fn: Callable[[str], TutorPolicy],
    reward: RewardModel | None = None,
    failures: list[dict] | None = None,
) -> list[DialogueState]:
    """Play ``spec`` with ``prefix_tutor``; return a state at every dialogue tutor turn, with the turns the
    ``shadows`` tutors (``{name: count}``) would say there as proposals.

    A failure of the prefix tutor or the student ends the episode (recorded in ``failures``); the states
    before it stay valid, since a state depends only on what came before it. A shadow tutor that fails stops
    proposing for the rest of the episode (recorded).
    """
    failures = failures if failures is not None else []
    live: list[tuple[str, TutorPolicy]] = []
    for name, count in shadows.items():
        for j in range(count):
            tutor = make_tutor_fn(name)
            tutor.reset(seed=source_seed(spec.seed, name, j))
            live.append((name, tutor))
    collector = _StateCollector(spec, prefix_tutor, live, failures)
    [record] = play([spec], collector, make_student, reward=reward, observer=collector)
    for f in record["failures"]:  # the states so far stay valid
        failures.append({**_failure(f"prefix_{f['agent']}", spec, len(collector.said), f["agent"], None),
                         "error": f["error"], "traceback": f["traceback"]})
    return collector.states


class _StateCollector:
    """The prefix tutor, watching its episode (an :class:`tutorzoo.envs.engine.Observer`): at every dialogue tutor turn
    it
    keeps the state and asks the live shadow tutors what they would say there."""

    def __init__(self, spec: EpisodeSpec, prefix: TutorPolicy, live: list[tuple[str, TutorPolicy]],
                 failures: list[dict]) -> None:
        self.spec = spec
        self.prefix = prefix
        self.live = live
        self.failures = failures
        self.said: list[str] = []
        self.states: list[DialogueState] = []

    def reset(self, seed: int | None = None) -> None:
        self.prefix.reset(seed=seed)

    def before_tutor(self, episode: Any, observation: dict, info: dict) -> None:
        if info.get("observe_only"):
            return
        state = DialogueState(self.spec, len(self.said), tuple(self.said), copy.deepcopy(info["messages"]),
                              copy.deepcopy(episode.env.unwrapped.transcript))
        for name, tutor in list(self.live):
            try:
                state.proposals.setdefault(name, []).append(tutor.act(observation, info))
            except Exception as exc:  # this source stops proposing; the episode goes on
                self.live.remove((name, tutor))
                self.failures.append(_failure("candidate_source", self.spec, len(self.said), name, exc))
        self.states.append(state)

    def act(self, observation: dict, info: dict) -> str:
        action = self.prefix.act(observation, info)
        self.said.append(action)
        return action

    def after_tutor(self, episode: Any, info: dict) -> None:
        """Nothing to do after a turn."""


def replay(
    state: DialogueState,
    candidate: str,
    continuation: TutorPolicy,
    make_student: Callable[[str], Any],
    reward: RewardModel | None = None,
) -> dict:
    """The episode record of: the state's prefix again, then ``candidate``, then ``continuation`` to the end
    (:func:`tutorzoo.eval.rollout.run_episode`: a tutor or student exception is a recorded ``failures`` entry)."""
    tutor = ReplayTutor([*state.prefix, candidate], continuation)
    return run_episode(state.spec, tutor, make_student(state.spec.persona), tutor_name="replay", reward=reward)


def score_candidates(
    state: DialogueState,
    candidates: Sequence[Candidate],
    make_continuation: Callable[[], TutorPolicy],
    make_student: Callable[[str], Any],
    reward: RewardModel | None = None,
    failures: list[dict] | None = None,
) -> list[Scored]:
    """Each candidate's continuation reward; a crash, a failed episode or a replay that does not reproduce the
    state is that candidate's recorded failure (``reward=None``), never the end of the run."""
    failures = failures if failures is not None else []
    out = []
    n = len(state.transcript)
    for cand in candidates:
        try:
            record = replay(state, cand.text, make_continuation(), make_student, reward)
        except Exception as exc:  # e.g. the env itself raising: this candidate only
            failures.append(_failure("continuation", state.spec, state.turn, cand.source, exc, cand.text))
            out.append(Scored(cand, None, error=f"{type(exc).__name__}: {exc}"))
            continue
        if record["transcript"][:n] != state.transcript:
            err = "the replayed prefix differs from the recorded one (the episode is not deterministic)"
            failures.append({**_failure("replay_mismatch", state.spec, state.turn, cand.source, None, cand.text),
                             "error": err})
            out.append(Scored(cand, None, error=err))
            continue
        if record.get("failures") or record["ended_by"] == "failure":
            first = (record.get("failures") or [{}])[0]
            failures.append({**_failure("continuation", state.spec, state.turn, cand.source, None, cand.text),
                             "error": first.get("error", "ended_by=failure"), "agent": first.get("agent")})
            out.append(Scored(cand, None, ended_by="failure", error=first.get("error")))
            continue
        out.append(Scored(cand, float(record.reward), record.learning_gain, record.ended_by))
    return out


def rank(scored: Sequence[Scored], min_margin: float) -> tuple[Scored, Scored] | str:
    """(best, worst) of the scored candidates, or why the state gives no pair (``too_few`` / ``tie``).

    Ties in reward go to the earlier candidate for best and to the later one for worst (source order), so
    the choice is deterministic.
    """
    ok = [(i, s) for i, s in enumerate(scored) if s.reward is not None]
    if len(ok) < 2:
        return "too_few_candidates"
    best = min(ok, key=lambda p: (-p[1].reward, p[0]))[1]
    worst = min(ok, key=lambda p: (p[1].reward, -p[0]))[1]
    if best.reward - worst.reward < min_margin or best is worst:
        return "tie"
    return best, worst


def pair_row(state: DialogueState, chosen: Scored, rejected: Scored, n_candidates: int) -> dict:
    """One row of the pair dataset (TRL's conversational preference format plus bookkeeping columns)."""
    return {
        "prompt": [{"role": m["role"], "content": m["content"]} for m in state.messages],
        "chosen": [{"role": "assistant", "content": chosen.candidate.text}],
        "rejected": [{"role": "assistant", "content": rejected.candidate.text}],
        "reward_chosen": float(chosen.reward),
        "reward_rejected": float(rejected.reward),
        "source_chosen": chosen.candidate.source,
        "source_rejected": rejected.candidate.source,
        "turn": state.turn,
        "n_candidates": n_candidates,
        "spec": json.dumps(state.spec.model_dump(), sort_keys=True),
    }


def choose_states(states: Sequence[DialogueState], k: int, seed: int) -> list[DialogueState]:
    """``k`` of an episode's states, drawn without replacement from a generator seeded by ``seed``, in turn
    order."""
    if len(states) <= k:
        return list(states)
    picks = np.random.default_rng(seed).choice(len(states), size=k, replace=False)
    return [states[i] for i in sorted(int(p) for p in picks)]


def train_specs(settings: PairSettings, seed: int) -> list[EpisodeSpec]:
    """``settings.episodes`` specs of the suite's train split, a seeded sample in a seeded order."""
    from tutorzoo.eval.suite import load_suite

    specs = load_suite(settings.suite).specs("train")
    if not specs:
        raise ConfigError(f"suite {settings.suite!r} has no train-split specs; lower its held_out_fraction")
    order = np.random.default_rng(seed).permutation(len(specs))
    return [specs[int(i)] for i in order[: settings.episodes]]


def build_pairs(
    settings: PairSettings,
    specs: Sequence[EpisodeSpec],
    seed: int,
    policy: Any | None = None,
    make_student: Callable[[str], Any] | None = None,
    make_tutor_fn: Callable[[str], TutorPolicy] | None = None,
    log: Callable[[str], None] | None = None,
) -> PairBuild:
    """Preference pairs from ``specs`` (module docstring): states, candidates, continuations, ranking.

    ``policy`` is a :class:`~tutorzoo.agents.backends.base.ChatBackend` for the ``policy`` source and tutor (required
    when the settings use it). Deterministic: the same settings, specs, seed and policy give the same rows.

    Example::

        build = build_pairs(PairSettings(candidates={"socratic": 1, "lecturer": 1, "random": 2}),
                            specs[:4], seed=0)
        build.summary()["pairs"], build.dataset()
    """
    from tutorzoo.agents.backends.base import GenerationConfig
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor.llm import LLMTutor
    from tutorzoo.agents.tutor.registry import make_tutor
    from tutorzoo.rewards import load_rubric

    if settings.uses_policy() and policy is None:
        raise ConfigError("the pair settings use the 'policy' source or tutor but no policy model was given")
    make_student = make_student or SimulatedStudent
    make_tutor_fn = make_tutor_fn or make_tutor
    rubric = load_rubric(settings.rubric)
    gen = GenerationConfig(max_new_tokens=settings.max_new_tokens, temperature=settings.temperature,
                           top_p=settings.top_p, seed=seed)

    def tutor(name: str) -> TutorPolicy:
        return LLMTutor(policy, gen, name=POLICY) if name == POLICY else make_tutor_fn(name)

    start = time.perf_counter()
    build = PairBuild()
    shadows = {n: c for n, c in settings.candidates.items() if n != POLICY and c > 0}
    states: list[DialogueState] = []
    for index, spec in enumerate(specs):
        found = collect_states(spec, tutor(settings.prefix_tutor), make_student, shadows, tutor, rubric,
                               build.failures)
        states += choose_states(found, settings.states_per_episode, source_seed(seed, "states", index))
    build.states = len(states)
    if log:
        log(f"dpo pairs: {len(states)} states from {len(specs)} episodes")
    n_policy = settings.candidates.get(POLICY, 0)
    if n_policy and states:
        _policy_candidates(states, policy, n_policy, gen, settings.generation_batch_size, build.failures)
    order = list(settings.candidates)
    for i, state in enumerate(states):
        candidates = state.candidates(order)
        scored = score_candidates(state, candidates, lambda: tutor(settings.continuation_tutor), make_student,
                                  rubric, build.failures)
        build.scored += sum(s.reward is not None for s in scored)
        verdict = rank(scored, settings.min_margin)
        if isinstance(verdict, str):
            build.skipped[verdict] += 1
        else:
            build.rows.append(pair_row(state, *verdict, n_candidates=len(candidates)))
        if log and (i + 1) % 25 == 0:
            log(f"dpo pairs: {i + 1}/{len(states)} states ranked, {len(build.rows)} pairs")
    build.seconds = time.perf_counter() - start
    return build


def _policy_candidates(states: list[DialogueState], policy: Any, n: int, gen: Any, batch_size: int,
                       failures: list[dict]) -> None:
    """``n`` samples of the policy per state, in batches of ``batch_size`` conversations (seeded per batch)."""
    from dataclasses import replace

    jobs = [(s, k) for s in states for k in range(n)]
    for b, start in enumerate(range(0, len(jobs), batch_size)):
        chunk = jobs[start:start + batch_size]
        config = replace(gen, seed=int(np.random.SeedSequence([gen.seed or 0, b]).generate_state(1)[0]))
        results = policy.generate([list(s.messages) for s, _ in chunk], config)
        for (state, _k), result in zip(chunk, results, strict=True):
            if result.ok:
                state.proposals.setdefault(POLICY, []).append(result.text or "")
            else:
                failures.append({**_failure("candidate_source", state.spec, state.turn, POLICY, None),
                                 "error": result.error})


def check_policy(policy: Any) -> None:
    """One short generation of the policy on a chat shaped like the env's (system, user, user): a model that
    cannot render or generate is a ConfigError before any pair is built, not a pile of silent failures."""
    from tutorzoo.agents.backends.base import GenerationConfig

    chat = [{"role": "system", "content": "You are a tutor."}, {"role": "user", "content": "Pre-test: 2 of 3."},
            {"role": "user", "content": "What is 3/4 of 8?"}]
    [result] = policy.generate([chat], GenerationConfig(max_new_tokens=2, temperature=0.0, seed=0))
    if not result.ok:
        raise ConfigError(f"the policy model cannot answer a tutor chat: {result.error}")


def _failure(kind: str, spec: EpisodeSpec, turn: int, source: str, exc: BaseException | None,
             text: str | None = None) -> dict:
    out: dict[str, Any] = {"kind": kind, "spec": spec.key(), "turn": turn, "source": source}
    if exc is not None:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc(limit=3)
    if text is not None:
        out["candidate"] = text[:200]
    return out
