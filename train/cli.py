"""``tutorzoo train RECIPE [--config FILE] [--set KEY=VALUE ...]``: run one training recipe from its config.

Recipes: ``corpus`` (KMP-Pile-style dialogues from the socratic tutor), ``sft`` (LoRA on tutor turns),
``grpo`` (multi-turn, whole episodes in the env), ``grpo_env`` (the same through TRL's
``environment_factory``: the tutor calls tools), ``dpo`` (env-ranked preference pairs), ``ppo`` (dialogue acts
with Stable-Baselines3). Each module defines ``Config`` (a :class:`tutorzoo.train.common.RecipeConfig`) and
``run(config) -> dict``; the default config file is ``configs/train/RECIPE.yaml``.

Example::

    tutorzoo train corpus --config configs/train/corpus.yaml
    tutorzoo train sft --config configs/train/sft.yaml --set max_steps=20 --set wandb.mode=disabled
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Sequence

from rich.console import Console

from tutorzoo.envs.errors import TutorZooError
from tutorzoo.train.common import CONFIG_DIR, load_recipe_config

RECIPES: dict[str, str] = {
    "corpus": "tutorzoo.train.corpus",
    "sft": "tutorzoo.train.sft",
    "grpo": "tutorzoo.train.grpo",
    "grpo_env": "tutorzoo.train.grpo_env",
    "dpo": "tutorzoo.train.dpo",
    "ppo": "tutorzoo.train.ppo_acts",
}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tutorzoo train", description=__doc__.split("\n\n")[0])
    p.add_argument("recipe", choices=sorted(RECIPES),
                   help="corpus (socratic dialogues), sft (LoRA on tutor turns), grpo (whole episodes), dpo "
                   "(env-ranked pairs) or ppo (dialogue acts)")
    p.add_argument("--config", default=None, help="YAML config (default configs/train/RECIPE.yaml)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config field (dots for nested keys), repeatable")
    args = p.parse_args(argv)
    console = Console()
    try:
        module = importlib.import_module(RECIPES[args.recipe])
        path = args.config or CONFIG_DIR / f"{args.recipe}.yaml"
        cfg = load_recipe_config(module.Config, path, args.set)
        results = module.run(cfg)
    except TutorZooError as exc:
        # markup off keeps '.[hf]' as is; soft_wrap keeps the error on one line at any terminal width
        console.print(f"tutorzoo train {args.recipe}: {exc}", style="red", markup=False, soft_wrap=True)
        return 2
    console.print_json(json.dumps(results, sort_keys=True, default=str))
    return 0
