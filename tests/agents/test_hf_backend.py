"""The local Hugging Face backend and the tiny offline model: loading, generation contract, truncation, LoRA,
and full rollouts through the env (all offline, on CPU)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tutorzoo.agents.backends import make_backend  # noqa: E402
from tutorzoo.agents.backends.base import GenerationConfig  # noqa: E402
from tutorzoo.agents.backends.hf import HFBackend  # noqa: E402
from tutorzoo.agents.student import SimulatedStudent  # noqa: E402
from tutorzoo.agents.tutor.llm import LLMTutor  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.envs.errors import ConfigError  # noqa: E402
from tutorzoo.eval.rollout import run_episode  # noqa: E402
from tutorzoo.train.tiny_model import build_tiny_model  # noqa: E402

SYSTEM = {"role": "system", "content": "You are a patient tutor."}


def convo(text: str) -> list[dict]:
    return [SYSTEM, {"role": "user", "content": text}]


@pytest.fixture(scope="module")
def backend(tiny_model_dir: Path) -> HFBackend:
    return HFBackend(str(tiny_model_dir), batch_size=4, threads=1)


@pytest.fixture(scope="module")
def lora_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter on the tiny model with random (non-zero) B matrices, so it changes the outputs."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)
        peft_model = get_peft_model(base, LoraConfig(r=4, lora_alpha=64, target_modules=["q_proj", "v_proj"],
                                                     init_lora_weights=False))
    out = tmp_path_factory.mktemp("lora")
    peft_model.save_pretrained(out)
    return out


def digest(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


# -- the tiny model ----------------------------------------------------------------------------------------
def test_tiny_model_loads_with_distinct_pad_and_chat_template(tiny_model_dir: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    assert tok.pad_token_id is not None and tok.pad_token_id != tok.eos_token_id
    assert tok.padding_side == "left"
    text = tok.apply_chat_template(convo("What is 3/4?"), add_generation_prompt=True, tokenize=False)
    assert text.startswith("<s><|system|>\nYou are a patient tutor.</s>") and text.endswith("<|assistant|>\n")
    cfg = model.config
    assert (cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers, cfg.num_attention_heads) == (64, 128, 2, 4)
    assert cfg.vocab_size == len(tok) == 2000
    assert 150_000 < sum(p.numel() for p in model.parameters()) < 500_000
    # trained on the env's text: its words are single tokens or close to it, not byte soup
    assert len(tok("The answer is (B).", add_special_tokens=False)["input_ids"]) <= 8


def test_tiny_model_build_is_deterministic_under_the_seed(tmp_path: Path) -> None:
    a = build_tiny_model(tmp_path / "a", seed=3, vocab_size=600, corpus_episodes=3)
    b = build_tiny_model(tmp_path / "b", seed=3, vocab_size=600, corpus_episodes=3)
    c = build_tiny_model(tmp_path / "c", seed=4, vocab_size=600, corpus_episodes=3)
    assert digest(a) == digest(b)
    assert digest(a)["model.safetensors"] != digest(c)["model.safetensors"]


# -- the generation contract ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        (GenerationConfig(max_new_tokens=12, seed=5), GenerationConfig(max_new_tokens=12, seed=5), True),
        (GenerationConfig(max_new_tokens=12, seed=5), GenerationConfig(max_new_tokens=12, seed=6), False),
        (GenerationConfig(max_new_tokens=12, temperature=0.0, seed=1),
         GenerationConfig(max_new_tokens=12, temperature=0.0, seed=2), True),
    ],
    ids=["same-seed-same-text", "other-seed-other-text", "greedy-ignores-seed"],
)
def test_reproducible_sampling(backend: HFBackend, first: GenerationConfig, second: GenerationConfig,
                               same: bool) -> None:
    prompts = [convo(f"Explain step {i} of adding fractions.") for i in range(6)]  # two chunks of 4 and 2
    a = [r.text for r in backend.generate(prompts, first)]
    b = [r.text for r in backend.generate(prompts, second)]
    assert all(a)
    assert (a == b) is same


def test_results_follow_input_order_and_count_tokens(backend: HFBackend) -> None:
    prompts = [convo("Hi"), convo("What is 1/2 + 1/4? " * 5), convo("ok")]
    results = backend.generate(prompts, GenerationConfig(max_new_tokens=9, seed=0))
    singles = [backend.generate([p], GenerationConfig(max_new_tokens=9, temperature=0))[0] for p in prompts]
    assert [r.prompt_tokens for r in results] == [len(backend.encode(p, 9)[0]) for p in prompts]
    assert results[1].prompt_tokens > results[0].prompt_tokens
    assert all(1 <= r.completion_tokens <= 9 and r.ok for r in results + singles)
    assert all(r.meta["finish_reason"] in ("stop", "length") for r in results)


def test_greedy_rows_do_not_depend_on_their_batch_neighbours(backend: HFBackend) -> None:
    prompts = [convo("Short."), convo("A much longer question about equivalent fractions and sums? " * 4)]
    cfg = GenerationConfig(max_new_tokens=10, temperature=0.0)
    together = [r.text for r in backend.generate(prompts, cfg)]
    alone = [backend.generate([p], cfg)[0].text for p in prompts]
    assert together == alone  # left padding with an attention mask leaves each row's greedy reply as it is


@pytest.mark.parametrize("config", [GenerationConfig(max_new_tokens=12, temperature=0.0),
                                    GenerationConfig(max_new_tokens=12, temperature=1.0, seed=3)],
                         ids=["greedy", "seeded-sampling"])
def test_rows_prefilled_alone_reply_as_a_padded_batch_prefill_does(backend: HFBackend, config: GenerationConfig,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = [convo("Short."), convo("What is 1/2 + 1/4? " * 6), convo("A question about ratios? " * 3)]
    prefilled = backend.generate(prompts, config)
    calls: list[int] = []
    real = HFBackend._prefill_rows

    tail = len(backend._generation_suffix)  # every prompt ends with the generation prompt: generate starts there
    assert tail == 2  # the tiny template's "<|assistant|>" and "\n"

    def spy(self: HFBackend, rows: list, width: int, room: int):
        cache = real(self, rows, width, room)
        calls.append(len(rows))
        assert cache is not None and all(layer.keys.shape[2] == width - tail for layer in cache.layers)
        return cache

    monkeypatch.setattr(HFBackend, "_prefill_rows", spy)
    assert [r.text for r in backend.generate(prompts, config)] == [r.text for r in prefilled]
    assert calls == [3]  # the tiny Llama's cache is plain key/value layers: every row was prefilled alone
    monkeypatch.setattr(HFBackend, "_prefill_rows", lambda self, rows, width, room: None)  # generate's own prefill
    plain = backend.generate(prompts, config)
    assert [(r.text, r.completion_tokens) for r in plain] == [(r.text, r.completion_tokens) for r in prefilled]


def test_a_model_whose_cache_is_not_plain_layers_keeps_generates_own_prefill(
        tiny_model_dir: Path, backend: HFBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers.cache_utils

    prompts = [convo("Short."), convo("What is 1/2 + 1/4? " * 6)]
    cfg = GenerationConfig(max_new_tokens=10, temperature=0.0)
    expected = [r.text for r in backend.generate(prompts, cfg)]
    monkeypatch.setattr(transformers.cache_utils, "DynamicLayer", type("SlidingLayer", (), {}))  # as Gemma's are
    other = HFBackend(str(tiny_model_dir), batch_size=4, threads=1)
    assert [r.text for r in other.generate(prompts, cfg)] == expected
    assert other._plain_cache is False and other._prefill_rows([[1, 2, 3]], 3, 1) is None  # not asked again


def test_the_reserved_cache_layer_writes_in_place_then_grows(backend: HFBackend) -> None:
    from tutorzoo.agents.backends.hf import _reserved_layer_class

    keys, values = torch.ones(1, 2, 3, 4), torch.full((1, 2, 3, 4), 2.0)
    layer = _reserved_layer_class()(keys, values, batch=2, length=5, room=1)
    layer.put(1, keys[0], values[0])  # a row of 3 tokens, right-aligned in 5 positions
    assert layer.keys[1, :, 2:].eq(1).all() and layer.keys[1, :, :2].eq(0).all() and layer.keys[0].eq(0).all()
    buffer = layer._keys.data_ptr()
    k, v = layer.update(torch.full((2, 2, 1, 4), 7.0), torch.full((2, 2, 1, 4), 8.0))
    assert k.shape[2] == 6 and k.data_ptr() == buffer and k[:, :, 5].eq(7).all() and v[:, :, 5].eq(8).all()
    k, v = layer.update(torch.full((2, 2, 1, 4), 9.0), torch.full((2, 2, 1, 4), 9.0))  # past the room: it grows
    assert k.shape[2] == 7 and k[:, :, 5].eq(7).all() and k[:, :, 6].eq(9).all()
    stale = (torch.full((100,), float("nan")), torch.full((100,), float("nan")))  # a buffer the last call left
    layer = _reserved_layer_class()(keys, values, batch=2, length=5, room=1, buffers=stale)
    layer.put(0, keys[0], values[0])
    assert layer.keys[0, :, :2].eq(0).all() and layer.values[0, :, :2].eq(0).all()  # padding: finite zeros
    assert layer.keys[0, :, 2:].eq(1).all() and layer._keys.data_ptr() == stale[0].data_ptr()


def test_reused_cache_buffers_reply_as_fresh_ones(backend: HFBackend) -> None:
    prompts = [convo("Short."), convo("A much longer question about equivalent fractions and sums? " * 4)]
    cfg = GenerationConfig(max_new_tokens=10, seed=4)
    backend._spare_buffers = None
    fresh = [(r.text, r.completion_tokens) for r in backend.generate(prompts, cfg)]
    assert backend._spare_buffers is not None  # kept for the next call
    big = [(torch.full((k.numel() * 4,), float("nan")), torch.full((v.numel() * 4,), float("nan")))
           for k, v in backend._spare_buffers]
    backend._spare_buffers = big  # a last call's leftovers, here NaN: the padding must not see them
    reused = [(r.text, r.completion_tokens) for r in backend.generate(prompts, cfg)]
    assert backend._spare_buffers is not None and backend._spare_buffers[0][0] is big[0][0]
    assert reused == fresh


def test_stop_strings_cut_the_reply(backend: HFBackend) -> None:
    cfg = GenerationConfig(max_new_tokens=40, seed=2)
    [free] = backend.generate([convo("Tell me about ratios.")], cfg)
    assert free.text and len(free.text) > 4
    stop = free.text[2:4]
    cfg = GenerationConfig(max_new_tokens=40, seed=2, stop=(stop,))
    [cut] = backend.generate([convo("Tell me about ratios.")], cfg)
    assert cut.text == free.text[: free.text.find(stop)].strip()  # same seed: the same tokens up to the stop
    assert cut.meta["finish_reason"] == "stop" and cut.completion_tokens <= free.completion_tokens


@pytest.mark.parametrize(
    ("conversation", "error_part"),
    [
        ([{"role": "wizard", "content": "x"}], "message 0"),
        ([], "non-empty list"),
        ([{"role": "user", "content": "a"}, {"role": "system", "content": "late"}], "only the first message"),
        ([{"role": "system", "content": "many words " * 2000}, {"role": "user", "content": "hi"}], "system message"),
    ],
    ids=["bad-role", "empty", "late-system", "system-too-long"],
)
def test_a_bad_conversation_fails_alone(backend: HFBackend, conversation: list, error_part: str) -> None:
    results = backend.generate([convo("fine"), conversation, convo("also fine")], GenerationConfig(max_new_tokens=5))
    assert results[0].ok and results[2].ok
    assert not results[1].ok and error_part in results[1].error and results[1].error.startswith("conversation 1")


def test_a_chunk_that_crashes_is_retried_one_by_one(backend: HFBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    original = backend._generate_chunk
    poison = len(backend.encode(convo("poison " * 7), 5)[0])

    def flaky(prompts, config, seed):  # an error tied to one prompt, like running out of memory on it
        if any(len(p) == poison for p in prompts):
            raise RuntimeError("out of memory")
        return original(prompts, config, seed)

    monkeypatch.setattr(backend, "_generate_chunk", flaky)
    results = backend.generate([convo("a"), convo("poison " * 7), convo("b")], GenerationConfig(max_new_tokens=5))
    assert [r.ok for r in results] == [True, False, True]
    assert "out of memory" in results[1].error


def test_long_prompts_are_cut_from_the_left_keeping_the_system_message(tiny_model_dir: Path) -> None:
    small = HFBackend(str(tiny_model_dir), max_context=160, threads=1)
    history = [SYSTEM] + [{"role": ("user", "assistant")[i % 2], "content": f"turn {i}: " + "fractions " * 12}
                          for i in range(12)]
    ids, meta = small.encode(history, max_new_tokens=20)
    system_ids = small._render([SYSTEM], generation_prompt=False)
    assert len(ids) <= 140 and meta["truncated_messages"] > 0 and meta["truncated_tokens"] == 0
    assert ids[: len(system_ids)] == system_ids
    assert small.tokenizer.decode(ids).rstrip().endswith("<|assistant|>")  # the newest turn is what is kept
    assert "turn 11" in small.tokenizer.decode(ids) and "turn 0:" not in small.tokenizer.decode(ids)
    one_huge = [SYSTEM, {"role": "user", "content": "start " + "words " * 400 + "the end"}]
    ids, meta = small.encode(one_huge, max_new_tokens=20)
    assert len(ids) == 140 and meta["truncated_tokens"] > 0 and ids[: len(system_ids)] == system_ids
    [result] = small.generate([one_huge], GenerationConfig(max_new_tokens=20, seed=0))
    assert result.ok and result.meta["truncated_tokens"] > 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"path_or_id": "/nonexistent/model"}, "cannot load HF model"),
        ({"dtype": "float8"}, "dtype 'float8'"),
        ({"batch_size": 0}, "batch_size"),
        ({"device": "warp-drive"}, "not a torch device"),
    ],
    ids=["missing-path", "bad-dtype", "bad-batch", "bad-device"],
)
def test_misconfiguration_is_a_clear_error(tiny_model_dir: Path, kwargs: dict, message: str) -> None:
    args = {"path_or_id": str(tiny_model_dir), **kwargs}
    with pytest.raises(ConfigError, match=message):
        HFBackend(**args)


# -- rollouts ----------------------------------------------------------------------------------------------
def rollout(backend: HFBackend, seed: int = 0, task_set: str = "math") -> dict:
    spec = EpisodeSpec(task_set=task_set, persona="all_round_partly_wrong", seed=seed, protocol={"max_turns": 3})
    tutor = LLMTutor(backend, GenerationConfig(max_new_tokens=24))
    return run_episode(spec, tutor, SimulatedStudent(spec.persona), tutor_name=backend.name)


def test_make_backend_rollout_end_to_end_is_reproducible(tiny_model_dir: Path, backend: HFBackend) -> None:
    made = make_backend(f"hf:{tiny_model_dir}", threads=1)
    assert isinstance(made, HFBackend) and made.name == f"hf:{tiny_model_dir}"
    first, again, other = rollout(made, seed=4), rollout(backend, seed=4), rollout(backend, seed=5)
    tutor_turns = [t for t in first["transcript"] if t["speaker"] == "tutor"]
    assert first["failures"] == [] and first["ended_by"] in ("max_turns", "end_marker", "leak")
    assert len(tutor_turns) >= 1 and all(t["utterance"] for t in tutor_turns)
    assert json.dumps(first["transcript"]) == json.dumps(again["transcript"])  # same seed, same transcript
    assert first["transcript"] != other["transcript"]


def test_lora_adapter_loads_and_changes_the_model(tiny_model_dir: Path, lora_dir: Path, backend: HFBackend) -> None:
    adapted = HFBackend(str(tiny_model_dir), adapter=str(lora_dir), threads=1)
    assert adapted.name.endswith(f"+{lora_dir}")
    cfg = GenerationConfig(max_new_tokens=12, temperature=0.0)
    prompt = [convo("What is a common denominator?")]
    assert adapted.generate(prompt, cfg)[0].text != backend.generate(prompt, cfg)[0].text
    record = rollout(adapted, seed=2, task_set="mcq")
    assert record["failures"] == [] and record["n_tutor_turns"] >= 1
    assert json.dumps(record["transcript"]) == json.dumps(rollout(adapted, seed=2, task_set="mcq")["transcript"])


def test_an_adapter_folder_without_config_is_refused(tiny_model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="adapter_config.json"):
        HFBackend(str(tiny_model_dir), adapter=str(tmp_path))
