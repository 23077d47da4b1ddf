"""One unit per quantity: a learning gain is in percentage points wherever the reports show it (leaderboard,
every-metric table, bar plot, paired table), while metrics.json keeps the computed fraction."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

TUTORZOO = Path(sys.executable).with_name("tutorzoo")


def test_learning_gain_is_in_points_in_every_report(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run([str(TUTORZOO), "eval", "--limit", "4", "--tutor", "socratic", "--tutor", "random",
                           "--workers", "1", "--out", "e"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    metrics = json.loads((tmp_path / "e" / "metrics.json").read_text())
    gain = metrics["groups"]["socratic"]["metrics"]["learning_gain"]
    points = f"{100 * gain['mean']:.2f} \u00b1{100 * (gain['ci_high'] - gain['ci_low']) / 2:.2f}"
    report = (tmp_path / "e" / "report.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| learning_gain (points) |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2 + metrics["ranking"].index("socratic")] == points
    assert re.search(rf"\| \d \| socratic \| 4 \| {re.escape(points)} \|", report)  # the leaderboard: same text
    page = (tmp_path / "e" / "report.html").read_text()
    html_row = re.search(r'<tr><td title="[^"]*">learning_gain \(points\) \u2191</td>(.*?)</tr>', page)
    assert html_row, "the every-metric table has no learning_gain (points) row"
    html_cells = re.findall(r">([^<>]*)</td>", html_row.group(1))
    assert html_cells[metrics["ranking"].index("socratic")] == points  # the same number as the leaderboard
    assert not re.search(r'<td title="[^"]*">learning_gain \u2191</td>', page)  # no row on the fraction scale
