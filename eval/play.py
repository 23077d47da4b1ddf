"""``tutorzoo play``: a human in the tutor's seat at the terminal, against a simulated student persona.

One episode of the very protocol the benchmarks run (pre-test -> dialogue -> post-test): the screen shows the
task and the pre-test (each item without its options, the student's answer and whether it was right, as a
tutor sees it), then the dialogue. The human types each tutor turn at the ``tutor>`` prompt; after each turn
the SID annotation the env gave it is shown (intent, strategy, guidance level, target knowledge component), so
a researcher can feel how the annotator and the simulated student react to a turn. Commands at the prompt:

- ``/end [summary]`` closes the session: sends the summary (or a short default one) with the end marker
  ``[END]``; typing ``[END]`` in a turn does the same;
- ``/hint`` prints the task's solution steps for the human's eyes only (nothing is sent);
- ``/quit`` stops early; the episode is recorded as ``ended_by="unfinished"`` with what was said. End of input
  (Ctrl-D) and Ctrl-C do the same;
- ``/help`` lists the commands. Empty lines and unknown ``/commands`` are never sent.

With ``--out DIR`` the episode record (the ``episodes.jsonl`` format of :mod:`tutorzoo.eval.rollout`, tutor
``"human"``) is appended to ``DIR/episodes.jsonl``, so ``tutorzoo score`` reads it like any rollout.

Example::

    python -m tutorzoo.eval.play --persona weak_knowledge_partly_wrong --task-set math --seed 3 --out runs/me

    from tutorzoo.eval.play import play_episode
    record = play_episode(spec, read_line=iter(["What is the height here?", "/end"]).__next__)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import TutorZooError
from tutorzoo.envs.protocols import StopEpisode
from tutorzoo.envs.records import EpisodeRecord
from tutorzoo.eval.cli_options import PROTOCOL_HELP

EXIT_OK, EXIT_ERROR = 0, 2
TUTOR_NAME = "human"
PROMPT = "tutor> "
DEFAULT_PERSONA = "all_round_partly_wrong"
# Content-free on purpose: a default close must not state the answer (the leak detector would flag it).
DEFAULT_SUMMARY = "Let's sum up what we worked on today: {title}. Good work."
COMMANDS = (
    ("/end [summary]", "close the session: send the summary (or a short default one) with the end marker [END]"),
    ("/hint", "show the task's solution steps to you only (nothing is sent)"),
    ("/quit", "stop now; the episode is recorded as unfinished (Ctrl-D and Ctrl-C do the same)"),
    ("/help", "show these commands"),
)
_COMMAND_NAMES = tuple(c.split()[0] for c, _ in COMMANDS)


def annotation_line(turn: dict) -> str:
    """The one-line SID annotation of a tutor turn of the transcript, as the screen shows it.

    Example::

        annotation_line(record["transcript"][1])
        # 'intent guide_reasoning | strategy hint | level L2 | KC base_and_height'
    """
    parts = [
        f"intent {turn['teacher_intent']}",
        f"strategy {turn['teaching_strategy'] or 'none'}",
        f"level {turn['teacher_guidance_level']}",
        f"KC {turn['target_kc'] or 'none'}",
    ]
    flags = [name for name, on in (("transfer", turn["discipline_transfer"]), ("REVEALS THE ANSWER",
             turn["reveals_answer"]), ("invalid", turn["invalid"])) if on]
    return " | ".join(parts) + (f" | {', '.join(flags)}" if flags else "")


def _percent(score: float | None) -> str:
    return "-" if score is None else f"{100 * score:.0f}%"


class _Screen:
    """What the human sees, written through one rich console; kept plain enough for an 80-column terminal."""

    def __init__(self, console: Console) -> None:
        self.c = console

    def intro(self, spec: EpisodeSpec, info: dict) -> None:
        task = info["task"]
        self.c.print(Rule(Text(f"TutorZoo play: {task['title']}", style="bold")))
        self.c.print(Text.assemble(("Task ", "bold"), f"{task['id']} ({task['task_set']}, grade {task['grade']})"))
        self.c.print(Text(task["statement"]))
        kcs = ", ".join(k["name"] for k in task["knowledge_components"])
        self.c.print(Text.assemble(("Knowledge components: ", "bold"), kcs))
        self.c.print(Text.assemble(("Student: ", "bold"), f"simulated, persona {spec.persona} (seed {spec.seed})"))
        self.c.print(Text.assemble(("You are the tutor: ", "bold"),
                                   f"at most {info['max_turns']} turns. Commands: {', '.join(_COMMAND_NAMES)}."))

    def pretest(self, results: list[dict]) -> None:
        self.c.print(Rule("Pre-test (what the student answered)"))
        for i, r in enumerate(results, start=1):
            self._labelled(f"{i}.", r["question"])
            verdict = Text("right", style="green") if r["correct"] else Text(f"wrong (answer: {r['answer']})",
                                                                             style="red")
            self._labelled("   student:", Text.assemble(r["response"] or "(no answer)", " -> ", verdict))
        right = sum(r["correct"] for r in results)
        self.c.print(Text(f"Pre-test score: {right}/{len(results)}", style="bold"))
        self.c.print(Rule("Dialogue"))

    def _labelled(self, label: str | Text, body: str | Text) -> None:
        # A two-column grid gives wrapped text a hanging indent, which keeps long student turns readable.
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        # Plain strings become Text: utterances and stems may hold brackets that rich would read as markup.
        grid.add_row(*(Text(x) if isinstance(x, str) else x for x in (label, body)))
        self.c.print(grid)

    def student(self, turn: dict) -> None:
        self._labelled(Text("student:", style="bold cyan"),
                       Text.assemble(turn["utterance"], (f"  [{turn['student_cognition_state']}]", "dim")))

    def annotation(self, turn: dict, max_turns: int) -> None:
        self._labelled(Text(f"  SID {turn['turn']}/{max_turns}:", style="bold magenta"),
                       Text(annotation_line(turn), style="magenta"))

    def hint(self, task: dict) -> None:
        self.c.print(Text("Solution (for your eyes only, not sent):", style="yellow"))
        for i, step in enumerate(task["solution"], start=1):
            self._labelled(Text(f"  {i}.", style="yellow"), Text(step, style="yellow"))
        self.c.print(Text(f"  Answer: {task['answer']}", style="yellow"))

    def help(self) -> None:
        for name, what in COMMANDS:
            self.c.print(Text.assemble(("  " + name, "bold"), f": {what}"))

    def note(self, message: str, style: str = "dim") -> None:
        self.c.print(Text(message, style=style))

    def outcome(self, record: EpisodeRecord, stems: dict[str, str]) -> None:
        if record["ended_by"] == "unfinished":
            self.c.print(Rule("Session stopped"))
            n = record["n_tutor_turns"]
            self.note(f"No post-test: the episode is recorded as unfinished after {n} tutor turn"
                      f"{'' if n == 1 else 's'}.", style="bold")
            return
        self.c.print(Rule(f"Post-test (session ended by {record['ended_by']})"))
        for i, r in enumerate(record["posttest"], start=1):
            self._labelled(f"{i}.", f"[{r['kind']}] {stems.get(r['item_id'], r['item_id'])}")
            verdict = Text("right", style="green") if r["correct"] else Text("wrong", style="red")
            self._labelled("   student:", Text.assemble(r["response"] or "(no answer)", " -> ", verdict))
        table = Table(box=None, show_header=False, pad_edge=False)
        table.add_row("pre-test score", _percent(record["pretest_score"]))
        table.add_row("post-test score", _percent(record["posttest_score"]))
        if record["posttest_same_score"] is not None and record["posttest_score"] != record["posttest_same_score"]:
            table.add_row("same-item post-test", _percent(record["posttest_same_score"]))
        gain = record.learning_gain
        table.add_row("learning gain", "-" if gain is None else f"{100 * gain:+.0f} points")
        self.c.print(table)


def _read_turn(read_line: Callable[[str], str], screen: _Screen, info: dict) -> str | None:
    """The next tutor utterance to send, or ``None`` when the human stops (``/quit``, EOF, Ctrl-C)."""
    while True:
        try:
            line = read_line(PROMPT)
        except EOFError:
            screen.note("\nEnd of input: the session stops here, as with /quit.", style="bold")
            return None
        except KeyboardInterrupt:
            screen.note("\nInterrupted: the session stops here, as with /quit.", style="bold")
            return None
        text = line.strip()
        if not text:
            continue  # an accidental Enter must not spend a turn (the env would count an invalid turn)
        command, _, rest = text.partition(" ")
        if not command.startswith("/"):
            return text
        command = command.lower()
        if command == "/quit":
            return None
        if command == "/end":
            summary = rest.strip() or DEFAULT_SUMMARY.format(title=info["task"]["title"])
            # The env's annotator reads the marker anywhere, any case; append it only when absent.
            return summary if "[end]" in summary.lower() else f"{summary} [END]"
        if command == "/hint":
            screen.hint(info["task"])
        elif command == "/help":
            screen.help()
        else:
            screen.note(f"Unknown command {command!r} (not sent). Commands: {', '.join(_COMMAND_NAMES)}.",
                        style="red")


def play_episode(
    spec: EpisodeSpec, read_line: Callable[[str], str] = input, console: Console | None = None,
    student: Any | None = None,
) -> dict:
    """Play one episode with a human tutor reading turns from ``read_line``; return its episode record.

    ``read_line(prompt)`` returns one typed line and raises ``EOFError`` at the end of input (``input`` does).
    The episode is played by the rollout engine (:func:`tutorzoo.envs.engine.play`), seeded as every entry point seeds
    it, so the same spec and the same typed turns give the same record as the harness, to the byte.

    Example::

        spec = EpisodeSpec(task_set="math", persona="all_round_partly_wrong", seed=0)
        record = play_episode(spec, read_line=iter(["Which side is the height?", "/end"]).__next__)
        record["ended_by"]  # 'end_marker'
    """
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.envs.engine import play

    screen = _Screen(console if console is not None else Console(highlight=False))
    student = student if student is not None else SimulatedStudent(spec.persona)  # or an LLM student (--student)
    human = _HumanTutor(spec, read_line, screen)
    [record] = play([spec], human, lambda _persona: student, tutor_name=TUTOR_NAME, observer=human, strict=True)
    screen.outcome(record, human.stems)
    return record


class _HumanTutor:
    """The human's seat: reads each turn at the prompt, and keeps the screen in step with the episode (an
    :class:`tutorzoo.envs.engine.Observer`: the intro, the pre-test, each student turn, each turn's annotation)."""

    name = TUTOR_NAME

    def __init__(self, spec: EpisodeSpec, read_line: Callable[[str], str], screen: _Screen) -> None:
        self.spec = spec
        self.read_line = read_line
        self.screen = screen
        self.shown = 0  # transcript entries already on screen
        self.intro_done = self.pretest_done = False
        self.stems: dict[str, str] = {}

    def reset(self, seed: int | None = None) -> None:
        """A human needs no seed."""

    def before_tutor(self, episode: Any, observation: dict, info: dict) -> None:
        raw = episode.env.unwrapped
        if not self.intro_done:
            self.stems = {it.id: it.stem for it in raw.task.pretest + raw.task.posttest}
            self.screen.intro(self.spec, info)
            self.intro_done = True
        if not self.pretest_done and info["phase"] != "pretest":
            self.screen.pretest(info["pretest"])
            self.pretest_done = True
        for turn in raw.transcript[self.shown:]:
            if turn["speaker"] == "student":
                self.screen.student(turn)
        self.shown = len(raw.transcript)

    def act(self, observation: dict, info: dict) -> str:
        text = _read_turn(self.read_line, self.screen, info)
        if text is None:  # /quit, end of input, Ctrl-C: the episode is recorded as it stands
            raise StopEpisode
        return text

    def after_tutor(self, episode: Any, info: dict) -> None:
        transcript = episode.env.unwrapped.transcript
        self.screen.annotation(transcript[-1], info["max_turns"])
        self.shown = len(transcript)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tutorzoo play",
                                description="Be the tutor: play one session against a simulated student.")
    p.add_argument("--persona", default=DEFAULT_PERSONA, help=PROTOCOL_HELP["persona"])
    p.add_argument("--task-set", default="math", help=PROTOCOL_HELP["task_set"])
    p.add_argument("--task-id", default=None, help="default: drawn from the seed")
    p.add_argument("--task-path", default=None, help="data for the task set (mcq bank file, lesson folder)")
    p.add_argument("--seed", type=int, default=0, help="the session's seed: the task, the student's draws (default 0)")
    p.add_argument("--max-turns", type=int, default=8, help=PROTOCOL_HELP["max_turns"])
    p.add_argument("--opener", choices=["student", "tutor"], default="student", help=PROTOCOL_HELP["opener"])
    p.add_argument("--posttest", choices=["isomorphic", "same", "both"], default="isomorphic",
                   help=PROTOCOL_HELP["posttest"])
    p.add_argument("--out", default=None,
                   help="folder whose episodes.jsonl receives the record: appended, never replacing what is there")
    p.add_argument("--student", default="simulated", help="simulated, llm:<backend> or hybrid:<backend> (e.g. "
                   "llm:hf:models/tiny): who sits in the student's seat")
    p.add_argument("--student-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="repeatable: a backend option of an LLM student (values read as YAML)")
    p.add_argument("--student-base-url", default=None, help="OpenAI-compatible endpoint for --student llm:openai:M")
    return p


def _student(args: argparse.Namespace) -> Any:
    """The ``--student`` of the session (an LLM student loads its model here, before the session starts)."""
    import yaml

    from tutorzoo.agents.student.llm import make_student_factory

    kwargs: dict = {}
    for item in args.student_arg:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise TutorZooError(f"--student-arg takes KEY=VALUE, got {item!r}")
        kwargs[key] = yaml.safe_load(value)
    if args.student_base_url:
        kwargs["base_url"] = args.student_base_url
    return make_student_factory(args.student, **kwargs)(args.persona)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tutorzoo play``; returns 0 (played, even if stopped early) or 2 (bad arguments).

    Example::

        main(["--persona", "low_motivation_asks_for_hint", "--seed", "4", "--out", "runs/me"])
    """
    from tutorzoo.agents.student.personas import get_persona
    from tutorzoo.envs.config import make_config
    from tutorzoo.eval.rollout import JsonlWriter

    args = _parser().parse_args(argv)
    console = Console(highlight=False)
    writer: JsonlWriter | None = None
    try:
        if args.seed < 0:
            raise TutorZooError(f"--seed must be >= 0, got {args.seed}")
        get_persona(args.persona)  # fail before the session starts, with a did-you-mean
        protocol: dict = {"max_turns": args.max_turns, "opener": args.opener, "posttest": args.posttest}
        if args.task_path:
            protocol["task_path"] = args.task_path
        make_config(task_set=args.task_set, task_id=args.task_id, **protocol)
        spec = EpisodeSpec(task_set=args.task_set, task_id=args.task_id, persona=args.persona, seed=args.seed,
                           protocol=protocol)
        if args.out is not None:
            from tutorzoo.eval.runner import check_out_dir, read_records

            check_out_dir(Path(args.out))
            path = Path(args.out) / "episodes.jsonl"
            before = len(read_records(path)) if path.exists() else 0
            try:  # open before the session: a human's session must not be lost to an unwritable folder
                writer = JsonlWriter(path)
            except OSError as exc:
                raise TutorZooError(f"--out {args.out}: cannot append to {path} ({exc.strerror}); "
                                    "give a writable folder") from None
            # play never deletes: each session is one more record (the rule of eval and rollout is to refuse)
            console.print(Text(f"This session will be appended to {path} ({before} records there already; "
                               "nothing in it is replaced).", style="dim"))
        record = play_episode(spec, input, console, _student(args))
        if writer is not None:
            writer(record)
            console.print(Text(f"Recorded the episode ({record['ended_by']}) in {writer.path}", style="bold"))
    except TutorZooError as exc:
        Console(stderr=True, highlight=False).print(Text(f"tutorzoo play: {exc}", style="red"))
        return EXIT_ERROR
    finally:
        if writer is not None:
            writer.close()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
