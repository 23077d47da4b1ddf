"""``tutorzoo eval --wandb`` logging, checked on disk in W&B's offline mode: the run directory and its
``.wandb`` log (read back record by record), the metrics and transcripts tables, the report artifact, the
run config — and no secret in any file W&B wrote."""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
from pathlib import Path

import pytest

pytest.importorskip("wandb")

from tutorzoo.eval.wandb_log import METRIC_COLUMNS, TRANSCRIPT_COLUMNS, log_run  # noqa: E402

ENV_SECRET = "sk-fake-openai-key-0123456789"
CONFIG_SECRET = "sk-judge-config-secret-4242"
TUTORS = ["socratic", "random"]


def wandb_records(path: Path) -> list:
    """The protobuf records of a ``.wandb`` file (a LevelDB-style log: 7-byte header, 32 KiB blocks)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B", "not a W&B transaction log"
    block, pos, pending, out = 32768, 7, b"", []
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        chunk, pos = data[pos + 7:pos + 7 + length], pos + 7 + length
        if kind in (1, 2):  # full, first
            pending = chunk
        elif kind in (3, 4):  # middle, last
            pending += chunk
        if kind in (1, 4) and pending:
            record = pb.Record()
            record.ParseFromString(pending)
            out.append(record)
            pending = b""
    return out


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor.registry import make_tutor
    from tutorzoo.eval.leaderboard import build, write_report
    from tutorzoo.eval.rollout import run_specs
    from tutorzoo.eval.suite import load_suite

    specs = load_suite("default").specs("all")[:2]
    records = list(run_specs(specs, TUTORS, make_tutor, SimulatedStudent))
    records[0]["transcript"][0]["utterance"] = f"the key is {ENV_SECRET}"
    board = build(records)
    out = tmp_path_factory.mktemp("eval")
    run_info = {"suite": "default", "version": 1, "split": "all", "tutors": ", ".join(TUTORS),
                "judge_config": {"backend": "openai:judge-model", "api_key": CONFIG_SECRET, "temperature": 0.0},
                "note": f"endpoint key {ENV_SECRET}"}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", ENV_SECRET)
        write_report(board, out, "TutorZoo leaderboard", run_info)
        if importlib.util.find_spec("matplotlib") is not None:
            from tutorzoo.eval.report_html import write_html_report

            write_html_report(out, board, records, run_info)
        else:  # the report extra is optional; the artifact still carries a report.html
            (out / "report.html").write_text("<!DOCTYPE html><title>report</title>", encoding="utf-8")
    wandb_dir = tmp_path_factory.mktemp("wandb")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WANDB_MODE", "offline")
        mp.setenv("WANDB_DIR", str(wandb_dir))
        for var in ("WANDB_DATA_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_ARTIFACT_DIR"):
            mp.setenv(var, str(wandb_dir / var.lower()))
        mp.setenv("OPENAI_API_KEY", ENV_SECRET)
        run_dir = log_run(out, run_info, records, board)
    return {"run_dir": run_dir, "out": out, "records": records, "board": board, "wandb_dir": wandb_dir}


def test_offline_run_on_disk(logged: dict) -> None:
    run_dir = logged["run_dir"]
    assert run_dir is not None and run_dir.is_dir() and run_dir.name.startswith("offline-run-")
    assert run_dir.parent == logged["wandb_dir"] / "wandb"
    assert len(list(run_dir.glob("run-*.wandb"))) == 1
    html = (run_dir / "files" / "report.html").read_bytes()  # copied into the run's files
    assert html == (logged["out"] / "report.html").read_bytes()
    metrics = json.loads((run_dir / "files" / "metrics.json").read_text())
    assert metrics["groups"] == json.loads((logged["out"] / "metrics.json").read_text())["groups"]
    assert metrics["run"]["judge_config"]["api_key"] == "***"  # masked in the copy even if the input was not
    assert (run_dir / "files" / "report.md").read_text().startswith("# TutorZoo leaderboard")


def test_config_summary_tables_and_artifact(logged: dict) -> None:
    run_dir, records, board = logged["run_dir"], logged["records"], logged["board"]
    log = wandb_records(next(run_dir.glob("run-*.wandb")))
    kinds = [r.WhichOneof("record_type") for r in log]

    run = next(r.run for r, k in zip(log, kinds, strict=True) if k == "run")
    assert run.project == "tutorzoo" and run.display_name.startswith("eval__default__0__")
    config = {u.key: json.loads(u.value_json) for u in run.config.update}
    assert config["suite"] == "default" and config["ranking"] == board["ranking"]
    assert config["judge_config"] == {"backend": "openai:judge-model", "api_key": "***", "temperature": 0.0}
    assert config["note"] == "endpoint key ***"

    summary = {u.key: json.loads(u.value_json) for r, k in zip(log, kinds, strict=True) if k == "summary"
               for u in r.summary.update if u.key}
    for tutor in TUTORS:
        expected = board["metrics"]["groups"][tutor]["metrics"]["learning_gain"]["mean"]
        assert summary[f"{tutor}/learning_gain"] == pytest.approx(expected)
    assert summary["n_records"] == len(records)

    artifacts = {r.artifact.type: r.artifact for r, k in zip(log, kinds, strict=True) if k == "artifact"}
    report = artifacts["report"]
    assert report.name == "report-default"
    assert {c.path for c in report.manifest.contents} == {"report.html", "metrics.json", "report.md"}

    tables = {p.name.split("_")[0]: json.loads(p.read_text()) for p in (run_dir / "files/media/table").glob("*")}
    assert tables["transcripts"]["columns"] == list(TRANSCRIPT_COLUMNS)
    assert len(tables["transcripts"]["data"]) == len(records)
    first = tables["transcripts"]["data"][0]
    assert first[0] == records[0]["tutor"] and first[2] == f"math/{records[0]['spec']['task_id']}"
    assert "the key is ***" in first[TRANSCRIPT_COLUMNS.index("transcript")]
    assert "intent=" in "".join(row[TRANSCRIPT_COLUMNS.index("transcript")] for row in tables["transcripts"]["data"])
    for column in range(len(TRANSCRIPT_COLUMNS)):  # one type per column (None allowed for missing numbers)
        types = {type(row[column]).__name__ for row in tables["transcripts"]["data"]} - {"NoneType"}
        assert len(types) <= 1, (TRANSCRIPT_COLUMNS[column], types)
    assert tables["metrics"]["columns"] == list(METRIC_COLUMNS)
    n_metrics = sum(len(board["metrics"]["groups"][t]["metrics"]) for t in TUTORS)
    assert len(tables["metrics"]["data"]) == n_metrics


def test_health_and_paired_comparisons_are_logged(logged: dict) -> None:
    run_dir, board = logged["run_dir"], logged["board"]
    log = wandb_records(next(run_dir.glob("run-*.wandb")))
    kinds = [r.WhichOneof("record_type") for r in log]
    summary = {u.key: json.loads(u.value_json) for r, k in zip(log, kinds, strict=True) if k == "summary"
               for u in r.summary.update if u.key}
    for tutor in TUTORS:
        health = board["health"][tutor]
        assert summary[f"{tutor}/n_scored"] == health["scored"] and summary[f"{tutor}/n_failed"] == health["failed"]
        assert summary[f"{tutor}/invalid_turn_share"] == pytest.approx(health["invalid_share"])
    pairs = board["paired"]["metrics"]["learning_gain"]
    assert len(pairs) == len(TUTORS) * (len(TUTORS) - 1) // 2
    for pair in pairs:
        assert summary[f"paired/learning_gain/{pair['a']} vs {pair['b']}"] == pytest.approx(pair["diff"])
    tables = {p.name.split("_")[0]: json.loads(p.read_text()) for p in (run_dir / "files/media/table").glob("*")}
    assert tables["paired"]["columns"][:5] == ["metric", "a", "b", "n", "diff"]
    assert [row[1:3] for row in tables["paired"]["data"]] == [[p["a"], p["b"]] for p in pairs]
    assert [row[0] for row in tables["health"]["data"]] == list(board["health"])


def test_no_secret_in_any_file(logged: dict) -> None:
    seen = 0
    for path in logged["wandb_dir"].rglob("*"):
        if path.is_file():
            seen += 1
            data = path.read_bytes()
            assert ENV_SECRET.encode() not in data, path
            assert CONFIG_SECRET.encode() not in data, path
    assert seen >= 5


def test_disabled_mode_logs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "disabled")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    board = {"ranking": [], "metrics": {"groups": {}}}
    assert log_run(tmp_path / "out", {"suite": "default"}, [], board) is None
    assert not (tmp_path / "wandb").exists()


def test_missing_wandb_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tutorzoo.envs.errors import ConfigError

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setitem(sys.modules, "wandb", None)  # `import wandb` now raises ImportError
    with pytest.raises(ConfigError, match=r"pip install 'tutorzoo\[wandb\]'"):
        log_run(tmp_path, {"suite": "default"}, [], {"ranking": [], "metrics": {"groups": {}}})
