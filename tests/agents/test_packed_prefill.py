"""The HF backend's packed prefill passes: many rows' chunks in one forward pass, each row attending to its own
past and tokens only, give every row the very keys and values it gets packed alone, whatever is packed beside it;
long chunks get the bits of the model's own attention; rows with the same tokens share one computation; and a
model whose packed rows would differ from its own passes computes each row alone."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tutorzoo.agents.backends.base import GenerationConfig  # noqa: E402
from tutorzoo.agents.backends.hf import PACK_ALIGN, ROWS_ATTENTION, HFBackend  # noqa: E402


@pytest.fixture(scope="module")
def backend(tiny_model_dir: Path) -> HFBackend:
    return HFBackend(str(tiny_model_dir), threads=1)


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(torch.equal(ka, kb) and torch.equal(va, vb)
                                    for (ka, va), (kb, vb) in zip(a, b, strict=True))


def random_rows(backend: HFBackend, rng: random.Random, n: int) -> list[tuple]:
    """``n`` rows ``(ids, start, end, past)``: chunks of 1 to 300 tokens, half of them on a past of their own."""
    vocab = int(backend.model.get_input_embeddings().num_embeddings)
    rows = []
    with torch.inference_mode():
        for _ in range(n):
            size = rng.choice([1, 2, 3, 5, 7, 8, 9, 40, rng.randint(1, 300)])
            start = rng.choice([0, rng.randint(1, 200)])
            ids = [rng.randrange(vocab) for _ in range(start + size)]
            past = backend._packed_pass([(ids, 0, start, None)])[0] if start else None
            rows.append((ids, start, start + size, past))
    return rows


def rows_independent_linears(backend: HFBackend) -> bool:
    """Whether this machine's kernels give each of ``PACK_ALIGN`` or more rows of the model's linear layers the same
    bits whatever rows are beside it (what packing needs; checked here apart from the backend's own probe)."""
    gen = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for layer in backend.model.modules():
            if isinstance(layer, torch.nn.Linear):
                x = torch.randn(1, 3 * PACK_ALIGN + 40, layer.in_features, generator=gen)
                packed = layer(x)
                if not all(torch.equal(layer(x[:, a:b]), packed[:, a:b])
                           for a, b in ((0, PACK_ALIGN), (PACK_ALIGN, 3 * PACK_ALIGN), (3 * PACK_ALIGN, x.shape[1]))):
                    return False
    return True


def test_the_tiny_model_packs_rows_where_the_kernels_allow(backend: HFBackend) -> None:
    assert backend.model.config._attn_implementation == ROWS_ATTENTION
    assert backend._packs_rows == rows_independent_linears(backend)


def test_a_packed_row_gets_the_bits_it_gets_alone_whatever_is_packed_beside_it(backend: HFBackend) -> None:
    if not backend._packs_rows:
        pytest.skip("this machine's kernels give packed rows other bits: the backend computes each row alone")
    rng = random.Random(0)
    with torch.inference_mode():
        for _ in range(25):
            rows = random_rows(backend, rng, rng.randint(2, 9))
            together = backend._packed_pass(rows)
            for row, states in zip(rows, together, strict=True):
                assert same(backend._packed_pass([row])[0], states), (row[1], row[2], len(rows))
                assert states[0][0].shape[2] == row[2]  # the row's past and chunk, not the padding


def test_a_long_chunk_gets_the_bits_of_the_models_own_attention(backend: HFBackend) -> None:
    if not backend._packs_rows:
        pytest.skip("this machine's kernels give packed rows other bits: the backend computes each row alone")
    rng = random.Random(1)
    with torch.inference_mode():
        for row in random_rows(backend, rng, 30):
            if row[2] - row[1] >= PACK_ALIGN:
                own = backend._pass_alone(*row)
                assert own is not None and same(own, backend._packed_pass([row])[0])


def test_a_batch_of_prompts_prefills_as_each_prompt_alone_and_repeats_are_computed_once(backend: HFBackend) -> None:
    convs = [[{"role": "system", "content": "You are a tutor."},
              {"role": "user", "content": f"What is {i} + {i * 7}? I think {i * 3} " * (1 + i % 4)}] for i in range(6)]
    prompts = [backend.encode(c, 8)[0] for c in convs]
    rows = [(p, len(p) - 2) for p in [*prompts, prompts[2], prompts[2]]]  # one prompt three times in the batch
    with torch.inference_mode():
        backend.prefix_cache.clear()
        together = backend._prefill_prompts(rows)
        hits, misses = backend.prefix_cache.hits, backend.prefix_cache.misses
        alone = []
        for row in rows:
            backend.prefix_cache.clear()
            alone += backend._prefill_prompts([row]) or []
    assert together is not None and all(same(a, t) for a, t in zip(alone, together, strict=True))
    system = prompts[0].index(backend.tokenizer.eos_token_id) + 1  # the system prompt: one chunk, the same for all
    own = sum(len(p) - 2 for p in prompts)
    assert misses == own - system * (len(prompts) - 1)  # each distinct chunk computed once
    assert hits == system * (len(rows) - 1) + 2 * (len(prompts[2]) - 2 - system)


def test_a_model_whose_packed_rows_differ_computes_each_row_alone(tiny_model_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    packed, alone = HFBackend(str(tiny_model_dir), threads=1), HFBackend(str(tiny_model_dir), threads=1)
    if not packed._packs_rows:
        pytest.skip("this machine's kernels give packed rows other bits: the backend computes each row alone")
    real = HFBackend._packed_pass

    def off_by_a_bit(self: HFBackend, rows: list) -> list:  # a kernel whose bits depend on the rows beside
        out = real(self, rows)
        if len(rows) > 1:
            out[0][0] = (out[0][0][0] + 1e-6, out[0][0][1])
        return out

    monkeypatch.setattr(HFBackend, "_packed_pass", off_by_a_bit)
    assert not alone._packs_rows
    monkeypatch.undo()
    calls: list[int] = []
    monkeypatch.setattr(HFBackend, "_packed_pass", lambda self, rows: calls.append(1) or real(self, rows))
    conversation = [{"role": "user", "content": "What is 3/10 of 20?"}]
    config = GenerationConfig(max_new_tokens=8, temperature=0.0)
    [result] = alone.generate([conversation], config)
    assert result.ok and not calls  # every pass of its own, through the model's own attention
    assert packed.generate([conversation], config)[0].ok and calls


def test_a_transformers_without_the_attention_registries_keeps_the_models_attention(
        tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tutorzoo.agents.backends.hf as hf

    def missing() -> None:
        raise ImportError("cannot import name 'AttentionMaskInterface'")

    monkeypatch.setattr(hf, "_register_rows_attention", missing)
    backend = HFBackend(str(tiny_model_dir), threads=1)
    assert backend.model.config._attn_implementation == "sdpa" and not backend._packs_rows
    assert backend.generate([[{"role": "user", "content": "What is 3/10 of 20?"}]],
                            GenerationConfig(max_new_tokens=6))[0].ok
