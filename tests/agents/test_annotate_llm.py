"""The LLM annotator through the OpenAI-compatible backend on a loopback server: a model that answers the gold
labels agrees perfectly; malformed or invalid replies are counted failures with no labels, never defaults."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from chat_server import ChatServer, Reply

pytest.importorskip("openai")

from tutorzoo.agents.annotate_llm import (  # noqa: E402
    PROMPT_DIR,
    AnnotationError,
    LLMAnnotator,
    annotation_summary,
    parse_reply,
    predictions_for_gold,
)
from tutorzoo.agents.backends.openai_compat import OpenAIBackend  # noqa: E402
from tutorzoo.envs import labels  # noqa: E402
from tutorzoo.envs.errors import DatasetError  # noqa: E402
from tutorzoo.envs.tasks import get_task_set  # noqa: E402
from tutorzoo.eval.agreement import FIELDS, agreement, load_gold  # noqa: E402

SLICE = ("m01", "s01", "s03")  # a math dialogue and two STEM ones whose disciplines change (transfer = true)
TUTOR_KEYS = ("teacher_intent", "teaching_strategy", "teacher_guidance_level", "discipline")
STUDENT_KEYS = ("student_cognition_state", "cognitive_level", "discipline")
GOOD_STUDENT = {"student_cognition_state": "incorrect", "cognitive_level": "apply", "discipline": ["math"]}


def turn_to_label(body: dict) -> tuple[str, str]:
    """(speaker, utterance) of the turn a request asks about, read back from the prompt template."""
    user = body["messages"][-1]["content"]
    speaker = user.split("TURN TO LABEL (", 1)[1].split(")", 1)[0]
    return speaker, user.rsplit('"""', 2)[1].strip()


@pytest.fixture(scope="module")
def gold_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gold") / "slice.jsonl"
    records = [r for r in load_gold() if r["dialogue_id"] in SLICE]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def server():
    with ChatServer() as s:
        yield s


def backend(server: ChatServer, **kwargs) -> OpenAIBackend:
    return OpenAIBackend("annotator-model", base_url=server.url, backoff=0.01, timeout=5.0, **kwargs)


def oracle(records: list[dict]):
    """A responder that answers every request with the gold labels of the turn it asks about, as strict JSON."""
    by_text = {r["utterance"]: r for r in records}
    assert len(by_text) == len(records), "the slice's utterances must be unique to look them up"

    def respond(body: dict, i: int) -> str:
        speaker, text = turn_to_label(body)
        gold = by_text[text]
        assert gold["speaker"] == speaker
        return json.dumps({k: gold[k] for k in (TUTOR_KEYS if speaker == "tutor" else STUDENT_KEYS)})

    return respond


def test_correct_json_gives_perfect_agreement(server: ChatServer, gold_slice: Path, tmp_path: Path) -> None:
    records = load_gold(gold_slice)
    server.responder = oracle(records)
    preds = predictions_for_gold(records, backend(server))
    assert server.request_count == len(records) == len(preds)
    assert all(p["annotation_error"] is None for p in preds)
    out = tmp_path / "preds.jsonl"
    out.write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    report = agreement(str(out), gold_slice)
    assert {f: report["fields"][f]["accuracy"] for f in FIELDS} == dict.fromkeys(FIELDS, 1.0)
    # transfer is computed from the disciplines: the slice has true and false cases, both right
    assert {p["discipline_transfer"] for p in preds} == {True, False}


def test_a_failed_turn_is_scored_as_a_miss_not_as_null(server: ChatServer, gold_slice: Path, tmp_path: Path) -> None:
    records = load_gold(gold_slice)
    plain = next(r for r in records if r["speaker"] == "tutor" and r["teaching_strategy"] is None)
    good = oracle(records)
    server.responder = lambda body, i: ("I'd say guide_reasoning." if turn_to_label(body)[1] == plain["utterance"]
                                        else good(body, i))
    preds = predictions_for_gold(records, backend(server))
    failed = [p for p in preds if p["annotation_error"]]
    assert [(p["dialogue_id"], p["turn_index"]) for p in failed] == [(plain["dialogue_id"], plain["turn_index"])]
    assert set(failed[0]) == {"dialogue_id", "turn_index", "annotation_error"}
    out = tmp_path / "preds.jsonl"
    out.write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    fields = agreement(str(out), gold_slice)["fields"]
    n_tutor = sum(r["speaker"] == "tutor" for r in records)
    # gold says null for this turn's strategy; the failed turn must not score as a null prediction
    assert fields["teaching_strategy"]["accuracy"] == pytest.approx((n_tutor - 1) / n_tutor)
    assert fields["cognitive_level"]["accuracy"] == 1.0


BAD_REPLIES = [
    pytest.param("Sure! The student is incorrect at the apply level.", "invalid JSON", id="prose"),
    pytest.param('{"student_cognition_state": "incorr', "invalid JSON", id="truncated"),
    pytest.param('["incorrect", "apply"]', "invalid JSON", id="not-an-object"),
    pytest.param('Here: {"student_cognition_state": "incorrect", "cognitive_level": "apply", "discipline": ["math"]}',
                 "invalid JSON", id="prose-before-json"),
    pytest.param('{"student_cognition_state": "confused", "cognitive_level": "apply", "discipline": ["math"]}',
                 "invalid label", id="unknown-state"),
    pytest.param('{"student_cognition_state": "incorrect", "cognitive_level": "synthesis", "discipline": ["math"]}',
                 "invalid label", id="unknown-bloom"),
    pytest.param('{"student_cognition_state": "incorrect", "cognitive_level": "apply", "discipline": "math"}',
                 "invalid label", id="discipline-not-a-list"),
    pytest.param('{"student_cognition_state": "incorrect", "cognitive_level": "apply", "discipline": ["maths"]}',
                 "invalid label", id="unknown-discipline"),
    pytest.param('{"cognitive_level": "apply", "discipline": ["math"]}', "missing field", id="missing-field"),
]


@pytest.mark.parametrize(("reply", "kind"), BAD_REPLIES)
def test_bad_student_reply_is_a_recorded_failure(reply: str, kind: str) -> None:
    with pytest.raises(AnnotationError, match=f"^{kind}"):
        parse_reply(reply, "student")


@pytest.mark.parametrize(("reply", "expected"), [
    pytest.param('{"teacher_intent": "guide_reasoning", "teaching_strategy": null, "teacher_guidance_level": "L2", '
                 '"discipline": ["math"]}', {"teaching_strategy": None, "teacher_guidance_level": "L2"}, id="null"),
    pytest.param('```json\n{"teacher_intent": "summarize", "teaching_strategy": "hint", "teacher_guidance_level": '
                 '"l3", "discipline": ["Physics", "math"]}\n```',
                 {"teacher_guidance_level": "L3", "discipline": ["math", "physics"]}, id="fenced-normalised"),
])
def test_valid_tutor_reply(reply: str, expected: dict) -> None:
    labels_ = parse_reply(reply, "tutor")
    assert {k: labels_[k] for k in expected} == expected


@pytest.mark.parametrize("reply", [
    pytest.param('{"teacher_intent": "lecture", "teaching_strategy": null, "teacher_guidance_level": "L2", '
                 '"discipline": ["math"]}', id="unknown-intent"),
    pytest.param('{"teacher_intent": "guide_reasoning", "teaching_strategy": "socratic", "teacher_guidance_level": '
                 '"L2", "discipline": ["math"]}', id="unknown-strategy"),
    pytest.param('{"teacher_intent": "guide_reasoning", "teaching_strategy": null, "teacher_guidance_level": "L4", '
                 '"discipline": ["math"]}', id="unknown-level"),
])
def test_invalid_tutor_label(reply: str) -> None:
    with pytest.raises(AnnotationError, match="^invalid label"):
        parse_reply(reply, "tutor")


def _task():
    return get_task_set("math").build("two_digit_addition", np.random.default_rng(0))


DIALOGUE = [
    {"speaker": "tutor", "utterance": "What do 8 and 9 make? It costs $17, say."},
    {"speaker": "student", "utterance": "17."},
    {"speaker": "tutor", "utterance": "And how many tens is that?"},
    {"speaker": "student", "utterance": "One ten and 7 ones, like coins."},
]


def test_malformed_and_invalid_replies_end_to_end(server: ChatServer) -> None:
    tutor_ok = {"teacher_intent": "guide_reasoning", "teaching_strategy": None, "teacher_guidance_level": "L1",
                "discipline": ["math"]}
    server.script(json.dumps(tutor_ok), "not json at all",
                  json.dumps({**tutor_ok, "teacher_intent": "interrogate"}), json.dumps(GOOD_STUDENT))
    # one request at a time: the script is answered in arrival order
    out = LLMAnnotator(backend(server, max_concurrency=1)).annotate_turns(DIALOGUE, _task())
    assert [t["annotation_error"] is None for t in out] == [True, False, False, True]
    for failed in out[1:3]:
        assert all(failed[f] is None for f in FIELDS)
    assert out[2]["annotation_error"].startswith("invalid label: teacher_intent 'interrogate'")
    assert out[0]["teacher_intent"] == "guide_reasoning" and out[0]["student_cognition_state"] is None
    assert out[3]["cognitive_level"] == "apply" and out[3]["teacher_intent"] is None
    assert out[3]["utterance"] == DIALOGUE[3]["utterance"]  # the input keys are kept
    assert annotation_summary(out) == {"turns": 4, "failed": 2, "failure_rate": 0.5,
                                       "errors": {"invalid JSON": 1, "invalid label": 1}}
    # the "$17" in the utterance reached the model verbatim (templates substitute only their own fields)
    assert "$17" in server.requests[0]["messages"][-1]["content"]


def test_backend_failure_is_a_recorded_failure(server: ChatServer) -> None:
    server.responder = lambda body, i: Reply.error(503)
    out = LLMAnnotator(backend(server, max_retries=1)).annotate_turns(DIALOGUE[:1], _task())
    assert out[0]["annotation_error"].startswith("backend: ") and "gave up after 2" in out[0]["annotation_error"]
    assert out[0]["teacher_intent"] is None
    assert annotation_summary(out)["errors"] == {"backend": 1}


@pytest.mark.parametrize(("states", "expected", "failed_samples"), [
    pytest.param(["incorrect", "vague_understanding", "vague_understanding"], "vague_understanding", None,
                 id="majority"),
    pytest.param(["irrelevant", "incorrect", "BAD"], "irrelevant", 1, id="tie-earliest-one-invalid"),
    pytest.param(["BAD", "BAD", "BAD"], None, None, id="all-invalid"),
])
def test_samples_are_majority_voted(server: ChatServer, states: list[str], expected: str | None,
                                    failed_samples: int | None) -> None:
    server.script(*[json.dumps({**GOOD_STUDENT, "student_cognition_state": s}) for s in states])
    [out] = LLMAnnotator(backend(server), samples=3, temperature=0.7).annotate_turns(DIALOGUE[1:2], _task())
    assert out["student_cognition_state"] == expected
    assert out.get("annotation_failed_samples") == failed_samples
    assert (out["annotation_error"] is None) == (expected is not None)
    assert [(r["seed"], r["temperature"]) for r in server.requests] == [(0, 0.7), (1, 0.7), (2, 0.7)]


def test_transfer_is_computed_from_the_disciplines(server: ChatServer) -> None:
    discs = [["math"], ["math"], ["math", "physics"], ["physics"]]
    server.script(*[json.dumps({**(GOOD_STUDENT if i % 2 else {"teacher_intent": "guide_reasoning",
                                "teaching_strategy": None, "teacher_guidance_level": "L1"}), "discipline": d})
                    for i, d in enumerate(discs)])
    out = LLMAnnotator(backend(server, max_concurrency=1)).annotate_turns(DIALOGUE, _task())
    assert [t["discipline_transfer"] for t in out] == [False, False, True, False]


@pytest.mark.parametrize(("name", "labels_"), [
    ("intents", labels.INTENTS), ("strategies", labels.STRATEGIES), ("disciplines", labels.DISCIPLINES),
    ("cognition states", labels.COGNITION_STATES), ("guidance levels", labels.GUIDANCE_LEVELS),
    ("bloom levels", labels.BLOOM_LEVELS),
])
def test_prompt_defines_every_label(name: str, labels_: tuple[str, ...]) -> None:
    prompt = (PROMPT_DIR / "annotate.txt").read_text(encoding="utf-8")
    missing = [lab for lab in labels_ if lab not in prompt]
    assert not missing, f"annotate.txt lacks the {name} {missing}"


@pytest.mark.parametrize("turn", [
    pytest.param({"speaker": "teacher", "utterance": "Hi"}, id="bad-speaker"),
    pytest.param({"speaker": "tutor", "utterance": "  "}, id="empty-utterance"),
])
def test_bad_turns_are_rejected(turn: dict) -> None:
    class NoBackend:
        name = "none"

        def generate(self, conversations, config):
            raise AssertionError("no request may be sent for bad input")

    with pytest.raises(DatasetError, match="turn 0"):
        LLMAnnotator(NoBackend()).annotate_turns([turn], _task())


def test_a_backend_spec_reaches_a_local_server_via_env(server: ChatServer, gold_slice: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # what `tutorzoo agreement --annotator llm:openai:<model>` does with $OPENAI_BASE_URL set
    records = [r for r in load_gold(gold_slice) if r["dialogue_id"] == "m01"]
    server.responder = oracle(records)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    preds = predictions_for_gold(records, "openai:annotator-model")
    assert [p["turn_index"] for p in preds] == list(range(len(records)))
    assert all(p["annotation_error"] is None for p in preds)
    assert {r["model"] for r in server.requests} == {"annotator-model"}


def test_agreement_command_scores_the_llm_annotator(server: ChatServer, gold_slice: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`tutorzoo agreement --annotator llm:openai:<model>`: the oracle server's labels agree perfectly."""
    server.responder = oracle(load_gold(gold_slice))
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    report = agreement("llm:openai:annotator-model", gold_slice)
    assert {f: report["fields"][f]["accuracy"] for f in FIELDS} == dict.fromkeys(FIELDS, 1.0)
