"""The typed records (envs/records.py, docs/records.md): one set of SID field names in the env's info and its
transcript, one constructor per record, a versioned episode schema, and files written before the version field
still scored and resumed the same."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs import spaces as tzs
from tutorzoo.envs import tutoring_v0
from tutorzoo.envs.acts import ACT_FIELD_KEYS
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.labels import TURN_FIELDS
from tutorzoo.envs.records import (
    ENDED_BY,
    LEGACY_TURN_KEYS,
    SCHEMA_VERSION,
    EpisodeRecord,
    TurnRecord,
    TutorInfo,
    json_form,
    schema_version,
    turn_from_json,
)
from tutorzoo.eval.cli import main
from tutorzoo.eval.metrics import episode_metrics
from tutorzoo.eval.rollout import run_episode
from tutorzoo.rewards.terms import canonical_transcript

ROOT = Path(__file__).resolve().parents[2]
TUTOR_SID_KEYS = {"teacher_intent", "teaching_strategy", "teacher_guidance_level", "discipline", "discipline_transfer"}


def _play(action_mode: str, seed: int = 3) -> tuple[list[tuple[dict, dict]], dict, list[dict]]:
    """Play one episode; return (info["last_act"], the transcript's last tutor turn) after every tutor turn,
    the record and every tutor info seen."""
    env = tutoring_v0.env(task_set="math", action_mode=action_mode)
    env.reset(seed=seed)
    tutor, student = make_tutor("socratic"), SimulatedStudent("all_round_partly_wrong")
    tutor.reset(seed=1)
    student.reset(seed=2)
    rng = np.random.default_rng(seed)
    pairs, infos = [], []
    for agent in env.agent_iter():
        obs, _r, term, trunc, info = env.last()
        if agent == "tutor":
            infos.append(info)
        if term or trunc:
            env.step(None)
            continue
        if agent == "tutor":
            if info["observe_only"]:
                env.step("")
                continue
            action = tutor.act(obs, info) if action_mode == "text" else [int(rng.integers(n)) for n in tzs.ACT_NVEC]
            env.step(action)
            raw = env.unwrapped
            pairs.append((raw.infos["tutor"]["last_act"], raw.transcript[-1]))
        else:
            env.step(student.act(obs, info))
    return pairs, env.unwrapped.episode_record(), infos


@pytest.mark.parametrize("action_mode", ["text", "act"])
def test_last_act_and_the_transcript_turn_use_the_same_keys(action_mode: str) -> None:
    pairs, _record, _infos = _play(action_mode)
    assert pairs
    for last_act, turn in pairs:
        assert turn["speaker"] == "tutor"
        assert set(last_act) & set(TURN_FIELDS) == TUTOR_SID_KEYS  # SID's names, all five
        assert not set(last_act) & set(LEGACY_TURN_KEYS), "a short name (intent, ...) is back in info['last_act']"
        shared = set(last_act) & set(turn)
        assert TUTOR_SID_KEYS | {"target_kc", "reveals_answer", "invalid"} <= shared
        assert {k: last_act[k] for k in shared} == {k: turn[k] for k in shared}


def test_act_field_keys_name_turn_fields() -> None:
    assert set(ACT_FIELD_KEYS.values()) <= set(TURN_FIELDS)
    assert LEGACY_TURN_KEYS == ACT_FIELD_KEYS


def test_the_record_has_the_documented_layout() -> None:
    _pairs, record, infos = _play("text")
    assert record.schema_version == SCHEMA_VERSION
    run_fields = ["spec", "tutor", "student", "failures", "key", "judgments", "replicate", "run_seed"]
    env_fields = [f.name for f in dataclasses.fields(EpisodeRecord) if f.name not in run_fields]
    assert sorted(record.to_json()) == sorted(env_fields)  # a record straight from the env has no run field
    assert record.ended_by in ENDED_BY
    for turn in record["transcript"]:
        assert list(turn) == list(TurnRecord.__annotations__)
        assert list(turn)[: len(TURN_FIELDS)] == list(TURN_FIELDS)
    for info in infos:
        assert set(TutorInfo.__required_keys__) <= set(info) <= set(TutorInfo.__annotations__) | \
            set(TutorInfo.__optional_keys__)
    assert "outcome" in infos[-1] and "outcome" not in infos[0]
    line = json.dumps(record.to_json())
    assert json.loads(line) == record and EpisodeRecord.from_json(json.loads(line)).to_json() == record.to_json()


def test_docs_list_every_record_field() -> None:
    doc = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \|", doc, flags=re.MULTILINE))
    fields = {f.name for f in dataclasses.fields(EpisodeRecord)} | set(TurnRecord.__annotations__) | \
        set(TutorInfo.__required_keys__) | set(TutorInfo.__optional_keys__)
    assert fields - documented == set(), "document these fields in docs/records.md"
    assert f"carries `schema_version`, now {SCHEMA_VERSION} " in doc, "docs/records.md states another version"


def _shorten(record: dict) -> dict:
    """A record whose turns use the short names info["last_act"] had before the rename."""
    short = {new: old for old, new in LEGACY_TURN_KEYS.items()}
    return {**record, "transcript": [{short.get(k, k): v for k, v in t.items()} for t in record["transcript"]]}


def test_turns_keyed_by_the_short_names_read_the_same() -> None:
    spec = EpisodeSpec(task_set="math", persona="weak_knowledge_partly_wrong", seed=5)
    record = run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona), "socratic")
    old = _shorten(record)
    assert "intent" in old["transcript"][1] and "teacher_intent" not in old["transcript"][1]
    assert [turn_from_json(t) for t in old["transcript"]] == record["transcript"]
    assert canonical_transcript(old["transcript"]) == canonical_transcript(record["transcript"])
    assert episode_metrics(old) == episode_metrics(record)


def test_schema_version_of_a_record_from_before_the_field() -> None:
    assert schema_version({"transcript": []}) == 1
    assert schema_version({"schema_version": SCHEMA_VERSION}) == SCHEMA_VERSION


def _strip_version(path: Path, keep: int | None = None) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()[:keep]
    old = []
    for line in lines:
        record = json.loads(line)
        record.pop("schema_version")
        old.append(json.dumps(json_form(record), sort_keys=True, ensure_ascii=False))
    path.write_text("".join(line + "\n" for line in old), encoding="utf-8")


def test_eval_resume_continues_a_run_written_before_schema_version(tmp_path: Path) -> None:
    args = ["eval", "--suite", "default", "--limit", "3", "--tutor", "socratic", "--workers", "1", "--no-html"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main([*args, "--out", str(whole)]) == 0
    assert main([*args, "--out", str(cut)]) == 0
    _strip_version(cut / "episodes.jsonl", keep=2)  # an older run, interrupted after two episodes
    assert main([*args, "--resume", "--out", str(cut)]) == 0
    records = [json.loads(line) for line in (cut / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    assert ["schema_version" in r for r in records] == [False, False, True]
    assert (cut / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()


def test_tutorzoo_score_reads_a_file_from_before_schema_version(tmp_path: Path) -> None:
    spec = EpisodeSpec(task_set="math", persona="weak_knowledge_partly_wrong", seed=5)
    records = [run_episode(spec, make_tutor(name), SimulatedStudent(spec.persona), name)
               for name in ("socratic", "lecturer")]
    for name, rows in (("new", records), ("old", [_shorten({k: v for k, v in r.items() if k != "schema_version"})
                                                   for r in records])):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "episodes.jsonl").write_text("".join(json.dumps(json_form(r), sort_keys=True) + "\n" for r in rows))
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    tutorzoo = Path(sys.executable).with_name("tutorzoo")
    for name in ("new", "old"):
        done = subprocess.run([str(tutorzoo), "score", str(tmp_path / name / "episodes.jsonl"), "--strict"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    new, old = (json.loads((tmp_path / n / "metrics.json").read_text()) for n in ("new", "old"))
    assert new["n_records"] == 2 and not new["skipped"]
    assert {k: old[k] for k in ("per_episode", "aggregate")} == {k: new[k] for k in ("per_episode", "aggregate")}


def test_tutorzoo_rollout_writes_versioned_records_with_the_sid_names(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("PYTHONPATH", None)
    tutorzoo = Path(sys.executable).with_name("tutorzoo")
    done = subprocess.run([str(tutorzoo), "rollout", "--tutor", "socratic", "--episodes", "1", "--no-html",
                           "--out", str(tmp_path / "run")], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    [record] = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert record["schema_version"] == SCHEMA_VERSION
    assert record["transcript"] and all(set(t) == set(TurnRecord.__annotations__) for t in record["transcript"])


# --- the typed episode record -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def played() -> EpisodeRecord:
    spec = EpisodeSpec(task_set="math", persona="weak_knowledge_partly_wrong", seed=5)
    return run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona), "socratic")


def test_a_played_record_reads_by_attribute_and_as_its_json_form(played: EpisodeRecord) -> None:
    line = json.loads(json.dumps(played.to_json(), sort_keys=True))
    assert played.learning_gain is not None and played.learning_gain == line["learning_gain"]
    assert played.tutor == "socratic" and played.failures == [] and not played.failed
    assert dict(played) == line and played == line and set(played) == set(line)
    assert "key" not in played and played.get("key") is None  # a run field left unset is absent, as on disk
    with pytest.raises(KeyError):
        played["key"]
    assert played.outcome.to_dict() == {k: line[k] for k in played.outcome.to_dict()}
    with pytest.raises(dataclasses.FrozenInstanceError):
        played.ended_by = "leak"  # type: ignore[misc]


def test_from_json_gives_back_the_record(played: EpisodeRecord) -> None:
    line = json.loads(json.dumps(played.to_json()))
    again = EpisodeRecord.from_json(line)
    assert json.dumps(again.to_json(), sort_keys=True) == json.dumps(played.to_json(), sort_keys=True)
    short = EpisodeRecord.from_json(_shorten({k: v for k, v in line.items() if k != "schema_version"}))
    assert short.schema_version == 1 and short.transcript == played.transcript  # legacy turn keys renamed


@pytest.mark.parametrize(("change", "message"), [
    pytest.param({"schema_version": SCHEMA_VERSION + 1}, "newer than this TutorZoo reads", id="newer-version"),
    pytest.param({"score": 1.0}, r"unknown episode record fields \['score'\]", id="unknown-field"),
])
def test_from_json_refuses_what_it_cannot_read(played: EpisodeRecord, change: dict, message: str) -> None:
    from tutorzoo.envs.errors import DatasetError

    raw = {**played.to_json(), **change}
    with pytest.raises(DatasetError, match=message):
        EpisodeRecord.from_json(raw, where="episodes.jsonl:3")


def test_from_json_names_the_missing_fields(played: EpisodeRecord) -> None:
    from tutorzoo.envs.errors import DatasetError

    raw = {k: v for k, v in played.to_json().items() if k not in ("transcript", "reward")}
    with pytest.raises(DatasetError, match=r"episodes.jsonl:3: the episode record lacks \['transcript', 'reward'\]"):
        EpisodeRecord.from_json(raw, where="episodes.jsonl:3")
