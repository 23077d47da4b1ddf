r"""The content reader: what a tutor turn *says* about the task, each claim checked against the task.

The simulated student learns from this reading, not from cue phrases (the SID labels of :mod:`tutorzoo.envs.annotate`
describe a turn's form; this module decides its substance). Text mode and act mode take the same path: in act
mode the verbalised utterance is read like any other.

A turn is split into sentences. Each sentence yields :class:`Claim` s of two sorts:

**Math** (every task set; the task's own numbers are never required). The sentence is normalised (LaTeX
``\frac{3}{4}``, ``\tfrac12``, ``×``, ``÷``, ``−``, ``½``, markdown emphasis and list bullets, number words
such as "thirty-two", "three hundred and five", "seventeen point five", "negative one", "three quarters", "half
of", prose arithmetic such as "subtracting 7 from 8", "multiply 4 by 5", "divided by", "percent", "x% of y",
"25% off 80", thousands separators, "4 x 5"), then each relation chain ``E1 = E2 < E3 …`` (also written "is
equal to", "is greater than", "becomes", "gives", "we get", ", which is", "→" between expressions …; a named
first side such as "Area = …" is the chain's subject) is evaluated exactly with :class:`fractions.Fraction`.
The families' relational claims said in prose ("a triangle with base 6 and height 4 has an area of 12", "the
perimeter of an 8 by 5 rectangle is 26", "180 km at 60 km/h takes 3 hours") are read as the computation they
state. An expression followed by ``= ?``
or asked for in a question ("What is 1/2 + 1/3?") is a *question* whose answer the env can compute; so is a
relation with a blank to fill in ("2/3 = __/9", "1 L = ? mL", ``\square``: solved, it is a question on the
computation that fills it; with its value said after it, a statement), a conversion asked in words ("Convert
9500 m to km.") and a family's quantity asked with its case ("perimeter of a 4 by 3 rectangle = ?"). Linear
equations in one unknown are checked by their solution set (``3x + 5 = 20`` and ``x = 5`` agree; a lone ``x = 5``
only against an equation of its own turn); a number written for the unknown ("2(5) + 20 = 30") checks a solution.
Lengths, masses, volumes and times convert through their units; rates, areas and a unit on one side only are checked on
the numbers as written, and only agreement counts. A claim is ``true``, ``false`` or ``unchecked``; it
exercises the knowledge component (KC) whose *computation* it performs (:data:`KC_OPERATIONS`: adding unlike
fractions exercises ``common_denominator`` and ``adding_fractions`` whatever words surround it), never the KC
whose name it says. Each misconception with a computable wrong rule (:data:`WRONG_RULES`) is evaluated on the
claim's own case: a false claim equal to the rule's output *affirms* the misconception; a true claim (or a
question) on a case where the rule and the correct rule disagree is a *counterexample* to it only where the turn
states or asks for that contrast — it names the misconception (its belief, quoted or denied, a refutation of it),
asks about a relation the rule gets wrong ("Is 1/2 really smaller than 1/3?"), or writes the rule's result aside
("1/2 + 1/2 = 1, not 2/4"). A true case alone ("In this case, 1/2 > 2/9.") or a question to work refutes nothing.

**Propositions** (STEM lessons, and the conceptual side of math KCs). Each KC's ``facts`` (or, where a lesson
has none, the sentences of its explanation, worked example and expected answers) and each misconception's
``belief`` and ``refutations`` (default: its counterexample) become sets of stemmed content words with a
polarity and an order. A sentence that covers at least half of a proposition's words (and three of them) states
it — in its order: a sentence made mostly of its words must say them in the proposition's order inside each
clause (who does what to what: a passive clause read active, "the X of the Y" as "Y's X"), so its words shuffled
or its roles swapped state nothing; a negation the proposition does not have (or lacks one it has) makes the
statement false. Stating a belief without negating it affirms the misconception, unless the sentence quotes or
names it as wrong ("a common misconception is that …", "Myth: …"); matching a refutation is a counterexample.

**Who asserts what** (math and propositions alike). A denial before a proposition ("It is false / a myth / not the
case that …", "Nobody should believe that …", "…, but that's wrong") or a retraction after it ("Actually, no: that
is false.", "They are wrong.") negates it: a denied truth is a false claim, a denied misconception is
:attr:`Claim.denies` (corrective negation, neither affirmed nor a counterexample). "They are right." after reported
speech affirms it; reported speech alone ("Some say that …") and warnings ("A common mistake is to write …",
"Don't …") name a mistake (:attr:`Claim.mentions`) without asserting it. A component's hints are true statements
on it (the content a hint turn gives). Questions that cover a proposition are gradeable questions on its KC;
their *demand* (recall / apply / explain / transfer) is read from what they ask.

Everything else — cue phrases, KC names, encouragement, random nouns, numbers in no checkable relation — is
not content. :attr:`Reading.kc` is the component the turn works on (most true content, then questions).

The module is long (about 2,600 lines) for one concern: every part — the math normaliser and parser, the
computations table, the wrong rules, the proposition matcher — feeds the same :class:`Claim`, and they share
private helpers (relation chains, exact evaluation) that would otherwise have to become a public API between two
modules. Its sections are marked; a split along them (math claims / propositions) is the natural next step.

Example::

    reader = ContentReader.for_task(task)
    reading = reader.read("Let's check: 1/2 + 1/3 = 3/6 + 2/6 = 5/6. What is 1/4 + 1/3?")
    reading.kc, [c.verdict for c in reading.claims]
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from fractions import Fraction

from tutorzoo.envs.grading import VULGAR_FRACTIONS
from tutorzoo.envs.tasks.base import Task

TRUE, FALSE, UNCHECKED = "true", "false", "unchecked"
DEMANDS = ("recall", "apply", "explain", "transfer")


@dataclass(frozen=True, slots=True)
class Claim:
    """One checkable thing a turn says or asks.

    ``kc`` is the component the claim exercises (``None``: none of the task's); ``question`` marks something
    asked (its answer computable); ``affirms`` a misconception whose output (or belief) the claim states;
    ``refutes`` the misconceptions it is a counterexample to (a case whose contrast with the wrong rule the turn
    states or asks for); ``demand`` the cognitive demand of a question; ``denies`` a misconception the claim says is
    wrong ("It is a myth that …", a belief retracted: corrective negation, not a counterexample); ``mentions`` one it
    names without asserting it (quoted, warned against, denied).
    """

    kc: str | None
    verdict: str
    question: bool = False
    affirms: str | None = None
    refutes: tuple[str, ...] = ()
    demand: str | None = None
    source: str = "math"  # "math" (an evaluated relation) or "fact" (a proposition)
    denies: str | None = None
    mentions: str | None = None


@dataclass(frozen=True)
class Reading:
    """The content of one tutor turn: its claims, with summaries the student model reads."""

    claims: tuple[Claim, ...] = ()

    @functools.cached_property
    def kc(self) -> str | None:
        """The component the turn works on: the most true statements, then questions, then false claims."""
        score: dict[str, float] = {}
        for c in self.claims:
            if c.kc is None:
                continue
            w = 1.0 if (c.verdict == TRUE and not c.question) else 0.8 if c.question else 0.5
            score[c.kc] = score.get(c.kc, 0.0) + w
        if not score:
            return None
        return max(score, key=lambda k: (score[k], -list(score).index(k)))

    def true_statements(self, kc: str) -> int:
        return sum(1 for c in self.claims if c.kc == kc and c.verdict == TRUE and not c.question)

    def false_statements(self, kc: str | None = None) -> int:
        return sum(1 for c in self.claims if c.verdict == FALSE and not c.question and (kc is None or c.kc == kc))

    def questions(self, kc: str) -> list[Claim]:
        return [c for c in self.claims if c.kc == kc and c.question]

    @property
    def affirmed(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.affirms for c in self.claims if c.affirms))

    @property
    def refuted(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for c in self.claims for m in c.refutes))

    @property
    def denied(self) -> tuple[str, ...]:
        """The misconceptions the turn says are wrong without a counterexample (see :attr:`Claim.denies`)."""
        return tuple(dict.fromkeys(c.denies for c in self.claims if c.denies))

    @property
    def has_content(self) -> bool:
        return any(c.kc is not None for c in self.claims)

    def to_dict(self) -> dict:
        """Counts for the episode record (JSON-able)."""
        return {
            "kc": self.kc,
            "true": sum(1 for c in self.claims if c.verdict == TRUE and not c.question),
            "false": self.false_statements(),
            "questions": sum(1 for c in self.claims if c.question),
            "affirms": list(self.affirmed),
            "refutes": list(self.refuted),
            "denies": list(self.denied),
        }


EMPTY = Reading()


def with_reading(act, reading: Reading):
    """A text-mode tutor act with what its words say: the annotator's labels (intent, strategy, level), the
    reading attached, and the component and misconception taken from the checked content, never from cue words;
    a turn whose content is a counterexample is labelled one (``scenario_question``) however it is introduced
    (a "case" as much as a "counterexample"; on the gold set strategy kappa 0.385 -> 0.407, accuracy 0.539).
    A malformed act keeps its no-credit labels and an empty reading. The env and ``tutorzoo agreement`` both use
    this, so the labels scored against the gold set are the env's."""

    if act.invalid:
        return replace(act, content=EMPTY)
    refuted = reading.refuted
    changes: dict = {}
    kc = reading.kc
    if refuted and act.strategy not in _COUNTER_LABELS:
        changes["strategy"] = "scenario_question"  # a concrete case against the idea, however it is introduced
    return replace(act, content=reading, target_kc=kc, addresses_misconception=refuted[0] if refuted else None,
                   **changes)


_COUNTER_LABELS = frozenset({"scenario_question", "analogy", "corrective_feedback"})

# ---------------------------------------------------------------------------------------------- normalising

_NUM_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUM_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                   "ninety": 90, "hundred": 100, "a hundred": 100, "one hundred": 100, "thousand": 1000})
_ORDINALS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4,
             "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7,
             "eighth": 8, "eighths": 8, "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10, "twelfth": 12,
             "twelfths": 12, "eleventh": 11, "elevenths": 11, "fifteenth": 15, "fifteenths": 15, "sixteenth": 16,
             "sixteenths": 16, "twentieth": 20, "twentieths": 20, "hundredth": 100, "hundredths": 100,
             "thousandth": 1000, "thousandths": 1000}
_NW = "|".join(sorted(_NUM_WORDS, key=len, reverse=True))
_ORD = "|".join(sorted(_ORDINALS, key=len, reverse=True))

# Each rewrite with the words or signs it needs (lower case): a rewrite runs only when one of them is in the text
# (None: always). Most turns hold few of them, and normalising is on the env's hot path (every turn is read).
_ORD_STEMS = ("half", "halves", "third", "quarter", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
              "tenth", "eleventh", "twelfth", "fifteenth", "sixteenth", "twentieth", "hundredth", "thousandth")
_REPLACE: tuple[tuple[re.Pattern[str], str, tuple[str, ...] | None], ...] = tuple(
    (re.compile(p, re.IGNORECASE), r, needs) for p, r, needs in (
        # an area's unit after a number (30 cm², 30 cm^2, 30 square metres): the number is the claim
        (r"(?<=\d)\s*(?:(?:square|sq\.?)\s+(?:units?|(?:centi|milli|kilo)?met(?:re|er)s?|[ckm]?m)\b|"
         r"[ckm]?m\s*(?:²|\^\s*2)(?!\d|\.\d))", "", ("sq", "²", "^")),
        (r"\\[dt]?frac\s*\{([^{}]+)\}\s*\{([^{}]+)\}", r"(\1)/(\2)", ("\\",)),
        (r"\\[dt]?frac\s*(\d)\s*(\d)", r"(\1)/(\2)", ("\\",)),  # \tfrac12
        (r"\\(?:times|cdot|ast)", "*", ("\\",)), (r"\\div", "/", ("\\",)),
        (r"\\(?:left\b|right\b|,|;|!|quad\b)", " ", ("\\",)), (r"\\%", "%", ("\\",)),
        # an aligned block: its rows are steps ("6x + 16 &= 46 \\\\ 6x &= 30")
        (r"\\(?:begin|end)\{[a-z]+\*?\}|&(?=\s*[=<>])", " ", ("\\", "&")), (r"\\\\", " ; ", ("\\",)),
        (r"\\(?:lt)", "<", ("\\",)), (r"\\(?:gt)", ">", ("\\",)), (r"\\neq", "!=", ("\\",)),
        (r"\\(?:Rightarrow|Longrightarrow|implies|rightarrow|to)\b|[→⇒⟹]|=>|->", " → ", ("\\", "→", "⇒", "⟹", ">")),
        (r"\\?[\$`]|\*\*|\\\(|\\\)|\\\[|\\\]", " ", ("$", "`", "**", "\\")),
        (r"[×·⋅∗]", "*", ("×", "·", "⋅", "∗")), (r"÷", "/", ("÷",)), (r"[−–—](?=\s*[\d(])", "-", ("−", "–", "—")),
        (r"≠", "!=", ("≠",)),
        (r"(?<=\d),(?=\d{3}(?!\d))", "", (",",)),  # 1,000
        (r"(?<=\b\d)\s(?=\d{3}\b)|(?<=\b\d\d)\s(?=\d{3}\b)|(?<=\b\d\d\d)\s(?=\d{3}\b)", "", None),  # 1 000
        (rf"\b({_NW})[- ]({_ORD})\b", r"\1/\2", _ORD_STEMS),  # three quarters, one-half
        (rf"\ba ({_ORD})\b", r"1/\1", _ORD_STEMS),
        (r"\bdivided by\b", "/", ("divided by",)), (r"\b(?:multiplied by|times)\b", "*", ("multiplied by", "times")),
        (r"\bplus\b", "+", ("plus",)),
        (r"\b(?:minus|take away)\b", "-", ("minus", "take away")),
        (r"\bpercent\b|\bper cent\b", "%", ("percent", "per cent")),
        (r"\b(?:is equal to|equals|is the same as|is equivalent to|gives you|gives|makes|comes? out to|comes to|"
         r"works out to|results in|leaves)\b", "=",
         ("equal", "same as", "equivalent", "gives", "makes", "comes to", "out to", "works out to", "results in",
          "leaves")),
        # the unknown's value said in words ("if x is 5", "x must be 5"), and a solution named after its equation
        # ("the solution of 3x = 15 is x = 5": the equation, then the value, two relations)
        (r"(?<![\w'])x\s+(?:is|must be|has to be|should be|would be|will be)\s+(?=[-(]?\d)", "x = ", ("x ",)),
        (r"(?<=[\d)])\s+(?:is|means|gives(?: us)?|so|then|therefore)\s+(?=x\s*=)", " ; ", ("x",)),
        (r"\b(?:(?:is|are|be|was) )?(?:greater|bigger|larger|more) than\b", ">", ("than",)),
        (r"\b(?:(?:is|are|be|was) )?(?:less|smaller|fewer) than\b", "<", ("than",)),
        (r"\b(?:(?:is|are) )?(?:equal to|the same (?:ratio |fraction |number |amount )?as)\b", "=",
         ("equal to", "the same")),
        # a step's result: "4 × 5 becomes 20", "6 + 32, which is 38", "so we get 41"
        (r"\s*,?\s*\b(?:which|that) (?:is|gives(?: us| you)?|makes|equals|comes to)\b", " = ", ("which", "that")),
        (r"\b(?:becomes?|turns into|(?:we|you|I) get|to get|to give|costs?|you pay)\b", "=",
         ("become", "turns into", "get", "give", "cost", "pay")),
        (r"\b(?:one |a )?half of\b", "1/2 of", ("half",)),
    ))
_VULGAR = {c: Fraction(unicodedata.numeric(c)).limit_denominator(10) for c in VULGAR_FRACTIONS}
_VULGAR_RE = re.compile(r"(\d+)?\s*([" + "".join(_VULGAR) + "])")


def _vulgar(m: re.Match) -> str:
    value = _VULGAR[m.group(2)]
    n, d = value.numerator, value.denominator
    return f" ({m.group(1)} + {n}/{d})" if m.group(1) else f" ({n}/{d})"


# numbers written in words, compounds included ("thirty-two", "three hundred and five"); a bare "hundred" and
# "a hundred" are in _NUM_WORDS
_ONES_W = "one|two|three|four|five|six|seven|eight|nine"
_TEENS_W = "ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
_TENS_W = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_BELOW100 = rf"(?:(?:{_TENS_W})(?:[- ](?:{_ONES_W}))?|{_TEENS_W}|{_ONES_W}|zero)"
_BELOW1000 = rf"(?:(?:{_ONES_W}|a) hundred(?:(?: and)? {_BELOW100})?|{_BELOW100})"
_NUMBER_WORDS = re.compile(rf"\b{_BELOW1000}(?: thousand(?:(?: and)? {_BELOW1000})?)?\b", re.IGNORECASE)


def _word_number(m: re.Match) -> str:
    total = current = 0
    for w in re.split(r"[- ]+", m.group(0).lower()):
        if w == "hundred":
            current = max(current, 1) * 100
        elif w == "thousand":
            total, current = total + max(current, 1) * 1000, 0
        elif w in _NUM_WORDS:
            current += _NUM_WORDS[w]
    return str(total + current)


# arithmetic said in words, once its numbers are digits: "subtracting -7 from -8", "multiply 4 by 5"
_N = r"(-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?)"
_VERBAL: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = tuple(
    (re.compile(p, re.IGNORECASE), r, needs) for p, r, needs in (
        (rf"\b(?:subtract(?:ing|ed)?|tak(?:e|ing) away)\s+{_N}\s+from\s+{_N}", r"(\2) - (\1)", ("from",)),
        (rf"\b(?:add(?:ing|ed)?|the sum of)\s+{_N}\s+(?:and|to)\s+{_N}", r"(\1) + (\2)", ("add", "sum")),
        (rf"\b(?:multipl(?:y|ying|ied)|the product of)\s+{_N}\s+(?:by|and)\s+{_N}", r"(\1) * (\2)",
         ("multipl", "product")),
        (rf"\b(?:divid(?:e|ing|ed))\s+{_N}\s+by\s+{_N}", r"(\1) / (\2)", ("divid",)),
        (rf"\b(?:the difference between)\s+{_N}\s+and\s+{_N}", r"(\1) - (\2)", ("difference",)),
        (r"(\d+(?:\.\d+)?)\s*%\s+off\s+(?:of\s+)?(?:an?\s+|the\s+)?(\d+(?:\.\d+)?)", r"(\2 - \1% of \2)",
         ("off",)),
        (r"(\d+(?:\.\d+)?)\s+with\s+(?:a\s+)?(\d+(?:\.\d+)?)\s*%\s+(?:off|discount)\b", r"(\1 - \2% of \1)",
         ("off", "discount")),
        # "a bike priced at $120 is reduced by 20%"
        (r"(\d+(?:\.\d+)?)\s+(?:is\s+|are\s+|was\s+|gets\s+)?(?:reduced|marked down|discounted|lowered|decreased)\s+"
         r"by\s+(\d+(?:\.\d+)?)\s*%", r"(\1 - \2% of \1)", ("reduced", "marked down", "discounted", "lowered",
                                                             "decreased")),
        # "multiply the top and bottom of 2/3 by 4": the fraction with both scaled
        (r"\b(?:multipl(?:y|ying|ied))\s+(?:both\s+)?(?:the\s+)?(?:top|numerator)\s+and\s+(?:the\s+)?(?:bottom|denominator)"
         r"\s+of\s+(\d+)\s*/\s*(\d+)\s+by\s+(\d+)", r"\1/\2 = (\1 * \3)/(\2 * \3)", ("multipl",)),
        (r"(?<=\d) x (?=\d)", " * ", (" x ",)),  # 4 x 5
        # a number in tens and ones ("7 tens + 11 ones", "3 tens and 12 ones"): its expanded form
        (r"\b(\d+) tens?\s*(?:and|\+)\s*(\d+) ones?\b", r"(\1 * 10 + \2)", ("ones",)),
        (r"(?<=\d) over (?=\d)", "/", (" over ",)),  # three over four
        (r"\b(\d+) point (\d(?: \d)*)\b", "", ("point",)),  # seventeen point five (joined below)
        (r"\bnegative (?=\d)", "-", ("negative",)),
        # a 3:4 ratio, in a sentence that says it is one (07:00 + 12:25 = 19:25 is a clock)
        (r"(\d+)(?::|\s:\s)(\d+)(?=\s*(?:=|is\b|are\b|and\b|,|\.|;|\)|$))", r"(\1/\2)", ("ratio",)),
    ))
# two ratios equated, said "ratio" or not ("2:5 = 6:15", "2:5 = 6:__"; a clock's 07:00 + 12:25 = 19:25 adds)
_RATIOS_EQUATED = re.compile(r"(?<![\d:.])(\d+)\s?:\s?(\d+)\s*(=|is the same as|is equivalent to|scales? (?:up )?to)\s*"
                             r"(\d+|□)\s*:\s*(\d+|□)(?![\d:]|\.\d)", re.IGNORECASE)
_RATIO_PAIR = re.compile(r"(?<![\d:.])(\d+|□)\s*:\s*(\d+|□)(?![\d:]|\.\d)")
_WORD_NUM = re.compile(rf"\b({_NW})\b", re.IGNORECASE)
_ORD_NUM = re.compile(rf"\b(\d+)/({_ORD})\b", re.IGNORECASE)
_OF = re.compile(r"(\d+(?:\.\d+)?\s*%|\d+\s*/\s*\d+)\s+of\s+(?=[\d(])")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
# "= 5/6" written as "is 5/6" between two math expressions
_IS = re.compile(r"(?<=[\d)%])\s+(?:is|are|was|will be|would be|as|=)\s+(?=[-(]?\d)")


@functools.lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """Math-friendly text: operators as symbols, numbers as digits (see the module docstring)."""
    # Each rewrite runs only when the words or signs it needs are in the text (the env reads every turn: most
    # sentences need few of them). No rewrite writes a word another one needs.
    s = text
    s = _blanks(s)
    low = s.lower()
    present = {n for n in _ALL_NEEDS if n in low}
    for pat, rep, needs in _REPLACE:
        if needs is None or not present.isdisjoint(needs):
            out = pat.sub(rep, s)
            if out != s:
                s, low = out, out.lower()
    if any(c in s for c in _VULGAR):
        s = _VULGAR_RE.sub(_vulgar, s)
    if not _NUM_WORD_SET.isdisjoint(_ALPHA.findall(low)):
        s = _NUMBER_WORDS.sub(_word_number, s)
        s = _WORD_NUM.sub(lambda m: str(_NUM_WORDS[m.group(1).lower()]), s)
        low = s.lower()
    if ":" in s and "+" not in s and _RATIOS_EQUATED.search(s):
        s = _RATIO_PAIR.sub(r"(\1/\2)", _RATIOS_EQUATED.sub(r"\1:\2 = \4:\5", s))
    for pat, rep, needs in _VERBAL:
        if any(n in low for n in needs):
            if "point" in needs:
                s = pat.sub(lambda m: m.group(1) + "." + m.group(2).replace(" ", ""), s)
            else:
                s = pat.sub(rep, s)
            low = s.lower()
    if not _REL.search(s):
        s = _relational(s)
    if "→" in s:  # arrows: a step to the next expression, or from one equation to the next
        parts = s.split("→")
        s = (" ; " if sum(bool(_REL.search(p)) for p in parts) > 1 else " = ").join(parts)
    words = set(_ALPHA.findall(s.lower()))
    if not _IS_WORDS.isdisjoint(words) and not _SCALE_WORDS.search(s):  # "on the map, 1 cm is 10 km": a scale
        s = _UNIT_IS.sub(r"\1 = ", s)
    if "%" in s and "of" in words:  # "10% of 60 is 6, so 5% is 3": the percents after of the same whole
        s = _elliptic_percent(s)
    if not words.isdisjoint(_ORD_PLURALS):  # "70 hundredths", "3 fourths"
        s = _DIGIT_ORD.sub(lambda m: f"({m.group(1)}/{_ORDINALS[m.group(2).lower()]})", s)
    if "/" in s and any(o in words for o in _ORDINALS):
        s = _ORD_NUM.sub(lambda m: f"{m.group(1)}/{_ORDINALS[m.group(2).lower()]}", s)
    if "of" in words:
        s = _OF.sub(lambda m: m.group(1) + " * ", s)
    if "%" in s:
        s = _PERCENT.sub(lambda m: f"({m.group(1)}/100)", s)
    if "=" in s or not _IS_WORDS.isdisjoint(words):
        s = _IS.sub(" = ", s)
    return s


def _blanks(text: str) -> str:
    """``text`` with each blank to fill in written ``□`` (the whole turn's, before it is split into sentences: a
    "?" blank does not end a sentence)."""
    # (the pattern is slow to scan: it runs only when a blank's sign is there -- a "?" only after "=", "(", an
    # operator or nothing, not the one that ends a question)
    if "__" in text or "\\" in text or "□" in text or "☐" in text or "▢" in text or (
            "[" in text and _EMPTY_BRACKETS.search(text)) or ("?" in text and _blank_mark(text)) or (
            "=" in text and "how many" in text.lower()):
        return _BLANK.sub("□", text)  # (no space added: "6:__" is no sentence ending in a colon)
    return text


_EMPTY_BRACKETS = re.compile(r"\[\s*\]")  # "[ ]" is a blank, "[END]" is not


def _blank_mark(text: str) -> bool:
    """Whether a "?" in ``text`` follows "=", "(", an operator or only blanks: where :data:`_BLANK` reads one."""
    i = text.find("?")
    while i >= 0:
        j = i - 1
        while j >= 0 and text[j].isspace():
            j -= 1
        if j < 0 or text[j] in "=(-+*/×÷":
            return True
        i = text.find("?", i + 1)
    return False


_ORD_PLURALS = frozenset(w for w in _ORDINALS if w.endswith("s"))
_DIGIT_ORD = re.compile(r"(?<![\d.])(\d+)\s+(" + "|".join(sorted(_ORD_PLURALS, key=len, reverse=True)) + r")\b",
                        re.IGNORECASE)
_PCT_OF_WHOLE = re.compile(r"\d\s*%\s+of\s+(\d+(?:\.\d+)?)(?!\.?\d|\s*[%/])")
_BARE_PCT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*%(?!\s*of\b)(?=\s*(?:=|is|are|would be|will be)\s+(\d+(?:\.\d+)?)"
                       r"(?!\.?\d|\s*[%/]))")


def _elliptic_percent(s: str) -> str:
    """A bare percent said to be a number after a percent of a whole is that percent of the whole ("10% of 60 is 6,
    so 5% is 3"), unless the number is the percent as a decimal ("25% is 0.25")."""
    m = _PCT_OF_WHOLE.search(s)
    if m is None:
        return s
    whole = m.group(1)

    def of_whole(p: re.Match) -> str:
        if Fraction(p.group(2)) == Fraction(p.group(1)) / 100:
            return p.group(0)
        return f"{p.group(1)}% of {whole}"
    return s[:m.end()] + _BARE_PCT.sub(of_whole, s[m.end():])


_ALL_NEEDS = frozenset(n for _p, _r, needs in _REPLACE if needs for n in needs)
_ALPHA = re.compile(r"[a-z]+")
_NUM_WORD_SET = frozenset(_NUM_WORDS)
_IS_WORDS = frozenset({"is", "are", "was", "will", "would", "as", "equals"})


# ---------------------------------------------------------------------------------------------- expressions

_UNITS: dict[str, tuple[str, Fraction]] = {}
for _names, _dim, _factor in (
    (("mm", "millimeter", "millimeters", "millimetre", "millimetres"), "length", Fraction(1, 1000)),
    (("cm", "centimeter", "centimeters", "centimetre", "centimetres"), "length", Fraction(1, 100)),
    (("m", "meter", "meters", "metre", "metres"), "length", Fraction(1)),
    (("km", "kilometer", "kilometers", "kilometre", "kilometres"), "length", Fraction(1000)),
    (("mg", "milligram", "milligrams"), "mass", Fraction(1, 1000)),
    (("g", "gram", "grams"), "mass", Fraction(1)),
    (("kg", "kilogram", "kilograms"), "mass", Fraction(1000)),
    (("ml", "milliliter", "milliliters", "millilitre", "millilitres"), "volume", Fraction(1, 1000)),
    (("l", "liter", "liters", "litre", "litres"), "volume", Fraction(1)),
    (("s", "sec", "second", "seconds"), "time", Fraction(1)),
    (("min", "mins", "minute", "minutes"), "time", Fraction(60)),
    (("h", "hr", "hrs", "hour", "hours"), "time", Fraction(3600)),
    (("km/h", "kph", "km per hour", "kilometers per hour", "kilometres per hour"), "speed", Fraction(1000, 3600)),
    (("m/s", "meters per second", "metres per second"), "speed", Fraction(1)),
):
    for _n in _names:
        _UNITS[_n] = (_dim, _factor)
_UNIT_RE = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
# the families' relational claims said in prose, written out as the computation they state ("a triangle with
# base 6 and height 4 has an area of 12" is 1/2 × 6 × 4 = 12)
_Q = r"(\d+(?:\.\d+)?)"
_U = rf"(?:\s*(?:{_UNIT_RE})\b)?"
_BASE = re.compile(rf"\bbase\s+(?:of\s+|is\s+|=\s*)?{_Q}|{_Q}{_U}\s+base\b", re.IGNORECASE)
_HEIGHT = re.compile(rf"\b(?:height|tall)\s+(?:of\s+|is\s+|=\s*)?{_Q}|{_Q}{_U}\s+(?:high|tall|height)\b", re.IGNORECASE)
_AREA = re.compile(rf"\barea\b.{{0,30}}?(?:\bof|\bis|=|\bcomes to|\bbe)\s*(?:only\s+)?{_Q}(?!\s*(?:by|\*|x)\b)",
                   re.IGNORECASE)
_BY = re.compile(rf"{_Q}{_U}\s*(?:by|\*)\s*{_Q}{_U}", re.IGNORECASE)
_PERIM = re.compile(rf"\bperimeter\b.{{0,30}}?(?:\bof|\bis|=|\bcomes to|\bbe)\s*(?:only\s+)?{_Q}(?!\s*(?:by|\*|x)\b)",
                    re.IGNORECASE)
_OPERATOR_NEXT = re.compile(r"\s*(?:[-+*/×÷x]|by\b)", re.IGNORECASE)
_LENGTH = re.compile(rf"\blength\s+(?:is|of|=)\s*{_Q}", re.IGNORECASE)
_WIDTH = re.compile(rf"\bwidth\s+(?:is|of|=|must be|has to be|will be|would be)\s*{_Q}", re.IGNORECASE)
_TRIP = re.compile(rf"(?:{_Q}\s*(km|m|miles?)\b.{{0,30}}?\bat\s+{_Q}\s*(?:km/h|km per hour|kph|m/s)|"
                   rf"\bat\s+{_Q}\s*(?:km/h|km per hour|kph|m/s)\W{{0,3}}\s*{_Q}\s*(km|m|miles?)\b)"
                   rf".{{0,20}}?\btakes?\s+{_Q}\s*(?:h|hours?|hrs?)\b", re.IGNORECASE)

_TU = r"(h|hours?|hrs?|min|minutes?|s|seconds?)"
_VU = r"(km/h|km per hour|kph|m/s)"
# "covering 120 km in 3 hours is a speed of 40 km/h", "at 20 km/h for 3 hours you travel 60 km"
_SPEED_OF = re.compile(rf"{_Q}\s*(km|m)\b.{{0,20}}?\bin\s+{_Q}\s*{_TU}\b.{{0,30}}?\b(?:speed|rate|pace|velocity)\b"
                       rf".{{0,15}}?(?<![\d/.]){_Q}\s*{_VU}", re.IGNORECASE)
_DIST_FOR = re.compile(rf"{_Q}\s*{_VU}\s+for\s+{_Q}\s*{_TU}\b.{{0,30}}?\b(?:travel|go|goes|cover|covers|drive|"
                       rf"drives|fly|flies|ride|rides|distance|get|gets|reach|reaches|move|moves)\b.{{0,15}}?"
                       rf"(?<![\d/.]){_Q}\s*(km|m)\b", re.IGNORECASE)


def _relational(s: str) -> str:
    low = s.lower()
    if "area" in low and ("triangl" in low or "rectangl" in low or "parallelogram" in low):
        b, h = _BASE.search(s), _HEIGHT.search(s)
        # (the area's number is none of the lengths: "the area of a triangle with a base of 10" says no area)
        lengths = (b.start(1), b.start(2), h.start(1), h.start(2)) if b and h else ()
        a = next((m for m in _AREA.finditer(s) if m.start(1) not in lengths), None) if b and h else None
        if b and h and a:
            half = "1/2 * " if "triangl" in low else ""
            return f"{s} ; {half}{b.group(1) or b.group(2)} * {h.group(1) or h.group(2)} = {a.group(1)}"
    if "area" in low and "rectangl" in low:  # "a 9 by 3 rectangle has an area of 27 square units"
        by, a = _BY.search(s), _AREA.search(s)
        if by and a and not _OPERATOR_NEXT.match(s, a.end()):  # "its area is 14 × 9": a computation, not a value
            return f"{s} ; {by.group(1)} * {by.group(2)} = {a.group(1)}"
    if "perimeter" in low and "rectangl" in low:
        by, per = _BY.search(s), _PERIM.search(s)
        if by and per:
            return f"{s} ; 2 * ({by.group(1)} + {by.group(2)}) = {per.group(1)}"
    if "perimeter" in low and ("width" in low or "length" in low):
        # "if the perimeter is 36 and the length is 11, the width must be 7"
        per, length, width = _PERIM.search(s), _LENGTH.search(s), _WIDTH.search(s)
        if per and length and width:
            return f"{s} ; 2 * ({length.group(1)} + {width.group(1)}) = {per.group(1)}"
    if "take" in low:
        m = _TRIP.search(s)
        if m:
            dist, unit, speed = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(5), m.group(6),
                                                                                       m.group(4))
            return f"{s} ; {dist} {unit} / {speed} km/h = {m.group(7)} h"
    if "speed" in low or "rate" in low or "pace" in low or "velocity" in low:
        m = _SPEED_OF.search(s)
        if m:
            return f"{s} ; {m.group(1)} {m.group(2)} / {m.group(3)} {m.group(4)} = {m.group(5)} {m.group(6)}"
    if " for " in low:
        m = _DIST_FOR.search(s)
        if m:
            return f"{s} ; {m.group(1)} {m.group(2)} * {m.group(3)} {m.group(4)} = {m.group(5)} {m.group(6)}"
    return s


_TRIP_ASKED = (
    (re.compile(rf"{_Q}\s*(km|m)\s+at\s+{_Q}\s*{_VU}", re.IGNORECASE), "{0} {1} / {2} {3}"),  # the time
    (re.compile(rf"{_Q}\s*(km|m)\s+in\s+{_Q}\s*{_TU}\b", re.IGNORECASE), "{0} {1} / {2} {3}"),  # the speed
    (re.compile(rf"{_Q}\s*{_VU}\s+for\s+{_Q}\s*{_TU}\b", re.IGNORECASE), "{0} {1} * {2} {3}"),  # the distance
)


def _asked_quantity(norm: str) -> str | None:
    """The computation of the families' quantity a question names with its case and no value: a rectangle's
    perimeter or area ("perimeter of a 4 by 3 rectangle = ?"), a triangle's area from its base and height, a trip's
    time, speed or distance ("120 km at 40 km/h")."""
    low = norm.lower()
    if "rectangl" in low and ("perimeter" in low or "area" in low) and (by := _BY.search(norm)):
        if ("perimeter" in low) != ("area" in low):
            a, b = by.group(1), by.group(2)
            return f"2 * ({a} + {b})" if "perimeter" in low else f"{a} * {b}"
    if "triangl" in low and "area" in low and (b := _BASE.search(norm)) and (h := _HEIGHT.search(norm)):
        return f"1/2 * {b.group(1) or b.group(2)} * {h.group(1) or h.group(2)}"
    if " at " in low or " in " in low or " for " in low:
        for pat, form in _TRIP_ASKED:
            if m := pat.search(norm):
                return form.format(*m.groups())
    return None


_UNITS_ASKED = re.compile(rf"\bhow many ({_UNIT_RE}) (?:(?:are|is|make|makes|equal|equals|there|in|does|do)\s+)+"
                          rf"(\d+(?:\.\d+)?) ?({_UNIT_RE})\b", re.IGNORECASE)
# "Convert 9500 m to km.", "What is 9500 m in km?", "Write 2.5 kg in grams": a conversion asked for
_CONVERT_ASKED = re.compile(rf"(?<![\d.])(\d+(?:\.\d+)?) ?({_UNIT_RE}) (?:to|into|in|as) ({_UNIT_RE})\b",
                            re.IGNORECASE)
_SCALE_WORDS = re.compile(r"\b(?:maps?|scales?|models?|drawings?|plans?|represents?|stands? for)\b", re.IGNORECASE)
# "3 metres is 300 centimetres": "is" between a quantity and a number
_UNIT_IS = re.compile(rf"(\d\s*(?:{_UNIT_RE})\.?)\s+(?:is|are|was|equals)\s+(?=[-(]?\d)", re.IGNORECASE)

_TOKEN = re.compile(rf"\s*(?:(?P<num>\d+(?:\.\d+)?)(?:\s*(?P<unit>{_UNIT_RE})(?![a-z]))?|(?P<var>[a-z])(?![a-z])|"
                    rf"(?P<blank>□)(?:\s*(?P<bunit>{_UNIT_RE})(?![a-z]))?|(?P<op>[-+*/()]))", re.IGNORECASE)
# a blank to fill in ("2/3 = __/9", "1 L = ? mL", "[ ]", "= how many km?"), written as one sign: ``□``
_BLANK = re.compile(rf"(?<![A-Za-z0-9_])_{{2,}}(?![A-Za-z0-9_])|[□☐▢]|\[\s*\]|"
                    rf"\\(?:square|Box|underline\{{\s*\}})(?![a-z])|"
                    rf"(?:(?<=[=(])|(?<=[=(]\s)|^\s*)\?(?=\s*(?:[-+*/×÷]\s*[\d(]|(?:{_UNIT_RE})\b))|(?<=[-+*/×÷])\s*\?|"
                    rf"(?<==)\s*how many(?=\s+(?:{_UNIT_RE})\b)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Node:
    """An expression tree: ``op`` is ``num``/``var``/``neg`` or a binary operator; ``text`` the number as
    written (its decimal places matter to some misconceptions); ``unit`` a dimension for quantities."""

    op: str
    left: Node | None = None
    right: Node | None = None
    value: Fraction | None = None
    text: str = ""
    dim: str | None = None
    paren: bool = False


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.toks, self.i = tokens, 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expr(self) -> Node:
        node = self.term()
        while (t := self.peek()) and t[1] in "+-":
            self.take()
            node = Node(t[1], node, self.term())
        return node

    def term(self) -> Node:
        node = self.factor()
        while True:
            t = self.peek()
            if t and t[1] in "*/":
                self.take()
                node = Node(t[1], node, self.factor())
            elif t and t[0] in ("num", "var", "blank") or t and t[1] == "(":  # implicit product: 3x, 2(4 + 1)
                node = Node("*", node, self.factor())
            else:
                return node

    def factor(self) -> Node:
        t = self.take()
        if t[1] == "-":
            return Node("neg", self.factor())
        if t[1] == "(":
            node = self.expr()
            if self.take()[1] != ")":
                raise ValueError("unbalanced")
            return Node(node.op, node.left, node.right, node.value, node.text, node.dim, paren=True)
        if t[0] == "num":
            text, _, unit = t[1].partition("|")
            value = Fraction(text)
            if unit:
                dim, factor = _UNITS[unit.lower()]
                return Node("num", value=value * factor, text=text, dim=dim)
            return Node("num", value=value, text=text)
        if t[0] == "var":
            return Node("var", text=t[1])
        if t[0] == "blank":  # an unknown to fill in; its unit's size is its value's factor
            unit = t[1].partition("|")[2]
            if unit:
                dim, factor = _UNITS[unit.lower()]
                return Node("var", value=factor, text="□", dim=dim)
            return Node("var", text="□")
        raise ValueError(f"unexpected {t}")


def parse(expr: str) -> Node | None:
    """An arithmetic expression (``+ - * /``, parentheses, decimals, one unknown, units) or ``None``."""
    toks: list[tuple[str, str]] = []
    pos = 0
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None or m.end() == pos:
            if expr[pos:].strip() == "":
                break
            return None
        if m.group("num"):
            toks.append(("num", m.group("num") + ("|" + m.group("unit") if m.group("unit") else "")))
        elif m.group("var"):
            toks.append(("var", m.group("var").lower()))
        elif m.group("blank"):
            toks.append(("blank", "□|" + (m.group("bunit") or "")))
        else:
            toks.append(("op", m.group("op")))
        pos = m.end()
    if not toks or len(toks) > 300:  # (no side of a sentence is that long: a deep tree would overflow the stack)
        return None
    try:
        p = _Parser(toks)
        node = p.expr()
        return node if p.i == len(toks) else None
    except (ValueError, IndexError, ZeroDivisionError, KeyError):
        return None


Lin = tuple[Fraction, Fraction]  # a*x + b


def evaluate(node: Node, rule: Callable[[Node], Fraction | None] | None = None) -> Lin | None:
    """``(a, b)`` with the value ``a x + b`` (``a = 0`` for numbers); ``None`` when not linear or undefined.

    ``rule`` lets a misconception replace the evaluation of some sub-trees (it returns ``None`` elsewhere)."""
    if rule is not None and node.op not in ("num", "var"):
        v = rule(node)
        if v is not None:
            return (Fraction(0), v)
    if node.op == "num":
        return (Fraction(0), node.value)
    if node.op == "var":
        return (node.value if node.value is not None else Fraction(1), Fraction(0))
    if node.op == "neg":
        v = evaluate(node.left, rule)
        return None if v is None else (-v[0], -v[1])
    a, b = evaluate(node.left, rule), evaluate(node.right, rule)
    if a is None or b is None:
        return None
    if node.op == "+":
        return (a[0] + b[0], a[1] + b[1])
    if node.op == "-":
        return (a[0] - b[0], a[1] - b[1])
    if node.op == "*":
        if a[0] and b[0]:
            return None
        return (a[0] * b[1] + b[0] * a[1], a[1] * b[1])
    if node.op == "/":
        if b[0] or b[1] == 0:
            return None
        return (a[0] / b[1], a[1] / b[1])
    return None


def _const(node: Node) -> Fraction | None:
    v = evaluate(node)
    return v[1] if v is not None and v[0] == 0 else None


def _leaves(node: Node | None) -> Iterable[Node]:
    if node is None:
        return
    if node.op in ("num", "var"):
        yield node
    else:
        yield from _leaves(node.left)
        yield from _leaves(node.right)


def _ops(node: Node | None) -> set[str]:
    if node is None or node.op in ("num", "var"):
        return set()
    return {node.op} | _ops(node.left) | _ops(node.right)


def _is_fraction(node: Node) -> bool:
    return node.op == "/" and node.left.op == "num" and node.right.op == "num" and "." not in node.left.text + \
        node.right.text


def _scaled_fraction(node: Node) -> bool:
    """``(2 × 4)/(3 × 4)``: a fraction with its top and bottom multiplied by the same number."""
    if node.op != "/" or node.left.op != "*" or node.right.op != "*":
        return False
    top = {n.value for n in (node.left.left, node.left.right) if n.op == "num"}
    return len(list(_leaves(node))) == 4 and bool(
        top & {n.value for n in (node.right.left, node.right.right) if n.op == "num"})


def _is_decimal(node: Node) -> bool:
    return node.op == "num" and "." in node.text


# ---------------------------------------------------------------------------------------------- operations

def operations(rel: str, sides: list[Node]) -> set[str]:
    """The computations a relation performs (the vocabulary of :data:`KC_OPERATIONS`)."""
    ops: set[str] = set()
    leaves = [leaf for s in sides for leaf in _leaves(s)]
    if any(leaf.op == "var" for leaf in leaves):
        return {"equation"}
    if any(leaf.dim in ("length", "mass", "volume", "time") for leaf in leaves):
        dims = {leaf.dim for leaf in leaves if leaf.dim}
        # (0.7 m against 0.7 cm: the same number in two units is a conversion too)
        distinct = len({(leaf.text, leaf.value) for leaf in leaves})
        if distinct >= 2 and len(dims) == 1 and all(s.op == "num" for s in sides):
            ops.add("convert")
    if any(leaf.dim == "speed" for leaf in leaves) or {"time", "length"} <= {leaf.dim for leaf in leaves}:
        ops.add("speed")
    fractions = [n for s in sides for n in _walk(s) if _is_fraction(n)]
    negs = any(n.op == "neg" for s in sides for n in _walk(s)) or any(
        (_const(s) or 0) < 0 for s in sides)
    for s in sides:
        for n in _walk(s):
            if n.op in "+-" and n.op != "neg" and len(n.op) == 1:
                if _is_fraction(n.left) and _is_fraction(n.right):
                    like = n.left.right.value == n.right.right.value
                    ops.add("frac_add_like" if like else "frac_add_unlike")
                elif _is_decimal(n.left) or _is_decimal(n.right):
                    ops.add("dec_add")
                elif negs:
                    ops.add("int_sub" if n.op == "-" else "int_add")
                else:
                    ops.add("whole_add" if n.op == "+" else "whole_sub")
        flat = _ops(s)
        if {"+", "-"} & flat and {"*", "/"} & flat and not (len(fractions) and flat <= {"/", "+", "-"}):
            ops.add("precedence")
        if "+" in flat and "-" in flat:
            ops.add("left_to_right")
        if _half_product(s):
            ops.add("triangle_area")
        if _perimeter(s):
            ops.add("perimeter")
    if rel in ("<", ">"):
        if fractions:
            ops.add("frac_compare")
        elif any(_is_decimal(s) for s in sides):
            ops.add("dec_compare")
        elif negs:
            ops.add("int_compare")
    if rel == "=" and len(sides) >= 2 and all(_is_fraction(s) or _scaled_fraction(s) for s in sides[:2]) \
            and any(_is_fraction(s) for s in sides[:2]):
        ops.add("frac_equiv")
        if _const(sides[0].right) != _const(sides[1].right):
            ops.add("rename")
    if rel == "=" and any(_is_fraction(s) for s in sides) and any(_is_decimal(s) for s in sides):
        ops.add("dec_fraction")
    if rel == "=" and len(sides) == 2 and all(s.op == "num" and not s.dim for s in sides) and any(
            _is_decimal(s) for s in sides) and _places(sides[0]) != _places(sides[1]):
        ops.add("dec_equiv")  # "0.5 = 0.50": a zero after the last digit changes nothing
    if any(getattr(leaf, "text", "").endswith("%") for leaf in leaves) or any(n.op == "pct" for s in sides
                                                                             for n in _walk(s)):
        ops.add("percent")
    if any(n.op == "+" and n.paren and n.left.op == "*" and n.left.right.op == "num" and n.left.right.value == 10
           for s in sides for n in _walk(s)):
        ops.add("place")  # (7 * 10 + 11): tens and ones
    if rel == "=" and not ops and {"*"} & set().union(*(_ops(s) for s in sides)):
        ops.add("multiply")
    if rel == "=" and not ops and {"/"} & set().union(*(_ops(s) for s in sides)):
        ops.add("divide")
    return ops


def _indexed(entries: tuple[tuple[str, str, str, str | None], ...], math: bool,
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
        said = _DIGIT_RUN.sub("0", _NUMBERLESS.sub(" ", piece))  # numbers: no stems
        stems, negs = content_stems(said)
        if len(stems) < 3 or (piece is not text and len(stems - topic) < 1):
            continue
        stems, sign = polarity(stems)
        numbers = frozenset() if math else _numbers(piece)  # a lesson's quantities are facts
        out.append(Proposition(kc, stems, negs % 2 == 1, kind, mis, numbers, tuple(sorted(sign.items())), said))
    return tuple(out)


def _continued(node: Node, carry: list) -> Node:
    """``node`` with its first operand replaced by the computation that produced it in the step before
    (``90 ÷ 2`` after ``9 × 10 = 90`` is ``(9 × 10) ÷ 2``), so a run of steps is credited as one computation."""
    if not carry or node.op not in ("+", "-", "*", "/") or node.left is None:
        return node
    value, prev = carry[0][:2]
    if node.left.op == "num" and node.left.value == value:
        return Node(node.op, replace(prev, paren=True), node.right)
    if node.right is not None and node.right.op == "num" and node.right.value == value:  # 21 + 20 after 4 × 5 = 20
        return Node(node.op, node.left, replace(prev, paren=True))
    if node.left.op in ("+", "-", "*", "/"):
        inner = _continued(node.left, carry)
        return node if inner is node.left else Node(node.op, inner, node.right)
    return node


def _walk(node: Node | None) -> Iterable[Node]:
    if node is None:
        return
    yield node
    if node.op not in ("num", "var"):
        yield from _walk(node.left)
        yield from _walk(node.right)


def _half_product(node: Node) -> bool:
    """``1/2 × b × h``, ``0.5 × b × h`` or ``b × h ÷ 2``: the triangle-area computation."""
    ops = _ops(node)
    if not (ops <= {"*", "/"} and "*" in ops):
        return False
    half = any((_is_fraction(n) and n.left.value * 2 == n.right.value) or (n.op == "num" and n.value == Fraction(1, 2))
               for n in _walk(node))
    return half or (node.op == "/" and node.right.op == "num" and node.right.value == 2)


def _perimeter(node: Node) -> bool:
    ops = _ops(node)
    nums = [leaf.value for leaf in _leaves(node)]
    if ops == {"+"} and len(nums) == 4 and sorted(nums)[0] == sorted(nums)[1] and sorted(nums)[2] == sorted(nums)[3]:
        return True
    if node.op == "+" and ops == {"*", "+"} and node.left.op == "*" == node.right.op and not node.paren:  # 2a + 2b
        return all(2 in (_const(n.left), _const(n.right)) for n in (node.left, node.right))
    return node.op == "*" and ops == {"*", "+"} and 2 in (_const(node.left), _const(node.right))


# The computations that exercise each math KC (a KC of the task is exercised by a claim that performs one).
KC_OPERATIONS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "fraction_equivalence": {"frac_equiv", "rename"},
    "common_denominator": {"frac_add_unlike", "rename"},
    "adding_fractions": {"frac_add_like", "frac_add_unlike"},
    "comparing_fractions": {"frac_compare"},
    "place_value": {"whole_add", "place"},
    "regrouping": {"whole_add_regroup"},
    "decimal_place_value": {"dec_compare", "dec_fraction", "dec_add", "dec_equiv"},
    "comparing_decimals": {"dec_compare"},
    "adding_decimals": {"dec_add"},
    "number_line": {"int_compare", "int_add", "int_sub"},
    "adding_integers": {"int_add"},
    "subtracting_integers": {"int_sub"},
    "operation_precedence": {"precedence"},
    "left_to_right_rule": {"left_to_right"},
    "inverse_operations": {"equation"},
    "balance_principle": {"equation"},
    "two_step_equations": {"equation"},
    "percent_meaning": {"percent"},
    "percent_of_quantity": {"percent", "multiply"},
    "percent_change": {"percent", "whole_sub"},
    "equivalent_ratios": {"frac_equiv", "ratio", "multiply"},
    "unit_rate": {"divide", "speed"},
    "area_concept": {"multiply"},
    "rectangle_properties": {"perimeter"},
    "perimeter": {"perimeter"},
    "base_and_height": set(),  # which length is the height: met through its propositions
    "triangle_area": {"triangle_area"},
    "metric_prefixes": {"convert"},
    "conversion_direction": {"convert"},
    "speed_distance_time": {"speed", "divide", "multiply"},
}.items()}


# ---------------------------------------------------------------------------------------------- wrong rules

def _frac_parts(node: Node) -> tuple[Fraction, Fraction] | None:
    n = node
    if _is_fraction(n):
        return n.left.value, n.right.value
    return None


def _rule_add_tops_bottoms(node: Node) -> Fraction | None:
    if node.op == "+":
        a, b = _frac_parts(node.left), _frac_parts(node.right)
        if a and b and a[1] + b[1]:
            return Fraction(a[0] + b[0], a[1] + b[1])
    return None


def _rule_numerators_not_scaled(node: Node) -> Fraction | None:
    if node.op == "+":
        a, b = _frac_parts(node.left), _frac_parts(node.right)
        if a and b and a[1] != b[1]:
            den = math.lcm(int(a[1]), int(b[1])) if a[1].denominator == 1 == b[1].denominator else None
            if den:
                return Fraction(a[0] + b[0], den)
    return None


def _rule_left_to_right(node: Node) -> Fraction | None:
    leaves, ops = _flatten(node)
    if leaves is None or len(ops) < 2 or not ({"+", "-"} & set(ops) and {"*", "/"} & set(ops)):
        return None
    acc = leaves[0]
    for op, v in zip(ops, leaves[1:], strict=True):
        acc = acc + v if op == "+" else acc - v if op == "-" else acc * v if op == "*" else (acc / v if v else acc)
    return acc


def _rule_add_before_sub(node: Node) -> Fraction | None:
    # a - b + c read as a - (b + c)
    if node.op == "+" and node.left.op == "-" and not node.left.paren:
        a, b, c = _const(node.left.left), _const(node.left.right), _const(node.right)
        if None not in (a, b, c):
            return a - (b + c)
    return None


def _flatten(node: Node) -> tuple[list[Fraction] | None, list[str]]:
    """Left-to-right numbers and operators of an expression without parentheses."""
    if node.op == "num":
        return [node.value], []
    if node.op in "+-*/" and len(node.op) == 1 and not node.paren:
        left, lops = _flatten(node.left)
        right, rops = _flatten(node.right)
        if left is None or right is None:
            return None, []
        return left + right, lops + [node.op] + rops
    return None, []


def _rule_ignore_signs(node: Node) -> Fraction | None:
    if any(n.op == "neg" for n in _walk(node)) and node.op in "+-":
        vals = [abs(leaf.value) for leaf in _leaves(node) if leaf.op == "num"]
        if len(vals) == 2:
            return vals[0] + vals[1] if node.op == "+" else vals[0] - vals[1]
    return None


def _rule_sign_of_first(node: Node) -> Fraction | None:
    if node.op == "+":
        a, b = _const(node.left), _const(node.right)
        if a is not None and b is not None and (a < 0) != (b < 0):
            mag = abs(a + b)
            return mag if a > 0 else -mag
    return None


def _rule_minus_negative(node: Node) -> Fraction | None:
    if node.op == "-" and node.right.op == "neg":
        a, b = _const(node.left), _const(node.right.left)
        if a is not None and b is not None:
            return a - b
    return None


def _rule_no_regrouping(node: Node) -> Fraction | None:
    if node.op == "+" and node.left.op == "num" == node.right.op and "." not in node.left.text + node.right.text:
        a, b = int(node.left.value), int(node.right.value)
        if a >= 0 and b >= 0 and (a % 10 + b % 10) >= 10:
            return Fraction(a + b - 10)
    return None


def _rule_whole_column(node: Node) -> Fraction | None:
    if node.op == "+" and node.left.op == "num" == node.right.op and "." not in node.left.text + node.right.text:
        a, b = int(node.left.value), int(node.right.value)
        ones = a % 10 + b % 10
        if a >= 0 and b >= 0 and ones >= 10:
            return Fraction(int(f"{a // 10 + b // 10}{ones}"))
    return None


def _rule_align_last(node: Node) -> Fraction | None:
    if node.op == "+" and _is_decimal(node.left) != _is_decimal(node.right) or node.op == "+" and \
            _is_decimal(node.left) and _is_decimal(node.right) and _places(node.left) != _places(node.right):
        if node.left.op == "num" == node.right.op:
            p = max(_places(node.left), _places(node.right))
            a = int(node.left.text.replace(".", ""))
            b = int(node.right.text.replace(".", ""))
            return Fraction(a + b, 10 ** p)
    return None


def _rule_add_parts(node: Node) -> Fraction | None:
    if node.op == "+" and _is_decimal(node.left) and _is_decimal(node.right):
        (aw, af), (bw, bf) = node.left.text.split("."), node.right.text.split(".")
        frac = int(af) + int(bf)
        if len(af) == len(bf) and frac >= 10 ** len(af) or len(af) != len(bf):
            return Fraction(int(aw) + int(bw)) + Fraction(frac, 10 ** len(str(frac)))
    return None


def _places(node: Node) -> int:
    return len(node.text.split(".")[1]) if "." in node.text else 0


def _rule_forget_half(node: Node) -> Fraction | None:
    if _half_product(node):
        v = _const(node)
        return None if v is None else v * 2
    return None


def _rule_percent_as_dollars(node: Node) -> Fraction | None:
    # y - x% * y  read as  y - x
    if node.op == "-" and node.right.op == "*":
        y = _const(node.left)
        pct = _pct_value(node.right.left) or _pct_value(node.right.right)
        if y is not None and pct is not None:
            return y - pct * 100
    return None


def _pct_value(node: Node) -> Fraction | None:
    if node.op == "/" and node.right.op == "num" and node.right.value == 100 and node.left.op == "num":
        return node.left.value / 100
    return None


def _rule_discount_as_price(node: Node) -> Fraction | None:
    if node.op == "-" and node.right.op == "*":
        y, part = _const(node.left), _const(node.right)
        if y is not None and part is not None and (_pct_value(node.right.left) or _pct_value(node.right.right)):
            return part
    return None


def _written(node: Node) -> Fraction | None:
    """A quantity's number as written (``40`` for "40 km/h"), for rules that work on the numbers, not the units."""
    return Fraction(node.text) if node.op == "num" and node.dim and node.text else None


def _rectangle_sides(node: Node) -> tuple[Fraction, Fraction] | None:
    """The two side lengths of a rectangle's perimeter computation (``2 × (a + b)``, ``2a + 2b``, ``a + b + a + b``)."""
    if not _perimeter(node):
        return None
    nums = sorted(leaf.value for leaf in _leaves(node))
    if len(nums) == 4 and _ops(node) == {"+"}:
        return nums[0], nums[2]
    if node.op == "+":  # 2a + 2b
        a, b = (n.right if _const(n.left) == 2 else n.left for n in (node.left, node.right))
        return (a.value, b.value) if a.op == "num" == b.op else None
    other = node.right if _const(node.left) == 2 else node.left
    if other.op == "+" and other.left.op == "num" and other.right.op == "num":
        return other.left.value, other.right.value
    return None


def _rule_two_sides_only(node: Node) -> Fraction | None:
    # the perimeter as the length plus the width
    sides = _rectangle_sides(node)
    return None if sides is None else sides[0] + sides[1]


def _rule_confuse_area_perimeter(node: Node) -> Fraction | None:
    # the perimeter as the length times the width
    sides = _rectangle_sides(node)
    return None if sides is None else sides[0] * sides[1]


def _trip_parts(node: Node) -> tuple[str, Fraction, Fraction, Fraction] | None:
    """A speed-distance-time computation on quantities with units: (what it finds, the two numbers as written,
    the SI size of one unit of its result): ``120 km / 40 km/h`` finds a time, ``120 km / 3 h`` a speed,
    ``40 km/h * 3 h`` a distance. Bare numbers say nothing about which is which (``None``)."""
    if node.op not in ("/", "*") or node.left is None or node.right is None:
        return None
    a, b = _written(node.left), _written(node.right)
    if a is None or b is None or a == 0 or b == 0:
        return None
    dims = (node.left.dim, node.right.dim)
    value = _const(node)
    if value is None:
        return None
    if node.op == "/" and dims == ("length", "speed"):
        kind, shown = "time", a / b
    elif node.op == "/" and dims == ("length", "time"):
        kind, shown = "speed", a / b
    elif node.op == "*" and set(dims) == {"speed", "time"}:
        kind, shown = "distance", a * b
    else:
        return None
    return kind, a, b, value / shown


def _rule_multiply_distance_speed(node: Node) -> Fraction | None:
    # the two numbers multiplied whatever they are: 120 km at 40 km/h "takes 4800 hours"
    parts = _trip_parts(node)
    if parts is None or parts[0] == "distance":
        return None
    _kind, a, b, unit = parts
    return a * b * unit


def _rule_invert_rate(node: Node) -> Fraction | None:
    # the division turned round (time = speed ÷ distance, speed = time ÷ distance), or the rate divided where it
    # is multiplied (distance = speed ÷ time)
    parts = _trip_parts(node)
    if parts is None:
        return None
    kind, a, b, unit = parts
    if kind == "distance":
        v, t = (a, b) if node.left.dim == "speed" else (b, a)
        return v / t * unit
    return b / a * unit


# A misconception's wrong rule on an expression's sub-trees (``None`` where it does not apply). Misconceptions
# without a rule here (slant side as height, conversion direction …) are met through their propositions.
WRONG_RULES: dict[str, Callable[[Node], Fraction | None]] = {
    "add_numerators_and_denominators": _rule_add_tops_bottoms,
    "numerators_not_scaled": _rule_numerators_not_scaled,
    "strictly_left_to_right": _rule_left_to_right,
    "addition_before_subtraction": _rule_add_before_sub,
    "ignore_signs": _rule_ignore_signs,
    "sign_of_first_number": _rule_sign_of_first,
    "minus_negative_is_minus": _rule_minus_negative,
    "no_regrouping": _rule_no_regrouping,
    "write_whole_column_sum": _rule_whole_column,
    "align_last_digits": _rule_align_last,
    "add_parts_separately": _rule_add_parts,
    "forget_half": _rule_forget_half,
    "subtract_percent_as_dollars": _rule_percent_as_dollars,
    "discount_as_price": _rule_discount_as_price,
    "multiply_distance_speed": _rule_multiply_distance_speed,
    "invert_rate": _rule_invert_rate,
    "two_sides_only": _rule_two_sides_only,
    "confuse_area_perimeter": _rule_confuse_area_perimeter,
}


def _compare_rule(mid: str, a: Node, b: Node) -> bool | None:
    """A comparison misconception's verdict on ``a > b`` (``None``: the rule says nothing here)."""
    fa, fb = _frac_parts(a), _frac_parts(b)
    if mid == "larger_denominator_larger" and fa and fb and fa[1] != fb[1]:
        return fa[1] > fb[1]
    if mid == "larger_numerator_larger" and fa and fb and fa[0] != fb[0]:
        return fa[0] > fb[0]
    if mid in ("longer_decimal_larger", "shorter_decimal_larger") and _is_decimal(a) and _is_decimal(b):
        if _places(a) == _places(b):
            return None
        longer = _places(a) > _places(b)
        return longer if mid == "longer_decimal_larger" else not longer
    return None


def _equiv_rule(mid: str, a: Node, b: Node) -> bool | None:
    """``add_same_to_top_and_bottom``: a/b equals (a+k)/(b+k) under the wrong rule."""
    fa, fb = _frac_parts(a), _frac_parts(b)
    if mid == "add_same_to_top_and_bottom" and fa and fb and fb[1] != fa[1]:
        return fb[0] - fa[0] == fb[1] - fa[1]
    return None


# ---------------------------------------------------------------------------------------------- propositions

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
# a belief quoted or named as wrong, not asserted ("A common misconception is that …", "Myth: …")
_REPORTED = re.compile(r"\b(?:says?|said|thinks?|thought|claims?|believes?|belief|someone|a friend|a classmate|"
                       r"your rule|by this rule|you said|your idea|the rule gives|would you|if you|"
                       r"misconceptions?|myths?|mistak(?:e|es|en|enly)|heard|contrary|false|wrong(?:ly)?|"
                       r"incorrect(?:ly)?|errors?|fallac(?:y|ies)|assum(?:e|es|ed|ing|ption)|supposedly|"
                       r"misunderstand\w*|trap|pitfall)\b", re.IGNORECASE)


# frames that say who holds a proposition. A denial before it negates it ("It is a myth that …", "Nobody should believe
# that …"); a retraction after it negates the sentence before ("Actually, no: that is false.", "They are wrong.");
# an endorsement affirms the reported speech before it ("Some say that …. And they are right."); reported speech and
# warnings ("A common mistake is to write …", "Don't …") quote a falsehood without asserting it
_LEAD = r"^\W*(?:(?:but|and|so|well|however|also|remember|note|in fact|contrary to (?:popular|common) belief)\b\W*)*"
_DENIAL = re.compile(
    _LEAD + r"(?:(?:it\s+is|it's|it\s+was|that\s+is|that's)\s+(?:simply\s+|just\s+|completely\s+|absolutely\s+|"
    r"certainly\s+)?(?:false|untrue|not\s+true|not\s+the\s+case|a\s+myth|wrong|incorrect|not\s+correct|nonsense|"
    r"an?\s+(?:common\s+)?(?:mistake|misconception|error))(?:\s+to\s+(?:say|think|believe|claim|assume))?\s+that"
    r"|(?:nobody|no\s+one|no-one)\s+should\s+(?:believe|think|say|claim|assume)(?:\s+that)?"
    r"|(?:do\s+not|don't|never)\s+(?:believe|think|assume)\s+that"
    r"|there\s+is\s+no\s+truth\s+(?:in\s+(?:the\s+)?(?:idea|claim)\s+)?that)\s+", re.IGNORECASE)
# "…, but that's wrong." closing a sentence: the rest of it is denied
_DENIED_AFTER = re.compile(r"\s*(?:[,;:]|\s[-–—])\s*(?:but|and)?\s*(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:simply\s+|"
                           r"just\s+|completely\s+)?(?:false|untrue|not\s+true|wrong|incorrect|a\s+myth|not\s+correct)"
                           r"\W*$", re.IGNORECASE)
_RETRACTION = re.compile(
    r"^\W*(?:(?:actually|wait|sorry|oops|hmm|well|but|no|nope|correction)\b\W*)*"
    r"(?:(?:that|this|it|which)(?:'s|\s+is|\s+was)\s+(?:simply\s+|just\s+|completely\s+|all\s+|actually\s+)?"
    r"(?:false|untrue|not\s+true|not\s+right|not\s+correct|wrong|incorrect|a\s+myth|nonsense|a\s+mistake)"
    r"|(?:they|those\s+people|these\s+people|people|he|she|some|others)\s*(?:'re|are|were|is|'s)\s+"
    r"(?:simply\s+|just\s+|completely\s+|quite\s+)?(?:wrong|mistaken|incorrect)"
    r"|i\s+take\s+(?:that|it)\s+back|scratch\s+that|forget\s+(?:that|what\s+i\s+(?:just\s+)?said))\W*$", re.IGNORECASE)
_ENDORSEMENT = re.compile(
    r"^\W*(?:(?:and|but|so|well|yes|indeed)\b\W*)*"
    r"(?:(?:they|those\s+people|these\s+people|people|he|she|some|others|your\s+friend)\s*(?:'re|are|were|is|'s)\s+"
    r"(?:quite\s+|absolutely\s+|completely\s+|exactly\s+|perfectly\s+|totally\s+)?(?:right|correct)"
    r"|(?:that|this|it)(?:'s|\s+is)\s+(?:quite\s+|absolutely\s+|completely\s+|exactly\s+|perfectly\s+|totally\s+)?"
    r"(?:true|right|correct))\W*$", re.IGNORECASE)
# reported speech: the proposition after it is someone's, not the tutor's
_REPORT_FRAME = re.compile(
    _LEAD + r"(?:(?:(?:some|many|most|lots\s+of|a\s+lot\s+of)(?:\s+(?:people|students|kids|learners))?|people|students|"
    r"kids|learners|someone|somebody|others|an?\s+(?:friend|classmate|student)|your\s+(?:friend|classmate)|you|they|he|"
    r"she)\s+(?:(?:often|sometimes|usually|may|might|still|also|once)\s+)*(?:say|says|said|think|thinks|thought|believe|"
    r"believes|believed|claim|claims|claimed|argue|argues|assume|assumes|write|writes|wrote|(?:have|has)\s+heard|"
    r"heard|guess|guessed|answered)(?:\s+that)?"
    r"|(?:it\s+is|it's)\s+(?:often|commonly|sometimes|widely)\s+(?:said|thought|believed|claimed)\s+that"
    r"|(?:a|one|the)\s+(?:common|popular|typical|classic|widespread|frequent)\s+(?:belief|idea|view|misconception|myth|"
    r"mistake|error)\s+is\s+(?:to\s+(?:think|believe|say|assume|write)\s+)?(?:that)?)\s*[:,]?\s+", re.IGNORECASE)
# a warning against a mistake: the falsehood it names is quoted, not stated
_WARNING = re.compile(
    r"\b(?:(?:common|typical|classic|frequent|usual|big)\s+(?:mistake|error|slip|trap|pitfall)s?|don't|do\s+not|never|"
    r"avoid|beware|watch\s+out|be\s+careful|careful\s+not|tempting|tempted|instead\s+of|rather\s+than|"
    r"would\s+(?:give|get|say|make|be)|wrongly|incorrectly|by\s+mistake)\b", re.IGNORECASE)


def _negated(c: Claim) -> Claim:
    """What denying ``c`` says: a denied truth is a falsehood; a denied falsehood is no statement of the truth, but
    a misconception it stated is denied (corrective negation); a denied denial affirms again. Questions stand."""
    if c.question:
        return c
    if c.verdict == TRUE:
        return replace(c, verdict=FALSE, affirms=None, refutes=(), denies=None)
    if c.verdict == FALSE:
        mid = c.affirms or c.mentions
        return replace(c, verdict=UNCHECKED, affirms=None, refutes=(), denies=mid, mentions=mid)
    if c.denies:
        return replace(c, verdict=FALSE, affirms=c.denies, denies=None)
    return replace(c, denies=c.mentions) if c.mentions else c


def _quoted(c: Claim) -> Claim:
    """``c`` said as someone's or warned against: a falsehood in it is named, not asserted."""
    if c.verdict != FALSE or c.question:
        return c
    return replace(c, verdict=UNCHECKED, affirms=None, mentions=c.affirms or c.mentions)


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
_FILLER = re.compile(r"(?<=[\d)%])\s+(?:really|actually|truly)(?=\s*[<>=!])")
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


_ORDER_TIE = 0.05  # a proposition in order scoring this close to the best restated is an equal restatement
ORDER_WORDS = 4  # fewer shared stems than this leave too few pairs to tell an order from chance
@functools.lru_cache(maxsize=65536)
def _order(text: str) -> tuple[str, ...]:
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


def _flips(said: dict[str, int], stated: dict[str, int]) -> int:
    """On how many shared axes a sentence says the opposite direction of a proposition."""
    return sum(1 for axis, d in said.items() if axis in stated and stated[axis] != d)


@dataclass(frozen=True, slots=True)
class Proposition:
    kc: str
    stems: frozenset[str]
    negated: bool
    kind: str = "fact"  # fact | belief | refutation
    misconception: str | None = None
    numbers: frozenset[Fraction] = frozenset()  # the quantities it states (a sentence must state the same)
    sign: tuple[tuple[str, int], ...] = ()  # the direction it says on each axis (see :func:`polarity`)
    text: str = ""  # the words it was made of (their order: :func:`stem_order`, read only when needed)


_SENT = re.compile(r"(?<=[.!?;])\s+|(?<=\S:)\s+|\n+")  # a ratio "3 : 4" stays whole
# clause boundaries inside a sentence of the curriculum (a proposition is also made of each clause)
_CLAUSE = re.compile(r",\s*(?:so|and|while|whereas|whatever|which|because|since)\b|\s+(?:so that|because|while|"
                     r"whereas|and|but)\s+|,\s+|\s*;\s*|\s+-\s+|\s*\(|\)\s*", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    return list(_sentences(text))


@functools.lru_cache(maxsize=65536)
def _sentences(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _SENT.split(text) if s.strip())


# ---------------------------------------------------------------------------------------------- the reader

_REL = re.compile(r"(!=|<=|>=|=|<|>)")
_MATH_SPAN = re.compile(rf"-?[\d(?][\d\s.+\-*/()%?x]*|(?:{_UNIT_RE})\b", re.IGNORECASE)
_EXPLAIN_Q = re.compile(r"\b(?:why|explain|how do you know|how can you tell|justify|what makes|reason)\b", re.I)
_TRANSFER_Q = re.compile(r"\b(?:what if|what would happen|predict|another|new|instead|would .* still|"
                         r"how could|in general|always)\b", re.I)
_RECALL_Q = re.compile(r"\b(?:what do we call|what is called|name the|what is the name|define|definition|"
                       r"what does .* mean|remember)\b", re.I)


MAX_FRAMES = 8  # frames read inside one another: more is no sentence a tutor writes (and bounds the recursion)


class ContentReader:
    """Reads tutor turns for one task. Build once per episode (:meth:`for_task` caches per task)."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self._mis = {m.id: m for m in task.misconceptions}
        # the curriculum's misconceptions have their rules (or none, by design); a user's own task gets inferred ones
        self._rules = {} if task.task_set in ("math", "stem") else {
            m.id: r for m in task.misconceptions if m.id not in WRONG_RULES and (r := _infer_rule(m.id, task))}
        # everything else depends on the task's words alone (in math, not on the draw's numbers): shared by the
        # readers of every task with the same material, found by a fingerprint of its texts
        (self.kc_ids, self._kc_ops, self._kc_words, self._mis_by_kc, self._topic, self._names, self.props,
         self._by_stem, self._matched, self._mask) = _material(task)
        self._template: tuple[Node, Node] | None = None  # the equation of the turn being read (or the task's)
        self._readings: dict[str, Reading] = {}  # this reader's readings: they go when the reader goes
        self._depth = 0  # how many frames deep the sentence being read is
        # per math claim of the turn being read (by id): the misconceptions whose rule differs on its case, with
        # the value each rule gives there, whether it is a relation asked about, and the numbers it is written with
        # (the claim itself is kept, so its id is not reused within the turn)
        self._pending: dict[int, tuple[Claim, dict[str, Fraction | None], bool, frozenset[str]]] = {}

    @functools.cached_property
    def _task_sides(self) -> tuple[Node, Node] | None:
        """The two sides of the task's own equation in x, if it has one: a number put for x in them checks a
        solution ("2(5) + 20 = 30")."""
        found = _equation(self.task.statement)
        return found[1:] if found else None

    @classmethod
    def for_task(cls, task: Task) -> ContentReader:
        return _reader(task)

    def read(self, text: str) -> Reading:
        if not text or not text.strip():
            return EMPTY
        return _bounded(self._readings, text, lambda: self._read(text), 1024)

    def _inner(self, text: str) -> list[Claim]:
        """The claims of ``text`` read on its own (a proposition inside a frame), the turn's state kept; frames
        nested deeper than :data:`MAX_FRAMES` ("It is false that it is false that …") say nothing more."""
        if self._depth >= MAX_FRAMES:
            return []
        template, pending = self._template, self._pending
        self._depth += 1
        try:
            return list(self.read(text).claims)
        finally:
            self._template, self._pending = template, pending
            self._depth -= 1

    def _moved(self, old: Claim, new: Claim) -> Claim:
        """``new`` in the place of the math claim ``old`` (its counterexample candidates go with it)."""
        if new is not old and id(old) in self._pending:
            self._pending[id(new)] = (new, *self._pending.pop(id(old))[1:])
        return new

    def _read(self, text: str) -> Reading:
        self._pending = {}
        claims: list[Claim] = []
        text = _blanks(_plain(text))
        norms: list[str] = []  # each sentence normalised (a wrong rule's result said aside sets up a contrast)
        spoken: set[str] = set()  # misconceptions the turn names in words (stated, quoted, denied or refuted)
        # the sentence a retraction or an endorsement after it applies to: (first claim, end, what it said)
        target: tuple[int, int, str] | None = None
        # ``x = 9`` is checked against the equation the turn works on (its first full equation), never the task's:
        # the turn may work another equation, said before
        own = _equation(text)
        reference: Lin | None = own[0] if own else None
        # a number put for the unknown in these sides checks a solution ("2(5) + 20 = 30"): the turn's, else the task's
        self._template = own[1:] if own else self._task_sides
        solving: list[int] = []  # the questions that ask for an equation's solution ("Solve 3x = 15.")
        before = 0  # how many math claims the sentence before made
        carry: list = []  # the last true step's (value, expression): "9 × 10 = 90; 90 ÷ 2 = 45" goes on from it
        problem: tuple[str, str] | None = None  # "Let's solve 6 + 4 × 8.": the expression the turn works out
        prev = ""
        for sent in sentences(text):
            # "Myth: heavy things sink.": a label before a colon frames what follows it
            framed = prev.endswith(":") and bool(_REPORTED.search(prev))
            context, prev = prev, sent.rstrip()
            start = len(claims)
            if target is not None and not _ANY_DIGIT.search(sent) and (
                    (retracted := _RETRACTION.match(sent)) or _ENDORSEMENT.match(sent)):
                # "… Actually, no: that is false.", "Some say that …. And they are right."
                t0, t1, what = target
                inner = self._inner(what)
                claims[t0:t1] = [_negated(c) for c in inner] if retracted else inner
                target, before = None, 0
                continue
            denial = _DENIAL.match(sent)
            tail = len(sent) - 48  # (a closing denial is short: only the sentence's end is searched)
            after = None if denial else _DENIED_AFTER.search(sent, max(0, tail))
            if denial and sent[denial.end():].strip() or after and after.start() > 0:
                # "It is a myth that …", "You may have heard that …, but that's wrong.": the proposition, negated
                what = sent[denial.end():] if denial else sent[:after.start()]
                if (reported := _REPORT_FRAME.match(what)) and what[reported.end():].strip():
                    what = what[reported.end():]
                claims += [_negated(c) for c in self._inner(what)]
                target, before = (start, len(claims), sent), 0
                continue
            norm = normalise(sent)
            if "really" in norm or "actually" in norm or "truly" in norm:  # "Is 1/2 really < 1/3?" asks 1/2 < 1/3
                norm = _FILLER.sub("", norm)
            norms.append(norm)
            asked = sent.rstrip().endswith("?") or bool(_PROMPT.search(sent))
            # no digit, no checkable relation or computable question
            math_claims, reference = self._math(norm, asked, sent, reference, carry) if _ANY_DIGIT.search(norm) \
                else ([], reference)
            if not math_claims and not asked and problem is not None and (m := _ANSWER.search(norm)) \
                    and len(_DIGIT_RUN.findall(norm)) == len(_DIGIT_RUN.findall(m.group(1))):
                # "So our final answer is 38.": the result of the expression the turn set out to work
                said = parse(m.group(1))
                if said is not None and (said.op == "num" or _is_fraction(said)):
                    math_claims = self._math(f"{problem[0]} = {m.group(1)}", False, f"{problem[1]} {sent}",
                                             None, [])[0]
            if not math_claims and not asked and _ANY_DIGIT.search(norm) and not _REL.search(norm):
                named = _named_problem(norm)
                if named is not None:
                    problem = (named, sent)
            if math_claims and "x" in norm and _X.search(norm):
                if any(c.question and c.kc is not None for c in math_claims):
                    solving += [len(claims) + i for i, c in enumerate(math_claims) if c.question]
                elif solving and _SOLVED.search(norm) and any(c.verdict == TRUE for c in math_claims):
                    # "Solve 3x = 15: x = 5.": the turn answers what it asked; the solution is a statement
                    claims = [c for i, c in enumerate(claims) if i not in solving]
                    solving = []
            if not math_claims and asked and before and _ASKS_UNKNOWN.search(sent) and not _ANY_DIGIT.search(norm):
                # "x + 10 = 40. What goes in the blank?": the equation said before is what is asked
                idx = range(len(claims) - before, len(claims))
                if all(claims[i].kc is not None and not claims[i].question and claims[i].verdict == TRUE
                       and "x" in context and _X.search(context) for i in idx):
                    for i in idx:
                        claims[i] = self._moved(claims[i], replace(claims[i], question=True,
                                                                   demand=_demand(sent, math=True)))
                    solving += list(idx)
                    before = 0
            if any(c.verdict == FALSE for c in math_claims) and (
                    framed or _REPORTED.search(sent) or _WARNING.search(sent) or _REPORT_FRAME.match(sent)):
                # "A common mistake is to write 1/2 + 1/3 = 2/5", "your rule gives 19": quoted, not asserted
                math_claims = [self._moved(c, _quoted(c)) for c in math_claims]
            before = len(math_claims)
            claims += math_claims
            if not math_claims:
                if not asked and _PROMPT_BEFORE.search(sent):
                    asked = True
                found = self._facts(sent, asked, framed)
                if asked and context and not _ANY_DIGIT.search(norm) and _ANY_DIGIT.search(context) \
                        and (not found or all(c.question for c in found)) and _ASKS_VALUE.search(sent) \
                        and not _REL.search(before := normalise(context)) and _named_problem(before, True) is not None:
                    # "Her total is 36 - 20 + 6 × 2. Evaluate it.", "A bike priced at $120 is reduced by 20%. How
                    # many dollars does it cost now?": the one computation the sentence before wrote out (not
                    # already worked: no relation in it) is what is asked for
                    found = [c for c in self._math(before, True, f"{context} {sent}", None, [])[0]
                             if c.question and c.kc is not None] or found
                if not found and asked and context:  # "A sail is 10 m along the bottom, 5 m tall. What is its area?"
                    found = [c for c in self._facts(f"{context} {sent}", True) if c.question]
                claims += found
            else:
                found = self._facts(sent, asked, framed)
                if any(c.refutes for c in math_claims):  # the misconception a computation is set against, in words
                    spoken.update(m for c in found for m in (c.affirms, c.mentions, c.denies, *c.refutes) if m)
                else:  # a computation that is also the counterexample said
                    claims += [c for c in found if c.refutes and c.verdict == TRUE]
            reported = _REPORT_FRAME.match(sent)
            if len(claims) > start or reported or not sent.endswith(":"):
                # ("Actually, no:" is no sentence to retract: the one before it is)
                target = (start, len(claims), sent[reported.end():] if reported and sent[reported.end():].strip()
                          else sent)
        if self._pending:
            claims = self._contrasted(claims, norms, spoken)
        return Reading(tuple(claims)) if claims else EMPTY

    def _contrasted(self, claims: list[Claim], norms: list[str], named: set[str]) -> list[Claim]:
        """Each math claim's counterexamples cut to the misconceptions whose contrast the turn states or asks for:
        it names the misconception (its belief stated, quoted or denied, its output quoted, a refutation of it
        said), asks about a relation on which its rule differs ("Is 1/2 really smaller than 1/3?"), or writes the
        number its rule gives on the case outside any relation it works ("1/2 + 1/2 = 1, not 2/4", "the wrong rule
        would give 2/5, but it is 5/6"). A true case alone ("In this case, 1/2 > 2/9.") or a question to work ("What
        is 1/4 + 1/3?") contrasts nothing."""
        pending = self._pending
        said = frozenset().union(*map(_said_aside, norms)) if any(
            v is not None for info in pending.values() for v in info[1].values()) else frozenset()
        named = named | {m for c in claims for m in (c.affirms, c.mentions, c.denies) if m}
        named |= {m for c in claims if c.source == "fact" for m in c.refutes}
        for c in claims:
            info = pending.get(id(c))
            if info is not None and info[0] is c and info[2]:
                named.update(info[1])
        out = []
        for c in claims:
            info = pending.get(id(c))
            if info is not None and info[0] is c and c.refutes:
                values, own = info[1], info[3]
                keep = tuple(m for m in c.refutes if m in named or any(
                    v == values.get(m) and tok not in own for v, tok in said))
                if keep != c.refutes:
                    c = replace(c, refutes=keep)
            out.append(c)
        self._pending = {}
        return out

    # -- math
    def _math(self, norm: str, asked: bool, raw: str, reference: Lin | None,
              carry: list | None = None) -> tuple[list[Claim], Lin | None]:
        carry = [] if carry is None else carry
        out: list[Claim] = []
        if ("add" in norm or "subtract" in norm or "ultiply" in norm or "ivide" in norm) and _STEP_WORDS.search(norm):
            norm = _steps_in_words(norm, carry[0][0] if carry else None)
        for chain in _chains(norm):
            parts = _REL.split(chain)
            if len(parts) > 81:  # forty relations in one chain: no sentence a tutor writes
                continue
            sides_txt, rels = parts[0::2], parts[1::2]
            question = any(s.strip() in ("?", "") or s.strip().endswith("?") and parse(s.strip(" ?")) is None
                           for s in sides_txt[1:])
            nodes = [parse(s.strip(" ?")) for s in sides_txt]
            blank = -1  # the side with a blank to fill ("2/3 = __/9", "9500 m = __ km"): asked for, not stated
            if "□" in chain and sides_txt[-1].strip(" ?.") == "□" and chain.count("□") == 1:
                question, nodes = True, nodes[:-1]  # "2/3 + 1/4 = ___": the expression asked for, as "= ?"
            elif "□" in chain:
                filled = _filled(nodes, rels)
                if filled is None:
                    continue
                blank, nodes, rels, said = filled
                if blank < 0:  # "3 × __ = 15": an equation in an unknown, asked
                    out.append(self._claim("=", nodes, TRUE, question=True, raw=raw))
                    continue
                if said:
                    blank = -1
            if question:
                node = nodes[0]
                if node is None or _const(node) is None or node.op == "num":
                    continue
                out.append(self._claim(rels[0], [node], TRUE, question=True, raw=raw))
                continue
            if any(n is None for n in nodes) or len(nodes) < 2:
                continue
            if reference is None and len(nodes) == 2 and nodes[0].op == "var" and nodes[1].op == "num":
                continue  # "x = 10." with no equation in the turn: nothing to check it against
            verdict, reference = _check(nodes, rels, reference)
            if verdict is None:
                continue
            # "6(5) + 16 = 30 + 16 = 46": a chain from the equation's side with a number for its unknown to its other
            # side checks a solution, every step of it
            checks = frozenset({"equation"}) if len(nodes) > 2 and rels[0] == "=" and self._template is not None \
                and _substituted(self._template, [nodes[0], nodes[-1]]) else frozenset()
            # bare whole numbers equated (``5 = 5``, or prose read as ``3 = 30`` from "3 tens make 30") state
            # nothing checkable; decimals compared (``0.5 > 0.45``) and quantities with units (``3 km = 3000 m``) do
            if all(n.op == "num" for n in nodes) and "=" in rels and (
                    all("." not in n.text and not n.dim for n in nodes)
                    or any(n.dim for n in nodes) and not all(n.dim for n in nodes)):  # "= 50 000 cm": a number kept
                continue
            for i, (rel, (a, b)) in enumerate(zip(rels, zip(nodes, nodes[1:], strict=False), strict=False)):
                v = _check([a, b], [rel], reference)[0]
                if v is None:
                    continue
                if blank in (i, i + 1):
                    if rel == "=":
                        out.append(self._claim(rel, [a, b], TRUE, question=True, raw=raw))
                    continue
                whole = _continued(a, carry) if v and rel == "=" else a
                # a continued step is the computation begun in the sentence before: "10% of 84 is 8.4. 84 - 8.4 =
                # 75.6" takes 10% off 84 though its own sentence says no "%"
                context = carry[0][2] if whole is not a else ""
                out.append(self._claim(rel, [whole, b], TRUE if v else FALSE, question=asked, raw=raw,
                                       context=context, also=checks))
                if v and rel == "=" and a.op not in ("num", "var") and b.op == "num" and b.value is not None:
                    carry[:] = [(b.value, whole, f"{context} {raw}" if context else raw)]
        if not out and asked and ((m := _UNITS_ASKED.search(raw)) or (m := _CONVERT_ASKED.search(raw))):
            # "How many cm are in 2 m?", "Convert 9500 m to km.": a conversion asked for
            amount, unit, to_unit = m.group(2, 3, 1) if m.re is _UNITS_ASKED else m.group(1, 2, 3)
            n = parse(f"{amount} {unit}")
            to = parse(f"1 {to_unit}")
            if n is not None and to is not None and n.dim is not None and n.dim == to.dim \
                    and n.value * Fraction(to.text) != to.value * Fraction(n.text):  # "9500 m in m" asks nothing
                out.append(self._claim("=", [n, to], TRUE, question=True, raw=raw))
        if "common" in norm.lower() or "lc" in norm.lower():
            out += self._common_denominator(norm, asked, raw)
        if not out and asked and (said := _asked_quantity(norm)) is not None and (node := parse(said)) is not None:
            # "What is the perimeter of a 4 by 3 rectangle?", "How long is 120 km at 40 km/h?": the quantity asked
            out.append(self._claim("=", [node], TRUE, question=True, raw=raw))
        if not out and asked:
            # "What is 1/2 + 1/3?": an expression asked for
            for span in _MATH_SPAN.findall(norm):
                node = parse(span.strip(" ?.,"))
                if node is not None and _const(node) is not None and (_ops(node) & {"+", "-", "*"} or (
                        node.op == "/" and not _is_fraction(node))):
                    out.append(self._claim("=", [node], TRUE, question=True, raw=raw))
                    break
        return out, reference

    def _common_denominator(self, norm: str, asked: bool, raw: str) -> list[Claim]:
        """"The LCD of 4 and 6 is 12" (the least common multiple), "a common denominator of 4 and 6 is 24" (a
        multiple of both), or asked for ("What is the LCD of 4 and 6?")."""
        m = _LCD.search(norm)
        kcs = [k for k in self.kc_ids if {"frac_add_unlike", "rename"} <= self._kc_ops[k]]  # renaming to add
        if m is None or not kcs:
            return []
        a, b = int(m.group(2)), int(m.group(3))
        if a <= 0 or b <= 0:
            return []
        if asked:
            return [Claim(kcs[0], TRUE, True, demand=_demand(raw, math=True))]
        if m.group(4) is None:
            return []
        c = int(m.group(4))
        least = not m.group(1).lower().startswith("a ")
        ok = c == math.lcm(a, b) if least else c > 0 and c % a == 0 and c % b == 0
        return [Claim(kcs[0], TRUE if ok else FALSE)]

    def _claim(self, rel: str, nodes: list[Node], verdict: str, question: bool, raw: str,
               context: str = "", also: frozenset[str] = frozenset()) -> Claim:
        ops = operations(rel, nodes) | also
        says_percent, says_division = _raw_words(raw)
        if rel == "=" and "equation" not in ops and len(nodes) == 2 and (
                self._template is not None and _substituted(self._template, nodes)
                or _undone_and_checked(nodes[0], nodes[1])):
            ops.add("equation")
        if "precedence" not in ops and says_division and any(
                "/" in (flat := _ops(n)) and {"+", "-"} & flat for n in nodes):
            # "12 - 8 ÷ 4": the sign says the "/" is a division, not a fraction's bar
            ops.add("precedence")
        percent_like = any(_pct_value(n) is not None or n.op == "*" or _is_decimal(n) for s in nodes for n in _walk(s))
        if says_percent and percent_like:
            ops.add("percent")
        # a step continued from a percent step is checked against the percent misconceptions too (its component
        # is still the one its own sentence performs)
        extra = {"percent"} if context and percent_like and _PERCENT_WORD.search(context) else set()
        if "whole_add" in ops:
            for n in nodes:
                r = _rule_no_regrouping(n)
                if r is not None:
                    ops.add("whole_add_regroup")
        kcs = [k for k in self.kc_ids if self._kc_ops[k] & ops]
        if len(kcs) > 1:  # several components perform this computation: the most specific, then the words
            words = content_stems(raw)[0]
            kcs.sort(key=lambda k: (len(self._kc_ops[k] - ops), -len(self._kc_words[k] & words),
                                    len(self._kc_ops[k])))
        kc = kcs[0] if kcs else None
        if extra - ops:
            kcs += [k for k in self.kc_ids if k not in kcs and self._kc_ops[k] & extra]
            kc = kc or (kcs[0] if kcs else None)
        affirms, refutes = None, []
        values: dict[str, Fraction | None] = {}
        for mid in (m for k in kcs for m in self._mis_by_kc.get(k, ())) if kcs else ():
            rule = self._rules.get(mid)
            wrong = _wrong_verdict(mid, rel, nodes, rule)
            if wrong is None:
                continue
            truth, rule_says = wrong
            if verdict == FALSE and not question and rule_says:
                affirms = affirms or mid
            elif (verdict == TRUE or question) and truth != rule_says:
                refutes.append(mid)
                values[mid] = _wrong_value(mid, rel, nodes, rule)
        # a false claim also exercises its component wrongly: keep the KC so mastery can fall
        demand = _demand(raw, math=True) if question else None
        claim = Claim(kc, verdict, question, affirms, tuple(refutes), demand)
        if refutes:  # a candidate counterexample: the turn must state or ask for its contrast (:meth:`_contrasted`)
            self._pending[id(claim)] = (claim, values, question and len(nodes) == 2, _tokens(nodes))
        return claim

    # -- propositions
    def _facts(self, sent: str, asked: bool, framed: bool = False) -> list[Claim]:
        """The proposition ``sent`` states (memoised per material: it depends on the sentence's words alone)."""
        key = (self._mask(sent), asked, framed, self._names.pattern if self._names is not None else None)
        return list(_bounded(self._matched, key, lambda: tuple(self._match(sent, asked, framed)), 8192))

    def _match(self, sent: str, asked: bool, framed: bool) -> list[Claim]:
        if self._names is not None:  # a component's name names the topic; it says nothing about it
            sent = self._names.sub(" ", sent)
        plain = _NUMBERLESS.sub(" ", sent)
        stems, negs = content_stems(plain)
        if len(stems) < 2:
            return []
        best: tuple[float, Proposition, float, float] | None = None
        top: float | None = None  # the best score of any proposition, in order or not
        substance = stems - self._topic  # what the sentence says beyond naming the topic
        stems, said_sign = polarity(stems)
        substance |= {st for st in stems if st[0] == "~"}  # a direction said is content
        need = 2 if asked else 3
        by_stem = self._by_stem
        hits = Counter(itertools.chain.from_iterable(by_stem[st] for st in stems if st in by_stem))
        for i in sorted(i for i, h in hits.items() if h >= need):  # in the propositions' order: ties as before
            p = self.props[i]
            if p.kind == "question" and not asked:
                continue
            hit = hits[i]
            if hit < need or hit < 0.5 * len(p.stems) * (0.6 if asked else 1.0):
                continue
            # beyond naming the topic: two of its content words, or one in a close restatement of it
            # (a curriculum question asked again nearly word for word is that question, even in the topic's words:
            # "When converting L to mL, do you multiply or divide?")
            beyond = len(substance & p.stems)
            restated = asked and p.kind == "question" and hit >= 0.75 * len(p.stems) and hit >= 0.75 * len(stems)
            if beyond < (1 if asked or hit >= 0.75 * len(p.stems) else 2) and not restated:
                continue
            # a belief stated outright wins over a fact or refutation that shares its words
            # (stated: a negated belief does not outrank the refutation it matches)
            bonus = (0.15 if (negs % 2 == 1) == p.negated else 0.0) if (p.kind == "belief" and not asked) \
                else 0.01 if p.kind != "fact" else 0.0
            # how much of the proposition the sentence states, then (ties) how much of the sentence it covers
            score = hit / len(p.stems) + bonus + 0.3 * hit / len(stems)
            if top is not None and score <= top - _ORDER_TIE:
                continue
            # who does what to what: the proposition restated must come in its order; a sentence that restates one
            # best but scrambled restates nothing, not some shorter proposition whose few words fell in order (an
            # equal restatement in order, such as "b times a" for "a times b", still counts)
            top = score if top is None else max(top, score)
            # (a sentence made mostly of other words is a paraphrase in its own order: only one that is mostly the
            # proposition's words, the way a scramble or a swap of roles is, must keep their order)
            if (best is None or score > best[0]) and (
                    hit < ORDER_SHARE * len(stems) or in_order(stem_order(plain), _order(p.text))):
                best = (score, p, hit / len(p.stems), hit / len(stems))
        if best is None or best[0] <= top - _ORDER_TIE:
            return []
        p = best[1]
        negated = negs % 2 == 1
        if asked and p.kind == "belief":  # a wrong idea asked back: no content
            return [Claim(p.kc, UNCHECKED, False, None, (), None, "fact", mentions=p.misconception)]
        if asked:
            return [Claim(p.kc, TRUE, True, None, (p.misconception,) if p.kind == "refutation" else (),
                          _demand(sent, math=False), "fact")]
        agrees = (negated == p.negated) != (_flips(said_sign, dict(p.sign)) % 2 == 1)
        said = _numbers(sent)
        if p.numbers and len(said) == len(p.numbers) and not (said & p.numbers):
            agrees = False  # the proposition restated with every quantity changed
        # a contradiction is only read off a close match both ways (a longer sentence's "not" may be another clause's)
        strong = best[2] >= 0.7 and best[3] > 0.6
        if p.kind == "belief":
            if framed or _REPORTED.search(sent):  # the idea quoted, not asserted
                return [Claim(p.kc, UNCHECKED, False, None, (), None, "fact", mentions=p.misconception)]
            if agrees:
                return [Claim(p.kc, FALSE, False, p.misconception, (), None, "fact")]
            # "heavy things do not always sink": the belief denied, a bare negation (no fact taught)
            return [Claim(p.kc, UNCHECKED, False, None, (), None, "fact", denies=p.misconception,
                          mentions=p.misconception)]
        if not agrees and not strong:
            return [Claim(p.kc, UNCHECKED, False, None, (), None, "fact")]
        if p.kind == "refutation":
            return [Claim(p.kc, TRUE if agrees else FALSE, False, None, (p.misconception,) if agrees else (),
                          None, "fact")]
        return [Claim(p.kc, TRUE if agrees else FALSE, False, None, (), None, "fact")]


# markdown an LLM writes: emphasis, headings, list bullets and numbers at a line's start (a "- 21 + 20" bullet is
# not a negative number)
# (a run of underscores between spaces or signs is a blank to fill in: "2/3 = __/9")
_MARKDOWN = re.compile(r"\*\*|(?<=[A-Za-z0-9])__(?!_)|(?<!_)__(?=[A-Za-z0-9])|"
                       r"^[ \t]*(?:#{1,6}|[-*+•]|\d{1,2}[.)])[ \t]+", re.MULTILINE)


def _plain(text: str) -> str:
    return _MARKDOWN.sub(" ", text) if ("*" in text or "_" in text or "#" in text or "\n" in text
                                         or text.lstrip()[:1] in "-+•") else text


_NUMBERLESS = re.compile(r"\{[^}]*\}")
_QUANTITY = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:/\d+)?(?![\w.])")


@functools.lru_cache(maxsize=65536)
def _numbers(text: str) -> frozenset[Fraction]:
    """The numbers a sentence states (digits, number words, fractions), as exact values."""
    out = set()
    for tok in _QUANTITY.findall(normalise(text)):
        try:
            out.add(Fraction(tok))
        except (ValueError, ZeroDivisionError):
            continue
    return frozenset(out)
_DIGIT_RUN = re.compile(r"\d+")
_ANY_DIGIT = re.compile(r"\d")
_NO_DIGITS = str.maketrans("", "", "0123456789")


@functools.lru_cache(maxsize=65536)  # a reader is built per episode; most of a math task's sentences recur
def _no_digits(text: str) -> str:
    return text.translate(_NO_DIGITS)


@functools.lru_cache(maxsize=65536)
def _closest(named: tuple[tuple[str, frozenset[str]], ...], sentence: str) -> str:
    """The component (of ``named``: id, name words) whose words ``sentence`` shares most; the first on a tie."""
    words = _name_words((sentence,))
    return max(named, key=lambda kw: len(kw[1] & words))[0]


@functools.lru_cache(maxsize=4096)
def _name_words(words: tuple[str, ...]) -> frozenset[str]:
    """The stems of a component's keywords and name."""
    return frozenset(stem(w) for w in _WORD.findall(" ".join(words).lower()))
@functools.lru_cache(maxsize=1024)
def _raw_words(raw: str) -> tuple[bool, bool]:
    """Whether a sentence says a percent, and a division sign (once per sentence, not per claim)."""
    return bool(_PERCENT_WORD.search(raw)), "÷" in raw or "div" in raw.lower()


_PERCENT_WORD = re.compile(r"%|percent|per cent|\boff\b|discount", re.IGNORECASE)
_PROMPT = re.compile(r"(?:^|[.!:]\s+)(?:now\s+)?(?:write|find|calculate|compute|work out|solve|explain|describe|"
                     r"compare|show|estimate|predict|convert|simplify|tell me|evaluate|determine|express|figure out)\b",
                     re.IGNORECASE)
# "How many dollars does it cost now?": a question asking for a quantity
_ASKS_VALUE = re.compile(r"^\s*(?:(?:so|then|now|and)\s*,?\s+)?(?:how (?:much|many|far|long)\b|what(?:'s|\s+is|\s+does|"
                         r"\s+will|\s+would|\s+do)\b|evaluate\b|find\b|compute\b|calculate\b|work\b)",
                         re.IGNORECASE)
# "Evaluate it.": a prompt on the expression the sentence before wrote out
_PROMPT_BEFORE = re.compile(r"^\s*(?:now\s+)?(?:can you\s+)?(?:evaluate|simplify|compute|calculate|solve|work out|"
                            r"find)\s+(?:it|this|that|the expression|this expression|the value)\b|"
                            r"^\s*(?:now\s+)?(?:can you\s+)?work (?:it|this|that) out\b|"
                            r"^\s*what (?:is|does) (?:it|that|this)(?: equal| come to| make)?\s*\?|"
                            r"^\s*what (?:do|would|will) you get\s*\?", re.IGNORECASE)
_CHAIN = re.compile(r"[^=<>]*?(?:(?:!=|<=|>=|=|<|>)[^=<>]*)+")


def _chains(norm: str) -> list[str]:
    """Relation chains of a normalised sentence, each trimmed to its math on both ends."""
    out = []
    if not _REL.search(norm):
        return out
    pieces = _REL.split(norm)
    # trim the prose around: the left side keeps its trailing math, the right its leading math
    trimmed = []
    for i, piece in enumerate(pieces):
        if i % 2 == 1:
            trimmed.append(piece)
            continue
        if i == 0:
            trimmed.append(_trailing_math(piece))
        elif i == len(pieces) - 1:
            trimmed.append(_leading_math(piece))
        else:
            m = _leading_math(piece)
            trimmed.append(m)
            if m.strip() != piece.strip():  # prose between two relations: a new chain starts
                trimmed.append(None)
                trimmed.append(_trailing_math(piece))
    chain: list[str] = []
    for t in trimmed:
        if t is None:
            if len(chain) >= 3:
                out.append("".join(chain))
            chain = []
            continue
        chain.append(t)
        chain = chain if t not in ("", None) else chain
    if len(chain) >= 3:
        out.append("".join(chain))
    out = [c for c in map(_unlabelled, out) if all(p.strip() for p in _REL.split(c)[0::2])]
    if "x" in norm:  # "8x = 16 comes to 2": an equation in x, then its solution
        out = [piece for c in out for piece in _solution_after(c)]
    return out


def _solution_after(chain: str) -> tuple[str, ...]:
    m = _SOLVED_AFTER.match(chain) if chain.count("=") == 2 and len(chain) < 200 else None
    return (m.group(1), f"x = {m.group(2)}") if m else (chain,)


_SOLVED_AFTER = re.compile(r"^([^=<>]*(?<![A-Za-z'])x(?![A-Za-z'])[^=<>]*=\s*-?\d+(?:\.\d+)?\s*)="
                           r"\s*(-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?)\s*$")


def _unlabelled(chain: str) -> str:
    """A chain without a named first side ("Area = 1/2 × 6 × 4 = 12": the area is the chain's subject) when two
    sides with math remain. (A last side that is not math stays: "… = 20.8 dollars" may count something else.)"""
    parts = _REL.split(chain)
    while len(parts) >= 5 and not parts[0].strip():
        parts = parts[2:]
    return "".join(parts)


# the math at the end / start of a piece of prose; a quantity's unit may follow each number ("6 cm × 4 cm")
# (the unknown alone is a side too: "so x = 5")
_TAIL = re.compile(rf"(?:[-(]*\s*(?:[\d□]|(?<![\w'])x(?![\w']))(?:[\d\s.+\-*/()%x□]|(?<=[\d\s□])(?:{_UNIT_RE})\b)*"
                   rf"|(?<![\w'])x\s*)$",
                   re.IGNORECASE)
_HEAD = re.compile(rf"^\s*(?:\?|[-(]*\s*[\d(□][\d\s.+\-*/()%x□]*(?:\s*(?:{_UNIT_RE})\b)?(?:\s*[-+*/]\s*[\d(□]"
                   rf"[\d\s.+\-*/()%x□]*(?:\s*(?:{_UNIT_RE})\b)?)*)", re.IGNORECASE)


def _trailing_math(piece: str) -> str:
    m = _TAIL.search(piece.rstrip(" ,"))
    if m and "v" in piece and _VERSUS.search(piece, 0, m.start()):
        return ""  # "1/9 vs 1/10 comes to 1/9": the choice between two, not 1/10 = 1/9
    if m and piece[:m.start()].rstrip()[-1:] in ("+", "*", "/", "(", "^"):
        return ""  # "(base * height) / 2 = …": the math goes on into words; its last number alone is not a side
    if m and "by" in piece and _BY_WORD.search(piece, 0, m.start()):
        return ""  # "multiply the top and bottom by 4 to get 8/12": the 4 is what they are multiplied by
    return m.group(0) if m else ""


_BY_WORD = re.compile(r"\bby\s*$", re.IGNORECASE)
_VERSUS = re.compile(r"\b(?:vs\.?|versus)\s*$", re.IGNORECASE)


def _leading_math(piece: str) -> str:
    m = _HEAD.match(piece)
    if not m:
        return ""
    head = m.group(0)
    while head.count("(") > head.count(")"):  # "= 14 (not 20)": the aside is not part of the value
        head = head[: head.rindex("(")]
    rest = piece[len(head):].lstrip()
    if rest[:1].isalpha() and not rest.lower().startswith(("and ", "so ", "then ", "which ", "because ", "but ")):
        return ""  # "0.5 is 5 dimes": a count of something else, not a value to check
    return head.rstrip(" .,")


def _infer_rule(mid: str, task: Task) -> Callable[[Node], Fraction | None] | None:
    """For a misconception the curriculum does not know (a user's own task): the known wrong rule that turns an
    item's expression into the answer the item lists for this misconception."""
    for item in (*task.pretest, *task.posttest):
        wrong = item.misconception_answers.get(mid)
        if wrong is None or item.is_choice:
            continue
        stated = parse(normalise(wrong))
        target = _const(stated) if stated is not None else None
        if target is None:
            continue
        for span in _MATH_SPAN.findall(normalise(item.stem)):
            node = parse(span.strip(" ?"))
            if node is None or node.op in ("num", "var"):
                continue
            for rule in WRONG_RULES.values():
                got = evaluate(node, rule)
                if got is not None and got[0] == 0 and got[1] == target and _const(node) != target:
                    return rule
    return None


def _operations_in(texts) -> frozenset[str]:
    """Every computation performed by the relations (and asked expressions) in ``texts``."""
    ops: set[str] = set()
    for text in texts:
        for sent in sentences(text):
            for chain in _chains(normalise(sent)):
                parts = _REL.split(chain)
                nodes = [parse(s.strip(" ?")) for s in parts[0::2]]
                if None not in nodes and len(nodes) >= 2:
                    ops |= operations(parts[1], nodes)
    return frozenset(ops)


def _check(nodes: list[Node], rels: list[str], reference: Lin | None) -> tuple[bool | None, Lin | None]:
    vals = [evaluate(n) for n in nodes]
    if any(v is None for v in vals):
        return None, reference
    dims = {leaf.dim for n in nodes for leaf in _leaves(n)}
    side_dims = [{leaf.dim for leaf in _leaves(n)} - {None} for n in nodes]
    if "speed" in dims or any(side_dims) and (not all(side_dims) or any(len(d) > 1 for d in side_dims)):
        # rates, areas and a unit on one side only ("180 km ÷ 60 km/h = 3 h", "6 cm × 4 cm ÷ 2 = 12",
        # "90 ÷ 60 = 1.5 hours") combine dimensions this checker does not track: the numbers as written are
        # checked, and only agreement counts (a mismatch may be a unit change, so it is not called false)
        ok, ref = _check([_unitless(n) for n in nodes], rels, reference)
        return (True, ref) if ok else (None, reference)
    has_var = any(v[0] != 0 for v in vals)
    ok = True
    for rel, a, b in zip(rels, vals, vals[1:], strict=False):
        if has_var:
            if rel != "=":
                return None, reference
            coef, const = a[0] - b[0], b[1] - a[1]
            if coef == 0:
                if const != 0:
                    ok = False
                continue
            sol = const / coef
            if reference is None:
                reference = (Fraction(1), sol)
            ok = ok and reference[1] == sol
            continue
        x, y = a[1], b[1]
        ok = ok and {"=": x == y, "!=": x != y, "<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[rel]
    return ok, reference


def _unitless(node: Node) -> Node:
    """``node`` with each quantity's number as written and no unit."""
    if node.op == "num":
        return replace(node, value=Fraction(node.text), dim=None) if node.dim else node
    if node.op == "var":
        return node
    return replace(node, left=_unitless(node.left) if node.left else None,
                   right=_unitless(node.right) if node.right else None)


def _wrong_verdict(mid: str, rel: str, nodes: list[Node],
                   rule: Callable[[Node], Fraction | None] | None = None) -> tuple[bool, bool] | None:
    """(correct rule's verdict, misconception's verdict) on this relation or question; ``None``: no rule."""
    if rel in ("<", ">") and len(nodes) == 2:
        a, b = (nodes[0], nodes[1]) if rel == ">" else (nodes[1], nodes[0])
        says = _compare_rule(mid, a, b)
        if says is None:
            return None
        return (_const(a) or 0) > (_const(b) or 0), says
    if rel == "=" and len(nodes) == 2:
        eq = _equiv_rule(mid, nodes[0], nodes[1])
        if eq is not None:
            return _const(nodes[0]) == _const(nodes[1]), eq
    rule = rule or WRONG_RULES.get(mid)
    if rule is None:
        return None
    lhs = nodes[0]
    right = evaluate(lhs)
    wrong = evaluate(lhs, rule)
    if right is None or wrong is None or right[0] or wrong[0]:
        return None
    if wrong[1] == right[1]:
        return True, True  # the rule agrees with the truth on this case: no counterexample, no affirmation
    if len(nodes) == 1:
        return True, False  # a question on a discriminating case
    stated = _const(nodes[1])
    if stated is None:
        return None
    return stated == right[1], stated == wrong[1]


def _wrong_value(mid: str, rel: str, nodes: list[Node],
                 rule: Callable[[Node], Fraction | None] | None) -> Fraction | None:
    """The value a misconception's rule gives for the claim's expression (``None``: a comparison or equivalence)."""
    rule = rule or WRONG_RULES.get(mid)
    if rule is None or rel != "=":
        return None
    wrong = evaluate(nodes[0], rule)
    return None if wrong is None or wrong[0] else wrong[1]


def _values(text: str) -> Counter:
    """The numbers a normalised text writes: (exact value, as written), with how often each is written."""
    out: Counter = Counter()
    for tok in _VALUE.findall(text):
        try:
            out[Fraction(tok), tok] += 1
        except (ValueError, ZeroDivisionError):
            continue
    return out


@functools.lru_cache(maxsize=16384)
def _said_aside(norm: str) -> frozenset[tuple[Fraction, str]]:
    """The numbers a normalised sentence writes outside its relation chains ("1/2 + 1/2 = 1, not 2/4": 2/4)."""
    rest = _values(norm)
    if _REL.search(norm):
        for chain in _chains(norm):
            rest -= _values(chain)
    return frozenset(rest)


def _tokens(nodes: list[Node]) -> frozenset[str]:
    """The numbers an expression is written with, as written ("1/2 + 1/2": 1/2, 1, 2): a rule's result equal to
    one of them, written the same way, is the case's own number, not the contrast."""
    out = set()
    for n in nodes:
        for sub in _walk(n):
            if sub.op == "num":
                out.add(sub.text)
            elif sub.op == "/" and sub.left is not None and sub.right is not None and sub.left.op == "num" \
                    and sub.right.op == "num":
                out.add(f"{sub.left.text}/{sub.right.text}")
    return frozenset(out)


_VALUE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:/\d+)?(?![\d/]|\.\d)")  # "2/5." ends with a full stop, not a digit


def _demand(text: str, math: bool) -> str:
    if _TRANSFER_Q.search(text):
        return "transfer"
    if _EXPLAIN_Q.search(text):
        return "explain"
    if _RECALL_Q.search(text) and not math:
        return "recall"
    return "apply" if math else "recall"


_ASKS_UNKNOWN = re.compile(r"\b(?:what (?:goes|number goes|belongs) in the (?:blank|box)|"
                           r"(?:what is|what's|find|solve for) (?:the value of )?x\b|"
                           r"what (?:number|value) (?:is|makes|goes)|solve (?:it|this|that)\b)",
                           re.IGNORECASE)
_SOLVED = re.compile(r"(?<![\w'])x\s*=\s*-?\d")  # an equation's solution stated: "x = 5"
_X = re.compile(r"(?<![a-wyz])x(?![a-wyz])", re.IGNORECASE)  # an x that is not inside a word ("3x", "x = 5")


# "the answer is 38", "our final answer is **3/4**", "result: 26"
_ANSWER = re.compile(r"\b(?:answer|result|solution)\b(?:\s+(?:is|=|:|comes to|works out to))?\s*[:=]?\s*"
                     r"(-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?)\s*[.!]?\s*$", re.IGNORECASE)
# "Let's solve 6 + 4 × 8.", "Let's work out 84 - 10% of 84 together."
_SET_OUT = re.compile(r"\b(?:let'?s|let us|we(?:'ll| will)?|i'?ll)\s+(?:solve|work out|compute|calculate|evaluate|"
                      r"find|simplify|figure out|do)\b", re.IGNORECASE)


def _named_problem(norm: str, written: bool = False) -> str | None:
    """The one computation a sentence sets out to work ("Let's solve 6 + 4 × 8."), else ``None`` (``written``:
    any sentence that writes out one computation)."""
    if not written and not _SET_OUT.search(norm):
        return None
    found = [span.strip(" ?.,:") for span in _MATH_SPAN.findall(norm)
             if (n := parse(span.strip(" ?.,:"))) is not None and n.op not in ("num", "var")]
    if len(found) != 1 or _const(parse(found[0])) is None:
        return None
    return found[0]


@functools.lru_cache(maxsize=4096)
def _equation(text: str) -> tuple[Lin, Node, Node] | None:
    """The first equation in x of ``text`` that is more than ``x = value``: its solution and its two sides."""
    if "x" not in text or not _X.search(text):
        return None
    # sentence by sentence: "Solve 8x + 20 = 52. Computing 52 - 20, we get 32." is not one chain
    for chain in (c for sent in sentences(text) if _X.search(sent) for c in _chains(normalise(sent))):
        parts = _REL.split(chain)
        nodes = [parse(s) for s in parts[0::2]]
        if len(nodes) >= 2 and None not in nodes and not (nodes[0].op == "var" and nodes[1].op == "num") \
                and parts[1] == "=":
            verdict, ref = _check(nodes[:2], parts[1:2], None)
            if ref is not None:
                return ref, nodes[0], nodes[1]
    return None


# a step said in words after the value it works on: "4 × 2 = 8, then add 3 to get 11", "Now divide by 9 to get 2."
_STEP_WORDS = re.compile(r"\b(add|subtract|take away|multiply by|divide by)\s+(-?\d+(?:\.\d+)?)\s*=\s*"
                         r"(?=-?\d)", re.IGNORECASE)
_LCD = re.compile(r"\b(lcd|lcm|(?:least|lowest|smallest) common (?:denominator|multiple)|"
                  r"a common (?:denominator|multiple))\s+"
                  r"(?:of|for)\s+(\d+)\s*(?:and|,|&)\s*(\d+)(?:\s*(?:=|is)\s*(\d+)(?!\d|\.\d|\s*/))?", re.IGNORECASE)
_STEP_SIGN = {"add": "+", "subtract": "-", "take away": "-", "multiply by": "*", "divide by": "/"}
_LAST_VALUE = re.compile(r"=\s*(-?\d+(?:\.\d+)?)(?![\d.]|\s*[-+*/(])")


def _steps_in_words(norm: str, carried: Fraction | None) -> str:
    """``norm`` with each step said in words written out on the value before it: the last value a relation of the
    sentence gave ("= 8, then add 3 = 11": 8 + 3 = 11), or at the sentence's start the last step's before it."""
    def written(m: re.Match) -> str:
        before = [v.group(1) for v in _LAST_VALUE.finditer(norm, 0, m.start())]
        if before:
            value = before[-1]
        elif carried is not None and not _ANY_DIGIT.search(norm, 0, m.start()):
            value = _plain_number(carried)
            if value is None:
                return m.group(0)
        else:
            return m.group(0)
        return f"; {value} {_STEP_SIGN[m.group(1).lower()]} {m.group(2)} = "
    return _STEP_WORDS.sub(written, norm)


def _undone_and_checked(node: Node, stated: Node) -> bool:
    """``a × ((c − b) ÷ a) + b = c``: a run of steps that undid ``a x + b = c`` ("34 − 16 = 18; 18 ÷ 9 = 2") and
    put the value back to check it ("9 × 2 + 16 = 34"), as the continued steps read it: an equation solved."""
    if node.op not in ("+", "-") or node.left.op != "*" or node.right.op != "num" or stated.op != "num":
        return False
    b, c = node.right.value, stated.value
    for a, undo in ((node.left.left, node.left.right), (node.left.right, node.left.left)):
        if a.op == "num" and undo.op == "/" and undo.right.op == "num" and undo.right.value == a.value \
                and undo.left.op == ("-" if node.op == "+" else "+") and undo.left.left.op == "num" \
                and undo.left.left.value == c and undo.left.right.op == "num" and undo.left.right.value == b:
            return True
    return False


def _substituted(template: tuple[Node, Node], nodes: list[Node]) -> bool:
    """Whether ``a = b`` is the equation ``template`` with a number written for its unknown ("2(5) + 20 = 30" for
    2x + 20 = 30: the check of a solution), either way round."""
    if len(nodes) != 2 or any(leaf.op == "var" for n in nodes for leaf in _leaves(n)):
        return False
    for left, right in (template, template[::-1]):
        bound: list[Fraction] = []
        if _instance(left, nodes[0], bound) and _instance(right, nodes[1], bound) and bound:
            return True
    return False


def _filled(nodes: list[Node | None], rels: list[str]) -> tuple[int, list[Node], list[str], bool] | None:
    """A chain with one blank (``□``) in it, the blank solved from the side it is equated to: (the blank's side,
    the sides with the blank's value written in, the relations, whether the turn said the value) when the blank is
    a whole side, a quantity's number ("__ km") or a fraction's part ("__/9"); (-1, the two sides of the equation,
    …) when it is inside a computation ("3 × __ = 15": an equation in an unknown); ``None`` when it cannot be
    solved or its value is not a plain number. A bare number after the blank's side is its value said ("1 L = __
    mL gives 1000"): written in, the relation is a statement to check, not a question."""
    if None in nodes or len(nodes) < 2:
        return None
    holding = [i for i, n in enumerate(nodes) if any(leaf.op == "var" for leaf in _leaves(n))]
    if len(holding) != 1:
        return None
    j = holding[0]
    side = nodes[j]
    blanks = [leaf for leaf in _leaves(side) if leaf.op == "var"]
    if len(blanks) != 1 or blanks[0].text != "□":
        return None
    part = side.op == "/" and {side.left.op, side.right.op} == {"num", "var"}
    unit = blanks[0].value or Fraction(1)
    said = None
    if j > 0 and j + 2 == len(nodes) and rels[j] == "=" and nodes[j + 1].op == "num" and not nodes[j + 1].dim \
            and (side.op == "var" or part):
        said, nodes, rels = nodes[j + 1].value, nodes[:-1], rels[:-1]
    k = j - 1 if j > 0 and rels[j - 1] == "=" else j + 1 if j < len(rels) and rels[j] == "=" else None
    if k is None:
        return None
    other = _const(nodes[k])
    if other is None:
        return None
    lin = evaluate(side)
    if said is not None:
        value = said
    elif lin is not None and lin[0] != 0:
        value = (other - lin[1]) / lin[0] / unit  # in the blank's unit ("9500 m = __ km": 9.5)
    elif side.op == "/" and side.right.op == "var" and (top := _const(side.left)) is not None and other != 0:
        value = top / other  # "6/__ = 2/3"
    else:
        return None
    if side.op != "var" and not part:
        return -1, [side, nodes[k]], rels, False
    text = _plain_number(value)
    if text is None or part and value.denominator != 1:
        return None
    number = Node("num", value=value * unit, text=text, dim=blanks[0].dim)
    if side.op == "var":
        side = number
    else:
        side = replace(side, left=number) if side.left.op == "var" else replace(side, right=number)
    return j, [*nodes[:j], side, *nodes[j + 1:]], rels, said is not None


def _plain_number(value: Fraction) -> str | None:
    """``value`` written as a whole number or a terminating decimal, else ``None``."""
    if value.denominator == 1:
        return str(value.numerator)
    d, places = value.denominator, 0
    while d % 10 == 0 or d % 2 == 0 or d % 5 == 0:
        d //= 10 if d % 10 == 0 else 2 if d % 2 == 0 else 5
        places += 1
    if d != 1 or places > 6:
        return None
    digits = str(abs(value.numerator) * 10 ** places // value.denominator).rjust(places + 1, "0")
    return ("-" if value < 0 else "") + digits[:-places] + "." + digits[-places:]


def _instance(t: Node | None, n: Node | None, bound: list[Fraction]) -> bool:
    if t is None or n is None:
        return t is n
    if t.op == "var":
        if n.op != "num" or (bound and bound[0] != n.value):
            return False
        bound[:] = [n.value]
        return True
    if t.op == "num":
        return n.op == "num" and n.value == t.value
    return t.op == n.op and _instance(t.left, n.left, bound) and _instance(t.right, n.right, bound)


def _fingerprint(task: Task) -> tuple:
    """Every text and id the material of ``task``'s reader is built from; a math task's digits masked when its
    components' computations come from the curriculum's table (then the numbers of a draw change nothing)."""
    kcs = task.knowledge_components
    parts = [task.task_set, task.id, task.summary, *task.solution]
    for k in kcs:
        parts += [k.id, k.name, *k.keywords, *k.facts, k.explanation, k.worked_example, *k.hints,
                  *(link.bridge for link in k.links), *(q.text for q in k.questions),
                  *(q.expected or "" for q in k.questions)]
    for item in (*task.pretest, *task.posttest):
        parts += [item.stem, *item.kcs]
    for m in task.misconceptions:
        parts += [m.id, m.kc, m.belief, m.counterexample, *m.refutations]
    text = "\x00".join(parts).encode()
    if task.task_set == "math" and all(k.id in KC_OPERATIONS for k in kcs):
        text = text.translate(None, b"0123456789")  # (bytes.translate: str.translate is slow on non-ASCII text)
    return (task.task_set, task.id, text)


_MATERIAL: dict[tuple, tuple] = {}


def _bounded(store: dict, key, build: Callable[[], object], limit: int):
    """``store[key]``, built on a miss; the store is emptied when it outgrows ``limit`` (a process-wide cache)."""
    found = store.get(key)
    if found is None:
        if len(store) > limit:
            store.clear()
        found = store[key] = build()
    return found


def _material(task: Task) -> tuple:
    return _bounded(_MATERIAL, _fingerprint(task), lambda: _build_material(task), 1024)


def _build_material(task: Task) -> tuple:
    """(component ids, their computations, their name words, misconceptions by component, the topic's words, the
    components' names as a pattern, propositions, their stem index, the match memo, the sentence mask)."""
    kc_ids = [k.id for k in task.knowledge_components]
    # the computations each component performs: the curriculum's table, or for a component it does not know
    # (a user's own task), the operations of the relations in its own worked example and explanation
    kc_ops = {k.id: KC_OPERATIONS[k.id] if k.id in KC_OPERATIONS else _operations_in(
        (k.worked_example, k.explanation, *(q.text for q in k.questions))) for k in task.knowledge_components}
    kc_words = {k.id: _name_words(k.keywords + (k.name,)) for k in task.knowledge_components}
    mis_by_kc: dict[str, list[str]] = {}
    for m in task.misconceptions:
        mis_by_kc.setdefault(m.kc, []).append(m.id)
    topic = frozenset().union(*kc_words.values())  # KC names and keywords: naming, not content
    names = sorted({k.name for k in task.knowledge_components if len(k.name.split()) >= 2}, key=len, reverse=True)
    names_re = re.compile("|".join(re.escape(n) for n in names), re.IGNORECASE) if names else None
    entries: list[tuple[str, str, str, str | None]] = []
    for k in task.knowledge_components:
        # the lesson's canonical facts, and the material a tutor may restate from it (explanation, worked
        # example, expected answers): both are true content on the component
        texts = [*k.facts, *sentences(k.explanation), *sentences(k.worked_example),
                 *(q.expected for q in k.questions if q.expected and len(q.expected) > 20)]
        entries += [(k.id, t, "fact", None) for t in texts]
        # a bridge to another discipline says something true about the component; so does a hint (the fact
        # a hint points to is the content a scaffold gives)
        entries += [(k.id, link.bridge, "fact", None) for link in k.links]
        entries += [(k.id, h, "fact", None) for h in k.hints]
        # what the curriculum asks about the component (each has an answer)
        entries += [(k.id, q.text, "question", None) for q in k.questions]
    # the task's own solution and summary are true content, each sentence on the component whose words it
    # shares most (the first on a tie)
    named = tuple((k, kc_words[k]) for k in kc_ids)
    math = task.task_set == "math"
    mask = _no_digits if math else str  # (the words, not the numbers, decide)
    for text in (*task.solution, task.summary):
        entries += [(_closest(named, mask(sent)), sent, "fact", None) for sent in sentences(text)]
    # a test item's question, asked again (with other numbers in math), is a gradeable question on its component
    for item in (*task.pretest, *task.posttest):
        on = tuple((k, w) for k, w in named if k in item.kcs)
        if on:  # the item's component whose words its question shares most (its first on a tie)
            entries.append((_closest(on, mask(item.stem)), item.stem, "question", None))
    for m in task.misconceptions:
        entries.append((m.kc, m.belief, "belief", m.id))
        # stated observations and the scenario
        entries += [(m.kc, t, "refutation", m.id) for t in (*m.refutations, *sentences(m.counterexample))]
    # a math task's numbers are one instance's (its relations are checked exactly): its propositions are the
    # same for every draw of the family, so they are built with the digits masked
    key = tuple((kc, mask(t), kind, mis) for kc, t, kind, mis in entries if "{" not in t)
    props, by_stem, matched = _indexed(key, math, topic)
    # a math task's propositions hold no numbers: nor does their match
    return kc_ids, kc_ops, kc_words, mis_by_kc, topic, names_re, props, by_stem, matched, mask


_READERS: dict[tuple, ContentReader] = {}


def _reader(task: Task) -> ContentReader:
    """One reader per distinct task content: a lesson rebuilt for every episode, or a math task drawn again with
    the same numbers, reuses its reader (and the cache of its readings). 64 hold every lesson; a math draw is
    rarely met again (8 hits in 1,862 act-mode episodes), and each reader kept holds its task and readings, which
    every full garbage collection walks: with 512 kept, act mode ran 7-8 % slower."""
    key = (task.task_set, task.id, task.statement, task.answer,
           tuple((k.explanation, k.worked_example) for k in task.knowledge_components),
           tuple(m.counterexample for m in task.misconceptions))
    return _bounded(_READERS, key, lambda: ContentReader(task), 64)


__all__ = ["Claim", "ContentReader", "Reading", "with_reading", "TRUE", "FALSE", "UNCHECKED", "normalise", "parse",
           "evaluate", "KC_OPERATIONS", "WRONG_RULES"]
