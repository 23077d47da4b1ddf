"""KMP-Skills on the math curriculum's own generated items (suite ``kmp-skills``; docs/spec.md §5).

Three skills, each a kind of unit (``skill``), all built from the procedural math families
(:mod:`tutorzoo.envs.tasks.math`: seed problems, harder follow-ups, similar problems, solutions with one injected error,
exact answer checkers):

**(a) Multi-turn follow-up solving** (``skill="followup"``): the family's seed problem, then its two harder
follow-ups, in one conversation (each reply is the context of the next question). Every reply must end with
the line ``Answer: <number>``; the value on that line is checked exactly against the key
(:func:`tutorzoo.envs.grading.equivalent`: ``0.75`` = ``3/4``). A reply without a parsable ``Answer:`` line is wrong and
counted as a format failure. Metrics ``followup_acc_t1..t3``: accuracy per turn (the keys assume the right
previous answer, as the follow-ups' own solutions do).

**(b) Error detection and correction** (``skill="error"``, ``variant`` ``correct`` or ``erroneous``): a
step-by-step solution of the family's problem, either correct or with one injected error (a named
misconception applied at one step, the later steps following from it). Turn 1 asks for ``Verdict: correct |
incorrect``, ``First error step: <n>`` and ``Reason: <misconception id> | other: <sentence>`` — the prompt lists
the family's named misconceptions with their ids. Turn 2 asks for the corrected solution ending in ``Answer:``.

- ``detection_F1``: F1 of "the solution has an error" (the detection task's positive class);
  ``detection_MCC``: Matthews correlation of the verdicts (symmetric in the classes; SPEC's "solution correct"
  positive class gives the same value). A verdict we cannot parse counts as the wrong verdict (fail closed).
- ``Acc_step``: first error step right / erroneous solutions. ``Acc_reason``: step *and* reason right /
  erroneous solutions. **Reason checkability (our decision):** a reason that names one of the listed
  misconception ids is checked exactly (it must be the injected one); any other reason (``other: ...``) is
  free text and is judged by the ``kmp_error_reason`` rubric — only when the step is right, since Acc_reason
  needs both. Without a judge, a group with free-text reasons gets ``Acc_reason`` / ``MR_Score`` "not
  computed" (never guessed); a group whose reasons are all ids (the built-in tutors) is computed offline.
- ``MR_Score`` = 0.2·max(0, MCC) + 0.3·Acc_step + 0.5·Acc_reason (MR-GSM8K, as KMP uses it).
- ``correction_acc``: the corrected final answer is right (exact checker), over every error unit (a correct
  solution must keep its right answer).

**(c) Problem generation** (``skill="generation"``, ``variant`` ``follow_up`` / ``easy`` / ``medium`` /
``hard``): given the seed problem and solution, write a harder follow-up or a similar problem at a level, with
its solution, as ``Problem:`` / ``Solution:`` / ``Answer: <number>``. Exact checks (no judge):
``gen_format_ok`` (the three parts present, the answer one number) and ``gen_valid`` (format ok and not a
near copy of the seed: difflib ratio < 0.9, the KMP paper's LCS filter). Judged, fail by default, by the
``kmp_problem_generation`` rubric on four binary criteria (construction, solution_correctness,
solution_quality, appropriateness — similarity at the asked level for similar problems, a harder problem that
builds on the seed for follow-ups): ``gen_pass_rate`` (mean over units of the share of passed criteria) and
one pass rate per criterion — "not computed" without a judge.

This module holds the units, prompts, reply parsing and grading; the metric formulas and the per-tutor summaries
are in :mod:`tutorzoo.eval.kinds.kmp_skills_metrics` (re-exported here).

Suite settings (``items:`` in the suite file)::

    items: {tasks: all, seeds: 2, followup: true, error_detection: true,
            generation: [follow_up, easy, medium, hard]}

Example::

    from tutorzoo.eval.kinds.kmp_skills import KmpSkillsKind
    kind = KmpSkillsKind()
    units = kind.units(load_suite("kmp-skills"))
    records = list(kind.run(units[:4], make_tutor("socratic"), "socratic", judge=None, batch_size=1))
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tutorzoo.eval.kinds.item_common import (
    ItemKind,
    Reply,
    Request,
    ask,
    format_failure,
    is_correct,
    judge_failure,
    judge_many,
    last_field,
    parse_answer_line,
    passed,
    tutor_failure,
    unit_seed,
)
from tutorzoo.eval.kinds.kmp_skills_metrics import GEN_CRITERIA, f1_score, group_metrics, mcc, metric_specs, mr_score

__all__ = [  # the metric formulas live in eval/kinds/kmp_skills_metrics.py; importable from here as before
    "GEN_CRITERIA",
    "GEN_VARIANTS",
    "KmpSkillsKind",
    "SkillsSettings",
    "SkillsUnit",
    "chain",
    "error_instance",
    "f1_score",
    "mcc",
    "mr_score",
    "parse_detection",
    "parse_generated",
]

Skill = Literal["followup", "error", "generation"]
GEN_VARIANTS: tuple[str, ...] = ("follow_up", "easy", "medium", "hard")
REASON_RUBRIC = "kmp_error_reason"
GENERATION_RUBRIC = "kmp_problem_generation"
SIMILARITY_LIMIT = 0.9

SYSTEM_SOLVE = (
    "You are an expert K-8 math tutor. Solve each problem step by step. End every reply with one final line of "
    "exactly this form:\nAnswer: <number>\n(a whole number, decimal, negative number or fraction such as 3/4; no "
    "units and no words on that line)."
)
SYSTEM_CHECK = (
    "You are an expert K-8 math tutor checking a student's worked solution. Be precise: find the first step "
    "that is wrong, if any, and say why."
)
SYSTEM_GENERATE = (
    "You are an expert K-8 math teacher who writes practice problems with complete, correct solutions."
)
DETECT_FORMAT = (
    "End your reply with these lines:\n"
    "Verdict: correct   (or: Verdict: incorrect)\n"
    "First error step: <step number>   (only if incorrect)\n"
    "Reason: <the id of the misconception above that explains the error, or: other: <one sentence>>   "
    "(only if incorrect)"
)
CORRECT_PROMPT = (
    "Now write the fully corrected solution, step by step (if the solution was correct, restate it), and end "
    "with one final line of the form:\nAnswer: <number>"
)
GENERATE_FORMAT = (
    "Use exactly this format:\nProblem: <the new problem>\nSolution:\nStep 1: ...\nStep 2: ...\nAnswer: <number>"
)


class SkillsSettings(BaseModel):
    """The ``items:`` block of a kmp_skills suite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: Literal["all"] | list[str] = Field(default="all", description="'all' or a list of math family ids.")
    seeds: int | list[int] = Field(default=2, description="A count (0..n-1) or explicit instance seeds.")
    followup: bool = Field(default=True, description="Multi-turn follow-up solving units.")
    error_detection: bool = Field(default=True, description="Error detection/correction units (correct + erroneous).")
    generation: list[Literal["follow_up", "easy", "medium", "hard"]] = Field(
        default_factory=lambda: list(GEN_VARIANTS), description="Problem-generation units to make per instance.")


class SkillsUnit(BaseModel):
    """One KMP-Skills unit: a skill on one generated instance of a math family."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill: Skill
    task_id: str
    seed: int = Field(ge=0)
    variant: str

    def key(self) -> str:
        return f"kmp_skills/{self.skill}/{self.task_id}/{self.seed}/{self.variant}"


# --- the instances (the curriculum's generators) -----------------------------------------------------------


def chain(task_id: str, seed: int):
    """The seed problem and its two follow-ups (``tutorzoo.envs.tasks.math`` generators, one rng state)."""
    from tutorzoo.envs.tasks.math import follow_ups, seed_problem

    return (seed_problem(task_id, np.random.default_rng(seed)), *follow_ups(task_id, np.random.default_rng(seed)))


def error_instance(task_id: str, seed: int, variant: str) -> dict[str, Any]:
    """The shown solution of an error unit: the problem, its steps and final answer, the correct answer, the
    first wrong step (0-based, None for a correct solution), the injected misconception and the catalogue.

    The erroneous variant draws exactly as :func:`tutorzoo.envs.tasks.math.erroneous_solution` with
    ``default_rng(seed)``
    (same problem, same misconception, same step), keeping the misconception id that function does not return.
    """
    from tutorzoo.envs.tasks.math import family

    fam = family(task_id)
    rng = np.random.default_rng(seed)
    params = fam.main.draw(rng)
    s = fam.main.solve(params, 0)
    catalogue = _catalogue(fam, fam.fields(params))
    if variant == "correct":
        return {"problem": s.stem, "steps": list(s.steps), "shown_answer": s.answer, "answer": s.answer,
                "first_wrong": None, "misconception": None, "catalogue": catalogue}
    applicable = [m for m in fam.misconceptions if m in s.wrong]
    mis = applicable[int(rng.integers(len(applicable)))]
    steps, wrong_answer = s.wrong[mis]
    return {"problem": s.stem, "steps": list(steps), "shown_answer": wrong_answer, "answer": s.answer,
            "first_wrong": s.first_wrong_step(mis), "misconception": mis, "catalogue": catalogue,
            "correct_step": s.steps[s.first_wrong_step(mis)] if s.first_wrong_step(mis) < len(s.steps) else ""}


def _catalogue(fam, fields: dict[str, str]) -> list[dict[str, str]]:
    """The family's named misconceptions (id and belief, filled with the instance's numbers)."""
    from tutorzoo.envs.tasks.math.material import fill, load_material

    material = load_material()
    return [{"id": m, "belief": fill(material.misconceptions[m]["belief"], fields, m)} for m in fam.misconceptions]


def _task_view(task_id: str, seed: int) -> dict[str, Any]:
    """The family's public task view on *another* instance (the unit's own answers must not be in it)."""
    from tutorzoo.envs.tasks import get_task_set

    view_seed = int.from_bytes(hashlib.sha256(f"view|{task_id}|{seed}".encode()).digest()[:4], "little")
    return get_task_set("math").build(task_id, np.random.default_rng(view_seed)).public_view()


def _numbered(steps: Sequence[str]) -> str:
    return "\n".join(f"Step {i + 1}: {s}" for i, s in enumerate(steps))




# --- reply parsing -----------------------------------------------------------------------------------------


def parse_detection(text: str | None, n_steps: int, ids: Sequence[str]) -> dict[str, Any]:
    """Turn-1 reply -> ``{"verdict": "correct"|"incorrect"|None, "step": int|None (1-based), "reason_id": str|None,
    "reason_text": str|None, "format_error": str|None}``."""
    out: dict[str, Any] = {"verdict": None, "step": None, "reason_id": None, "reason_text": None, "format_error": None}
    if text is None:
        out["format_error"] = "no reply"
        return out
    verdict = (last_field(text, "verdict") or "").strip(" .`'\"").lower()
    if verdict not in ("correct", "incorrect"):
        out["format_error"] = 'no line "Verdict: correct" or "Verdict: incorrect"'
        return out
    out["verdict"] = verdict
    if verdict == "correct":
        return out
    step = (last_field(text, "first error step") or "").strip(" .`'\"")
    digits = step.lower().removeprefix("step").strip()
    if digits.isdigit() and 1 <= int(digits) <= n_steps:
        out["step"] = int(digits)
    else:
        out["format_error"] = f'no valid line "First error step: <1..{n_steps}>" (got {step[:40]!r})'
    reason = (last_field(text, "reason") or "").strip(" .`'\"")
    if reason.lower() in {i.lower() for i in ids}:
        out["reason_id"] = next(i for i in ids if i.lower() == reason.lower())
    elif reason:
        out["reason_text"] = reason.removeprefix("other:").removeprefix("Other:").strip() or reason
    elif out["format_error"] is None:
        out["format_error"] = 'no line "Reason: ..."'
    return out


def parse_generated(text: str | None) -> dict[str, Any]:
    """A generated problem -> ``{"problem", "solution", "answer", "format_error"}`` (None where missing)."""
    out: dict[str, Any] = {"problem": None, "solution": None, "answer": None, "format_error": None}
    if text is None:
        out["format_error"] = "no reply"
        return out
    low = text.lower()
    p_at, s_at = low.find("problem:"), low.find("solution:")
    if p_at < 0 or s_at < 0 or s_at < p_at:
        out["format_error"] = 'no "Problem:" followed by "Solution:"'
        return out
    problem = text[p_at + len("problem:") : s_at].strip(" \n*_")
    answer, why = parse_answer_line(text)
    a_at = low.rfind("answer:")
    solution = text[s_at + len("solution:") : a_at if a_at > s_at else len(text)].strip(" \n*_")
    out.update(problem=problem or None, solution=solution or None, answer=answer)
    if not problem or not solution:
        out["format_error"] = "an empty problem or solution"
    elif why is not None:
        out["format_error"] = why
    return out


# --- the kind ----------------------------------------------------------------------------------------------


class KmpSkillsKind(ItemKind):
    """The ``kmp_skills`` suite kind (see the module docstring)."""

    name = "kmp_skills"
    rubrics = (GENERATION_RUBRIC, REASON_RUBRIC)
    rank_metric = "followup_acc_t3"
    columns = (
        ("followup_acc_t1", "FU t1 %", 100.0),
        ("followup_acc_t3", "FU t3 %", 100.0),
        ("detection_F1", "Det F1", 100.0),
        ("correction_acc", "Corr %", 100.0),
        ("MR_Score", "MR-Score", 100.0),
        ("gen_valid", "Gen ok %", 100.0),
        ("gen_pass_rate", "Gen pass %", 100.0),
    )
    legend = (
        "FU: follow-up solving accuracy at turns 1 and 3; Det F1: error-detection F1; Corr: corrected final "
        "answer right; MR-Score = 0.2 max(0,MCC) + 0.3 Acc_step + 0.5 Acc_reason; Gen ok: generated problem in "
        "format and not a copy; Gen pass: judged pass rate (needs --judge). All x100."
    )
    settings_model = SkillsSettings
    unit_model = SkillsUnit

    # ---------------------------------------------------------------- units

    def units(self, suite: Any) -> list[SkillsUnit]:
        s, ids, seeds = self.families_and_seeds(suite)
        out: list[SkillsUnit] = []
        for task_id in ids:
            for seed in seeds:
                if s.followup:
                    out.append(SkillsUnit(skill="followup", task_id=task_id, seed=seed, variant="chain"))
                if s.error_detection:
                    out += [SkillsUnit(skill="error", task_id=task_id, seed=seed, variant=v)
                            for v in ("correct", "erroneous")]
                out += [SkillsUnit(skill="generation", task_id=task_id, seed=seed, variant=v) for v in s.generation]
        return out

    # ---------------------------------------------------------------- run
    def run(self, units: Sequence[SkillsUnit], tutor: Any, tutor_name: str, judge: Any,
            batch_size: int = 1) -> Iterator[dict]:
        size = max(1, int(batch_size))
        for start in range(0, len(units), size):
            chunk = list(units[start : start + size])
            records = {u.key(): self._record(u, tutor_name) for u in chunk}
            self._followups([u for u in chunk if u.skill == "followup"], records, tutor, size)
            self._errors([u for u in chunk if u.skill == "error"], records, tutor, size, judge)
            self._generations([u for u in chunk if u.skill == "generation"], records, tutor, size, judge)
            for u in chunk:
                yield records[u.key()]

    @staticmethod
    def _record(unit: SkillsUnit, tutor_name: str) -> dict[str, Any]:
        return {"key": unit.key(), "tutor": tutor_name, "unit": unit.model_dump(), "prompt": None,
                "response": None, "turns": [], "grades": {}, "judgments": [], "failures": []}

    def _conversation(self, units: list[SkillsUnit], records: dict[str, dict], tutor: Any, size: int,
                      system: str, user_turns: list[list[str]], items: list[list[dict]]) -> list[list[Reply | None]]:
        """Ask every unit's turns in lockstep; a unit whose tutor failed is not asked further (None)."""
        views = {u.key(): _task_view(u.task_id, u.seed) for u in units}
        chats = {u.key(): [{"role": "system", "content": system}] for u in units}
        replies: list[list[Reply | None]] = [[] for _ in units]
        alive = list(range(len(units)))
        for turn in range(len(user_turns[0]) if units else 0):
            reqs = []
            for i in alive:
                u = units[i]
                chats[u.key()].append({"role": "user", "content": user_turns[i][turn]})
                reqs.append(Request(list(chats[u.key()]), {**items[i][turn], "key": f"{u.key()}#t{turn + 1}"},
                                    unit_seed(f"{u.key()}#t{turn + 1}"), views[u.key()]))
            got = ask(tutor, reqs, size)
            still = []
            for i, reply in zip(alive, got, strict=True):
                u = units[i]
                replies[i].append(reply)
                rec = records[u.key()]
                rec["turns"].append({"prompt": user_turns[i][turn], "response": reply.text})
                if reply.text is None:
                    rec["failures"].append(tutor_failure(f"{u.skill} turn {turn + 1}", reply))
                    continue
                chats[u.key()].append({"role": "assistant", "content": reply.text})
                still.append(i)
            alive = still
            for i in range(len(units)):
                while len(replies[i]) < turn + 1:
                    replies[i].append(None)
        for u in units:
            rec = records[u.key()]
            rec["prompt"] = "\n\n".join(f"[turn {k + 1}] {t['prompt']}" for k, t in enumerate(rec["turns"]))
            answered = [t["response"] for t in rec["turns"] if t["response"] is not None]
            rec["response"] = "\n\n".join(f"[turn {k + 1}] {r}" for k, r in enumerate(answered)) if answered else None
        return replies

    # (a) follow-up solving
    def _followups(self, units: list[SkillsUnit], records: dict[str, dict], tutor: Any, size: int) -> None:
        if not units:
            return
        problems = [chain(u.task_id, u.seed) for u in units]
        user_turns = [[f"Problem: {p[0].statement}", p[1].statement, p[2].statement] for p in problems]
        items = [[{"kind": "followup_solve", "task_id": u.task_id, "seed": u.seed, "turn": t,
                   "problem": user_turns[i][t]} for t in range(3)] for i, u in enumerate(units)]
        replies = self._conversation(units, records, tutor, size, SYSTEM_SOLVE, user_turns, items)
        for u, probs, reps in zip(units, problems, replies, strict=True):
            rec = records[u.key()]
            grades: dict[str, Any] = {}
            for t, (p, r) in enumerate(zip(probs, reps, strict=True)):
                value, why = parse_answer_line(None if r is None else r.text)
                if r is not None and r.text is not None and why is not None:
                    rec["failures"].append(format_failure(f"followup turn {t + 1}", why))
                grades[f"t{t + 1}"] = {"extracted": value, "key": p.answer, "correct": is_correct(value, p.answer),
                                       "format_ok": why is None}
            rec["grades"] = grades

    # (b) error detection and correction
    def _errors(self, units: list[SkillsUnit], records: dict[str, dict], tutor: Any, size: int, judge: Any) -> None:
        if not units:
            return
        inst = [error_instance(u.task_id, u.seed, u.variant) for u in units]
        user_turns = []
        items = []
        for u, x in zip(units, inst, strict=True):
            cat = "\n".join(f"- {c['id']}: {c['belief']}" for c in x["catalogue"])
            first = (f"Problem: {x['problem']}\n\nStudent's solution:\n{_numbered(x['steps'])}\n"
                     f"Final answer: {x['shown_answer']}\n\nKnown misconceptions for this kind of problem (id: "
                     f"belief):\n{cat}\n\nIs the solution correct? If not, find the first wrong step and say why.\n"
                     f"{DETECT_FORMAT}")
            user_turns.append([first, CORRECT_PROMPT])
            common = {"task_id": u.task_id, "seed": u.seed, "problem": x["problem"], "steps": x["steps"],
                      "misconceptions": x["catalogue"]}
            items.append([{"kind": "error_detect", **common}, {"kind": "error_correct", **common}])
        replies = self._conversation(units, records, tutor, size, SYSTEM_CHECK, user_turns, items)
        to_judge: list[tuple[int, dict[str, str]]] = []
        for i, (u, x, reps) in enumerate(zip(units, inst, replies, strict=True)):
            rec = records[u.key()]
            ids = [c["id"] for c in x["catalogue"]]
            det = parse_detection(None if reps[0] is None else reps[0].text, len(x["steps"]), ids)
            if reps[0] is not None and reps[0].text is not None and det["format_error"]:
                rec["failures"].append(format_failure("error detection", det["format_error"]))
            value, why = parse_answer_line(None if reps[1] is None else reps[1].text)
            if reps[1] is not None and reps[1].text is not None and why is not None:
                rec["failures"].append(format_failure("error correction", why))
            has_error = x["first_wrong"] is not None
            # a verdict we cannot read counts as the wrong one (fail closed)
            pred_error = (det["verdict"] == "incorrect") if det["verdict"] is not None else (not has_error)
            step_right = has_error and det["verdict"] == "incorrect" and det["step"] == x["first_wrong"] + 1
            reason: bool | None = None
            how = None
            if has_error:
                if not step_right:
                    reason, how = False, "step wrong"
                elif det["reason_id"] is not None:
                    reason, how = det["reason_id"] == x["misconception"], "id"
                elif det["reason_text"] is not None:
                    reason, how = None, "judge"
                    belief = next(c["belief"] for c in x["catalogue"] if c["id"] == x["misconception"])
                    to_judge.append((i, {
                        "problem": x["problem"], "solution": _numbered(x["steps"]),
                        "error_step": str(x["first_wrong"] + 1),
                        "reference_reason": f"{x['misconception']}: {belief} The correct step is: "
                                            f"{x['correct_step']}",
                        "tutor_reason": det["reason_text"],
                    }))
                else:
                    reason, how = False, "no reason"
            rec["grades"] = {
                "has_error": has_error, "pred_error": pred_error, "verdict": det["verdict"],
                "first_wrong_step": None if not has_error else x["first_wrong"] + 1, "pred_step": det["step"],
                "step_right": step_right, "misconception": x["misconception"], "reason_id": det["reason_id"],
                "reason_text": det["reason_text"], "reason_right": reason, "reason_checked_by": how,
                "corrected_answer": value, "key": x["answer"], "correction_right": is_correct(value, x["answer"]),
            }
        if to_judge and judge is not None:
            verdicts, error = judge_many(judge, REASON_RUBRIC, [v for _, v in to_judge], None)
            for (i, _), verdict in zip(to_judge, verdicts, strict=True):
                rec = records[units[i].key()]
                if verdict is not None:
                    rec["judgments"].append(verdict)
                    rec["grades"]["reason_right"] = passed(verdict["values"].get("reason_correct"))
                else:
                    rec["grades"]["reason_right"] = False  # fail closed
                fail = judge_failure(REASON_RUBRIC, verdict, error)
                if fail is not None:
                    rec["failures"].append(fail)

    # (c) problem generation
    def _generations(self, units: list[SkillsUnit], records: dict[str, dict], tutor: Any, size: int,
                     judge: Any) -> None:
        if not units:
            return
        seeds = [chain(u.task_id, u.seed)[0] for u in units]
        user_turns, items, asks = [], [], []
        for u, p in zip(units, seeds, strict=True):
            if u.variant == "follow_up":
                what = ("Write one follow-up problem that builds on the seed problem (it may use its answer) and is "
                        "harder: it should need one more idea or step than the seed problem.")
            else:
                what = (f"Write one new problem similar to the seed problem at {u.variant} difficulty (the seed "
                        "problem is medium): the same skill with a different context or numbers, not a copy.")
            user = (f"Seed problem: {p.statement}\nSeed solution:\n{_numbered(p.solution)}\nAnswer: {p.answer}\n\n"
                    f"{what} Give its complete solution. {GENERATE_FORMAT}")
            user_turns.append([user])
            asks.append(what)
            items.append([{"kind": "problem_generation", "task_id": u.task_id, "seed": u.seed,
                           "mode": "follow_up" if u.variant == "follow_up" else "similar",
                           "level": None if u.variant == "follow_up" else u.variant, "problem": p.statement,
                           "solution": list(p.solution), "answer": p.answer}])
        replies = self._conversation(units, records, tutor, size, SYSTEM_GENERATE, user_turns, items)
        to_judge: list[tuple[int, dict[str, str]]] = []
        for i, (u, p, reps) in enumerate(zip(units, seeds, replies, strict=True)):
            rec = records[u.key()]
            text = None if reps[0] is None else reps[0].text
            g = parse_generated(text)
            if text is not None and g["format_error"]:
                rec["failures"].append(format_failure("problem generation", g["format_error"]))
            ratio = None if g["problem"] is None else difflib.SequenceMatcher(None, g["problem"], p.statement).ratio()
            rec["grades"] = {"format_ok": g["format_error"] is None, "answer": g["answer"],
                             "similarity_to_seed": ratio,
                             "not_a_copy": ratio is not None and ratio < SIMILARITY_LIMIT,
                             "valid": g["format_error"] is None and ratio is not None and ratio < SIMILARITY_LIMIT}
            if text is not None:
                to_judge.append((i, {"seed_problem": p.statement, "seed_solution": _numbered(p.solution),
                                     "seed_answer": p.answer, "request": asks[i], "generated": text}))
        if judge is not None and to_judge:
            verdicts, error = judge_many(judge, GENERATION_RUBRIC, [v for _, v in to_judge], None)
            judged = {i: (v, error) for (i, _), v in zip(to_judge, verdicts, strict=True)}
            for i, u in enumerate(units):
                rec = records[u.key()]
                verdict, err = judged.get(i, (None, "no reply to judge"))
                values = {} if verdict is None else verdict["values"]
                passes = {c: passed(values.get(c)) for c in GEN_CRITERIA}  # fail by default
                rec["grades"]["judged"] = passes
                rec["grades"]["pass_rate"] = sum(passes.values()) / len(GEN_CRITERIA)
                if verdict is not None:
                    rec["judgments"].append(verdict)
                if i in judged:
                    fail = judge_failure(GENERATION_RUBRIC, verdict, err)
                    if fail is not None:
                        rec["failures"].append(fail)
        elif judge is not None:  # nothing to judge: every unit failed on the tutor side, fail by default
            for u in units:
                records[u.key()]["grades"]["judged"] = {c: False for c in GEN_CRITERIA}
                records[u.key()]["grades"]["pass_rate"] = 0.0

    # ---------------------------------------------------------------- metrics (in kmp_skills_metrics.py)
    def metric_specs(self) -> dict[str, Any]:
        return metric_specs()

    def _group_metrics(self, recs: list[dict], judged: bool) -> dict[str, Any]:
        return group_metrics(recs, judged)
