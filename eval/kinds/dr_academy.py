"""Dr.Academy question generation on the STEM lessons and the math curriculum (suite ``dr-academy``; docs/spec.md §6).

A unit is a *context*; the tutor writes three questions for each of the six levels of Anderson and Krathwohl's
revised Bloom taxonomy (remember, understand, apply, analyze, evaluate, create) as one strict JSON object
``{"remember": [q, q, q], ..., "create": [q, q, q]}`` (a single fenced ```json block is tolerated, nothing else).

Contexts (``context_type``):

- ``lesson``: one of the 48 STEM lessons (``configs/lessons/``): title, driving question, each knowledge
  component's name and explanation, the summary — a full text context, judged on all four criteria;
- ``interdisciplinary``: two knowledge components of one lesson from *different* disciplines and the bridge
  that links them — a topic pair without a comprehensive text, judged on Relevance and Representativeness
  only (Dr.Academy's interdisciplinary setting);
- ``math``: a math family's knowledge components (explanations) — a monodisciplinary context, all four.

Judging (``dr_academy`` rubric, 3 samples, majority per criterion, ties and failed samples toward fail): each
question is judged on Consistency (it works at its intended Bloom level), Relevance (more than 50% related to
the context), Coverage (the unit's whole question set covers more than 50% of the context — judged with every
question, as in Dr.Academy's per-question prompt) and Representativeness (it captures core content). A
unit's score per criterion is the share of its 18 slots that pass: a missing or malformed question fails.
Metrics ``Consistency``, ``Relevance``, ``Coverage``, ``Representativeness`` (mean over units where the
criterion applies) and ``Average`` (mean of the four, or the two, per unit) are judge-only: "not computed"
without ``--judge``. Exact (no judge): ``format_valid`` (valid JSON, the six levels, exactly 3 non-empty
distinct questions each) and ``question_yield`` (usable questions / 18).

Suite settings (``items:``)::

    items: {lessons: all, interdisciplinary: true, math: []}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.labels import BLOOM_LEVELS
from tutorzoo.eval.kinds.item_common import (
    NO_JUDGE,
    ItemKind,
    Reply,
    Request,
    failure_rate,
    format_failure,
    judge_failure,
    judge_many,
    mean_summary,
    not_computed,
    passed,
    run_single_replies,
    spec,
    tutor_failure,
    unit_seed,
)

RUBRIC = "dr_academy"
CRITERIA: tuple[str, ...] = ("consistency", "relevance", "coverage", "representativeness")
INTERDISCIPLINARY_CRITERIA: tuple[str, ...] = ("relevance", "representativeness")
METRIC_NAME = {"consistency": "Consistency", "relevance": "Relevance", "coverage": "Coverage",
               "representativeness": "Representativeness"}
PER_LEVEL = 3
N_QUESTIONS = PER_LEVEL * len(BLOOM_LEVELS)

SYSTEM = ("You are an experienced teacher who writes questions at the six levels of Anderson and Krathwohl's revised "
          "Bloom taxonomy: remember, understand, apply, analyze, evaluate, create.")
REPLY_FORMAT = ('Reply with only this JSON object and nothing else:\n{"remember": ["...", "...", "..."], '
                '"understand": ["...", "...", "..."], "apply": ["...", "...", "..."], "analyze": ["...", "...", '
                '"..."], "evaluate": ["...", "...", "..."], "create": ["...", "...", "..."]}')


class AcademySettings(BaseModel):
    """The ``items:`` block of a dr_academy suite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lessons: Literal["all"] | list[str] = Field(default="all", description="'all' or a list of STEM lesson ids.")
    interdisciplinary: bool = Field(default=True, description="Also one cross-discipline link context per lesson.")
    math: Literal["all"] | list[str] = Field(default_factory=list, description="Math families as contexts.")


class AcademyUnit(BaseModel):
    """One question-generation context."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context_type: Literal["lesson", "interdisciplinary", "math"]
    task_set: Literal["stem", "math"]
    task_id: str
    kcs: list[str]
    disciplines: list[str]
    context: str

    def key(self) -> str:
        tail = f"/{'+'.join(self.kcs)}" if self.context_type == "interdisciplinary" else ""
        return f"dr_academy/{self.context_type}/{self.task_id}{tail}"

    def criteria(self) -> tuple[str, ...]:
        return INTERDISCIPLINARY_CRITERIA if self.context_type == "interdisciplinary" else CRITERIA


# --- contexts ----------------------------------------------------------------------------------------------


def lesson_context(task) -> str:
    parts = [f"{task.title}.", task.statement]
    parts += [f"{k.name} ({k.discipline}): {k.explanation}" for k in task.knowledge_components]
    parts.append(task.summary)
    return "\n".join(parts)


def link_context(task) -> tuple[list[str], list[str], str] | None:
    """The first cross-discipline link between two KCs of the lesson: (kc ids, disciplines, context text)."""
    for kc in task.knowledge_components:
        for link in kc.links:
            if link.kc is None:
                continue
            other = task.kc(link.kc)
            if other.discipline == kc.discipline:
                continue
            text = (f"Interdisciplinary topic linking {kc.discipline} and {other.discipline}.\n"
                    f"{kc.discipline.capitalize()}: {kc.name}.\n{other.discipline.capitalize()}: {other.name}.\n"
                    f"Link: {link.bridge}")
            return [kc.id, other.id], [kc.discipline, other.discipline], text
    return None


def math_context(task) -> str:
    parts = [f"{task.title} (grade {task.grade} mathematics)."]
    parts += [f"{k.name}: {k.explanation}" for k in task.knowledge_components]
    return "\n".join(parts)


# --- reply parsing -----------------------------------------------------------------------------------------


def parse_questions(text: str | None) -> tuple[dict[str, list[str]], str | None]:
    """``({level: [usable questions]}, format_error or None)``.

    A usable question is a non-empty string not already listed at that level. ``format_error`` is None only
    for valid JSON with exactly the six levels and exactly 3 usable questions each; invalid JSON yields no
    question at all, a valid object with other flaws keeps its usable questions (at most 3 per level).
    """
    from tutorzoo.agents.json_reply import JSONReplyError, parse_json_object

    if text is None:
        return {}, "no reply"
    try:
        data = parse_json_object(text)
    except JSONReplyError as exc:
        return {}, str(exc)
    problems = []
    extra = sorted(set(data) - set(BLOOM_LEVELS))
    if extra:
        problems.append(f"unknown keys {extra[:4]}")
    out: dict[str, list[str]] = {}
    for level in BLOOM_LEVELS:
        raw = data.get(level)
        if not isinstance(raw, list):
            problems.append(f"{level}: not a list")
            continue
        usable: list[str] = []
        for q in raw:
            if isinstance(q, str) and q.strip() and q.strip() not in usable:
                usable.append(q.strip())
        if len(raw) != PER_LEVEL or len(usable) != PER_LEVEL:
            problems.append(f"{level}: {len(usable)} usable of {len(raw)} (need exactly {PER_LEVEL})")
        out[level] = usable[:PER_LEVEL]
    return out, ("; ".join(problems) if problems else None)


def majority(values: Sequence[bool]) -> bool:
    """Majority of binary judge samples, a tie (or no sample) toward fail — what the judge engine does per
    criterion; e.g. ``majority([True, False, True]) is True``, ``majority([True, False]) is False``."""
    yes = sum(bool(v) for v in values)
    return yes * 2 > len(values)


# --- the kind ----------------------------------------------------------------------------------------------


class DrAcademyKind(ItemKind):
    """The ``dr_academy`` suite kind (see the module docstring)."""

    name = "dr_academy"
    rubrics = (RUBRIC,)
    rank_metric = "Average"
    columns = (
        ("format_valid", "Format %", 100.0),
        ("question_yield", "Yield %", 100.0),
        ("Consistency", "Con", 100.0),
        ("Relevance", "Rel", 100.0),
        ("Coverage", "Cov", 100.0),
        ("Representativeness", "Rep", 100.0),
        ("Average", "Avg", 100.0),
    )
    legend = (
        "Format: valid JSON with 3 questions at each of the six Bloom levels; Yield: usable questions / 18; Con, "
        "Rel, Cov, Rep: share of the 18 questions passing each criterion (majority of 3 judge samples; needs "
        "--judge; interdisciplinary contexts: Rel and Rep only). All x100."
    )
    settings_model = AcademySettings
    unit_model = AcademyUnit

    def units(self, suite: Any) -> list[AcademyUnit]:
        from tutorzoo.envs.tasks import get_task_set

        s = self.settings(suite)
        name = getattr(suite, "name", "?")
        stem = get_task_set("stem")
        lesson_ids = stem.task_ids() if s.lessons == "all" else list(s.lessons)
        unknown = [t for t in lesson_ids if t not in stem.task_ids()]
        if unknown:
            raise ConfigError(f"suite {name!r}: items.lessons: unknown STEM lessons {unknown}; see configs/lessons/")
        out: list[AcademyUnit] = []
        rng = np.random.default_rng(0)  # lessons are fixed texts; the rng is unused by the stem task set
        for tid in lesson_ids:
            task = stem.build(tid, rng)
            out.append(AcademyUnit(context_type="lesson", task_set="stem", task_id=tid,
                                   kcs=[k.id for k in task.knowledge_components], disciplines=list(task.disciplines),
                                   context=lesson_context(task)))
            if s.interdisciplinary and (link := link_context(task)) is not None:
                kcs, disciplines, text = link
                out.append(AcademyUnit(context_type="interdisciplinary", task_set="stem", task_id=tid, kcs=kcs,
                                       disciplines=disciplines, context=text))
        math = get_task_set("math")
        math_ids = math.task_ids() if s.math == "all" else list(s.math)
        unknown = [t for t in math_ids if t not in math.task_ids()]
        if unknown:
            raise ConfigError(f"suite {name!r}: items.math: unknown math families {unknown}; known: {math.task_ids()}")
        for tid in math_ids:
            task = math.build(tid, np.random.default_rng(0))
            out.append(AcademyUnit(context_type="math", task_set="math", task_id=tid,
                                   kcs=[k.id for k in task.knowledge_components], disciplines=["math"],
                                   context=math_context(task)))
        return out

    def run(self, units: Sequence[AcademyUnit], tutor: Any, tutor_name: str, judge: Any,
            batch_size: int = 1) -> Iterator[dict]:
        return run_single_replies(units, tutor, tutor_name, judge, batch_size, self._request, self._grade, self._judge)

    @staticmethod
    def _grade(u: AcademyUnit, reply: Reply, rec: dict[str, Any]) -> None:
        questions, why = parse_questions(reply.text)
        rec["grades"] = {"format_ok": why is None, "questions": questions,
                         "n_usable": sum(len(v) for v in questions.values())}
        if reply.text is None:
            rec["failures"].append(tutor_failure("question generation", reply))
        elif why is not None:
            rec["failures"].append(format_failure("question generation", why))

    def _request(self, u: AcademyUnit) -> Request:
        from tutorzoo.envs.tasks import get_task_set

        user = (f"Context:\n{u.context}\n\nWrite three questions for each of the six levels of Bloom's taxonomy "
                f"(remember, understand, apply, analyze, evaluate, create) about this context.\n{REPLY_FORMAT}")
        item = {"kind": "question_generation", "key": u.key(), "task_set": u.task_set, "task_id": u.task_id,
                "kcs": list(u.kcs), "context_type": u.context_type, "context": u.context}
        view = get_task_set(u.task_set).build(u.task_id, np.random.default_rng(0)).public_view()
        return Request([{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}], item,
                       unit_seed(u.key()), view)

    def _judge(self, units: list[AcademyUnit], records: list[dict], judge: Any) -> None:
        for criteria in (CRITERIA, INTERDISCIPLINARY_CRITERIA):
            slots: list[tuple[int, str, int]] = []
            variables: list[dict[str, str]] = []
            for i, (u, rec) in enumerate(zip(units, records, strict=True)):
                if u.criteria() != criteria:
                    continue
                questions = rec["grades"]["questions"]
                listing = "\n".join(f"- ({lvl}) {q}" for lvl in BLOOM_LEVELS for q in questions.get(lvl, []))
                for lvl in BLOOM_LEVELS:
                    for k, q in enumerate(questions.get(lvl, [])):
                        slots.append((i, lvl, k))
                        variables.append({"context": u.context, "level": lvl, "question": q,
                                          "all_questions": listing})
            if not variables:
                continue
            verdicts, error = judge_many(judge, RUBRIC, variables, list(criteria))
            per_unit: dict[int, list[dict | None]] = {}
            for (i, lvl, k), verdict in zip(slots, verdicts, strict=True):
                per_unit.setdefault(i, []).append(verdict)
                if verdict is not None:
                    records[i]["judgments"].append({**verdict, "level": lvl, "index": k})
            for i, vs in per_unit.items():
                bad = [v for v in vs if v is None or v.get("n_failed", 0)]
                if bad:
                    first = judge_failure(RUBRIC, bad[0], error)
                    if first is not None:
                        first["error"] = f"{len(bad)} of {len(vs)} question verdicts had failed samples: " \
                                         f"{first['error']}"
                        records[i]["failures"].append(first)
        for u, rec in zip(units, records, strict=True):
            rec["grades"]["scores"] = _scores(u.criteria(), rec)

    # ---------------------------------------------------------------- metrics
    def metric_specs(self) -> dict[str, Any]:
        specs = [
            spec("format_valid", True, "Valid JSON with the six Bloom levels, exactly 3 distinct questions each."),
            spec("question_yield", True, "Usable questions / 18 (invalid JSON gives none)."),
            spec("Consistency", True, "Judge: share of the 18 questions at their intended Bloom level (majority of 3; "
                 "not for interdisciplinary contexts)."),
            spec("Relevance", True, "Judge: share of the 18 questions more than 50% related to the context."),
            spec("Coverage", True, "Judge: share of the 18 questions whose set covers more than 50% of the context "
                 "(not for interdisciplinary contexts)."),
            spec("Representativeness", True, "Judge: share of the 18 questions capturing the core content."),
            spec("Average", True, "Judge: per unit the mean of its criteria (4, or 2 for interdisciplinary), "
                 "then the mean over units."),
            spec("tutor_failure_rate", False, "Share of units where the tutor raised or returned no text."),
            spec("format_failure_rate", False, "Share of units whose reply was not the strict JSON asked for."),
            spec("judge_failure_rate", False, "Share of units with a failed judge sample."),
        ]
        return {s.name: s for s in specs}

    def _group_metrics(self, recs: list[dict], judged: bool) -> dict[str, Any]:
        m: dict[str, Any] = {
            "format_valid": mean_summary([float(bool((r.get("grades") or {}).get("format_ok"))) for r in recs]),
            "question_yield": mean_summary([((r.get("grades") or {}).get("n_usable", 0)) / N_QUESTIONS for r in recs]),
        }
        if judged:
            scores = [_scores(_criteria_of(r), r) for r in recs]
            for c in CRITERIA:
                m[METRIC_NAME[c]] = mean_summary([s[c] for s in scores if c in s])
            m["Average"] = mean_summary([sum(s.values()) / len(s) for s in scores if s])
            m["judge_failure_rate"] = failure_rate(recs, "judge")
        else:
            for name in (*METRIC_NAME.values(), "Average", "judge_failure_rate"):
                m[name] = not_computed(NO_JUDGE)
        m["tutor_failure_rate"] = failure_rate(recs, "tutor")
        m["format_failure_rate"] = failure_rate(recs, "format")
        return m


def _criteria_of(record: dict) -> tuple[str, ...]:
    return INTERDISCIPLINARY_CRITERIA if (record.get("unit") or {}).get("context_type") == "interdisciplinary" \
        else CRITERIA


def _scores(criteria: Sequence[str], record: dict) -> dict[str, float]:
    """Per criterion, passed questions / 18 — a missing question, a missing verdict or a failed one fails."""
    count = dict.fromkeys(criteria, 0)
    for j in record.get("judgments", []):
        if j.get("rubric") != RUBRIC:
            continue
        for c in criteria:
            if passed(j.get("values", {}).get(c)):
                count[c] += 1
    return {c: min(count[c], N_QUESTIONS) / N_QUESTIONS for c in criteria}
