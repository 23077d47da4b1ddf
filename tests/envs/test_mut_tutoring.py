"""The env's turn limit, truncation and end-of-episode crediting, counted exactly on scripted episodes.

Each case fails on a small bug in envs/tutoring.py's phase/turn/reward logic (see .ci/mutation.py).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tutorzoo.envs.tutoring import TutoringEnv

QUESTION = "Which part of the problem feels unclear to you right now?"
WRONG = "The answer is 987654."


class Recording:
    """A reward model that credits 1 per exchange and 10 at the episode's end, and records the calls."""

    ends_on_leak = False

    def __init__(self) -> None:
        self.exchanges: list[int] = []
        self.episodes: list[dict] = []

    def exchange(self, exchange: dict) -> dict[str, float]:
        self.exchanges.append(exchange["turn"])
        return {"per_exchange": 1.0}

    def episode(self, record: dict) -> dict[str, float]:
        self.episodes.append(record)
        return {"end": 10.0}

    def leak_penalty(self, tutor_turn: dict) -> dict[str, float]:
        return {}

    def weigh(self, components: dict[str, float]) -> float:
        return float(sum(components.values()))


def right(item) -> str:
    return f"The answer is {item.answer}."


def play(env: TutoringEnv, seed: int = 0, tutor: str = QUESTION, pre: Callable = right, post: Callable = right,
         reply: str = "I am not sure yet.") -> dict:
    """Play one scripted episode: each agent's summed reward, the record and how each agent's episode ended
    (``{agent: (terminated, truncated)}``)."""
    env.reset(seed=seed)
    total = {"tutor": 0.0, "student": 0.0}
    ended: dict[str, tuple[bool, bool]] = {}
    for agent in env.agent_iter(max_iter=500):
        _obs, reward, term, trunc, info = env.last()
        total[agent] += reward
        if term or trunc:
            ended[agent] = (term, trunc)
            env.step(None)
            continue
        if agent == "tutor":
            env.step(tutor)
        elif "item" in info:
            env.step((pre if info["phase"] == "pretest" else post)(info["item"]))
        else:
            env.step(reply)
    return {"reward": total, "record": env.episode_record(), "ended": ended}


def tutor_turns(record: dict) -> int:
    return sum(t["speaker"] == "tutor" for t in record["transcript"])


@pytest.mark.parametrize("opener", ["student", "tutor"])
@pytest.mark.parametrize("max_turns", [1, 3])
def test_max_turns_is_the_number_of_tutor_turns(opener: str, max_turns: int) -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=max_turns, opener=opener)
    record = play(env)["record"]
    assert tutor_turns(record) == record["n_tutor_turns"] == max_turns
    assert record["ended_by"] == "max_turns"
    speakers = [t["speaker"] for t in record["transcript"]]
    # student opens: s t s t s ...; tutor opens: t s t s ...; the student answers the last tutor turn
    expected = (["student"] if opener == "student" else []) + ["tutor", "student"] * max_turns
    assert speakers == expected


def test_end_marker_ends_the_dialogue_before_the_limit() -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=5)
    record = play(env, tutor="Good, we covered it: keep practising. [END]")["record"]
    assert (tutor_turns(record), record["ended_by"]) == (1, "end_marker")
    assert record["posttest"]  # the post-test still runs


def test_episode_end_credits_the_end_terms_once_and_the_exchanges() -> None:
    model = Recording()
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=3, reward=model)
    out = play(env)
    record = out["record"]
    assert model.exchanges == [1, 2, 3]
    assert len(model.episodes) == 1
    assert record["reward_components"] == {"per_exchange": 3.0, "end": 10.0}
    assert record["reward"] == 13.0 == out["reward"]["tutor"]


@pytest.mark.parametrize(("pre", "post", "gain"), [
    pytest.param(right, right, 0.0, id="right-right"),
    pytest.param(lambda item: WRONG, right, 1.0, id="wrong-right"),
    pytest.param(right, lambda item: WRONG, -1.0, id="right-wrong"),
])
def test_outcome_scores_and_student_reward(pre: Callable, post: Callable, gain: float) -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=2, posttest="both")
    out = play(env, pre=pre, post=post)
    record = out["record"]
    pre_score = 0.0 if gain > 0 else 1.0
    assert (record["pretest_score"], record["posttest_score"], record["learning_gain"]) == (
        pre_score, pre_score + gain, gain)
    assert (record["posttest_same_score"], record["learning_gain_same"]) == (pre_score + gain, gain)
    assert {r["kind"] for r in record["posttest"]} == {"isomorphic", "same"}
    assert out["reward"] == {"tutor": gain, "student": gain}
    assert out["ended"] == {"tutor": (True, False), "student": (True, False)}


def test_same_only_posttest_scores_the_same_items() -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1, posttest="same")
    record = play(env, pre=lambda item: WRONG)["record"]
    assert (record["pretest_score"], record["posttest_score"], record["learning_gain"]) == (0.0, 1.0, 1.0)
    assert [r["kind"] for r in record["posttest"]] == ["same"] * len(record["pretest"])
    assert [r["parallel_of"] for r in record["posttest"]] == [None] * len(record["pretest"])


def test_isomorphic_posttest_names_the_pre_item() -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1)
    record = play(env)["record"]
    pre_ids = {r["item_id"] for r in record["pretest"]}
    assert record["posttest"] and all(r["parallel_of"] in pre_ids for r in record["posttest"])
    assert record["posttest_same_score"] is None and record["learning_gain_same"] is None


def _truncated(model: Recording, max_cycles: int) -> tuple[TutoringEnv, dict]:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=8, max_cycles=max_cycles,
                      reward=model)
    out = play(env)
    return env, out


def test_truncated_episode_gets_no_end_of_episode_terms() -> None:
    model = Recording()
    env, out = _truncated(model, max_cycles=6)
    record = out["record"]
    assert record["ended_by"] == "truncated"
    assert out["ended"] == {"tutor": (False, True), "student": (False, True)}
    assert model.episodes == []  # the episode() terms are never asked for
    assert "end" not in record["reward_components"]
    assert record["reward"] == record["reward_components"].get("per_exchange", 0.0) == out["reward"]["tutor"]
    assert out["reward"]["student"] == 0.0
    assert record["learning_gain"] is None and record["posttest_score"] is None




@pytest.mark.parametrize("max_cycles", [4, 6])
def test_truncation_after_max_cycles_rounds(max_cycles: int) -> None:
    # a round is one step of each agent: 3 pre-test items take 3 rounds, then the dialogue s t s t ... is cut
    model = Recording()
    _env, out = _truncated(model, max_cycles)
    record = out["record"]
    assert len(record["pretest"]) == 3
    dialogue_rounds = max_cycles - 3
    assert record["n_tutor_turns"] == dialogue_rounds
    assert [t["speaker"] for t in record["transcript"]] == ["student", "tutor"] * dialogue_rounds
    assert model.exchanges == list(range(1, dialogue_rounds))  # the last tutor turn has no reply yet


class Doubling(Recording):
    """Weighs every component twice: the env must credit ``weigh(components)``, and log the raw components."""

    def weigh(self, components: dict[str, float]) -> float:
        return 2.0 * float(sum(components.values()))


def test_credit_uses_the_weighted_sum_and_logs_raw_components() -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=2, reward=Doubling())
    out = play(env)
    assert out["record"]["reward_components"] == {"per_exchange": 2.0, "end": 10.0}
    assert out["record"]["reward"] == 24.0 == out["reward"]["tutor"]


class Leaky(Recording):
    ends_on_leak = True

    def leak_penalty(self, tutor_turn: dict) -> dict[str, float]:
        return {"leak": -5.0}


def test_hard_mode_leak_ends_the_dialogue_with_the_penalty() -> None:
    model = Leaky()
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=5, reward=model)
    env.reset(seed=0)
    answer = env.task.answer
    out = play(env, tutor=f"The answer is {answer}.")
    record = out["record"]
    assert (record["ended_by"], record["n_tutor_turns"]) == ("leak", 1)
    assert record["transcript"][-1]["speaker"] == "tutor" and record["transcript"][-1]["reveals_answer"] is True
    assert model.exchanges == []  # the leaking turn gets no reply, so no exchange
    assert record["reward_components"] == {"leak": -5.0, "end": 10.0}
    assert record["posttest"]


def test_a_leak_without_hard_mode_goes_on() -> None:
    model = Recording()
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=2, reward=model)
    env.reset(seed=0)
    record = play(env, tutor=f"The answer is {env.task.answer}.")["record"]
    assert (record["ended_by"], record["n_tutor_turns"]) == ("max_turns", 2)


def test_tutor_actions_while_observing_are_not_turns() -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1)
    record = play(env, tutor="")["record"]  # an empty (invalid) tutor turn: counted once, in the dialogue
    assert record["n_tutor_turns"] == 1 and tutor_turns(record) == 1
    assert record["invalid_turns"] == {"tutor": 1, "student": 0}
    assert len(record["pretest"]) == 3 and all(r["correct"] for r in record["pretest"])


def test_dead_steps_after_the_end_change_nothing() -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1)
    env.reset(seed=0)
    at_end = None
    for agent in env.agent_iter(max_iter=500):
        _obs, _r, term, trunc, info = env.last()
        if term or trunc:
            at_end = at_end or env.episode_record()
            env.step(None)
            continue
        if agent == "tutor":
            env.step(QUESTION)
        else:
            env.step(right(info["item"]) if "item" in info else "ok")
    assert at_end is not None and env.agents == []
    assert env.episode_record() == at_end


def test_dialogue_exchanges_are_credited_after_the_reply() -> None:
    model = Recording()
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=2, opener="tutor", reward=model)
    env.reset(seed=0)
    seen = []
    for agent in env.agent_iter(max_iter=500):
        _obs, reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "tutor":
            seen.append((info["phase"], reward, dict(info["reward_components"])))
            env.step(QUESTION)
        else:
            env.step(right(info["item"]) if "item" in info else "I am not sure yet.")
    dialogue = [s for s in seen if s[0] == "dialogue"]
    # the tutor opens (nothing to credit yet), then each of its later turns sees the exchange before it
    assert [(r, c) for _, r, c in dialogue] == [(0.0, {}), (1.0, {"per_exchange": 1.0})]
    assert model.exchanges == [1, 2]


def test_the_tutor_watches_each_pretest_answer_with_its_result() -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1)
    env.reset(seed=0)
    answers = iter(["I do not know.", WRONG])
    watched = []
    for agent in env.agent_iter(max_iter=500):
        obs, _r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "tutor":
            if obs["text"].startswith("Pre-test question"):
                watched.append((obs["text"], len(info["messages"]), info["observe_only"]))
            env.step(QUESTION)
        elif "item" in info and info["phase"] == "pretest":
            env.step(next(answers, None) or right(info["item"]))
        else:
            env.step(right(info["item"]) if "item" in info else "ok")
    assert [w[0].split(":", 1)[0] for w in watched] == ["Pre-test question 1/3", "Pre-test question 2/3",
                                                         "Pre-test question 3/3"]
    assert [w[0].rsplit("Result: ", 1)[1] for w in watched] == ["invalid (no answer found)", "incorrect", "correct"]
    # the system prompt only while the tutor watches; the pre-test summary joins its messages with the last answer
    assert [w[1] for w in watched] == [1, 1, 2]
    assert all(w[2] for w in watched)


def _tutor_texts(env: TutoringEnv, tutor: str = QUESTION) -> list[tuple[str, str]]:
    env.reset(seed=0)
    seen = []
    for agent in env.agent_iter(max_iter=500):
        obs, _r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "tutor":
            seen.append((info["phase"], obs["text"]))
            env.step(tutor)
        else:
            env.step(right(info["item"]) if "item" in info else "I am not sure yet.")
    return seen


def test_the_tutor_is_told_when_the_turn_limit_starts_the_posttest() -> None:
    seen = _tutor_texts(TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1))
    posttest = [text for phase, text in seen if phase == "posttest"]
    assert posttest[0] == "The dialogue is over; the post-test is starting."
    ended = _tutor_texts(TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=3),
                         tutor="We are done here. [END]")
    assert "The dialogue is over; the post-test is starting." not in [text for _, text in ended]


def test_human_render_mode_prints_each_step(capsys: pytest.CaptureFixture[str]) -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1, render_mode="human")
    play(env)
    printed = capsys.readouterr().out
    assert printed.count("[pretest] task=fraction_addition") >= 3
    quiet = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1, render_mode="ansi")
    play(quiet)
    assert capsys.readouterr().out == ""


def test_the_tutor_never_sees_the_options_of_a_choice_item() -> None:
    env = TutoringEnv(task_set="mcq", max_turns=1)
    env.reset(seed=0)
    observed, views = [], []
    for agent in env.agent_iter(max_iter=500):
        obs, _r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "tutor":
            observed.append(obs["text"])
            views = info["pretest"]
            env.step(QUESTION)
        else:
            env.step(f"The answer is ({info['item'].answer})." if "item" in info else "Hmm.")
    assert len(views) == len(env._pre_items) > 0
    for item, view in zip(env._pre_items, views, strict=True):
        assert view["question"] == item.render(with_options=False)
        assert view["answer"] == item.options[ord(item.answer) - ord("A")] and view["correct"] is True
    assert not any("\n(A) " in text for text in observed)


def test_a_posttest_item_whose_answer_the_tutor_stated_is_marked_leaked() -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1, posttest="same")
    env.reset(seed=0)
    first = env._pre_items[0]
    record = play(env, tutor=f"The answer to the first question is {first.answer}.")["record"]
    assert [r.get("leaked") for r in record["posttest"]] == [True, None, None]
    assert "leaked" not in play(TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1,
                                            posttest="same"))["record"]["posttest"][0]


def test_a_tutor_opener_is_asked_to_open() -> None:
    seen = _tutor_texts(TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1, opener="tutor"))
    first_dialogue = next(text for phase, text in seen if phase == "dialogue")
    assert first_dialogue.startswith("Task: ") and first_dialogue.endswith("\nYou open the dialogue.")
    assert "Pre-test results:" in first_dialogue


def test_the_tutor_is_told_which_posttest_question_is_answered() -> None:
    seen = _tutor_texts(TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=1))
    posttest = [text for phase, text in seen if phase == "posttest"]
    assert posttest[1:] == ["Post-test question 2/3 is being answered.", "Post-test question 3/3 is being answered."]


def test_a_leak_ending_does_not_announce_the_turn_limit() -> None:
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=5, reward=Leaky())
    env.reset(seed=0)
    texts = _tutor_texts(env, tutor=f"The answer is {env.task.answer}.")
    assert "The dialogue is over; the post-test is starting." not in [text for _, text in texts]
    # it watches 3 pre-test answers (the last already in the dialogue phase), leaks at once, then watches 2 of 3
    assert [phase for phase, _ in texts] == ["pretest", "pretest", "dialogue", "dialogue", "posttest", "posttest"]


def _last_tutor_features(env: TutoringEnv, tutor: str) -> list[float]:
    env.reset(seed=0)
    features = []
    for agent in env.agent_iter(max_iter=500):
        obs, _r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "tutor":
            features = obs["features"].tolist()
            env.step(tutor)
        else:
            env.step(right(info["item"]) if "item" in info else "I am not sure yet.")
    return features


def test_the_revealed_feature_stays_on_after_a_leak() -> None:
    from tutorzoo.envs import spaces as tzs
    from tutorzoo.envs.labels import COGNITION_STATES

    revealed = 5 + tzs.MAX_KCS + len(COGNITION_STATES) + 1
    env = TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=2)
    env.reset(seed=0)
    leak = f"The answer is {env.task.answer}."
    assert _last_tutor_features(env, leak)[revealed] == 1.0
    assert _last_tutor_features(TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=2),
                                QUESTION)[revealed] == 0.0
    record = play(TutoringEnv(task_set="math", task_id="fraction_addition", max_turns=2))["record"]
    assert [t["states_answer"] for t in record["transcript"] if t["speaker"] == "tutor"] == [False, False]
