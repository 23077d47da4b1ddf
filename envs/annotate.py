"""The rule-based annotator: a tutor utterance -> its SID act (:class:`tutorzoo.envs.acts.TutorAct`).

In ``text`` action mode this is how the env understands a tutor. It is deliberately transparent: cue
phrases (precompiled regexes) decide the strategy, the intent and the guidance level; the task's own
knowledge-component keywords decide the topic (``target_kc``) and, with a discipline lexicon, the
disciplines; the leak detector decides whether an answer was stated. Content matters: an utterance that
names no knowledge component of the task (flattery, keyword spam about nothing) gets ``target_kc=None``,
which the simulated student treats as off topic.

Rules, in order:

- well-formedness first (:mod:`tutorzoo.envs.wellformed`): a turn that is not recognisable language (too few known
  words, or a string of words with no function words holding them together) earns nothing. It gets the
  no-credit labels of :func:`Annotator.malformed_act`: intent ``check_understanding`` (the intent SID's SC does
  not count), strategy ``None``, guidance ``L1``, the previous turn's disciplines (the task's main discipline on
  the first turn), ``discipline_transfer=False``, no component, no misconception, not a question,
  ``invalid=True``; only the leak check and the end marker still apply.
- ``ends_session``: the end marker ``[END]`` (case-insensitive) anywhere in the turn.
- strategy: the first matching cue group in :data:`STRATEGY_CUES` order; otherwise a question that follows
  a student turn is a ``follow_up_question``; otherwise ``None``.
- intent: ``summarize`` (summary cues or the end marker) > ``trigger_transfer`` (a discipline other than the
  topic's, with a bridge cue or a KC link's keywords) > ``introduce_concept`` (explanation cues, or a
  statement with no question) > ``check_understanding`` (closed questions) > ``guide_reasoning``.
- guidance level: L3 for reasoning/transfer cues or transfer intent; L2 for explanation cues or an
  explanation; else L1.
- ``discipline_transfer``: the turn has a discipline the previous turn did not have, or links two (SPEC §1).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import overload

from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.leak import AnswerKey, LeakDetector
from tutorzoo.envs.phrase_index import Found, PhraseIndex, cleaned, readable
from tutorzoo.envs.reading.normalise import plain_text
from tutorzoo.envs.tasks.base import Item, Task
from tutorzoo.envs.wellformed import check as check_wellformed

END_MARKER = "[END]"
_END_RE = re.compile(r"\[\s*end\s*\]", re.IGNORECASE)


def _cue(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z])(?:" + "|".join(phrases) + r")(?![a-z])", re.IGNORECASE)


STRATEGY_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("scenario_question", _cue(r"imagine", r"suppose", r"what if", r"what would happen", r"picture this",
                               r"let'?s say", r"pretend", r"scenario", r"if you had", r"counterexample",
                               r"here(?:'s| is) a (?:case|situation)", r"consider (?:this|a|the) case",
                               r"take (?:this|a) case", r"test (?:that|this|your) idea", r"think of a case")),
    ("analogy", _cue(r"it'?s like", r"is like", r"similar to", r"think of it as", r"just as", r"analogy",
                     r"like a", r"the same way", r"an analogy", r"compare (?:it )?(?:to|with)", r"resembles")),
    ("break_down", _cue(r"step by step", r"let'?s break", r"break it down", r"one step at a time",
                        r"first step", r"step \d", r"smaller (?:steps|parts|pieces)", r"start with",
                        r"piece by piece", r"bit by bit", r"one (?:piece|part|thing|bit) at a time",
                        r"go(?:ing)? slowly", r"small(?:er)? (?:chunks|bits)", r"walk you through", r"in stages")),
    ("hint", _cue(r"hint", r"clue", r"here'?s a tip", r"try thinking", r"remember that", r"notice that",
                  r"look at", r"(?:one|a|quick|small) (?:pointer|nudge)", r"try this", r"think about")),
    ("corrective_feedback", _cue(r"not quite", r"that'?s not", r"that is not", r"incorrect", r"a mistake",
                                 r"careful", r"isn'?t right", r"not right", r"wrong", r"not correct",
                                 r"not exactly", r"almost", r"close, but", r"double-check", r"hmm")),
    ("contextualize", _cue(r"in real life", r"everyday", r"real[- ]world", r"at the (?:store|shop|market)",
                           r"in the kitchen", r"when you (?:cook|shop|travel|build)")),
    ("encourage", _cue(r"great", r"good job", r"well done", r"nice", r"right track", r"don'?t worry",
                       r"keep going", r"excellent", r"good thinking", r"you can do", r"good try", r"good work",
                       r"nice work", r"you'?ve got this", r"keep it up", r"good effort", r"good question")),
)
_ENCOURAGE = dict(STRATEGY_CUES)["encourage"]


def encourages(text: str) -> bool:
    """Whether ``text`` praises or encourages anywhere ("Great thinking!", "Don't worry, …"), whichever strategy its
    label gets: the tone a student hears is in the words, not in the one strategy the turn is labelled with."""
    return _ENCOURAGE.search(text) is not None


_FOLLOW_UP = _cue(r"why", r"how did", r"how do you know", r"can you explain", r"what makes you", r"and then",
                  r"what next", r"tell me more", r"what do you notice", r"walk me through", r"say more",
                  r"what stands out", r"your reasoning")

# An imperative task prompt ("Write 40% as a decimal.") asks for an answer just as a question does.
_PROMPT = re.compile(r"(?:^|[.!:]\s+)(?:now\s+)?(?:write|find|calculate|compute|work out|solve|explain|describe|"
                     r"compare|show|estimate|predict|name|list|give|convert|simplify|draw|measure|tell me)\b",
                     re.IGNORECASE)
# ("Key idea" is a chat model's heading over an explanation, not a recap: "the key idea" is an explanation cue)
_SUMMARY = _cue(r"to summari[sz]e", r"in summary", r"let'?s recap", r"to sum up", r"we learned", r"we found",
                r"so today", r"in short")
_BRIDGE = _cue(r"connect", r"link", r"in physics", r"in chemistry", r"in biology", r"in geography",
               r"in history", r"in art", r"a scientist", r"a geographer", r"an engineer", r"a historian",
               r"an artist", r"a chemist", r"a physicist", r"a biologist", r"another subject", r"think about how")
_EXPLAIN = _cue(r"means", r"is called", r"definition", r"is defined", r"the rule", r"here'?s how",
                r"let me (?:explain|show)", r"worked example", r"for example", r"we (?:can|need to)",
                r"the idea is", r"works like this", r"because", r"watch how", r"here(?:'s| is) how",
                r"the key idea", r"this is how", r"follow along")
_CLOSED = re.compile(r"^\s*(?:is|are|does|do|can|did|was|were|will|would|should|has|have)\b|"
                     r"\b(?:what is|what's|how many|how much|which|true or false|yes or no|does that make sense)\b",
                     re.IGNORECASE)
_L3 = _cue(r"why", r"what if", r"how would", r"predict", r"compare", r"what would happen", r"design",
           r"evaluate", r"justify", r"generali[sz]e", r"apply (?:this|that|it)", r"how could", r"what would you",
           r"connect", r"could you use", r"in general", r"always true")
_L2 = _cue(r"explain", r"how", r"describe", r"in your own words", r"what does .{1,40} mean", r"show me",
           r"walk me through")



# This module's string literals are part of the well-formedness vocabulary (envs/wellformed.py): the notes on
# the fast path below are comments, so that they change no verdict.
#
# _twin(pattern) is ``pattern`` without IGNORECASE, to run on lower-cased readable text (ASCII and the caseless
# symbols of envs/phrase_index.py). Every pattern of this module is written in lower case, and on such text
# lower-casing changes no length or position, so the twin finds in text.lower() exactly what ``pattern`` finds in
# ``text``, about 2.5x faster (a case-insensitive pattern cannot use the regex engine's literal-prefix scan). A
# pattern that is not ASCII itself (a lexicon word with a long s would match an ASCII s ignoring case) is its own
# twin: ignoring case, it matches lower-cased readable text exactly where it matches the text.
@overload
def _twin(pattern: re.Pattern[str]) -> re.Pattern[str]: ...
@overload
def _twin(pattern: None) -> None: ...
def _twin(pattern: re.Pattern[str] | None) -> re.Pattern[str] | None:
    if pattern is None or not pattern.pattern.isascii():
        return pattern
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


# The utterance-level patterns, as written (for any text) or as twins (for lower-cased readable text).
@dataclass(frozen=True)
class _Cues:
    end: re.Pattern[str]
    prompt: re.Pattern[str]
    follow_up: re.Pattern[str]
    summary: re.Pattern[str]
    bridge: re.Pattern[str]
    explain: re.Pattern[str]
    closed: re.Pattern[str]
    l3: re.Pattern[str]
    l2: re.Pattern[str]
    strategies: tuple[tuple[str, re.Pattern[str]], ...]

    def twins(self) -> _Cues:
        *single, _strategies = fields(self)
        values = {f.name: _twin(getattr(self, f.name)) for f in single}
        return _Cues(**values, strategies=tuple((name, _twin(pat)) for name, pat in self.strategies))


# every cue pattern the labels are read from (the content gate takes their words as no substance)
CUE_PATTERNS: tuple[re.Pattern[str], ...] = (*(p for _, p in STRATEGY_CUES), _FOLLOW_UP, _SUMMARY, _BRIDGE, _EXPLAIN,
                                             _L3, _L2)
_AS_WRITTEN = _Cues(_END_RE, _PROMPT, _FOLLOW_UP, _SUMMARY, _BRIDGE, _EXPLAIN, _CLOSED, _L3, _L2, STRATEGY_CUES)
_LOWERED = _AS_WRITTEN.twins()

# A small discipline lexicon; the task's own KC keywords and link keywords extend it per task.
DISCIPLINE_WORDS: dict[str, tuple[str, ...]] = {
    "math": ("fraction", "number", "equation", "ratio", "percent", "graph", "calculate", "multiply", "divide",
             "denominator", "numerator", "angle", "area", "perimeter", "proportion", "average"),
    "physics": ("force", "energy", "speed", "velocity", "motion", "pressure", "gravity", "friction", "wave",
                "electric", "circuit", "heat", "light", "density", "momentum", "acceleration"),
    "chemistry": ("chemical", "chemical reaction", "molecule", "atom", "acid", "solution", "mixture", "element",
                  "compound", "oxid", "ph ", "dissolve", "concentration"),
    "biology": ("cell", "organism", "plant", "animal", "body", "heart", "ecosystem", "species", "muscle",
                "photosynthesis", "bacteria", "immune", "gene"),
    "geography": ("map", "climate", "river", "mountain", "continent", "latitude", "longitude", "terrain",
                  "elevation", "weather", "region", "population", "earthquake", "ocean"),
    "history": ("history", "historical", "ancient", "century", "empire", "war", "invented", "medieval",
                "civilization", "revolution"),
    "technology": ("engineer", "design", "machine", "device", "computer", "sensor", "build", "prototype",
                   "technology", "tool", "circuit board"),
    "art": ("art", "paint", "drawing", "colour", "color", "music", "rhythm", "sculpture", "design pattern",
            "perspective", "tiling", "mosaic"),
    "language": ("word", "sentence", "story", "poem", "language", "describe in words", "vocabulary",
                 "grammar", "write"),
}
_WORD_RE = re.compile(r"[a-z0-9']+")
_NUMBER = re.compile(r"\d+(?:[.,/]\d+)?")


@dataclass
class AnnotationContext:
    """What the annotator needs to know about the dialogue so far (kept by the env)."""

    focus_kc: str | None = None
    previous_disciplines: tuple[str, ...] = ()
    tutor_history: list[str] = field(default_factory=list)
    student_spoke_last: bool = False

    def after_tutor(self, act: TutorAct, text: str) -> None:
        """Move on past a tutor turn: its target component (if any) becomes the focus, its text the history's."""
        if act.target_kc is not None:
            self.focus_kc = act.target_kc
        self.tutor_history.append(text)
        self.previous_disciplines = act.disciplines
        self.student_spoke_last = False

    def after_student(self, disciplines: Sequence[str]) -> None:
        """Move on past a student turn labelled with ``disciplines``."""
        self.previous_disciplines = tuple(disciplines)
        self.student_spoke_last = True


class Annotator:
    """Annotates tutor utterances for one task. Build once per episode: it precompiles the task's lexicon.

    Example::

        ann = Annotator(task)
        act = ann.annotate("Imagine you cut a pizza into 6 slices. What fraction is one slice?", ctx)
    """

    @classmethod
    def for_task(cls, task: Task) -> Annotator:
        """The annotator the env uses: every pre- and post-test item's answer (and the task's) is a key for the
        leak detector; the statement's own numbers are givens, never leaks."""
        keys = [answer_key(item) for item in task.pretest]
        if not any(k.value == task.answer for k in keys):
            keys.append(AnswerKey(item_id="task", value=task.answer))
        pre_ids = {item.id for item in task.pretest}
        seen = {k.value for k in keys}
        # a hidden post-test item whose answer is also one the tutor was shown cannot be told apart from it
        keys += [answer_key(item) for item in task.posttest if item.id not in pre_ids and item.answer not in seen]
        contexts = {item.id: item.stem for item in task.posttest if item.id not in pre_ids}
        return cls(task, keys, (task.statement,), contexts)

    def __init__(self, task: Task, answer_keys: Sequence[AnswerKey], givens: Sequence[str],
                 contexts: dict[str, str] | None = None) -> None:
        self.task = task
        self.answer_keys = tuple(answer_keys)
        self.givens = tuple(givens)
        self._leaks = LeakDetector(self.answer_keys, self.givens)
        # Post-test items the tutor never saw: their answer counts as stated only together with the item (two
        # numbers of its stem, or four of its content words), so that an unrelated worked
        # example whose result happens to equal a hidden item's answer is not a leak.
        self._contexts = {iid: (frozenset(_NUMBER.findall(stem)), _content_words(stem))
                          for iid, stem in (contexts or {}).items()}
        self.main_discipline = task.disciplines[0]
        (self._kc_patterns, self._link_patterns, self._mis_patterns, self._discipline_patterns, self._phrases,
         self._topic_words, self._kc_discipline) = _lexicon(
            tuple((kc.id, kc.discipline, kc.name, kc.keywords,
                   tuple((link.discipline, link.keywords or (link.bridge,)) for link in kc.links))
                  for kc in task.knowledge_components),
            tuple((m.id, m.kc, m.keywords) for m in task.misconceptions))
        # The curriculum's own material, quoted, is recognised exactly: a bank question carries its KC and
        # level, a counterexample its misconception, an explanation or worked example its KC.
        self._material: list[tuple[str, str, str | None, str | None]] = []
        for kc in task.knowledge_components:
            for q in kc.questions:
                self._material.append((_norm(q.text), kc.id, q.guidance_level, None))
            for text in (kc.explanation, kc.worked_example):
                self._material.append((_norm(text), kc.id, "L2", None))
        for m in task.misconceptions:
            self._material.append((_norm(m.counterexample), m.kc, "L2", m.id))  # a concrete case to explain
        self._bridges = [(_norm(link.bridge), kc.id, link.discipline) for kc in task.knowledge_components
                         for link in kc.links if len(link.bridge) >= 12]
        self._material = [entry for entry in self._material if len(entry[0]) >= 12]
        self._statement_words = _content_words(task.statement)
        self._statement_numbers = frozenset(_NUMBER.findall(task.statement))
        self._counterexamples = [(m.id, _content_words(m.counterexample)) for m in task.misconceptions]
        self._beliefs = [(m.id, _content_words(m.belief)) for m in task.misconceptions]

    def annotate(self, utterance: str, ctx: AnnotationContext) -> TutorAct:
        # the words, not their layout: markdown headings, bullets, bold and "Step N:" labels are no cues
        text = plain_text(utterance)
        if not check_wellformed(text).ok:
            return self.malformed_act(text, ctx)
        # A turn of ASCII and caseless symbols (nearly every turn) is read lower-cased by the case-sensitive twins of
        # the cue patterns and by one pass of the lexicons' phrase index: the same matches, faster (see _twin,
        # PhraseIndex, readable); any other text by the patterns as written
        lower = readable(text)
        s, cues = (text.lower(), _LOWERED) if lower else (text, _AS_WRITTEN)
        found = self._phrases.scan(s) if lower and self._phrases is not None else None
        words = _content_words(text)  # shared by the rules below (each would compute the same set)
        normed = _norm(text)
        ends = bool(cues.end.search(s))
        is_question = "?" in text or bool(cues.prompt.search(s))

        strategy = next((name for name, pat in cues.strategies if pat.search(s)), None)
        if strategy is None and is_question and ctx.student_spoke_last:
            strategy = "follow_up_question"
        if strategy is None and is_question and cues.follow_up.search(s):
            strategy = "follow_up_question"

        target_kc, kc_disciplines = self._topic(s, found, words, ctx)
        quoted_kc, quoted_level, quoted_mis = self._quoted(normed)
        if quoted_kc is None and not self._has_content(text, words):
            target_kc = None  # topic words strung together teach nothing: no component is being worked on
        if quoted_kc is not None:
            target_kc = quoted_kc
            if quoted_kc not in self._kc_discipline or self._kc_discipline[quoted_kc] not in kc_disciplines:
                kc_disciplines = kc_disciplines + (self._kc_discipline[quoted_kc],)
        disciplines = self._disciplines(s if lower else text.lower(), found, kc_disciplines, target_kc)
        topic_discipline = self._kc_discipline.get(target_kc or "", self.main_discipline)
        bridge = self._quoted_bridge(normed)
        if bridge is not None:
            target_kc, linked = bridge
        elif quoted_kc is not None:
            linked = None  # quoted material on one component is not a transfer, whatever words it uses
        else:
            linked = self._linked_discipline(s, found)
        other = [d for d in disciplines if d != topic_discipline]
        if linked and linked not in disciplines:
            disciplines = disciplines + (linked,)
            other.append(linked)

        if ends or cues.summary.search(s):
            intent = "summarize"
        elif other and (linked is not None or (quoted_kc is None and cues.bridge.search(s))):
            intent = "trigger_transfer"
        elif cues.explain.search(s) or not is_question:
            intent = "introduce_concept"
        elif cues.closed.search(s) and not cues.l3.search(s):
            intent = "check_understanding"
        else:
            intent = "guide_reasoning"

        if quoted_level is not None and intent != "trigger_transfer":
            level = quoted_level
        elif intent == "trigger_transfer" or (is_question and cues.l3.search(s)):
            level = "L3"
        elif cues.l2.search(s) or intent in ("introduce_concept", "summarize"):
            level = "L2"
        else:
            level = "L1"

        transfer = len(disciplines) >= 2 or any(d not in ctx.previous_disciplines for d in disciplines)
        if not ctx.previous_disciplines:  # the first turn brings nothing in relative to nothing
            transfer = len(disciplines) >= 2

        leaks = self._leaks.find(text, ctx.tutor_history)
        revealed = self._in_context(text, leaks.item_ids, words)
        return TutorAct(
            intent=intent,
            strategy=strategy,
            guidance_level=level,
            disciplines=disciplines,
            discipline_transfer=transfer,
            target_kc=target_kc,
            reveals_answer=bool(revealed),
            revealed_items=revealed,
            addresses_misconception=quoted_mis or self._misconception(s, found, words),
            is_question=is_question,
            ends_session=ends,
        )

    def malformed_act(self, text: str, ctx: AnnotationContext) -> TutorAct:
        """The act of a turn that is not language (:mod:`tutorzoo.envs.wellformed`): the labels that give no credit.

        Its disciplines are the previous turn's, so it neither brings a discipline in nor resets the chain for
        the next turn's transfer; an answer it states is still a leak, and ``[END]`` still ends the session.
        """
        leaks = self._leaks.find(text, ctx.tutor_history)
        revealed = self._in_context(text, leaks.item_ids, _content_words(text))
        return TutorAct(
            intent="check_understanding",
            strategy=None,
            guidance_level="L1",
            disciplines=tuple(ctx.previous_disciplines) or (self.main_discipline,),
            discipline_transfer=False,
            target_kc=None,
            reveals_answer=bool(revealed),
            revealed_items=revealed,
            addresses_misconception=None,
            is_question=False,
            ends_session=bool(_END_RE.search(text)),
            invalid=True,
        )

    def _in_context(self, text: str, item_ids: tuple[str, ...], words: frozenset[str]) -> tuple[str, ...]:
        """The leaked items, keeping a hidden post-test item only when the turn also states the item (a list's
        numbers and step labels are layout, not the item's numbers)."""
        if not self._contexts or not item_ids:
            return item_ids
        numbers = frozenset(_NUMBER.findall(plain_text(text)))
        kept = []
        for iid in item_ids:
            ctx = self._contexts.get(iid)
            if ctx is None or len(numbers & ctx[0]) >= 2 or len(words & ctx[1]) >= 4:
                kept.append(iid)
        return tuple(kept)

    def _topic(self, text: str, phrases: Found | None, words: frozenset[str],
               ctx: AnnotationContext) -> tuple[str | None, tuple[str, ...]]:
        # (target KC, the disciplines of every KC named) of ``text``; ``phrases``: its scan by the phrase index, or
        # None (then the patterns read it)
        best, best_hits, found = None, 0, []
        for kc_id, discipline, pat, name_pat, lexicon in self._kc_patterns:
            if phrases is not None:
                hits = phrases.count(lexicon) + 3 * phrases.search(lexicon + 1)
            else:
                hits = len(pat.findall(text)) if pat is not None else 0
                if name_pat is not None and name_pat.search(text):
                    hits += 3  # naming the component outright is the strongest signal of the topic
            if hits:
                found.append(discipline)
                # Prefer the KC in focus on ties: a dialogue stays on a topic unless moved.
                if hits > best_hits or (hits == best_hits and kc_id == ctx.focus_kc):
                    best, best_hits = kc_id, hits
        if best is None and ctx.focus_kc is not None and self._about_the_task(text, words):
            best = ctx.focus_kc  # working on the task itself keeps the topic in focus
        return best, tuple(dict.fromkeys(found))

    def _has_content(self, text: str, words: frozenset[str]) -> bool:
        """Something to work on: a number, three words beyond the topic's keywords and the cue vocabulary, or —
        in a turn of one or two sentences — at least one ("Which side of the triangle is the height?"). A volley
        of bare keyword questions has many sentences and almost no such words."""
        if _NUMBER.search(text):
            return True
        words = words - self._topic_words - _CUE_WORDS
        sentences = max(1, len(_SENTENCE_END.findall(text)))
        return len(words) >= 3 or (sentences <= 2 and len(words) >= 1)

    def _quoted(self, lowered: str) -> tuple[str | None, str | None, str | None]:
        """The KC, guidance level and misconception of the longest piece of task material the turn quotes."""
        best: tuple[str, str, str | None, str | None] | None = None
        for entry in self._material:
            if entry[0] in lowered and (best is None or len(entry[0]) > len(best[0])):
                best = entry
        if best is None:
            return None, None, None
        return best[1], best[2], best[3]

    def _quoted_bridge(self, lowered: str) -> tuple[str, str] | None:
        for bridge, kc_id, discipline in self._bridges:
            if bridge in lowered:
                return kc_id, discipline
        return None

    def _about_the_task(self, text: str, words: frozenset[str]) -> bool:
        numbers = self._statement_numbers.intersection(_NUMBER.findall(text))
        words = self._statement_words & words
        return len(numbers) >= 2 or len(words) >= 3

    def _disciplines(self, lowered: str, phrases: Found | None, kc_disciplines: tuple[str, ...],
                     target_kc: str | None) -> tuple[str, ...]:
        # ``lowered``: the lower-cased turn; ``phrases``: its scan by the phrase index, or None
        found = list(kc_disciplines)
        for d, pat, lexicon in self._discipline_patterns:
            if d not in found and (phrases.search(lexicon) if phrases is not None
                                   else pat is not None and pat.search(lowered)):
                found.append(d)
        if not found:
            found.append(self._kc_discipline.get(target_kc or "", self.main_discipline))
        return tuple(found)

    def _linked_discipline(self, text: str, phrases: Found | None) -> str | None:
        for _kc, discipline, pat, lexicon in self._link_patterns:
            if phrases.search(lexicon) if phrases is not None else pat is not None and pat.search(text):
                return discipline
        return None

    def _misconception(self, text: str, phrases: Found | None, words: frozenset[str]) -> str | None:
        for mid, _kc, pat, lexicon in self._mis_patterns:
            if (phrases.count(lexicon) if phrases is not None else len(pat.findall(text)) if pat is not None
                    else 0) >= 2:
                return mid
        if len(words) >= 4:
            for mid, cx_words in self._counterexamples:
                if cx_words and len(words & cx_words) >= max(4, len(cx_words) // 3):
                    return mid
            for mid, belief_words in self._beliefs:  # quoting the student's wrong idea back to test it
                if belief_words and len(words & belief_words) >= max(3, (2 * len(belief_words)) // 3):
                    return mid
        return None


def answer_key(item: Item) -> AnswerKey:
    """The leak detector's key for a test item: its answer, and for multiple choice its letter and option text."""
    if item.options is not None:
        text = item.options[ord(item.answer) - ord("A")]
        return AnswerKey(item_id=item.id, value=text, option_letter=item.answer, option_text=text)
    return AnswerKey(item_id=item.id, value=item.answer)


# _lexicon: what an Annotator reads a task's words with, from what it depends on: each KC's (id, discipline, name,
# keywords, links as (discipline, their keywords, or the bridge when they have none)) and each misconception's (id,
# KC, keywords); shared by the annotators of every task with that lexicon, read-only. It gives the KC entries (id,
# discipline, keywords pattern, name pattern, lexicon; the name's lexicon is the next one), the link entries (KC,
# discipline, pattern, lexicon), the misconception entries (id, KC, pattern, lexicon), the discipline entries
# (discipline, pattern, lexicon), the PhraseIndex of every lexicon (None when it refuses a phrase), the topic's
# words and each KC's discipline. (Comments, not a docstring: this module's strings are well-formedness vocabulary.)
@functools.lru_cache(maxsize=256)  # one per distinct lexicon: a family's or lesson's, whatever numbers were drawn
def _lexicon(kcs: tuple[tuple[str, str, str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]], ...],
             misconceptions: tuple[tuple[str, str, tuple[str, ...]], ...]) -> tuple:
    lexicons: list[tuple[str, ...]] = []

    def lexicon(phrases: tuple[str, ...]) -> int:
        lexicons.append(phrases)
        return len(lexicons) - 1

    # A KC is the topic when the turn uses its keywords, its name, or the words of its misconceptions.
    mis_words: dict[str, tuple[str, ...]] = {}
    for _mid, kc_id, keywords in misconceptions:
        mis_words[kc_id] = mis_words.get(kc_id, ()) + keywords
    kc_entries = []
    for kc_id, discipline, name, keywords, _links in kcs:
        phrases = keywords + mis_words.get(kc_id, ())
        kc_entries.append((kc_id, discipline, _phrase_re(phrases), _phrase_re((name,)), lexicon(phrases)))
        lexicon((name,))
    links = tuple((kc_id, link_discipline, _phrase_re(phrases), lexicon(phrases))
                  for kc_id, _d, _n, _k, kc_links in kcs for link_discipline, phrases in kc_links)
    mis = tuple((mid, kc_id, _phrase_re(keywords), lexicon(keywords))
                for mid, kc_id, keywords in misconceptions if keywords)
    disciplines = tuple((d, _phrase_re(ws), lexicon(ws)) for d, ws in DISCIPLINE_WORDS.items())
    try:
        index: PhraseIndex | None = PhraseIndex(lexicons)
    except ValueError:  # a phrase the index cannot read as the pattern does: the patterns read every turn
        index = None
    topic_words = frozenset(w for _id, _d, name, keywords, _l in kcs for phrase in (*keywords, name)
                            for w in _content_words(phrase)) | frozenset(
        w for _mid, _kc, keywords in misconceptions for phrase in keywords for w in _content_words(phrase))
    return (tuple(kc_entries), links, mis, disciplines, index, topic_words,
            {kc_id: discipline for kc_id, discipline, *_rest in kcs})


def _phrase_re(phrases: Sequence[str]) -> re.Pattern[str] | None:
    return _compiled(tuple(phrases))


@functools.lru_cache(maxsize=4096)  # tasks repeat across episodes: compile each lexicon once
def _compiled(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    longest_first = sorted(cleaned(phrases), key=len, reverse=True)
    if not longest_first:
        return None
    return re.compile(r"(?<![a-z])(?:" + "|".join(re.escape(p) for p in longest_first) + r")", re.IGNORECASE)


_STOP = frozenset(
    "the a an and or but if then of to in on at for with is are was were be it this that what you your how why "
    "do does did can could would should will we they he she i me my our their its as by from so not no yes".split()
)


_SENTENCE_END = re.compile(r"[.?!]+(?:\s|$)")
_CUE_WORDS = frozenset(
    "about think explain tell more notice imagine suppose scenario consider like similar hint clue step steps "
    "break down start look great good nice job well done keep going right track wrong mistake careful correct "
    "sure really understand understanding mean means idea ideas question questions answer answers thing things "
    "let's lets yes okay remember try trying happen happens would could also just again another something".split()
)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD_RE.findall(text.lower()) if w not in _STOP and len(w) > 2)
