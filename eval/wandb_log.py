"""``tutorzoo eval --wandb``: an evaluation run logged to Weights & Biases.

One W&B run per eval run, named ``eval__{suite}__{seed}__{time}`` (:func:`tutorzoo.eval.tracking.run_name`), with the
run's config minus secrets (:func:`tutorzoo.eval.tracking.scrub_secrets`: keys that name a secret are masked, and so is
any string holding the value of a secret-named environment variable such as ``OPENAI_API_KEY``). It logs:

- every metric per tutor in the run summary (``{tutor}/{metric}`` = mean; metrics without a value are left
  out) and a ``metrics`` table (tutor, metric, mean, 95% CI, N, direction, status: ``ok``, ``undefined`` or
  ``not computed: <why>``);
- a ``transcripts`` table, one row per record with uniform column types (tutor, persona, task, seed, gains,
  scores, how it ended, failures, the transcript as text with each turn's annotations; an item suite's
  prompt and response instead of a dialogue, and its grades as JSON);
- per tutor what its numbers rest on in the summary (``{tutor}/n_scored``, ``{tutor}/n_failed``,
  ``{tutor}/invalid_turn_share``, ``{tutor}/clipped_turn_share``) and a ``health`` table;
- the paired comparisons (:mod:`tutorzoo.eval.report_paired`) as a ``paired`` table (metric, a, b, shared units,
  a - b, CI, win shares, verdict) and ``paired/{metric}/{a} vs {b}`` = a - b in the summary;
- ``report.html``, ``metrics.json`` and ``report.md`` as an artifact of type ``report`` (also copied into
  the run's ``files/``), secrets masked in the copies too.

The mode comes from ``$WANDB_MODE`` (``offline`` when unset: nothing leaves the machine unless asked;
``disabled`` logs nothing and returns None). Files go under ``$WANDB_DIR`` (default: the eval's output
folder). Command-line arguments, git state, code and system metrics are not collected, so a key passed on
the command line cannot reach the run either. W&B is an optional extra: ``pip install 'tutorzoo[wandb]'``.

Example::

    import os; os.environ["WANDB_MODE"] = "offline"
    from tutorzoo.eval.wandb_log import log_run
    run_dir = log_run(Path("runs/default"), {"suite": "default"}, records, board)
    # runs/default/wandb/offline-run-.../run-....wandb; `wandb sync <run_dir>` uploads it later
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tutorzoo.envs.errors import ConfigError, TutorZooError
from tutorzoo.envs.records import LEARNING_GAIN, learning_gain, learning_gain_same
from tutorzoo.eval.tracking import run_name, scrub_secrets

REPORT_FILES: tuple[str, ...] = ("report.html", "metrics.json", "report.md")
METRIC_COLUMNS: tuple[str, ...] = ("tutor", "metric", "mean", "ci_low", "ci_high", "n", "higher_is_better",
                                   "status")
TRANSCRIPT_COLUMNS: tuple[str, ...] = ("tutor", "persona", "task", "seed", LEARNING_GAIN, "learning_gain_same",
                                       "pretest_score", "posttest_score", "ended_by", "n_turns", "failures",
                                       "transcript", "grades")
_ANNOTATIONS: tuple[tuple[str, str], ...] = (
    ("teacher_intent", "intent"), ("teaching_strategy", "strategy"), ("teacher_guidance_level", "guidance"),
    ("student_cognition_state", "cognition"), ("cognitive_level", "Bloom"), ("discipline", "discipline"),
)


def _import_wandb() -> Any:
    try:
        import wandb
    except ImportError as exc:
        raise ConfigError("--wandb needs the Weights & Biases client, which is not installed: "
                          "pip install 'tutorzoo[wandb]'") from exc
    return wandb


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _spec(record: Mapping) -> Mapping:
    for key in ("spec", "unit"):
        if isinstance(record.get(key), Mapping):
            return record[key]
    return {}


def _task(record: Mapping) -> str:
    spec = _spec(record)
    task_id = spec.get("task_id")
    if task_id is None:
        return str(record.get("key") or spec.get("task_set") or "")
    return f"{spec['task_set']}/{task_id}" if spec.get("task_set") else str(task_id)


def transcript_text(record: Mapping) -> str:
    """A record as plain text: each turn ``speaker [annotations]: utterance``, or an item's prompt and response."""
    turns = record.get("transcript")
    if not isinstance(turns, list):
        return f"PROMPT:\n{record.get('prompt') or ''}\n\nRESPONSE:\n{record.get('response') or ''}"
    lines = []
    for turn in turns:
        if not isinstance(turn, Mapping):
            continue
        notes = []
        for field, label in _ANNOTATIONS:
            value = turn.get(field)
            if isinstance(value, list):
                value = ", ".join(map(str, value))
            if value not in (None, "", []):
                notes.append(f"{label}={value}")
        if turn.get("discipline_transfer"):
            notes.append("transfer")
        lines.append(f"{turn.get('speaker')} [{'; '.join(notes)}]: {turn.get('utterance')}")
    return "\n".join(lines)


def metric_rows(board: Mapping) -> list[list[Any]]:
    """The ``metrics`` table: one row per (tutor, metric), columns :data:`METRIC_COLUMNS`."""
    specs = board.get("specs") or {}
    rows = []
    for tutor in board["ranking"]:
        for metric, summary in board["metrics"]["groups"][tutor]["metrics"].items():
            spec = specs.get(metric) or {}
            spec = spec.to_dict() if hasattr(spec, "to_dict") else spec
            mean = _number(summary.get("mean"))
            if summary.get("not_computed"):
                status = f"not computed: {summary['not_computed']}"
            else:
                status = "ok" if mean is not None else "undefined"
            rows.append([tutor, metric, mean, _number(summary.get("ci_low")), _number(summary.get("ci_high")),
                         int(summary.get("n") or 0), str(spec.get("higher_is_better")), status])
    return rows


HEALTH_COLUMNS: tuple[str, ...] = ("tutor", "n", "scored", "failed", "errors", "turns", "invalid_turn_share",
                                   "clipped_turn_share")
PAIRED_COLUMNS: tuple[str, ...] = ("metric", "a", "b", "n", "diff", "ci_low", "ci_high", "a_wins", "b_wins", "ties",
                                   "verdict")


def health_rows(board: Mapping) -> list[list[Any]]:
    """The ``health`` table: per tutor, columns :data:`HEALTH_COLUMNS` (see
    :func:`tutorzoo.eval.runner.tutor_health`)."""
    rows = []
    for tutor, h in (board.get("health") or {}).items():
        errors = ", ".join(f"{e} x{n}" for e, n in h["errors"].items())
        rows.append([tutor, h["n"], h["scored"], h["failed"], errors, h["turns"], _number(h["invalid_share"]),
                     _number(h["clipped_share"])])
    return rows


def paired_rows(board: Mapping) -> list[list[Any]]:
    """The ``paired`` table: one row per (metric, pair of tutors), columns :data:`PAIRED_COLUMNS`."""
    from tutorzoo.eval.report_paired import verdict

    rows = []
    for metric, pairs in ((board.get("paired") or {}).get("metrics") or {}).items():
        for row in pairs:
            rows.append([metric, row["a"], row["b"], row["n"], *(_number(row[k]) for k in
                         ("diff", "ci_low", "ci_high", "a_wins", "b_wins", "ties")), verdict(row)])
    return rows


def transcript_rows(records: Sequence[Mapping]) -> list[list[Any]]:
    """The ``transcripts`` table: one row per record, columns :data:`TRANSCRIPT_COLUMNS`, secrets masked."""
    rows = []
    for record in records:
        spec = _spec(record)
        seed = spec.get("seed")
        turns = record.get("transcript")
        failures = [f.get("error", json.dumps(f, sort_keys=True)) if isinstance(f, Mapping) else str(f)
                    for f in record.get("failures") or []]
        grades = record.get("grades")
        rows.append(scrub_secrets([
            str(record.get("tutor")), str(spec.get("persona") or ""), _task(record),
            seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
            _number(learning_gain(record)), _number(learning_gain_same(record)),
            _number(record.get("pretest_score")), _number(record.get("posttest_score")),
            str(record.get("ended_by") or ""), len(turns) if isinstance(turns, list) else 0,
            "\n".join(map(str, failures)), transcript_text(record),
            json.dumps(grades, sort_keys=True, default=str) if grades is not None else "",
        ]))
    return rows


def _secret_values_in(obj: Any) -> list[str]:
    """Strings held under secret-named keys anywhere in ``obj`` (e.g. a judge config's ``api_key``)."""
    from tutorzoo.eval.tracking import MASK, is_secret_key

    found: list[str] = []
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if isinstance(key, str) and is_secret_key(key) and isinstance(value, str) and len(value) >= 8 \
                    and value != MASK:  # as short as the env rule: masking "a" everywhere would wreck the text
                found.append(value)
            else:
                found += _secret_values_in(value)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            found += _secret_values_in(value)
    return found


def _scrubbed_bytes(path: Path, secrets: list[str]) -> bytes:
    """A report file with secrets masked (second line of defence: the writers should scrub already): JSON by
    key, and every text by ``secrets`` (the run config's and the environment's secret values)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if data is not None:
            clean = scrub_secrets(data)
            if clean != data:
                text = json.dumps(clean, indent=2, sort_keys=True) + "\n"
    return scrub_secrets(text, secrets).encode("utf-8")


def _artifact_name(suite: str) -> str:
    return "report-" + re.sub(r"[^A-Za-z0-9._-]+", "-", suite).strip("-")


def log_run(out_dir: Path, run_info: dict, records: list[dict], board: dict, project: str = "tutorzoo") -> Path | None:
    """Log one eval run (see the module docstring); returns the local W&B run directory, None when disabled."""
    mode = os.environ.get("WANDB_MODE") or "offline"
    if mode == "disabled":
        return None
    wandb = _import_wandb()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    suite = str(run_info.get("suite") or board.get("kind") or "eval")
    seed = run_info.get("seed", 0)
    config = scrub_secrets({**run_info, "ranking": list(board["ranking"]), "kind": board.get("kind", "episodes"),
                            "n_records": len(records), "out_dir": str(out_dir)})
    config = json.loads(json.dumps(config, default=str))  # paths, enums ... as text
    wandb_dir = Path(os.environ.get("WANDB_DIR") or out_dir)
    wandb_dir.mkdir(parents=True, exist_ok=True)
    # Quiet: no banner, and no Weave hint (W&B mistakes our `agents` package for the OpenAI Agents SDK).
    os.environ.setdefault("WANDB_SILENT", "true")
    os.environ.setdefault("WANDB_DISABLE_WEAVE", "true")
    settings = wandb.Settings(silent=True, console="off", save_code=False, disable_git=True, x_disable_meta=True,
                              x_disable_stats=True, x_save_requirements=False)
    try:
        run = wandb.init(project=project, name=run_name("eval", suite, seed if isinstance(seed, int) else 0),
                         job_type="eval", mode=mode, dir=str(wandb_dir), config=config, settings=settings,
                         reinit="finish_previous")
    except Exception as exc:  # e.g. online mode without a login: the results are on disk already
        raise TutorZooError(f"W&B run could not start ({type(exc).__name__}: {exc}); the results are in {out_dir}. "
                            "Log in with `wandb login`, or set WANDB_MODE=offline and `wandb sync` later.") from exc
    try:
        summary: dict[str, Any] = {"n_records": len(records),
                                   "n_failed_records": sum(1 for r in records if r.get("failures"))}
        rows = metric_rows(board)
        for tutor, metric, mean, *_ in rows:
            if mean is not None:
                summary[f"{tutor}/{metric}"] = mean
        health = health_rows(board)
        for tutor, _n, scored, failed, _errors, _turns, invalid, clipped in health:
            summary.update({f"{tutor}/n_scored": scored, f"{tutor}/n_failed": failed})
            if invalid is not None:
                summary.update({f"{tutor}/invalid_turn_share": invalid, f"{tutor}/clipped_turn_share": clipped})
        paired = paired_rows(board)
        for metric, a, b, _n, diff, *_ in paired:
            if diff is not None:
                summary[f"paired/{metric}/{a} vs {b}"] = diff
        run.summary.update(summary)
        run.log({"metrics": wandb.Table(columns=list(METRIC_COLUMNS), data=rows),
                 "health": wandb.Table(columns=list(HEALTH_COLUMNS), data=health),
                 "paired": wandb.Table(columns=list(PAIRED_COLUMNS), data=paired),
                 "transcripts": wandb.Table(columns=list(TRANSCRIPT_COLUMNS), data=transcript_rows(records))})
        present = [out_dir / name for name in REPORT_FILES if (out_dir / name).is_file()]
        if present:
            artifact = wandb.Artifact(_artifact_name(suite), type="report",
                                      description=f"TutorZoo eval report of suite {suite}",
                                      metadata=scrub_secrets({"suite": suite, "files": [p.name for p in present]}))
            from tutorzoo.eval.tracking import secret_values

            secrets = sorted(set(secret_values() + _secret_values_in(run_info)), key=len, reverse=True)
            for path in present:
                copy = Path(run.dir) / path.name
                copy.write_bytes(_scrubbed_bytes(path, secrets))
                artifact.add_file(str(copy), name=path.name)
            run.log_artifact(artifact)
        run_dir = Path(getattr(run.settings, "sync_dir", None) or Path(run.dir).parent)
    finally:
        run.finish()
    return run_dir
