"""The model-backed content reader (agents/content_reader_llm.py) and the reader agreement (eval/reader_agreement.py).

A model that answers the hand labels agrees perfectly through the OpenAI-compatible backend on a loopback server;
every malformed or invalid reply is a counted failure that reads as no content (fails closed, never a pass);
readers are chosen by spec like students and annotators; the rule reader is scored on the same labelled set.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from chat_server import ChatServer, Reply

from tutorzoo.agents.backends.base import GenerationConfig, GenerationResult
from tutorzoo.agents.content_reader_llm import LLMContentReader, ReaderReplyError, make_reader, parse_reading
from tutorzoo.envs.content import EMPTY, ContentReader
from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.eval.agreement import main as agreement_main
from tutorzoo.eval.reader_agreement import READER_FIELDS, load_reader_gold, reader_agreement, turn_labels

WATER_ROCKET = get_task_set("stem").build("water_rocket", np.random.default_rng(0))
GOOD = {"claims": [{"kc": "action_reaction", "verdict": "true", "question": False, "affirms": None,
                    "refutes": ["pushes_on_ground"], "demand": None}]}


class ScriptedBackend:
    """A fake chat backend: answers every conversation with ``reply`` (None: a failed request)."""

    def __init__(self, reply: str | None, error: str | None = None) -> None:
        self.reply, self.error, self.calls = reply, error, 0

    def generate(self, conversations: list[list[dict]], config: GenerationConfig) -> list[GenerationResult]:
        self.calls += len(conversations)
        return [GenerationResult(text=self.reply, error=self.error) for _ in conversations]


def _claim(**over) -> str:
    return json.dumps({"claims": [{**GOOD["claims"][0], **over}]})


BAD_REPLIES = {
    "prose": ("The turn is about Newton's third law and it is true.", "invalid JSON"),
    "truncated": ('{"claims": [{"kc": "action_reac', "invalid JSON"),
    "not-an-object": ('[{"kc": "action_reaction", "verdict": "true"}]', "invalid JSON"),
    "prose-around-json": (f"Here you go: {json.dumps(GOOD)}", "invalid JSON"),
    "missing-claims": ('{"reading": []}', "invalid reply"),
    "unknown-verdict": (_claim(verdict="mostly true"), "invalid reply"),
    "extra-field": (_claim(confidence=0.9), "invalid reply"),
    "verdict-not-text": (_claim(verdict=True), "invalid reply"),
    "runaway-list": (json.dumps({"claims": [GOOD["claims"][0]] * 21}), "invalid reply"),
    "unknown-kc": (_claim(kc="newtons_third_law"), "unknown id"),
    "another-tasks-misconception": (_claim(refutes=["add_numerators_and_denominators"]), "unknown id"),
    "true-claim-affirms": (_claim(affirms="pushes_on_ground", refutes=[]), "inconsistent claim"),
    "false-claim-refutes": (_claim(verdict="false"), "inconsistent claim"),
    "statement-with-demand": (_claim(demand="explain"), "inconsistent claim"),
}


@pytest.mark.parametrize("case", BAD_REPLIES.values(), ids=BAD_REPLIES.keys())
def test_invalid_reply_fails_closed_and_is_counted(case) -> None:
    reply, kind = case
    with pytest.raises(ReaderReplyError, match=f"^{kind}"):
        parse_reading(reply, WATER_ROCKET)
    reader = LLMContentReader(ScriptedBackend(reply), WATER_ROCKET)
    reading = reader.read("The water pushes the bottle up as hard as the bottle pushes the water down.")
    assert reading is EMPTY and not reading.has_content and not reading.refuted
    assert reader.summary() == {"reads": 1, "failed": 1, "failure_rate": 1.0, "errors": {kind: 1}}


def test_backend_failure_fails_closed() -> None:
    reader = LLMContentReader(ScriptedBackend(None, error="HTTP 500"), WATER_ROCKET)
    assert reader.read("Forces come in pairs.") is EMPTY
    assert reader.summary()["errors"] == {"backend": 1}
    assert "HTTP 500" in reader.failures[0][1]


def test_valid_reply_is_a_reading_and_is_cached() -> None:
    backend = ScriptedBackend(json.dumps(GOOD))
    reader = LLMContentReader(backend, WATER_ROCKET)
    text = "Space rockets speed up with nothing outside to push on."
    first, again = reader.read(text), reader.read(text)
    assert first is again and backend.calls == 1
    assert (first.kc, first.refuted, first.true_statements("action_reaction")) == (
        "action_reaction", ("pushes_on_ground",), 1)
    assert reader.read("   ") is EMPTY and backend.calls == 1  # blank turns are not sent
    assert reader.summary()["failed"] == 0


def test_empty_claims_is_no_content() -> None:
    reader = LLMContentReader(ScriptedBackend('{"claims": []}'), WATER_ROCKET)
    assert not reader.read("Great job!").has_content and reader.summary()["failed"] == 0


def test_prompt_carries_the_task_and_the_turn() -> None:
    user = LLMContentReader(ScriptedBackend("{}"), WATER_ROCKET).conversation("Fins go at the tail.")[1]["content"]
    assert "Fins go at the tail." in user
    assert all(k.id in user for k in WATER_ROCKET.knowledge_components)
    assert all(m.id in user and m.belief in user for m in WATER_ROCKET.misconceptions)
    assert WATER_ROCKET.knowledge_components[0].facts[0] in user


SPECS = {
    "rule": ("rule", {}, ContentReader),
    "typo": ("rul", {}, "Did you mean 'rule'"),
    "llm-without-backend": ("llm:", {}, "must be one of"),
    "bare-model-name": ("gpt-4o-mini", {}, "must be one of"),
    "unknown-backend": ("llm:claude:x", {}, "backend 'claude:x'"),
    "rule-with-backend-args": ("rule", {"base_url": "http://127.0.0.1:1/v1"}, "need a model reader"),
}


@pytest.mark.parametrize("case", SPECS.values(), ids=SPECS.keys())
def test_reader_spec(case) -> None:
    spec, kwargs, expected = case
    if isinstance(expected, type):
        assert isinstance(make_reader(spec, WATER_ROCKET, **kwargs), expected)
        return
    with pytest.raises(ConfigError, match=expected):
        make_reader(spec, WATER_ROCKET, **kwargs)


# ---------------------------------------------------------------------------------------------- agreement


def _oracle(records: list[dict]):
    """A server responder that answers each request with the hand labels of the turn it asks about."""
    by_text = {r["utterance"]: r for r in records}

    def respond(body: dict, i: int) -> str:
        text = body["messages"][-1]["content"].rsplit('"""', 2)[1].strip()
        r = by_text[text]
        if r["verdict"] == "none":
            return '{"claims": []}'
        claim = {"kc": r["kc"], "verdict": r["verdict"], "affirms": r["affirms"],
                 "refutes": [r["refutes"]] if r["refutes"] else []}
        return json.dumps({"claims": [claim]})

    return respond


def test_a_model_that_answers_the_labels_agrees_perfectly_over_http() -> None:
    pytest.importorskip("openai")
    records = load_reader_gold()
    with ChatServer(responder=_oracle(records)) as server:
        report = reader_agreement("llm:openai:reader-model", base_url=server.url, backoff=0.01, timeout=5.0)
        assert server.request_count == len(records)
    assert {f: report["fields"][f]["accuracy"] for f in READER_FIELDS} == dict.fromkeys(READER_FIELDS, 1.0)
    assert report["failures"] == {"reads": len(records), "failed": 0, "failure_rate": 0.0, "errors": {}}


def test_failed_turns_score_as_no_content_never_as_a_pass(tmp_path: Path) -> None:
    pytest.importorskip("openai")
    records = [r for r in load_reader_gold() if r["task"]["task_id"] == "water_rocket"]
    path = tmp_path / "slice.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    good = _oracle(records)
    # every turn with content gets a broken reply (an HTTP error or prose); content-free turns are answered
    script = {r["utterance"]: (Reply.error(500) if i % 2 else "It is true.") for i, r in enumerate(records)
              if r["verdict"] != "none"}

    def respond(body: dict, i: int):
        text = body["messages"][-1]["content"].rsplit('"""', 2)[1].strip()
        return script.get(text) or good(body, i)

    with ChatServer(responder=respond) as server:
        report = reader_agreement("llm:openai:reader-model", path, base_url=server.url, backoff=0.01, timeout=5.0,
                                  max_retries=0)
    content = [r for r in records if r["verdict"] != "none"]
    assert report["failures"]["failed"] == len(content)
    assert set(report["failures"]["errors"]) == {"backend", "invalid JSON"}
    # a failed turn is read as "no content": its verdict is "none", so every content turn is a miss
    assert report["fields"]["verdict"]["accuracy"] == pytest.approx(1 - len(content) / len(records))


def test_rule_reader_is_scored_on_the_labelled_set() -> None:
    records = load_reader_gold()
    assert len(records) >= 60
    assert {r["task"]["task_set"] for r in records} == {"math", "stem"}
    assert {r["verdict"] for r in records} == {"true", "false", "none"}
    report = reader_agreement("rule")
    assert report["failures"] is None
    for field in READER_FIELDS:  # the rule reader beats always answering the majority label
        f = report["fields"][field]
        assert f["accuracy"] > f["baseline"] or field == "refutes", (field, f)


def test_turn_labels_of_an_empty_reading() -> None:
    assert turn_labels(EMPTY) == {"kc": None, "verdict": "none", "affirms": None, "refutes": None}


GOLD_ERRORS = {
    "unknown-kc": ({"kc": "rocket_science"}, "not a component of water_rocket"),
    "content-free-with-kc": ({"verdict": "none"}, "kc is null exactly when verdict is 'none'"),
    "bad-verdict": ({"verdict": "maybe"}, "must be one of"),
    "affirms-on-true": ({"affirms": "pushes_on_ground"}, "has verdict 'false'"),
    "unknown-key": ({"note": "x"}, "exactly the keys"),
}


@pytest.mark.parametrize("case", GOLD_ERRORS.values(), ids=GOLD_ERRORS.keys())
def test_malformed_reader_gold_names_line_and_fix(tmp_path: Path, case) -> None:
    change, expected = case
    good = {"id": "x1", "task": {"task_set": "stem", "task_id": "water_rocket", "seed": 0},
            "utterance": "Forces come in pairs.", "kc": "action_reaction", "verdict": "true", "affirms": None,
            "refutes": None}
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "x2", **change}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=expected) as err:
        load_reader_gold(path)
    assert f"{path}:2" in str(err.value)


def test_agreement_cli_scores_readers(capsys: pytest.CaptureFixture[str]) -> None:
    assert agreement_main(["--reader", "rule", "--json"]) == 0
    [report] = json.loads(capsys.readouterr().out)
    assert report["reader"] == "rule" and set(report["fields"]) == set(READER_FIELDS)


def test_the_env_reads_with_the_reader_it_is_given() -> None:
    """``reader=`` replaces the rule reader for every tutor turn: a model reader that fails on every turn reads
    no content (fails closed: no component, nothing learned), and the rule factory is the default."""
    from tutorzoo.agents.content_reader_llm import reader_factory
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.envs import tutoring_v0

    readers: list[LLMContentReader] = []

    def failing(task):
        readers.append(LLMContentReader(ScriptedBackend("not JSON"), task))
        return readers[-1]

    said = "Water pushes the bottle up as hard as the bottle pushes the water down, so the rocket rises."
    for reader, expect_kc in ((failing, False), (None, True)):
        env = tutoring_v0.env(task_set="stem", task_id="water_rocket", reader=reader, max_turns=2)
        env.reset(seed=0)
        student = SimulatedStudent("all_round_partly_wrong")
        student.reset(seed=0)
        for agent in env.agent_iter():
            obs, _r, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
            else:
                env.step(said if agent == "tutor" else student.act(obs, info))
        turns = [t for t in env.unwrapped.episode_record()["transcript"] if t["speaker"] == "tutor"]
        assert turns and all((t["target_kc"] is not None) == expect_kc for t in turns[:-1]), turns
    assert len(readers) == 1 and readers[0].summary()["failed"] == 1  # one distinct turn, read once, failed
    with pytest.raises(ConfigError, match="reader must be a callable"):
        tutoring_v0.env(reader="llm:openai:x")
    assert reader_factory("rule") == ContentReader.for_task
    with pytest.raises(ConfigError, match="need a model reader"):
        reader_factory("rule", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="Did you mean 'rule'"):
        reader_factory("rules")
