"""The content gate's boundaries and fail-closed cases, and hard mode on clean and leaking episodes.

Each case fails on a small bug in rewards/gate.py or rewards/rubric.py (see .ci/mutation.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_rewards import CONTENT, TASK, student, tutor

from tutorzoo.envs.errors import ConfigError
from tutorzoo.rewards import ContentGate, Rubric, gate, load_rubric, make_term
from tutorzoo.rewards.rubric import pedagogy_ok
from tutorzoo.rewards.terms import TERM_NAMES, canonical_transcript, format_violations, gated_transcript, task_of

PLAIN = ContentGate()  # no task: only the cue and filler lists are removed


def turn(text: str, **fields: object) -> dict:
    rec = {"speaker": "tutor", "utterance": text, "target_kc": "k", "reveals_answer": False, "invalid": False}
    rec.update(fields)
    return rec


# --- fail closed ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("fields", "counts"), [
    pytest.param({}, True, id="clean-verdict-counts"),
    pytest.param({"reveals_answer": None}, False, id="missing-verdict-fails-closed"),
    pytest.param({"reveals_answer": "no"}, False, id="non-boolean-verdict-fails-closed"),
    pytest.param({"reveals_answer": 0}, False, id="falsy-int-verdict-fails-closed"),
    pytest.param({"reveals_answer": True}, False, id="leak"),
    pytest.param({"invalid": True}, False, id="invalid-turn"),
    pytest.param({"target_kc": None}, False, id="off-topic"),
])
def test_gate_fails_closed(fields: dict, counts: bool) -> None:
    assert PLAIN.counts(turn("pizzas slices share", **fields)) is counts


def test_gate_missing_verdict_key_fails_closed() -> None:
    rec = turn("pizzas slices share")
    del rec["reveals_answer"]
    assert PLAIN.counts(rec) is False


def test_gate_missing_invalid_flag_is_a_valid_turn() -> None:
    rec = turn("pizzas slices share")
    del rec["invalid"]
    assert PLAIN.counts(rec) is True


# --- boundaries ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "counts"), [
    pytest.param("pizzas slices", True, id="two-content-words-is-the-minimum"),
    pytest.param("pizzas", False, id="one-content-word"),
    pytest.param("imagine the pizzas, step by step", False, id="cue-and-filler-do-not-count"),
])
def test_gate_min_content_words_default_is_two(text: str, counts: bool) -> None:
    assert PLAIN.counts(turn(text)) is counts
    assert ContentGate.for_task(None).counts(turn(text)) is counts


def test_gate_min_content_words_is_a_parameter() -> None:
    three = ContentGate(min_content_words=3)
    assert (three.counts(turn("pizzas slices")), three.counts(turn("pizzas slices share"))) == (False, True)


@pytest.mark.parametrize(("earlier", "counts"), [
    pytest.param("pizzas slices share friends", False, id="jaccard-1.0-is-a-copy"),
    pytest.param("pizzas slices share friends extra", False, id="jaccard-0.8-exactly-is-a-copy"),
    pytest.param("pizzas slices share", True, id="jaccard-0.75-counts"),  # 3 / 4
    pytest.param("oranges apples", True, id="disjoint-counts"),
    pytest.param("imagine the steps", True, id="earlier-turn-without-content-counts"),
])
def test_gate_near_copy_boundary_is_max_overlap_inclusive(earlier: str, counts: bool) -> None:
    assert PLAIN.counts(turn("pizzas slices share friends"), earlier_tutor_texts=[earlier]) is counts


def test_gate_near_copy_threshold_is_a_parameter() -> None:
    strict = ContentGate(max_overlap=0.5)  # 2 of 4 shared words: 0.5 >= 0.5 is a copy
    assert strict.counts(turn("pizzas slices share friends"), earlier_tutor_texts=["pizzas slices"]) is False
    assert PLAIN.counts(turn("pizzas slices share friends"), earlier_tutor_texts=["pizzas slices"]) is True


def test_gate_for_task_defaults() -> None:
    g = ContentGate.for_task(TASK)
    assert (g.min_content_words, g.max_overlap) == (2, 0.8)
    assert ContentGate.for_task(None).topic == frozenset()
    kc_words = gate.words(" ".join(TASK.knowledge_components[0].keywords))
    assert kc_words and kc_words <= g.topic


def test_gate_topic_words_do_not_count_as_content() -> None:
    g = ContentGate(topic=frozenset({"fractions", "denominators"}))
    assert g.content_words("fractions denominators pizzas") == {"pizzas"}
    assert g.counts(turn("fractions denominators pizzas")) is False
    assert PLAIN.counts(turn("fractions denominators pizzas")) is True


def test_gate_words_copied_from_the_student_do_not_count() -> None:
    assert PLAIN.content_words("pizzas slices share", copied_from="pizzas slices") == {"share"}
    assert PLAIN.counts(turn("pizzas slices share"), previous_student_text="pizzas slices") is False


def test_gate_mask_marks_student_turns_false_and_reads_the_last_student_turn() -> None:
    transcript = [
        {"speaker": "student", "utterance": "pizzas slices"},
        turn("pizzas slices share"),  # copies the student: one content word left
        {"speaker": "student", "utterance": "ok"},
        turn("oranges apples bananas"),
        turn("oranges apples bananas"),  # a copy of the earlier tutor turn
    ]
    assert PLAIN.mask(transcript) == [False, False, False, True, False]


# --- the vocabulary file: a bad file is a ConfigError naming it ----------------------------------------------


@pytest.fixture
def words_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "gate_words.yaml"
    monkeypatch.setattr(gate, "_WORDS_FILE", path)
    gate._vocabulary.cache_clear()
    yield path
    gate._vocabulary.cache_clear()


@pytest.mark.parametrize(("text", "fragment"), [
    pytest.param("cue: [a]\nfiller: [b]\naddress: []\n", "top-level keys", id="missing-key"),
    pytest.param("- a\n", "top-level keys", id="not-a-mapping"),
    pytest.param("cue: [a]\nfiller: b\naddress: []\naddress_words: []\n", "'filler' must be a list", id="not-a-list"),
    pytest.param("cue: [a, 1]\nfiller: [b]\naddress: []\naddress_words: []\n", "'cue' must be a list",
                 id="not-strings"),
    pytest.param("cue: [a]\nfiller: [b]\naddress: ['(']\naddress_words: []\n", "not a valid regular expression",
                 id="bad-regex"),
    pytest.param("cue: [a]\nfiller: [b]\naddress: []\naddress_words: [reward model]\n", "single words of 4+",
                 id="address-word-not-a-word"),
])
def test_gate_words_file_errors(words_file: Path, text: str, fragment: str) -> None:
    words_file.write_text(text)
    with pytest.raises(ConfigError, match="gate_words.yaml") as err:
        gate.addresses_judge("hello")
    assert fragment in str(err.value)


def test_gate_words_file_is_lower_cased(words_file: Path) -> None:
    words_file.write_text("cue: [Pizzas]\nfiller: [SLICES]\naddress: ['grader']\naddress_words: [Grader]\n")
    assert PLAIN.content_words("pizzas slices share") == {"share"}
    assert gate.addresses_judge("Dear GRADER") is True
    assert gate.addresses_judge("Dear GR4DER") is True  # repaired to an address word of the file


# --- hard mode -----------------------------------------------------------------------------------------------


def _clean_record() -> dict:
    return {"posttest_score": 0.75, "ended_by": "max_turns", "transcript": [student(), tutor(CONTENT)]}


def test_hard_mode_clean_episode_keeps_its_reward() -> None:
    rubric = Rubric({"posttest_solve": 1.0}, lam=0.75, hard=True)
    comps = rubric.episode(_clean_record())
    assert comps == {"posttest_solve": 0.75, "pedagogy": 0.0}
    assert rubric.weigh(comps) == 0.75
    # GRPO's reward functions agree with the env: no forfeit without a leak
    funcs, weights = rubric.reward_funcs()
    record = {**_clean_record(), "reward_components": comps}
    parts = [w * (f(["p"], ["c"], episode=[record])[0] or 0.0) for f, w in zip(funcs, weights, strict=True)]
    assert [f.__name__ for f in funcs] == ["posttest_solve", "pedagogy", "forfeit"]
    assert parts == [0.75, 0.0, 0.0]


def test_hard_mode_leak_forfeits_to_minus_lambda() -> None:
    rubric = Rubric({"posttest_solve": 2.0, "leak_penalty": 0.5}, lam=0.75, hard=True)
    earlier = {"leak_penalty": -1.0, "pedagogy": -0.75}  # credited at the leaking turn
    record = {"posttest_score": 0.75, "ended_by": "leak", "reward_components": earlier,
              "transcript": [tutor(CONTENT, leak=True)]}
    comps = rubric.episode(record)
    assert comps == {"posttest_solve": 0.75, "forfeit": pytest.approx(-(2.0 * 0.75 + 0.5 * -1.0))}
    assert rubric.total({"reward_components": {**earlier, "posttest_solve": 0.75, "forfeit": comps["forfeit"]}}) \
        == pytest.approx(-0.75)
    funcs, weights = rubric.reward_funcs()
    full = {**record, "reward_components": {**earlier, **comps}}
    total = sum(w * (f(["p"], ["c"], episode=[full])[0] or 0.0) for f, w in zip(funcs, weights, strict=True))
    assert total == pytest.approx(-0.75)


def test_soft_mode_leak_is_not_forfeited() -> None:
    rubric = Rubric({"posttest_solve": 1.0}, lam=0.5)
    record = {"posttest_score": 0.75, "ended_by": "leak", "transcript": [tutor(CONTENT, leak=True)]}
    assert rubric.episode(record) == {"posttest_solve": 0.75, "pedagogy": -0.5}
    assert [f.__name__ for f in rubric.reward_funcs()[0]] == ["posttest_solve", "pedagogy"]


def test_lambda_zero_adds_no_pedagogy_component() -> None:
    assert Rubric({"posttest_solve": 1.0}).episode(_clean_record()) == {"posttest_solve": 0.75}


@pytest.mark.parametrize(("transcript", "expected"), [
    pytest.param([tutor(CONTENT), student()], 1.0, id="clean"),
    pytest.param([tutor(CONTENT), tutor(CONTENT, leak=None)], 0.0, id="missing-verdict"),
    pytest.param([{**student(), "reveals_answer": None}], 1.0, id="student-turns-are-not-judged"),
    pytest.param([], 1.0, id="no-turns"),
])
def test_pedagogy_ok(transcript: list, expected: float) -> None:
    assert pedagogy_ok(transcript) == expected


def test_leak_penalty_components() -> None:
    assert Rubric({"posttest_solve": 1.0}, lam=0.5).leak_penalty(tutor(CONTENT, leak=True)) == {"pedagogy": -0.5}
    with_term = Rubric({"leak_penalty": 1.0}, lam=0.5).leak_penalty(tutor(CONTENT, leak=True))
    assert with_term == {"pedagogy": -0.5, "leak_penalty": -1.0}


@pytest.mark.parametrize(("terms", "lam", "fragment"), [
    pytest.param({"posttest_solve": 1.0}, -0.1, "lam must be >= 0", id="negative-lam"),
    pytest.param({"posttest_solve": -0.5}, 0.0, "non-negative", id="negative-weight"),
    pytest.param({"posttest_solve": "1"}, 0.0, "non-negative", id="string-weight"),
])
def test_rubric_rejects_bad_weights(terms: dict, lam: float, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        Rubric(terms, lam=lam)


def test_rubric_accepts_zero_weight_and_zero_lambda() -> None:
    rubric = Rubric({"posttest_solve": 0.0}, lam=0.0)
    assert (rubric.weights, rubric.lam, rubric.hard, rubric.ends_on_leak) == ({"posttest_solve": 0.0}, 0.0, False,
                                                                               False)


# --- terms ---------------------------------------------------------------------------------------------------


def test_trl_episode_column_for_exchange_terms() -> None:
    summed = {"transcript": [tutor("x" * 700), student(), tutor("x" * 650)], "reward_components": {}}
    # a text-only term sums itself over the tutor turns when the record did not log it
    assert make_term("length_penalty").trl()(["p"], ["c"], episode=[summed]) == [pytest.approx(-(100 + 50) / 600)]
    logged = {**summed, "reward_components": {"length_penalty": -0.25, "mastery_gain": 0.5}}
    assert make_term("length_penalty").trl()(["p"], ["c"], episode=[logged]) == [-0.25]
    assert make_term("mastery_gain").trl()(["p"], ["c"], episode=[logged]) == [0.5]
    assert make_term("mastery_gain").trl()(["p"], ["c"], episode=[summed]) == [None]  # not text-only: unknown


@pytest.mark.parametrize(("completion", "expected"), [
    pytest.param("x" * 660, -0.1, id="string"),
    pytest.param([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x" * 660}], -0.1, id="chat"),
    pytest.param([{"role": "assistant", "content": None}], 0.0, id="chat-without-text"),
    pytest.param([], 0.0, id="empty-list"),
    pytest.param(42, 0.0, id="not-text"),
])
def test_trl_text_only_term_reads_the_completion(completion: object, expected: float) -> None:
    assert make_term("length_penalty").trl()(["p"], [completion]) == [pytest.approx(expected)]


@pytest.mark.parametrize(("value", "expected"), [(0.5, 0.5), (1, 1.0), (True, None), ("0.5", None), (None, None)])
def test_episode_field_terms_read_numbers_only(value: object, expected: float | None) -> None:
    assert make_term("learning_gain").fn({"learning_gain": value}) == expected
    assert make_term("posttest_solve").fn({"posttest_score": value}) == expected
    assert make_term("learning_gain_same").fn({"learning_gain_same": value}) == expected


@pytest.mark.parametrize(("n", "max_chars", "expected"), [
    (600, 600, 0.0), (601, 600, -1 / 600), (1200, 600, -1.0), (5000, 600, -1.0), (150, 100, -0.5), (0, 600, 0.0),
])
def test_length_penalty(n: int, max_chars: int, expected: float) -> None:
    assert make_term("length_penalty", max_chars=max_chars).fn({"tutor": {"utterance": "x" * n}}) == \
        pytest.approx(expected)


@pytest.mark.parametrize(("text", "invalid", "max_questions", "expected"), [
    ("Why? How? What?", False, 3, []),
    ("Why? How? What? Who?", False, 3, ["question_volley"]),
    ("Why? How?", False, 1, ["question_volley"]),
    ("123 456", False, 3, ["empty"]),
    ("   ", False, 3, ["empty"]),
    ("A fine turn.", True, 3, ["empty"]),
    ("Recap done. [ END ]", False, 3, []),
    ("Recap [end] more", False, 3, ["end_marker_not_last"]),
    ("Dear grader, why?", False, 3, ["addresses_judge"]),
])
def test_format_violations_table(text: str, invalid: bool, max_questions: int, expected: list) -> None:
    assert format_violations(text, invalid, max_questions) == expected
    penalty = make_term("format_penalty", max_questions=max_questions).fn(
        {"tutor": {"utterance": text, "invalid": invalid}})
    assert penalty == -min(1.0, 0.5 * len(expected))


@pytest.mark.parametrize(("reveals", "expected"), [(False, 0.0), (True, -1.0), (None, -1.0), (0, -1.0)])
def test_leak_penalty_fails_closed(reveals: object, expected: float) -> None:
    assert make_term("leak_penalty").fn({"tutor": {"reveals_answer": reveals}}) == expected
    assert make_term("leak_penalty").fn({}) == -1.0


def _ex(t: dict, before: dict, after: dict, history: list | None = None) -> dict:
    return {"task": None, "tutor": t, "student": student(), "state_before": before, "state_after": after,
            "history": history if history is not None else [t], "turn": 1}


GOOD_TURN = {"speaker": "tutor", "utterance": "pizzas slices share friends", "reveals_answer": False,
             "target_kc": "k", "invalid": False}
BAD_TURN = {**GOOD_TURN, "utterance": "imagine that"}


@pytest.mark.parametrize(("before", "after", "turn", "expected"), [
    pytest.param({"mastery": {"a": 0.2, "b": 0.5}}, {"mastery": {"a": 0.6, "b": 0.5}}, GOOD_TURN, 0.2, id="mean"),
    pytest.param({"mastery": {"a": 0.2}}, {"mastery": {"a": 0.6, "c": 0.9}}, GOOD_TURN, 0.2, id="new-kc-no-gain"),
    pytest.param({"mastery": {"a": 0.2}}, {"mastery": {"a": 0.6}}, BAD_TURN, 0.0, id="gated"),
    pytest.param({"mastery": {"a": 0.6}}, {"mastery": {"a": 0.2}}, GOOD_TURN, -0.4, id="loss"),
    pytest.param({}, {"mastery": {"a": 0.6}}, GOOD_TURN, None, id="no-before"),
    pytest.param({"mastery": {"a": 0.6}}, {"mastery": {}}, GOOD_TURN, None, id="empty-after"),
])
def test_mastery_gain_by_hand(before: dict, after: dict, turn: dict, expected: float | None) -> None:
    value = make_term("mastery_gain").fn(_ex(turn, before, after))
    assert value == (pytest.approx(expected) if expected is not None else None)


@pytest.mark.parametrize(("before", "after", "turn", "expected"), [
    pytest.param({"m": "active"}, {"m": "repaired"}, GOOD_TURN, 1.0, id="repaired"),
    pytest.param({"m": "suppressed"}, {"m": "repaired"}, GOOD_TURN, 1.0, id="suppressed-repaired"),
    pytest.param({"m": "active"}, {"m": "suppressed"}, GOOD_TURN, 0.25, id="suppressed"),
    pytest.param({"m": "suppressed"}, {"m": "active"}, GOOD_TURN, -1.0, id="relapse"),
    pytest.param({"m": "repaired"}, {"m": "active"}, BAD_TURN, -1.0, id="relapse-counts-without-content"),
    pytest.param({"m": "active"}, {"m": "repaired"}, BAD_TURN, 0.0, id="progress-needs-content"),
    pytest.param({"m": "active", "n": "active"}, {"m": "repaired", "n": "active"}, GOOD_TURN, 0.5, id="mean"),
    pytest.param({"m": "active"}, {}, GOOD_TURN, 0.0, id="no-misconception"),
])
def test_misconception_repair_by_hand(before: dict, after: dict, turn: dict, expected: float) -> None:
    ex = _ex(turn, {"misconceptions": before}, {"misconceptions": after})
    assert make_term("misconception_repair").fn(ex) == pytest.approx(expected)
    assert make_term("misconception_repair").fn(_ex(turn, {}, {"misconceptions": after})) is None


def test_gated_exchange_looks_only_before_the_turn() -> None:
    this = dict(GOOD_TURN)
    copy_before = [dict(GOOD_TURN), student(), this, student()]
    copy_after = [this, student(), dict(GOOD_TURN)]
    echo = [student("pizzas slices share friends"), this]
    m = {"mastery": {"a": 0.2}}, {"mastery": {"a": 0.6}}
    assert make_term("mastery_gain").fn(_ex(this, *m, history=copy_before)) == 0.0
    assert make_term("mastery_gain").fn(_ex(this, *m, history=copy_after)) == pytest.approx(0.4)
    assert make_term("mastery_gain").fn(_ex(this, *m, history=echo)) == 0.0
    assert make_term("mastery_gain", min_content_words=5).fn(_ex(this, *m)) == 0.0


def test_sid_terms_on_empty_and_unknown_records() -> None:
    assert make_term("sid_SD").fn({"transcript": []}) is None
    assert make_term("sid_BP").fn({"transcript": [tutor(CONTENT)]}) is None  # no student level
    assert task_of({"config": {"task_set": "nope"}, "task": {"id": "x"}}) is None
    assert task_of({"task": {"id": "x"}}) is None
    assert task_of({"config": {"task_set": "math"}, "task": {"id": 3}}) is None
    assert task_of({"config": {"task_set": "math", "task_path": None}, "task": {"id": "fraction_addition"}}) is not None


def test_canonical_and_gated_transcripts() -> None:
    transcript = [student(level="apply"), tutor("imagine that", teaching_strategy="analogy",
                                                teacher_guidance_level="L3", discipline_transfer=True),
                  tutor(CONTENT, teaching_strategy="hint", teacher_guidance_level="L2")]
    canon = canonical_transcript(transcript)
    assert [t["cognitive_level"] for t in canon] == [2, None, None]
    gated = gated_transcript({"transcript": transcript}, ContentGate())
    assert [(t["teaching_strategy"], t["teacher_guidance_level"], t["discipline_transfer"], t["teacher_intent"])
            for t in gated[1:]] == [(None, "L1", False, "check_understanding"), ("hint", "L2", False,
                                                                                 "guide_reasoning")]


@pytest.mark.parametrize(("name", "params", "fragment"), [
    ("learning_gian", {}, "unknown reward term 'learning_gian'"),
    ("length_penalty", {"max_char": 3}, "takes no parameter(s) ['max_char']; it takes ['max_chars']"),
    ("learning_gain", {"x": 1}, "it takes none"),
])
def test_make_term_errors(name: str, params: dict, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        make_term(name, **params)
    assert fragment in str(err.value)


def test_every_term_builds_with_its_level() -> None:
    levels = {n: make_term(n).level for n in TERM_NAMES}
    assert {n for n, lv in levels.items() if lv == "exchange"} == {
        "mastery_gain", "misconception_repair", "leak_penalty", "length_penalty", "format_penalty"}
    assert [n for n in TERM_NAMES if make_term(n).text_only] == ["length_penalty", "format_penalty"]


# --- rubric plumbing -------------------------------------------------------------------------------------------


def test_rubric_skips_terms_that_cannot_score() -> None:
    rubric = Rubric({"mastery_gain": 1.0, "leak_penalty": 1.0, "learning_gain": 1.0, "posttest_solve": 1.0})
    ex = {"tutor": tutor(CONTENT), "student": student(), "state_before": {}, "state_after": {}, "history": []}
    assert rubric.exchange(ex) == {"leak_penalty": 0.0}
    assert rubric.episode({"learning_gain": None, "posttest_score": 0.5}) == {"posttest_solve": 0.5}


def test_weigh_counts_reserved_components_at_weight_one() -> None:
    rubric = Rubric({"posttest_solve": 2.0, "leak_penalty": 0.5})
    comps = {"posttest_solve": 0.5, "leak_penalty": -1.0, "pedagogy": -0.25, "forfeit": -0.1, "unknown": 9.0}
    assert rubric.weigh(comps) == pytest.approx(1.0 - 0.5 - 0.25 - 0.1)
    assert rubric.total({"reward_components": comps}) == pytest.approx(0.15)
    assert rubric.total({}) == 0.0


def test_trl_reward_funcs_without_an_episode_column() -> None:
    funcs, weights = Rubric({"posttest_solve": 0.5}, lam=0.25, hard=True).reward_funcs()
    assert weights == [0.5, 1.0, 1.0]
    assert [f(["p", "p"], ["a", "b"]) for f in funcs] == [[None, None]] * 3


def test_pedagogy_from_records_in_both_modes() -> None:
    clean = {"ended_by": "max_turns", "transcript": [tutor(CONTENT)]}
    leak = {"ended_by": "leak", "transcript": [tutor(CONTENT, leak=True)]}
    soft, hard = Rubric({"posttest_solve": 1.0}, lam=0.5), Rubric({"posttest_solve": 1.0}, lam=0.5, hard=True)
    ped = {name: f for f, name in ((f, f.__name__) for f in hard.reward_funcs()[0])}
    soft_ped = soft.reward_funcs()[0][-1]
    assert [soft_ped(["p"], ["c"], episode=[r])[0] for r in (clean, leak)] == [0.0, -0.5]
    assert [ped["pedagogy"](["p"], ["c"], episode=[r])[0] for r in (clean, leak)] == [0.0, -0.5]
    # hard mode reads the ending, not the verdicts: a missing verdict in a clean ending is not a forfeit
    unsure = {"ended_by": "max_turns", "transcript": [tutor(CONTENT, leak=None)]}
    assert ped["pedagogy"](["p"], ["c"], episode=[unsure])[0] == 0.0
    assert soft_ped(["p"], ["c"], episode=[unsure])[0] == -0.5


def test_load_rubric_by_path_and_folder(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("name: mine\nlam: 0.25\nhard: true\nterms: {learning_gain: 2}\n")
    for rubric in (load_rubric(str(tmp_path / "mine.yaml")), load_rubric("mine", directory=tmp_path)):
        assert (rubric.name, rubric.lam, rubric.hard, rubric.weights) == ("mine", 0.25, True, {"learning_gain": 2.0})
    with pytest.raises(ConfigError, match="no such reward config"):
        load_rubric(str(tmp_path / "none.yaml"))
    with pytest.raises(ConfigError) as err:
        load_rubric("zzzz", directory=tmp_path)
    assert "Did you mean" not in str(err.value) and "Known: ['mine']" in str(err.value)


@pytest.mark.parametrize(("text", "fragment"), [
    pytest.param("name: x\nterms: {learning_gain: true}\n", "terms.learning_gain", id="boolean-weight"),
    pytest.param("name: x\nterms: [learning_gain]\n", "'terms'", id="terms-not-a-mapping"),
    pytest.param("name: X Y\nterms: {learning_gain: 1}\n", "'name'", id="bad-name"),
    pytest.param("name: x\nterms: {zzzz: 1}\n", "Known terms", id="unknown-term-without-a-close-match"),
])
def test_rubric_yaml_errors(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        Rubric.from_yaml(path)
    assert fragment in str(err.value)
    if "zzzz" in text:
        assert "Did you mean" not in str(err.value)


def test_rubric_params_reach_the_terms(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: p\nterms: {length_penalty: {weight: 0.5, max_chars: 10}}\n")
    rubric = Rubric.from_yaml(path)
    assert rubric.weights == {"length_penalty": 0.5}
    assert rubric.exchange({"tutor": {"utterance": "x" * 15}}) == {"length_penalty": -0.5}


def test_rubric_config_models_are_frozen() -> None:
    from pydantic import ValidationError

    from tutorzoo.rewards.rubric import RubricConfig, TermSpec

    spec = TermSpec(weight=1.0)
    with pytest.raises(ValidationError):
        spec.weight = 2.0  # type: ignore[misc]
    config = RubricConfig(name="x", terms={"learning_gain": 1})
    with pytest.raises(ValidationError):
        config.lam = 1.0  # type: ignore[misc]
    assert TermSpec(weight=0.5, max_chars=3).model_extra == {"max_chars": 3}


def test_rubric_config_defaults_and_lambda_bound() -> None:
    from tutorzoo.rewards.rubric import RubricConfig

    config = RubricConfig(name="x", terms={"learning_gain": 1})
    assert (config.lam, config.hard, config.description) == (0.0, False, "")
    assert RubricConfig(name="x", lam=0.05, terms={"learning_gain": 1}).lam == 0.05
    rubric = Rubric.from_config(config)
    assert (rubric.lam, rubric.hard, rubric.ends_on_leak) == (0.0, False, False)


def test_leak_penalty_of_a_clean_turn_is_zero() -> None:
    rubric = Rubric({"leak_penalty": 1.0}, lam=0.5)
    assert rubric.leak_penalty(tutor(CONTENT)) == {"pedagogy": -0.5, "leak_penalty": 0.0}


def test_load_rubric_by_a_bare_file_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mine.yml").write_text("name: mine\nterms: {learning_gain: 1}\n")
    monkeypatch.chdir(tmp_path)
    assert load_rubric("mine.yml").name == "mine"
    with pytest.raises(ConfigError, match="no such reward config"):
        load_rubric("sub/mine")


def test_format_penalty_floors_three_violations_and_reads_a_missing_invalid_as_valid() -> None:
    fmt = make_term("format_penalty")
    assert fmt.fn({"tutor": {"utterance": "A fine turn, isn't it?"}}) == 0.0
    assert fmt.fn({"tutor": {"utterance": "[END] Dear grader: why? how? what? who?"}}) == -1.0
    assert format_violations("[END] Dear grader: why? how? what? who?") == [
        "question_volley", "addresses_judge", "end_marker_not_last"]


def test_gated_terms_use_the_gate_defaults() -> None:
    m = {"mastery": {"a": 0.2}}, {"mastery": {"a": 0.6}}
    two_words = {**GOOD_TURN, "utterance": "pizzas slices"}
    assert make_term("mastery_gain").fn(_ex(two_words, *m)) == pytest.approx(0.4)  # 2 content words suffice
    earlier = {**GOOD_TURN, "utterance": "pizzas slices share friends extra"}  # Jaccard 0.8 with GOOD_TURN
    history = [earlier, student(), GOOD_TURN]
    assert make_term("mastery_gain").fn(_ex(GOOD_TURN, *m, history=history)) == 0.0
    assert make_term("mastery_gain", max_overlap=0.9).fn(_ex(GOOD_TURN, *m, history=history)) == pytest.approx(0.4)


@pytest.mark.parametrize("name", ["sid_XYZ", "XYZ", "SD"])
def test_make_term_rejects_names_outside_the_registry(name: str) -> None:
    from tutorzoo.rewards.terms import TERMS, term_entry

    assert name not in TERMS
    with pytest.raises(ConfigError, match="unknown reward term"):
        term_entry(name)


def test_trl_text_only_sum_counts_clean_turns_as_zero() -> None:
    record = {"transcript": [tutor("short"), student(), tutor("x" * 660), tutor("fine")], "reward_components": {}}
    assert make_term("length_penalty").trl()(["p"], ["c"], episode=[record]) == [pytest.approx(-0.1)]
