"""Act mode reads a verbalised act's words only when the student replies to them: a closing act is followed by the
post-test, so its words are not read, and the episode is the one a reader of every act would play."""

from __future__ import annotations

import pytest

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.envs import tutoring_v0
from tutorzoo.envs.content import EMPTY, ContentReader, Reading
from tutorzoo.envs.tasks.base import Task

OPEN_ACT = [1, 0, 1, 0, 0]  # check understanding on the first component, no end flag
CLOSING_ACT = [1, 0, 1, 0, 1]  # the same act with the end flag
# closing acts that say much and nothing: a worked example, a summary of the task, a move on no component
CLOSINGS = {"worked_example": [0, 8, 0, 0, 1], "summary": [4, 8, 0, 0, 1], "content_free": [2, 5, 1, 7, 1]}


class CountingReader:
    """The rule reader, keeping every text it was asked to read."""

    def __init__(self, task: Task, texts: list[str]) -> None:
        self.reader, self.texts = ContentReader.for_task(task), texts

    def read(self, text: str) -> Reading:
        self.texts.append(text)
        return self.reader.read(text)


def _play(acts: list[list[int]], seed: int = 4) -> tuple[list[str], list[str], list[Reading], dict]:
    """One act-mode episode with ``acts`` in turn: the texts read, the tutor's utterances, each act's content, and
    the record."""
    read: list[str] = []
    env = tutoring_v0.env(task_set="math", action_mode="act", max_turns=4,
                          reader=lambda task: CountingReader(task, read))
    env.reset(seed=seed)
    student = SimulatedStudent("all_round_partly_wrong")
    student.reset(seed=seed)
    said, contents, moves = [], [], iter(acts)
    for agent in env.agent_iter(max_iter=200):
        obs, _reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
        elif agent == "student":
            env.step(student.act(obs, info))
        elif info["observe_only"]:
            env.step("")
        else:
            env.step(next(moves))
            said.append(env.unwrapped.transcript[-1]["utterance"])
            contents.append(env.unwrapped._last_tutor_act.content)
    return read, said, contents, env.unwrapped.episode_record().to_json()


def test_a_closing_act_is_not_read() -> None:
    read, said, contents, record = _play([OPEN_ACT, CLOSING_ACT])
    assert len(said) == 2 and record["ended_by"] == "end_marker"
    assert read == [said[0]]  # the act the student replied to, and only it
    assert contents[0] is not EMPTY and contents[0].claims  # what the student learnt from
    assert contents[1] is EMPTY


@pytest.mark.parametrize("seed", [0, 4, 11])
def test_what_a_closing_act_says_changes_no_test_result(seed: int) -> None:
    # why its words need no reading: the post-test follows, and the student's answers are the same whatever the
    # closing act says
    played = {name: _play([OPEN_ACT, act], seed) for name, act in CLOSINGS.items()}
    said = {name: p[1][1] for name, p in played.items()}
    assert len(set(said.values())) == len(CLOSINGS)  # three different closing turns
    records = [p[3] for p in played.values()]
    for key in ("pretest", "posttest", "pretest_score", "posttest_score", "learning_gain", "privileged_student_state"):
        assert all(r[key] == records[0][key] for r in records), key
