"""The tutoring session as a turn-based PettingZoo AEC environment (documented in :mod:`tutorzoo.envs.tutoring_v0`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from difflib import get_close_matches
from typing import Any, Protocol, cast

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from tutorzoo.envs import spaces as tzs
from tutorzoo.envs.act_features import act_from_ints, act_ints
from tutorzoo.envs.act_text import verbalise_act
from tutorzoo.envs.acts import StudentTurn, TutorAct
from tutorzoo.envs.annotate import AnnotationContext, Annotator
from tutorzoo.envs.config import EnvConfig, make_config
from tutorzoo.envs.content import EMPTY as EMPTY_READING
from tutorzoo.envs.content import ContentReader, Reading, with_reading
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.grading import Grade, grade, mentions_value
from tutorzoo.envs.labels import COGNITION_STATES
from tutorzoo.envs.protocols import FailureRecord
from tutorzoo.envs.records import (
    EpisodeRecord,
    Outcome,
    StudentSnapshot,
    TurnRecord,
    student_turn,
    tutor_info,
    tutor_turn,
)
from tutorzoo.envs.reward_api import Exchange, LearningGain, RewardModel
from tutorzoo.envs.session_prompts import STUDENT_SYSTEM_PROMPT, TEST_ANSWER_FORMAT, TUTOR_SYSTEM_PROMPT
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.envs.tasks.base import Item, Task

AGENTS = ("tutor", "student")


class TurnReader(Protocol):
    """What reads a tutor turn's content (``ContentReader.for_task(task)``, or a model-backed reader)."""

    def read(self, text: str) -> Reading: ...


class TutoringEnv(AECEnv):
    """A tutor and a student: pre-test -> dialogue -> post-test. See :mod:`tutorzoo.envs.tutoring_v0` for the docs."""

    metadata = {"name": "tutoring_v0", "render_modes": ["human", "ansi"], "is_parallelizable": True}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        max_steps = kwargs.pop("_max_steps", None)
        reward = kwargs.pop("reward", None)
        # what reads the tutor's turns (task -> an object with ``read(text) -> tutorzoo.envs.content.Reading``): the
        # rule
        # reader by default; a model-backed one from tutorzoo.agents.content_reader_llm.reader_factory("llm:…" | "hf:…")
        reader: Callable[[Task], TurnReader] | None = kwargs.pop("reader", None)
        if reader is not None and not callable(reader):
            raise ConfigError(f"reader must be a callable task -> reader (e.g. tutorzoo.agents.content_reader_llm."
                              f"reader_factory('llm:openai:<model>')), got {type(reader).__name__}")
        self._reader_factory: Callable[[Task], TurnReader] = reader if reader is not None else ContentReader.for_task
        if reward is not None and not isinstance(reward, RewardModel):
            raise ConfigError(
                "reward must implement tutorzoo.envs.reward_api.RewardModel (e.g. tutorzoo.rewards.Rubric), "
                f"got {type(reward).__name__}"
            )
        self.reward_model: RewardModel = reward if reward is not None else LearningGain()
        self.config: EnvConfig = make_config(**kwargs)
        self.render_mode = self.config.render_mode
        self.possible_agents = list(AGENTS)
        self.agents = []
        self._max_steps = max_steps if max_steps is not None else (
            2 * self.config.max_cycles if self.config.max_cycles is not None else None
        )
        self._task_set = get_task_set(self.config.task_set, self.config.task_path)
        self._task_ids = self._task_set.task_ids()
        if not self._task_ids:
            raise ValueError(f"task set {self.config.task_set!r} has no tasks; give a task_path with data")
        if self.config.task_id is not None and self.config.task_id not in self._task_ids:
            close = get_close_matches(self.config.task_id, self._task_ids, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"task_id {self.config.task_id!r} is not in task set {self.config.task_set!r}.{hint} "
                f"Run `tutorzoo list tasks --task-set {self.config.task_set}` to see the ids."
            )
        self.task: Task | None = None

    # ------------------------------------------------------------------ spaces
    @functools.cache  # noqa: B019 - one env instance per cache entry is intended (space identity)
    def observation_space(self, agent: str) -> spaces.Space:
        return tzs.tutor_observation_space() if agent == "tutor" else tzs.student_observation_space()

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Space:
        if agent == "tutor":
            return tzs.tutor_action_space(self.config.action_mode)
        return tzs.student_action_space()

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        # A seed starts a stream; unseeded resets continue it, so reset(seed=s), reset(), ... is reproducible.
        if seed is not None or not hasattr(self, "_stream_seed"):
            self._stream_seed, self._seed_stream = seed, None  # the stream is made only if an unseeded reset needs it
            episode_seed = seed
        else:
            if self._seed_stream is None:
                self._seed_stream = np.random.default_rng(self._stream_seed)
            episode_seed = int(self._seed_stream.integers(2**63))
        self._rng = np.random.default_rng(episode_seed)
        task_id = self.config.task_id
        if task_id is None:
            task_id = self._task_ids[int(self._rng.integers(len(self._task_ids)))]
        task = self._task_set.build(task_id, self._rng)
        self.task = task
        self._task = task  # the episode's task (``task`` is None before the first reset)
        self._task_public = task.public_view()
        self._pre_items: tuple[Item, ...] = task.pretest
        self._post_items: list[tuple[Item, str]] = self._posttest_items(task)
        self._post_prompts: tuple[str, ...] | None = None
        self._annotator = Annotator.for_task(task) if self.config.action_mode == "text" else None
        self._reader = self._reader_factory(task)
        self._leaked_items: set[str] = set()
        self._ctx = AnnotationContext(focus_kc=task.knowledge_components[0].id)
        self._kc_index = {kc.id: i for i, kc in enumerate(task.knowledge_components[: tzs.MAX_KCS])}
        self.pretest_results = []
        self._update_kc_accuracy()

        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)

        self.transcript: list[TurnRecord] = []
        self.pretest_results: list[dict] = []
        self._pretest_view: list[dict] = []  # what the tutor is shown of each answered pre-test item
        self.posttest_results: list[dict] = []
        self.tutor_turns = 0
        self.invalid_turns = {"tutor": 0, "student": 0}
        self.clipped_turns = {"tutor": 0, "student": 0}
        self.ended_by: str | None = None
        self._steps = 0
        self._obs_cache: dict[str, tuple[int, str, np.ndarray]] = {}
        self._revealed = False
        self._last_student: TurnRecord | None = None
        self._last_tutor_act: TutorAct | None = None
        self._last_act_dict: dict | None = None
        self._last_tutor_text = ""
        # the student's hidden state after its last dialogue turn, as the env holds it for the reward model and the
        # record (a simulated student reports it with each turn; a plain-text one reports none)
        self._student_state: StudentSnapshot = {}
        self._components: dict[str, float] = {}
        self._credited = 0.0
        self._pending: TurnRecord | None = None  # the tutor turn awaiting the student's reply, for exchange rewards
        self._last_components: dict[str, float] = {}
        self._tutor_messages: list[dict] = [{"role": "system", "content": TUTOR_SYSTEM_PROMPT}]
        self._student_messages: list[dict] = [
            {"role": "system", "content": STUDENT_SYSTEM_PROMPT.format(statement=task.statement)}
        ]
        self.outcome: Outcome | None = None  # set once the episode has ended

        self.phase = "pretest"
        self._student_next: tuple[str, int] = ("pretest", 0)
        self._tutor_next = "observe"
        self._tutor_text = "The pre-test is starting."
        self.agent_selection = "student"
        self.infos = {a: {} for a in self.agents}
        self._refresh_infos()

    def _posttest_items(self, task: Task) -> list[tuple[Item, str]]:
        mode = self.config.posttest
        items: list[tuple[Item, str]] = []
        if mode in ("isomorphic", "both"):
            items += [(it, "isomorphic") for it in task.posttest]
        if mode in ("same", "both"):
            items += [(it, "same") for it in task.pretest]
        return items

    def observe(self, agent: str) -> dict:
        # Observations change only when the env steps: compute each once per step, hand out copies.
        cached = self._obs_cache.get(agent)
        if cached is None or cached[0] != self._steps:
            if agent == "tutor":
                text, features = self._tutor_text, self._tutor_features()
            else:
                text, features = self._student_text(), self._student_features()
            text, _ = tzs.normalize_text(text, tzs.MAX_OBSERVATION_CHARS)
            cached = self._obs_cache[agent] = (self._steps, text, features)
        return {"text": cached[1], "features": cached[2].copy()}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations.get(agent, False) or self.truncations.get(agent, False):
            self._was_dead_step(action)
            return
        self._clear_rewards()
        self._last_components = {}
        self._cumulative_rewards[agent] = 0.0
        if agent == "student":
            self._student_step(action)
            next_agent = "tutor"
        else:
            self._tutor_step(action)
            next_agent = "student"
        self._steps += 1
        if self.outcome is None and self._max_steps is not None and self._steps >= self._max_steps:
            self._finish(ended_by="truncated", truncated=True)
        self.agent_selection = next_agent
        self._accumulate_rewards()
        self._refresh_infos()
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------------ student side
    def _student_step(self, action: Any) -> None:
        kind, index = self._student_next
        if kind in ("pretest", "posttest"):
            text = self._student_text_action(action)
            self._answer_item(kind, index, text)
            return
        state_before = self._student_state
        turn = self._student_turn(action)
        self._record_student(turn)
        if self._pending is not None:
            exchange: Exchange = {
                "task": self._task, "tutor": self._pending, "student": turn, "state_before": state_before,
                "state_after": self._student_state, "history": self.transcript, "turn": self.tutor_turns,
            }
            self._credit(self.reward_model.exchange(exchange))
            self._pending = None
        if kind == "open":
            self._tutor_next, self._student_next = "dialogue", ("reply", 0)
            self.phase = "dialogue"
        elif self.tutor_turns >= self.config.max_turns:
            self._start_posttest(tutor_observes=True)
        else:
            self._tutor_next, self._student_next = "dialogue", ("reply", 0)

    def _answer_item(self, kind: str, index: int, text: str) -> None:
        if kind == "pretest":
            item, item_kind = self._pre_items[index], None
        else:
            item, item_kind = self._post_items[index]
        g: Grade = grade(item, text)
        result = {
            "item_id": item.id,
            "kcs": list(item.kcs),
            "subject": item.subject,
            "response": text,
            "extracted": g.extracted,
            "valid": g.valid,
            "correct": g.correct,
        }
        if kind == "pretest":
            self.pretest_results.append(result)
            self._update_kc_accuracy()
            self._pretest_view.append({
                "item_id": item.id,
                "kcs": list(item.kcs),
                "question": item.render(with_options=False),
                "answer": _answer_text(item),
                "response": text,
                "correct": g.correct,
            })
            self._student_messages += [
                {"role": "user", "content": item.render()},
                {"role": "assistant", "content": text},
            ]
            verdict = "correct" if g.correct else ("incorrect" if g.valid else "invalid (no answer found)")
            self._tutor_text = (
                f"Pre-test question {index + 1}/{len(self._pre_items)}: {item.render(with_options=False)}\n"
                f"Student's answer: {text}\nResult: {verdict}"
            )
            if index + 1 < len(self._pre_items):
                self._tutor_next, self._student_next = "observe", ("pretest", index + 1)
            elif self.config.opener == "student":
                self._tutor_next, self._student_next = "observe", ("open", 0)
                self.phase = "dialogue"
            else:
                self._tutor_next, self._student_next = "dialogue", ("reply", 0)
                self.phase = "dialogue"
                self._tutor_text = self._pretest_summary() + "\nYou open the dialogue."
            if self.phase == "dialogue":
                self._tutor_messages.append({"role": "user", "content": self._pretest_summary()})
            return
        result["kind"] = item_kind
        result["parallel_of"] = item.parallel_of if item_kind == "isomorphic" else None
        if item.id in self._leaked_items:
            result["leaked"] = True  # the tutor stated this item's answer in the dialogue (a leak penalty fired)
        self.posttest_results.append(result)
        if index + 1 < len(self._post_items):
            self._tutor_next, self._student_next = "observe", ("posttest", index + 1)
            self._tutor_text = f"Post-test question {index + 2}/{len(self._post_items)} is being answered."
        else:
            self._finish(ended_by=self.ended_by or "max_turns")

    def _student_text_action(self, action: Any) -> str:
        if isinstance(action, StudentTurn):
            action = action.utterance
        elif isinstance(action, dict):
            action = action.get("utterance", "")
        text, changed = tzs.normalize_text(action, tzs.MAX_UTTERANCE_CHARS)
        if changed:
            self.clipped_turns["student"] += 1
        return text

    def _student_turn(self, action: Any) -> TurnRecord:
        """A student dialogue turn with its labels; plain text (an LLM student) gets neutral labels."""
        invalid = False
        if isinstance(action, StudentTurn):
            turn = action
        elif isinstance(action, dict) and isinstance(action.get("utterance"), str):
            try:
                turn = StudentTurn(
                    utterance=action["utterance"],
                    cognition_state=action.get("cognition_state", "vague_understanding"),
                    cognitive_level=action.get("cognitive_level", "understand"),
                    disciplines=tuple(action.get("disciplines", (self._task.disciplines[0],))),
                    discipline_transfer=bool(action.get("discipline_transfer", False)),
                    privileged=dict(action.get("privileged", {})),
                )
            except (ValueError, TypeError):
                invalid = True
                turn = StudentTurn(action["utterance"], "irrelevant", "remember", (self._task.disciplines[0],))
        else:
            text = action if isinstance(action, str) else ""
            invalid = not isinstance(action, str)
            turn = StudentTurn(text, "vague_understanding", "understand", (self._task.disciplines[0],))
        text, changed = tzs.normalize_text(turn.utterance, tzs.MAX_UTTERANCE_CHARS)
        if changed:
            self.clipped_turns["student"] += 1
        if invalid or not text.strip():
            self.invalid_turns["student"] += 1
            invalid = True
        if turn.privileged:
            self._student_state = _snapshot(turn.privileged)
        states_answer = bool(text) and mentions_value(text, self._task.answer)
        return student_turn(turn, text, self.tutor_turns, states_answer, invalid)

    def _record_student(self, rec: TurnRecord) -> None:
        self.transcript.append(rec)
        self._last_student = rec
        self._ctx.after_student(rec["discipline"])
        self._tutor_messages.append({"role": "user", "content": rec["utterance"]})
        self._student_messages.append({"role": "assistant", "content": rec["utterance"]})
        self._tutor_text = rec["utterance"]

    # ------------------------------------------------------------------ tutor side
    def _tutor_step(self, action: Any) -> None:
        if self._tutor_next == "observe":
            return  # the tutor watches the tests; its action is not part of the session
        act, text = self._tutor_act(action)
        self.tutor_turns += 1
        self._revealed = self._revealed or act.reveals_answer
        self._leaked_items.update(act.revealed_items)
        rec = tutor_turn(act, text, self.tutor_turns)
        self.transcript.append(rec)
        self._ctx.after_tutor(act, text)
        self._last_tutor_act, self._last_tutor_text = act, text
        self._last_act_dict = act.to_dict()
        self._tutor_messages.append({"role": "assistant", "content": text})
        self._student_messages.append({"role": "user", "content": text})
        if act.reveals_answer and self.reward_model.ends_on_leak:
            self._credit(self.reward_model.leak_penalty(rec))
            self.ended_by = "leak"
            self._start_posttest(tutor_observes=False)
        elif act.ends_session:
            self.ended_by = "end_marker"
            self._start_posttest(tutor_observes=False)
        else:
            self._pending = rec
            self._student_next = ("reply", 0)

    def _tutor_act(self, action: Any) -> tuple[TutorAct, str]:
        if self.config.action_mode == "act":
            return self._decode_act(action)
        text, changed = tzs.normalize_text(action, tzs.MAX_UTTERANCE_CHARS)
        if changed:
            self.clipped_turns["tutor"] += 1
        if not isinstance(action, str) or not text.strip():
            self.invalid_turns["tutor"] += 1
            return _invalid_act(self._task), text
        assert self._annotator is not None  # text mode has one
        act = self._annotator.annotate(text, self._ctx)
        if act.invalid:  # not language (envs/wellformed.py): counted like an empty or garbage action
            self.invalid_turns["tutor"] += 1
            return with_reading(act, EMPTY_READING), text
        return with_reading(act, self._reader.read(text)), text

    def _decode_act(self, action: Any) -> tuple[TutorAct, str]:
        try:
            ints = act_ints(action)
        except (TypeError, ValueError):  # not an act of the space
            self.invalid_turns["tutor"] += 1
            return _invalid_act(self._task), ""
        act = act_from_ints(ints, self._task)
        if self._ctx.previous_disciplines:  # a transfer is judged against the turn before, as the annotator does
            prev = self._ctx.previous_disciplines
            moved = any(d not in prev for d in act.disciplines)
            if moved and not act.discipline_transfer:  # (else the act is unchanged: no dataclasses.replace)
                act = replace(act, discipline_transfer=True)
        text = verbalise_act(act, self._task, self._rng)
        # the act's labels are the tutor's choice; the student learns from what its words say, read as in text mode.
        # A closing act (its end flag set) is followed by the post-test, never by a student turn: nothing learns from
        # its words, so they are not read and its content is the empty reading.
        content = EMPTY_READING if act.ends_session else self._reader.read(text)
        return replace(act, content=content), text

    def _credit(self, components: dict[str, float]) -> None:
        """Credit weighted components to the tutor now and add them to the episode's totals."""
        self._last_components = dict(components)
        if not components:
            return
        amount = float(self.reward_model.weigh(components))
        self.rewards["tutor"] += amount
        self._credited += amount
        for name, value in components.items():
            self._components[name] = self._components.get(name, 0.0) + float(value)

    def _start_posttest(self, tutor_observes: bool) -> None:
        self.phase = "posttest"
        self._student_next = ("posttest", 0)
        self._tutor_next = "observe"
        if tutor_observes:
            self._tutor_text = "The dialogue is over; the post-test is starting."

    # ------------------------------------------------------------------ outcome
    def _finish(self, ended_by: str, truncated: bool = False) -> None:
        self.ended_by = ended_by
        pre = _score(self.pretest_results)
        iso = [r for r in self.posttest_results if r["kind"] == "isomorphic"]
        same = [r for r in self.posttest_results if r["kind"] == "same"]
        primary = iso if self.config.posttest != "same" else same
        post = _score(primary) if primary else None
        post_same = _score(same) if same else None
        gain = (post - pre) if (post is not None and pre is not None) else 0.0
        # the reward model reads the record with the gains and what was credited before the episode's own terms
        self.outcome = Outcome(
            pretest_score=pre,
            posttest_score=post,
            posttest_same_score=post_same,
            learning_gain=gain if post is not None else None,
            learning_gain_same=(post_same - pre) if (post_same is not None and pre is not None) else None,
            reward_components=dict(self._components),
            reward=self._credited,
        )
        if not truncated:
            self._credit(self.reward_model.episode(self.episode_record(copy=False)))
            self.rewards["student"] = float(gain)
        self.outcome = replace(self.outcome, reward_components=dict(self._components), reward=self._credited)
        for a in self.agents:
            if truncated:
                self.truncations[a] = True
            else:
                self.terminations[a] = True
        self.phase = "done"

    def episode_record(self, copy: bool = True, *, spec: dict[str, Any] | None = None, tutor: str | None = None,
                       student: str | None = None, failures: list[FailureRecord] | None = None) -> EpisodeRecord:
        """The episode as one :class:`~tutorzoo.envs.records.EpisodeRecord` (an ``episodes.jsonl`` line).

        ``spec``, ``tutor``, ``student`` and ``failures`` are the run's (the rollout engine passes them); a failure
        makes ``ended_by`` ``"failure"``. ``copy=False`` shares the env's own lists (for a reward model that only
        reads them, at episode end).
        """
        assert self.task is not None, "reset() the env before asking for its record"
        outcome = self.outcome or Outcome(pretest_score=_score(self.pretest_results),
                                          reward_components=dict(self._components), reward=self._credited)
        return EpisodeRecord(
            task={"id": self.task.id, "title": self.task.title, "disciplines": list(self.task.disciplines)},
            config=self.config.model_dump(exclude={"render_mode"}),
            transcript=[TurnRecord(**t) for t in self.transcript] if copy else self.transcript,
            pretest=[dict(r) for r in self.pretest_results] if copy else self.pretest_results,
            posttest=[dict(r) for r in self.posttest_results] if copy else self.posttest_results,
            pretest_score=outcome.pretest_score,
            posttest_score=outcome.posttest_score,
            posttest_same_score=outcome.posttest_same_score,
            learning_gain=outcome.learning_gain,
            learning_gain_same=outcome.learning_gain_same,
            reward_components=dict(outcome.reward_components),
            reward=outcome.reward,
            n_tutor_turns=self.tutor_turns,
            ended_by="failure" if failures else (self.ended_by or "unfinished"),
            invalid_turns=dict(self.invalid_turns),
            clipped_turns=dict(self.clipped_turns),
            privileged_student_state=self._student_state,
            spec=spec,
            tutor=tutor,
            student=student,
            failures=failures,
        )

    # ------------------------------------------------------------------ observations and infos
    def _tutor_features(self) -> np.ndarray:
        f = [0.0] * tzs.TUTOR_FEATURES  # filled as Python floats, made float32 once (as item assignments would)
        if self.phase in tzs.PHASES:
            f[tzs.PHASES.index(self.phase)] = 1.0
        f[3] = min(1.0, self.tutor_turns / self.config.max_turns)
        if self.pretest_results:
            f[4] = sum(r["correct"] for r in self.pretest_results) / len(self.pretest_results)
        f[5 : 5 + tzs.MAX_KCS] = self._kc_accuracy
        base = 5 + tzs.MAX_KCS
        if self._last_student is not None:
            f[base + COGNITION_STATES.index(self._last_student["student_cognition_state"])] = 1.0
            f[base + len(COGNITION_STATES)] = float(self._last_student["states_answer"])
        f[base + len(COGNITION_STATES) + 1] = float(self._revealed)
        return np.array(f, dtype=np.float32)

    def _update_kc_accuracy(self) -> None:
        """Per-KC pre-test accuracy (-1 for an empty KC slot), recomputed when a pre-test answer comes in."""
        acc = [-1.0] * tzs.MAX_KCS
        for kc_id, i in self._kc_index.items():
            results = [r["correct"] for r in self.pretest_results if kc_id in r["kcs"]]
            acc[i] = (sum(results) / len(results)) if results else 0.0
        self._kc_accuracy = acc

    def _student_features(self) -> np.ndarray:
        f = [0.0] * tzs.STUDENT_FEATURES  # filled as Python floats, made float32 once (as item assignments would)
        if self.phase in tzs.PHASES:
            f[tzs.PHASES.index(self.phase)] = 1.0
        f[3] = min(1.0, self.tutor_turns / self.config.max_turns)
        return np.array(f, dtype=np.float32)

    def _student_text(self) -> str:
        kind, index = self._student_next
        if self.phase == "done":
            return "The session is over."
        if kind == "pretest":
            item = self._pre_items[index]
            return f"Pre-test question {index + 1}: {item.render()}\n{TEST_ANSWER_FORMAT}"
        if kind == "posttest":
            return self._posttest_prompts()[index]
        if kind == "open":
            return f"Start the dialogue: ask your tutor about the task. Task: {self._task.statement}"
        return self._last_tutor_text

    def _posttest_prompts(self) -> tuple[str, ...]:
        """What the student is shown for each post-test item; the items do not depend on one another's answers,
        so the student's info lists them all (a model student may answer them at once)."""
        if self._post_prompts is None:
            self._post_prompts = tuple(
                tzs.normalize_text(f"Post-test question {i + 1}: {item.render()}\n{TEST_ANSWER_FORMAT}",
                                   tzs.MAX_OBSERVATION_CHARS)[0] for i, (item, _) in enumerate(self._post_items))
        return self._post_prompts

    def _pretest_summary(self) -> str:
        lines = [f"Task: {self._task.statement}", "Pre-test results:"]
        for i, (item, r) in enumerate(zip(self._pre_items, self.pretest_results, strict=False)):
            verdict = "correct" if r["correct"] else "incorrect"
            lines.append(f"{i + 1}. {item.render(with_options=False)} Student: {r['response']} ({verdict})")
        return "\n".join(lines)

    def _refresh_infos(self) -> None:
        if not self.agents:
            return
        phase, turn, max_turns = self.phase, self.tutor_turns, self.config.max_turns
        tutor = tutor_info(
            phase=phase,
            turn=turn,
            max_turns=max_turns,
            observe_only=self._tutor_next == "observe" or phase == "done",
            messages=list(self._tutor_messages),
            task=self._task_public,
            pretest=list(self._pretest_view),
            last_act=dict(self._last_act_dict) if self._last_act_dict else None,
            reward_components=dict(self._last_components),
            outcome=self.outcome.to_dict() if self.outcome is not None else None,
        )
        kind, index = self._student_next
        reply = kind == "reply"
        student_info: dict[str, Any] = {
            "phase": phase,
            "turn": turn,
            "max_turns": max_turns,
            "task": self.task,
            "messages": list(self._student_messages),
            "tutor_act": self._last_tutor_act if reply else None,
            "tutor_utterance": self._last_tutor_text if reply else "",
            "privileged_student_state": self._student_state,
        }
        if kind == "pretest":
            student_info.update(item=self._pre_items[index], item_index=index, n_items=len(self._pre_items))
        elif kind == "posttest" and self.phase == "posttest":
            item, post_kind = self._post_items[index]
            student_info.update(item=item, item_index=index, n_items=len(self._post_items), posttest_kind=post_kind,
                                test_prompts=self._posttest_prompts())
        if self.outcome is not None:
            student_info["outcome"] = self.outcome.to_dict()
        # PettingZoo types an agent's info as a plain dict; the tutor's is the TutorInfo TypedDict
        self.infos = {"tutor": cast(dict[str, Any], tutor), "student": student_info}

    # ------------------------------------------------------------------ rendering
    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        lines = [f"[{self.phase}] task={self.task.id if self.task else '-'} tutor turns={self.tutor_turns}"]
        for t in self.transcript[-6:]:
            label = t["teacher_intent"] if t["speaker"] == "tutor" else t["student_cognition_state"]
            lines.append(f"{t['speaker']:>7} ({label}): {t['utterance']}")
        out = "\n".join(lines)
        if self.render_mode == "human":
            print(out)
            return None
        return out

    def close(self) -> None:
        pass


def _invalid_act(task: Task) -> TutorAct:
    return TutorAct(
        intent="check_understanding",
        strategy=None,
        guidance_level="L1",
        disciplines=(task.disciplines[0],),
        target_kc=None,
        invalid=True,
    )


def _snapshot(privileged: dict[str, Any]) -> StudentSnapshot:
    """The student's reported hidden state as the env holds it (the student's own dict, typed, not copied)."""
    return cast(StudentSnapshot, privileged)  # a StudentTurn's privileged dict has the snapshot's keys


def _answer_text(item: Item) -> str:
    return item.options[ord(item.answer) - ord("A")] if item.options is not None else item.answer


def _score(results: list[dict]) -> float | None:
    return (sum(r["correct"] for r in results) / len(results)) if results else None

