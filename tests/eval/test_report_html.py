"""report.html: built from a small real run, opened in headless Chromium, checked for plots, transcripts,
filtering, escaping of hostile text, byte-for-byte determinism and the absence of network URLs.

Chromium is Debian's package, installed by the test setup (``make browser``); without it these tests fail
with that instruction rather than skipping.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlencode

import pytest

pytest.importorskip("matplotlib")

from tutorzoo.envs.records import json_form
from tutorzoo.eval.report_html import render_html, write_html_report  # noqa: E402
from tutorzoo.eval.tracking import run_metadata  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
TUTORS = ("socratic", "lecturer", "random")
ENV_SECRET = "sk-envsecret-report-0123456789"
RUN_SECRET = "sk-runinfo-secret-98765"
HOSTILE = ('</script><img src=x onerror="document.body.setAttribute(\'data-pwned\',\'1\')">'
           '<b id="injected">bold</b> &amp; <!-- \u2028 ]]> see https://example.org/a?b=1&c=2')
ALLOWED_URLS = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Dom(HTMLParser):
    """Every element of a page with its attributes and its text (descendants' text included)."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[dict] = []
        self._open: list[dict] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        node = {"tag": tag, "attrs": dict(attrs), "text": [], "parents": [e["tag"] for e in self._open],
                "classes": set((dict(attrs).get("class") or "").split())}
        node["within"] = [dict(e["attrs"]) for e in self._open]
        self.elements.append(node)
        if tag not in VOID:
            self._open.append(node)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i]["tag"] == tag:
                del self._open[i:]
                break

    def handle_data(self, data: str) -> None:
        for node in self._open:
            node["text"].append(data)

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[dict]:
        out = []
        for e in self.elements:
            if tag and e["tag"] != tag or cls and cls not in e["classes"]:
                continue
            if all(e["attrs"].get(k.replace("_", "-")) == v for k, v in attrs.items()):
                out.append(e)
        return out

    @staticmethod
    def text(node: dict) -> str:
        return "".join(node["text"])


def dump_dom(path: Path, fragment: str, profile: Path) -> Dom:
    """The DOM after the page's scripts ran, as headless Chromium serialises it."""
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing at /usr/bin/chromium: run `make browser` "
                    "(apt-get install chromium) — the report's browser test needs it")
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--virtual-time-budget=5000",
           "--dump-dom", path.resolve().as_uri() + fragment]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<body" in done.stdout, done.stderr[-2000:]
    return Dom(done.stdout)


def small_run() -> list[dict]:
    """3 specs (two math personas, one STEM lesson) x the built-in tutors, played for real."""
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor.registry import make_tutor
    from tutorzoo.eval.rollout import run_specs
    from tutorzoo.eval.suite import load_suite

    specs = load_suite("default").specs("all")
    math_specs = [s for s in specs if s.task_set == "math"]
    stem = next(s for s in specs if s.task_set == "stem")
    picked = [math_specs[0], next(s for s in math_specs if s.persona != math_specs[0].persona), stem]
    return [json_form(r) for r in run_specs(picked, list(TUTORS), make_tutor, SimulatedStudent)]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A report of a real run with one hostile episode (HTML in an utterance, a title, a test answer and a
    failure) and a secret in the environment and in the run info."""
    from tutorzoo.eval.leaderboard import build

    records = small_run()
    hostile = [i for i, r in enumerate(records) if r["tutor"] == "socratic"][-1]  # record 0 stays clean
    rec = records[hostile]
    rec["transcript"][0]["utterance"] = HOSTILE
    rec["transcript"][1]["utterance"] = f"my key is {ENV_SECRET}, do not tell"
    rec["task"]["title"] = HOSTILE
    rec["pretest"][0]["response"] = HOSTILE
    rec["failures"] = [{"agent": "tutor", "phase": "dialogue", "turn": 3, "error": f"ValueError: {HOSTILE}"}]
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", ENV_SECRET)
        board = build(records)
        meta = run_metadata(["tutorzoo", "eval", "--tutor-arg", f"api_key={RUN_SECRET}"], started=1_790_000_000.0,
                            seed=7, tutor_options={"api_key": RUN_SECRET, "max_new_tokens": 64})
        run_info = {"suite": "default", "version": 1, "split": "all", "base_url": "http://127.0.0.1:8000/v1",
                    "judge_config": {"backend": "openai", "api_key": RUN_SECRET}, **meta}
        path = write_html_report(out, board, records, run_info)
    (out / "records.json").write_text(json.dumps(records), encoding="utf-8")
    return {"path": path, "html": path.read_text(encoding="utf-8"), "records": records, "hostile": hostile,
            "profile": tmp_path_factory.mktemp("chromium-profile"), "run_info": run_info}


def test_plots_and_transcripts_render_in_chromium(report: dict) -> None:
    records = report["records"]
    dom = dump_dom(report["path"], "", report["profile"])
    assert dom.find("body", data_browser="ready"), "the browser script did not run to the end"
    plots = {e["attrs"]["data-plot"]: e for e in dom.find("svg", cls="plot")}
    assert set(plots) == {"metrics", "gain-family", "gain-persona", "sid-profile", "transitions"}
    for name in plots:  # drawn, not empty: bars/lines are paths, labels are text
        inside = [e for e in dom.elements if any(w.get("data-plot") == name for w in e["within"])]
        assert sum(e["tag"] == "path" for e in inside) >= 5, name
        assert any(e["tag"] == "text" for e in inside), name
    assert "learning_gain" in Dom.text(plots["metrics"]) and "SD" in Dom.text(plots["sid-profile"])
    for tutor in TUTORS:
        assert tutor in Dom.text(plots["transitions"])

    items = dom.find("li", cls="ep")
    assert len(items) == len(records)
    assert [i["attrs"]["data-tutor"] for i in items] == [r["tutor"] for r in records]
    assert Dom.text(dom.find(id="match-count")[0]) == f"{len(records)} of {len(records)} records"
    view = dom.find("div", id="ep-view")[0]
    assert view["attrs"]["data-ep"] == "0" and "sel" in items[0]["classes"]
    turns = dom.find("div", cls="turn")
    first = records[0]["transcript"]
    assert len(turns) == len(first)
    assert [Dom.text(u) for u in dom.find("div", cls="utt")] == [t["utterance"] for t in first]
    chips = [Dom.text(c) for c in dom.find("span", cls="chip")]
    tutor_turn = next(t for t in first if t["speaker"] == "tutor" and t["teacher_intent"])
    assert f"intent: {tutor_turn['teacher_intent']}" in chips
    assert any(c.startswith("Bloom: ") for c in chips) and any(c.startswith("guidance: ") for c in chips)
    headings = [Dom.text(h) for h in dom.find("h4")]
    assert "Pre-test" in headings and "Post-test" in headings
    result_cells = [Dom.text(td) for td in dom.find("td") if td["classes"] & {"ok", "bad"}]
    assert len(result_cells) == len(records[0]["pretest"]) + len(records[0]["posttest"])


def test_paired_table_health_and_metadata_render_in_chromium(report: dict) -> None:
    """The paired comparison (every pair of tutors, difference with CI and win shares), per-tutor health, the
    run's metadata and the glossary are visible in the page as the browser shows it."""
    from tutorzoo.eval.leaderboard import build

    board = build(report["records"])
    dom = dump_dom(report["path"], "", report["profile"])
    assert dom.find("body", data_browser="ready")
    tables = dom.find("table", cls="paired")
    pairs = board["paired"]["metrics"]["learning_gain"]
    assert len(tables) == len(board["paired"]["metrics"]) and len(pairs) == 3  # 3 tutors: 3 pairs
    cells = [Dom.text(td) for td in dom.elements if td["tag"] == "td"
             and any("paired" in (w.get("class") or "") for w in td["within"])]
    for pair in pairs:
        assert f"{pair['a']} vs {pair['b']}" in cells
        assert f"{100 * pair['diff']:+.2f}" in cells  # a gain difference in percentage points, as the leaderboard
        assert f"[{100 * pair['ci_low']:+.2f}, {100 * pair['ci_high']:+.2f}]" in cells
        assert f"{100 * pair['a_wins']:.0f}%" in cells
    assert board["ranking"][0] == pairs[0]["a"]

    health = [Dom.text(td) for td in dom.elements if td["tag"] == "td"
              and any("health" in (w.get("class") or "") for w in td["within"])]
    for tutor in TUTORS:
        assert tutor in health
    run = {Dom.text(dt): Dom.text(dd) for dt, dd in zip(dom.find("dt"), dom.find("dd"), strict=False)
           if any("run" in (w.get("class") or "") for w in dt["within"])}
    for field in ("date", "tutorzoo version", "git commit", "command", "seed", "wall time", "tutor options"):
        assert field in run, field
    assert run["seed"] == "7" and run["date"].startswith("2026-")
    assert RUN_SECRET not in run["command"] and "api_key=***" in run["command"]
    assert "***" in run["tutor options"] and "64" in run["tutor options"]
    glossary = [Dom.text(dt) for dt in dom.find("dt") if any("glossary" in (w.get("class") or "")
                                                               for w in dt["within"])]
    assert any(g.startswith("learning_gain") for g in glossary) and any(g.startswith("TotalScore") for g in glossary)


def test_hash_filters_the_episode_list(report: dict) -> None:
    records = report["records"]
    random_ids = [i for i, r in enumerate(records) if r["tutor"] == "random"]
    chosen = random_ids[-1]
    dom = dump_dom(report["path"], f"#tutor=random&ep={chosen}", report["profile"])
    items = dom.find("li", cls="ep")
    assert [int(i["attrs"]["data-ep"]) for i in items] == random_ids
    assert {i["attrs"]["data-tutor"] for i in items} == {"random"}
    assert dom.find("div", id="ep-view")[0]["attrs"]["data-ep"] == str(chosen)
    assert len(dom.find("div", cls="turn")) == len(records[chosen]["transcript"])

    target = records[random_ids[0]]
    persona, task = target["spec"]["persona"], f"{target['spec']['task_set']}/{target['spec']['task_id']}"
    fragment = "#" + urlencode({"tutor": "lecturer", "persona": persona, "task": task})
    dom = dump_dom(report["path"], fragment, report["profile"])
    expected = [i for i, r in enumerate(records) if r["tutor"] == "lecturer" and r["spec"]["persona"] == persona
                and f"{r['spec']['task_set']}/{r['spec']['task_id']}" == task]
    assert expected and [int(i["attrs"]["data-ep"]) for i in dom.find("li", cls="ep")] == expected

    dom = dump_dom(report["path"], "#tutor=nobody", report["profile"])
    assert dom.find("li", cls="ep") == []
    assert "No record matches" in Dom.text(dom.find("div", id="ep-view")[0])


def test_hostile_transcript_stays_text(report: dict) -> None:
    page = report["html"]
    parsed = Dom(page)
    assert len(parsed.find("script")) == 2 and page.count("</script>") == 2
    assert "<img" not in page and 'id="injected"' not in page and "<b " not in page
    dom = dump_dom(report["path"], f"#ep={report['hostile']}", report["profile"])
    assert dom.find("body", data_browser="ready")
    assert not [e for e in dom.elements if "data-pwned" in e["attrs"]]
    assert not dom.find(id="injected") and not dom.find("img")
    assert Dom.text(dom.find("div", cls="utt")[0]) == HOSTILE
    assert HOSTILE in [Dom.text(td) for td in dom.find("td")]  # the pre-test answer
    assert any(HOSTILE in Dom.text(p) for p in dom.find("pre", cls="text"))  # the failure


def test_secrets_are_masked(report: dict) -> None:
    page = report["html"]
    assert ENV_SECRET not in page and RUN_SECRET not in page
    assert "my key is ***" in page  # the utterance is kept, the secret masked


def test_no_network_urls(report: dict) -> None:
    """No URL in the file but the SVG namespaces: not in the markup, the data (a URL quoted in a transcript or
    the run info is stored without a literal ``://``) or the script."""
    page = report["html"]
    assert "https://example.org" in report["records"][report["hostile"]]["transcript"][0]["utterance"]
    urls = set(re.findall(r"(?:https?|ftp|wss?)://[^\s\"'<>)]*", page, flags=re.I))
    assert urls <= ALLOWED_URLS, urls - ALLOWED_URLS
    dom = Dom(page)  # what the browser would parse: no element that loads anything
    assert not [e["tag"] for e in dom.elements if e["tag"] in {"link", "iframe", "object", "embed", "img", "audio",
                                                               "video", "source", "base", "form"}]
    assert not [e["attrs"] for e in dom.elements if "src" in e["attrs"]]
    hrefs = {v for e in dom.elements if e["tag"] != "image" for k, v in e["attrs"].items()
             if k in ("href", "xlink:href", "action")}
    assert hrefs and all(h.startswith("#") for h in hrefs), hrefs
    images = {e["attrs"].get("xlink:href", "")[:22] for e in dom.elements if e["tag"] == "image"}
    assert images <= {"data:image/png;base64,"}  # the heat map's raster, inline
    assert "@import" not in "".join(Dom.text(e) for e in dom.find("style"))
    csp = Dom(page).find("meta", http_equiv="Content-Security-Policy")
    assert csp and "default-src 'none'" in csp[0]["attrs"]["content"]


def test_same_input_same_bytes(report: dict) -> None:
    """A fresh process with another hash seed renders the same records to the same bytes."""
    out = report["path"].parent / "again"
    code = ("import json, sys; from pathlib import Path; from tutorzoo.eval.leaderboard import build; "
            "from tutorzoo.eval.report_html import write_html_report; "
            "records = json.loads(Path(sys.argv[1]).read_text()); "
            "write_html_report(Path(sys.argv[2]), build(records), records, json.loads(sys.argv[3]))")
    env = {**os.environ, "PYTHONHASHSEED": "12345", "OPENAI_API_KEY": ENV_SECRET}
    subprocess.run([sys.executable, "-c", code, str(report["path"].parent / "records.json"), str(out),
                    json.dumps(report["run_info"])], check=True, cwd=ROOT, env=env, timeout=300)
    assert (out / "report.html").read_bytes() == report["path"].read_bytes()


def _item_board() -> tuple[dict, list[dict]]:
    """An item suite's board and records (the kmp_skills shape): one judge-only metric not computed."""
    records = [
        {"key": f"followup:fractions:{i}", "tutor": tutor, "unit": {"skill": "followup", "task_id": "fractions",
                                                                    "seed": i},
         "prompt": f"What is 1/2 + 1/{i + 3}? <b>answer</b>", "response": f"Answer: {i}</script>",
         "grades": {"t1": {"correct": i % 2 == 0}}, "judgments": [], "failures": []}
        for tutor in ("socratic", "evil<i>tutor</i>$x$") for i in range(3)
    ]
    specs = {"followup_acc_t1": {"higher_is_better": True, "description": "follow-up accuracy, turn 1"},
             "gen_pass_rate": {"higher_is_better": True, "description": "judged problem generation"}}
    groups = {t: {"n_units": 3, "metrics": {
        "followup_acc_t1": {"mean": 0.67, "ci_low": 0.33, "ci_high": 1.0, "n": 3},
        "gen_pass_rate": {"mean": None, "ci_low": None, "ci_high": None, "n": 0,
                          "not_computed": "no judge configured (--judge)"}}}
        for t in ("socratic", "evil<i>tutor</i>$x$")}
    board = {"kind": "kmp_skills", "ranking": list(groups), "metrics": {"groups": groups}, "specs": specs,
             "columns": [["followup_acc_t1", "Follow-up t1", 1.0], ["gen_pass_rate", "Gen pass", 1.0]],
             "n_units": len(records), "n_failed_units": 0}
    return board, records


def test_item_suite_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    board, records = _item_board()
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    records[0]["grades"]["raw"] = f"judge said {ENV_SECRET}"
    page = render_html(board, records, {"suite": "kmp-skills", "kind": "kmp_skills"})
    assert ENV_SECRET not in page and "judge said ***" in page
    assert "not computed" in page and "no judge configured (--judge)" in page
    assert "evil<i>" not in page and "evil&lt;i&gt;tutor&lt;/i&gt;$x$" in page
    for note in ("no pre/post tests", "no SID dialogue metrics", "records no learning gain"):
        assert note in page
    assert {m["attrs"]["data-plot"] for m in Dom(page).find("svg", cls="plot")} == {"metrics"}
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    dom = dump_dom(path, "#ep=4", tmp_path / "profile")
    assert len(dom.find("li", cls="ep")) == len(records)
    assert Dom.text(dom.find("pre", cls="prompt")[0]) == records[4]["prompt"]
    assert Dom.text(dom.find("pre", cls="response")[0]) == records[4]["response"]
    assert "t1" in [Dom.text(dt) for dt in dom.find("dt")]
