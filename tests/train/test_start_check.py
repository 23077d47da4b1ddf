"""GRPO and DPO on a fresh clone: a start that does not exist yet (the SFT recipe's adapter, a local base model
folder) is one line naming what to run first, exit 2, said before any model library loads and without a single
request to the model hub (``HF_ENDPOINT`` points at a loopback listener that counts connections)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from tutorzoo.envs.errors import ConfigError
from tutorzoo.train.common import check_start

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def hub() -> Iterator[dict]:
    """A loopback listener standing in for the hub: it counts the connections made to it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    seen = {"connections": 0, "url": f"http://127.0.0.1:{server.getsockname()[1]}"}
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            seen["connections"] += 1
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield seen
    stop.set()
    thread.join()
    server.close()


@pytest.mark.parametrize(
    ("recipe", "extra", "needle"),
    [
        pytest.param("grpo", [], "adapter 'runs/train/sft__default__0/adapter' is not a local adapter folder",
                     id="grpo-default"),
        pytest.param("grpo", ["--set", "adapter=null"], "base_model 'models/tutor-small' is not a folder yet",
                     id="grpo-no-adapter"),
        pytest.param("dpo", [], "adapter 'runs/train/sft__default__0/adapter' is not a local adapter folder",
                     id="dpo-default"),
    ],
)
def test_fresh_clone_says_what_to_run_first(recipe: str, extra: list[str], needle: str, tmp_path: Path,
                                            hub: dict) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_ENDPOINT": hub["url"], "COLUMNS": "80", "NO_COLOR": "1",
           "WANDB_MODE": "disabled"}
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("TRANSFORMERS_OFFLINE", None)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tutorzoo", "train", recipe, "--config",
                           str(ROOT / "configs" / "train" / f"{recipe}.yaml"), *extra],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    text = (done.stdout + done.stderr).strip()
    assert done.returncode == 2, text
    assert len(text.splitlines()) == 1, text  # one line even at 80 columns
    assert needle in text and "run tutorzoo train sft --config configs/train/sft.yaml" in text
    assert hub["connections"] == 0
    assert time.monotonic() - started < 60  # no retries, no model library loaded
    assert not (tmp_path / "runs").exists()


def _cfg(**kw: object) -> SimpleNamespace:
    return SimpleNamespace(**{"base_model": None, "adapter": None, **kw})


@pytest.mark.parametrize(
    "cfg",
    [
        pytest.param(_cfg(), id="tiny-model"),
        pytest.param(_cfg(base_model="Qwen/Qwen2.5-1.5B-Instruct"), id="hub-id"),
        pytest.param(_cfg(base_model=str(ROOT / "configs")), id="existing-folder"),
    ],
)
def test_starts_that_can_load_pass(cfg: SimpleNamespace) -> None:
    check_start(cfg)


@pytest.mark.parametrize("base", ["models/nope", "./nope", "runs/x/base", "/no/such/dir"])
def test_missing_local_base_is_refused(base: str) -> None:
    with pytest.raises(ConfigError, match="is not a folder yet"):
        check_start(_cfg(base_model=base))
