"""Suite kinds by name: a plain dict of ``"module:Class"`` paths, imported only when a suite asks for one.

The contract a kind keeps is in :mod:`tutorzoo.eval.kinds.base`. A kind whose module is not there (or fails to import)
gives a :class:`~tutorzoo.envs.errors.ConfigError` naming it; the other kinds keep working.

Example::

    from tutorzoo.eval.kinds import get_kind, kind_for
    get_kind("episodes").rank_metric          # the headline learning gain (LEARNING_GAIN)
    kind = kind_for(load_suite("educationq"))  # configured by the suite's ``items`` (ranked by ALG there)
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from typing import TYPE_CHECKING, Any

from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.import_path import load_import_path

if TYPE_CHECKING:
    from tutorzoo.eval.kinds.base import SuiteKind
    from tutorzoo.eval.suite import Suite

KINDS: dict[str, str] = {
    "episodes": "tutorzoo.eval.kinds.episodes:EpisodesKind",
    "kmp_dialogue": "tutorzoo.eval.kinds.kmp_dialogue:KmpDialogueKind",
    "kmp_skills": "tutorzoo.eval.kinds.kmp_skills:KmpSkillsKind",
    "dr_academy": "tutorzoo.eval.kinds.dr_academy:DrAcademyKind",
}


def check_kind_name(name: str) -> str:
    """``name`` if it is a registered kind, else a ConfigError with the known kinds and a did-you-mean."""
    if name not in KINDS:
        close = difflib.get_close_matches(name, KINDS, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown suite kind {name!r}; known kinds: {sorted(KINDS)}.{hint}")
    return name


@cache
def get_kind(name: str) -> SuiteKind:
    """The (unconfigured) kind registered under ``name``; imported on first use."""
    def cannot_import(module_name: str, exc: ImportError) -> str:
        missing = isinstance(exc, ModuleNotFoundError) and exc.name == module_name
        why = f"its module {module_name} is not installed in this tree" if missing else f"importing {module_name} " \
            f"failed: {type(exc).__name__}: {exc}"
        return (f"suite kind {name!r} is not available: {why}. Other kinds (e.g. 'episodes') still work; update "
                "TutorZoo or run a suite of another kind.")

    cls = load_import_path(KINDS[check_kind_name(name)], cannot_import=cannot_import,
                           has_no=lambda module_name, attr: f"suite kind {name!r}: {module_name} defines no {attr}; "
                           "the registry in eval/kinds/__init__.py and the module disagree")
    return cls()


def kind_for(suite: Suite) -> SuiteKind:
    """The kind of ``suite``, configured by its ``items`` when the kind has ``for_suite`` (cached per settings)."""
    key = (suite.name, suite.version, suite.kind, json.dumps(suite.items, sort_keys=True, default=str))
    if key not in _CONFIGURED:
        kind = get_kind(suite.kind)
        configure = getattr(kind, "for_suite", None)
        _CONFIGURED[key] = configure(suite) if callable(configure) else kind
    return _CONFIGURED[key]


_CONFIGURED: dict[tuple[str, int, str, str], Any] = {}


__all__ = ["KINDS", "check_kind_name", "get_kind", "kind_for"]
