"""Dialogue-act PPO (train/ppo_acts.py) and its features (envs/act_features.py).

Fast: the config, the feature vector (shape, dtype, space, history, no hidden state), the act decoding against
the env's own, the spec-sampling env's determinism, the SB3 -> W&B logger output, the PPOTutor round trip.
Slow: a few hundred PPO steps from configs/train/ppo.yaml (policy changed, saved policy plays, W&B run on disk).
"""

from __future__ import annotations

import copy
import glob
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from tutorzoo import envs  # noqa: F401 - registers tutorzoo/Tutor-v0
from tutorzoo.envs.act_features import INFO_FIELDS, KC_FIELDS, ActFeatures, ActFeatureWrapper, act_from_vector
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.spaces import ACT_NVEC, MAX_KCS

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "train" / "ppo.yaml"
STEM = EpisodeSpec(task_set="stem", task_id=None, persona="weak_knowledge_partly_wrong", seed=3)


def _wrapped(persona: str = "weak_knowledge_partly_wrong", task_set: str = "stem") -> ActFeatureWrapper:
    return ActFeatureWrapper(gym.make("tutorzoo/Tutor-v0", persona=persona, task_set=task_set, action_mode="act",
                                      disable_env_checker=True))


def _kc_block(vec: np.ndarray) -> np.ndarray:
    return vec[ActFeatures.size - MAX_KCS * len(KC_FIELDS):].reshape(MAX_KCS, len(KC_FIELDS))


# ---------------------------------------------------------------------------------------------------- config
def test_config_file_loads_and_rejects_unknown_keys():
    from tutorzoo.train.common import load_recipe_config
    from tutorzoo.train.ppo_acts import Config

    cfg = load_recipe_config(Config, CONFIG)
    assert cfg.reward == "learning_gain" and cfg.n_envs >= 1 and cfg.eval.split == "held_out"
    assert (cfg.ppo.n_steps * cfg.n_envs) % cfg.ppo.batch_size == 0
    with pytest.raises(ConfigError, match="ppo.n_epoch"):
        load_recipe_config(Config, CONFIG, ["ppo.n_epoch=3"])
    with pytest.raises(ConfigError, match="vec_env"):
        load_recipe_config(Config, CONFIG, ["vec_env=threads"])


def test_bad_batch_size_and_empty_specs_are_config_errors(tmp_path):
    from tutorzoo.train.common import load_recipe_config
    from tutorzoo.train.ppo_acts import Config, load_specs, run

    cfg = load_recipe_config(Config, CONFIG, [f"out_dir={tmp_path}", "wandb.mode=disabled", "ppo.batch_size=300"])
    with pytest.raises(ConfigError, match="must divide"):
        run(cfg)
    with pytest.raises(ConfigError, match="no train specs"):
        load_specs("default", "train", ["no_such_set"])


def test_reward_choice_builds_the_env_reward():
    from tutorzoo.rewards import Rubric
    from tutorzoo.train.ppo_acts import Config, make_reward

    assert make_reward(Config()) is None  # the env's learning gain
    inline = make_reward(Config(reward_terms={"learning_gain": 1.0, "mastery_gain": 1.0}))
    assert isinstance(inline, Rubric) and set(inline.weights) == {"learning_gain", "mastery_gain"}
    assert isinstance(make_reward(Config(reward="default")), Rubric)
    with pytest.raises(ConfigError, match="no reward config"):
        make_reward(Config(reward="no_such_rubric"))


# ---------------------------------------------------------------------------------------------------- features
def test_wrapper_vectors_are_float32_inside_the_space_for_a_whole_episode():
    env = _wrapped()
    env.action_space.seed(0)
    vec, info = env.reset(seed=1)
    steps = 0
    done = False
    while not done:
        assert vec.shape == (ActFeatures.size,) and vec.dtype == np.float32
        assert env.observation_space.contains(vec)
        action = env.action_space.sample()
        action[4] = 0  # do not end early: exercise every turn
        vec, _r, term, trunc, info = env.step(action)
        done = term or trunc
        steps += 1
    assert env.observation_space.contains(vec) and steps == info["max_turns"]
    block = _kc_block(vec)
    n_kcs = len(env.unwrapped.aec.task.knowledge_components)
    assert block[:n_kcs, KC_FIELDS.index("exists")].all() and not block[n_kcs:].any()
    assert block[:, KC_FIELDS.index("turns_spent")].sum() > 0  # its own acts are in the history


def test_history_counts_the_students_reply_to_the_recorded_act():
    feats = ActFeatures()
    env = _wrapped()
    obs, info = env.unwrapped.reset(seed=2)
    feats.reset()
    feats.observe(obs, info)
    feats.record([2, 4, 0, 0, 0])  # guide_reasoning, break_down, L1, first KC
    obs, _r, _t, _tr, info = env.unwrapped.step([2, 4, 0, 0, 0])
    vec = feats.observe(obs, info)
    block = _kc_block(vec)
    state = info["messages"][-1]["content"]
    assert state  # the student replied
    spent = KC_FIELDS.index("turns_spent")
    assert block[0, spent] > 0 and block[1:, spent].sum() == 0
    replied = block[0, KC_FIELDS.index("successes")] + block[0, KC_FIELDS.index("failures")]
    from tutorzoo.envs.spaces import decode_tutor_features

    cog = decode_tutor_features(obs["features"])["last_cognition_state"]
    assert (replied > 0) == (cog not in ("irrelevant", None))
    assert block[0, KC_FIELDS.index("last_target")] == 1.0


def test_features_never_read_the_students_hidden_state():
    """Same observations, different hidden states -> the same vectors: the tracker reads only the observation,
    INFO_FIELDS and its own acts. The student's hidden mastery is changed mid-episode and a second tracker sees
    infos carrying a (different) privileged state; the vectors stay identical."""
    env = _wrapped()
    obs, info = env.unwrapped.reset(seed=5)
    assert not any("privileged" in k for k in info)  # the tutor's info carries none to begin with
    a, b = ActFeatures(), ActFeatures()
    a.reset()
    b.reset()
    rng = np.random.default_rng(0)
    first = True
    for _ in range(5):
        va = a.observe(obs, info)
        student = env.unwrapped.other.state
        before = copy.deepcopy(student.mastery)
        for k in student.mastery:  # a very different hidden student, same observation
            student.mastery[k] = float(rng.random())
        leaked = {**info, "privileged_student_state": {"mastery": dict(student.mastery)}, "student": "other"}
        vb = b.observe(obs, leaked)
        np.testing.assert_array_equal(va, vb)
        if first:  # a fresh tracker given only the INFO_FIELDS agrees too
            np.testing.assert_array_equal(va, ActFeatures().observe(obs, {k: info[k] for k in INFO_FIELDS}))
            first = False
        student.mastery.update(before)
        action = [2, 1, 1, int(rng.integers(2)), 0]
        a.record(action)
        b.record(action)
        obs, _r, term, trunc, info = env.unwrapped.step(action)
        if term or trunc:
            break


def test_act_from_vector_matches_the_envs_act_mode():
    env = gym.make("tutorzoo/Tutor-v0", persona="weak_knowledge_partly_wrong", task_set="stem", action_mode="act",
                   disable_env_checker=True)
    env.reset(seed=4)
    aec = env.unwrapped.aec
    rng = np.random.default_rng(1)
    for _ in range(200):
        vec = [int(rng.integers(n)) for n in ACT_NVEC]
        mine = act_from_vector(vec, aec.task)
        theirs, _text = aec._decode_act(vec)
        for field in ("intent", "strategy", "guidance_level", "target_kc", "addresses_misconception",
                      "ends_session", "is_question"):
            assert getattr(mine, field) == getattr(theirs, field), (vec, field)
    with pytest.raises(ValueError, match="within"):
        act_from_vector([9, 0, 0, 0, 0], aec.task)


def test_wrapper_needs_the_act_mode():
    with pytest.raises(ValueError, match="action_mode='act'"):
        ActFeatureWrapper(gym.make("tutorzoo/Tutor-v0", action_mode="text", disable_env_checker=True))


# ---------------------------------------------------------------------------------------------------- training env
def test_spec_sampling_env_is_deterministic_under_its_seed():
    from tutorzoo.train.ppo_acts import SpecSamplingTutorEnv, load_specs

    specs = load_specs("default", "train")[:40]

    def trace(seed: int) -> list:
        env = SpecSamplingTutorEnv(specs)
        out = []
        for i in range(4):
            vec, info = env.reset(seed=seed if i == 0 else None)
            done = False
            while not done:
                vec, r, term, trunc, info = env.step([2, 4, 1, 0, 0])
                done = term or trunc
            out.append((info["phase"], round(r, 6), vec.tobytes(), env.spec.key()))
        return out

    first = trace(7)
    assert first == trace(7)
    assert len({t[3] for t in first}) > 1 or len(specs) == 1  # it samples, not one spec forever
    assert trace(8) != first


def test_allow_end_false_plays_every_turn():
    from tutorzoo.train.ppo_acts import SpecSamplingTutorEnv, load_specs, without_end

    specs = load_specs("default", "train")[:10]
    for allow_end, turns in ((True, 1), (False, None)):
        env = SpecSamplingTutorEnv(specs, allow_end=allow_end)
        env.reset(seed=0)
        n, done = 0, False
        while not done:
            _vec, _r, term, trunc, info = env.step([2, 4, 1, 0, 1])  # every act asks to end the session
            done, n = term or trunc, n + 1
        assert n == (turns or env.spec.protocol.get("max_turns", 8))
    assert without_end(np.array([1, 2, 0, 3, 1])).tolist() == [1, 2, 0, 3, 0]


def test_wandb_output_format_logs_sb3_values():
    pytest.importorskip("stable_baselines3")
    from tutorzoo.train.ppo_acts import make_logger

    class FakeRun:
        def __init__(self):
            self.logged = []

        def log(self, data, step=None):
            self.logged.append((step, data))

    run, tmp = FakeRun(), Path(pytest.importorskip("tempfile").mkdtemp())
    logger = make_logger(tmp, run)
    logger.record("rollout/ep_rew_mean", 0.25)
    logger.record("train/loss", np.float32(1.5))
    logger.record("time/note", "text is skipped")
    logger.dump(step=128)
    assert run.logged == [(128, {"rollout/ep_rew_mean": 0.25, "train/loss": 1.5})]
    assert "rollout/ep_rew_mean" in (tmp / "progress.csv").read_text()


# ---------------------------------------------------------------------------------------------------- the tutor
@pytest.fixture(scope="module")
def untrained_policy(tmp_path_factory) -> Path:
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    from tutorzoo.train.ppo_acts import SpecSamplingTutorEnv, load_specs

    env = SpecSamplingTutorEnv(load_specs("default", "train")[:5])
    model = PPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu", policy_kwargs={"net_arch": [16]})
    path = tmp_path_factory.mktemp("ppo") / "policy.zip"
    model.save(str(path))
    return path


def test_ppo_tutor_round_trip_in_the_harness(untrained_policy):
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor.registry import make_tutor
    from tutorzoo.eval.rollout import run_episode

    tutor = make_tutor("tutorzoo.train.ppo_acts:PPOTutor", path=str(untrained_policy))
    # one --tutor-arg set serves a run comparing it with the built-ins, which take no options
    assert make_tutor("socratic", path=str(untrained_policy)).name == "socratic"
    spec = EpisodeSpec(task_set="stem", task_id=None, persona="weak_knowledge_partly_wrong", seed=2,
                       protocol={"max_turns": 6})
    records = [run_episode(spec, t, SimulatedStudent(spec.persona), "ppo") for t in (tutor, copy.deepcopy(tutor))]
    assert records[0]["failures"] == [] and records[0]["ended_by"] != "failure"
    tutor_turns = [t for t in records[0]["transcript"] if t["speaker"] == "tutor"]
    assert tutor_turns and all(t["utterance"].strip() for t in tutor_turns)
    assert records[0]["transcript"] == records[1]["transcript"]  # deterministic, and copies share the policy
    never_ends = make_tutor("tutorzoo.train.ppo_acts:PPOTutor", path=str(untrained_policy), allow_end=False)
    record = run_episode(spec, never_ends, SimulatedStudent(spec.persona), "ppo")
    assert record["n_tutor_turns"] == 6 and record["ended_by"] != "end_marker"
    # the verbalised acts are read back by the env's annotator: the policy's intents reach the transcript
    assert {t["teacher_intent"] for t in tutor_turns} - {None}


def test_ppo_tutor_missing_policy_names_the_fix(tmp_path):
    pytest.importorskip("stable_baselines3")
    from tutorzoo.train.ppo_acts import PPOTutor

    with pytest.raises(ConfigError, match="tutorzoo train ppo"):
        PPOTutor(path=tmp_path / "nope.zip")


# ---------------------------------------------------------------------------------------------------- slow smoke
@pytest.mark.slow
def test_ppo_smoke_from_config(tmp_path, monkeypatch):
    import torch
    from stable_baselines3 import PPO

    from tutorzoo.train.common import load_recipe_config
    from tutorzoo.train.ppo_acts import Config, PPOTutor, run

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    cfg = load_recipe_config(Config, CONFIG, [
        f"out_dir={tmp_path}", "total_timesteps=256", "n_envs=2", "ppo.n_steps=64", "ppo.batch_size=32",
        "ppo.n_epochs=2", "eval.max_specs=6", "wandb.mode=offline",
    ])
    results = run(cfg)
    assert results["timesteps"] >= 256 and results["changed_tensors"] > 0
    assert results["curve"]["episodes"] > 0
    assert set(results["eval"]["learning_gain"]) == {"ppo", "socratic", "random"}
    assert results["eval"]["n_specs"] == 6 and results["eval"]["failures"] == 0
    policy = tmp_path / "policy.zip"
    loaded = PPO.load(str(policy), device="cpu")
    # the same seed and architecture give the initial weights the training started from
    fresh = PPO("MlpPolicy", _vec(cfg), seed=cfg.seed, device="cpu", policy_kwargs={"net_arch": cfg.ppo.net_arch})
    assert any(not torch.equal(a, b) for a, b in zip(loaded.policy.state_dict().values(),
                                                    fresh.policy.state_dict().values(), strict=True))
    PPOTutor(path=str(policy)).reset(seed=0)
    assert (tmp_path / "README.md").read_text().count("tutorzoo.train.ppo_acts:PPOTutor") == 1
    assert (tmp_path / "results.json").exists() and (tmp_path / "eval" / "episodes.jsonl").exists()
    assert glob.glob(str(tmp_path / "wandb" / "offline-run-*" / "run-*.wandb"))


def _vec(cfg):
    from tutorzoo.train.ppo_acts import SpecSamplingTutorEnv, load_specs

    return SpecSamplingTutorEnv(load_specs(cfg.suite, "train")[:4])
