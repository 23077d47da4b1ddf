"""docs/integrations.md, sections OpenEnv and inspect-ai: their blocks run as written, against loopback servers."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "integrations.md"


def blocks(section: str, lang: str) -> list[str]:
    """The ``lang`` code blocks of the ``## section`` of the page, in order."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"docs/integrations.md has no section '## {section}'"
    return re.findall(rf"^```{lang}\n(.*?)^```", match.group(1), flags=re.M | re.S)


def test_the_openenv_command_is_the_clis() -> None:
    from tutorzoo.eval.cli import parser

    [command] = blocks("OpenEnv", "sh")
    argv = shlex.split(command)
    assert argv[0] == "tutorzoo"
    args = parser().parse_args(argv[1:])
    assert (args.command, args.suite, args.split, args.max_sessions, args.port) == ("serve", "default", "held_out",
                                                                                      8, 8000)


def test_the_openenv_client_block_runs_against_a_served_suite() -> None:
    pytest.importorskip("openenv")
    from test_serve import served

    from tutorzoo.eval.serve import Ledger, SpecSource
    from tutorzoo.eval.suite import load_suite

    [code] = blocks("OpenEnv", "python")
    ledger = Ledger()
    with served(SpecSource(load_suite("default").specs("held_out")), ledger) as url:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code.replace("http://127.0.0.1:8000", url), "integrations.md OpenEnv", "exec"),
                 {"__name__": "__doc__"})
    printed = out.getvalue().splitlines()
    assert len(printed) == 2 and printed[0].strip()  # the student's reply, then gain, reward and TotalScore
    # the first episode was left for the second (reset mid-episode): abandoned, not scored
    assert ledger.snapshot() == {"started": 2, "scored": 1, "failed": 0, "abandoned": 1}


@pytest.mark.slow
def test_the_inspect_blocks_run_against_a_loopback_endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("inspect_ai")
    from chat_server import ChatServer

    [command] = blocks("inspect-ai", "sh")
    [code] = blocks("inspect-ai", "python")
    with ChatServer(responder=lambda body, index: "What does the question ask you to find?") as server:
        env = {"VLLM_BASE_URL": server.url, "VLLM_API_KEY": "test-key", "INSPECT_LOG_DIR": str(tmp_path / "logs"),
               "PYTHONPATH": str(ROOT)}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "integrations.md inspect-ai", "exec"), {"__name__": "__doc__"})
        gain, stderr = (float(x) for x in out.getvalue().split())
        assert gain == gain and stderr == stderr  # numbers, not NaN: two scored samples
        shell_env = {**os.environ, **env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        done = subprocess.run(["bash", "-c", command.rstrip() + " --display none"], cwd=tmp_path, env=shell_env,
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list((tmp_path / "logs").glob("*.eval"))) == 2  # the Python block's log and the command's
