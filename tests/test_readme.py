"""Every code block of the README runs: Python blocks are exec'd; shell blocks run line by line in a subprocess
from a temporary folder, ``tutorzoo`` and ``python`` being this interpreter with this checkout on the path. The
two ``make`` commands run through the Makefile for real with a stand-in venv and small sizes (the demo with
``DEMO_ARGS="--limit 3"``, the suite with one test file); the training smoke commands run in order (slow). A shell
line of the README that this file does not know how to run fails the test, so a new command cannot go untested.
The README also stays a user's page: at most 200 lines, and no development history."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", TEXT, re.S)
# Development-history phrases (written with \s so that this file does not match itself).
HISTORY = re.compile(r"this\sstop|last\sstop|earlier\sstop|stops\sago|two\sstops|the\slast\sround|before\sthis\swork|"
                     r"a\shelper\swrote", re.I)

# The README's shell blocks, by their first command: how the test runs them.
DEMO, QUICK, TRAIN = "make demo", "tutorzoo list tutors", "python -m tutorzoo.train.tiny_model --out models/tiny"


def _lines(code: str) -> list[str]:
    """The commands of a shell block: comments and comment-only continuation lines dropped."""
    out = []
    for line in code.splitlines():
        command = line.split("#", 1)[0].strip()
        if command:
            out.append(command)
    return out


def _shell_blocks() -> dict[str, list[str]]:
    blocks = {}
    for lang, code in BLOCKS:
        if lang in ("bash", "sh", "shell", "console"):
            lines = _lines(code)
            blocks[lines[0]] = lines
    return blocks


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "NO_COLOR": "1", "WANDB_MODE": "offline",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    if words[0] == "tutorzoo":
        return [sys.executable, "-m", "tutorzoo", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise AssertionError(f"the test does not know how to run {command!r}")


def _run(command: str, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    done = subprocess.run(_argv(command), cwd=cwd, env={**_env(), "WANDB_DIR": str(cwd)}, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def test_readme_is_a_users_page() -> None:
    assert len(TEXT.splitlines()) <= 200
    assert not HISTORY.search(TEXT)
    for target in re.findall(r"\]\((docs/[^)#]+)", TEXT):  # every linked doc exists, or is merged beside this one
        assert (ROOT / target).is_file(), target


def test_tree_has_no_development_history() -> None:
    """Git holds the history: no tracked file (code, docs, configs, tests) tells it."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    found = []
    for name in filter(None, listed.stdout.decode().split("\0")):
        path = ROOT / name
        if path.is_file() and not path.is_symlink():
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if HISTORY.search(line):
                    found.append(f"{name}:{n}: {line.strip()[:80]}")
    assert found == []


def test_report_html_is_promised_only_with_its_extra() -> None:
    """report.html needs matplotlib (the ``report`` extra, which ``make demo`` installs): the README says so
    wherever it promises the file."""
    for paragraph in re.split(r"\n\s*\n|\n(?=\|)", TEXT):
        if "report.html" in paragraph:
            assert "`report`" in paragraph or "make demo" in paragraph, paragraph


def test_every_shell_block_is_known() -> None:
    assert set(_shell_blocks()) == {DEMO, QUICK, TRAIN}, "a new shell block needs a way to run here"
    assert _shell_blocks()[DEMO] == ["make demo", "make test"]


@pytest.mark.parametrize("index", range(sum(lang == "python" for lang, _ in BLOCKS)))
def test_python_block_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    code = [code for lang, code in BLOCKS if lang == "python"][index]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{README}:python block {index}", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert out.strip(), "a README example should show a result"
    if "episode_record()" in code:
        pre, post, gain = (float(x) for x in out.split())
        assert gain == pytest.approx(post - pre)
    if "Tutor-v0" in code:
        assert "tutor seat:" in out and "student seat:" in out


def test_quick_start_commands_run(tmp_path: Path) -> None:
    outputs = {command: _run(command, tmp_path).stdout for command in _shell_blocks()[QUICK]}
    assert "socratic" in outputs["tutorzoo list tutors"]
    assert len((tmp_path / "runs" / "r" / "episodes.jsonl").read_text().splitlines()) == 4
    assert (tmp_path / "runs" / "r" / "score" / "metrics.json").is_file()
    assert (tmp_path / "runs" / "r" / "report.md").is_file()
    assert (tmp_path / "runs" / "d" / "metrics.json").is_file()


@pytest.fixture()
def stand_in_venv(tmp_path: Path) -> Path:
    """A venv the Makefile takes as installed: this interpreter as its python and tutorzoo, markers newer than
    pyproject.toml and constraints.txt (so nothing is installed)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, line in (("python", f'exec "{sys.executable}" "$@"'),
                       ("tutorzoo", f'exec "{sys.executable}" -m tutorzoo "$@"')):
        script = venv / "bin" / name
        script.write_text(f"#!/bin/sh\n{line}\n")
        script.chmod(0o755)
    for marker in (".installed-core", ".installed-full"):
        (venv / marker).touch()
    return venv


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_runs(stand_in_venv: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "default"
    done = subprocess.run(["make", "-s", "-C", str(ROOT), "demo", f"VENV={stand_in_venv}", f"DEMO_OUT={out}",
                           "DEMO_ARGS=--limit 3 --workers 1"], env=_env(), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"make demo: writing {out}")
    for name in ("episodes.jsonl", "metrics.json", "report.md", "report.html"):  # what the README promises
        assert (out / name).is_file(), name


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("chromium") is None,
                    reason="make test needs make and chromium (its browser target installs chromium otherwise)")
def test_make_test_runs(stand_in_venv: Path) -> None:
    done = subprocess.run(["make", "-s", "-C", str(ROOT), "test", f"VENV={stand_in_venv}",
                           "TESTS=tests/eval/test_cli_help.py"], env=_env(), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b3 passed\b", done.stdout) and "failed" not in done.stdout, done.stdout


@pytest.mark.slow
def test_training_smoke_commands_run(tmp_path: Path) -> None:
    for command in _shell_blocks()[TRAIN]:
        _run(command, tmp_path, timeout=1800)
    runs = tmp_path / "runs" / "smoke"
    assert (runs / "corpus" / "dataset").is_dir()
    for recipe in ("sft", "grpo", "dpo"):
        assert (runs / recipe / "adapter" / "adapter_config.json").is_file(), recipe
        assert (runs / recipe / "results.json").is_file(), recipe
    assert (runs / "ppo" / "policy.zip").is_file()
