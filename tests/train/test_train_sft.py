"""SFT with LoRA on tutor turns (train/sft.py): the config, the assistant-only label mask, a short real run."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

from tutorzoo.envs.errors import ConfigError  # noqa: E402
from tutorzoo.train.common import CONFIG_DIR, load_recipe_config  # noqa: E402
from tutorzoo.train.corpus import CorpusConfig, build_dataset  # noqa: E402
from tutorzoo.train.sft import (  # noqa: E402
    SFTRecipeConfig,
    ensure_corpus,
    load_init_adapter,
    make_trainer,
    training_dataset,
)


def test_shipped_config_loads_and_bad_keys_are_named() -> None:
    cfg = load_recipe_config(SFTRecipeConfig, CONFIG_DIR / "sft.yaml")
    assert cfg.lora.r >= 1 and cfg.eval.split == "held_out" and cfg.corpus_config
    assert cfg.build_base is not None and cfg.build_base.size == "small"
    with pytest.raises(ConfigError, match="learning_rat"):
        load_recipe_config(SFTRecipeConfig, CONFIG_DIR / "sft.yaml", ["learning_rat=1"])
    with pytest.raises(ConfigError, match="learning_rate"):
        load_recipe_config(SFTRecipeConfig, CONFIG_DIR / "sft.yaml", ["learning_rate=-1"])


def test_a_missing_corpus_names_the_command(tmp_path: Path) -> None:
    cfg = SFTRecipeConfig(base_model="x", corpus=str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match="tutorzoo train corpus"):
        ensure_corpus(cfg)


def test_init_adapter_continues_a_saved_adapter_and_a_missing_one_is_named(tiny_model_dir: Path,
                                                                          tmp_path: Path) -> None:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with pytest.raises(ConfigError, match="init_adapter: null"):
        load_init_adapter(AutoModelForCausalLM.from_pretrained(tiny_model_dir), str(tmp_path / "nope"))
    torch.manual_seed(0)
    first = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny_model_dir),
                           LoraConfig(r=4, target_modules="all-linear", modules_to_save=["lm_head"],
                                      init_lora_weights=False))
    first.save_pretrained(str(tmp_path / "adapter"))
    saved = {n: p.detach().clone() for n, p in first.named_parameters() if p.requires_grad}
    corpus, _ = build_dataset(CorpusConfig(limit=1, wandb={"mode": "disabled"}))
    cfg = SFTRecipeConfig(base_model=str(tiny_model_dir), corpus="unused", init_adapter=str(tmp_path / "adapter"),
                          lora={"r": 16}, max_steps=1, wandb={"mode": "disabled"})
    model = load_init_adapter(AutoModelForCausalLM.from_pretrained(tiny_model_dir), cfg.init_adapter)
    trainer = make_trainer(cfg, model, AutoTokenizer.from_pretrained(tiny_model_dir), training_dataset(corpus),
                           tmp_path, None)
    trainable = {n: p for n, p in trainer.model.named_parameters() if p.requires_grad}
    # the very adapter that was saved, trainable (its LoRA and its full lm_head copy), not a new r=16 LoRA
    assert trainable.keys() == saved.keys()
    assert all(torch.equal(trainable[n].detach(), saved[n]) for n in saved)


def _expected_assistant_mask(tokenizer, messages: list[dict]) -> tuple[list[int], list[bool]]:
    """Token ids of the rendered conversation and, per token, whether it lies inside a tutor turn's content+EOS,
    found from the rendered text alone (character offsets), independently of the template's markers."""
    from tutorzoo.agents.backends.chat_render import merge_roles

    messages = merge_roles(messages)  # every model-facing rendering merges same-role runs (chat_render)
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    spans = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        start = len(tokenizer.apply_chat_template(messages[:i], tokenize=False, add_generation_prompt=True))
        end = start + len(m["content"]) + len(tokenizer.eos_token)
        assert text[start:end] == m["content"] + tokenizer.eos_token
        spans.append((start, end))
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    inside = [any(s <= a and b <= e for s, e in spans) for a, b in enc["offset_mapping"]]
    return list(enc["input_ids"]), inside


def test_labels_mask_exactly_the_non_assistant_tokens(tiny_model_dir: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    corpus, _ = build_dataset(CorpusConfig(limit=2, wandb={"mode": "disabled"}))
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    cfg = SFTRecipeConfig(base_model=str(tiny_model_dir), corpus="unused", max_length=4096, max_steps=1,
                          wandb={"mode": "disabled"})
    trainer = make_trainer(cfg, model, tokenizer, training_dataset(corpus), tmp_path, None)
    assert len(trainer.train_dataset) == len(corpus)
    for row, example in zip(corpus, trainer.train_dataset, strict=True):
        ids, inside = _expected_assistant_mask(tokenizer, row["messages"])
        assert example["input_ids"] == ids  # the trainer tokenises what inference renders (no extra BOS)
        labels = trainer.data_collator([example])["labels"][0].tolist()
        assert len(labels) == len(ids)
        assert [lab != -100 for lab in labels] == inside
        assert [lab for lab in labels if lab != -100] == [t for t, keep in zip(ids, inside, strict=True) if keep]
        # what is learnt is exactly the tutor's words, each turn closed by EOS
        trained = tokenizer.decode([t for t, keep in zip(ids, inside, strict=True) if keep])
        turns = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
        assert trained == "".join(t + tokenizer.eos_token for t in turns)


@pytest.mark.slow
def test_sft_smoke_run_changes_the_adapter_and_logs_offline(tiny_model_dir: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from safetensors.torch import load_file

    from tutorzoo.agents.backends.hf import HFBackend
    from tutorzoo.train.cli import main

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    out = tmp_path / "sft"
    corpus = tmp_path / "corpus"
    rc = main(["sft", "--config", str(CONFIG_DIR / "sft.yaml"), "--set", f"base_model={tiny_model_dir}",
               "--set", "build_base=null", "--set", f"corpus={corpus}", "--set", "corpus_config=" +
               str(CONFIG_DIR / "corpus.yaml"), "--set", f"out_dir={out}", "--set", "max_steps=3",
               "--set", "per_device_train_batch_size=2", "--set", "logging_steps=1", "--set", "lora.r=4",
               "--set", "modules_to_save=[]", "--set", "eval.limit=2", "--set", "eval.max_new_tokens=12",
               "--set", "eval.include_base=false"])
    assert rc == 0
    assert (corpus / "dataset" / "dataset_info.json").is_file()  # built from corpus_config on the way
    results = json.loads((out / "results.json").read_text())
    assert results["train_steps"] == 3
    n_changed, n_total = map(int, results["trainable_tensors_changed"].split("/"))
    assert n_total > 0 and n_changed == n_total
    weights = load_file(str(out / "adapter" / "adapter_model.safetensors"))
    lora_b = [v for k, v in weights.items() if "lora_B" in k]
    assert lora_b and all(float(v.abs().sum()) > 0 for v in lora_b)  # LoRA B starts at zero: it was trained
    card = (out / "adapter" / "README.md").read_text()
    assert "base_model:" in card and "learning_gain" in card
    ev = results["eval"]["sft"]
    assert ev["n"] == 2 and ev["split"] == "held_out" and (out / "eval_sft" / "episodes.jsonl").is_file()
    assert glob.glob(str(tmp_path / "wandb" / "offline-run-*" / "run-*.wandb"))
    backend = HFBackend(str(tiny_model_dir), adapter=str(out / "adapter"), threads=1)
    assert backend.name.endswith(str(out / "adapter"))


def test_load_chat_model_checks_what_every_recipe_needs(tiny_model_dir: Path, tmp_path: Path) -> None:
    import shutil

    from tutorzoo.train.common import load_chat_model

    model, tokenizer = load_chat_model(str(tiny_model_dir))
    assert tokenizer.pad_token_id != tokenizer.eos_token_id and tokenizer.chat_template
    assert next(model.parameters()).dtype.is_floating_point
    with pytest.raises(ConfigError, match="cannot load model"):
        load_chat_model(str(tmp_path / "missing"))
    bad = tmp_path / "pad_is_eos"
    shutil.copytree(tiny_model_dir, bad)
    config = json.loads((bad / "tokenizer_config.json").read_text())
    config["pad_token"] = tokenizer.eos_token
    (bad / "tokenizer_config.json").write_text(json.dumps(config))
    # a pad equal to EOS is replaced automatically (here: a new token, the embeddings resized), never an error
    model, fixed = load_chat_model(str(bad))
    assert fixed.pad_token_id not in (fixed.eos_token_id, None)
    assert model.get_input_embeddings().num_embeddings >= len(fixed)
    assert fixed.init_kwargs["tutorzoo_pad_fix"].startswith("added")
