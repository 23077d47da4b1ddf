"""Rollout speed: tutor tokens per second through the env, batched vs one episode at a time vs raw ``generate``.

In one process, with the tiny offline model (built into a temporary directory unless ``--model`` is given)
as an :class:`~tutorzoo.agents.tutor.llm.LLMTutor` against simulated students:

1. **batched**: ``tutorzoo.eval.batch.run_batched`` with ``--batch-size`` episodes in lockstep;
2. **sequential**: the same specs one episode at a time with ``tutorzoo.eval.rollout.run_episode``;
3. **raw**: ``model.generate`` alone on the very prompts the batched run sent, call by call, each generating
   as many new tokens as that call's longest reply (``min_new_tokens`` = ``max_new_tokens``), with the same
   sampling settings — the model's own cost, without env, students, chat templates or decoding.

Students share one template verbaliser (it is stateless; building one parses its YAML, which is not what
is measured here). Tokens/s counts the tutor's completion tokens (the backend's ``completion_tokens``) over
wall-clock time; the raw run is credited with the batched run's tokens, so its ratio is the share of time the
model takes. Batching pays off in compute, so give it the cores (``--threads``, torch's default: all); on a
machine whose cores other processes are using, ``--threads 1`` avoids thread contention.
Goals: batched >= 4x sequential, batched >= 0.8x raw.

    python benchmarks/rollout_speed.py [--model DIR] [--episodes 16] [--batch-size 16] [--max-new-tokens 64]
                                       [--max-turns 4] [--threads N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass, field

import torch

from tutorzoo.agents.backends.base import GenerationConfig, GenerationResult
from tutorzoo.agents.backends.hf import HFBackend
from tutorzoo.agents.student import SimulatedStudent, TemplateVerbaliser
from tutorzoo.agents.tutor.llm import LLMTutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.eval.batch import run_batched
from tutorzoo.eval.rollout import run_episode

PERSONAS = ("all_round_partly_wrong", "weak_knowledge_asks_for_hint", "low_motivation_correct_and_extends", "anxious")
TASK_SETS = ("math", "stem", "mcq")


@dataclass
class Recorder:
    """A backend wrapper that keeps every call's conversations and counts completion tokens."""

    backend: HFBackend
    calls: list[tuple[list[list[dict]], GenerationConfig, list[GenerationResult]]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.backend.name

    def generate(self, conversations: list[list[dict]], config: GenerationConfig) -> list[GenerationResult]:
        results = self.backend.generate(conversations, config)
        self.calls.append((conversations, config, results))
        return results

    def tokens(self) -> int:
        return sum(r.completion_tokens for _, _, results in self.calls for r in results)


def make_specs(n: int, max_turns: int) -> list[EpisodeSpec]:
    return [EpisodeSpec(task_set=TASK_SETS[i % len(TASK_SETS)], persona=PERSONAS[i % len(PERSONAS)], seed=i,
                        protocol={"max_turns": max_turns}) for i in range(n)]


def raw_generate_seconds(backend: HFBackend, calls: list) -> float:
    """Replay the recorded calls straight through ``model.generate`` (same prompts, lengths and sampling)."""
    tok, model = backend.tokenizer, backend.model
    elapsed = 0.0
    for conversations, config, results in calls:
        prompts = [backend.encode(c, config.max_new_tokens)[0] for c in conversations]
        new = max(r.completion_tokens for r in results)
        for start in range(0, len(prompts), backend.batch_size):
            chunk = prompts[start:start + backend.batch_size]
            width = max(len(p) for p in chunk)
            ids = torch.full((len(chunk), width), tok.pad_token_id, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, p in enumerate(chunk):
                ids[row, width - len(p):] = torch.tensor(p)
                mask[row, width - len(p):] = 1
            kwargs = {**backend.generation_kwargs(config), "max_new_tokens": new, "min_new_tokens": new}
            begin = time.perf_counter()
            with torch.inference_mode():
                model.generate(input_ids=ids, attention_mask=mask, **kwargs)
            elapsed += time.perf_counter() - begin
    return elapsed


def measure(model_dir: str, episodes: int, batch_size: int, max_turns: int, max_new_tokens: int,
            threads: int | None = None) -> dict[str, float]:
    """Tokens/s of the three runs and the two ratios."""
    backend = HFBackend(model_dir, batch_size=batch_size, threads=threads)
    config = GenerationConfig(max_new_tokens=max_new_tokens, temperature=0.7)
    specs = make_specs(episodes, max_turns)
    verbaliser = TemplateVerbaliser()

    def student(persona: str) -> SimulatedStudent:
        return SimulatedStudent(persona, verbaliser=verbaliser)

    warm = Recorder(backend)
    run_batched(specs[:2], LLMTutor(warm, config), student, batch_size=2)  # first-call costs

    batched = Recorder(backend)
    begin = time.perf_counter()
    run_batched(specs, LLMTutor(batched, config), student, batch_size=batch_size)
    t_batched = time.perf_counter() - begin

    sequential = Recorder(backend)
    tutor = LLMTutor(sequential, config)
    begin = time.perf_counter()
    for spec in specs:
        run_episode(spec, tutor, student(spec.persona))
    t_sequential = time.perf_counter() - begin

    t_raw = raw_generate_seconds(backend, batched.calls)
    out = {
        "batched_tok_s": batched.tokens() / t_batched,
        "sequential_tok_s": sequential.tokens() / t_sequential,
        "raw_tok_s": batched.tokens() / t_raw,
        "batched_tokens": float(batched.tokens()),
        "sequential_tokens": float(sequential.tokens()),
        "batched_calls": float(len(batched.calls)),
    }
    out["batched_vs_sequential"] = out["batched_tok_s"] / out["sequential_tok_s"]
    out["env_vs_raw"] = out["batched_tok_s"] / out["raw_tok_s"]
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="model directory (default: build the tiny model into a temp dir)")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's, all cores)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model
        if model_dir is None:
            from tutorzoo.train.tiny_model import build_tiny_model

            model_dir = str(build_tiny_model(tmp, seed=0))
        r = measure(model_dir, args.episodes, args.batch_size, args.max_turns, args.max_new_tokens, args.threads)
    print(f"tutor tokens/s  batched (x{args.batch_size}): {r['batched_tok_s']:9.1f}   "
          f"({r['batched_tokens']:.0f} tokens, {r['batched_calls']:.0f} calls)")
    print(f"tutor tokens/s  sequential:       {r['sequential_tok_s']:9.1f}   ({r['sequential_tokens']:.0f} tokens)")
    print(f"tutor tokens/s  raw generate:     {r['raw_tok_s']:9.1f}")
    print(f"batched / sequential: {r['batched_vs_sequential']:.2f}x (goal >= 4x)")
    print(f"env / raw generate:   {r['env_vs_raw']:.2f}x (goal >= 0.8x)")
    return r


if __name__ == "__main__":
    main()
