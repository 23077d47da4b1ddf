"""One local model, one backend: seats that ask ``make_backend`` for the same model with the same options share it
(one copy of the weights; a lockstep round's tutor and student requests in one batch), and a folder rewritten since
is loaded anew."""

from __future__ import annotations

import gc
import json
import os
import shutil
import weakref
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tutorzoo.agents.backends import make_backend  # noqa: E402
from tutorzoo.agents.backends.hf import HFBackend  # noqa: E402
from tutorzoo.agents.student.llm import make_student_factory  # noqa: E402
from tutorzoo.agents.tutor import make_tutor  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.envs.engine import play  # noqa: E402
from tutorzoo.envs.records import json_form  # noqa: E402

SPECS = [EpisodeSpec(task_set=ts, persona="anxious", seed=s, protocol={"max_turns": 2})
         for s, ts in enumerate(("math", "stem", "mcq", "math"))]


def canonical(records: list[dict]) -> list[str]:
    return [json.dumps(json_form(r), sort_keys=True, default=str) for r in records]


def test_the_same_model_and_options_give_the_same_backend(tiny_model_dir: Path) -> None:
    first = make_backend(f"hf:{tiny_model_dir}", threads=1)
    assert make_backend(f"hf:{tiny_model_dir}", threads=1) is first
    assert make_backend(f"hf:{tiny_model_dir}", threads=1, batch_size=3) is not first  # other options: its own
    assert make_backend(f"hf:{tiny_model_dir}/", threads=1) is not first  # another spelling: loaded on its own


def test_a_backend_nobody_holds_is_let_go(tiny_model_dir: Path) -> None:
    backend = make_backend(f"hf:{tiny_model_dir}", threads=1, batch_size=5)
    gone = weakref.ref(backend)
    del backend
    gc.collect()
    assert gone() is None  # the registry keeps no model alive by itself
    assert isinstance(make_backend(f"hf:{tiny_model_dir}", threads=1, batch_size=5), HFBackend)


def test_a_model_folder_written_again_is_loaded_again(tiny_model_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    before = make_backend(f"hf:{folder}", threads=1)
    config = folder / "config.json"
    stat = config.stat()
    os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a checkpoint saved over it
    after = make_backend(f"hf:{folder}", threads=1)
    assert after is not before
    assert make_backend(f"hf:{folder}", threads=1) is after


def test_endpoint_clients_are_never_shared() -> None:
    pytest.importorskip("openai")
    options = {"base_url": "http://127.0.0.1:9/v1", "max_retries": 0}
    assert make_backend("openai:m", **options) is not make_backend("openai:m", **options)


def test_a_tutor_and_a_student_of_one_model_share_it_and_its_batches(tiny_model_dir: Path) -> None:
    options = {"threads": 1, "batch_size": 16, "max_new_tokens": 6}
    tutor = make_tutor(f"hf:{tiny_model_dir}", **options)
    make_student = make_student_factory(f"llm:hf:{tiny_model_dir}", **options)
    assert make_student("anxious").backend is tutor.backend  # type: ignore[attr-defined]
    calls: list[int] = []
    original = HFBackend.run_pooled

    def counting(self: HFBackend, rows: list) -> list:
        calls.append(len(rows))
        return original(self, rows)

    one = play(SPECS, tutor, make_student, batch_size=1)
    HFBackend.run_pooled = counting  # type: ignore[method-assign]
    try:
        shared = play(SPECS, tutor, make_student, batch_size=4)
        shared_calls, calls[:] = len(calls), []
        # the same seats on two backends of the model (other options): a lockstep round goes out as one batch per
        # backend, so the tutor's and the student's rows of a round are two batches
        two = play(SPECS, make_tutor(f"hf:{tiny_model_dir}", **options, prefix_cache_tokens=1 << 20),
                   make_student_factory(f"llm:hf:{tiny_model_dir}", **options), batch_size=4)
    finally:
        HFBackend.run_pooled = original  # type: ignore[method-assign]
    assert all(not r["failures"] for r in one + shared)
    assert canonical(shared) == canonical(one)
    assert canonical(two) == canonical(one)
    assert 0 < shared_calls < len(calls)
