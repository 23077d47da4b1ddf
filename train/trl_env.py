"""TutorZoo as a TRL ``environment_factory`` environment: the tutor talks to the simulated student through tools.

``GRPOTrainer(environment_factory=env_factory(...))`` makes one :class:`TutorZooEnv` per rollout and calls:

- ``reset(**row)`` with a dataset row of :func:`build_dataset`: the row's episode spec (``spec``, JSON) is reset
  in a :class:`~tutorzoo.envs.single_agent.TutorEnv` with its simulated student embedded, which plays the pre-test
  and the student's opening; the returned text (appended by TRL to the row's user message) is the tutor's view of
  them: the task, each pre-test question with the student's answer and whether it was right, the opening question;
- the ``say(message)`` tool: one tutor turn; the result is the student's reply (a *tool* message, so TRL keeps the
  student's tokens out of the loss with its ``tool_mask`` and counts them against ``max_completion_length``);
- the ``end_session(summary)`` tool: the tutor's closing turn, sent as ``summary`` followed by the end marker
  ``[END]`` — the very reply that ends a session in ``tutorzoo rollout`` — so no synthetic turn enters the
  transcript or the SID metrics; the student then takes the post-test;
- ``get_reward()``: the episode record's ``reward`` (the rubric's weighted total, as the env credited it).

Rows repeated ``num_generations`` times by TRL carry one spec: the generations of a group play the same task,
persona and student seed, and differ only in what the tutor says. Every turn goes through the one turn loop
(:func:`tutorzoo.envs.engine.advance`), seeded as the engine seeds it, so the same spec and the same tutor replies
give the same record here as in :func:`tutorzoo.eval.rollout.run_episode`, to the float.

**Unscored episodes.** An episode whose student or env raised is ``failed``; one whose rollout stopped while the
dialogue was still open (the model answered without a tool call, TRL's ``max_tool_calling_iterations``, or a
student reply that would overflow ``max_completion_length`` and was rolled back by TRL) is ``unfinished``, and so
is one the env's ``max_cycles`` truncated (``ended_by="truncated"``: no episode-level reward terms were credited).
Neither is scored: ``get_reward()`` and every component return ``None``, which TRL leaves out of the group's
baseline with no advantage. Each is counted in :class:`EpisodeLog` and logged (``tutorzoo/failed``,
``tutorzoo/unfinished``) with its record (``ended_by``, ``failures``).

**Components.** :func:`component_rewards` gives TRL one weight-0 reward function per rubric term (and the reserved
``pedagogy`` / ``forfeit``), read from each environment's record: TRL logs ``rewards/<term>/mean`` beside the
weighted ``reward`` (which is ``rewards/TutorZooEnv/mean``, ``get_reward``'s column at weight 1).

TRL turns every public method of the class with type hints and a Google docstring into a tool: only ``say`` and
``end_session`` are public; state is read through properties.

Example::

    from trl import GRPOConfig, GRPOTrainer
    from tutorzoo.rewards import load_rubric
    from tutorzoo.train.trl_env import EpisodeLog, build_dataset, component_rewards, env_factory
    rubric, log = load_rubric("default"), EpisodeLog()
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=GRPOConfig(..., reward_weights=[0.0] * n),
                          train_dataset=build_dataset(specs), reward_funcs=component_rewards(rubric, log),
                          environment_factory=env_factory(rubric, log=log))
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tutorzoo.envs.annotate import END_MARKER
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.engine import episode_record
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.protocols import FailureRecord, failure_record
from tutorzoo.envs.records import json_form, learning_gain
from tutorzoo.envs.reward_api import RewardModel

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
TUTOR_NAME = "trl"


def tool_system_prompt() -> str:
    """The tutor's system message for the tool interface (``train/prompts/tool_tutor_system.txt``)."""
    path = PROMPT_DIR / "tool_tutor_system.txt"
    try:
        return path.read_text(encoding="utf-8").removesuffix("\n")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the tool tutor's system prompt ({exc.strerror}); restore the file "
                          "from the repository or reinstall the package") from None


# ---------------------------------------------------------------------------------------------- the dataset
def spec_row(spec: EpisodeSpec, system_prompt: str | None = None) -> dict[str, Any]:
    """One dataset row: the conversational ``prompt`` (system message, an empty user message that ``reset``'s
    view is appended to), the ``spec`` as JSON and its ``spec_key``."""
    return {"prompt": [{"role": "system", "content": system_prompt if system_prompt is not None
                        else tool_system_prompt()}, {"role": "user", "content": ""}],
            "spec": json.dumps(spec.model_dump(), sort_keys=True, separators=(",", ":")),
            "spec_key": spec.key()}


def build_dataset(specs: Sequence[EpisodeSpec], system_prompt: str | None = None) -> Any:
    """A ``datasets.Dataset`` with one row per spec (:func:`spec_row`), in the order of ``specs``.

    Example::

        from tutorzoo.eval.suite import load_suite
        dataset = build_dataset(load_suite("train-sft").specs("train")[:8])
    """
    from datasets import Dataset

    if not specs:
        raise ConfigError("no episode specs for the dataset: the suite split selects none; widen the selection")
    rows = [spec_row(s, system_prompt) for s in specs]
    return Dataset.from_list(rows)


def suite_dataset(suite: str, split: str = "train", max_specs: int | None = None,
                  protocol: Mapping[str, Any] | None = None, system_prompt: str | None = None) -> Any:
    """:func:`build_dataset` of a suite's split (evenly strided to ``max_specs``, ``protocol`` overrides applied)."""
    from tutorzoo.train.grpo import SpecSelection

    selection = SpecSelection(suite=suite, split=split, max_specs=max_specs, protocol=dict(protocol or {}))
    return build_dataset(selection.specs(), system_prompt)


def row_spec(row: Mapping[str, Any]) -> EpisodeSpec:
    """The :class:`EpisodeSpec` of a dataset row (its ``spec`` column: JSON or a mapping); a clear error otherwise."""
    raw = row.get("spec")
    if raw is None:
        raise ConfigError(f"the dataset row has no 'spec' column (columns: {sorted(row)}); build the dataset with "
                          "tutorzoo.train.trl_env.build_dataset(specs)")
    try:
        return EpisodeSpec.model_validate(raw) if isinstance(raw, Mapping) else EpisodeSpec.model_validate_json(raw)
    except ValueError as exc:
        raise ConfigError(f"the dataset row's 'spec' is not a valid episode spec: {exc}") from None


# ---------------------------------------------------------------------------------------------- accounting
@dataclass
class EpisodeLog:
    """Every finished rollout's record, counted by outcome; ``path`` (optional) receives them as JSON lines."""

    path: Path | None = None
    scored: int = 0
    failed: int = 0
    unfinished: int = 0
    records: list[dict] = field(default_factory=list)
    keep: bool = True  # keep the records in memory (tests, parity); a long run may keep only the counts

    @property
    def episodes(self) -> int:
        return self.scored + self.failed + self.unfinished

    def add(self, record: dict, status: str) -> None:
        if status == "scored":
            self.scored += 1
        elif status == "failed":
            self.failed += 1
        else:
            self.unfinished += 1
        if self.keep:
            self.records.append(record)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(json_form(record), sort_keys=True, ensure_ascii=False) + "\n")

    def counts(self) -> dict[str, int]:
        return {"episodes": self.episodes, "scored": self.scored, "failed": self.failed,
                "unfinished": self.unfinished}


# ---------------------------------------------------------------------------------------------- the environment
class SessionClosed(RuntimeError):
    """A tool was called after the session ended (TRL hands the message back to the model as the tool's error)."""


class TutorZooEnv:
    """One tutoring session as a TRL tool environment (see the module docstring).

    Example::

        env = TutorZooEnv(load_rubric("default"))
        view = env.reset(**spec_row(spec))
        reply = env.say("What do you think happens to the denominators?")
        env.end_session("We added fractions by finding a common denominator.")
        env.get_reward() == env.record["reward"]   # True
    """

    def __init__(self, reward: RewardModel | None = None, make_student: Callable[[str], Any] | None = None,
                 log: EpisodeLog | None = None, tutor_name: str = TUTOR_NAME) -> None:
        if make_student is None:
            from tutorzoo.agents.student import SimulatedStudent

            make_student = SimulatedStudent
        self._reward = reward
        self._make_student = make_student
        self._log = log
        self._tutor_name = tutor_name
        self._env: Any = None
        self._spec: EpisodeSpec | None = None
        self._student: Any = None
        self._record: dict | None = None
        self._status = "idle"  # idle -> open -> scored | failed | unfinished
        self._failures: list[FailureRecord] = []
        self._finished = False  # the env reached the episode's end (its record is final)

    # ------------------------------------------------------------------ state (properties: never tools)
    @property
    def spec(self) -> EpisodeSpec | None:
        return self._spec

    @property
    def status(self) -> str:
        """``idle`` before a reset, ``open`` while the dialogue runs, then ``scored``, ``failed`` or
        ``unfinished`` once the rollout is settled (:meth:`get_reward`)."""
        return self._status

    @property
    def record(self) -> dict | None:
        """The ``episodes.jsonl`` record, once the rollout is settled."""
        return self._record

    @property
    def is_over(self) -> bool:
        """The session is closed: no more tool calls are played."""
        return self._finished or bool(self._failures)

    # ------------------------------------------------------------------ TRL's hooks
    def reset(self, **row: Any) -> str:
        """Start the row's episode: the pre-test and the student's opening; returns the tutor's view of them."""
        from tutorzoo.envs.single_agent import TutorEnv

        spec = row_spec(row)
        self._settle()  # a previous episode nobody scored is counted (unfinished), not dropped
        self._spec, self._record, self._status = spec, None, "open"
        self._failures, self._finished = [], False
        self._student = self._make_student(spec.persona)
        self._env = TutorEnv(self._student, **spec.env_kwargs(), reward=self._reward)
        try:
            _, info = self._env.reset(seed=spec.seed)
        except Exception as exc:  # the student failed during the pre-test or its opening
            self._fail("student", exc)
            return f"This session could not start ({type(exc).__name__}); it will not be scored."
        self._check_over()
        return self._view(info)

    def say(self, message: str) -> str:
        """Say one tutoring turn to the student and get the student's reply.

        Args:
            message: One short tutor turn: a question, a hint, an explanation or feedback.

        Returns:
            The student's reply, or a note that the session is over.
        """
        return self._tutor_turn(message)

    def end_session(self, summary: str) -> str:
        """Close the session with a brief summary of what was learnt; the student then takes the post-test.

        Args:
            summary: The closing message to the student, summarising the session.

        Returns:
            A note that the session is over.
        """
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError("end_session needs a non-empty summary: the closing message the student reads; "
                             "call end_session(summary='...') or keep teaching with say(message='...')")
        text = summary if END_MARKER.lower() in summary.lower() else f"{summary} {END_MARKER}"
        return self._tutor_turn(text)

    def get_reward(self) -> float | None:
        """The episode record's reward; ``None`` (unscored, counted) for a failed or unfinished episode."""
        self._settle()
        return float(self._record["reward"]) if self._status == "scored" else None

    # ------------------------------------------------------------------ the turn loop
    def _tutor_turn(self, text: Any) -> str:
        if self._env is None:
            raise SessionClosed("no session: the environment was not reset")
        if self.is_over:
            raise SessionClosed("the session is over (the student is done with the post-test); stop calling tools "
                                "and end your turn")
        before = len(self._env.aec.infos["tutor"]["messages"])
        try:
            _, _, _, _, info = self._env.step(text)
        except Exception as exc:  # the student's reply (or the post-test) failed: the episode fails, unscored
            self._fail(self._env.aec.agent_selection, exc)
            return f"The session failed ({type(exc).__name__}); it will not be scored."
        self._check_over()
        replies = [m["content"] for m in info["messages"][before + 1:] if m["role"] == "user"]
        reply = "\n".join(replies)
        if self._finished:
            note = "The session is over; the student is taking the post-test. Do not call any more tools."
            return f"{reply}\n\n({note})" if reply else note
        return reply

    def _check_over(self) -> None:
        aec = self._env.aec
        if aec.terminations["tutor"] or aec.truncations["tutor"]:
            self._finished = True
            self._settle()

    def _fail(self, agent: str, exc: BaseException) -> None:
        from tutorzoo.envs.protocols import exception_failure

        info = self._env.aec.infos.get(agent, {}) if self._env is not None else {}
        self._failures.append(exception_failure(agent, info, exc))
        self._settle()

    def _settle(self) -> None:
        """Make the record final and count it, once per rollout (a reward function or ``get_reward``, first)."""
        if self._record is not None or self._env is None or self._spec is None:
            return
        aec, failures, note = self._env.aec, list(self._failures), None
        truncated = self._finished and aec.ended_by == "truncated"
        if failures:
            status = "failed"
        elif self._finished and not truncated:
            status = "scored"
        elif truncated:  # the env's max_cycles cut the episode: its reward lacks the episode-level terms
            status, note = "unfinished", ("truncated: the env's max_cycles ran out before the session ended; the "
                                          "episode is not scored")
        else:
            status, note = "unfinished", (
                f"unfinished: the rollout stopped after {aec.tutor_turns} tutor turn(s) with the dialogue still "
                "open (the model answered without a tool call, or TRL's max_tool_calling_iterations or "
                "max_completion_length ran out); the episode is not scored")
        if note is not None:
            failures.append(failure_record("tutor", aec.infos.get("tutor", {}), note, ""))
        record = episode_record(aec, self._spec, self._tutor_name, self._student, failures)
        if status == "unfinished":
            record = replace(record, ended_by="truncated" if truncated else "unfinished")
        self._record, self._status = record, status
        if self._log is not None:
            self._log.add(record, status)

    @staticmethod
    def _view(info: Mapping[str, Any]) -> str:
        """What the tutor sees before its first turn: every user message after the system prompt."""
        users = [m["content"] for m in info["messages"] if m["role"] == "user"]
        if info.get("phase") == "dialogue" and len(users) == 1:  # the tutor opens: only the pre-test summary
            return f"{users[0]}\n\nYou open the dialogue."
        head, rest = users[0], users[1:]
        return "\n\n".join([head, *(f"Student: {u}" for u in rest)])


def env_factory(reward: RewardModel | None = None, make_student: Callable[[str], Any] | None = None,
                log: EpisodeLog | None = None, tutor_name: str = TUTOR_NAME) -> Callable[[], TutorZooEnv]:
    """TRL's zero-argument ``environment_factory``: each call makes a :class:`TutorZooEnv` with these settings."""

    def make() -> TutorZooEnv:
        return TutorZooEnv(reward, make_student, log, tutor_name)

    return make


# ---------------------------------------------------------------------------------------------- reward columns
def component_rewards(rubric: Any, log: EpisodeLog | None = None) -> list[Callable[..., list[float | None]]]:
    """One TRL reward function per term of ``rubric`` (then ``pedagogy``, and ``forfeit`` in hard mode), each
    reading the component from its environment's record, ``None`` on an unscored episode. Give them weight 0
    (:func:`component_weights`): they are logged, and ``get_reward`` carries the weighted total. The first also
    logs the step's ``tutorzoo/*`` counts through TRL's ``log_metric``."""
    names = [*rubric.weights, "pedagogy", *(["forfeit"] if getattr(rubric, "hard", False) else [])]
    return [_component(name, log_stats=(i == 0)) for i, name in enumerate(names)]


def component_weights(rubric: Any) -> list[float]:
    """Weight 0 for each of :func:`component_rewards`' functions (TRL appends ``get_reward`` at weight 1)."""
    return [0.0] * len(component_rewards(rubric))


def _component(name: str, log_stats: bool) -> Callable[..., list[float | None]]:
    def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        envs = kwargs.get("environments")
        if envs is None:
            raise ConfigError(f"reward {name!r} reads TutorZoo's environments; pass environment_factory="
                              "tutorzoo.train.trl_env.env_factory(...) to GRPOTrainer")
        for env in envs:
            env._settle()
        if log_stats and callable(kwargs.get("log_metric")):
            for key, value in step_stats(envs).items():
                kwargs["log_metric"](key, value)
        return [float(env.record.get("reward_components", {}).get(name, 0.0)) if env.status == "scored" else None
                for env in envs]

    reward.__name__ = name
    return reward


def step_stats(envs: Sequence[TutorZooEnv]) -> dict[str, float]:
    """Fractions of failed / unfinished rollouts of a step and the scored ones' mean learning gain and turns."""
    n = len(envs) or 1
    scored = [e.record for e in envs if e.status == "scored" and e.record is not None]
    out = {"tutorzoo/failed": sum(e.status == "failed" for e in envs) / n,
           "tutorzoo/unfinished": sum(e.status == "unfinished" for e in envs) / n}
    gains = [g for r in scored if (g := learning_gain(r)) is not None]
    if gains:
        out["tutorzoo/learning_gain"] = sum(gains) / len(gains)
    if scored:
        out["tutorzoo/tutor_turns"] = sum(r["n_tutor_turns"] for r in scored) / len(scored)
        out["tutorzoo/ended_by_end_marker"] = sum(r["ended_by"] == "end_marker" for r in scored) / len(scored)
    return out


__all__ = ["EpisodeLog", "SessionClosed", "TutorZooEnv", "build_dataset", "component_rewards", "component_weights",
           "env_factory", "row_spec", "spec_row", "step_stats", "suite_dataset", "tool_system_prompt"]
