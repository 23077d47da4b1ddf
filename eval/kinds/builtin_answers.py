"""How the built-in tutors answer the item-based benchmark suites (KMP-Dialogue, KMP-Skills, Dr.Academy).

The item suites (:mod:`tutorzoo.eval.kinds.kmp_dialogue`, :mod:`tutorzoo.eval.kinds.kmp_skills`,
:mod:`tutorzoo.eval.kinds.dr_academy`)
ask a tutor through its usual ``act(observation, info)``: ``info["messages"]`` is ``[system, user]`` (what a
model tutor reads) and ``info["item"]`` is the structured item. A built-in rule-based tutor
(:class:`tutorzoo.agents.tutor.base.ActTutor`) has no policy for an item, so
:func:`tutorzoo.eval.kinds.item_common.ask` hands the
item to :func:`answer_item` instead, which answers it the way each built-in tutor would (the benchmark's logic
lives here, with the kinds, not in the policy):

- ``socratic`` and ``lecturer`` are *rule-based references*: where a human expert would know the answer they
  use the curriculum's own solver and material (re-solve the stated problem, compare a shown solution with the
  correct one step by step, write a new problem with the family's generator, write questions from the lesson's
  knowledge components). They differ where their teaching styles differ: in a dialogue they take over the
  session with their own policy, and the lecturer writes lecture-style review questions while the socratic
  tutor uses the lesson's question bank.
- ``random`` answers at random in the right format (a number taken from the problem, a random verdict, step and
  misconception, a random family's problem, questions from a random lesson) — the floor of every metric.

Every answer is deterministic in the item (its ``key``), never in the calls made before it, so a unit's
answer does not depend on which other units share a batch. The reply formats are the ones the suites'
prompts ask for (``Answer: <value>``, ``Verdict:`` / ``First error step:`` / ``Reason:``, ``Problem:`` /
``Solution:`` / ``Answer:``, a JSON object of Bloom levels).

Example::

    from tutorzoo.agents.tutor import make_tutor
    tutor = make_tutor("socratic")
    item = {"kind": "followup_solve", "key": "demo", "task_id": "fraction_addition", "seed": 0, "turn": 0}
    answer_item(tutor, {}, {"item": item, "messages": []}).splitlines()[-1]   # 'Answer: 13/24'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from tutorzoo.envs.labels import BLOOM_LEVELS
from tutorzoo.envs.protocols import StopEpisode

__all__ = ["answer_item", "item_rng", "ITEM_KINDS"]

ITEM_KINDS: tuple[str, ...] = (
    "kmp_dialogue",
    "followup_solve",
    "error_detect",
    "error_correct",
    "problem_generation",
    "question_generation",
)


def item_rng(item: dict, salt: str = "") -> np.random.Generator:
    """A generator seeded by the item's key (and a salt): the same item always gets the same draws."""
    digest = hashlib.sha256(f"{item.get('key', '')}|{salt}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


Handler = Callable[[dict, str], str]


def _handlers(*answers: Handler) -> dict[str, Handler]:
    """``{item kind: answer(item, style)}`` for the one-reply kinds, in :data:`ITEM_KINDS` order (``kmp_dialogue``
    takes over a session instead)."""
    return dict(zip(ITEM_KINDS[1:], answers, strict=True))


def answer_item(tutor: Any, observation: dict, info: dict) -> str:
    """The reply of a built-in tutor (``tutor.name``: socratic, lecturer or random) to ``info["item"]``.

    A tutor class that is neither ``random`` nor ``lecturer`` answers like the socratic reference.
    """
    item = info["item"]
    kind = item.get("kind")
    style = getattr(tutor, "name", "socratic")
    if kind == "kmp_dialogue":
        return _dialogue_turn(tutor, item)
    handlers = _RANDOM if style == "random" else _EXPERT
    if kind not in handlers:
        raise ValueError(f"unknown item kind {kind!r}; known: {list(ITEM_KINDS)}")
    return handlers[kind](item, style)


# --- KMP-Dialogue: take over the reference session at the cut ---------------------------------------------


class _Takeover:
    """The reference tutor turns in order, then, at the cut, the tutor under test once; the episode stops there.

    It watches the episode (an :class:`tutorzoo.envs.engine.Observer`) to check the replayed dialogue against the unit's
    history before the tutor takes over."""

    def __init__(self, tutor: Any, item: dict) -> None:
        self.tutor = tutor
        self.item = item
        self.turns = list(item["replay"]["tutor_turns"])
        self.done = 0
        self.said: list[str] = []
        self.reply: str | None = None
        self.error: BaseException | None = None

    def reset(self, seed: int | None = None) -> None:
        """The reference turns need no seed; the tutor under test is reset at the cut."""

    def before_tutor(self, episode: Any, observation: dict, info: dict) -> None:
        self.said = [t["utterance"] for t in episode.env.unwrapped.transcript]

    def after_tutor(self, episode: Any, info: dict) -> None:
        """Nothing to do after a turn."""

    def act(self, observation: dict, info: dict) -> str:
        if self.done < len(self.turns):
            self.done += 1
            return self.turns[self.done - 1]
        try:
            replay = self.item["replay"]
            if "history" in replay and self.said != list(replay["history"]):
                raise RuntimeError("the replayed dialogue differs from the unit's history (a changed env, "
                                   "student or annotator since the units were made)")
            self.tutor.reset(seed=int(item_rng(self.item, "takeover").integers(2**31)))  # per unit, not per batch
            self.reply = self.tutor.act(observation, info)
        except Exception as exc:  # raised again by _dialogue_turn, as the unit's failure
            self.error = exc
        raise StopEpisode


def _dialogue_turn(tutor: Any, item: dict) -> str:
    """Replay the reference episode up to the cut (the reference tutor turns, the same simulated student with the
    same seed, through the rollout engine), then let the tutor act on the env's real observation with its own
    dialogue policy."""
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.envs.config import EpisodeSpec
    from tutorzoo.envs.engine import play
    from tutorzoo.envs.seeding import derive_seed

    replay = item["replay"]
    spec = EpisodeSpec.model_validate(replay["episode"])
    if replay["student_seed"] != derive_seed(spec.seed, "student"):
        raise ValueError(f"unit {item.get('key')!r}: student_seed {replay['student_seed']} is not the engine's "
                         f"seed of episode seed {spec.seed}; rebuild the units")
    takeover = _Takeover(tutor, item)
    play([spec], takeover, SimulatedStudent, observer=takeover, strict=True)
    if takeover.error is not None:
        raise takeover.error
    if takeover.reply is None:
        raise RuntimeError(f"the replayed episode ended after {takeover.done} tutor turns, before the cut at turn "
                           f"{len(takeover.turns) + 1}")
    return takeover.reply


# --- math instances (the curriculum's solver) --------------------------------------------------------------


def _solved(task_id: str, seed: int, level: str = "medium"):
    """The family's main problem drawn from ``seed``, solved (correct steps, answer, misconception solutions)."""
    from tutorzoo.envs.tasks.math import family

    fam = family(task_id)
    return fam, fam.main.solve(fam.main.draw(np.random.default_rng(seed), level), 0)


def _steps_text(steps: tuple[str, ...] | list[str]) -> str:
    return "\n".join(f"Step {i + 1}: {s}" for i, s in enumerate(steps))


def _followup_problem(task_id: str, seed: int, turn: int):
    from tutorzoo.envs.tasks.math import follow_ups, seed_problem

    if turn == 0:
        return seed_problem(task_id, np.random.default_rng(seed))
    return follow_ups(task_id, np.random.default_rng(seed))[turn - 1]


def _expert_solve(item: dict, style: str) -> str:
    p = _followup_problem(item["task_id"], int(item["seed"]), int(item["turn"]))
    return f"{_steps_text(p.solution)}\nAnswer: {p.answer}"


def _expert_detect(item: dict, style: str) -> str:
    """Compare the shown steps with the correct solution; name the misconception whose solution they follow."""
    fam, s = _solved(item["task_id"], int(item["seed"]))
    shown = list(item["steps"])
    first = next((i for i, (a, b) in enumerate(zip(shown, s.steps, strict=False)) if a != b), None)
    if first is None and len(shown) != len(s.steps):
        first = min(len(shown), len(s.steps))
    if first is None:
        return "I checked every step against my own solution.\nVerdict: correct"
    reason = next((m for m in fam.misconceptions if m in s.wrong and list(s.wrong[m][0]) == shown), None)
    why = reason if reason is not None else f"other: step {first + 1} does not follow from the previous steps"
    return (f"Step {first + 1} is where the solution goes wrong: it should read \"{s.steps[first]}\"\n"
            f"Verdict: incorrect\nFirst error step: {first + 1}\nReason: {why}")


def _expert_correct(item: dict, style: str) -> str:
    _, s = _solved(item["task_id"], int(item["seed"]))
    return f"Corrected solution:\n{_steps_text(s.steps)}\nAnswer: {s.answer}"


def _format_problem(statement: str, steps: tuple[str, ...], answer: str) -> str:
    return f"Problem: {statement}\nSolution:\n{_steps_text(steps)}\nAnswer: {answer}"


def _expert_generate(item: dict, style: str) -> str:
    from tutorzoo.envs.tasks.math import family, follow_ups

    rng = item_rng(item, "generate")
    if item["mode"] == "follow_up":
        # a harder problem that builds on the seed: the family's first follow-up of this very seed problem
        p = follow_ups(item["task_id"], np.random.default_rng(int(item["seed"])))[0]
        return _format_problem(p.statement, p.solution, p.answer)
    # a similar problem at the asked level, in the family's other context and phrasing (not a number swap)
    fam = family(item["task_id"])
    s = fam.main.solve(fam.main.draw(rng, item["level"]), 1)
    return _format_problem(s.stem, s.steps, s.answer)


# --- Dr.Academy: questions at the six Bloom levels from a lesson's material --------------------------------


def _lesson(item: dict):
    from tutorzoo.envs.tasks import get_task_set

    return get_task_set(item["task_set"]).build(item["task_id"], np.random.default_rng(0))


def _context_kcs(item: dict, task) -> list:
    """The knowledge components the context is about (both ends of an interdisciplinary link)."""
    ids = item.get("kcs") or [k.id for k in task.knowledge_components]
    return [task.kc(k) for k in ids]


_LECTURE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "remember": ("What is meant by {name}?", "State the key fact about {name}.", "Define {name} in one sentence."),
    "understand": ("Explain in your own words: {explanation}", "Why does {name} matter in this lesson?",
                   "Summarise what {name} says."),
    "apply": ("Use {name} to explain this situation: {context}", "Apply {name} to a new example of your choice.",
              "How would you use {name} to solve: {statement}"),
    "analyze": ("Compare {name} with {other}: how are they connected?", "Which parts of the problem depend on {name}?",
                "What evidence in the lesson supports {name}?"),
    "evaluate": ("Judge this claim and justify your answer: {belief}", "Is {name} always true? Argue your answer.",
                 "Which design choice in the lesson is best supported by {name}, and why?"),
    "create": ("Design an experiment that tests {name}.", "Invent a real-world problem that needs {name} and {other}.",
               "Propose an improvement to the lesson's project using {name}."),
}


def _lecture_question(level: str, i: int, kcs: list, task) -> str:
    kc = kcs[i % len(kcs)]
    other = kcs[(i + 1) % len(kcs)]
    beliefs = [m.belief for m in task.misconceptions if m.kc == kc.id] or [kc.explanation]
    return _LECTURE_TEMPLATES[level][i % 3].format(
        name=kc.name, other=other.name, explanation=kc.explanation.split(". ")[0].rstrip("."),
        context=(kc.contexts or (task.statement,))[0].rstrip("."), statement=task.statement.split("?")[0] + "?",
        belief=beliefs[0].rstrip("."),
    )


def _expert_questions(item: dict, style: str) -> str:
    """Three questions per Bloom level: the socratic tutor takes the lesson's bank questions of that level first
    (each KC's questions carry a Bloom label) and fills the rest with lecture templates; the lecturer writes
    lecture-style review questions from the same material."""
    task = _lesson(item)
    kcs = _context_kcs(item, task)
    out: dict[str, list[str]] = {}
    for level in BLOOM_LEVELS:
        picked: list[str] = []
        if style != "lecturer":
            picked = [q.text for k in kcs for q in k.questions if q.bloom == level][:3]
        i = 0
        while len(picked) < 3:
            q = _lecture_question(level, i, kcs, task)
            if q not in picked:
                picked.append(q)
            i += 1
        out[level] = picked
    return json.dumps(out, ensure_ascii=False)


_EXPERT = _handlers(_expert_solve, _expert_detect, _expert_correct, _expert_generate, _expert_questions)


# --- random ------------------------------------------------------------------------------------------------


def _numbers_in(text: str) -> list[str]:
    from tutorzoo.envs.grading import number_mentions

    return [m.text for m in number_mentions(text)] or ["0"]


def _random_solve(item: dict, style: str) -> str:
    rng = item_rng(item, "solve")
    numbers = _numbers_in(item.get("problem", ""))
    return f"I will guess.\nAnswer: {numbers[int(rng.integers(len(numbers)))]}"


def _random_detect(item: dict, style: str) -> str:
    rng = item_rng(item, "detect")
    if rng.random() < 0.5:
        return "Verdict: correct"
    steps = len(item.get("steps", ())) or 1
    ids = [m["id"] for m in item.get("misconceptions", ())] or ["other: a guess"]
    return (f"Verdict: incorrect\nFirst error step: {int(rng.integers(steps)) + 1}\n"
            f"Reason: {ids[int(rng.integers(len(ids)))]}")


def _random_correct(item: dict, style: str) -> str:
    rng = item_rng(item, "correct")
    steps = list(item.get("steps", ()))
    numbers = _numbers_in(" ".join(steps) or item.get("problem", ""))
    return f"{_steps_text(steps)}\nAnswer: {numbers[int(rng.integers(len(numbers)))]}"


def _random_generate(item: dict, style: str) -> str:
    from tutorzoo.envs.tasks.math import FAMILIES, LEVELS, similar

    rng = item_rng(item, "generate")
    fam = FAMILIES[int(rng.integers(len(FAMILIES)))]
    p = similar(fam.id, LEVELS[int(rng.integers(len(LEVELS)))], rng)
    return _format_problem(p.statement, p.solution, p.answer)


def _random_questions(item: dict, style: str) -> str:
    from tutorzoo.envs.tasks import get_task_set

    rng = item_rng(item, "questions")
    lessons = get_task_set("stem")
    pool = [q.text for tid in lessons.task_ids() for k in lessons.build(tid, rng).knowledge_components
            for q in k.questions]
    out = {level: [pool[int(rng.integers(len(pool)))] for _ in range(3)] for level in BLOOM_LEVELS}
    return json.dumps(out, ensure_ascii=False)


_RANDOM = _handlers(_random_solve, _random_detect, _random_correct, _random_generate, _random_questions)
