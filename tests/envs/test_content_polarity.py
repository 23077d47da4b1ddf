"""Polarity and attribution in the content reader (issue 26, part 3), in math and STEM alike.

Who asserts what: a frame that denies a proposition negates it (a denied truth is false, a denied misconception is
denied, never affirmed); a retraction in the next sentence negates the sentence before; endorsing reported speech
affirms it, reported speech alone does not; a warning quotes a mistake without stating it. Facts match in their
word order (who does what to what), not as bags of stems. A case counts as a counterexample only to the
misconceptions whose contrast the turn states or asks for. Each form is checked against its control: the plain
sentence, or a real paraphrase, reads as it did.
"""

from __future__ import annotations

import numpy as np
import pytest

from tutorzoo.envs.content import FALSE, TRUE, UNCHECKED, ContentReader, Reading
from tutorzoo.envs.tasks import get_task_set

_READERS: dict[tuple[str, str], ContentReader] = {}


def _reader(task_set: str, task_id: str) -> ContentReader:
    if (task_set, task_id) not in _READERS:
        _READERS[task_set, task_id] = ContentReader.for_task(
            get_task_set(task_set).build(task_id, np.random.default_rng(0)))
    return _READERS[task_set, task_id]


def _lower(sentence: str) -> str:
    s = sentence.rstrip(". ")
    return s[0].lower() + s[1:]


def _stated(reading: Reading) -> list[str]:
    return [c.verdict for c in reading.claims if not c.question]


# true propositions, each read TRUE on its own: (task set, task, sentence)
TRUTHS = {
    "math-fraction-sum": ("math", "fraction_addition", "1/2 + 1/3 = 5/6"),
    "math-column-sum": ("math", "two_digit_addition", "47 + 35 = 82"),
    "math-precedence": ("math", "order_of_operations", "6 + 4 × 8 = 38"),
    "math-conversion": ("math", "unit_conversion", "3 km = 3000 m"),
    "math-decimals": ("math", "decimal_comparison", "0.5 > 0.45"),
    "math-words": ("math", "fraction_addition", "one half plus one third equals five sixths"),
    "stem-density": ("stem", "floating_icebergs", "An object floats in a liquid if its density is less than the "
                                                  "density of the liquid."),
    "stem-upthrust": ("stem", "ship_buoyancy", "Upthrust equals the weight of the water the object displaces."),
    "stem-pairs": ("stem", "water_rocket", "Forces always come in pairs that act on two different objects."),
    "stem-pressure": ("stem", "water_rocket", "Pumping squeezes more air into the bottle and raises the air pressure."),
}

DENIALS = {
    "false-that": "It is false that {x}.",
    "myth-that": "It is a myth that {x}.",
    "not-the-case": "It is not the case that {x}.",
    "not-true": "It is not true that {x}.",
    "nobody-should-believe": "Nobody should believe that {x}.",
    "retracted": "{X}. Actually, no: that is false.",
    "retracted-one-sentence": "{X}. That's wrong.",
    "reported-then-wrong": "Some say that {x}. They are wrong.",
    "heard-but-wrong": "You may have heard that {x}, but that's wrong.",
    "just-kidding": "{X}. Just kidding — that's wrong, ignore it.",
    "kidding-in-the-sentence": "{X}, just kidding.",
    "scratch-that": "{X}. Oops, scratch that, I was wrong.",
    "disregard": "{X}. Please disregard what I just said.",
    "does-not-hold": "{X}. Sorry, that isn't true.",
}


@pytest.mark.parametrize("truth", TRUTHS.values(), ids=TRUTHS.keys())
@pytest.mark.parametrize("form", DENIALS.values(), ids=DENIALS.keys())
def test_a_denied_truth_is_a_false_claim(truth, form) -> None:
    task_set, task_id, sentence = truth
    reader = _reader(task_set, task_id)
    assert TRUE in _stated(reader.read(sentence)) and FALSE not in _stated(reader.read(sentence))  # the control
    text = form.format(x=_lower(sentence), X=sentence.rstrip(". "))
    stated = _stated(reader.read(text))
    assert FALSE in stated and TRUE not in stated, (text, reader.read(text))


ENDORSED_TRUTHS = {
    "reported": "Some say that {x}.",
    "reported-endorsed": "Some say that {x}. And they are right.",
    "said-then-confirmed": "{X}. That's right.",
}


@pytest.mark.parametrize("truth", TRUTHS.values(), ids=TRUTHS.keys())
@pytest.mark.parametrize("form", ENDORSED_TRUTHS.values(), ids=ENDORSED_TRUTHS.keys())
def test_a_truth_reported_or_endorsed_stays_true(truth, form) -> None:
    task_set, task_id, sentence = truth
    reader = _reader(task_set, task_id)
    text = form.format(x=_lower(sentence), X=sentence.rstrip(". "))
    stated = _stated(reader.read(text))
    assert TRUE in stated and FALSE not in stated, (text, reader.read(text))


# misconceptions stated outright, each affirmed on its own: (task set, task, misconception, sentence)
MISTAKES = {
    "math-wrong-sum": ("math", "fraction_addition", "add_numerators_and_denominators", "1/2 + 1/3 = 2/5"),
    "math-left-to-right": ("math", "order_of_operations", "strictly_left_to_right", "6 + 4 × 8 = 80"),
    "math-no-regrouping": ("math", "two_digit_addition", "no_regrouping", "47 + 35 = 72"),
    "math-belief": ("math", "triangle_area", "slant_side_as_height",
                    "The height is the side that goes up from the base, even if it leans."),
    "stem-heavy-sink": ("stem", "floating_icebergs", "heavy_things_sink", "Big, heavy things sink and light things "
                                                                          "float."),
    "stem-trapped-air": ("stem", "floating_icebergs", "trapped_air", "Ice floats because it has air bubbles trapped "
                                                                     "inside it."),
    "stem-ground": ("stem", "water_rocket", "pushes_on_ground", "The water pushes against the ground and the air, and "
                                                                "that is what lifts the rocket."),
    "stem-deep-water": ("stem", "ship_buoyancy", "deep_water_floats_better", "A ship floats better in deep water "
                                                                            "because there is more water underneath "
                                                                            "to hold it up."),
}


def _control_affirms(reader: ContentReader, mid: str, sentence: str) -> None:
    plain = reader.read(sentence)
    assert plain.affirmed == (mid,) and plain.false_statements(), (sentence, plain)


@pytest.mark.parametrize("mistake", MISTAKES.values(), ids=MISTAKES.keys())
@pytest.mark.parametrize("form", DENIALS.values(), ids=DENIALS.keys())
def test_a_denied_misconception_is_denied_never_affirmed(mistake, form) -> None:
    task_set, task_id, mid, sentence = mistake
    reader = _reader(task_set, task_id)
    _control_affirms(reader, mid, sentence)
    text = form.format(x=_lower(sentence), X=sentence.rstrip(". "))
    reading = reader.read(text)
    # correct teaching: no falsehood stated, the misconception denied (a corrective negation, no counterexample)
    assert not reading.affirmed and not reading.false_statements(), (text, reading)
    assert reading.denied == (mid,), (text, reading)


QUOTES = {
    "reported": "Some say that {x}.",
    "students-often-think": "Watch out: students often think that {x}.",
    "common-misconception": "A common misconception is that {x}.",
    "friend-says": "A friend says {x}.",
}


@pytest.mark.parametrize("mistake", MISTAKES.values(), ids=MISTAKES.keys())
@pytest.mark.parametrize("form", QUOTES.values(), ids=QUOTES.keys())
def test_reported_speech_or_a_warning_does_not_affirm(mistake, form) -> None:
    task_set, task_id, mid, sentence = mistake
    reader = _reader(task_set, task_id)
    _control_affirms(reader, mid, sentence)
    text = form.format(x=_lower(sentence))
    reading = reader.read(text)
    assert not reading.affirmed and not reading.false_statements() and not reading.denied, (text, reading)


ENDORSEMENTS = {
    "they-are-right": "Some say that {x}. And they are right.",
    "theyre-right": "Many people think that {x}. They're right.",
    "thats-true": "Some say that {x}. That's true.",
}


@pytest.mark.parametrize("mistake", MISTAKES.values(), ids=MISTAKES.keys())
@pytest.mark.parametrize("form", ENDORSEMENTS.values(), ids=ENDORSEMENTS.keys())
def test_endorsing_reported_speech_affirms_it(mistake, form) -> None:
    task_set, task_id, mid, sentence = mistake
    reader = _reader(task_set, task_id)
    text = form.format(x=_lower(sentence))
    reading = reader.read(text)
    assert reading.affirmed == (mid,) and reading.false_statements(), (text, reading)


WARNINGS = {
    # (task, text, affirmed nothing; refuted)
    "common-mistake-to-write": ("fraction_addition", "A common mistake is to write 1/2 + 1/3 = 2/5.", ()),
    "dont-write": ("fraction_addition", "Don't write 1/2 + 1/3 = 2/5.", ()),
    "watch-out": ("order_of_operations", "Watch out: working left to right would give 6 + 4 × 8 = 80.", ()),
    "mistake-with-contrast": ("fraction_addition", "A common mistake is to write 1/2 + 1/3 = 2/5, but 1/2 + 1/3 = 5/6.",
                              ("add_numerators_and_denominators",)),
    "rule-would-give": ("order_of_operations", "Left to right would give 80, but 6 + 4 × 8 = 38.",
                        ("strictly_left_to_right",)),
}


@pytest.mark.parametrize("case", WARNINGS.values(), ids=WARNINGS.keys())
def test_a_warning_names_a_mistake_without_stating_it(case) -> None:
    task_id, text, refuted = case
    reading = _reader("math", task_id).read(text)
    assert not reading.affirmed and not reading.false_statements(), (text, reading)
    assert reading.refuted == refuted, (text, reading)


STEM_WARNINGS = {
    "dont-think": ("floating_icebergs", "Don't think that big, heavy things sink and light things float."),
    "careful": ("ship_buoyancy", "Be careful: students often think that heavy things sink and light things float."),
    "mistake-to-think": ("water_rocket", "A common mistake is to think that the water pushes against the ground "
                                         "and the air, and that is what lifts the rocket."),
}


@pytest.mark.parametrize("case", STEM_WARNINGS.values(), ids=STEM_WARNINGS.keys())
def test_a_stem_warning_does_not_affirm(case) -> None:
    task_id, text = case
    reading = _reader("stem", task_id).read(text)
    assert not reading.affirmed and not reading.false_statements(), (text, reading)


# -- word order: who does what to what

ORDER = {
    # (task, sentence, verdict or None for no statement at all)
    "fact": ("floating_icebergs", "Ice floats because it is less dense than water.", TRUE),
    "clauses-swapped": ("floating_icebergs", "Because it is less dense than water, ice floats.", TRUE),
    "genitive": ("floating_icebergs", "An object floats in a liquid if its density is less than the liquid's "
                                      "density.", TRUE),
    "passive": ("water_rocket", "The water is pushed out through the nozzle by the compressed air.", TRUE),
    "own-words": ("water_rocket", "Forces always come in pairs, acting on two different objects.", TRUE),
    "named": ("water_rocket", "The upward push of the water on the rocket is called thrust.", TRUE),
    "roles-swapped": ("water_rocket", "The upward push of the rocket on the water is called thrust.", None),
    "shuffled": ("water_rocket", "air nozzle The the pushes water compressed out expands through and the.", None),
    "shuffled-2": ("water_rocket", "bottle the air raises pressure squeezes more into pumping the and air.", None),
}


@pytest.mark.parametrize("case", ORDER.values(), ids=ORDER.keys())
def test_facts_match_in_their_word_order(case) -> None:
    task_id, text, verdict = case
    stated = _stated(_reader("stem", task_id).read(text))
    if verdict is None:
        assert TRUE not in stated, (text, stated)
    else:
        assert verdict in stated, (text, stated)


def test_shuffled_lesson_facts_rarely_read_true_while_every_fact_does() -> None:
    """Each lesson fact with its words in a random order (three shuffles of each, seeded): at most 8 % read true,
    while every fact itself reads true."""
    ts = get_task_set("stem")
    rng = np.random.default_rng(0)
    n = hits = 0
    for tid in ts.task_ids()[::4]:
        reader = ContentReader.for_task(ts.build(tid, np.random.default_rng(0)))
        for k in reader.task.knowledge_components:
            for fact in k.facts:
                assert TRUE in _stated(reader.read(fact)), (tid, fact)
                words = fact.rstrip(".").split()
                for _ in range(3):
                    shuffled = " ".join(rng.permutation(words)) + "."
                    n += 1
                    hits += TRUE in _stated(reader.read(shuffled))
    assert n >= 150 and hits / n <= 0.08, (hits, n)


# -- counterexamples: only where the contrast is stated or asked for, and only to the misconception contrasted

CONTRASTS = {
    "case-alone": ("fraction_comparison", "In this case, 1/2 > 2/9.", ()),
    "asked-then-shown": ("fraction_comparison", "Is 1/2 really smaller than 1/3? 1/2 > 1/3.",
                         ("larger_denominator_larger",)),
    # both wrong rules say 2/9 > 1/2 (a bigger top, a bigger bottom): the question contrasts both
    "asked-both-rules": ("fraction_comparison", "Is 2/9 really bigger than 1/2? No: 1/2 > 2/9.",
                         ("larger_denominator_larger", "larger_numerator_larger")),
    "wrong-result-aside": ("fraction_addition", "1/2 + 1/2 = 1, not 2/4.", ("add_numerators_and_denominators",)),
    "rule-would-give": ("fraction_addition", "Adding tops and bottoms would give 2/5, but 1/2 + 1/3 = 5/6.",
                        ("add_numerators_and_denominators",)),
    "question-to-work": ("fraction_addition", "What is 1/4 + 1/3?", ()),
    "worked-example": ("order_of_operations", "6 + 4 × 8 = 6 + 32 = 38.", ()),
    "worked-with-contrast": ("order_of_operations", "6 + 4 × 8 = 6 + 32 = 38, not 80.", ("strictly_left_to_right",)),
    "trip-alone": ("travel_time", "Driving 120 km at 40 km/h takes 3 hours.", ()),
    "trip-contrasted": ("travel_time", "Driving 120 km at 40 km/h takes 3 hours. Some people think you multiply the "
                                       "distance by the speed to get the time.", ("multiply_distance_speed",)),
}


@pytest.mark.parametrize("case", CONTRASTS.values(), ids=CONTRASTS.keys())
def test_a_case_refutes_only_the_misconception_it_contrasts(case) -> None:
    task_id, text, refuted = case
    reading = _reader("math", task_id).read(text)
    assert reading.claims and reading.refuted == refuted, (text, reading)


@pytest.mark.parametrize("task_set", ["math", "stem"])
def test_the_curriculum_counterexamples_still_refute_their_misconception(task_set: str) -> None:
    """The control: each misconception's own counterexample (the case the curriculum sets against it) refutes it."""
    ts = get_task_set(task_set)
    missed = []
    for tid in ts.task_ids():
        reader = ContentReader.for_task(ts.build(tid, np.random.default_rng(0)))
        for m in reader.task.misconceptions:
            if m.id not in reader.read(m.counterexample).refuted:
                missed.append((tid, m.id))
    assert not missed, missed


def test_a_denial_is_recorded_and_counted() -> None:
    reading = _reader("stem", "floating_icebergs").read("It is a myth that big, heavy things sink and light things "
                                                        "float.")
    assert [c.verdict for c in reading.claims] == [UNCHECKED] and reading.to_dict()["denies"] == ["heavy_things_sink"]


@pytest.mark.parametrize("text", [
    "It is false that " * 2000 + "ice floats because it is less dense than water.",
    "Ice floats because it is less dense than water. " + "That is false. " * 3000,
    "Some say that " * 500 + "big, heavy things sink and light things float. They are right.",
])
def test_frames_nested_or_repeated_without_end_are_read_without_failing(text) -> None:
    reading = _reader("stem", "floating_icebergs").read(text)
    assert not reading.affirmed or reading.affirmed == ("heavy_things_sink",), reading
    assert len(reading.claims) <= 2, reading
