"""Reward terms and their weighted composition (TRL-compatible reward functions).

- :mod:`tutorzoo.rewards.terms`: the terms, each one function on an exchange or an episode record, usable in the env
  and as a TRL reward function (``term.trl()``), in an open registry (:func:`register_term`, or
  ``package.module:factory`` in a rubric YAML);
- :mod:`tutorzoo.rewards.rubric`: :class:`Rubric`, the weighted composition the env calls
(``tutorzoo.envs.reward_api``), with
  PedagogicalRL's λ and hard mode; :func:`load_rubric` reads ``configs/rewards/<name>.yaml``;
- :mod:`tutorzoo.rewards.gate`: the content gate that keeps cue words without content from counting;
- :mod:`tutorzoo.rewards.sid`: SID's objective metrics (also used by ``tutorzoo.eval.metrics``).

Example::

    from tutorzoo.envs import tutoring_v0
    from tutorzoo.rewards import load_rubric
    env = tutoring_v0.env(reward=load_rubric("default"))
    funcs, weights = load_rubric("pedagogical_rl").reward_funcs()  # for TRL's GRPOTrainer
"""

from __future__ import annotations

from tutorzoo.rewards.gate import ContentGate
from tutorzoo.rewards.rubric import Rubric, RubricConfig, load_rubric, pedagogy_ok
from tutorzoo.rewards.terms import TERM_NAMES, TERMS, Term, make_term, register_term

__all__ = ["TERMS", "TERM_NAMES", "ContentGate", "Rubric", "RubricConfig", "Term", "load_rubric", "make_term",
           "pedagogy_ok", "register_term"]
