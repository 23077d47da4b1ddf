"""# Tutoring (``tutoring_v0``)

A tutoring session between a **tutor** and a **student**: pre-test -> dialogue -> post-test.

| | |
| --- | --- |
| Import | `from tutorzoo.envs import tutoring_v0` |
| Agents | `agents = ["tutor", "student"]` |
| Actions | tutor: `Text` (``action_mode="text"``) or `MultiDiscrete` acts (``"act"``); student: `Text` |
| Observations | `Dict(text=Text, features=Box)` for each agent |
| Parallel API | yes (turn based: one agent acts per parallel step) |

## Agents and turns
The agents strictly alternate, the student first. In the **pre-test** the student answers each item (the
env grades it) and the tutor *observes* each attempt and whether it was right — ``info["observe_only"]`` is
true and its action is ignored (EducationQ: the tutor never sees the options). In the **dialogue** either the
student opens with its question (``opener="student"``, SID) or the tutor does; they alternate for at most
``max_turns`` tutor turns, or until the tutor's turn contains the end marker ``[END]`` (a closing summary).
In the **post-test** the student answers isomorphic variants of the pre-test items (``posttest="isomorphic"``,
default), the pre-test items themselves (``"same"``, EducationQ), or both; the tutor observes.

## Observation
``text``: for the tutor, the student's last utterance (or the pre-test attempt it observes); for the student,
the tutor's last utterance or the test item (with options). ``features`` (tutor): phase one-hot, turn
fraction, pre-test accuracy overall and per knowledge component, the last student turn's cognition state
(one-hot; for a simulated student its true label — what a perceptive human tutor hears), whether the student
stated the answer, whether the tutor revealed it. The student's hidden state is never in the tutor's
observation or info; the student's own info carries it as ``privileged_student_state`` for analysis.
``info`` (tutor) holds ``messages`` (system prompt first, student turns as ``user``), ``task`` (``id``,
``statement``, ``solution``, ``answer``, ``disciplines``, ``knowledge_components`` with teaching material,
``misconceptions``), ``turn``, ``max_turns``, ``phase``, ``observe_only``, ``pretest`` (stem, answer, the
student's response, correctness) and ``last_act`` (the annotation of its last turn).

## Action
Text mode: any string — the env normalises it (NFKC, control characters dropped, clipped to 4,000
characters, counted in ``clipped_turns``) and the rule-based annotator (:mod:`tutorzoo.envs.annotate`) turns it into
SID labels; a non-string or empty action is an invalid turn (counted, labelled ``invalid``). Act mode:
``MultiDiscrete([5 intents, 9 strategies (8 + none), 3 guidance levels, 8 KC slots, 2 end flag])``
verbalised by templates (:mod:`tutorzoo.envs.act_text`); a malformed vector is an invalid turn. The student's action
is text, or a :class:`tutorzoo.envs.acts.StudentTurn` (or dict) carrying its true SID labels.

## Rewards
At the end, the tutor receives the learning gain (post-test score - pre-test score on the isomorphic
post-test, or the same-item one when that is the only post-test); the student receives the same gain.
Components are in ``info["outcome"]["reward_components"]`` and the episode record.

## Episode end
Termination after the last post-test answer; truncation after ``max_cycles`` rounds if set.

## Arguments
``task_set`` (math, stem, mcq), ``task_id`` (None: drawn from the reset seed), ``task_path``, ``max_turns``
(8), ``opener`` (student/tutor), ``posttest`` (isomorphic/same/both), ``action_mode`` (text/act),
``max_cycles``, ``render_mode`` (human/ansi). See :class:`tutorzoo.envs.config.EnvConfig`. Two Python objects besides:
``reward`` (an :class:`tutorzoo.envs.reward_api.RewardModel`, e.g. ``rewards.Rubric``; default the learning gain) and
``reader`` (``task -> reader`` whose ``read(text)`` returns an :class:`tutorzoo.envs.content.Reading`: what the student
learns from; default the rule reader :meth:`tutorzoo.envs.content.ContentReader.for_task`, or a model-backed one from
``tutorzoo.agents.content_reader_llm.reader_factory("llm:<backend>" | "hf:<path>")``, which fails closed).

## Version history
* v0: initial release. Since then, within v0: the student learns from the content of each turn (read by
  ``reader``) rather than from its labels; ``info["last_act"]`` uses the transcripts' SID keys
  (``teacher_intent``, ``teaching_strategy``, ``teacher_guidance_level``, ``discipline``,
  ``discipline_transfer``; it said ``intent``/``strategy``/``guidance_level`` before) and episode records carry
  ``schema_version`` 1 (docs/records.md).

Example::

    from tutorzoo.envs import tutoring_v0
    env = tutoring_v0.env(task_set="math", max_turns=6)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        action = None if term or trunc else my_policies[agent].act(obs, info)
        env.step(action)
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from tutorzoo.envs.tutoring import TutoringEnv

raw_env = TutoringEnv


def env(**kwargs: Any) -> wrappers.OrderEnforcingWrapper:
    """The AEC env with PettingZoo's order-enforcing wrapper (errors on misuse such as stepping before reset)."""
    return wrappers.OrderEnforcingWrapper(TutoringEnv(**kwargs))


def parallel_env(**kwargs: Any):
    """The parallel API. One parallel step is one AEC step (turn based), so ``max_cycles`` counts those steps."""
    max_cycles = kwargs.pop("max_cycles", None)
    return turn_based_aec_to_parallel(env(**kwargs, _max_steps=max_cycles))
