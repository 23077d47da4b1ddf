"""Is a tutor turn language at all? The well-formedness check the rule-based annotator runs first.

The annotator (:mod:`tutorzoo.envs.annotate`) reads labels from cue words and topic keywords, so text that merely
*contains* them — an untrained model's token salad ("largestMame thinking wrote Yes motater?ivalentessure ...
lemon? waves pushed"), or a string of keywords with no sentence around them — would otherwise earn strategies,
transfer, disciplines and L3. The project's standard is that detectors fail closed: a turn that is not
recognisable language earns nothing. This module decides that, deterministically and cheaply (a regex
tokenisation and set look-ups; the vocabulary is built once per process and cached).

A turn is **well formed** when all of these hold (``words`` = the turn's whitespace-separated chunks, lower
case, edge punctuation stripped; numbers, formulas, variables and option letters are not counted either way,
see :func:`words`):

1. it has at least :data:`MIN_WORDS` word(s) (``"??"`` or ``"42"`` alone is not a sentence);
2. at least :data:`MIN_KNOWN_SHARE` of its words (:data:`MIN_KNOWN_SHARE_SHORT` in a turn of fewer than
   :data:`SALAD_MIN_WORDS` words, where rules 3 and 4 do not apply) are *known*: in :func:`vocabulary`
   (every word of the project's own text: the STEM lessons, the math material, the MCQ bank, personas, the
   student's templates, the string literals of the task sets, the act templates and the tutors, the gold
   annotations, plus :data:`FUNCTION_WORDS`, :data:`COMMON_WORDS` and :data:`SOCIAL_WORDS`), directly or after
   stripping one common English suffix (``-s``, ``-ed``, ``-ing``, ...); a compound (``step-by-step``) when each
   part is; in a short turn with a greeting or another social word, a capitalised word is a name
   (``"Hello, Leo!"``);
3. a turn of at least :data:`SALAD_MIN_WORDS` words has at least :data:`MIN_FUNCTION_SHARE` function words
   (:data:`FUNCTION_WORDS`: articles, pronouns, prepositions, auxiliaries, conjunctions): English sentences
   are held together by them, a string of content words ("photosynthesis gravity imagine fraction why") is
   not;
4. and such a turn has known share + function share >= :data:`MIN_LANGUAGE_SCORE`: a fluent tutor may use
   many words the project never does, but then its sentences are held together by function words (English
   prose: about 0.35 of its words), whereas token salad has both few known and few function words.

Thresholds were tuned on the 324 gold tutor utterances (``eval/data/gold_annotations.jsonl``: none flagged;
none either with the gold set left out of the vocabulary),
every distinct turn of every built-in tutor (socratic, lecturer, random and the ``adv_*`` probes over the math,
stem and mcq task sets, 5 seeds x every persona, 3,300 distinct turns: none flagged), English prose outside the
project's vocabulary (837 sentences of the source papers, citations and acronyms included: 8% flagged, a
pessimistic bound for a fluent model's tutoring talk), the turns of an untrained tiny model
(``python -m tutorzoo.train.tiny_model``; 96 turns of the train-sft suite: all flagged) and 600 strings of 5-150 random
tokens
of its tokenizer (586 flagged; those that pass happen to be mostly words).
It checks language, not teaching: the ``adv_*`` probes' cue-word turns are sentences and pass (the content gate,
:mod:`tutorzoo.rewards.gate`, and the student model deal with them); word salad sprinkled with function words, or in
fewer than :data:`SALAD_MIN_WORDS` words, is not caught. English only.

What the annotator does with a turn that fails (see :mod:`tutorzoo.envs.annotate`): the labels that give no credit —
``intent="check_understanding"`` (the one intent SID's SC does not count), ``strategy=None`` (SD, SV),
``guidance_level="L1"`` (L3GR; the lowest Bloom demand), ``disciplines`` = the previous turn's disciplines
(the task's main discipline on the first turn; so the turn neither brings nor resets a discipline),
``discipline_transfer=False`` (IKT), ``target_kc=None`` and ``addresses_misconception=None``,
``is_question=False``, ``invalid=True``. The simulated student (``agents/student/model.py`` ``respond``) treats
such a turn as about nothing: no mastery, misconception, memorised answer or Bloom change, engagement drops,
and it replies off topic labelled ``expression_difficulty``, as after an empty turn; rewards' content gate and
format penalty treat the turn as unusable.
The answer-leak check still runs on it (a leak in gibberish is still a leak) and ``[END]`` still ends the session.

Example::

    from tutorzoo.envs.wellformed import check
    check("Imagine you cut a pizza into 6 slices. What fraction is one slice?").ok      # True
    check("largestMame thinking wrote Yes motater?ivalentessure donengthium?").reason  # 'unknown words ...'
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MIN_WORDS = 1
MIN_KNOWN_SHARE = 0.5
MIN_KNOWN_SHARE_SHORT = 0.75
SALAD_MIN_WORDS = 6
MIN_FUNCTION_SHARE = 0.1
MIN_LANGUAGE_SCORE = 0.9

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")
_EDGE = re.compile(r"^[^a-z0-9]+|[^a-z0-9]+$")
_EDGE_CASED = re.compile(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$")
_COMPOUND = re.compile(r"[-/.\u2013\u2014]+")
_TWO_LETTERS = re.compile(r"[a-z]{2}")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")  # what _EDGE keeps at a chunk's edges
_ASCII_DIGIT = re.compile(r"[0-9]")
# LaTeX: the words of \text{...} and its kin are words; every other command (\frac, \sqrt, \begin{aligned}), brace,
# math delimiter and alignment mark is formula, so a chat model's typeset maths is not read as unknown words.
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mathit|operatorname|emph)\s*\{([^{}]*)\}")
_LATEX_MARK = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}|\\[A-Za-z]+\*?|\\.|[{}$&]")
_SUFFIXES = ("'s", "s", "es", "ed", "d", "ing", "ly", "er", "est", "ers", "ness", "ment", "ful", "al", "y")

# Function words: closed-class English (articles, pronouns, prepositions, auxiliaries, conjunctions, common
# determiners and adverbs). Their share separates sentences from word salad.
FUNCTION_WORDS: frozenset[str] = frozenset(
    """a an the this that these those there here some any each every no not all both either neither
    i me my mine myself you your yours yourself we us our ours ourselves he him his himself she her hers herself
    it its itself they them their theirs themselves one ones who whom whose which what whatever whichever
    where when why how whether
    am is are was were be been being do does did done doing have has had having will would shall should can
    could may might must ought
    i'm you're we're they're he's she's it's that's what's there's here's let's who's where's how's
    i've you've we've they've i'd you'd we'd they'd he'd she'd i'll you'll we'll they'll it'll that'll
    don't doesn't didn't isn't aren't wasn't weren't won't wouldn't can't couldn't shouldn't haven't hasn't
    hadn't mustn't
    of to in on at by for with from into onto upon about above below over under between among through during
    before after since until till against without within along across around behind beside besides beyond
    near off out up down per than like unlike toward towards via
    and or but nor so yet if then else because although though while unless once as also too very just only
    even still already again ever never always often sometimes more most less least much many few
    such same other another own let yes""".split()
)

# Common English words beyond the project's own text: everyday verbs, nouns, adjectives and adverbs a tutor
# uses that the curriculum may happen not to, so that a fluent model is not flagged for its vocabulary.
COMMON_WORDS: frozenset[str] = frozenset(
    """able accept across act action actually add advice afraid agree ahead allow almost alone along already
    alright amazing answer anybody anyone anything anyway anywhere apart approach area argue arrive ask asked
    aspect attempt attention aware away awesome bad basic basically become begin beginning believe belong best
    better big bit body book bother box brain brief bring build busy buy call calm came care careful carefully
    carry case catch cause certain certainly chance change check choice choose claim class clear clearly
    close come common complete completely concept confused confusing consider continue correct correctly cost
    couple course create curious cut deal decide deep definitely describe detail details different difficult
    discuss discussion dive does easy effort else end enjoy enough entire especially everybody everyone
    everything everywhere exactly example excellent excited expect experience explain explanation explore
    express fact fair fairly fall familiar far fast feel feeling fill final finally find fine finish follow
    forget form forward found free friend full fun further game gave general generally get give given glad
    go goal going gone good got great group grow guess guide happen happy hard hear help helpful hold hope
    huge idea imagine important include indeed instead interesting job keep kind knew know knowledge
    large last later learn learning least leave left less lesson level life light likely line list listen
    little live long look lot love low made main make making matter maybe mean meaning meant mind minute
    mistake moment move name nearly necessary need new next nice note nothing notice now number obviously
    offer okay old open opinion order otherwise part particular pay perfect perhaps person pick piece place
    plan play please point possible practice precisely prefer pretty probably problem process progress
    proud put question quick quickly quite rather reach read ready real realize really reason recall
    recognize remember repeat rest result right room rule run said say saw second see seem seen sense set
    share short show side similar simple simply since sit small solve somebody someone something sometimes
    somewhere soon sort sound speak special spend spot stand start stay step stop story strong stuck student
    study stuff suggest sure surprise take talk task teach teacher tell term test thank thanks thing things
    think thinking thought time today together told took topic total totally toward tricky true truly try
    turn type understand understanding until use used useful usual usually value view walk want watch way
    welcome well went whole wide win wish wonder wonderful word words work world worry worth write wrong
    year yesterday young""".split()
)

# Greetings, farewells, thanks and short social replies: a tutor's "Hello!" or "Bye, Sam!" is a turn in a
# language, with no content (the annotator and the student give it no credit), not an invalid one.
SOCIAL_WORDS: frozenset[str] = frozenset(
    """hello hallo hullo hi hey hiya howdy greetings morning afternoon evening night goodnight bye goodbye
    farewell cheers cheerio congrats congratulations welcome thank thanks thx ty please sorry pardon excuse
    ok okay alright sure yep yup yeah nope hmm hm um uh ah oh wow oops yay hooray bravo nice cool great
    awesome super fantastic lovely splendid""".split()
)
# A name addressed in a short social turn ("Good afternoon, Leo."): one capitalised word of letters.
_NAME = re.compile(r"[A-Z][a-z]+")

_PROJECT_TEXT_GLOBS = (
    "envs/configs/lessons/*.yaml",  # package data: a link to configs/ in a checkout (envs/resources.py)
    "envs/configs/personas/*.yaml",
    "envs/tasks/math/*.yaml",
    "envs/tasks/data/*.yaml",
    "envs/tasks/data/*.json",
    "agents/student/*.yaml",
    "rewards/gate_words.yaml",
    "eval/data/gold_annotations.jsonl",
)
_PROJECT_SOURCE_GLOBS = (
    "envs/act_text.py",
    "envs/annotate.py",
    "envs/tasks/*.py",
    "envs/tasks/math/*.py",
    "agents/tutor/*.py",
    "agents/student/*.py",
)


@dataclass(frozen=True)
class Wellformedness:
    """The verdict on one turn: ``ok`` and, when not, the ``reason`` (which rule failed, with its numbers)."""

    ok: bool
    reason: str | None
    n_words: int
    known_share: float
    function_share: float


def words(text: str) -> list[str]:
    """The words the check counts: the lower-case whitespace-separated chunks, edge punctuation stripped.

    A chunk with a digit (a number, a unit like ``10cm``, a formula like ``CO2`` or ``3x+2``) or without two
    letters in a row (a variable, an option letter, a symbol) is neither a word nor a non-word and is left out;
    ``a`` and ``i`` are words. LaTeX commands, braces and ``$`` are formula too (the words of ``\\text{...}``
    count). A chunk is kept whole, so glued fragments (``motater?ivalentessure``,
    ``were2ilthise``) stay one unknown word rather than splitting into accidental known ones.
    """
    if "\\" in text or "$" in text:
        text = _LATEX_MARK.sub(" ", _LATEX_TEXT.sub(r" \1 ", text))
    out = []
    for chunk in text.lower().replace("\u2019", "'").split():
        if chunk[0] not in _ALNUM or chunk[-1] not in _ALNUM:  # (a chunk with clean edges has nothing to strip)
            chunk = _EDGE.sub("", chunk)
        if chunk in ("a", "i") or (_TWO_LETTERS.search(chunk) and not _has_digit(chunk)):
            out.append(chunk)
    return out


def _has_digit(chunk: str) -> bool:
    # for ASCII, str.isdigit is exactly 0-9: one regex scan instead of a generator over the characters
    if chunk.isascii():
        return _ASCII_DIGIT.search(chunk) is not None
    return any(c.isdigit() for c in chunk)


def check(text: str) -> Wellformedness:
    """Whether ``text`` is recognisable language (module docstring: the four rules)."""
    ws = words(text)
    n = len(ws)
    if n < MIN_WORDS:
        return Wellformedness(False, f"fewer than {MIN_WORDS} word(s)", n, 0.0, 0.0)
    vocab = vocabulary()
    if n < SALAD_MIN_WORDS and any(w in SOCIAL_WORDS for w in ws):
        vocab = vocab | _names(text)
    known = sum(1 for w in ws if w in vocab or _known(w, vocab))  # (most words are in vocab: no call for them)
    function = sum(map(FUNCTION_WORDS.__contains__, ws))
    known_share, function_share = known / n, function / n
    floor = MIN_KNOWN_SHARE if n >= SALAD_MIN_WORDS else MIN_KNOWN_SHARE_SHORT
    if known_share < floor:
        return Wellformedness(False, f"unknown words: {known}/{n} known < {floor}", n, known_share, function_share)
    if n >= SALAD_MIN_WORDS and function_share < MIN_FUNCTION_SHARE:
        return Wellformedness(False, f"word salad: {function}/{n} function words < {MIN_FUNCTION_SHARE}", n,
                              known_share, function_share)
    if n >= SALAD_MIN_WORDS and known_share + function_share < MIN_LANGUAGE_SCORE:
        return Wellformedness(False, f"not language: known share {known_share:.2f} + function share "
                              f"{function_share:.2f} < {MIN_LANGUAGE_SCORE}", n, known_share, function_share)
    return Wellformedness(True, None, n, known_share, function_share)


def _names(text: str) -> frozenset[str]:
    """The capitalised words of ``text`` (lower case), read as names beside a greeting."""
    return frozenset(c.lower() for c in (_EDGE_CASED.sub("", chunk) for chunk in text.split()) if _NAME.fullmatch(c))


def is_wellformed(text: str) -> bool:
    """``check(text).ok``."""
    return check(text).ok


def _known(word: str, vocab: frozenset[str]) -> bool:
    """A known word, or a compound (``step-by-step``, ``km/h``, ``e.g``) whose every part is one."""
    if word in vocab:
        return True
    return all(len(part) == 1 or _known_part(part, vocab) for part in _COMPOUND.split(word) if part)


def _known_part(word: str, vocab: frozenset[str]) -> bool:
    if not _WORD.fullmatch(word):
        return False  # letters glued to symbols: not a word
    if word in vocab:
        return True
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and word[: -len(suffix)] in vocab:
            return True
    return word.endswith(("ied", "ies")) and word[:-3] + "y" in vocab  # simplified, bodies


_VOCABULARY_LOCK = threading.Lock()
_VOCABULARY: frozenset[str] | None = None


def vocabulary() -> frozenset[str]:
    """Every word of the project's own text plus :data:`FUNCTION_WORDS` and :data:`COMMON_WORDS` (built once).

    Built under a lock: episodes played on threads (the lockstep engine, the OpenEnv server) may ask for it at
    once, and CPython 3.11's ``ast.parse`` run from several threads together can fail ("AST constructor recursion
    depth mismatch")."""
    global _VOCABULARY
    if _VOCABULARY is None:
        with _VOCABULARY_LOCK:
            if _VOCABULARY is None:
                _VOCABULARY = _build_vocabulary()
    return _VOCABULARY


def _build_vocabulary() -> frozenset[str]:
    found: set[str] = set(FUNCTION_WORDS) | set(COMMON_WORDS) | set(SOCIAL_WORDS)
    for pattern in _PROJECT_TEXT_GLOBS:
        for path in sorted(ROOT.glob(pattern)):
            found.update(_WORD.findall(_read(path).lower()))
    for pattern in _PROJECT_SOURCE_GLOBS:
        for path in sorted(ROOT.glob(pattern)):
            for literal in _string_literals(_read(path)):
                found.update(_WORD.findall(literal.lower()))
    if len(found) < 1000:  # the project's text is missing: every turn would fail, and silently
        raise RuntimeError(f"tutorzoo.envs.wellformed: only {len(found)} vocabulary words found under {ROOT}; "
                           "the lesson and task files must be installed with the package")
    return frozenset(found)


def _read(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json" or path.suffix == ".jsonl":
        return text.replace("\\n", " ")
    return text


def _string_literals(source: str) -> list[str]:
    """The string constants of a Python source (templates, cue phrases, docstrings), not its identifiers."""
    return [node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


__all__ = ["COMMON_WORDS", "FUNCTION_WORDS", "SOCIAL_WORDS", "Wellformedness", "check", "is_wellformed", "vocabulary",
           "words"]
