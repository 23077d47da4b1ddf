"""The transcript browser of ``report.html``: its data (one JSON document) and its markup.

:func:`browser_data` packs the records into a string table and one compact entry per record; the page embeds it
with :func:`json_for_script` in a ``<script type="application/json">`` tag, where ``assets/report.js`` reads it
and renders the list and the selected episode with ``textContent`` only. ``BROWSER_HTML`` holds the elements
that script fills (their ids are the script's).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.eval.report_board import (
    failure_text,
    family_of,
    is_episode,
    persona_label,
    record_spec,
    round_finite,
    task_label,
)
from tutorzoo.eval.tracking import scrub_secrets

TURN_FIELDS: tuple[str, ...] = ("speaker", "utterance", "teacher_intent", "teaching_strategy", "discipline",
                                "discipline_transfer", "student_cognition_state", "teacher_guidance_level",
                                "cognitive_level")


class _Strings:
    """A string table: index 0 is null, every other string stored once (secrets masked)."""

    def __init__(self) -> None:
        from tutorzoo.eval.tracking import secret_values

        self.table: list[str | None] = [None]
        self.index: dict[str, int] = {}
        self.secrets = secret_values()  # read once, not per string

    def __call__(self, value: Any) -> int:
        if value is None:
            return 0
        if not isinstance(value, str):
            value = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.table)
            self.table.append(scrub_secrets(value, self.secrets))
        return found


def _jsonable(value: Any) -> Any:
    """A copy with non-finite floats as null (the page's JSON must parse) and other objects as text."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        return round_finite(value, 6)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def _tests(items: Any, strings: _Strings) -> list[list]:
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        correct = item.get("correct")
        out.append([strings(item.get("item_id")), 1 if correct is True else 0 if correct is False else -1,
                    strings(item.get("extracted")), strings(item.get("response")), strings(item.get("kind")),
                    strings(item.get("parallel_of")), 0 if item.get("valid") is False else 1])
    return out


def browser_data(records: Sequence[Mapping], families: Mapping[str, str]) -> dict:
    """The transcript browser's data: a string table ``s`` (index 0 = null) and one compact entry per record.

    Episode entry: ``t`` tutor, ``p`` persona, ``f`` family, ``k`` task, ``s`` seed, ``g``/``h`` gain on
    isomorphic / same items, ``a``/``b``/``c`` pre, post and same-item post scores, ``e`` ended_by, ``x``
    failures, ``T`` turns (``TURN_FIELDS`` order, then flags: 1 invalid, 2 reveals answer, 4 states answer,
    then the target KC), ``P`` / ``Q`` pre / post items ``[item_id, correct (1/0/-1), extracted, response,
    kind, parallel_of, valid]``. Item entry: ``K`` key, ``u`` unit, ``i`` prompt, ``r`` response, ``G``
    grades, ``J`` judgments.
    """
    strings = _Strings()
    entries = []
    for r in records:
        persona = persona_label(r)
        entry: dict[str, Any] = {"t": strings(str(r.get("tutor"))), "p": strings(persona),
                                 "f": strings(family_of(persona, families)), "k": strings(task_label(r)),
                                 "x": [strings(failure_text(f)) for f in r.get("failures") or []]}
        seed = record_spec(r).get("seed")
        if isinstance(seed, int):
            entry["s"] = seed
        if is_episode(r):
            task = r.get("task") if isinstance(r.get("task"), Mapping) else {}
            entry.update({"n": strings(task.get("title")), "g": round_finite(r.get(LEARNING_GAIN)),
                          "h": round_finite(r.get("learning_gain_same")), "a": round_finite(r.get("pretest_score")),
                          "b": round_finite(r.get("posttest_score")), "c": round_finite(r.get("posttest_same_score")),
                          "e": strings(r.get("ended_by")), "P": _tests(r.get("pretest"), strings),
                          "Q": _tests(r.get("posttest"), strings), "T": []})
            for turn in r["transcript"]:
                if not isinstance(turn, Mapping):
                    continue
                row: list[Any] = [strings(turn.get(f)) for f in TURN_FIELDS]
                row[5] = 1 if turn.get("discipline_transfer") else 0
                flags = ((1 if turn.get("invalid") else 0) | (2 if turn.get("reveals_answer") else 0)
                         | (4 if turn.get("states_answer") else 0))
                row += [flags, strings(turn.get("target_kc"))]
                entry["T"].append(row)
        else:
            entry.update({"K": strings(r.get("key")), "i": strings(r.get("prompt")), "r": strings(r.get("response")),
                          **scrub_secrets({"u": _jsonable(r.get("unit")), "G": _jsonable(r.get("grades")),
                                           "J": _jsonable(r.get("judgments") or [])}, strings.secrets)})
        entries.append(entry)
    return {"s": strings.table, "fields": list(TURN_FIELDS), "e": entries}


def json_for_script(data: Any) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>``, ``&`` and the JS line separators as ``\\u`` escapes, and
    ``://`` as ``:\\/\\/`` (the same string to JSON.parse, but no literal URL in the file)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char in ("<", ">", "&", "\u2028", "\u2029"):
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text.replace("://", ":\\/\\/")


BROWSER_HTML = """<div class="filters">
<label>Tutor <select id="f-tutor"></select></label>
<label>Persona <select id="f-persona"></select></label>
<label>Task <select id="f-task"></select></label>
<span id="match-count" class="note"></span>
</div>
<div class="browser"><div class="list-pane"><ol id="ep-list"></ol>
<button id="more" type="button" hidden>Show more</button></div><div id="ep-view" class="view"></div></div>
<noscript><p class="note">The transcript browser needs JavaScript; the episodes are in episodes.jsonl.</p></noscript>"""
