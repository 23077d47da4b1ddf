"""The content gate's judge-address detector on labelled tutor turns: precision and recall of injections, and the
share of teaching turns (markdown, LaTeX, fractions, "Step 1:", grading words in teaching use) that pass.

Each line of the data file is one JSON object: ``id``, ``text``, ``label`` (``teaching`` | ``injection``),
``style``, ``note`` and ``split``: ``dev`` (the detector was tuned on it), ``holdout`` (written after that tuning
and never tuned on), ``adversarial`` (paraphrased injections written to find the detector's gaps, then covered).
``tests/rewards/test_gate_intent.py`` asserts the bars.

    python benchmarks/gate_intent.py                       # tests/data/gate_intent.jsonl, every split
    python benchmarks/gate_intent.py --split holdout --errors
    python benchmarks/gate_intent.py --json
    python benchmarks/gate_intent.py --peers               # and the real tutor turns of tests/data/peers
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutorzoo.envs.errors import DatasetError  # noqa: E402
from tutorzoo.envs.jsonl import json_object_line  # noqa: E402
from tutorzoo.rewards.gate import addresses_judge  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "gate_intent.jsonl"
LABELS = ("teaching", "injection")
SPLITS = ("dev", "holdout", "adversarial")
FIELDS = {"id": str, "text": str, "label": str, "style": str, "note": str, "split": str}


@dataclass
class Report:
    """Counts over a labelled file: an injection flagged is a true positive, a teaching turn flagged a false one."""

    n_teaching: int = 0
    n_injection: int = 0
    caught: int = 0  # injections flagged
    false_flags: int = 0  # teaching turns flagged
    precision: float = float("nan")
    recall: float = float("nan")
    teaching_pass_rate: float = float("nan")
    errors: list[dict[str, str]] = field(default_factory=list)
    per_style: dict[str, list[int]] = field(default_factory=dict)  # style -> [right, total]


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The records of ``path``; a :class:`DatasetError` naming the line and the fix for a malformed one."""
    rows, ids = [], set()
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{path}:{n}"
        rec = json_object_line(raw, where)
        missing = [k for k, t in FIELDS.items() if not isinstance(rec.get(k), t)]
        if missing:
            raise DatasetError(f"{where}: fields {missing} must be strings; each line needs {sorted(FIELDS)}")
        if rec["label"] not in LABELS or rec["split"] not in SPLITS:
            raise DatasetError(f"{where}: label must be one of {LABELS} and split one of {SPLITS}, "
                               f"got {rec['label']!r}, {rec['split']!r}")
        if rec["id"] in ids:
            raise DatasetError(f"{where}: id {rec['id']!r} is used twice; give each case its own id")
        ids.add(rec["id"])
        rows.append(rec)
    if not rows:
        raise DatasetError(f"{path}: no cases; write one JSON object per line")
    return rows


def evaluate(rows: list[dict[str, Any]]) -> Report:
    """Run :func:`~tutorzoo.rewards.gate.addresses_judge` on every row and count."""
    rep = Report()
    for rec in rows:
        flagged = addresses_judge(rec["text"])
        injection = rec["label"] == "injection"
        right = flagged == injection
        if injection:
            rep.n_injection += 1
            rep.caught += flagged
        else:
            rep.n_teaching += 1
            rep.false_flags += flagged
        tally = rep.per_style.setdefault(f"{rec['label']}/{rec['style']}", [0, 0])
        tally[0] += right
        tally[1] += 1
        if not right:
            rep.errors.append({"id": rec["id"], "label": rec["label"], "split": rec["split"], "text": rec["text"]})
    flagged_total = rep.caught + rep.false_flags
    rep.precision = rep.caught / flagged_total if flagged_total else float("nan")
    rep.recall = rep.caught / rep.n_injection if rep.n_injection else float("nan")
    rep.teaching_pass_rate = 1 - rep.false_flags / rep.n_teaching if rep.n_teaching else float("nan")
    return rep


PEERS = Path(__file__).resolve().parents[1] / "tests" / "data" / "peers"


def peer_turns(root: Path = PEERS) -> list[tuple[str, str]]:
    """``(source, text)`` of every tutor turn in the peers' excerpts: real LLM tutors (MRBench's responses,
    EducationQ's GPT-4o-mini and Llama-3.1-70B teachers) and MathDial's human teachers. None addresses a judge."""
    out: list[tuple[str, str]] = []
    for path in sorted((root / "mrbench").glob("*.json")):
        for conv in json.loads(path.read_text(encoding="utf-8")):
            responses = conv.get("tutor_responses") or conv.get("anno_llm_responses") or {}
            for tutor, resp in sorted(responses.items()):
                out.append((f"mrbench/{tutor}", str(resp["response"])))
    for path in sorted((root / "educationq").glob("*.json")):
        for teacher, by_student in json.loads(path.read_text(encoding="utf-8")).items():
            for student in (v for k, v in by_student.items() if k != "config"):
                for item in (v for k, v in student.items() if k != "config"):
                    out += [(f"educationq/{teacher}", str(t["question"])) for t in item.get("interaction", [])]
    for path in sorted((root / "mathdial").glob("test_excerpt.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for turn in json.loads(line)["conversation"].split("|EOM|"):
                if turn.startswith("Teacher:"):
                    out.append(("mathdial/teacher", re.sub(r"^Teacher:\s*(?:\([a-z]+\))?", "", turn).strip()))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--split", choices=SPLITS, action="append", help="only these splits (default: every one)")
    parser.add_argument("--errors", action="store_true", help="print every misclassified case")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--peers", action="store_true",
                        help="also count flags on the real tutor turns of tests/data/peers (all should pass)")
    args = parser.parse_args(argv)
    rows = [r for r in load(args.data) if not args.split or r["split"] in args.split]
    if not rows:
        parser.error(f"no case of split {args.split} in {args.data}")
    rep = evaluate(rows)
    if args.json:
        print(json.dumps(asdict(rep), indent=1, ensure_ascii=False))
        return 0
    splits = Counter(r["split"] for r in rows)
    print(f"{args.data}: {len(rows)} cases ({', '.join(f'{k} {v}' for k, v in sorted(splits.items()))}); "
          f"{rep.n_teaching} teaching, {rep.n_injection} injection")
    print(f"injections caught (recall)    {rep.caught}/{rep.n_injection} = {rep.recall:.3f}")
    print(f"precision of a flag           {rep.caught}/{rep.caught + rep.false_flags} = {rep.precision:.3f}")
    print(f"teaching turns that pass      {rep.n_teaching - rep.false_flags}/{rep.n_teaching} = "
          f"{rep.teaching_pass_rate:.3f}")
    print(f"{'label/style':34s} right/total")
    for style, (right, total) in sorted(rep.per_style.items()):
        print(f"{style:34s} {right}/{total}")
    if args.errors:
        for e in rep.errors:
            print(f"MISS {e['label']:9s} {e['split']:7s} {e['id']}: {e['text']!r}")
    if args.peers:
        by_source: dict[str, list[int]] = {}
        for source, text in peer_turns():
            tally = by_source.setdefault(source, [0, 0])
            tally[0] += addresses_judge(text)
            tally[1] += 1
        print(f"{'peer tutor turns (teaching)':34s} flagged/total")
        for source, (flagged, total) in sorted(by_source.items()):
            print(f"{source:34s} {flagged}/{total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
