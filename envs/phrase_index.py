"""Many lexicons' phrases found in one pass over a lower-cased text.

A lexicon of the annotator is a set of lower-case phrases, matched at the start of a word and as a prefix of what
follows (``fraction`` matches "fractions"): the regular expression ``(?<![a-z])(?:p1|p2|…)`` with the phrases longest
first. A turn is read against some twenty of them (each knowledge component's keywords and name, each link's and
misconception's keywords, each discipline's words); twenty scans of the turn by twenty alternations cost several
times one walk of a character trie of all their phrases from each place a phrase may start. :class:`PhraseIndex`
is that walk, and gives each lexicon's matches as the regular expression would:

- :meth:`Found.search` is ``pattern.search(text) is not None``;
- :meth:`Found.count` is ``len(pattern.findall(text))``: from left to right, at each place the longest phrase of
  the lexicon that matches there, the next match starting after it.

It reads lower-cased text of ASCII and :data:`CASELESS` characters (:func:`readable`), and finds there what the
annotator's patterns find: their case-sensitive twins for ASCII phrases, the case-insensitive patterns themselves
for others. A lower-cased phrase with a character outside those never matches such a text and is left out, unless
case-insensitive matching equates the character with an ASCII letter (the long s, the dotless i): then the index
refuses the lexicons (``ValueError``) and its caller keeps the regular expressions.

Example::

    index = PhraseIndex([("fraction", "denominator"), ("area",)])
    found = index.scan("common denominators of fractions")
    found.count(0), found.search(1)        # (2, False)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_END = ""  # a trie node's key for the lexicons whose phrase ends there (never a character)

# Non-ASCII characters without case and of no letter's case class (×, ÷, −, ’, —, ², °, arrows, math symbols): a
# pattern matches them alike with or without IGNORECASE, and lower-casing leaves them (tests/envs/test_phrase_index.py
# checks each one). Letters, the Latin-1 ª, µ and º, the letterlike symbols (the Kelvin sign) and the number forms
# are not among them.
CASELESS = ("\u00a0-\u00a9\u00ab-\u00b4\u00b6-\u00b9\u00bb-\u00bf\u00d7\u00f7\u2000-\u2070\u2074-\u207e"
            "\u2080-\u208e\u20a0-\u20ff\u2190-\u23ff\u2500-\u2bff")
_CASED = re.compile(f"[^\\x00-\\x7f{CASELESS}]")
_ASCII_LETTER = re.compile("[a-z]", re.IGNORECASE)  # (also the characters IGNORECASE equates with one)


def cleaned(phrases: Sequence[str]) -> frozenset[str]:
    """The phrases a lexicon matches: each stripped and lower-cased, blank ones dropped (the annotator's patterns
    and the index read a lexicon through this one rule)."""
    return frozenset(p.strip().lower() for p in phrases if p and p.strip())


def readable(text: str) -> bool:
    """Whether ``text`` is of ASCII and :data:`CASELESS` characters only: lower-cased, the index (and a pattern's
    case-sensitive twin) reads it as the pattern reads it as written."""
    return text.isascii() or _CASED.search(text) is None


class Found:
    """The matches of one scan: per lexicon (by its index), the (start, end) of its longest phrase at each place
    where one matches, in order."""

    __slots__ = ("_spans",)

    def __init__(self, spans: dict[int, list[tuple[int, int]]]) -> None:
        self._spans = spans

    def search(self, lexicon: int) -> bool:
        """Whether a phrase of ``lexicon`` occurs."""
        return lexicon in self._spans

    def count(self, lexicon: int) -> int:
        """How many non-overlapping matches ``findall`` gives (leftmost, each the longest there)."""
        n, free = 0, 0
        for start, end in self._spans.get(lexicon, ()):
            if start >= free:
                n, free = n + 1, end
        return n


class PhraseIndex:
    """The phrases of ``lexicons`` (each a sequence of phrases; blank ones are dropped, the rest stripped and
    lower-cased) in one character trie (see the module docstring for phrases that are not ASCII)."""

    def __init__(self, lexicons: Sequence[Sequence[str]]) -> None:
        root: dict = {}
        for lexicon, phrases in enumerate(lexicons):
            for phrase in cleaned(phrases):
                if not readable(phrase):
                    if any(_ASCII_LETTER.fullmatch(ch) for ch in _CASED.findall(phrase)):
                        raise ValueError(f"phrase {phrase!r} has a character IGNORECASE equates with an ASCII letter")
                    continue  # a character no readable text has: the phrase never matches one
                node = root
                for ch in phrase:
                    node = node.setdefault(ch, {})
                node[_END] = (*node.get(_END, ()), lexicon)
        self._root = root
        # where a phrase may start: not after a lower-case letter, at a character some phrase starts with
        first = "".join(re.escape(ch) for ch in sorted(root))
        self._starts = re.compile(f"(?<![a-z])[{first}]") if root else None

    def scan(self, text: str) -> Found:
        """Every lexicon's matches in ``text``, lower-cased and :func:`readable`."""
        spans: dict[int, list[tuple[int, int]]] = {}
        if self._starts is None:
            return Found(spans)
        root, n = self._root, len(text)
        for m in self._starts.finditer(text):
            start = m.start()
            node, j = root[text[start]], start + 1
            longest: dict[int, int] | None = None
            while True:
                ending = node.get(_END)
                if ending is not None:
                    if longest is None:
                        longest = {}
                    for lexicon in ending:
                        longest[lexicon] = j  # a longer phrase of the lexicon found later replaces it
                if j >= n:
                    break
                node = node.get(text[j])
                if node is None:
                    break
                j += 1
            if longest is not None:
                for lexicon, end in longest.items():
                    spans.setdefault(lexicon, []).append((start, end))
        return Found(spans)


__all__ = ["CASELESS", "Found", "PhraseIndex", "cleaned", "readable"]
