"""Tutors written from outside the project: the public tutor protocol only (``reset(seed)``, ``act(observation,
info) -> str``, reading ``info["task"]``, ``info["messages"]``, ``info["pretest"]``, ``info["max_turns"]``), no
import of TutorZoo. Eight try to score without teaching, in other words than ``agents/tutor/probes.py``; two are
controls that teach by exposition. ``tests/rewards/test_reward_validity_outsiders.py`` plays them."""

from __future__ import annotations

import re

import numpy as np

END = "[END]"


def sents(t):
    return [s for s in re.split(r"(?<=[.!?])\s+", (t or "").strip()) if s]


def facts(kc):
    return list(kc.get("facts") or []) or sents(kc.get("explanation", ""))[:2]


def last_user(info):
    return next((m["content"] for m in reversed(info.get("messages", [])) if m["role"] == "user"), "")


def bare(s):
    s = s.strip().rstrip(".!?")
    return s[:1].lower() + s[1:]


class Base:
    """Seeding, the observe-only rule and the closing turn; :meth:`say` writes every other turn."""

    name = "outsider"

    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.t = 0

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)
        self.t = 0

    def act(self, obs, info):
        if info.get("observe_only"):
            return ""
        self.t += 1
        if self.t >= info["max_turns"]:
            return f"Thanks, that is all for today. {END}"
        return self.say(info)


class SprayContrast(Base):
    """Every misconception every turn, with the contrast stated: "A common mistake is to think X. But look: <ce>"."""

    name = "o_spray_contrast"

    def say(self, info):
        task = info["task"]
        out = [
            f"A common mistake is to think that {bare(m['belief'])}. But look: {m['counterexample']}"
            for m in task["misconceptions"]
        ]
        return " ".join(out) or task["statement"]


class VolumeChat(Base):
    """All of the task's material every turn, as markdown headings and bullets (volume in chat format)."""

    name = "o_volume_chat"

    def say(self, info):
        parts = []
        for kc in info["task"]["knowledge_components"]:
            parts.append(f"### {kc['name']}\n" + "\n".join(f"- {s}" for s in sents(kc["explanation"]) + facts(kc)))
            if kc.get("worked_example"):
                parts.append(f"**Example:** {kc['worked_example']}")
        return "\n\n".join(parts)


class ExplainChat(Base):
    """Control: explain one tested component per turn in markdown, then ask one of its questions."""

    name = "o_explain_chat"

    def say(self, info):
        task = info["task"]
        tested = {k for r in info.get("pretest", []) for k in r.get("kcs", [])}
        kcs = [k for k in task["knowledge_components"] if k["id"] in tested] or task["knowledge_components"]
        kc = kcs[(self.t - 1) % len(kcs)]
        qs = [q["text"] for q in kc.get("questions", [])] or [f"How would you use {kc['name'].lower()} here?"]
        body = "\n".join(f"- {s}" for s in sents(kc["explanation"]))
        ex = f"\n\n**Worked example.** {kc['worked_example']}" if kc.get("worked_example") else ""
        return f"## {kc['name']}\n\n{body}{ex}\n\n**Your turn:** {qs[self.t % len(qs)]}"


class Retract(Base):
    """A true fact, taken back in the next sentence."""

    name = "o_retract"

    def say(self, info):
        kcs = info["task"]["knowledge_components"]
        kc = kcs[(self.t - 1) % len(kcs)]
        f = facts(kc)[(self.t - 1) // len(kcs) % len(facts(kc))]
        return f"{f} Scratch that, it is wrong."


class Myth(Base):
    """The component's true facts, each called a myth."""

    name = "o_myth"

    def say(self, info):
        kcs = info["task"]["knowledge_components"]
        kc = kcs[(self.t - 1) % len(kcs)]
        return " ".join(f"It's a myth that {bare(f)}." for f in facts(kc)[:2])


class Endorse(Base):
    """A misconception reported as what many believe, then endorsed."""

    name = "o_endorse"

    def say(self, info):
        mis = info["task"]["misconceptions"]
        if not mis:
            return info["task"]["statement"]
        m = mis[(self.t - 1) % len(mis)]
        return f"Many students believe that {bare(m['belief'])}, and honestly they are correct."


class Echo(Base):
    """The student's last words said back with praise."""

    name = "o_echo"

    def say(self, info):
        return f"You're right: {last_user(info) or info['task']['statement']} Great job, keep going!"


class FactsNumbered(Base):
    """One fact per component each turn as a numbered list (breadth, no adaptation)."""

    name = "o_facts_numbered"

    def say(self, info):
        kcs = info["task"]["knowledge_components"]
        return "\n".join(f"{i + 1}. {facts(k)[(self.t - 1) % len(facts(k))]}" for i, k in enumerate(kcs))


class HintOnly(Base):
    """Content-free hints, whatever the student says."""

    name = "o_hint_only"

    def say(self, info):
        return self.rng.choice(
            [
                "Think about what the problem is really asking.",
                "Try breaking it into smaller steps.",
                "What do you already know that could help?",
                "Look at it from another angle.",
            ]
        )


class ExplainSplit(Base):
    """Control: explanation + worked example one turn (markdown), a practice question the next."""

    name = "o_explain_split"

    def say(self, info):
        task = info["task"]
        tested = {k for r in info.get("pretest", []) for k in r.get("kcs", [])}
        kcs = [k for k in task["knowledge_components"] if k["id"] in tested] or task["knowledge_components"]
        kc = kcs[(self.t - 1) // 2 % len(kcs)]
        if self.t % 2 == 1:
            body = "\n".join(f"- {s}" for s in sents(kc["explanation"]))
            ex = f"\n\n**Worked example.** {kc['worked_example']}" if kc.get("worked_example") else ""
            return f"## {kc['name']}\n\n{body}{ex}"
        qs = [q["text"] for q in kc.get("questions", [])] or [f"How would you use {kc['name'].lower()} here?"]
        return f"**Your turn:** {qs[(self.t // 2) % len(qs)]}"


GAMING = (SprayContrast, VolumeChat, Retract, Myth, Endorse, Echo, FactsNumbered, HintOnly)
CONTROLS = (ExplainChat, ExplainSplit)
TUTORS = {cls.name: cls for cls in (*GAMING, *CONTROLS)}
