"""KMP-LM-style supervised fine-tuning: a LoRA adapter trained on the tutor turns of the corpus.

``run(config)`` loads the base causal LM (building the offline ``small`` model of :mod:`tutorzoo.train.tiny_model`
first when ``build_base`` is set and the folder is missing), loads the corpus of :mod:`tutorzoo.train.corpus`
(building it from ``corpus_config`` when missing), and trains with TRL's ``SFTTrainer`` and a PEFT LoRA
adapter on the ``messages`` column, tokenised here through :class:`tutorzoo.agents.backends.chat_render.ChatRenderer` —
the rendering inference uses (roles merged, system folded where the template refuses it, the family's BOS) —
with a per-token ``assistant_masks`` column: the loss covers exactly the tutor's tokens (each assistant message's
content and its end-of-turn token), never the system prompt, the pre-test summary or the student's turns. The
mask comes from character offsets of the rendered conversation, so any chat-template family works, with or
without ``{% generation %}`` markers (Llama-3.x, SmolLM2, Gemma, Phi-3, Qwen3's think blocks stay out of the
loss). A missing pad token, or one equal to EOS, is replaced as ``pad_token`` says
(tutorzoo.train.common.fix_pad_token).

Then it saves ``<out_dir>/adapter`` (adapter, tokenizer, model card with the results), evaluates the adapted
tutor on the suite's held-out split (``eval``; the same specs and seeds as ``tutorzoo eval --split held_out``)
and, with ``eval.include_base``, the untrained base model too, and writes ``results.json``. Tracking: the
W&B run of :func:`tutorzoo.train.common.start_wandb` (offline unless configured), into which the trainer logs.

On a random-initialised base, ``modules_to_save: [embed_tokens, lm_head]`` trains full copies of the embedding
and output layers next to the LoRA matrices (saved in the adapter): a random base's token embeddings carry no
meaning to adapt around. For a pretrained model leave it empty.

Example::

    tutorzoo train sft --config configs/train/sft.yaml
    tutorzoo train sft --config configs/train/sft.yaml --set base_model=models/tiny --set max_steps=5 \\
        --set eval.enabled=false
    tutorzoo eval --suite default --split held_out --tutor hf:models/small \\
        --tutor-arg adapter=runs/train/sft__default__0/adapter --out runs/eval_sft
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tutorzoo.envs.errors import ConfigError
from tutorzoo.train.common import (
    PAD_FIELD_DOC,
    LoraSettings,
    RecipeConfig,
    chat_renderer,
    evaluate_tutor,
    finish_wandb,
    load_chat_model,
    load_recipe_config,
    report_to,
    start_wandb,
    write_model_card,
    write_results,
)

RECIPE = "sft"


class BaseModelBuild(BaseModel):
    """How to build the offline base model when ``base_model`` does not exist yet (train/tiny_model.py)."""

    model_config = ConfigDict(extra="forbid")

    size: str = "small"
    vocab_size: int = Field(default=4000, ge=300)
    corpus_episodes: int = Field(default=120, ge=1)
    seed: int = 0


class EvalSettings(BaseModel):
    """The held-out evaluation after training (``tutorzoo eval`` semantics)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    suite: str = "default"
    split: str = "held_out"
    limit: int | None = Field(default=None, ge=1, description="Only the first N specs (CPU budgets).")
    batch_size: int = Field(default=16, ge=1)
    max_new_tokens: int = Field(default=150, ge=1)
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    threads: int | None = Field(default=1, ge=1)
    include_base: bool = Field(default=False, description="Also evaluate the untrained base model.")


class SFTRecipeConfig(RecipeConfig):
    """SFT with LoRA on the corpus' tutor turns."""

    base_model: str = Field(description="Local model folder or hub id with a chat template.")
    build_base: BaseModelBuild | None = Field(default=None, description="Build base_model here when missing.")
    corpus: str = Field(description="The corpus: a tutorzoo.train.corpus out_dir, its dataset folder or corpus.jsonl.")
    corpus_config: str | None = Field(default=None, description="Build the corpus from this config when missing.")
    lora: LoraSettings = Field(default_factory=LoraSettings)
    init_adapter: str | None = Field(
        default=None, description="Continue training this LoRA adapter of base_model (e.g. an earlier SFT run's "
        "adapter/, its modules_to_save included) instead of a new one (`lora`, `modules_to_save` unused).")
    modules_to_save: list[str] = Field(default_factory=list, description="Modules trained in full next to LoRA.")
    learning_rate: float = Field(default=2e-3, gt=0)
    num_train_epochs: float = Field(default=1.0, gt=0)
    max_steps: int = Field(default=-1, description="> 0 overrides num_train_epochs.")
    per_device_train_batch_size: int = Field(default=4, ge=1)
    gradient_accumulation_steps: int = Field(default=1, ge=1)
    max_length: int | None = Field(default=2048, ge=16, description="Tokens per conversation (rest cut).")
    pad_token: str = Field(default="auto", description=PAD_FIELD_DOC)
    lr_scheduler_type: str = "cosine"
    warmup_steps: float = Field(default=0.03, ge=0, description="Steps, or a fraction of them when < 1.")
    weight_decay: float = Field(default=0.0, ge=0)
    logging_steps: int = Field(default=10, ge=1)
    threads: int | None = Field(default=1, ge=1, description="torch CPU threads (None: torch's default).")
    gradient_checkpointing: bool = Field(
        default=False, description="Recompute activations in the backward pass (TRL's SFTConfig defaults it on): "
        "saves memory on a large model, costs about a third more compute on a small one.")
    eval: EvalSettings = Field(default_factory=EvalSettings)


Config = SFTRecipeConfig


def ensure_base(cfg: SFTRecipeConfig) -> str:
    """``cfg.base_model``, built first from ``cfg.build_base`` when it is a missing local folder."""
    path = Path(cfg.base_model)
    if path.exists() or cfg.build_base is None:
        return cfg.base_model
    from tutorzoo.train.tiny_model import build_tiny_model

    b = cfg.build_base
    build_tiny_model(path, seed=b.seed, vocab_size=b.vocab_size, corpus_episodes=b.corpus_episodes, size=b.size)
    return str(path)


def ensure_corpus(cfg: SFTRecipeConfig) -> Any:
    """The corpus dataset; built with ``cfg.corpus_config`` into ``cfg.corpus`` when it is missing."""
    from tutorzoo.train.corpus import CorpusConfig, load_corpus
    from tutorzoo.train.corpus import run as build_corpus

    path = Path(cfg.corpus)
    if not path.exists():
        if cfg.corpus_config is None:
            raise ConfigError(f"no corpus at {cfg.corpus!r}: build it with `tutorzoo train corpus --set "
                              f"out_dir={cfg.corpus}` or set corpus_config to build it here")
        build_corpus(load_recipe_config(CorpusConfig, cfg.corpus_config,
                                        [f"out_dir={cfg.corpus}", f"wandb.mode={cfg.wandb.mode or 'disabled'}"]))
    return load_corpus(path)


def training_dataset(corpus: Any) -> Any:
    """The conversational dataset the trainer sees: the ``messages`` column only."""
    if "messages" not in corpus.column_names:
        raise ConfigError(f"the corpus has no 'messages' column (columns: {corpus.column_names}); build it with "
                          "train/corpus.py")
    return corpus.select_columns(["messages"])


def tokenize_conversations(dataset: Any, renderer: Any, max_length: int | None = None) -> Any:
    """``input_ids`` and ``assistant_masks`` (1 on the tutor's tokens) of every conversation of ``dataset``, rendered
    by ``renderer`` and cut to ``max_length``; a conversation without a tutor token is a ConfigError.

    Example::

        rows = tokenize_conversations(training_dataset(corpus), chat_renderer(tokenizer), max_length=2048)
    """
    from tutorzoo.agents.backends.chat_render import RenderError

    def one(example: dict, index: int) -> dict:
        try:
            ids, mask = renderer.assistant_mask(example["messages"])
        except RenderError as exc:
            raise ConfigError(f"corpus conversation {index}: {exc}") from None
        if max_length is not None:
            ids, mask = ids[:max_length], mask[:max_length]
        if 1 not in mask:
            raise ConfigError(f"corpus conversation {index} has no tutor token within max_length={max_length}; "
                              "raise max_length")
        return {"input_ids": ids, "assistant_masks": mask}

    return dataset.map(one, with_indices=True, remove_columns=dataset.column_names)


def make_trainer(cfg: SFTRecipeConfig, model: Any, tokenizer: Any, dataset: Any, out_dir: Path,
                 run: Any | None = None) -> Any:
    """TRL's ``SFTTrainer`` with the LoRA adapter and tutor-turn-only loss (CPU, fp32) on ``dataset`` (a
    ``messages`` column: tokenised by :func:`tokenize_conversations`)."""
    from trl import SFTConfig, SFTTrainer

    peft_config = None
    if cfg.init_adapter is None:  # else `model` already carries the trainable adapter (load_init_adapter)
        peft_config = cfg.lora.peft_config()
        if cfg.modules_to_save:
            peft_config.modules_to_save = list(cfg.modules_to_save)
    args = SFTConfig(
        output_dir=str(out_dir / "trainer"),
        assistant_only_loss=False,  # the dataset arrives tokenised with its own assistant_masks (any template)
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=cfg.gradient_checkpointing,
        learning_rate=cfg.learning_rate,
        num_train_epochs=cfg.num_train_epochs,
        max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.per_device_train_batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps,
        max_length=cfg.max_length,
        lr_scheduler_type=cfg.lr_scheduler_type,
        warmup_steps=cfg.warmup_steps,
        weight_decay=cfg.weight_decay,
        logging_steps=cfg.logging_steps,
        save_strategy="no",
        report_to=report_to(run),
        run_name=run.name if run is not None else None,
        seed=cfg.seed,
        data_seed=cfg.seed,
        dataloader_num_workers=0,
        packing=False,
    )
    if "input_ids" not in dataset.column_names:
        dataset = tokenize_conversations(dataset, chat_renderer(tokenizer, model), cfg.max_length)
    return SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer,
                      peft_config=peft_config)


def adapter_parameters(model: Any) -> dict[str, Any]:
    """Copies of the trainable parameters (the LoRA matrices and any modules_to_save), by name."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def load_init_adapter(model: Any, adapter: str) -> Any:
    """``model`` with the LoRA adapter folder ``adapter`` loaded trainable (a missing folder is a ConfigError)."""
    from peft import PeftModel

    if not Path(adapter, "adapter_config.json").is_file():
        raise ConfigError(f"init_adapter {adapter!r} is not a LoRA adapter folder (no adapter_config.json); "
                          "point it at an SFT run's adapter/ or set init_adapter: null")
    return PeftModel.from_pretrained(model, adapter, is_trainable=True)


def run(cfg: SFTRecipeConfig) -> dict:
    """Train, save the adapter and its model card, evaluate on the held-out split; returns the results."""
    import torch

    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    out_dir = cfg.output_dir(RECIPE)
    base = ensure_base(cfg)
    corpus = ensure_corpus(cfg)
    dataset = training_dataset(corpus)
    model, tokenizer = load_chat_model(base, cfg.pad_token)
    if cfg.init_adapter is not None:
        model = load_init_adapter(model, cfg.init_adapter)
    wandb_run = start_wandb(RECIPE, cfg, out_dir)
    try:
        trainer = make_trainer(cfg, model, tokenizer, dataset, out_dir, wandb_run)
        before = adapter_parameters(trainer.model)
        start = time.perf_counter()
        output = trainer.train()
        train_seconds = time.perf_counter() - start
        after = adapter_parameters(trainer.model)
        changed = sum(not torch.equal(before[n], after[n]) for n in before)
        adapter_dir = out_dir / "adapter"
        trainer.model.save_pretrained(str(adapter_dir))
        tokenizer.save_pretrained(str(adapter_dir))
        losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
        results: dict[str, Any] = {
            "recipe": RECIPE,
            "base_model": base,
            "adapter": str(adapter_dir),
            "corpus": cfg.corpus,
            "init_adapter": cfg.init_adapter,
            "corpus_conversations": len(dataset),
            "train_steps": trainer.state.global_step,
            "train_seconds": round(train_seconds, 1),
            "train_loss": output.training_loss,
            "first_logged_loss": losses[0] if losses else None,
            "last_logged_loss": losses[-1] if losses else None,
            "trainable_parameters": sum(v.numel() for v in after.values()),
            "trainable_tensors_changed": f"{changed}/{len(before)}",
        }
        del trainer
        if cfg.eval.enabled:
            results["eval"] = evaluate(cfg, base, adapter_dir, out_dir)
        write_model_card(adapter_dir, RECIPE, cfg, base, results)
        write_results(out_dir, results)
    except BaseException:
        finish_wandb(wandb_run)
        raise
    summary = {k: v for k, v in results.items() if isinstance(v, (int, float))}
    for who, ev in (results.get("eval") or {}).items():
        summary.update({f"eval/{who}/{k}": v for k, v in ev.items() if isinstance(v, (int, float))})
    finish_wandb(wandb_run, summary)
    return results


def evaluate(cfg: SFTRecipeConfig, base: str, adapter_dir: Path, out_dir: Path) -> dict:
    """The adapted tutor (and with ``include_base`` the untrained base) on the held-out split."""
    e = cfg.eval
    kwargs = {"max_new_tokens": e.max_new_tokens, "temperature": e.temperature, "threads": e.threads,
              "batch_size": e.batch_size}
    runs = {"sft": {"adapter": str(adapter_dir)}}
    if e.include_base:
        runs["base"] = {}
    out = {}
    for who, extra in runs.items():
        out[who] = evaluate_tutor(f"hf:{base}", out_dir / f"eval_{who}", suite=e.suite, split=e.split,
                                  limit=e.limit, batch_size=e.batch_size, tutor_kwargs={**kwargs, **extra},
                                  name=f"{who}:{Path(base).name}")
    return out
