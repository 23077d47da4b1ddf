"""A task's reading material (its components' computations and words, its propositions and their index, the match
memo, its practice questions' prompts, its cross-discipline links), built once per distinct set of texts
(:func:`material_of`) and shared by the readers of every task with the same material (a math family's draws share
theirs)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tutorzoo.envs.reading.normalise import sentences
from tutorzoo.envs.reading.numbers import ANY_DIGIT, no_digits
from tutorzoo.envs.reading.operations import KC_OPERATIONS, operations_in
from tutorzoo.envs.reading.propositions import closest_component, content_stems, indexed, name_words
from tutorzoo.envs.tasks.base import Task


def _fingerprint(task: Task) -> tuple:
    """Every text and id the material of ``task``'s reader is built from; a math task's digits masked when its
    components' computations come from the curriculum's table (then the numbers of a draw change nothing)."""
    kcs = task.knowledge_components
    parts = [task.task_set, task.id, task.summary, *task.solution]
    for k in kcs:
        parts += [k.id, k.name, *k.keywords, *k.facts, k.explanation, k.worked_example, *k.hints,
                  *(part for link in k.links for part in (link.discipline, link.bridge, *link.keywords)),
                  *(q.text for q in k.questions),
                  *(q.expected or "" for q in k.questions)]
    for item in (*task.pretest, *task.posttest):
        parts += [item.stem, *item.kcs]
    for m in task.misconceptions:
        parts += [m.id, m.kc, m.belief, m.counterexample, *m.refutations]
    text = "\x00".join(parts).encode()
    if task.task_set == "math" and all(k.id in KC_OPERATIONS for k in kcs):
        text = text.translate(None, b"0123456789")  # (bytes.translate: str.translate is slow on non-ASCII text)
    return (task.task_set, task.id, text)


_MATERIAL: dict[tuple, tuple] = {}


def bounded(store: dict, key, build: Callable[[], object], limit: int):
    """``store[key]``, built on a miss; the store is emptied when it outgrows ``limit`` (a process-wide cache)."""
    found = store.get(key)
    if found is None:
        if len(store) > limit:
            store.clear()
        found = store[key] = build()
    return found


def material_of(task: Task) -> tuple:
    """The reading material of ``task``, built once per distinct set of its texts."""
    return bounded(_MATERIAL, _fingerprint(task), lambda: _build_material(task), 1024)


def _build_material(task: Task) -> tuple:
    """(component ids, their computations, their name words, misconceptions by component, the topic's words, the
    components' names as a pattern, propositions, their stem index, the match memo, the sentence mask, the practice
    questions' prompts, the links' material)."""
    kc_ids = [k.id for k in task.knowledge_components]
    # the computations each component performs: the curriculum's table, or for a component it does not know
    # (a user's own task), the operations of the relations in its own worked example and explanation
    kc_ops = {k.id: KC_OPERATIONS[k.id] if k.id in KC_OPERATIONS else operations_in(
        (k.worked_example, k.explanation, *(q.text for q in k.questions))) for k in task.knowledge_components}
    kc_words = {k.id: name_words(k.keywords + (k.name,)) for k in task.knowledge_components}
    mis_by_kc: dict[str, list[str]] = {}
    for m in task.misconceptions:
        mis_by_kc.setdefault(m.kc, []).append(m.id)
    topic = frozenset().union(*kc_words.values())  # KC names and keywords: naming, not content
    names = sorted({k.name for k in task.knowledge_components if len(k.name.split()) >= 2}, key=len, reverse=True)
    names_re = re.compile("|".join(re.escape(n) for n in names), re.IGNORECASE) if names else None
    entries: list[tuple[str, str, str, str | None]] = []
    for k in task.knowledge_components:
        # the lesson's canonical facts, and the material a tutor may restate from it (explanation, worked
        # example, expected answers): both are true content on the component
        texts = [*k.facts, *sentences(k.explanation), *sentences(k.worked_example),
                 *(q.expected for q in k.questions if q.expected and len(q.expected) > 20)]
        entries += [(k.id, t, "fact", None) for t in texts]
        # a bridge to another discipline says something true about the component; so does a hint (the fact
        # a hint points to is the content a scaffold gives)
        entries += [(k.id, link.bridge, "fact", None) for link in k.links]
        entries += [(k.id, h, "fact", None) for h in k.hints]
        # what the curriculum asks about the component (each has an answer)
        entries += [(k.id, q.text, "question", None) for q in k.questions]
    # the task's own solution and summary are true content, each sentence on the component whose words it
    # shares most (the first on a tie)
    named = tuple((k, kc_words[k]) for k in kc_ids)
    math = task.task_set == "math"
    mask = no_digits if math else str  # (the words, not the numbers, decide)
    for text in (*task.solution, task.summary):
        entries += [(closest_component(named, mask(sent)), sent, "fact", None) for sent in sentences(text)]
    # a test item's question, asked again (with other numbers in math), is a gradeable question on its component
    for item in (*task.pretest, *task.posttest):
        on = tuple((k, w) for k, w in named if k in item.kcs)
        if on:  # the item's component whose words its question shares most (its first on a tie)
            entries.append((closest_component(on, mask(item.stem)), item.stem, "question", None))
    for m in task.misconceptions:
        entries.append((m.kc, m.belief, "belief", m.id))
        # stated observations and the scenario
        entries += [(m.kc, t, "refutation", m.id) for t in (*m.refutations, *sentences(m.counterexample))]
    # a math task's numbers are one instance's (its relations are checked exactly): its propositions are the
    # same for every draw of the family, so they are built with the digits masked
    key = tuple((kc, mask(t), kind, mis) for kc, t, kind, mis in entries if "{" not in t)
    props, by_stem, matched = indexed(key, math, topic)
    # the practice questions' prompts, read with their digits written 0 (every draw of a math task shares them)
    prompts = _practice_prompts(tuple((k.id, ANY_DIGIT.sub("0", q.text)) for k in task.knowledge_components
                                      for q in k.questions))
    # per cross-discipline link: its component, its discipline, its bridge's content stems and each of its keywords'
    # stems
    links = tuple((k.id, link.discipline, content_stems(no_digits(link.bridge))[0],
                   tuple(kw for w in link.keywords if (kw := content_stems(w)[0])))
                  for k in task.knowledge_components for link in k.links)
    # a math task's propositions hold no numbers: nor does their match
    return kc_ids, kc_ops, kc_words, mis_by_kc, topic, names_re, props, by_stem, matched, mask, prompts, links


WORD = re.compile(r"[a-z']+")  # a word of a lower-cased text (a prompt's opening words are compared in these)
# a practice question's prompt: its component, content stems, place (question, sentence; -1: the whole question),
# imperative opening words, and whether it is a whole question
Prompt = tuple[str, frozenset[str], tuple[int, int], str | None, bool]


@dataclass(frozen=True)
class Prompts:
    """The prompts of a lesson's practice questions, indexed by their content stems."""

    entries: tuple[Prompt, ...]
    by_stem: dict[str, tuple[int, ...]]  # stem -> the entries whose stems have it
    wordless: tuple[int, ...]  # the entries with no content stem (numbers only: "What is 8.75 × 1000?")
    stems: frozenset[str]  # every entry's stems


def _practice_prompts(questions: tuple[tuple[str, str], ...]) -> Prompts:
    """The prompts of practice ``questions`` (component, text with its digits written 0, so every draw of a math
    task shares them): a question's sentences that ask, "…?", and its last, "Name two ways of protecting steel
    from rust." (not the case it sets up first), and each question of two sentences or more whole; per entry, its
    component, its content stems, its place, for a prompt in the imperative its opening words ("name two"), and
    whether it is a whole question."""
    out: list[Prompt] = []
    for qi, (kc, question) in enumerate(questions):
        parts = sentences(question)
        places = [(i, part) for i, part in enumerate(parts) if part.rstrip().endswith("?") or i == len(parts) - 1]
        for pi, text in places + ([(-1, question)] if len(parts) > 1 else []):
            opening = " ".join(WORD.findall(text.lower())[:2])
            out.append((kc, content_stems(no_digits(text))[0], (qi, pi),
                        None if text.rstrip().endswith("?") else opening, pi < 0))
    by_stem: dict[str, list[int]] = {}
    for i, entry in enumerate(out):
        for st in entry[1]:
            by_stem.setdefault(st, []).append(i)
    return Prompts(tuple(out), {st: tuple(ids) for st, ids in by_stem.items()},
                   tuple(i for i, entry in enumerate(out) if not entry[1]), frozenset(by_stem))
