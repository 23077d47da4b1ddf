"""The ``tutorzoo`` command line's shared options and checks: exit codes, optional extras named before any work,
``--out``, counts, ``--tutor [NAME=]SPEC``, ``--tutor-arg``, ``--student`` and ``--judge``.

Bad input here is a :class:`~tutorzoo.envs.errors.ConfigError` naming the fix; :func:`tutorzoo.eval.cli.main` prints it
and exits 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path

import yaml

from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.install import install_hint

EXIT_OK, EXIT_NOT_SCORED, EXIT_ERROR = 0, 1, 2

# Help of the session options `rollout` and `play` share (envs/tutoring_v0.py documents each).
PROTOCOL_HELP: dict[str, str] = {
    "persona": "the simulated student's persona (tutorzoo list personas), default %(default)s",
    "task_set": "math (procedural K-8 problems), stem (the 48 lessons) or mcq (a bank; --task-path), "
                "default %(default)s",
    "max_turns": "most tutor turns in the dialogue (the tutor may end earlier with [END]), default %(default)s",
    "opener": "who speaks first in the dialogue, default %(default)s",
    "posttest": "isomorphic: new items on the same knowledge; same: the pre-test's items again (EducationQ); "
                "both: both, with both gains (default %(default)s)",
}

# Optional packages, checked before any work: (modules, extra that installs them)
MODEL_EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "hf:": (("torch", "transformers"), "hf"),
    "openai:": (("openai",), "openai"),
}
TRAIN_EXTRAS: dict[str, tuple[str, ...]] = {
    "corpus": ("datasets",),
    "sft": ("torch", "transformers", "peft", "trl", "datasets"),
    "grpo": ("torch", "transformers", "peft", "trl", "datasets"),
    "dpo": ("torch", "transformers", "peft", "trl", "datasets"),
    "ppo": ("torch", "stable_baselines3"),
}


def _missing(modules: Sequence[str]) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require_extra(modules: Sequence[str], extra: str, what: str) -> None:
    """Fail before any work when ``what`` needs optional packages that are not installed, naming the extra."""
    missing = _missing(modules)
    if missing:
        raise ConfigError(f"{what} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
                          "installed: " + install_hint(extra))


def check_tutor_extras(tutors: Sequence[str]) -> None:
    for name in tutors:
        for prefix, (modules, extra) in MODEL_EXTRAS.items():
            if name.startswith(prefix):
                require_extra(modules, extra, f"tutor {name!r}")


def check_out_arg(out: Path) -> None:
    from tutorzoo.eval.run_folder import check_out_dir

    check_out_dir(out)


def check_positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise ConfigError(f"{name} must be >= 1, got {value}; give a positive count, e.g. {name} 5")

_DISPLAY_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


def tutor_names(given: Sequence[str] | None) -> tuple[list[str], dict[str, str]]:
    """``--tutor [NAME=]SPEC`` values: the display names (as in tables and records) and ``{name: spec}`` for
    those given a name, so that one model can be compared with itself (``base=hf:m``, ``tuned=hf:m``)."""
    names: list[str] = []
    specs: dict[str, str] = {}
    for item in given or []:
        name, sep, spec = item.partition("=")
        if sep and spec and _DISPLAY_NAME.match(name):
            names.append(name)
            specs[name] = spec
        else:
            names.append(item)
    return names, specs


def tutor_kwargs_of(args: argparse.Namespace, tutors: Sequence[str] = (),
                    specs: dict[str, str] | None = None) -> tuple[dict, dict[str, dict]]:
    """Tutor options: ``--base-url`` and repeatable ``--tutor-arg [TUTOR:]KEY=VALUE`` (values read as YAML);
    without ``TUTOR:`` an option goes to every tutor, with it to that tutor only (its display name or spec).
    Returns (options for all, ``{tutor: its own options}``)."""
    kwargs: dict = {}
    per_tutor: dict[str, dict] = {}
    by_spec = {spec: name for name, spec in (specs or {}).items()}
    for item in getattr(args, "tutor_arg", None) or []:
        key, sep, value = item.partition("=")
        owner, colon, key = key.rpartition(":")
        if not sep or not key or (colon and not owner):
            raise ConfigError(f"--tutor-arg takes KEY=VALUE or TUTOR:KEY=VALUE, got {item!r}")
        parsed = yaml.safe_load(value)  # numbers and booleans as such, the rest as strings
        if not colon:
            kwargs[key] = parsed
            continue
        owner = by_spec.get(owner, owner)
        if owner not in tutors:
            raise ConfigError(f"--tutor-arg {item!r} names tutor {owner!r}, which is not in this run; tutors: "
                              f"{list(tutors)}")
        per_tutor.setdefault(owner, {})[key] = parsed
    if getattr(args, "base_url", None):
        kwargs["base_url"] = args.base_url
    return kwargs, per_tutor


def judge_config_of(args: argparse.Namespace):
    """The judge of ``--judge ...`` flags (a JudgeConfig), or None when no judge is given."""
    if not getattr(args, "judge", None):
        return None
    from tutorzoo.eval.judges.cli import judge_config_from_args

    return judge_config_from_args(args)


def student_of(args: argparse.Namespace) -> tuple[str | None, dict]:
    """``--student`` and its backend options (``--student-arg``, ``--student-base-url``); None: not given."""
    kwargs: dict = {}
    for item in getattr(args, "student_arg", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--student-arg takes KEY=VALUE, got {item!r}")
        kwargs[key] = yaml.safe_load(value)
    if getattr(args, "student_base_url", None):
        kwargs["base_url"] = args.student_base_url
    if kwargs and not getattr(args, "student", None):
        raise ConfigError("--student-arg / --student-base-url need --student llm:<backend> or hybrid:<backend>")
    return getattr(args, "student", None), kwargs
