"""The HF backend's seeded sampler: each row draws from the temperature / top-p distribution with its own stream,
one uniform a step, so a row's tokens do not depend on the rows beside it."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from tutorzoo.agents.backends.base import GenerationConfig  # noqa: E402
from tutorzoo.agents.backends.hf import _RowSampler  # noqa: E402

PROBS = [0.5, 0.3, 0.2, 0.0]


def picks(sampler: _RowSampler, scores: torch.Tensor, steps: int) -> list[list[int]]:
    rows: list[list[int]] = [[] for _ in range(scores.shape[0])]
    for _ in range(steps):
        out = sampler(torch.zeros(scores.shape[0], 1, dtype=torch.long), scores)
        assert torch.isfinite(out).sum(dim=-1).tolist() == [1] * scores.shape[0]  # greedy picks exactly that token
        for row, token in enumerate(out.argmax(dim=-1).tolist()):
            rows[row].append(token)
    return rows


def test_draws_follow_the_distribution_and_never_a_token_of_no_mass() -> None:
    scores = torch.tensor([[math.log(p) if p else float("-inf") for p in PROBS]])
    config = GenerationConfig(temperature=1.0, top_p=1.0)
    draws = [t for seed in range(40) for t in picks(_RowSampler([seed], config), scores, 100)[0]]
    counts = [draws.count(k) / len(draws) for k in range(len(PROBS))]
    assert counts[3] == 0.0
    for seen, p in zip(counts[:3], PROBS[:3], strict=True):  # 4,000 draws: s.e. at most 0.008
        assert abs(seen - p) < 0.03, counts


def test_temperature_and_top_p_shape_the_draws() -> None:
    scores = torch.tensor([[math.log(p) for p in PROBS[:3]]])
    nucleus = [t for seed in range(20) for t in
               picks(_RowSampler([seed], GenerationConfig(temperature=1.0, top_p=0.6)), scores, 100)[0]]
    assert set(nucleus) == {0, 1}  # 0.5 alone does not reach 0.6; 0.5 + 0.3 does: the 0.2 token is out
    cold = [t for seed in range(20) for t in
            picks(_RowSampler([seed], GenerationConfig(temperature=0.2, top_p=1.0)), scores, 100)[0]]
    assert cold.count(0) / len(cold) > 0.9  # p ** 5 renormalised: the first token takes ~92% at temperature 0.2


def test_a_row_draws_the_same_tokens_alone_as_in_any_batch() -> None:
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(5, 300, generator=gen)
    config = GenerationConfig(temperature=0.8, top_p=0.95)
    steps = 2 * _RowSampler.BLOCK + 7  # across blocks of uniforms
    batched = picks(_RowSampler([11, 12, 13, 14, 15], config), scores, steps)
    for row, seed in enumerate([11, 12, 13, 14, 15]):
        assert picks(_RowSampler([seed], config), scores[row:row + 1], steps)[0] == batched[row]
    assert picks(_RowSampler([12], config), scores[1:2], steps)[0] != batched[0]  # another seed, other draws
    assert len(set(batched[0])) > 5  # a sample, not the argmax
