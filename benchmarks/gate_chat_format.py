"""Socratic's content written the way a chat model writes it, against socratic itself, on paired episodes.

``chat_socratic`` says exactly what socratic says, re-formatted: a warm opener, each lead-in ("Let's test that
idea with a counterexample:", "Here's a worked example of ...:") as a ``###`` heading (``--headers bold``: a bold
line), the sentences under it as bullets, arithmetic in LaTeX (``$\\frac{1}{2} \\times 10$``) and the closing
question as ``**Your turn:** ...``. Formatting is not content and not intent, so it must keep socratic's learning
gain and lose no reward beyond noise. ``tests/rewards/test_gate_chat_format.py`` asserts it on a small sample.

    python benchmarks/gate_chat_format.py --seeds 4 --per-family 2      # math + stem, 4 persona families
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reward_validity import paired, paired_map, specs  # noqa: E402

from tutorzoo.agents.student import SimulatedStudent  # noqa: E402
from tutorzoo.agents.tutor import make_tutor  # noqa: E402
from tutorzoo.agents.tutor.builtin import SocraticTutor  # noqa: E402
from tutorzoo.envs.annotate import END_MARKER  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.eval.rollout import run_episode  # noqa: E402
from tutorzoo.rewards.rubric import load_rubric  # noqa: E402

_OPENERS = ("Great question, let's work through it together!", "Good thinking so far.", "Nice, let's keep going!",
            "You're doing well, let's look closer.")
# a lead-in: a short clause that ends in a colon at a sentence's start ("Consider this scenario:", "First:")
_LEAD = re.compile(r"(?:^|(?<=[.?!]\s))([A-Z][^.?!:\n]{2,70}):\s+")
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z0-9$])")
# arithmetic a chat model puts in LaTeX: numbers joined by operators ("1/2 × 11 × 10", "3x + 4 = 19")
_NUMBER = r"-?\(?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\)?"
_MATH = re.compile(rf"(?<![\w$,.]){_NUMBER}(?:\s*[/×÷*+\-=]\s*{_NUMBER})+(?![\w$]|[,.]\d)")


def _latex(match: re.Match[str]) -> str:
    expr = re.sub(r"(?<![\d,])(\d+)\s*/\s*(\d+)(?![\d,])", r"\\frac{\1}{\2}", match.group(0))
    return "$" + re.sub(r"\s*([×÷*])\s*", lambda m: {"÷": r" \div "}.get(m.group(1), r" \times "), expr) + "$"


def chat_format(text: str, turn: int, headers: str = "###") -> str:
    """``text`` as a chat model lays it out (module docstring); ``headers`` is ``"###"`` or ``"bold"``."""
    end = text.rstrip().endswith(END_MARKER)
    body = text.rstrip()[: -len(END_MARKER)].rstrip() if end else text.strip()
    parts = _LEAD.split(body)  # [before, lead, after, lead, after, ...]
    sections = [(None, parts[0])] + [(parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
    question = ""
    lines = [_OPENERS[turn % len(_OPENERS)], ""]
    for lead, chunk in sections:
        sentences = [s.strip() for s in _SENTENCE.split(chunk.strip()) if s.strip()]
        if sentences and sentences[-1].endswith("?") and (lead, chunk) == sections[-1]:
            question = sentences.pop()
        if not lead and not sentences:
            continue
        if lead:
            lines.append(f"### {lead}" if headers == "###" else f"**{lead}**")
        lines += [f"- {_MATH.sub(_latex, s)}" for s in sentences]
        lines.append("")
    if question:
        lines.append(f"**Your turn:** {_MATH.sub(_latex, question)}")
    out = "\n".join(lines).strip()
    return f"{out}\n\n{END_MARKER}" if end else out


class ChatSocratic(SocraticTutor):
    """Socratic's words, laid out as a chat model writes them (``###`` headings, bullets, bold, LaTeX)."""

    name = "chat_socratic"
    headers = "###"

    def on_reset(self) -> None:
        super().on_reset()
        self._said = 0

    def speak(self, act, task, misconception, info: dict) -> str:
        text = chat_format(super().speak(act, task, misconception, info), self._said, self.headers)
        self._said += 1
        return text


class ChatSocraticBold(ChatSocratic):
    """:class:`ChatSocratic` with bold lines in place of ``###`` headings."""

    name = "chat_socratic_bold"
    headers = "bold"


TUTORS = {cls.name: cls for cls in (ChatSocratic, ChatSocraticBold)}


def play(spec: EpisodeSpec, name: str) -> dict:
    tutor = TUTORS[name]() if name in TUTORS else make_tutor(name)
    return run_episode(spec, tutor, SimulatedStudent(spec.persona), name, reward=load_rubric("default"))


def _row(job: tuple[EpisodeSpec, str]) -> tuple[float, float, float]:
    spec, name = job
    rec = play(spec, name)
    return float(rec["learning_gain"] or 0.0), float(rec["reward"]), float(rec["reward_components"]["format_penalty"])


def measure(tutors: list[str], spec_list: list[EpisodeSpec], workers: int = 2) -> dict[str, np.ndarray]:
    """``{tutor: array (n_specs, 3)}`` of (gain, reward, summed format penalty) on the same specs."""
    return paired_map(_row, tutors, spec_list, workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--per-family", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    spec_list = specs(args.seeds, per_family=args.per_family)
    tutors = ["socratic", *TUTORS]
    res = measure(tutors, spec_list, args.workers)
    base = res["socratic"]
    print(f"{len(spec_list)} paired specs per tutor (math + stem); difference from socratic ± paired s.e.")
    print(f"{'tutor':20s} {'gain':>7s} {'reward':>7s} {'format':>7s} {'Δgain':>16s} {'Δreward':>16s} {'gain/soc':>8s}")
    for t in tutors:
        g, r, f = res[t][:, 0], res[t][:, 1], res[t][:, 2]
        dg, sg = paired(g, base[:, 0])
        dr, sr = paired(r, base[:, 1])
        ratio = g.mean() / base[:, 0].mean() if base[:, 0].mean() else float("nan")
        print(f"{t:20s} {g.mean():+7.3f} {r.mean():+7.3f} {f.mean():+7.3f} {dg:+8.3f} ± {sg:5.3f} {dr:+8.3f} ± "
              f"{sr:5.3f} {ratio:8.2f}")


if __name__ == "__main__":
    main()
