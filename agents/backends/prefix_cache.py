"""The keys and values of prompt prefixes, kept across requests so that a conversation's next turn computes only
what it adds: chunk by chunk, bounded by tokens, the least recently used chunk dropped first.

A prompt's prefill is cut into **chunks** at ends that its own tokens decide (:func:`chunk_ends`): before every
assistant header (``<|assistant|>\\n``, ``<|im_start|>assistant\\n``...: the tokens that open an assistant turn,
in the generation prompt and in the history alike), which is where the previous request of the same conversation
stopped, and after the first end-of-turn token (the system prompt, shared by a seat's conversations). Each chunk
is one forward pass of the model over the chunk's tokens on top of the keys and values of the chunks before it,
and this is the only way the backend ever computes them, whether every chunk is computed anew or all but the
last come from this store. A chunk's keys and values are therefore a function of the token ids up to its end
(and the few after it that made the end an end), never of what was stored, evicted, or batched beside it: a
cache hit gives the very bits a miss computes, in any order. (A prefill of the whole prompt in one pass gives
other bits in the last place: the kernels' reductions depend on the shapes they run on.)

An entry is keyed by the exact token ids it covers, lookahead included; a prompt reuses the longest run of its
own chunks that is stored from its start, so a conversation truncated at the left, or a template that renders
earlier turns anew, simply misses and is computed in full.

Example::

    cache = PrefixCache(max_tokens=65536)
    ends = chunk_ends(ids, cached=len(ids) - 2, header=(5, 204), first_stops=(2,))
    found = cache.lookup(ids, ends, lookahead=2)             # per-layer (keys, values) of the first len(found)
    cache.put(ids, ends[len(found) - 1] if found else 0, ends[len(found)], layers, lookahead=2)
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

Layers = list[tuple[Any, Any]]  # one (keys, values) pair of tensors [1, heads, tokens, head_dim] per layer


def chunk_ends(ids: Sequence[int], cached: int, header: Sequence[int], first_stops: Sequence[int]) -> list[int]:
    """The ends of the stored chunks of ``ids[:cached]``, ascending: every ``q`` in ``1..cached`` where
    ``ids[q:]`` starts with ``header`` (an assistant turn's opening), and the position after the first token in
    ``first_stops`` (end-of-turn tokens). ``ids[last end:cached]``, if not empty, is a tail chunk, never stored.

    Example::

        chunk_ends([1, 9, 2, 5, 204, 7, 2, 5, 204], cached=7, header=(5, 204), first_stops=(2,))   # [3, 7]
    """
    ends: set[int] = set()
    n = len(header)
    if n:
        first, pattern = header[0], list(header)
        for q in range(1, min(cached, len(ids) - 1) + 1):
            if ids[q] == first and list(ids[q:q + n]) == pattern:
                ends.add(q)
    stops = set(first_stops)
    for q, token in enumerate(ids[:cached]):
        if token in stops:
            ends.add(q + 1)
            break
    return sorted(ends)


class PrefixCache:
    """Per-layer keys and values of prompt chunks, keyed by the token ids from the prompt's start to the chunk's
    end plus ``lookahead`` ids; at most ``max_tokens`` chunk tokens, least recently used first out.

    A chunk is only of use with every chunk before it, so a lookup or a store touches a prompt's chunks from the
    last to the first: a chunk is never older than the chunks after it, and eviction takes the last chunks of
    the least recent conversation first. Thread-safe.
    """

    def __init__(self, max_tokens: int) -> None:
        if max_tokens < 0:
            raise ValueError(f"max_tokens must be >= 0, got {max_tokens}")
        self.max_tokens = max_tokens
        self._entries: OrderedDict[bytes, tuple[int, Layers]] = OrderedDict()
        self._lock = threading.Lock()
        self.tokens = 0  # chunk tokens stored
        self.hits = 0  # prompt tokens whose keys and values came from the store
        self.misses = 0  # prompt tokens computed by a caller that reported them (:meth:`computed`)

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def _keys(ids: Sequence[int], ends: Sequence[int], lookahead: int) -> list[bytes]:
        """Each end's key: the exact ids up to it and its lookahead, as bytes (hashing them is one C call)."""
        data = array("q", ids).tobytes()
        width = array("q").itemsize
        return [data[:width * (end + lookahead)] for end in ends]

    def lookup(self, ids: Sequence[int], ends: Sequence[int], lookahead: int) -> list[Layers]:
        """The stored chunks of ``ids`` ending at ``ends[0], ends[1], ...``, as far as they go from the start."""
        found: list[Layers] = []
        keys: list[bytes] = []
        with self._lock:
            for key in self._keys(ids, ends, lookahead):
                entry = self._entries.get(key)
                if entry is None:
                    break
                found.append(entry[1])
                keys.append(key)
            for key in reversed(keys):
                self._entries.move_to_end(key)
            self.hits += ends[len(found) - 1] if found else 0
        return found

    def put(self, ids: Sequence[int], start: int, end: int, layers: Layers, lookahead: int) -> None:
        """Store the chunk ``ids[start:end]`` (``layers``: its keys and values alone); drop the least recently
        used chunks while more than ``max_tokens`` are stored. The chunks before it must have been looked up
        or put just before (they are touched after it, so that they stay older than nothing of theirs)."""
        size = end - start
        if size <= 0 or size > self.max_tokens:
            return
        [key] = self._keys(ids, [end], lookahead)
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (size, layers)
            self.tokens += size
            self._entries.move_to_end(key)
            while self.tokens > self.max_tokens:
                _, (dropped, _) = self._entries.popitem(last=False)
                self.tokens -= dropped

    def touch(self, ids: Sequence[int], ends: Sequence[int], lookahead: int) -> None:
        """Mark the chunks of ``ids`` ending at ``ends`` as just used, the first chunk last (the newest)."""
        with self._lock:
            for key in reversed(self._keys(ids, ends, lookahead)):
                if key in self._entries:
                    self._entries.move_to_end(key)

    def computed(self, tokens: int) -> None:
        """Count ``tokens`` a caller computed instead of finding them here (for hit rates)."""
        with self._lock:
            self.misses += tokens

    def shared(self, tokens: int) -> None:
        """Count ``tokens`` a caller neither found here nor computed: another prompt's computation of the same
        tokens, in the same batch, served them (for hit rates, as hits)."""
        with self._lock:
            self.hits += tokens

    def clear(self) -> None:
        """Drop every chunk and zero the counts."""
        with self._lock:
            self._entries.clear()
            self.tokens = self.hits = self.misses = 0
