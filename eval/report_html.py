"""``report.html``: one self-contained page with a run's leaderboard, plots and a transcript browser.

The page needs nothing from the network: the plots are inline SVG drawn by matplotlib (text kept as text, ids
prefixed per plot, the XML prologue and metadata removed), the data of the browser is one JSON document in a
``<script type="application/json">`` tag, and a small vanilla script renders it. A Content-Security-Policy
allows only that script (by hash), so markup smuggled into a transcript could not run even if it escaped.
Everything taken from a record is untrusted text: Python escapes what it writes into the HTML, the JSON has
``<``, ``>`` and ``&`` as ``\\u`` escapes, and the script writes text with ``textContent`` only.

Sections: run info; the leaderboard and every metric per tutor (mean, 95% CI, N; judge-only metrics without
a judge shown as *not computed* with the reason); per-metric bars with CI error bars; learning gain by persona
family (bars, bootstrap CIs) and by persona (heat map); the SID metric profile per tutor; pre/post transitions
per tutor (wrong->right, right->wrong, ... on isomorphic and same items); failures and how episodes ended; the
transcript browser (filter by tutor, persona, task; the selected episode's turns with their 9 SID fields,
pre/post results and gain; for item suites the prompt, response, grades and judgments). A section the run
has no data for is replaced by a one-line note.

The browser's state lives in the URL hash (``report.html#tutor=random&persona=...&task=math/fractions&ep=3``),
so a link opens a filtered view. The same inputs give the same bytes (fixed SVG hash salt, no dates).

This module assembles the page; the parts live beside it: :mod:`tutorzoo.eval.report_board` (reading the board and the
records, escaping), :mod:`tutorzoo.eval.report_sections` (tables and notes), :mod:`tutorzoo.eval.report_plots` (the SVG
plots),
:mod:`tutorzoo.eval.report_browser` (the browser's data and markup), and the stylesheet and script in ``eval/assets/``
(``report.css``, ``report.js``), shipped as package data and read through :mod:`importlib.resources`.

Example::

    from tutorzoo.eval.leaderboard import build
    from tutorzoo.eval.report_html import write_html_report
    path = write_html_report(Path("runs/default"), build(records), records, {"suite": "default"})
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path

from tutorzoo.eval.report_board import board_specs, esc, is_episode, note_html, persona_families, section_html
from tutorzoo.eval.report_browser import BROWSER_HTML, TURN_FIELDS, browser_data, json_for_script
from tutorzoo.eval.report_plots import SVG_RC
from tutorzoo.eval.report_sections import (
    failure_section,
    gain_section,
    glossary_section,
    header_html,
    health_section,
    leaderboard_section,
    metric_section,
    paired_section,
    sid_section,
    transition_counts,
    transition_section,
)
from tutorzoo.eval.tracking import scrub_secrets


@cache
def _asset(name: str) -> str:
    """A file of ``eval/assets/`` as text, byte for byte (the script's CSP hash is of these exact bytes)."""
    return (files("tutorzoo.eval") / "assets" / name).read_bytes().decode("utf-8")


def render_html(board: Mapping, records: Sequence[Mapping], run_info: Mapping) -> str:
    """The whole page as a string (see the module docstring); deterministic in its inputs."""
    import matplotlib

    run_info = scrub_secrets(dict(run_info))
    specs = board_specs(board)
    families = persona_families()
    suite = run_info.get("suite")
    title = str(run_info.get("title") or (f"TutorZoo report: suite {suite}" if suite else "TutorZoo report"))
    episodes = any(is_episode(r) for r in records)
    with matplotlib.rc_context(SVG_RC):
        sections = [
            ("leaderboard", "Leaderboard", leaderboard_section(board, specs)),
            ("health", "What the numbers rest on", health_section(board)),
            ("paired", "Paired comparisons", paired_section(board)),
            ("metrics", "Metrics per tutor", metric_section(board, specs)),
            ("gain", "Learning gain by persona", gain_section(board, records, families)),
            ("sid", "SID metric profile", sid_section(board, specs)),
            ("transitions", "Pre/post transitions", transition_section(board, records)),
            ("failures", "Failures", failure_section(board, records)),
            ("glossary", "Glossary", glossary_section(specs)),
        ]
    data = browser_data(records, families)
    what = "episode" if episodes else "record"
    browser_note = note_html(f"Every {what} of the run ({len(records)}); filter by tutor, persona and task. The URL "
                             "keeps the view (e.g. #tutor=socratic&ep=3).")
    sections.append(("browser", "Transcripts" if episodes else "Records", browser_note + BROWSER_HTML))
    css, script = _asset("report.css"), _asset("report.js")
    script_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{script_hash}'; style-src 'unsafe-inline'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    nav = "".join(f'<a href="#{sid}">{esc(name)}</a>' for sid, name, _ in sections)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>\n{css}</style></head><body>",
        header_html(title, run_info, board, len(records)),
        f"<nav>{nav}</nav>",
        *(section_html(sid, name, body) for sid, name, body in sections),
        f'<script type="application/json" id="tz-data">{json_for_script(data)}</script>',
        f"<script>{script}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_html_report(out_dir: Path, board: dict, records: list[dict], run_info: dict) -> Path:
    """Write ``out_dir/report.html`` and return its path.

    ``board`` is :func:`tutorzoo.eval.leaderboard.build`'s output (optionally with ``specs``, ``columns`` and ``kind``),
    ``records`` the run's records (episodes, or item records with prompt/response/grades), ``run_info`` the
    run's description shown in the header (secrets masked).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "report.html"
    # A lone surrogate (possible in untrusted text read from JSON) becomes "?" rather than failing the write.
    path.write_bytes(render_html(board, records, run_info).encode("utf-8", errors="replace"))
    return path


__all__ = ["TURN_FIELDS", "browser_data", "render_html", "transition_counts", "write_html_report"]
