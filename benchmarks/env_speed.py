"""Env speed: full-episode turns per second with the simulated student, against tictactoe_v3 random play.

Prints turns/s of PettingZoo's ``tictactoe_v3`` played at random (legal moves) and of the tutoring env in
``act`` mode (random dialogue acts) and ``text`` mode (tutor utterances drawn from a pool the built-in random
tutor wrote beforehand, so the tutor's own cost is not measured; and again from the pool the ``socratic`` tutor
wrote, whose content-rich turns are the content reader's real load), all in this process, and the ratios. The
tutoring episodes are played by the rollout engine (:func:`tutorzoo.envs.engine.play`, an env per episode, as every
entry point plays them); tictactoe's loop is PettingZoo's reference, not ours. Goals: act >= 0.5x tictactoe,
text >= 0.25x on socratic's utterances. A "turn" is one ``env.step`` of a live agent. Time is this process's CPU
time, for the reference and the env alike: on a shared machine wall time also counts other processes' time slices
(on our 2-core VM the act ratio of five back-to-back rounds spanned 0.35-0.56 in wall time, 0.41-0.46 in CPU
time). Within a round the measurements take turns in short slices, so a drift of the machine's speed (another
process on the other core) falls on all of them alike rather than on whichever ran during it.

    python benchmarks/env_speed.py [--seconds 1.5] [--rounds 5] [--slices 10]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np
from pettingzoo.classic import tictactoe_v3

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs import tutoring_v0
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.engine import play

PERSONAS = ("all_round_partly_wrong", "weak_knowledge_asks_for_hint", "low_motivation_correct_and_extends")


class _TicTacToe:
    """Random legal play of ``tictactoe_v3`` through PettingZoo's reference loop, measured in slices."""

    def __init__(self, first_seed: int = 0) -> None:
        self.env, self.rng, self.game = tictactoe_v3.env(), np.random.default_rng(first_seed), first_seed
        self.turns, self.seconds = 0, 0.0

    def run(self, seconds: float) -> None:
        env, rng = self.env, self.rng
        start = time.process_time()
        while time.process_time() - start < seconds:
            env.reset(seed=self.game)
            self.game += 1
            for _agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[rng.integers(len(legal))]))
                self.turns += 1
        self.seconds += time.process_time() - start

    @property
    def rate(self) -> float:
        return self.turns / self.seconds


def tictactoe(seconds: float, first_seed: int = 0) -> float:
    """Turns/s of random tictactoe_v3 play for ``seconds`` of CPU time."""
    ref = _TicTacToe(first_seed)
    ref.run(seconds)
    return ref.rate


class _PoolTutor:
    """Says utterances drawn from a pool (the tutor's own cost is not measured)."""

    def __init__(self, pool: list[str]) -> None:
        self.pool = pool
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict, info: dict) -> str:
        return self.pool[int(self.rng.integers(len(self.pool)))]


class _RandomActs:
    """Random dialogue acts from the act-mode action space."""

    def __init__(self) -> None:
        self.space = tutoring_v0.env(action_mode="act").action_space("tutor")

    def reset(self, seed: int | None = None) -> None:
        self.space.seed(seed)

    def act(self, observation: dict, info: dict) -> Any:
        return self.space.sample()


class _Said:
    """A built-in tutor (``random`` by default), keeping what it says."""

    def __init__(self, name: str = "random") -> None:
        self.tutor, self.said = make_tutor(name), []

    def reset(self, seed: int | None = None) -> None:
        self.tutor.reset(seed=seed)

    def act(self, observation: dict, info: dict) -> str:
        action = self.tutor.act(observation, info)
        if action:
            self.said.append(action)
        return action


class _Counted:
    """A student that counts its turns. The agents alternate, the student first and last, so an episode's live
    steps are twice the student's turns less one (no observer is attached: one that looks at the tutor's
    observe-only turns would make the env build observations nobody else reads)."""

    def __init__(self, student: SimulatedStudent) -> None:
        self.student, self.name, self.turns = student, student.name, 0
        self.reads_observation = student.reads_observation  # as the engine plays the student itself

    def reset(self, seed: int | None = None) -> None:
        self.student.reset(seed=seed)

    def act(self, observation: dict, info: dict) -> Any:
        self.turns += 1
        return self.student.act(observation, info)


def _spec(seed: int, mode: str | None = None) -> EpisodeSpec:
    protocol = {"max_turns": 8} if mode is None else {"max_turns": 8, "action_mode": mode}
    return EpisodeSpec(persona=PERSONAS[seed % len(PERSONAS)], seed=seed, protocol=protocol)


def utterance_pool(n_episodes: int = 30, tutor_name: str = "random") -> list[str]:
    tutor = _Said(tutor_name)
    play([_spec(seed) for seed in range(n_episodes)], tutor, SimulatedStudent)
    return tutor.said


class _Tutoring:
    """Whole episodes of the tutoring env played by the rollout engine (an env per episode, as every entry point
    plays), measured in slices."""

    def __init__(self, mode: str, pool: list[str], first_seed: int = 0) -> None:
        self.mode, self.episode, self.episodes, self.seconds = mode, first_seed, 0, 0.0
        self.students = {p: _Counted(SimulatedStudent(p)) for p in PERSONAS}
        self.tutor = _RandomActs() if mode == "act" else _PoolTutor(pool)

    def run(self, seconds: float) -> None:
        start = time.process_time()
        while time.process_time() - start < seconds:
            play([_spec(self.episode, self.mode)], self.tutor, self.students.__getitem__)
            self.episode += 1
            self.episodes += 1
        self.seconds += time.process_time() - start

    @property
    def rate(self) -> float:
        return (2 * sum(s.turns for s in self.students.values()) - self.episodes) / self.seconds


def tutoring(mode: str, seconds: float, pool: list[str], first_seed: int = 0) -> float:
    """Turns/s of whole tutoring episodes in ``mode`` for ``seconds`` of CPU time."""
    runner = _Tutoring(mode, pool, first_seed)
    runner.run(seconds)
    return runner.rate


def measure_round(seconds: float, pool: list[str], first_seed: int, slices: int = 10,
                  socratic: list[str] | None = None) -> tuple[float, ...]:
    """(tictactoe, act, text[, text on socratic's utterances]) turns/s, each given ``seconds`` of CPU time in
    ``slices`` interleaved slices: the machine's speed drifts (other load, frequency), and slices spread the drift
    over all alike."""
    runners = [_TicTacToe(first_seed), _Tutoring("act", pool, first_seed), _Tutoring("text", pool, first_seed)]
    if socratic is not None:
        runners.append(_Tutoring("text", socratic, first_seed))
    for _ in range(slices):
        for runner in runners:
            runner.run(seconds / slices)
    return tuple(r.rate for r in runners)


def _positive(kind: type):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be a positive {kind.__name__}, got {text!r}")
        return value
    return parse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=_positive(float), default=1.5, help="CPU seconds per measurement")
    parser.add_argument("--rounds", type=_positive(int), default=5, help="rounds (the reported ratio is the median)")
    parser.add_argument("--slices", type=_positive(int), default=10,
                        help="interleaved slices per round and measurement")
    args = parser.parse_args()
    pool = utterance_pool()
    socratic = utterance_pool(tutor_name="socratic")  # content-rich turns: the content reader's real load
    # Interleaved rounds: the machine's speed drifts (frequency, other load); each round measures the reference
    # and both modes in interleaved slices, and the median of the per-round ratios is reported.
    # A warm-up round first, not reported: the process-wide caches a long run keeps warm (templates, the
    # curriculum's compiled material, each family's propositions) start empty, for the reference's loop too.
    measure_round(args.seconds / 3, pool, 0, args.slices, socratic)
    rows = []
    for k in range(args.rounds):
        first = 1_000_000 * (k + 1)  # fresh episodes every round: nothing is replayed from a warm cache
        ref, act, text, soc = measure_round(args.seconds, pool, first, args.slices, socratic)
        rows.append((ref, act, text, soc))
        print(f"round: tictactoe {ref:8.0f}  act {act:8.0f} ({act / ref:.3f})  text {text:8.0f} ({text / ref:.3f})"
              f"  text/socratic {soc:8.0f} ({soc / ref:.3f})")
    ref = statistics.median(r[0] for r in rows)
    act_ratio, text_ratio, soc_ratio = (statistics.median(r[i] / r[0] for r in rows) for i in (1, 2, 3))
    print(f"tictactoe_v3 random play : {ref:10.0f} turns/s (median)")
    print(f"tutoring_v0 act mode     : ratio {act_ratio:.3f} (median of {args.rounds} rounds; goal >= 0.5)")
    print(f"tutoring_v0 text mode    : ratio {text_ratio:.3f} (median of {args.rounds} rounds; random's utterances)")
    print(f"  on socratic's utterances: ratio {soc_ratio:.3f} (median of {args.rounds} rounds; goal >= 0.25)")


if __name__ == "__main__":
    main()
