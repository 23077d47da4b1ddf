"""The rollout engine (envs/engine.py): how each kind of tutor is driven, episode indices named explicitly, the
observer, StopEpisode and strict mode. Byte-identity across entry points is tests/envs/test_one_spec_one_episode.py."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor.builtin import SocraticTutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.engine import BatchOfOne, is_batched, play, tutor_seat
from tutorzoo.envs.protocols import BatchedTutor, EpisodeTutor, StopEpisode, Tutor, TutorTurn
from tutorzoo.envs.records import json_form
from tutorzoo.envs.seeding import derive_seed

SPECS = [EpisodeSpec(task_set="math", persona="all_round_partly_wrong", seed=s, protocol={"max_turns": 2 + s})
         for s in range(3)]


class Shared:
    """A batched tutor with no per-episode state: a canned reply."""

    def __init__(self) -> None:
        self.seeds: list[int | None] = []
        self.calls: list[int] = []

    def reset(self, seed: int | None = None) -> None:
        self.seeds.append(seed)

    def act_batch(self, batch: list[tuple[dict, dict]]) -> list[str]:
        self.calls.append(len(batch))
        return ["What do you notice about the numbers?"] * len(batch)


class Indexed:
    """An episode tutor: the Socratic tutor per episode, keyed by the index the engine names."""

    def __init__(self) -> None:
        self.begun: list[tuple[int, int]] = []
        self.tutors: dict[int, SocraticTutor] = {}

    def reset(self, seed: int | None = None) -> None:
        self.tutors = {}

    def begin_episode(self, index: int, seed: int) -> None:
        self.begun.append((index, seed))
        self.tutors[index] = SocraticTutor()
        self.tutors[index].reset(seed=seed)

    def act_turns(self, turns: Sequence[TutorTurn]) -> list[str]:
        assert all("episode_index" not in t.info for t in turns)  # named by the engine, not smuggled in info
        return [self.tutors[t.episode].act(t.observation, t.info) for t in turns]


def _json(records: list[dict]) -> list[str]:
    return [json.dumps(json_form(r), sort_keys=True) for r in records]


@pytest.mark.parametrize(("tutor", "protocol", "batched"), [
    ("socratic", Tutor, False),
    ("shared", BatchedTutor, True),
    ("indexed", EpisodeTutor, True),
], ids=["tutor", "batched-tutor", "episode-tutor"])
def test_each_kind_of_tutor_satisfies_its_protocol_and_is_driven_accordingly(tutor: str, protocol: type,
                                                                            batched: bool) -> None:
    obj = {"socratic": SocraticTutor, "shared": Shared, "indexed": Indexed}[tutor]()
    assert isinstance(obj, protocol)
    assert is_batched(obj) is batched
    assert isinstance(tutor_seat(obj), BatchOfOne) is not batched


def test_something_that_is_not_a_tutor_is_refused_with_the_fix() -> None:
    with pytest.raises(TypeError, match=r"reset\(seed\) and act\(observation, info\)"):
        tutor_seat(object())


def test_an_episode_tutor_gets_each_index_and_seed_and_plays_the_sequential_episodes() -> None:
    sequential = play(SPECS, SocraticTutor(), SimulatedStudent, tutor_name="t")
    tutor = Indexed()
    batched = play(SPECS, tutor, SimulatedStudent, batch_size=2, tutor_name="t")
    assert _json(batched) == _json(sequential)
    assert sorted(tutor.begun) == [(i, derive_seed(s.seed, "tutor")) for i, s in enumerate(SPECS)]


def test_a_shared_batched_tutor_is_reset_once_and_asked_for_the_whole_batch() -> None:
    tutor = Shared()
    records = play(SPECS, tutor, SimulatedStudent, batch_size=3)
    assert tutor.seeds == [derive_seed(SPECS[0].seed, "tutor")]
    assert tutor.calls[0] == 3 and max(tutor.calls) == 3
    assert all(r["failures"] == [] for r in records)


def test_a_plain_tutor_plays_one_episode_at_a_time_whatever_the_batch_size() -> None:
    finished: list[int] = []
    play(SPECS, SocraticTutor(), SimulatedStudent, batch_size=8, on_record=lambda r: finished.append(r["spec"]["seed"]))
    assert finished == [s.seed for s in SPECS]


class SeesObservations(SimulatedStudent):
    """The simulated student made to want its observations, keeping what it is handed."""

    reads_observation = True

    def __init__(self, persona: str, handed: list) -> None:
        super().__init__(persona)
        self.handed = handed

    def act(self, observation, info: dict):  # noqa: ANN001, ANN201 - the parent's types
        self.handed.append(observation)
        return super().act(observation, info)


def test_a_student_that_reads_no_observation_is_handed_none_and_plays_the_same_episode() -> None:
    """``reads_observation = False`` (the simulated student) spares the env building observations nobody reads:
    the student gets None, a student that reads them gets the env's observation, and the episode is the same."""
    handed: list = []
    seeing = play(SPECS, SocraticTutor(), lambda persona: SeesObservations(persona, handed))
    assert handed and all(isinstance(o, dict) and set(o) == {"text", "features"} for o in handed)
    handed_none: list = []

    class Blind(SeesObservations):
        reads_observation = False

    blind = play(SPECS, SocraticTutor(), lambda persona: Blind(persona, handed_none))
    assert len(handed_none) == len(handed) and all(o is None for o in handed_none)
    assert SimulatedStudent.reads_observation is False
    assert _json(blind) == _json(seeing) == _json(play(SPECS, SocraticTutor(), SimulatedStudent))


class Watch:
    def __init__(self) -> None:
        self.before: list[tuple[str, bool]] = []
        self.after = 0

    def before_tutor(self, episode, observation: dict, info: dict) -> None:
        self.before.append((info["phase"], bool(info.get("observe_only"))))

    def after_tutor(self, episode, info: dict) -> None:
        self.after += 1


def test_the_observer_sees_every_tutor_turn_and_each_spoken_one_after_its_step() -> None:
    watch = Watch()
    [record] = play(SPECS[:1], SocraticTutor(), SimulatedStudent, observer=watch)
    spoken = [phase for phase, observe_only in watch.before if not observe_only]
    assert watch.after == len(spoken) == record["n_tutor_turns"]
    assert {"pretest", "dialogue"} <= {phase for phase, _ in watch.before}


class StopsAtTurn(SocraticTutor):
    def __init__(self, turn: int) -> None:
        super().__init__()
        self.stop_at = turn
        self.turns = 0

    def act(self, observation: dict, info: dict) -> str:
        self.turns += 1
        if self.turns > self.stop_at:
            raise StopEpisode
        return super().act(observation, info)


class Crashes(SocraticTutor):
    def act(self, observation: dict, info: dict) -> str:
        raise ConnectionError("backend down")


def test_stop_episode_ends_it_as_it_stands_without_a_failure() -> None:
    [record] = play(SPECS[2:], StopsAtTurn(1), SimulatedStudent)
    assert record["failures"] == [] and record["n_tutor_turns"] == 1 and record["ended_by"] != "failure"


@pytest.mark.parametrize("strict", [False, True], ids=["recorded", "strict-raises"])
def test_a_tutor_exception_is_recorded_or_raised_in_strict_mode(strict: bool) -> None:
    if strict:
        with pytest.raises(ConnectionError, match="backend down"):
            play(SPECS[:1], Crashes(), SimulatedStudent, strict=True)
        return
    [record] = play(SPECS[:1], Crashes(), SimulatedStudent)
    [failure] = record["failures"]
    assert record["ended_by"] == "failure"
    assert (failure["agent"], failure["phase"], failure["error"]) == ("tutor", "dialogue",
                                                                      "ConnectionError: backend down")
