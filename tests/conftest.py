"""Shared fixtures: the tiny offline model, built once per test session (about 5 s, no network)."""

from __future__ import annotations

import importlib.abc
import os
import sys
from pathlib import Path

import pytest

# the shared helpers (chat_server, *_fixtures, peer_files) live here, beside the per-package folders
# (tests/envs, tests/agents, tests/rewards, tests/train, tests/eval) that mirror the code
sys.path.insert(0, str(Path(__file__).resolve().parent))



class _BareNameGuard(importlib.abc.MetaPathFinder):
    """The tests run from the checkout's root, where ``envs``, ``agents``, ``rewards``, ``train`` and ``eval`` would
    import as top-level modules although an installed TutorZoo has only ``tutorzoo``. Importing one of them here
    fails, so code that names one (``import envs``, ``files("envs")``) fails its test instead of a user's run."""

    BARE = frozenset({"envs", "agents", "rewards", "train", "eval"})

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in self.BARE:
            raise ModuleNotFoundError(f"No module named {fullname!r}: import tutorzoo.{fullname}", name=fullname)
        return None


sys.meta_path.insert(0, _BareNameGuard())

# no hub access at test time: anything not on disk must fail fast instead of trying to download
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the tiny tokenizer + 2-layer Llama of :mod:`tutorzoo.train.tiny_model` (seed 0)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tutorzoo.train.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny_model"), seed=0)
