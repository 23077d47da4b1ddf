"""The Makefile's install path: ``make install`` keeps a torch the venv already has when it meets the package's
range (pip applies a constraint to installed packages too, so the CPU pin would replace a CUDA build), and
``make demo`` says what it replaces before it passes ``--overwrite``. Offline: a venv holding only a torch
distribution's metadata, pip run with ``--dry-run --no-index``, and a stand-in ``tutorzoo`` for the demo."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("install_constraints", ROOT / "tools" / "install_constraints.py")
assert SPEC is not None and SPEC.loader is not None
install_constraints = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(install_constraints)

CONSTRAINTS = (ROOT / "constraints.txt").read_text()
PYPROJECT = (ROOT / "pyproject.toml").read_text()


def _torch_pin(text: str) -> str:
    (line,) = [x for x in text.splitlines() if x.startswith("torch==")]
    return line


def test_constraints_file_explains_itself() -> None:
    comment = " ".join(x for x in CONSTRAINTS.splitlines() if x.startswith("#"))
    assert "../" not in comment and "STACK.md" not in comment  # nothing outside the repository
    assert "tools/install_constraints.py" in comment and "CUDA" in comment
    assert _torch_pin(CONSTRAINTS) == "torch==2.13.0"


@pytest.mark.parametrize(
    ("installed", "pin"),
    [
        pytest.param("2.5.1+cu121", "torch==2.5.1+cu121", id="cuda-build-in-range-kept"),
        pytest.param("2.13.0+cpu", "torch==2.13.0+cpu", id="the-pinned-cpu-build-kept"),
        pytest.param("2.3.1", "torch==2.13.0", id="below-the-range-pinned"),
        pytest.param(None, "torch==2.13.0", id="no-torch-pinned"),
    ],
)
def test_effective_constraints(installed: str | None, pin: str) -> None:
    out = install_constraints.effective_constraints(CONSTRAINTS, PYPROJECT, installed)
    assert _torch_pin(out) == pin
    assert [x for x in out.splitlines() if not x.startswith(("#", "torch=="))] == [
        x for x in CONSTRAINTS.splitlines() if not x.startswith(("#", "torch=="))]


@pytest.mark.parametrize(
    ("version", "spec", "ok"),
    [("2.5.1+cu121", ">=2.4", True), ("2.4", ">=2.4", True), ("2.3.9", ">=2.4", False),
     ("2.5.0", ">=2.4,<2.5", False), ("3.0.0", "", True)],
)
def test_satisfies(version: str, spec: str, ok: bool) -> None:
    assert install_constraints.satisfies(version, spec) is ok


def test_torch_range_is_read_from_pyproject() -> None:
    assert install_constraints.torch_range(PYPROJECT) == ">=2.4"
    with pytest.raises(ValueError, match="names no torch requirement"):
        install_constraints.torch_range('[project]\ndependencies = ["numpy"]\n')


@pytest.fixture()
def cuda_venv(tmp_path: Path) -> Path:
    """A venv without pip whose only package is the metadata of a CUDA torch build."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    info = Path(purelib) / "torch-2.5.1+cu121.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu121\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("")
    return venv


def _pip_dry_run(venv: Path, constraints: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INPUT": "1"}
    return subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                           "--dry-run", "--no-index", "--disable-pip-version-check", "-c", str(constraints),
                           "torch>=2.4"], env=env, capture_output=True, text=True, timeout=300)


def test_pip_keeps_an_installed_cuda_torch(cuda_venv: Path) -> None:
    out = cuda_venv / "constraints.txt"
    with out.open("w") as fh:  # what the Makefile's PIN line runs
        subprocess.run([str(cuda_venv / "bin" / "python"), str(ROOT / "tools" / "install_constraints.py"),
                        str(ROOT / "constraints.txt"), str(ROOT / "pyproject.toml")], stdout=fh, check=True)
    assert _torch_pin(out.read_text()) == "torch==2.5.1+cu121"
    kept = _pip_dry_run(cuda_venv, out)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "Requirement already satisfied: torch" in kept.stdout and "Would install" not in kept.stdout
    # the repository's file as it is would have pip look for another torch (here: none offline, so it fails)
    replaced = _pip_dry_run(cuda_venv, ROOT / "constraints.txt")
    assert replaced.returncode != 0 and "torch" in replaced.stderr


def test_makefile_passes_the_venv_constraints_to_every_pip_call() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c $(VENV)/constraints.txt" in makefile
    recipes = makefile.split("\n\n")
    for block in recipes:
        if "$(PIP) " in block:
            assert "$(PIN)" in block.split("$(PIP) ")[0], block


@pytest.fixture()
def fake_venv(tmp_path: Path) -> Path:
    """A venv the demo target takes as installed: its marker newer than the files it depends on, and a stand-in
    ``tutorzoo`` that prints its arguments."""
    venv = tmp_path / "fv"
    (venv / "bin").mkdir(parents=True)
    tutorzoo = venv / "bin" / "tutorzoo"
    tutorzoo.write_text('#!/bin/sh\necho "tutorzoo $*"\n')
    tutorzoo.chmod(0o755)
    marker = venv / ".installed-core"
    marker.touch()
    later = time.time() + 60
    os.utime(marker, (later, later))
    return venv


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_says_what_it_replaces(fake_venv: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "default"

    def demo() -> str:
        done = subprocess.run(["make", "-s", "-C", str(ROOT), "demo", f"VENV={fake_venv}", f"DEMO_OUT={out}"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    first = demo().splitlines()
    assert first[0] == f"make demo: writing {out} (a later make demo replaces it; DEMO_OUT=runs/other writes elsewhere)"
    assert first[1].rstrip() == f"tutorzoo eval --suite default --out {out} --overwrite"
    out.mkdir(parents=True)
    (out / "episodes.jsonl").write_text("{}\n{}\n{}\n")
    second = demo().splitlines()
    assert second[0].startswith(f"make demo: replacing {out} (3 episodes of an earlier run are deleted")
    assert "DEMO_OUT=runs/other" in second[0]
