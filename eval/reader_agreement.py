"""Content-reader agreement with a hand-labelled set of tutor turns: is what a reader credits what the turn says?

``tutorzoo agreement --reader rule --reader llm:openai:gpt-4o-mini`` scores each reader against
``eval/data/reader_gold.jsonl`` (the rule reader is always scored beside a model reader). Each record is one
tutor turn on a math or stem task, labelled by hand (not by any reader) with:

- ``kc`` — the component the turn works on (:attr:`tutorzoo.envs.content.Reading.kc`): for math the component whose
  computation the numbers go through, for STEM the component whose proposition it states or asks; ``null`` for
  a turn with no content of the task (praise, a component's name, moves without content, another task's material).
- ``verdict`` — ``false`` when the turn states something wrong about the task (a wrong computation, a negated
  fact, a misconception stated as correct), ``true`` when it has checkable content of the task (a true statement
  or a gradeable question) and nothing false, ``none`` when it has no content of the task.
- ``affirms`` / ``refutes`` — the misconception the turn states as correct / gives a counterexample to (a
  concrete case on which its rule and the correct rule differ, with the correct result stated or asked for; for
  STEM an observation that refutes the belief), or null.

A reading's turn verdict is ``false`` if it has a false statement or affirms a misconception, else ``true`` if it
has content, else ``none``; ``affirms`` / ``refutes`` agree when the reading names the gold misconception among
those it affirms / refutes, or names none when the gold label is null. For
each field: accuracy, Cohen's κ and the majority-class baseline; for a model reader also its failures (a failed
turn reads as no content, so it scores as ``none``, never as a pass).

Example::

    from tutorzoo.eval.reader_agreement import reader_agreement
    reader_agreement("rule")["fields"]["verdict"]["accuracy"]
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from tutorzoo.agents.content_reader_llm import LLMContentReader, make_reader
from tutorzoo.envs.content import Reading
from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.jsonl_lines import jsonl_file_values
from tutorzoo.envs.tasks import TASK_SETS, Task, get_task_set
from tutorzoo.eval.agreement import cohen_kappa

READER_GOLD_PATH = Path(__file__).resolve().parent / "data" / "reader_gold.jsonl"
VERDICTS = ("true", "false", "none")
READER_FIELDS = ("kc", "verdict", "affirms", "refutes")
_KEYS = {"id", "task", "utterance", *READER_FIELDS}


def load_reader_gold(path: str | Path = READER_GOLD_PATH) -> list[dict]:
    """Read and check a reader gold file: one JSON object per line with exactly the keys of the module docstring,
    every id the task's own. Raises :class:`DatasetError` naming the file, the line and the fix."""
    path = Path(path)
    records: list[dict] = []
    seen: set[str] = set()
    tasks: dict[tuple, Task] = {}
    for n, rec in jsonl_file_values(path, "reader gold file", lambda n, exc: f"{path}:{n}: not valid JSON ({exc}); "
                                    "write one JSON object per line"):
        where = f"{path}:{n}"
        if not isinstance(rec, dict) or set(rec) != _KEYS:
            got = sorted(rec) if isinstance(rec, dict) else type(rec).__name__
            raise DatasetError(f"{where}: a record has exactly the keys {sorted(_KEYS)}, got {got}")
        if rec["id"] in seen:
            raise DatasetError(f"{where}: id {rec['id']!r} is used twice; give each record its own id")
        seen.add(rec["id"])
        ref = rec["task"]
        if not (isinstance(ref, dict) and set(ref) == {"task_set", "task_id", "seed"} and ref["task_set"] in TASK_SETS
                and isinstance(ref["seed"], int)):
            raise DatasetError(f"{where}: task must be {{'task_set': one of {sorted(TASK_SETS)}, 'task_id', 'seed': "
                               f"int}}, got {ref!r}")
        task = _task(ref, tasks)
        if not isinstance(rec["utterance"], str) or not rec["utterance"].strip():
            raise DatasetError(f"{where}: utterance must be a non-empty text")
        kcs = [k.id for k in task.knowledge_components]
        mis = [m.id for m in task.misconceptions]
        if rec["verdict"] not in VERDICTS:
            raise DatasetError(f"{where}: verdict {rec['verdict']!r} must be one of {list(VERDICTS)}")
        if rec["kc"] is not None and rec["kc"] not in kcs:
            raise DatasetError(f"{where}: kc {rec['kc']!r} is not a component of {task.id}; use one of {kcs} or null")
        if (rec["kc"] is None) != (rec["verdict"] == "none"):
            raise DatasetError(f"{where}: kc is null exactly when verdict is 'none' (a turn without content of the "
                               f"task); got kc {rec['kc']!r} with verdict {rec['verdict']!r}")
        for field in ("affirms", "refutes"):
            if rec[field] is not None and rec[field] not in mis:
                raise DatasetError(f"{where}: {field} {rec[field]!r} is not a misconception of {task.id}; use one of "
                                   f"{mis} or null")
        if rec["affirms"] is not None and rec["verdict"] != "false":
            raise DatasetError(f"{where}: a turn that affirms a misconception has verdict 'false'")
        records.append(rec)
    if not records:
        raise DatasetError(f"{path}: no records; add one JSON object per labelled tutor turn")
    return records


def _task(ref: dict, cache: dict[tuple, Task]) -> Task:
    key = (ref["task_set"], ref["task_id"], ref["seed"])
    if key not in cache:
        try:
            cache[key] = get_task_set(ref["task_set"]).build(ref["task_id"], np.random.default_rng(ref["seed"]))
        except Exception as exc:  # an unknown task id: say which record
            raise DatasetError(f"task {ref!r} cannot be built ({exc}); fix the task reference") from exc
    return cache[key]


def turn_labels(reading: Reading, gold: dict | None = None) -> dict[str, str | None]:
    """The four labels a reading gives a turn, in the gold set's terms. A turn may affirm or refute several
    misconceptions: with ``gold``, the gold one is chosen when the reading names it (else the first it names)."""
    false = reading.false_statements() > 0 or bool(reading.affirmed)
    verdict = "false" if false else "true" if reading.has_content else "none"
    out: dict[str, str | None] = {"kc": reading.kc, "verdict": verdict}
    for field, named in (("affirms", reading.affirmed), ("refutes", reading.refuted)):
        want = gold.get(field) if gold else None
        out[field] = want if want in named else (named or (None,))[0]
    return out


def reader_agreement(spec: str = "rule", path: str | Path = READER_GOLD_PATH, **backend_kwargs: Any) -> dict:
    """Accuracy, κ and the majority baseline per field of the reader ``spec`` (``rule``, ``llm:<backend>``,
    ``hf:<path>``; ``backend_kwargs`` go to the backend) on the reader gold set at ``path``.

    Returns ``{"reader", "gold", "n", "fields": {field: {"accuracy", "kappa", "baseline", "majority_label"}},
    "by_task_set": {task_set: {"n", field: accuracy}}, "failures": None | {"reads", "failed", "failure_rate",
    "errors"}, "misses": [[id, field, gold, predicted], ...]}``.

    Example::

        reader_agreement("rule")["fields"]["kc"]["accuracy"]
    """
    records = load_reader_gold(path)
    tasks: dict[tuple, Task] = {}
    groups: dict[tuple, list[dict]] = {}
    for rec in records:
        groups.setdefault(tuple(rec["task"].values()), []).append(rec)
    predicted: dict[str, dict[str, str | None]] = {}
    failures: Counter[str] = Counter()
    reads = failed = 0
    model = False
    for recs in groups.values():
        task = _task(recs[0]["task"], tasks)
        reader = make_reader(spec, task, **backend_kwargs)
        texts = [r["utterance"] for r in recs]
        if isinstance(reader, LLMContentReader):
            model = True
            readings = reader.read_many(texts)
            s = reader.summary()
            reads, failed = reads + s["reads"], failed + s["failed"]
            failures.update(s["errors"])
        else:
            readings = [reader.read(t) for t in texts]
        for rec, reading in zip(recs, readings, strict=True):
            predicted[rec["id"]] = turn_labels(reading, rec)
    fields: dict[str, dict] = {}
    misses: list[list[Any]] = []
    for field in READER_FIELDS:
        gold = [str(r[field]) for r in records]
        pred = [str(predicted[r["id"]][field]) for r in records]
        kappa, p_o, _ = cohen_kappa(gold, pred)
        label, count = Counter(gold).most_common(1)[0]
        fields[field] = {"accuracy": p_o, "kappa": kappa, "baseline": count / len(gold), "majority_label": label}
        misses += [[r["id"], field, g, p] for r, g, p in zip(records, gold, pred, strict=True) if g != p]
    by_set: dict[str, dict] = {}
    for ts in sorted({r["task"]["task_set"] for r in records}):
        recs = [r for r in records if r["task"]["task_set"] == ts]
        by_set[ts] = {"n": len(recs), **{f: sum(str(predicted[r["id"]][f]) == str(r[f]) for r in recs) / len(recs)
                                         for f in READER_FIELDS}}
    return {"reader": spec, "gold": str(path), "n": len(records), "fields": fields, "by_task_set": by_set,
            "failures": {"reads": reads, "failed": failed, "failure_rate": failed / reads if reads else 0.0,
                         "errors": dict(sorted(failures.items()))} if model else None,
            "misses": misses}


def print_reports(reports: list[dict]) -> None:
    """The reader agreement table (one accuracy and κ column pair per reader) and the per-task-set breakdown."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    first = reports[0]
    table = Table(title=f"Content-reader agreement with {Path(first['gold']).name} ({first['n']} tutor turns)",
                  caption="! = accuracy not above the majority baseline")
    table.add_column("field", no_wrap=True)
    table.add_column("majority baseline", justify="right")
    for rep in reports:
        table.add_column(f"{escape(rep['reader'])} acc", justify="right")
        table.add_column(f"{escape(rep['reader'])} κ", justify="right")
    for field in READER_FIELDS:
        row = [field, f"{first['fields'][field]['baseline']:.3f}"]
        for rep in reports:
            f = rep["fields"][field]
            flag = " !" if f["accuracy"] <= f["baseline"] else ""
            row += [f"{f['accuracy']:.3f}{flag}", "undefined" if f["kappa"] is None else f"{f['kappa']:.3f}"]
        table.add_row(*row)
    console = Console()
    console.print(table)
    for rep in reports:
        bt = Table(title=f"{escape(rep['reader'])}: accuracy by task set")
        bt.add_column("task set")
        bt.add_column("n", justify="right")
        for field in READER_FIELDS:
            bt.add_column(field, justify="right")
        for ts, v in rep["by_task_set"].items():
            bt.add_row(ts, str(v["n"]), *(f"{v[f]:.2f}" for f in READER_FIELDS))
        console.print(bt)
    # plain lines, easy to grep
    for rep in reports:
        if rep["failures"] is not None:
            f = rep["failures"]
            print(f"{rep['reader']}: {f['failed']} of {f['reads']} turns not read (failure rate "
                  f"{f['failure_rate']:.3f}) {f['errors']}; a failed turn reads as no content")


__all__ = ["READER_GOLD_PATH", "load_reader_gold", "print_reports", "reader_agreement", "turn_labels"]
