"""A local Hugging Face causal LM as a :class:`~tutorzoo.agents.backends.base.ChatBackend` (batched, reproducible).

Any causal LM directory or hub id that ``transformers`` loads and whose tokenizer has a chat template works;
an optional PEFT adapter (LoRA) is loaded on top and merged for speed. Conversations are rendered with the
tokenizer's chat template (``add_generation_prompt=True``) and generated in batches of ``batch_size`` with
left padding.

- **Device and dtype**: ``cuda`` with ``bfloat16`` (``float16`` on GPUs without bf16) when a GPU is present,
  else ``cpu`` with ``float32``; ``device``/``dtype`` override (``"mps"``, ``"float16"``, ``"auto"`` = the
  checkpoint's dtype). ``threads`` sets torch's CPU threads (process-wide; torch's default is the machine's
  cores): one thread is best whenever other processes share the cores.
- **Sampling**: per call from :class:`GenerationConfig`: greedy when ``temperature == 0``, else temperature and
  top-p sampling (top-k off, so the call's settings are the whole story, as with an API); ``max_new_tokens``
  caps the reply; ``stop`` strings end it (the stop string is cut from the text).
- **Reproducible, whatever the batch**: with ``config.seed`` set, conversation ``j`` of a call samples from its
  own torch generator seeded from ``(seed, j)`` (inverse-transform sampling of the temperature / top-p warped
  distribution, one uniform a step), so its reply does not depend on the conversations batched with it; the
  caller's torch random state is untouched.
  ``generate_many`` takes one config per conversation (each as its own call), and inside the engine's lockstep
  rounds (:mod:`tutorzoo.envs.lockstep`) the requests of every episode in flight go out as one batch.
- **Prefill in packed passes, decode in batches**: each prompt's keys and values (all but its generation prompt,
  or all but its last token when a prompt of the batch does not end with it) are computed with the causal kernel
  over its own tokens, and laid out left-padded in one cache with room reserved for the reply; ``generate`` then
  decodes the whole batch from there. The prompts' chunks (see the prefix cache) go in waves, the next chunk of
  every prompt in one forward pass with the rows' tokens side by side: the matrix products run on all of them at
  once, and each row attends to its own past and tokens only, through the SDPA call a pass over it alone makes.
  A row gets the same bits whatever is packed beside it (each pass is padded to ``PACK_ALIGN`` tokens, since on
  the CPU this was measured on a matrix product over one to five rows gives other bits than over more): the
  backend checks this once on a probe, with the model's own attention on long chunks, and where it fails (kernels
  whose bits depend on the rows beside, sliding-window or other attention, a model whose attention cannot be set)
  every chunk is a forward pass of its own. A padded batch's
  own prefill would attend over the longest prompt's square for every row through a mask, which on lockstep
  episodes' prompts (hundreds of tokens of varied length) costs more per row than each prompt alone. The batch's
  cache buffers are kept from one call to the next (as big as the largest batch's cache), so a call does not fault
  in fresh memory.
- **Prefix cache**: a conversation's next prompt repeats its last one, so the keys and values of prompt chunks are
  kept (:mod:`~tutorzoo.agents.backends.prefix_cache`, ``prefix_cache_tokens`` of them, by default as many as
  1 GiB holds; ``0`` turns it off) and a prompt computes only the chunks after the longest stored run of its own.
  A prompt is always computed chunk by chunk at ends its own token ids decide, hit or miss, so its keys and values
  are the same bits whatever was stored, evicted or batched beside it: a reply depends on the cache and the
  order of the requests not at all, and on its batch no more than the batched decoding steps make it. (One pass
  over the whole prompt gives other bits in the last place.) A prompt truncated at the left, or a
  history the template renders anew, finds no stored chunk past where it changed and is computed from there.
  The keys and values of a reply's own tokens are not kept: the batched decoding steps compute them (their bits
  depend on the batch), and a reply's text rarely re-encodes to the ids it was sampled as.
- **Models whose cache is not plain per-layer keys and values** (sliding-window or hybrid layers as in Gemma,
  linear-attention layers) keep ``generate``'s own padded prefill, without the prefix cache.
- **Long prompts** are truncated from the left, keeping the system message: the oldest other messages are
  dropped whole until the prompt fits in ``context_length - max_new_tokens`` tokens; if the last message
  alone is still too long, its oldest tokens are cut. ``meta`` reports ``truncated_messages`` and
  ``truncated_tokens``. ``context_length`` is the model's ``max_position_embeddings`` unless ``max_context``
  sets it.
- **Failures are per conversation**: a malformed conversation, a prompt that cannot fit, or an error while
  generating (a chunk that fails is retried one conversation at a time) give that conversation a result
  with ``text=None`` and ``error``; the others are unaffected. A tokenizer without a pad token pads with EOS.
- **Any chat-template family**: prompts go through :class:`~tutorzoo.agents.backends.chat_render.ChatRenderer`
(same-role
  runs merged, the system prompt folded into the first user turn where the template refuses one, a pinned
  ``date_string``, ``enable_thinking=False`` unless set, the family's BOS kept); generation stops on every
  end-of-turn token of the tokenizer, template and ``generation_config``; reasoning blocks
  (``<think>…</think>``) are stripped from the reply.

Example::

    backend = HFBackend("models/tiny", batch_size=16)          # or make_backend("hf:models/tiny")
    [r] = backend.generate([[{"role": "user", "content": "Hi"}]], GenerationConfig(max_new_tokens=20, seed=0))
    r.text, r.prompt_tokens, r.completion_tokens
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from array import array
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import torch

from tutorzoo.agents.backends.base import GenerationConfig, GenerationResult, row_seed
from tutorzoo.agents.backends.chat_render import PINNED_DATE, ChatRenderer
from tutorzoo.agents.backends.prefix_cache import PrefixCache, chunk_ends
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.lockstep import current_gate

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "fp32": torch.float32,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
    "float16": torch.float16, "fp16": torch.float16,
}
ROLES = ("system", "user", "assistant")
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length")
_DEFAULT_CONTEXT = 2048
PREFIX_CACHE_BYTES = 1 << 30  # the prefix cache's default bound: as many tokens as 1 GiB of keys and values holds
ROWS_ATTENTION = "tutorzoo_rows"  # the attention of packed prefill passes (_rows_attention), SDPA otherwise
PACK_ALIGN = 8  # a packed pass's tokens are padded to a multiple of this
PACK_TOKENS = 8192  # chunk tokens per packed pass at most (a longer chunk has a pass of its own)
States = list[tuple[torch.Tensor, torch.Tensor]]  # one (keys, values) pair [1, heads, tokens, head_dim] per layer
_NO_MASK = torch.ones(1, 1, 1, 1, dtype=torch.bool)  # a packed pass's model-wide mask: the rows mask themselves


def _pick_device(device: str | None) -> torch.device:
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ConfigError(
            f"device {device!r} is not a torch device ({exc}); use 'cpu', 'cuda', 'cuda:1' or 'mps'"
        ) from None


def _pick_dtype(dtype: str | None, device: torch.device) -> torch.dtype | str:
    if dtype is None:
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if dtype == "auto":
        return "auto"
    if dtype not in DTYPES:
        raise ConfigError(f"dtype {dtype!r} is not supported; use one of {sorted(DTYPES)} or 'auto'")
    return DTYPES[dtype]


def _context_length(model: Any, tokenizer: Any) -> int:
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    for key in _CONTEXT_KEYS:
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    # tokenizers without a limit report a huge sentinel (int(1e30)); fall back to a common window then
    return limit if isinstance(limit, int) and 0 < limit < 1_000_000 else _DEFAULT_CONTEXT


def _check_conversation(conversation: Any) -> None:
    if not isinstance(conversation, list) or not conversation:
        raise ValueError(f"a conversation must be a non-empty list of messages, got {type(conversation).__name__}")
    for j, msg in enumerate(conversation):
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), str) or msg.get("role") not in ROLES:
            raise ValueError(f"message {j} must be {{'role': one of {ROLES}, 'content': str}}, got {msg!r:.120}")
        if msg["role"] == "system" and j > 0:
            raise ValueError(f"message {j} is a system message; only the first message may be one")


class HFBackend:
    """A causal LM through ``transformers``; see the module docstring for device, sampling and truncation."""

    def __init__(
        self,
        path_or_id: str,
        adapter: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 16,
        max_context: int | None = None,
        threads: int | None = None,
        enable_thinking: bool = False,
        date_string: str = PINNED_DATE,
        prefix_cache_tokens: int | None = None,
    ) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        if max_context is not None and max_context < 2:
            raise ConfigError(f"max_context must be >= 2 tokens, got {max_context}")
        if prefix_cache_tokens is not None and prefix_cache_tokens < 0:
            raise ConfigError(f"prefix_cache_tokens must be >= 0 (0 turns the prefix cache off), got "
                              f"{prefix_cache_tokens}")
        self.prefix_cache_tokens = prefix_cache_tokens
        if threads is not None:
            if threads < 1:
                raise ConfigError(f"threads must be >= 1, got {threads}")
            torch.set_num_threads(threads)
        self.device = _pick_device(device)
        self.dtype = _pick_dtype(dtype, self.device)
        self.batch_size = batch_size
        where = f"HF model {path_or_id!r}"
        fix = ("give a local model directory (build the tiny one with `python -m tutorzoo.train.tiny_model --out "
               "models/tiny`) or a hub id that is in the local cache (HF_HUB_OFFLINE=1 forbids downloads)")
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path_or_id)
            model = AutoModelForCausalLM.from_pretrained(path_or_id, dtype=self.dtype)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot load {where}: {exc}; {fix}") from None
        if not getattr(self.tokenizer, "chat_template", None):
            raise ConfigError(f"{where}: its tokenizer has no chat template; use a chat/instruct model or add a "
                              "chat_template to its tokenizer_config.json")
        eos = model.generation_config.eos_token_id
        self.renderer = ChatRenderer(self.tokenizer, enable_thinking=enable_thinking, date_string=date_string,
                                     extra_stop_ids=eos if isinstance(eos, list) else [eos])
        self.tokenizer.padding_side = "left"  # decoder-only: new tokens must follow every prompt directly
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if adapter is not None:
            from peft import PeftModel

            if not Path(adapter, "adapter_config.json").is_file() and Path(adapter).exists():
                raise ConfigError(f"adapter {adapter!r} has no adapter_config.json; give a PEFT save_pretrained dir")
            if Path(adapter, "tokenizer_config.json").is_file():
                # a recipe that had to add a pad token saved its tokenizer (and resized embeddings) with the adapter
                adapter_tok = AutoTokenizer.from_pretrained(adapter)
                if len(adapter_tok) > model.get_input_embeddings().num_embeddings:
                    model.resize_token_embeddings(len(adapter_tok), mean_resizing=False)
            try:
                model = PeftModel.from_pretrained(model, adapter).merge_and_unload()
            except (OSError, ValueError) as exc:
                raise ConfigError(f"cannot load adapter {adapter!r} onto {where}: {exc}") from None
        self.model = model.to(self.device).eval()
        if getattr(self.model.config, "_attn_implementation", None) == "sdpa":
            # SDPA, and packed prefill passes (see _packs_rows); a transformers without the attention registries or
            # a model whose attention cannot be set keeps its own, and every prefill pass is of one row
            with contextlib.suppress(ImportError, AttributeError, ValueError):
                _register_rows_attention()
                if self.model._can_set_attn_implementation():
                    self.model.set_attn_implementation(ROWS_ATTENTION)
        self.context_length = max_context or _context_length(self.model, self.tokenizer)
        self.eos_ids: tuple[int, ...] = self.renderer.stop_ids
        self._plain_cache = True  # until a prefill shows otherwise (see _prefill_rows)
        self._spare_buffers: list[tuple[torch.Tensor, torch.Tensor]] | None = None  # see _take_buffers
        self._buffer_lock = threading.Lock()
        self.name = f"hf:{path_or_id}" + (f"+{adapter}" if adapter else "")

    # -- prompts ------------------------------------------------------------------------------------------
    def _render(self, conversation: list[dict], generation_prompt: bool = True) -> list[int]:
        # one BOS, as the family has it (template or tokenizer); roles merged / folded for the template
        return self.renderer.encode(conversation, add_generation_prompt=generation_prompt)

    def encode(self, conversation: list[dict], max_new_tokens: int) -> tuple[list[int], dict]:
        """The prompt's token ids, truncated to leave ``max_new_tokens`` of context, and what was cut.

        Raises ``ValueError`` for a malformed conversation or one whose system message alone does not fit.
        """
        _check_conversation(conversation)
        budget = self.context_length - max_new_tokens
        if budget < 1:
            raise ValueError(f"max_new_tokens={max_new_tokens} leaves no room for a prompt in the model's "
                             f"{self.context_length}-token context; lower max_new_tokens")
        ids = self._render(conversation)
        if len(ids) <= budget:
            return ids, {}
        head = conversation[:1] if conversation[0]["role"] == "system" else []
        rest = conversation[len(head):]
        dropped = 0
        while len(rest) > 1 and len(ids) > budget:
            rest, dropped = rest[1:], dropped + 1
            with contextlib.suppress(Exception):  # some templates refuse a history that opens with the assistant
                ids = self._render(head + rest)
        cut = 0
        if len(ids) > budget:
            full = self._render(head + rest)
            keep = 0
            if head:
                prefix = self._render(head, generation_prompt=False)
                while keep < min(len(prefix), len(full)) and prefix[keep] == full[keep]:
                    keep += 1
            if keep >= budget:
                raise ValueError(f"the system message alone takes {keep} tokens, more than the {budget} the "
                                 f"{self.context_length}-token context leaves with max_new_tokens={max_new_tokens}")
            cut = len(full) - budget
            ids = full[:keep] + full[keep + cut:]
        return ids, {"truncated_messages": dropped, "truncated_tokens": cut}

    # -- generation ---------------------------------------------------------------------------------------
    def generation_kwargs(self, config: GenerationConfig) -> dict[str, Any]:
        """The ``model.generate`` keyword arguments for ``config`` (besides the inputs)."""
        kwargs: dict[str, Any] = {
            "max_new_tokens": config.max_new_tokens,
            "pad_token_id": self.tokenizer.pad_token_id,
            "eos_token_id": list(self.eos_ids),
        }
        if config.temperature > 0:
            kwargs.update(do_sample=True, temperature=config.temperature, top_p=config.top_p, top_k=0)
        else:  # greedy; None clears sampling defaults a checkpoint's generation_config may carry
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if config.stop:
            kwargs.update(stop_strings=list(config.stop), tokenizer=self.tokenizer)
        return kwargs

    def _generate_chunk(self, prompts: list[list[int]], config: GenerationConfig,
                        seeds: list[int | None] | None) -> list[dict]:
        pad = self.tokenizer.pad_token_id
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            input_ids[row, width - len(prompt):] = torch.tensor(prompt, dtype=torch.long)
            attention[row, width - len(prompt):] = 1
        kwargs = self.generation_kwargs(config)
        if config.temperature > 0 and seeds is not None and all(s is not None for s in seeds):
            # each row samples from its own generator (inverse transform of the warped distribution), so a reply is
            # the same whichever batch it is generated in; greedy decoding picks the sampled token
            from transformers import LogitsProcessorList

            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None,
                          logits_processor=LogitsProcessorList([_RowSampler(seeds, config)]))  # type: ignore[arg-type]
        with torch.inference_mode():
            cache = self._prefill_rows(prompts, width, config.max_new_tokens)
            if cache is not None:
                kwargs[self._cache_key] = cache
            try:
                out = self.model.generate(input_ids=input_ids.to(self.device),
                                          attention_mask=attention.to(self.device), **kwargs)
            finally:
                if cache is not None:
                    self._keep_buffers(cache)
        replies = []
        for row in out[:, width:].tolist():
            end = next((k for k, t in enumerate(row) if t in self.eos_ids), None)
            tokens = row if end is None else row[:end]
            if end is None and pad not in self.eos_ids:
                while tokens and tokens[-1] == pad:  # a row stopped by a stop string is padded after it
                    tokens = tokens[:-1]
            text = self.renderer.clean(self.tokenizer.decode(tokens, skip_special_tokens=True))
            stops = [text.find(s) for s in config.stop if s and s in text]
            finish = "stop" if end is not None or stops else "length"
            if stops:
                text = text[: min(stops)]
            replies.append({"text": text.strip(), "tokens": len(tokens) + (end is not None), "finish": finish})
        return replies

    def _prefill_rows(self, prompts: list[list[int]], width: int, room: int) -> Any | None:
        """The key/value cache of every prompt but its generation prompt (or its last token), each row's keys and
        values computed as :meth:`_prefill_prompts` does and left-padded to ``width - tail`` positions, with room
        reserved for the tail and ``room`` reply tokens (a step past the room copies the whole cache); ``generate``
        then starts from the last ``tail`` prompt tokens of every row: the generation prompt's when every prompt
        ends with it, else the last token.

        A padded batch's prefill attends over ``width x width`` positions per row through an explicit mask, while
        one row alone runs the causal kernel over its own length: on the prompts of lockstep episodes (hundreds of
        tokens of varied length) the batched prefill costs more per row than one episode at a time, and the
        decoding steps are what batching saves. Every chunk, of one row or many, goes through here, so a reply does
        not depend on its batch any more than the batched decoding steps make it. None (``generate`` prefills the
        padded batch itself) for a cache that is not plain per-layer keys and values (sliding-window or linear
        layers, a transformers without cache layers) or a prompt of one token.
        """
        if not self._plain_cache or min(len(p) for p in prompts) < 2:
            return None
        suffix = self._generation_suffix
        ends_with_suffix = bool(suffix) and all(len(p) > len(suffix) and tuple(p[-len(suffix):]) == suffix
                                                for p in prompts)
        tail = len(suffix) if ends_with_suffix else 1
        computed = self._prefill_prompts([(prompt, len(prompt) - tail) for prompt in prompts])
        if computed is None:
            return None
        reserved_layer = _reserved_layer_class()
        first = computed[0]
        # the reply's tokens after the last ``tail`` prompt tokens, which ``generate`` computes first
        shapes = [(len(prompts), keys.shape[1], width + room, keys.shape[3]) for keys, _ in first]
        buffers = self._take_buffers(shapes, first[0][0])
        layers = [reserved_layer(keys, values, len(prompts), width - tail, tail + room, pair)
                  for (keys, values), pair in zip(first, buffers, strict=True)]
        for row, states in enumerate(computed):
            for reserved, (keys, values) in zip(layers, states, strict=True):
                reserved.put(row, keys[0], values[0])
        from transformers.cache_utils import DynamicCache

        batched = DynamicCache()
        batched.layers = list(layers)
        return batched

    def _prefill_prompts(self, rows: list[tuple[list[int], int]]) -> list[States] | None:
        """Keys and values ``[1, heads, cached, head_dim]`` per layer of each ``prompt[:cached]``, chunk by chunk
        through the prefix cache (one chunk, the whole, when it is off); None when the model's cache is not plain.

        The rows go in waves: the next chunk of every row that has one, computed together (:meth:`_passes`), and
        rows whose tokens up to that chunk's end are the same share one computation of it."""
        header, store = self._assistant_header, self.prefix_cache
        plans: list[_Plan] = []
        for prompt, cached in rows:
            if self.prefix_cache_tokens == 0:
                plans.append(_Plan(prompt, [], 0, None, [cached]))
                continue
            ends = chunk_ends(prompt, cached, header, self.eos_ids)
            found = store.lookup(prompt, ends, len(header))
            start = ends[len(found) - 1] if found else 0
            states = None
            if found:
                states = [(torch.cat([chunk[i][0] for chunk in found], dim=2),
                           torch.cat([chunk[i][1] for chunk in found], dim=2)) for i in range(len(found[0]))]
            todo = [end for end in ends if end > start] + ([cached] if cached > max(ends, default=0) else [])
            plans.append(_Plan(prompt, ends, start, states, todo))
        while waiting := [plan for plan in plans if plan.todo]:
            shared: dict[bytes, list[_Plan]] = {}  # the same tokens up to the chunk's end: the same keys and values
            for plan in waiting:
                shared.setdefault(_token_key(plan.prompt[:plan.todo[0]]), []).append(plan)
            groups = list(shared.values())
            computed = self._passes([(g[0].prompt, g[0].start, g[0].todo[0], g[0].states) for g in groups])
            if computed is None:
                return None
            for group, states in zip(groups, computed, strict=True):
                lead = group[0]
                start, end = lead.start, lead.todo[0]
                if end in lead.ends:
                    store.put(lead.prompt, start, end, [(k[:, :, start:end].clone(), v[:, :, start:end].clone())
                                                        for k, v in states], len(header))
                store.computed(end - start)
                store.shared((end - start) * (len(group) - 1))
                for plan in group:
                    plan.states, plan.start = states, end
                    plan.todo.pop(0)
        for plan in plans:
            store.touch(plan.prompt, plan.ends, len(header))
        assert all(plan.states is not None for plan in plans)  # cached >= 1: a pass ran or a chunk was found
        return [plan.states for plan in plans]  # type: ignore[misc]

    def _passes(self, rows: list[tuple[list[int], int, int, States | None]]) -> list[States] | None:
        """Keys and values of ``prompt[:end]`` per ``(prompt, start, end, keys and values of prompt[:start])``:
        packed passes of many rows (:func:`_rows_attention`) when the model's layers take them bit for bit
        (:attr:`_packs_rows`), else one forward pass per row on top of its past; None when the model's cache is not
        plain."""
        if self._packs_rows:
            out: list[States] = []
            batch: list[tuple[list[int], int, int, States | None]] = []
            for row in rows:
                if batch and sum(end - start for _, start, end, _ in batch) + row[2] - row[1] > PACK_TOKENS:
                    out += self._packed_pass(batch)
                    batch = []
                batch.append(row)
            return out + self._packed_pass(batch)
        computed = []
        for prompt, start, end, past in rows:
            states = self._pass_alone(prompt, start, end, past)
            if states is None:
                return None
            computed.append(states)
        return computed

    def _pass_alone(self, prompt: list[int], start: int, end: int, past: States | None) -> States | None:
        """Keys and values of ``prompt[:end]`` from one forward pass over ``prompt[start:end]`` on top of ``past``
        (those of ``prompt[:start]``), through the model's own attention and cache; None when that cache is not
        plain."""
        from transformers.cache_utils import DynamicCache

        kwargs: dict[str, Any] = {}
        if past is not None:
            # the past enters a pass as one contiguous tensor per layer, whether it was stored or computed by the
            # pass before: the same pass on the same bits
            cache = DynamicCache()
            cache.layers = [_filled_layer(k.contiguous(), v.contiguous()) for k, v in past]
            kwargs[self._cache_key] = cache
        last_only = {"logits_to_keep": 1} if "logits_to_keep" in self._forward_args else {}  # no logits needed
        out = self.model(input_ids=torch.tensor([prompt[start:end]], dtype=torch.long, device=self.device),
                         use_cache=True, **last_only, **kwargs)
        return self._plain_states(out)

    def _packed_pass(self, rows: list[tuple[list[int], int, int, States | None]]) -> list[States]:
        """One forward pass of the model's decoder over every row's ``prompt[start:end]`` side by side, each row
        attending to its own past and tokens only (:func:`_rows_attention`), padded to a multiple of
        ``PACK_ALIGN`` tokens."""
        ids: list[int] = []
        positions: list[int] = []
        spans: list[tuple[int, int]] = []
        for prompt, start, end, _ in rows:
            spans.append((len(ids), len(ids) + end - start))
            ids += prompt[start:end]
            positions += range(start, end)
        pad = -len(ids) % PACK_ALIGN
        ids += [self.tokenizer.pad_token_id] * pad
        positions += range(pad)
        packed = _PackedRows(spans, [past for *_, past in rows])
        self.model.get_decoder()(
            input_ids=torch.tensor([ids], dtype=torch.long, device=self.device),
            position_ids=torch.tensor([positions], dtype=torch.long, device=self.device),
            attention_mask=_NO_MASK.to(self.device), use_cache=False, packed_rows=packed)
        return packed.states()

    @functools.cached_property
    def _packs_rows(self) -> bool:
        """Whether packed passes give each row the same bits whatever rows are packed beside it, and the bits of the
        model's own attention: checked once on a probe of four rows (two on a past, one of them a single token),
        packed together and each alone, and the three long ones against the model's own pass over them. The
        kernels' results may depend on the shapes they run on (a matrix product's on its row count: on the x86-64
        CPU with MKL this was measured on, only for one to five rows, which the padding to ``PACK_ALIGN`` tokens
        rules out; elsewhere it may for any count), and a model's attention may do more than attend causally (sliding
        windows, sinks): then every row is a pass of its own, through the model's own attention."""
        if self.model.config._attn_implementation != ROWS_ATTENTION or not self._plain_cache:
            return False
        vocab = int(self.model.get_input_embeddings().num_embeddings)
        ids = [(7919 * i + 13) % vocab for i in range(1, 120)]
        try:
            with torch.inference_mode():
                past = self._pass_alone(ids, 0, 41, None)
                if past is None:
                    return False
                rows = [(ids, 0, 41, None), (ids[::-1], 0, 77, None), (ids, 41, 119, past), (ids, 41, 42, past)]
                together = self._packed_pass(rows)
                alone = [self._packed_pass([row])[0] for row in rows]
                own = [self._pass_alone(*row) for row in rows[:3]]
        except Exception:  # an attention the packed rows do not support (see _rows_attention)
            return False
        return all(_same_states(a, b) for a, b in zip(alone, together, strict=True)) and \
            all(o is not None and _same_states(o, a) for o, a in zip(own, alone, strict=False))

    def _take_buffers(self, shapes: list[tuple[int, int, int, int]],
                      like: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Flat key and value buffers of at least each shape's size, one pair per layer: the last call's when they
        are big enough (no fresh memory to fault in at every call), else new ones. Their contents are stale:
        :meth:`ReservedLayer.put <_reserved_layer_class>` zeroes each row's padding, and a decoding step writes
        the positions after the prompt before they are read."""
        with self._buffer_lock:
            spare, self._spare_buffers = self._spare_buffers, None
        sizes = [b * h * n * d for b, h, n, d in shapes]
        if spare is not None and len(spare) == len(shapes) and all(
                k.numel() >= size and k.dtype == like.dtype and k.device == like.device
                for (k, _), size in zip(spare, sizes, strict=True)):
            return spare
        return [(like.new_empty(size), like.new_empty(size)) for size in sizes]

    def _keep_buffers(self, cache: Any) -> None:
        """Keep a finished call's reserved buffers for the next (one set: memory as one batch's cache holds)."""
        pairs = [layer.buffers for layer in cache.layers if hasattr(layer, "buffers")]
        if len(pairs) == len(cache.layers):
            with self._buffer_lock:
                self._spare_buffers = pairs

    def _plain_states(self, out: Any) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
        """The per-layer keys and values of a forward pass's cache; None (and no more asking) when its layers are
        not plain :class:`~transformers.cache_utils.DynamicLayer` ones."""
        from transformers.cache_utils import DynamicLayer

        cache = out.cache if "cache" in out else out.past_key_values
        if not all(type(layer) is DynamicLayer for layer in getattr(cache, "layers", [None])):
            self._plain_cache = False  # the model's cache is what it is: not asked again
            return None
        return [(layer.keys, layer.values) for layer in cache.layers]

    @functools.cached_property
    def prefix_cache(self) -> PrefixCache:
        """The keys and values of prompt chunks this backend has computed (see
        :mod:`~tutorzoo.agents.backends.prefix_cache`), ``prefix_cache_tokens`` of them at most."""
        return PrefixCache(self.prefix_cache_tokens if self.prefix_cache_tokens is not None else
                           max(1, PREFIX_CACHE_BYTES // self._state_bytes_per_token()))

    def _state_bytes_per_token(self) -> int:
        """The bytes of keys and values one token takes over all layers (one pass over two tokens measures it)."""
        with torch.inference_mode():
            out = self.model(input_ids=torch.tensor([[self.tokenizer.pad_token_id] * 2], device=self.device),
                             use_cache=True)
        cache = out.cache if "cache" in out else out.past_key_values
        total = 0
        for layer in getattr(cache, "layers", []):
            for tensor in (layer.keys, layer.values):
                total += tensor.element_size() * tensor.numel() // max(1, tensor.shape[-2])
        return max(1, total)

    @functools.cached_property
    def _generation_suffix(self) -> tuple[int, ...]:
        """The token ids the generation prompt ends a rendered conversation with (``<|assistant|>\\n``), or ``()``."""
        return self._assistant_marks[0]

    @functools.cached_property
    def _assistant_header(self) -> tuple[int, ...]:
        """The token ids that open an assistant turn both in the generation prompt and in a rendered history
        (``<|im_start|>assistant\\n`` where Qwen3's generation prompt goes on with an empty think block): the
        prefix cache's chunks end before them. ``()`` when the template shows none."""
        return self._assistant_marks[1]

    @functools.cached_property
    def _assistant_marks(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        user = [{"role": "user", "content": "Hello."}]
        try:
            bare, prompt = self._render(user, generation_prompt=False), self._render(user)
            # an earlier turn, as a history renders it (templates may render the last assistant turn otherwise)
            turn = self._render([*user, {"role": "assistant", "content": "Hi there."},
                                 {"role": "user", "content": "Thanks."}], generation_prompt=False)
        except Exception:  # a template that refuses the probe: chunks end only after the first end of turn
            return (), ()
        start = _common_prefix(bare, prompt)  # templates that close a rendering without the prompt differ here
        suffix = tuple(prompt[start:])
        return suffix, suffix[:max(0, _common_prefix(prompt, turn) - start)]

    @property
    def _cache_key(self) -> str:
        """The name ``generate`` takes a cache under (``cache`` from transformers 5, ``past_key_values`` before)."""
        return "cache" if "cache" in self._forward_args else "past_key_values"

    @functools.cached_property
    def _forward_args(self) -> frozenset[str]:
        import inspect

        return frozenset(inspect.signature(self.model.forward).parameters)

    def generate(self, conversations: list[list[dict]], config: GenerationConfig) -> list[GenerationResult]:
        """One result per conversation, in order; a failure is that conversation's ``error``, never a raise."""
        if not isinstance(conversations, list):
            raise TypeError(f"conversations must be a list of conversations, got {type(conversations).__name__}")
        return self._pooled([(c, replace(config, seed=row_seed(config.seed, j))) for j, c in enumerate(conversations)])

    def generate_many(self, requests: list[tuple[list[dict], GenerationConfig]]) -> list[GenerationResult]:
        """One result per ``(conversation, config)``, each equal to ``generate([conversation], config)[0]``, all
        generated together (one batch per sampling setting)."""
        return self._pooled([(c, replace(config, seed=row_seed(config.seed, 0))) for c, config in requests])

    def _pooled(self, rows: list[tuple[list[dict], GenerationConfig]]) -> list[GenerationResult]:
        """Encode the rows (configs carry each row's own seed) and generate them, pooled with the other episodes'
        rows inside an engine's lockstep round."""
        results: list[GenerationResult | None] = [None] * len(rows)
        encoded: list[tuple[int, list[int], dict, GenerationConfig]] = []
        for i, (conversation, config) in enumerate(rows):
            try:
                ids, meta = self.encode(conversation, config.max_new_tokens)
            except Exception as exc:  # a bad conversation fails alone
                results[i] = GenerationResult(text=None, error=f"conversation {i}: {type(exc).__name__}: {exc}")
                continue
            encoded.append((i, ids, meta, config))
        if encoded:
            gate = current_gate()
            todo = [(ids, meta, config) for _, ids, meta, config in encoded]
            done = gate.submit(self, todo) if gate is not None else self.run_pooled(todo)
            for (i, *_), result in zip(encoded, done, strict=True):
                results[i] = result
        assert all(r is not None for r in results)
        return results  # type: ignore[return-value]

    def run_pooled(self, rows: list[tuple[list[int], dict, GenerationConfig]]) -> list[GenerationResult]:
        """Generate encoded rows ``(prompt ids, truncation meta, config with the row's seed)``; rows that differ only
        in the seed share batches of ``batch_size``."""
        results: list[GenerationResult | None] = [None] * len(rows)
        groups: dict[GenerationConfig, list[int]] = {}
        for i, (_, _, config) in enumerate(rows):
            key = replace(config, seed=None if config.seed is None else -1)  # seeded rows batch with seeded ones
            groups.setdefault(key, []).append(i)
        for key, todo in groups.items():
            # a fixed layout whatever order the rows arrived in (threads submit in any order), and chunks of
            # similar lengths (less padding)
            todo.sort(key=lambda i: (len(rows[i][0]), rows[i][0], rows[i][2].seed or 0))
            for start in range(0, len(todo), self.batch_size):
                chunk = todo[start:start + self.batch_size]
                seeds = None if key.seed is None else [rows[i][2].seed for i in chunk]
                for i, reply in self._run_chunk(chunk, [rows[i][0] for i in chunk], key, seeds).items():
                    ids, meta, _ = rows[i]
                    if isinstance(reply, str):
                        results[i] = GenerationResult(text=None, error=reply, prompt_tokens=len(ids), meta=dict(meta))
                    else:
                        results[i] = GenerationResult(
                            text=reply["text"], prompt_tokens=len(ids), completion_tokens=reply["tokens"],
                            meta={**meta, "finish_reason": reply["finish"]},
                        )
        assert all(r is not None for r in results)
        return results  # type: ignore[return-value]

    def _run_chunk(self, chunk: list[int], prompts: list[list[int]], config: GenerationConfig,
                   seeds: list[int | None] | None) -> dict[int, dict | str]:
        """Replies by row index; when the batch fails, each row is retried alone (with its own seed)."""
        try:
            return dict(zip(chunk, self._generate_chunk(prompts, config, seeds), strict=True))
        except Exception as exc:  # e.g. out of memory on one long prompt: isolate it
            if len(chunk) == 1:
                return {chunk[0]: f"generation failed: {type(exc).__name__}: {exc}"}
        out: dict[int, dict | str] = {}
        for k, (i, prompt) in enumerate(zip(chunk, prompts, strict=True)):
            out.update(self._run_chunk([i], [prompt], config, None if seeds is None else [seeds[k]]))
        return out


class _RowSampler:
    """A logits processor that turns greedy decoding into temperature / top-p sampling with one seeded generator
    per row, by inverse transform: row ``r``'s token at its ``k``-th step is the first whose cumulative probability
    exceeds the ``k``-th uniform of the row's own stream, and greedy decoding picks it (every other score is -inf).
    One uniform a row and step, drawn a block of steps at a time, whatever the vocabulary's size."""

    BLOCK = 64  # steps of uniforms drawn per row at once

    def __init__(self, seeds: list[int | None], config: GenerationConfig) -> None:
        self.generators = [torch.Generator().manual_seed(int(s)) for s in seeds]  # type: ignore[arg-type]
        self.temperature = config.temperature
        self.top_p = config.top_p
        self.step = 0
        self.uniforms = torch.empty(len(seeds), 0, dtype=torch.float64)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        logits = scores.float() / self.temperature
        if self.top_p < 1.0:
            ordered, order = logits.sort(dim=-1, descending=True)
            probs = ordered.softmax(dim=-1)
            drop = probs.cumsum(dim=-1) - probs > self.top_p  # keep the smallest head whose mass reaches top_p
            logits = logits.scatter(-1, order, ordered.masked_fill(drop, float("-inf")))
        column = self.step % self.BLOCK
        if column == 0:  # each row's next block of uniforms, from its own stream: the same whatever the batch
            self.uniforms = torch.stack([torch.rand(self.BLOCK, generator=g, dtype=torch.float64)
                                         for g in self.generators])
        self.step += 1
        cdf = logits.softmax(dim=-1).double().cumsum(dim=-1)
        total = cdf[:, -1:]
        # u in [0, total): the first position whose cumulative mass passes it has positive probability
        target = torch.minimum(self.uniforms[:, column:column + 1].to(cdf.device) * total,
                               torch.nextafter(total, torch.zeros_like(total)))
        picked = torch.searchsorted(cdf, target, right=True)
        out = torch.full_like(scores, float("-inf"), dtype=torch.float32)
        return out.scatter_(-1, picked, 0.0)


@dataclass
class _Plan:
    """A prompt's prefill: its chunk ends, the keys and values of ``prompt[:start]`` so far, the ends to compute."""

    prompt: list[int]
    ends: list[int]
    start: int
    states: States | None
    todo: list[int]


class _PackedRows:
    """The rows of a packed pass: each row's span of the pass's tokens and its past; collects each row's keys and
    values (past and span) per layer."""

    def __init__(self, spans: list[tuple[int, int]], pasts: list[States | None]) -> None:
        self.spans, self.pasts = spans, pasts
        self._layers: list[dict[int, tuple[torch.Tensor, torch.Tensor]]] = [{} for _ in spans]

    def keep(self, row: int, layer: int, keys: torch.Tensor, values: torch.Tensor) -> None:
        self._layers[row][layer] = (keys, values)

    def states(self) -> list[States]:
        return [[layers[i] for i in sorted(layers)] for layers in self._layers]


def _rows_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                    attention_mask: torch.Tensor | None, packed_rows: _PackedRows | None = None,
                    **kwargs: Any) -> tuple[torch.Tensor, None]:
    """transformers' SDPA attention; in a packed pass (``packed_rows``), each row's tokens attend to its own past
    and, causally, to its own tokens, through the very SDPA call a pass over that row alone makes (no mask on a
    first chunk or a single token, else the causal mask over past and chunk); the padding's output is zeros."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if packed_rows is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    if kwargs.get("sliding_window") is not None:
        raise NotImplementedError("packed rows attend to their whole past: no sliding window")
    layer = cast(int, module.layer_idx)
    outputs = []
    for row, (start, end) in enumerate(packed_rows.spans):
        keys, values = key[:, :, start:end], value[:, :, start:end]
        past = packed_rows.pasts[row]
        mask = None
        if past is None:
            keys, values = keys.contiguous(), values.contiguous()
        else:
            keys, values = torch.cat([past[layer][0], keys], dim=2), torch.cat([past[layer][1], values], dim=2)
            if end - start > 1:
                mask = torch.ones(end - start, keys.shape[2], dtype=torch.bool, device=query.device).tril(
                    keys.shape[2] - (end - start))[None, None]
        packed_rows.keep(row, layer, keys, values)
        outputs.append(sdpa_attention_forward(module, query[:, :, start:end], keys, values, mask, **kwargs)[0])
    pad = query.shape[2] - packed_rows.spans[-1][1]
    if pad:
        outputs.append(query.new_zeros(query.shape[0], pad, query.shape[1], query.shape[3]))
    return torch.cat(outputs, dim=1), None


@functools.cache
def _register_rows_attention() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ROWS_ATTENTION, _rows_attention)
    AttentionMaskInterface.register(ROWS_ATTENTION, sdpa_mask)


def _same_states(a: States, b: States) -> bool:
    return len(a) == len(b) and all(torch.equal(ka, kb) and torch.equal(va, vb)
                                    for (ka, va), (kb, vb) in zip(a, b, strict=True))


def _token_key(ids: list[int]) -> bytes:
    return array("q", ids).tobytes()


def _common_prefix(a: list[int], b: list[int]) -> int:
    """How many leading ids ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def _filled_layer(keys: torch.Tensor, values: torch.Tensor) -> Any:
    """A :class:`~transformers.cache_utils.DynamicLayer` holding ``keys`` and ``values`` as they are (no copy)."""
    from transformers.cache_utils import DynamicLayer

    layer = DynamicLayer()
    layer.lazy_initialization(keys, values)
    layer.keys, layer.values = keys, values
    return layer


@functools.cache
def _reserved_layer_class() -> type:
    from transformers.cache_utils import DynamicLayer

    class ReservedLayer(DynamicLayer):
        """A :class:`~transformers.cache_utils.DynamicLayer` whose keys and values are views of buffers with room
        for the reply: a decoding step writes its token's keys and values in place, where the plain layer copies
        the whole cache (``torch.cat``) at every step. Past the reserved room it grows as the plain layer does."""

        def __init__(self, keys: torch.Tensor, values: torch.Tensor, batch: int, length: int, room: int,
                     buffers: tuple[torch.Tensor, torch.Tensor] | None = None) -> None:
            super().__init__()
            self.device = keys.device
            k_shape = (batch, keys.shape[1], length + room, keys.shape[3])
            v_shape = (batch, values.shape[1], length + room, values.shape[3])
            if buffers is None:  # zeros: a row never put is all padding
                buffers = (keys.new_zeros(math.prod(k_shape)), values.new_zeros(math.prod(v_shape)))
            self.buffers = buffers  # flat; the layer's tensors are views of their starts
            self._keys = buffers[0][:math.prod(k_shape)].view(k_shape)
            self._values = buffers[1][:math.prod(v_shape)].view(v_shape)
            self.keys, self.values = self._keys[:, :, :length], self._values[:, :, :length]
            self.is_initialized = True

        def put(self, row: int, keys: torch.Tensor, values: torch.Tensor) -> None:
            """One row's prefilled keys and values, right-aligned; the left is padding, masked out and zeroed (a
            reused buffer holds the last call's values there, and a masked position must still be finite)."""
            length = self.keys.shape[2]
            self.keys[row, :, :length - keys.shape[1]] = 0
            self.values[row, :, :length - values.shape[1]] = 0
            self.keys[row, :, length - keys.shape[1]:] = keys
            self.values[row, :, length - values.shape[1]:] = values

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any,
                   **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
            start, end = self.keys.shape[2], self.keys.shape[2] + key_states.shape[2]
            if end > self._keys.shape[2]:
                return super().update(key_states, value_states, *args, **kwargs)
            self._keys[:, :, start:end] = key_states
            self._values[:, :, start:end] = value_states
            self.keys, self.values = self._keys[:, :, :end], self._values[:, :, :end]
            return self.keys, self.values

    return ReservedLayer
