"""A fixed numeric view of what the tutor observes, for classic RL on dialogue acts (``action_mode="act"``).

The tutor's observation is a ``Dict`` of text and a short feature vector, and its ``info`` carries the task's
public view, the pre-test it watched and the dialogue's messages. :class:`ActFeatures` turns that into one
``float32`` vector in ``[-1, 1]`` holding what the built-in ``socratic`` tutor conditions on, so a learned
policy can condition on it too:

- the env's own tutor features (phase, turn, pre-test accuracy per knowledge component (KC), the last student
  turn's annotated cognition state, whether an answer was stated or revealed);
- turns left (one-hot), the student state before the last one, task set and number of KCs;
- per KC slot: pre-test accuracy and item count, a misconception *suspected* from a wrong pre-test answer or
  *shown* in the student's last turn (its answer shares words with a misconception's wrong steps or belief),
  what the task offers for it (misconceptions, cross-discipline links, prerequisites and their pre-test
  accuracy), and the tutor's own history with it: turns spent, the student's successes and failures right
  after those turns, the highest guidance level answered well, counterexamples, worked examples, transfers;
- the tutor's last act, one-hot per dimension of the act vector: ``teacher_intent``, ``teaching_strategy``,
  ``teacher_guidance_level`` (SID's names, as in ``info["last_act"]`` and the transcript), KC slot, end flag.

Only the observation, these public ``info`` fields (:data:`INFO_FIELDS`) and the tutor's own chosen actions
are read -- never the student's hidden state. The same class serves training (:class:`ActFeatureWrapper`
around ``tutorzoo/Tutor-v0``) and playing (a tutor in text mode that records the acts it speaks), so both
compute the vector the same way. :func:`act_from_vector` maps a ``MultiDiscrete`` act to the
:class:`~tutorzoo.envs.acts.TutorAct` the env's act mode makes of it.

Example::

    import gymnasium as gym, envs
    from tutorzoo.envs.act_features import ActFeatureWrapper
    env = ActFeatureWrapper(gym.make("tutorzoo/Tutor-v0", persona="all_round_partly_wrong", action_mode="act"))
    vec, info = env.reset(seed=0)          # vec.shape == (ActFeatures.size,)
    vec, reward, done, truncated, info = env.step(env.action_space.sample())
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tutorzoo.envs import spaces as tzs
from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.labels import COGNITION_STATES, GUIDANCE_LEVELS, INTENTS, STRATEGIES

# The only info keys the features read (tests check that nothing else, e.g. a student's state, matters).
INFO_FIELDS: tuple[str, ...] = ("task", "pretest", "messages", "turn", "max_turns")

TASK_SETS: tuple[str, ...] = ("math", "stem")
MAX_TURNS_LEFT = 8  # turns left one-hot: 0..7 and "8 or more"
_SUCCESS = frozenset({"clear_understanding", "higher_order"})
_FAILURE = frozenset({"incorrect", "expression_difficulty", "vague_understanding"})
_COUNTER = frozenset({"scenario_question", "analogy", "corrective_feedback"})
_WORDS = re.compile(r"[a-z0-9/.\-]+")

# Per-KC block, in order.
KC_FIELDS: tuple[str, ...] = (
    "exists", "pretest_accuracy", "pretest_items", "suspected_misconception", "shown_misconception",
    "has_misconception", "has_links", "has_prerequisites", "prerequisite_accuracy", "turns_spent", "successes",
    "failures", "best_level", "counterexamples", "worked_examples", "transferred", "last_target",
)

_GLOBAL = (
    tzs.TUTOR_FEATURES                 # the env's features
    + MAX_TURNS_LEFT + 1               # turns left one-hot
    + len(COGNITION_STATES) + 1        # the student state before the last one (or none)
    + len(TASK_SETS) + 1 + 1           # task set one-hot (+ other), number of KCs
    + 1                                # a misconception shown in the last student turn (any KC)
    + 1                                # an act has been chosen this episode
    + len(INTENTS) + len(STRATEGIES) + 1 + len(GUIDANCE_LEVELS) + tzs.MAX_KCS + 1 + 2  # last act one-hot
)


def signature(misconception: dict) -> frozenset[str]:
    """A misconception's signature words: those of its wrong steps and belief with 4+ letters or a digit."""
    sig: set[str] = set()
    for s in (*misconception.get("wrong_steps", ()), misconception.get("belief", "")):
        sig |= {w for w in _WORDS.findall(str(s).lower()) if len(w) > 3 or any(c.isdigit() for c in w)}
    return frozenset(sig)


def signature_overlap(text: str, misconception: dict) -> int:
    """How many of a misconception's signature words ``text`` uses."""
    return len(set(_WORDS.findall(text.lower())) & signature(misconception))


_NVEC = np.array(tzs.ACT_NVEC)
_SHAPE = (len(tzs.ACT_NVEC),)


def act_from_vector(action: Sequence[int] | np.ndarray, task: Any) -> TutorAct:
    """The :class:`TutorAct` the env's act mode makes of a ``MultiDiscrete`` vector on ``task`` (a
    :class:`~tutorzoo.envs.tasks.base.Task`): teacher_intent, teaching_strategy (last index: none),
    teacher_guidance_level, KC slot (past the task's KCs: no target), end flag; a counterexample-type strategy
    on a KC addresses its first misconception. Raises ``ValueError`` for a vector outside the act space."""
    return act_from_ints(act_ints(action), task)


def act_ints(action: Sequence[int] | np.ndarray) -> list[int]:
    """The five integers of an act vector; ``ValueError`` (or numpy's ``TypeError``) for one outside the space."""
    if type(action) is np.ndarray and action.dtype == np.int64 and action.shape == _SHAPE:  # the space's sample
        ints = action.tolist()
        if all(0 <= v < n for v, n in zip(ints, tzs.ACT_NVEC, strict=True)):
            return ints
    vec = np.asarray(action, dtype=np.int64).reshape(-1)
    if vec.shape != (len(tzs.ACT_NVEC),) or not np.all((vec >= 0) & (vec < _NVEC)):
        raise ValueError(f"an act is {len(tzs.ACT_NVEC)} integers within {tzs.ACT_NVEC}, got {vec.tolist()}")
    return vec.tolist()


def act_from_ints(ints: list[int], task: Any) -> TutorAct:
    """:func:`act_from_vector` of the integers :func:`act_ints` checked."""
    intent_i, strategy_i, level_i, kc_i, end_i = ints
    kcs = task.knowledge_components
    kc = kcs[kc_i] if kc_i < len(kcs) else None
    intent = INTENTS[intent_i]
    disciplines: tuple[str, ...] = (kc.discipline,) if kc is not None else (task.disciplines[0],)
    if intent == "trigger_transfer" and kc is not None and kc.links:
        disciplines = tuple(dict.fromkeys(disciplines + (kc.links[0].discipline,)))
    strategy = None if strategy_i == len(STRATEGIES) else STRATEGIES[strategy_i]
    mis = None
    if kc is not None and strategy in ("scenario_question", "analogy", "corrective_feedback"):
        mis = next((m.id for m in task.misconceptions if m.kc == kc.id), None)
    return TutorAct(
        intent=intent,
        strategy=strategy,
        guidance_level=GUIDANCE_LEVELS[level_i],
        disciplines=disciplines,
        discipline_transfer=len(disciplines) >= 2,
        target_kc=kc.id if kc is not None else None,
        addresses_misconception=mis,
        is_question=intent in ("check_understanding", "guide_reasoning", "trigger_transfer"),
        ends_session=bool(end_i),
    )


class ActFeatures:
    """The per-episode feature tracker. Call :meth:`reset` at an episode's start, :meth:`observe` at each
    decision (and after the last step), :meth:`record` with each act chosen.

    Example::

        feats = ActFeatures()
        feats.reset()
        vec = feats.observe(observation, info)
        feats.record(action)            # the MultiDiscrete vector the policy chose
    """

    n_kc_fields = len(KC_FIELDS)
    size = _GLOBAL + tzs.MAX_KCS * len(KC_FIELDS)

    def __init__(self) -> None:
        self.reset()

    @classmethod
    def space(cls) -> spaces.Box:
        return spaces.Box(low=-1.0, high=1.0, shape=(cls.size,), dtype=np.float32)

    def reset(self) -> None:
        k = tzs.MAX_KCS
        self._task_id: str | None = None
        self._kc_ids: list[str] = []
        self._static = np.zeros((k, len(KC_FIELDS)), dtype=np.float32)
        self._suspect = np.zeros(k, dtype=np.float32)
        self._spent = np.zeros(k, dtype=np.float32)
        self._succ = np.zeros(k, dtype=np.float32)
        self._fail = np.zeros(k, dtype=np.float32)
        self._best = np.zeros(k, dtype=np.float32)
        self._counter = np.zeros(k, dtype=np.float32)
        self._worked = np.zeros(k, dtype=np.float32)
        self._transfer = np.zeros(k, dtype=np.float32)
        self._last_action: np.ndarray | None = None
        self._pending: tuple[int, int] | None = None  # (KC slot, level) of the act awaiting the student's reply
        self._states: list[str | None] = [None, None]  # the last two student cognition states seen
        self._seen_turns = -1
        self._signatures: list[tuple[int, frozenset[str]]] = []  # (KC slot, signature) per misconception

    # ------------------------------------------------------------------ updates
    def record(self, action: Sequence[int] | np.ndarray) -> None:
        """Note the act the tutor chose (a ``MultiDiscrete`` vector)."""
        vec = np.asarray(action, dtype=np.int64).reshape(-1)
        self._last_action = vec.copy()
        intent, strategy, level, kc = INTENTS[int(vec[0])], int(vec[1]), int(vec[2]), int(vec[3])
        if kc >= len(self._kc_ids):
            self._pending = None
            return
        self._spent[kc] += 1
        if strategy < len(STRATEGIES) and STRATEGIES[strategy] in _COUNTER:
            self._counter[kc] += 1
        if intent == "introduce_concept":
            self._worked[kc] += 1
        if intent == "trigger_transfer":
            self._transfer[kc] = 1.0
        self._pending = (kc, level)

    def observe(self, observation: dict, info: dict) -> np.ndarray:
        """The feature vector of this decision point (also updates the tutor's history with the student's
        reply to the last recorded act)."""
        task = info.get("task")
        if task is not None and task.get("id") != self._task_id:
            self._start(task, info)
        env_f = np.asarray(observation["features"], dtype=np.float32)
        decoded = tzs.decode_tutor_features(env_f)
        state = decoded["last_cognition_state"]
        turn = int(info.get("turn", 0))
        if turn != self._seen_turns:  # a new student reply came in since the last decision
            if self._pending is not None and state is not None:
                kc, level = self._pending
                if state in _SUCCESS:
                    self._succ[kc] += 1
                    self._best[kc] = max(self._best[kc], (level + 1) / 3.0)
                elif state in _FAILURE:
                    self._fail[kc] += 1
            if state is not None and turn > self._seen_turns:
                self._states = [self._states[1], state]
            self._pending = None
            self._seen_turns = turn

        shown = np.zeros(tzs.MAX_KCS, dtype=np.float32)
        if state is not None and self._signatures:
            words = set(_WORDS.findall(_last_student_text(info).lower()))
            for slot, sig in self._signatures:
                if len(words & sig) >= 2:
                    shown[slot] = 1.0
        return self._vector(env_f, info, shown)

    # ------------------------------------------------------------------ internals
    def _start(self, task: dict, info: dict) -> None:
        self.reset()
        self._task_id = task.get("id")
        self._kc_ids = [k["id"] for k in task.get("knowledge_components", [])][: tzs.MAX_KCS]
        self._task_set = task.get("task_set")
        acc = {k: [] for k in self._kc_ids}
        for r in info.get("pretest", []):
            for kc_id in r.get("kcs", []):
                if kc_id in acc:
                    acc[kc_id].append(bool(r.get("correct")))
                    if not r.get("correct"):
                        for m in task.get("misconceptions", []):
                            if m.get("kc") == kc_id and signature_overlap(str(r.get("response", "")), m) >= 2:
                                self._suspect[self._kc_ids.index(kc_id)] = 1.0
        est = {k: (sum(v) / len(v) if v else 0.5) for k, v in acc.items()}
        mis_kcs = {m.get("kc") for m in task.get("misconceptions", [])}
        self._signatures = [(self._kc_ids.index(m.get("kc")), signature(m)) for m in task.get("misconceptions", [])
                            if m.get("kc") in self._kc_ids]
        f = KC_FIELDS.index
        for i, kc in enumerate(task.get("knowledge_components", [])[: tzs.MAX_KCS]):
            row = self._static[i]
            row[f("exists")] = 1.0
            row[f("pretest_accuracy")] = est[kc["id"]]
            row[f("pretest_items")] = min(1.0, len(acc[kc["id"]]) / 4.0)
            row[f("has_misconception")] = float(kc["id"] in mis_kcs)
            row[f("has_links")] = float(bool(kc.get("links")))
            prereqs = [p for p in kc.get("prerequisites", []) if p in est]
            row[f("has_prerequisites")] = float(bool(prereqs))
            row[f("prerequisite_accuracy")] = min((est[p] for p in prereqs), default=1.0)

    def _vector(self, env_f: np.ndarray, info: dict, shown: np.ndarray) -> np.ndarray:
        out = np.zeros(self.size, dtype=np.float32)
        i = 0

        def put(values: Any) -> None:
            nonlocal i
            values = np.asarray(values, dtype=np.float32).reshape(-1)
            out[i : i + len(values)] = values
            i += len(values)

        def one_hot(index: int | None, n: int) -> np.ndarray:
            v = np.zeros(n, dtype=np.float32)
            if index is not None:
                v[index] = 1.0
            return v

        put(np.clip(env_f, -1.0, 1.0))
        left = max(0, int(info.get("max_turns", 0)) - int(info.get("turn", 0)))
        put(one_hot(min(left, MAX_TURNS_LEFT), MAX_TURNS_LEFT + 1))
        prev = self._states[0]
        put(one_hot(COGNITION_STATES.index(prev) if prev is not None else len(COGNITION_STATES),
                    len(COGNITION_STATES) + 1))
        ts = self._task_set
        put(one_hot(TASK_SETS.index(ts) if ts in TASK_SETS else len(TASK_SETS), len(TASK_SETS) + 1))
        put([len(self._kc_ids) / tzs.MAX_KCS])
        put([float(shown.any())])
        put([float(self._last_action is not None)])
        a = self._last_action
        put(one_hot(int(a[0]) if a is not None else None, len(INTENTS)))
        put(one_hot(int(a[1]) if a is not None else None, len(STRATEGIES) + 1))
        put(one_hot(int(a[2]) if a is not None else None, len(GUIDANCE_LEVELS)))
        put(one_hot(int(a[3]) if a is not None else None, tzs.MAX_KCS + 1))  # +1: never out of range
        put(one_hot(int(a[4]) if a is not None else None, 2))

        block = self._static.copy()
        f = KC_FIELDS.index
        block[:, f("suspected_misconception")] = self._suspect
        block[:, f("shown_misconception")] = shown
        block[:, f("turns_spent")] = np.minimum(1.0, self._spent / 4.0)
        block[:, f("successes")] = np.minimum(1.0, self._succ / 3.0)
        block[:, f("failures")] = np.minimum(1.0, self._fail / 3.0)
        block[:, f("best_level")] = self._best
        block[:, f("counterexamples")] = np.minimum(1.0, self._counter / 2.0)
        block[:, f("worked_examples")] = np.minimum(1.0, self._worked / 2.0)
        block[:, f("transferred")] = self._transfer
        if a is not None and int(a[3]) < len(self._kc_ids):
            block[int(a[3]), f("last_target")] = 1.0
        put(block)
        assert i == self.size
        return out


def _last_student_text(info: dict) -> str:
    for m in reversed(info.get("messages", [])):
        if m.get("role") == "user":
            return str(m.get("content", ""))
    return ""


class ActFeatureWrapper(gym.ObservationWrapper):
    """``tutorzoo/Tutor-v0`` (``action_mode="act"``) with :class:`ActFeatures` vectors as observations."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        if not isinstance(env.action_space, spaces.MultiDiscrete):
            raise ValueError("ActFeatureWrapper needs the act action mode: gym.make('tutorzoo/Tutor-v0', "
                             "action_mode='act', ...)")
        self.features = ActFeatures()
        self.observation_space = ActFeatures.space()
        self._info: dict = {}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.features.reset()
        self._info = info
        return self.observation(obs), info

    def step(self, action: Any):
        self.features.record(action)
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._info = info
        return self.observation(obs), reward, terminated, truncated, info

    def observation(self, observation: dict) -> np.ndarray:
        return self.features.observe(observation, {k: self._info[k] for k in INFO_FIELDS if k in self._info})
