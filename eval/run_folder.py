"""A run's output folder: ``run.json`` (what the run is), the records file (JSONL, one line per finished
record) and the rule for an existing folder (refuse, ``--resume`` the same run, or ``--overwrite``).

Every command that writes runs (``eval``, ``rollout``) goes through :func:`prepare_output`; step 2 of
:mod:`tutorzoo.eval.runner` describes the rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutorzoo.envs.errors import ConfigError, DatasetError

if TYPE_CHECKING:
    from tutorzoo.eval.suite import Suite

RUN_FILE = "run.json"
DEFAULT_RECORDS_FILE = "records.jsonl"
MAX_PLAIN_CHUNK = 16  # units per chunk for a tutor without act_batch (finer = better balance, less lost on a crash)
# tutor options that do not change what a run computes: they may differ on --resume
NON_IDENTITY_KWARGS = ("base_url", "cache_dir")


def read_records(path: Path, repair: bool = False) -> list[dict]:
    """The records of a JSONL output. A truncated or unparsable *last* line (a writer killed mid-line) is
    dropped, and with ``repair`` cut from the file so appends continue cleanly; a bad line elsewhere is a
    :class:`~tutorzoo.envs.errors.DatasetError` (the file was edited or corrupted: nothing is guessed)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    records: list[dict] = []
    pos, number = 0, 0
    while pos < len(data):
        newline = data.find(b"\n", pos)
        end = len(data) if newline == -1 else newline + 1
        raw, number = data[pos:end], number + 1
        if raw.strip():
            try:
                record = json.loads(raw)
                if not isinstance(record, dict) or "tutor" not in record:
                    raise ValueError("not a record object with a 'tutor'")
            except ValueError as exc:
                if end < len(data):
                    raise DatasetError(f"{path}:{number}: not a JSON record ({exc}); the file is corrupted: remove "
                                       "the line or start a new --out") from None
                if repair:
                    with path.open("r+b") as fh:
                        fh.truncate(pos)
                break
            if newline == -1 and repair:  # a complete last record that lost only its newline: finish the line
                with path.open("ab") as fh:
                    fh.write(b"\n")
            records.append(record)
        pos = end
    return records


def record_key(record: dict) -> str:
    if "key" in record:
        return str(record["key"])
    if "spec" in record:  # an episodes.jsonl written before records carried their key
        from tutorzoo.envs.config import EpisodeSpec

        return EpisodeSpec.model_validate(record["spec"]).key()
    raise DatasetError(f"a record of tutor {record.get('tutor')!r} has no 'key'; it cannot be matched to a unit")


def run_identity(suite: Suite, split: str, tutors: list[str], limit: int | None, n_units: int,
                 tutor_kwargs: dict[str, Any], judge: dict[str, Any] | None, batch_size: int | None) -> dict[str, Any]:
    """What must match for ``--resume`` to continue a run (``batch_size`` only matters to batched tutors)."""
    from tutorzoo.eval.tracking import scrub_secrets

    judge_id = None if judge is None else {k: v for k, v in judge.items() if k not in ("base_url", "cache_dir")}
    return scrub_secrets({
        "suite": suite.name, "version": suite.version, "kind": suite.kind, "split": split, "tutors": tutors,
        "limit": limit, "units": n_units,
        "tutor_kwargs": {k: v for k, v in sorted(tutor_kwargs.items()) if k not in NON_IDENTITY_KWARGS},
        "judge": judge_id, "batch_size": batch_size,
    })


def _describe(ident: dict[str, Any]) -> str:
    if ident.get("command") == "rollout":
        return (f"a rollout of {ident.get('tutor')!r} with {ident.get('persona')!r} on {ident.get('task_set')} "
                f"({ident.get('episodes')} episodes, seed {ident.get('seed')})")
    if "suite" not in ident:
        return "another kind of run"
    return (f"suite {ident.get('suite')!r} v{ident.get('version')} (split {ident.get('split')}, tutors "
            f"{ident.get('tutors')}, limit {ident.get('limit')})")


def check_out_dir(out: Path) -> None:
    """``--out`` must be a folder (or not exist yet): a file there is a one-line error naming the fix."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, but --out takes a folder (the run writes episodes.jsonl, "
                          f"metrics.json and report.md into it); give a folder, e.g. --out {out.with_suffix('')}_run")


def prepare_output(out: Path, path: Path, ident: dict[str, Any], resume: bool, overwrite: bool = False) -> list[dict]:
    """The output rule of every command that writes runs (``eval``, ``rollout``): check ``out`` against this
    run and return the records already done there (empty for a fresh run).

    A non-empty records file is refused unless ``resume`` (continue it: ``run.json`` must describe the same
    run) or ``overwrite`` (start over; only then is anything deleted); ``out`` naming a file is refused."""
    out = Path(out)
    check_out_dir(out)
    if resume and overwrite:
        raise ConfigError("--resume continues the run in --out and --overwrite starts it over: give one of them")
    run_file = out / RUN_FILE
    has_records = path.exists() and path.stat().st_size > 0 and not overwrite
    if has_records and not resume:
        n = len(read_records(path))
        raise ConfigError(f"{path} already holds {n} finished records; pass --resume to continue that run, "
                          "--overwrite to start it over, or give a new --out (finished work is never deleted "
                          "unless you ask)")
    if has_records:
        if not run_file.exists():
            raise ConfigError(f"cannot resume {out}: it has {path.name} but no {RUN_FILE} saying which suite it "
                              "belongs to; give a new --out")
        try:
            saved = json.loads(run_file.read_text(encoding="utf-8"))
        except ValueError:
            raise ConfigError(f"cannot resume {out}: {run_file} is not valid JSON; give a new --out") from None
        diff = sorted(k for k in set(saved) | set(ident) if saved.get(k) != ident.get(k))
        if diff:
            changes = "; ".join(f"{k}: {saved.get(k)!r} there, {ident.get(k)!r} now" for k in diff)
            raise ConfigError(f"cannot resume {out}: it belongs to {_describe(saved)}, not to this run "
                              f"({changes}); rerun with the same suite and options, or give a new --out")
        return read_records(path, repair=True)
    out.mkdir(parents=True, exist_ok=True)
    run_file.write_text(json.dumps(ident, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    path.write_bytes(b"")
    return []
