"""The records TutorZoo writes and reads: a transcript turn, an episode, the tutor's ``info`` (docs/records.md).

The episode is one typed object, :class:`EpisodeRecord` (a frozen dataclass with a docstring per field), built
by the env (``TutoringEnv.episode_record()``) and given the run's fields there by the rollout engine
(``tutorzoo.envs.engine.episode_record``); its numbers are an :class:`Outcome`. A transcript turn and the tutor's
``info`` are :class:`~typing.TypedDict` s, each built by one constructor in this module (:func:`tutor_turn` /
:func:`student_turn`, :func:`tutor_info`); a failure entry is ``tutorzoo.envs.protocols.FailureRecord``.
``episodes.jsonl`` holds ``json.dumps(record.to_json(), sort_keys=True)`` per episode and
:meth:`EpisodeRecord.from_json` reads one back.

**One set of field names.** The SID fields (docs/spec.md §1) are spelled as SID spells them wherever they are
a dict key: a transcript turn, ``info["last_act"]`` (:meth:`tutorzoo.envs.acts.TutorAct.to_dict`) and the readers.
:data:`ACT_FIELD_KEYS` (kept beside :class:`~tutorzoo.envs.acts.TutorAct`) maps an act's attribute to its key; it is the
only place the two spellings meet. :data:`LEGACY_TURN_KEYS` are the short spellings ``info["last_act"]`` used
before (``intent``, ``strategy``, ``guidance_level``, ``disciplines``); the turn readers accept them.

**Versioned.** Every episode record carries ``schema_version`` (:data:`SCHEMA_VERSION`). Records written
before the field existed have the same layout as version 1 and read as version 1 (:func:`schema_version`).

Example::

    from tutorzoo.envs import tutoring_v0
    from tutorzoo.envs.records import schema_version
    env = tutoring_v0.env(task_set="math")
    env.reset(seed=0)
    record = env.unwrapped.episode_record()
    record.learning_gain, schema_version(record.to_json())   # (None, 1): nothing played yet
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal, TypedDict, cast

from tutorzoo.envs.acts import ACT_FIELD_KEYS, StudentTurn, TutorAct
from tutorzoo.envs.errors import DatasetError
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


class StudentSnapshot(TypedDict, total=False):
    """A simulated student's hidden state after a turn (``tutorzoo.agents.student.model.snapshot``), as the env
    holds it for rewards and the record's ``privileged_student_state``; never shown to the tutor. Every key is
    optional: a student that reports no state gives an empty snapshot, a model-worded one adds
    ``utterance_source``."""

    mastery: dict[str, float]
    """Per knowledge component: the probability the student knows it (BKT), rounded to 6 places."""
    misconceptions: dict[str, str]
    """Per misconception the student holds: ``active``, ``suppressed`` or ``repaired``."""
    bloom: str
    """The student's Bloom level."""
    engagement: float
    """Engagement in [0, 1]."""
    confidence: float
    """Confidence in [0, 1]."""
    anxiety: float
    """Anxiety in [0, 1]."""
    memorised: list[str]
    """Answers the student has been told and can repeat."""
    response: str
    """The kind of reply the student chose (``correct``, ``paraphrase``, ...)."""
    misconception_shown: str | None
    """The misconception the reply showed, if any."""
    utterance_source: str
    """An LLM-worded student: whether the turn's text is the model's (``llm``) or the template's."""


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
    """The task an episode played: its id, title and disciplines."""

    id: str
    title: str
    disciplines: list[str]


LEARNING_GAIN = "learning_gain"
"""The headline metric's name: the :attr:`EpisodeRecord.learning_gain` field, the reward component
:class:`~tutorzoo.envs.reward_api.LearningGain` credits and the episode metric of the same name."""

ENDED_BY: tuple[str, ...] = ("max_turns", "end_marker", "leak", "truncated", "failure", "unfinished")


@dataclass(frozen=True, slots=True)
class Outcome:
    """The numbers of an episode: test scores, gains and the reward credited (``None`` where not known)."""

    pretest_score: float | None = None
    """Share of pre-test items right; ``None`` before any pre-test answer."""
    posttest_score: float | None = None
    """Share of the primary post-test's items right (isomorphic, or same-item under ``posttest: same``)."""
    posttest_same_score: float | None = None
    """Share of same-item post-test items right; ``None`` without that post-test."""
    learning_gain: float | None = None
    """``posttest_score - pretest_score``, in [-1, 1]; ``None`` until the post-test is scored."""
    learning_gain_same: float | None = None
    """The same-item gain (EducationQ's ALG); ``None`` without a same-item post-test."""
    reward_components: dict[str, float] = field(default_factory=dict)
    """Every reward term the env's reward model credited, summed over the episode (weight-0 terms included)."""
    reward: float = 0.0
    """The weighted reward credited to the tutor."""

    def to_dict(self) -> OutcomeInfo:
        """The outcome as the tutor's and student's ``info["outcome"]`` give it (a fresh dict)."""
        return cast(OutcomeInfo, {name: (dict(v) if isinstance(v := getattr(self, name), dict) else v)
                                  for name in _OUTCOME_FIELDS})


_OUTCOME_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Outcome))

# the fields a played episode's record gets from its run (engine, suite, replicates): absent from the JSON form
# while unset, as a record straight from the env has none of them
_RUN_FIELDS = frozenset({"spec", "tutor", "student", "failures", "key", "judgments", "replicate", "run_seed"})


@dataclass(frozen=True, eq=False, slots=True)
class EpisodeRecord(Mapping[str, Any]):
    """One episode: one line of ``episodes.jsonl`` (docs/records.md has every field).

    The env builds it (``TutoringEnv.episode_record()``, the one constructor call in the tree), the rollout engine
    passes it the run's ``spec``, ``tutor``, ``student`` and ``failures``, a suite run adds its unit ``key`` and the
    judges' ``judgments`` with :func:`dataclasses.replace`. Read it by attribute; :meth:`to_json` is the dict a file
    holds (``json.dumps(record.to_json(), sort_keys=True)``) and :meth:`from_json` reads one back. As a read-only
    :class:`~collections.abc.Mapping` it gives that JSON form's keys, so a reader written against file records
    (``record.get("ended_by")``) reads a live record alike, and ``record == json.loads(line)`` compares the two.

    Example::

        record = env.unwrapped.episode_record()
        record.learning_gain, record.ended_by, record.to_json()["schema_version"]
    """

    task: TaskRef
    """``id``, ``title`` and ``disciplines`` of the task."""
    config: dict[str, Any]
    """The env's full configuration (:class:`~tutorzoo.envs.config.EnvConfig` without ``render_mode``)."""
    transcript: list[TurnRecord]
    """The dialogue's turns, in order."""
    pretest: list[dict[str, Any]]
    """One result per pre-test item: ``item_id``, ``kcs``, ``subject``, ``response``, ``extracted``, ``valid``,
    ``correct``."""
    posttest: list[dict[str, Any]]
    """One result per post-test item, as ``pretest`` with ``kind``, ``parallel_of`` and (after a leak) ``leaked``."""
    pretest_score: float | None
    """Share of pre-test items right."""
    posttest_score: float | None
    """Share of the primary post-test's items right; ``None`` when the episode did not finish."""
    posttest_same_score: float | None
    """Share of same-item post-test items right; ``None`` without that post-test."""
    learning_gain: float | None
    """``posttest_score - pretest_score`` on the isomorphic post-test; ``None`` when the episode did not finish."""
    learning_gain_same: float | None
    """The same-item gain (EducationQ's ALG); ``None`` without a same-item post-test."""
    reward_components: dict[str, float]
    """Every reward term the env's reward model credited, summed over the episode (weight-0 terms included)."""
    reward: float
    """The weighted reward credited to the tutor."""
    n_tutor_turns: int
    """Tutor turns taken."""
    ended_by: str
    """One of :data:`ENDED_BY`."""
    invalid_turns: dict[str, int]
    """Per speaker (``tutor``, ``student``): turns that were not language or not a valid action."""
    clipped_turns: dict[str, int]
    """Per speaker: turns cut to the length limit."""
    privileged_student_state: StudentSnapshot
    """The simulated student's hidden state at the end (analysis only; never shown to the tutor)."""
    schema_version: int = SCHEMA_VERSION
    """The layout version (:data:`SCHEMA_VERSION`)."""
    spec: dict[str, Any] | None = None
    """The :class:`~tutorzoo.envs.config.EpisodeSpec` as a dict; replaying it gives the same record."""
    tutor: str | None = None
    """The tutor's display name as run."""
    student: str | None = None
    """The student's name (``simulated:<persona>``)."""
    failures: list[FailureRecord] | None = None
    """A seat's exceptions; with one, ``ended_by`` is ``failure``."""
    key: str | None = None
    """The unit's key in a suite run (``EpisodeSpec.key()``), what ``--resume`` matches on."""
    judgments: list[dict[str, Any]] | None = None
    """The LLM judges' verdicts on the episode (empty without a judge)."""
    replicate: int | None = None
    """With ``eval --replicates K``: which replicate (0-based)."""
    run_seed: int | None = None
    """With ``eval --seed`` / ``--replicates``: the run seed the episode's seed came from."""

    @property
    def failed(self) -> bool:
        """Whether a seat failed during the episode (its numbers are then not a tutor's result)."""
        return self.ended_by == "failure"

    @property
    def outcome(self) -> Outcome:
        """The record's scores, gains and reward."""
        return Outcome(**{name: getattr(self, name) for name in _OUTCOME_FIELDS})

    def to_json(self) -> dict[str, Any]:
        """The record as ``episodes.jsonl`` holds it (unset run fields left out); shares the record's lists."""
        out: dict[str, Any] = {}
        for name in _RECORD_FIELDS:
            value = getattr(self, name)
            if value is not None or name not in _RUN_FIELDS:
                out[name] = value
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], where: str = "record") -> EpisodeRecord:
        """A record read from a file (or any dict in the JSON form), legacy turn keys renamed.

        Raises :class:`~tutorzoo.envs.errors.DatasetError` naming ``where`` and the fix when a field is missing or
        unknown, or the record is newer than this install reads.
        """
        if isinstance(raw, EpisodeRecord):
            return raw
        if not isinstance(raw, Mapping):
            raise DatasetError(f"{where}: expected an episode record (a JSON object), got {type(raw).__name__}")
        version = schema_version(raw)
        if version > SCHEMA_VERSION:
            raise DatasetError(f"{where}: schema_version {version} is newer than this TutorZoo reads "
                               f"({SCHEMA_VERSION}); upgrade tutorzoo to read it")
        unknown = sorted(set(raw) - set(_RECORD_FIELDS))
        if unknown:
            raise DatasetError(f"{where}: unknown episode record fields {unknown}; docs/records.md lists the fields")
        missing = [f.name for f in fields(cls) if f.name not in raw and f.default is MISSING]
        if missing:
            raise DatasetError(f"{where}: the episode record lacks {missing}; an env's episode_record() has them all")
        data = dict(raw)
        data["schema_version"] = version
        data["transcript"] = [turn_from_json(t) for t in raw["transcript"]]
        return cls(**data)

    # --- the read-only Mapping of the JSON form --------------------------------------------------------------
    def __getitem__(self, name: str) -> Any:
        if name in _FIELD_SET:
            value = getattr(self, name)
            if value is not None or name not in _RUN_FIELDS:
                return value
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in _FIELD_SET and (
            name not in _RUN_FIELDS or getattr(self, name) is not None)


def json_form(record: Mapping[str, Any]) -> dict[str, Any]:
    """The dict a file holds for ``record``: :meth:`EpisodeRecord.to_json`, or another record kind's dict itself."""
    return record.to_json() if isinstance(record, EpisodeRecord) else dict(record)


# the JSON form's key order: as the env has always written a record, then the run's fields
_RECORD_FIELDS: tuple[str, ...] = (
    "schema_version", "task", "config", "transcript", "pretest", "posttest", *_OUTCOME_FIELDS[:5],
    "reward_components", "reward", "n_tutor_turns", "ended_by", "invalid_turns", "clipped_turns",
    "privileged_student_state", "spec", "tutor", "student", "failures", "key", "judgments", "replicate", "run_seed",
)
_FIELD_SET = frozenset(_RECORD_FIELDS)
assert _FIELD_SET == {f.name for f in fields(EpisodeRecord)}, "every EpisodeRecord field has its place in the JSON form"


class OutcomeInfo(TypedDict):
    """``info["outcome"]`` once the episode has ended: :class:`Outcome` as a dict (:meth:`Outcome.to_dict`)."""

    pretest_score: float | None
    posttest_score: float | None
    posttest_same_score: float | None
    learning_gain: float | None
    learning_gain_same: float | None
    reward_components: dict[str, float]
    reward: float


class _TutorInfo(TypedDict):

    phase: str
    """``pretest``, ``dialogue``, ``posttest`` or ``done``."""
    turn: int
    """Tutor turns taken so far."""
    max_turns: int
    """The dialogue's turn budget."""
    observe_only: bool
    """True while the tutor only watches (the tests, the end): its action is ignored; a driver passes ``""``."""
    messages: list[dict[str, str]]
    """The chat from the tutor's side: the system prompt first, the student's turns as ``user``."""
    task: dict[str, Any]
    """What the tutor may know of the task: ``Task.public_view()`` (``id``, ``statement``, ``solution``,
    ``answer``, ``disciplines``, ``knowledge_components``)."""
    pretest: list[dict[str, Any]]
    """What the tutor may see of each answered pre-test item: ``item_id``, ``kcs``, ``question``, ``answer``,
    ``response``, ``correct``."""
    last_act: dict[str, Any] | None
    """``TutorAct.to_dict()`` of the tutor's last turn, keyed by SID's names (as a transcript turn); ``None``
    before its first."""
    reward_components: dict[str, float]
    """The reward components credited at the last step (empty when none was)."""


class TutorInfo(_TutorInfo, total=False):
    """The tutor's ``info`` at each step (docs/design.md, "Public contract"), built by :func:`tutor_info`."""

    outcome: OutcomeInfo
    """The episode's scores, gains and reward, once it has ended (absent before)."""


def tutor_info(*, phase: str, turn: int, max_turns: int, observe_only: bool, messages: list[dict[str, str]],
               task: dict[str, Any], pretest: list[dict[str, Any]], last_act: dict[str, Any] | None,
               reward_components: dict[str, float], outcome: OutcomeInfo | None = None) -> TutorInfo:
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
    return _number(record, LEARNING_GAIN)


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
    "ACT_FIELD_KEYS", "ENDED_BY", "LEARNING_GAIN", "LEGACY_TURN_KEYS", "SCHEMA_VERSION", "EpisodeRecord", "Outcome",
    "OutcomeInfo", "StudentSnapshot", "TaskRef", "TurnRecord", "TutorInfo", "failed", "json_form", "learning_gain",
    "learning_gain_same", "posttest_score", "reward_components", "schema_version", "student_turn", "transcript",
    "turn_from_json", "tutor_info", "tutor_turn", "tutor_turns",
]
