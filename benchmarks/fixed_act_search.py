"""Fixed scripts against the adaptive expert: every dialogue act played every turn (cycling the task's knowledge
components), against ``socratic``, per persona family.

A tutoring simulator whose best fixed act out-teaches the adaptive tutor rewards a script, not teaching. The
table lists, per family, socratic's gain and the best fixed acts' paired differences from it (± s.e.); the
last lines say whether any fixed act beats socratic by more than two standard errors anywhere.
``tests/agents/test_adaptivity.py`` asserts the same on a smaller grid.

    python benchmarks/fixed_act_search.py --seeds 6
    python benchmarks/fixed_act_search.py --ppo runs/train/ppo__default__0/policy.zip   # what PPO learned
"""

from __future__ import annotations

import argparse
import copy
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reward_validity import paired_map  # noqa: E402

from tutorzoo.agents.student import SimulatedStudent, load_personas  # noqa: E402
from tutorzoo.agents.student.model import copy_state, expected_score, respond  # noqa: E402
from tutorzoo.agents.tutor import make_tutor  # noqa: E402
from tutorzoo.agents.tutor.base import ActTutor  # noqa: E402
from tutorzoo.agents.tutor.builtin import _act  # noqa: E402
from tutorzoo.envs.act_text import verbalise_act  # noqa: E402
from tutorzoo.envs.acts import TutorAct  # noqa: E402
from tutorzoo.envs.annotate import AnnotationContext, Annotator, encourages  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.envs.labels import INTENTS, STRATEGIES  # noqa: E402
from tutorzoo.envs.reading.claims import with_reading  # noqa: E402
from tutorzoo.envs.reading.normalise import plain_text  # noqa: E402
from tutorzoo.envs.reading.reader import ContentReader  # noqa: E402
from tutorzoo.eval.rollout import run_episode  # noqa: E402


class FixedActTutor(ActTutor):
    """Plays one act (intent, strategy, level) every turn, cycling through the task's components."""

    def __init__(self, intent: str, strategy: str | None, level: str) -> None:
        super().__init__()
        self.intent, self.strategy, self.level = intent, strategy, level
        self.name = f"fixed:{intent}/{strategy}/{level}"

    def on_reset(self) -> None:
        self._n = 0

    def choose(self, observation: dict, info: dict, task):
        kcs = task.knowledge_components
        kc = kcs[self._n % len(kcs)]
        self._n += 1
        transfer = kc.links[0].discipline if (kc.links and self.intent == "trigger_transfer") else None
        return _act(self.intent, self.strategy, self.level, kc, task, transfer_to=transfer), None


class OracleTutor(ActTutor):
    """The upper reference: reads the simulated student's hidden state (its :class:`SimulatedStudent`, handed over)
    and plans each turn with the student model itself. Every candidate move (each move of :data:`PLAN_MOVES` on
    each component, and a counterexample to each misconception the student still holds) is spoken as the
    template tutor speaks it, annotated and read as the env reads it, and played :attr:`samples` times on copies
    of the student's state; the move whose copies end with the highest expected post-test score
    (:func:`~tutorzoo.agents.student.model.expected_score`, plus 0.02 x engagement: engagement scales all later
    learning) is said. The draws of the look-ahead are seeded by the turn, never the student's own generator:
    the oracle knows the model and the state, not the dice. Not a tutor anyone could be."""

    name = "oracle"
    samples = 4

    def __init__(self, student: SimulatedStudent) -> None:
        super().__init__()
        self.student = student

    def on_reset(self) -> None:
        self._reading: tuple | None = None

    def act(self, observation: dict, info: dict) -> str:
        if info.get("observe_only", False):
            return ""
        task, st = self._task_from(info), self.student.state
        if st is None or info["turn"] + 1 >= info["max_turns"]:
            return self.speak(_act("summarize", None, "L2", None, task, ends=True), task, None, info)
        if self._reading is None:  # the env's annotator and reader for the student's (full) task
            full = st.task
            self._reading = (Annotator.for_task(full), ContentReader.for_task(full),
                             AnnotationContext(focus_kc=full.knowledge_components[0].id))
        annotator, reader, ctx = self._reading
        # the student spoke last (the env's context records its turn's disciplines: here its component's)
        ctx.after_student((st.kcs[st.last_kc].discipline,) if st.last_kc in st.kcs else (st.task.disciplines[0],))
        best: tuple[float, str, np.random.Generator, TutorAct] | None = None
        for intent, strategy, level, kc, mid in self._candidates(task, st):
            transfer = kc.links[0].discipline if (kc.links and intent == "trigger_transfer") else None
            rng = copy.deepcopy(self._rng)
            text = verbalise_act(_act(intent, strategy, level, kc, task, misconception=mid, transfer_to=transfer),
                                 task, rng, misconception=mid)
            act = with_reading(annotator.annotate(text, ctx), reader.read(text))  # annotate only reads ctx
            plain = plain_text(text)
            chars, praise = len(" ".join(plain.split())), encourages(plain)
            value = 0.0
            for k in range(self.samples):
                ahead = copy_state(st)
                respond(ahead, act, np.random.default_rng([info["turn"], k]), chars=chars, praise=praise)
                value += self.value(ahead)
            if best is None or value > best[0]:
                best = (value, text, rng, act)
        assert best is not None
        _, text, self._rng, act = best
        ctx.after_tutor(act, text)
        return text

    @staticmethod
    def value(state) -> float:
        """The worth of a state the look-ahead reached: its expected post-test score, and a little for engagement."""
        return expected_score(state, state.task.posttest) + 0.02 * state.engagement

    @staticmethod
    def _candidates(task, st):
        for kc in task.knowledge_components:
            for intent, strategy, level in PLAN_MOVES:
                yield intent, strategy, level, kc, None
            for mid, status in st.status.items():
                if status != "repaired" and st.misconceptions[mid].kc == kc.id:
                    yield "introduce_concept", "scenario_question", "L1", kc, mid
                    yield "guide_reasoning", "scenario_question", "L2", kc, mid


# The oracle's moves on a component (with a counterexample to each held misconception): explanations, questions
# at three demands, scaffolds, a transfer and encouragement.
PLAN_MOVES = (
    ("introduce_concept", None, "L1"), ("introduce_concept", None, "L2"), ("introduce_concept", "encourage", "L1"),
    ("check_understanding", None, "L1"), ("check_understanding", "scenario_question", "L1"),
    ("check_understanding", "scenario_question", "L2"), ("guide_reasoning", "break_down", "L2"),
    ("guide_reasoning", "hint", "L2"), ("guide_reasoning", "break_down", "L3"),
    ("guide_reasoning", "follow_up_question", "L3"), ("trigger_transfer", None, "L3"),
)


def all_acts() -> list[tuple[str, str | None, str]]:
    """Every intent x strategy (and none) x level, except the closing summary."""
    intents = [i for i in INTENTS if i != "summarize"]
    return list(itertools.product(intents, [*STRATEGIES, None], ("L1", "L2", "L3")))


def family_specs(seeds: int, task_sets=("math", "stem"), per_family: int = 3) -> list[tuple[str, EpisodeSpec]]:
    personas = load_personas()
    by_family: dict[str, list[str]] = {}
    for name, p in sorted(personas.items()):
        by_family.setdefault(p.family, []).append(name)
    return [(fam, EpisodeSpec(task_set=ts, persona=name, seed=seed, protocol={"max_turns": 8}))
            for ts in task_sets for fam in sorted(by_family) for name in by_family[fam][:per_family]
            for seed in range(seeds)]


def _gain(job) -> float:
    spec, tutor_key = job
    student = SimulatedStudent(spec.persona)
    if tutor_key == "oracle":
        tutor = OracleTutor(student)
    else:
        tutor = make_tutor(tutor_key) if isinstance(tutor_key, str) else FixedActTutor(*tutor_key)
    return float(run_episode(spec, tutor, student, str(tutor_key))["learning_gain"] or 0.0)


def search(acts, specs, workers: int = 2, extra: tuple[str, ...] = ("socratic",)) -> dict:
    """``{tutor or act: gains over specs}`` for the ``extra`` tutors and every act, on the same specs."""
    return paired_map(_gain, [*extra, *acts], [s for _, s in specs], workers)


def ppo_acts(policy: str, specs) -> dict:
    """What a trained dialogue-act PPO policy plays on ``specs``: the share of its most frequent act, and its act
    distribution per persona family and per the student's last cognition state (does it look at the student?)."""
    import collections

    from tutorzoo.envs.spaces import decode_tutor_features
    from tutorzoo.train.ppo_acts import PPOTutor

    counts: collections.Counter = collections.Counter()
    by_family: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    by_state: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    gains = []
    for fam, spec in specs:
        tutor = PPOTutor(path=policy)
        chosen = []
        orig = tutor.choose

        def choose(observation, info, task, _orig=orig, _chosen=chosen):
            act, mis = _orig(observation, info, task)
            state = decode_tutor_features(observation["features"])["last_cognition_state"] or "none"
            _chosen.append(((act.intent, act.strategy, act.guidance_level), state))
            return act, mis

        tutor.choose = choose
        gains.append(run_episode(spec, tutor, SimulatedStudent(spec.persona), "ppo")["learning_gain"] or 0.0)
        for act, state in chosen:
            counts[act] += 1
            by_family[fam][act] += 1
            by_state[state][act] += 1
    total = sum(counts.values())
    top, n_top = counts.most_common(1)[0]
    return {"gain": float(np.mean(gains)), "turns": total, "top_act": top, "top_share": n_top / total,
            "distinct_acts": len(counts), "by_family": by_family, "by_state": by_state}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ppo", default=None, help="a trained policy.zip: report what it plays")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--per-family", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    specs = family_specs(args.seeds, per_family=args.per_family)
    if args.ppo:
        rep = ppo_acts(args.ppo, specs)
        soc = search([], specs, args.workers, extra=("socratic",))["socratic"].mean()
        print(f"PPO {args.ppo}: gain {rep['gain']:+.3f} ({rep['gain'] / soc:.0%} of socratic's {soc:+.3f}); "
              f"{rep['distinct_acts']} distinct acts; most frequent {'/'.join(map(str, rep['top_act']))} in "
              f"{rep['top_share']:.0%} of {rep['turns']} turns")
        for title, table in (("family", rep["by_family"]), ("student's last state", rep["by_state"])):
            for key, c in sorted(table.items()):
                n = sum(c.values())
                top = ", ".join(f"{'/'.join(map(str, a))} {k / n:.0%}" for a, k in c.most_common(3))
                print(f"  by {title} {key:22s} n={n:4d}: {top}")
        return
    acts = all_acts()
    res = search(acts, specs, args.workers, extra=("socratic", "lecturer", "random", "oracle"))
    fams = np.array([f for f, _ in specs])
    soc = res["socratic"]
    print(f"{len(acts)} fixed acts x {len(specs)} specs (math + stem); paired difference from socratic ± s.e.")
    overall = sorted(acts, key=lambda a: -res[a].mean())
    print(f"overall: socratic {soc.mean():+.3f}, lecturer {res['lecturer'].mean():+.3f}, "
          f"random {res['random'].mean():+.3f}, oracle (reads the hidden state) {res['oracle'].mean():+.3f}")
    for a in overall[:args.top]:
        d = res[a] - soc
        print(f"  {'/'.join(str(x) for x in a):48s} gain {res[a].mean():+.3f}  Δ {d.mean():+.3f} ± "
              f"{d.std(ddof=1) / np.sqrt(len(d)):.3f}")
    worst, oracle_worst = 0.0, float("inf")
    for fam in sorted(set(fams)):
        m = fams == fam
        best = max(acts, key=lambda a: res[a][m].mean())
        d = res[best][m] - soc[m]
        z = d.mean() / (d.std(ddof=1) / np.sqrt(m.sum()) + 1e-12)
        worst = max(worst, z)
        o = res["oracle"][m] - res[best][m]
        oz = o.mean() / (o.std(ddof=1) / np.sqrt(m.sum()) + 1e-12)
        oracle_worst = min(oracle_worst, oz)
        print(f"{fam:10s} n={m.sum():3d} socratic {soc[m].mean():+.3f}  best fixed {'/'.join(map(str, best))} "
              f"{res[best][m].mean():+.3f}  Δ {d.mean():+.3f} ({z:+.1f} s.e.)  oracle {res['oracle'][m].mean():+.3f}"
              f" ({o.mean():+.3f} over that act, {oz:+.1f} s.e.)")
    print(f"largest margin of a fixed act over socratic in any family: {worst:+.1f} s.e. "
          f"({'FAIL' if worst > 2 else 'ok'}: must not exceed +2)")
    print(f"smallest margin of the oracle over a family's best fixed act: {oracle_worst:+.1f} s.e. "
          f"({'ok' if oracle_worst > 2 else 'FAIL'}: must exceed +2)")


if __name__ == "__main__":
    main()
