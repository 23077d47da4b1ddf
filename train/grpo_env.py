"""GRPO through TRL's stock ``GRPOTrainer(environment_factory=...)``: the policy tutors with tool calls.

The recipe for users who already train tool-calling agents with TRL: the tutor is a chat model that calls
``say(message)`` and ``end_session(summary)`` (:mod:`tutorzoo.train.trl_env`), TRL runs its own tool-calling loop,
masks the student's replies (tool results) out of the loss and scores each rollout with the environment's
``get_reward()`` — the episode record's reward under the rubric. :mod:`tutorzoo.train.grpo` is the other path
(``rollout_func``: the student's turns as user turns, any chat template); this one needs a chat template that TRL
recognises and that can call tools (Qwen3, Qwen2.5, Llama-3 ...: ``trl/chat_templates``).

Each dataset row is one episode spec (:func:`tutorzoo.train.trl_env.build_dataset`), repeated ``num_generations``
times by TRL: a group plays one task, persona and student seed. Every rubric term is a weight-0 reward column
(``rewards/<term>/mean``); ``rewards/TutorZooEnv/mean`` is the weighted total that is trained on. A failed or
unfinished rollout (no ``end_session`` before ``max_completion_length`` or ``max_tool_calling_iterations`` ran out,
or a reply without a tool call) is unscored: logged per step (``tutorzoo/unfinished``, ``tutorzoo/failed``),
counted in ``results.json`` and written with every other training episode to ``<out_dir>/episodes.jsonl``.

Without ``base_model`` the recipe builds a tiny random Qwen3 (TRL's ``qwen3.jinja``) into ``<out_dir>/tiny-qwen3``:
it runs the machinery end to end, but a random model emits no tool call, so every episode is unfinished and the run
ends with an error that says so (after writing its results).

vLLM (optional, GPUs): ``use_vllm: true`` with ``vllm_mode: server`` (start ``trl vllm-serve --model MODEL``
first and set ``vllm_server_base_url``) or ``vllm_mode: colocate``.

Example::

    tutorzoo train grpo_env --config configs/train/grpo_env.yaml --set base_model=Qwen/Qwen3-0.6B
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from tutorzoo.envs.errors import ConfigError
from tutorzoo.train.common import PAD_FIELD_DOC, LoraSettings, RecipeConfig, finish_wandb, start_wandb, write_results
from tutorzoo.train.grpo import (
    SpecSelection,
    load_policy,
    log_callback,
    reward_curve,
    train_and_count_changes,
    training_rubric,
)

RECIPE = "grpo_env"


class GRPOEnvRecipeConfig(RecipeConfig):
    """Every knob of the ``environment_factory`` GRPO recipe (``configs/train/grpo_env.yaml`` overrides these)."""

    base_model: str | None = Field(
        default=None, description="A tool-capable chat model (local folder or hub id) whose template TRL knows; None "
        "builds a tiny random Qwen3 into <out_dir>/tiny-qwen3 (machinery only: it calls no tools).")
    adapter: str | None = Field(default=None, description="A LoRA adapter of base_model to train further.")
    lora: LoraSettings = Field(default_factory=LoraSettings, description="The new LoRA (unused with an adapter).")
    rubric: str = Field(default="default", description="Reward rubric: configs/rewards/<name>.yaml or a path.")
    reward_weights: dict[str, float] = Field(
        default_factory=dict, description="Overrides of the rubric's term weights (every term stays logged).")
    train_specs: SpecSelection = Field(
        default_factory=lambda: SpecSelection(suite="train-sft", split="train", max_specs=16,
                                              protocol={"max_turns": 3}),
        description="The training episodes; each is one dataset row, played num_generations times per visit.")
    student: str = Field(default="simulated", description="'simulated', 'llm:<backend>' or 'hybrid:<backend>'.")
    student_args: dict[str, Any] = Field(default_factory=dict, description="An LLM student's backend arguments.")

    num_generations: int = Field(default=4, ge=2, description="Rollouts per episode spec (the GRPO group).")
    prompts_per_step: int = Field(default=2, ge=1, description="Episode specs per device per optimizer step.")
    max_steps: int = Field(default=48, ge=1)
    learning_rate: float = Field(default=1e-5, gt=0)
    beta: float = Field(default=0.0, ge=0, description="KL coefficient to the reference model.")
    loss_type: Literal["grpo", "dr_grpo", "dapo", "bnpo"] = "dapo"
    scale_rewards: Literal["group", "batch", "none"] = "group"
    gradient_accumulation_steps: int = Field(default=1, ge=1)
    temperature: float = Field(default=0.7, gt=0, le=2.0)
    top_p: float = Field(default=1.0, gt=0, le=1.0)
    max_completion_length: int = Field(
        default=1024, ge=64, description="Most completion tokens of a rollout: the tutor's and the student's (tool "
        "results count too); a rollout that runs out before end_session is unfinished, not scored.")
    max_tool_calling_iterations: int | None = Field(
        default=None, ge=1, description="Most tool-calling rounds per rollout (None: max_turns + 2 of the longest "
        "spec, enough for every turn and the closing).")
    enable_thinking: bool = Field(default=False, description="Qwen3-style templates: let the tutor think first.")
    logging_steps: int = Field(default=1, ge=1)
    threads: int | None = Field(default=1, ge=1, description="torch CPU threads (None: torch's default).")
    pad_token: str = Field(default="auto", description=PAD_FIELD_DOC)
    report_k: int = Field(default=8, ge=1, description="Steps averaged at each end of the reward curve.")

    use_vllm: bool = Field(default=False, description="Generate with vLLM (GPUs; pip install 'trl[vllm]').")
    vllm_mode: Literal["server", "colocate"] = "server"
    vllm_server_base_url: str | None = Field(default=None, description="e.g. http://127.0.0.1:8000 (server mode)")

    @model_validator(mode="after")
    def _check(self) -> GRPOEnvRecipeConfig:
        if self.adapter is not None and self.base_model is None:
            raise ValueError("adapter is set without base_model: give the base model the adapter was trained on")
        if self.use_vllm and self.vllm_mode == "server" and not self.vllm_server_base_url:
            raise ValueError("use_vllm with vllm_mode=server needs vllm_server_base_url (start `trl vllm-serve "
                             "--model MODEL`, then set vllm_server_base_url=http://HOST:8000), or use colocate")
        return self


Config = GRPOEnvRecipeConfig


def check_tool_template(tokenizer: Any, name: str) -> None:
    """A ConfigError naming the fix unless TRL can parse tool calls with ``tokenizer``'s chat template."""
    import copy

    from trl.chat_template_utils import add_response_schema, supports_tool_calling

    fix = ("use a tool-capable model whose chat template TRL ships in trl/chat_templates (Qwen3, Qwen2.5, Llama-3), "
           "or train with the rollout_func recipe instead (tutorzoo train grpo), which takes any chat template")
    if not supports_tool_calling(tokenizer):
        raise ConfigError(f"{name!r}: its chat template cannot render tool calls; {fix}")
    try:
        add_response_schema(copy.deepcopy(tokenizer))
    except ValueError as exc:
        raise ConfigError(f"{name!r}: TRL does not recognise its chat template ({exc}); {fix}") from None


def resolve_model(cfg: GRPOEnvRecipeConfig, out_dir: Path) -> tuple[str, str]:
    """``(base model, origin)``: the configured model, or the tiny Qwen3 built once into ``out_dir/tiny-qwen3``."""
    if cfg.base_model is not None:
        return cfg.base_model, "config"
    from tutorzoo.train.tiny_families import build_family_model

    tiny = out_dir / "tiny-qwen3"
    if not (tiny / "config.json").is_file():
        build_family_model("qwen3", tiny, seed=cfg.seed)
    return str(tiny), "tiny"


def grpo_args(cfg: GRPOEnvRecipeConfig, out_dir: Path, n_components: int, report_to: str, run_name: str | None,
              tool_iterations: int) -> Any:
    """TRL's ``GRPOConfig`` for this recipe (CPU: ``use_cpu``, no bf16)."""
    import torch
    from trl import GRPOConfig

    cuda = torch.cuda.is_available()
    bf16 = cuda and torch.cuda.is_bf16_supported()
    return GRPOConfig(
        output_dir=str(out_dir / "trainer"), seed=cfg.seed, use_cpu=not cuda, bf16=bf16,
        per_device_train_batch_size=cfg.prompts_per_step * cfg.num_generations, num_generations=cfg.num_generations,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps, max_steps=cfg.max_steps,
        learning_rate=cfg.learning_rate, beta=cfg.beta, loss_type=cfg.loss_type, scale_rewards=cfg.scale_rewards,
        temperature=cfg.temperature, top_p=cfg.top_p, max_completion_length=cfg.max_completion_length,
        max_tool_calling_iterations=tool_iterations, reward_weights=[0.0] * n_components,
        chat_template_kwargs={"enable_thinking": cfg.enable_thinking}, logging_steps=cfg.logging_steps,
        save_strategy="no", report_to=report_to, run_name=run_name, log_completions=False,
        dataloader_num_workers=0, disable_dropout=True, use_vllm=cfg.use_vllm, vllm_mode=cfg.vllm_mode,
        vllm_server_base_url=cfg.vllm_server_base_url,
    )


def run(cfg: GRPOEnvRecipeConfig) -> dict[str, Any]:
    """Train with GRPO through ``environment_factory``; returns (and writes to ``results.json``) the results."""
    import torch
    from trl import GRPOTrainer

    from tutorzoo.agents.student.llm import make_student_factory
    from tutorzoo.train.trl_env import EpisodeLog, build_dataset, component_rewards, env_factory

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    out_dir = cfg.output_dir(RECIPE)
    rubric = training_rubric(cfg.rubric, cfg.reward_weights)
    specs = cfg.train_specs.specs()
    base, origin = resolve_model(cfg, out_dir)
    model, tokenizer, peft_config = load_policy(base, cfg.adapter, cfg.lora, pad_token=cfg.pad_token)
    check_tool_template(tokenizer, base)
    episodes = out_dir / "episodes.jsonl"
    episodes.unlink(missing_ok=True)
    log = EpisodeLog(path=episodes, keep=False)
    funcs = component_rewards(rubric, log)
    tool_iterations = cfg.max_tool_calling_iterations or max(
        int(s.protocol.get("max_turns", 8)) for s in specs) + 2
    wandb_mode = cfg.wandb.mode or os.environ.get("WANDB_MODE") or "offline"
    wb = start_wandb(RECIPE, cfg, out_dir)
    results: dict[str, Any] = {"recipe": RECIPE, "base_model": base, "start": origin, "adapter_start": cfg.adapter,
                               "train_specs": len(specs), "rubric": rubric.name, "student": cfg.student,
                               "reward_weights": dict(rubric.weights), "episodes_file": str(episodes)}
    try:
        args = grpo_args(cfg, out_dir, len(funcs), "none" if wandb_mode == "disabled" else "wandb",
                         wb.name if wb is not None else None, tool_iterations)
        trainer = GRPOTrainer(model=model, reward_funcs=funcs, args=args, train_dataset=build_dataset(specs),
                              processing_class=tokenizer, peft_config=peft_config,
                              environment_factory=env_factory(rubric, make_student_factory(cfg.student,
                                                                                           **cfg.student_args),
                                                              log),
                              callbacks=[log_callback(out_dir / "log_history.jsonl")])
        train_and_count_changes(trainer, results)
        history = trainer.state.log_history
        results["episodes"] = log.counts()
        results["reward_curve"] = reward_curve(history, cfg.report_k)
        results["components"] = {f.__name__: reward_curve(history, cfg.report_k, f"rewards/{f.__name__}/mean")
                                 for f in funcs}
        adapter_dir = out_dir / "adapter"
        trainer.save_model(str(adapter_dir))
        results["adapter"] = str(adapter_dir)
        write_results(out_dir, results)
        if log.episodes and log.scored == 0:
            raise ConfigError(f"none of the {log.episodes} training episodes was scored ({log.failed} failed, "
                              f"{log.unfinished} unfinished: the model never closed a session with end_session), so "
                              f"nothing was learnt; see {episodes}. Start from a model that calls tools (an SFT "
                              "adapter, or an instruct model) or raise max_completion_length")
    finally:
        finish_wandb(wb, {k: v for k, v in results.get("episodes", {}).items()})
    return results
