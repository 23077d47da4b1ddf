"""The tiny offline causal LM: a tokenizer trained on TutorZoo's own text and a randomly initialised Llama.

Nothing is downloaded: the byte-level BPE tokenizer is trained with ``tokenizers`` on text the environment
generates (the Socratic tutor talking with simulated students over math, stem and mcq episodes: every
utterance, every test item with its options, every task statement and solution, the tutor's system
prompt), and the model is a 2-layer ``LlamaConfig`` (about 200k parameters) initialised from ``seed``. It
generates nonsense, quickly — which is what tests, smoke runs and speed benchmarks of the HF backend need.
The directory loads like any Hugging Face model: ``AutoTokenizer`` / ``AutoModelForCausalLM.from_pretrained``.

Example::

    from tutorzoo.train.tiny_model import build_tiny_model
    path = build_tiny_model("models/tiny", seed=0)        # or: python -m tutorzoo.train.tiny_model --out models/tiny
    backend = make_backend(f"hf:{path}")
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

BOS, EOS, PAD = "<s>", "</s>", "<pad>"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>")
# A role header, the content, then EOS: generation stops at EOS, so a reply is one assistant message. An assistant
# message's content and its EOS sit inside ``{% generation %}`` markers (they render nothing), so
# ``return_assistant_tokens_mask=True`` marks exactly the tokens a tutor produces: TRL's ``assistant_only_loss``.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{% if message['role'] == 'assistant' %}{% generation %}{{ message['content'] }}{{ eos_token }}{% endgeneration %}"
    "{% else %}{{ message['content'] }}{{ eos_token }}{% endif %}{{ '\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
CORPUS_TASK_SETS = ("math", "stem", "mcq")
CORPUS_PERSONAS = (
    "all_round_partly_wrong", "weak_knowledge_asks_for_hint", "low_motivation_correct_and_extends",
    "anxious", "chatty", "confused_problem_type",
)
CONTEXT_LENGTH = 1024
# Model sizes: ``tiny`` (the default, about 200k parameters: tests, smoke runs, speed benchmarks) and ``small``
# (about 2M parameters and a 2048-token context: big enough to learn the socratic tutor's style by SFT on a
# CPU in minutes, see train/sft.py).
SIZES: dict[str, dict[str, int]] = {
    "tiny": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
             "context_length": CONTEXT_LENGTH},
    "small": {"hidden_size": 128, "intermediate_size": 384, "num_hidden_layers": 4, "num_attention_heads": 4,
              "context_length": 2048},
}


def corpus_texts(n_episodes: int = 36, seed: int = 0) -> list[str]:
    """Text of ``n_episodes`` Socratic-tutor episodes (cycling task sets and personas), in a fixed order.

    Example::

        texts = corpus_texts(6)
        assert any("The answer is" in t for t in texts)
    """
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor import make_tutor
    from tutorzoo.envs import tutoring_v0
    from tutorzoo.envs.config import EpisodeSpec
    from tutorzoo.eval.rollout import run_episode

    texts: list[str] = []
    for i in range(n_episodes):
        spec = EpisodeSpec(task_set=CORPUS_TASK_SETS[i % len(CORPUS_TASK_SETS)],
                           persona=CORPUS_PERSONAS[i % len(CORPUS_PERSONAS)], seed=seed * 100_003 + i,
                           protocol={"max_turns": 6})
        # run_episode records a tutor failure instead of raising: the text said up to it is still corpus
        record = run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona))
        env = tutoring_v0.env(**spec.env_kwargs())
        env.reset(seed=spec.seed)  # the same seed builds the same task the episode was about
        task = env.unwrapped.task
        if i == 0:
            texts.append(env.unwrapped.infos["tutor"]["messages"][0]["content"])  # the tutor's system prompt
        texts += [task.statement, task.summary, *task.solution]
        texts += [item.render() for item in task.pretest + task.posttest]
        texts += [turn["utterance"] for turn in record["transcript"]]
        texts += [r["response"] for r in record["pretest"] + record["posttest"]]
        env.close()
    return [t for t in texts if t]


def train_tokenizer(texts: list[str], vocab_size: int = 2000,
                    context_length: int = CONTEXT_LENGTH) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer over ``texts`` with BOS/EOS/PAD (PAD distinct from EOS) and a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    special = [PAD, BOS, EOS, *ROLE_TOKENS]
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte encodable: no unknown tokens
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=BOS, eos_token=EOS, pad_token=PAD,
        additional_special_tokens=list(ROLE_TOKENS), model_max_length=context_length, padding_side="left",
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(out_dir: str | Path, seed: int = 0, vocab_size: int = 2000, corpus_episodes: int = 36,
                     size: str = "tiny") -> Path:
    """Train the tokenizer, initialise the model from ``seed``, save both to ``out_dir``; returns the path.

    Deterministic: the same arguments give the same files, byte for byte. ``corpus_episodes`` rollouts feed
    the tokenizer (fewer build faster, for tests); ``size`` is a key of :data:`SIZES`.
    """
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    if vocab_size < 300:
        raise ValueError(f"vocab_size must be >= 300 (256 bytes + special tokens + merges), got {vocab_size}")
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    dims = dict(SIZES[size])
    context_length = dims.pop("context_length")
    out = Path(out_dir)
    tokenizer = train_tokenizer(corpus_texts(corpus_episodes, seed=seed), vocab_size=vocab_size,
                                context_length=context_length)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        **dims,
        num_key_value_heads=dims["num_attention_heads"],
        max_position_embeddings=context_length,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    generation = GenerationConfig(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                                  pad_token_id=tokenizer.pad_token_id)
    return save_seeded_model(lambda: LlamaForCausalLM(config), seed, generation, tokenizer, out)


def save_seeded_model(build: Callable[[], Any], seed: int, generation: Any, tokenizer: Any,
                      out_dir: str | Path) -> Path:
    """``build()`` a model with its weights drawn from ``seed``, give it ``generation`` (a GenerationConfig) and
    save it with ``tokenizer`` to ``out_dir``; returns the path. Shared by :mod:`tutorzoo.train.tiny_families`."""
    import torch

    # fork_rng: the init draws from torch's global generator; the caller's random state is left as it was
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = build()
    model.generation_config = generation
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Build the tiny offline model (tokenizer + random Llama).")
    parser.add_argument("--out", required=True, help="directory to write the model into")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocab-size", type=int, default=2000)
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny",
                        help="tiny: ~200k parameters (tests); small: ~2M, 2048 context (learns by SFT on a CPU)")
    parser.add_argument("--corpus-episodes", type=int, default=36, help="socratic episodes the tokenizer is trained on")
    args = parser.parse_args(argv)
    import importlib.util
    import sys

    missing = [m for m in ("torch", "transformers", "tokenizers") if importlib.util.find_spec(m) is None]
    if missing:  # before any work, with the extra that installs them
        from tutorzoo.envs.install import install_hint

        sys.exit(f"python -m tutorzoo.train.tiny_model needs {', '.join(missing)}: {install_hint('hf')}")
    path = build_tiny_model(args.out, seed=args.seed, vocab_size=args.vocab_size,
                            corpus_episodes=args.corpus_episodes, size=args.size)
    print(f"tiny model written to {path}")


if __name__ == "__main__":
    main()
