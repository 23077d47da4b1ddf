"""Tiny random models of real chat-model families: each family's architecture, chat template and special tokens.

A new user points ``base_model`` at Qwen, Llama, Gemma, Phi or SmolLM; these offline stand-ins (a few hundred
thousand parameters, nothing downloaded) reproduce what matters to TutorZoo's code: the family's own chat template
as shipped (TRL keeps copies of the hub's templates in ``trl/chat_templates``; SmolLM2's is in
``train/templates/``), its BOS / EOS / pad tokens as shipped (Llama-3 has no pad; Phi-3 and SmolLM2 pad with EOS),
whether the tokenizer adds BOS itself, the end-of-turn tokens of its ``generation_config``, and the family's
``transformers`` config class. The tokenizer is a byte-level BPE trained on TutorZoo's own text.

Families (:data:`FAMILIES`): ``qwen2_5``, ``qwen3``, ``llama3_2``, ``gemma2``, ``gemma3``, ``phi3``, ``phi3_5``,
``smollm2``.

Example::

    from tutorzoo.train.tiny_families import build_family_model
    path = build_family_model("gemma2", "models/tiny-gemma2")   # or: python -m tutorzoo.train.tiny_families --family
    gemma2
    backend = make_backend(f"hf:{path}")
"""

from __future__ import annotations

import argparse
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).resolve().parent / "templates"
DIMS = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "max_position_embeddings": 4096}


@dataclass(frozen=True)
class Family:
    """What a family ships: template, special tokens, BOS behaviour, stop tokens, model config."""

    template: str                      # a trl/chat_templates file name, or a file in train/templates/
    config: str                        # the transformers config class
    bos: str | None
    eos: str
    pad: str | None
    specials: tuple[str, ...]          # further special (added) tokens: role markers, reserved tokens
    adds_bos: bool = False             # the tokenizer itself puts BOS in front of every encoding
    stop: tuple[str, ...] = ()         # generation_config.eos_token_id (besides EOS)
    unk: str | None = None
    plain_added: tuple[str, ...] = ()  # added tokens that are not special (Qwen3's <think>)
    spare_rows: int = 0                # embedding rows beyond the tokenizer (Qwen, Phi pad their vocab)
    config_kwargs: dict[str, Any] = field(default_factory=dict)


_QWEN = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
_GEMMA = ("<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "<unused0>", "<unused1>")
_PHI = ("<unk>", "<s>", "</s>", "<|endoftext|>", "<|assistant|>", "<|placeholder1|>", "<|placeholder2|>",
        "<|system|>", "<|end|>", "<|user|>")
_LLAMA3 = ("<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
           "<|reserved_special_token_1|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>")

FAMILIES: dict[str, Family] = {
    "qwen2_5": Family("qwen2_5.jinja", "Qwen2Config", None, "<|im_end|>", "<|endoftext|>", _QWEN,
                      stop=("<|endoftext|>",), spare_rows=16),
    "qwen3": Family("qwen3.jinja", "Qwen3Config", None, "<|im_end|>", "<|endoftext|>", _QWEN,
                    stop=("<|endoftext|>",), plain_added=("<think>", "</think>"), spare_rows=16,
                    config_kwargs={"head_dim": 16}),
    "llama3_2": Family("llama3_2.jinja", "LlamaConfig", "<|begin_of_text|>", "<|eot_id|>", None, _LLAMA3,
                       adds_bos=True, stop=("<|end_of_text|>", "<|eom_id|>")),
    "gemma2": Family("gemma.jinja", "Gemma2Config", "<bos>", "<eos>", "<pad>", _GEMMA, adds_bos=True,
                     stop=("<end_of_turn>",), unk="<unk>", config_kwargs={"head_dim": 16}),
    "gemma3": Family("gemma3.jinja", "Gemma3TextConfig", "<bos>", "<eos>", "<pad>", _GEMMA, adds_bos=True,
                     stop=("<end_of_turn>",), unk="<unk>", config_kwargs={"head_dim": 16}),
    "phi3": Family("phi3.jinja", "Phi3Config", "<s>", "<|endoftext|>", "<|endoftext|>", _PHI, adds_bos=True,
                   stop=("<|assistant|>", "<|end|>"), unk="<unk>", spare_rows=8),
    "phi3_5": Family("phi3_5.jinja", "Phi3Config", "<s>", "<|endoftext|>", "<|endoftext|>", _PHI, adds_bos=True,
                     stop=("<|assistant|>", "<|end|>"), unk="<unk>", spare_rows=8),
    "smollm2": Family("smollm2.jinja", "LlamaConfig", "<|im_start|>", "<|im_end|>", "<|im_end|>", _QWEN,
                      unk="<|endoftext|>"),
}


def family_template(family: Family) -> str:
    """The family's chat template text as shipped."""
    local = TEMPLATES / family.template
    if local.is_file():
        return local.read_text(encoding="utf-8").rstrip("\n")
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / family.template).read_text(encoding="utf-8")


@functools.cache
def _texts(episodes: int) -> tuple[str, ...]:
    from tutorzoo.train.tiny_model import corpus_texts

    return tuple(corpus_texts(episodes))


def build_family_tokenizer(name: str, vocab_size: int = 800, corpus_episodes: int = 3) -> Any:
    """The family's tokenizer: byte-level BPE on TutorZoo text, the family's special tokens and template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    fam = FAMILIES[name]
    specials = list(dict.fromkeys(fam.specials))
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(list(_texts(corpus_episodes)), trainer=trainer)
    if fam.plain_added:
        from tokenizers import AddedToken

        tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in fam.plain_added])
    level = processors.ByteLevel(trim_offsets=False)
    if fam.adds_bos:
        bos_id = tok.token_to_id(fam.bos)
        bos = processors.TemplateProcessing(single=f"{fam.bos} $A", pair=f"{fam.bos} $A {fam.bos} $B",
                                            special_tokens=[(fam.bos, bos_id)])
        tok.post_processor = processors.Sequence([level, bos])
    else:
        tok.post_processor = level
    kwargs = {k: v for k, v in (("bos_token", fam.bos), ("eos_token", fam.eos), ("pad_token", fam.pad),
                                 ("unk_token", fam.unk)) if v is not None}
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=DIMS["max_position_embeddings"],
                                   **kwargs)
    fast.chat_template = family_template(fam)
    return fast


def build_family_model(name: str, out_dir: str | Path, seed: int = 0, vocab_size: int = 800,
                       corpus_episodes: int = 3) -> Path:
    """Save a tiny random model of family ``name`` (tokenizer, config, weights, generation config) to ``out_dir``."""
    import transformers
    from transformers import AutoModelForCausalLM, GenerationConfig

    from tutorzoo.train.tiny_model import save_seeded_model

    if name not in FAMILIES:
        raise ValueError(f"unknown family {name!r}; known: {sorted(FAMILIES)}")
    fam = FAMILIES[name]
    tokenizer = build_family_tokenizer(name, vocab_size, corpus_episodes)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in (fam.bos, fam.eos, fam.pad) if t}
    config = getattr(transformers, fam.config)(
        vocab_size=len(tokenizer) + fam.spare_rows, **DIMS, **fam.config_kwargs, tie_word_embeddings=False,
        bos_token_id=ids.get(fam.bos), eos_token_id=ids[fam.eos], pad_token_id=ids.get(fam.pad))
    stop = [ids[fam.eos], *(tokenizer.convert_tokens_to_ids(t) for t in fam.stop)]
    generation = GenerationConfig(bos_token_id=ids.get(fam.bos), eos_token_id=stop, pad_token_id=ids.get(fam.pad))
    return save_seeded_model(lambda: AutoModelForCausalLM.from_config(config), seed, generation, tokenizer, out_dir)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Build a tiny random model of a chat-model family (offline).")
    parser.add_argument("--family", required=True, choices=sorted(FAMILIES))
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{args.family} written to {build_family_model(args.family, args.out, seed=args.seed)}")


if __name__ == "__main__":
    main()
