"""docs/integrations.md: every Python block of the TRL section runs as written; the verifiers section's command is
the one tests/integrations/test_verifiers.py runs."""

from __future__ import annotations

import shlex

import pytest
from doc_blocks import section_blocks


@pytest.mark.parametrize("index", [0, 1], ids=["by-hand", "grpo-trainer"])
def test_trl_snippets_run(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("trl")
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    blocks = section_blocks("integrations.md", "TRL", "python")
    assert len(blocks) == 2
    exec(compile(blocks[index], f"docs/integrations.md TRL block {index}", "exec"), {"__name__": "__doc__"})


def test_verifiers_section_shows_the_tested_command() -> None:
    [block] = section_blocks("integrations.md", "verifiers", "sh")
    lines = block.replace("\\\n", " ").splitlines()
    assert lines[0] == "make verifiers-venv" and lines[1].startswith(". integrations/verifiers/.venv/bin/activate")
    argv = shlex.split(lines[2])
    assert argv[:2] == ["vf-eval", "tutorzoo-verifiers"]
    assert "--no-push" in argv and "$BASE_URL" in argv
