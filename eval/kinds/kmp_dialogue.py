"""KMP-Dialogue on reference dialogues generated from the math curriculum (suite ``kmp-dialogue``; docs/spec.md §5).

**Reference dialogues.** For each (math family, persona, seed) of the suite, the built-in ``socratic`` tutor
tutors a simulated student in the env (:func:`tutorzoo.eval.rollout.run_episode`: pre-test, student opens, up to
``max_turns`` tutor turns). Every turn carries its SID annotation. A unit is the dialogue cut just before one
of its tutor turns (``cuts_per_dialogue`` of them, drawn with a seed from the dialogue's key; the closing
summary is never a cut: it is scripted by the turn budget). The unit carries the dialogue so far, a
dialogue-specific system prompt (tutor persona, student profile, objective, target principles), the
reference tutor turn, and its 1-2 **target principles**.

**Target principles from the reference turn's SID annotation** (our mapping; KMP's six principles):

=========================================  =========================================================
reference turn (intent / strategy / level)  primary principle
=========================================  =========================================================
intent ``trigger_transfer``                 Challenge (carry the idea into a new domain)
strategy ``break_down``                     Modelling (show how the problem splits into steps)
intent ``introduce_concept``                Explanation (explanation or worked example of a concept)
strategy ``hint`` or ``scenario_question``  Practice (the student works the next step / a new case)
strategy ``corrective_feedback``/``encourage``  Feedback
any other question turn                     Questioning
=========================================  =========================================================

A second principle is added, first that applies: Feedback when the student's previous turn was annotated
``incorrect`` (the turn answers a mistake); Challenge when the turn is at guidance level ``L3``; Questioning
when the turn is a question (intent ``check_understanding`` / ``guide_reasoning``) — never the primary twice.

**The 22 criteria** (ours; KMP does not publish all of its names) are documented in
``eval/judges/rubrics/kmp_dialogue.yaml``: 4 general (``general_coherence``, ``general_accuracy``,
``general_adaptation``, ``general_restraint``) and 3 per principle, plus a holistic ``overall``. The judge sees
the system prompt, the dialogue, the reference turn and the candidate turn and says per criterion whether the
candidate ``win``s, ``tie``s or ``lose``s against the reference; it is asked the 4 general criteria, the 3 of
each target principle and ``overall`` (one ``judge_many`` call per set of target principles). A failed
verdict counts ``lose`` (fail closed); a missing tutor reply loses every asked criterion.

**Metrics** (all judge-only: "not computed" without ``--judge``): ``<criterion>_win`` / ``_tie`` / ``_lose``
rates; ``General_Acc`` = mean win rate over the 4 general criteria; ``<Principle>_Acc`` = mean win rate over
its 3 criteria (units targeting it); ``Overall_Acc`` = ½·(General_Acc + mean of the Principle Accs that have
units); ``overall_judgement_win``. Not judged: ``tutor_failure_rate``, ``reply_words``.

**The tutor under test** gets ``info["messages"]`` = [system prompt, user prompt with the problem and the
dialogue so far] and writes the next tutor turn. The built-in tutors take the session over at the cut
(:mod:`tutorzoo.eval.kinds.builtin_answers` replays the reference episode through the rollout engine, then lets them act
with their own policy).

Suite settings (``items:``)::

    items: {tasks: all, personas: [weak_knowledge_partly_wrong, ...], seeds: 1, max_turns: 8,
            cuts_per_dialogue: 2}
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tutorzoo.eval.kinds.item_common import (
    NO_JUDGE,
    ItemKind,
    Reply,
    Request,
    failure_rate,
    judge_failure,
    judge_many,
    mean_summary,
    not_computed,
    run_single_replies,
    spec,
    stat_summary,
    tutor_failure,
    unit_seed,
)

RUBRIC = "kmp_dialogue"
PRINCIPLES: tuple[str, ...] = ("Challenge", "Explanation", "Modelling", "Practice", "Questioning", "Feedback")
GENERAL_CRITERIA: tuple[str, ...] = ("general_coherence", "general_accuracy", "general_adaptation",
                                     "general_restraint")
PRINCIPLE_CRITERIA: dict[str, tuple[str, str, str]] = {
    "Challenge": ("challenge_stretch", "challenge_reach", "challenge_extension"),
    "Explanation": ("explanation_clarity", "explanation_conceptual", "explanation_grounding"),
    "Modelling": ("modelling_demonstration", "modelling_reasoning", "modelling_handover"),
    "Practice": ("practice_task", "practice_level", "practice_scaffold"),
    "Questioning": ("questioning_open", "questioning_targeted", "questioning_building"),
    "Feedback": ("feedback_specific", "feedback_corrective", "feedback_tone"),
}
OVERALL = "overall"
ALL_CRITERIA: tuple[str, ...] = (*GENERAL_CRITERIA, *(c for p in PRINCIPLES for c in PRINCIPLE_CRITERIA[p]))
assert len(ALL_CRITERIA) == 22

PRINCIPLE_TEXT: dict[str, str] = {
    "Challenge": "stretch the student's thinking a step beyond what they have shown (a harder case, a new context, a "
                 "why-question), while keeping it within reach",
    "Explanation": "explain the concept clearly and conceptually (why, not only how), tied to this problem",
    "Modelling": "demonstrate the process (a worked step or example, the reasoning made explicit) and then hand the "
                 "next step back to the student",
    "Practice": "give the student a concrete step or case to work on themselves, at the right level, with support",
    "Questioning": "ask open, targeted questions that build on the student's last answer, one at a time",
    "Feedback": "respond specifically to what the student just did: what is right, what is wrong and how to fix it, "
                "in an encouraging tone",
}


class DialogueSettings(BaseModel):
    """The ``items:`` block of a kmp_dialogue suite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: Literal["all"] | list[str] = Field(default="all", description="'all' or a list of math family ids.")
    personas: list[str] = Field(default_factory=lambda: ["weak_knowledge_partly_wrong", "all_round_asks_for_hint"],
                                min_length=1, description="Simulated-student personas of the reference dialogues.")
    seeds: int | list[int] = Field(default=1, description="A count (0..n-1) or explicit episode seeds.")
    max_turns: int = Field(default=8, ge=2, le=40, description="Tutor turns of a reference dialogue.")
    cuts_per_dialogue: int = Field(default=2, ge=1, le=40, description="Units cut from each reference dialogue.")


class DialogueUnit(BaseModel):
    """A reference dialogue cut before one tutor turn, with what the tutor and the judge need."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    persona: str
    seed: int = Field(ge=0)
    max_turns: int
    cut: int = Field(ge=1, description="1-based number of the tutor turn the tutor under test writes.")
    statement: str
    system_prompt: str
    history: list[dict[str, str]] = Field(description="[{speaker: student|tutor, text}] before the cut.")
    reference: str
    annotation: dict[str, Any] = Field(description="SID annotation of the reference turn (+ the previous student "
                                                   "turn's cognition state).")
    principles: list[str] = Field(min_length=1, max_length=2)
    student_seed: int = Field(description="The simulated student's seed in the reference episode (for the replay).")

    def key(self) -> str:
        return f"kmp_dialogue/{self.task_id}/{self.persona}/{self.seed}/m{self.max_turns}/turn{self.cut}"


# --- principles from SID annotations -----------------------------------------------------------------------


def principles_of(annotation: dict[str, Any]) -> list[str]:
    """The 1-2 target principles of a reference turn from its SID annotation (mapping in the module docstring).

    ``annotation``: ``teacher_intent``, ``teaching_strategy``, ``teacher_guidance_level`` of the turn and
    ``previous_student_state`` (the cognition state of the student turn before it, or None).
    """
    intent = annotation.get("teacher_intent")
    strategy = annotation.get("teaching_strategy")
    level = annotation.get("teacher_guidance_level")
    is_question = intent in ("check_understanding", "guide_reasoning")
    if intent == "trigger_transfer":
        primary = "Challenge"
    elif strategy == "break_down":
        primary = "Modelling"
    elif intent == "introduce_concept":
        primary = "Explanation"
    elif strategy in ("hint", "scenario_question"):
        primary = "Practice"
    elif strategy in ("corrective_feedback", "encourage"):
        primary = "Feedback"
    elif intent == "summarize":
        primary = "Explanation"
    else:
        primary = "Questioning"
    out = [primary]
    for candidate, applies in (("Feedback", annotation.get("previous_student_state") == "incorrect"),
                               ("Challenge", level == "L3"), ("Questioning", is_question)):
        if applies and candidate not in out:
            out.append(candidate)
            break
    return out


def criteria_for(principles: Sequence[str]) -> list[str]:
    """The criteria a unit is judged on: the 4 general, the 3 of each target principle, and ``overall``."""
    return [*GENERAL_CRITERIA, *(c for p in PRINCIPLES if p in principles for c in PRINCIPLE_CRITERIA[p]), OVERALL]


# --- reference dialogues -----------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def reference_episode(task_id: str, persona: str, seed: int, max_turns: int) -> dict[str, Any]:
    """The socratic tutor's episode on one (family, persona, seed) — deterministic, cached per process."""
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor import make_tutor
    from tutorzoo.envs.config import EpisodeSpec
    from tutorzoo.eval.rollout import run_episode

    spec_ = EpisodeSpec(task_set="math", task_id=task_id, persona=persona, seed=seed,
                        protocol={"max_turns": max_turns})
    record = run_episode(spec_, make_tutor("socratic"), SimulatedStudent(persona), "socratic")
    if record.get("failures"):
        raise RuntimeError(f"reference dialogue {spec_.key()} failed: {record['failures'][0]['error']}")
    return record


def _system_prompt(task, persona, principles: Sequence[str]) -> str:
    objectives = "; ".join(o.rstrip(".") for o in task.objectives) or task.title
    targets = "\n".join(f"- {p}: {PRINCIPLE_TEXT[p]}." for p in principles)
    return (
        f"You are a patient, encouraging math tutor for a grade {persona.grade} student, working on \"{task.title}\". "
        "You guide the student to reason for themselves and do not give away the final answer.\n"
        f"Student profile: {persona.description or persona.name.replace('_', ' ')} (grade {persona.grade}).\n"
        f"Objective of the session: {objectives}.\n"
        f"For your next turn, apply these pedagogical principle(s):\n{targets}\n"
        "Reply with the tutor's next turn only: what you say to the student, in a few sentences."
    )


def _user_prompt(unit: DialogueUnit) -> str:
    lines = [f"{'Student' if h['speaker'] == 'student' else 'Tutor'}: {h['text']}" for h in unit.history]
    return (f"The problem the student is working on: {unit.statement}\n\nThe dialogue so far:\n" + "\n".join(lines)
            + "\n\nWrite the tutor's next turn.")


def _dialogue_text(unit: DialogueUnit) -> str:
    return "\n".join(f"{'Student' if h['speaker'] == 'student' else 'Tutor'}: {h['text']}" for h in unit.history)


def _cuts(candidates: list[int], n: int, key: str) -> list[int]:
    if len(candidates) <= n:
        return candidates
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little"))
    return sorted(int(c) for c in rng.choice(candidates, size=n, replace=False))


def dialogue_units(task_id: str, persona_name: str, seed: int, max_turns: int, cuts: int) -> list[DialogueUnit]:
    """The units cut from one reference dialogue."""
    from tutorzoo.agents.student.personas import get_persona
    from tutorzoo.envs.tasks import get_task_set
    from tutorzoo.eval.rollout import derive_seed

    record = reference_episode(task_id, persona_name, seed, max_turns)
    transcript = record["transcript"]
    tutor_at = [i for i, t in enumerate(transcript) if t["speaker"] == "tutor"]
    candidates = [n + 1 for n, i in enumerate(tutor_at) if transcript[i].get("teacher_intent") != "summarize"]
    persona = get_persona(persona_name)
    task = get_task_set("math").build(task_id, np.random.default_rng(0))  # title/objectives: same for every seed
    out = []
    for cut in _cuts(candidates, cuts, f"{task_id}/{persona_name}/{seed}/{max_turns}"):
        at = tutor_at[cut - 1]
        turn = transcript[at]
        prev = next((t for t in reversed(transcript[:at]) if t["speaker"] == "student"), None)
        annotation = {k: turn.get(k) for k in ("teacher_intent", "teaching_strategy", "teacher_guidance_level",
                                               "discipline_transfer")}
        annotation["previous_student_state"] = None if prev is None else prev.get("student_cognition_state")
        principles = principles_of(annotation)
        out.append(DialogueUnit(
            task_id=task_id, persona=persona_name, seed=seed, max_turns=max_turns, cut=cut,
            statement=_episode_task_view(task_id, seed, max_turns)["statement"],
            system_prompt=_system_prompt(task, persona, principles),
            history=[{"speaker": t["speaker"], "text": t["utterance"]} for t in transcript[:at]],
            reference=turn["utterance"], annotation=annotation, principles=principles,
            student_seed=derive_seed(seed, "student"),
        ))
    return out


@lru_cache(maxsize=512)
def _episode_task_view(task_id: str, seed: int, max_turns: int) -> dict[str, Any]:
    from tutorzoo.envs import tutoring_v0

    env = tutoring_v0.env(task_set="math", task_id=task_id, max_turns=max_turns)
    env.reset(seed=seed)
    view = env.unwrapped.task.public_view()
    env.close()
    return view


# --- the kind ----------------------------------------------------------------------------------------------


class KmpDialogueKind(ItemKind):
    """The ``kmp_dialogue`` suite kind (see the module docstring)."""

    name = "kmp_dialogue"
    rubrics = (RUBRIC,)
    rank_metric = "Overall_Acc"
    columns = (
        ("General_Acc", "General", 100.0),
        *((f"{p}_Acc", p[:5] + ".", 100.0) for p in PRINCIPLES),
        ("Overall_Acc", "Overall", 100.0),
    )
    legend = (
        "Win rates (x100) of the tutor's turn against the reference turn, judged per criterion: General = 4 general "
        "criteria; one column per principle (its 3 criteria, on units targeting it); Overall = (General + mean "
        "principle) / 2. All need --judge."
    )
    settings_model = DialogueSettings
    unit_model = DialogueUnit

    def units(self, suite: Any) -> list[DialogueUnit]:
        from tutorzoo.agents.student.personas import get_persona

        s, ids, seeds = self.families_and_seeds(suite)
        for p in s.personas:
            get_persona(p)  # ConfigError with a did-you-mean
        out: list[DialogueUnit] = []
        for task_id in ids:
            for persona in s.personas:
                for seed in seeds:
                    out += dialogue_units(task_id, persona, seed, s.max_turns, s.cuts_per_dialogue)
        return out

    def run(self, units: Sequence[DialogueUnit], tutor: Any, tutor_name: str, judge: Any,
            batch_size: int = 1) -> Iterator[dict]:
        return run_single_replies(units, tutor, tutor_name, judge, batch_size, self._request, self._grade, self._judge)

    @staticmethod
    def _grade(u: DialogueUnit, reply: Reply, rec: dict[str, Any]) -> None:
        rec["grades"] = {"principles": list(u.principles), "criteria": criteria_for(u.principles)}
        if reply.text is None:
            rec["failures"].append(tutor_failure("dialogue turn", reply))

    def _request(self, u: DialogueUnit) -> Request:
        item = {"kind": "kmp_dialogue", "key": u.key(), "principles": list(u.principles),
                "replay": {"episode": {"task_set": "math", "task_id": u.task_id, "persona": u.persona, "seed": u.seed,
                                       "protocol": {"max_turns": u.max_turns}},
                           "student_seed": u.student_seed,
                           "tutor_turns": [h["text"] for h in u.history if h["speaker"] == "tutor"],
                           "history": [h["text"] for h in u.history]}}
        messages = [{"role": "system", "content": u.system_prompt}, {"role": "user", "content": _user_prompt(u)}]
        return Request(messages, item, unit_seed(u.key()), _episode_task_view(u.task_id, u.seed, u.max_turns))

    def _judge(self, units: list[DialogueUnit], records: list[dict], judge: Any) -> None:
        by_set: dict[tuple[str, ...], list[int]] = {}
        for i, rec in enumerate(records):
            if rec["response"] is not None:
                by_set.setdefault(tuple(sorted(units[i].principles)), []).append(i)
        for principles, idx in by_set.items():
            criteria = criteria_for(principles)
            variables = [{"context": units[i].system_prompt, "dialogue": _dialogue_text(units[i]),
                          "reference": units[i].reference, "candidate": records[i]["response"]} for i in idx]
            verdicts, error = judge_many(judge, RUBRIC, variables, criteria)
            for i, verdict in zip(idx, verdicts, strict=True):
                if verdict is not None:
                    records[i]["judgments"].append(verdict)
                fail = judge_failure(RUBRIC, verdict, error)
                if fail is not None:
                    records[i]["failures"].append(fail)
        for rec in records:
            rec["grades"]["outcomes"] = _outcomes(rec)

    # ---------------------------------------------------------------- metrics
    def metric_specs(self) -> dict[str, Any]:
        specs = []
        for c in (*ALL_CRITERIA, OVERALL):
            for o in ("win", "tie", "lose"):
                specs.append(spec(f"{c}_{o}", {"win": True, "tie": None, "lose": False}[o],
                                  f"Share of judged units (asked {c}) where the tutor's turn {o}s against the "
                                  "reference turn."))
        specs += [
            spec("General_Acc", True, "Mean win rate over the 4 general criteria (judge)."),
            *(spec(f"{p}_Acc", True, f"Mean win rate over the 3 {p} criteria, units targeting {p} (judge).")
              for p in PRINCIPLES),
            spec("Overall_Acc", True, "(General_Acc + mean of the Principle Accs with units) / 2 (judge).", "pooled",
                 "suite"),
            spec("overall_judgement_win", True, "Holistic win rate (the judge's 'overall' criterion)."),
            spec("tutor_failure_rate", False, "Share of units where the tutor raised or returned no text."),
            spec("judge_failure_rate", False, "Share of units with a failed judge sample."),
            spec("reply_words", None, "Mean length of the tutor's turn in words."),
        ]
        return {s.name: s for s in specs}

    def _group_metrics(self, recs: list[dict], judged: bool) -> dict[str, Any]:
        m: dict[str, Any] = {}
        outcomes = [_outcomes(r) for r in recs]
        for c in (*ALL_CRITERIA, OVERALL):
            for o in ("win", "tie", "lose"):
                m[f"{c}_{o}"] = (mean_summary([float(x[c] == o) for x in outcomes if c in x]) if judged
                                 else not_computed(NO_JUDGE))
        if judged:
            m["General_Acc"] = mean_summary([_win_share(x, GENERAL_CRITERIA) for x in outcomes])
            for p in PRINCIPLES:
                m[f"{p}_Acc"] = mean_summary([_win_share(x, PRINCIPLE_CRITERIA[p]) for x in outcomes
                                              if PRINCIPLE_CRITERIA[p][0] in x])
            m["Overall_Acc"] = stat_summary(outcomes, overall_acc)
            m["overall_judgement_win"] = mean_summary([float(x[OVERALL] == "win") for x in outcomes if OVERALL in x])
            m["judge_failure_rate"] = failure_rate(recs, "judge")
        else:
            for name in ("General_Acc", *(f"{p}_Acc" for p in PRINCIPLES), "Overall_Acc", "overall_judgement_win",
                         "judge_failure_rate"):
                m[name] = not_computed(NO_JUDGE)
        m["tutor_failure_rate"] = failure_rate(recs, "tutor")
        m["reply_words"] = mean_summary([float(len(r["response"].split())) for r in recs
                                         if isinstance(r.get("response"), str)])
        return m


def _outcomes(record: dict) -> dict[str, str]:
    """Criterion -> win/tie/lose for one record: the verdict's values; every asked criterion the verdict lacks
    (failed judge, no tutor reply, a record that never ran) is ``lose`` (fail closed)."""
    unit = record.get("unit") or {}
    asked = criteria_for(unit.get("principles") or []) if unit.get("principles") else []
    values: dict[str, Any] = {}
    for j in record.get("judgments", []):
        if j and j.get("rubric") == RUBRIC:
            values = dict(j.get("values") or {})
    out = {}
    for c in asked:
        v = str(values.get(c, "lose")).lower()
        out[c] = v if v in ("win", "tie", "lose") else "lose"
    return out


def _win_share(outcome: dict[str, str], criteria: Sequence[str]) -> float | None:
    got = [outcome[c] == "win" for c in criteria if c in outcome]
    return sum(got) / len(got) if got else None


def overall_acc(outcomes: Sequence[dict[str, str]]) -> float | None:
    """½·(General Acc + mean of the Principle Accs) over a set of unit outcomes (docs/spec.md §5).

    General Acc is the mean over the 4 general criteria of their win rates; a Principle Acc the mean over its 3
    criteria of their win rates on the units that asked them; principles without units are left out of the mean.
    """
    def rate(c: str) -> float | None:
        xs = [o[c] == "win" for o in outcomes if c in o]
        return sum(xs) / len(xs) if xs else None

    general = [r for c in GENERAL_CRITERIA if (r := rate(c)) is not None]
    if not general:
        return None
    principle_accs = []
    for p in PRINCIPLES:
        rates = [r for c in PRINCIPLE_CRITERIA[p] if (r := rate(c)) is not None]
        if rates:
            principle_accs.append(sum(rates) / len(rates))
    g = sum(general) / len(general)
    if not principle_accs:
        return None
    return 0.5 * (g + sum(principle_accs) / len(principle_accs))
