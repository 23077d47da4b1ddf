"""The fenced code blocks of a documentation page's section, for tests that run what the docs show."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def section_blocks(page: str, heading: str, lang: str) -> list[str]:
    """The ``lang`` code blocks under ``## heading`` of ``docs/page`` (up to the next ``## `` heading)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    if match is None:
        raise AssertionError(f"docs/{page} has no '## {heading}' section")
    return re.findall(rf"^```{lang}\n(.*?)^```", match.group(1), flags=re.M | re.S)
