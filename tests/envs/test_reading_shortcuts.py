"""The shortcuts of the leak detector and the well-formedness check decide as their plain definitions do."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from tutorzoo.envs import leak, wellformed
from tutorzoo.envs.grading import normalise_math, number_mentions
from tutorzoo.envs.leak import AnswerKey, find_leaks


def _words_by_definition(text: str) -> list[str]:
    """wellformed.words as its docstring states it, with no shortcut."""
    if "\\" in text or "$" in text:
        text = wellformed._LATEX_MARK.sub(" ", wellformed._LATEX_TEXT.sub(r" \1 ", text))
    out = []
    for chunk in text.lower().replace("\u2019", "'").split():
        chunk = wellformed._EDGE.sub("", chunk)
        if chunk in ("a", "i") or (wellformed._TWO_LETTERS.search(chunk) and not any(c.isdigit() for c in chunk)):
            out.append(chunk)
    return out


WORD_CASES = {
    "plain": "Let's add the fractions one step at a time.",
    "edges": "((Why?)) -- \"quoted\" words, 'single' ... and... end!",
    "digits": "10cm CO2 3x+2 x² ab½ a1b two-3 ٣ab ab٣ km/h",
    "unicode-digits": "ab\u0663 cd\u00b2 \u00b9ef plain",
    "latex": "$\\frac{3}{4}$ is \\text{three quarters} of {it}",
    "glued": "motater?ivalentessure were2ilthise a i I A",
    "symbols-only": "?? !! -- ** ++ == //",
}


@pytest.mark.parametrize("name", list(WORD_CASES))
def test_words_keep_exactly_the_chunks_of_the_definition(name):
    assert wellformed.words(WORD_CASES[name]) == _words_by_definition(WORD_CASES[name])


def test_words_match_the_definition_on_random_chunks():
    rng = random.Random(0)
    alphabet = "ab1'-.,?!()\"\u00b2\u0663\u00e9Z /\\$"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))
        assert wellformed.words(text) == _words_by_definition(text), text


def _matches_by_definition(utterance: str, value: Fraction, percent: bool) -> bool:
    return any(leak._mention_matches(m, value, percent) for m in number_mentions(normalise_math(utterance)))


VALUES = [Fraction(5, 6), Fraction(3, 4), Fraction(1, 3), Fraction(2), Fraction(75, 100), Fraction(-1, 2)]
UTTERANCES = {
    "exact": "So it is 5/6, right?",
    "equivalent": "That gives ten twelfths.",
    "rounded": "About 0.83 of the pizza, or 83.3%.",
    "percent-bare": "It is 75 out of a hundred.",
    "percent-sign": "Seventy-five percent: 75%.",
    "third": "Roughly 0.33 or 0.333 of it.",
    "negative": "The change is -0.5 degrees.",
    "none": "Find a common denominator first.",
}


@pytest.mark.parametrize("name", list(UTTERANCES))
@pytest.mark.parametrize("percent", [False, True])
def test_find_leaks_states_a_value_exactly_when_a_mention_matches_it(name, percent):
    text = UTTERANCES[name]
    for value in VALUES:
        key_text = f"{float(value * 100):g}%" if percent else f"{value.numerator}/{value.denominator}"
        key = AnswerKey("q", key_text)
        target = leak._targets(key)[0]
        assert target.number is not None
        expected = _matches_by_definition(text, *target.number)
        # no givens and no history: "final" is reported exactly when a value mention matches the key
        assert ("final" in find_leaks(text, [key]).kinds) == expected, (text, key_text)
