"""The README's Python example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "the README has no Python example"
    exec(compile(blocks[0], str(README), "exec"), {})
    pre, post, gain = (float(x) for x in capsys.readouterr().out.split())
    assert gain == post - pre
