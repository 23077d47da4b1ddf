"""Tutor names -> policies. A plain dict with an import-path fallback and a did-you-mean on a miss.

Example::

    from tutorzoo.agents.tutor.registry import make_tutor
    tutor = make_tutor("socratic")              # a built-in
    tutor = make_tutor("my_pkg.tutors:MyTutor")  # any class with reset(seed) and act(observation, info)
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from tutorzoo.agents.tutor.adversarial import ADVERSARIAL_TUTORS
from tutorzoo.agents.tutor.base import TutorPolicy
from tutorzoo.agents.tutor.builtin import LecturerTutor, RandomTutor, SocraticTutor
from tutorzoo.envs.errors import ConfigError
from tutorzoo.envs.import_path import import_user_module

BUILTIN_TUTORS: dict[str, Callable[..., TutorPolicy]] = {
    "socratic": SocraticTutor,
    "lecturer": LecturerTutor,
    "random": RandomTutor,
}
# Built-ins plus the reward-hacking probes (``adv_*``) used to show the default reward cannot be gamed.
TUTORS: dict[str, Callable[..., TutorPolicy]] = {**BUILTIN_TUTORS, **ADVERSARIAL_TUTORS}


MODEL_PREFIXES = ("hf:", "openai:")


def make_tutor(name: str, **kwargs: Any) -> TutorPolicy:
    """A tutor policy from a registry name, a model (``hf:<path>``, ``openai:<model>``; backend options such as
    ``base_url`` go in ``kwargs``) or an import path ``package.module:ClassName`` (built with ``kwargs``). A
    built-in ignores the ``kwargs`` its constructor does not take, so one set of options can serve a run that
    compares a model or import-path tutor with built-ins."""
    if name in TUTORS:
        # --tutor-arg options are for model and import-path tutors compared in the same run (e.g. the path of a
        # trained policy); a built-in takes only the options its constructor names
        return TUTORS[name](**_accepted(TUTORS[name], kwargs))
    if name.startswith(MODEL_PREFIXES):
        from tutorzoo.agents.backends import make_backend
        from tutorzoo.agents.backends.base import GenerationConfig
        from tutorzoo.agents.tutor.llm import LLMTutor

        gen = {k: kwargs.pop(k) for k in ("max_new_tokens", "temperature", "top_p") if k in kwargs}
        return LLMTutor(make_backend(name, **kwargs), GenerationConfig(**gen), name=name)
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            factory = getattr(import_user_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"cannot load tutor {name!r}: {exc}. Give an importable 'package.module:ClassName' "
                "(a module in the current folder, on PYTHONPATH, or installed)."
            ) from exc
        tutor = factory(**kwargs)
        if not isinstance(tutor, TutorPolicy):
            raise ConfigError(f"{name!r} made a {type(tutor).__name__}, which lacks reset(seed) and act(obs, info)")
        return tutor
    close = difflib.get_close_matches(name, TUTORS, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"unknown tutor {name!r}; known: {sorted(TUTORS)} or an import path 'pkg.mod:Class'.{hint}")


def _accepted(factory: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The ``kwargs`` that ``factory``'s signature takes (all of them if it takes ``**kwargs``)."""
    import inspect

    params = inspect.signature(factory).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return kwargs
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in kwargs.items() if k in names}
