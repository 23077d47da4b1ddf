"""``tutorzoo score FILE --out DIR``: score a file of episodes or annotated dialogues into ``DIR/metrics.json``.

Accepted input (detected from the first non-blank character):

- JSONL (``{``): one JSON object per line, each a TutorZoo episode record (``episodes.jsonl``, has
  ``transcript``) or a SID-style annotated dialogue (has ``turns``); blank lines are ignored; a file holding a
  single pretty-printed JSON object is read as one record;
- a JSON array (``[``) of such objects (SID releases its dialogues this way).

Bad records: a line that is not JSON, or a record that fails validation (unknown label, a post-test item that
names no pre-test item, ...) is **skipped and reported**, never silently dropped and never allowed to lose the
rest of the file: ``metrics.json`` lists it under ``skipped`` as ``{"location": "line 7", "error": ...}``, the
CLI prints it to stderr and exits with status 1 ("written, but incomplete"). ``--strict`` (``strict=True``)
makes the first bad record an error instead, and nothing is written. An unreadable file, an unknown format or
a file with no valid record is always an error (status 2).

``metrics.json`` = ``{"source", "format", "n_records", "skipped", "per_episode": [{"location", ids...,
"metrics"}], "aggregate": <suite_metrics output>, "metrics": {name: MetricSpec}}``.

Example::

    from eval.score import score_file
    result = score_file("runs/demo/episodes.jsonl", "runs/demo")
    result["aggregate"]["groups"]["socratic"]["metrics"]["TotalScore"]["mean"]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from envs.errors import DatasetError
from eval.metrics.registry import DEFAULT_KS, build_registry
from eval.metrics.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from eval.metrics.suite import Episode, parse_episode, suite_from_episodes

OUTPUT_NAME = "metrics.json"
EXIT_OK, EXIT_PARTIAL, EXIT_ERROR = 0, 1, 2
_SUMMARY_COLUMNS = ("TotalScore", "ALG", "ALG_same", "PNIR", "UIC", "Telling@5")


def _read_records(path: Path) -> tuple[str, list[tuple[str, object]], list[dict]]:
    """(format, [(location, parsed JSON)], [skipped lines]) of ``path``."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file; give the episodes.jsonl a rollout wrote") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg}); a file that starts "
                "with '[' must be one JSON array of records"
            ) from None
        return "json_array", [(f"element {i}", item) for i, item in enumerate(data)], []
    if not stripped.startswith("{"):
        raise DatasetError(
            f"{path}: unknown format; expected JSONL (one JSON object per line, e.g. an episodes.jsonl) or a JSON "
            "array of episode records / annotated dialogues"
        )
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip())
    try:
        json.loads(lines[first])
    except json.JSONDecodeError:
        # Not JSONL after all: maybe one pretty-printed record.
        try:
            return "json_object", [("line 1", json.loads(text))], []
        except json.JSONDecodeError:
            pass
    records: list[tuple[str, object]] = []
    skipped: list[dict] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            skipped.append({
                "location": f"line {number}",
                "error": f"{path.name} line {number}: not valid JSON ({exc.msg} at column {exc.colno}); "
                "each line must be one complete JSON object",
            })
    return "jsonl", records, skipped


def _ids(record: object) -> dict:
    record = record if isinstance(record, dict) else {}
    spec = record.get("spec") if isinstance(record.get("spec"), dict) else {}
    return {
        "tutor": record.get("tutor"),
        "student": record.get("student"),
        "task_set": spec.get("task_set"),
        "task_id": spec.get("task_id"),
        "persona": spec.get("persona"),
        "seed": spec.get("seed"),
        "dialogue_id": record.get("dialogue_id"),
    }


def score_file(
    path: str | Path,
    out_dir: str | Path,
    group_by: str = "tutor",
    ks: Sequence[int] = DEFAULT_KS,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    strict: bool = False,
) -> dict:
    """Score ``path`` and write ``out_dir/metrics.json``; returns what it wrote.

    Raises :class:`DatasetError` for an unreadable or unknown file, a file without a valid record, or (with
    ``strict``) the first bad record. Example: ``score_file("episodes.jsonl", "out")["skipped"]``.
    """
    path = Path(path)
    fmt, raw, skipped = _read_records(path)
    if strict and skipped:
        raise DatasetError(skipped[0]["error"])
    episodes: list[tuple[str, Episode]] = []
    for location, record in raw:
        where = f"{path.name} {location}"
        try:
            episodes.append((location, parse_episode(record, where, ks)))
        except DatasetError as exc:
            if strict:
                raise
            skipped.append({"location": location, "error": str(exc)})
    skipped.sort(key=lambda s: int(s["location"].split()[-1]))
    if not episodes:
        detail = f"; first problem: {skipped[0]['error']}" if skipped else ""
        raise DatasetError(f"{path}: no valid episode record or annotated dialogue{detail}")
    aggregate = suite_from_episodes([e for _, e in episodes], group_by, ks, n_resamples, confidence, seed)
    result = {
        "source": path.name,
        "format": fmt,
        "n_records": len(episodes),
        "skipped": skipped,
        "per_episode": [
            {"location": location, **_ids(e.record), "metrics": e.metrics} for location, e in episodes
        ],
        "aggregate": aggregate,
        "metrics": {name: spec.to_dict() for name, spec in build_registry(tuple(ks)).items()},
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / OUTPUT_NAME).write_text(json.dumps(result, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return result


def _format(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tutorzoo score",
        description="Compute SID, EducationQ, MathDial and MRBench metrics of an episodes.jsonl (or of SID-style "
        "annotated dialogues) and write metrics.json.",
    )
    parser.add_argument("file", type=Path, help="episodes.jsonl, or a JSON/JSONL file of annotated dialogues")
    parser.add_argument("--out", type=Path, default=None, help="output directory (default: the file's directory)")
    parser.add_argument("--group-by", default="tutor", help="record key, spec key or dotted path (default: tutor)")
    parser.add_argument("--k", type=int, action="append", dest="ks", help="MathDial budget k (repeatable)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples (0 = no CI)")
    parser.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE, help="CI level (default 0.95)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed (default 0)")
    parser.add_argument("--strict", action="store_true", help="fail on the first bad record instead of skipping")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tutorzoo score``; returns 0 (ok), 1 (written, some records skipped) or 2 (error)."""
    args = _parser().parse_args(argv)
    out = args.out if args.out is not None else args.file.parent
    try:
        result = score_file(args.file, out, args.group_by, tuple(args.ks or DEFAULT_KS), args.resamples,
                            args.confidence, args.seed, args.strict)
    except (DatasetError, ValueError) as exc:
        print(f"tutorzoo score: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for item in result["skipped"]:
        print(f"tutorzoo score: skipped {item['error']}", file=sys.stderr)
    print(f"wrote {out / OUTPUT_NAME}: {result['n_records']} records, {len(result['skipped'])} skipped")
    columns = [c for c in _SUMMARY_COLUMNS if c in result["metrics"]]
    print("  ".join([f"{result['aggregate']['group_by']:<20}", *(f"{c:>10}" for c in columns)]))
    for name, group in result["aggregate"]["groups"].items():
        cells = (_format(group["metrics"][c]["mean"]) for c in columns)
        print("  ".join([f"{name:<20}", *(f"{c:>10}" for c in cells)]))
    return EXIT_PARTIAL if result["skipped"] else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
