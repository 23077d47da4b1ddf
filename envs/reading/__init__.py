r"""The content reader: what a tutor turn *says* about the task, each claim checked against the task.

The simulated student learns from this reading, not from cue phrases (the SID labels of :mod:`tutorzoo.envs.annotate`
describe a turn's form; this module decides its substance). Text mode and act mode take the same path: in act
mode the verbalised utterance is read like any other (but for a closing act's: the post-test follows it, no student
turn, so nothing learns from its words).

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

The package's modules, each one job, in the order a turn passes through them:

- :mod:`~tutorzoo.envs.reading.numbers` — numbers in text (digits, fractions, percents, LaTeX, number words: the
  tree's one table of them), shared with the grader, the leak detector and the student's words;
- :mod:`~tutorzoo.envs.reading.units` — the units a quantity may carry, with exact factors;
- :mod:`~tutorzoo.envs.reading.normalise` — sentences, and each sentence as math-friendly text;
- :mod:`~tutorzoo.envs.reading.expressions` — the expression tree, its parser and exact evaluation;
- :mod:`~tutorzoo.envs.reading.chains` — the relation chains of a sentence, blanks, equations, steps said in words;
- :mod:`~tutorzoo.envs.reading.operations` — the computations a relation performs, per KC (:data:`KC_OPERATIONS`);
- :mod:`~tutorzoo.envs.reading.wrong_rules` — the misconceptions' computable wrong rules (:data:`WRONG_RULES`);
- :mod:`~tutorzoo.envs.reading.propositions` — the stemmer, word order and polarity of curriculum propositions;
- :mod:`~tutorzoo.envs.reading.matcher` — which proposition a sentence states, and the claim that makes;
- :mod:`~tutorzoo.envs.reading.frames` — who asserts what: denials, retractions, reported speech, warnings;
- :mod:`~tutorzoo.envs.reading.material` — a task's reading material, shared by readers of the same texts;
- :mod:`~tutorzoo.envs.reading.claims` — :class:`Claim` and :class:`Reading`, what a reading returns;
- :mod:`~tutorzoo.envs.reading.reader` — :class:`ContentReader`, which puts them together per turn.

Example::

    reader = ContentReader.for_task(task)
    reading = reader.read("Let's check: 1/2 + 1/3 = 3/6 + 2/6 = 5/6. What is 1/4 + 1/3?")
    reading.kc, [c.verdict for c in reading.claims]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it, imported on first use: the grader and the leak detector import
# :mod:`~tutorzoo.envs.reading.numbers` without loading the reader
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("DEMANDS", "EMPTY", "FALSE", "TRUE", "UNCHECKED", "Claim", "Reading", "with_reading"), "claims"),
    **dict.fromkeys(("Node", "evaluate", "parse"), "expressions"),
    **dict.fromkeys(("normalise", "sentences"), "normalise"),
    **dict.fromkeys(("KC_OPERATIONS", "operations"), "operations"),
    "ContentReader": "reader",
    "WRONG_RULES": "wrong_rules",
}

if TYPE_CHECKING:
    from tutorzoo.envs.reading.claims import DEMANDS, EMPTY, FALSE, TRUE, UNCHECKED, Claim, Reading, with_reading
    from tutorzoo.envs.reading.expressions import Node, evaluate, parse
    from tutorzoo.envs.reading.normalise import normalise, sentences
    from tutorzoo.envs.reading.operations import KC_OPERATIONS, operations
    from tutorzoo.envs.reading.reader import ContentReader
    from tutorzoo.envs.reading.wrong_rules import WRONG_RULES

__all__ = ["DEMANDS", "EMPTY", "FALSE", "KC_OPERATIONS", "TRUE", "UNCHECKED", "WRONG_RULES", "Claim", "ContentReader",
           "Node", "Reading", "evaluate", "normalise", "operations", "parse", "sentences", "with_reading"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
