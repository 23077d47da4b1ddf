"""The LLM judge: rubric files, strict verdict parsing, fail-closed aggregation, the loopback backend path,
determinism, and SID's rubric metrics."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.chat_server import ChatServer, Reply
from tutorzoo.agents.backends.base import GenerationConfig, GenerationResult
from tutorzoo.agents.backends.openai_compat import OpenAIBackend
from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.judges import (
    Judge,
    JudgeConfig,
    Verdict,
    aggregate,
    list_rubrics,
    load_rubric_spec,
    make_judge_config,
    parse_sample,
)
from tutorzoo.eval.judges.calibrate import labels_path, load_labels
from tutorzoo.eval.judges.judge import VerdictError, rubric_seed
from tutorzoo.eval.judges.rubric import CALIBRATION_DIR
from tutorzoo.eval.judges.sid import CRITERIA, RUBRIC, episode_variables, judge_episode, sid_rubric_metrics

RUBRIC_YAML = """\
name: toy
description: A toy rubric with one criterion of each type.
prompt: toy.txt
system_prompt: toy_system.txt
variables: [question, answer]
temperature: 0.2
samples: 2
aggregate: majority
max_new_tokens: 64
criteria:
  quality: {type: likert, min: 1, max: 5, description: How good the answer is.}
  correct: {type: binary, description: Whether the answer is right.}
  leaked: {type: binary, fail_value: true, description: Whether the answer was given away.}
  vs_reference: {type: choice, labels: [win, tie, lose], fail_value: lose, description: Against the reference.}
"""
PROMPT = ("Question: {question}\nAnswer: {answer}\nCriteria:\n{criteria}\n"
          "Reply with {reply_format}. A literal {\"x\": 1}.\n")


def write_rubric(root: Path, yaml_text: str = RUBRIC_YAML, prompt: str = PROMPT, name: str = "toy") -> Path:
    (root / "rubrics").mkdir(parents=True, exist_ok=True)
    (root / "prompts").mkdir(parents=True, exist_ok=True)
    (root / "prompts" / "toy.txt").write_text(prompt, encoding="utf-8")
    (root / "prompts" / "toy_system.txt").write_text("You are a strict grader.", encoding="utf-8")
    path = root / "rubrics" / f"{name}.yaml"
    path.write_text(yaml_text, encoding="utf-8")
    return path


@pytest.fixture()
def toy(tmp_path: Path):
    return load_rubric_spec(write_rubric(tmp_path))


GOOD = {"quality": 4, "correct": True, "leaked": False, "vs_reference": "win"}


def reply(**overrides) -> str:
    return json.dumps({**GOOD, **overrides})


class FakeBackend:
    """Replies from a function of (conversation, config); counts generate calls."""

    name = "fake"

    def __init__(self, fn):
        self.fn = fn
        self.calls: list[tuple[int, GenerationConfig]] = []

    def generate(self, conversations, config):
        self.calls.append((len(conversations), config))
        return [self.fn(conv, config) for conv in conversations]


# -- parsing ---------------------------------------------------------------------------------------------------
PARSE_CASES = {
    "valid": (reply(reason="fine"), None),
    "fenced": ("```json\n" + reply() + "\n```", None),
    "fenced_no_lang": ("```\n" + reply() + "\n```", None),
    "choice_case_insensitive": (reply(vs_reference=" Win "), None),
    "prose_before": ("Here is my verdict: " + reply(), "invalid JSON"),
    "prose_only": ("The answer is good, I'd give it a 4.", "invalid JSON"),
    "two_objects": (reply() + "\n" + reply(), "invalid JSON"),
    "array": ("[" + reply() + "]", "invalid JSON"),
    "missing_criterion": (json.dumps({k: v for k, v in GOOD.items() if k != "correct"}), "missing criterion"),
    "extra_criterion": (reply(style=3), "extra key"),
    "likert_out_of_range": (reply(quality=6), "out of range"),
    "likert_zero": (reply(quality=0), "out of range"),
    "likert_string": (reply(quality="4"), "wrong type"),
    "likert_float": (reply(quality=4.0), "wrong type"),
    "likert_bool": (reply(quality=True), "wrong type"),
    "binary_string": (reply(correct="yes"), "wrong type"),
    "binary_int": (reply(correct=1), "wrong type"),
    "choice_unknown": (reply(vs_reference="draw"), "out of range"),
    "choice_not_string": (reply(vs_reference=1), "wrong type"),
    "reason_not_string": (reply(reason=["a"]), "wrong type"),
    "empty": ("", "invalid JSON"),
}


@pytest.mark.parametrize("text,error", PARSE_CASES.values(), ids=PARSE_CASES.keys())
def test_parse_sample(toy, text, error):
    if error is None:
        values, _reason = parse_sample(toy, text)
        assert values == {**GOOD, "vs_reference": "win"}
    else:
        with pytest.raises(VerdictError, match=error):
            parse_sample(toy, text)


def test_parse_sample_with_a_criteria_subset(toy):
    values, reason = parse_sample(toy, '{"quality": 2, "reason": "thin"}', ["quality"])
    assert values == {"quality": 2} and reason == "thin"
    with pytest.raises(VerdictError, match="extra key"):
        parse_sample(toy, reply(), ["quality"])


# -- aggregation -----------------------------------------------------------------------------------------------
AGG_CASES = {
    "likert_majority": ("quality", [4, 4, 2], "majority", 4),
    "likert_tie_toward_fail": ("quality", [5, 2], "majority", 2),
    "likert_three_way_tie": ("quality", [5, 3, 4], "majority", 3),
    "likert_mean": ("quality", [4, 5], "mean", 4.5),
    "likert_none_parsed": ("quality", [], "majority", 1),
    "likert_none_parsed_mean": ("quality", [], "mean", 1),
    "binary_tie_fail_false": ("correct", [True, False], "majority", False),
    "binary_majority": ("correct", [True, True, False], "majority", True),
    "binary_mean_share": ("correct", [True, True, False, False], "mean", 0.5),
    "binary_flag_tie_fail_true": ("leaked", [False, True], "majority", True),
    "binary_flag_none_parsed": ("leaked", [], "majority", True),
    "choice_majority": ("vs_reference", ["win", "win", "tie"], "majority", "win"),
    "choice_tie_includes_fail": ("vs_reference", ["win", "lose"], "majority", "lose"),
    "choice_tie_nearest_fail": ("vs_reference", ["win", "tie"], "majority", "tie"),
    "choice_mean_is_majority": ("vs_reference", ["tie", "tie", "win"], "mean", "tie"),
    "choice_none_parsed": ("vs_reference", [], "mean", "lose"),
}


@pytest.mark.parametrize("criterion,values,how,expected", AGG_CASES.values(), ids=AGG_CASES.keys())
def test_aggregate(toy, criterion, values, how, expected):
    assert aggregate(toy.criteria[criterion], values, how) == expected


# -- the judge -------------------------------------------------------------------------------------------------
def test_samples_parsed_aggregated_and_failures_counted(toy):
    replies = iter([reply(quality=5), "not json", reply(quality=3), reply(quality=3, correct=False)])
    backend = FakeBackend(lambda conv, cfg: GenerationResult(text=next(replies)))
    judge = Judge(JudgeConfig(backend="openai:fake", samples=4), backend=backend)
    verdict = judge.judge(toy, {"question": "q", "answer": "a"})
    assert verdict.n_samples == 4 and verdict.n_failed == 1 and not verdict.ok and not verdict.failed
    assert verdict.values["quality"] == 3  # 3 twice beats 5 once
    assert verdict.values["correct"] is True  # true, true, false
    assert verdict.samples[1] is None and verdict.errors[0].startswith("sample 1: invalid JSON")
    assert verdict.to_dict()["n_failed"] == 1 and verdict.to_dict()["ok"] is False


def test_unparsable_everywhere_fails_closed(toy):
    backend = FakeBackend(lambda conv, cfg: GenerationResult(text="I think it is great!"))
    verdict = Judge(JudgeConfig(backend="openai:fake", samples=3), backend=backend).judge(
        toy, {"question": "q", "answer": "a"})
    assert verdict.failed and verdict.n_failed == 3
    assert verdict.values == {"quality": 1, "correct": False, "leaked": True, "vs_reference": "lose"}
    assert len(verdict.errors) == 3


def test_backend_exception_is_a_counted_failure(toy):
    def boom(conv, cfg):
        raise RuntimeError("CUDA out of memory")

    verdict = Judge(JudgeConfig(backend="openai:fake"), backend=FakeBackend(boom)).judge(
        toy, {"question": "q", "answer": "a"})
    assert verdict.failed and "CUDA out of memory" in verdict.errors[0]


def test_one_generate_call_per_sample_round(toy):
    backend = FakeBackend(lambda conv, cfg: GenerationResult(text=reply()))
    judge = Judge(JudgeConfig(backend="openai:fake", samples=3, temperature=0.7), backend=backend)
    verdicts = judge.judge_many(toy, [{"question": str(i), "answer": "a"} for i in range(5)])
    assert len(verdicts) == 5 and all(v.ok for v in verdicts)
    assert [n for n, _ in backend.calls] == [5, 5, 5]
    assert [cfg.seed for _, cfg in backend.calls] == [rubric_seed("toy") + s for s in range(3)]
    assert {cfg.temperature for _, cfg in backend.calls} == {0.7}
    assert {cfg.max_new_tokens for _, cfg in backend.calls} == {64}


def test_missing_variable_is_a_config_error_naming_the_file(tmp_path):
    path = write_rubric(tmp_path)
    judge = Judge(JudgeConfig(backend="openai:fake"), backend=FakeBackend(lambda c, g: GenerationResult("{}")))
    with pytest.raises(ConfigError, match=re.escape(str(path)) + ".*missing variable.*answer"):
        judge.judge(load_rubric_spec(path), {"question": "q"})


def test_prompt_rendering(toy):
    messages = toy.render({"question": "What is {answer}?", "answer": "42"})
    assert messages[0] == {"role": "system", "content": "You are a strict grader."}
    user = messages[1]["content"]
    assert "Question: What is {answer}?" in user  # one pass: a value's braces are not substituted again
    assert '"quality": <an integer from 1 to 5>' in user and '"vs_reference": <one of "win", "tie", "lose">' in user
    assert '{"x": 1}' in user  # literal braces stay
    assert "- leaked: true or false. Whether the answer was given away." in user


# -- through the loopback OpenAI-compatible server -------------------------------------------------------------
def openai_judge(server: ChatServer, **config) -> Judge:
    backend = OpenAIBackend("judge-model", base_url=server.url, max_retries=config.pop("max_retries", 0),
                            timeout=config.pop("timeout", 5.0), backoff=0.01, cache_dir=config.pop("cache_dir", None))
    return Judge(JudgeConfig(backend="openai:judge-model", base_url=server.url, **config), backend=backend)


def content_responder(body: dict, index: int) -> str:
    """A deterministic 'model': the score depends on the request's content and seed only."""
    user = body["messages"][-1]["content"]
    q = int(re.search(r"Question: (\d+)", user).group(1))
    return reply(quality=1 + (q + body["seed"]) % 5)


def test_sample_count_and_temperature_reach_the_server(toy):
    with ChatServer(responder=lambda body, i: reply()) as server:
        judge = openai_judge(server, samples=3, temperature=0.35)
        verdicts = judge.judge_many(toy, [{"question": "1", "answer": "a"}, {"question": "2", "answer": "b"}])
        bodies = list(server.requests)
    assert all(v.ok for v in verdicts)
    assert len(bodies) == 6
    assert {b["temperature"] for b in bodies} == {0.35}
    assert {b["max_tokens"] for b in bodies} == {64}
    assert sorted({b["seed"] for b in bodies}) == [rubric_seed("toy") + s for s in range(3)]
    assert bodies[0]["messages"][0]["role"] == "system"


def test_rubric_defaults_when_the_config_leaves_them_open(toy):
    with ChatServer(responder=lambda body, i: reply()) as server:
        openai_judge(server).judge(toy, {"question": "1", "answer": "a"})
        bodies = list(server.requests)
    assert len(bodies) == 2 and {b["temperature"] for b in bodies} == {0.2}  # the rubric's samples and temperature


def test_server_errors_and_timeouts_are_counted_failures(toy):
    script = [Reply.error(500), Reply.slow(2.0)]  # round 0: item 0 -> 500 ... order follows arrival
    with ChatServer(script, responder=lambda body, i: reply()) as server:
        judge = openai_judge(server, samples=1, timeout=0.3)
        verdicts = judge.judge_many(toy, [{"question": str(i), "answer": "a"} for i in range(4)])
    failed = [v for v in verdicts if v.failed]
    assert len(failed) == 2 and sum(v.ok for v in verdicts) == 2
    assert all("backend:" in v.errors[0] for v in failed)
    assert any("HTTP 500" in v.errors[0] for v in failed) and any("timeout" in v.errors[0] for v in failed)
    assert all(v.values["vs_reference"] == "lose" and v.values["leaked"] is True for v in failed)
    assert judge.stats["failed_verdicts"] == 2


def test_deterministic_rerun_and_batch_independence(toy, tmp_path):
    items = [{"question": str(i), "answer": "a"} for i in range(4)]
    with ChatServer(responder=content_responder) as server:
        first = [v.to_dict() for v in openai_judge(server, samples=3).judge_many(toy, items)]
        second = [v.to_dict() for v in openai_judge(server, samples=3).judge_many(toy, items)]
        alone = openai_judge(server, samples=3).judge(toy, items[2]).to_dict()
    assert first == second
    assert alone == first[2]  # a verdict depends on its own variables, not on the batch it was sent in
    assert len({json.dumps(v["values"]) for v in first}) > 1  # the responder really varies


def test_cache_makes_a_rerun_identical_without_requests(toy, tmp_path):
    items = [{"question": str(i), "answer": "a"} for i in range(3)]
    with ChatServer(responder=content_responder) as server:
        first = [v.to_dict() for v in openai_judge(server, samples=2, cache_dir=str(tmp_path)).judge_many(toy, items)]
        sent = server.request_count
        server.responder = lambda body, i: "garbage"
        again = [v.to_dict() for v in openai_judge(server, samples=2, cache_dir=str(tmp_path)).judge_many(toy, items)]
        assert server.request_count == sent == 6
    assert again == first


# -- rubric files ----------------------------------------------------------------------------------------------
RUBRIC_ERRORS = {
    "unknown_type": (RUBRIC_YAML.replace("type: likert", "type: stars"), PROMPT, "unknown type 'stars'"),
    "missing_prompt_file": (RUBRIC_YAML.replace("prompt: toy.txt", "prompt: nope.txt"), PROMPT, "nope.txt"),
    "undeclared_placeholder": (RUBRIC_YAML, PROMPT + "{context}", r"undeclared variable\(s\) \['context'\]"),
    "unused_variable": (RUBRIC_YAML.replace("[question, answer]", "[question, answer, level]"), PROMPT,
                        r"declared variable\(s\) \['level'\] appear in no prompt"),
    "choice_without_fail": (RUBRIC_YAML.replace(", fail_value: lose", ""), PROMPT, "needs fail_value"),
    "likert_fail_out_of_range": (RUBRIC_YAML.replace("max: 5,", "max: 5, fail_value: 9,"), PROMPT, "fail_value"),
    "likert_without_max": (RUBRIC_YAML.replace(" max: 5,", ""), PROMPT, "min < max"),
    "unknown_key": (RUBRIC_YAML + "top_k: 5\n", PROMPT, "top_k.*unknown key"),
    "name_mismatch": (RUBRIC_YAML.replace("name: toy", "name: other"), PROMPT, "must equal the file name"),
    "bad_aggregate": (RUBRIC_YAML.replace("aggregate: majority", "aggregate: median"), PROMPT, "aggregate"),
    "reserved_reason": (RUBRIC_YAML + "  reason: {type: binary, description: x}\n", PROMPT, "reserved"),
    "builtin_as_variable": (RUBRIC_YAML.replace("[question, answer]", "[question, answer, criteria]"), PROMPT,
                            "built-in"),
    "not_yaml": ("name: [toy\n", PROMPT, "not valid YAML"),
}


@pytest.mark.parametrize("yaml_text,prompt,message", RUBRIC_ERRORS.values(), ids=RUBRIC_ERRORS.keys())
def test_rubric_file_errors_name_the_file(tmp_path, yaml_text, prompt, message):
    path = write_rubric(tmp_path, yaml_text, prompt)
    with pytest.raises(ConfigError, match=message) as info:
        load_rubric_spec(path)
    assert str(path) in str(info.value)


def test_unknown_rubric_lists_the_known_ones():
    with pytest.raises(ConfigError, match="sid_rubrics"):
        load_rubric_spec("no_such_rubric")


@pytest.mark.parametrize("name", list_rubrics())
def test_every_shipped_rubric_and_its_calibration_labels_load(name):
    spec = load_rubric_spec(name)
    assert spec.criteria and spec.variables
    filled = spec.render({v: f"<{v}>" for v in spec.variables})
    assert all(f"<{v}>" in "".join(m["content"] for m in filled) for v in spec.variables)
    if labels_path(name).exists():
        assert len(load_labels(spec)) >= 5


def test_every_calibration_file_has_a_rubric():
    assert {p.stem for p in CALIBRATION_DIR.glob("*.jsonl")} <= set(list_rubrics())


CONFIG_ERRORS = {
    "extra_field": ({"backend": "openai:m", "top_k": 3}, "unknown judge option 'top_k'"),
    "bad_backend": ({"backend": "gpt-4o"}, "openai:<model>"),
    "secret_in_args": ({"backend": "openai:m", "backend_args": {"api_key": "sk-123"}}, "secret"),
    "samples_zero": ({"backend": "openai:m", "samples": 0}, "samples"),
    "bad_aggregate": ({"backend": "openai:m", "aggregate": "median"}, "aggregate"),
}


@pytest.mark.parametrize("kwargs,message", CONFIG_ERRORS.values(), ids=CONFIG_ERRORS.keys())
def test_judge_config_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        make_judge_config(**kwargs)


def test_verdict_round_trip(toy):
    backend = FakeBackend(lambda conv, cfg: GenerationResult(text=reply(reason="ok")))
    verdict = Judge(JudgeConfig(backend="openai:fake", samples=2), backend=backend).judge(
        toy, {"question": "q", "answer": "a"})
    data = json.loads(json.dumps(verdict.to_dict()))
    assert Verdict.from_dict(data).to_dict() == verdict.to_dict()
    assert data["reasons"] == ["ok", "ok"] and set(data) >= {"rubric", "values", "samples", "errors", "n_samples",
                                                              "n_failed", "ok", "reasons"}


# -- SID -------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stem_records() -> list[dict]:
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor import make_tutor
    from tutorzoo.envs import tutoring_v0

    records = []
    for tutor_name, seed in (("socratic", 0), ("socratic", 1), ("lecturer", 0), ("lecturer", 1)):
        env = tutoring_v0.env(task_set="stem", max_turns=3)
        env.reset(seed=seed)
        policies = {"tutor": make_tutor(tutor_name), "student": SimulatedStudent("weak_knowledge_partly_wrong")}
        for p in policies.values():
            p.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _r, term, trunc, info = env.last()
            env.step(None if term or trunc else policies[agent].act(obs, info))
        records.append({**env.unwrapped.episode_record(), "tutor": tutor_name})
    return records


def test_episode_variables_carry_the_lesson_and_the_transcript(stem_records):
    record = stem_records[0]
    variables = episode_variables(record)
    first = record["transcript"][0]["utterance"]
    assert f"[1] {record['transcript'][0]['speaker'].capitalize()}: {first}" in variables["transcript"]
    assert record["task"]["title"] in variables["lesson"] and "Knowledge components:" in variables["lesson"]
    assert episode_variables({"episode": record, "tutor": "x"}) == variables  # a harness record wrapping it


def sid_reply(scores: dict) -> str:
    return json.dumps({**scores, "reason": "scored"})


def test_judge_episode_and_sid_metrics(stem_records):
    with ChatServer(responder=lambda body, i: sid_reply({c: 4 for c in CRITERIA})) as server:
        judge = openai_judge(server)
        bodies_before = server.request_count
        verdict = judge_episode(stem_records[0], judge)
        body = server.requests[bodies_before]
    assert body["temperature"] == 0.1 and verdict["rubric"] == RUBRIC and verdict["ok"]
    assert verdict["values"] == {c: 4.0 for c in CRITERIA}
    assert stem_records[0]["transcript"][0]["utterance"] in body["messages"][-1]["content"]


def test_sid_rubric_metrics(stem_records):
    scores = {"socratic": [{c: 5 for c in CRITERIA}, {c: 3 for c in CRITERIA}],
              "lecturer": [{"X-SRG": 2, "M-RCC": 2, "X-MSR": 1, "IRA": 2, "TCF": 3}, None]}
    judged = []
    for record in stem_records:
        values = scores[record["tutor"]].pop(0)
        text = sid_reply(values) if values is not None else "no idea"
        backend = FakeBackend(lambda conv, cfg, t=text: GenerationResult(text=t))
        judge = Judge(JudgeConfig(backend="openai:fake"), backend=backend)
        judged.append({**record, "judgments": [judge_episode(record, judge)]})
    out = sid_rubric_metrics(judged, judged=True)
    soc, lec = out["groups"]["socratic"], out["groups"]["lecturer"]
    assert soc["metrics"]["X-SRG"]["mean"] == 4.0 and soc["metrics"]["AvgScore"]["n"] == 2
    assert soc["metrics"]["AvgScore"]["ci_low"] <= 4.0 <= soc["metrics"]["AvgScore"]["ci_high"]
    assert soc["judge_failures"] == {"verdicts_failed": 0, "samples_failed": 0, "samples": 2, "missing": 0}
    # the unparsable verdict counts with fail values (1 everywhere): fail closed
    assert lec["metrics"]["X-MSR"]["mean"] == 1.0 and lec["metrics"]["X-SRG"]["mean"] == 1.5
    assert lec["metrics"]["AvgScore"]["mean"] == pytest.approx((2.0 + 1.0) / 2)
    assert lec["judge_failures"]["verdicts_failed"] == 1
    assert out["judge_failures"] == {"verdicts_failed": 1, "samples_failed": 1, "samples": 4, "missing": 0}
    partial = sid_rubric_metrics([judged[0], {**judged[1], "judgments": []}], judged=True)
    assert partial["groups"]["socratic"]["metrics"]["X-SRG"]["n"] == 1 and partial["judge_failures"]["missing"] == 1
    assert set(out["specs"]) == {*CRITERIA, "AvgScore"} and out["specs"]["IRA"].higher_is_better
    # deterministic CIs
    assert sid_rubric_metrics(judged, judged=True) == out


def test_sid_metrics_without_a_judge_are_not_computed(stem_records):
    out = sid_rubric_metrics(stem_records, judged=False)
    for group in out["groups"].values():
        for summary in group["metrics"].values():
            assert summary["mean"] is None and summary["not_computed"] == "no judge configured (--judge)"
    assert set(out["groups"]) == {"socratic", "lecturer"} and "judge_failures" not in out


def test_calibrate_groups_criteria_subsets(tmp_path):
    from tutorzoo.eval.judges.calibrate import calibrate

    spec_path = write_rubric(tmp_path)
    labels = tmp_path / "toy.jsonl"
    rows = [
        {"id": "a", "variables": {"question": "1", "answer": "x"}, "gold": {"quality": 4}, "criteria": ["quality"]},
        {"id": "b", "variables": {"question": "2", "answer": "y"}, "gold": {"quality": 2}, "criteria": ["quality"]},
        {"id": "c", "variables": {"question": "3", "answer": "z"}, "gold": GOOD, "rationale": "all good"},
    ]
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    def answer(conv, cfg):
        user = conv[-1]["content"]
        if '"correct"' not in user:  # asked only for quality: the reply format lists the asked criteria
            return GenerationResult(text=json.dumps({"quality": 4}))
        return GenerationResult(text=reply())

    backend = FakeBackend(answer)
    report = calibrate(Judge(JudgeConfig(backend="openai:fake", samples=1), backend=backend), str(spec_path),
                       labels)
    assert sorted(n for n, _ in backend.calls) == [1, 2]  # one batch per criteria subset
    assert report["criteria"]["quality"]["n"] == 3 and report["criteria"]["quality"]["accuracy"] == pytest.approx(2 / 3)
    assert report["criteria"]["correct"]["n"] == 1 and report["criteria"]["correct"]["accuracy"] == 1.0
    assert report["failed_verdicts"] == 0


def test_judge_episodes_batches_and_matches_one_by_one(stem_records):
    from tutorzoo.eval.judges.sid import judge_episodes

    with ChatServer(responder=lambda body, i: sid_reply({c: 1 + len(body["messages"][-1]["content"]) % 5
                                                           for c in CRITERIA})) as server:
        many = judge_episodes(stem_records, openai_judge(server))
        one = [judge_episode(r, openai_judge(server)) for r in stem_records]
    assert many == one and all(v["ok"] for v in many)
