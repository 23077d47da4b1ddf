"""The LLM judge: strict JSON verdicts over any chat backend, aggregated over samples, failing closed.

:class:`Judge` renders a rubric's prompt for each item, asks the backend ``samples`` times (one
``backend.generate`` call per sample round over all items), parses every reply strictly
(:func:`parse_sample`) and aggregates per criterion (:func:`aggregate`). A reply that does not parse, and a
backend failure, is a counted failure of that sample; a criterion without any parsed sample takes its
``fail_value``. Nothing here raises for a bad reply or a failing server; a bad rubric, config or variable set
is a :class:`~tutorzoo.envs.errors.ConfigError` before any request is sent.

Judges on a server: ``JudgeConfig(backend="openai:gpt-4o")`` uses the OpenAI API with the key from
``$OPENAI_API_KEY``; ``JudgeConfig(backend="openai:<served name>", base_url="http://host:8000/v1")`` a vLLM
(or any OpenAI-compatible) server; ``cache_dir`` keeps every reply on disk so a rerun is free and identical.

Example::

    judge = Judge(JudgeConfig(backend="openai:gpt-4o-mini", base_url="http://127.0.0.1:8000/v1", samples=3))
    v = judge.judge("sid_rubrics", {"lesson": "...", "transcript": "..."})
    v.values, v.n_failed, v.to_dict()
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tutorzoo.agents.backends.base import ChatBackend, GenerationConfig, GenerationResult
from tutorzoo.agents.json_reply import JSONReplyError, parse_json_object
from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.judges.rubric import REASON_KEY, Criterion, RubricSpec, load_rubric_spec

log = logging.getLogger(__name__)

MAX_REASON_CHARS = 1000  # a reason is kept for reading, not for scoring: long ones are cut in the record
_SECRET_ARGS = ("api_key", "key", "token", "password", "secret")


class JudgeConfig(BaseModel):
    """Which model judges and how it samples; None fields take the rubric's defaults. Never holds a key.

    Example::

        JudgeConfig(backend="openai:gpt-4o", samples=3, aggregate="majority", cache_dir=".cache/judge")
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str = Field(description="'openai:<model>' (OpenAI API, vLLM, llama.cpp, ...) or 'hf:<path or hub id>'.")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint, e.g. http://host:8000/v1.")
    temperature: float | None = Field(default=None, ge=0.0, le=2.0,
                                      description="Sampling temperature; None = the rubric's (SID: 0.1).")
    samples: int | None = Field(default=None, ge=1, le=32,
                                description="Replies per item; None = the rubric's (Dr.Academy: 3).")
    aggregate: Literal["majority", "mean"] | None = Field(
        default=None, description="How samples combine per criterion; None = the rubric's.")
    max_new_tokens: int | None = Field(default=None, ge=1, description="Reply budget; None = the rubric's.")
    cache_dir: str | None = Field(default=None, description="On-disk reply cache (openai backends).")
    backend_args: dict[str, Any] = Field(default_factory=dict,
                                         description="Further backend options, e.g. timeout, max_concurrency.")

    @field_validator("backend")
    @classmethod
    def _backend_spec(cls, value: str) -> str:
        prefix, sep, target = value.partition(":")
        if not sep or prefix not in ("openai", "hf") or not target:
            raise ValueError(f"backend must be 'openai:<model>' or 'hf:<path>', got {value!r}")
        return value

    @field_validator("backend_args")
    @classmethod
    def _no_secrets(cls, value: dict[str, Any]) -> dict[str, Any]:
        bad = [k for k in value if k.lower() in _SECRET_ARGS or ("api_key" in k.lower() and k != "api_key_env")]
        if bad:
            raise ValueError(f"backend_args {bad} would hold a secret; the key is read from $OPENAI_API_KEY "
                             "(or the variable named by api_key_env)")
        clash = sorted(set(value) & {"base_url", "cache_dir"})
        if clash:
            raise ValueError(f"backend_args {clash} are JudgeConfig fields; set them there")
        return value


def make_judge_config(**kwargs: Any) -> JudgeConfig:
    """A :class:`JudgeConfig` with a ConfigError that names the field and the fix."""
    try:
        return JudgeConfig(**kwargs)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "(config)"
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown judge option {loc!r}; JudgeConfig takes {list(JudgeConfig.model_fields)}")
            else:
                problems.append(f"{loc}: {err['msg'].removeprefix('Value error, ')} (got {err.get('input')!r})")
        raise ConfigError("invalid judge config: " + "; ".join(problems)) from None


@dataclass(frozen=True)
class Verdict:
    """The judgment of one item: aggregated ``values`` per criterion and every sample with its fate."""

    rubric: str
    judge: str
    values: dict[str, Any]
    samples: list[dict[str, Any] | None]
    reasons: list[str | None]
    errors: list[str]
    seeds: list[int] = field(default_factory=list)
    aggregate: str = "majority"

    @property
    def n_samples(self) -> int:
        return len(self.samples)

    @property
    def n_failed(self) -> int:
        return sum(s is None for s in self.samples)

    @property
    def ok(self) -> bool:
        """Every sample parsed."""
        return self.n_failed == 0

    @property
    def failed(self) -> bool:
        """No sample parsed: every value is its criterion's fail value."""
        return self.n_failed == self.n_samples

    def to_dict(self) -> dict[str, Any]:
        return {"rubric": self.rubric, "judge": self.judge, "aggregate": self.aggregate, "values": dict(self.values),
                "samples": [None if s is None else dict(s) for s in self.samples], "reasons": list(self.reasons),
                "errors": list(self.errors), "seeds": list(self.seeds), "n_samples": self.n_samples,
                "n_failed": self.n_failed, "ok": self.ok}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        return cls(rubric=data["rubric"], judge=data.get("judge", ""), values=dict(data["values"]),
                   samples=list(data["samples"]), reasons=list(data.get("reasons") or [None] * len(data["samples"])),
                   errors=list(data.get("errors", [])), seeds=list(data.get("seeds", [])),
                   aggregate=data.get("aggregate", "majority"))


class VerdictError(ValueError):
    """A reply that is not a valid verdict; the message starts with the kind (invalid JSON, missing criterion...)."""


def parse_sample(spec: RubricSpec, reply: str,
                 criteria: Sequence[str] | None = None) -> tuple[dict[str, Any], str | None]:
    """The criterion values and reason of one reply, or :class:`VerdictError`.

    The reply must be one JSON object with exactly the asked criteria (+ an optional string ``reason``).

    Example::

        parse_sample(spec, '{"X-SRG": 4, "M-RCC": 5, "X-MSR": 3, "IRA": 4, "TCF": 5, "reason": "ok"}')
    """
    asked = spec.select(criteria)
    try:
        data = parse_json_object(reply)
    except JSONReplyError as exc:
        raise VerdictError(str(exc)) from None
    missing = [c for c in asked if c not in data]
    if missing:
        raise VerdictError(f"missing criterion: {missing} (the reply must have exactly {list(asked)})")
    extra = sorted(k for k in data if k not in asked and k != REASON_KEY)
    if extra:
        raise VerdictError(f"extra key: {extra} (the reply must have exactly {list(asked)} and an optional "
                           f"{REASON_KEY!r})")
    reason = data.get(REASON_KEY)
    if reason is not None and not isinstance(reason, str):
        raise VerdictError(f"wrong type: {REASON_KEY} must be a string, got {reason!r}")
    values: dict[str, Any] = {}
    for name in asked:
        try:
            values[name] = spec.criteria[name].check(data[name])
        except ValueError as exc:
            raise VerdictError(str(exc)) from None
    return values, None if reason is None else reason[:MAX_REASON_CHARS]


def aggregate(criterion: Criterion, values: Sequence[Any], how: str) -> Any:
    """One criterion's verdict over the parsed samples' ``values``; its ``fail_value`` when there are none.

    ``majority``: most frequent value, ties broken toward the fail value (fail closed). ``mean``: the mean
    for likert, the share of ``true`` for binary; choice criteria always use majority.
    """
    if not values:
        return criterion.fail_value
    if how == "mean" and criterion.type == "likert":
        return sum(values) / len(values)
    if how == "mean" and criterion.type == "binary":
        return sum(bool(v) for v in values) / len(values)
    if how not in ("majority", "mean"):
        raise ConfigError(f"aggregate must be 'majority' or 'mean', got {how!r}")
    counts = Counter(values)
    top = max(counts.values())
    tied = [v for v in counts if counts[v] == top]
    if len(tied) == 1:
        return tied[0]
    if criterion.fail_value in tied:
        return criterion.fail_value
    if criterion.type == "choice":
        fail = criterion.labels.index(str(criterion.fail_value))
        return min(tied, key=lambda v: (abs(criterion.labels.index(v) - fail), -criterion.labels.index(v)))
    return min(tied, key=lambda v: (abs(v - criterion.fail_value), v))


def rubric_seed(rubric: str) -> int:
    """The seed of sample 0 of every item judged on ``rubric`` (sample s uses ``rubric_seed + s``)."""
    return int(hashlib.sha256(f"tutorzoo-judge/{rubric}".encode()).hexdigest()[:8], 16) % (2**31 - 64)


class Judge:
    """Judges items against rubrics through one backend.

    Args:
        config: the judge's settings; fields left None take each rubric's defaults.
        backend: a ready :class:`~tutorzoo.agents.backends.base.ChatBackend` (tests inject one); None builds it from
            ``config`` on first use with :func:`tutorzoo.agents.backends.make_backend`.
    """

    def __init__(self, config: JudgeConfig, backend: ChatBackend | None = None) -> None:
        self.config = config
        self._backend = backend
        self._specs: dict[str, RubricSpec] = {}
        self.stats = {"items": 0, "requests": 0, "failed_samples": 0, "failed_verdicts": 0}

    @property
    def name(self) -> str:
        return self.config.backend

    @property
    def backend(self) -> ChatBackend:
        if self._backend is None:
            self._backend = self._make_backend()
        return self._backend

    def _make_backend(self) -> ChatBackend:
        from tutorzoo.agents.backends import make_backend

        kwargs = dict(self.config.backend_args)
        if self.config.backend.startswith("openai:"):
            if self.config.base_url is not None:
                kwargs["base_url"] = self.config.base_url
            if self.config.cache_dir is not None:
                kwargs["cache_dir"] = self.config.cache_dir
        elif self.config.base_url is not None or self.config.cache_dir is not None:
            raise ConfigError(f"judge {self.config.backend!r}: base_url and cache_dir apply to openai:<model> "
                              "judges only; a local hf: judge is reproducible from its seeds without a cache")
        try:
            return make_backend(self.config.backend, **kwargs)
        except TypeError as exc:
            raise ConfigError(f"judge {self.config.backend!r}: bad backend_args {sorted(kwargs)} ({exc})") from None

    def spec(self, rubric: str | RubricSpec) -> RubricSpec:
        """The loaded rubric (cached per judge)."""
        if isinstance(rubric, RubricSpec):
            return rubric
        if rubric not in self._specs:
            self._specs[rubric] = load_rubric_spec(rubric)
        return self._specs[rubric]

    def settings(self, rubric: str | RubricSpec) -> dict[str, Any]:
        """The effective ``temperature``, ``samples``, ``aggregate`` and ``max_new_tokens`` for ``rubric``."""
        spec = self.spec(rubric)
        c = self.config
        return {"temperature": spec.temperature if c.temperature is None else c.temperature,
                "samples": spec.samples if c.samples is None else c.samples,
                "aggregate": spec.aggregate if c.aggregate is None else c.aggregate,
                "max_new_tokens": spec.max_new_tokens if c.max_new_tokens is None else c.max_new_tokens}

    def judge(self, rubric: str | RubricSpec, variables: Mapping[str, Any],
              criteria: Sequence[str] | None = None) -> Verdict:
        """One item's verdict (same as ``judge_many(rubric, [variables], criteria)[0]``)."""
        return self.judge_many(rubric, [variables], criteria)[0]

    def judge_many(self, rubric: str | RubricSpec, items: Sequence[Mapping[str, Any]],
                   criteria: Sequence[str] | None = None) -> list[Verdict]:
        """Verdicts for ``items`` (each a mapping of the rubric's variables), in order.

        ``criteria`` restricts every item to a subset of the rubric's criteria (e.g. one principle's three).
        All prompts are rendered (and checked) before the first request; then one ``backend.generate`` call
        per sample round covers every item.
        """
        spec = self.spec(rubric)
        asked = spec.select(criteria)
        conversations = [spec.render(v, asked) for v in items]
        if not conversations:
            return []
        s = self.settings(spec)
        base = rubric_seed(spec.name)
        seeds = [base + i for i in range(s["samples"])]
        rounds = [self._generate(conversations, GenerationConfig(
            max_new_tokens=s["max_new_tokens"], temperature=s["temperature"], seed=seed)) for seed in seeds]
        verdicts = []
        for i in range(len(conversations)):
            samples: list[dict[str, Any] | None] = []
            reasons: list[str | None] = []
            errors: list[str] = []
            for k, results in enumerate(rounds):
                result = results[i]
                if not result.ok:
                    samples.append(None)
                    reasons.append(None)
                    errors.append(f"sample {k}: backend: {result.error}")
                    continue
                try:
                    values, reason = parse_sample(spec, result.text or "", asked)
                except VerdictError as exc:
                    samples.append(None)
                    reasons.append(None)
                    errors.append(f"sample {k}: {exc}")
                    continue
                samples.append(values)
                reasons.append(reason)
            parsed = [x for x in samples if x is not None]
            values = {c: aggregate(spec.criteria[c], [x[c] for x in parsed], s["aggregate"]) for c in asked}
            verdict = Verdict(rubric=spec.name, judge=self.name, values=values, samples=samples, reasons=reasons,
                              errors=errors, seeds=seeds, aggregate=s["aggregate"])
            self.stats["failed_samples"] += verdict.n_failed
            self.stats["failed_verdicts"] += verdict.failed
            verdicts.append(verdict)
        self.stats["items"] += len(conversations)
        failed = sum(v.failed for v in verdicts)
        if failed:
            log.warning("judge %s on %s: %d of %d verdicts had no parsable sample (fail values used); first error: "
                        "%s", self.name, spec.name, failed, len(verdicts),
                        next(v.errors[0] for v in verdicts if v.failed))
        return verdicts

    def _generate(self, conversations: list[list[dict]], config: GenerationConfig) -> list[GenerationResult]:
        """One backend call; an exception from the backend (other than misconfiguration) fails the round."""
        self.stats["requests"] += len(conversations)
        try:
            results = self.backend.generate(conversations, config)
        except ConfigError:
            raise
        except Exception as exc:  # a broken backend is a counted failure, never a lost run
            message = f"{type(exc).__name__}: {exc}"
            return [GenerationResult(text=None, error=message) for _ in conversations]
        if len(results) != len(conversations):
            message = f"the backend returned {len(results)} results for {len(conversations)} requests"
            return [GenerationResult(text=None, error=message) for _ in conversations]
        return list(results)
