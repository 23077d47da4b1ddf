"""What every training recipe shares: its config file, its W&B run, its LoRA adapter and its model card.

A recipe (``corpus``, ``sft``, ``grpo``, ``dpo``, ``ppo``) is a module of ``train/`` with a pydantic config
class derived from :class:`RecipeConfig` and a ``run(config) -> dict`` that returns its results (also written
to ``<out_dir>/results.json``). ``tutorzoo train RECIPE --config configs/train/RECIPE.yaml [--set key=value]``
loads the YAML into that class (an unknown or badly typed key is a :class:`ConfigError` that names it) and
calls ``run``.

Tracking: :func:`start_wandb` opens the run before the trainer does, named ``{recipe}__{exp}__{seed}__{time}``
with the recipe's full config minus secrets, so TRL's ``report_to="wandb"`` logs into the same run. ``mode``
follows ``wandb.mode`` in the config, else ``$WANDB_MODE``, else ``offline`` (nothing leaves the machine
unless asked); ``mode: disabled`` turns tracking off.

Example::

    from tutorzoo.train.common import load_recipe_config
    from tutorzoo.train.sft import SFTRecipeConfig, run
    cfg = load_recipe_config(SFTRecipeConfig, "configs/train/sft.yaml", ["max_steps=5"])
    results = run(cfg)
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutorzoo.envs.config import read_yaml_mapping
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.envs.resources import config_dir
from tutorzoo.eval.tracking import run_name, scrub_secrets

CONFIG_DIR = config_dir("train")


class WandbConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: str = "tutorzoo"
    entity: str | None = None
    mode: Literal["online", "offline", "disabled"] | None = Field(
        default=None, description="None: $WANDB_MODE, else offline.")
    tags: list[str] = Field(default_factory=list)


class LoraSettings(BaseModel):
    """PEFT ``LoraConfig`` arguments; ``target_modules`` 'all-linear' fits any causal LM."""

    model_config = ConfigDict(extra="forbid")

    r: int = Field(default=16, ge=1)
    alpha: int = Field(default=32, ge=1)
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0)
    target_modules: str | list[str] = "all-linear"

    def peft_config(self) -> Any:
        from peft import LoraConfig

        return LoraConfig(r=self.r, lora_alpha=self.alpha, lora_dropout=self.dropout,
                          target_modules=self.target_modules, task_type="CAUSAL_LM")


class RecipeConfig(BaseModel):
    """Fields every recipe has; recipes add their own."""

    model_config = ConfigDict(extra="forbid")

    exp: str = Field(default="default", description="Experiment name: part of the run name and out_dir.")
    seed: int = 0
    out_dir: str | None = Field(default=None, description="Default: runs/train/{recipe}__{exp}__{seed}.")
    wandb: WandbConfig = Field(default_factory=WandbConfig)

    def output_dir(self, recipe: str) -> Path:
        path = Path(self.out_dir) if self.out_dir else Path("runs/train") / f"{recipe}__{self.exp}__{self.seed}"
        path.mkdir(parents=True, exist_ok=True)
        return path


C = TypeVar("C", bound=RecipeConfig)


def _apply_override(data: dict, item: str) -> None:
    """``a.b=value`` sets ``data['a']['b']`` (the value parsed as YAML: numbers, booleans, lists)."""
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set takes KEY=VALUE (dots for nested keys), got {item!r}")
    node = data
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {item!r}: {part!r} is not a mapping in the config")
        node = child
    node[parts[-1]] = yaml.safe_load(raw)


def load_recipe_config(cls: type[C], path: str | Path | None, overrides: list[str] | None = None) -> C:
    """The recipe's config from a YAML file (or defaults) plus ``key=value`` overrides, validated."""
    data: dict = {}
    if path is not None:
        path = Path(path)
        if not path.exists():
            known = sorted(p.name for p in CONFIG_DIR.glob("*.yaml"))
            raise ConfigError(f"no training config {str(path)!r}; the shipped ones are in configs/train/: {known}")
        data = read_yaml_mapping(path, f"a mapping of {cls.__name__} fields")
    for item in overrides or []:
        _apply_override(data, item)
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        where = f"{path}: " if path is not None else ""
        raise ConfigError(f"{where}{loc}: {err['msg']} (got {err.get('input')!r}); "
                          f"see {cls.__name__} in train/ for the fields") from None


def start_wandb(recipe: str, cfg: RecipeConfig, out_dir: Path) -> Any | None:
    """Open the W&B run (or return None when tracking is disabled); files go to ``out_dir/wandb``."""
    mode = cfg.wandb.mode or os.environ.get("WANDB_MODE") or "offline"
    if mode == "disabled":
        return None
    import wandb

    os.environ.setdefault("WANDB_DIR", str(out_dir))
    os.environ.setdefault("WANDB_SILENT", "true")
    return wandb.init(project=cfg.wandb.project, entity=cfg.wandb.entity, mode=mode, tags=cfg.wandb.tags,
                      name=run_name(recipe, cfg.exp, cfg.seed), dir=os.environ["WANDB_DIR"],
                      config=scrub_secrets({"recipe": recipe, **cfg.model_dump()}), reinit="finish_previous")


def report_to(run: Any | None) -> str:
    """The ``report_to`` of TRL's configs: ``wandb`` while a run is open, else ``none``."""
    return "wandb" if run is not None else "none"


def finish_wandb(run: Any | None, summary: dict | None = None) -> None:
    if run is None:
        return
    if summary:
        run.summary.update(scrub_secrets(summary))
    run.finish()


def write_results(out_dir: Path, results: dict) -> Path:
    path = out_dir / "results.json"
    path.write_text(json.dumps(scrub_secrets(results), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def write_model_card(adapter_dir: Path, recipe: str, cfg: RecipeConfig, base_model: str, results: dict) -> Path:
    """A ``README.md`` next to the adapter: what it is, how it was trained, what it scored (no secrets)."""
    lines = [
        "---", "library_name: peft", f"base_model: {base_model}", "tags: [tutorzoo, " + recipe + "]", "---", "",
        f"# TutorZoo tutor adapter: {recipe} / {cfg.exp} / seed {cfg.seed}", "",
        f"A LoRA adapter for `{base_model}` trained with TutorZoo's `{recipe}` recipe.", "",
        "Load it as a tutor:", "", "```bash",
        f"tutorzoo eval --suite default --split held_out --tutor hf:{base_model} --tutor-arg adapter={adapter_dir}",
        "```", "", "## Results", "", "```json", json.dumps(scrub_secrets(results), indent=2, sort_keys=True), "```",
        "", "## Config", "", "```yaml",
        yaml.safe_dump(scrub_secrets(cfg.model_dump()), sort_keys=True).rstrip(), "```", "",
    ]
    adapter_dir.mkdir(parents=True, exist_ok=True)
    path = adapter_dir / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def evaluate_tutor(tutor: str, out_dir: Path, suite: str = "default", split: str = "held_out",
                   limit: int | None = None, batch_size: int = 16, tutor_kwargs: dict | None = None,
                   name: str | None = None) -> dict:
    """Play ``tutor`` on a suite's split as ``tutorzoo eval`` does (same specs, seeds and students; model tutors
    batched), write ``episodes.jsonl``, ``metrics.json`` and ``report.md`` to ``out_dir``, and return the headline
    numbers: ``n``, ``failed``, and mean / 95% CI of ``learning_gain`` and SID ``TotalScore``.

    Example::

        evaluate_tutor("hf:models/small", Path("runs/eval_sft"), tutor_kwargs={"adapter": "runs/sft/adapter"},
                       limit=64)
    """
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor.registry import make_tutor
    from tutorzoo.eval.batch import run_batched
    from tutorzoo.eval.leaderboard import build, write_report
    from tutorzoo.eval.rollout import JsonlWriter
    from tutorzoo.eval.suite import load_suite

    loaded = load_suite(suite)
    specs = loaded.specs(split)
    if limit is not None:
        specs = specs[:limit]
    name = name or tutor
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "episodes.jsonl"
    path.unlink(missing_ok=True)
    policy = make_tutor(tutor, **(tutor_kwargs or {}))
    with JsonlWriter(path) as writer:  # a model tutor plays batch_size episodes in lockstep, any other one by one
        records = run_batched(specs, policy, SimulatedStudent, batch_size=batch_size, on_record=writer,
                              tutor_name=name)
    board = build(records)
    title = f"{name} on suite {loaded.name} v{loaded.version} ({split})"
    write_report(board, out_dir, title, {"suite": loaded.name, "version": loaded.version, "split": split,
                                         "tutors": name, "episodes per tutor": len(specs)})
    metrics = board["metrics"]["groups"][name]["metrics"]
    out: dict[str, Any] = {"tutor": name, "suite": loaded.name, "split": split, "n": len(records),
                           "failed": board["n_failed_episodes"]}
    for key in (LEARNING_GAIN, "TotalScore"):
        summary = metrics[key]
        out[key] = summary["mean"]
        out[f"{key}_ci"] = [summary.get("ci_low"), summary.get("ci_high")]
    return out


PAD_CHOICES = ("auto", "reserved", "add")
PAD_FIELD_DOC = ("Pad token when the tokenizer has none or pads with EOS: 'auto' (an unused reserved token of the "
                 "vocabulary, else 'add'), 'reserved' (only a reserved token), 'add' (a new <|pad|> token; embeddings "
                 "resized when the model has no spare row), or a token of the vocabulary to use.")
_RESERVED = re.compile(r"reserved|unused|placeholder", re.IGNORECASE)
NEW_PAD = "<|pad|>"


def _needs_pad(tokenizer: Any, stop_ids: tuple[int, ...] = ()) -> bool:
    pad = tokenizer.pad_token_id
    return pad is None or pad == tokenizer.eos_token_id or pad in stop_ids


def fix_pad_token(tokenizer: Any, model: Any, choice: str = "auto", stop_ids: tuple[int, ...] = ()) -> str | None:
    """Give ``tokenizer`` (and ``model``'s configs) a pad token distinct from EOS and from every end-of-turn token:
    TRL masks pad positions, so padding with EOS would hide the end of the turn the tutor must learn. Returns what
    was done (``None``: the shipped pad was fine), e.g. ``"reserved <|reserved_special_token_0|>"``.

    ``choice`` is one of :data:`PAD_CHOICES` or a token of the vocabulary (see :data:`PAD_FIELD_DOC`).

    Example::

        fix_pad_token(tokenizer, model)          # Llama-3 (no pad): 'reserved <|reserved_special_token_0|>'
    """
    if not _needs_pad(tokenizer, stop_ids) and choice in PAD_CHOICES:
        return None
    used = {tokenizer.eos_token_id, tokenizer.bos_token_id, tokenizer.unk_token_id, *stop_ids}
    rows = model.get_input_embeddings().num_embeddings
    token: str | None = None
    how = choice
    if choice not in PAD_CHOICES:
        vocab = tokenizer.get_vocab()
        if choice not in vocab or vocab[choice] in used:
            raise ConfigError(f"pad_token {choice!r} is not a free token of the vocabulary (it must exist and be "
                              f"neither BOS, EOS nor an end-of-turn token); use one of {list(PAD_CHOICES)}")
        token, how = choice, "given"
    if token is None and choice in ("auto", "reserved"):
        template = getattr(tokenizer, "chat_template", "") or ""
        free = sorted((i, str(t)) for i, t in (getattr(tokenizer, "added_tokens_decoder", {}) or {}).items()
                      if _RESERVED.search(str(t)) and i not in used and i < rows and str(t) not in template)
        if free:
            token, how = free[0][1], "reserved"
        elif choice == "reserved":
            raise ConfigError("pad_token: reserved, but the tokenizer has no unused reserved token; set pad_token: add")
    if token is None:
        token, how = NEW_PAD, "added"
        tokenizer.add_special_tokens({"pad_token": token})
    tokenizer.pad_token = token
    if tokenizer.pad_token_id in used or tokenizer.convert_ids_to_tokens(tokenizer.pad_token_id) != token:
        raise ConfigError(f"could not make {token!r} the pad token (it maps to id {tokenizer.pad_token_id}); set "
                          "pad_token to a free token of the vocabulary")
    if len(tokenizer) > rows:
        model.resize_token_embeddings(len(tokenizer))
        how += f" (embeddings resized {rows} -> {len(tokenizer)})"
    for cfg in (model.config, getattr(model, "generation_config", None)):
        if cfg is not None:
            cfg.pad_token_id = tokenizer.pad_token_id
    return f"{how} {token}"


def load_chat_model(base: str, pad_token: str = "auto") -> tuple[Any, Any]:
    """(model in fp32, tokenizer) of the causal LM ``base`` (local folder or cached hub id), checked for what every
    recipe needs: it loads, and its tokenizer has a chat template that renders TutorZoo's conversations (through
    :class:`tutorzoo.agents.backends.chat_render.ChatRenderer`); else a ConfigError. A missing pad token, or one equal
    to
    EOS or an end-of-turn token, is fixed by :func:`fix_pad_token` (``pad_token`` chooses how); what was done is
    in ``tokenizer.init_kwargs["tutorzoo_pad_fix"]``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tutorzoo.agents.backends.chat_render import RenderError

    try:
        tokenizer = AutoTokenizer.from_pretrained(base)
        model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load model {base!r}: {exc}; give a local model folder or a cached hub id (the "
                          "offline one: `python -m tutorzoo.train.tiny_model --out DIR --size small`)") from None
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(f"{base!r}: the tokenizer has no chat template; use a chat/instruct model")
    try:
        renderer = chat_renderer(tokenizer, model)
        renderer.assistant_mask([{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                                 {"role": "user", "content": "v"}, {"role": "assistant", "content": "a"}])
    except RenderError as exc:
        raise ConfigError(f"{base!r}: {exc}") from None
    # the end-of-turn token is what the tutor learns to stop with: padding must not look like it
    ends = tuple(i for i in (renderer.turn_end_id,) if i is not None)
    fix = fix_pad_token(tokenizer, model, pad_token, ends)
    if fix is not None:
        tokenizer.init_kwargs["tutorzoo_pad_fix"] = fix
    return model, tokenizer


def chat_renderer(tokenizer: Any, model: Any | None = None, enable_thinking: bool = False) -> Any:
    """The :class:`~tutorzoo.agents.backends.chat_render.ChatRenderer` of a recipe's tokenizer, with the model's
    ``generation_config`` end tokens as stops."""
    from tutorzoo.agents.backends.chat_render import ChatRenderer

    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    return ChatRenderer(tokenizer, enable_thinking=enable_thinking,
                        extra_stop_ids=eos if isinstance(eos, list) else [eos])


# Where the recipes write local models and runs: a base_model under one of them is a folder to build, never a hub id.
_LOCAL_PREFIXES = ("models/", "runs/", "./", "../", "/", "~")
_BUILD_SFT = ("tutorzoo train sft --config configs/train/sft.yaml (it builds models/tutor-small and "
              "runs/train/sft__default__0/adapter)")


def check_start(cfg: Any) -> None:
    """Refuse, before any model library is imported or the hub is asked, a start that cannot exist yet: an adapter
    folder that is not there, or a local ``base_model`` path that is missing. Each error is one line naming the
    command to run first or the setting to change."""
    if cfg.base_model is None:
        return
    if cfg.adapter is not None and not Path(cfg.adapter, "adapter_config.json").is_file():
        raise ConfigError(f"adapter {cfg.adapter!r} is not a local adapter folder (no adapter_config.json): run "
                          f"{_BUILD_SFT} first, or --set adapter=null for a new LoRA")
    base = str(cfg.base_model)
    if base.startswith(_LOCAL_PREFIXES) and not Path(base).expanduser().is_dir():
        raise ConfigError(f"base_model {base!r} is not a folder yet: run {_BUILD_SFT} first, or build a small "
                          f"base with python -m tutorzoo.train.tiny_model --size small --out {base}, or --set "
                          "base_model=null for the tiny offline model")


def resolve_start(cfg: Any, out_dir: Path) -> tuple[str, str | None, str]:
    """Where a recipe that continues from a model (GRPO, DPO) starts: ``(base model, adapter or None, origin)``.

    ``base_model`` (+ ``adapter``, a local adapter folder: a missing one is a :class:`ConfigError` that names the
    SFT recipe) from the config (origin ``config``); else an SFT bundle ``sft_dir`` holding ``base/``,
    ``adapter/`` and ``READY`` (origin ``sft``); else the tiny offline model built into ``out_dir/tiny`` (origin
    ``tiny``: smoke runs).
    """
    if cfg.base_model is not None:
        check_start(cfg)
        return cfg.base_model, cfg.adapter, "config"
    if cfg.sft_dir is not None and Path(cfg.sft_dir, "READY").is_file():
        base, adapter = Path(cfg.sft_dir, "base"), Path(cfg.sft_dir, "adapter")
        missing = [str(p) for p in (base, adapter / "adapter_config.json") if not p.exists()]
        if missing:
            raise ConfigError(f"{cfg.sft_dir}/READY exists but {missing} do not; rerun the SFT recipe or set "
                              "sft_dir: null")
        return str(base), str(adapter), "sft"
    from tutorzoo.train.tiny_model import build_tiny_model

    tiny = out_dir / "tiny"
    if not (tiny / "config.json").is_file():
        build_tiny_model(tiny, seed=cfg.seed)
    return str(tiny), None, "tiny"
