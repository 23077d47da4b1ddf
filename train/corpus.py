"""The KMP-Pile-style tutoring corpus: a tutor's dialogues on a suite's train split as a Hugging Face dataset.

``run(config)`` rolls out ``config.tutor`` (the rule-based ``socratic`` expert by default) with simulated
students over the episode specs of ``config.suite``'s ``train`` split and writes one row per episode:

- ``messages``: the conversation exactly as an LLM tutor sees it at inference (the env's
  ``info["messages"]`` that :class:`tutorzoo.agents.tutor.llm.LLMTutor` sends to its backend: the system prompt, the
  pre-test summary and the student's turns as ``user``, the tutor's turns as ``assistant``), ending with the
  tutor's last turn. It is recorded from the ``info`` of every tutor call, and each call's messages must be a
  prefix of the final conversation (checked), so training sees what inference will show;
- ``dialogue_type`` (``tutoring``), ``persona``, ``persona_family``, ``task_set``, ``task_id``, ``task_title``,
  ``spec`` (the :class:`tutorzoo.envs.config.EpisodeSpec` as JSON), ``spec_key``, ``seed``, ``rollout`` (0 for the
  suite's own spec, k for its k-th re-seeded copy);
- outcome columns: ``pretest_score``, ``posttest_score``, ``learning_gain`` (isomorphic items),
  ``learning_gain_same``, ``n_tutor_turns``, ``ended_by``, ``reward`` (the rubric's total) and
  ``reward_components`` (every component of the rubric, null where the episode has none).

Filters (``min_reward``, ``min_learning_gain``, ``drop_leaks``; failed episodes are always dropped) keep the
corpus to dialogues worth imitating; every dropped episode is counted by reason in the results. The dataset
is written with ``save_to_disk`` to ``<out_dir>/dataset`` and exported as ``<out_dir>/corpus.jsonl``; the
same config gives the same rows, the same fingerprint and the same bytes.

``rollouts_per_spec: k`` adds k-1 re-seeded copies of each train spec (seed + 100000·j): new episodes on the
train split's tasks and personas that no held-out spec can equal (held-out seeds are the suite's own).

Example::

    from tutorzoo.train.common import load_recipe_config
    from tutorzoo.train.corpus import CorpusConfig, run
    results = run(load_recipe_config(CorpusConfig, "configs/train/corpus.yaml", ["limit=20"]))
    # or: tutorzoo train corpus --config configs/train/corpus.yaml --set limit=20
    from datasets import load_from_disk
    ds = load_from_disk(results["dataset_dir"]); ds[0]["messages"][-1]["role"] == "assistant"
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.records import LEARNING_GAIN
from tutorzoo.train.common import RecipeConfig, finish_wandb, start_wandb, write_results

RECIPE = "corpus"
RESEED_STRIDE = 100_000  # re-seeded copies of a spec use seed + stride * j, far from any suite's own seeds
ROLES = ("system", "user", "assistant")


class CorpusConfig(RecipeConfig):
    """Which dialogues to roll out and which of them to keep."""

    suite: str = Field(default="default", description="Suite name (configs/suites/NAME.yaml) or path.")
    split: Literal["train", "held_out", "all"] = Field(
        default="train", description="Train on 'train'; 'held_out' is the evaluation's and is refused unless "
                                     "allow_held_out is set.")
    allow_held_out: bool = False
    tutor: str = Field(default="socratic", description="A registry tutor to imitate (rule-based, no model).")
    rollouts_per_spec: int = Field(default=1, ge=1, description="1 + re-seeded copies per spec.")
    limit: int | None = Field(default=None, ge=1, description="Only the first N specs (smoke runs).")
    reward: str = Field(default="default", description="Reward rubric (configs/rewards/NAME.yaml) for the reward "
                                                       "columns and the min_reward filter.")
    min_reward: float | None = Field(default=None, description="Keep episodes whose rubric reward is >= this.")
    min_learning_gain: float | None = Field(default=None, description="Keep episodes with a gain >= this.")
    drop_leaks: bool = Field(default=True, description="Drop episodes in which a tutor turn stated an answer.")


Config = CorpusConfig


class _RecordingTutor:
    """Wraps a tutor and keeps the ``info["messages"]`` of each of its speaking turns with its reply."""

    def __init__(self, tutor: Any) -> None:
        self.tutor = tutor
        self.name = getattr(tutor, "name", "tutor")
        self.calls: list[tuple[list[dict], str]] = []

    def reset(self, seed: int | None = None) -> None:
        self.tutor.reset(seed=seed)
        self.calls = []

    def act(self, observation: dict, info: dict) -> str:
        reply = self.tutor.act(observation, info)
        if not info.get("observe_only"):
            self.calls.append(([dict(m) for m in info["messages"]], reply))
        return reply


def conversation_from_calls(calls: list[tuple[list[dict], str]], transcript: list[dict]) -> list[dict]:
    """The whole conversation of an episode: the last tutor call's messages plus the tutor's last turn.

    Each assistant message is the tutor's turn as the env recorded it (``transcript``; the env normalises
    text into its action space, e.g. ``cm³`` becomes ``cm3``), which is also what later prompts show. Raises
    ``ValueError`` when a call's messages are not a prefix of the conversation or the assistant turns differ
    from the transcript's: the corpus would then differ from what a model sees at inference.
    """
    tutor_turns = [t["utterance"] for t in transcript if t["speaker"] == "tutor"]
    if not calls or len(tutor_turns) != len(calls):
        raise ValueError(f"{len(calls)} tutor calls but {len(tutor_turns)} tutor turns in the transcript")
    messages, _reply = calls[-1]
    conversation = [{"role": m["role"], "content": m["content"]} for m in messages]
    conversation.append({"role": "assistant", "content": tutor_turns[-1]})
    for i, (seen, _said) in enumerate(calls):
        if [{"role": m["role"], "content": m["content"]} for m in seen] != conversation[: len(seen)]:
            raise ValueError(f"tutor call {i} saw messages that are not a prefix of the final conversation")
    if [m["content"] for m in conversation if m["role"] == "assistant"] != tutor_turns:
        raise ValueError("the conversation's assistant turns differ from the transcript's tutor turns")
    for m in conversation:
        if m["role"] not in ROLES or not isinstance(m["content"], str):
            raise ValueError(f"unexpected message {m!r:.100}")
    return conversation


def corpus_specs(cfg: CorpusConfig) -> list[EpisodeSpec]:
    """The episode specs to roll out, in a fixed order: each suite spec, then its re-seeded copies."""
    from tutorzoo.eval.suite import load_suite

    if cfg.split != "train" and not cfg.allow_held_out:
        raise ConfigError(f"split {cfg.split!r} contains the held-out specs the evaluation uses; build the corpus on "
                          "split 'train' (or set allow_held_out: true if you really mean it)")
    specs = load_suite(cfg.suite).specs(cfg.split)
    if cfg.limit is not None:
        specs = specs[: cfg.limit]
    out: list[EpisodeSpec] = []
    for spec in specs:
        out.append(spec)
        out += [spec.model_copy(update={"seed": spec.seed + RESEED_STRIDE * j})
                for j in range(1, cfg.rollouts_per_spec)]
    return out


def component_names(rubric: Any) -> list[str]:
    """The reward components a rubric logs, in its order (terms, then the reserved ones it can produce)."""
    names = list(rubric.weights)
    names.append("pedagogy")
    if rubric.hard:
        names.append("forfeit")
    return names


def features(components: list[str]) -> Any:
    from datasets import Features, List, Value

    return Features({
        "messages": List({"role": Value("string"), "content": Value("string")}),
        "dialogue_type": Value("string"),
        "persona": Value("string"),
        "persona_family": Value("string"),
        "task_set": Value("string"),
        "task_id": Value("string"),
        "task_title": Value("string"),
        "spec": Value("string"),
        "spec_key": Value("string"),
        "seed": Value("int64"),
        "rollout": Value("int32"),
        "pretest_score": Value("float64"),
        "posttest_score": Value("float64"),
        LEARNING_GAIN: Value("float64"),
        "learning_gain_same": Value("float64"),
        "n_tutor_turns": Value("int32"),
        "ended_by": Value("string"),
        "reward": Value("float64"),
        "reward_components": {name: Value("float64") for name in components},
    })


def episode_row(spec: EpisodeSpec, rollout: int, record: dict, conversation: list[dict], rubric: Any,
                components: list[str], family: str) -> dict:
    got = record.get("reward_components") or {}
    return {
        "messages": conversation,
        "dialogue_type": "tutoring",
        "persona": spec.persona,
        "persona_family": family,
        "task_set": spec.task_set,
        "task_id": record["task"]["id"],
        "task_title": record["task"]["title"],
        "spec": json.dumps(spec.model_dump(), sort_keys=True),
        "spec_key": spec.key(),
        "seed": spec.seed,
        "rollout": rollout,
        "pretest_score": record["pretest_score"],
        "posttest_score": record["posttest_score"],
        LEARNING_GAIN: record[LEARNING_GAIN],
        "learning_gain_same": record["learning_gain_same"],
        "n_tutor_turns": record["n_tutor_turns"],
        "ended_by": record["ended_by"],
        "reward": rubric.total(record),
        "reward_components": {name: (float(got[name]) if name in got else None) for name in components},
    }


def drop_reason(cfg: CorpusConfig, record: dict, reward: float) -> str | None:
    """Why an episode stays out of the corpus (None: it is kept). Failures are always dropped."""
    if record.get("failures"):
        return "failure"
    if cfg.drop_leaks and (record.get("ended_by") == "leak"
                           or any(t.get("reveals_answer") for t in record["transcript"] if t["speaker"] == "tutor")):
        return "leak"
    if cfg.min_learning_gain is not None and (record[LEARNING_GAIN] is None
                                              or record[LEARNING_GAIN] < cfg.min_learning_gain):
        return "min_learning_gain"
    if cfg.min_reward is not None and reward < cfg.min_reward:
        return "min_reward"
    return None


def build_rows(cfg: CorpusConfig) -> tuple[list[dict], dict[str, int], list[str]]:
    """Roll out every spec; the kept rows, the count of dropped episodes per reason, the component names."""
    from tutorzoo.agents.student import SimulatedStudent
    from tutorzoo.agents.student.personas import get_persona
    from tutorzoo.agents.tutor.registry import BUILTIN_TUTORS, make_tutor
    from tutorzoo.eval.rollout import run_episode
    from tutorzoo.rewards import load_rubric

    if cfg.tutor not in BUILTIN_TUTORS and ":" not in cfg.tutor:
        raise ConfigError(f"tutor {cfg.tutor!r}: the corpus imitates a rule-based tutor; use one of "
                          f"{sorted(BUILTIN_TUTORS)} or an import path 'pkg.mod:Class'")
    rubric = load_rubric(cfg.reward)
    components = component_names(rubric)
    rows: list[dict] = []
    dropped: dict[str, int] = {}
    families: dict[str, str] = {}
    for spec in corpus_specs(cfg):
        tutor = _RecordingTutor(make_tutor(cfg.tutor))
        record = run_episode(spec, tutor, SimulatedStudent(spec.persona), tutor_name=cfg.tutor, reward=rubric)
        reward = rubric.total(record)
        reason = drop_reason(cfg, record, reward)
        if reason is None and not tutor.calls:
            reason = "no_tutor_turn"
        if reason is not None:
            dropped[reason] = dropped.get(reason, 0) + 1
            continue
        if spec.persona not in families:
            families[spec.persona] = get_persona(spec.persona).family
        rollout = spec.seed // RESEED_STRIDE
        conversation = conversation_from_calls(tutor.calls, record["transcript"])
        rows.append(episode_row(spec, rollout, record, conversation, rubric, components, families[spec.persona]))
    return rows, dropped, components


def build_dataset(cfg: CorpusConfig) -> tuple[Any, dict]:
    """The corpus as an in-memory ``datasets.Dataset`` and its statistics."""
    from datasets import Dataset

    rows, dropped, components = build_rows(cfg)
    if not rows:
        raise ConfigError(f"the corpus is empty: every episode was dropped ({dropped}); loosen min_reward / "
                          "min_learning_gain or raise limit")
    ds = Dataset.from_list(rows, features=features(components))
    n = len(rows)
    stats = {
        "episodes": n + sum(dropped.values()),
        "kept": n,
        "dropped": dict(sorted(dropped.items())),
        "assistant_turns": sum(sum(m["role"] == "assistant" for m in r["messages"]) for r in rows),
        "mean_learning_gain": _mean([r[LEARNING_GAIN] for r in rows]),
        "mean_reward": _mean([r["reward"] for r in rows]),
        "mean_sid_total_raw": _mean([r["reward_components"].get("sid_total_raw") for r in rows]),
    }
    return ds, stats


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def write_jsonl(ds: Any, path: Path) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for row in ds:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    return path


def run(cfg: CorpusConfig) -> dict:
    """Build, filter and save the corpus; returns (and writes to ``results.json``) its paths and statistics."""
    out_dir = cfg.output_dir(RECIPE)
    run_ = start_wandb(RECIPE, cfg, out_dir)
    ds, stats = build_dataset(cfg)
    dataset_dir = out_dir / "dataset"
    ds.save_to_disk(str(dataset_dir))
    jsonl = write_jsonl(ds, out_dir / "corpus.jsonl")
    results = {"recipe": RECIPE, **stats, "fingerprint": ds._fingerprint, "dataset_dir": str(dataset_dir),
               "jsonl": str(jsonl), "suite": cfg.suite, "split": cfg.split, "tutor": cfg.tutor}
    if run_ is not None:
        run_.log({k: v for k, v in stats.items() if isinstance(v, (int, float))})
    finish_wandb(run_, {k: v for k, v in results.items() if k != "dropped"})
    write_results(out_dir, results)
    return results


def load_corpus(path: str | Path) -> Any:
    """A corpus written by :func:`run`: its ``dataset`` folder (or the run folder holding it) or a ``.jsonl``."""
    from datasets import Dataset, load_from_disk

    path = Path(path)
    if path.is_file() and path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return Dataset.from_list(rows)
    if (path / "dataset").is_dir():
        path = path / "dataset"
    if not (path / "dataset_info.json").is_file():
        raise ConfigError(f"no corpus at {str(path)!r}: build one with `tutorzoo train corpus --config "
                          "configs/train/corpus.yaml` and give its dataset folder (or corpus.jsonl)")
    return load_from_disk(str(path))
