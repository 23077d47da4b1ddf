"""Env speed: full-episode turns per second with the simulated student, against tictactoe_v3 random play.

Prints turns/s of PettingZoo's ``tictactoe_v3`` played at random (legal moves) and of the tutoring env in
``act`` mode (random dialogue acts) and ``text`` mode (tutor utterances drawn from a pool the built-in random
tutor wrote beforehand, so the tutor's own cost is not measured), all in this process, and the ratios.
Goals: act >= 0.5x tictactoe, text >= 0.25x. A "turn" is one ``env.step`` of a live agent.

    python benchmarks/env_speed.py [--seconds 1.5] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from pettingzoo.classic import tictactoe_v3

from agents.student import SimulatedStudent
from agents.tutor import make_tutor
from envs import tutoring_v0
from envs.seeding import derive_seed

PERSONAS = ("all_round_partly_wrong", "weak_knowledge_asks_for_hint", "low_motivation_correct_and_extends")


def tictactoe(seconds: float, first_seed: int = 0) -> float:
    env = tictactoe_v3.env()
    rng = np.random.default_rng(first_seed)
    turns, start, game = 0, time.perf_counter(), first_seed
    while time.perf_counter() - start < seconds:
        env.reset(seed=game)
        game += 1
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            turns += 1
    return turns / (time.perf_counter() - start)


def utterance_pool(n_episodes: int = 30) -> list[str]:
    tutor, pool = make_tutor("random"), []
    for seed in range(n_episodes):
        env = tutoring_v0.env(max_turns=8)
        env.reset(seed=seed)
        tutor.reset(seed=seed)
        student = SimulatedStudent(PERSONAS[seed % len(PERSONAS)])
        student.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = tutor.act(obs, info) if agent == "tutor" else student.act(obs, info)
            if agent == "tutor" and action:
                pool.append(action)
            env.step(action)
    return pool


def tutoring(mode: str, seconds: float, pool: list[str], first_seed: int = 0) -> float:
    rng = np.random.default_rng(first_seed)
    turns, start, episode = 0, time.perf_counter(), first_seed
    students = {p: SimulatedStudent(p) for p in PERSONAS}
    env = tutoring_v0.env(action_mode=mode, max_turns=8)  # one env, reset per episode (as tictactoe above)
    while time.perf_counter() - start < seconds:
        env.reset(seed=episode)
        student = students[PERSONAS[episode % len(PERSONAS)]]
        student.reset(seed=derive_seed(episode, "student"))
        space = env.action_space("tutor")
        space.seed(episode)
        episode += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            if agent == "student":
                action = student.act(obs, info)
            elif info["observe_only"]:
                action = ""
            elif mode == "act":
                action = space.sample()
            else:
                action = pool[int(rng.integers(len(pool)))]
            env.step(action)
            turns += 1
    return turns / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="wall time per measurement")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (the reported ratio is the median)")
    args = parser.parse_args()
    pool = utterance_pool()
    # Interleaved rounds: the machine's speed drifts (frequency, other load); each round measures the reference
    # and both modes back to back, and the median of the per-round ratios is reported.
    rows = []
    for k in range(args.rounds):
        first = 1_000_000 * (k + 1)  # fresh episodes every round: nothing is replayed from a warm cache
        ref = tictactoe(args.seconds, first)
        act = tutoring("act", args.seconds, pool, first)
        text = tutoring("text", args.seconds, pool, first)
        rows.append((ref, act, text))
        print(f"round: tictactoe {ref:8.0f}  act {act:8.0f} ({act / ref:.3f})  text {text:8.0f} ({text / ref:.3f})")
    ref = statistics.median(r[0] for r in rows)
    act_ratio = statistics.median(r[1] / r[0] for r in rows)
    text_ratio = statistics.median(r[2] / r[0] for r in rows)
    print(f"tictactoe_v3 random play : {ref:10.0f} turns/s (median)")
    print(f"tutoring_v0 act mode     : ratio {act_ratio:.3f} (median of {args.rounds} rounds; goal >= 0.5)")
    print(f"tutoring_v0 text mode    : ratio {text_ratio:.3f} (median of {args.rounds} rounds; goal >= 0.25)")


if __name__ == "__main__":
    main()
