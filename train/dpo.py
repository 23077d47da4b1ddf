"""DPO from environment-ranked preference pairs: candidate tutor turns for one dialogue state, ranked by the
reward of the episode each one leads to, then TRL's ``DPOTrainer`` with a LoRA adapter.

**Pairs** (:mod:`tutorzoo.train.dpo_pairs`; this module holds the config, the training and the evaluation). For each
episode spec of the suite's ``train`` split (a seeded sample of ``pairs.episodes``):

1. *States*: the ``prefix_tutor`` (``socratic`` by default) plays the episode; at every dialogue tutor turn the
   state is kept: the tutor's chat so far (``info["messages"]``, the prompt), the tutor turns said before it
   (the prefix) and the transcript so far. ``states_per_episode`` of those turns are drawn with a seeded rng.
2. *Candidates* for the state's tutor turn come from several sources, so the ranking compares different
   behaviours: the built-in tutors named in ``candidates`` (each *shadows* the episode: it is asked at every
   tutor turn, so its plan follows the dialogue, and what it would say at the drawn turn is its candidate) and
   ``policy`` samples from the model being trained (``temperature`` sampling, seeded). Duplicate texts count
   once (the first source keeps them).
3. *Continuations*: each candidate is scored by replaying the episode from its spec and seed — the env and the
   simulated student are deterministic to the byte, so saying the recorded prefix again reproduces the state
   exactly (checked: the replayed transcript must equal the recorded one, else the candidate is a recorded
   ``replay_mismatch``) — then saying the candidate, then letting the ``continuation_tutor`` play the rest (it
   too shadows the dialogue from the first turn; a batched model tutor, which keeps no state, is only asked
   from the turn after the candidate). Every candidate of a state meets the same student seed and the same
   continuation tutor seed. Its score is the episode's reward under the ``rubric`` (``configs/rewards/``),
   the total the env credited; the prefix is common to all candidates, so only what follows it differs.
4. *Pairs*: chosen = the best-scored candidate, rejected = the worst; a state whose margin is below
   ``min_margin`` (ties) or with fewer than two scored candidates gives no pair. A candidate whose
   continuation crashes (a tutor, student or env exception) is recorded in ``failures`` and left out; the
   other candidates still count.

The pairs are a ``datasets`` dataset with columns ``prompt`` (messages), ``chosen`` / ``rejected`` (one
assistant message each), ``reward_chosen``, ``reward_rejected``, ``source_chosen``, ``source_rejected``,
``turn``, ``n_candidates`` and ``spec`` (the :class:`EpisodeSpec` as JSON), saved to ``<out_dir>/pairs``;
``<out_dir>/pairs_summary.json`` holds the counts and every recorded failure. Same config, same seed, same
pairs.

**Training.** When ``<sft_dir>/READY`` exists the recipe starts from the SFT recipe's base model and adapter:
the adapter is trained further and TRL keeps a frozen copy of it as the reference policy. Otherwise it starts
from ``base_model`` (or a tiny model built into ``<out_dir>/tiny``) with a fresh LoRA adapter, the reference
being the base model (no separate reference model with PEFT). ``use_cpu`` and ``bf16=False`` on CPU machines.
The adapter, its model card and ``results.json`` go to ``<out_dir>``; with ``eval_episodes > 0`` the new
adapter and the starting one play the same held-out specs as ``tutorzoo eval`` does (``<out_dir>/eval/``).

Example::

    tutorzoo train dpo --config configs/train/dpo.yaml --set pairs.episodes=8 --set max_steps=10

    from tutorzoo.train.common import load_recipe_config
    from tutorzoo.train.dpo import Config, run
    results = run(load_recipe_config(Config, "configs/train/dpo.yaml", ["max_steps=5", "wandb.mode=disabled"]))
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field, model_validator

from tutorzoo.envs.errors import ConfigError
from tutorzoo.train.common import (
    PAD_FIELD_DOC,
    LoraSettings,
    RecipeConfig,
    check_start,
    finish_wandb,
    load_chat_model,
    report_to,
    resolve_start,
    start_wandb,
    write_model_card,
    write_results,
)
from tutorzoo.train.dpo_pairs import POLICY, PairSettings, build_pairs, check_policy, train_specs

RECIPE = "dpo"


# ---------------------------------------------------------------------------------------------- config
class Config(RecipeConfig):
    """The DPO recipe: pair building, the starting model, DPO and LoRA settings, the held-out evaluation."""

    pairs: PairSettings = Field(default_factory=PairSettings)
    sft_dir: str | None = Field(default=None, description="The SFT recipe's artifacts (base/, adapter/, READY): "
                                                          "start from them when READY exists.")
    base_model: str | None = Field(default=None, description="Base model (path or hub id) when not starting from "
                                                             "SFT; None builds the tiny model into out_dir/tiny.")
    adapter: str | None = Field(default=None, description="A LoRA adapter of base_model to start from (its copy "
                                                          "is the DPO reference); None starts a fresh adapter.")
    lora: LoraSettings = Field(default_factory=LoraSettings, description="The fresh adapter's LoRA settings "
                                                                         "(unused when starting from an adapter).")
    beta: float = Field(default=0.1, gt=0.0, description="DPO's beta: how far the policy may move from the "
                                                         "reference.")
    loss_type: str = Field(default="sigmoid", description="TRL DPO loss (sigmoid = the DPO paper's).")
    learning_rate: float = Field(default=5e-4, gt=0.0, description="AdamW learning rate (linear decay).")
    max_steps: int = Field(default=60, ge=1, description="Optimizer steps (the pairs repeat as epochs need).")
    batch_size: int = Field(default=4, ge=1, description="Pairs per device step.")
    gradient_accumulation_steps: int = Field(default=1, ge=1, description="Device steps per optimizer step.")
    pad_token: str = Field(default="auto", description=PAD_FIELD_DOC)
    max_length: int = Field(default=1024, ge=16, description="Prompt + completion tokens; older messages of a "
                                                             "longer prompt are dropped (the system one is kept).")
    gradient_checkpointing: bool = Field(default=False, description="Trade compute for memory (TRL's default is "
                                                                    "on; a small model on CPU is faster without).")
    logging_steps: int = Field(default=1, ge=1, description="Log loss and rewards/* every this many steps.")
    threads: int = Field(default=1, ge=1, description="torch CPU threads (process-wide).")
    heldout_pairs: int = Field(default=0, ge=0, description="Held-out specs whose pairs (built like the training "
                                                            "ones) measure DPO's preference accuracy after training "
                                                            "(0: none).")
    eval_suite: str = Field(default="default", description="Suite whose held_out split evaluates the adapters.")
    eval_episodes: int = Field(default=0, ge=0, description="Held-out specs to evaluate on (0: no evaluation).")
    eval_batch_size: int = Field(default=16, ge=1, description="Episodes played in lockstep in the evaluation.")
    eval_max_new_tokens: int = Field(default=150, ge=1, description="Tutor turn cap in the evaluation (the "
                                                                    "harness's default for model tutors).")

    @model_validator(mode="after")
    def _check_start(self) -> Config:
        if self.adapter is not None and self.base_model is None:
            raise ValueError("adapter is set without base_model: give the base model the adapter was trained on")
        return self


# ---------------------------------------------------------------------------------------------- training


def fit_prompt(messages: list[dict], completions: Sequence[list[dict]], tokenizer: Any, max_length: int,
               renderer: Any | None = None) -> tuple[list[dict], int]:
    """``messages`` with the oldest non-system ones dropped until prompt + the longest completion fit in
    ``max_length`` tokens (as the HF backend does at inference); returns it and how many were dropped. With a
    ``renderer`` (:class:`tutorzoo.agents.backends.chat_render.ChatRenderer`) lengths are those of its rendering."""
    def length(msgs: list[dict]) -> int:
        if renderer is not None:
            return max(len(renderer.encode(msgs + list(c), add_generation_prompt=False)) for c in completions)
        texts = [tokenizer.apply_chat_template(msgs + list(c), tokenize=False) for c in completions]
        return max(len(tokenizer(t, add_special_tokens=False, verbose=False)["input_ids"]) for t in texts)

    head = messages[:1] if messages and messages[0]["role"] == "system" else []
    rest = messages[len(head):]
    dropped = 0
    while len(rest) > 1 and length(head + rest) > max_length:
        rest, dropped = rest[1:], dropped + 1
    return head + rest, dropped


def tokenize_pair(row: dict, renderer: Any, max_length: int) -> dict:
    """``prompt_ids`` (the fitted prompt rendered with its generation prompt, BOS as the family has it) and
    ``chosen_ids`` / ``rejected_ids`` (exactly the completion's tokens: its content and end-of-turn token, from
    :meth:`~tutorzoo.agents.backends.chat_render.ChatRenderer.assistant_mask`), so any chat-template family trains on
    what
    it generates from at inference."""
    prompt, dropped = fit_prompt(row["prompt"], [row["chosen"], row["rejected"]], None, max_length, renderer)
    out: dict[str, Any] = {"prompt_ids": renderer.encode(prompt, add_generation_prompt=True),
                           "dropped_messages": dropped}
    for key in ("chosen", "rejected"):
        ids, mask = renderer.assistant_mask(prompt + list(row[key]))
        last = max(i for i, m in enumerate(mask) if m) if 1 in mask else -1
        start = last
        while start > 0 and mask[start - 1]:  # the last assistant span: this completion
            start -= 1
        out[f"{key}_ids"] = ids[start:last + 1] if last >= 0 else []
    return out


def _tokenized_dpo_trainer() -> Any:
    """TRL's DPOTrainer that takes pairs already tokenised by :func:`tokenize_pair` as they are (TRL would
    re-render them with the raw template: system roles, alternation and BOS as each family does not want)."""
    from trl import DPOTrainer

    class TokenizedDPOTrainer(DPOTrainer):
        def _prepare_dataset(self, dataset: Any, processing_class: Any, args: Any, dataset_name: str) -> Any:
            if "prompt_ids" in dataset.column_names:
                return dataset.filter(lambda r: len(r["prompt_ids"]) < args.max_length)
            return super()._prepare_dataset(dataset, processing_class, args, dataset_name)

    return TokenizedDPOTrainer


def train_dpo(cfg: Config, dataset: Any, base: str, adapter: str | None, out_dir: Path, run: Any,
              eval_dataset: Any | None = None, loaded: tuple[Any, Any] | None = None) -> dict:
    """Train the adapter on the pairs; save it to ``out_dir/adapter``; return the training metrics (and, with
    ``eval_dataset``, TRL's eval loss / rewards before and after training on those pairs). ``loaded``: the
    ``(model, tokenizer)`` of :func:`tutorzoo.train.common.load_chat_model`, when the caller checked it already."""
    import torch
    from trl import DPOConfig

    from tutorzoo.train.common import chat_renderer

    model, tokenizer = loaded or load_chat_model(base, cfg.pad_token)
    tokenizer.padding_side = "left"
    renderer = chat_renderer(tokenizer, model)

    def fit(row: dict) -> dict:
        return tokenize_pair(row, renderer, cfg.max_length)

    dataset = dataset.map(fit)
    if eval_dataset is not None and len(eval_dataset):
        eval_dataset = eval_dataset.map(fit)
    else:
        eval_dataset = None
    peft_config = None
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter, is_trainable=True)  # TRL copies it as the reference
    else:
        peft_config = cfg.lora.peft_config()
    args = DPOConfig(
        output_dir=str(out_dir / "trainer"), max_steps=cfg.max_steps, per_device_train_batch_size=cfg.batch_size,
        per_device_eval_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps, learning_rate=cfg.learning_rate,
        beta=cfg.beta, loss_type=[cfg.loss_type], max_length=cfg.max_length, logging_steps=cfg.logging_steps,
        save_strategy="no", report_to=report_to(run), seed=cfg.seed, data_seed=cfg.seed, use_cpu=True, bf16=False,
        dataloader_num_workers=0, disable_tqdm=True, gradient_checkpointing=cfg.gradient_checkpointing,
    )
    trainer = _tokenized_dpo_trainer()(model=model, args=args, train_dataset=dataset, eval_dataset=eval_dataset,
                         processing_class=tokenizer, peft_config=peft_config)
    before = _adapter_params(trainer.model)
    held_out: dict[str, Any] = {}
    if eval_dataset is not None:
        held_out["pairs"] = len(eval_dataset)
        held_out["before"] = _eval_metrics(trainer.evaluate())
    train_out = trainer.train()
    if eval_dataset is not None:
        held_out["after"] = _eval_metrics(trainer.evaluate())
    after = _adapter_params(trainer.model)
    delta = float(sum((after[k] - before[k]).abs().sum().item() for k in before))
    changed = sum(not torch.equal(after[k], before[k]) for k in before)
    adapter_dir = out_dir / "adapter"
    trainer.model.save_pretrained(str(adapter_dir), selected_adapters=["default"])
    tokenizer.save_pretrained(str(adapter_dir))  # with its pad token: a resized vocabulary loads back (hf backend)
    logs = [e for e in trainer.state.log_history if "loss" in e]
    keys = ("loss", "rewards/accuracies", "rewards/margins", "rewards/chosen", "rewards/rejected")
    window = max(1, min(5, len(logs) // 4))  # one step's batch is small: also the mean of a few steps each end

    def mean_of(entries: list[dict]) -> dict:
        return {k: float(np.mean([e[k] for e in entries if k in e])) for k in keys if any(k in e for e in entries)}

    return {
        "adapter_dir": str(adapter_dir),
        "steps": int(trainer.state.global_step),
        "train_loss": float(train_out.training_loss),
        "first": {k: logs[0].get(k) for k in keys} if logs else {},
        "last": {k: logs[-1].get(k) for k in keys} if logs else {},
        "window": window,
        "first_window_mean": mean_of(logs[:window]) if logs else {},
        "last_window_mean": mean_of(logs[-window:]) if logs else {},
        "lora_tensors": len(before),
        "lora_tensors_changed": int(changed),
        "lora_abs_delta": delta,
        "prompts_truncated": int(sum(1 for d in dataset["dropped_messages"] if d)),
        **({"held_out_pairs": held_out} if held_out else {}),
    }


def _eval_metrics(metrics: Mapping[str, float]) -> dict[str, float]:
    keys = ("eval_loss", "eval_rewards/accuracies", "eval_rewards/margins")
    return {k.removeprefix("eval_"): float(metrics[k]) for k in keys if k in metrics}


def _adapter_params(model: Any) -> dict[str, Any]:
    """The trainable adapter's LoRA tensors (the ``default`` adapter; TRL's frozen ``ref`` copy excluded)."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n and ".default." in n}


# ---------------------------------------------------------------------------------------------- recipe
def run(cfg: Config) -> dict:
    """Build the pairs, train with DPO, save the adapter, card and results; returns the results."""
    check_start(cfg)  # before torch is imported: a missing start is said at once, without asking the hub
    import torch

    torch.set_num_threads(cfg.threads)
    out_dir = cfg.output_dir(RECIPE)
    base, adapter, start = resolve_start(cfg, out_dir)
    wb = start_wandb(RECIPE, cfg, out_dir)
    results: dict[str, Any] = {"recipe": RECIPE, "base_model": base, "start_adapter": adapter, "start": start}
    # the model is checked before any pair is built: a tokenizer or template that cannot train fails now
    loaded = load_chat_model(base, cfg.pad_token)
    try:
        policy = None
        if cfg.pairs.uses_policy():
            from tutorzoo.agents.backends.hf import HFBackend

            policy = HFBackend(base, adapter=adapter, batch_size=cfg.pairs.generation_batch_size,
                               threads=cfg.threads)
            check_policy(policy)
        build = build_pairs(cfg.pairs, train_specs(cfg.pairs, cfg.seed), cfg.seed, policy=policy, log=print)
        dataset = build.dataset()
        dataset.save_to_disk(str(out_dir / "pairs"))
        summary = build.summary()
        (out_dir / "pairs_summary.json").write_text(
            json.dumps({**summary, "failure_records": build.failures}, indent=2, sort_keys=True) + "\n",
            encoding="utf-8")
        results["pairs"] = summary
        sampled = build.states * cfg.pairs.candidates.get(POLICY, 0)
        policy_failures = [f for f in build.failures if f.get("kind") == "candidate_source"
                           and f.get("source") == POLICY]
        if sampled and len(policy_failures) >= sampled:  # the model produced nothing: say so, never train silently
            raise ConfigError(f"every one of the {sampled} policy candidates failed (first: "
                              f"{policy_failures[0].get('error')}); see {out_dir / 'pairs_summary.json'}")
        if wb is not None:
            wb.summary.update({f"pairs/{k}": v for k, v in summary.items() if isinstance(v, (int, float))})
        if len(dataset) == 0:
            raise ConfigError(f"no preference pairs were built ({summary['skipped_states']} states skipped, "
                              f"{summary['failures']} failures; see {out_dir / 'pairs_summary.json'}); "
                              "use more episodes, more candidate sources or a lower pairs.min_margin")
        eval_pairs = None
        if cfg.heldout_pairs:
            from tutorzoo.eval.suite import load_suite

            held = load_suite(cfg.pairs.suite).specs("held_out")[: cfg.heldout_pairs]
            eval_build = build_pairs(cfg.pairs, held, cfg.seed, policy=policy, log=print)
            eval_pairs = eval_build.dataset()
            eval_pairs.save_to_disk(str(out_dir / "pairs_held_out"))
            results["pairs_held_out"] = eval_build.summary()
        del policy
        results["train"] = train_dpo(cfg, dataset, base, adapter, out_dir, wb, eval_dataset=eval_pairs,
                                     loaded=loaded)
        del loaded
        if cfg.eval_episodes:
            results["eval"] = evaluate(cfg, base, {"dpo": results["train"]["adapter_dir"], "start": adapter},
                                       out_dir / "eval")
        write_results(out_dir, results)
        write_model_card(Path(results["train"]["adapter_dir"]), RECIPE, cfg, base, results)
    finally:
        finish_wandb(wb, _flat(results))
    return results


def evaluate(cfg: Config, base: str, adapters: Mapping[str, str | None], out_dir: Path) -> dict:
    """Each adapter (None: the bare base model) as a tutor on the same ``eval_episodes`` held-out specs, as
    ``tutorzoo eval`` plays them (:func:`tutorzoo.train.common.evaluate_tutor`; episodes and report in
    ``out_dir/<key>``)."""
    from tutorzoo.train.common import evaluate_tutor

    out = {}
    for key, adapter in adapters.items():
        kwargs: dict[str, Any] = {"threads": cfg.threads, "max_new_tokens": cfg.eval_max_new_tokens,
                                  "batch_size": cfg.eval_batch_size}
        if adapter is not None:
            kwargs["adapter"] = adapter
        out[key] = evaluate_tutor(f"hf:{base}", out_dir / key, suite=cfg.eval_suite, split="held_out",
                                  limit=cfg.eval_episodes, batch_size=cfg.eval_batch_size, tutor_kwargs=kwargs,
                                  name=f"{RECIPE}:{key}")
    return out


def _flat(results: Mapping, prefix: str = "") -> dict:
    """Numbers of a nested results dict as ``a/b`` keys (the W&B summary)."""
    out: dict[str, Any] = {}
    for k, v in results.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flat(v, key + "/"))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = v
    return out
