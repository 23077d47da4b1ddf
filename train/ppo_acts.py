"""Dialogue-act RL: Stable-Baselines3 PPO on the tutor's ``act`` action mode, through the Gymnasium wrapper.

The fast loop for studying policy structure before paying for language models. Each training episode is a
spec drawn from a suite's ``train`` split (deterministically from the seed) and played in
``gymnasium.make("tutorzoo/Tutor-v0", action_mode="act")`` against that spec's simulated student; the policy
sees :class:`tutorzoo.envs.act_features.ActFeatures` vectors (what the tutor observes, never the student's hidden
state) and chooses a ``MultiDiscrete`` dialogue act (intent x strategy x level x KC slot x end). The reward is
the env's: the isomorphic learning gain by default, or a rubric (``reward: default`` for
``configs/rewards/default.yaml``, or inline ``reward_terms``).

Outputs in ``out_dir``: ``policy.zip`` (the SB3 model), ``README.md`` (model card), ``results.json`` (learning
curve and the held-out comparison), ``progress.csv`` (SB3's log), ``curve.json`` (every training episode's
reward and learning gain), ``eval/episodes.jsonl``. SB3's metrics go to the W&B run of
:func:`tutorzoo.train.common.start_wandb` through a logger output (:func:`wandb_output_format`), offline by default.

The trained policy plays in the harness as :class:`PPOTutor`, speaking its acts with the built-in tutors'
verbaliser::

    tutorzoo train ppo --config configs/train/ppo.yaml
    tutorzoo eval --suite default --split held_out --tutor tutorzoo.train.ppo_acts:PPOTutor \\
        --tutor-arg path=runs/train/ppo__default__0/policy.zip --tutor socratic --tutor random --out runs/ppo_eval
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tutorzoo.agents.tutor.base import ActTutor
from tutorzoo.envs.act_features import ActFeatures, ActFeatureWrapper, act_from_vector
from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.envs.tasks.base import Task
from tutorzoo.train.common import RecipeConfig, finish_wandb, start_wandb, write_results

RECIPE = "ppo"


# ---------------------------------------------------------------------------------------------------- config
class PPOSettings(BaseModel):
    """Arguments of ``stable_baselines3.PPO`` (per-env ``n_steps``; ``batch_size`` divides n_steps x n_envs)."""

    model_config = ConfigDict(extra="forbid")

    learning_rate: float = Field(default=3e-4, gt=0)
    n_steps: int = Field(default=256, ge=2)
    batch_size: int = Field(default=256, ge=2)
    n_epochs: int = Field(default=5, ge=1)
    gamma: float = Field(default=0.99, gt=0, le=1)
    gae_lambda: float = Field(default=0.95, ge=0, le=1)
    clip_range: float = Field(default=0.2, gt=0)
    ent_coef: float = Field(default=0.01, ge=0)
    vf_coef: float = Field(default=0.5, ge=0)
    max_grad_norm: float = Field(default=0.5, gt=0)
    net_arch: list[int] = Field(default_factory=lambda: [128, 128])


class EvalSettings(BaseModel):
    """The held-out comparison run after training (same specs and seeds for every tutor)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    split: Literal["train", "held_out", "all"] = "held_out"
    max_specs: int | None = Field(default=None, ge=1, description="First N specs of the split (None: all).")
    reference_tutors: list[str] = Field(default_factory=lambda: ["socratic", "random"])


class Config(RecipeConfig):
    """``configs/train/ppo.yaml``."""

    suite: str = Field(default="default", description="Suite name or path; training draws from its train split.")
    task_sets: list[str] | None = Field(default=None, description="Keep only specs of these task sets.")
    fresh_seeds: bool = Field(default=False, description="Draw each episode's seed instead of the spec's own.")
    allow_end: bool = Field(default=True, description="False: the act's end flag is ignored (sessions run to "
                                                      "max_turns), in training and when the policy plays.")
    reward: str = Field(default=LEARNING_GAIN,
                        description=f"{LEARNING_GAIN!r} (the env's default) or a rubric name/path in "
                                    "configs/rewards/.")
    reward_terms: dict[str, float] | None = Field(
        default=None, description="An inline rubric {term: weight} (overrides reward), e.g. learning_gain + "
                                  "mastery_gain.")
    total_timesteps: int = Field(default=200_000, ge=1)
    n_envs: int = Field(default=8, ge=1)
    vec_env: Literal["dummy", "subproc"] = "dummy"
    torch_threads: int = Field(default=1, ge=1)
    curve_window: int = Field(default=500, ge=1, description="Episodes averaged for the first/last curve points.")
    log_interval: int = Field(default=1, ge=1, description="SB3 logs every this many rollouts.")
    ppo: PPOSettings = Field(default_factory=PPOSettings)
    eval: EvalSettings = Field(default_factory=EvalSettings)


# ---------------------------------------------------------------------------------------------------- specs
def load_specs(suite: str, split: str, task_sets: list[str] | None = None) -> list[EpisodeSpec]:
    """The suite's specs of ``split``, optionally only those of ``task_sets`` (an empty result is an error)."""
    from tutorzoo.eval.suite import load_suite

    specs = load_suite(suite).specs(split)
    if task_sets is not None:
        specs = [s for s in specs if s.task_set in task_sets]
    if not specs:
        raise ConfigError(f"suite {suite!r} has no {split} specs for task sets {task_sets}; check suite/task_sets")
    return specs


def make_reward(cfg: Config) -> Any | None:
    """The env's reward model: None (learning gain) or a :class:`rewards.Rubric`."""
    from tutorzoo.rewards import Rubric, load_rubric

    if cfg.reward_terms:
        return Rubric(cfg.reward_terms, name="ppo_inline")
    if cfg.reward == LEARNING_GAIN:
        return None
    return load_rubric(cfg.reward)


class SpecSamplingTutorEnv(gym.Env):
    """``tutorzoo/Tutor-v0`` in act mode over a list of specs: each reset draws one (the draw seeded by the
    first ``reset(seed)``), plays it against that spec's persona, and returns :class:`ActFeatures` vectors.

    Example::

        env = SpecSamplingTutorEnv(load_specs("default", "train"))
        vec, info = env.reset(seed=0)
    """

    metadata = {"render_modes": []}

    def __init__(self, specs: list[EpisodeSpec], reward: Any | None = None, fresh_seeds: bool = False,
                 allow_end: bool = True) -> None:
        if not specs:
            raise ConfigError("SpecSamplingTutorEnv needs at least one episode spec")
        self.specs = list(specs)
        self.reward = reward
        self.fresh_seeds = fresh_seeds
        self.allow_end = allow_end
        self.observation_space = ActFeatures.space()
        from tutorzoo.envs.spaces import tutor_action_space

        self.action_space = tutor_action_space("act")
        self._envs: dict[str, ActFeatureWrapper] = {}
        self._students: dict[str, Any] = {}
        self._current: ActFeatureWrapper | None = None
        self._rng = np.random.default_rng(0)
        self.spec: EpisodeSpec | None = None

    def _env_for(self, spec: EpisodeSpec) -> ActFeatureWrapper:
        from tutorzoo import envs  # noqa: F401 - registers the Gymnasium ids
        from tutorzoo.agents.student import SimulatedStudent

        key = json.dumps(spec.env_kwargs(), sort_keys=True, default=str)
        env = self._envs.get(key)
        if env is None:
            kwargs = {**spec.env_kwargs(), "action_mode": "act"}
            inner = gym.make("tutorzoo/Tutor-v0", student=SimulatedStudent(spec.persona), reward=self.reward,
                             disable_env_checker=True, **kwargs)
            env = self._envs[key] = ActFeatureWrapper(inner)
        student = self._students.get(spec.persona)
        if student is None:
            student = self._students[spec.persona] = SimulatedStudent(spec.persona)
        env.unwrapped.other = student
        return env

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.spec = self.specs[int(self._rng.integers(len(self.specs)))]
        episode_seed = int(self._rng.integers(2**31)) if self.fresh_seeds else self.spec.seed
        self._current = self._env_for(self.spec)
        obs, info = self._current.reset(seed=episode_seed)
        return obs, {"spec": self.spec.key(), **_slim(info)}

    def step(self, action: Any):
        assert self._current is not None, "reset() before step()"
        if not self.allow_end:
            action = without_end(action)
        obs, reward, terminated, truncated, info = self._current.step(action)
        return obs, reward, terminated, truncated, _slim(info)


def without_end(action: Any) -> np.ndarray:
    """The act vector with its end-session flag cleared."""
    vec = np.array(action, dtype=np.int64).reshape(-1)
    if vec.shape == (5,):
        vec[4] = 0
    return vec


def _slim(info: dict) -> dict:
    """What training needs of the env's info: the outcome at the end (the transcript stays in the env)."""
    out = {"phase": info.get("phase"), "turn": info.get("turn")}
    if "outcome" in info:
        out[LEARNING_GAIN] = info["outcome"].get(LEARNING_GAIN)
    return out


def make_vec_env(cfg: Config, specs: list[EpisodeSpec]) -> Any:
    """``n_envs`` monitored copies of :class:`SpecSamplingTutorEnv`, seeded ``seed + i`` by SB3."""
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    reward = make_reward(cfg)

    def factory(i: int):
        def make() -> gym.Env:
            return Monitor(SpecSamplingTutorEnv(specs, reward=reward, fresh_seeds=cfg.fresh_seeds,
                                                allow_end=cfg.allow_end),
                           info_keywords=(LEARNING_GAIN,))
        return make

    cls = SubprocVecEnv if cfg.vec_env == "subproc" else DummyVecEnv
    venv = cls([factory(i) for i in range(cfg.n_envs)])
    venv.seed(cfg.seed)
    return venv


# ---------------------------------------------------------------------------------------------------- W&B
def wandb_output_format(run: Any) -> Any:
    """An SB3 logger output (a ``KVWriter``) that sends every dumped number to the W&B ``run`` at SB3's step."""
    from stable_baselines3.common.logger import KVWriter

    class WandbOutputFormat(KVWriter):
        def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
            data = {k: float(v) for k, v in key_values.items()
                    if isinstance(v, (int, float, np.integer, np.floating))
                    and "wandb" not in (key_excluded.get(k) or ())}
            if data:
                run.log(data, step=int(step))

        def close(self) -> None:
            pass

    return WandbOutputFormat()


def make_logger(out_dir: Path, run: Any | None) -> Any:
    """SB3's logger writing ``progress.csv`` and, with a W&B run, into that run."""
    from stable_baselines3.common.logger import CSVOutputFormat, Logger

    formats = [CSVOutputFormat(str(out_dir / "progress.csv"))]
    if run is not None:
        formats.append(wandb_output_format(run))
    return Logger(folder=str(out_dir), output_formats=formats)


def _curve_callback(episodes: list[dict]) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class EpisodeCurve(BaseCallback):
        """Keeps every finished training episode's reward and learning gain (from Monitor's info)."""

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", []):
                ep = info.get("episode")
                if ep is not None:
                    gain = info.get(LEARNING_GAIN)
                    episodes.append({"t": int(self.num_timesteps), "reward": float(ep["r"]),
                                     LEARNING_GAIN: float(gain) if gain is not None else None})
            return True

    return EpisodeCurve()


# ---------------------------------------------------------------------------------------------------- tutor
class _Loaded:
    """A loaded SB3 policy shared by copies of a :class:`PPOTutor` (the batch runner copies tutors)."""

    def __init__(self, path: str | Path) -> None:
        from stable_baselines3 import PPO

        p = Path(path)
        if p.is_dir():
            p = p / "policy.zip"
        if not p.exists():
            raise ConfigError(f"no PPO policy at {str(path)!r}; give path=<out_dir>/policy.zip made by "
                              "`tutorzoo train ppo`")
        self.path = p
        self.model = PPO.load(str(p), device="cpu")
        if self.model.observation_space.shape != (ActFeatures.size,):
            raise ConfigError(f"{p}: the policy was trained on {self.model.observation_space.shape} features, this "
                              f"version makes {ActFeatures.size}; retrain with `tutorzoo train ppo`")

    def __deepcopy__(self, memo: dict) -> _Loaded:
        return self


def _trained_allow_end(policy: Path) -> bool:
    results = policy.parent / "results.json"
    if results.exists():
        try:
            return bool(json.loads(results.read_text(encoding="utf-8")).get("allow_end", True))
        except (json.JSONDecodeError, AttributeError):
            return True
    return True


class PPOTutor(ActTutor):
    """A trained act policy as a harness tutor: features from what it observes, an act from the policy, words
    from the built-in verbaliser (:func:`tutorzoo.envs.act_text.verbalise_act`).

    Example::

        tutor = PPOTutor(path="runs/train/ppo__default__0/policy.zip")
        tutor.reset(seed=0)
        text = tutor.act(observation, info)
    """

    name = "ppo"

    def __init__(self, path: str | Path, deterministic: bool = True, allow_end: bool | None = None) -> None:
        super().__init__()
        self._policy = _Loaded(path)
        self.deterministic = bool(deterministic)
        # as trained: the allow_end of the run's results.json next to the policy (default True)
        self.allow_end = _trained_allow_end(self._policy.path) if allow_end is None else bool(allow_end)
        self.features = ActFeatures()

    def on_reset(self) -> None:
        self.features.reset()

    def choose_vector(self, observation: dict, info: dict) -> np.ndarray:
        """The act vector for this turn (and its note in the feature history)."""
        vec = self.features.observe(observation, info)
        action, _ = self._policy.model.predict(vec, deterministic=self.deterministic)
        action = np.asarray(action, dtype=np.int64).reshape(-1)
        if not self.allow_end:
            action = without_end(action)
        self.features.record(action)
        return action

    def choose(self, observation: dict, info: dict, task: Task) -> tuple[TutorAct, str | None]:
        act = act_from_vector(self.choose_vector(observation, info), task)
        return act, act.addresses_misconception


# ---------------------------------------------------------------------------------------------------- eval
def evaluate(policy_path: Path, specs: list[EpisodeSpec], reference_tutors: list[str], out_dir: Path,
             allow_end: bool = True) -> dict[str, Any]:
    """PPO and the reference tutors on the same specs; learning gain per tutor (overall and per task set),
    with 95% bootstrap CIs and paired differences; records in ``out_dir/episodes.jsonl``."""
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.tutor.registry import make_tutor
    from tutorzoo.eval.metrics.stats import bootstrap_mean_ci
    from tutorzoo.eval.rollout import JsonlWriter, run_specs

    tutors = {"ppo": PPOTutor(path=policy_path, allow_end=allow_end), **{n: make_tutor(n) for n in reference_tutors}}
    gains: dict[str, list[float]] = {}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "episodes.jsonl").unlink(missing_ok=True)
    failures = 0
    with JsonlWriter(out_dir / "episodes.jsonl") as writer:
        for record in run_specs(specs, list(tutors), lambda n: tutors[n], SimulatedStudent, on_record=writer):
            failures += record["ended_by"] == "failure"
            g = record.learning_gain
            gains.setdefault(record["tutor"], []).append(float(g) if g is not None else float("nan"))
    sets = [s.task_set for s in specs]

    def summary(values: np.ndarray) -> dict:
        ci = bootstrap_mean_ci(values, np.random.default_rng(0))
        return {"mean": float(np.nanmean(values)), "ci95": list(ci) if ci else None, "n": int(len(values))}

    result: dict[str, Any] = {"n_specs": len(specs), "failures": failures, LEARNING_GAIN: {}}
    for name, vals in gains.items():
        arr = np.asarray(vals)
        entry = {"all": summary(arr)}
        for ts in sorted(set(sets)):
            entry[ts] = summary(arr[[s == ts for s in sets]])
        result[LEARNING_GAIN][name] = entry
    ppo = np.asarray(gains["ppo"])
    for ref in reference_tutors:
        diff = ppo - np.asarray(gains[ref])
        result[f"ppo_minus_{ref}"] = summary(diff)
    if "socratic" in gains:
        soc = float(np.nanmean(gains["socratic"]))
        result["ppo_over_socratic"] = float(np.nanmean(ppo)) / soc if soc else None
        per_set = {}
        for ts in sorted(set(sets)):
            mask = [s == ts for s in sets]
            s_mean = float(np.nanmean(np.asarray(gains["socratic"])[mask]))
            per_set[ts] = float(np.nanmean(ppo[mask])) / s_mean if s_mean else None
        result["ppo_over_socratic_by_task_set"] = per_set
    return result


def learning_curve(episodes: list[dict], window: int) -> dict[str, Any]:
    """Mean training reward and learning gain of the first and last ``window`` episodes."""
    if not episodes:
        return {"episodes": 0}
    w = min(window, max(1, len(episodes) // 2))

    def mean(rows: list[dict], key: str) -> float | None:
        vals = [r[key] for r in rows if r[key] is not None]
        return float(np.mean(vals)) if vals else None

    first, last = episodes[:w], episodes[-w:]
    return {"episodes": len(episodes), "window": w,
            "first_reward": mean(first, "reward"), "last_reward": mean(last, "reward"),
            "first_learning_gain": mean(first, LEARNING_GAIN), "last_learning_gain": mean(last, LEARNING_GAIN)}


def write_ppo_card(out_dir: Path, cfg: Config, results: dict) -> Path:
    """``README.md`` next to ``policy.zip``: what the policy is, how to play it, what it scored (no secrets)."""
    import yaml

    from tutorzoo.eval.tracking import scrub_secrets

    policy = out_dir / "policy.zip"
    lines = [
        "---", "library_name: stable-baselines3", "tags: [tutorzoo, ppo, dialogue-acts]", "---", "",
        f"# TutorZoo dialogue-act tutor: ppo / {cfg.exp} / seed {cfg.seed}", "",
        "A Stable-Baselines3 PPO policy over TutorZoo's `act` action mode (intent x strategy x guidance level x "
        "knowledge component x end), observing `tutorzoo.envs.act_features.ActFeatures` vectors "
        f"({ActFeatures.size} values: what the tutor observes, never the student's hidden state), trained on the "
        f"`{cfg.suite}` suite's train split.", "",
        "Play it as a tutor (its acts are spoken by the built-in verbaliser):", "", "```bash",
        f"tutorzoo eval --suite {cfg.suite} --split held_out --tutor tutorzoo.train.ppo_acts:PPOTutor "
        f"--tutor-arg path={policy} --tutor socratic --tutor random",
        "```", "", "## Results", "", "```json", json.dumps(scrub_secrets(results), indent=2, sort_keys=True), "```",
        "", "## Config", "", "```yaml", yaml.safe_dump(scrub_secrets(cfg.model_dump()), sort_keys=True).rstrip(),
        "```", "",
    ]
    path = out_dir / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------------- run
def run(cfg: Config) -> dict[str, Any]:
    """Train, save, evaluate on the held-out split; returns (and writes) the results."""
    if (cfg.ppo.n_steps * cfg.n_envs) % cfg.ppo.batch_size:
        raise ConfigError(f"ppo.batch_size ({cfg.ppo.batch_size}) must divide ppo.n_steps x n_envs "
                          f"({cfg.ppo.n_steps} x {cfg.n_envs})")
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(cfg.torch_threads)
    out_dir = cfg.output_dir(RECIPE)
    train_specs = load_specs(cfg.suite, "train", cfg.task_sets)
    run_ = start_wandb(RECIPE, cfg, out_dir)
    episodes: list[dict] = []
    try:
        venv = make_vec_env(cfg, train_specs)
        p = cfg.ppo
        model = PPO("MlpPolicy", venv, learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size,
                    n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range,
                    ent_coef=p.ent_coef, vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm,
                    policy_kwargs={"net_arch": list(p.net_arch)}, seed=cfg.seed, device="cpu", verbose=0)
        model.set_logger(make_logger(out_dir, run_))
        initial = copy.deepcopy(model.policy.state_dict())
        t0 = time.perf_counter()
        model.learn(total_timesteps=cfg.total_timesteps, callback=_curve_callback(episodes),
                    log_interval=cfg.log_interval)
        train_seconds = time.perf_counter() - t0
        venv.close()
        policy_path = out_dir / "policy.zip"
        model.save(str(policy_path))
        changed = sum(int(not torch.equal(initial[k], v)) for k, v in model.policy.state_dict().items())
        (out_dir / "curve.json").write_text(json.dumps(episodes) + "\n", encoding="utf-8")
        results: dict[str, Any] = {
            "policy": str(policy_path),
            "train_specs": len(train_specs),
            "timesteps": int(model.num_timesteps),
            "train_seconds": round(train_seconds, 1),
            "steps_per_second": round(model.num_timesteps / max(train_seconds, 1e-9), 1),
            "changed_tensors": changed,
            "curve": learning_curve(episodes, cfg.curve_window),
            "features": ActFeatures.size,
            "allow_end": cfg.allow_end,
        }
        if cfg.eval.enabled:
            specs = load_specs(cfg.suite, cfg.eval.split, cfg.task_sets)
            if cfg.eval.max_specs is not None:
                specs = specs[: cfg.eval.max_specs]
            results["eval"] = {"split": cfg.eval.split,
                               **evaluate(policy_path, specs, cfg.eval.reference_tutors, out_dir / "eval",
                                           allow_end=cfg.allow_end)}
        if run_ is not None:
            run_.log({f"curve/{k}": v for k, v in results["curve"].items() if isinstance(v, (int, float))})
    except BaseException:
        finish_wandb(run_)
        raise
    write_results(out_dir, results)
    write_ppo_card(out_dir, cfg, results)
    finish_wandb(run_, _flat(results))
    return results


def _flat(results: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in results.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}/"))
        elif isinstance(v, (int, float, str)) or v is None:
            out[f"{prefix}{k}"] = v
    return out
