"""A rule-based annotator of student turns: an utterance -> (cognition state, Bloom level, disciplines).

Simulated students label their own turns from their true state; an LLM student's turns (or a human's) need
an annotator. This one is deliberately transparent, like :mod:`tutorzoo.envs.annotate` for tutor turns: cue phrases
(precompiled regexes) and the task's own vocabulary decide every label. :mod:`tutorzoo.eval.agreement` measures it
against the hand-labelled gold set.

Cognition state, the first rule that fires:

- ``expression_difficulty``: the student says they cannot put it into words ("I can't explain it", "I forgot
  the word", "I don't know how to say").
- ``irrelevant``: an off-topic cue ("boring", "my cousin", "can we do ... instead"), or four or more content
  words none of which belongs to the task's vocabulary or the tutor's last turn, and no number.
- ``incorrect``: the turn restates a misconception of the task (most of its belief's content words, no
  negation), or its last number is a misconception's wrong answer, or (math) a number that appears nowhere in
  the statement, the worked solution or the tutor's last turn.
- ``higher_order``: synthesis cues ("we could", "what if", "it's like", "same as", "I wonder") or a causal
  explanation of twenty words or more.
- ``vague_understanding``: hedges ("I think", "maybe", "not sure", "is it ...?", a trailing question mark).
- otherwise ``clear_understanding``.

Bloom level, the first rule that fires: ``create`` (a plan or design in the first person: "I'd put", "we
could build"), ``evaluate`` (judgement words: better, best, safe, trust, obviously, doesn't work),
``analyze`` (a reason or comparison: because, so ... is, compare, the difference), ``apply`` (a calculation:
digits joined by an operator or '='), ``understand`` (six or more words of explanation), else ``remember``.

Disciplines: the task's knowledge-component keywords (each KC's discipline) and the discipline lexicon of
:mod:`tutorzoo.envs.annotate`; an arithmetic expression counts as math; a turn with no subject word keeps the
disciplines of the turn it answers.

Example::

    import numpy as np
    from tutorzoo.envs.tasks import get_task_set
    task = get_task_set("math").build("fraction_addition", np.random.default_rng(0))
    annotate_student("I think it's 4/14? You add the tops and the bottoms.", task,
                     StudentContext(previous_disciplines=("math",)))
    # -> ('incorrect', 'apply', ('math',))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tutorzoo.envs.annotate import DISCIPLINE_WORDS
from tutorzoo.envs.grading import mentions_value
from tutorzoo.envs.tasks.base import Task


@dataclass
class StudentContext:
    """What the student annotator knows about the dialogue: the tutor turn being answered and its disciplines."""

    previous_utterance: str = ""
    previous_disciplines: tuple[str, ...] = ()


def _cue(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z])(?:" + "|".join(phrases) + r")(?![a-z])", re.IGNORECASE)


_EXPRESSION = _cue(r"can'?t (?:say|explain|put)", r"don'?t know how to (?:say|put|explain)", r"hard to (?:say|explain)",
                   r"how to (?:say|put) it", r"forgot the word", r"the words?", r"not sure how to say",
                   r"i know (?:it|what)[^.?!]{0,30}but", r"can'?t say it", r"i get it but")
_OFF_TOPIC = _cue(r"boring", r"my (?:cousin|brother|sister|mum|mom|dad|friend)", r"instead", r"lunch", r"football",
                  r"video", r"bathroom", r"i don'?t like", r"do we (?:even )?need", r"why do we (?:even )?need")
_HIGHER = _cue(r"we could", r"you could", r"i'?d (?:put|do|make|use|trust|say)", r"what if", r"i wonder",
               r"it'?s like", r"like a", r"same as", r"the same (?:rule|way|idea)", r"in general", r"that'?s why",
               r"it'?s a circle", r"would it also", r"even though")
_HEDGE = _cue(r"i think", r"maybe", r"not sure", r"i guess", r"probably", r"kind of", r"sort of", r"is it",
              r"i don'?t know", r"um+", r"or something")
_NEGATION = _cue(r"not", r"no", r"isn'?t", r"doesn'?t", r"don'?t", r"can'?t", r"wasn'?t", r"never")

_CREATE = _cue(r"i'?d (?:put|do|make|build|cut|use)", r"we could", r"you could", r"i would (?:build|make|design|put)",
               r"i'?ll (?:do|make|put|draw)", r"my design", r"leave a", r"launch with", r"cut \d+", r"write")
_EVALUATE = _cue(r"better", r"best", r"worse", r"quicker", r"safe", r"trust", r"obviously", r"doesn'?t work",
                 r"sounds weird", r"makes sense", r"can'?t be right", r"that'?s bad", r"should")
_ANALYZE = _cue(r"because", r"compare", r"difference", r"whereas", r"so (?:it|the|that|they|each|you)\b[^.?!]{0,40}"
                r"(?:is|are|can'?t|doesn'?t|has|need)", r"that means", r"depends", r"instead of", r"but")
_CALC = re.compile(r"\d\s*(?:[-+×x*÷/=]|times|divided by|minus|plus)\s*\(?-?\d|\d+\s*%|=\s*-?\d")
_NUMBER = re.compile(r"-?\d+(?:[.,/]\d+)?")
_WORD = re.compile(r"[a-z]+")
_STOP = frozenset(
    "the a an and or but if then of to in on at for with is are was were be it this that what you your how why do "
    "does did can could would should will we they he she i me my our their its as by from so not no yes like just "
    "about there here have has had been into out up down more less some any all one two get got because really "
    "very too also them than when which who where yeah okay oh wait think know".split()
)


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP}


def _phrase_re(phrases: Sequence[str]) -> re.Pattern[str] | None:
    cleaned = sorted({p.strip().lower() for p in phrases if p and p.strip()}, key=len, reverse=True)
    if not cleaned:
        return None
    return re.compile(r"(?<![a-z])(?:" + "|".join(re.escape(p) for p in cleaned) + r")", re.IGNORECASE)


class StudentAnnotator:
    """Annotates student turns for one task; build once per dialogue (it precompiles the task's lexicon).

    Example::

        ann = StudentAnnotator(task)
        ann.annotate("A bundle of ten ones!", StudentContext(previous_disciplines=("math",)))
        # -> ('clear_understanding', 'remember', ('math',))
    """

    def __init__(self, task: Task) -> None:
        self.task = task
        self._kc_patterns = [(kc.discipline, _phrase_re(kc.keywords + (kc.name,))) for kc in task.knowledge_components]
        self._discipline_patterns = [(d, _phrase_re(ws)) for d, ws in DISCIPLINE_WORDS.items()]
        vocabulary = [task.statement, task.answer, task.summary, *task.solution]
        for kc in task.knowledge_components:
            vocabulary += [kc.name, kc.explanation, *kc.keywords]
        self._vocabulary = _content(" ".join(vocabulary))
        self._beliefs = [_content(m.belief) for m in task.misconceptions]
        # The pre-test items are the task's own problem; post-test items use other numbers.
        wrong = {a for it in task.pretest if not it.is_choice for a in it.misconception_answers.values()}
        self._wrong_answers = tuple(sorted(wrong))
        self._known_text = " ".join([task.statement, task.answer, *task.solution])
        self._numeric = task.task_set == "math"

    def annotate(self, utterance: str, ctx: StudentContext) -> tuple[str, str, tuple[str, ...]]:
        """The (cognition state, Bloom level, disciplines) of one student turn."""
        disciplines = self.disciplines(utterance, ctx)
        return self._state(utterance, ctx), self._level(utterance), disciplines

    def disciplines(self, utterance: str, ctx: StudentContext) -> tuple[str, ...]:
        found: list[str] = []
        for discipline, pat in self._kc_patterns + self._discipline_patterns:
            if pat is not None and discipline not in found and pat.search(utterance):
                found.append(discipline)
        if _CALC.search(utterance) and "math" not in found:
            found.append("math")
        if not found:
            found = list(ctx.previous_disciplines) or [self.task.disciplines[0]]
        return tuple(found)

    def _state(self, text: str, ctx: StudentContext) -> str:
        words = _content(text)
        has_number = bool(_NUMBER.search(text))
        if _EXPRESSION.search(text):
            return "expression_difficulty"
        on_topic = words & (self._vocabulary | _content(ctx.previous_utterance))
        if _OFF_TOPIC.search(text) or (len(words) >= 4 and not on_topic and not has_number):
            return "irrelevant"
        if self._is_incorrect(text, words, ctx):
            return "incorrect"
        if _HIGHER.search(text) or (len(words) >= 12 and "because" in text.lower()):
            return "higher_order"
        if _HEDGE.search(text) or text.rstrip().endswith("?"):
            return "vague_understanding"
        return "clear_understanding"

    def _is_incorrect(self, text: str, words: set[str], ctx: StudentContext) -> bool:
        if not _NEGATION.search(text):
            for belief in self._beliefs:
                if belief and len(words & belief) >= max(2, (len(belief) + 1) // 2):
                    return True
        numbers = _NUMBER.findall(text)
        if not numbers:
            return False
        last = numbers[-1].replace(",", "")
        if any(mentions_value(last, w) for w in self._wrong_answers):
            return True
        # In a procedural task a correct turn only uses numbers of the problem, its solution or the tutor's turn.
        return self._numeric and not mentions_value(f"{self._known_text} {ctx.previous_utterance}", last)

    @staticmethod
    def _level(text: str) -> str:
        words = _content(text)
        if _CREATE.search(text):
            return "create"
        if _EVALUATE.search(text):
            return "evaluate"
        if _ANALYZE.search(text) and len(words) >= 4:
            return "analyze"
        if _CALC.search(text):
            return "apply"
        if len(words) >= 6:
            return "understand"
        return "remember"


def annotate_student(utterance: str, task: Task, context: StudentContext) -> tuple[str, str, tuple[str, ...]]:
    """Label one student turn: ``(cognition_state, cognitive_level, disciplines)``.

    Builds a :class:`StudentAnnotator` for ``task`` each call; annotate a whole dialogue with one instance.

    Example::

        annotate_student("A bundle of ten ones!", task, StudentContext(previous_disciplines=("math",)))
    """
    return StudentAnnotator(task).annotate(utterance, context)


__all__ = ["StudentAnnotator", "StudentContext", "annotate_student"]
