"""``agents/tutor/probes.py`` builds on other modules through their public names only (issue 29)."""

from __future__ import annotations

import ast
from pathlib import Path

PROBES = Path(__file__).resolve().parents[2] / "agents" / "tutor" / "probes.py"


def test_the_probes_import_no_private_name() -> None:
    private = [f"{n.module}.{a.name}" for n in ast.walk(ast.parse(PROBES.read_text(encoding="utf-8")))
               if isinstance(n, ast.ImportFrom) for a in n.names if a.name.startswith("_")]
    assert not private, f"probes.py imports private names {private}; make them public in their modules"
