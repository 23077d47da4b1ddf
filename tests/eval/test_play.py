"""``tutorzoo play``: a human tutor at a real pseudo-terminal, and the session loop driven in-process."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path

import pytest
from rich.console import Console

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.records import json_form
from tutorzoo.eval.play import DEFAULT_SUMMARY, PROMPT, TUTOR_NAME, annotation_line, main, play_episode

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable  # the interpreter running the tests, in whatever checkout or virtualenv
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[@-Z\\-_])")
TURNS = ("Which side of the triangle is the height?",
         "Imagine a ladder leaning on a wall: is its length how high it reaches?")


def _flat(text: str) -> str:
    """Screen text without colours and with every run of whitespace (wrapping, padding) made one space."""
    return " ".join(_ANSI.sub("", text).split())


def _play_in_pty(args: list[str], typed: list[str], timeout: float = 10.0) -> tuple[int, str]:
    """Run ``python -m tutorzoo.eval.play ARGS`` on a pty, typing each line of ``typed`` at its own prompt.

    A line of ``"\\x04"`` is Ctrl-D (end of input at an empty terminal line). Returns (exit code, screen).
    """
    pid, fd = pty.fork()
    if pid == 0:  # the child: the program under test, with the pty as its terminal
        os.chdir(ROOT)
        env = {**os.environ, "TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8", "COLUMNS": "80"}
        os.execve(PYTHON, [PYTHON, "-m", "tutorzoo.eval.play", *args], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    screen = b""
    pending = list(typed)
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                so_far = screen.decode(errors="replace")
                raise AssertionError(f"play did not finish in {timeout} s; screen so far:\n{so_far}")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            screen += chunk
            prompts = screen.count(PROMPT.encode())
            answered = len(typed) - len(pending)
            if pending and prompts > answered:
                line = pending.pop(0)
                os.write(fd, line.encode() if line == "\x04" else (line + "\n").encode())
    finally:
        reaped, status = os.waitpid(pid, os.WNOHANG)
        if reaped == 0:  # still running (a hang or a failed assertion above): kill it, never leave it behind
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        os.close(fd)
    return os.waitstatus_to_exitcode(status), screen.decode("utf-8", errors="replace")


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]


needs_pty = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pty driving is tested on Linux")


@needs_pty
def test_two_turns_and_end_show_the_whole_session(tmp_path):
    code, screen = _play_in_pty(["--seed", "0", "--out", str(tmp_path)], [*TURNS, "/end"])
    flat = _flat(screen)
    assert code == 0, screen
    assert "Traceback" not in screen
    (record,) = _records(tmp_path)
    assert record["tutor"] == TUTOR_NAME and record["ended_by"] == "end_marker"
    tutor_turns = [t for t in record["transcript"] if t["speaker"] == "tutor"]
    assert [t["utterance"] for t in tutor_turns] == [*TURNS, DEFAULT_SUMMARY.format(title=record["task"]["title"])
                                                     + " [END]"]
    # the pre-test: every item's answer and its verdict, before the dialogue
    assert "Pre-test" in flat and flat.index("Pre-test") < flat.index("Dialogue")
    for r in record["pretest"]:
        assert _flat(r["response"]) in flat
    assert f"Pre-test score: {sum(r['correct'] for r in record['pretest'])}/{len(record['pretest'])}" in flat
    # every student reply and every tutor turn's SID annotation, in order
    students = [t for t in record["transcript"] if t["speaker"] == "student"]
    assert len(students) == 3  # the opener and one reply to each of the two questions
    pos = 0
    for turn in record["transcript"]:
        needle = _flat(turn["utterance"] if turn["speaker"] == "student" else annotation_line(turn))
        found = flat.find(needle, pos)
        assert found >= 0, f"{turn['speaker']} turn {turn['turn']} not on screen in order: {needle!r}"
        pos = found
    # the post-test summary
    assert "Post-test (session ended by end_marker)" in flat
    assert "1. [isomorphic]" in flat  # brackets in text are shown, never read as rich markup
    gain = record["learning_gain"]
    assert f"learning gain {100 * gain:+.0f} points" in flat
    assert f"post-test score {100 * record['posttest_score']:.0f}%" in flat
    assert f"Recorded the episode (end_marker) in {tmp_path / 'episodes.jsonl'}" in flat


@needs_pty
def test_quit_mid_dialogue_appends_an_unfinished_record(tmp_path):
    (tmp_path / "episodes.jsonl").write_text('{"earlier": true}\n', encoding="utf-8")
    code, screen = _play_in_pty(["--seed", "1", "--persona", "weak_knowledge_partly_wrong", "--out", str(tmp_path)],
                                [TURNS[0], "/quit"])
    assert code == 0, screen
    earlier, record = _records(tmp_path)  # appended, not overwritten
    assert earlier == {"earlier": True}
    assert record["ended_by"] == "unfinished" and record["n_tutor_turns"] == 1
    assert record["posttest"] == [] and record["learning_gain"] is None
    assert [t["utterance"] for t in record["transcript"] if t["speaker"] == "tutor"] == [TURNS[0]]
    assert record["spec"]["persona"] == "weak_knowledge_partly_wrong" and record["spec"]["seed"] == 1
    assert "recorded as unfinished after 1 tutor turn." in _flat(screen)


@needs_pty
def test_eof_at_the_first_prompt_exits_cleanly(tmp_path):
    code, screen = _play_in_pty(["--out", str(tmp_path)], ["\x04"])
    assert code == 0, screen
    assert "Traceback" not in screen
    assert "End of input: the session stops here, as with /quit." in _flat(screen)
    (record,) = _records(tmp_path)
    assert record["ended_by"] == "unfinished" and record["n_tutor_turns"] == 0


# ---------------------------------------------------------------------------------------------- in-process


def _spec(**protocol) -> EpisodeSpec:
    return EpisodeSpec(task_set="math", task_id="triangle_area", persona="all_round_partly_wrong", seed=0,
                       protocol=protocol)


def _solution(spec: EpisodeSpec) -> tuple[str, ...]:
    from tutorzoo.envs import tutoring_v0

    env = tutoring_v0.env(**spec.env_kwargs())
    env.reset(seed=spec.seed)
    return env.unwrapped.task.solution


def _play(lines: list[str], spec: EpisodeSpec | None = None) -> tuple[dict, str]:
    script = iter(lines)

    def read_line(prompt: str) -> str:
        try:
            return next(script)
        except StopIteration:
            raise EOFError from None

    buf = io.StringIO()
    record = play_episode(spec or _spec(), read_line, Console(file=buf, width=80, highlight=False))
    return record, buf.getvalue()


@pytest.mark.parametrize(
    "lines,screen_needle,last_sent",
    [
        (["/hint", "/end"], "Solution (for your eyes only, not sent):", None),
        (["", "   ", "/end"], "Post-test", None),
        (["/nope", "/end"], "Unknown command '/nope' (not sent)", None),
        (["/help", "/end"], "/hint: show the task's solution steps", None),
        (["/end We found the height is the perpendicular side."], "session ended by end_marker",
         "We found the height is the perpendicular side. [END]"),
        (["/END all done [End]"], "session ended by end_marker", "all done [End]"),
        (["Good, so what is the area? [end]"], "session ended by end_marker", "Good, so what is the area? [end]"),
        (["Which side is the height?"], "End of input", "Which side is the height?"),
        (["Which side is the height?", "/quit", "never read"], "recorded as unfinished after 1 tutor turn.", None),
    ],
    ids=["hint-not-sent", "blank-not-sent", "unknown-command-not-sent", "help", "end-with-summary",
         "end-marker-not-doubled", "typed-end-marker", "eof-after-a-turn", "quit-stops-reading"],
)
def test_prompt_commands(lines, screen_needle, last_sent):
    record, screen = _play(lines)
    assert record["n_tutor_turns"] == 1  # exactly one line of each script is a turn
    assert _flat(screen_needle) in _flat(screen)
    tutor = [t["utterance"] for t in record["transcript"] if t["speaker"] == "tutor"]
    assert not any(t.startswith("/") for t in tutor)
    if last_sent is not None:
        assert tutor[-1] == last_sent


def test_hint_is_for_the_human_only():
    record, screen = _play(["/hint", "Which side is the height?", "/end"])
    flat = _flat(screen)
    steps = _solution(_spec())
    assert all(f"{i}. {_flat(step)}" in flat for i, step in enumerate(steps, start=1))
    said = json.dumps([t["utterance"] for t in record["transcript"] if t["speaker"] == "tutor"])
    assert not any(step in said for step in steps)  # the solution never reached the student


@pytest.mark.parametrize("protocol", [{}, {"opener": "tutor", "posttest": "both", "max_turns": 2}],
                         ids=["defaults", "tutor-opens-both-posttests"])
def test_same_spec_same_typing_same_record(protocol):
    lines = [*TURNS, "What do you notice about the right angle?"]
    a, screen_a = _play(lines, _spec(**protocol))
    b, screen_b = _play(lines, _spec(**protocol))
    assert json.dumps(json_form(a), sort_keys=True) == json.dumps(json_form(b), sort_keys=True)
    assert screen_a == screen_b
    if protocol.get("max_turns") == 2:
        assert a["ended_by"] == "max_turns" and a["n_tutor_turns"] == 2
        assert {r["kind"] for r in a["posttest"]} == {"isomorphic", "same"}
        assert a["transcript"][0]["speaker"] == "tutor"  # the tutor opened


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--persona", "all_round_partly_wrng"], "Did you mean"),
        (["--task-id", "triangle_are"], "Did you mean 'triangle_area'"),
        (["--max-turns", "0"], "max_turns"),
        (["--seed", "-1"], "--seed must be >= 0"),
        (["--task-set", "maths"], "unknown task set 'maths'"),
        (["--out", "/dev/null/runs"], "cannot append to /dev/null/runs/episodes.jsonl"),
    ],
    ids=["persona-typo", "task-typo", "zero-turns", "negative-seed", "task-set-typo", "unwritable-out"],
)
def test_bad_arguments_exit_2_before_the_session(argv, needle, capsys, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("the session must not start"))
    assert main(argv) == 2
    assert needle in _flat(capsys.readouterr().err)


@pytest.mark.parametrize("task_set", ["math", "stem", "mcq"])
def test_every_task_set_plays_to_the_post_test(task_set):
    spec = EpisodeSpec(task_set=task_set, persona="all_round_partly_wrong", seed=5)
    record, screen = _play([TURNS[0], "/end"], spec)
    assert record["ended_by"] == "end_marker" and record["posttest"]
    assert record["task"]["id"] in screen and "learning gain" in screen


def test_play_record_scores_like_a_rollout(tmp_path):
    from tutorzoo.eval.score import score_file

    record, _ = _play([*TURNS, "/end"])
    (tmp_path / "episodes.jsonl").write_text(json.dumps(json_form(record)) + "\n", encoding="utf-8")
    result = score_file(tmp_path / "episodes.jsonl", tmp_path)
    assert result["n_records"] == 1 and result["skipped"] == []
