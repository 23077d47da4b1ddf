"""The HF backend's prefix cache: where prompts are cut into chunks, the bounded store, and that a conversation's
next turn served from the store gets the very keys, values and replies that computing it anew gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.agents.test_packed_prefill import rows_independent_linears  # noqa: E402
from tutorzoo.agents.backends.base import GenerationConfig  # noqa: E402
from tutorzoo.agents.backends.hf import HFBackend  # noqa: E402
from tutorzoo.agents.backends.prefix_cache import PrefixCache, chunk_ends  # noqa: E402
from tutorzoo.envs.errors import ConfigError  # noqa: E402

HEADER, STOP = (5, 6), 2  # a two-token assistant header and an end-of-turn token


@pytest.mark.parametrize(
    ("ids", "cached", "header", "ends"),
    [
        ([1, 9, 9, STOP, 8, STOP, 5, 6], 6, HEADER, [4, 6]),  # after the first end of turn; before the header
        ([1, 9, STOP, 8, STOP, 5, 6, 7, STOP, 8, STOP, 5, 6], 11, HEADER, [3, 5, 11]),  # each reply's start is an end
        ([1, 9, STOP, 8, STOP, 5, 6], 6, (), [3]),  # no assistant header known: the first end of turn only
        ([1, 9, 9, 5, 6, 4], 5, HEADER, [3]),  # no end of turn; [3:5] is a tail chunk, not stored
        ([1, 5, 6, 9, 5, 6], 3, HEADER, [1]),  # an end past ``cached`` is not one
        ([1, 9, 9, 9], 3, HEADER, []),  # nothing to store: one tail chunk
    ],
    ids=["system-then-prompt", "turns", "no-suffix", "tail", "past-cached", "no-ends"],
)
def test_chunk_ends(ids: list[int], cached: int, header: tuple[int, ...], ends: list[int]) -> None:
    assert chunk_ends(ids, cached, header, (STOP,)) == ends


def layers(start: int, end: int) -> list[tuple[Any, Any]]:
    """Per-layer stand-ins for the keys and values of ``ids[start:end]`` (two layers)."""
    keys = torch.arange(start, end, dtype=torch.float32).reshape(1, 1, end - start, 1)
    return [(keys, -keys), (keys * 2, -keys * 2)]


def test_the_store_serves_the_chunks_of_a_prefix_from_the_start() -> None:
    cache = PrefixCache(max_tokens=100)
    ids = list(range(10, 30))
    cache.put(ids, 0, 4, layers(0, 4), lookahead=2)
    cache.put(ids, 4, 9, layers(4, 9), lookahead=2)
    found = cache.lookup(ids, [4, 9, 15], lookahead=2)
    assert len(found) == 2 and found[1][0][0].flatten().tolist() == [4, 5, 6, 7, 8]
    assert cache.hits == 9 and cache.tokens == 9
    other = ids[:10] + [0] * 10  # same ids up to 10: ends 4 and 9 (lookahead 2 reaches 11) differ at 10
    assert len(cache.lookup(other, [4, 9], lookahead=2)) == 1
    assert cache.lookup([99] + ids[1:], [4, 9], lookahead=2) == []  # a different first token: nothing


def test_the_store_keeps_within_its_token_bound_dropping_the_least_recent_conversation_last_chunk_first() -> None:
    cache = PrefixCache(max_tokens=12)
    a, b = [1] * 20, [2] * 20
    cache.put(a, 0, 4, layers(0, 4), 0)
    cache.put(a, 4, 8, layers(4, 8), 0)
    cache.touch(a, [4, 8], 0)  # what the backend does after a row: a's first chunk is its newest
    cache.put(b, 0, 4, layers(0, 4), 0)
    cache.touch(b, [4], 0)
    cache.put(b, 4, 8, layers(4, 8), 0)  # 16 tokens: a's last chunk goes first (the least recent)
    assert cache.tokens == 12 and len(cache.lookup(a, [4, 8], 0)) == 1
    cache.put(a, 0, 13, layers(0, 13), 0)  # larger than the whole store: not kept
    assert cache.tokens <= 12
    cache.clear()
    assert (cache.tokens, cache.hits, len(cache)) == (0, 0, 0)


SYSTEM = {"role": "system", "content": "You are a patient tutor. Ask one question at a time about fractions."}


def turns(n: int) -> list[dict]:
    """A conversation of ``n`` user turns with assistant replies between them, ending on the user."""
    out = [SYSTEM]
    for i in range(n):
        out.append({"role": "user", "content": f"Turn {i}: what is {i + 1}/4 + 1/{i + 2}? I think it is {i + 3}."})
        if i < n - 1:
            out.append({"role": "assistant", "content": f"Why {i + 3}? Try a common denominator of {4 * (i + 2)}."})
    return out


@pytest.fixture(scope="module")
def cold_and_warm(tiny_model_dir: Path) -> tuple[HFBackend, HFBackend]:
    return HFBackend(str(tiny_model_dir), threads=1), HFBackend(str(tiny_model_dir), threads=1)


@pytest.mark.parametrize("played", [(2,), (1,)], ids=["last-turn-played", "turns-since-played"])
@pytest.mark.parametrize("config", [GenerationConfig(max_new_tokens=16, temperature=0.0),
                                    GenerationConfig(max_new_tokens=16, temperature=1.0, seed=7)],
                         ids=["greedy", "seeded-sampling"])
def test_a_turn_served_from_the_store_gets_the_keys_values_and_reply_computed_anew(
        cold_and_warm: tuple[HFBackend, HFBackend], config: GenerationConfig, played: tuple[int, ...]) -> None:
    cold, warm = cold_and_warm
    cold.prefix_cache.clear()
    warm.prefix_cache.clear()
    for n in played:  # the warm backend has played an earlier turn of the conversation
        warm.generate([turns(n)], config)
    ids, _ = warm.encode(turns(3), config.max_new_tokens)
    cached = len(ids) - len(warm._generation_suffix)
    earlier, _ = warm.encode(turns(played[-1]), config.max_new_tokens)
    before = warm.prefix_cache.hits
    with torch.inference_mode():
        [warm_states] = warm._prefill_prompts([(ids, cached)])
        [cold_states] = cold._prefill_prompts([(ids, cached)])
    # the earlier prompt came from the store; the rest, one chunk or several, was computed
    assert warm.prefix_cache.hits - before == len(earlier) - len(warm._generation_suffix)
    assert cold.prefix_cache.hits == 0
    assert warm_states is not None and cold_states is not None
    assert all(torch.equal(wk, ck) and torch.equal(wv, cv)
               for (wk, wv), (ck, cv) in zip(warm_states, cold_states, strict=True))  # bit for bit
    cold.prefix_cache.clear()
    assert [r.text for r in warm.generate([turns(3)], config)] == [r.text for r in cold.generate([turns(3)], config)]


def test_a_small_store_evicts_and_replies_stay_the_same(tiny_model_dir: Path,
                                                        cold_and_warm: tuple[HFBackend, HFBackend]) -> None:
    roomy = cold_and_warm[0]
    roomy.prefix_cache.clear()
    small = HFBackend(str(tiny_model_dir), threads=1, prefix_cache_tokens=64)
    config = GenerationConfig(max_new_tokens=12, temperature=1.0, seed=3)
    for n in (1, 2, 3, 4):
        assert [r.text for r in small.generate([turns(n)], config)] == \
            [r.text for r in roomy.generate([turns(n)], config)]
        assert small.prefix_cache.tokens <= 64
    assert small.prefix_cache.misses > roomy.prefix_cache.misses  # the small store did have to compute more


def test_a_conversation_cut_at_the_left_misses_and_is_computed_in_full(
        cold_and_warm: tuple[HFBackend, HFBackend]) -> None:
    backend = cold_and_warm[0]
    backend.prefix_cache.clear()
    config = GenerationConfig(max_new_tokens=8, temperature=0.0)
    backend.generate([turns(3)], config)
    cut = [SYSTEM, *turns(3)[3:]]  # the oldest exchange dropped: only the system prompt is still a prefix
    ids, _ = backend.encode(cut, 8)
    system_end = ids.index(backend.tokenizer.eos_token_id) + 1
    before = backend.prefix_cache.hits
    [result] = backend.generate([cut], config)
    assert result.ok and backend.prefix_cache.hits - before == system_end


def test_the_prefix_cache_can_be_turned_off_and_rejects_a_negative_bound(tiny_model_dir: Path) -> None:
    off = HFBackend(str(tiny_model_dir), threads=1, prefix_cache_tokens=0)
    assert off.generate([turns(2)], GenerationConfig(max_new_tokens=6))[0].ok
    assert len(off.prefix_cache) == 0
    with pytest.raises(ConfigError, match="prefix_cache_tokens must be >= 0"):
        HFBackend(str(tiny_model_dir), prefix_cache_tokens=-1)


@pytest.mark.parametrize(
    ("family", "plain"),
    [("qwen3", True),  # the generation prompt goes on with an empty think block that history turns lack
     ("phi3", True),  # a rendering without the generation prompt ends with EOS, one with it does not
     ("llama3_2", True), ("gemma2", False)],  # Gemma's sliding-window cache keeps generate's own prefill
)
def test_chat_families_reuse_the_last_turn_and_reply_as_computed_anew(
        family: str, plain: bool, tmp_path_factory: pytest.TempPathFactory) -> None:
    from tutorzoo.train.tiny_families import build_family_model

    path = str(build_family_model(family, tmp_path_factory.mktemp(family), corpus_episodes=2))
    warm, cold = HFBackend(path, threads=1), HFBackend(path, threads=1)
    config = GenerationConfig(max_new_tokens=6, temperature=1.0, seed=2)
    warm.generate([turns(2)], config)
    earlier, _ = warm.encode(turns(2), 6)
    [again] = warm.generate([turns(3)], config)
    assert warm._plain_cache is plain
    # packed prefill passes wherever the cache is plain and this machine's kernels give packed rows their own bits
    assert warm._packs_rows == (plain and rows_independent_linears(warm))
    if plain:  # the whole earlier prompt but its generation prompt came from the store
        assert warm.prefix_cache.hits >= len(earlier) - len(warm._generation_suffix)
        assert warm._generation_suffix[:len(warm._assistant_header)] == warm._assistant_header != ()
    assert again.text == cold.generate([turns(3)], config)[0].text
