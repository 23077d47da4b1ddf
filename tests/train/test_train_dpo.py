"""The DPO recipe: preference pairs built from the env (states, replay, ranking, failures) and a DPO smoke run."""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path

import pytest

from tutorzoo.agents.backends.base import GenerationResult
from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.records import json_form
from tutorzoo.eval.rollout import run_episode
from tutorzoo.rewards import load_rubric
from tutorzoo.train.common import CONFIG_DIR, load_recipe_config
from tutorzoo.train.dpo import Config, fit_prompt
from tutorzoo.train.dpo_pairs import POLICY, Candidate, PairSettings, Scored, build_pairs, collect_states, rank, replay

SPECS = [
    EpisodeSpec(task_set="math", task_id="fraction_addition", persona="weak_knowledge_partly_wrong", seed=3,
                protocol={"max_turns": 6, "posttest": "both"}),
    EpisodeSpec(task_set="math", task_id="two_digit_addition", persona="all_round_asks_for_hint", seed=5,
                protocol={"max_turns": 6}),
]
BUILTIN = PairSettings(candidates={"socratic": 1, "lecturer": 1, "random": 2}, states_per_episode=2,
                       min_margin=0.01)


def test_pairs_prefer_the_better_continuation() -> None:
    build = build_pairs(BUILTIN, SPECS, seed=0)
    summary = build.summary()
    assert summary["states"] == 4 and summary["failures"] == 0
    assert summary["pairs"] + sum(summary["skipped_states"].values()) == 4
    assert summary["pairs"] >= 2
    for row in build.rows:
        assert row["reward_chosen"] - row["reward_rejected"] >= BUILTIN.min_margin
        assert row["chosen"] != row["rejected"]
        assert row["prompt"][0]["role"] == "system" and row["prompt"][-1]["role"] == "user"
        assert row["chosen"][0]["role"] == row["rejected"][0]["role"] == "assistant"
        assert EpisodeSpec(**json.loads(row["spec"])) in SPECS
    ds = build.dataset()
    assert len(ds) == summary["pairs"]
    assert {"prompt", "chosen", "rejected", "reward_chosen", "reward_rejected", "spec"} <= set(ds.column_names)


def test_replay_reproduces_the_prefix_and_the_whole_episode() -> None:
    """Saying the recorded turns again reproduces the state; saying the tutor's own next turn, then letting
    the same tutor (same seed, shadowing the dialogue) go on, reproduces the original episode to the byte."""
    spec = SPECS[0]
    rubric = load_rubric("default")
    original = run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona), "replay", reward=rubric)
    states = collect_states(spec, make_tutor("socratic"), SimulatedStudent, {}, make_tutor, rubric)
    said = [t["utterance"] for t in original["transcript"] if t["speaker"] == "tutor"]
    assert [s.turn for s in states] == list(range(len(said)))
    for state in states:
        assert list(state.prefix) == said[: state.turn]
        record = replay(state, said[state.turn], make_tutor("socratic"), SimulatedStudent, rubric)
        assert record["transcript"][: len(state.transcript)] == state.transcript
        assert json.dumps(json_form(record), sort_keys=True) == json.dumps(json_form(original), sort_keys=True)


def test_pairs_are_deterministic_under_a_seed() -> None:
    def rows(seed: int) -> str:
        return json.dumps(build_pairs(BUILTIN, SPECS, seed=seed).rows, sort_keys=True)

    first = rows(0)
    assert rows(0) == first
    assert rows(1) != first  # the seed picks other states


class SayCrash:
    """A candidate source whose turn makes the continuation crash (with :class:`CrashOnWord`)."""

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict, info: dict) -> str:
        return "" if info.get("observe_only") else "CRASH now, please."


class CrashOnWord(SimulatedStudent):
    def act(self, observation: dict, info: dict):
        if "CRASH" in info.get("tutor_utterance", ""):
            raise RuntimeError("the student model blew up")
        return super().act(observation, info)


def test_a_candidate_that_crashes_the_continuation_is_recorded_and_skipped() -> None:
    settings = BUILTIN.model_copy(update={"candidates": {"socratic": 1, "test_train_dpo:SayCrash": 1, "random": 2}})
    build = build_pairs(settings, SPECS, seed=0, make_student=CrashOnWord)
    crashes = [f for f in build.failures if f["kind"] == "continuation"]
    assert len(crashes) == build.states == 4
    assert all(f["source"] == "test_train_dpo:SayCrash" and "blew up" in f["error"] for f in crashes)
    assert build.rows, "the other candidates still make pairs"
    assert all("CRASH" not in r["chosen"][0]["content"] + r["rejected"][0]["content"] for r in build.rows)
    assert build.summary()["failures_by_kind"] == {"continuation": 4}


_calls = count()


class ForgetfulStudent(SimulatedStudent):
    """Not deterministic across instances: every reply carries a process-wide counter."""

    def act(self, observation: dict, info: dict):
        out = super().act(observation, info)
        if info.get("phase") == "dialogue" and hasattr(out, "utterance"):
            out = type(out)(**{**out.__dict__, "utterance": f"{out.utterance} ({next(_calls)})"})
        return out


def test_a_replay_that_differs_from_the_recorded_state_is_a_recorded_mismatch() -> None:
    build = build_pairs(BUILTIN, SPECS[:1], seed=0, make_student=ForgetfulStudent)
    kinds = {f["kind"] for f in build.failures}
    assert kinds == {"replay_mismatch"}
    assert build.rows == [] and build.summary()["skipped_states"] == {"too_few_candidates": build.states}


class FakePolicy:
    """A chat backend with scripted replies: the n-th conversation gets reply n (or a failure)."""

    name = "fake"

    def __init__(self, fail_every: int = 0) -> None:
        self.fail_every = fail_every
        self.calls = 0

    def generate(self, conversations, config):
        out = []
        for conv in conversations:
            self.calls += 1
            assert conv[0]["role"] == "system"
            if self.fail_every and self.calls % self.fail_every == 0:
                out.append(GenerationResult(text=None, error="scripted failure"))
            else:
                out.append(GenerationResult(text=f"What do you notice first? ({self.calls}, seed {config.seed})"))
        return out


def test_policy_samples_are_candidates_and_their_failures_are_recorded() -> None:
    settings = BUILTIN.model_copy(update={"candidates": {POLICY: 2, "lecturer": 1}, "generation_batch_size": 3})
    policy = FakePolicy(fail_every=4)
    build = build_pairs(settings, SPECS, seed=0, policy=policy)
    assert policy.calls == 2 * build.states
    failed = [f for f in build.failures if f["kind"] == "candidate_source"]
    assert len(failed) == policy.calls // 4 and all(f["source"] == POLICY for f in failed)
    sources = {r["source_chosen"] for r in build.rows} | {r["source_rejected"] for r in build.rows}
    assert POLICY in sources
    again = build_pairs(settings, SPECS, seed=0, policy=FakePolicy(fail_every=4))
    assert again.rows == build.rows
    with pytest.raises(ConfigError, match="no policy model"):
        build_pairs(settings, SPECS, seed=0)


def _scored(*rewards: float | None) -> list[Scored]:
    return [Scored(Candidate(f"turn {i}", "socratic"), r) for i, r in enumerate(rewards)]


@pytest.mark.parametrize(("name", "rewards", "expected"), [
    ("best and worst", (0.2, 0.9, -0.4), ("turn 1", "turn 2")),
    ("equal best goes to the earlier, equal worst to the later", (0.5, 0.5, 0.1, 0.1), ("turn 0", "turn 3")),
    ("failed candidates are left out", (None, 0.3, None, 0.0), ("turn 1", "turn 3")),
    ("a margin below the threshold is a tie", (0.30, 0.32), "tie"),
    ("all equal is a tie", (0.4, 0.4, 0.4), "tie"),
    ("one scored candidate is too few", (None, 0.7), "too_few_candidates"),
])
def test_rank(name: str, rewards: tuple, expected: tuple | str) -> None:
    verdict = rank(_scored(*rewards), min_margin=0.05)
    if isinstance(expected, str):
        assert verdict == expected, name
    else:
        assert (verdict[0].candidate.text, verdict[1].candidate.text) == expected, name


class CharTokenizer:
    """One token per character of the rendered chat (enough to test prompt fitting)."""

    def apply_chat_template(self, messages, tokenize=False):
        return "".join(f"<{m['role']}>{m['content']}" for m in messages)

    def __call__(self, text, add_special_tokens=False, verbose=False):
        return {"input_ids": list(range(len(text)))}


def test_fit_prompt_drops_the_oldest_messages_and_keeps_the_system_one() -> None:
    msgs = [{"role": "system", "content": "S" * 10}] + [{"role": "user", "content": str(i) * 20} for i in range(4)]
    completion = [[{"role": "assistant", "content": "A" * 10}]]
    full = len(CharTokenizer().apply_chat_template(msgs + completion[0]))
    assert fit_prompt(msgs, completion, CharTokenizer(), full) == (msgs, 0)
    fitted, dropped = fit_prompt(msgs, completion, CharTokenizer(), full - 1)
    assert dropped == 1 and fitted == [msgs[0], *msgs[2:]]
    fitted, dropped = fit_prompt(msgs, completion, CharTokenizer(), 10)
    assert fitted == [msgs[0], msgs[-1]] and dropped == 3  # the last message always stays


def test_the_shipped_config_loads() -> None:
    cfg = load_recipe_config(Config, CONFIG_DIR / "dpo.yaml")
    assert cfg.pairs.uses_policy() and sum(cfg.pairs.candidates.values()) >= 2
    assert cfg.pairs.suite == "train-sft" and cfg.eval_suite == "train-sft"


@pytest.mark.parametrize(("override", "message"), [
    ("pairs.candidates={soccratic: 2}", "unknown tutor 'soccratic'"),
    ("pairs.candidates={socratic: 1}", "at least 2 turns"),
    ("pairs.candidates={socratic: -1, random: 3}", "count >= 0"),
    ("pairs.continuation_tutor=hf:models/tiny", "the model being trained is named 'policy'"),
    ("base_model=null", "without base_model"),
    ("beta=0", "beta"),
    ("pairs.episodes=0", "pairs.episodes"),
])
def test_bad_config_is_an_error_that_names_the_fix(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_recipe_config(Config, CONFIG_DIR / "dpo.yaml", [override])


def _smoke_overrides(tmp_path: Path, **extra: object) -> list[str]:
    sets = {"out_dir": str(tmp_path / "out"), "pairs.episodes": 2, "pairs.states_per_episode": 2,
            "pairs.max_new_tokens": 16, "max_steps": 3, "batch_size": 2, "max_length": 512, "eval_episodes": 0,
            "heldout_pairs": 0, "wandb.mode": "offline", **extra}
    return [f"{k}={v}" for k, v in sets.items()]


@pytest.mark.slow
def test_dpo_smoke_from_the_config_trains_the_adapter(tiny_model_dir: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from safetensors.torch import load_file

    from tutorzoo.train.dpo import run

    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_MODE", "offline")
    cfg = load_recipe_config(Config, CONFIG_DIR / "dpo.yaml",
                             _smoke_overrides(tmp_path, base_model=str(tiny_model_dir), sft_dir="null", adapter="null",
                                              eval_episodes=2, eval_max_new_tokens=8, eval_batch_size=2,
                                              heldout_pairs=2))
    results = run(cfg)
    out = tmp_path / "out"
    assert results["start"] == "config" and results["pairs"]["pairs"] > 0
    train = results["train"]
    assert train["steps"] == 3 and train["lora_tensors"] > 0
    assert train["lora_tensors_changed"] == train["lora_tensors"]
    held = train["held_out_pairs"]  # pairs of held-out specs, scored before and after training
    assert held["pairs"] == results["pairs_held_out"]["pairs"] > 0
    assert held["before"]["rewards/margins"] == pytest.approx(0.0, abs=1e-6)  # policy == reference before any step
    assert held["after"]["loss"] != held["before"]["loss"]
    weights = load_file(out / "adapter" / "adapter_model.safetensors")
    lora_b = [v for k, v in weights.items() if "lora_B" in k]
    assert lora_b and all(v.abs().sum() > 0 for v in lora_b), "a fresh LoRA's B starts at zero; training moved it"
    assert (out / "adapter" / "README.md").is_file() and (out / "results.json").is_file()
    from datasets import load_from_disk

    assert len(load_from_disk(str(out / "pairs"))) == results["pairs"]["pairs"]
    assert list(tmp_path.glob("wandb/offline-run-*/run-*.wandb"))
    for key in ("dpo", "start"):  # both adapters on the same held-out specs, as `tutorzoo eval` plays them
        assert results["eval"][key]["n"] == 2
        assert (out / "eval" / key / "episodes.jsonl").is_file()


@pytest.mark.slow
def test_dpo_from_an_sft_adapter_keeps_training_that_adapter(tiny_model_dir: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """With <sft_dir>/READY the SFT adapter is the starting point and (as TRL's frozen copy) the reference."""
    import shutil

    import torch
    from peft import LoraConfig, get_peft_model
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from tutorzoo.train.dpo import run

    sft = tmp_path / "sft"
    shutil.copytree(tiny_model_dir, sft / "base")
    torch.manual_seed(0)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(sft / "base"),
                           LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", init_lora_weights=False))
    model.save_pretrained(sft / "adapter")
    (sft / "READY").write_text("ok\n")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    overrides = _smoke_overrides(tmp_path, sft_dir=str(sft), base_model="null", adapter="null",
                                 **{"pairs.candidates": "{policy: 2, lecturer: 1}"})
    cfg = load_recipe_config(Config, CONFIG_DIR / "dpo.yaml", overrides)
    results = run(cfg)
    assert results["start"] == "sft" and results["start_adapter"] == str(sft / "adapter")
    before = load_file(sft / "adapter" / "adapter_model.safetensors")
    after = load_file(tmp_path / "out" / "adapter" / "adapter_model.safetensors")
    assert set(after) == set(before), "only the trained adapter is saved, not TRL's reference copy"
    assert any(not torch.equal(after[k], before[k]) for k in before)


@pytest.mark.slow
def test_pairs_with_model_samples_are_deterministic(tiny_model_dir: Path) -> None:
    from tutorzoo.agents.backends.hf import HFBackend

    settings = BUILTIN.model_copy(update={"candidates": {POLICY: 2, "socratic": 1, "lecturer": 1},
                                          "max_new_tokens": 12, "generation_batch_size": 4})
    policy = HFBackend(str(tiny_model_dir), batch_size=4, threads=1)
    first = build_pairs(settings, SPECS, seed=0, policy=policy)
    again = build_pairs(settings, SPECS, seed=0, policy=policy)
    assert first.rows and json.dumps(again.rows, sort_keys=True) == json.dumps(first.rows, sort_keys=True)
    assert first.summary()["candidates_scored"] > 3 * first.states  # the samples differ from the built-in turns
