"""TRL ``environment_factory`` (train/trl_env.py): the tool env against run_episode to the byte, its unscored
episodes, its errors, and GRPOTrainer running 2 steps on a tiny offline Qwen3 whose generation is scripted."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.records import json_form
from tutorzoo.eval.rollout import run_episode
from tutorzoo.rewards import load_rubric
from tutorzoo.train.trl_env import (
    EpisodeLog,
    SessionClosed,
    TutorZooEnv,
    build_dataset,
    component_rewards,
    component_weights,
    env_factory,
    row_spec,
    spec_row,
    suite_dataset,
)

SPECS = [EpisodeSpec(task_set="math", task_id="fraction_addition", persona="sid_core/all_round_partly_wrong", seed=3,
                     protocol={"max_turns": 4}),
         EpisodeSpec(task_set="stem", task_id="water_rocket", persona="does_not_understand_explanation", seed=0,
                     protocol={"max_turns": 3, "posttest": "both"}),
         EpisodeSpec(task_set="math", task_id="fraction_addition", persona="sid_core/all_round_partly_wrong", seed=1,
                     protocol={"max_turns": 4, "opener": "tutor"})]
SAYS = ["What do you already know about adding these two parts?",
        "Try a smaller case first: what is one half plus one quarter, and why?"]
SUMMARY = "To summarize: we found a common denominator before adding."


class ScriptedTutor:
    """The tutor of run_episode that says what the TRL env's tools are told."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.i = 0

    def reset(self, seed: int | None = None) -> None:
        self.i = 0

    def act(self, observation: dict, info: dict) -> str:
        self.i += 1
        return self.replies[self.i - 1]


def _harness(spec: EpisodeSpec, replies: list[str]) -> dict:
    from tutorzoo.agents.student import SimulatedStudent

    return run_episode(spec, ScriptedTutor(replies), SimulatedStudent(spec.persona), "trl",
                       reward=load_rubric("default"))


@pytest.mark.parametrize("spec", SPECS, ids=["math-student-opens", "stem-both-posttests", "math-tutor-opens"])
def test_tools_give_the_harness_record_to_the_byte(spec: EpisodeSpec) -> None:
    log = EpisodeLog()
    env = TutorZooEnv(load_rubric("default"), log=log)
    view = env.reset(**spec_row(spec))
    assert view.startswith("Task: ") and "Pre-test results:" in view
    if spec.protocol.get("opener") == "tutor":
        assert view.endswith("\n\nYou open the dialogue.") and "\n\nStudent: " not in view
    else:
        assert "\n\nStudent: " in view
    replies = [env.say(m) for m in SAYS]
    assert all(r and "session is over" not in r for r in replies)
    assert "session is over" in env.end_session(SUMMARY)
    reward = env.get_reward()
    expected = _harness(spec, [*SAYS, f"{SUMMARY} [END]"])
    assert json.dumps(json_form(env.record), sort_keys=True) == json.dumps(json_form(expected), sort_keys=True)
    assert reward == expected["reward"] and env.record["learning_gain"] == expected["learning_gain"]
    assert env.record["ended_by"] == "end_marker" and env.record["n_tutor_turns"] == 3
    assert log.counts() == {"episodes": 1, "scored": 1, "failed": 0, "unfinished": 0}
    with pytest.raises(SessionClosed, match="stop calling tools"):
        env.say("one more thing")


def test_turn_limit_ends_the_session_and_is_scored() -> None:
    spec = SPECS[1]  # max_turns 3: the third say is the last turn, the student answers, the post-test follows
    env = TutorZooEnv(load_rubric("default"))
    env.reset(**spec_row(spec))
    env.say(SAYS[0])
    env.say(SAYS[1])
    last = env.say("Which part of the launch do you want to look at again?")
    assert "session is over" in last and env.is_over
    expected = _harness(spec, [*SAYS, "Which part of the launch do you want to look at again?"])
    assert env.get_reward() == expected["reward"] and env.record["ended_by"] == expected["ended_by"] == "max_turns"


def test_a_reset_before_scoring_counts_the_open_episode() -> None:
    log = EpisodeLog()
    env = TutorZooEnv(load_rubric("default"), log=log)
    env.reset(**spec_row(SPECS[0]))
    env.say(SAYS[0])
    env.reset(**spec_row(SPECS[1]))  # TRL's pool re-resets an instance: the open episode must not vanish
    assert log.counts() == {"episodes": 1, "scored": 0, "failed": 0, "unfinished": 1}
    assert log.records[0]["spec"] == SPECS[0].model_dump() and env.status == "open"


def test_an_open_dialogue_is_counted_unfinished_never_scored() -> None:
    log = EpisodeLog()
    env = TutorZooEnv(load_rubric("default"), log=log)
    env.reset(**spec_row(SPECS[0]))
    env.say(SAYS[0])  # the rollout stops here: no end_session, budget or tool-call limit spent
    assert env.get_reward() is None
    assert env.status == "unfinished" and env.record["ended_by"] == "unfinished"
    assert env.record["learning_gain"] is None and "unfinished" in env.record["failures"][0]["error"]
    assert env.get_reward() is None and log.counts()["unfinished"] == 1 and log.episodes == 1  # counted once
    comps = component_rewards(load_rubric("default"), log)
    assert comps[0]([""], [""], environments=[env]) == [None]


def test_a_truncated_episode_is_counted_unfinished_never_scored() -> None:
    log = EpisodeLog()
    env = TutorZooEnv(load_rubric("default"), log=log)
    spec = SPECS[0].model_copy(update={"protocol": {"max_turns": 8, "max_cycles": 6}})
    env.reset(**spec_row(spec))
    for _ in range(8):
        if env.is_over:
            break
        env.say(SAYS[0])
    assert env.is_over and env.get_reward() is None and env.status == "unfinished"
    assert env.record["ended_by"] == "truncated" and "max_cycles" in env.record["failures"][0]["error"]
    assert log.counts()["unfinished"] == 1


def test_a_failing_student_fails_the_episode_unscored() -> None:
    from tutorzoo.agents.student import SimulatedStudent

    class Breaks(SimulatedStudent):
        def act(self, observation: Any, info: dict) -> Any:
            if info.get("phase") == "dialogue" and info.get("turn", 0) >= 1:
                raise RuntimeError("student backend down")
            return super().act(observation, info)

    log = EpisodeLog()
    env = TutorZooEnv(load_rubric("default"), make_student=Breaks, log=log)
    env.reset(**spec_row(SPECS[0]))
    assert "failed" in env.say(SAYS[0])
    assert env.get_reward() is None and env.status == "failed" and env.record["ended_by"] == "failure"
    assert "student backend down" in env.record["failures"][0]["error"]
    assert log.counts() == {"episodes": 1, "scored": 0, "failed": 1, "unfinished": 0}


def test_end_session_without_a_summary_is_an_error_and_the_session_lives() -> None:
    env = TutorZooEnv(load_rubric("default"))
    env.reset(**spec_row(SPECS[0]))
    with pytest.raises(ValueError, match="non-empty summary"):
        env.end_session("   ")
    assert not env.is_over and env.say(SAYS[0])


@pytest.mark.parametrize(("row", "match"), [
    ({"prompt": []}, "no 'spec' column"),
    ({"spec": '{"persona": "sid_core/all_round_partly_wrong"}'}, "not a valid episode spec"),
    ({"spec": {"persona": "sid_core/all_round", "seed": -1}}, "not a valid episode spec"),
], ids=["missing", "no-seed", "negative-seed"])
def test_bad_rows_name_the_fix(row: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        row_spec(row)


def test_dataset_rows_carry_their_spec() -> None:
    ds = build_dataset(SPECS)
    assert len(ds) == len(SPECS) and [row_spec(r) for r in ds] == SPECS
    assert ds[0]["prompt"][0]["role"] == "system" and "end_session" in ds[0]["prompt"][0]["content"]
    train = suite_dataset("train-sft", "train", max_specs=3, protocol={"max_turns": 2})
    assert len(train) == 3 and all(row_spec(r).protocol["max_turns"] == 2 for r in train)
    with pytest.raises(ConfigError, match="selects none"):
        build_dataset([])


def test_only_say_and_end_session_are_tools() -> None:
    import inspect

    public = [n for n, _ in inspect.getmembers(TutorZooEnv, predicate=inspect.isfunction)
              if not n.startswith("_") and n not in ("reset", "get_reward")]
    assert public == ["end_session", "say"]
    from transformers.utils import get_json_schema

    schema = get_json_schema(TutorZooEnv(None).say)
    assert schema["function"]["parameters"]["required"] == ["message"]


# ---------------------------------------------------------------------------------------------- GRPOTrainer
def _tool_call(name: str, **arguments: str) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


OTHER = ["Let us look at what the denominators tell us: why must they match before we add?",
         "Why does that work? What changes if we double it? Which step is hardest? How would you check it?"]
# the two tutors of a group: different turns, different rewards (OTHER's four questions cost a format penalty)
SCRIPTS = [[*SAYS, SUMMARY], [*OTHER, SUMMARY]]


def _script(replies: list[str]) -> list[str]:
    return [*(_tool_call("say", message=m) for m in replies[:-1]), _tool_call("end_session", summary=replies[-1]),
            "Thank you, the session is closed."]


def _scripted_generate(tokenizer: Any) -> Any:
    """``model.generate`` replaced by a script, as TRL's own environment tests script a model: a rollout's first
    generation takes script 0 or 1 by its row's parity, later ones keep the script their context shows; the n-th
    generation (n = tool results so far) emits that script's n-th message and the end-of-turn token."""
    import torch

    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.pad_token_id
    scripts = [_script(s) for s in SCRIPTS]

    def generate(input_ids: Any = None, attention_mask: Any = None, **kwargs: Any) -> Any:
        rows = []
        for row, ids in enumerate(input_ids.tolist()):
            context = tokenizer.decode(ids)
            n = context.count("<tool_response>")
            which = row % 2 if n == 0 else int(OTHER[0] in context)
            script = scripts[which]
            rows.append(ids + tokenizer.encode(script[min(n, len(script) - 1)], add_special_tokens=False) + [eos])
        width = max(len(r) for r in rows)
        return torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.long)

    return generate


def _scripted_trainer(tmp_path: Path, max_completion_length: int) -> tuple[Any, EpisodeLog, list]:
    """GRPOTrainer on the scripted tiny Qwen3 with TutorZoo's env, and what ``get_reward`` returned."""
    pytest.importorskip("trl")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from tutorzoo.train.tiny_families import build_family_model

    torch.set_num_threads(1)
    path = build_family_model("qwen3", tmp_path / "qwen3")
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    model.generate = _scripted_generate(tokenizer)
    rubric, log = load_rubric("default"), EpisodeLog()
    seen: list[tuple[float | None, dict]] = []

    class Recorded(TutorZooEnv):
        def get_reward(self) -> float | None:
            value = super().get_reward()
            seen.append((value, self.record))
            return value

    Recorded.__name__ = "TutorZooEnv"
    args = GRPOConfig(output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, max_steps=2, num_generations=2,
                      per_device_train_batch_size=2, max_completion_length=max_completion_length, learning_rate=1e-2,
                      beta=0.0, logging_steps=1, save_strategy="no", report_to="none", seed=0, log_completions=False,
                      reward_weights=component_weights(rubric), chat_template_kwargs={"enable_thinking": False},
                      dataloader_num_workers=0, disable_dropout=True)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=build_dataset(SPECS),
                          reward_funcs=component_rewards(rubric, log),
                          environment_factory=lambda: Recorded(rubric, log=log))
    return trainer, log, seen


def test_grpo_trainer_runs_two_steps_and_rewards_the_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    trainer, log, seen = _scripted_trainer(tmp_path, max_completion_length=1024)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    changed = sum(not torch.equal(before[n], p) for n, p in trainer.model.named_parameters())
    assert changed > 0, "the policy did not move"
    assert log.counts() == {"episodes": 4, "scored": 4, "failed": 0, "unfinished": 0}
    assert len(seen) == 4 and all(v == rec["reward"] for v, rec in seen)
    # the script's replies give exactly the harness's records, through GRPOTrainer
    first = [next(t["utterance"] for t in rec["transcript"] if t["speaker"] == "tutor") for rec in log.records]
    assert set(first) == {SAYS[0], OTHER[0]}
    for rec, opening in zip(log.records, first, strict=True):
        spec = EpisodeSpec.model_validate(rec["spec"])
        replies = next(s for s in SCRIPTS if s[0] == opening)
        expected = _harness(spec, [*replies[:-1], f"{replies[-1]} [END]"])
        assert json.dumps(json_form(rec), sort_keys=True) == json.dumps(json_form(expected), sort_keys=True)
    steps = [h for h in trainer.state.log_history if "reward" in h]
    assert len(steps) == 2
    for k, h in enumerate(steps):  # TRL's logged reward is the mean of the step's records (float32)
        mean = sum(r["reward"] for r in log.records[2 * k: 2 * k + 2]) / 2
        assert math.isclose(h["reward"], mean, rel_tol=1e-6, abs_tol=1e-6)
        assert math.isclose(h["rewards/TutorZooEnv/mean"], mean, rel_tol=1e-6, abs_tol=1e-6)
        assert "rewards/learning_gain/mean" in h and "rewards/sid_total/mean" in h
        assert h["tutorzoo/unfinished"] == 0.0 and h["tutorzoo/failed"] == 0.0


def test_grpo_trainer_budget_cut_rollouts_are_counted_unfinished(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    # room for the first tool call, not for the student's reply: TRL rolls the reply back and ends the rollout
    trainer, log, seen = _scripted_trainer(tmp_path, max_completion_length=80)
    trainer.train()
    assert log.counts() == {"episodes": 4, "scored": 0, "failed": 0, "unfinished": 4}
    assert [v for v, _ in seen] == [None] * 4
    assert all(rec["ended_by"] == "unfinished" and rec["n_tutor_turns"] == 1 for _, rec in seen)
    steps = [h for h in trainer.state.log_history if "tutorzoo/unfinished" in h]
    assert len(steps) == 2 and all(h["tutorzoo/unfinished"] == 1.0 for h in steps)


def test_env_factory_makes_fresh_instances() -> None:
    make = env_factory(load_rubric("default"))
    a, b = make(), make()
    assert a is not b and a.status == b.status == "idle"


# ---------------------------------------------------------------------------------------------- the recipe
def _recipe_config(tmp_path: Path, *extra: str) -> Any:
    from tutorzoo.train.common import CONFIG_DIR, load_recipe_config
    from tutorzoo.train.grpo_env import Config

    return load_recipe_config(Config, CONFIG_DIR / "grpo_env.yaml", [
        f"out_dir={tmp_path / 'run'}", "wandb.mode=disabled", "max_steps=2", "num_generations=2",
        "prompts_per_step=1", "train_specs.max_specs=2", "learning_rate=0.01", *extra])


def test_recipe_config_loads_and_is_registered() -> None:
    from tutorzoo.train.cli import RECIPES
    from tutorzoo.train.common import CONFIG_DIR, load_recipe_config
    from tutorzoo.train.grpo_env import Config

    cfg = load_recipe_config(Config, CONFIG_DIR / "grpo_env.yaml")
    assert RECIPES["grpo_env"] == "tutorzoo.train.grpo_env"
    assert cfg.train_specs.specs() and cfg.num_generations >= 2 and not cfg.use_vllm
    with pytest.raises(ConfigError, match="vllm_server_base_url"):
        load_recipe_config(Config, CONFIG_DIR / "grpo_env.yaml", ["use_vllm=true"])


def test_recipe_refuses_a_template_trl_cannot_parse(tmp_path: Path) -> None:
    from tutorzoo.train.grpo_env import check_tool_template
    from tutorzoo.train.tiny_families import FAMILIES, build_family_tokenizer, family_template

    tokenizer = build_family_tokenizer("qwen3", vocab_size=300, corpus_episodes=1)
    check_tool_template(tokenizer, "tiny-qwen3")  # TRL's own qwen3.jinja passes
    tokenizer.chat_template = family_template(FAMILIES["smollm2"])  # renders no tool calls
    with pytest.raises(ConfigError, match="cannot render tool calls.*tutorzoo train grpo"):
        check_tool_template(tokenizer, "tiny")
    tokenizer.chat_template = family_template(FAMILIES["qwen3"]) + "\n"  # tool-capable, but not a template TRL knows
    with pytest.raises(ConfigError, match="does not recognise"):
        check_tool_template(tokenizer, "tiny")


def test_recipe_trains_with_a_scripted_tool_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("trl")
    import tutorzoo.train.grpo_env as recipe

    real = recipe.load_policy

    def scripted_policy(*args: Any, **kwargs: Any) -> Any:
        model, tokenizer, peft = real(*args, **kwargs)
        model.generate = _scripted_generate(tokenizer)
        return model, tokenizer, peft

    monkeypatch.setattr(recipe, "load_policy", scripted_policy)
    results = recipe.run(_recipe_config(tmp_path))
    assert results["start"] == "tiny" and results["episodes"] == {"episodes": 4, "scored": 4, "failed": 0,
                                                                  "unfinished": 0}
    assert results["lora_tensors_changed"] > 0
    lines = (tmp_path / "run" / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and all(json.loads(x)["ended_by"] == "end_marker" for x in lines)
    assert json.loads((tmp_path / "run" / "results.json").read_text())["episodes"]["scored"] == 4
    assert len(results["reward_curve"]["values"]) == 2 and "learning_gain" in results["components"]


def test_recipe_on_a_model_that_calls_no_tool_counts_every_episode_unfinished(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from tutorzoo.train.grpo_env import run

    with pytest.raises(ConfigError, match="none of the 4 training episodes was scored"):
        run(_recipe_config(tmp_path, "max_completion_length=64"))
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["episodes"] == {"episodes": 4, "scored": 0, "failed": 0, "unfinished": 4}
    records = [json.loads(x) for x in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert all(r["ended_by"] == "unfinished" and r["learning_gain"] is None for r in records)
