"""LLM judges: rubric files, a judge over any chat backend that fails closed, and calibration against labels.

A judge asks a chat model (:mod:`tutorzoo.agents.backends`: ``openai:<model>`` for the OpenAI API, vLLM, llama.cpp,
Ollama...; ``hf:<path>`` for a local model) to grade one item against a *rubric*, ``samples`` times, and
aggregates the replies per criterion. The offline default runs no judge: judge-only metrics are then reported
as not computed (``{"mean": None, ..., "not_computed": "no judge configured (--judge)"}``), never made up.

Pointing a judge at a server::

    tutorzoo eval --suite sid --judge openai:gpt-4o                      # key from $OPENAI_API_KEY
    tutorzoo eval --suite sid --judge openai:Qwen/Qwen2.5-72B-Instruct --judge-base-url http://gpu:8000/v1
    tutorzoo judge calibrate --rubric sid_rubrics --judge openai:gpt-4o --out runs/calib
    tutorzoo judge list

The key is read from ``$OPENAI_API_KEY`` by the backend; it is never part of a :class:`JudgeConfig`, a
verdict, a cache entry or a log. ``--judge-arg cache_dir=.cache/judge`` makes a rerun free and identical.

Rubric file format (``eval/judges/rubrics/NAME.yaml``; NAME is the rubric's name)
---------------------------------------------------------------------------------

.. code-block:: yaml

    name: sid_rubrics                 # must equal the file's stem
    description: SID's five 1-5 rubrics over a whole dialogue
    prompt: sid_rubrics.txt           # user-message template in eval/judges/prompts/
    system_prompt: sid_rubrics_system.txt  # optional system-message template in eval/judges/prompts/
    variables: [lesson, transcript]   # what the caller must supply, each a string
    temperature: 0.1                  # defaults, overridden by JudgeConfig fields that are not None
    samples: 1
    aggregate: mean                   # majority | mean
    max_new_tokens: 400               # optional, default 512
    criteria:                         # the reply's keys, in this order
      X-SRG:
        type: likert                  # likert (min, max: integers) | binary | choice (labels)
        min: 1
        max: 5
        fail_value: 1                 # optional for likert (default min) and binary (default false)
        description: Interdisciplinary scientific reasoning / scaffolding ...
      leaked: {type: binary, fail_value: true, description: ...}   # fail side of a "bad" flag is true
      helpfulness: {type: choice, labels: [win, tie, lose], fail_value: lose, description: ...}

Unknown keys, an unknown criterion ``type``, a ``fail_value`` outside its criterion's range or labels, a
missing prompt file, a template placeholder that is neither a declared variable nor a built-in, or a declared
variable the templates never use are a :class:`~tutorzoo.envs.errors.ConfigError` naming the file.

Prompt templates (``eval/judges/prompts/*.txt``; for a rubric file elsewhere, ``prompts/`` beside its folder or
its own folder): placeholders are ``{identifier}``; every other brace is
literal text, so a JSON example such as ``{"X-SRG": 4, "reason": "..."}`` needs no escaping. Substitution is
one pass: a value that itself contains ``{x}`` is not substituted again. Built-in placeholders, filled by the
judge: ``{criteria}`` (one line per asked criterion: name, type/range, description) and ``{reply_format}``
(the exact JSON object the reply must be, with the asked criteria's keys). A template should state the
reply format (``{reply_format}`` does it). Calling the judge without a declared variable is a ConfigError
naming the rubric file.

Replies and verdicts
--------------------

A sample's reply must be exactly one JSON object (optionally in a single fenced ```` ```json ```` block) whose
keys are exactly the asked criteria plus an optional ``"reason"`` string. Values: likert -> an integer in
``[min, max]`` (not a float, string or bool); binary -> ``true``/``false``; choice -> one of the labels
(case-insensitive). Anything else — prose, a missing or extra key, an out-of-range value, a wrong type, a
backend error or timeout — makes that sample a *failure*, recorded with the reason in ``errors``.

Per criterion, over the parsed samples only: ``majority`` takes the most frequent value, ties broken toward
the criterion's ``fail_value`` (the tied value nearest to it; for choice, nearest in the ``labels`` order);
``mean`` takes the mean for likert (a float) and the share of ``true`` for binary (a float in [0, 1]); choice
criteria always use majority. A criterion with no parsed sample gets its ``fail_value`` (fail closed).

``Verdict.to_dict()``::

    {"rubric": "sid_rubrics", "judge": "openai:gpt-4o", "values": {"X-SRG": 4.0, ...},
     "samples": [{"X-SRG": 4, ...} | None, ...], "reasons": ["...", None, ...], "errors": ["sample 1: ..."],
     "n_samples": 3, "n_failed": 1, "ok": False, "seeds": [..]}

``ok`` is true when every sample parsed; ``failed`` (property) when none did (all values are fail values).

Samples are seeded: sample ``s`` of every item uses the seed ``rubric_seed(rubric) + s``; the request
(messages from the item's variables, sampling settings, seed) alone decides an OpenAI-compatible reply, so a
verdict depends only on its own variables and a rerun over a cache or a deterministic server is identical.

Calibration files (``eval/judges/calibration/NAME.jsonl``, one labelled example per line)
-------------------------------------------------------------------------------------------

.. code-block:: json

    {"id": "sid-01", "variables": {"lesson": "...", "transcript": "..."},
     "gold": {"X-SRG": 5, "M-RCC": 4, "X-MSR": 5, "IRA": 4, "TCF": 5},
     "rationale": "one line: why these scores", "criteria": ["optional subset of the rubric's criteria"]}

``gold`` holds a value for every asked criterion (``criteria`` if given, else all of the rubric's), valid for
its type. ``tutorzoo judge calibrate`` judges every example and reports per criterion the accuracy, Cohen's
kappa (quadratic-weighted for likert), the mean absolute error (likert) and the failed verdicts.

Python API::

    from tutorzoo.eval.judges import Judge, JudgeConfig
    judge = Judge(JudgeConfig(backend="openai:gpt-4o-mini", base_url="http://127.0.0.1:8000/v1"))
    verdict = judge.judge("sid_rubrics", {"lesson": "...", "transcript": "Student: ...\\nTutor: ..."})
    verdict.values["X-SRG"], verdict.ok
    verdicts = judge.judge_many("sid_rubrics", [vars1, vars2])   # one backend call per sample round
"""

from __future__ import annotations

from tutorzoo.eval.judges.judge import (
    Judge,
    JudgeConfig,
    Verdict,
    VerdictError,
    aggregate,
    make_judge_config,
    parse_sample,
)
from tutorzoo.eval.judges.rubric import Criterion, RubricSpec, list_rubrics, load_rubric_spec

__all__ = [
    "Criterion",
    "Judge",
    "JudgeConfig",
    "RubricSpec",
    "Verdict",
    "VerdictError",
    "aggregate",
    "list_rubrics",
    "load_rubric_spec",
    "make_judge_config",
    "parse_sample",
]
