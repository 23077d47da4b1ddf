"""SID's five judge rubrics (docs/spec.md §3) over finished episodes, and their suite metrics with bootstrap CIs.

The rubric is ``rubrics/sid_rubrics.yaml`` (X-SRG, M-RCC, X-MSR, IRA, TCF: 1-5 Likert, temperature 0.1, strict
JSON with a short reason). :func:`episode_variables` turns an ``episodes.jsonl`` record into the rubric's
variables (the lesson and the transcript with speakers); :func:`judge_episode` judges one record;
:func:`sid_rubric_metrics` aggregates the verdicts stored in records (``record["judgments"]``) per tutor:
the five criteria and AvgScore (their mean per episode), each ``{"mean", "ci_low", "ci_high", "n"}``.

A verdict without any parsable sample counts with its fail values (1 on every criterion: fail closed) and is
counted in the group's ``judge_failures``. Without a judge every metric is ``{"mean": None, ...,
"not_computed": "no judge configured (--judge)"}``. Published AvgScore (SID Table I): InnoSpark 4.93, GPT-4o
4.78, QwQ-32B 4.44, EduChat-R1 4.08, Qwen2.5-14B 4.03, SocraticLM 1.91.

Example::

    judge = Judge(JudgeConfig(backend="openai:gpt-4o"))          # key from $OPENAI_API_KEY
    record["judgments"] = [judge_episode(record, judge)]
    sid_rubric_metrics([record], judged=True)["groups"]["socratic"]["metrics"]["AvgScore"]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tutorzoo.eval.metrics.registry import MetricSpec
from tutorzoo.eval.metrics.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    nanmean_rows,
    percentile_interval,
    resample_indices,
)

if TYPE_CHECKING:
    from tutorzoo.eval.judges.judge import Judge

RUBRIC = "sid_rubrics"
CRITERIA: tuple[str, ...] = ("X-SRG", "M-RCC", "X-MSR", "IRA", "TCF")
AVG = "AvgScore"
NOT_COMPUTED = "no judge configured (--judge)"

SID_RUBRIC_SPECS: dict[str, MetricSpec] = {
    spec.name: spec for spec in (
        MetricSpec("X-SRG", True, "mean", "episode",
                   "SID judge rubric, 1-5: interdisciplinary scientific reasoning / scaffolding."),
        MetricSpec("M-RCC", True, "mean", "episode", "SID judge rubric, 1-5: multi-turn reasoning-chain coherence."),
        MetricSpec("X-MSR", True, "mean", "episode",
                   "SID judge rubric, 1-5: interdisciplinary misapplication spotting and repair."),
        MetricSpec("IRA", True, "mean", "episode", "SID judge rubric, 1-5: interdisciplinary reasoning alignment."),
        MetricSpec("TCF", True, "mean", "episode", "SID judge rubric, 1-5: transition coherence and fluency."),
        MetricSpec(AVG, True, "mean", "episode",
                   "SID AvgScore: mean of the five judge rubrics per episode (published: GPT-4o 4.78)."),
    )
}


def _episode(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The env's episode record inside a harness record (``record["episode"]``) or the record itself."""
    inner = record.get("episode")
    return inner if isinstance(inner, Mapping) and "transcript" in inner else record


def render_transcript(turns: Sequence[Mapping[str, Any]]) -> str:
    """``[1] Student: ...`` lines, one per turn with text, numbered from 1."""
    lines = []
    for turn in turns:
        text = str(turn.get("utterance") or "").strip()
        if not text:
            continue
        speaker = str(turn.get("speaker") or "unknown").capitalize()
        lines.append(f"[{len(lines) + 1}] {speaker}: {text}")
    return "\n".join(lines) or "(the dialogue has no turns)"


def _lesson(record: Mapping[str, Any]) -> str:
    task = record.get("task") if isinstance(record.get("task"), Mapping) else {}
    config = record.get("config") if isinstance(record.get("config"), Mapping) else {}
    lines = [f"Title: {task.get('title') or task.get('id') or 'unknown'}"]
    if task.get("disciplines"):
        lines.append("Disciplines: " + ", ".join(map(str, task["disciplines"])))
    if task.get("statement"):
        lines.append(f"Driving question: {task['statement']}")
    elif config.get("task_set") == "stem" and task.get("id"):
        lines += _stem_lesson(str(task["id"]), config.get("task_path"))
    return "\n".join(lines)


def _stem_lesson(task_id: str, task_path: str | None) -> list[str]:
    """The driving question and knowledge components of a STEM lesson (independent of the episode seed)."""
    from tutorzoo.envs.errors import TutorZooError
    from tutorzoo.envs.tasks import get_task_set

    try:
        task = get_task_set("stem", task_path).build(task_id, np.random.default_rng(0))
    except (TutorZooError, KeyError, OSError):
        return []  # a lesson folder that is gone: the title and transcript still carry the dialogue
    components = "; ".join(f"{k.name} ({k.discipline})" for k in task.knowledge_components)
    return [f"Driving question: {task.statement}", f"Knowledge components: {components}"]


def episode_variables(record: Mapping[str, Any]) -> dict[str, str]:
    """The SID rubric's variables of an ``episodes.jsonl`` record: ``lesson`` and ``transcript``."""
    episode = _episode(record)
    turns = episode.get("transcript")
    if not isinstance(turns, list):
        from tutorzoo.envs.errors import DatasetError

        raise DatasetError("an episode record needs a 'transcript' list of {speaker, utterance} turns to be judged")
    return {"lesson": _lesson(episode), "transcript": render_transcript(turns)}


def judge_episode(record: Mapping[str, Any], judge: Judge) -> dict[str, Any]:
    """The SID rubric verdict (:meth:`Verdict.to_dict`) of one episode record."""
    return judge.judge(RUBRIC, episode_variables(record)).to_dict()


def judge_episodes(records: Sequence[Mapping[str, Any]], judge: Judge) -> list[dict[str, Any]]:
    """:func:`judge_episode` for many records, one backend call per sample round."""
    return [v.to_dict() for v in judge.judge_many(RUBRIC, [episode_variables(r) for r in records])]


def sid_verdict(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The stored SID verdict of a record (the last one in ``record["judgments"]``), or None."""
    found = None
    for verdict in record.get("judgments") or []:
        if isinstance(verdict, Mapping) and verdict.get("rubric") == RUBRIC:
            found = dict(verdict)
    return found


def _summary(values: np.ndarray, idx: np.ndarray | None, confidence: float) -> dict[str, Any]:
    defined = values[~np.isnan(values)]
    if not defined.size:
        return {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    ci = percentile_interval(nanmean_rows(values, idx), confidence) if idx is not None else None
    low, high = ci if ci is not None else (None, None)
    return {"mean": float(defined.mean()), "ci_low": low, "ci_high": high, "n": int(defined.size)}


def _tutor(record: Mapping[str, Any]) -> str:
    from tutorzoo.eval.metrics.suite import group_of

    return group_of(record, "tutor")


def sid_rubric_metrics(records: Sequence[Mapping[str, Any]], judged: bool, n_resamples: int = DEFAULT_RESAMPLES,
                       confidence: float = DEFAULT_CONFIDENCE, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """SID rubric metrics per tutor from the verdicts stored in ``records``.

    Returns ``{"groups": {tutor: {"n_units", "metrics": {name: summary}, "judge_failures": {...}}}, "specs",
    "judge_failures"}`` (the top-level ``judge_failures`` sums the groups'). ``judge_failures`` counts
    ``verdicts_failed`` (no parsable sample: fail values used, so they pull the means down), ``samples_failed``
    of ``samples``, and ``missing`` records without a SID verdict (an episode that could not be played, a judge
    that crashed: left out of the means). With ``judged=False`` every summary is ``not_computed`` and there is
    no ``judge_failures``.

    Example::

        sid_rubric_metrics(records, judged=False)["groups"]["socratic"]["metrics"]["IRA"]["not_computed"]
    """
    by_tutor: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        by_tutor.setdefault(_tutor(record), []).append(record)
    names = (*CRITERIA, AVG)
    groups: dict[str, Any] = {}
    for tutor in sorted(by_tutor):
        members = by_tutor[tutor]
        if not judged:
            groups[tutor] = {"n_units": len(members), "metrics": {
                n: {"mean": None, "ci_low": None, "ci_high": None, "n": 0, "not_computed": NOT_COMPUTED}
                for n in names}}
            continue
        verdicts = [sid_verdict(r) for r in members]
        judged_verdicts = [v for v in verdicts if v is not None]
        failures = {"verdicts_failed": sum(v["n_failed"] == v["n_samples"] for v in judged_verdicts),
                    "samples_failed": sum(int(v["n_failed"]) for v in judged_verdicts),
                    "samples": sum(int(v["n_samples"]) for v in judged_verdicts),
                    "missing": len(verdicts) - len(judged_verdicts)}
        table = np.full((len(judged_verdicts), len(names)), np.nan)
        for i, verdict in enumerate(judged_verdicts):
            scores = [verdict["values"].get(c) for c in CRITERIA]
            for j, score in enumerate(scores):
                if isinstance(score, (int, float)) and not isinstance(score, bool):
                    table[i, j] = float(score)
            if all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores):
                table[i, -1] = float(np.mean(scores))
        idx = (resample_indices(len(judged_verdicts), n_resamples, np.random.default_rng(seed))
               if n_resamples and judged_verdicts else None)
        metrics = {}
        for j, name in enumerate(names):
            metrics[name] = _summary(table[:, j], idx, confidence)
            if not judged_verdicts:
                metrics[name]["not_computed"] = f"no {RUBRIC} verdict in the records"
        groups[tutor] = {"n_units": len(members), "metrics": metrics, "judge_failures": failures}
    out: dict[str, Any] = {"groups": groups, "specs": dict(SID_RUBRIC_SPECS)}
    if judged:
        keys = ("verdicts_failed", "samples_failed", "samples", "missing")
        out["judge_failures"] = {k: sum(g["judge_failures"][k] for g in groups.values()) for k in keys}
    return out
