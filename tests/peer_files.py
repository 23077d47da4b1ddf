"""Full peer files for the tests that reproduce published numbers: read from a local snapshot of the peer's
repository when one is on this machine, else the test is skipped (the committed excerpts in tests/data/peers
are always tested).

Where snapshots are looked for: ``$TUTORZOO_PEER_MIRRORS`` (default ``/work/.mirror``), one bare git directory per
repository at ``<root>/<owner>+<name>/repo``; or a checkout at ``$TUTORZOO_PEER_CHECKOUTS/<name>``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def peer_file(repo: str, path: str, tmp_path: Path) -> Path:
    """``path`` of the peer repository ``repo`` ("owner/name") as a local file, or skip the test."""
    owner, name = repo.split("/")
    checkouts = os.environ.get("TUTORZOO_PEER_CHECKOUTS")
    if checkouts and (Path(checkouts) / name / path).is_file():
        return Path(checkouts) / name / path
    git_dir = Path(os.environ.get("TUTORZOO_PEER_MIRRORS", "/work/.mirror")) / f"{owner}+{name}" / "repo"
    if not git_dir.is_dir():
        pytest.skip(f"no local snapshot of {repo} (looked in {git_dir})")
    shown = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"], capture_output=True)
    if shown.returncode != 0 or not shown.stdout:
        pytest.skip(f"{repo} snapshot has no {path}")
    out = tmp_path / Path(path).name
    out.write_bytes(shown.stdout)
    return out
