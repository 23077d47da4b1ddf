"""The conversation-rendering path on each chat-template family (tiny tokenizers with the real templates and special
tokens as shipped, train/tiny_families.py): roles merged, system folded, date pinned, thinking off, BOS once, stop
tokens, and the SFT / GRPO mask covering exactly the tutor's tokens."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from tutorzoo.agents.backends.chat_render import (  # noqa: E402
    PINNED_DATE,
    ChatRenderer,
    RenderError,
    fold_system,
    merge_roles,
    strip_reasoning,
)
from tutorzoo.train.tiny_families import FAMILIES, build_family_tokenizer  # noqa: E402

# the env's tutor-side chat: system, then two user messages in a row (pre-test summary, the student's opener)
CONVERSATION = [
    {"role": "system", "content": "You are a patient maths tutor."},
    {"role": "user", "content": "Pre-test: the student answered 5 (wrong)."},
    {"role": "user", "content": "What is 3/4 of 8?"},
    {"role": "assistant", "content": "What is 8 divided by 4?"},
    {"role": "user", "content": "2"},
    {"role": "assistant", "content": "Good. Now times 3?"},
]
TURN_END = {"qwen2_5": "<|im_end|>", "qwen3": "<|im_end|>", "llama3_2": "<|eot_id|>", "gemma2": "<end_of_turn>",
            "gemma3": "<end_of_turn>", "phi3": "<|end|>", "phi3_5": "<|end|>", "smollm2": "<|im_end|>"}


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object]:
    from transformers import AutoTokenizer

    path = Path(tmp_path_factory.mktemp(request.param))
    build_family_tokenizer(request.param).save_pretrained(path)  # saved and reloaded as a user's model would be
    return request.param, AutoTokenizer.from_pretrained(path)


def test_the_raw_env_chat_is_refused_by_some_templates_as_shipped(family: tuple[str, object]) -> None:
    name, tok = family
    if name not in ("gemma2", "gemma3"):
        pytest.skip("this template takes the env's chat as it is")
    with pytest.raises(Exception):  # noqa: B017 - jinja's own exception: what the issue's table saw
        tok.apply_chat_template(CONVERSATION[:3], add_generation_prompt=True, tokenize=False)


def test_every_family_renders_the_env_chat_with_its_system_prompt(family: tuple[str, object]) -> None:
    name, tok = family
    renderer = ChatRenderer(tok)
    text = renderer.render(CONVERSATION[:3])
    assert "You are a patient maths tutor." in text
    assert text.index("patient maths tutor") < text.index("Pre-test") < text.index("What is 3/4")
    assert renderer.supports_system == (name != "gemma2")


def test_the_date_is_pinned(family: tuple[str, object]) -> None:
    _name, tok = family
    text = ChatRenderer(tok).render(CONVERSATION[:3])
    assert datetime.date.today().strftime("%d %b %Y") not in text
    if "Today Date" in text:
        assert PINNED_DATE in text


def test_thinking_is_off_by_default_and_can_be_turned_on(family: tuple[str, object]) -> None:
    name, tok = family
    off = ChatRenderer(tok).render(CONVERSATION[:3])
    on = ChatRenderer(tok, enable_thinking=True).render(CONVERSATION[:3])
    if name == "qwen3":
        assert off.endswith("<think>\n\n</think>\n\n") and not on.endswith("</think>\n\n")
    else:
        assert off == on


def test_bos_once_as_the_family_has_it(family: tuple[str, object]) -> None:
    name, tok = family
    ids = ChatRenderer(tok).encode(CONVERSATION[:3])
    bos = tok.bos_token_id
    if FAMILIES[name].bos is None or name == "smollm2":  # Qwen: no BOS; SmolLM2's BOS is <|im_start|> (template)
        assert tok.decode(ids[:1]) == "<|im_start|>"
    else:
        assert ids[0] == bos and ids[1] != bos and ids.count(bos) == 1


def test_stops_on_the_turn_end_and_eos(family: tuple[str, object]) -> None:
    name, tok = family
    renderer = ChatRenderer(tok)
    assert renderer.turn_end == TURN_END[name]
    assert tok.convert_tokens_to_ids(TURN_END[name]) in renderer.stop_ids
    assert tok.eos_token_id in renderer.stop_ids


# contents that probe the cuts between pieces: whitespace on both sides, accents, CJK, an end token typed as text
AWKWARD = ["  two  spaces ", "\n\nnew lines\n", "\ttab é 中文 ", "</s> typed <|im_end|> <end_of_turn>x", "", "a"]


def test_prompts_are_tokenised_piece_by_piece_to_the_same_ids(family: tuple[str, object]) -> None:
    _, tok = family
    renderer = ChatRenderer(tok)
    assert renderer._splitter is not None  # every family here tokenises the text between added tokens apart
    for k in range(len(AWKWARD)):
        contents = AWKWARD[k:] + AWKWARD[:k]
        messages = [{"role": "system", "content": contents[0]}] + [
            {"role": "user" if j % 2 == 0 else "assistant", "content": c} for j, c in enumerate(contents[1:])]
        text = renderer.render(messages)
        whole = list(tok(text, add_special_tokens=False)["input_ids"])
        assert renderer.encode_text(text) == renderer._with_bos(whole, text)
        assert renderer.encode_text(text, bos=False) == whole  # again, from remembered pieces


def test_added_tokens_that_take_in_whitespace_tokenise_whole_texts() -> None:
    from tokenizers import AddedToken

    tok = build_family_tokenizer("qwen2_5")
    tok.add_tokens([AddedToken("<|note|>", lstrip=True)])
    renderer = ChatRenderer(tok)
    assert renderer._splitter is None
    text = renderer.render([{"role": "user", "content": "see   <|note|> here"}])
    assert renderer.encode_text(text, bos=False) == list(tok(text, add_special_tokens=False)["input_ids"])


def test_the_training_mask_covers_exactly_the_tutors_tokens(family: tuple[str, object]) -> None:
    name, tok = family
    ids, mask = ChatRenderer(tok).assistant_mask(CONVERSATION)
    assert len(ids) == len(mask)
    end = TURN_END[name]
    assert tok.decode([i for i, m in zip(ids, mask, strict=True) if m]) == (
        f"What is 8 divided by 4?{end}Good. Now times 3?{end}")
    # the unmasked rest holds the system prompt and every student turn, not a tutor word
    rest = tok.decode([i for i, m in zip(ids, mask, strict=True) if not m])
    assert "patient maths tutor" in rest and "divided" not in rest


@pytest.mark.parametrize(
    ("name", "messages", "expected"),
    [
        ("user run", [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
         [{"role": "user", "content": "a\n\nb"}]),
        ("empty member", [{"role": "user", "content": ""}, {"role": "user", "content": "b"}],
         [{"role": "user", "content": "b"}]),
        ("alternating kept", [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
         [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]),
    ],
)
def test_merge_roles(name: str, messages: list[dict], expected: list[dict]) -> None:
    assert merge_roles(messages) == expected, name


def test_fold_system() -> None:
    assert fold_system([{"role": "system", "content": "S"}, {"role": "user", "content": "u"}]) == [
        {"role": "user", "content": "S\n\nu"}]
    assert fold_system([{"role": "system", "content": "S"}, {"role": "assistant", "content": "a"}]) == [
        {"role": "user", "content": "S"}, {"role": "assistant", "content": "a"}]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("closed block", "<think>\nLet me see.\n</think>\n\nTry 3.", "Try 3."),
        ("empty block", "<think>\n\n</think>\n\nTry 3.", "Try 3."),
        ("prompt opened the block", "so 6.\n</think>\nWhat is 8/4?", "What is 8/4?"),
        ("cut off while thinking", "Hm. <think>the student is", "Hm."),
        ("no block", "What is 8/4?", "What is 8/4?"),
    ],
)
def test_strip_reasoning(name: str, text: str, expected: str) -> None:
    assert strip_reasoning(text) == expected, name


def test_a_student_opened_chat_opens_with_the_user_where_the_template_demands_it(
        family: tuple[str, object]) -> None:
    _name, tok = family
    chat = [{"role": "system", "content": "You are a student."}, {"role": "assistant", "content": "Hi, help?"},
            {"role": "user", "content": "Sure."}]
    assert "Hi, help?" in ChatRenderer(tok).render(chat)


def test_a_tokenizer_without_template_is_a_clear_error(family: tuple[str, object]) -> None:
    _name, tok = family
    import copy

    bare = copy.deepcopy(tok)
    bare.chat_template = None
    with pytest.raises(RenderError, match="no chat template"):
        ChatRenderer(bare)


def test_openai_backend_shapes_messages_and_strips_reasoning() -> None:
    """The OpenAI-compatible backend sends merged (and, when asked, folded) messages, the template kwargs, and
    strips a reasoning block from the reply (a real HTTP server on loopback)."""
    from tests.chat_server import ChatServer
    from tutorzoo.agents.backends.base import GenerationConfig
    from tutorzoo.agents.backends.openai_compat import OpenAIBackend

    with ChatServer() as server:
        server.script("<think>\nhm\n</think>\n\nWhat is 8 divided by 4?")
        backend = OpenAIBackend("m", base_url=server.url, fold_system=True, max_retries=0,
                                chat_template_kwargs={"enable_thinking": False})
        [result] = backend.generate([CONVERSATION[:3]], GenerationConfig(max_new_tokens=8))
    assert result.text == "What is 8 divided by 4?"
    [request] = server.requests
    assert request["messages"] == [{"role": "user", "content": "You are a patient maths tutor.\n\nPre-test: the "
                                    "student answered 5 (wrong).\n\nWhat is 3/4 of 8?"}]
    assert request["chat_template_kwargs"] == {"enable_thinking": False}


PAD_FIX = {  # how the recipes fix each family's pad token as shipped (None: the shipped pad is fine)
    "qwen2_5": None, "qwen3": None, "gemma2": None, "gemma3": None,
    "llama3_2": "reserved <|reserved_special_token_0|>",  # no pad shipped
    "phi3": "reserved <|placeholder1|>", "phi3_5": "reserved <|placeholder1|>",  # pad == EOS
    "smollm2": "added (embeddings resized",  # pad == EOS and no reserved token
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_recipes_fix_the_pad_token_as_shipped(name: str, tmp_path: Path) -> None:
    from tutorzoo.train.common import load_chat_model
    from tutorzoo.train.tiny_families import build_family_model

    model, tok = load_chat_model(str(build_family_model(name, tmp_path / name)))
    fix = tok.init_kwargs.get("tutorzoo_pad_fix")
    assert (fix is None) if PAD_FIX[name] is None else fix.startswith(PAD_FIX[name]), fix
    assert tok.pad_token_id not in (None, tok.eos_token_id, ChatRenderer(tok).turn_end_id)
    assert model.get_input_embeddings().num_embeddings >= len(tok)
    assert model.config.pad_token_id == tok.pad_token_id


@pytest.mark.parametrize(("choice", "expected"), [("add", "added"), ("<|reserved_special_token_1|>", "given"),
                                                  ("reserved", "reserved")])
def test_pad_token_choice(choice: str, expected: str, tmp_path: Path) -> None:
    from tutorzoo.train.common import load_chat_model
    from tutorzoo.train.tiny_families import build_family_model

    _model, tok = load_chat_model(str(build_family_model("llama3_2", tmp_path / "l")), pad_token=choice)
    assert tok.init_kwargs["tutorzoo_pad_fix"].startswith(expected)


def test_an_impossible_pad_choice_names_the_fix(tmp_path: Path) -> None:
    from tutorzoo.envs.errors import ConfigError
    from tutorzoo.train.common import load_chat_model
    from tutorzoo.train.tiny_families import build_family_model

    path = str(build_family_model("smollm2", tmp_path / "s"))
    with pytest.raises(ConfigError, match="no unused reserved token; set pad_token: add"):
        load_chat_model(path, pad_token="reserved")
    with pytest.raises(ConfigError, match="not a free token"):
        load_chat_model(path, pad_token="<|im_end|>")


def test_grpo_picks_token_tracking_only_for_prefix_stable_templates(family: tuple[str, object]) -> None:
    from tutorzoo.train.grpo_rollout import prefix_stable

    name, tok = family
    assert prefix_stable(ChatRenderer(tok)) == (name not in ("qwen3", "phi3", "phi3_5"))
