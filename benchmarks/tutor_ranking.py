"""The built-in tutors' isomorphic learning gain per persona family, with paired differences.

Every tutor plays the same episodes (every persona x seeds 0..N-1 on one task set, 8 tutor turns); the table
gives each tutor's mean gain with its standard error and the paired differences socratic - lecturer and
lecturer - random. Episodes of one seed share a task, so the standard errors are optimistic for families
with many similar personas. ``tests/eval/test_ranking.py`` asserts the ordering on the math curriculum.

    python benchmarks/tutor_ranking.py --task-set math --seeds 40
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing as mp

import numpy as np

from tutorzoo.agents.student import SimulatedStudent, load_personas
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.eval.rollout import run_episode

TUTORS = ("socratic", "lecturer", "random")


def _gains(job: tuple[str, str, int]) -> tuple[str, list[float]]:
    task_set, persona, seed = job
    spec = EpisodeSpec(task_set=task_set, persona=persona, seed=seed, protocol={"max_turns": 8})
    return persona, [run_episode(spec, make_tutor(t), SimulatedStudent(persona), t)["learning_gain"] for t in TUTORS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task-set", default="math")
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    personas = load_personas()
    jobs = [(args.task_set, name, seed) for name in personas for seed in range(args.seeds)]
    with mp.Pool(args.workers) as pool:
        results = pool.map(_gains, jobs, chunksize=8)
    by_family: dict[str, list[list[float]]] = collections.defaultdict(list)
    for persona, gains in results:
        by_family[personas[persona].family].append(gains)
    print(f"task set {args.task_set}, seeds 0..{args.seeds - 1}: mean isomorphic learning gain ± s.e.")
    for family, rows in sorted(by_family.items()):
        a = np.array(rows)
        mean, se = a.mean(0), a.std(0) / np.sqrt(len(a))
        cells = "  ".join(f"{t} {mean[i]:+.3f}±{se[i]:.3f}" for i, t in enumerate(TUTORS))
        d1, d2 = a[:, 0] - a[:, 1], a[:, 1] - a[:, 2]
        print(f"{family:10s} n={len(a):4d}  {cells}  | s-l {d1.mean():+.3f}±{d1.std() / np.sqrt(len(a)):.3f}"
              f"  l-r {d2.mean():+.3f}±{d2.std() / np.sqrt(len(a)):.3f}")


if __name__ == "__main__":
    main()
