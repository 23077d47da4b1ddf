"""The object an import path ``package.module:Name`` names: how an open registry (suite kinds, reward terms)
reaches what it does not ship, with errors its caller words for its own users.

Example::

    from tutorzoo.envs.import_path import load_import_path
    load_import_path("collections:OrderedDict",
                     cannot_import=lambda module, exc: f"cannot import {module}: {exc}",
                     has_no=lambda module, attr: f"{module} defines no {attr}")   # <class 'OrderedDict'>
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from tutorzoo.envs.errors import ConfigError


def import_user_module(module_name: str, folder: str | os.PathLike[str] | None = None) -> ModuleType:
    """The module ``module_name`` that a user named (``--tutor my_tutors:MyTutor``), found first in ``folder`` (the
    current folder by default, as ``python -m`` would), then on the import path.

    Only the named module's top-level package is looked up in the folder: a user's ``train.py``, ``datasets.py`` or
    ``wandb.py`` there shadows nothing that TutorZoo or its libraries import. The folder then stays at the end of
    ``sys.path``, so the module's own lazy imports of its siblings resolve, after every installed package.
    """
    top = module_name.partition(".")[0]
    where = str(Path(folder if folder is not None else os.getcwd()).resolve())
    local = Path(where, f"{top}.py").is_file() or Path(where, top).is_dir()
    if local and top not in sys.modules:
        sys.path.insert(0, where)
        try:
            importlib.import_module(top)
        finally:
            sys.path.remove(where)
    if local and where not in sys.path:
        sys.path.append(where)
    return importlib.import_module(module_name)


def load_import_path(path: str, *, cannot_import: Callable[[str, ImportError], str],
                     has_no: Callable[[str, str], str]) -> Any:
    """The attribute ``Name`` of the module ``package.module`` in ``path``.

    A module that does not import is a :class:`ConfigError` worded by ``cannot_import(module_name, exc)`` (the
    ``ImportError`` is chained); a module without the attribute (or with it set to ``None``) one worded by
    ``has_no(module_name, attr)``. The caller checks that ``path`` has both parts.
    """
    module_name, _, attr = path.partition(":")
    try:
        module = import_user_module(module_name)
    except ImportError as exc:
        raise ConfigError(cannot_import(module_name, exc)) from exc
    value = getattr(module, attr, None)
    if value is None:
        raise ConfigError(has_no(module_name, attr))
    return value


__all__ = ["import_user_module", "load_import_path"]
