"""The phrase index finds what the annotator's lexicon patterns find: ``search`` and ``findall``'s count, lexicon by
lexicon, on the curriculum's lexicons and texts and on phrases built to overlap."""

from __future__ import annotations

import random
import re
import string

import numpy as np
import pytest

from tutorzoo.envs.annotate import DISCIPLINE_WORDS, _compiled, _twin
from tutorzoo.envs.phrase_index import CASELESS, PhraseIndex, readable
from tutorzoo.envs.tasks import get_task_set


def _pattern(phrases):
    """The annotator's pattern for ``phrases`` as it reads a lower-cased ASCII turn."""
    return _twin(_compiled(tuple(phrases)))


def _agrees(lexicons, texts) -> None:
    assert all(readable(t) and t == t.lower() for t in texts)  # what the annotator scans
    index = PhraseIndex(lexicons)
    patterns = [_pattern(phrases) for phrases in lexicons]
    for text in texts:
        found = index.scan(text)
        for i, pattern in enumerate(patterns):
            want = (len(pattern.findall(text)), pattern.search(text) is not None) if pattern else (0, False)
            assert (found.count(i), found.search(i)) == want, (text, lexicons[i])


def _curriculum():
    """Every math family's and stem lesson's lexicons (as the annotator builds them) and texts."""
    for name in ("math", "stem"):
        task_set = get_task_set(name)
        for k, task_id in enumerate(task_set.task_ids()):
            task = task_set.build(task_id, np.random.default_rng(k))
            lexicons = [tuple(DISCIPLINE_WORDS[d]) for d in DISCIPLINE_WORDS]
            for kc in task.knowledge_components:
                lexicons += [kc.keywords + tuple(w for m in task.misconceptions if m.kc == kc.id for w in m.keywords),
                             (kc.name,)]
                lexicons += [link.keywords or (link.bridge,) for link in kc.links]
            lexicons += [m.keywords for m in task.misconceptions]
            texts = [task.statement, task.summary, *(i.stem for i in (*task.pretest, *task.posttest))]
            for kc in task.knowledge_components:
                texts += [kc.explanation, kc.worked_example, *kc.hints, *kc.analogies,
                          *(q.text for q in kc.questions), *(link.bridge for link in kc.links)]
            texts += [t for m in task.misconceptions for t in (m.belief, m.counterexample, m.negation)]
            yield f"{name}/{task_id}", lexicons, texts


@pytest.mark.parametrize("name,lexicons,texts", list(_curriculum()), ids=lambda v: v if isinstance(v, str) else "")
def test_curriculum_lexicons_on_curriculum_texts(name, lexicons, texts) -> None:
    rng = random.Random(name)
    lowered = [t.lower() for t in texts if readable(t)]
    words = " ".join(lowered).split()
    # the texts, and words of them spliced at random (keywords next to keywords, glued to punctuation)
    spliced = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 30))) for _ in range(150)]
    glued = ["".join(rng.choice(words) for _ in range(rng.randint(1, 6))) for _ in range(50)]
    _agrees(lexicons, lowered + spliced + glued)


def test_overlapping_prefixes_ends_and_word_starts() -> None:
    lexicons = [("rat", "ratio", "ratio table"), ("ratio",), ("tio", "table"), ("3d shape", "-fold", "%"),
                ("a b", "a"), ()]
    texts = [
        "ratio table ratios rational rat", "the ratio", "ratio", "rati", "operation", "ratiotable",
        "3d shapes and 3d-shapes", "two-fold, 50% and 3-fold", "%%", "a b a bab a", "a", "", " ", "b a b",
        "xratio 1ratio _ratio (ratio) ratio.ratio", "table tables stable", "a ba b a b",
    ]
    _agrees(lexicons, texts)
    found = PhraseIndex(lexicons).scan("ratio table, ratio")
    assert found.count(0) == 2 and found.count(1) == 2 and found.count(2) == 1  # "tio" in "ratio" is no word start
    assert not found.search(5)


def test_other_characters_and_blank_phrases() -> None:
    # a phrase with a letter no readable text has never matches: left out, as the pattern finds nothing either
    _agrees([("café", "cafe"), ("2π", "2 × 3"), ("4 °C",)], ["a cafe", "2 × 3 = 6 and 2 pi", "at 4 °c", "caf"])
    assert not PhraseIndex([("café",)]).scan("cafe caf").search(0)
    # one IGNORECASE equates with an ASCII letter ("ſ" with s): no index (the caller keeps the patterns)
    for odd in ("\u017fum", "\u0131t"):
        with pytest.raises(ValueError, match="ASCII letter"):
            PhraseIndex([("sum",), (odd,)])
    _agrees([("\u212aelvin",)], ["300 kelvin"])  # the Kelvin sign lower-cases to k, in the pattern and the index
    index = PhraseIndex([("", "  "), ("  Ratio ",)])
    assert not index.scan("anything at all").search(0)
    assert index.scan("a ratio").count(1) == 1
    assert not PhraseIndex([]).scan("ratio").search(0)


def test_caseless_characters_have_no_case_and_match_no_letter() -> None:
    # every character a readable text may hold besides ASCII: lower-casing keeps it, no pattern tells it from a
    # letter with or without IGNORECASE, and IGNORECASE equates it with no other character
    everything = "".join(chr(c) for c in range(0x80, 0x3000))
    chars = re.findall(f"[{CASELESS}]", everything)
    assert len(chars) > 2000
    letter = re.compile("[a-z]", re.IGNORECASE)
    each = [re.compile(c, re.IGNORECASE) for c in string.ascii_lowercase]
    bad = [c for c in chars if c.lower() != c or c.upper() != c or c.casefold() != c or letter.fullmatch(c)
           or any(p.fullmatch(c) for p in each)]
    assert bad == []
    assert re.findall(f"[{CASELESS}]", everything, re.IGNORECASE) == chars
    assert readable("So 3 × 4 = 12 — that’s 12 m², at 20 °C → ½") and readable("plain")
    # letters (é, É, ª, µ, º, the long s, the dotless i, İ), the Kelvin sign, a roman numeral, a circled letter
    for cased in "\u00e9\u00c9\u00aa\u00b5\u00ba\u017f\u0131\u0130\u212a\u2160\u24b6":
        assert not readable(f"3 × 4 {cased}")
