"""GRPO's rollouts: the prompts that name episodes, the policy's generators, the token tutor and the
``rollout_func`` (:class:`EpisodeRollout`), split from :mod:`tutorzoo.train.grpo` (the recipe: config, rewards, model
loading, training, evaluation) along that line. The module docstring of :mod:`tutorzoo.train.grpo` describes both.

Every episode is played by the rollout engine (:func:`tutorzoo.envs.engine.play`); :class:`TokenTutor` is an
:class:`tutorzoo.envs.protocols.EpisodeTutor`, so the engine names each waiting episode's index explicitly.

Example::

    from tutorzoo.train.grpo_rollout import EpisodeRollout, spec_prompt
    rollout = EpisodeRollout(tokenizer, rubric, seed=0)   # GRPOTrainer(..., rollout_func=rollout)
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.protocols import PartialBatchError, TutorTurn
from tutorzoo.envs.records import failed, learning_gain

SPEC_PREFIX = "tutorzoo-episode:"


# ---------------------------------------------------------------------------------------------- prompts
def spec_prompt(spec: EpisodeSpec) -> str:
    """The training prompt that names one episode (TRL passes only the prompt to the ``rollout_func``).

    Example::

        parse_spec_prompt(spec_prompt(spec)) == spec
    """
    return SPEC_PREFIX + json.dumps(spec.model_dump(), sort_keys=True, separators=(",", ":"))


def parse_spec_prompt(prompt: Any) -> EpisodeSpec:
    """The :class:`EpisodeSpec` of a prompt made by :func:`spec_prompt`; anything else is a clear error."""
    if not isinstance(prompt, str) or not prompt.startswith(SPEC_PREFIX):
        raise ConfigError("a GRPO training prompt must be tutorzoo.train.grpo_rollout.spec_prompt(spec), got "
                          f"{str(prompt)[:80]!r}; build the dataset with tutorzoo.train.grpo_rollout.build_dataset")
    try:
        return EpisodeSpec.model_validate_json(prompt[len(SPEC_PREFIX):])
    except ValueError as exc:
        raise ConfigError(f"a GRPO training prompt holds an invalid episode spec: {exc}") from None


def build_dataset(specs: Sequence[EpisodeSpec]) -> Any:
    """A ``datasets.Dataset`` with one row per spec: ``prompt`` (:func:`spec_prompt`) and ``spec_key``."""
    from datasets import Dataset

    if not specs:
        raise ConfigError("no training specs: the selection is empty")
    return Dataset.from_dict({"prompt": [spec_prompt(s) for s in specs], "spec_key": [s.key() for s in specs]})


# ---------------------------------------------------------------------------------------------- generation
@contextlib.contextmanager
def _seeded(seed: int | None, device: Any) -> Iterator[None]:
    """Seed torch for one generate call, restoring the caller's random state afterwards."""
    import torch

    if seed is None:
        yield
        return
    devices = [device.index or 0] if getattr(device, "type", "cpu") == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


@dataclass
class Sample:
    """One generated tutor turn: its token ids (EOS included when it stopped there) and their logprobs."""

    ids: list[int]
    logprobs: list[float] | None = None


class HFGenerator:
    """Batched sampling with a ``transformers`` causal LM (left padding; one seeded torch generator per call)."""

    def __init__(self, model: Any, pad_id: int, eos_ids: Sequence[int], temperature: float, top_p: float) -> None:
        self.model = model
        self.pad_id = pad_id
        self.eos_ids = list(eos_ids)
        self.temperature = temperature
        self.top_p = top_p

    def generate(self, inputs: list[list[int]], max_new_tokens: int, seed: int | None) -> list[Sample]:
        import torch

        device = self.model.device
        width = max(len(x) for x in inputs)
        ids = torch.full((len(inputs), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(inputs), width), dtype=torch.long)
        for row, x in enumerate(inputs):
            ids[row, width - len(x):] = torch.tensor(x, dtype=torch.long)
            attention[row, width - len(x):] = 1
        with torch.no_grad(), _seeded(seed, device):
            out = self.model.generate(
                input_ids=ids.to(device), attention_mask=attention.to(device), max_new_tokens=max_new_tokens,
                do_sample=True, temperature=self.temperature, top_p=self.top_p, top_k=0,
                pad_token_id=self.pad_id, eos_token_id=self.eos_ids,
            )
        return [Sample(row) for row in out[:, width:].tolist()]


class VLLMServerGenerator:
    """Sampling on a ``trl vllm-serve`` server through TRL's ``VLLMClient`` (token-id prompts, n=1 each).

    The main process reuses the trainer's client (the one that syncs weights); other processes open their own
    HTTP client. The sampler's logprob of each generated token comes back for TRL's importance sampling.
    """

    def __init__(self, client: Any, temperature: float, top_p: float) -> None:
        self.client = client
        self.temperature = temperature
        self.top_p = top_p

    def generate(self, inputs: list[list[int]], max_new_tokens: int, seed: int | None) -> list[Sample]:
        out = self.client.generate(prompts=inputs, n=1, temperature=self.temperature, top_p=self.top_p, top_k=0,
                                   max_tokens=max_new_tokens, logprobs=0)
        samples = []
        for ids, lps in zip(out["completion_ids"], out.get("logprobs") or [None] * len(inputs), strict=True):
            flat = None if lps is None else [float("nan") if lp is None or not lp or lp[0] is None
                                             else float(lp[0]) for lp in lps]
            samples.append(Sample(list(ids), flat))
        return samples


# ---------------------------------------------------------------------------------------------- the tutor
@dataclass
class _Track:
    """One episode's token history from the tutor's side."""

    prompt_ids: list[int] | None = None
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    n_messages: int = 0  # messages of info["messages"] already in the tokens (its own last turn included)
    stopped: bool = True  # the last tutor turn ended with an EOS token the model generated
    messages: list[dict] = field(default_factory=list)  # the tutor's chat with its own turns (render mode)
    error: str | None = None  # why the episode's tokens could not be built (render mode)


class TokenTutor:
    """An episode tutor (:class:`tutorzoo.envs.protocols.EpisodeTutor`) that generates from each episode's token
    history.

    The rollout engine (:func:`tutorzoo.envs.engine.play`) calls ``begin_episode(index, seed)`` as each episode starts
    and
    ``act_turns`` with every waiting episode, each named by its index; ``tracks[index]`` holds the tokens. Two
    modes, chosen from the chat template (``mode="auto"``):

    - ``"tokens"`` (a prefix-stable template: each conversation renders as a prefix of its continuation, e.g.
      Qwen2.5, Llama-3, Gemma, the tiny model): the first context is rendered with the template, each later
      student message is appended as template tokens (``env_mask`` 0) and each sampled turn as its exact tokens
      (``env_mask`` 1): the model is trained on the very sequence it sampled from.
    - ``"render"`` (templates that rewrite earlier turns or close the conversation differently, e.g. Qwen3's
      think block on the last turn only, Phi-3's EOS at the end): each turn is generated from the freshly
      rendered chat; when the episode ends, :meth:`finish` renders the whole episode once and masks the tutor's
      spans (:meth:`tutorzoo.agents.backends.chat_render.ChatRenderer.assistant_mask`): its turns' tokens as the
      template
      writes them (re-tokenised text), every other token 0.

    Either way the env receives the decoded turn with reasoning blocks stripped.
    """

    def __init__(self, tokenizer: Any, generator: Any, max_new_tokens: int, context_length: int,
                 max_completion_length: int, seed: int, eos_ids: Sequence[int] | None = None,
                 renderer: Any | None = None, mode: Literal["auto", "tokens", "render"] = "auto") -> None:
        from tutorzoo.agents.backends.chat_render import ChatRenderer

        self.tokenizer = tokenizer
        self.renderer = renderer or ChatRenderer(tokenizer)
        self.generator = generator
        self.max_new_tokens = max_new_tokens
        self.context_length = context_length
        self.max_completion_length = max_completion_length
        self.seed = seed
        self.eos_ids = set(eos_ids or []) | set(self.renderer.stop_ids)
        self.tracks: dict[int, _Track] = {}
        self.calls = 0
        stable = prefix_stable(self.renderer)
        if mode == "tokens" and not stable:
            raise ConfigError("mode='tokens' needs a prefix-stable chat template; this one is not (use 'render')")
        self.mode = ("tokens" if stable else "render") if mode == "auto" else mode
        if self.mode == "tokens":
            self._closing_after_eos, self._closing = _turn_closing(self.renderer)

    def reset(self, seed: int | None = None) -> None:  # per-episode state lives in begin_episode
        self.tracks = {}

    def begin_episode(self, index: int, seed: int) -> None:
        self.tracks[index] = _Track()

    def render(self, messages: list[dict], generation_prompt: bool) -> str:
        return self.renderer.render(messages, add_generation_prompt=generation_prompt)

    def encode(self, text: str, bos: bool = False) -> list[int]:
        return self.renderer.encode_text(text, bos=bos)

    def _between_turns(self, track: _Track, messages: list[dict]) -> list[int]:
        """Template tokens after the tutor's last turn: its closing, then the new (student) messages."""
        done = messages[: track.n_messages]
        if not done or done[-1].get("role") != "assistant":
            raise RuntimeError("the env's messages do not end with the tutor's last turn where expected")
        before = self.render(done, generation_prompt=False)
        after = self.render(messages, generation_prompt=True)
        if not after.startswith(before):
            raise RuntimeError("the chat template does not render a conversation as a prefix of its continuation; "
                               "multi-turn token tracking needs a prefix-stable template (mode='render' does not)")
        closing = self._closing_after_eos if track.stopped else self._closing
        return self.encode(closing + after[len(before):])

    def act_turns(self, batch: Sequence[TutorTurn]) -> list[str]:
        self.calls += 1
        inputs: list[list[int]] = []
        budgets: list[int] = []
        errors: list[str | None] = [None] * len(batch)
        for i, (episode, _obs, info) in enumerate(batch):
            track = self.tracks[episode]
            messages = list(info["messages"])
            try:
                context = self._context(track, messages)
            except Exception as exc:  # a template that refuses this chat fails the episode, not the batch
                errors[i] = f"cannot render the tutor's context: {type(exc).__name__}: {exc}"
                inputs.append([])
                budgets.append(0)
                continue
            assert track.prompt_ids is not None
            used = len(context) - len(track.prompt_ids)
            budget = min(self.max_new_tokens, self.context_length - len(context), self.max_completion_length - used)
            if budget < 1:
                errors[i] = (f"the dialogue no longer fits: {len(context)} tokens of context ({len(track.prompt_ids)} "
                             f"prompt) against a {self.context_length}-token model and max_completion_length "
                             f"{self.max_completion_length}; lower max_turns or max_new_tokens")
            inputs.append(context)
            budgets.append(max(budget, 0))
        todo = [i for i, e in enumerate(errors) if e is None]
        texts: list[str | None] = [None] * len(batch)
        if todo:
            seed = int(np.random.SeedSequence([self.seed, self.calls]).generate_state(1)[0])
            samples = self.generator.generate([inputs[i] for i in todo], max(budgets[i] for i in todo), seed)
            for i, sample in zip(todo, samples, strict=True):
                texts[i] = self._take(self.tracks[batch[i].episode], sample, budgets[i])
        if any(e is not None for e in errors):
            raise PartialBatchError(texts, errors)
        return texts  # type: ignore[return-value]

    def _context(self, track: _Track, messages: list[dict]) -> list[int]:
        """The tokens to generate the next turn from (and, in tokens mode, the track extended with them)."""
        if self.mode == "render":
            context = self.renderer.encode(messages, add_generation_prompt=True)
            if track.prompt_ids is None:
                track.prompt_ids = context
            track.messages = messages
            return context
        if track.prompt_ids is None:
            track.prompt_ids = self.encode(self.render(messages, generation_prompt=True), bos=True)
        else:
            env_ids = self._between_turns(track, messages)
            track.completion_ids += env_ids
            track.env_mask += [0] * len(env_ids)
            track.logprobs += [0.0] * len(env_ids)
        track.n_messages = len(messages) + 1  # the env appends this reply as an assistant message
        return track.prompt_ids + track.completion_ids

    def _take(self, track: _Track, sample: Sample, budget: int) -> str:
        """Record one generated turn (cut at its first EOS and at its budget); the text the env receives."""
        ids = sample.ids[:budget]
        end = next((k for k, t in enumerate(ids) if t in self.eos_ids), None)
        if end is not None:
            ids = ids[: end + 1]
        track.stopped = end is not None
        body = ids[:-1] if track.stopped else ids
        text = self.renderer.clean(self.tokenizer.decode(body, skip_special_tokens=True))
        if self.mode == "render":
            track.messages = [*track.messages, {"role": "assistant", "content": text}]
            assert track.prompt_ids is not None
            track.completion_ids = [0] * (len(self.renderer.encode(track.messages, add_generation_prompt=False))
                                          - len(track.prompt_ids))  # a length estimate until finish()
            return text
        lps = sample.logprobs[: len(ids)] if sample.logprobs is not None else [0.0] * len(ids)
        track.completion_ids += ids
        track.env_mask += [1] * len(ids)
        track.logprobs += lps
        return text

    def finish(self, index: int) -> _Track:
        """The episode's final track; in render mode, built by rendering its whole chat once (an episode that
        cannot be rendered gets ``error`` set and no completion)."""
        track = self.tracks.get(index) or _Track()
        if self.mode != "render" or not track.messages or track.messages[-1]["role"] != "assistant":
            if self.mode == "render":
                track.completion_ids = []
            return track
        try:
            ids, mask = self.renderer.assistant_mask(track.messages)
        except Exception as exc:
            track.error, track.completion_ids = f"cannot render the episode: {exc}", []
            return track
        first = mask.index(1) if 1 in mask else len(ids)
        track.prompt_ids, track.completion_ids, track.env_mask = ids[:first], ids[first:], mask[first:]
        track.logprobs = [0.0] * len(track.completion_ids)
        return track


def prefix_stable(renderer: Any) -> bool:
    """Whether the template renders every conversation as a prefix of its continuation: the generation prompt
    then the turn, and a finished turn then the next user message (probed on a short chat)."""
    chat = [{"role": "system", "content": "s"}, {"role": "user", "content": "u1"},
            {"role": "assistant", "content": "a1"}, {"role": "user", "content": "u2"},
            {"role": "assistant", "content": "a2"}]
    try:
        for k in (2, 4):
            head = renderer.render(chat[:k], add_generation_prompt=True)
            done = renderer.render(chat[:k + 1], add_generation_prompt=False)
            if not done.startswith(head):
                return False
        return renderer.render(chat[:4], add_generation_prompt=True).startswith(
            renderer.render(chat[:3], add_generation_prompt=False))
    except Exception:
        return False


def _eos_ids(tokenizer: Any, model: Any | None) -> list[int]:
    from tutorzoo.train.common import chat_renderer

    ids = [tokenizer.eos_token_id]
    for e in chat_renderer(tokenizer, model).stop_ids:
        if e is not None and e not in ids:
            ids.append(e)
    return ids


def _turn_closing(renderer: Any) -> tuple[str, str]:
    """What the chat template writes after an assistant message's content: (after a generated EOS, in full)."""
    probe = "q7Zx"
    head = renderer.render([{"role": "user", "content": "u"}], add_generation_prompt=True)
    full = renderer.render([{"role": "user", "content": "u"}, {"role": "assistant", "content": probe}],
                           add_generation_prompt=False)
    if not full.startswith(head) or probe not in full[len(head):]:
        raise ConfigError("the tokenizer's chat template does not render an assistant turn after its generation "
                          "prompt; multi-turn GRPO needs a prefix-stable chat template")
    closing = full[len(head):].split(probe, 1)[1]
    for stop in (renderer.turn_end, renderer.tokenizer.eos_token):
        if stop and closing.startswith(stop):  # the model generated this token itself
            return closing[len(stop):], closing
    return closing, closing


# ---------------------------------------------------------------------------------------------- rollout_func
class EpisodeRollout:
    """TRL's ``rollout_func``: ``rollout(prompts, trainer) -> dict`` playing one whole episode per prompt.

    ``prompts`` are :func:`spec_prompt` strings, already repeated ``num_generations`` times by TRL's sampler;
    the result has one rollout per prompt, in order: ``prompt_ids``, ``completion_ids``, ``env_mask``,
    ``logprobs`` and ``episode`` (the records the reward functions read). Tutor sampling is seeded from
    ``seed``, the process index and a call counter: a rerun with the same seed gives the same rollouts, and
    the members of a group (same spec, same student seed) differ only by their sampled turns.

    Example::

        rollout = EpisodeRollout(tokenizer, load_rubric("default"), seed=0, max_new_tokens=48)
        out = rollout([spec_prompt(spec)] * 4, trainer)   # inside GRPOTrainer; tests pass a stand-in trainer
    """

    def __init__(self, tokenizer: Any, rubric: Any, seed: int = 0, max_new_tokens: int = 48,
                 max_completion_length: int = 768, context_length: int | None = None, batch_size: int | None = None,
                 student_factory: Callable[[str], Any] | None = None) -> None:
        self.tokenizer = tokenizer
        self.rubric = rubric
        self.seed = seed
        self.max_new_tokens = max_new_tokens
        self.max_completion_length = max_completion_length
        self.context_length = context_length
        self.batch_size = batch_size
        self.student_factory = student_factory
        self.calls = 0
        self.last_stats: dict[str, float] = {}
        self.episodes = 0  # every episode played so far, and those that failed (recorded, unscored)
        self.failed = 0
        self.first_error: str | None = None
        self.mode: str | None = None  # the TokenTutor's mode ("tokens" or "render")
        self._vllm_client: Any | None = None

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        from tutorzoo.agents.student import SimulatedStudent
        from tutorzoo.envs.engine import play

        specs = [parse_spec_prompt(p) for p in prompts]
        self.calls += 1
        accelerator = trainer.accelerator
        seed = int(np.random.SeedSequence([self.seed, accelerator.process_index, self.calls]).generate_state(1)[0])
        with self._generator(trainer) as (generator, context_length):
            tutor = TokenTutor(self.tokenizer, generator, self.max_new_tokens, context_length,
                               self.max_completion_length, seed, eos_ids=getattr(generator, "eos_ids", None)
                               or getattr(trainer, "eos_token_ids", None))
            self.mode = tutor.mode
            records = play(specs, tutor, self.student_factory or SimulatedStudent,
                           batch_size=self.batch_size or len(specs), reward=self.rubric, tutor_name="policy")
        out: dict[str, list] = {"prompt_ids": [], "completion_ids": [], "env_mask": [], "logprobs": [], "episode": []}
        vllm = bool(getattr(trainer.args, "use_vllm", False))
        for index, record in enumerate(records):
            track = tutor.finish(index)
            if track.prompt_ids is None:  # failed before its first turn: still one (unscored) row
                track.prompt_ids = [self.tokenizer.eos_token_id]
            if not track.completion_ids or track.error:
                failures = [*record.get("failures", []), *([{"agent": "tutor", "error": track.error}]
                                                             if track.error else [])]
                record = {**record, "ended_by": "failure", "failures": failures}
                track.completion_ids, track.env_mask, track.logprobs = [self.tokenizer.eos_token_id], [0], [0.0]
            self.episodes += 1
            if record.get("ended_by") == "failure":
                self.failed += 1
                if self.first_error is None:
                    first = (record.get("failures") or [{}])[0]
                    self.first_error = str(first.get("error") or "no tutor turn was produced")
            out["prompt_ids"].append(track.prompt_ids)
            out["completion_ids"].append(track.completion_ids)
            out["env_mask"].append(track.env_mask)
            out["logprobs"].append(track.logprobs)
            out["episode"].append(record)
        if not vllm or self.mode == "render":
            # TRL recomputes them (its transformers path); in render mode the trained tokens are the template's
            # re-tokenised text, not the sampled ids, so the sampler's logprobs would not match them
            out["logprobs"] = None  # type: ignore[assignment]
        self.last_stats = rollout_stats(out["episode"])
        return out

    @contextlib.contextmanager
    def _generator(self, trainer: Any) -> Iterator[tuple[Any, int]]:
        args = trainer.args
        if getattr(args, "use_vllm", False):
            # every process waits until the main one has pushed this step's weights to the server
            trainer.accelerator.wait_for_everyone()
            yield VLLMServerGenerator(self._client(trainer), args.temperature, args.top_p), self._context(None)
            return
        from trl.models import unwrap_model_for_generation

        with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator,
                                         gather_deepspeed3_params=getattr(args, "ds3_gather_for_generation", True),
                                         gradient_checkpointing_kwargs=getattr(args, "gradient_checkpointing_kwargs",
                                                                               None)) as model:
            pad = self.tokenizer.pad_token_id
            yield (HFGenerator(model, pad, _eos_ids(self.tokenizer, model), args.temperature, args.top_p),
                   self._context(model))

    def _context(self, model: Any | None) -> int:
        if self.context_length is not None:
            return self.context_length
        config = getattr(model, "config", None)
        value = getattr(config, "max_position_embeddings", None)
        return value if isinstance(value, int) and value > 0 else 1 << 30

    def _client(self, trainer: Any) -> Any:
        gen = getattr(trainer, "vllm_generation", None)
        if getattr(gen, "vllm_client", None) is not None:
            return gen.vllm_client
        if self._vllm_client is None:  # a non-main process: plain HTTP to the same server, no weight sync
            from trl.generation.vllm_client import VLLMClient

            self._vllm_client = VLLMClient(base_url=trainer.args.vllm_server_base_url,
                                           connection_timeout=trainer.args.vllm_server_timeout)
        return self._vllm_client


def rollout_stats(records: Sequence[Mapping]) -> dict[str, float]:
    """The per-step rollout metrics logged beside the rewards (``rollout/...``)."""
    n = max(len(records), 1)
    gains = [g for r in records if not failed(r) and (g := learning_gain(r)) is not None]
    return {
        "rollout/failed": sum(r.get("ended_by") == "failure" for r in records) / n,
        "rollout/tutor_turns": float(np.mean([r.get("n_tutor_turns") or 0 for r in records])) if records else 0.0,
        "rollout/ended_by_end_marker": sum(r.get("ended_by") == "end_marker" for r in records) / n,
        "rollout/learning_gain": float(np.mean(gains)) if gains else float("nan"),
    }
