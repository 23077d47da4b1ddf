"""The content reader reads correct teaching however it is written: number words, markdown, LaTeX, arrows,
prose arithmetic, labelled chains, units, the families' relational claims; a misconception named as one is
quoted, not affirmed. Each case is a sentence an outside tutor (or an LLM) wrote, read on the task it teaches."""

from __future__ import annotations

import numpy as np
import pytest

from tutorzoo.envs.content import FALSE, TRUE, ContentReader, normalise
from tutorzoo.envs.tasks import get_task_set

_READERS: dict[tuple[str, str], ContentReader] = {}


def _reader(task_set: str, task_id: str) -> ContentReader:
    if (task_set, task_id) not in _READERS:
        _READERS[task_set, task_id] = ContentReader.for_task(
            get_task_set(task_set).build(task_id, np.random.default_rng(0)))
    return _READERS[task_set, task_id]


def _named(reader: ContentReader) -> set[str]:
    """The misconceptions whose belief, quoted, the reader recognises (a belief made only of the topic's own words,
    such as "to add fractions you add the tops and the bottoms", is not told apart from the correct rule)."""
    misconceptions = reader.task.misconceptions
    quoted = {m.id: reader.read(f"Some say that {m.belief[0].lower()}{m.belief[1:]}") for m in misconceptions}
    return {mid for mid, reading in quoted.items() if any(c.mentions == mid for c in reading.claims)}


def _contrasted(reader: ContentReader, text: str) -> set[str]:
    """The misconceptions ``text``'s case discriminates: those it refutes once the turn also names each one (its
    belief quoted after the case). The case alone states no contrast, so it refutes nothing."""
    assert not reader.read(text).refuted, (text, reader.read(text))
    out = set()
    for m in reader.task.misconceptions:
        belief = m.belief[0].lower() + m.belief[1:]
        if m.id in reader.read(f"{text} Some say that {belief}").refuted:
            out.add(m.id)
    return out


TRUE_ON_KC = [
    # number words, compounds included
    ("order_of_operations", "Twenty-one plus four times five equals forty-one.", "operation_precedence"),
    ("two_digit_addition", "Eighteen plus thirty-nine is fifty-seven.", None),
    ("percent_discount", "Twenty-five percent of eighty is twenty.", None),
    ("triangle_area", "Seventeen point five is half of thirty-five.", None),
    ("integer_subtraction", "Negative eight minus negative seven is negative one.", "subtracting_integers"),
    # prose arithmetic and result verbs
    ("integer_subtraction", "Subtracting -7 from -8 gives -1.", "subtracting_integers"),
    ("order_of_operations", "Then we get 21 + 20, which is 41.", None),
    ("order_of_operations", "4 × 5 becomes 20, so 21 + 4 × 5 becomes 41.", "operation_precedence"),
    ("order_of_operations", "21 + 4 x 5 = 41.", "operation_precedence"),
    # markdown, LaTeX, unicode
    ("order_of_operations", "So 21 + 4 × 5 = **41**.", "operation_precedence"),
    ("triangle_area", "Area = ½ × 6 × 4 = 12.", "triangle_area"),
    ("triangle_area", "$A = \\tfrac12 \\cdot 6 \\cdot 4 = 12$", "triangle_area"),
    ("triangle_area", "- **Step 1:** $\\frac{1}{2} \\times 5 \\times 7 = 17.5$", "triangle_area"),
    ("percent_discount", "$80 \\times 0.75 = \\$60$", None),
    # arrows between expressions, a step's aside, units
    ("order_of_operations", "Doing the multiplication first, 21 + 4 × 5 → 21 + 20 → 41.", "operation_precedence"),
    ("order_of_operations", "2 + 3 × 4 = 14 (not 20).", "operation_precedence"),
    ("triangle_area", "1/2 × 6 cm × 4 cm = 12 cm².", "triangle_area"),
    ("unit_conversion", "3 metres is 300 centimetres.", None),
    ("travel_time", "180 km ÷ 60 km/h = 3 h.", None),
    # the families' relational claims in prose
    ("triangle_area", "A triangle with base 6 and height 4 has an area of 12.", "triangle_area"),
    ("rectangle_perimeter", "The perimeter of an 8 by 5 rectangle is 26.", None),
    ("travel_time", "180 km at 60 km/h takes 3 hours.", None),
    ("percent_discount", "$80 with 25% off costs $60.", None),
    ("ratio_scaling", "The ratio 3:4 is the same ratio as 9:12.", "equivalent_ratios"),
]


@pytest.mark.parametrize(("task_id", "text", "kc"), TRUE_ON_KC)
def test_true_math_however_written_is_read_true(task_id, text, kc) -> None:
    reading = _reader("math", task_id).read(text)
    verdicts = [c.verdict for c in reading.claims if c.source == "math"]
    assert verdicts and all(v == TRUE for v in verdicts), (text, normalise(text), reading)
    if kc is not None:
        assert reading.kc == kc, (text, reading)


@pytest.mark.parametrize(("task_id", "text"), [
    ("order_of_operations", "Six plus thirty-two is thirty-nine."),
    ("integer_subtraction", "Subtracting -7 from -8 gives -15."),
    ("triangle_area", "A triangle with base 6 and height 4 has an area of 24."),
    ("triangle_area", "Area = ½ × 6 × 4 = 24."),
    ("order_of_operations", "Twenty-one plus four times five equals one hundred and twenty-five."),
])
def test_the_same_forms_with_a_wrong_number_are_false(task_id, text) -> None:
    reading = _reader("math", task_id).read(text)
    assert any(c.verdict == FALSE for c in reading.claims), (text, normalise(text), reading)


def test_a_wrong_rule_in_words_affirms_its_misconception() -> None:
    text = "Twenty-one plus four times five is one hundred and twenty-five."
    reading = _reader("math", "order_of_operations").read(text)
    assert reading.affirmed == ("strictly_left_to_right",), reading


def test_a_markdown_question_is_a_question() -> None:
    reading = _reader("math", "triangle_area").read("**Your turn:** compute $\\frac{1}{2} \\times 5 \\times 4$.")
    assert [c.question for c in reading.claims] == [True] and reading.kc == "triangle_area"


def test_clock_times_are_not_ratios() -> None:
    assert "/" not in normalise("The next high tide is at about 07:00 + 12:25 = 19:25.")
    assert normalise("Step 1: 4 × 5 = 20") == "Step 1: 4 * 5 = 20"


def test_a_scale_is_not_a_conversion() -> None:
    assert "=" not in normalise("On the map, 1 cm is 10 km.")


@pytest.mark.parametrize("frame", [
    "A common misconception is that {b}.", "It's a myth that {b}.", "Myth: {b}.",
    "You may have heard that {b}, but that's wrong.", "It is a mistake to assume that {b}.",
    "Contrary to popular belief, it is false that {b}.",
])
def test_a_belief_named_as_wrong_is_not_affirmed(frame) -> None:
    reader = _reader("stem", "ship_buoyancy")
    for m in reader.task.misconceptions:
        belief = m.belief.rstrip(".")
        text = frame.format(b=belief[0].lower() + belief[1:])
        assert not reader.read(text).affirmed, (text, reader.read(text))
        assert reader.read(belief + ".").affirmed == (m.id,)  # stated outright, it is affirmed


def test_hints_the_solution_and_the_summary_are_true_content() -> None:
    reader = _reader("stem", "ship_buoyancy")
    task = reader.task
    for kc in task.knowledge_components:
        for hint in kc.hints:
            reading = reader.read(hint)
            assert reading.kc == kc.id and not reading.false_statements(), (hint, reading)
    for text in (*task.solution, task.summary):
        reading = reader.read(text)
        assert reading.claims and not reading.false_statements() and not reading.affirmed, (text, reading)


def test_a_test_question_asked_again_with_other_numbers_is_a_question_on_its_component() -> None:
    reader = _reader("math", "triangle_area")
    item = reader.task.posttest[0]
    other = " ".join(str(int(w) + 1) if w.isdigit() else w for w in item.stem.split(" "))
    *scenario, question = [s for s in other.split(". ") if s]
    reading = reader.read(". ".join(scenario) + ". " + question)
    assert [c.question for c in reading.claims] == [True] and reading.kc in item.kcs, (other, reading)
    assert reader.read("What is its area in square metres?").claims == ()  # no case to compute: not gradeable


@pytest.mark.parametrize(("text", "refuted"), [
    # a correct trip with units discriminates both wrong rules (120 × 40 = 4800 h; 40 ÷ 120 h)
    ("Driving 120 km at 40 km/h takes 3 hours.", {"multiply_distance_speed", "invert_rate"}),
    ("120 km ÷ 40 km/h = 3 h.", {"multiply_distance_speed", "invert_rate"}),
    # the speed and the distance said in prose are the computations they state
    ("Covering 120 km in 3 hours is a speed of 40 km/h.", {"multiply_distance_speed", "invert_rate"}),
    ("At 20 km/h for 3 hours you travel 60 km.", {"invert_rate"}),
])
def test_a_correct_trip_with_units_refutes_the_rate_misconceptions(text, refuted) -> None:
    reading = _reader("math", "travel_time").read(text)
    assert reading.claims and not reading.false_statements(), (text, normalise(text), reading)
    assert _contrasted(_reader("math", "travel_time"), text) == refuted, (text, reading)


def test_bare_numbers_do_not_say_which_quantity_is_the_rate() -> None:
    reading = _reader("math", "travel_time").read("120 ÷ 40 = 3.")
    assert reading.claims and not reading.refuted, reading
    assert not _reader("math", "travel_time").read("At 20 km/h for 3 hours you travel 20/3 km.").refuted


def test_a_discount_worked_over_two_sentences_refutes_like_one() -> None:
    reader = _reader("math", "percent_discount")
    one = _contrasted(reader, "84 - 10% of 84 = 75.6.")
    two = _contrasted(reader, "10% of 84 is 8.4. Computing 84 - 8.4, we get 75.6.")
    steps = _contrasted(reader, "Next, 10% becomes 0.1. Then we get 0.1 × 84, which is 8.4. Computing 84 - 8.4, we get "
                                "75.6.")
    assert one == {"subtract_percent_as_dollars", "discount_as_price"}, one
    assert two == one and steps == one, (two, steps)
    assert not _contrasted(reader, "0.1 × 84 = 8.4. 84 - 8.4 = 75.6.")  # no percent said: a decimal taken off


@pytest.mark.parametrize("text", [
    "Her total is 36 - 20 + 6 × 2. Evaluate it.",
    "A taxi costs $20 plus $6 for each of 7 miles: 20 + 6 × 7. Evaluate it.",
])
def test_an_expression_to_evaluate_is_a_question(text) -> None:
    reading = _reader("math", "order_of_operations").read(text)
    assert [c.question for c in reading.claims] == [True], (text, reading)
    assert reading.kc == "operation_precedence", (text, reading)
    assert "strictly_left_to_right" in _contrasted(_reader("math", "order_of_operations"), text), (text, reading)


def test_an_equation_already_worked_is_not_asked_again() -> None:
    reading = _reader("math", "order_of_operations").read("20 + 6 × 7 = 62. Can you check it?")
    assert not any(c.question for c in reading.claims), reading


@pytest.mark.parametrize(("task_id", "text", "verdict", "refuted"), [
    # the answer stated for the expression the turn set out to work is that computation's result
    ("order_of_operations", "Let's solve 6 + 4 × 8. Next, 4 × 8 becomes 32. Then we get 6 + 32, which is 38. "
                            "So our final answer is **38**.", TRUE, {"strictly_left_to_right"}),
    ("fraction_addition", "Let's solve 2/3 + 1/4. Next, 2/3 becomes 8/12. So our final answer is **11/12**.", TRUE,
     {"numerators_not_scaled", "add_numerators_and_denominators"}),
    ("percent_discount", "Let's work out 84 - 10% of 84. So the answer is 75.6.", TRUE,
     {"subtract_percent_as_dollars", "discount_as_price"}),
    # a wrong answer is false (and says the misconception's answer)
    ("order_of_operations", "Let's solve 6 + 4 × 8. So our final answer is 80.", FALSE, set()),
])
def test_the_answer_to_the_problem_the_turn_set_out_is_its_result(task_id, text, verdict, refuted) -> None:
    reading = _reader("math", task_id).read(text)
    last = reading.claims[-1]
    assert last.verdict == verdict and not last.refutes, (text, reading)
    assert _contrasted(_reader("math", task_id), text) >= refuted & _named(_reader("math", task_id)), (text, reading)


def test_an_answer_without_a_problem_set_out_is_nothing() -> None:
    reader = _reader("math", "order_of_operations")
    assert reader.read("So our final answer is 38.").claims == ()
    assert reader.read("I have 6 + 4 × 8 pens. The answer is 38.").claims == ()  # nothing set out to be solved


@pytest.mark.parametrize(("text", "refuted"), [
    # a rectangle's perimeter worked right discriminates length + width (7) and length × width (12)
    ("The perimeter of a 4 by 3 rectangle is 14, since you add all four sides.",
     {"two_sides_only", "confuse_area_perimeter"}),
    ("4 + 3 + 4 + 3 = 14.", {"two_sides_only", "confuse_area_perimeter"}),
    ("If the perimeter is 36 and the length is 11, the width must be 7.", {"two_sides_only", "confuse_area_perimeter"}),
    ("A 9 by 3 rectangle has an area of 27 square units.", set()),
])
def test_a_rectangle_worked_right_is_read_and_refutes(text, refuted) -> None:
    reading = _reader("math", "rectangle_perimeter").read(text)
    assert reading.claims and not reading.false_statements(), (text, normalise(text), reading)
    assert _contrasted(_reader("math", "rectangle_perimeter"), text) == refuted, (text, reading)


@pytest.mark.parametrize(("text", "affirmed"), [
    ("The perimeter of a 4 by 3 rectangle is 12.", "confuse_area_perimeter"),
    ("The perimeter of a 4 by 3 rectangle is 7.", "two_sides_only"),
])
def test_a_rectangle_perimeter_by_a_wrong_rule_affirms_it(text, affirmed) -> None:
    reading = _reader("math", "rectangle_perimeter").read(text)
    assert reading.affirmed == (affirmed,) and reading.false_statements(), (text, reading)


def test_work_it_out_asks_for_the_expression_before() -> None:
    text = "The height of the deck above the surface is -6 - (-3) m (negative means below). Work it out."
    reading = _reader("math", "integer_subtraction").read(text)
    assert [c.question for c in reading.claims] == [True], reading
    reader = _reader("math", "integer_subtraction")
    assert _contrasted(reader, text) == {"minus_negative_is_minus", "ignore_signs"} & _named(reader), reading
    # the rule's own result said sets up the contrast too: minus a negative read as minus gives -9
    assert reader.read(f"{text} Taking away 3 would give -9.").refuted == ("minus_negative_is_minus",), reading


def test_a_scenario_then_a_question_for_its_value_asks_for_its_computation() -> None:
    reader = _reader("math", "percent_discount")
    text = "A bike priced at $120 is reduced by 20%. How many dollars does it cost now?"
    reading = reader.read(text)
    assert [c.question for c in reading.claims] == [True], reading
    assert _contrasted(reader, text) == {"discount_as_price", "subtract_percent_as_dollars"}, reading
    # a question that asks for no value is not that computation
    assert not reader.read("A bike priced at $120 is reduced by 20%. Is that a good deal?").refuted


@pytest.mark.parametrize("text", [
    "Sure! Let's solve 8x + 20 = 52. Computing 52 - 20, we get 32. First, 32 ÷ 8 → 4. Next, 8 × 4 + 20 becomes 52. "
    "So our final answer is **4**.",
    "Solve 8x + 20 = 52. Computing 52 - 20, we get 32. 32 ÷ 8 = 4, so x = 4.",
])
def test_the_equation_a_turn_works_on_is_its_own_reference(text) -> None:
    # the turn's equation (x = 4), not the task's, is what its steps are checked against
    reading = _reader("math", "two_step_equation").read(text)
    assert reading.claims and not reading.false_statements(), reading


_EQUATION_KCS = {"inverse_operations", "balance_principle", "two_step_equations"}


@pytest.mark.parametrize("text", [
    "3x = 15, so x = 5.",  # the unknown alone on a side
    "The solution of 3x = 15 is x = 5.",  # the equation, then its solution named
    "If x is 5, then 3x comes out to 15.",
    "x = 5 because 3 × 5 = 15. That matches 3x = 15.",
    "For 2x + 20 = 30: check: 2(5) + 20 = 30 ✓",  # a number written for the unknown: a solution checked
    "Solve 3x = 15: x = 5.",  # the answer given: a statement, not a question
    "What is x if 3x = 15? x = 5.",
])
def test_an_equation_solution_in_prose_is_true_on_the_equation(text) -> None:
    reading = _reader("math", "two_step_equation").read(text)
    claims = [c for c in reading.claims if c.source == "math"]
    assert claims and all(c.verdict == TRUE and not c.question for c in claims), (text, normalise(text), reading)
    assert reading.kc in _EQUATION_KCS and reading.true_statements(reading.kc), (text, reading)


@pytest.mark.parametrize("text", [
    "The solution of 3x = 15 is x = 6.",
    "If x is 6, then 3x comes out to 15.",
    "For 2x + 20 = 30: check: 2(4) + 20 = 30 ✓",
    "Solve 3x = 15: x = 6.",
])
def test_an_equation_solution_with_a_wrong_number_is_false(text) -> None:
    reading = _reader("math", "two_step_equation").read(text)
    assert any(c.verdict == FALSE and c.kc in _EQUATION_KCS for c in reading.claims), (text, reading)


def test_a_solve_prompt_without_its_answer_stays_a_question() -> None:
    reader = _reader("math", "two_step_equation")
    reading = reader.read("Solve 4x = 44.")
    assert [c.question for c in reading.claims] == [True] and reading.kc in _EQUATION_KCS, reading
    # arithmetic that is not the equation with a number for its unknown is not the equation's check
    assert reader.read("For 2x + 20 = 30: 2 × 4 + 20 = 28.").claims[-1].kc not in _EQUATION_KCS


@pytest.mark.parametrize(("task_id", "text", "kc"), [
    # a blank to fill in is the unknown of the relation: a question on the computation that fills it
    ("fraction_addition", "Your turn: 2/3 = __/9. What goes in the blank?", "fraction_equivalence"),
    ("fraction_addition", "Fill in the blank: 2/3 = ___/9", "fraction_equivalence"),
    ("fraction_addition", "2/3 = ?/9", "fraction_equivalence"),
    ("fraction_addition", "2/3 = □/9", "fraction_equivalence"),
    ("fraction_addition", "**Try this:** 2/3 = [ ]/9", "fraction_equivalence"),
    ("fraction_addition", "2/3 = 6/_____", "fraction_equivalence"),
    ("fraction_addition", "1/2 + 1/3 = ____", "common_denominator"),
    ("unit_conversion", "9500 m = __ km", None),
    ("unit_conversion", "1 L = __ mL", None),
    ("unit_conversion", "1 L = ? mL", None),
    ("unit_conversion", "2.5 kg = ___ g. Think about which unit is bigger.", None),
    ("unit_conversion", "9500 m = how many km?", None),
    ("two_step_equation", "3 × __ = 15", "inverse_operations"),
    ("two_step_equation", "2 × ? + 20 = 30", "inverse_operations"),
    # a conversion asked for in words
    ("unit_conversion", "How many mL is 1 L?", None),
    ("unit_conversion", "How many grams make 2.5 kg?", None),
    ("unit_conversion", "Convert 9500 m to km.", None),
    ("unit_conversion", "What is 9500 m in km?", None),
    ("unit_conversion", "Write 2.5 kg in grams.", None),
])
def test_a_blank_or_a_conversion_asked_for_is_a_question_on_its_computation(task_id, text, kc) -> None:
    reader = _reader("math", task_id)
    reading = reader.read(text)
    assert reading.claims and all(c.question for c in reading.claims if c.source == "math"), (text, reading)
    assert not reading.true_statements(reading.kc or "") and not reading.false_statements(), (text, reading)
    kcs = {kc} if kc else {k.id for k in reader.task.knowledge_components}
    assert reading.kc in kcs, (text, normalise(text), reading)


def test_a_blank_asks_for_the_case_against_the_misconception() -> None:
    reading = _reader("math", "fraction_addition").read("2/3 = __/9")
    assert reading.refuted == ("add_same_to_top_and_bottom",), reading  # 6/9, not 8/9
    assert not _reader("math", "fraction_addition").read("2/3 = __/3").refuted  # both rules give 2/3


@pytest.mark.parametrize(("task_id", "text"), [
    ("fraction_addition", "2/3 = 5/9"),  # the blank filled wrong
    ("unit_conversion", "1 L = 100 mL"),
    ("unit_conversion", "9500 m = 95 km"),
    ("fraction_addition", "2/3 = 4/9 = __/18"),  # a wrong step before a blank
])
def test_a_blank_filled_with_a_wrong_number_is_false(task_id, text) -> None:
    reading = _reader("math", task_id).read(text)
    assert reading.false_statements() and not reading.true_statements(reading.kc or ""), (text, reading)


@pytest.mark.parametrize(("task_id", "text"), [
    ("unit_conversion", "What is 9500 m in m?"),  # the same unit: nothing to convert
    ("fraction_addition", "2/3 = __/__"),  # two blanks: nothing to solve
    ("fraction_addition", "2/3 = __/7"),  # no whole number fills it
    ("fraction_addition", "__2/3__ is the fraction we start from"),  # emphasis, not a blank
])
def test_what_a_blank_cannot_fill_is_no_question(task_id, text) -> None:
    reading = _reader("math", task_id).read(text)
    assert not any(c.question and c.kc for c in reading.claims), (text, normalise(text), reading)


def test_a_question_mark_ending_a_question_is_not_a_blank() -> None:
    text = "A submarine at -40 m rises to -15 m. How far did it rise? -15 - (-40) = 25 m."
    reading = _reader("math", "integer_subtraction").read(text)
    assert reading.kc == "subtracting_integers" and reading.true_statements("subtracting_integers"), reading
    assert not any(c.question for c in reading.claims), reading


@pytest.mark.parametrize(("text", "verdict", "question"), [
    ("$12 - 8 \\div 4 = 12 - 2 = 10$", TRUE, False),  # the division sign: a division, not a fraction's bar
    ("12 - 8 ÷ 4 = 10.", TRUE, False),
    ("What is 20 - 12 ÷ 4?", TRUE, True),
    ("Evaluate 18 - 3 × 4.", TRUE, True),  # a prompt to evaluate an expression asks for its value
    ("Determine 10 - 2 × 3.", TRUE, True),
    ("12 - 8 ÷ 4 = 1.", FALSE, False),
])
def test_precedence_with_a_division_sign_or_an_evaluate_prompt(text, verdict, question) -> None:
    reading = _reader("math", "order_of_operations").read(text)
    first = reading.claims[0]
    assert (first.kc, first.verdict, first.question) == ("operation_precedence", verdict, question), (text, reading)
    if verdict == FALSE:
        assert reading.affirmed == ("strictly_left_to_right",), reading


@pytest.mark.parametrize(("task_id", "text", "kc"), [
    # a bare percent said after a percent of a whole is a percent of the same whole
    ("percent_discount", "10% of 60 is 6, so 5% is 3, and 15% is 9.", None),
    ("percent_discount", "25% of 80 is 20, and 25% is 0.25.", None),  # the percent as a decimal stays one
    # a count of tenths or hundredths written with digits; a decimal with a zero after its last digit
    ("decimal_comparison", "0.7 = 0.70, and 70 hundredths is more than 65 hundredths.", "decimal_place_value"),
    ("decimal_comparison", "Think of 0.5 as 0.50, fifty hundredths.", "decimal_place_value"),
    ("decimal_comparison", "3 fourths is 0.75.", "decimal_place_value"),
    # two ratios equated, with or without the word "ratio"
    ("ratio_scaling", "2:5 = 6:15", "equivalent_ratios"),
    ("ratio_scaling", "So 3:5 is the same as 9:15.", "equivalent_ratios"),
    ("ratio_scaling", "3:5 = 9:15 = 12:20", "equivalent_ratios"),
])
def test_percents_decimals_and_ratios_in_their_usual_forms_are_true(task_id, text, kc) -> None:
    reading = _reader("math", task_id).read(text)
    verdicts = [c.verdict for c in reading.claims if c.source == "math"]
    assert verdicts and all(v == TRUE for v in verdicts), (text, normalise(text), reading)
    if kc is not None:
        assert reading.kc == kc, (text, reading)


@pytest.mark.parametrize(("task_id", "text"), [
    ("percent_discount", "10% of 60 is 6, so 5% is 4."),
    ("decimal_comparison", "0.5 = 0.05"),
    ("ratio_scaling", "2:5 = 6:16"),
    ("ratio_scaling", "3:5 = 9:15 = 12:21"),
])
def test_percents_decimals_and_ratios_with_a_wrong_number_are_false(task_id, text) -> None:
    reading = _reader("math", task_id).read(text)
    assert reading.false_statements(), (text, normalise(text), reading)


@pytest.mark.parametrize("text", ["2:5 = 6:__", "Fill in: 3 : 5 = 12 : __", "3:5 = __:20"])
def test_a_ratio_with_a_blank_is_a_question_on_equivalent_ratios(text) -> None:
    reading = _reader("math", "ratio_scaling").read(text)
    assert [c.question for c in reading.claims] == [True] and reading.kc == "equivalent_ratios", (text, reading)


def test_a_clock_time_is_not_a_ratio() -> None:
    assert "/" not in normalise("At 07:00 = 7 am") and "/" not in normalise("07:00 + 12:25 = 19:25")


@pytest.mark.parametrize(("task_id", "text", "kc"), [
    # a blank whose value the turn says is a statement of that value
    ("unit_conversion", "Here 1 m = ? cm comes to 100.", "metric_prefixes"),
    ("unit_conversion", "Here is one worked out: $1 L = \\square mL$ gives **1000**.", "metric_prefixes"),
    ("fraction_addition", "2/3 = __/9 → 6", "fraction_equivalence"),
    # an equation, then the number it comes to: its solution
    ("two_step_equation", "Here 8x = 16 comes to 2.", "inverse_operations"),
    ("two_step_equation", "Here is one worked out: $5x = 35$ gives **7**.", "inverse_operations"),
])
def test_a_blank_or_an_equation_with_its_value_said_is_a_true_statement(task_id, text, kc) -> None:
    reading = _reader("math", task_id).read(text)
    claims = [c for c in reading.claims if c.source == "math"]
    assert claims and all(c.verdict == TRUE and not c.question for c in claims), (text, normalise(text), reading)
    assert reading.kc == kc, (text, reading)


@pytest.mark.parametrize(("task_id", "text"), [
    ("unit_conversion", "Here 1 m = ? cm comes to 10."),
    ("unit_conversion", "$1 L = \\square mL$ gives **100**."),
    ("fraction_addition", "2/3 = __/9, which is 5"),
    ("two_step_equation", "Here 8x = 16 comes to 3."),
])
def test_a_blank_or_an_equation_with_a_wrong_value_said_is_false(task_id, text) -> None:
    reading = _reader("math", task_id).read(text)
    assert reading.false_statements(), (text, normalise(text), reading)


@pytest.mark.parametrize("text", [
    "Your turn: x + 10 = 40. What goes in the blank?",
    "5x + 14 = 34. What is x?",
    "**Your turn:** compute $9 km = \\square m$.",
])
def test_an_equation_then_a_question_for_its_unknown_is_a_question(text) -> None:
    task_id = "unit_conversion" if "km" in text else "two_step_equation"
    reading = _reader("math", task_id).read(text)
    assert reading.claims and all(c.question for c in reading.claims), (text, reading)
    assert reading.kc is not None and not reading.true_statements(reading.kc), (text, reading)
    # not an equation in x: the question asks for nothing of it
    assert not any(c.question for c in _reader("math", "two_step_equation").read(
        "3 + 4 = 7. What goes in the blank?").claims)


def test_a_choice_between_two_is_not_an_equation_of_the_second() -> None:
    reading = _reader("math", "fraction_comparison").read("Here 1/9 vs 1/10 comes to 1/9. It is 1/9, not 1/10.")
    assert not reading.false_statements(), reading  # was "1/10 = 1/9", false
    assert not _reader("math", "fraction_comparison").read("Your turn: 2/3 vs 3/5 = ?").claims  # no bare comparison


@pytest.mark.parametrize(("task_id", "text", "kc", "refuted"), [
    # a family's quantity asked for with its case and no value
    ("rectangle_perimeter", "Your turn: perimeter of a 4 by 3 rectangle = ?", "rectangle_properties",
     {"two_sides_only", "confuse_area_perimeter"}),
    ("rectangle_perimeter", "What is the perimeter of a rectangle that is 6 cm by 2 cm?", "rectangle_properties",
     {"two_sides_only", "confuse_area_perimeter"}),
    ("rectangle_perimeter", "Your turn: area of a 9 by 7 rectangle = ?", "area_concept", set()),
    ("travel_time", "**Your turn:** compute $120 km at 40 km/h$.", "unit_rate",
     {"invert_rate", "multiply_distance_speed"}),
    ("travel_time", "Your turn: 160 km in 4 h = ?", "unit_rate", {"invert_rate", "multiply_distance_speed"}),
    ("travel_time", "**Your turn:** compute $60 km/h for 2 h$.", "unit_rate", {"invert_rate"}),
    ("triangle_area", "Find the area of a triangle with a base of 10 cm and a height of 3 cm.", "triangle_area",
     {"forget_half"}),
])
def test_a_quantity_asked_with_its_case_is_a_question_on_its_computation(task_id, text, kc, refuted) -> None:
    reading = _reader("math", task_id).read(text)
    assert [c.question for c in reading.claims] == [True] and reading.kc == kc, (text, normalise(text), reading)
    reader = _reader("math", task_id)
    assert _contrasted(reader, text) == refuted & _named(reader) and not reading.false_statements(), (text, reading)
    assert all(c.verdict == TRUE for c in reading.claims), reading  # (a base's 10 is not the area)


@pytest.mark.parametrize(("text", "verdict"), [
    ("Here 7 tens + 11 ones comes to 81.", TRUE),
    ("3 tens and 12 ones is 4 tens and 2 ones, which is 42.", TRUE),
    ("7 tens + 11 ones = 71.", FALSE),
])
def test_tens_and_ones_are_the_number_they_make(text, verdict) -> None:
    reading = _reader("math", "two_digit_addition").read(text)
    assert reading.claims and {c.verdict for c in reading.claims} == {verdict}, (text, normalise(text), reading)
    assert reading.kc == "place_value", reading
    # the tens of a column added are not a number in tens and ones
    assert _reader("math", "two_digit_addition").read("1 + 4 + 1 = 6 tens.").false_statements() == 0


@pytest.mark.parametrize("text", [
    "Watch: 34 - 16 = 18; 18 ÷ 9 = 2; 9 × 2 + 16 = 34.",
    "Subtract 8: $18 - 8 = 10$. Divide by 2: $10 \\div 2 = 5$. Check: $2 \\times 5 + 8 = 18$ ✓",
])
def test_steps_that_undo_an_equation_and_check_the_value_solve_it(text) -> None:
    reading = _reader("math", "two_step_equation").read(text)
    assert not reading.false_statements() and reading.kc in _EQUATION_KCS, (text, reading)
    # the same arithmetic without the undoing before it is no equation
    assert _reader("math", "two_step_equation").read("9 × 2 + 16 = 34.").kc is None


@pytest.mark.parametrize(("task_id", "text", "verdict", "affirmed"), [
    # a formula in words before the numbers: its last number is no side of its own ("2 = 20" was read, false)
    ("triangle_area", "Area = (base × height) ÷ 2 = (8 × 5) ÷ 2 = 20 cm²", TRUE, None),
    ("triangle_area", "Area = (base × height) ÷ 2 = (8 × 5) ÷ 2 = 40 cm²", FALSE, "forget_half"),
    # a rectangle's perimeter as twice the length plus twice the width
    ("rectangle_perimeter", "The perimeter is 2 × 8 + 2 × 3 = 16 + 6 = 22.", TRUE, None),
    ("rectangle_perimeter", "2 × 8 + 2 × 3 = 24", FALSE, "confuse_area_perimeter"),
])
def test_formulas_in_words_and_twice_each_side(task_id, text, verdict, affirmed) -> None:
    reading = _reader("math", task_id).read(text)
    assert reading.claims[0].verdict == verdict and reading.claims[0].kc is not None, (text, reading)
    assert (verdict == FALSE) == bool(reading.false_statements()), (text, reading)
    assert reading.affirmed == ((affirmed,) if affirmed else ()), (text, reading)


@pytest.mark.parametrize("text", [
    "1 + " * 3000 + "10 = 40",  # a side too long to be one (its tree overflowed the stack)
    "x + " * 3000 + "10 = 40",
    "2:5 = " * 2000 + "6:__",
    "8x = 16 = " * 1000 + "2",
])
def test_absurdly_long_math_is_read_quickly_and_safely(text) -> None:
    import time

    start = time.process_time()
    _reader("math", "two_step_equation").read(text)
    assert time.process_time() - start < 1.5, text[:40]


@pytest.mark.parametrize(("text", "verdict"), [
    ("First do 4 × 2 = 8, then add 3 to get 11.", TRUE),
    ("4 × 2 = 8. Then add 3 to get 11.", TRUE),  # on the last step of the sentence before
    ("First do 4 × 2 = 8, then add 3 to get 12.", FALSE),
])
def test_a_step_said_in_words_works_on_the_value_before_it(text, verdict) -> None:
    reading = _reader("math", "order_of_operations").read(text)
    assert reading.claims[-1].verdict == verdict, (text, reading)
    if verdict == TRUE:
        assert reading.kc == "operation_precedence", (text, reading)
    assert not _reader("math", "order_of_operations").read("Add 3 to get 11.").claims  # nothing before it


@pytest.mark.parametrize(("text", "verdict", "question"), [
    ("The LCD of 4 and 6 is 12.", TRUE, False),
    ("The least common denominator of 3 and 5 is 15, so 2/3 = 10/15.", TRUE, False),
    ("A common denominator of 4 and 6 is 24.", TRUE, False),  # a common one: any multiple of both
    ("What is the LCD of 4 and 6?", TRUE, True),
    ("The LCD of 4 and 6 is 24.", FALSE, False),  # a common multiple, not the least
    ("A common denominator of 4 and 6 is 10.", FALSE, False),
])
def test_a_common_denominator_is_checked(text, verdict, question) -> None:
    reading = _reader("math", "fraction_addition").read(text)
    lcd = [c for c in reading.claims if c.kc == "common_denominator"]
    assert [(c.verdict, c.question) for c in lcd] == [(verdict, question)], (text, reading)
    assert not _reader("math", "order_of_operations").read(text).claims or "/" in text  # no such component there


@pytest.mark.parametrize(("text", "verdicts"), [
    ("Solve 2x + 20 = 30. Check: 2(5) + 20 = 10 + 20 = 30 ✓", [TRUE, TRUE]),  # every step of the check
    ("$$\\begin{aligned} 2x + 20 &= 30 \\\\ 2x &= 10 \\\\ x &= 5 \\end{aligned}$$", [TRUE, TRUE, TRUE]),
    ("$$\\begin{aligned} 2x + 20 &= 30 \\\\ 2x &= 10 \\\\ x &= 6 \\end{aligned}$$", [TRUE, TRUE, FALSE]),
])
def test_a_checked_solution_and_an_aligned_block_are_steps_of_the_equation(text, verdicts) -> None:
    reading = _reader("math", "two_step_equation").read(text)
    steps = [c for c in reading.claims if not c.question]
    assert [c.verdict for c in steps] == verdicts and all(c.kc in _EQUATION_KCS for c in steps), (text, reading)


@pytest.mark.parametrize(("text", "verdict"), [
    ("Multiply the top and bottom of 2/3 by 4 to get 8/12.", TRUE),
    ("Multiply the numerator and denominator of 2/3 by 4 to get 8/13.", FALSE),
    ("(2 × 4)/(3 × 4) = 8/12", TRUE),
])
def test_a_fraction_scaled_top_and_bottom_is_an_equivalent_fraction(text, verdict) -> None:
    reading = _reader("math", "fraction_addition").read(text)
    math_claims = [c for c in reading.claims if c.source == "math"]
    assert math_claims and all(c.kc == "fraction_equivalence" for c in math_claims), (text, reading)
    assert (verdict == FALSE) == bool(reading.false_statements()), (text, reading)
    # what a fraction is multiplied by is no value of it ("by 4 to get 8/12" was read 4 = 8/12, false)
    assert not _reader("math", "fraction_addition").read("Multiply the top and bottom by 4 to get 8/12.") \
        .false_statements()


def test_a_lone_solution_is_checked_only_against_an_equation_of_its_turn() -> None:
    reader = _reader("math", "two_step_equation")
    # the turn may work another equation than the task's (an item's, said in an earlier turn): unchecked
    assert reader.read("x = 10.").claims == ()
    assert [c.verdict for c in reader.read("x + 9 = 19. Subtract 9: x = 10.").claims] == [TRUE, TRUE]


@pytest.mark.parametrize(("task_set", "task_id", "text"), [
    # a lecture's worked example: the problem set in the imperative, then its solution
    ("math", "triangle_area", "Find the area: Area of a triangle = 1/2 × base × height, with the height at a right "
     "angle to the base. The base is 10 and the perpendicular height is 10; the 15 side is slanted and not used. "
     "1/2 × 10 × 10 = 50."),
    ("math", "order_of_operations", "Evaluate 35 - 12 + 5 × 8. Multiplication comes before addition and "
     "subtraction: 5 × 8 = 40. The expression is now 35 - 12 + 40. Add and subtract from left to right: "
     "35 - 12 = 23. 23 + 40 = 63."),
])
def test_a_problem_the_turn_works_itself_is_no_question(task_set, task_id, text) -> None:
    """A worked example shows a solution; the student is not asked for one (no practice, no generation effect)."""
    reading = _reader(task_set, task_id).read(text)
    assert reading.kc is not None and reading.true_statements(reading.kc) >= 2, reading
    assert not any(c.question for c in reading.claims), reading


@pytest.mark.parametrize("text", [
    "Evaluate 26 - 19 + 9 × 2.",  # the problem alone
    "Evaluate 26 - 19 + 9 × 2. Hint: multiplication comes before addition and subtraction.",  # one hint after
    "In 26 - 19 + 9 × 2, is 9 × 2 worked out before the addition? Multiplication comes before addition and "
    "subtraction. Then add and subtract from left to right.",  # asked with a question mark, then explained
    "Evaluate 26 - 19 + 9 × 2. First, 9 × 2 = 18. The expression is now 26 - 19 + 18. What do you get?",
])
def test_a_problem_left_to_the_student_stays_a_question(text) -> None:
    reading = _reader("math", "order_of_operations").read(text)
    assert any(c.question and c.kc is not None for c in reading.claims), (text, reading)


@pytest.mark.parametrize("text", [
    "Let's work out 3/4 + 1/6. 3/4 = 9/12; 1/6 = 2/12; 9/12 + 2/12 = 11/12. It is 11/12, not 2/5.",
    "Let's add 3/4 + 1/6.\n1. **Step 1:** $\\frac{3}{4} = \\frac{9}{12}$\n2. **Step 2:** $\\frac{1}{6} = "
    "\\frac{2}{12}$\n3. **Step 3:** $\\frac{9}{12} + \\frac{2}{12} = \\frac{11}{12}$\n\n**Answer:** 11/12, not 2/5",
    "Example: 3/4 + 1/6. 3/4 = 9/12 and 1/6 = 2/12. So the answer is 11/12, not 2/5.",
])
def test_the_result_of_a_problem_set_out_is_stated_and_contrasted(text) -> None:
    """The computation a turn sets out to work ("Let's add …", "Example: …") and the result it gives it ("It is
    11/12", "**Answer:** 11/12") are one statement; the wrong rule's result set against it ("not 2/5") is the
    contrast that makes the case a counterexample to that rule."""
    reading = _reader("math", "fraction_addition").read(text)
    assert reading.refuted == ("add_numerators_and_denominators",), reading
    assert reading.false_statements() == 0 and not any(c.question for c in reading.claims), reading


def test_the_result_given_to_a_problem_set_out_is_checked() -> None:
    reader = _reader("math", "fraction_addition")
    wrong = reader.read("Let's work out 3/4 + 1/6. It is 2/5.")
    assert [(c.verdict, c.affirms) for c in wrong.claims] == [(FALSE, "add_numerators_and_denominators")]
    # a result stated in a relation already is not counted again from "It is …"
    once = _reader("math", "integer_addition").read("Let's work out -6 + 13: -6 + 13 = 7. It is 7, not 19.")
    assert [(c.verdict, c.refutes) for c in once.claims] == [(TRUE, ("ignore_signs",))], once
    # no problem set out: "It is 11/12" has nothing to be the result of
    assert reader.read("It is 11/12, not 2/5.").claims == ()


@pytest.mark.parametrize(("task_set", "task_id", "fact"), [
    ("math", "order_of_operations", "Multiplication comes before addition and subtraction."),
    ("stem", None, None),
])
def test_a_statement_asked_back_is_no_question(task_set, task_id, fact) -> None:
    """"<fact> What did I just say?" asks the student to say back the sentence before, "<fact> Does that make
    sense?" asks nothing: recalled from the turn, not a question to work -- a form of address set off by commas
    ("…, buddy?", "…, my young friend?") adds nothing, nor does the component's name ("… about order of
    operations?"). A question that asks why, or brings a case or words of its own, is still one."""
    if task_id is None:
        ts = get_task_set(task_set)
        task_id = ts.task_ids()[0]
        kc = ts.build(task_id, np.random.default_rng(0)).knowledge_components[0]
        fact = (kc.facts or [kc.explanation])[0]
    reader = _reader(task_set, task_id)
    assert reader.read(fact).true_statements(reader.read(fact).kc) >= 1
    name = next(k.name for k in reader.task.knowledge_components if k.id == reader.read(fact).kc).lower()
    for echo in (f"So, what did I just say about {name}?", f"Can you tell me what I said about {name}?",
                 "What did I just say?", "Can you repeat that rule?", "So, what did I just say about it?",
                 "Does that make sense?", "Got it?", "Is that clear?", "What did I just say, buddy?",
                 "Does that make sense to you, champ?", "Got it, pal?", "Buddy, what did I just say?",
                 "Can you say that back to me, my young friend?"):
        reading = reader.read(f"{fact} {echo}")
        assert reading.true_statements(reading.kc) >= 1 and not any(c.question for c in reading.claims), echo
    asks = ("Why?", "Why is that so?", "What went wrong?", "Is that so, or does it break somewhere?")
    if task_set == "math":
        asks += ("What is 26 - 19 + 9 × 2?", "Which do you work first in a sum with a product?")
    for asked in asks:
        assert any(c.question for c in reader.read(f"{fact} {asked}").claims), asked


@pytest.mark.parametrize("task_set", ["math", "stem"])
def test_the_lessons_own_practice_questions_are_questions_on_their_component(task_set) -> None:
    """A tutor that asks the lesson's practice questions as written ("Name two ways of protecting steel from
    rust.", "What is 8 × 9, and what does the expression become after that step?", "What is runoff?") asks a
    question on the component each is written for (the case a question sets up first may state facts), in the
    imperative too."""
    ts = get_task_set(task_set)
    asked = missed = 0
    for task_id in ts.task_ids():
        for seed in (0, 1):
            task = ts.build(task_id, np.random.default_rng(seed))
            reader = ContentReader.for_task(task)
            for kc in task.knowledge_components:
                for q in kc.questions:
                    asked += 1
                    claims = reader.read(f"Now you try: {q.text}").claims
                    put = [c.kc for c in claims if c.question and c.kc is not None]
                    if not put or set(put) != {kc.id}:
                        missed += 1
    assert asked > 400 and missed <= 0.01 * asked, (missed, asked)
