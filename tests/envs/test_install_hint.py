"""Install hints fit how TutorZoo was installed: a checkout is told ``pip install -e '.[extra]'`` (in its folder),
an installed wheel ``pip install 'tutorzoo[extra]'`` — checked on the function and, end to end, on a copy of the
package laid out as a wheel installs it (real folders under ``site/tutorzoo``, no ``pyproject.toml``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tutorzoo.envs.install import checkout_root, install_hint

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("envs", "agents", "rewards", "train", "eval")
# Hides installed packages (a venv without the extra): find_spec gives None and import fails.
HIDE = ("import os, sys\nfor name in filter(None, os.environ.get('TZ_HIDE', '').split(',')):\n"
        "    sys.modules[name] = None\n")


def test_a_checkout_is_told_the_editable_command() -> None:
    assert checkout_root() == ROOT
    hint = install_hint("report")
    assert hint.startswith("pip install -e '.[report]' in ") and str(ROOT) in hint


def test_an_installed_wheel_is_told_the_package_command(tmp_path: Path) -> None:
    envs = tmp_path / "site-packages" / "tutorzoo" / "envs"
    envs.mkdir(parents=True)
    assert checkout_root(envs) is None
    assert install_hint("report", envs) == "pip install 'tutorzoo[report]'"


@pytest.fixture(scope="module")
def wheel_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tutorzoo`` as a wheel installs it: one real folder per package (links resolved), nothing else."""
    site = tmp_path_factory.mktemp("site")
    target = site / "tutorzoo"
    target.mkdir()
    for name in ("__init__.py", "__main__.py", "py.typed"):
        shutil.copy2(ROOT / "tutorzoo" / name, target / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, target / package, symlinks=False,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (site / "sitecustomize.py").write_text(HIDE)
    return site


def _run(site: Path, cwd: Path, hide: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site), "TZ_HIDE": hide, "COLUMNS": "200", "NO_COLOR": "1",
           "WANDB_MODE": "disabled"}
    return subprocess.run([sys.executable, "-m", "tutorzoo", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_wheel_install_hint_for_a_missing_extra(wheel_site: Path, tmp_path: Path) -> None:
    done = _run(wheel_site, tmp_path, "wandb", "eval", "--limit", "1", "--tutor", "random", "--wandb", "--out", "e")
    text = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, text
    assert "--wandb needs wandb, which is not installed: pip install 'tutorzoo[wandb]'" in text
    assert "-e '.[" not in text and "make install" not in text


def test_wheel_install_hint_without_matplotlib(wheel_site: Path, tmp_path: Path) -> None:
    done = _run(wheel_site, tmp_path, "matplotlib", "eval", "--limit", "1", "--tutor", "random", "--workers", "1",
                "--out", "e")
    text = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 0, text
    assert "report.html will not be written: it needs matplotlib: pip install 'tutorzoo[report]'" in text
    assert "-e '.[" not in text
    assert (tmp_path / "e" / "report.md").is_file() and not (tmp_path / "e" / "report.html").exists()


def test_wheel_install_writes_report_html(wheel_site: Path, tmp_path: Path) -> None:
    """With matplotlib, an installed wheel writes report.html: its assets are found as package data of
    tutorzoo.eval (no bare top-level name exists there)."""
    done = _run(wheel_site, tmp_path, "", "rollout", "--tutor", "socratic", "--episodes", "1", "--out", "r")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "r" / "report.html").is_file()
