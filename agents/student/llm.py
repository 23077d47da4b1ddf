"""Students voiced by a chat model: the EducationQ-style LLM student and the hybrid (model-reworded) student.

- ``mode="llm"``: the model *is* the student. Its system prompt (``agents/prompts/student_llm.txt``) describes
  the persona's traits; it sees the env's student-side chat (test items with their options, the tutor's turns
  as ``user``, its own as ``assistant``), answers the tests itself (``... The answer is (X).``; the env grades
  the text) and talks in the dialogue. Its dialogue turns are plain text, so the env labels them neutrally;
  their SID labels come from an annotator pass afterwards (the rule-based :mod:`tutorzoo.envs.annotate_student` or the
  LLM annotator), as for any student whose mind we cannot read. A reply the backend fails to produce raises
  :class:`StudentBackendError`, which the rollout records as the episode's failure.
- ``mode="hybrid"``: a :class:`~tutorzoo.agents.student.SimulatedStudent` decides what the student knows, means and
  answers — its test answers and its dialogue :class:`~tutorzoo.envs.acts.StudentTurn` labels are kept as they are —
  and the model only rewords the dialogue utterance (``agents/prompts/student_hybrid.txt``: the plan's
  template text, the tutor's last words and the persona's voice). A rewording that fails, is empty, too long,
  or changes the numbers stated (or whether the task's answer is stated) is dropped for the template text and
  counted in ``fallbacks``; ``privileged["utterance_source"]`` says which text each turn used. So the ground
  truth labels survive whatever the model writes.

Each turn's sampling seed derives from ``(reset seed, turn)``, so a seeded episode replays exactly. In "llm"
mode the post-test items, which do not see one another's answers, are requested together at the first one
(``generate_many``: one batch on HF, concurrent requests on an endpoint), each with its own turn's seed.

Example::

    backend = make_backend("hf:models/tiny")
    student = LLMStudent(backend, persona="anxious", mode="hybrid")
    record = run_episode(spec, make_tutor("socratic"), student)
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Literal

import numpy as np

from tutorzoo.agents.backends.base import ChatBackend, GenerationConfig, GenerationResult, generate_many
from tutorzoo.agents.student.personas import Persona, PersonaDistribution, get_persona
from tutorzoo.agents.student.policy import SimulatedStudent
from tutorzoo.envs.acts import StudentTurn
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.grading import mentions_value, number_mentions

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
MODES = ("llm", "hybrid")
TEST_PHASES = ("pretest", "posttest")
_FIELDS = {"llm": {"grade", "statement", "traits"}, "hybrid": {"grade", "statement", "traits", "tutor", "plan"}}
_MAX_REWORD_RATIO = 4  # a rewording longer than this many times the plan (+200 chars) is rambling, not rewording


class StudentBackendError(RuntimeError):
    """The backend produced no reply for an LLM student's turn (recorded as the episode's failure)."""


def _load_prompt(mode: str) -> str:
    path = PROMPTS / f"student_{mode}.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {mode} student prompt ({exc}); restore the file") from None
    used = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    if used != _FIELDS[mode]:
        raise ConfigError(f"{path}: the prompt must use exactly the placeholders {sorted(_FIELDS[mode])}, "
                          f"got {sorted(used)}")
    return text


def _level(value: float, low: str, mid: str, high: str) -> str:
    return low if value < 0.34 else high if value > 0.66 else mid


def describe_persona(persona: Persona | None) -> str:
    """The persona's traits in plain words, for a prompt.

    Example::

        describe_persona(get_persona("anxious"))  # "... You get anxious easily ..."
    """
    if persona is None:
        return "An ordinary student with some prior knowledge of the topic, willing to learn."
    p = persona
    parts = [p.description.strip()] if p.description.strip() else []
    parts.append(_level(p.prior_knowledge, "You know little about this topic yet.",
                        "You know some of the basics of this topic.", "You already know this topic fairly well."))
    parts.append(_level(p.learning_speed / 3.0, "You learn slowly and need things repeated.",
                        "You learn at an ordinary pace.", "You pick new ideas up quickly."))
    parts.append(_level(p.engagement, "You are not very interested and your attention drifts.",
                        "You are moderately engaged.", "You are keen and engaged."))
    if p.anxiety > 0.55:
        parts.append("You get anxious easily and doubt your answers.")
    elif p.confidence > 0.65:
        parts.append("You are confident, sometimes more than you should be.")
    if p.help_seeking > 0.5:
        parts.append("You ask for hints when you are stuck.")
    if p.curiosity > 0.5:
        parts.append("You like to extend ideas and ask 'what if' questions.")
    if p.metacognition < 0.3:
        parts.append("You often do not notice when you are confused.")
    if p.misconception_rate > 0.6:
        parts.append("You hold some wrong beliefs about this topic and apply them with conviction.")
    if p.confusion is not None:
        parts.append(f"You tend to get confused about {p.confusion.replace('_', ' ')}.")
    if p.strategy_preference not in ("none", "rely_on_teacher"):
        parts.append(f"You learn best through {p.strategy_preference}.")
    elif p.strategy_preference == "rely_on_teacher":
        parts.append("You would rather the teacher told you how to do it.")
    parts.append(_level(p.verbosity, "You answer in very few words.", "You answer in a sentence or two.",
                        "You talk a lot and explain your thinking at length."))
    return " ".join(parts)


def _numbers(text: str) -> set[tuple[object, bool]]:
    return {(m.value, m.percent) for m in number_mentions(text)}


class LLMStudent:
    """A student policy over a :class:`ChatBackend` (``mode`` "llm" or "hybrid"; see the module docstring).

    ``persona`` is a name, a :class:`Persona`, a :class:`PersonaDistribution` (drawn per episode from the reset
    seed) or None (a generic student; "llm" mode only). ``config`` defaults to EducationQ's 260-token cap.
    """

    trainable = False
    calls_model = True  # the engine plays such students' episodes in lockstep worker threads

    def __init__(
        self,
        backend: ChatBackend,
        persona: Persona | PersonaDistribution | str | None = None,
        mode: Literal["llm", "hybrid"] = "llm",
        config: GenerationConfig | None = None,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"LLMStudent mode must be one of {MODES}, got {mode!r}")
        if mode == "hybrid" and persona is None:
            raise ConfigError("a hybrid LLMStudent needs a persona: its simulated student decides what it knows")
        self.backend = backend
        self.mode = mode
        self.config = config or GenerationConfig(max_new_tokens=260)
        self.source = get_persona(persona) if isinstance(persona, str) else persona
        self.prompt = _load_prompt(mode)
        self.simulated = SimulatedStudent(self.source) if mode == "hybrid" else None  # type: ignore[arg-type]
        self.persona: Persona | None = self.source if isinstance(self.source, Persona) else None
        self.rewrites = 0
        self.fallbacks = 0
        self.reset(None)

    @property
    def name(self) -> str:
        who = self.persona.name if self.persona else (self.source.name if self.source is not None else "generic")
        return f"{self.mode}:{who}:{self.backend.name}"

    def reset(self, seed: int | None = None) -> None:
        """Start a new episode; counters ``rewrites``/``fallbacks`` count this episode's hybrid turns."""
        self._seed = seed
        self._turn = 0
        self._stored: dict[int, tuple[tuple[list[dict], GenerationConfig], GenerationResult]] = {}
        self.rewrites = 0
        self.fallbacks = 0
        if self.simulated is not None:
            self.simulated.reset(seed)
        elif isinstance(self.source, PersonaDistribution):
            persona_seq = np.random.SeedSequence(seed).spawn(1)[0]
            self.persona = self.source.sample(np.random.default_rng(persona_seq))

    def _turn_config(self) -> GenerationConfig:
        self._turn += 1
        if self._seed is None:
            return self.config
        return replace(self.config, seed=int(np.random.SeedSequence([self._seed, self._turn]).generate_state(1)[0]))

    def _fill(self, info: dict, **extra: str) -> str:
        task = info.get("task")  # the full Task: the student side of the env passes it
        statement = getattr(task, "statement", "")
        persona = self.persona if self.simulated is None else self.simulated.persona
        grade = persona.grade if persona is not None else getattr(task, "grade", 6)
        return self.prompt.format(grade=grade, statement=statement, traits=describe_persona(persona), **extra)

    def act(self, observation: dict, info: dict) -> str | StudentTurn:
        """A test answer or dialogue turn: text in "llm" mode, the simulated student's labelled turn in "hybrid"."""
        if info.get("phase") == "done":
            return ""
        if self.simulated is not None:
            return self._hybrid(observation, info)
        messages = [{"role": "system", "content": self._fill(info)}]
        messages += [m for m in info.get("messages", [])[1:] if m.get("role") in ("user", "assistant")]
        if info.get("phase") in TEST_PHASES or not messages[-1]["role"] == "user":
            # the item (with options) or the instruction to open the dialogue is in the observation only
            messages.append({"role": "user", "content": observation.get("text", "")})
        result = self._prefetched(messages, info)
        if result is None:
            [result] = self.backend.generate([messages], self._turn_config())
        if not result.ok:
            raise StudentBackendError(result.error or "the backend returned no text")
        return result.text or ""

    def _prefetched(self, messages: list[dict], info: dict) -> GenerationResult | None:
        """The post-test reply to ``messages`` if it was requested with the others, else None.

        The post-test items do not see one another's answers (the env lists their prompts in
        ``info["test_prompts"]``), so at the first item all of them are requested at once, each with the seed of
        the turn it would be asked at; the later items take their stored reply when their conversation is the
        one that was sent.
        """
        prompts = info.get("test_prompts")
        if info.get("phase") != "posttest" or not prompts:
            return None
        index = info.get("item_index", 0)
        if index == 0:
            head = messages[:-1]
            requests = [(head + [{"role": "user", "content": p}], self._turn_config()) for p in prompts]
            self._stored = dict(enumerate(zip(requests, generate_many(self.backend, requests), strict=True)))
        stored = self._stored.pop(index, None)
        if stored is None or stored[0][0] != messages:
            return None
        return stored[1]

    def _hybrid(self, observation: dict, info: dict) -> str | StudentTurn:
        assert self.simulated is not None
        turn = self.simulated.act(observation, info)
        if not isinstance(turn, StudentTurn):
            return turn  # a test answer: the cognitive model's, as it is
        plan_text = turn.utterance
        prompt = self._fill(info, tutor=info.get("tutor_utterance") or "(nothing yet: you open the dialogue)",
                            plan=plan_text)
        [result] = self.backend.generate([[{"role": "user", "content": prompt}]], self._turn_config())
        text = self._accept(result.text, plan_text, info)
        if text is None:
            self.fallbacks += 1
            return replace(turn, privileged={**turn.privileged, "utterance_source": "template"})
        self.rewrites += 1
        return replace(turn, utterance=text, privileged={**turn.privileged, "utterance_source": "llm"})

    @staticmethod
    def _accept(reply: str | None, plan_text: str, info: dict) -> str | None:
        """The rewording if it keeps the plan's meaning as far as the env can check it, else None."""
        if reply is None:
            return None
        text = reply.strip()
        if text.lower().startswith("student:"):  # a speaker label is not part of the words
            text = text[len("student:"):]
        text = text.strip().strip('"').strip()
        if not text or len(text) > _MAX_REWORD_RATIO * len(plan_text) + 200:
            return None
        if _numbers(text) != _numbers(plan_text):
            return None
        answer = getattr(info.get("task"), "answer", None)
        if answer is not None and mentions_value(text, answer) != mentions_value(plan_text, answer):
            return None  # stating (or dropping) the task's answer would change the turn's meaning
        return text


STUDENT_KINDS = ("simulated", "llm", "hybrid")


def make_student_factory(spec: str = "simulated", **backend_kwargs: object) -> Callable[[str], object]:
    """A ``make_student(persona) -> student`` for rollouts, eval and GRPO, from ``simulated``, ``llm:<backend>``
    or ``hybrid:<backend>`` (``<backend>`` as :func:`tutorzoo.agents.backends.make_backend` takes it, e.g.
    ``hf:models/student`` or ``openai:gpt-4o-mini``). The backend is built once and shared by every episode's
    student; ``backend_kwargs`` go to it (``threads``, ``base_url``, ``enable_thinking``...), except
    ``max_new_tokens`` and ``temperature``, which set the student's sampling.

    Example::

        make_student = make_student_factory("llm:hf:models/tiny", threads=1)
        student = make_student("anxious")        # an LLMStudent voicing the anxious persona
    """
    from tutorzoo.agents.student.policy import SimulatedStudent

    kind, _, target = spec.partition(":")
    if kind not in STUDENT_KINDS or (kind == "simulated") == bool(target):
        raise ConfigError(f"student {spec!r} must be 'simulated', 'llm:<backend>' or 'hybrid:<backend>' (e.g. "
                          "llm:hf:models/tiny or hybrid:openai:gpt-4o-mini)")
    if kind == "simulated":
        if backend_kwargs:
            raise ConfigError(f"student arguments {sorted(backend_kwargs)} need an LLM student (llm:<backend>)")
        return SimulatedStudent
    from tutorzoo.agents.backends import make_backend

    sampling = {k: backend_kwargs.pop(k) for k in ("max_new_tokens", "temperature") if k in backend_kwargs}
    backend = make_backend(target, **backend_kwargs)
    config = GenerationConfig(**{"max_new_tokens": 260, **sampling})  # type: ignore[arg-type]

    def make(persona: str) -> LLMStudent:
        return LLMStudent(backend, persona=persona, mode=kind, config=config)  # type: ignore[arg-type]

    return make
