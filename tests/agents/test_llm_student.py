"""The LLM student: "llm" mode (the model answers tests and talks) and "hybrid" mode (the cognitive model
decides, the model only rewords, the ground-truth labels survive)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tutorzoo.agents.backends.base import GenerationConfig, GenerationResult
from tutorzoo.agents.student import SimulatedStudent, get_persona
from tutorzoo.agents.student.llm import LLMStudent, describe_persona
from tutorzoo.agents.tutor.builtin import SocraticTutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.errors import ConfigError
from tutorzoo.eval.rollout import run_episode

SPEC = EpisodeSpec(task_set="math", persona="weak_knowledge_partly_wrong", seed=3, protocol={"max_turns": 4})
MCQ = EpisodeSpec(task_set="mcq", persona="anxious", seed=1, protocol={"max_turns": 3})
LABELS = ("speaker", "student_cognition_state", "cognitive_level", "discipline", "discipline_transfer")


class ScriptedBackend:
    """Records every request and answers with ``reply(messages)`` (None = a failed request)."""

    name = "scripted"

    def __init__(self, reply) -> None:
        self.reply = reply
        self.requests: list[tuple[list[dict], GenerationConfig]] = []

    def generate(self, conversations: list[list[dict]], config: GenerationConfig) -> list[GenerationResult]:
        out = []
        for messages in conversations:
            self.requests.append((messages, config))
            text = self.reply(messages)
            out.append(GenerationResult(text=text, error=None if text is not None else "model server down"))
        return out


def plan_of(messages: list[dict]) -> str:
    return re.search(r"What the student means to say next: (.*?)\n\nRewrite", messages[-1]["content"], re.S).group(1)


def episode(spec: EpisodeSpec, student) -> dict:
    return run_episode(spec, SocraticTutor(), student, tutor_name="socratic")


def student_turns(record: dict) -> list[dict]:
    return [t for t in record["transcript"] if t["speaker"] == "student"]


# -- "llm" mode --------------------------------------------------------------------------------------------
def test_llm_mode_answers_the_tests_itself_and_talks_in_plain_text() -> None:
    backend = ScriptedBackend(lambda m: "I think it is the second one. The answer is (B).")
    student = LLMStudent(backend, persona="anxious", mode="llm")
    record = episode(MCQ, student)
    assert record["failures"] == [] and record["pretest"] and record["posttest"]
    assert all(r["response"] == "I think it is the second one. The answer is (B)." for r in record["pretest"])
    assert all(r["extracted"] == "B" for r in record["pretest"] + record["posttest"])
    turns = student_turns(record)
    # plain text: the env labels it neutrally; the LLM annotator labels it afterwards
    assert turns and {(t["student_cognition_state"], t["cognitive_level"]) for t in turns} == {
        ("vague_understanding", "understand")}
    first_messages, first_config = backend.requests[0]
    system = first_messages[0]["content"]
    assert first_messages[0]["role"] == "system" and "anxious" in system and "The answer is (X)." in system
    assert "(A)" in first_messages[-1]["content"]  # the student sees the options; the tutor never does
    assert first_config.max_new_tokens == 260
    dialogue = [m for m, _ in backend.requests if "Pre-test question" not in m[-1]["content"]
                and "Post-test question" not in m[-1]["content"]]
    assert dialogue[0][-1]["content"].startswith("Start the dialogue")
    assert all(m[-1]["role"] == "user" for m in dialogue)


def test_llm_mode_failure_is_recorded_as_a_student_failure() -> None:
    record = episode(SPEC, LLMStudent(ScriptedBackend(lambda m: None), persona=None, mode="llm"))
    assert record["ended_by"] == "failure"
    assert record["failures"][0]["agent"] == "student"
    assert record["failures"][0]["error"] == "StudentBackendError: model server down"


def test_llm_mode_seeds_each_turn_from_the_reset_seed() -> None:
    backend = ScriptedBackend(lambda m: "Hmm. The answer is 3.")
    student = LLMStudent(backend, persona="chatty")
    episode(SPEC, student)
    seeds = [c.seed for _, c in backend.requests]
    backend.requests.clear()
    episode(SPEC, student)
    assert seeds == [c.seed for _, c in backend.requests]
    assert len(set(seeds)) == len(seeds) and None not in seeds


# -- "hybrid" mode -----------------------------------------------------------------------------------------
def test_hybrid_keeps_the_simulated_students_labels_and_answers() -> None:
    reference = episode(SPEC, SimulatedStudent(SPEC.persona))
    backend = ScriptedBackend(lambda m: "Well, " + plan_of(m))
    student = LLMStudent(backend, persona=SPEC.persona, mode="hybrid")
    record = episode(SPEC, student)
    ours, theirs = student_turns(record), student_turns(reference)
    assert [[t[k] for k in LABELS] for t in ours] == [[t[k] for k in LABELS] for t in theirs]
    assert [t["utterance"] for t in ours] == ["Well, " + t["utterance"] for t in theirs]
    assert json.dumps(record["pretest"]) == json.dumps(reference["pretest"])
    assert json.dumps(record["posttest"]) == json.dumps(reference["posttest"])
    assert student.rewrites == len(ours) and student.fallbacks == 0
    assert record["privileged_student_state"]["utterance_source"] == "llm"
    prompt = backend.requests[0][0][-1]["content"]
    assert "weak" not in describe_persona(None) and describe_persona(get_persona(SPEC.persona)) in prompt


def test_hybrid_falls_back_to_the_template_text_and_counts_it() -> None:
    reference = episode(SPEC, SimulatedStudent(SPEC.persona))
    student = LLMStudent(ScriptedBackend(lambda m: None), persona=SPEC.persona, mode="hybrid")
    record = episode(SPEC, student)
    assert json.dumps(record["transcript"]) == json.dumps(reference["transcript"])
    assert student.fallbacks == len(student_turns(record)) > 0 and student.rewrites == 0
    assert record["privileged_student_state"]["utterance_source"] == "template"


@pytest.mark.parametrize(
    ("reply", "plan", "accepted"),
    [
        ("So I add 3 and 4 to get 7?", "I add 3 and 4, which gives 7.", "So I add 3 and 4 to get 7?"),
        ('Student: "I am lost here."', "I don't follow.", "I am lost here."),
        ("I add 3 and 5 to get 8.", "I add 3 and 4, which gives 7.", None),
        ("I add three and four, which gives seven.", "I add 3 and 4, which gives 7.",
         "I add three and four, which gives seven."),
        ("It must be 12 then.", "I am not sure what to do.", None),
        ("", "I am not sure.", None),
        ("blah " * 200, "I am not sure.", None),
        (None, "I am not sure.", None),
    ],
    ids=["same-numbers", "label-and-quotes-stripped", "changed-number", "number-words-count", "added-number",
         "empty", "rambling", "failed-request"],
)
def test_a_rewording_must_keep_the_plans_numbers(reply: str | None, plan: str, accepted: str | None) -> None:
    assert LLMStudent._accept(reply, plan, {}) == accepted


def test_a_rewording_may_not_state_the_tasks_answer() -> None:
    class Task:
        answer = "the denominator"

    assert LLMStudent._accept("It is the denominator!", "I am unsure which part.", {"task": Task()}) is None
    assert LLMStudent._accept("Which part, then?", "I am unsure which part.", {"task": Task()}) == "Which part, then?"


def test_hybrid_with_the_tiny_model_keeps_labels_and_test_answers(tiny_model_dir: Path) -> None:
    pytest.importorskip("torch")
    from tutorzoo.agents.backends.hf import HFBackend

    backend = HFBackend(str(tiny_model_dir), threads=1)
    student = LLMStudent(backend, persona=SPEC.persona, mode="hybrid", config=GenerationConfig(max_new_tokens=30))
    planned = []
    act = student.simulated.act
    student.simulated.act = lambda obs, info: planned.append(act(obs, info)) or planned[-1]
    record = episode(SPEC, student)
    turns = student_turns(record)
    plans = [p for p in planned if not isinstance(p, str)]
    assert record["failures"] == [] and len(turns) == len(plans) == student.rewrites + student.fallbacks
    assert [(t["student_cognition_state"], t["cognitive_level"]) for t in turns] == [
        (p.cognition_state, p.cognitive_level) for p in plans]
    reference = episode(SPEC, SimulatedStudent(SPEC.persona))
    assert json.dumps(record["pretest"]) == json.dumps(reference["pretest"])  # before any rewording: identical


def test_llm_mode_with_the_tiny_model_is_reproducible(tiny_model_dir: Path) -> None:
    pytest.importorskip("torch")
    from tutorzoo.agents.backends.hf import HFBackend

    backend = HFBackend(str(tiny_model_dir), threads=1)

    def run() -> dict:
        return episode(MCQ, LLMStudent(backend, persona="anxious", config=GenerationConfig(max_new_tokens=20)))

    first, again = run(), run()
    assert first["failures"] == [] and len(first["pretest"]) >= 1
    assert json.dumps(first["transcript"]) == json.dumps(again["transcript"])
    assert json.dumps(first["pretest"]) == json.dumps(again["pretest"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"mode": "hybrid"}, "needs a persona"), ({"mode": "oracle"}, "mode must be one of")],
    ids=["hybrid-without-persona", "unknown-mode"],
)
def test_bad_student_config_is_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        LLMStudent(ScriptedBackend(lambda m: ""), **kwargs)


def test_personas_sound_different() -> None:
    texts = {name: describe_persona(get_persona(name)) for name in ("anxious", "chatty", "terse", "fast_learner")}
    assert len(set(texts.values())) == len(texts)
    assert "anxious" in texts["anxious"] and "very few words" in texts["terse"]
