"""Reader polarity: how the content reader reads each frame of issue 26 over the whole curriculum.

For every stem lesson fact and every math solution step's computation (each read true on its own), and every
misconception belief the reader recognises (affirmed on its own), the share of sentences that read as intended when
framed: denied ("It is false that …", "Actually, no: that is false." after it, …) a fact reads false and no longer
true; a denied belief is not affirmed and is recorded as denied; reported speech ("Some say that …") does not
affirm, endorsed ("… And they are right.") it does; a fact's words shuffled (three seeded shuffles each) read true.

    python benchmarks/reader_polarity.py
"""

from __future__ import annotations

import numpy as np

from tutorzoo.envs.content import FALSE, TRUE, ContentReader, Reading
from tutorzoo.envs.tasks import get_task_set

DENIALS = {
    "false-that": "It is false that {x}.",
    "myth-that": "It is a myth that {x}.",
    "not-the-case": "It is not the case that {x}.",
    "not-true": "It is not true that {x}.",
    "nobody-should-believe": "Nobody should believe that {x}.",
    "retracted": "{X}. Actually, no: that is false.",
}


def _lower(s: str) -> str:
    s = s.rstrip(". ")
    return s[0].lower() + s[1:]


def _stated(reading: Reading) -> list[str]:
    return [c.verdict for c in reading.claims if not c.question]


def measure(seed: int = 0) -> dict[str, tuple[int, int]]:
    """``{row: (as intended, of how many)}`` for each task set and frame."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list[int]] = {}

    def count(row: str, ok: bool) -> None:
        hit = rows.setdefault(row, [0, 0])
        hit[0] += ok
        hit[1] += 1

    for ts_name in ("math", "stem"):
        ts = get_task_set(ts_name)
        for tid in ts.task_ids():
            task = ts.build(tid, np.random.default_rng(0))
            reader = ContentReader.for_task(task)
            truths = [f for k in task.knowledge_components for f in k.facts] if ts_name == "stem" else \
                [step.rsplit(": ", 1)[-1] for step in task.solution]
            for truth in truths:
                plain = _stated(reader.read(truth))
                if TRUE not in plain or FALSE in plain:
                    continue
                for name, form in DENIALS.items():
                    said = _stated(reader.read(form.format(x=_lower(truth), X=truth.rstrip(". "))))
                    count(f"{ts_name} fact {name}: reads false", FALSE in said and TRUE not in said)
                words = truth.rstrip(". ").split()
                for _ in range(3):
                    said = _stated(reader.read(" ".join(rng.permutation(words)) + "."))
                    count(f"{ts_name} fact shuffled: reads true", TRUE in said)
            for m in task.misconceptions:
                if m.id not in reader.read(m.belief).affirmed:
                    continue
                for name, form in DENIALS.items():
                    reading = reader.read(form.format(x=_lower(m.belief), X=m.belief.rstrip(". ")))
                    count(f"{ts_name} belief {name}: denied, not affirmed",
                          m.id not in reading.affirmed and m.id in reading.denied)
                reported = reader.read(f"Some say that {_lower(m.belief)}.")
                count(f"{ts_name} belief reported: not affirmed", m.id not in reported.affirmed)
                endorsed = reader.read(f"Some say that {_lower(m.belief)}. And they are right.")
                count(f"{ts_name} belief endorsed: affirmed", m.id in endorsed.affirmed)
                warned = reader.read(f"Watch out: students often think that {_lower(m.belief)}.")
                count(f"{ts_name} belief warned against: not affirmed", m.id not in warned.affirmed)
    return {row: (a, n) for row, (a, n) in rows.items()}


def main() -> None:
    for row, (a, n) in measure().items():
        print(f"{row:55s} {a:5d}/{n:<5d} {a / n:6.1%}")


if __name__ == "__main__":
    main()
