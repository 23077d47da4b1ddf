"""Reward validity: every probe of ``agents/tutor/probes.py`` against ``socratic`` on paired episodes.

Every tutor plays the same specs (math + stem, personas of the four families, 8 tutor turns, default reward);
the table gives, per tutor, the mean isomorphic learning gain and reward, and the paired difference from
socratic with its standard error. ``tests/rewards/test_reward_validity.py`` asserts the margins on a smaller sample.

    python benchmarks/reward_validity.py --seeds 8
    python benchmarks/reward_validity.py --seeds 6 --per-family 2 --first-seed 10   # a fresh sample of seeds
    python benchmarks/reward_validity.py --every-math-family --seeds 2 --per-family 1   # all 15 math families
    python benchmarks/reward_validity.py --tutors random my_tutors:MyTutor   # your own tutor (an import path)
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutorzoo.agents.student import SimulatedStudent, load_personas  # noqa: E402
from tutorzoo.agents.tutor import make_tutor  # noqa: E402
from tutorzoo.agents.tutor.probes import PROBES, PosttestTeacher  # noqa: E402
from tutorzoo.envs import tutoring_v0  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.envs.errors import ConfigError  # noqa: E402
from tutorzoo.eval.rollout import run_episode  # noqa: E402
from tutorzoo.rewards.rubric import load_rubric  # noqa: E402

BUILTIN = ("socratic", "lecturer", "random")


def specs(seeds: int, task_sets: tuple[str, ...] = ("math", "stem"), per_family: int = 2,
          first_seed: int = 0) -> list[EpisodeSpec]:
    """Paired specs: per task set, ``per_family`` personas of each family, seeds first_seed..first_seed+seeds-1."""
    personas = load_personas()
    by_family: dict[str, list[str]] = {}
    for name, p in sorted(personas.items()):
        by_family.setdefault(p.family, []).append(name)
    out = []
    for ts in task_sets:
        for fam in sorted(by_family):
            for name in by_family[fam][:per_family]:
                for seed in range(first_seed, first_seed + seeds):
                    out.append(EpisodeSpec(task_set=ts, persona=name, seed=seed, protocol={"max_turns": 8}))
    return out


def every_math_family(seeds: int, per_family: int = 1) -> list[EpisodeSpec]:
    """Paired specs on each of the math curriculum's families in turn (the drawn specs of :func:`specs` meet only
    the families their seeds draw): ``per_family`` personas of each persona family, seeds 0..seeds-1."""
    from tutorzoo.envs.tasks.math.taskset import MathTaskSet

    drawn = specs(seeds, ("math",), per_family)
    return [EpisodeSpec(task_set="math", task_id=task_id, persona=s.persona, seed=s.seed, protocol=s.protocol)
            for task_id in MathTaskSet().task_ids() for s in drawn]


def make(name: str):
    return PROBES[name]() if name in PROBES else make_tutor(name)


def play(spec: EpisodeSpec, name: str) -> dict:
    """One episode of ``name`` on ``spec`` (the post-test probe is handed the spec's hidden post-test)."""
    tutor = make(name)
    if isinstance(tutor, PosttestTeacher):
        env = tutoring_v0.env(**spec.env_kwargs())
        env.reset(seed=spec.seed)
        items = list(env.unwrapped.task.posttest)
        env.close()
        tutor.act = (lambda orig: (lambda obs, info: orig(obs, {**info, "_posttest_items": items})))(tutor.act)
    return run_episode(spec, tutor, SimulatedStudent(spec.persona), name, reward=load_rubric("default"))


def _row(job: tuple[EpisodeSpec, str]) -> tuple[float, float]:
    spec, name = job
    rec = play(spec, name)
    return float(rec["learning_gain"] or 0.0), float(rec["reward"])


def paired_map(play_one, tutors: list, spec_list: list[EpisodeSpec], workers: int = 2) -> dict:
    """``{tutor: array over spec_list}`` of ``play_one((spec, tutor))``: every tutor on the same specs, in a pool
    of ``workers`` processes (``play_one`` must be a module-level function)."""
    jobs = [(s, t) for t in tutors for s in spec_list]
    if workers > 1:
        with mp.Pool(workers) as pool:
            rows = pool.map(play_one, jobs, chunksize=16)
    else:
        rows = [play_one(j) for j in jobs]
    n = len(spec_list)
    return {t: np.array(rows[i * n:(i + 1) * n]) for i, t in enumerate(tutors)}


def measure(tutors: list[str], spec_list: list[EpisodeSpec], workers: int = 2) -> dict[str, np.ndarray]:
    """``{tutor: array (n_specs, 2)}`` of (gain, reward) on the same specs."""
    return paired_map(_row, tutors, spec_list, workers)


def paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    d = a - b
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--per-family", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="the first seed (a fresh sample: seeds the tests' samples do not use)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--task-set", action="append", default=None)
    parser.add_argument("--tutors", nargs="+", default=None,
                        help="tutors to play besides socratic (default: the built-ins and every probe)")
    parser.add_argument("--every-math-family", action="store_true",
                        help="play each math family in turn (math only) instead of the families the seeds draw")
    args = parser.parse_args()
    if args.every_math_family and args.task_set:
        parser.error("--every-math-family plays the math families only; drop --task-set")
    if args.every_math_family and args.first_seed:
        parser.error("--every-math-family plays seeds from 0; drop --first-seed")
    if args.every_math_family:
        spec_list = every_math_family(args.seeds, args.per_family)
    else:
        spec_list = specs(args.seeds, tuple(args.task_set or ("math", "stem")), args.per_family, args.first_seed)
    unknown = [t for t in args.tutors or () if t not in PROBES and t not in BUILTIN and ":" not in t]
    if unknown:
        parser.error(f"unknown tutors {unknown}; choose from {sorted(BUILTIN) + sorted(PROBES)}, or give an import "
                     "path package.module:ClassName")
    for t in args.tutors or ():
        if ":" in t and t not in BUILTIN:
            try:
                make(t)
            except ConfigError as exc:
                parser.error(str(exc))
    tutors = ["socratic", *(t for t in args.tutors if t != "socratic")] if args.tutors else \
        list(BUILTIN) + list(PROBES)
    res = measure(tutors, spec_list, args.workers)
    print(f"{len(spec_list)} paired specs per tutor; difference from socratic ± paired s.e.")
    print(table(res, spec_list))
    if "random" in res:
        print("\nthe teaching controls against random (gain difference ± paired s.e.)")
        controls = [t for t in ("probe_explain_ask", "probe_socratic_chat") if t in res]
        controls += [t for t in res if ":" in t]  # a user's own tutors
        print(against(res, spec_list, "random", controls))


def against(res: dict[str, np.ndarray], spec_list: list[EpisodeSpec], reference: str, tutors: list[str]) -> str:
    """Per tutor, its paired gain difference from ``reference`` overall and in each task set."""
    sets = sorted({s.task_set for s in spec_list})
    lines = [f"{'tutor':28s} {'Δgain':>16s}" + "".join(f" {'Δgain ' + ts:>16s}" for ts in sets)]
    for t in tutors:
        cells = []
        for mask in [np.ones(len(spec_list), bool)] + [np.array([s.task_set == ts for s in spec_list]) for ts in sets]:
            d, se = paired(res[t][mask, 0], res[reference][mask, 0]) if mask.sum() > 1 else (float("nan"),) * 2
            cells.append(f" {d:+8.3f} ± {se:5.3f}")
        lines.append(f"{t:28s}" + "".join(cells))
    return "\n".join(lines)


def table(res: dict[str, np.ndarray], spec_list: list[EpisodeSpec]) -> str:
    """The paired table: per tutor, mean gain and reward, their paired difference from socratic (± s.e.), the gain
    as a share of socratic's, and the gain difference in each task set."""
    base = res["socratic"]
    sets = sorted({s.task_set for s in spec_list})
    cols = "".join(f" {'Δgain ' + ts:>16s}" for ts in sets)
    lines = [f"{'tutor':28s} {'gain':>7s} {'reward':>7s} {'Δgain':>16s} {'Δreward':>16s} {'gain/soc':>8s}{cols}"]
    for t, arr in res.items():
        g, r = arr[:, 0], arr[:, 1]
        dg, sg = paired(g, base[:, 0])
        dr, sr = paired(r, base[:, 1])
        ratio = g.mean() / base[:, 0].mean() if base[:, 0].mean() else float("nan")
        per = ""
        for ts in sets:
            mask = np.array([s.task_set == ts for s in spec_list])
            d, se = paired(g[mask], base[mask, 0]) if mask.sum() > 1 else (float("nan"), float("nan"))
            per += f" {d:+8.3f} ± {se:5.3f}"
        lines.append(f"{t:28s} {g.mean():+7.3f} {r.mean():+7.3f} {dg:+8.3f} ± {sg:5.3f} {dr:+8.3f} ± {sr:5.3f} "
                     f"{ratio:8.2f}{per}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
