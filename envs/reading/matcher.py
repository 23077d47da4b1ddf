"""The proposition matcher: which curriculum proposition a sentence states (its words covered, in their order, with
their polarity), and the claim that makes: a fact stated or contradicted, a belief affirmed, quoted or denied, a
refutation said, or a question on one."""

from __future__ import annotations

import itertools
import re
from collections import Counter

from tutorzoo.envs.reading.claims import FALSE, TRUE, UNCHECKED, Claim, demand_of
from tutorzoo.envs.reading.frames import REPORTED
from tutorzoo.envs.reading.propositions import (
    NUMBERLESS,
    ORDER_SHARE,
    ORDER_TIE,
    Proposition,
    content_stems,
    flips,
    in_order,
    order_of,
    polarity,
    stated_numbers,
    stem_order,
)


def match_proposition(sent: str, asked: bool, framed: bool, props: tuple[Proposition, ...],
                      by_stem: dict[str, tuple[int, ...]], topic: frozenset[str],
                      names: re.Pattern[str] | None) -> list[Claim]:
    """The claim ``sent`` makes by stating one of ``props`` (indexed by stem in ``by_stem``): the proposition it
    covers best in its words, in their order and polarity, beyond the topic's own words (``topic``; the components'
    names, ``names``, are blanked first); ``[]`` when it states none. ``asked``: a question on it; ``framed``: said
    after a label such as "Myth:", so a belief in it is quoted, not asserted."""
    if names is not None:  # a component's name names the topic; it says nothing about it
        sent = names.sub(" ", sent)
    plain = NUMBERLESS.sub(" ", sent)
    stems, negs = content_stems(plain)
    if len(stems) < 2:
        return []
    best: tuple[float, Proposition, float, float] | None = None
    top: float | None = None  # the best score of any proposition, in order or not
    substance = stems - topic  # what the sentence says beyond naming the topic
    stems, said_sign = polarity(stems)
    substance |= {st for st in stems if st[0] == "~"}  # a direction said is content
    need = 2 if asked else 3
    hits = Counter(itertools.chain.from_iterable(by_stem[st] for st in stems if st in by_stem))
    for i in sorted(i for i, h in hits.items() if h >= need):  # in the propositions' order: ties as before
        p = props[i]
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
        if top is not None and score <= top - ORDER_TIE:
            continue
        # who does what to what: the proposition restated must come in its order; a sentence that restates one
        # best but scrambled restates nothing, not some shorter proposition whose few words fell in order (an
        # equal restatement in order, such as "b times a" for "a times b", still counts)
        top = score if top is None else max(top, score)
        # (a sentence made mostly of other words is a paraphrase in its own order: only one that is mostly the
        # proposition's words, the way a scramble or a swap of roles is, must keep their order)
        if (best is None or score > best[0]) and (
                hit < ORDER_SHARE * len(stems) or in_order(stem_order(plain), order_of(p.text))):
            best = (score, p, hit / len(p.stems), hit / len(stems))
    if best is None or top is None or best[0] <= top - ORDER_TIE:  # (a best is always below a top)
        return []
    p = best[1]
    negated = negs % 2 == 1
    if asked and p.kind == "belief":  # a wrong idea asked back: no content
        return [Claim(p.kc, UNCHECKED, False, None, (), None, "fact", mentions=p.misconception)]
    if asked:
        return [Claim(p.kc, TRUE, True, None, _refuted(p),
                      demand_of(sent, math=False), "fact")]
    agrees = (negated == p.negated) != (flips(said_sign, dict(p.sign)) % 2 == 1)
    said = stated_numbers(sent)
    if p.numbers and len(said) == len(p.numbers) and not (said & p.numbers):
        agrees = False  # the proposition restated with every quantity changed
    # a contradiction is only read off a close match both ways (a longer sentence's "not" may be another clause's)
    strong = best[2] >= 0.7 and best[3] > 0.6
    if p.kind == "belief":
        if framed or REPORTED.search(sent):  # the idea quoted, not asserted
            return [Claim(p.kc, UNCHECKED, False, None, (), None, "fact", mentions=p.misconception)]
        if agrees:
            return [Claim(p.kc, FALSE, False, p.misconception, (), None, "fact")]
        # "heavy things do not always sink": the belief denied, a bare negation (no fact taught)
        return [Claim(p.kc, UNCHECKED, False, None, (), None, "fact", denies=p.misconception,
                      mentions=p.misconception)]
    if not agrees and not strong:
        return [Claim(p.kc, UNCHECKED, False, None, (), None, "fact")]
    if p.kind == "refutation":
        return [Claim(p.kc, TRUE if agrees else FALSE, False, None, _refuted(p) if agrees else (),
                      None, "fact")]
    return [Claim(p.kc, TRUE if agrees else FALSE, False, None, (), None, "fact")]


def _refuted(p: Proposition) -> tuple[str, ...]:
    """The misconception a refutation refutes (every refutation is made from one)."""
    return (p.misconception,) if p.kind == "refutation" and p.misconception is not None else ()
