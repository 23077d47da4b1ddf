"""What a reading returns: :class:`Claim` (one checkable thing a turn says or asks), :class:`Reading` (a turn's
claims with the summaries the student model reads) and :func:`with_reading` (a text-mode act labelled by its
reading)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

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
    """The content of one tutor turn: its claims, with summaries the student model reads. ``links`` are the
    task's cross-discipline links the turn makes, as (component, discipline) pairs: it says the link's bridge or
    uses its keywords (naming another discipline alone makes no link)."""

    claims: tuple[Claim, ...] = ()
    links: tuple[tuple[str, str], ...] = ()

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


_EXPLAIN_Q = re.compile(r"\b(?:why|explain|how do you know|how can you tell|justify|what makes|reason)\b", re.I)
_TRANSFER_Q = re.compile(r"\b(?:what if|what would happen|predict|another|new|instead|would .* still|"
                         r"how could|in general|always)\b", re.I)
_RECALL_Q = re.compile(r"\b(?:what do we call|what is called|name the|what is the name|define|definition|"
                       r"what does .* mean|remember)\b", re.I)


def demand_of(text: str, math: bool) -> str:
    """The cognitive demand (one of :data:`DEMANDS`) of a question: transfer, explain, else recall or apply (a
    math question applies; "define" asks a lesson's recall)."""
    if _TRANSFER_Q.search(text):
        return "transfer"
    if _EXPLAIN_Q.search(text):
        return "explain"
    if _RECALL_Q.search(text) and not math:
        return "recall"
    return "apply" if math else "recall"
