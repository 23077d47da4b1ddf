"""One conversation-rendering path for every model-facing piece (tutor backend, LLM student, annotator, judges,
SFT / GRPO / DPO): it makes any chat-template family accept TutorZoo's conversations and gives back exactly the
tokens the model is trained and sampled on.

What the env hands a model does not fit every template as is: ``info["messages"]`` holds runs of one role
(``system, user, user``: the pre-test summary, then the student's opener), some templates refuse a ``system``
role (Gemma-2) or demand strict user/assistant alternation starting with the user (Gemma-2/3), Llama-3.x writes
today's date into every prompt, Qwen3 thinks aloud unless told not to, Phi-3 relies on the tokenizer to add BOS,
and the end of a turn is a different token in every family. :class:`ChatRenderer` absorbs this:

- **Roles**: runs of the same role are merged (contents joined by a blank line); the system prompt is folded
  into the first user turn when the template refuses it (found by trying to render one); a conversation that
  must open with the user but opens with the assistant gets an empty user turn first.
- **Pinned inputs**: ``date_string`` (default :data:`PINNED_DATE`, the date Llama's own template falls back to)
  and ``enable_thinking`` (default off) go to every template; templates that do not use them ignore them.
- **BOS**: the rendered text is tokenised without special tokens (templates that write BOS keep theirs, once);
  when the tokenizer adds BOS itself and the text does not start with it, it is put in front.
- **Tokenising**: the text between added tokens is tokenised piece by piece and each piece's ids are remembered,
  so a conversation's next prompt tokenises only its new messages; the ids are those of the whole text, because
  the ``tokenizers`` library cuts a text at its added tokens and tokenises the pieces apart (tokenizers for which
  that does not hold, found from their settings and a probe, tokenise whole texts).
- **Stops**: :attr:`ChatRenderer.stop_ids` = EOS, the model's ``generation_config`` end ids, and the token the
  template closes an assistant turn with (``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>``, ``<|end|>``...).
- **Reasoning**: :func:`strip_reasoning` removes ``<think>…</think>`` blocks (and an unclosed one) from a reply
  before it reaches the env.
- **Training masks**: :meth:`ChatRenderer.assistant_mask` renders a conversation once and marks, token by token
  (from character offsets), the assistant turns' content and their end-of-turn token: what SFT trains on and
  what multi-turn GRPO scores, for templates with or without ``{% generation %}`` markers and whether or not a
  conversation renders as a prefix of its continuation.

Example::

    renderer = ChatRenderer(tokenizer)                      # tokenizer.chat_template of any family
    ids = renderer.encode([{"role": "system", "content": "Tutor."}, {"role": "user", "content": "Hi"},
                           {"role": "user", "content": "2+2?"}])            # merged, folded as needed
    ids, mask = renderer.assistant_mask(messages)          # 1 on the tutor's tokens
    text = strip_reasoning("<think>hm</think>Four.")        # "Four."
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

PINNED_DATE = "26 Jul 2024"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)
# end-of-turn tokens of common families: a stop when the tokenizer has them as added tokens
KNOWN_TURN_ENDS = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<end_of_turn>", "<|end|>", "<|endoftext|>",
                   "<|end_of_text|>")
_PROBE = "q7Zx probe"
PIECE_CACHE = 8192  # texts between added tokens whose ids a renderer keeps (a message's content, mostly)


class RenderError(ValueError):
    """A conversation the chat template cannot render, even after merging and folding (the message says why)."""


def strip_reasoning(text: str) -> str:
    """``text`` without reasoning blocks: ``<think>…</think>`` removed, text after a stray ``</think>`` kept, an
    unclosed ``<think>`` cut with what follows it.

    Example::

        strip_reasoning("<think>\\nfirst...\\n</think>\\n\\nTry 3.")   # "Try 3."
    """
    out = _THINK_BLOCK.sub("", text)
    if THINK_CLOSE in out:  # the prompt opened the block; the reply closes it
        out = out.rsplit(THINK_CLOSE, 1)[1]
    if THINK_OPEN in out:  # cut off while still thinking
        out = out.split(THINK_OPEN, 1)[0]
    return out.strip()


def merge_roles(messages: Iterable[dict]) -> list[dict]:
    """Consecutive messages of one role as one message (contents joined by a blank line); only role/content kept.

    Example::

        merge_roles([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
        # [{"role": "user", "content": "a\\n\\nb"}]
    """
    out: list[dict] = []
    for m in messages:
        role, content = m["role"], m["content"]
        if out and out[-1]["role"] == role:
            out[-1]["content"] = "\n\n".join(c for c in (out[-1]["content"], content) if c)
        else:
            out.append({"role": role, "content": content})
    return out


def fold_system(messages: list[dict]) -> list[dict]:
    """The system prompt put in front of the first user turn (its own user turn when the assistant speaks first)."""
    if not messages or messages[0]["role"] != "system":
        return list(messages)
    system, rest = messages[0]["content"], messages[1:]
    if rest and rest[0]["role"] == "user":
        return [{"role": "user", "content": f"{system}\n\n{rest[0]['content']}"}, *rest[1:]]
    return [{"role": "user", "content": system}, *rest]


class ChatRenderer:
    """Renders and tokenises conversations for one tokenizer; see the module docstring.

    ``enable_thinking`` turns a reasoning template's thinking on (the reply's reasoning is still stripped before
    the env sees it); ``date_string`` pins the date of templates that print one; ``extra_stop_ids`` adds stop
    tokens (e.g. a model's ``generation_config.eos_token_id``).
    """

    def __init__(self, tokenizer: Any, enable_thinking: bool = False, date_string: str = PINNED_DATE,
                 extra_stop_ids: Iterable[int | None] = ()) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise RenderError("the tokenizer has no chat template; use a chat/instruct model or set "
                              "tokenizer.chat_template")
        self.tokenizer = tokenizer
        self.enable_thinking = enable_thinking
        self.date_string = date_string
        self.supports_system = self._accepts([{"role": "system", "content": _PROBE},
                                              {"role": "user", "content": "u"}], must_show=_PROBE)
        self.assistant_first = self._accepts([{"role": "assistant", "content": "a"},
                                              {"role": "user", "content": "u"}], must_show=None)
        self.adds_bos = self._tokenizer_adds_bos()
        self.turn_end, self.turn_end_id = self._turn_end()
        self.stop_ids: tuple[int, ...] = self._stop_ids(extra_stop_ids)

    # -- capabilities -------------------------------------------------------------------------------------
    def _raw(self, messages: list[dict], add_generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=add_generation_prompt, tokenize=False,
            enable_thinking=self.enable_thinking, date_string=self.date_string)

    def _accepts(self, messages: list[dict], must_show: str | None) -> bool:
        try:
            text = self._raw(messages, add_generation_prompt=True)
        except Exception:  # jinja's raise_exception, a TemplateError: the template refuses this shape
            return False
        return must_show is None or must_show in text

    def _tokenizer_adds_bos(self) -> bool:
        bos = self.tokenizer.bos_token_id
        if bos is None:
            return False
        plain = list(self.tokenizer("x", add_special_tokens=False)["input_ids"])
        full = list(self.tokenizer("x", add_special_tokens=True)["input_ids"])
        return len(full) > len(plain) and full[0] == bos

    def _turn_end(self) -> tuple[str | None, int | None]:
        """The special token that closes an assistant turn in this template (its text and id)."""
        user = [{"role": "user", "content": "u"}]
        text = self._raw(self.prepare([*user, {"role": "assistant", "content": _PROBE}]), add_generation_prompt=False)
        closing = text.split(_PROBE, 1)[1] if _PROBE in text else ""
        specials = sorted({t for t in self._special_texts() if t and t in closing}, key=closing.find)
        if specials:
            token = specials[0]
            return token, self.tokenizer.convert_tokens_to_ids(token)
        eos = self.tokenizer.eos_token
        return (eos, self.tokenizer.eos_token_id) if eos else (None, None)

    def _special_texts(self) -> set[str]:
        tok = self.tokenizer
        out = set(getattr(tok, "all_special_tokens", []) or [])
        decoder = getattr(tok, "added_tokens_decoder", {}) or {}
        out |= {str(t) for t in decoder.values() if getattr(t, "special", False)}
        return out

    def _stop_ids(self, extra: Iterable[int | None]) -> tuple[int, ...]:
        ids: list[int] = []
        vocab = self.tokenizer.get_vocab()
        known = [vocab[t] for t in KNOWN_TURN_ENDS if t in vocab and t in self._special_texts()]
        for i in [self.tokenizer.eos_token_id, self.turn_end_id, *extra, *known]:
            if isinstance(i, int) and i >= 0 and i not in ids and i != self._think_id():
                ids.append(i)
        return tuple(ids)

    def _think_id(self) -> int | None:
        return self.tokenizer.get_vocab().get(THINK_OPEN)

    # -- rendering ----------------------------------------------------------------------------------------
    def prepare(self, messages: Sequence[dict]) -> list[dict]:
        """``messages`` in a shape this template accepts: roles merged, system folded and user-first as needed."""
        out = merge_roles(messages)
        if out and out[0]["role"] == "system" and not self.supports_system:
            out = merge_roles(fold_system(out))
        head = 1 if out and out[0]["role"] == "system" else 0
        if not self.assistant_first and len(out) > head and out[head]["role"] == "assistant":
            out.insert(head, {"role": "user", "content": ""})
        return out

    def render(self, messages: Sequence[dict], add_generation_prompt: bool = True) -> str:
        """The chat template's text of ``messages`` (prepared first); a refusal is a :class:`RenderError`."""
        prepared = self.prepare(messages)
        try:
            return self._raw(prepared, add_generation_prompt)
        except Exception as exc:
            roles = [m["role"] for m in prepared]
            raise RenderError(f"the chat template cannot render roles {roles}: {exc}") from None

    def encode_text(self, text: str, bos: bool = True) -> list[int]:
        """Token ids of rendered ``text`` (no special tokens added, except the tokenizer's own BOS when ``bos``)."""
        if self._splitter is None:
            ids = self._tokenize(text)
        else:
            ids = []
            for k, piece in enumerate(self._splitter.split(text)):
                if k % 2:  # an added token: the splitting pattern's group
                    ids.append(self._added[piece])
                elif piece:
                    ids += self._piece_ids(piece)
        return self._with_bos(ids, text) if bos else ids

    def _tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    @functools.cached_property
    def _piece_ids(self) -> Callable[[str], tuple[int, ...]]:
        """The ids of text between added tokens, remembered: a conversation's next prompt repeats its messages."""
        return functools.lru_cache(maxsize=PIECE_CACHE)(lambda piece: tuple(self._tokenize(piece)))

    @functools.cached_property
    def _added(self) -> dict[str, int]:
        """Each added token's text and id."""
        return {str(t.content): i for i, t in self.tokenizer.backend_tokenizer.get_added_tokens_decoder().items()}

    @functools.cached_property
    def _splitter(self) -> re.Pattern[str] | None:
        """A pattern that cuts rendered text at its added tokens (kept as the pattern's group) where the tokenizer
        cuts it, when the tokenizer then tokenises the text between them each on its own: the ``tokenizers``
        library matches added tokens first (leftmost, longest) and normalises and pre-tokenises the pieces
        between them apart. So a prompt's ids are its pieces' ids, and a piece seen before (a message of the
        last turn's prompt, a seat's system prompt) is not tokenised again. None, and whole-text tokenising, for
        tokenizers whose pieces are not independent: no ``tokenizers`` backend, added tokens that take in the
        whitespace around them or match only whole words or after normalising, special tokens split as text,
        a Metaspace that marks only the first piece, or a probe that tokenises otherwise in pieces."""
        backend = getattr(self.tokenizer, "backend_tokenizer", None)
        if backend is None or getattr(self.tokenizer, "split_special_tokens", False):
            return None
        try:
            added = list(backend.get_added_tokens_decoder().values())
            config = json.loads(backend.to_str())
        except Exception:  # a backend without these: tokenise whole texts
            return None
        normalizes = config.get("normalizer") is not None
        if not added or any(t.lstrip or t.rstrip or t.single_word or (t.normalized and normalizes) for t in added):
            return None
        if '"first"' in json.dumps([config.get("normalizer"), config.get("pre_tokenizer")]).lower():
            return None  # prepend_scheme "first": the piece at the text's start is tokenised otherwise
        contents = sorted({str(t.content) for t in added if t.content}, key=len, reverse=True)
        pattern = re.compile("(" + "|".join(re.escape(c) for c in contents) + ")")
        probe = self._raw(self.prepare([{"role": "system", "content": " s  y\n\n"},
                                        {"role": "user", "content": f"\t{_PROBE} é\r\n"},
                                        {"role": "assistant", "content": "  a. "},
                                        {"role": "user", "content": f"{contents[0]}x {contents[-1]} "}]),
                          add_generation_prompt=True)
        pieces = pattern.split(probe)
        ids = [i for k, p in enumerate(pieces) for i in ([self._added[p]] if k % 2 else self._tokenize(p) if p else [])]
        return pattern if ids == self._tokenize(probe) else None

    def _with_bos(self, ids: list[int], text: str) -> list[int]:
        bos_token = self.tokenizer.bos_token
        if self.adds_bos and bos_token and not text.startswith(bos_token):
            return [self.tokenizer.bos_token_id, *ids]
        return ids

    def encode(self, messages: Sequence[dict], add_generation_prompt: bool = True) -> list[int]:
        """The prompt's token ids (rendered, BOS as the family has it)."""
        return self.encode_text(self.render(messages, add_generation_prompt))

    def clean(self, text: str) -> str:
        """A reply as the env should read it: reasoning removed, whitespace trimmed."""
        return strip_reasoning(text)

    # -- training masks -----------------------------------------------------------------------------------
    def assistant_spans(self, messages: Sequence[dict]) -> tuple[str, list[tuple[int, int]]]:
        """The rendered text of the whole conversation and the character span of each assistant turn: its content
        (as the template writes it, e.g. trimmed) and the end-of-turn token that follows it.

        Raises :class:`RenderError` when an assistant turn's text cannot be found where the template put it.
        """
        prepared = self.prepare(messages)
        text = self.render(prepared, add_generation_prompt=False)
        spans: list[tuple[int, int]] = []
        cursor = 0
        for k, m in enumerate(prepared):
            # the turn starts after what the template writes before it (its generation prompt)
            head = self._prefix_len(prepared[:k], text, cursor)
            cursor = max(cursor, head)
            if m["role"] != "assistant":
                continue
            content = m["content"].strip()
            start = text.find(content, cursor) if content else cursor
            if start < 0:
                raise RenderError(f"assistant turn {k} is not in the rendered conversation as written; the template "
                                  "rewrites its content")
            end = start + len(content)
            if self.turn_end:
                pos = text.find(self.turn_end, end)
                if pos >= 0 and not text[end:pos].strip():
                    end = pos + len(self.turn_end)
            spans.append((start, end))
            cursor = end
        return text, spans

    def _prefix_len(self, before: list[dict], text: str, cursor: int) -> int:
        """Where the next message's content can start: after the rendering of ``before`` with a generation
        prompt, when that rendering is a prefix of ``text`` (else the cursor as it is)."""
        if not before:
            return cursor
        try:
            head = self._raw(before, add_generation_prompt=True)
        except Exception:
            return cursor
        return len(head) if text.startswith(head) else cursor

    def assistant_mask(self, messages: Sequence[dict]) -> tuple[list[int], list[int]]:
        """``(input_ids, mask)`` of the whole conversation; ``mask[i] == 1`` exactly on the assistant turns' tokens
        (content and end-of-turn token), from the tokens' character offsets.

        Example::

            ids, mask = ChatRenderer(tok).assistant_mask([{"role": "user", "content": "2+2?"},
                                                         {"role": "assistant", "content": "Four."}])
            tok.decode([i for i, m in zip(ids, mask) if m])   # "Four.<|im_end|>" (the family's end token)
        """
        text, spans = self.assistant_spans(messages)
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        ids, offsets = list(enc["input_ids"]), list(enc["offset_mapping"])
        mask = [0] * len(ids)
        j = 0
        for i, (s, e) in enumerate(offsets):
            while j < len(spans) and spans[j][1] <= s:
                j += 1
            if j < len(spans) and e > s and spans[j][0] <= s < spans[j][1]:
                mask[i] = 1
        with_bos = self._with_bos(ids, text)
        if len(with_bos) > len(ids):
            mask = [0, *mask]
        return with_bos, mask
