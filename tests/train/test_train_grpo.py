"""Multi-turn GRPO (train/grpo.py): the config, the rollout_func on the tiny model, the reward functions, and a
slow smoke run of a few GRPO steps from configs/train/grpo.yaml."""

from __future__ import annotations

import json
import math
import types
from pathlib import Path

import numpy as np
import pytest

from tutorzoo.envs.errors import ConfigError
from tutorzoo.train.common import CONFIG_DIR, load_recipe_config
from tutorzoo.train.grpo import Config, SpecSelection, resolve_start, reward_curve, reward_functions
from tutorzoo.train.grpo_rollout import SPEC_PREFIX, EpisodeRollout, parse_spec_prompt, spec_prompt

GROUP = 4
MAX_TURNS = 2
MAX_NEW = 12


# ---------------------------------------------------------------------------------------------- config
def test_shipped_config_loads() -> None:
    cfg = load_recipe_config(Config, CONFIG_DIR / "grpo.yaml")
    assert cfg.num_generations >= 2 and cfg.train_specs.protocol["max_turns"] <= 4
    assert cfg.eval.split == "held_out"
    specs = cfg.train_specs.specs()
    assert len(specs) == cfg.train_specs.max_specs
    assert all(s.protocol["max_turns"] == cfg.train_specs.protocol["max_turns"] for s in specs)
    assert len({s.key() for s in specs}) == len(specs)


@pytest.mark.parametrize("name", ["ddp", "deepspeed_zero2", "cpu_ddp"])
def test_accelerate_configs_load(name: str) -> None:
    from accelerate.commands.config.config_args import load_config_from_file

    path = CONFIG_DIR / "accelerate" / f"{name}.yaml"
    cfg = load_config_from_file(str(path))
    assert cfg.num_processes >= 2
    assert (cfg.distributed_type.value == "MULTI_CPU") == (name == "cpu_ddp")
    assert f"accelerate launch --config_file configs/train/accelerate/{name}.yaml" in path.read_text()


@pytest.mark.parametrize(("overrides", "needle"), [
    (["use_vllm=true"], "vllm_server_base_url"),
    (["base_model=null"], "base_model"),
    (["max_new_tokens=900"], "max_completion_length"),
    (["num_generations=1"], "num_generations"),
    (["train_specs.protocol={max_turnz: 3}"], "max_turnz"),
    (["bogus=1"], "bogus"),
], ids=["vllm-without-url", "adapter-without-base", "turn-longer-than-episode", "group-of-one", "bad-protocol",
        "unknown-key"])
def test_config_errors_name_the_fix(overrides: list[str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_recipe_config(Config, CONFIG_DIR / "grpo.yaml", overrides)


def test_training_rubric_overrides_weights() -> None:
    from tutorzoo.train.grpo import training_rubric

    rubric = training_rubric("default", {"learning_gain": 0.0, "mastery_gain": 2.0})
    funcs, weights = reward_functions(rubric)
    by_name = dict(zip([f.__name__ for f in funcs], weights, strict=True))
    assert by_name["learning_gain"] == 0.0 and by_name["mastery_gain"] == 2.0 and by_name["pedagogy"] == 1.0
    assert rubric.weigh({"learning_gain": 1.0, "mastery_gain": 0.5}) == 1.0  # what the env credits, too
    with pytest.raises(ConfigError, match="does not have"):
        training_rubric("default", {"learning_gainz": 1.0})
    with pytest.raises(ConfigError, match=">= 0"):
        training_rubric("default", {"learning_gain": -1.0})


def test_spec_selection_errors() -> None:
    with pytest.raises(ConfigError, match="selects no episode"):
        SpecSelection(task_sets=["no_such_set"]).specs()


def test_spec_prompt_round_trip_and_errors() -> None:
    [spec] = SpecSelection(max_specs=1, protocol={"max_turns": 3}).specs()
    prompt = spec_prompt(spec)
    assert prompt.startswith(SPEC_PREFIX) and parse_spec_prompt(prompt) == spec
    with pytest.raises(ConfigError, match="build_dataset"):
        parse_spec_prompt([{"role": "user", "content": "hi"}])
    with pytest.raises(ConfigError, match="invalid episode spec"):
        parse_spec_prompt(SPEC_PREFIX + '{"persona": "x"}')


def test_resolve_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="tutorzoo train sft"):
        resolve_start(Config(base_model="some/model", adapter=str(tmp_path / "missing")), tmp_path)
    (tmp_path / "lora").mkdir()
    (tmp_path / "lora" / "adapter_config.json").write_text("{}")
    cfg = Config(base_model="some/model", adapter=str(tmp_path / "lora"))
    assert resolve_start(cfg, tmp_path) == ("some/model", str(tmp_path / "lora"), "config")
    sft = tmp_path / "sft"
    sft.mkdir()
    (sft / "READY").write_text("")
    with pytest.raises(ConfigError, match="rerun the SFT recipe"):
        resolve_start(Config(sft_dir=str(sft)), tmp_path)
    (sft / "base").mkdir()
    (sft / "adapter").mkdir()
    (sft / "adapter" / "adapter_config.json").write_text("{}")
    assert resolve_start(Config(sft_dir=str(sft)), tmp_path) == (str(sft / "base"), str(sft / "adapter"), "sft")


def test_reward_curve_first_and_last_k() -> None:
    history = [{"step": i, "reward": float(i)} for i in range(1, 7)] + [{"step": 6, "train_loss": 0.1}]
    curve = reward_curve(history, k=2)
    assert curve["values"] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert (curve["first_k_mean"], curve["last_k_mean"], curve["delta"]) == (1.5, 5.5, 4.0)
    assert reward_curve(history, k=10)["k"] == 3  # never overlapping windows
    assert "delta" not in reward_curve([], k=2)
    assert curve["slope"] == 1.0 and curve["slope_ci95"] == [1.0, 1.0]  # a noiseless line: every resample agrees
    assert curve["delta_ci95"][0] > 0  # the last window is above the first in every resample


def test_reward_curve_flat_noise_is_not_a_clear_rise() -> None:
    values = np.random.default_rng(1).normal(0.0, 1.0, 64)
    curve = reward_curve([{"step": i + 1, "reward": float(v)} for i, v in enumerate(values)], k=8)
    assert curve["slope_ci95"][0] < 0 < curve["slope_ci95"][1]
    assert curve["delta_ci95"][0] < 0 < curve["delta_ci95"][1]
    assert curve == reward_curve([{"step": i + 1, "reward": float(v)} for i, v in enumerate(values)], k=8)


# ---------------------------------------------------------------------------------------------- rollouts
class FakeClient:
    """A stand-in for TRL's VLLMClient: replies with fixed token ids and logprobs per prompt."""

    def __init__(self, reply: list[int]) -> None:
        self.reply = reply
        self.calls: list[dict] = []

    def generate(self, prompts: list[list[int]], **kwargs: object) -> dict:
        self.calls.append({"prompts": prompts, **kwargs})
        n = len(self.reply)
        return {"completion_ids": [list(self.reply) for _ in prompts],
                "logprobs": [[[-0.5 - j] for j in range(n)] for _ in prompts]}


def _trainer(model: object, use_vllm: bool = False, client: object | None = None) -> object:
    from accelerate import Accelerator

    args = types.SimpleNamespace(temperature=1.0, top_p=1.0, use_vllm=use_vllm)
    trainer = types.SimpleNamespace(accelerator=Accelerator(cpu=True), model_wrapped=model, args=args)
    if client is not None:
        trainer.vllm_generation = types.SimpleNamespace(vllm_client=client)
    return trainer


@pytest.fixture(scope="module")
def policy(tiny_model_dir: Path) -> tuple:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    tokenizer.padding_side = "left"
    return AutoModelForCausalLM.from_pretrained(tiny_model_dir), tokenizer


@pytest.fixture(scope="module")
def specs() -> list:
    return SpecSelection(max_specs=2, protocol={"max_turns": MAX_TURNS}).specs()


@pytest.fixture(scope="module")
def prompts(specs: list) -> list[str]:
    return [spec_prompt(s) for s in specs for _ in range(GROUP)]  # as TRL's sampler repeats them


@pytest.fixture(scope="module")
def rollout(policy: tuple, prompts: list[str]) -> dict:
    from tutorzoo.rewards import load_rubric

    model, tokenizer = policy
    fn = EpisodeRollout(tokenizer, load_rubric("default"), seed=0, max_new_tokens=MAX_NEW)
    return fn(prompts, _trainer(model))


def _segments(ids: list[int], mask: list[int]) -> list[tuple[int, list[int]]]:
    out: list[tuple[int, list[int]]] = []
    for tok, m in zip(ids, mask, strict=True):
        if out and out[-1][0] == m:
            out[-1][1].append(tok)
        else:
            out.append((m, [tok]))
    return out


def test_rollout_returns_one_aligned_row_per_prompt(rollout: dict, prompts: list[str], policy: tuple) -> None:
    _model, tokenizer = policy
    assert rollout["logprobs"] is None  # transformers generation: TRL recomputes them
    for key in ("prompt_ids", "completion_ids", "env_mask", "episode"):
        assert len(rollout[key]) == len(prompts), key
    for prompt, ids, completion, mask, record in zip(prompts, rollout["prompt_ids"], rollout["completion_ids"],
                                                      rollout["env_mask"], rollout["episode"], strict=True):
        assert record["spec"] == parse_spec_prompt(prompt).model_dump()
        assert record["ended_by"] != "failure", record["failures"]
        assert len(completion) == len(mask) and set(mask) == {0, 1}
        assert mask[0] == 1  # the completion opens with the tutor's first turn
        assert tokenizer.decode(ids).endswith("<|assistant|>\n")  # the generation prompt
        tutor_tokens = sum(mask)
        assert record["n_tutor_turns"] * 1 <= tutor_tokens <= record["n_tutor_turns"] * MAX_NEW


def test_env_mask_is_zero_exactly_on_student_and_template_tokens(rollout: dict, policy: tuple) -> None:
    from tutorzoo.envs.spaces import MAX_UTTERANCE_CHARS, normalize_text

    _model, tokenizer = policy
    for completion, mask, record in zip(rollout["completion_ids"], rollout["env_mask"], rollout["episode"],
                                        strict=True):
        dialogue = [t for t in record["transcript"]]
        first_tutor = next(i for i, t in enumerate(dialogue) if t["speaker"] == "tutor")
        dialogue = dialogue[first_tutor:]  # the student's opener is in the prompt
        segments = _segments(completion, mask)
        tutor_segments = [ids for m, ids in segments if m == 1]
        env_segments = [ids for m, ids in segments if m == 0]
        tutor_turns = [t["utterance"] for t in dialogue if t["speaker"] == "tutor"]
        student_turns = [t["utterance"] for t in dialogue if t["speaker"] == "student"]
        assert len(tutor_segments) == len(tutor_turns) == record["n_tutor_turns"]
        # every tutor segment is what the env recorded as that tutor turn (decoded, normalised)
        for ids, said in zip(tutor_segments, tutor_turns, strict=True):
            text = tokenizer.decode(ids, skip_special_tokens=True).strip()
            assert normalize_text(text, MAX_UTTERANCE_CHARS)[0] == said
            assert all(t != tokenizer.eos_token_id for t in ids[:-1])  # at most a final EOS
        # every env segment is exactly the template around one student reply: nothing of the tutor's in it
        replies_between = student_turns[: len(env_segments)]
        assert len(env_segments) == len(tutor_turns) - 1
        for ids, reply, before in zip(env_segments, replies_between, tutor_segments[:-1], strict=True):
            closing = "\n" if before[-1] == tokenizer.eos_token_id else "</s>\n"
            assert tokenizer.decode(ids) == f"{closing}<|user|>\n{reply}</s>\n<|assistant|>\n"


def test_group_members_share_spec_and_seed_and_differ_in_sampling(rollout: dict) -> None:
    records = rollout["episode"]
    groups = [records[i:i + GROUP] for i in range(0, len(records), GROUP)]
    assert len(groups) == 2
    assert groups[0][0]["spec"] != groups[1][0]["spec"]
    for group in groups:
        assert all(r["spec"] == group[0]["spec"] for r in group)  # same task, persona, seed, protocol
        assert len({r["task"]["id"] for r in group}) == 1
        assert len({json.dumps(r["pretest"], sort_keys=True) for r in group}) == 1  # the same student before us
        first_turns = {next(t["utterance"] for t in r["transcript"] if t["speaker"] == "tutor") for r in group}
        assert len(first_turns) > 1  # the tutors sampled differently


def test_rewards_match_the_rubric(rollout: dict, prompts: list[str], policy: tuple) -> None:
    from tutorzoo.rewards import load_rubric

    rubric = load_rubric("default")
    funcs, weights = reward_functions(rubric)
    names = [f.__name__ for f in funcs]
    assert names[: len(rubric.weights)] == list(rubric.weights) and "pedagogy" in names
    logged: dict[str, float] = {}
    columns = [f(prompts, ["x"] * len(prompts), episode=rollout["episode"],
                 log_metric=lambda n, v: logged.__setitem__(n, v)) for f in funcs]
    for i, record in enumerate(rollout["episode"]):
        total = sum(w * col[i] for w, col in zip(weights, columns, strict=True))
        assert math.isclose(total, rubric.total(record), abs_tol=1e-9)
        assert math.isclose(total, record["reward"], abs_tol=1e-9)  # what the env credited the tutor
    assert logged["rollout/failed"] == 0.0 and logged["rollout/tutor_turns"] > 0


def test_failed_episodes_are_unscored(rollout: dict, prompts: list[str]) -> None:
    from tutorzoo.rewards import load_rubric

    funcs, _ = reward_functions(load_rubric("default"))
    episodes = [dict(r) for r in rollout["episode"]]
    episodes[1]["ended_by"] = "failure"
    for f in funcs:
        values = f(prompts, ["x"] * len(prompts), episode=episodes)
        assert values[1] is None and values[0] is not None, f.__name__
    with pytest.raises(ConfigError, match="rollout_func"):
        funcs[0](prompts, ["x"] * len(prompts))


def test_rollout_is_deterministic_under_a_seed(rollout: dict, policy: tuple, prompts: list[str]) -> None:
    from tutorzoo.rewards import load_rubric

    model, tokenizer = policy
    again = EpisodeRollout(tokenizer, load_rubric("default"), seed=0, max_new_tokens=MAX_NEW)(prompts[:GROUP],
                                                                                              _trainer(model))
    other = EpisodeRollout(tokenizer, load_rubric("default"), seed=1, max_new_tokens=MAX_NEW)(prompts[:GROUP],
                                                                                              _trainer(model))
    # a fresh rollout object with the same seed replays the same calls to the token
    first = EpisodeRollout(tokenizer, load_rubric("default"), seed=0, max_new_tokens=MAX_NEW)(prompts[:GROUP],
                                                                                              _trainer(model))
    assert again["completion_ids"] == first["completion_ids"]
    assert [r["transcript"] for r in again["episode"]] == [r["transcript"] for r in first["episode"]]
    assert other["completion_ids"] != again["completion_ids"]


def test_dialogue_outgrowing_the_context_fails_that_episode(policy: tuple, prompts: list[str]) -> None:
    from tutorzoo.rewards import load_rubric

    model, tokenizer = policy
    fn = EpisodeRollout(tokenizer, load_rubric("default"), seed=0, max_new_tokens=MAX_NEW,
                        max_completion_length=MAX_NEW + 4)  # room for the first turn only
    out = fn(prompts[:2], _trainer(model))
    for record, completion, mask in zip(out["episode"], out["completion_ids"], out["env_mask"], strict=True):
        assert record["ended_by"] == "failure"
        assert "no longer fits" in record["failures"][0]["error"]
        assert len(completion) == len(mask) and sum(mask) >= 1
    assert fn.last_stats["rollout/failed"] == 1.0


def test_vllm_server_rollout_uses_the_client_and_returns_logprobs(policy: tuple, prompts: list[str]) -> None:
    from tutorzoo.rewards import load_rubric

    model, tokenizer = policy
    eos = tokenizer.eos_token_id
    reply = tokenizer("What do you notice first?", add_special_tokens=False)["input_ids"] + [eos]
    client = FakeClient(reply)
    fn = EpisodeRollout(tokenizer, load_rubric("default"), seed=0, max_new_tokens=MAX_NEW + len(reply))
    out = fn(prompts[:2], _trainer(model, use_vllm=True, client=client))
    assert client.calls and all(c["n"] == 1 and c["logprobs"] == 0 for c in client.calls)
    assert client.calls[0]["prompts"][0] == out["prompt_ids"][0]  # token prompts, the tutor's context
    for completion, mask, lps, record in zip(out["completion_ids"], out["env_mask"], out["logprobs"], out["episode"],
                                             strict=True):
        assert len(lps) == len(completion)
        assert [lp for lp, m in zip(lps, mask, strict=True) if m == 1][: len(reply)] == [-0.5 - j
                                                                                          for j in range(len(reply))]
        assert all(lp == 0.0 for lp, m in zip(lps, mask, strict=True) if m == 0)
        assert all(t["utterance"] == "What do you notice first?" for t in record["transcript"]
                   if t["speaker"] == "tutor")


# ---------------------------------------------------------------------------------------------- smoke
@pytest.mark.slow
def test_grpo_smoke_from_config(tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tutorzoo.train.grpo import run

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    cfg = load_recipe_config(Config, CONFIG_DIR / "grpo.yaml", [
        f"out_dir={tmp_path / 'out'}", "sft_dir=null", f"base_model={tiny_model_dir}", "adapter=null", "max_steps=3",
        "train_specs.max_specs=4", "max_new_tokens=16", "train_specs.protocol={max_turns: 2}", "learning_rate=1e-3",
        "eval.limit=2", "eval.max_new_tokens=16", "report_k=1",
    ])
    results = run(cfg)
    assert results["lora_tensors"] > 0 and results["lora_tensors_changed"] == results["lora_tensors"]
    assert len(results["reward_curve"]["values"]) == 3
    assert "rewards/learning_gain/mean" in (tmp_path / "out" / "log_history.jsonl").read_text()
    assert {"learning_gain", "pedagogy", "sid_total"} <= set(results["components"])
    adapter = tmp_path / "out" / "adapter"
    assert (adapter / "adapter_config.json").is_file() and (adapter / "README.md").is_file()
    assert results["eval"]["grpo"]["n"] == results["eval"]["start"]["n"] == 2
    assert json.loads((tmp_path / "out" / "results.json").read_text())["recipe"] == "grpo"
    assert list(tmp_path.glob("wandb/offline-run-*/run-*.wandb"))


@pytest.mark.slow
def test_grpo_two_cpu_processes(tiny_model_dir: Path, tmp_path: Path) -> None:
    """``accelerate launch`` with two CPU processes: both play their own episodes, process 0 alone tracks and
    writes the results."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file",
           str(CONFIG_DIR / "accelerate" / "cpu_ddp.yaml"),
           "-m", "tutorzoo.train.grpo", "--config", str(CONFIG_DIR / "grpo.yaml"),
           "--set", "sft_dir=null", "--set", f"base_model={tiny_model_dir}", "--set", "adapter=null",
           "--set", "max_steps=2",
           "--set", "max_new_tokens=16", "--set", "train_specs.protocol={max_turns: 2}", "--set", "eval.enabled=false",
           "--set", f"out_dir={tmp_path / 'out'}"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["lora_tensors_changed"] > 0
    assert len(results["reward_curve"]["values"]) == 2
    assert len(list(tmp_path.glob("wandb/offline-run-*/run-*.wandb"))) == 1  # one run, from process 0
