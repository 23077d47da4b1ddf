"""Template verbaliser for tutor acts: a :class:`TutorAct` plus the task's teaching material -> an utterance.

Used by the env in ``act`` mode (classic RL on dialogue acts) and by the built-in tutors, which choose acts
and speak through it. Every strategy has its own cue phrase, so the rule-based annotator
(:mod:`tutorzoo.envs.annotate`) reads the act back from the text; the topic is named whenever the material itself
does not name it, as a tutor would.
"""

from __future__ import annotations

import re

import numpy as np

from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.annotate import END_MARKER
from tutorzoo.envs.tasks.base import KnowledgeComponent, Task

# the lead-in phrases of each strategy (public: the probes strip them to test that content, not cue words, teaches)
STRATEGY_LEADS: dict[str, tuple[str, ...]] = {
    # level-neutral leads: the question that follows sets the guidance level
    "follow_up_question": ("Tell me more about your thinking.", "What do you notice?", "Let's build on your idea."),
    "hint": ("Here's a hint: {hint}", "A hint: {hint}", "Try thinking about this: {hint}"),
    "analogy": ("Think of it as this: {analogy}", "It's like this: {analogy}"),
    "scenario_question": ("Imagine this: {scenario}", "Let's test that idea with a counterexample: {scenario}",
                          "Consider this scenario: {scenario}"),
    # a break-down gives the first step it builds on (a scaffold is what the turn gives, not its cue phrase)
    "break_down": ("Let's break it down step by step. First: {step}",
                   "Let's take it one step at a time. First: {step}"),
    "encourage": ("Good thinking, keep going!", "You're on the right track.", "Don't worry, you can do this."),
    "corrective_feedback": ("Not quite. {negation}", "That's not right. {negation}"),
    "contextualize": ("In real life, {context}", "In everyday life, {context}"),
}


# What an act says when it targets no knowledge component: a move without content.
_CONTENT_FREE: dict[str, tuple[str, ...]] = {
    "introduce_concept": ("Let me say a few words about this.", "There are some ideas to keep in mind here."),
    "check_understanding": ("Do you have any questions so far?", "Is everything clear so far?"),
    "guide_reasoning": ("What do you think?", "What comes to mind?", "Where would you like to go from here?"),
    "trigger_transfer": ("Can you think of other places where this shows up?",),
}


def verbalise_act(act: TutorAct, task: Task, rng: np.random.Generator, misconception: str | None = None) -> str:
    """Words for ``act`` on ``task``; ``misconception`` (an id) selects the counterexample/negation to use.

    Example::

        act = TutorAct(intent="guide_reasoning", strategy="hint", guidance_level="L2", target_kc=kc_id)
        verbalise_act(act, task, np.random.default_rng(0))
    """
    kc = _kc(task, act.target_kc)
    mis = _misconception(task, misconception or act.addresses_misconception, kc)
    parts: list[str] = []

    if act.intent == "summarize":
        parts.append(f"To summarize: {task.summary}")
        if act.ends_session:
            parts.append(END_MARKER)
        return " ".join(parts)

    if act.strategy is not None:
        lead = _pick(rng, STRATEGY_LEADS[act.strategy])
        parts.append(lead.format(**_fields(task, kc, mis, rng)))

    if act.intent == "introduce_concept":
        body = kc.worked_example if kc is not None and act.guidance_level == "L1" else None
        if kc is None:
            body = _pick(rng, _CONTENT_FREE["introduce_concept"])
        elif body is None:
            body = f"Let me explain {kc.name}: {kc.explanation}"
        else:
            body = f"Here's a worked example of {kc.name}: {body}"
        parts.append(body)
        if act.ends_session:
            parts.append(END_MARKER)
        return " ".join(parts)

    if act.intent == "trigger_transfer" and kc is not None and kc.links:
        link = kc.links[int(rng.integers(len(kc.links)))]
        parts.append(f"Let's connect this to {link.discipline}: {link.bridge}")
    elif kc is None:  # an act with no target component carries no content
        parts.append(_pick(rng, _CONTENT_FREE.get(act.intent, _CONTENT_FREE["guide_reasoning"])))
    else:
        parts.append(_question(kc, act.guidance_level, rng))
    if act.ends_session:
        parts.append(END_MARKER)
    return " ".join(parts)


def _question(kc: KnowledgeComponent, level: str, rng: np.random.Generator) -> str:
    pool = [q.text for q in kc.questions if q.guidance_level == level] or [q.text for q in kc.questions]
    text = _pick(rng, pool)
    lowered = text.lower()
    if not any(k.lower() in lowered for k in kc.keywords):
        text = f"About {kc.name.lower()}: {text}"
    return text


def _fields(task: Task, kc: KnowledgeComponent | None, mis, rng: np.random.Generator) -> dict[str, str]:
    hint = _pick(rng, kc.hints) if kc is not None else "think about what you already know."
    step = _first_step(kc.worked_example) if kc is not None and kc.worked_example else hint
    analogy = _pick(rng, kc.analogies) if kc is not None else "it is like many things you have seen before."
    if mis is not None:
        scenario = mis.counterexample
    elif kc is not None and kc.contexts:
        scenario = _pick(rng, kc.contexts)
    else:
        scenario = "a situation from everyday life."
    context = _pick(rng, kc.contexts) if kc is not None and kc.contexts else "this comes up in everyday life."
    negation = mis.negation if mis is not None else (kc.explanation if kc is not None else "let's look again.")
    return {
        "hint": hint,
        "step": step,
        "analogy": analogy,
        "scenario": scenario,
        "context": _lower_first(context),
        "negation": negation,
    }


_PROMPT = re.compile(r"^(?:work out|evaluate|compare|add|subtract|solve|convert|find|place|compute|calculate|"
                     r"which|what|how)\b|\?\s*$", re.IGNORECASE)


def _first_step(worked_example: str) -> str:
    """The worked example's first step: its first sentence that is not the problem it sets ("Work out 3/5 + 1/4.")."""
    sentences = [x for x in re.split(r"(?<=[.!?])\s+", worked_example.strip()) if x]
    step = next((x for x in sentences if not _PROMPT.search(x) and len(x.split()) >= 3), sentences[0])
    return step if step[-1:] in ".!?" else step + "."


def _kc(task: Task, kc_id: str | None) -> KnowledgeComponent | None:
    if kc_id is None:
        return None
    for kc in task.knowledge_components:
        if kc.id == kc_id:
            return kc
    return None


def _misconception(task: Task, mis_id: str | None, kc: KnowledgeComponent | None):
    if mis_id is not None:
        for m in task.misconceptions:
            if m.id == mis_id:
                return m
    if kc is not None:
        for m in task.misconceptions:
            if m.kc == kc.id:
                return m
    return None


def _pick(rng: np.random.Generator, options) -> str:
    return options[int(rng.integers(len(options)))]


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
