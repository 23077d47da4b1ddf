"""Propositions: the stemmer (:func:`stem`), the content stems of a sentence with its negations, their order in
active voice (:func:`stem_order`, :func:`in_order`), their polarity on each axis (:func:`polarity`), and the
propositions of a curriculum's sentences with their index by stem."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction

from tutorzoo.envs.reading.normalise import normalise
from tutorzoo.envs.reading.numbers import DIGIT_RUN, QUANTITY


def indexed(entries: tuple[tuple[str, str, str, str | None], ...], math: bool,
             topic: frozenset[str]) -> tuple[tuple[Proposition, ...], dict[str, tuple[int, ...]], dict]:
    """A task's propositions, per stem the indices of those holding it, and a memo of sentences already matched
    against them (shared by the readers of tasks with the same propositions: a math family's draws share theirs,
    even when their texts differ in words no proposition keeps, such as the units of a conversion)."""
    props = tuple(p for kc, text, kind, mis in entries for p in _propositions(kc, text, kind, mis, math, topic))
    return _index_of(props, math, topic)


@functools.lru_cache(maxsize=1024)
def _index_of(props: tuple[Proposition, ...], math: bool,
              topic: frozenset[str]) -> tuple[tuple[Proposition, ...], dict[str, tuple[int, ...]], dict]:
    by_stem: dict[str, list[int]] = {}
    for i, p in enumerate(props):
        for st in p.stems:
            by_stem.setdefault(st, []).append(i)
    return props, {st: tuple(ix) for st, ix in by_stem.items()}, {}


@functools.lru_cache(maxsize=65536)
def _propositions(kc: str, text: str, kind: str, mis: str | None, math: bool,
                  topic: frozenset[str]) -> tuple[Proposition, ...]:
    """The propositions of one curriculum sentence: the whole sentence, and each clause of a long one (a tutor
    restating one clause states that much) that says more than the topic's names (``topic``)."""
    pieces = [text]
    if kind in ("fact", "refutation"):  # a clause of a belief is not the belief, nor of a question the question
        clauses = [c for c in _CLAUSE.split(text) if c and c.strip()]
        if len(clauses) > 1:
            pieces += clauses
    out = []
    for piece in pieces:
        said = DIGIT_RUN.sub("0", NUMBERLESS.sub(" ", piece))  # numbers: no stems
        stems, negs = content_stems(said)
        if len(stems) < 3 or (piece is not text and len(stems - topic) < 1):
            continue
        stems, sign = polarity(stems)
        numbers = frozenset() if math else stated_numbers(piece)  # a lesson's quantities are facts
        out.append(Proposition(kc, stems, negs % 2 == 1, kind, mis, numbers, tuple(sorted(sign.items())), said))
    return tuple(out)


_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NEG = frozenset("not no never nothing cannot can't don't doesn't isn't aren't won't wouldn't shouldn't didn't "
                 "without neither nor barely hardly scarcely".split())
_STOP = frozenset(
    "the a an and or but if then of to in on at for with is are was were be been being it its this that these "
    "those what which who whom you your we our they their he she i me my as by from so do does did can could "
    "would should will shall may might must has have had there here when where how why also just very much "
    "more most some any each every all than into onto out up down over about only same other such own let "
    "us one".split()) - _NEG
_SYNONYMS = {
    "big": "large", "bigger": "large", "larger": "large", "huge": "large", "greater": "large", "more": "large",
    "small": "small", "little": "small", "smaller": "small", "tiny": "small", "less": "small", "fewer": "small",
    "quick": "fast", "quickly": "fast", "rapid": "fast", "faster": "fast", "slow": "slow", "slower": "slow",
    "push": "force", "pull": "force", "pushes": "force", "pulls": "force", "forces": "force",
    "hot": "heat", "warm": "heat", "warmth": "heat", "heated": "heat", "cold": "cool", "colder": "cool",
    "increase": "rise", "increases": "rise", "grows": "rise", "goes up": "rise", "raise": "rise", "rises": "rise",
    "decrease": "fall", "decreases": "fall", "drops": "fall", "falls": "fall", "lower": "fall", "reduce": "fall",
    "reduces": "fall", "amount": "quantity", "quantity": "quantity", "same": "equal", "equal": "equal",
    "identical": "equal", "opposite": "opposite", "reverse": "opposite", "bottom": "denominator",
    "top": "numerator", "tops": "numerator", "bottoms": "denominator",
}
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ed", "ity", "ies", "es", "s", "ly")
# comparatives spelled as one word, read as "more X" / "less X" so their direction is seen
# ("greater", not the stop word "more": "denser" must say its direction as "less dense" does)
_COMPARATIVE = {"denser": "greater dense", "heavier": "greater heavy", "lighter": "less heavy",
                "hotter": "greater hot", "cooler": "less hot", "deeper": "greater deep", "shallower": "less deep",
                "stronger": "greater strong", "weaker": "less strong", "weakens": "less strong",
                "weaken": "less strong", "higher": "rise", "longer": "greater long", "shorter": "less long"}
_COMPARATIVE_RE = re.compile(r"\b(" + "|".join(_COMPARATIVE) + r")\b")
# stems that say a direction on one axis: a sentence that says the opposite direction of a proposition's on an
# axis they share contradicts it ("floats if less dense" vs "floats if denser"); two flips cancel ("the more
# cargo, the deeper" = "the less cargo, the less deep")
_POLAR = {"larg": ("size", 1), "small": ("size", -1), "rise": ("dir", 1), "fall": ("dir", -1),
          "fast": ("speed", 1), "slow": ("speed", -1), "heat": ("temp", 1), "cool": ("temp", -1),
          "float": ("buoy", 1), "sink": ("buoy", -1), "expand": ("volume", 1), "contract": ("volume", -1),
          "shrink": ("volume", -1), "attract": ("attract", 1), "repel": ("attract", -1),
          "gain": ("gain", 1), "lose": ("gain", -1), "los": ("gain", -1)}


# after stemming, the stems of words a paraphrase uses for the same thing (any inflection: "altered", "presses")
_STEM_SYNONYMS = {
    "alter": "chang", "modifi": "chang", "modify": "chang", "vari": "chang", "vary": "chang",
    "push": "forc", "pull": "forc", "press": "forc", "shov": "forc",
    "caus": "make", "mak": "make", "made": "make", "produc": "make", "creat": "make",
    "below": "under", "beneath": "under", "underneath": "under", "abov": "above",
    "emit": "releas", "begin": "start", "began": "start", "halt": "stop",
    "travel": "mov", "quicker": "fast", "speedi": "fast", "speedy": "fast", "entir": "whol", "total": "whol",
    "identical": "equal", "equival": "equal", "equivalent": "equal",
}


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem of a lower-case word: its synonym's, with one suffix cut, then its stem synonym's."""
    w = _SYNONYMS.get(word, word)
    if w in _STOP or len(w) <= 3:
        return w
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return _STEM_SYNONYMS.get(w, w)


_INTERJECTION = re.compile(r"^\s*(?:no|nope|not quite)\b[,.!:;]?|,\s*(?:not|rather than|instead of)\b[^,.;]*",
                           re.IGNORECASE)


@functools.lru_cache(maxsize=65536)
def content_stems(text: str) -> tuple[frozenset[str], int]:
    """The content stems of ``text`` and its count of negations (a leading "No," and a contrast such as
    ", not by making heat" do not negate the sentence's claim)."""
    lowered = _COMPARATIVE_RE.sub(lambda m: _COMPARATIVE[m.group(1)], text.lower())
    words = _WORD.findall(lowered.replace("n't", " not"))
    negs = sum(1 for w in _WORD.findall(_INTERJECTION.sub(" ", lowered).replace("n't", " not")) if w in _NEG)
    return frozenset(stem(w) for w in words if w not in _STOP and w not in _NEG and len(w) > 2), negs


# where a sentence's clauses part (the order of words is compared inside a clause: "Because it is less dense than
# water, ice floats" restates "Ice floats because it is less dense than water"); "and" joins within a clause
_ORDER_CLAUSE = re.compile(r"[,;:()]|\s[-–—]\s|\b(?:because|since|so|while|whereas|which|when|if|unless|although|"
                           r"though|but)\b", re.IGNORECASE)
_POSSESSIVE = re.compile(r"(?<=[a-z])'s?\b")
_GENITIVE = re.compile(r"\b([a-z]+) of (?:the |a |an |its |their )?((?:left |right |upper |lower )?[a-z]+)\b")
_PARTICIPLE = ("ed", "en", "wn", "ht", "lt", "ne", "ung", "ade", "eld")
_BE = frozenset("is are was were be been being get gets got".split())


def _active(words: list[str]) -> list[str]:
    """A passive clause turned active, so who does what to what compares: "the water is pushed by the rocket" ->
    "the rocket pushed the water" (a be-verb, a participle, then "by")."""
    if "by" not in words:
        return words
    i = words.index("by")
    for j in range(max(0, i - 6), i - 1):  # "is pushed by", "is often pushed out through the nozzle by"
        k = next((k for k in range(j + 1, min(j + 3, i)) if words[k].endswith(_PARTICIPLE)), None)
        if words[j] in _BE and k is not None:  # agent, verb, patient, the rest: "the air pushed the water out …"
            return words[i + 1:] + words[j + 1:k + 1] + words[:j] + words[k + 1:i]
    return words


@functools.lru_cache(maxsize=65536)
def stem_order(text: str) -> tuple[tuple[str, int], ...]:
    """The content stems of ``text`` in the order said, each with its clause's number; a directional stem stands
    for its axis (as in :func:`polarity`) and a passive clause is read in active order."""
    lowered = _COMPARATIVE_RE.sub(lambda m: _COMPARATIVE[m.group(1)], text.lower()).replace("n't", " not")
    lowered = _GENITIVE.sub(r"\2 \1", _POSSESSIVE.sub("", lowered))  # "the density of the liquid" = "liquid's density"
    out: list[tuple[str, int]] = []
    for n, clause in enumerate(_ORDER_CLAUSE.split(lowered)):
        for w in _active(_WORD.findall(clause)):
            if w in _STOP or w in _NEG or len(w) <= 2:
                continue
            st = stem(w)
            out.append(("~" + _POLAR[st][0] if st in _POLAR else st, n))
    return tuple(out)


ORDER_TIE = 0.05  # a proposition in order scoring this close to the best restated is an equal restatement
ORDER_WORDS = 4  # fewer shared stems than this leave too few pairs to tell an order from chance
@functools.lru_cache(maxsize=65536)
def order_of(text: str) -> tuple[str, ...]:
    """The stems of ``text`` in the order said (see :func:`stem_order`)."""
    return tuple(st for st, _n in stem_order(text))


ORDER_SHARE = 0.75  # a sentence this much made of a proposition's words restates it in its order or not at all
ORDER_MIN = 0.9  # the share of a fact's word pairs a sentence must say in the fact's order (see :func:`in_order`)


def in_order(said: tuple[tuple[str, int], ...], order: tuple[str, ...]) -> bool:
    """Whether a sentence says a proposition's words in its order: of the pairs of shared stems inside one clause of
    the sentence (all pairs when no clause holds two), at least :data:`ORDER_MIN` come in the proposition's order.
    Words in random order, or subject and object swapped ("the water pushes the rocket"), fail; a paraphrase
    that keeps who does what to what passes. Fewer than :data:`ORDER_WORDS` shared stems decide nothing."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, st in enumerate(order):  # a word the proposition says twice may come before or after another
        first.setdefault(st, i)
        last[st] = i
    seq: list[tuple[str, int]] = []
    seen: set[str] = set()
    for st, n in said:
        # the sentence's word where it first says it; a direction word is checked by its polarity, wherever it
        # stands ("less dense", "has a lower density")
        if st in first and st not in seen and st[0] != "~":
            seen.add(st)
            seq.append((st, n))
    if len(seq) < ORDER_WORDS:
        return True
    inside = same = 0
    total = agree = 0
    for i, (a, na) in enumerate(seq):
        for b, nb in seq[i + 1:]:
            ok = first[a] < last[b]
            total += 1
            agree += ok
            if na == nb:
                inside += 1
                same += ok
    if inside >= 3:
        return same >= ORDER_MIN * inside
    return agree >= ORDER_MIN * total


def polarity(stems: frozenset[str]) -> tuple[frozenset[str], dict[str, int]]:
    """``stems`` with each directional stem replaced by its axis, and the direction said on each axis (the
    product of the signs of its stems there)."""
    if not stems & _POLAR.keys():
        return stems, {}
    out: set[str] = set()
    sign: dict[str, int] = {}
    for s in stems:
        if s in _POLAR:
            axis, d = _POLAR[s]
            out.add("~" + axis)
            sign[axis] = d if sign.get(axis, d) == d else 0  # both directions on one axis: none said
        else:
            out.add(s)
    return frozenset(out), {a: d for a, d in sign.items() if d}


def flips(said: dict[str, int], stated: dict[str, int]) -> int:
    """On how many shared axes a sentence says the opposite direction of a proposition."""
    return sum(1 for axis, d in said.items() if axis in stated and stated[axis] != d)


@dataclass(frozen=True, slots=True)
class Proposition:
    """One checkable sentence of the curriculum, as the stems it is made of, with its polarity and kind."""

    kc: str
    stems: frozenset[str]
    negated: bool
    kind: str = "fact"  # fact | belief | refutation
    misconception: str | None = None
    numbers: frozenset[Fraction] = frozenset()  # the quantities it states (a sentence must state the same)
    sign: tuple[tuple[str, int], ...] = ()  # the direction it says on each axis (see :func:`polarity`)
    text: str = ""  # the words it was made of (their order: :func:`stem_order`, read only when needed)
# clause boundaries inside a sentence of the curriculum (a proposition is also made of each clause)
_CLAUSE = re.compile(r",\s*(?:so|and|while|whereas|whatever|which|because|since)\b|\s+(?:so that|because|while|"
                     r"whereas|and|but)\s+|,\s+|\s*;\s*|\s+-\s+|\s*\(|\)\s*", re.IGNORECASE)


NUMBERLESS = re.compile(r"\{[^}]*\}")


@functools.lru_cache(maxsize=65536)
def stated_numbers(text: str) -> frozenset[Fraction]:
    """The numbers a sentence states (digits, number words, fractions), as exact values."""
    out = set()
    for tok in QUANTITY.findall(normalise(text)):
        try:
            out.add(Fraction(tok))
        except (ValueError, ZeroDivisionError):
            continue
    return frozenset(out)


@functools.lru_cache(maxsize=65536)
def closest_component(named: tuple[tuple[str, frozenset[str]], ...], sentence: str) -> str:
    """The component (of ``named``: id, name words) whose words ``sentence`` shares most; the first on a tie."""
    words = name_words((sentence,))
    return max(named, key=lambda kw: len(kw[1] & words))[0]


@functools.lru_cache(maxsize=4096)
def name_words(words: tuple[str, ...]) -> frozenset[str]:
    """The stems of a component's keywords and name."""
    return frozenset(stem(w) for w in _WORD.findall(" ".join(words).lower()))
