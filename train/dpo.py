"""DPO from environment-ranked preference pairs: candidate tutor turns for one dialogue state, ranked by the
reward of the episode each one leads to, then TRL's ``DPOTrainer`` with a LoRA adapter.

**Pairs.** For each episode spec of the suite's ``train`` split (a seeded sample of ``pairs.episodes``):

1. *States*: the ``prefix_tutor`` (``socratic`` by default) plays the episode; at every dialogue tutor turn the
   state is kept: the tutor's chat so far (``info["messages"]``, the prompt), the tutor turns said before it
   (the prefix) and the transcript so far. ``states_per_episode`` of those turns are drawn with a seeded rng.
2. *Candidates* for the state's tutor turn come from several sources, so the ranking compares different
   behaviours: the built-in tutors named in ``candidates`` (each *shadows* the episode: it is asked at every
   tutor turn, so its plan follows the dialogue, and what it would say at the drawn turn is its candidate) and
   ``policy`` samples from the model being trained (``temperature`` sampling, seeded). Duplicate texts count
   once (the first source keeps them).
3. *Continuations*: each candidate is scored by replaying the episode from its spec and seed — the env and the
   simulated student are deterministic to the byte, so saying the recorded prefix again reproduces the state
   exactly (checked: the replayed transcript must equal the recorded one, else the candidate is a recorded
   ``replay_mismatch``) — then saying the candidate, then letting the ``continuation_tutor`` play the rest (it
   too shadows the dialogue from the first turn; a batched model tutor, which keeps no state, is only asked
   from the turn after the candidate). Every candidate of a state meets the same student seed and the same
   continuation tutor seed. Its score is the episode's reward under the ``rubric`` (``configs/rewards/``),
   the total the env credited; the prefix is common to all candidates, so only what follows it differs.
4. *Pairs*: chosen = the best-scored candidate, rejected = the worst; a state whose margin is below
   ``min_margin`` (ties) or with fewer than two scored candidates gives no pair. A candidate whose
   continuation crashes (a tutor, student or env exception) is recorded in ``failures`` and left out; the
   other candidates still count.

The pairs are a ``datasets`` dataset with columns ``prompt`` (messages), ``chosen`` / ``rejected`` (one
assistant message each), ``reward_chosen``, ``reward_rejected``, ``source_chosen``, ``source_rejected``,
``turn``, ``n_candidates`` and ``spec`` (the :class:`EpisodeSpec` as JSON), saved to ``<out_dir>/pairs``;
``<out_dir>/pairs_summary.json`` holds the counts and every recorded failure. Same config, same seed, same
pairs.

**Training.** When ``<sft_dir>/READY`` exists the recipe starts from the SFT recipe's base model and adapter:
the adapter is trained further and TRL keeps a frozen copy of it as the reference policy. Otherwise it starts
from ``base_model`` (or a tiny model built into ``<out_dir>/tiny``) with a fresh LoRA adapter, the reference
being the base model (no separate reference model with PEFT). ``use_cpu`` and ``bf16=False`` on CPU machines.
The adapter, its model card and ``results.json`` go to ``<out_dir>``; with ``eval_episodes > 0`` the new
adapter and the starting one play the same held-out specs as ``tutorzoo eval`` does (``<out_dir>/eval/``).

Example::

    tutorzoo train dpo --config configs/train/dpo.yaml --set pairs.episodes=8 --set max_steps=10

    from train.common import load_recipe_config
    from train.dpo import Config, run
    results = run(load_recipe_config(Config, "configs/train/dpo.yaml", ["max_steps=5", "wandb.mode=disabled"]))
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
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.tutor.base import TutorPolicy
from agents.tutor.registry import MODEL_PREFIXES, TUTORS
from envs import tutoring_v0
from envs.config import EpisodeSpec
from envs.errors import ConfigError
from envs.reward_api import RewardModel
from eval.rollout import derive_seed, run_episode
from train.common import (
    PAD_FIELD_DOC,
    LoraSettings,
    RecipeConfig,
    finish_wandb,
    load_chat_model,
    report_to,
    resolve_start,
    start_wandb,
    write_model_card,
    write_results,
)

RECIPE = "dpo"
POLICY = "policy"  # the candidate source / tutor name that means "the model being trained"


# ---------------------------------------------------------------------------------------------- config
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


class Config(RecipeConfig):
    """The DPO recipe: pair building, the starting model, DPO and LoRA settings, the held-out evaluation."""

    pairs: PairSettings = Field(default_factory=PairSettings)
    sft_dir: str | None = Field(default=None, description="The SFT recipe's artifacts (base/, adapter/, READY): "
                                                          "start from them when READY exists.")
    base_model: str | None = Field(default=None, description="Base model (path or hub id) when not starting from "
                                                             "SFT; None builds the tiny model into out_dir/tiny.")
    adapter: str | None = Field(default=None, description="A LoRA adapter of base_model to start from (its copy "
                                                          "is the DPO reference); None starts a fresh adapter.")
    lora: LoraSettings = Field(default_factory=LoraSettings, description="The fresh adapter's LoRA settings "
                                                                         "(unused when starting from an adapter).")
    beta: float = Field(default=0.1, gt=0.0, description="DPO's beta: how far the policy may move from the "
                                                         "reference.")
    loss_type: str = Field(default="sigmoid", description="TRL DPO loss (sigmoid = the DPO paper's).")
    learning_rate: float = Field(default=5e-4, gt=0.0, description="AdamW learning rate (linear decay).")
    max_steps: int = Field(default=60, ge=1, description="Optimizer steps (the pairs repeat as epochs need).")
    batch_size: int = Field(default=4, ge=1, description="Pairs per device step.")
    gradient_accumulation_steps: int = Field(default=1, ge=1, description="Device steps per optimizer step.")
    pad_token: str = Field(default="auto", description=PAD_FIELD_DOC)
    max_length: int = Field(default=1024, ge=16, description="Prompt + completion tokens; older messages of a "
                                                             "longer prompt are dropped (the system one is kept).")
    gradient_checkpointing: bool = Field(default=False, description="Trade compute for memory (TRL's default is "
                                                                    "on; a small model on CPU is faster without).")
    logging_steps: int = Field(default=1, ge=1, description="Log loss and rewards/* every this many steps.")
    threads: int = Field(default=1, ge=1, description="torch CPU threads (process-wide).")
    heldout_pairs: int = Field(default=0, ge=0, description="Held-out specs whose pairs (built like the training "
                                                            "ones) measure DPO's preference accuracy after training "
                                                            "(0: none).")
    eval_suite: str = Field(default="default", description="Suite whose held_out split evaluates the adapters.")
    eval_episodes: int = Field(default=0, ge=0, description="Held-out specs to evaluate on (0: no evaluation).")
    eval_batch_size: int = Field(default=16, ge=1, description="Episodes played in lockstep in the evaluation.")
    eval_max_new_tokens: int = Field(default=150, ge=1, description="Tutor turn cap in the evaluation (the "
                                                                    "harness's default for model tutors).")

    @model_validator(mode="after")
    def _check_start(self) -> Config:
        if self.adapter is not None and self.base_model is None:
            raise ValueError("adapter is set without base_model: give the base model the adapter was trained on")
        return self


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
        self.shadow = (not callable(getattr(then, "act_batch", None))) if shadow is None else shadow
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
    env = tutoring_v0.env(**spec.env_kwargs(), reward=reward)
    env.reset(seed=spec.seed)
    prefix_tutor.reset(seed=derive_seed(spec.seed, "tutor"))
    student = make_student(spec.persona)
    student.reset(seed=derive_seed(spec.seed, "student"))
    live: list[tuple[str, TutorPolicy]] = []
    for name, count in shadows.items():
        for j in range(count):
            tutor = make_tutor_fn(name)
            tutor.reset(seed=source_seed(spec.seed, name, j))
            live.append((name, tutor))
    states: list[DialogueState] = []
    said: list[str] = []
    for agent in env.agent_iter():
        obs, _reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "tutor" and info.get("observe_only"):
            env.step("")
            continue
        try:
            if agent == "tutor":
                state = DialogueState(spec, len(said), tuple(said), copy.deepcopy(info["messages"]),
                                      copy.deepcopy(env.unwrapped.transcript))
                for name, tutor in list(live):
                    try:
                        state.proposals.setdefault(name, []).append(tutor.act(obs, info))
                    except Exception as exc:  # this source stops proposing; the episode goes on
                        live.remove((name, tutor))
                        failures.append(_failure("candidate_source", spec, len(said), name, exc))
                states.append(state)
                action = prefix_tutor.act(obs, info)
                said.append(action)
            else:
                action = student.act(obs, info)
        except Exception as exc:  # the states so far stay valid
            failures.append(_failure(f"prefix_{agent}", spec, len(said), agent, exc))
            break
        env.step(action)
    env.close()
    return states


def replay(
    state: DialogueState,
    candidate: str,
    continuation: TutorPolicy,
    make_student: Callable[[str], Any],
    reward: RewardModel | None = None,
) -> dict:
    """The episode record of: the state's prefix again, then ``candidate``, then ``continuation`` to the end
    (:func:`eval.rollout.run_episode`: a tutor or student exception is a recorded ``failures`` entry)."""
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
        out.append(Scored(cand, float(record["reward"]), record.get("learning_gain"), record["ended_by"]))
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
    from eval.suite import load_suite

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

    ``policy`` is a :class:`~agents.backends.base.ChatBackend` for the ``policy`` source and tutor (required
    when the settings use it). Deterministic: the same settings, specs, seed and policy give the same rows.

    Example::

        build = build_pairs(PairSettings(candidates={"socratic": 1, "lecturer": 1, "random": 2}),
                            specs[:4], seed=0)
        build.summary()["pairs"], build.dataset()
    """
    from agents.backends.base import GenerationConfig
    from agents.student import SimulatedStudent
    from agents.tutor.llm import LLMTutor
    from agents.tutor.registry import make_tutor
    from rewards import load_rubric

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
    from agents.backends.base import GenerationConfig

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


# ---------------------------------------------------------------------------------------------- training


def fit_prompt(messages: list[dict], completions: Sequence[list[dict]], tokenizer: Any, max_length: int,
               renderer: Any | None = None) -> tuple[list[dict], int]:
    """``messages`` with the oldest non-system ones dropped until prompt + the longest completion fit in
    ``max_length`` tokens (as the HF backend does at inference); returns it and how many were dropped. With a
    ``renderer`` (:class:`agents.backends.chat_render.ChatRenderer`) lengths are those of its rendering."""
    def length(msgs: list[dict]) -> int:
        if renderer is not None:
            return max(len(renderer.encode(msgs + list(c), add_generation_prompt=False)) for c in completions)
        texts = [tokenizer.apply_chat_template(msgs + list(c), tokenize=False) for c in completions]
        return max(len(tokenizer(t, add_special_tokens=False, verbose=False)["input_ids"]) for t in texts)

    head = messages[:1] if messages and messages[0]["role"] == "system" else []
    rest = messages[len(head):]
    dropped = 0
    while len(rest) > 1 and length(head + rest) > max_length:
        rest, dropped = rest[1:], dropped + 1
    return head + rest, dropped


def tokenize_pair(row: dict, renderer: Any, max_length: int) -> dict:
    """``prompt_ids`` (the fitted prompt rendered with its generation prompt, BOS as the family has it) and
    ``chosen_ids`` / ``rejected_ids`` (exactly the completion's tokens: its content and end-of-turn token, from
    :meth:`~agents.backends.chat_render.ChatRenderer.assistant_mask`), so any chat-template family trains on what
    it generates from at inference."""
    prompt, dropped = fit_prompt(row["prompt"], [row["chosen"], row["rejected"]], None, max_length, renderer)
    out: dict[str, Any] = {"prompt_ids": renderer.encode(prompt, add_generation_prompt=True),
                           "dropped_messages": dropped}
    for key in ("chosen", "rejected"):
        ids, mask = renderer.assistant_mask(prompt + list(row[key]))
        last = max(i for i, m in enumerate(mask) if m) if 1 in mask else -1
        start = last
        while start > 0 and mask[start - 1]:  # the last assistant span: this completion
            start -= 1
        out[f"{key}_ids"] = ids[start:last + 1] if last >= 0 else []
    return out


def _tokenized_dpo_trainer() -> Any:
    """TRL's DPOTrainer that takes pairs already tokenised by :func:`tokenize_pair` as they are (TRL would
    re-render them with the raw template: system roles, alternation and BOS as each family does not want)."""
    from trl import DPOTrainer

    class TokenizedDPOTrainer(DPOTrainer):
        def _prepare_dataset(self, dataset: Any, processing_class: Any, args: Any, dataset_name: str) -> Any:
            if "prompt_ids" in dataset.column_names:
                return dataset.filter(lambda r: len(r["prompt_ids"]) < args.max_length)
            return super()._prepare_dataset(dataset, processing_class, args, dataset_name)

    return TokenizedDPOTrainer


def train_dpo(cfg: Config, dataset: Any, base: str, adapter: str | None, out_dir: Path, run: Any,
              eval_dataset: Any | None = None, loaded: tuple[Any, Any] | None = None) -> dict:
    """Train the adapter on the pairs; save it to ``out_dir/adapter``; return the training metrics (and, with
    ``eval_dataset``, TRL's eval loss / rewards before and after training on those pairs). ``loaded``: the
    ``(model, tokenizer)`` of :func:`train.common.load_chat_model`, when the caller checked it already."""
    import torch
    from trl import DPOConfig

    from train.common import chat_renderer

    model, tokenizer = loaded or load_chat_model(base, cfg.pad_token)
    tokenizer.padding_side = "left"
    renderer = chat_renderer(tokenizer, model)

    def fit(row: dict) -> dict:
        return tokenize_pair(row, renderer, cfg.max_length)

    dataset = dataset.map(fit)
    if eval_dataset is not None and len(eval_dataset):
        eval_dataset = eval_dataset.map(fit)
    else:
        eval_dataset = None
    peft_config = None
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter, is_trainable=True)  # TRL copies it as the reference
    else:
        peft_config = cfg.lora.peft_config()
    args = DPOConfig(
        output_dir=str(out_dir / "trainer"), max_steps=cfg.max_steps, per_device_train_batch_size=cfg.batch_size,
        per_device_eval_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps, learning_rate=cfg.learning_rate,
        beta=cfg.beta, loss_type=[cfg.loss_type], max_length=cfg.max_length, logging_steps=cfg.logging_steps,
        save_strategy="no", report_to=report_to(run), seed=cfg.seed, data_seed=cfg.seed, use_cpu=True, bf16=False,
        dataloader_num_workers=0, disable_tqdm=True, gradient_checkpointing=cfg.gradient_checkpointing,
    )
    trainer = _tokenized_dpo_trainer()(model=model, args=args, train_dataset=dataset, eval_dataset=eval_dataset,
                         processing_class=tokenizer, peft_config=peft_config)
    before = _adapter_params(trainer.model)
    held_out: dict[str, Any] = {}
    if eval_dataset is not None:
        held_out["pairs"] = len(eval_dataset)
        held_out["before"] = _eval_metrics(trainer.evaluate())
    train_out = trainer.train()
    if eval_dataset is not None:
        held_out["after"] = _eval_metrics(trainer.evaluate())
    after = _adapter_params(trainer.model)
    delta = float(sum((after[k] - before[k]).abs().sum().item() for k in before))
    changed = sum(not torch.equal(after[k], before[k]) for k in before)
    adapter_dir = out_dir / "adapter"
    trainer.model.save_pretrained(str(adapter_dir), selected_adapters=["default"])
    tokenizer.save_pretrained(str(adapter_dir))  # with its pad token: a resized vocabulary loads back (hf backend)
    logs = [e for e in trainer.state.log_history if "loss" in e]
    keys = ("loss", "rewards/accuracies", "rewards/margins", "rewards/chosen", "rewards/rejected")
    window = max(1, min(5, len(logs) // 4))  # one step's batch is small: also the mean of a few steps each end

    def mean_of(entries: list[dict]) -> dict:
        return {k: float(np.mean([e[k] for e in entries if k in e])) for k in keys if any(k in e for e in entries)}

    return {
        "adapter_dir": str(adapter_dir),
        "steps": int(trainer.state.global_step),
        "train_loss": float(train_out.training_loss),
        "first": {k: logs[0].get(k) for k in keys} if logs else {},
        "last": {k: logs[-1].get(k) for k in keys} if logs else {},
        "window": window,
        "first_window_mean": mean_of(logs[:window]) if logs else {},
        "last_window_mean": mean_of(logs[-window:]) if logs else {},
        "lora_tensors": len(before),
        "lora_tensors_changed": int(changed),
        "lora_abs_delta": delta,
        "prompts_truncated": int(sum(1 for d in dataset["dropped_messages"] if d)),
        **({"held_out_pairs": held_out} if held_out else {}),
    }


def _eval_metrics(metrics: Mapping[str, float]) -> dict[str, float]:
    keys = ("eval_loss", "eval_rewards/accuracies", "eval_rewards/margins")
    return {k.removeprefix("eval_"): float(metrics[k]) for k in keys if k in metrics}


def _adapter_params(model: Any) -> dict[str, Any]:
    """The trainable adapter's LoRA tensors (the ``default`` adapter; TRL's frozen ``ref`` copy excluded)."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n and ".default." in n}


# ---------------------------------------------------------------------------------------------- recipe
def run(cfg: Config) -> dict:
    """Build the pairs, train with DPO, save the adapter, card and results; returns the results."""
    import torch

    torch.set_num_threads(cfg.threads)
    out_dir = cfg.output_dir(RECIPE)
    base, adapter, start = resolve_start(cfg, out_dir)
    wb = start_wandb(RECIPE, cfg, out_dir)
    results: dict[str, Any] = {"recipe": RECIPE, "base_model": base, "start_adapter": adapter, "start": start}
    # the model is checked before any pair is built: a tokenizer or template that cannot train fails now
    loaded = load_chat_model(base, cfg.pad_token)
    try:
        policy = None
        if cfg.pairs.uses_policy():
            from agents.backends.hf import HFBackend

            policy = HFBackend(base, adapter=adapter, batch_size=cfg.pairs.generation_batch_size,
                               threads=cfg.threads)
            check_policy(policy)
        build = build_pairs(cfg.pairs, train_specs(cfg.pairs, cfg.seed), cfg.seed, policy=policy, log=print)
        dataset = build.dataset()
        dataset.save_to_disk(str(out_dir / "pairs"))
        summary = build.summary()
        (out_dir / "pairs_summary.json").write_text(
            json.dumps({**summary, "failure_records": build.failures}, indent=2, sort_keys=True) + "\n",
            encoding="utf-8")
        results["pairs"] = summary
        sampled = build.states * cfg.pairs.candidates.get(POLICY, 0)
        policy_failures = [f for f in build.failures if f.get("kind") == "candidate_source"
                           and f.get("source") == POLICY]
        if sampled and len(policy_failures) >= sampled:  # the model produced nothing: say so, never train silently
            raise ConfigError(f"every one of the {sampled} policy candidates failed (first: "
                              f"{policy_failures[0].get('error')}); see {out_dir / 'pairs_summary.json'}")
        if wb is not None:
            wb.summary.update({f"pairs/{k}": v for k, v in summary.items() if isinstance(v, (int, float))})
        if len(dataset) == 0:
            raise ConfigError(f"no preference pairs were built ({summary['skipped_states']} states skipped, "
                              f"{summary['failures']} failures; see {out_dir / 'pairs_summary.json'}); "
                              "use more episodes, more candidate sources or a lower pairs.min_margin")
        eval_pairs = None
        if cfg.heldout_pairs:
            from eval.suite import load_suite

            held = load_suite(cfg.pairs.suite).specs("held_out")[: cfg.heldout_pairs]
            eval_build = build_pairs(cfg.pairs, held, cfg.seed, policy=policy, log=print)
            eval_pairs = eval_build.dataset()
            eval_pairs.save_to_disk(str(out_dir / "pairs_held_out"))
            results["pairs_held_out"] = eval_build.summary()
        del policy
        results["train"] = train_dpo(cfg, dataset, base, adapter, out_dir, wb, eval_dataset=eval_pairs,
                                     loaded=loaded)
        del loaded
        if cfg.eval_episodes:
            results["eval"] = evaluate(cfg, base, {"dpo": results["train"]["adapter_dir"], "start": adapter},
                                       out_dir / "eval")
        write_results(out_dir, results)
        write_model_card(Path(results["train"]["adapter_dir"]), RECIPE, cfg, base, results)
    finally:
        finish_wandb(wb, _flat(results))
    return results


def evaluate(cfg: Config, base: str, adapters: Mapping[str, str | None], out_dir: Path) -> dict:
    """Each adapter (None: the bare base model) as a tutor on the same ``eval_episodes`` held-out specs, as
    ``tutorzoo eval`` plays them (:func:`train.common.evaluate_tutor`; episodes and report in ``out_dir/<key>``)."""
    from train.common import evaluate_tutor

    out = {}
    for key, adapter in adapters.items():
        kwargs: dict[str, Any] = {"threads": cfg.threads, "max_new_tokens": cfg.eval_max_new_tokens,
                                  "batch_size": cfg.eval_batch_size}
        if adapter is not None:
            kwargs["adapter"] = adapter
        out[key] = evaluate_tutor(f"hf:{base}", out_dir / key, suite=cfg.eval_suite, split="held_out",
                                  limit=cfg.eval_episodes, batch_size=cfg.eval_batch_size, tutor_kwargs=kwargs,
                                  name=f"{RECIPE}:{key}")
    return out


def _flat(results: Mapping, prefix: str = "") -> dict:
    """Numbers of a nested results dict as ``a/b`` keys (the W&B summary)."""
    out: dict[str, Any] = {}
    for k, v in results.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flat(v, key + "/"))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = v
    return out
