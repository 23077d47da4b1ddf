"""The runner's resume path on hand-written files: which records survive a crash, when a run may continue,
and which units a resumed run still hands out (see .ci/mutation.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.eval.runner import MAX_PLAIN_CHUNK, RUN_FILE, _chunks, _record_key, prepare_output, read_records

A = {"tutor": "a", "key": "k1"}
B = {"tutor": "b", "key": "k2"}


def lines(*records: dict) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


# --- read_records ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "expected", "repaired"), [
    pytest.param(b"", [], b"", id="empty"),
    pytest.param(lines(A, B), [A, B], lines(A, B), id="complete"),
    pytest.param(lines(A) + b'{"tutor": "b", "ke', [A], lines(A), id="truncated-last-line-cut"),
    pytest.param(lines(A) + b"[1, 2]", [A], lines(A), id="last-line-not-an-object-cut"),
    pytest.param(lines(A) + b'{"key": "k2"}', [A], lines(A), id="last-line-without-tutor-cut"),
    pytest.param(lines(A) + json.dumps(B).encode(), [A, B], lines(A, B), id="last-line-without-newline-finished"),
    pytest.param(lines(A) + b"\n  \n" + lines(B), [A, B], lines(A) + b"\n  \n" + lines(B), id="blank-lines-skipped"),
    pytest.param(b'{"tutor": "a", "ke', [], b"", id="only-a-truncated-line"),
])
def test_read_records_drops_only_a_broken_last_line(tmp_path: Path, data: bytes, expected: list, repaired: bytes):
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(data)
    assert read_records(path) == expected
    assert path.read_bytes() == data  # reading alone never changes the file
    assert read_records(path, repair=True) == expected
    assert path.read_bytes() == repaired
    assert read_records(path) == expected


@pytest.mark.parametrize("bad", [b"not json\n", b"[1]\n", b'{"key": "x"}\n'])
def test_read_records_refuses_a_bad_line_before_the_last(tmp_path: Path, bad: bytes):
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(lines(A) + bad + lines(B))
    with pytest.raises(DatasetError, match=r"episodes\.jsonl:2: not a JSON record"):
        read_records(path, repair=True)
    assert path.read_bytes() == lines(A) + bad + lines(B)


def test_read_records_of_a_missing_file_is_empty(tmp_path: Path):
    assert read_records(tmp_path / "none.jsonl") == []


# --- _record_key ----------------------------------------------------------------------------------------------


def test_record_key_prefers_the_stored_key_then_the_spec():
    assert _record_key({"tutor": "a", "key": 7, "spec": {"task_set": "math"}}) == "7"
    with pytest.raises(DatasetError, match="tutor 'a' has no 'key'"):
        _record_key({"tutor": "a"})


# --- prepare_output -------------------------------------------------------------------------------------------

IDENT = {"suite": "default", "version": 1, "split": "all", "tutors": ["a"], "limit": None}


def test_fresh_run_writes_its_identity_and_an_empty_file(tmp_path: Path):
    out = tmp_path / "run"
    path = out / "episodes.jsonl"
    assert prepare_output(out, path, IDENT, resume=False) == []
    assert json.loads((out / RUN_FILE).read_text()) == IDENT
    assert path.read_bytes() == b""
    # an empty records file is not a run to protect: starting again needs no flag
    assert prepare_output(out, path, IDENT, resume=False) == []


def _finished(tmp_path: Path, data: bytes = lines(A, B), ident: dict | None = IDENT) -> tuple[Path, Path]:
    out = tmp_path / "run"
    out.mkdir()
    path = out / "episodes.jsonl"
    path.write_bytes(data)
    if ident is not None:
        (out / RUN_FILE).write_text(json.dumps(ident))
    return out, path


def test_records_are_never_overwritten_without_a_flag(tmp_path: Path):
    out, path = _finished(tmp_path)
    with pytest.raises(ConfigError, match="already holds 2 finished records; pass --resume"):
        prepare_output(out, path, IDENT, resume=False)
    assert path.read_bytes() == lines(A, B)


def test_resume_returns_the_records_and_repairs_a_cut_line(tmp_path: Path):
    out, path = _finished(tmp_path, lines(A, B) + b'{"tut')
    assert prepare_output(out, path, IDENT, resume=True) == [A, B]
    assert path.read_bytes() == lines(A, B)


def test_resume_of_an_empty_folder_starts_fresh(tmp_path: Path):
    out = tmp_path / "new"
    assert prepare_output(out, out / "episodes.jsonl", IDENT, resume=True) == []
    assert json.loads((out / RUN_FILE).read_text()) == IDENT


def test_overwrite_starts_over(tmp_path: Path):
    out, path = _finished(tmp_path, ident={**IDENT, "suite": "other"})
    assert prepare_output(out, path, IDENT, resume=False, overwrite=True) == []
    assert path.read_bytes() == b"" and json.loads((out / RUN_FILE).read_text()) == IDENT


def test_resume_and_overwrite_together_are_refused(tmp_path: Path):
    out, path = _finished(tmp_path)
    with pytest.raises(ConfigError, match="give one of them"):
        prepare_output(out, path, IDENT, resume=True, overwrite=True)


@pytest.mark.parametrize(("saved", "fragment"), [
    pytest.param({**IDENT, "tutors": ["a", "b"]}, "tutors: ['a', 'b'] there, ['a'] now", id="other-tutors"),
    pytest.param({**IDENT, "limit": 4}, "limit: 4 there, None now", id="other-limit"),
    pytest.param({k: v for k, v in IDENT.items() if k != "split"}, "split: None there, 'all' now", id="key-missing"),
    pytest.param({**IDENT, "extra": 1}, "extra: 1 there, None now", id="key-added"),
])
def test_resume_refuses_another_run(tmp_path: Path, saved: dict, fragment: str):
    out, path = _finished(tmp_path, ident=saved)
    with pytest.raises(ConfigError, match="cannot resume") as err:
        prepare_output(out, path, IDENT, resume=True)
    assert fragment in str(err.value)
    assert path.read_bytes() == lines(A, B)


def test_resume_without_or_with_a_broken_run_file_is_refused(tmp_path: Path):
    out, path = _finished(tmp_path, ident=None)
    with pytest.raises(ConfigError, match=f"no {RUN_FILE}"):
        prepare_output(out, path, IDENT, resume=True)
    (out / RUN_FILE).write_text("{not json")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        prepare_output(out, path, IDENT, resume=True)


def test_out_naming_a_file_is_refused(tmp_path: Path):
    out = tmp_path / "run.txt"
    out.write_text("x")
    with pytest.raises(ConfigError, match="takes a folder"):
        prepare_output(out, tmp_path / "episodes.jsonl", IDENT, resume=False)


# --- _chunks: what a resumed run still hands out ---------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    name: str

    def key(self) -> str:
        return self.name


UNITS = [Unit(f"u{i}") for i in range(10)]


def _plan(pending: dict[str, set[str]], batched: dict[str, bool], batch_size: int = 4, workers: int = 1):
    chunks = _chunks(None, UNITS, pending, batched, {}, None, batch_size, workers)
    return [(c.index, c.tutor, [u.name for u in c.units]) for c in chunks]


def test_batched_chunks_are_cut_at_fixed_positions_minus_what_is_done():
    all_keys = {u.key() for u in UNITS}
    assert _plan({"m": all_keys}, {"m": True}) == [
        (0, "m", ["u0", "u1", "u2", "u3"]), (1, "m", ["u4", "u5", "u6", "u7"]), (2, "m", ["u8", "u9"])]
    # resumed with u0..u4 done: the same cuts, so u5..u7 still travel together, u4's batch is not re-cut
    assert _plan({"m": all_keys - {"u0", "u1", "u2", "u3", "u4"}}, {"m": True}) == [
        (0, "m", ["u5", "u6", "u7"]), (1, "m", ["u8", "u9"])]


def test_plain_chunks_are_about_four_per_worker_and_skip_finished_tutors():
    all_keys = {u.key() for u in UNITS}
    # 10 units, 1 worker: ceil(10 / 4) = 3 a chunk
    assert [len(units) for _, _, units in _plan({"p": all_keys, "done": set()}, {"p": False, "done": False})] == [
        3, 3, 3, 1]
    # 2 workers: ceil(10 / 8) = 2 a chunk
    assert [len(u) for _, _, u in _plan({"p": all_keys}, {"p": False}, workers=2)] == [2, 2, 2, 2, 2]
    # many workers: at least one unit a chunk
    assert [len(u) for _, _, u in _plan({"p": {"u1", "u2"}}, {"p": False}, workers=64)] == [1, 1]


def test_plain_chunks_are_capped():
    units = [Unit(f"u{i:03d}") for i in range(200)]
    chunks = _chunks(None, units, {"p": {u.key() for u in units}}, {"p": False}, {}, None, 4, 1)
    assert max(len(c.units) for c in chunks) == MAX_PLAIN_CHUNK == 16
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_identity_leaves_out_what_may_change_on_resume():
    from types import SimpleNamespace

    from tutorzoo.eval.runner import _identity

    suite = SimpleNamespace(name="default", version=2, kind="episode")
    ident = _identity(suite, "held_out", ["a", "b"], 4, 12, {"temperature": 0.5, "base_url": "http://x",
                                                             "cache_dir": "c", "alpha": 1},
                      {"backend": "openai:m", "base_url": "http://y", "cache_dir": "d"}, 8)
    assert ident == {"suite": "default", "version": 2, "kind": "episode", "split": "held_out", "tutors": ["a", "b"],
                     "limit": 4, "units": 12, "tutor_kwargs": {"alpha": 1, "temperature": 0.5},
                     "judge": {"backend": "openai:m"}, "batch_size": 8}
    assert list(ident["tutor_kwargs"]) == ["alpha", "temperature"]
    assert _identity(suite, "all", ["a"], None, 1, {}, None, None)["judge"] is None


def test_run_file_is_sorted_indented_json_with_a_newline_in_a_new_nested_folder(tmp_path: Path):
    out = tmp_path / "a" / "b" / "run"
    prepare_output(out, out / "episodes.jsonl", {"z": 1, "a": [1, 2]}, resume=False)
    assert (out / RUN_FILE).read_text(encoding="utf-8") == '{\n  "a": [\n    1,\n    2\n  ],\n  "z": 1\n}\n'


def test_a_records_file_of_one_blank_line_is_not_empty(tmp_path: Path):
    out, path = _finished(tmp_path, data=b"\n")
    with pytest.raises(ConfigError, match="already holds 0 finished records"):
        prepare_output(out, path, IDENT, resume=False)
