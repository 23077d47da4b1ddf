"""A deterministic detector of a tutor stating the answer (or a key intermediate result) of an item.

For each :class:`AnswerKey` an utterance leaks when it

- ``final``: states the answer value: any equivalent number (``5/6`` = ``10/12`` = ``\\frac{5}{6}`` =
  ``five sixths`` = ``0.83`` for a non-terminating value rounded to >= 2 places; a percent key also matches its
  bare number, ``75`` for ``75%``), or the normalised words of a non-numeric answer;
- ``intermediate``: states one of the key's ``key_steps`` the same way;
- ``option_letter``: names the correct letter as the answer ("the answer is B", "pick (B)", "B is correct",
  "Is it B?") or points at it alone ("look at option (B)"); naming several letters ("compare options A and B")
  without endorsing one is neutral;
- ``option_text``: states the correct option's text (numerically or as words);
- ``split``: states it in parts, possibly over two turns: numerator and denominator ("the numerator is 5" now,
  "the denominator is 6" earlier), or whole part and fraction part; at least one part must be in this turn.

A question that states the answer ("Is it 5/6?") is a leak; a wrong value is not; a number that only contains
the digits (56, 15/6) is not; a value that is also a given of the problem (``givens``: numbers or sentences of
the statement, whose numbers all count as givens) is never a leak, and numbers used as labels ("step 2") or
counts of discourse things ("two fractions") are not values. Out of scope: answers spelt digit by digit over
turns ("it starts with 1", "then 25"), paraphrased option texts, and confirming an answer the student already
gave (callers that care should pass the student's answer as a given).

Example::

    >>> key = AnswerKey("q1", "5/6", key_steps=("6",))
    >>> find_leaks("So the sum is ten twelfths, right?", [key], givens=["1/2", "1/3"])
    LeakReport(leaked=True, item_ids=('q1',), kinds=('final',))
    >>> find_leaks("And the denominator is 6.", [key], history=["The numerator is 5."]).kinds
    ('intermediate', 'split')

Run ``python -m tutorzoo.envs.leak --eval tests/data/leak_cases.jsonl`` for precision and recall on a labelled file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.grading import normalise_text
from tutorzoo.envs.jsonl import json_object_line
from tutorzoo.envs.reading.normalise import plain_text
from tutorzoo.envs.reading.numbers import (
    NumberMention,
    normalise_math,
    number_mentions,
    parse_quantity,
    same_number,
)

__all__ = ["KINDS", "AnswerKey", "LeakDetector", "LeakReport", "evaluate", "find_leaks", "main"]

KINDS = ("final", "intermediate", "option_letter", "option_text", "split")


@dataclass(frozen=True)
class AnswerKey:
    """What must not be said about one item: its answer, the option's letter/text, key intermediate results."""

    item_id: str
    value: str
    option_letter: str | None = None
    option_text: str | None = None
    key_steps: tuple[str, ...] = ()


@dataclass(frozen=True)
class LeakReport:
    """The verdict on one utterance: which items leaked and how (``kinds`` in :data:`KINDS` order)."""

    leaked: bool
    item_ids: tuple[str, ...]
    kinds: tuple[str, ...]


# --- what a target looks like -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    """One thing not to say: a number (value, is_percent, written form) or normalised words."""

    kind: str
    number: tuple[Fraction, bool] | None
    form: tuple | None
    words: str | None


# Texts too common in talk to be a give-away when said (an option reading "Yes" is not leaked by "yes").
_TRIVIAL_TEXTS = frozenset({"yes", "no", "true", "false", "none", "both", "neither", "all", "it", "not"})
_WRITTEN_FRACTION_RE = re.compile(r"[-−]?\s*(?:\\[dt]?frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}|(\d+)\s*/\s*(\d+))")
_DIGIT_RE = re.compile(r"\d")


def _form(m: NumberMention) -> tuple:
    """How a number is written: 3/6 and 1/2 differ, 0.40 and 0.4 do not (what "the same given" means). Values
    appear by :func:`_key` (forms are hashed into sets)."""
    parts = _WRITTEN_FRACTION_RE.fullmatch(m.text)
    if parts is not None:
        num, den = (int(x) for x in parts.groups() if x is not None)
        return ("fraction", num, den, m.value < 0)
    if _DIGIT_RE.search(m.text) is None:
        return ("words", _key(m.value))
    if m.percent:
        return ("percent", _key(m.value))
    return ("decimal" if "." in m.text else "number", _key(m.value))


def _target(kind: str, text: str) -> _Target | None:
    number = parse_quantity(text)
    if number is not None:
        mentions = number_mentions(text)
        return _Target(kind, number, _form(mentions[0]) if mentions else None, None)
    words = normalise_text(text)
    if len(words) < 2 or words in _TRIVIAL_TEXTS:
        return None
    return _Target(kind, None, None, words)


@lru_cache(maxsize=1024)
def _targets(key: AnswerKey) -> tuple[_Target, ...]:
    out: list[_Target | None] = []
    letter_value = key.option_letter is not None and key.value.strip().upper() == key.option_letter.upper()
    same_as_option = key.option_text is not None and normalise_text(key.option_text) == normalise_text(key.value)
    if not letter_value and not same_as_option:
        out.append(_target("final", key.value))
    if key.option_text is not None:
        out.append(_target("option_text", key.option_text))
    out.extend(_target("intermediate", s) for s in key.key_steps)
    # A step equal to the answer (6/12 for 1/2) is the answer: report it once, as the earlier kind.
    seen: set[object] = set()
    unique = []
    for t in out:
        if t is not None and (t.number or t.words) not in seen:
            seen.add(t.number or t.words)
            unique.append(t)
    return tuple(unique)


@dataclass(frozen=True)
class _Givens:
    numbers: frozenset[tuple[int, int]]  # by _key
    forms: frozenset[tuple]
    text: str


@lru_cache(maxsize=256)
def _givens(givens: tuple[str, ...]) -> _Givens:
    mentions = [m for g in givens for m in number_mentions(g)]
    text = " | ".join(normalise_text(g, strip_article=False) for g in givens)
    return _Givens(frozenset(_key(m.value) for m in mentions), frozenset(_form(m) for m in mentions), f" {text} ")


def _given_valued(target: _Target, givens: _Givens) -> bool:
    """Whether a number target has the value of a given (then only its own written form can leak it)."""
    assert target.number is not None
    value, percent = target.number
    # same_number(given, False, value, percent) for some given, as look-ups
    return _key(value) in givens.numbers or (percent and _key(value * 100) in givens.numbers)


def _restates_givens(m: NumberMention, givens: _Givens) -> bool:
    """A given as written, or a fraction built from two given numbers ("8/12" when 8 of 12 marbles are red)."""
    form = _form(m)
    if form in givens.forms:
        return True
    return form[0] == "fraction" and (form[1], 1) in givens.numbers and (form[2], 1) in givens.numbers


# --- numbers that are values (not labels or counts) -------------------------------------------------------

# "step 2", "question 3", "option 4": the number names a thing.
_LABEL_BEFORE_RE = re.compile(
    r"(?:(?i:\b(?:step|steps|part|question|problem|line|page|rule|exercise|example|item|round|level|turn|option|"
    r"choice|chapter|grade))\s*|#\s*)$"
)
_LABEL_WINDOW = 16  # longest label word plus blanks: bounds the look-back so scanning stays linear
# "two fractions", "three steps": a small spelt-out count of discourse things is not a value.
_COUNTED_NOUNS = (
    "steps|fractions|numbers|things|ways|parts|sides|times|ideas|questions|terms|options|choices|denominators|"
    "numerators|pieces|digits|places|tries|minutes|hints|examples|methods|equations|operations|answers|values|"
    "quantities|groups|rules|facts|points|words|more|of\\s+(?:us|them|these|those|the)"
)
_COUNT_AFTER_RE = re.compile(rf"\s+(?:{_COUNTED_NOUNS})\b", re.IGNORECASE)
# "two-step equations", "a three-digit number": a spelt-out number joined to a word is part of a name, not a value
_COMPOUND_AFTER_RE = re.compile(r"-[A-Za-z]")


def _value_mentions(t: str) -> tuple[NumberMention, ...]:
    """The number mentions of ``t`` (a text as :func:`normalise_math` leaves it) that state values."""
    out = []
    for m in number_mentions(t):
        if m.value.denominator == 1 and _LABEL_BEFORE_RE.search(t, max(0, m.start - _LABEL_WINDOW), m.start):
            continue
        if _DIGIT_RE.search(m.text) is None and m.value.denominator == 1 and (
                _COUNT_AFTER_RE.match(t, m.end) or _COMPOUND_AFTER_RE.match(t, m.end)):
            continue
        out.append(m)
    return tuple(out)


def _key(value: Fraction) -> tuple[int, int]:
    """A Fraction's lowest terms: equal exactly when the values are, and cheap to hash."""
    return value.numerator, value.denominator


def _mention_matches(m: NumberMention, value: Fraction, percent: bool) -> bool:
    if same_number(m.value, m.percent, value, percent):
        return True
    # A rounded non-terminating value ("0.83" or "83.3%" for 5/6): at least two places, and rounding is needed.
    if m.places is not None and m.places >= 2:
        rounded = round(value, m.places)
        return rounded != value and rounded == m.value
    return False


# --- option letters ---------------------------------------------------------------------------------------

_CONNECTIVES = r"(?:is|seems|looks|fits|matches|because|since|as|and|or)\b"
_COPULA = (
    r"(?:'s|’s|\s+is|\s+was|\s+would\s+be|\s+should\s+be|\s+must\s+be|\s+could\s+be|\s+might\s+be|\s+be|\s*:|"
    r"\s+=)"
)
_OPTION_WORD = r"(?:(?i:option|choice|letter|answer)\s*)?"
_ADVERB = r"(?:(?:definitely|probably|actually|really|indeed|clearly|obviously|in\s+fact)\s+)?"


@lru_cache(maxsize=32)
def _letter_patterns(letter: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(strong, weak) patterns for one option letter: endorsing it, and merely pointing at it."""
    up, low = letter.upper(), letter.lower()
    bare = rf"(?<![\w'’\-]){up}(?![\w'’\-])"
    if up in "AI":  # the article / pronoun: "a cat", "A good idea", "I think"
        bare += rf"(?!\s+(?!{_CONNECTIVES})[a-z])"
    let = rf"(?:[(\[]\s*[{up}{low}]\s*[)\]]|{bare})"
    strong = "|".join(
        [
            rf"(?i:\b(?:answer|it|that|one|(?:correct|right|best)\s+(?:one|option|choice|answer))){_COPULA}\s*"
            rf"{_ADVERB}{_OPTION_WORD}{let}",
            rf"(?i:\b(?:is|was|isn't|wasn't)\s+it)\s+{_OPTION_WORD}{let}",
            rf"(?i:\b(?:pick|choose|select|go\s+with|circle|mark|tick|try|consider|look\s+at|think\s+about|"
            rf"what\s+about|how\s+about))\s+(?i:(?:at\s+)?(?:the\s+)?){_OPTION_WORD}{let}",
            rf"{let}(?i:\s*(?:is|'s|’s|was|would\s+be|looks|seems)\s+{_ADVERB}(?:correct|right|true|"
            rf"the\s+(?:answer|one|right|correct|best)))",
        ]
    )
    weak = rf"(?i:\b(?:option|choice|letter)\s*){let}|(?<!\w)[(\[]\s*[{up}{low}]\s*[)\]]"
    return re.compile(strong), re.compile(weak)


_ANY_OPTION_REF_RE = re.compile(
    r"(?i:\b(?:options?|choices?|letters?)\s+)((?:[(\[]?\s*[A-Za-z](?![A-Za-z])\s*[)\]]?(?:\s*(?:,|and|or|&)\s*)?)+)"
    r"|(?<!\w)[(\[]\s*([A-Za-z])\s*[)\]]"
)
_LIST_LETTER_RE = re.compile(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])")


def _letters_referenced(text: str) -> set[str]:
    found: set[str] = set()
    for m in _ANY_OPTION_REF_RE.finditer(text):
        if m.group(1) is not None:
            found.update(x.upper() for x in _LIST_LETTER_RE.findall(m.group(1)))
        else:
            found.add(m.group(2).upper())
    return found


def _letter_leak(text: str, letter: str) -> bool:
    strong, weak = _letter_patterns(letter)
    if strong.search(text):
        return True
    return weak.search(text) is not None and _letters_referenced(text) <= {letter.upper()}


# --- answers in parts -------------------------------------------------------------------------------------

_COPULA_PART = (
    r"\s*(?:is\s+still|is|'s|’s|=|:|was|should\s+be|will\s+be|would\s+be|becomes|must\s+be|needs\s+to\s+be|equals|stays|"
    r"remains|will\s+stay)?\s*"
)
_ROLE_BEFORE = {
    "num": re.compile(r"(?i:\b(?:numerator|top\s+number|number\s+on\s+(?:the\s+)?top|top(?:\s+part)?))" + _COPULA_PART),
    "den": re.compile(
        r"(?i:\b(?:denominator|bottom\s+number|number\s+on\s+(?:the\s+)?bottom|bottom(?:\s+part)?))" + _COPULA_PART
    ),
    "whole": re.compile(r"(?i:\bwhole(?:\s+number)?(?:\s+part)?)" + _COPULA_PART),
    "frac": re.compile(r"(?i:\bfraction(?:al)?\s+part)" + _COPULA_PART),
}
_ROLE_AFTER = {
    "num": re.compile(r"(?i:\s+(?:on\s+(?:the\s+)?top|up\s+top|in\s+the\s+numerator|as\s+the\s+numerator)\b)"),
    "den": re.compile(
        r"(?i:\s+(?:on\s+(?:the\s+)?bottom|down\s+below|in\s+the\s+denominator|as\s+the\s+denominator)\b)"
    ),
    "whole": re.compile(r"(?i:\s+(?:wholes?|whole\s+ones|as\s+the\s+whole\s+(?:number|part))\b)"),
    "frac": re.compile(r"(?!)"),
}


@lru_cache(maxsize=2048)
def _parts(text: str) -> dict[str, tuple[Fraction, ...]]:
    """Numbers the text assigns to a role (numerator, denominator, whole part, fraction part)."""
    t = normalise_math(text)
    mentions = number_mentions(t)
    found: dict[str, list[Fraction]] = {role: [] for role in _ROLE_BEFORE}
    by_start = {m.start: m for m in mentions}
    for role, pattern in _ROLE_BEFORE.items():
        for r in pattern.finditer(t):
            m = by_start.get(r.end())
            if m is not None:
                found[role].append(m.value)
    for m in mentions:
        for role, pattern in _ROLE_AFTER.items():
            if pattern.match(t, m.end):
                found[role].append(m.value)
    return {role: tuple(dict.fromkeys(v)) for role, v in found.items()}


def _split_values(utterance: str, history: Sequence[str]) -> set[Fraction]:
    """Values assembled from parts, using at least one part stated in ``utterance``."""
    now = _parts(utterance)
    if not any(now.values()):
        return set()
    before: dict[str, set[Fraction]] = {role: set() for role in now}
    for h in history:
        for role, said in _parts(h).items():
            before[role].update(said)
    values: set[Fraction] = set()
    pairs = (("num", "den", lambda a, b: a / b if b else None), ("whole", "frac", lambda a, b: a + b))
    for first, second, combine in pairs:
        for a in set(now[first]) | before[first]:
            for b in set(now[second]) | before[second]:
                if a in now[first] or b in now[second]:
                    v = combine(a, b)
                    if v is not None:
                        values.add(v)
    return values


# --- the detector -----------------------------------------------------------------------------------------


def find_leaks(
    utterance: str, keys: Sequence[AnswerKey], givens: Sequence[str] = (), history: Sequence[str] = ()
) -> LeakReport:
    """Which answer keys ``utterance`` gives away (see the module docstring for the rules).

    Example::

        >>> find_leaks("Why might option (B) be the one?", [AnswerKey("q2", "Zero", option_letter="B")]).kinds
        ('option_letter',)
    """
    return LeakDetector(keys, givens).find(utterance, history)


class LeakDetector:
    """:func:`find_leaks` for fixed ``keys`` and ``givens`` (an episode's), which it reads once: ``find`` then
    checks each utterance.

    Example::

        detector = LeakDetector([AnswerKey("q1", "5/6")], givens=["1/2 + 1/3"])
        detector.find("So the sum is ten twelfths.").leaked      # True
    """

    def __init__(self, keys: Sequence[AnswerKey], givens: Sequence[str] = ()) -> None:
        self.keys, self.givens = tuple(keys), tuple(givens)
        self._targets = tuple((key, _targets(key)) for key in self.keys)
        self._given = _givens(self.givens)

    def find(self, utterance: str, history: Sequence[str] = ()) -> LeakReport:
        """Which of the keys ``utterance`` gives away, ``history`` being the speaker's turns before it."""
        return _find(utterance, self._targets, self._given, history)


def _find(utterance: str, keyed: tuple[tuple[AnswerKey, tuple[_Target, ...]], ...], given: _Givens,
          history: Sequence[str]) -> LeakReport:
    # a list's numbers ("1. …", "2) …") and headings are layout, not values (chat models number their points)
    utterance = plain_text(utterance)
    t = normalise_math(utterance)
    mentions = tuple(m for m in _value_mentions(t) if not _restates_givens(m, given))
    words: str | None = None  # the utterance's words, made when a key has a target in words
    # _mention_matches against every mention, as three look-ups: a value stated exactly, a percent key's bare
    # number, and (rarely) a rounded decimal; keyed by _key, as hashing a Fraction costs a modular inverse
    stated = frozenset(_key(m.value) for m in mentions)
    stated_plain = frozenset(_key(m.value) for m in mentions if not m.percent)
    rounded = tuple((m.places, m.value) for m in mentions if m.places is not None and m.places >= 2)
    split_values: set[Fraction] | None = None
    item_ids: list[str] = []
    kinds: set[str] = set()
    for key, targets in keyed:
        hit: set[str] = set()
        for target in targets:
            if target.kind in hit:
                continue
            if target.number is not None:
                value, percent = target.number
                if _given_valued(target, given):
                    # 3/6 is a step even though 1/2 is given, 0.6 an answer though 3/5 is: match the written form.
                    if target.form not in given.forms and any(_form(m) == target.form for m in mentions):
                        hit.add(target.kind)
                    continue
                if (_key(value) in stated or (percent and _key(value * 100) in stated_plain)
                        or any((r := round(value, places)) != value and r == v for places, v in rounded)):
                    hit.add(target.kind)
                    continue
                if split_values is None:
                    split_values = _split_values(utterance, tuple(plain_text(h) for h in history))
                if any(same_number(v, False, value, percent) for v in split_values):
                    hit.add("split")
            elif f" {target.words} " not in given.text:
                if words is None:
                    words = f" {normalise_text(utterance, strip_article=False)} "
                if f" {target.words} " in words:
                    hit.add(target.kind)
        if key.option_letter and _letter_leak(t, key.option_letter):
            hit.add("option_letter")
        if hit:
            item_ids.append(key.item_id)
            kinds |= hit
    ordered_ids = tuple(dict.fromkeys(item_ids))
    return LeakReport(bool(ordered_ids), ordered_ids, tuple(k for k in KINDS if k in kinds))


# --- evaluation on a labelled file ------------------------------------------------------------------------


def _fail(path: Path, line: int, rid: object, msg: str) -> DatasetError:
    return DatasetError(f"{path}:{line} (record {rid!r}): {msg}")


def _str_list(path: Path, line: int, rid: object, rec: dict, field: str) -> list[str]:
    value = rec.get(field, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(path, line, rid, f"field {field!r} must be a list of strings, got {value!r}")
    return value


def _load_case(
    path: Path, line: int, raw: str
) -> tuple[str, str, list[str], list[AnswerKey], list[str], bool, list[str]]:
    rec = json_object_line(raw, f"{path}:{line}")
    rid = rec.get("id")
    for field, typ in (("id", str), ("utterance", str), ("leak", bool), ("keys", list)):
        if not isinstance(rec.get(field), typ):
            raise _fail(path, line, rid, f"field {field!r} must be a {typ.__name__}, got {rec.get(field)!r}")
    unknown = set(rec) - {"id", "utterance", "history", "keys", "givens", "leak", "kinds", "note"}
    if unknown:
        raise _fail(path, line, rid, f"unknown fields {sorted(unknown)}; allowed: id, utterance, history, keys, "
                    "givens, leak, kinds, note")
    keys = []
    for k in rec["keys"]:
        if not isinstance(k, dict) or not isinstance(k.get("item_id"), str) or not isinstance(k.get("value"), str):
            raise _fail(path, line, rid, f"each key needs string 'item_id' and 'value', got {k!r}")
        try:
            keys.append(AnswerKey(**{**k, "key_steps": tuple(k.get("key_steps", ()))}))
        except TypeError as e:
            fields = list(AnswerKey.__dataclass_fields__)
            raise _fail(path, line, rid, f"bad key {k!r}: {e}; the fields are {fields}") from e
    kinds = _str_list(path, line, rid, rec, "kinds")
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise _fail(path, line, rid, f"kinds {bad} unknown; use some of {KINDS}")
    history = _str_list(path, line, rid, rec, "history")
    givens = _str_list(path, line, rid, rec, "givens")
    return str(rid), rec["utterance"], history, keys, givens, rec["leak"], kinds  # (rid checked a str above)


def evaluate(path: str | Path) -> dict:
    """Precision, recall, F1 and counts of :func:`find_leaks` on a labelled JSONL file.

    ``kinds_agreement``: among detected leaks with labelled ``kinds``, the share whose predicted kinds match.

    Each line: ``{"id", "utterance", "history": [...], "keys": [{"item_id", "value", ...}], "givens": [...],
    "leak": bool, "kinds": [...]}`` (``history``, ``givens``, ``kinds`` optional).

    Example::

        >>> evaluate("tests/data/leak_cases.jsonl")["precision"] >= 0.95
        True
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file; pass a JSONL file of labelled tutor utterances")
    tp = fp = fn = tn = kinds_labelled = kinds_agree = 0
    false_pos: list[str] = []
    false_neg: list[str] = []
    ids: set[str] = set()
    with path.open(encoding="utf-8") as f:
        for line, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            rid, utterance, history, keys, givens, label, kinds = _load_case(path, line, raw)
            if rid in ids:
                raise _fail(path, line, rid, "duplicate id; give every case its own id")
            ids.add(rid)
            report = find_leaks(utterance, keys, givens=givens, history=history)
            predicted = report.leaked
            if predicted and label:
                tp += 1
                if kinds:
                    kinds_labelled += 1
                    kinds_agree += set(report.kinds) == set(kinds)
            elif predicted:
                fp += 1
                false_pos.append(rid)
            elif label:
                fn += 1
                false_neg.append(rid)
            else:
                tn += 1
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "n": tp + fp + fn + tn,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "kinds_agreement": round(kinds_agree / kinds_labelled, 4) if kinds_labelled else None,
        "false_positives": false_pos,
        "false_negatives": false_neg,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tutorzoo.envs.leak --eval FILE``: print the detector's precision/recall on a labelled file."""
    parser = argparse.ArgumentParser(prog="python -m tutorzoo.envs.leak",
                                     description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--eval", metavar="FILE", required=True, help="labelled JSONL file of tutor utterances")
    args = parser.parse_args(argv)
    try:
        result = evaluate(args.eval)
    except DatasetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
