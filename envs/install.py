"""How TutorZoo was installed, and the install command for an optional extra that fits it.

A checkout (a clone, or an editable install of one) has ``pyproject.toml`` beside the real ``envs/`` folder that
``tutorzoo/envs`` links to: its hint is ``pip install -e '.[extra]'`` run in that folder, or ``make install``.
Anything else (a wheel from PyPI or a local build) gets ``pip install 'tutorzoo[extra]'``.

Example::

    from tutorzoo.envs.install import install_hint
    install_hint("report")   # "pip install 'tutorzoo[report]'" after a wheel install
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent  # envs/ of a checkout, tutorzoo/envs of an installed wheel


def checkout_root(package_dir: Path = _PACKAGE_DIR) -> Path | None:
    """The repository folder when ``package_dir`` (the resolved ``envs`` package) lies in a checkout, else None."""
    root = package_dir.resolve().parent
    if (root / "pyproject.toml").is_file() and (root / "tutorzoo").is_dir() and (root / "envs").is_dir():
        return root
    return None


def install_hint(extra: str, package_dir: Path = _PACKAGE_DIR) -> str:
    """The command that installs the optional ``extra`` the way this copy of TutorZoo was installed."""
    root = checkout_root(package_dir)
    if root is None:
        return f"pip install 'tutorzoo[{extra}]'"
    return f"pip install -e '.[{extra}]' in {root} (or `make install` there, which installs every extra)"


__all__ = ["checkout_root", "install_hint"]
