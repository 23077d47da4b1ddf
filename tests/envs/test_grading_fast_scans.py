"""The grader's fast scans find what a plain scan of the whole text finds.

``number_mentions`` tries its number pattern only where a number can start, and ``extract_value`` its answer-marker
pattern only where "answer" or "\\boxed" starts. Both must return exactly the matches of ``finditer`` over the whole
text: checked on hand-picked edge cases and on a seeded fuzz of the tokens those patterns care about.
"""

from __future__ import annotations

import random
from fractions import Fraction

from tutorzoo.envs import grading as g
from tutorzoo.envs.reading import numbers

NUMBER_CASES = [
    "",
    "The answer is 42.",
    "1/2 + 1/3 = 5/6",
    "  \\frac{1}{2} of it",  # a LaTeX fraction matched from the blanks before it
    "x \\frac{3}{4}",
    "3 \\frac{1}{2} cups",
    "-5 and −7.5 and -.5",
    "$12.50, £3 and €4",
    "H2O, 3x, 5th, x^2, a_1",
    "1,000,000 people; 12,34",
    "75% or 75 percent or 75 per cent",
    "7:00 \\dfrac{5}{6} \\tfrac12",
    "\u00a0\u2003\\frac{2}{3}",
]
MARKER_CASES = [
    "",
    "The answer is 17.",
    "ANSWER: 5",
    "My answer would be 3 because ... so the Answer = 4.",
    "answers are hard; the answer is **9**",
    "\\boxed{12} and \\boxed {13}",
    "myanswer is 5",
    "answer answer is 6",
    "the answer was\n7",
]


def _fuzz(tokens: list[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(tokens) for _ in range(rng.randint(1, 12))) for _ in range(n)]


def _spans(matches) -> list[tuple[tuple[int, int], dict]]:
    return [(m.span(), m.groupdict()) for m in matches]


NUMBER_TOKENS = ["1", "23", "4.5", ".5", "-", "−", "$", "£", "\\frac{1}{2}", "\\frac12", "\\dfrac{3}{4}", " ", "  ",
                 "\t", "\n", "/", " / ", "%", " percent", "x", "cm", "th", ".", ",", "1,000", "^", "_", "\\", "{", "}",
                 "3 1/2", "2x", "\u00a0", "\\,"]
MARKER_TOKENS = ["answer", "Answer", "ANSWER", "answers", "the answer is", "answer:", "answer =", "\\boxed{",
                 "\\boxed {", " ", "x", "5", "is", "was", "would be", "_", "*", ":", "=", "{", "\n", "ſ", "é",
                 "myanswer"]


def test_number_scan_finds_what_finditer_finds() -> None:
    texts = NUMBER_CASES + _fuzz(NUMBER_TOKENS, 5000, 7)
    wrong = [t for t in map(g.normalise_math, texts)
             if _spans(numbers._number_matches(t)) != _spans(numbers._NUMBER_RE.finditer(t))]
    assert not wrong, wrong[:5]
    assert [m.text for m in g.number_mentions("  \\frac{1}{2} of 3 1/2 and -.5")] == ["\\frac{1}{2}", "3 1/2", "-.5"]


def test_marker_scan_finds_what_finditer_finds() -> None:
    texts = MARKER_CASES + _fuzz(MARKER_TOKENS, 5000, 11)
    wrong = [t for t in texts
             if [m.span() for m in g._value_markers(t)] != [m.span() for m in g._VALUE_MARKER_RE.finditer(t)]]
    assert not wrong, wrong[:5]
    assert g.extract_value("I think 4 + 5 = 9, so the ANSWER is 9 because ...") == "9"


def test_number_words_need_a_number_word() -> None:
    """'a'/'an' alone start no number; before a denominator they do."""
    assert numbers._word_mentions("I have a dog and an apple.", bare_one=False) == []
    assert [m.value for m in numbers._word_mentions("Take a third of it and a half.", bare_one=False)] == [
        Fraction(1, 3), Fraction(1, 2)]
