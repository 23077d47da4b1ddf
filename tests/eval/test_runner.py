"""The benchmark harness (eval/runner.py): resumable, parallel, fault-tolerant runs of any suite kind.

The central property: an interrupted run plus its ``--resume`` equals an uninterrupted run — the same records
(nothing lost, nothing doubled) and a byte-identical ``metrics.json`` — whatever the worker count.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from chat_server import ChatServer
from runner_fixtures import CRASH_SEED

from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.envs.records import json_form
from tutorzoo.eval.cli import main
from tutorzoo.eval.kinds import KINDS, get_kind, kind_for
from tutorzoo.eval.runner import read_records, run_suite
from tutorzoo.eval.suite import Suite, load_suite

ROOT = Path(__file__).resolve().parents[2]
TESTS = Path(__file__).resolve().parents[1]
KILL_ARGS = ["--no-html", "--suite", "default", "--limit", "6", "--tutor", "runner_fixtures:SlowSocratic",
             "--tutor", "lecturer"]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _canonical(path: Path) -> list[str]:
    return sorted(json.dumps(json.loads(line), sort_keys=True) for line in _lines(path))


def _pairs(path: Path) -> list[tuple[str, str]]:
    return [(r["tutor"], r["key"]) for r in map(json.loads, _lines(path))]


def _session_processes(sid: int) -> list[int]:
    """Live (non-zombie) processes of session ``sid`` (a killed run's forkserver and workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").exists(), reason="needs /proc to find the killed run's processes")
def test_kill_and_resume_equals_an_uninterrupted_run(tmp_path):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main(["eval", *KILL_ARGS, "--workers", "1", "--out", str(whole)]) == 0
    total = len(_lines(whole / "episodes.jsonl"))
    assert total == 12

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT)])}
    proc = subprocess.Popen([sys.executable, "-m", "tutorzoo", "eval", *KILL_ARGS, "--workers", "2", "--out", str(cut)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    path = cut / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while len(_lines(path)) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)  # the main process only, as a crash or an OOM kill would
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    written = len(_lines(path))
    assert 3 <= written < total, f"the kill came too late to test anything ({written} of {total} written)"
    assert not (cut / "metrics.json").exists()
    deadline = time.monotonic() + 10  # the orphaned workers notice and exit
    while _session_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _session_processes(proc.pid), "worker processes outlived the killed run"

    assert main(["eval", *KILL_ARGS, "--workers", "1", "--resume", "--out", str(cut)]) == 0
    pairs = _pairs(path)
    assert len(pairs) == len(set(pairs)) == total, "a record was lost or doubled"
    assert _canonical(path) == _canonical(whole / "episodes.jsonl")
    assert (cut / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()
    # report.md ends with the run's metadata (date, command line, wall time), which differ by design
    def _results(path: Path) -> bytes:
        return path.read_bytes().split(b"\n## Run metadata\n")[0]

    assert b"\n## Run metadata\n" in (cut / "report.md").read_bytes()
    assert _results(cut / "report.md") == _results(whole / "report.md")


def test_truncated_last_line_is_dropped_and_its_unit_rerun(tmp_path, capsys):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    args = ["eval", "--suite", "default", "--limit", "3", "--tutor", "socratic", "--workers", "1", "--no-html"]
    assert main([*args, "--out", str(whole)]) == 0
    assert main([*args, "--out", str(cut)]) == 0
    path = cut / "episodes.jsonl"
    lines = _lines(path)
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2], encoding="utf-8")
    assert len(read_records(path)) == 2  # the half line is not a record
    assert main([*args, "--resume", "--out", str(cut)]) == 0
    assert "2 of 3 records already done" in capsys.readouterr().out
    assert _canonical(path) == _canonical(whole / "episodes.jsonl")
    assert (cut / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()


def test_a_corrupt_line_in_the_middle_is_refused(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text('{"tutor": "a", "key": "1"}\n{"tutor": "a", "ke\n{"tutor": "a", "key": "3"}\n')
    with pytest.raises(DatasetError, match=r"records.jsonl:2: not a JSON record"):
        read_records(path)


@pytest.mark.parametrize(
    "second,needle",
    [(["--suite", "educationq", "--limit", "2", "--resume"], "belongs to suite 'default'"),
     (["--suite", "default", "--limit", "3", "--resume"], "limit: 2 there, 3 now"),
     (["--suite", "default", "--limit", "2"], "pass --resume to continue that run, --overwrite to start it over"),
     (["--suite", "default", "--limit", "2", "--resume", "--overwrite"], "give one of them")],
    ids=["other-suite", "other-limit", "no-resume-flag", "resume-and-overwrite"],
)
def test_an_existing_output_is_never_overwritten(tmp_path, capsys, second, needle):
    first = ["eval", "--suite", "default", "--limit", "2", "--tutor", "random", "--workers", "1", "--no-html",
             "--out", str(tmp_path)]
    assert main(first) == 0
    before = (tmp_path / "episodes.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["eval", *second, "--tutor", "random", "--workers", "1", "--no-html", "--out", str(tmp_path)]) == 2
    assert needle in " ".join(capsys.readouterr().out.split())
    assert (tmp_path / "episodes.jsonl").read_bytes() == before


def test_overwrite_starts_the_run_over(tmp_path):
    args = ["eval", "--suite", "default", "--tutor", "random", "--workers", "1", "--no-html", "--out", str(tmp_path)]
    assert main([*args, "--limit", "3"]) == 0
    assert main([*args, "--limit", "2", "--overwrite"]) == 0
    assert len(_lines(tmp_path / "episodes.jsonl")) == 2
    assert json.loads((tmp_path / "run.json").read_text())["limit"] == 2


def test_parallel_workers_give_the_records_and_metrics_of_one(tmp_path):
    suite = load_suite("default")
    one = run_suite(suite, tmp_path / "one", limit=5, workers=1)
    two = run_suite(suite, tmp_path / "two", limit=5, workers=2)
    dump = [json.dumps(json_form(r), sort_keys=True) for r in one.records]
    assert dump == [json.dumps(json_form(r), sort_keys=True) for r in two.records]
    assert [r["tutor"] for r in two.records] == ["socratic"] * 5 + ["lecturer"] * 5 + ["random"] * 5
    assert one.failures["n_records_with_failures"] == 0


def test_a_crashed_worker_fails_only_its_chunk_and_the_run_goes_on(tmp_path):
    suite = load_suite("default")
    result = run_suite(suite, tmp_path, limit=4, workers=2, tutors=["runner_fixtures:CrashingTutor", "socratic"])
    assert len(result.records) == 8
    crashed = [r for r in result.records if r["failures"]]
    # the chunks are single units here: the crashing unit alone fails, every other unit played normally
    assert [(r["tutor"], r["spec"]["seed"]) for r in crashed] == [("runner_fixtures:CrashingTutor", CRASH_SEED)]
    assert crashed[0]["ended_by"] == "failure" and crashed[0]["failures"][0]["agent"] == "harness"
    assert crashed[0]["failures"][0]["error"].startswith("WorkerCrashed: the worker process died")
    assert result.failures["by_tutor"] == {"runner_fixtures:CrashingTutor": 1}
    assert result.failures["by_error"] == {"harness: WorkerCrashed": 1}
    assert all(r["posttest"] for r in result.records if not r["failures"])
    assert len(_lines(tmp_path / "episodes.jsonl")) == 8, "every record, crashed or not, is on disk"


def test_a_kind_that_raises_keeps_the_records_it_finished(tmp_path, monkeypatch):
    from tutorzoo.eval.kinds.episodes import EpisodesKind

    original = EpisodesKind.run

    def first_then_raise(self, units, tutor, tutor_name, judge, batch_size):
        yield next(original(self, units, tutor, tutor_name, judge, batch_size))
        raise MemoryError("out of memory")

    monkeypatch.setattr(EpisodesKind, "run", first_then_raise)
    result = run_suite(load_suite("default"), tmp_path, limit=8, workers=1, tutors=["socratic"])  # chunks of 2
    failed = [i for i, r in enumerate(result.records) if r["failures"]]
    assert failed == [1, 3, 5, 7]
    assert result.failures["by_error"] == {"harness: MemoryError": 4}
    assert all(result.records[i]["posttest"] for i in (0, 2, 4, 6))


def test_tutor_failures_are_counted_in_metrics_json(tmp_path, capsys):
    args = ["eval", "--suite", "default", "--limit", "2", "--tutor", "tutor_fixtures:FlakyTutor", "--tutor", "socratic",
            "--workers", "1", "--no-html", "--out", str(tmp_path)]
    assert main(args) == 1  # written, but FlakyTutor scored nothing: not a silent success
    out = capsys.readouterr().out
    assert "tutor: TimeoutError x2" in out and "tutor_fixtures:FlakyTutor scored nothing" in out
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["failures"]["by_tutor_error"] == {"tutor_fixtures:FlakyTutor": {"tutor: TimeoutError": 2}}
    assert metrics["n_failed_episodes"] == 2 and metrics["n_episodes"] == 4


SID_REPLY = json.dumps({"X-SRG": 4, "M-RCC": 3, "X-MSR": 4, "IRA": 5, "TCF": 4, "reason": "sound scaffolding"})


def test_sid_rubrics_are_judged_with_a_judge_and_not_computed_without(tmp_path, capsys):
    base = ["eval", "--suite", "sid", "--limit", "2", "--tutor", "socratic", "--workers", "1", "--no-html"]
    assert main([*base, "--out", str(tmp_path / "plain")]) == 0
    plain = json.loads((tmp_path / "plain" / "metrics.json").read_text())
    assert plain["groups"]["socratic"]["metrics"]["X-SRG"]["mean"] is None
    assert plain["not_computed"]["X-SRG"].startswith("no judge configured")
    assert "Not computed: X-SRG" in capsys.readouterr().out
    with ChatServer(responder=lambda body, index: SID_REPLY) as server:
        assert main([*base, "--judge", "openai:judge", "--judge-base-url", server.url,
                     "--out", str(tmp_path / "judged")]) == 0
        bodies = list(server.requests)
    judged = json.loads((tmp_path / "judged" / "metrics.json").read_text())
    m = judged["groups"]["socratic"]["metrics"]
    assert m["X-SRG"]["mean"] == 4.0 and m["IRA"]["mean"] == 5.0 and m["X-SRG"]["n"] == 2
    assert "X-SRG" not in judged["not_computed"]
    records = [json.loads(x) for x in _lines(tmp_path / "judged" / "episodes.jsonl")]
    assert all(r["judgments"][0]["rubric"] == "sid_rubrics" and r["judgments"][0]["ok"] for r in records)
    assert len(bodies) == 2 and all(b["temperature"] == 0.1 for b in bodies)  # the suite's judge default


def test_educationq_ranks_by_alg_on_both_post_tests(tmp_path):
    from tutorzoo.eval.leaderboard import build

    suite = load_suite("educationq")
    result = run_suite(suite, tmp_path, limit=6, workers=1)
    board = build(result.records, result.kind, result.judged)
    assert board["rank_metric"] == "ALG"
    groups = board["metrics"]["groups"]
    algs = [groups[t]["metrics"]["ALG"]["mean"] for t in board["ranking"]]
    assert algs == sorted(algs, reverse=True)
    for name in ("ALG", "ALG_same", "PNIR", "CSS", "UIC", "PNIR_same", "UIC_same"):
        assert name in groups["socratic"]["metrics"]
    assert all(r["config"]["posttest"] == "both" and r["config"]["max_turns"] == 5 for r in result.records)


# ---------------------------------------------------------------------------------------------- kinds and suites


def test_kind_registry_names_the_missing_module(monkeypatch):
    monkeypatch.setitem(KINDS, "ghost", "tutorzoo.eval.kinds.ghost_kind_not_written:GhostKind")
    with pytest.raises(ConfigError, match="suite kind 'ghost' is not available: its module"):
        get_kind("ghost")
    assert get_kind("episodes").rank_metric == "learning_gain"  # the others are unaffected
    with pytest.raises(ConfigError, match="Did you mean 'episodes'"):
        get_kind("episode")


@pytest.mark.parametrize(
    "content,needle",
    [("name: x\nversion: 1\ntutors: [socratic]\n", "needs at least one block"),
     ("name: x\nversion: 1\nkind: kmp_skills\ntutors: [socratic]\nblocks: [{personas: {names: [anxious]}}]\n",
      "blocks are for episodes suites"),
     ("name: x\nversion: 1\nkind: episodez\ntutors: [socratic]\n", "Did you mean 'episodes'"),
     ("name: x\nversion: 1\ntutors: [socratic]\nitems: {rank_metric: Gainz}\n"
      "blocks: [{personas: {families: [sid_core]}}]\n", "unknown metrics ['Gainz']"),
     ("name: x\nversion: 1\ntutors: [socratic]\nitems: {rubric: [sid_rubrics]}\n"
      "blocks: [{personas: {families: [sid_core]}}]\n", "items.rubric"),
     ("name: x\nversion: 1\ntutors: [socratic]\njudge: {samples: 0}\n"
      "blocks: [{personas: {families: [sid_core]}}]\n", "judge.samples")],
    ids=["no-blocks", "blocks-for-items-kind", "unknown-kind", "unknown-rank-metric", "unknown-setting",
         "bad-judge-default"],
)
def test_bad_suite_settings_name_the_fix(tmp_path, content, needle):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        load_suite(str(path))


def test_the_held_out_split_of_episodes_is_unchanged():
    suite = load_suite("default")
    held = suite.units("held_out")
    assert [s.key() for s in held] == [s.key() for s in suite.specs("held_out")]
    assert len(held) == 275 and len(suite.units("train")) == 829  # as before suite kinds existed
    assert held[0].key() == "math/two_digit_addition/all_round_asks_for_hint/3/max_turns=8,opener=student,posttest=both"


def test_suite_judge_defaults_fill_only_unset_fields():
    from tutorzoo.eval.judges import JudgeConfig

    suite = load_suite("sid")
    assert suite.rubrics == ("sid_rubrics",) and load_suite("default").rubrics == ()
    assert suite.judge_config(JudgeConfig(backend="openai:j")).temperature == 0.1
    assert suite.judge_config(JudgeConfig(backend="openai:j", temperature=0.7)).temperature == 0.7
    assert suite.judge_config(None) is None


def test_an_episode_that_never_ran_still_scores(tmp_path):
    """A crashed unit's record (the env's reset record, no turn) goes through the metrics without error."""
    suite = Suite.model_validate({"name": "t", "version": 1, "tutors": ["socratic"],
                                  "blocks": [{"personas": {"names": ["anxious"]}, "seeds": 2}]})
    kind = kind_for(suite)
    unit = suite.units()[0]
    failure = {"agent": "harness", "phase": None, "turn": None, "error": "WorkerCrashed: test", "traceback": ""}
    record = kind.failure_record(unit, "socratic", failure)
    assert record["key"] == unit.key() and record["ended_by"] == "failure" and record["transcript"] == []
    played = next(kind.run([suite.units()[1]], make_tutor("socratic"), "socratic", None, 4))
    metrics = kind.metrics([record, played], judged=False)
    assert metrics["groups"]["socratic"]["n_units"] == 2
    assert metrics["groups"]["socratic"]["metrics"]["learning_gain"]["n"] == 1


# ---------------------------------------------------------------------------------------------- model tutors


def test_batched_tutors_get_chunks_cut_at_fixed_positions():
    from tutorzoo.eval.runner import _chunks

    suite = load_suite("default")
    units = suite.units()[:7]
    keys = [u.key() for u in units]
    pending = {"hf:m": set(keys) - {keys[2]}, "socratic": set(keys)}  # unit 2 of the model tutor is done
    chunks = _chunks(suite, units, pending, {"hf:m": True, "socratic": False}, {}, None, batch_size=3, workers=2)
    model = [[keys.index(u.key()) for u in c.units] for c in chunks if c.tutor == "hf:m"]
    assert model == [[0, 1], [3, 4, 5], [6]]  # not [[0, 1, 3], [4, 5, 6]]: later batches are those of a fresh run
    plain = [keys.index(u.key()) for c in chunks if c.tutor == "socratic" for u in c.units]
    assert plain == list(range(7))


@pytest.mark.slow
def test_a_resumed_sampling_model_tutor_replays_the_untouched_batches(tmp_path, tiny_model_dir):
    args = ["eval", "--suite", "default", "--limit", "5", "--tutor", f"hf:{tiny_model_dir}", "--tutor-arg",
            "max_new_tokens=6", "--batch-size", "2", "--workers", "1", "--no-html"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main([*args, "--out", str(whole)]) == 0
    assert main([*args, "--out", str(cut)]) == 0
    path = cut / "episodes.jsonl"
    path.write_text("\n".join(_lines(path)[:3]) + "\n", encoding="utf-8")  # killed inside the batch [2, 3]
    assert main([*args, "--resume", "--out", str(cut)]) == 0
    before = {r["key"]: json.dumps(r, sort_keys=True) for r in map(json.loads, _lines(whole / "episodes.jsonl"))}
    after = {r["key"]: json.dumps(r, sort_keys=True) for r in map(json.loads, _lines(path))}
    keys = [u.key() for u in load_suite("default").units()[:5]]
    same = [k for k in keys if before[k] == after[k]]
    # unit 3 is re-sampled alone (its batch was cut); units 0-2 are kept and unit 4 gets its original batch
    assert same == [keys[0], keys[1], keys[2], keys[4]]


# ---------------------------------------------------------------------------------------------- the CLI's hooks


def test_eval_hands_its_results_to_the_html_report_and_wandb(tmp_path, monkeypatch):
    import tutorzoo.eval.report_html as report_html
    import tutorzoo.eval.wandb_log as wandb_log

    calls: dict[str, tuple] = {}
    monkeypatch.setattr(report_html, "write_html_report",
                        lambda out, board, records, info: calls.setdefault("html", (board, records, info)) and
                        out / "report.html")
    monkeypatch.setattr(wandb_log, "log_run",
                        lambda out, info, records, board, project: calls.setdefault("wandb", (info, project)) and None)
    assert main(["eval", "--suite", "default", "--limit", "2", "--tutor", "random", "--workers", "1", "--wandb",
                 "--wandb-project", "p", "--out", str(tmp_path)]) == 0
    board, records, info = calls["html"]
    assert board["kind"] == "episodes" and "learning_gain" in board["specs"] and len(records) == 2
    assert info["suite"] == "default"
    wandb_info, project = calls["wandb"]
    assert project == "p" and wandb_info["workers"] == 1 and wandb_info["limit"] == 2
