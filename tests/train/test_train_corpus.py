"""The KMP-Pile-style corpus (train/corpus.py): columns, the exact inference message format, filters, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("datasets")

from tutorzoo.agents.backends.base import GenerationResult  # noqa: E402
from tutorzoo.agents.student import SimulatedStudent  # noqa: E402
from tutorzoo.agents.tutor.llm import LLMTutor  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.envs.errors import ConfigError  # noqa: E402
from tutorzoo.eval.rollout import run_episode  # noqa: E402
from tutorzoo.eval.suite import load_suite  # noqa: E402
from tutorzoo.train.common import CONFIG_DIR, load_recipe_config  # noqa: E402
from tutorzoo.train.corpus import (  # noqa: E402
    RESEED_STRIDE,
    CorpusConfig,
    build_dataset,
    conversation_from_calls,
    corpus_specs,
    load_corpus,
    run,
)

LIMIT = 12


def cfg(**kw) -> CorpusConfig:
    base = {"limit": LIMIT, "wandb": {"mode": "disabled"}}
    return CorpusConfig.model_validate({**base, **kw})


@pytest.fixture(scope="module")
def small_corpus():
    return build_dataset(cfg())


def test_shipped_config_loads_and_points_at_the_train_split() -> None:
    c = load_recipe_config(CorpusConfig, CONFIG_DIR / "corpus.yaml")
    assert c.split == "train" and c.tutor == "socratic" and c.suite == "train-sft"
    with pytest.raises(ConfigError, match="min_rewrd"):
        load_recipe_config(CorpusConfig, CONFIG_DIR / "corpus.yaml", ["min_rewrd=0.1"])


def test_rows_have_every_column_and_the_inference_message_format(small_corpus) -> None:
    ds, stats = small_corpus
    expected = {"messages", "dialogue_type", "persona", "persona_family", "task_set", "task_id", "task_title", "spec",
                "spec_key", "seed", "rollout", "pretest_score", "posttest_score", "learning_gain",
                "learning_gain_same", "n_tutor_turns", "ended_by", "reward", "reward_components"}
    assert set(ds.column_names) == expected
    assert stats["episodes"] == LIMIT and stats["kept"] + sum(stats["dropped"].values()) == LIMIT
    train_keys = {s.key() for s in load_suite("default").specs("train")}
    for row in ds:
        msgs = row["messages"]
        assert msgs[0]["role"] == "system" and "tutor" in msgs[0]["content"]
        assert msgs[1]["role"] == "user" and msgs[1]["content"].startswith("Task:")  # the pre-test summary
        assert msgs[-1]["role"] == "assistant"
        assert all(m["role"] in ("user", "assistant") for m in msgs[1:])
        assert sum(m["role"] == "assistant" for m in msgs) == row["n_tutor_turns"]
        spec = EpisodeSpec.model_validate(json.loads(row["spec"]))
        assert spec.key() == row["spec_key"] in train_keys
        assert row["persona"] == spec.persona and row["task_id"] == spec.task_id
        comps = row["reward_components"]
        assert {"learning_gain", "sid_total_raw", "pedagogy"} <= set(comps)
        assert comps["learning_gain"] == pytest.approx(row["learning_gain"])
        assert isinstance(row["reward"], float) and row["dialogue_type"] == "tutoring"


class _ReplayBackend:
    """A chat backend that answers with a fixed list of turns and keeps every conversation it is sent."""

    name = "replay"

    def __init__(self, turns: list[str]) -> None:
        self.turns = list(turns)
        self.seen: list[list[dict]] = []

    def generate(self, conversations, config):
        out = []
        for conv in conversations:
            self.seen.append([dict(m) for m in conv])
            out.append(GenerationResult(text=self.turns.pop(0)))
        return out


def test_messages_equal_what_an_llm_tutor_receives(small_corpus) -> None:
    """Replaying a row's tutor turns through LLMTutor in the same episode sends it exactly the row's prefixes."""
    ds, _ = small_corpus
    for row in ds.select(range(3)):
        msgs = row["messages"]
        spec = EpisodeSpec.model_validate(json.loads(row["spec"]))
        backend = _ReplayBackend([m["content"] for m in msgs if m["role"] == "assistant"])
        record = run_episode(spec, LLMTutor(backend), SimulatedStudent(spec.persona))
        assert not record["failures"] and not backend.turns
        assistant_at = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
        assert [len(s) for s in backend.seen] == assistant_at
        for seen, i in zip(backend.seen, assistant_at, strict=True):
            assert seen == msgs[:i]
        assert record["learning_gain"] == pytest.approx(row["learning_gain"])  # the same episode, replayed


def test_conversation_check_refuses_rewritten_history() -> None:
    calls = [([{"role": "system", "content": "s"}, {"role": "user", "content": "q"}], "a1"),
             ([{"role": "system", "content": "s"}, {"role": "user", "content": "CHANGED"},
               {"role": "assistant", "content": "a1"}, {"role": "user", "content": "r"}], "a2")]
    transcript = [{"speaker": "tutor", "utterance": "a1"}, {"speaker": "student", "utterance": "r"},
                  {"speaker": "tutor", "utterance": "a2"}]
    with pytest.raises(ValueError, match="not a prefix"):
        conversation_from_calls(calls, transcript)
    calls[1][0][1]["content"] = "q"
    assert conversation_from_calls(calls, transcript)[-1] == {"role": "assistant", "content": "a2"}
    with pytest.raises(ValueError, match="tutor turns"):
        conversation_from_calls(calls, transcript[:1])


def test_filters_drop_and_count(small_corpus) -> None:
    ds, _ = small_corpus
    rewards = sorted(ds["reward"])
    cut = rewards[len(rewards) // 2]
    kept, stats = build_dataset(cfg(min_reward=cut))
    assert min(kept["reward"]) >= cut
    assert len(kept) == sum(r >= cut for r in ds["reward"])
    assert stats["dropped"].get("min_reward", 0) == len(ds) - len(kept)
    by_gain, stats = build_dataset(cfg(min_learning_gain=0.01))
    assert all(g is not None and g >= 0.01 for g in by_gain["learning_gain"])
    assert stats["dropped"].get("min_learning_gain", 0) == sum(g is None or g < 0.01 for g in ds["learning_gain"])
    with pytest.raises(ConfigError, match="empty"):
        build_dataset(cfg(min_reward=99.0))


def test_held_out_split_is_refused_and_reseeded_copies_avoid_it() -> None:
    with pytest.raises(ConfigError, match="held-out"):
        corpus_specs(cfg(split="held_out"))
    specs = corpus_specs(cfg(limit=3, rollouts_per_spec=3))
    assert len(specs) == 9
    assert [s.seed // RESEED_STRIDE for s in specs] == [0, 1, 2] * 3
    held = {s.key() for s in load_suite("default").specs("held_out")}
    assert not held & {s.key() for s in specs}


def test_same_config_gives_the_same_bytes(tmp_path: Path) -> None:
    a = run(cfg(limit=6, out_dir=str(tmp_path / "a")))
    b = run(cfg(limit=6, out_dir=str(tmp_path / "b")))
    assert a["fingerprint"] == b["fingerprint"] and a["kept"] == b["kept"] > 0
    for rel in ("dataset/data-00000-of-00001.arrow", "dataset/state.json", "dataset/dataset_info.json",
                "corpus.jsonl"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    loaded = load_corpus(tmp_path / "a")
    assert len(loaded) == a["kept"] and loaded[0]["messages"][-1]["role"] == "assistant"
    from_jsonl = load_corpus(tmp_path / "a" / "corpus.jsonl")
    assert from_jsonl[0]["messages"] == loaded[0]["messages"]
    with pytest.raises(ConfigError, match="tutorzoo train corpus"):
        load_corpus(tmp_path / "missing")
