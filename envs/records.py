"""The records TutorZoo writes and reads: a transcript turn, an episode, the tutor's ``info`` (docs/records.md).

Each is a :class:`~typing.TypedDict` built by one constructor in this module (:func:`tutor_turn` /
:func:`student_turn`, :func:`env_episode_record`, :func:`tutor_info`); the rollout engine
(``tutorzoo.envs.engine.episode_record``) adds the run's fields to the env's record, and its failure entry is
``tutorzoo.envs.protocols.FailureRecord``. A TypedDict is a plain ``dict`` at run time, so its JSON form is the dict
itself: ``episodes.jsonl`` holds ``json.dumps(record, sort_keys=True)`` and ``json.loads`` gives it back.

**One set of field names.** The SID fields (docs/spec.md §1) are spelled as SID spells them wherever they are
a dict key: a transcript turn, ``info["last_act"]`` (:meth:`tutorzoo.envs.acts.TutorAct.to_dict`) and the readers.
:data:`ACT_FIELD_KEYS` (kept beside :class:`~tutorzoo.envs.acts.TutorAct`) maps an act's attribute to its key; it is the
only place the two spellings meet. :data:`LEGACY_TURN_KEYS` are the short spellings ``info["last_act"]`` used
before (``intent``, ``strategy``, ``guidance_level``, ``disciplines``); the turn readers accept them.

**Versioned.** Every episode record carries ``schema_version`` (:data:`SCHEMA_VERSION`). Records written
before the field existed have the same layout as version 1 and read as version 1 (:func:`schema_version`).

Example::

    from tutorzoo.envs import tutoring_v0
    from tutorzoo.envs.records import learning_gain, schema_version
    env = tutoring_v0.env(task_set="math")
    env.reset(seed=0)
    record = env.unwrapped.episode_record()
    schema_version(record), learning_gain(record)   # (1, None): nothing played yet
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from tutorzoo.envs.acts import ACT_FIELD_KEYS, StudentTurn, TutorAct
from tutorzoo.envs.protocols import FailureRecord

SCHEMA_VERSION = 1
"""The episode record layout. Bump it (and document the change in docs/records.md) when a field is renamed,
removed or changes meaning; readers then branch on :func:`schema_version`."""

# A turn key spelled as the attribute (info["last_act"] before schema 1) -> its one name.
LEGACY_TURN_KEYS: dict[str, str] = dict(ACT_FIELD_KEYS)


class TurnRecord(TypedDict):
    """One transcript turn: SID's nine fields (``tutorzoo.envs.labels.TURN_FIELDS``) then the env's five.

    A field of the other speaker is ``None``; ``discipline`` is a list.
    """

    speaker: Literal["tutor", "student"]
    utterance: str
    teacher_intent: str | None
    teaching_strategy: str | None
    discipline: list[str]
    discipline_transfer: bool
    student_cognition_state: str | None
    teacher_guidance_level: str | None
    cognitive_level: str | None
    turn: int  # tutor turns taken so far (a tutor turn carries its own number)
    target_kc: str | None
    reveals_answer: bool  # tutor: the turn states an answer (a leak)
    states_answer: bool  # student: the turn states the task's answer
    invalid: bool


def tutor_turn(act: TutorAct, utterance: str, turn: int) -> TurnRecord:
    """The transcript record of a tutor turn whose annotation (or chosen act) is ``act``."""
    return _turn("tutor", utterance, act.intent, act.strategy, list(act.disciplines), act.discipline_transfer,
                 None, act.guidance_level, None, turn, act.target_kc, act.reveals_answer, False, act.invalid)


def student_turn(student: StudentTurn, utterance: str, turn: int, states_answer: bool, invalid: bool) -> TurnRecord:
    """The transcript record of a student turn with its labels ``student`` and its (normalised) ``utterance``."""
    return _turn("student", utterance, None, None, list(student.disciplines), student.discipline_transfer,
                 student.cognition_state, None, student.cognitive_level, turn, None, False, states_answer, invalid)


def _turn(speaker: Literal["tutor", "student"], utterance: str, intent: str | None, strategy: str | None,
          discipline: list[str], transfer: bool, cognition: str | None, guidance: str | None, bloom: str | None,
          turn: int, target_kc: str | None, reveals: bool, states: bool, invalid: bool) -> TurnRecord:
    # the one literal of a turn record, in the documented key order
    return {
        "speaker": speaker,
        "utterance": utterance,
        "teacher_intent": intent,
        "teaching_strategy": strategy,
        "discipline": discipline,
        "discipline_transfer": transfer,
        "student_cognition_state": cognition,
        "teacher_guidance_level": guidance,
        "cognitive_level": bloom,
        "turn": turn,
        "target_kc": target_kc,
        "reveals_answer": reveals,
        "states_answer": states,
        "invalid": invalid,
    }


def turn_from_json(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A turn as read from a file, with a legacy short key (``intent``, ...) renamed to its one name.

    The canonical key wins when both are present; everything else is kept as it is.
    """
    out = dict(raw)
    for old, new in LEGACY_TURN_KEYS.items():
        if old in out:
            value = out.pop(old)
            out.setdefault(new, value)
    return out


class TaskRef(TypedDict):
    id: str
    title: str
    disciplines: list[str]


class EnvEpisodeRecord(TypedDict):
    """The env's part of an episode record (:func:`env_episode_record`, ``TutoringEnv.episode_record()``)."""

    schema_version: int
    task: TaskRef
    config: dict[str, Any]
    transcript: list[TurnRecord]
    pretest: list[dict[str, Any]]
    posttest: list[dict[str, Any]]
    pretest_score: float | None
    posttest_score: float | None
    posttest_same_score: float | None
    learning_gain: float | None
    learning_gain_same: float | None
    reward_components: dict[str, float]
    reward: float
    n_tutor_turns: int
    ended_by: str
    invalid_turns: dict[str, int]
    clipped_turns: dict[str, int]
    privileged_student_state: dict[str, Any]


class EpisodeRecord(EnvEpisodeRecord, total=False):
    """One line of ``episodes.jsonl`` (docs/records.md has every field): the env's part, to which the rollout
    engine adds ``spec``, ``tutor``, ``student`` and ``failures``, a suite run its unit ``key`` and the judges'
    ``judgments`` and, with replicates, ``replicate`` and ``run_seed``."""

    spec: dict[str, Any]
    tutor: str
    student: str
    failures: list[FailureRecord]
    key: str
    judgments: list[dict[str, Any]]
    replicate: int
    run_seed: int


ENDED_BY: tuple[str, ...] = ("max_turns", "end_marker", "leak", "truncated", "failure", "unfinished")


def env_episode_record(*, task: TaskRef, config: dict[str, Any], transcript: list[TurnRecord],
                   pretest: list[dict[str, Any]], posttest: list[dict[str, Any]], outcome: Mapping[str, Any],
                   n_tutor_turns: int, ended_by: str, invalid_turns: dict[str, int], clipped_turns: dict[str, int],
                   privileged_student_state: dict[str, Any]) -> EnvEpisodeRecord:
    """The env's part of an episode record. ``outcome`` holds the scores, gains and reward (see
    :class:`EpisodeRecord`); the env passes what it knows so far, so an unfinished episode has ``None`` gains."""
    return {
        "schema_version": SCHEMA_VERSION,
        "task": task,
        "config": config,
        "transcript": transcript,
        "pretest": pretest,
        "posttest": posttest,
        "pretest_score": outcome["pretest_score"],
        "posttest_score": outcome["posttest_score"],
        "posttest_same_score": outcome["posttest_same_score"],
        "learning_gain": outcome["learning_gain"],
        "learning_gain_same": outcome["learning_gain_same"],
        "reward_components": outcome["reward_components"],
        "reward": outcome["reward"],
        "n_tutor_turns": n_tutor_turns,
        "ended_by": ended_by,
        "invalid_turns": invalid_turns,
        "clipped_turns": clipped_turns,
        "privileged_student_state": privileged_student_state,
    }


class _TutorInfo(TypedDict):

    phase: str
    turn: int
    max_turns: int
    observe_only: bool
    messages: list[dict[str, str]]  # the chat from the tutor's side, system prompt first
    task: dict[str, Any]  # Task.public_view()
    pretest: list[dict[str, Any]]  # what the tutor may see of each answered pre-test item
    last_act: dict[str, Any] | None  # TutorAct.to_dict() of its last turn: SID's key names
    reward_components: dict[str, float]  # the components credited at the last step


class TutorInfo(_TutorInfo, total=False):
    """The tutor's ``info`` at each step (docs/design.md, "Public contract"); ``outcome`` once the episode ended."""

    outcome: dict[str, Any]


def tutor_info(*, phase: str, turn: int, max_turns: int, observe_only: bool, messages: list[dict[str, str]],
               task: dict[str, Any], pretest: list[dict[str, Any]], last_act: dict[str, Any] | None,
               reward_components: dict[str, float], outcome: dict[str, Any] | None = None) -> TutorInfo:
    """The tutor's ``info``; ``outcome`` is set only once the episode has ended."""
    info: TutorInfo = {
        "phase": phase,
        "turn": turn,
        "max_turns": max_turns,
        "observe_only": observe_only,
        "messages": messages,
        "task": task,
        "pretest": pretest,
        "last_act": last_act,
        "reward_components": reward_components,
    }
    if outcome is not None:
        info["outcome"] = outcome
    return info


# --- typed accessors, for readers of records from files (which may predate a field) -----------------------


def schema_version(record: Mapping[str, Any]) -> int:
    """The record's schema version; a record written before the field existed is version 1."""
    value = record.get("schema_version", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _number(record: Mapping[str, Any], key: str) -> float | None:
    value = record.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def learning_gain(record: Mapping[str, Any]) -> float | None:
    """The isomorphic (headline) learning gain, or ``None`` where the protocol has none or it is not a number."""
    return _number(record, "learning_gain")


def learning_gain_same(record: Mapping[str, Any]) -> float | None:
    """The same-item learning gain (EducationQ's ALG), or ``None``."""
    return _number(record, "learning_gain_same")


def posttest_score(record: Mapping[str, Any]) -> float | None:
    """The primary post-test's share of items right, or ``None``."""
    return _number(record, "posttest_score")


def reward_components(record: Mapping[str, Any]) -> dict[str, float]:
    """The reward components the env credited (empty for a record without them)."""
    return dict(record.get("reward_components") or {})


def failed(record: Mapping[str, Any]) -> bool:
    """Whether a seat failed during the episode (its numbers are then not a tutor's result)."""
    return record.get("ended_by") == "failure"


def transcript(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The record's turns, each with legacy short keys renamed (:func:`turn_from_json`)."""
    return [turn_from_json(t) for t in record.get("transcript") or []]


def tutor_turns(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tutor's turns of :func:`transcript`."""
    return [t for t in transcript(record) if t.get("speaker") == "tutor"]


__all__ = [
    "ACT_FIELD_KEYS", "ENDED_BY", "LEGACY_TURN_KEYS", "SCHEMA_VERSION", "EnvEpisodeRecord", "EpisodeRecord",
    "TaskRef", "TurnRecord", "TutorInfo", "env_episode_record", "failed", "learning_gain", "learning_gain_same",
    "posttest_score", "reward_components", "schema_version", "student_turn", "transcript", "turn_from_json",
    "tutor_info", "tutor_turn", "tutor_turns",
]
