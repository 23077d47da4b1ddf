"""``tutorzoo score FILE [FILE ...] --out DIR``: score episodes, dialogues or peers' data into ``DIR/metrics.json``.

The format is detected (:mod:`tutorzoo.eval.formats`): TutorZoo's ``episodes.jsonl``; SID-style annotated dialogues
(``turns``); plain chats (``messages``, user = student, assistant = tutor); MathDial (``.csv`` / ``.jsonl``;
generated ``<EOM>`` columns as their own tutors); MRBench / BEA 2025 (``.json``); EducationQ's interaction
logs (``{teacher: {student: {item: {pre_test, interaction, post_test}}}}``). Every metric the data supports is
computed: Success@k / Telling@k from MathDial's answers, DAMR from MRBench's labels, ACC / ALG / PNIR / CSS /
UIC (same-item) from EducationQ's tests. Several files are scored together (e.g. one EducationQ log per
teacher, so that UIC compares them).

SID metrics need SID labels. A dialogue none of whose turns carries one is labelled by ``--annotator rule`` or
``--annotator llm:<backend>:<model>``, or, with the default ``--annotator none``, its SID metrics are
reported as not computed (``null``, and a reason under ``not_computed``): never as zeros.

Bad records: a line that is not JSON, or a record that fails validation (unknown label, a post-test item that
names no pre-test item, ...) is **skipped and reported**, never silently dropped and never allowed to lose the
rest of the file: ``metrics.json`` lists it under ``skipped`` as ``{"location": "line 7", "error": ...}``, the
CLI prints it to stderr and exits with status 1 ("written, but incomplete"). ``--strict`` (``strict=True``)
makes the first bad record an error instead, and nothing is written. An unreadable file, an unknown format or
a file with no valid record is always an error (status 2).

A ranking led by a tutor that told the answer is flagged (``warnings``): each gain column says which post-test
it is on (``ALG``: isomorphic items; ``ALG_same``: the same item, where telling pays).

``metrics.json`` = ``{"source", "format", "data_format", "n_records", "skipped", "annotator", "not_computed",
"notes", "warnings", "per_episode": [{"location", ids..., "metrics", "meta" (with --with-meta)}],
"aggregate": <suite_metrics output>, "metrics": {name: MetricSpec}}``.

Example::

    from tutorzoo.eval.score import score_file
    result = score_file("runs/demo/episodes.jsonl", "runs/demo")
    result["aggregate"]["groups"]["socratic"]["metrics"]["TotalScore"]["mean"]
    score_file("mathdial/data/test.csv", "runs/mathdial")["aggregate"]["groups"]["mathdial_human"]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.eval.annotate_records import DEFAULT_ANNOTATOR, annotate_records, check_annotator
from tutorzoo.eval.formats import Loaded, is_labelled, read_scorable
from tutorzoo.eval.metrics.registry import MATHDIAL_MAX_K, build_registry, mathdial_ks
from tutorzoo.eval.metrics.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from tutorzoo.eval.metrics.suite import ScoredEpisode, parse_episode, suite_from_episodes
from tutorzoo.rewards.sid import SID_METRIC_NAMES

OUTPUT_NAME = "metrics.json"
EXIT_OK, EXIT_PARTIAL, EXIT_ERROR = 0, 1, 2
_SUMMARY_COLUMNS = ("TotalScore", "ALG", "ALG_same", "PNIR", "UIC", "Telling@5")
_MATHDIAL_COLUMN = re.compile(r"(Success|Telling)@(\d+)")
# What the screen shows for each data format (metrics.json has every metric).
_FORMAT_COLUMNS: dict[str, tuple[str, ...]] = {
    "mathdial": ("Success@1", "Success@3", "Success@5", "Telling@1", "Telling@3", "Telling@5", "TotalScore"),
    "mrbench": ("DAMR_mistake_identification", "DAMR_mistake_location", "DAMR_revealing_answer",
                "DAMR_providing_guidance", "DAMR_actionability", "DAMR_coherence", "DAMR_tutor_tone",
                "DAMR_humanlikeness"),
    "educationq_log": ("ACC_pre_same", "ACC_post_same", "ALG_same", "PNIR_same", "CSS_same", "UIC_same",
                       "TotalScore"),
}
_SID_ADVICE = "annotate them with --annotator rule or --annotator llm:<backend>:<model>"


def _position(location: str) -> int:
    """The record number in a location ("line 7", "element 3 (tutor)"), for ordering skipped records."""
    m = re.search(r"\d+", location)
    return int(m[0]) if m else 0


def _read_all(paths: Sequence[Path]) -> Loaded:
    """Every file read and converted; with several files, locations are prefixed with the file's name."""
    parts = [read_scorable(p) for p in paths]
    if len(parts) == 1:
        return parts[0]
    formats = {p.data_format for p in parts}
    if len(formats) > 1:
        raise DatasetError("files of different formats cannot be scored together: "
                           + ", ".join(f"{p.name} is {x.data_format}" for p, x in zip(paths, parts, strict=True)))
    merged = Loaded(parts[0].container, parts[0].data_format, [])
    for path, part in zip(paths, parts, strict=True):
        merged.records += [(f"{path.name} {loc}", rec) for loc, rec in part.records]
        merged.skipped += [{**s, "location": f"{path.name} {s['location']}"} for s in part.skipped]
        merged.notes += [n for n in part.notes if n not in merged.notes]
    return merged


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


_GAIN_KIND = {"ALG": "isomorphic post-test", "ALG_same": "same-item post-test"}


def ranking_warnings(result: dict) -> list[str]:
    """A warning when the group ranked first by learning gain told the answer (Telling@k >= 0.5 at the largest
    k, or MRBench's "revealing the answer" desired in under half of its responses): its gain may be telling."""
    groups = result["aggregate"]["groups"]
    tellings = sorted((c for c in result["metrics"] if c.startswith("Telling@")), key=lambda c: int(c.split("@")[1]))
    warnings = []
    for gain, kind in _GAIN_KIND.items():
        values = {g: v["metrics"][gain]["mean"] for g, v in groups.items() if v["metrics"][gain]["mean"] is not None}
        if len(values) < 2:
            continue
        leader = max(sorted(values), key=lambda g: values[g])
        metrics = groups[leader]["metrics"]
        told = metrics[tellings[-1]]["mean"] if tellings else None
        revealed = metrics["DAMR_revealing_answer"]["mean"]
        if (told is not None and told >= 0.5) or (revealed is not None and revealed < 50):
            evidence = f"{tellings[-1]} = {told:.2f}" if told is not None else f"DAMR_revealing_answer = {revealed:.1f}"
            warnings.append(f"{leader} ranks first by {gain} ({kind} gain) and told the answer ({evidence}); "
                            + ("a same-item gain rewards telling, compare ALG (isomorphic)" if gain == "ALG_same"
                               else "check its transcripts before trusting the ranking"))
    return warnings


def _unlabelled_sid(episode: ScoredEpisode) -> None:
    """SID metrics of a dialogue without SID labels are unknown, not zero."""
    for name in SID_METRIC_NAMES:
        episode.metrics[name] = None


def score_file(
    path: str | Path | Sequence[str | Path],
    out_dir: str | Path,
    group_by: str = "tutor",
    ks: Sequence[int] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    strict: bool = False,
    annotator: str = DEFAULT_ANNOTATOR,
    with_meta: bool = False,
) -> dict:
    """Score ``path`` (one file or several of one format) and write ``out_dir/metrics.json``; returns what it wrote.

    ``ks`` are MathDial's budgets (default every k from 1 to 10, as MathDial's ``evaluate.py``).
    ``with_meta`` writes each record's source fields (``meta``: every field of a peer's record that is not a turn)
    into ``per_episode``; off by default, since for logs that carry whole model responses it copies the input.

    Raises :class:`DatasetError` for an unreadable or unknown file, a file without a valid record, or (with
    ``strict``) the first bad record. Example: ``score_file("episodes.jsonl", "out")["skipped"]``.
    """
    check_annotator(annotator)
    ks = mathdial_ks() if ks is None else tuple(ks)
    paths = [Path(p) for p in ([path] if isinstance(path, (str, Path)) else path)]
    if not paths:
        raise DatasetError("no file to score; give at least one")
    loaded = _read_all(paths)
    skipped = list(loaded.skipped)
    if strict and skipped:
        raise DatasetError(skipped[0]["error"])
    unlabelled = {loc for loc, rec in loaded.records if isinstance(rec, dict) and not is_labelled(rec)}
    records, annotation = annotate_records(loaded.records, annotator, only=unlabelled)
    episodes: list[tuple[str, ScoredEpisode]] = []
    label = paths[0].name if len(paths) == 1 else ""
    not_sid = 0
    for location, record in records:
        where = f"{label} {location}".strip()
        try:
            episode = parse_episode(record, where, ks)
        except DatasetError as exc:
            if strict:
                raise
            skipped.append({"location": location, "error": str(exc)})
            continue
        if location in unlabelled and annotator == "none":
            _unlabelled_sid(episode)
            not_sid += 1
        episodes.append((location, episode))
    skipped.sort(key=lambda s: _position(s["location"]))
    if not episodes:
        detail = f"; first problem: {skipped[0]['error']}" if skipped else ""
        raise DatasetError(f"{', '.join(map(str, paths))}: no valid episode record or annotated dialogue{detail}")
    not_computed = {}
    if not_sid:
        not_computed["SID"] = (f"{not_sid} of {len(episodes)} dialogues carry no SID labels, so their SD, SV, IKT, BP, "
                               f"SC, L3GR, 3C and TotalScore are not computed; {_SID_ADVICE}")
    aggregate = suite_from_episodes([e for _, e in episodes], group_by, ks, n_resamples, confidence, seed)
    per_episode = []
    for location, e in episodes:
        entry = {"location": location, **_ids(e.record), "metrics": e.metrics}
        if with_meta and isinstance(e.record.get("meta"), dict):
            entry["meta"] = e.record["meta"]
        per_episode.append(entry)
    result = {
        "source": paths[0].name if len(paths) == 1 else [p.name for p in paths],
        "format": loaded.container,
        "data_format": loaded.data_format,
        "n_records": len(episodes),
        "skipped": skipped,
        "annotator": {**annotation, "unlabelled_dialogues": len(unlabelled)},
        "not_computed": not_computed,
        "notes": loaded.notes,
        "per_episode": per_episode,
        "aggregate": aggregate,
        "metrics": {name: spec.to_dict() for name, spec in build_registry(tuple(ks)).items()},
    }
    result["warnings"] = ranking_warnings(result)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / OUTPUT_NAME).write_text(json.dumps(result, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return result


def _format(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tutorzoo score",
        description="Compute every metric a file supports (SID, EducationQ, MathDial, MRBench) and write "
        "metrics.json. Reads episodes.jsonl, SID-style dialogues, plain chats (messages), MathDial csv/jsonl, "
        "MRBench json and EducationQ interaction logs; the format is detected.",
    )
    parser.add_argument("files", type=Path, nargs="+", metavar="file",
                        help="file(s) to score; several files of one format are scored together")
    parser.add_argument("--out", type=Path, default=None, help="output directory (default: the file's directory)")
    parser.add_argument("--group-by", default="tutor", help="record key, spec key or dotted path (default: tutor)")
    parser.add_argument("--max-k", type=int, default=MATHDIAL_MAX_K,
                        help=f"MathDial's Success@k / Telling@k for every k from 1 to this (default {MATHDIAL_MAX_K}, "
                        "as MathDial's evaluate.py)")
    parser.add_argument("--k", type=int, action="append", dest="ks",
                        help="one MathDial budget k instead of 1..--max-k (repeatable)")
    parser.add_argument("--annotator", default=DEFAULT_ANNOTATOR,
                        help="labels for dialogues without SID labels: none (default: their SID metrics are not "
                        "computed), rule, or llm:<backend>:<model>")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples (0 = no CI)")
    parser.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE, help="CI level (default 0.95)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed (default 0)")
    parser.add_argument("--strict", action="store_true", help="fail on the first bad record instead of skipping")
    parser.add_argument("--with-meta", action="store_true",
                        help="write each record's source fields (meta) into per_episode of metrics.json")
    return parser


def _budgets(result: dict, kind: str) -> list[str]:
    """The ``Success@k`` (or ``Telling@k``) names of ``result`` in order of k."""
    found = [(int(m[2]), m[0]) for m in map(_MATHDIAL_COLUMN.fullmatch, result["metrics"]) if m and m[1] == kind]
    return [name for _, name in sorted(found)]


def _columns(result: dict) -> list[str]:
    candidates = list(_FORMAT_COLUMNS.get(result["data_format"], _SUMMARY_COLUMNS))
    if result["data_format"] == "mathdial":
        largest = [names[-1] for names in (_budgets(result, "Success"), _budgets(result, "Telling")) if names]
        candidates[:0] = [c for c in largest if c not in candidates]
    groups = result["aggregate"]["groups"].values()
    return [c for c in candidates if c in result["metrics"]
            and any(g["metrics"][c]["mean"] is not None for g in groups)]


def _print_every_budget(result: dict) -> None:
    """Success@k and Telling@k at every k in percent, one line each per group, as MathDial's evaluate.py prints."""
    for name, group in result["aggregate"]["groups"].items():
        for kind in ("Success", "Telling"):
            names = _budgets(result, kind)
            values = [group["metrics"][c]["mean"] for c in names]
            if not names or all(v is None for v in values):
                continue
            ks = [c.split("@")[1] for c in names]
            cells = " ".join("-" if v is None else f"{100 * v:.2f}" for v in values)
            label = f"{kind}@{ks[0]}..{ks[-1]}" if len(ks) > 1 else names[0]
            print(f"{name}: {label} (%): {cells}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tutorzoo score``; returns 0 (ok), 1 (written, some records skipped) or 2 (error)."""
    parser = _parser()
    args = parser.parse_args(argv)
    out = args.out if args.out is not None else args.files[0].parent
    try:
        ks = tuple(args.ks) if args.ks else mathdial_ks(args.max_k)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        result = score_file(args.files, out, args.group_by, ks, args.resamples,
                            args.confidence, args.seed, args.strict, args.annotator, args.with_meta)
    except (DatasetError, ConfigError, ValueError) as exc:
        print(f"tutorzoo score: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for item in result["skipped"]:
        print(f"tutorzoo score: skipped {item['error']}", file=sys.stderr)
    print(f"wrote {out / OUTPUT_NAME}: {result['n_records']} records ({result['data_format']}), "
          f"{len(result['skipped'])} skipped")
    annotation = result["annotator"]
    if annotation["unlabelled_dialogues"]:
        print(f"SID annotator: {annotation['annotator']}"
              + (" (the default)" if annotation["annotator"] == DEFAULT_ANNOTATOR else "")
              + f"; {annotation['unlabelled_dialogues']} dialogue(s) had no SID labels"
              + (f", {annotation['failed_turns']} turn(s) failed" if annotation["failed_turns"] else ""))
    for what, why in result["not_computed"].items():
        print(f"not computed: {what}: {why}")
    for note in result["notes"]:
        print(f"note: {note}")
    for warning in result["warnings"]:
        print(f"warning: {warning}")
    columns = _columns(result)
    print("  ".join([f"{result['aggregate']['group_by']:<20}", *(f"{c:>10}" for c in columns)]))
    for name, group in result["aggregate"]["groups"].items():
        cells = (_format(group["metrics"][c]["mean"]) for c in columns)
        print("  ".join([f"{name:<20}", *(f"{c:>10}" for c in cells)]))
    if result["data_format"] == "mathdial":
        _print_every_budget(result)
    return EXIT_PARTIAL if result["skipped"] else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
