"""The built-in rule-based tutors: ``socratic`` (adaptive expert), ``lecturer`` (explains, tells), ``random``.

All three decide a dialogue act each turn and speak through the same template verbaliser
(:mod:`tutorzoo.envs.act_text`), so they differ only in *what* they choose — which is what the benchmark ranks.
"""

from __future__ import annotations

import re

from tutorzoo.agents.tutor.base import ActTutor
from tutorzoo.envs.act_text import verbalise_act
from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.annotate import END_MARKER
from tutorzoo.envs.content import ContentReader
from tutorzoo.envs.labels import INTENTS, STRATEGIES
from tutorzoo.envs.leak import AnswerKey, LeakDetector
from tutorzoo.envs.spaces import ACT_NVEC, decode_tutor_features
from tutorzoo.envs.tasks.base import KnowledgeComponent, Task

_WORDS = re.compile(r"[a-z0-9/.\-]+")
_LEVELS = ("L1", "L2", "L3")


def _act(intent: str, strategy: str | None, level: str, kc: KnowledgeComponent | None, task: Task, *,
         ends: bool = False, misconception: str | None = None, transfer_to: str | None = None) -> TutorAct:
    disciplines: tuple[str, ...] = (kc.discipline,) if kc is not None else (task.disciplines[0],)
    if transfer_to is not None and transfer_to not in disciplines:
        disciplines += (transfer_to,)
    return TutorAct(
        intent=intent,
        strategy=strategy,
        guidance_level=level,
        disciplines=disciplines,
        discipline_transfer=len(disciplines) >= 2,
        target_kc=kc.id if kc is not None else None,
        addresses_misconception=misconception,
        is_question=intent in ("check_understanding", "guide_reasoning", "trigger_transfer"),
        ends_session=ends,
    )


class SocraticTutor(ActTutor):
    """An adaptive expert: diagnoses, scaffolds within the zone, repairs misconceptions with counterexamples.

    Each turn it reads the student's last turn (the cognition state in the observation features, the words
    for a misconception's signature) and its plan: the weakest knowledge components first, prerequisites
    before what builds on them; questions one level above what the student has shown; a short worked
    example when a novice is stuck on a component (questioning cannot reach what is missing); a
    counterexample for a misconception; one transfer to a linked discipline; a summary and ``[END]``.
    It never states the task's or a test item's answer: every utterance is checked with the leak detector.
    """

    name = "socratic"

    def on_reset(self) -> None:
        self._plan: list[str] | None = None
        self._level: dict[str, int] = {}
        self._successes: dict[str, int] = {}
        self._stuck: dict[str, int] = {}
        self._repairs: dict[str, int] = {}
        self._transferred = False
        self._transfers: set[str] = set()
        self._suspects: dict[str, list[str]] = {}
        self._spent: dict[str, int] = {}
        self._budget: dict[str, int] = {}

    def choose(self, observation: dict, info: dict, task: Task) -> tuple[TutorAct, str | None]:
        act, misconception = self._decide(observation, info, task)
        if act.target_kc is not None:
            self._spent[act.target_kc] = self._spent.get(act.target_kc, 0) + 1
        return act, misconception

    def _decide(self, observation: dict, info: dict, task: Task) -> tuple[TutorAct, str | None]:
        if self._plan is None:
            self._make_plan(info, task)
        assert self._plan is not None
        state = decode_tutor_features(observation["features"])["last_cognition_state"]
        if info["turn"] + 1 >= info["max_turns"]:
            return _act("summarize", None, "L2", None, task, ends=True), None
        if not self._plan and not self._transferred:  # every component covered: one transfer, then deepen
            self._transferred = True
            kc = next((k for k in task.knowledge_components if k.links), task.knowledge_components[0])
            return self._transfer(kc, task)
        if not self._plan:
            self._deepen(task)

        kc = task.kc(self._plan[0])
        level = self._level[kc.id]
        if state is None or info["turn"] == 0:  # the first move: open the weakest component (its plan)
            return self._open_component(kc, task, info)
        if self._spent.get(kc.id, 0) >= self._budget.get(kc.id, 99) and len(self._plan) > 1:
            # its share of the session is used: every tested component needs its turn
            self._plan.pop(0)
            return self._open_component(task.kc(self._plan[0]), task, info)
        if state == "incorrect":
            mis = self._diagnose(_last_student_text(info), task, kc)
            if mis is not None and self._repairs.get(mis, 0) < 2:  # a shown misconception: counterexample
                self._repairs[mis] = self._repairs.get(mis, 0) + 1
                mis_kc = task.kc(next(m.kc for m in task.misconceptions if m.id == mis))
                if self._level.get(mis_kc.id, 0) == 0:  # a novice also needs the right way shown, not only refuted
                    return _act("introduce_concept", "scenario_question", "L1", mis_kc, task, misconception=mis), mis
                return _act("guide_reasoning", "scenario_question", "L2", mis_kc, task, misconception=mis), mis
        if state in ("incorrect", "expression_difficulty", "vague_understanding"):
            self._stuck[kc.id] = self._stuck.get(kc.id, 0) + 1
            if self._stuck[kc.id] >= 2 or state == "expression_difficulty" and level == 0:
                # questioning cannot reach what is missing: a short worked example, then back to questions
                self._stuck[kc.id] = 0
                self._level[kc.id] = 0
                return _act("introduce_concept", None, "L1", kc, task), None
            self._level[kc.id] = max(0, level - (state != "vague_understanding"))
            strategy = {"incorrect": "hint", "vague_understanding": "follow_up_question"}.get(state, "break_down")
            return _act("guide_reasoning", strategy, _LEVELS[self._level[kc.id]], kc, task), None
        if state == "irrelevant":
            return _act("check_understanding", "encourage", "L1", kc, task), None
        # clear_understanding / higher_order: climb one level; past L2 (or three successes) move on
        self._stuck[kc.id] = 0
        self._successes[kc.id] = self._successes.get(kc.id, 0) + 1
        # move on after a success at L2 or above, or a second success: breadth over the tested components
        if level >= 1 or self._successes[kc.id] >= 2 or state == "higher_order":
            self._plan.pop(0)
            if kc.links and kc.id not in self._transfers:
                # a component just understood is the moment to connect it to another discipline (SID's IKT)
                self._transfers.add(kc.id)
                self._transferred = True
                return self._transfer(kc, task)
            if not self._plan:
                self._deepen(task)
            return self._open_component(task.kc(self._plan[0]), task, info)
        self._level[kc.id] = level + 1
        strategy = "scenario_question" if level + 1 == 2 and kc.contexts else "break_down"
        return _act("guide_reasoning", strategy, _LEVELS[level + 1], kc, task), None

    def _deepen(self, task: Task) -> None:
        """Time left after every component: go round again, least practised first, a level up."""
        order = sorted(task.knowledge_components, key=lambda k: (self._successes.get(k.id, 0), k.id))
        self._plan = [k.id for k in order]
        for k in order:
            self._level[k.id] = max(1, self._level[k.id])
            self._successes[k.id] = 0

    def _transfer(self, kc: KnowledgeComponent, task: Task) -> tuple[TutorAct, str | None]:
        if kc.links:
            return _act("trigger_transfer", None, "L3", kc, task, transfer_to=kc.links[0].discipline), None
        return _act("guide_reasoning", "follow_up_question", "L3", kc, task), None

    def _open_component(self, kc: KnowledgeComponent, task: Task, info: dict) -> tuple[TutorAct, str | None]:
        remaining = max(1, info["max_turns"] - info["turn"] - 1)  # the last turn is the summary
        share = remaining // max(1, len(self._plan or [kc.id]))
        self._budget[kc.id] = self._spent.get(kc.id, 0) + max(1 if self._level[kc.id] > 0 else 2, share)
        suspects = self._suspects.get(kc.id, [])
        if suspects and self._repairs.get(suspects[0], 0) == 0:
            self._repairs[suspects[0]] = 1
            if self._level[kc.id] == 0:  # a novice: the counterexample with a worked example of the right way
                return _act("introduce_concept", "scenario_question", "L1", kc, task,
                            misconception=suspects[0]), suspects[0]
            return _act("guide_reasoning", "scenario_question", "L2", kc, task, misconception=suspects[0]), suspects[0]
        if self._level[kc.id] == 0:  # novice: a worked example first, set against the component's classic mistake
            trap = next((m.id for m in task.misconceptions if m.kc == kc.id and self._repairs.get(m.id, 0) == 0), None)
            if trap is not None:
                self._repairs[trap] = 1
                return _act("introduce_concept", "scenario_question", "L1", kc, task, misconception=trap), trap
            return _act("introduce_concept", None, "L1", kc, task), None
        return _act("guide_reasoning", "break_down", _LEVELS[self._level[kc.id]], kc, task), None

    def _make_plan(self, info: dict, task: Task) -> None:
        acc: dict[str, list[bool]] = {k.id: [] for k in task.knowledge_components}
        reader = ContentReader.for_task(task)
        for r in info.get("pretest", []):
            shown = set(reader.read(r["response"]).affirmed) if not r["correct"] else set()
            for kc_id in r.get("kcs", []):
                if kc_id in acc:
                    acc[kc_id].append(bool(r["correct"]))
                    if not r["correct"]:
                        for m in task.misconceptions:
                            if m.kc == kc_id and (m.id in shown or _overlap(r["response"], m) >= 2) and \
                                    m.id not in self._suspects.get(kc_id, []):
                                self._suspects.setdefault(kc_id, []).append(m.id)
        est = {k: (sum(v) / len(v) if v else 0.5) for k, v in acc.items()}
        self._level = {k: (0 if e < 0.5 else 1) for k, e in est.items()}
        # a suspected misconception is the biggest barrier: those components first, then the weakest
        order = sorted(task.knowledge_components,
                       key=lambda k: (k.id not in self._suspects, est[k.id] >= 1.0, est[k.id], _depth(task, k)))
        # every component: one right multiple-choice answer is weak evidence (a guess is right 1 time in 4)
        self._plan = [k.id for k in order]

    def _diagnose(self, text: str, task: Task, kc: KnowledgeComponent) -> str | None:
        """The misconception the student's words show: one whose rule produces the student's own numbers (read
        with the content reader, the domain knowledge any teacher has), else the current component's first (2
        shared signature words suffice), any other only on strong evidence (4), else a suspect of the current
        component."""
        affirmed = [m for m in ContentReader.for_task(task).read(text).affirmed
                    if self._repairs.get(m, 0) < 2]
        if affirmed:
            return affirmed[0]
        def best_of(candidates, threshold):
            scored = [(_overlap(text, m), m.id) for m in candidates]
            scored = [x for x in scored if x[0] >= threshold]
            return max(scored)[1] if scored else None

        here = [m for m in task.misconceptions if m.kc == kc.id]
        found = best_of(here, 2) or best_of([m for m in task.misconceptions if m.kc != kc.id], 4)
        if found is None:
            found = next((m for m in self._suspects.get(kc.id, []) if self._repairs.get(m, 0) < 2), None)
        return found

    def speak(self, act: TutorAct, task: Task, misconception: str | None, info: dict) -> str:
        keys = [AnswerKey(item_id=r["item_id"], value=r["answer"]) for r in info.get("pretest", [])]
        keys.append(AnswerKey(item_id="task", value=task.answer))
        leaks = LeakDetector(keys, givens=(task.statement,))  # the keys read once for every try below
        if act.intent == "summarize":
            # the task's own summary may state the answer: summarise the ideas instead
            covered = [task.kc(k) for k in self._successes] or list(task.knowledge_components)
            ideas = " ".join(k.explanation.split(". ")[0].rstrip(".") + "." for k in covered[:3])
            text = f"To summarize what we worked on: {ideas} {END_MARKER}"
            if not leaks.find(text).leaked:
                return text
            return f"To summarize: we worked on {', '.join(k.name.lower() for k in covered)}. {END_MARKER}"
        for attempt in range(4):
            text = verbalise_act(act, task, self._rng, misconception=misconception)
            if attempt == 1 and misconception is not None:
                # the material beside the counterexample (a worked example, a question) states an answer: the
                # counterexample alone
                mis = next(m for m in task.misconceptions if m.id == misconception)
                text = f"Consider this scenario: {mis.counterexample}"
            if attempt == 2 and misconception is not None:
                # the counterexample's numbers collide with an answer: test the student's own idea instead
                mis = next(m for m in task.misconceptions if m.id == misconception)
                kc = task.kc(mis.kc)
                context = kc.contexts[0] if kc.contexts else task.statement
                text = (f"Consider this scenario: you said that {mis.belief[:1].lower() + mis.belief[1:]} "
                        f"Think of {context[:1].lower() + context[1:].rstrip('.')}. Does that idea still work there?")
            if not leaks.find(text).leaked:
                return text
            # the material for this act happens to contain an answer: ask for the student's reasoning instead
            act = _act("guide_reasoning", "follow_up_question", act.guidance_level,
                       task.kc(act.target_kc) if act.target_kc else None, task)
        kc = task.kc(act.target_kc) if act.target_kc else task.knowledge_components[0]
        # every move on this component states an answer: another of its questions, or one of its facts to reason
        # about, that does not -- before a question with no content of its own
        facts = kc.facts or tuple(x for x in re.split(r"(?<=[.!?])\s+", kc.explanation) if x)
        for text in (*(f"About {kc.name.lower()}: {q.text}" for q in kc.questions),
                     *(f"{fact} Why is that so?" for fact in facts)):
            if not leaks.find(text).leaked:
                return text
        return f"What would be your first step with {kc.name.lower()}? Why?"


class LecturerTutor(ActTutor):
    """Explains each component in turn (explanation, then a worked example; once in the lecture, a classic mistake
    and the case that disproves it), tells the solution and the test answers, and closes with a summary — without ever
    checking understanding or asking what the student thinks."""

    name = "lecturer"

    def on_reset(self) -> None:
        self._step = 0
        self._warned = False

    def act(self, observation: dict, info: dict) -> str:
        if info.get("observe_only", False):
            return ""
        if info.get("item") is not None:
            return super().act(observation, info)
        task = self._task_from(info)
        self._step += 1
        kcs = task.knowledge_components
        if self._step >= info["max_turns"]:
            return f"To summarize: {task.summary} {END_MARKER}"
        if self._step == info["max_turns"] - 1:
            steps = " ".join(task.solution)
            answers = "; ".join(f"{r['question']} -> {r['answer']}" for r in info.get("pretest", []))
            return f"Here is the solution: {steps} So the answer is {task.answer}. The test answers are: {answers}"
        # each component in turn: its explanation, then a worked example while the turns allow; every component
        # gets at least its explanation
        lessons = _lecture_plan(len(kcs), info["max_turns"] - 2)
        kc_index, part = lessons[min(self._step - 1, len(lessons) - 1)]
        kc = kcs[kc_index]
        if part == "explain":
            return f"Let me explain {kc.name}: {kc.explanation}"
        text = f"Here's a worked example of {kc.name}: {kc.worked_example}"
        traps = [m for m in task.misconceptions if m.kc == kc.id]
        if traps and not self._warned:  # a lecture warns once of a classic mistake, with the case that disproves it
            self._warned = True
            text += f" A common mistake to avoid: {traps[0].counterexample}"
        return text


def _lecture_plan(n_kcs: int, turns: int) -> list[tuple[int, str]]:
    """(component, explain|example) per teaching turn: pairs for as many components as fit, explanations for all."""
    turns = max(1, turns)
    paired = max(0, min(n_kcs, turns - n_kcs))
    plan = [(i, part) for i in range(n_kcs) for part in (("explain", "example") if i < paired else ("explain",))]
    while len(plan) < turns:  # spare turns: more worked examples, in order
        plan.append((len(plan) % n_kcs, "example"))
    return plan[:turns]


class RandomTutor(ActTutor):
    """Uniformly random dialogue acts from the env's act space (intent, strategy, level, KC slot), spoken by the
    verbaliser; a KC slot the task does not fill is an off-topic turn, as in ``action_mode="act"``."""

    name = "random"

    def choose(self, observation: dict, info: dict, task: Task) -> tuple[TutorAct, str | None]:
        intent_i, strategy_i, level_i, kc_i, _end = (int(self._rng.integers(n)) for n in ACT_NVEC)
        kcs = task.knowledge_components
        kc = kcs[kc_i] if kc_i < len(kcs) else None
        intent = INTENTS[intent_i]
        strategy = STRATEGIES[strategy_i] if strategy_i < len(STRATEGIES) else None
        transfer = kc.links[0].discipline if (kc is not None and kc.links and intent == "trigger_transfer") else None
        if intent == "summarize":
            kc = None
        return _act(intent, strategy, _LEVELS[level_i], kc, task, transfer_to=transfer), None


def _last_student_text(info: dict) -> str:
    for m in reversed(info.get("messages", [])):
        if m["role"] == "user":
            return m["content"]
    return ""


def _overlap(text: str, mis) -> int:
    words = set(_WORDS.findall(text.lower()))
    sig = set()
    for s in (*mis.wrong_steps, mis.belief):
        sig |= {w for w in _WORDS.findall(s.lower()) if len(w) > 3 or any(c.isdigit() for c in w)}
    return len(words & sig)


def _depth(task: Task, kc: KnowledgeComponent) -> int:
    return len(kc.prerequisites)
