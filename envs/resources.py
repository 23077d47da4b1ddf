"""Where the shipped configuration is found: one lookup for every package, through :mod:`importlib.resources`.

The repository keeps its YAML configuration at the top, in ``configs/`` (lessons, personas, rewards, suites, train
recipes), where users read and edit it. ``envs/configs`` is a symbolic link to that folder, so the files are
package data of :mod:`envs`: setuptools copies what the link points to into the wheel as ``envs/configs/...``,
and the same lookup, ``importlib.resources.files("tutorzoo.envs") / "configs"``, finds them in a checkout, an editable
install and an installed wheel. Prompts, task banks and judge rubrics already live beside the code that reads
them (``agents/prompts``, ``envs/prompts``, ``envs/tasks/data``, ``eval/judges``), as does the stylesheet and script
of ``report.html`` (``eval/assets``), and ship as those packages' data.

A checkout on a file system without symbolic links (``git config core.symlinks false``) gets a text file instead
of the link; :func:`config_dir` then says so.

Example::

    from tutorzoo.envs.resources import config_dir
    sorted(p.stem for p in config_dir("suites").glob("*.yaml"))[:2]   # ['default', 'dr-academy']
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

from tutorzoo.envs.errors import ConfigError

ConfigKind = Literal["lessons", "personas", "rewards", "suites", "train"]
CONFIG_KINDS: tuple[ConfigKind, ...] = ("lessons", "personas", "rewards", "suites", "train")


def config_root() -> Path:
    """The folder that holds one sub-folder per :data:`CONFIG_KINDS` (``configs/`` of a checkout, resolved)."""
    root = files("tutorzoo.envs") / "configs"
    if not isinstance(root, Path):  # a zip import: loaders glob and open paths, so the package must be unzipped
        raise ConfigError(f"TutorZoo's configs are inside an archive ({root}); install the wheel with pip, "
                          "which unpacks it, instead of importing the package from a zip file")
    if not root.is_dir():
        raise ConfigError(f"{root} is not a folder: it should be the package data copied from configs/, or in a "
                          "checkout a symbolic link to ../configs (clone with `git config core.symlinks true`)")
    return root.resolve()


def config_dir(kind: ConfigKind) -> Path:
    """The folder of one kind of shipped YAML config, e.g. ``config_dir("lessons")``."""
    if kind not in CONFIG_KINDS:
        raise ConfigError(f"unknown config kind {kind!r}; expected one of {list(CONFIG_KINDS)}")
    return config_root() / kind


__all__ = ["CONFIG_KINDS", "ConfigKind", "config_dir", "config_root"]
