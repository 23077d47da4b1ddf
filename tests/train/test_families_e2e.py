"""Every model-facing step on every chat-template family, end to end (slow): tiny random models with each family's
real architecture, chat template and special tokens as shipped (train/tiny_families.py), used exactly as a user's
downloaded model would be — no hand fix of the pad token, no template edits.

Steps per family: rollout (batched and sequential), LLM and hybrid students, judge and LLM annotator, SFT (the
mask covers exactly the tutor's tokens), GRPO (no failed episode; with an LLM student on one family), DPO.
Run one family with ``-k qwen3``; all with ``pytest tests/train/test_families_e2e.py -m slow``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

from tutorzoo.train.tiny_families import FAMILIES, build_family_model  # noqa: E402

pytestmark = pytest.mark.slow
NAMES = sorted(FAMILIES)
MAX_NEW = 12


@pytest.fixture(scope="module")
def family_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import torch

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("families")
    return {name: build_family_model(name, root / name) for name in NAMES}


def _specs(n: int = 2) -> list:
    from tutorzoo.envs.config import EpisodeSpec

    return [EpisodeSpec(task_set=("math", "stem")[i % 2], persona="anxious", seed=i, protocol={"max_turns": 2})
            for i in range(n)]


def _no_failure(records: list[dict]) -> None:
    for r in records:
        assert r["ended_by"] != "failure", r["failures"][:1]
        said = [t["utterance"] for t in r["transcript"] if t["speaker"] == "tutor"]
        assert not any("<think>" in s or "</think>" in s for s in said)


@pytest.mark.parametrize("name", NAMES)
def test_rollout_batched_and_sequential(family_dirs: dict[str, Path], name: str) -> None:
    from tutorzoo.agents.backends.base import GenerationConfig
    from tutorzoo.agents.backends.hf import HFBackend
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor.llm import LLMTutor
    from tutorzoo.eval.batch import run_batched
    from tutorzoo.eval.rollout import run_episode

    tutor = LLMTutor(HFBackend(str(family_dirs[name]), threads=1, batch_size=4),
                     GenerationConfig(max_new_tokens=MAX_NEW))
    specs = _specs()
    _no_failure(run_batched(specs, tutor, SimulatedStudent, batch_size=2))
    _no_failure([run_episode(specs[0], tutor, SimulatedStudent(specs[0].persona))])


@pytest.mark.parametrize("name", NAMES)
def test_llm_and_hybrid_students(family_dirs: dict[str, Path], name: str) -> None:
    from tutorzoo.agents.student.llm import make_student_factory
    from tutorzoo.agents.tutor import make_tutor
    from tutorzoo.eval.rollout import run_episode

    spec = _specs(1)[0]
    for kind in ("llm", "hybrid"):
        make = make_student_factory(f"{kind}:hf:{family_dirs[name]}", threads=1, max_new_tokens=MAX_NEW)
        record = run_episode(spec, make_tutor("socratic"), make(spec.persona))
        _no_failure([record])
        assert record["pretest"], kind  # the LLM student answered the pre-test itself


@pytest.mark.parametrize("name", NAMES)
def test_judge_and_llm_annotator_reach_the_model(family_dirs: dict[str, Path], name: str) -> None:
    from tutorzoo.agents.annotate_llm import LLMAnnotator
    from tutorzoo.agents.backends.base import GenerationConfig
    from tutorzoo.agents.backends.hf import HFBackend
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor import make_tutor
    from tutorzoo.envs import tutoring_v0
    from tutorzoo.eval.judges.judge import Judge, JudgeConfig
    from tutorzoo.eval.rollout import run_episode

    backend = HFBackend(str(family_dirs[name]), threads=1)
    judge = Judge(JudgeConfig(backend=f"hf:{family_dirs[name]}", max_new_tokens=MAX_NEW), backend=backend)
    [verdict] = judge.judge_many("kmp_error_reason", [{
        "problem": "3/4 of 8", "solution": "8/4=2, 2*3=6", "error_step": "1", "reference_reason": "divided wrong",
        "tutor_reason": "other: the student divided by 3"}])
    # a random model writes no JSON: the samples fail to parse, but none fails to render or generate
    assert not any("backend:" in e for e in verdict.errors), verdict.errors
    spec = _specs(1)[0]
    record = run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona))
    env = tutoring_v0.env(**spec.env_kwargs())
    env.reset(seed=spec.seed)
    annotator = LLMAnnotator(backend)
    conversations = annotator.conversations(record["transcript"][:2], env.unwrapped.task)
    results = backend.generate(conversations, GenerationConfig(max_new_tokens=4, seed=0))
    assert all(r.ok for r in results), [r.error for r in results]


@pytest.mark.parametrize("name", NAMES)
def test_sft_trains_exactly_the_tutor_tokens(family_dirs: dict[str, Path], name: str, tmp_path: Path) -> None:
    import torch

    from tutorzoo.agents.backends.chat_render import merge_roles
    from tutorzoo.train.common import chat_renderer, load_chat_model
    from tutorzoo.train.corpus import CorpusConfig, build_dataset
    from tutorzoo.train.sft import SFTRecipeConfig, make_trainer, training_dataset

    corpus, _ = build_dataset(CorpusConfig(limit=2, wandb={"mode": "disabled"}))
    model, tokenizer = load_chat_model(str(family_dirs[name]))  # the shipped tokenizer: pad fixed here if needed
    assert tokenizer.pad_token_id not in (None, tokenizer.eos_token_id)
    cfg = SFTRecipeConfig(base_model=str(family_dirs[name]), corpus="unused", max_length=4096, max_steps=2,
                          per_device_train_batch_size=2, logging_steps=1, wandb={"mode": "disabled"})
    trainer = make_trainer(cfg, model, tokenizer, training_dataset(corpus), tmp_path, None)
    end = chat_renderer(tokenizer, model).turn_end
    for row, example in zip(corpus, trainer.train_dataset, strict=True):
        labels = trainer.data_collator([example])["labels"][0].tolist()
        trained = tokenizer.decode([t for t in labels if t != -100])
        turns = [m["content"].strip() for m in merge_roles(row["messages"]) if m["role"] == "assistant"]
        assert trained.replace(" ", "") == "".join(t + end for t in turns).replace(" ", "")
        assert "<think>" not in trained
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    trainer.train()
    assert any(not torch.equal(before[n], p) for n, p in trainer.model.named_parameters() if n in before)


def _grpo(family_dir: Path, tmp_path: Path, student: str = "simulated", student_args: dict | None = None) -> dict:
    from tutorzoo.train.grpo import Config, run

    cfg = Config(base_model=str(family_dir), out_dir=str(tmp_path / "grpo"), max_steps=1, num_generations=2,
                 prompts_per_step=1, max_new_tokens=8, max_completion_length=256, lora={"r": 2, "alpha": 4},
                 train_specs={"suite": "train-sft", "max_specs": 1, "protocol": {"max_turns": 2}},
                 eval={"enabled": False}, wandb={"mode": "disabled"}, student=student,
                 student_args=student_args or {})
    return run(cfg)


@pytest.mark.parametrize("name", NAMES)
def test_grpo_plays_every_episode(family_dirs: dict[str, Path], name: str, tmp_path: Path) -> None:
    results = _grpo(family_dirs[name], tmp_path)
    assert results["rollout"]["failed"] == 0, results["rollout"]
    assert results["rollout"]["episodes"] == 2 and len(results["reward_curve"]["values"]) == 1
    assert results["rollout"]["mode"] == ("render" if name in ("qwen3", "phi3", "phi3_5") else "tokens")


def test_grpo_against_an_llm_student(family_dirs: dict[str, Path], tmp_path: Path) -> None:
    results = _grpo(family_dirs["qwen3"], tmp_path, student=f"llm:hf:{family_dirs['gemma2']}",
                    student_args={"threads": 1, "max_new_tokens": MAX_NEW})
    assert results["rollout"]["failed"] == 0, results["rollout"]
    assert results["rollout"]["episodes"] == 2 and results["student"].startswith("llm:hf:")


@pytest.mark.parametrize("name", NAMES)
def test_dpo_builds_pairs_with_model_candidates_and_trains(family_dirs: dict[str, Path], name: str,
                                                           tmp_path: Path) -> None:
    from tutorzoo.train.dpo import Config, run

    cfg = Config(base_model=str(family_dirs[name]), out_dir=str(tmp_path / "dpo"), max_steps=1, batch_size=2,
                 max_length=1024, lora={"r": 2, "alpha": 4}, wandb={"mode": "disabled"},
                 pairs={"suite": "train-sft", "episodes": 2, "states_per_episode": 1, "max_new_tokens": MAX_NEW,
                        "candidates": {"policy": 1, "socratic": 1, "random": 2}, "min_margin": 0.0})
    results = run(cfg)
    assert results["pairs"]["pairs"] > 0
    assert results["pairs"]["failures_by_kind"].get("candidate_source", 0) == 0, results["pairs"]
    assert results["train"]["lora_tensors_changed"] > 0
