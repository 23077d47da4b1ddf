"""The object an import path ``package.module:Name`` names: how an open registry (suite kinds, reward terms)
reaches what it does not ship, with errors its caller words for its own users.

Example::

    from envs.import_path import load_import_path
    load_import_path("collections:OrderedDict",
                     cannot_import=lambda module, exc: f"cannot import {module}: {exc}",
                     has_no=lambda module, attr: f"{module} defines no {attr}")   # <class 'OrderedDict'>
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from envs.errors import ConfigError


def load_import_path(path: str, *, cannot_import: Callable[[str, ImportError], str],
                     has_no: Callable[[str, str], str]) -> Any:
    """The attribute ``Name`` of the module ``package.module`` in ``path``.

    A module that does not import is a :class:`ConfigError` worded by ``cannot_import(module_name, exc)`` (the
    ``ImportError`` is chained); a module without the attribute (or with it set to ``None``) one worded by
    ``has_no(module_name, attr)``. The caller checks that ``path`` has both parts.
    """
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(cannot_import(module_name, exc)) from exc
    value = getattr(module, attr, None)
    if value is None:
        raise ConfigError(has_no(module_name, attr))
    return value


__all__ = ["load_import_path"]
