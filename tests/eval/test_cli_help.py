"""Complete help texts and listings: every option and positional of every ``tutorzoo`` subcommand (those with a
parser of their own included, and their sub-subcommands) has help text, and ``tutorzoo list tutors`` gives each
tutor a whole sentence."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from tutorzoo.agents.tutor.registry import TUTORS
from tutorzoo.eval import cli


class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _own_parser(name: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser a passthrough subcommand builds, caught as it starts parsing (nothing runs)."""
    def capture(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _Captured(self)

    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_known_args", capture)
        m.setattr(argparse.ArgumentParser, "parse_args", capture)
        try:
            cli.main([name, "grpo"] if name == "train" else [name])
        except _Captured as caught:
            return caught.parser
    raise AssertionError(f"tutorzoo {name} parsed nothing")


def _walk(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{path} {name}", argparse.Action([name], name, help=helps.get(name))
                yield from _walk(sub, f"{path} {name}")
            continue
        yield path, action


def _all_actions(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, argparse.Action]]:
    found = [(where, a) for where, a in _walk(cli.parser(), "tutorzoo") if where.split()[1] not in cli.PASSTHROUGH]
    for name in cli.PASSTHROUGH:
        found += list(_walk(_own_parser(name, monkeypatch), f"tutorzoo {name}"))
    return found


def test_every_option_has_help(monkeypatch: pytest.MonkeyPatch) -> None:
    actions = _all_actions(monkeypatch)
    assert len(actions) > 80  # every subcommand was reached
    missing = [f"{where} {'/'.join(a.option_strings) or a.dest}" for where, a in actions
               if a.help is None or not str(a.help).strip()]
    assert missing == []


def test_rollout_help_explains_persona(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["rollout", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert re.search(r"--persona PERSONA [a-z]", text), text


def test_list_tutors_gives_whole_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["list", "tutors"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    described = {line.split()[0]: line.split(None, 1)[1] for line in lines if line.split()[0] in TUTORS}
    assert set(described) == set(TUTORS)
    for name, text in described.items():
        assert text.endswith((".", ")")), f"{name}: {text!r} stops mid-sentence"
        assert text.count("(") == text.count(")"), f"{name}: {text!r}"
