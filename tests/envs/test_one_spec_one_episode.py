"""One spec, one episode: every way of playing a spec with a deterministic tutor gives the same transcript, to the
byte.

The entry points: the harness (:func:`tutorzoo.eval.rollout.run_episode`), ``tutorzoo rollout`` (the CLI), the batched
lockstep rollout (:func:`tutorzoo.eval.batch.run_batched`, several episodes in flight), the Gymnasium tutor view
(``tutorzoo/Tutor-v0``, the tutor outside, the student embedded), the Gymnasium student view
(``tutorzoo/Student-v0``, the reverse) and ``tutorzoo play``'s scripted path (:func:`tutorzoo.eval.play.play_episode`
fed the harness's tutor turns). Each seeds its seats with :func:`tutorzoo.envs.seeding.derive_seed`; before that
function
was shared, the Gymnasium views played another student on every seed.
"""

from __future__ import annotations

import io
import json
from typing import Any

import gymnasium as gym
import pytest
from rich.console import Console

from tutorzoo import envs  # noqa: F401  (registers the Gymnasium ids)
from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.records import json_form
from tutorzoo.envs.seeding import derive_seed
from tutorzoo.eval.batch import run_batched
from tutorzoo.eval.play import play_episode
from tutorzoo.eval.rollout import run_episode

TUTOR = "socratic"
SPECS = [
    EpisodeSpec(task_set="math", persona="weak_knowledge_partly_wrong", seed=1),
    EpisodeSpec(task_set="math", persona="all_round_partly_wrong", seed=2, protocol={"opener": "tutor"}),
    EpisodeSpec(task_set="stem", persona="low_motivation_asks_for_hint", seed=3),
    EpisodeSpec(task_set="mcq", persona="weak_knowledge_partly_wrong", seed=4, protocol={"max_turns": 4}),
    EpisodeSpec(task_set="math", task_id="fraction_addition", persona="all_round_correct_and_extends", seed=5),
    EpisodeSpec(task_set="stem", persona="weak_knowledge_guesses_by_analogy", seed=6, protocol={"posttest": "both"}),
]
IDS = [f"{s.task_set}-{s.persona}-{s.seed}" for s in SPECS]
RECORD_ONLY = ("spec", "tutor", "student", "failures", "key")  # what a harness adds around the env's record


def _episode(record: dict) -> str:
    """The env's episode record (transcript, tests, outcome) as the bytes a run would write."""
    return json.dumps({k: v for k, v in record.items() if k not in RECORD_ONLY}, sort_keys=True, ensure_ascii=False)


class _Typist:
    """The tutor, keeping each action it took: what a human would type into ``tutorzoo play`` (the transcript
    holds the env's clipped version of a long turn, not the action)."""

    def __init__(self) -> None:
        self.tutor = make_tutor(TUTOR)
        self.typed: list[str] = []

    def reset(self, seed: int | None = None) -> None:
        self.tutor.reset(seed=seed)

    def act(self, observation: Any, info: dict) -> Any:
        action = self.tutor.act(observation, info)
        self.typed.append(action)
        return action


@pytest.fixture(scope="module")
def harness() -> dict[str, dict]:
    return {key: run_episode(spec, make_tutor(TUTOR), SimulatedStudent(spec.persona), TUTOR)
            for key, spec in zip(IDS, SPECS, strict=True)}


@pytest.fixture(scope="module")
def typed() -> dict[str, list[str]]:
    """The socratic tutor's actions in each harness episode."""
    out = {}
    for key, spec in zip(IDS, SPECS, strict=True):
        typist = _Typist()
        run_episode(spec, typist, SimulatedStudent(spec.persona), TUTOR)
        out[key] = typist.typed
    return out


def _tutor_view(spec: EpisodeSpec) -> dict:
    env = gym.make("tutorzoo/Tutor-v0", persona=spec.persona, **spec.env_kwargs())
    tutor = make_tutor(TUTOR)
    obs, info = env.reset(seed=spec.seed)
    tutor.reset(seed=derive_seed(spec.seed, "tutor"))
    done = False
    while not done:
        obs, _reward, term, trunc, info = env.step(tutor.act(obs, info))
        done = term or trunc
    env.close()
    return info["episode"]


def _student_view(spec: EpisodeSpec) -> dict:
    env = gym.make("tutorzoo/Student-v0", tutor=TUTOR, **spec.env_kwargs())
    student = SimulatedStudent(spec.persona)
    obs, info = env.reset(seed=spec.seed)
    student.reset(seed=derive_seed(spec.seed, "student"))
    done = False
    while not done:
        obs, _reward, term, trunc, info = env.step(student.act(obs, info))
        done = term or trunc
    env.close()
    return info["episode"]


def _played(spec: EpisodeSpec, tutor_turns: list[str]) -> dict:
    """``tutorzoo play`` with the harness's tutor turns typed in, in order."""
    lines = iter(tutor_turns)

    def read_line(_prompt: str) -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    return play_episode(spec, read_line, Console(file=io.StringIO(), width=120))


def _tutor_texts(record: dict) -> list[str]:
    return [turn["utterance"] for turn in record["transcript"] if turn["speaker"] == "tutor"]


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
@pytest.mark.parametrize("view", ["tutor", "student"])
def test_gymnasium_views_play_the_harness_episode(harness: dict, spec: EpisodeSpec, view: str) -> None:
    expected = harness[IDS[SPECS.index(spec)]]
    assert len(_tutor_texts(expected)) >= 2  # a dialogue took place: the comparison is not of two empty lists
    got = _tutor_view(spec) if view == "tutor" else _student_view(spec)
    assert _episode(got) == _episode(expected)


@pytest.mark.parametrize("batch_size", [1, 4])
def test_batched_rollout_plays_the_harness_episodes(harness: dict, batch_size: int) -> None:
    records = run_batched(SPECS, make_tutor(TUTOR), SimulatedStudent, batch_size=batch_size, tutor_name=TUTOR)
    assert [json.dumps(json_form(r), sort_keys=True) for r in records] == \
        [json.dumps(json_form(harness[key]), sort_keys=True) for key in IDS]


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_play_with_the_harness_tutor_turns_plays_the_harness_episode(harness: dict, typed: dict,
                                                                    spec: EpisodeSpec) -> None:
    key = IDS[SPECS.index(spec)]
    expected = harness[key]
    assert all(isinstance(text, str) for text in typed[key])  # text actions, as typed at the prompt
    got = _played(spec, typed[key])
    assert got["tutor"] == "human"
    assert _episode(got) == _episode(expected)


def test_cli_rollout_plays_the_harness_episode(tmp_path: Any) -> None:
    from tutorzoo.eval.cli import main

    out = tmp_path / "run"
    code = main(["rollout", "--tutor", TUTOR, "--persona", "weak_knowledge_partly_wrong", "--task-set", "math",
                 "--episodes", "2", "--seed", "7", "--out", str(out)])
    assert code == 0
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    for line in lines:
        record = json.loads(line)
        spec = EpisodeSpec.model_validate(record["spec"])
        again = run_episode(spec, make_tutor(TUTOR), SimulatedStudent(spec.persona), TUTOR)
        assert _episode(record) == _episode(again)
