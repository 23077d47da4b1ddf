""":class:`ContentReader`: a turn read sentence by sentence into :class:`~tutorzoo.envs.reading.claims.Claim` s, math
and propositions alike, with frames, carried steps and counterexamples contrasted across the turn.

Example::

    reader = ContentReader.for_task(task)
    reading = reader.read("Let's check: 1/2 + 1/3 = 3/6 + 2/6 = 5/6. What is 1/4 + 1/3?")
    reading.kc, [c.verdict for c in reading.claims]"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import replace
from fractions import Fraction
from typing import cast

from tutorzoo.envs.reading.chains import (
    LCD,
    MATH_SPAN,
    STEP_WORDS,
    UNKNOWN_X,
    continued,
    fill_blank,
    first_equation,
    named_problem,
    relation_chains,
    said_aside,
    steps_in_words,
    substituted,
    undone_and_checked,
)
from tutorzoo.envs.reading.claims import EMPTY, FALSE, TRUE, Claim, Reading, demand_of
from tutorzoo.envs.reading.expressions import (
    REL,
    Lin,
    Node,
    check_relation,
    constant_of,
    is_decimal,
    is_fraction,
    op_set,
    parse,
    subtrees,
    written_tokens,
)
from tutorzoo.envs.reading.frames import (
    DENIAL,
    DENIED_AFTER,
    ENDORSEMENT,
    REPORT_FRAME,
    REPORTED,
    RETRACTION,
    WARNING,
    negated_claim,
    quoted_claim,
)
from tutorzoo.envs.reading.matcher import match_proposition
from tutorzoo.envs.reading.material import WORD, bounded, material_of
from tutorzoo.envs.reading.normalise import (
    CONVERT_ASKED,
    FILLER,
    UNITS_ASKED,
    asked_quantity,
    compared_asked,
    marked_blanks,
    normalise,
    plain_text,
    sentences,
)
from tutorzoo.envs.reading.numbers import ANY_DIGIT, DIGIT_RUN, no_digits
from tutorzoo.envs.reading.operations import operations
from tutorzoo.envs.reading.propositions import (
    content_stems,
    stated_numbers,
    stem,
)
from tutorzoo.envs.reading.wrong_rules import (
    WRONG_RULES,
    infer_rule,
    pct_value,
    rule_no_regrouping,
    wrong_value,
    wrong_verdict,
)
from tutorzoo.envs.tasks.base import Task

MAX_FRAMES = 8  # frames read inside one another: more is no sentence a tutor writes (and bounds the recursion)


class ContentReader:
    """Reads tutor turns for one task. Build once per episode (:meth:`for_task` caches per task)."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self._ready = False  # the task's material is found at the first read (an episode may read no turn)
        self._template: tuple[Node, Node] | None = None  # the equation of the turn being read (or the task's)
        self._readings: dict[str, Reading] = {}  # this reader's readings: they go when the reader goes
        self._task_words: dict[str, frozenset[str]] = {}  # (the same, for task_words)
        self._depth = 0  # how many frames deep the sentence being read is
        # per math claim of the turn being read (by id): the misconceptions whose rule differs on its case, with
        # the value each rule gives there, whether it is a relation asked about, and the numbers it is written with
        # (the claim itself is kept, so its id is not reused within the turn)
        self._pending: dict[int, tuple[Claim, dict[str, Fraction | None], bool, frozenset[str]]] = {}

    @functools.cached_property
    def _task_sides(self) -> tuple[Node, Node] | None:
        """The two sides of the task's own equation in x, if it has one: a number put for x in them checks a
        solution ("2(5) + 20 = 30")."""
        found = first_equation(self.task.statement)
        return found[1:] if found else None

    @classmethod
    def for_task(cls, task: Task) -> ContentReader:
        return _reader(task)

    def read(self, text: str) -> Reading:
        if not text or not text.strip():
            return EMPTY
        if not self._ready:
            self._prepare()
        return bounded(self._readings, text, lambda: self._read(text), 1024)

    def _prepare(self) -> None:
        task = self.task
        self._mis = {m.id: m for m in task.misconceptions}
        # the curriculum's misconceptions have their rules (or none, by design); a user's own task gets inferred ones
        self._rules = {} if task.task_set in ("math", "stem") else {
            m.id: r for m in task.misconceptions if m.id not in WRONG_RULES and (r := infer_rule(m.id, task))}
        # everything else depends on the task's words alone (in math, not on the draw's numbers): shared by the
        # readers of every task with the same material, found by a fingerprint of its texts
        (self.kc_ids, self._kc_ops, self._kc_words, self._mis_by_kc, self._topic, self._names, self.props,
         self._by_stem, self._matched, self._mask, self._bank, self._link_material) = material_of(task)
        self._ready = True

    def task_words(self, text: str) -> frozenset[str]:
        """The stems of ``text`` that are the task's words (see :attr:`_vocabulary`): what a turn says of the task,
        without its greeting, its layout's words or its filler."""
        if not self._ready:
            self._prepare()
        return bounded(self._task_words, text, lambda: content_stems(text)[0] & self._vocabulary, 1024)

    @functools.cached_property
    def _vocabulary(self) -> frozenset[str]:
        """The stems of the task's statements (its facts, beliefs and refutations; not the wording of its question
        bank, "A friend says …") and of its components' names and keywords (shared by the readers of one
        material)."""
        found = _VOCABULARIES.get(id(self.props))
        if found is None or found[0] is not self.props:
            if len(_VOCABULARIES) >= 256:  # (bounded, as the materials are)
                _VOCABULARIES.clear()
            found = _VOCABULARIES[id(self.props)] = (self.props, frozenset(
                s for p in self.props if p.kind != "question" for s in p.stems) | self._topic)
        return found[1]

    @functools.cached_property
    def _name_stems(self) -> dict[str, frozenset[str]]:
        """Per component, the stems of its name ("Order of operations": order, oper)."""
        return {k.id: content_stems(k.name)[0] for k in self.task.knowledge_components}

    @functools.cached_property
    def _questions(self) -> tuple[tuple[str, str], ...]:
        """The lesson's practice questions in this draw's numbers: (component, text)."""
        return tuple((k.id, q.text) for k in self.task.knowledge_components for q in k.questions)

    def _prompt_text(self, where: tuple[int, int]) -> str:
        """The text, in this draw's numbers, of the practice-question prompt at ``where`` (question, sentence; -1:
        the whole question) of :attr:`_bank`."""
        question = self._questions[where[0]][1]
        if where[1] < 0:
            return question
        parts = sentences(question)
        return parts[where[1]] if where[1] < len(parts) else question

    def _bank_fits(self, text: str, asked: bool, whole: bool) -> str | None:
        """The component of the one practice question (``whole``: of two sentences or more, else its prompt)
        ``text`` puts nearly word for word, if exactly one component's fits (see :meth:`_bank_question`). (The
        numbers, the costly part, are compared only where the words fit; the words are read without the digits,
        the same in every draw of a math task.)"""
        stems = content_stems(no_digits(text))[0]
        words: str | None = None
        numbers: frozenset[Fraction] | None = None
        bank = self._bank
        if stems and len(stems & bank.stems) < 0.75 * len(stems):
            return None  # (most sentences: a quarter of their words or more are no practice question's)
        on = set()
        hits = Counter(i for st in stems for i in bank.by_stem.get(st, ()))
        for i in sorted(hits) if stems else bank.wordless:
            kc, q, where, opening, entire = bank.entries[i]
            if entire != whole:
                continue
            shared = hits[i]
            overlap = shared >= 0.75 * len(q) and shared >= 0.75 * len(stems)
            if not (overlap or stems == q and asked):
                continue
            if not asked:
                if opening is None:
                    continue
                words = " ".join(WORD.findall(text.lower())) if words is None else words
                if not re.search(rf"\b{re.escape(opening)}\b", words):
                    continue
            numbers = stated_numbers(text) if numbers is None else numbers
            qn = stated_numbers(self._prompt_text(where))
            if numbers == qn and (q or qn) and (stems == q and asked if len(q) + len(qn) < 2 else overlap):
                on.add(kc)
        return on.pop() if len(on) == 1 else None

    def _bank_question(self, sent: str, context: str) -> tuple[str | None, bool]:
        """The component of the lesson's practice question ``sent`` puts nearly word for word (three quarters of
        its content words each way, the same numbers; a prompt in the imperative in its opening words, "Name two
        …"), if exactly one component's question fits -- its prompt alone or the whole question with the sentence
        before, ``context`` (a prompt of one word, "Analyse why.", only so; "What is runoff?" must be asked in just
        that word) -- and whether ``context`` is the case that question sets up ("A clock loses 3 minutes each
        day. Which way should the bob be moved, and why?")."""
        asked = sent.rstrip().endswith("?")
        alone = self._bank_fits(sent, asked, False)
        own = len(content_stems(no_digits(sent))[0])
        short = alone is None and own < 2 and own + len(stated_numbers(sent)) < 2
        posed = self._bank_fits(f"{context} {sent}", asked, True) if context and (alone is not None or short) \
            else None
        if alone is not None:
            return alone, posed == alone
        return posed, posed is not None

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
        text = marked_blanks(plain_text(text))
        norms: list[str] = []  # each sentence normalised (a wrong rule's result said aside sets up a contrast)
        spoken: set[str] = set()  # misconceptions the turn names in words (stated, quoted, denied or refuted)
        # the sentence a retraction or an endorsement after it applies to: (first claim, end, what it said)
        target: tuple[int, int, str] | None = None
        # ``x = 9`` is checked against the equation the turn works on (its first full equation), never the task's:
        # the turn may work another equation, said before
        own = first_equation(text)
        reference: Lin | None = own[0] if own else None
        # a number put for the unknown in these sides checks a solution ("2(5) + 20 = 30"): the turn's, else the task's
        self._template = own[1:] if own else self._task_sides
        solving: list[int] = []  # the questions that ask for an equation's solution ("Solve 3x = 15.")
        before = 0  # how many math claims the sentence before made
        carry: list = []  # the last true step's (value, expression): "9 × 10 = 90; 90 ÷ 2 = 45" goes on from it
        problem: tuple[str, str] | None = None  # "Let's solve 6 + 4 × 8.": the expression the turn works out
        prev = ""
        prompts: set[int] = set()  # the questions set as a task in the imperative (ids of their claims)
        start = 0
        words: set[str] = set()  # the turn's content stems (its sentences', read without their digits)
        for sent in sentences(text):
            words |= content_stems(no_digits(sent))[0]
            # "Myth: heavy things sink.": a label before a colon frames what follows it
            framed = prev.endswith(":") and bool(REPORTED.search(prev))
            context, prev = prev, sent.rstrip()
            stated = claims[start:]  # what the sentence before said
            earlier, start = start, len(claims)
            if target is not None and not ANY_DIGIT.search(sent) and (
                    (retracted := RETRACTION.match(sent)) or ENDORSEMENT.match(sent)):
                # "… Actually, no: that is false.", "Some say that …. And they are right."
                t0, t1, what = target
                inner = self._inner(what)
                claims[t0:t1] = [negated_claim(c) for c in inner] if retracted else inner
                target, before = None, 0
                continue
            denial = DENIAL.match(sent)
            tail = len(sent) - 48  # (a closing denial is short: only the sentence's end is searched)
            after = None if denial else DENIED_AFTER.search(sent, max(0, tail))
            if denial and sent[denial.end():].strip() or after and after.start() > 0:
                # "It is a myth that …", "You may have heard that …, but that's wrong.": the proposition, negated
                what = sent[denial.end():] if denial else sent[:after.start()] if after else sent
                if (reported := REPORT_FRAME.match(what)) and what[reported.end():].strip():
                    what = what[reported.end():]
                claims += [negated_claim(c) for c in self._inner(what)]
                target, before = (start, len(claims), sent), 0
                continue
            norm = normalise(sent)
            if "really" in norm or "actually" in norm or "truly" in norm:  # "Is 1/2 really < 1/3?" asks 1/2 < 1/3
                norm = FILLER.sub("", norm)
            norms.append(norm)
            asked = sent.rstrip().endswith("?") or bool(_PROMPT.search(sent))
            if _SOLVE.match(sent) and (posed := first_equation(sent)) is not None:
                # "… x = 5. Solve 4x = 28: … x = 7.": a new equation posed; what follows is checked against it
                reference, self._template = posed[0], posed[1:]
            # no digit, no checkable relation or computable question
            math_claims, reference = self._math(norm, asked, sent, reference, carry) if ANY_DIGIT.search(norm) \
                else ([], reference)
            if not math_claims and not asked and problem is not None and (
                    m := _ANSWER.search(f"answer: {norm}" if _ANSWER_LABEL.search(context) else norm)) \
                    and len(DIGIT_RUN.findall(norm)) == len(DIGIT_RUN.findall(f"{m.group(1)} {m.group(2) or ''}")):
                # "So our final answer is 38.": the result of the expression the turn set out to work
                said = parse(m.group(1))
                if said is not None and (said.op == "num" or is_fraction(said)):
                    math_claims = self._math(f"{problem[0]} = {m.group(1)}", False, f"{problem[1]} {sent}",
                                             None, [])[0]
            if not math_claims and not asked and ANY_DIGIT.search(norm) and not REL.search(norm):
                named = named_problem(norm, written=bool(_PROBLEM_LABEL.search(context)))
                if named is not None:
                    problem = (named, sent)
            if problem is not None and math_claims and problem[0] in norm:
                problem = None  # the turn writes the computation it set out to work in a relation: worked already
            if math_claims and "x" in norm and UNKNOWN_X.search(norm):
                if any(c.question and c.kc is not None for c in math_claims):
                    solving += [len(claims) + i for i, c in enumerate(math_claims) if c.question]
                elif solving and _SOLVED.search(norm) and any(c.verdict == TRUE for c in math_claims):
                    # "Solve 3x = 15: x = 5.": the turn answers what it asked; the solution is a statement
                    claims = [c for i, c in enumerate(claims) if i not in solving]
                    solving = []
            if not math_claims and asked and before and _ASKS_UNKNOWN.search(sent) and not ANY_DIGIT.search(norm):
                # "x + 10 = 40. What goes in the blank?": the equation said before is what is asked
                idx = range(len(claims) - before, len(claims))
                if all(claims[i].kc is not None and not claims[i].question and claims[i].verdict == TRUE
                       and "x" in context and UNKNOWN_X.search(context) for i in idx):
                    for i in idx:
                        claims[i] = self._moved(claims[i], replace(claims[i], question=True,
                                                                   demand=demand_of(sent, math=True)))
                    solving += list(idx)
                    before = 0
            if any(c.verdict == FALSE for c in math_claims) and (
                    framed or REPORTED.search(sent) or WARNING.search(sent) or REPORT_FRAME.match(sent)):
                # "A common mistake is to write 1/2 + 1/3 = 2/5", "your rule gives 19": quoted, not asserted
                math_claims = [self._moved(c, quoted_claim(c)) for c in math_claims]
            before = len(math_claims)
            claims += math_claims
            if not math_claims:
                if not asked and _PROMPT_BEFORE.search(sent):
                    asked = True
                found = self._facts(sent, asked, framed)
                if asked and context and not ANY_DIGIT.search(norm) and ANY_DIGIT.search(context) \
                        and (not found or all(c.question for c in found)) and _ASKS_VALUE.search(sent) \
                        and not REL.search(prior := normalise(context)) and named_problem(prior, True) is not None:
                    # "Her total is 36 - 20 + 6 × 2. Evaluate it.", "A bike priced at $120 is reduced by 20%. How
                    # many dollars does it cost now?": the one computation the sentence before wrote out (not
                    # already worked: no relation in it) is what is asked for
                    found = [c for c in self._math(prior, True, f"{context} {sent}", None, [])[0]
                             if c.question and c.kc is not None] or found
                math = self.task.task_set == "math"
                if not found and asked and context and not _ABOUT_THE_STUDENT.search(sent) and (
                        demand_of(sent, math=math) != "transfer" or content_stems(sent)[0] & self._topic
                        or _ASKS_VALUE.search(sent)):
                    # "A sail is 10 m along the bottom, 5 m tall. What is its area?", "<fact> Why?": the sentence
                    # before, asked about; what is asked (its demand) is the asking sentence's. A transfer needs a case
                    # of its own: a bare transfer prompt ("Predict what would happen in general.", "How would an
                    # artist use this idea in another subject?") names nothing of the task to work on; "Why do you
                    # think so?" asks about the student's own idea, not the tutor's sentence before it
                    found = [replace(c, demand=demand_of(sent, math=math))
                             for c in self._facts(f"{context} {sent}", True) if c.question]
                if found and asked and context and all(c.question for c in found) and not ANY_DIGIT.search(norm) \
                        and _echo_question(sent, context, self._vocabulary, frozenset().union(
                            *(self._name_stems.get(c.kc or "", frozenset()) for c in found))) \
                        and all(
                            any(p.kc == c.kc and p.verdict == TRUE and not p.question for p in stated) for c in found):
                    # "Multiplication comes first. What did I just say?", "… Does that make sense?", "… So what comes
                    # first?": the statement before, asked back -- recalled from the turn itself (or a check that
                    # asks nothing), no question to work (no practice, no generation)
                    found = []
                claims += found
            else:
                found = self._facts(sent, asked, framed)
                if any(c.refutes for c in math_claims):  # the misconception a computation is set against, in words
                    spoken.update(m for c in found for m in (c.affirms, c.mentions, c.denies, *c.refutes) if m)
                else:  # a computation that is also the counterexample said
                    claims += [c for c in found if c.refutes and c.verdict == TRUE]
            on, posed = self._bank_question(sent, context)
            if on is not None:
                # one of the lesson's own practice questions, put as written ("Name two ways of protecting steel
                # from rust.", "What is 8 × 9, and …?"): a question on the component it is written for, whatever
                # its numbers' operations or its words alone would say; the case it sets up first is posed, not
                # asserted ("A clock loses 3 minutes each day." is no false statement)
                if posed and not solving:
                    kept = [c for c in claims[earlier:start] if c.verdict != FALSE]
                    claims[earlier:start] = kept
                    start = earlier + len(kept)
                found = claims[start:]
                if asked and any(c.question for c in found):
                    claims[start:] = [self._moved(c, replace(c, kc=on)) if c.question and c.kc != on else c
                                      for c in found]
                else:  # (an imperative prompt states nothing: it sets a task)
                    del claims[start:]
                    claims.append(Claim(on, TRUE, True, None, (), demand_of(sent, math=self.task.task_set == "math"),
                                        "fact"))
                    asked = True
            if asked and not sent.rstrip().endswith("?"):  # "Find the area: …", "Evaluate 6 + 4 × 8.": set as a task
                prompts.update(id(c) for c in claims[start:] if c.question)
            reported = REPORT_FRAME.match(sent)
            if len(claims) > start or reported or not sent.endswith(":"):
                # ("Actually, no:" is no sentence to retract: the one before it is)
                target = (start, len(claims), sent[reported.end():] if reported and sent[reported.end():].strip()
                          else sent)
        claims = answered_in_turn(claims, prompts)
        if self._pending:
            claims = self._contrasted(claims, norms, spoken)
        links = self._links_made(words)
        return Reading(tuple(claims), links) if claims or links else EMPTY

    def _links_made(self, stems: set[str]) -> tuple[tuple[str, str], ...]:
        """The links a turn of content stems ``stems`` makes: it says most of the link's bridge (three fifths of its
        content stems) or uses two of its keywords (its only one, if it has one)."""
        return tuple((kc, disc) for kc, disc, bridge, keywords in self._link_material
                     if (bridge and 5 * len(bridge & stems) >= 3 * len(bridge))
                     or (keywords and sum(1 for kw in keywords if kw <= stems) >= min(2, len(keywords))))

    def _contrasted(self, claims: list[Claim], norms: list[str], named: set[str]) -> list[Claim]:
        """Each math claim's counterexamples cut to the misconceptions whose contrast the turn states or asks for:
        it names the misconception (its belief stated, quoted or denied, its output quoted, a refutation of it
        said), asks about a relation on which its rule differs ("Is 1/2 really smaller than 1/3?"), or writes the
        number its rule gives on the case outside any relation it works ("1/2 + 1/2 = 1, not 2/4", "the wrong rule
        would give 2/5, but it is 5/6"). A true case alone ("In this case, 1/2 > 2/9.") or a question to work ("What
        is 1/4 + 1/3?") contrasts nothing."""
        pending = self._pending
        said = frozenset().union(*map(said_aside, norms)) if any(
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
        if ("add" in norm or "subtract" in norm or "ultiply" in norm or "ivide" in norm) and STEP_WORDS.search(norm):
            norm = steps_in_words(norm, carry[0][0] if carry else None)
        for chain in relation_chains(norm):
            parts = REL.split(chain)
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
                filled = fill_blank(nodes, rels)
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
                if node is None or constant_of(node) is None or node.op == "num":
                    continue
                out.append(self._claim(rels[0], [node], TRUE, question=True, raw=raw))
                continue
            if any(n is None for n in nodes) or len(nodes) < 2:
                continue
            nodes = cast("list[Node]", nodes)
            if reference is None and len(nodes) == 2 and nodes[0].op == "var" and nodes[1].op == "num":
                continue  # "x = 10." with no equation in the turn: nothing to check it against
            verdict, reference = check_relation(nodes, rels, reference)
            if verdict is None:
                continue
            # "6(5) + 16 = 30 + 16 = 46": a chain from the equation's side with a number for its unknown to its other
            # side checks a solution, every step of it
            checks = frozenset({"equation"}) if len(nodes) > 2 and rels[0] == "=" and self._template is not None \
                and substituted(self._template, [nodes[0], nodes[-1]]) else frozenset()
            # bare whole numbers equated (``5 = 5``, or prose read as ``3 = 30`` from "3 tens make 30") state
            # nothing checkable; decimals compared (``0.5 > 0.45``) and quantities with units (``3 km = 3000 m``) do
            if all(n.op == "num" for n in nodes) and "=" in rels and (
                    all("." not in n.text and not n.dim for n in nodes)
                    or any(n.dim for n in nodes) and not all(n.dim for n in nodes)):  # "= 50 000 cm": a number kept
                continue
            for i, (rel, (a, b)) in enumerate(zip(rels, zip(nodes, nodes[1:], strict=False), strict=False)):
                v = check_relation([a, b], [rel], reference)[0]
                if v is None:
                    continue
                if blank in (i, i + 1):
                    if rel == "=":
                        out.append(self._claim(rel, [a, b], TRUE, question=True, raw=raw))
                    continue
                whole = continued(a, carry) if v and rel == "=" else a
                # a continued step is the computation begun in the sentence before: "10% of 84 is 8.4. 84 - 8.4 =
                # 75.6" takes 10% off 84 though its own sentence says no "%"
                context = carry[0][2] if whole is not a else ""
                out.append(self._claim(rel, [whole, b], TRUE if v else FALSE, question=asked, raw=raw,
                                       context=context, also=checks))
                if v and rel == "=" and a.op not in ("num", "var") and b.op == "num" and b.value is not None:
                    carry[:] = [(b.value, whole, f"{context} {raw}" if context else raw)]
        if not out and asked and ((m := UNITS_ASKED.search(raw)) or (m := CONVERT_ASKED.search(raw))):
            # "How many cm are in 2 m?", "Convert 9500 m to km.": a conversion asked for
            amount, unit, to_unit = m.group(2, 3, 1) if m.re is UNITS_ASKED else m.group(1, 2, 3)
            n = parse(f"{amount} {unit}")
            to = parse(f"1 {to_unit}")
            if n is not None and to is not None and n.dim is not None and n.dim == to.dim \
                    and n.number * Fraction(to.text) != to.number * Fraction(n.text):  # "9500 m in m" asks nothing
                out.append(self._claim("=", [n, to], TRUE, question=True, raw=raw))
        if "common" in norm.lower() or "lc" in norm.lower():
            out += self._common_denominator(norm, asked, raw)
        if not out and asked and (compared := compared_asked(norm)) is not None:
            # "Which is larger, 0.2 or 0.21?": the right option against each other one, asked
            smaller, options = compared
            nodes = [parse(o) for o in options]
            values = [constant_of(n) if n is not None else None for n in nodes]
            if all(v is not None for v in values) and len(set(values)) == len(values):
                pick = (min if smaller else max)(range(len(nodes)), key=lambda i: cast(Fraction, values[i]))
                out += [self._claim("<" if smaller else ">", [cast(Node, nodes[pick]), cast(Node, n)], TRUE,
                                    question=True, raw=raw) for i, n in enumerate(nodes) if i != pick]
        if not out and asked and (said := asked_quantity(norm)) is not None and (node := parse(said)) is not None:
            # "What is the perimeter of a 4 by 3 rectangle?", "How long is 120 km at 40 km/h?": the quantity asked
            out.append(self._claim("=", [node], TRUE, question=True, raw=raw))
        if not out and asked:
            # "What is 1/2 + 1/3?": an expression asked for
            for span in MATH_SPAN.findall(norm):
                node = parse(span.strip(" ?.,"))
                if node is not None and constant_of(node) is not None and (op_set(node) & {"+", "-", "*"} or (
                        node.op == "/" and not is_fraction(node))):
                    out.append(self._claim("=", [node], TRUE, question=True, raw=raw))
                    break
        return out, reference

    def _common_denominator(self, norm: str, asked: bool, raw: str) -> list[Claim]:
        """"The LCD of 4 and 6 is 12" (the least common multiple), "a common denominator of 4 and 6 is 24" (a
        multiple of both), or asked for ("What is the LCD of 4 and 6?")."""
        m = LCD.search(norm)
        kcs = [k for k in self.kc_ids if {"frac_add_unlike", "rename"} <= self._kc_ops[k]]  # renaming to add
        if m is None or not kcs:
            return []
        a, b = int(m.group(2)), int(m.group(3))
        if a <= 0 or b <= 0:
            return []
        if asked:
            return [Claim(kcs[0], TRUE, True, demand=demand_of(raw, math=True))]
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
                self._template is not None and substituted(self._template, nodes)
                or undone_and_checked(nodes[0], nodes[1])):
            ops.add("equation")
        if "precedence" not in ops and says_division and any(
                "/" in (flat := op_set(n)) and {"+", "-"} & flat for n in nodes):
            # "12 - 8 ÷ 4": the sign says the "/" is a division, not a fraction's bar
            ops.add("precedence")
        percent_like = any(pct_value(n) is not None or n.op == "*" or is_decimal(n) for s in nodes for n in subtrees(s))
        if says_percent and percent_like:
            ops.add("percent")
        # a step continued from a percent step is checked against the percent misconceptions too (its component
        # is still the one its own sentence performs)
        extra = {"percent"} if context and percent_like and _PERCENT_WORD.search(context) else set()
        if "whole_add" in ops:
            for n in nodes:
                r = rule_no_regrouping(n)
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
            wrong = wrong_verdict(mid, rel, nodes, rule)
            if wrong is None:
                continue
            truth, rule_says = wrong
            if verdict == FALSE and not question and rule_says:
                affirms = affirms or mid
            elif (verdict == TRUE or question) and truth != rule_says:
                refutes.append(mid)
                values[mid] = wrong_value(mid, rel, nodes, rule)
        # a false claim also exercises its component wrongly: keep the KC so mastery can fall
        demand = demand_of(raw, math=True) if question else None
        claim = Claim(kc, verdict, question, affirms, tuple(refutes), demand)
        if refutes:  # a candidate counterexample: the turn must state or ask for its contrast (:meth:`_contrasted`)
            self._pending[id(claim)] = (claim, values, question and len(nodes) == 2, written_tokens(nodes))
        return claim

    # -- propositions
    def _facts(self, sent: str, asked: bool, framed: bool = False) -> list[Claim]:
        """The proposition ``sent`` states (memoised per material: it depends on the sentence's words alone)."""
        key = (self._mask(sent), asked, framed, self._names.pattern if self._names is not None else None)
        return list(bounded(self._matched, key, lambda: tuple(match_proposition(
            sent, asked, framed, self.props, self._by_stem, self._topic, self._names)), 8192))


WORKED_AFTER = 2  # true statements on a component after a problem set in the imperative: its worked solution


# the words of a request to say back what was just said ("What did I just say about it?", "Can you repeat that rule?"),
# and of a check that asks nothing ("Does that make sense?", "Got it?", "Is that clear?")
_ECHO_WORDS = frozenset({"say", "said", "repeat", "rule", "tell", "told", "again", "remember", "state", "fact",
                         "idea", "just", "word", "back", "make", "sense", "understand", "understood", "clear", "got",
                         "right", "follow", "okay", "see", "know", "true", "false"})
_ECHO_STEMS = frozenset(stem(w) for w in _ECHO_WORDS)


def _echo_question(question: str, before: str, vocabulary: frozenset[str],
                   named: frozenset[str] = frozenset()) -> bool:
    """Whether ``question`` asks for nothing but the sentence ``before`` said back: it brings no content of its own
    beyond the words of ``before``, of a request to repeat and of the name of the component it is on (``named``:
    "What did I just say about the order of operations?"), and asks no why or how (an explanation asked for is
    a question to work, even about the sentence before). A form of address set off by commas ("…, buddy?",
    "…, my young friend?": a short segment with no word of the task's material, ``vocabulary``) brings nothing."""
    if demand_of(question, math=False) in ("explain", "transfer"):
        return False
    segments = [seg for seg in question.split(",") if seg.strip()]
    main = max(segments, key=len, default=question)  # the question's own clause, never an address
    kept = [seg for seg in segments if seg is main or not _address(seg, vocabulary)]
    own = content_stems(" ".join(kept))[0] - content_stems(before)[0] - named
    return own <= _ECHO_STEMS


# per material (by its propositions' identity): the propositions and their vocabulary (ContentReader._vocabulary)
_VOCABULARIES: dict[int, tuple[tuple, frozenset[str]]] = {}

# a comma-set segment opening with one of these carries a clause of its own ("…, or does it break here?")
_CLAUSE_OPENERS = frozenset({"or", "and", "but", "if", "when", "because", "since", "so", "then", "what", "why",
                             "how", "which", "where", "who", "whether", "unless", "than"})


def _address(segment: str, vocabulary: frozenset[str]) -> bool:
    """Whether a comma-set ``segment`` of a question is a form of address or a tag ("buddy", "my young friend",
    "champ"): at most three words, none of the task's material, none opening a clause."""
    words = WORD.findall(segment.lower())
    return 0 < len(words) <= 3 and words[0] not in _CLAUSE_OPENERS and not (content_stems(segment)[0] & vocabulary)


def answered_in_turn(claims: list[Claim], prompts: set[int]) -> list[Claim]:
    """The claims without the problems the turn works itself: a problem set in the imperative ("Find the area:",
    "Evaluate 35 - 12 + 5 × 8.", the ids in ``prompts``) and followed by two or more true statements on its
    component (its worked solution) is a worked example shown to the student, not a question put to it. A question
    asked ("… ?"), a problem with one hint after it, or one asked again after the steps ("… What do you get?")
    stays asked."""
    last: dict[str, int] = {}
    for i, c in enumerate(claims):
        if c.question and c.kc is not None:
            last[c.kc] = i
    worked = {kc for kc, i in last.items() if id(claims[i]) in prompts and sum(
        1 for c in claims[i + 1:] if c.kc == kc and c.verdict == TRUE and not c.question) >= WORKED_AFTER}
    return [c for c in claims if not (c.question and c.kc in worked and id(c) in prompts)] if worked else claims


@functools.lru_cache(maxsize=1024)
def _raw_words(raw: str) -> tuple[bool, bool]:
    """Whether a sentence says a percent, and a division sign (once per sentence, not per claim)."""
    return bool(_PERCENT_WORD.search(raw)), "÷" in raw or "div" in raw.lower()


_PERCENT_WORD = re.compile(r"%|percent|per cent|\boff\b|discount", re.IGNORECASE)
_PROMPT = re.compile(r"(?:^|[.!:]\s+)(?:now\s+)?(?:write|find|calculate|compute|work out|solve|explain|describe|"
                     r"compare|show|estimate|predict|convert|simplify|tell me|evaluate|determine|express|figure out)\b",
                     re.IGNORECASE)
# "How many dollars does it cost now?": a question asking for a quantity
# a question about the student's own idea: "Why do you think so?", "What makes you say that?"
_ABOUT_THE_STUDENT = re.compile(r"\b(?:why|what makes|how come|how)\b[^.?!]*\byou\s+(?:think|say|believe|feel|guess)"
                                r"(?:\s+(?:so|that|this))?\s*\??\s*$", re.IGNORECASE)
_ASKS_VALUE = re.compile(r"^\s*(?:(?:so|then|now|and)\s*,?\s+)?(?:how (?:much|many|far|long)\b|what(?:'s|\s+is|\s+does|"
                         r"\s+will|\s+would|\s+do)\b|evaluate\b|find\b|compute\b|calculate\b|work\b)",
                         re.IGNORECASE)
# "Evaluate it.": a prompt on the expression the sentence before wrote out
_PROMPT_BEFORE = re.compile(r"^\s*(?:now\s+)?(?:can you\s+)?(?:evaluate|simplify|compute|calculate|solve|work out|"
                            r"find)\s+(?:it|this|that|the expression|this expression|the value)\b|"
                            r"^\s*(?:now\s+)?(?:can you\s+)?work (?:it|this|that) out\b|"
                            r"^\s*what (?:is|does) (?:it|that|this)(?: equal| come to| make)?\s*\?|"
                            r"^\s*what (?:do|would|will) you get\s*\?", re.IGNORECASE)


_ASKS_UNKNOWN = re.compile(r"\b(?:what (?:goes|number goes|belongs) in the (?:blank|box)|"
                           r"(?:what is|what's|find|solve for) (?:the value of )?x\b|"
                           r"what (?:number|value) (?:is|makes|goes)|solve (?:it|this|that)\b)",
                           re.IGNORECASE)
_SOLVED = re.compile(r"(?<![\w'])x\s*=\s*-?\d")  # an equation's solution stated: "x = 5"
_SOLVE = re.compile(r"\s*(?:now,?\s+|next,?\s+|then,?\s+)?solve\b", re.IGNORECASE)  # "Solve 4x = 28:"


# "the answer is 38", "our final answer is **3/4**", "result: 26", "So it is 11/12, not 2/5.": the result of the
# expression the turn set out to work, and the wrong result it is set against (group 2)
_NUMBER = r"-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?"
_ANSWER = re.compile(r"(?:\b(?:answer|result|solution)\b(?:\s+(?:is|=|:|comes to|works out to))?|"
                     r"^\s*(?:so\s*,?\s+)?(?:it|that|this)(?:'s|\s+is|\s+=|\s+comes to|\s+works out to|\s+equals))"
                     rf"\s*[:=]?\s*({_NUMBER})\s*(?:,?\s*(?:not|rather than|instead of)\s+({_NUMBER}))?\s*[.!]?\s*$",
                     re.IGNORECASE)
# "**Answer:** 11/12" (a label's colon ends a sentence: the number is the next one)
_ANSWER_LABEL = re.compile(r"\b(?:answer|result|solution)\s*:\s*$", re.IGNORECASE)
# "Example: 3/4 + 1/6", "Problem 2: 6 + 4 × 8": the computation the label's next sentence writes is the one worked
_PROBLEM_LABEL = re.compile(r"\b(?:example|problem|exercise)\s*\d*\s*:\s*$", re.IGNORECASE)


_READERS: dict[tuple, ContentReader] = {}


def _reader(task: Task) -> ContentReader:
    """One reader per distinct task content: a lesson rebuilt for every episode, or a math task drawn again with
    the same numbers, reuses its reader (and the cache of its readings). 64 hold every lesson; a math draw is
    rarely met again (8 hits in 1,862 act-mode episodes), and each reader kept holds its task and readings, which
    every full garbage collection walks: with 512 kept, act mode ran 7-8 % slower."""
    key = (task.task_set, task.id, task.statement, task.answer,
           tuple((k.explanation, k.worked_example) for k in task.knowledge_components),
           tuple(m.counterexample for m in task.misconceptions))
    return bounded(_READERS, key, lambda: ContentReader(task), 64)
