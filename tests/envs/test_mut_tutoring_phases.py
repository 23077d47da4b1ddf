"""What the tutor is shown when the dialogue ends, observed at once (PettingZoo's ``observe`` works for any
agent at any step), for each way the dialogue can end: only the turn limit announces that the post-test is
starting; a leak (hard mode) or the tutor's own end marker does not claim the limit was reached.
"""

from __future__ import annotations

import pytest

from tests.envs.test_mut_tutoring import QUESTION, Leaky, right
from tutorzoo.envs.tutoring import TutoringEnv

LIMIT = "The dialogue is over; the post-test is starting."


def _text_after_the_last_tutor_turn(env: TutoringEnv, tutor: str) -> tuple[str, str, str]:
    """The tutor's observation right after the step that ended the dialogue, the phase then, and ended_by."""
    env.reset(seed=0)
    for agent in env.agent_iter(max_iter=500):
        _obs, _r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        phase_before = env.phase
        if agent == "tutor":
            env.step(tutor if phase_before == "dialogue" and not info["observe_only"] else QUESTION)
        else:
            env.step(right(info["item"]) if "item" in info else "I am not sure yet.")
        if phase_before == "dialogue" and env.phase == "posttest":
            return env.observe("tutor")["text"], env.phase, env.ended_by or ""
    raise AssertionError("the dialogue never ended")


@pytest.mark.parametrize(("reward", "max_turns", "tutor", "ended_by", "announced"), [
    pytest.param(None, 1, QUESTION, "", True, id="turn-limit"),
    pytest.param(None, 5, "Good, we covered it: keep practising. [END]", "end_marker", False, id="end-marker"),
    pytest.param(Leaky(), 5, "The answer is {answer}.", "leak", False, id="hard-mode-leak"),
])
def test_only_the_turn_limit_announces_the_posttest(reward, max_turns: int, tutor: str, ended_by: str,
                                                     announced: bool) -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=max_turns, reward=reward)
    env.reset(seed=0)
    text, phase, ended = _text_after_the_last_tutor_turn(env, tutor.format(answer=env.task.answer))
    assert phase == "posttest" and ended == ended_by
    assert (text == LIMIT) is announced


def test_a_question_about_the_task_stays_with_the_component_in_focus() -> None:
    # water_rocket's components span physics, technology and math: the first turn works the math one (the mean of
    # three launches); the next asks about the task in its own words (no component named), so the annotator keeps
    # the component in focus, and with it that component's discipline
    env = TutoringEnv(task_set="stem", task_id="water_rocket", max_turns=2)
    env.reset(seed=0)
    example = next(k for k in env.task.knowledge_components if k.id == "fair_test_average").worked_example
    turns = iter([example, "How much water gives the highest flight for the class bottle?"])
    for agent in env.agent_iter(max_iter=500):
        _obs, _r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "tutor":
            env.step(next(turns) if env.phase == "dialogue" and not info["observe_only"] else QUESTION)
        else:
            env.step(right(info["item"]) if "item" in info else "I am not sure yet.")
    tutor = [t for t in env.episode_record()["transcript"] if t["speaker"] == "tutor"]
    assert [t["target_kc"] for t in tutor][:1] == ["fair_test_average"]
    assert [t["discipline"] for t in tutor] == [["math"], ["math"]]
