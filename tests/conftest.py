"""Shared fixtures: the tiny offline model, built once per test session (about 5 s, no network)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# the shared helpers (chat_server, *_fixtures, peer_files) live here, beside the per-package folders
# (tests/envs, tests/agents, tests/rewards, tests/train, tests/eval) that mirror the code
sys.path.insert(0, str(Path(__file__).resolve().parent))

# no hub access at test time: anything not on disk must fail fast instead of trying to download
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the tiny tokenizer + 2-layer Llama of :mod:`train.tiny_model` (seed 0)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from train.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny_model"), seed=0)
