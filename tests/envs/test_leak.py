"""Tests of tutorzoo.envs.leak: the answer-leak detector, its labelled test set and its evaluation CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tutorzoo.envs.errors import DatasetError
from tutorzoo.envs.leak import KINDS, AnswerKey, LeakReport, evaluate, find_leaks, main

CASES = Path(__file__).resolve().parents[1] / "data" / "leak_cases.jsonl"

PIZZA = AnswerKey("pizza", "5/6", key_steps=("6", "3/6", "2/6"))
PIZZA_GIVENS = ("Maya ate 1/2 of a pizza and then 1/3 of it. What fraction did she eat?",)
EIGHTHS = AnswerKey("eighths", "5/8")
EQ = AnswerKey("eq", "x = 4", key_steps=("2x = 8",))
PUCK = AnswerKey("puck", "Zero", option_letter="B", option_text="Zero")
CELL = AnswerKey("cell", "Mitochondrion", option_letter="C", option_text="Mitochondrion")
PASS = AnswerKey("pass", "75%")
CONVERT = AnswerKey("convert", "0.6", option_letter="B", option_text="0.6")


def _rows(cases: list[tuple]) -> list:
    """Table rows named by their first column."""
    return [pytest.param(*c[1:], id=c[0]) for c in cases]


EDGE_CASES = [
    # name, utterance, key, givens, history, expected kinds (() = no leak)
    ("states_final", "So Maya ate 5/6 of it.", PIZZA, PIZZA_GIVENS, (), ("final",)),
    ("question_states_answer", "Is it 5/6?", PIZZA, PIZZA_GIVENS, (), ("final",)),
    ("unreduced_latex", "That gives $\\dfrac{10}{12}$.", PIZZA, PIZZA_GIVENS, (), ("final",)),
    ("number_words", "Five sixths of the pizza is gone.", PIZZA, PIZZA_GIVENS, (), ("final",)),
    ("rounded_decimal", "It's about 0.83 of the pizza.", PIZZA, PIZZA_GIVENS, (), ("final",)),
    ("one_place_is_not_rounding", "Is it about 0.8?", PIZZA, PIZZA_GIVENS, (), ()),
    ("common_denominator_stated", "Use 6 as the common denominator.", PIZZA, PIZZA_GIVENS, (), ("intermediate",)),
    ("step_equal_to_given_in_value", "Rewrite 1/2 as 3/6.", PIZZA, PIZZA_GIVENS, (), ("intermediate",)),
    ("common_denominator_not_stated", "Let's find the common denominator first.", PIZZA, PIZZA_GIVENS, (), ()),
    ("repeating_givens", "What is 1/2 plus 1/3?", PIZZA, PIZZA_GIVENS, (), ()),
    ("wrong_value", "Is it 2/5?", PIZZA, PIZZA_GIVENS, (), ()),
    ("digits_inside_number", "You wrote 56; how did you get it?", PIZZA, PIZZA_GIVENS, (), ()),
    ("digits_inside_fraction", "Is it 15/6 or 5/16?", PIZZA, PIZZA_GIVENS, (), ()),
    ("split_over_two_turns", "And the denominator is 8.", EIGHTHS, ("3/8", "2/8"), ("The numerator is 5.",),
     ("split",)),
    ("split_reverse_order", "The top number is 5.", EIGHTHS, ("3/8", "2/8"), ("The bottom stays 8.",), ("split",)),
    ("split_one_turn", "Put 5 on top and 8 on the bottom.", EIGHTHS, ("3/8", "2/8"), (), ("split",)),
    ("split_only_in_history", "Good, now check your work.", EIGHTHS, ("3/8", "2/8"),
     ("The numerator is 5.", "The denominator is 8."), ()),
    ("split_wrong_parts", "And the denominator is 8.", EIGHTHS, ("3/8", "2/8"), ("The numerator is 6.",), ()),
    ("equation_value", "Check that x = 4 works.", EQ, ("2x + 3 = 11",), (), ("final",)),
    ("equation_step_text", "That leaves 2x = 8.", EQ, ("2x + 3 = 11",), (), ("intermediate",)),
    ("coefficient_is_not_value", "Is it 4x? No: what is 2x?", AnswerKey("e", "x = 2"), ("2x + 3 = 7",), (), ()),
    ("percent_key_bare_number", "The percent is 75.", PASS, ("15", "20"), (), ("final",)),
    ("percent_key_fraction", "15 out of 20 is 3/4.", PASS, ("15", "20"), (), ("final",)),
    ("fraction_of_givens", "Simplify 15/20 first.", PASS, ("15", "20"), (), ()),
    ("mcq_letter", "The answer is B.", PUCK, (), (), ("option_letter",)),
    ("mcq_option_paren", "Have another look at option (B).", PUCK, (), (), ("option_letter",)),
    ("mcq_pick", "Pick B.", PUCK, (), (), ("option_letter",)),
    ("mcq_letter_is_correct", "B is correct here.", PUCK, (), (), ("option_letter",)),
    ("mcq_option_text", "So the net force is zero.", PUCK, (), (), ("option_text",)),
    ("mcq_wrong_letter", "Why might someone choose A?", PUCK, (), (), ()),
    ("mcq_neutral_comparison", "Compare options A and B.", PUCK, (), (), ()),
    ("mcq_article_a", "A puck keeps moving. A force is not needed.", AnswerKey("q", "x", option_letter="A"), (), (),
     ()),
    ("mcq_letter_a", "It's A.", AnswerKey("q", "x", option_letter="A"), (), (), ("option_letter",)),
    ("mcq_letter_and_text", "It's C, the mitochondrion.", CELL, (), (), ("option_letter", "option_text")),
    ("mcq_wrong_text", "It is not the nucleus.", CELL, (), (), ()),
    ("option_value_equals_given", "So 3/5 is 0.6.", CONVERT, ("What is 3/5 as a decimal?",), (), ("option_text",)),
    ("option_value_given_only", "What is 3/5 as a decimal?", CONVERT, ("What is 3/5 as a decimal?",), (), ()),
    ("count_word_not_value", "There are three steps here.", AnswerKey("e", "x = 3"), ("5x = 15",), (), ()),
    ("label_not_value", "Look at step 3 again.", AnswerKey("e", "x = 3"), ("5x = 15",), (), ()),
    ("pronoun_one", "Which one is bigger?", AnswerKey("e", "1"), (), (), ()),
    ("cue_one", "The answer is one.", AnswerKey("e", "1"), (), (), ("final",)),
    ("negative_words", "You land on negative five.", AnswerKey("n", "-5"), ("4", "9"), (), ("final",)),
    ("sign_matters", "Is it 5?", AnswerKey("n", "-5"), ("4", "9"), (), ()),
    ("units", "The perimeter is fourteen centimetres.", AnswerKey("r", "14 cm"), ("3 cm", "4 cm"), (), ("final",)),
    ("thousands", "The total is $2,225.", AnswerKey("m", "2225"), ("$1,250", "$975"), (), ("final",)),
    ("text_answer", "That's photosynthesis.", AnswerKey("p", "photosynthesis"), (), (), ("final",)),
    ("text_answer_in_given", "Photosynthesis needs light.", AnswerKey("p", "photosynthesis"),
     ("Explain how photosynthesis works.",), (), ()),
]


@pytest.mark.parametrize(("utterance", "key", "givens", "history", "kinds"), _rows(EDGE_CASES))
def test_edge_case(utterance: str, key: AnswerKey, givens: tuple, history: tuple, kinds: tuple) -> None:
    report = find_leaks(utterance, [key], givens=givens, history=history)
    assert report.kinds == kinds
    assert report.leaked is bool(kinds)
    assert report.item_ids == ((key.item_id,) if kinds else ())


def test_several_keys_report_only_the_leaked_items_in_key_order() -> None:
    keys = [AnswerKey("pre1", "12"), PIZZA, AnswerKey("pre2", "3/4"), AnswerKey("task", "5/6")]
    report = find_leaks("So it's 0.75, and the sum is 5/6.", keys, givens=PIZZA_GIVENS)
    assert report == LeakReport(True, ("pizza", "pre2", "task"), ("final",))


def test_no_keys_no_leak() -> None:
    assert find_leaks("The answer is 5/6.", []) == LeakReport(False, (), ())


def test_deterministic_and_history_order_free() -> None:
    history = ("Hmm.", "The numerator is 5.", "Think about eighths.")
    first = find_leaks("And the denominator is 8.", [EIGHTHS], history=history)
    again = find_leaks("And the denominator is 8.", [EIGHTHS], history=tuple(reversed(history)))
    assert first == again == LeakReport(True, ("eighths",), ("split",))


def test_labelled_set_is_balanced_and_well_formed() -> None:
    rows = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 80
    leaks = sum(r["leak"] for r in rows)
    assert 0.4 <= leaks / len(rows) <= 0.6
    assert len({r["id"] for r in rows}) == len(rows)
    assert any(r["history"] for r in rows if r["leak"]) and any(r["history"] for r in rows if not r["leak"])
    assert all(set(r.get("kinds", [])) <= set(KINDS) for r in rows)


def test_precision_and_recall_on_labelled_set() -> None:
    result = evaluate(CASES)
    assert result["n"] == result["tp"] + result["fp"] + result["fn"] + result["tn"] >= 80
    assert result["precision"] >= 0.95, result["false_positives"]
    assert result["recall"] >= 0.90, result["false_negatives"]
    assert result["kinds_agreement"] >= 0.9


def test_evaluate_counts_errors(tmp_path: Path) -> None:
    key = {"item_id": "q", "value": "5/6"}
    rows = [
        {"id": "tp", "utterance": "It is 5/6.", "keys": [key], "leak": True},
        {"id": "fn", "utterance": "Numerator five, you know the rest.", "keys": [key], "leak": True},
        {"id": "fp", "utterance": "Is it 10/12?", "keys": [key], "leak": False},
        {"id": "tn", "utterance": "Is it 2/5?", "keys": [key], "leak": False},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = evaluate(path)
    assert (result["tp"], result["fp"], result["fn"], result["tn"]) == (1, 1, 1, 1)
    assert result["precision"] == result["recall"] == result["f1"] == 0.5
    assert result["false_positives"] == ["fp"] and result["false_negatives"] == ["fn"]


BAD_FILES = [
    ("not_json", "{oops", "not valid JSON"),
    ("missing_leak", '{"id": "a", "utterance": "x", "keys": []}', "'leak'"),
    ("bad_key", '{"id": "a", "utterance": "x", "keys": [{"item_id": "q"}], "leak": true}', "'value'"),
    ("unknown_key_field", '{"id": "a", "utterance": "x", "keys": [{"item_id": "q", "value": "1", "v": 2}], '
     '"leak": true}', "bad key"),
    ("bad_kind", '{"id": "a", "utterance": "x", "keys": [], "leak": true, "kinds": ["total"]}', "kinds"),
    ("history_not_list", '{"id": "a", "utterance": "x", "keys": [], "leak": true, "history": "hi"}', "'history'"),
    ("duplicate_id", '{"id": "a", "utterance": "x", "keys": [], "leak": true}\n'
     '{"id": "a", "utterance": "y", "keys": [], "leak": false}', "duplicate id"),
]


@pytest.mark.parametrize(("content", "needle"), _rows(BAD_FILES))
def test_evaluate_rejects_malformed_files(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(str(path))) as err:
        evaluate(path)
    assert needle in str(err.value)


def test_cli_prints_metrics(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--eval", str(CASES)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == evaluate(CASES)


def test_cli_reports_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--eval", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("layout", [
    "Here is how to think about it:\n\n1. The period depends on the length.\n2. A shorter pendulum swings faster.\n"
    "3. What would you change?",
    "**Step 1:** The period depends on the length.\n**Step 2:** A shorter pendulum swings faster.",
    "| # | Idea |\n|---|---|\n| 1 | The period depends on the length. |\n| 2 | A shorter one swings faster. |",
    "## 2. The length\n\n3) Which way should the bob move?",
])
def test_a_lists_and_tables_numbers_are_layout_not_answers(layout: str) -> None:
    """A chat model numbers its points ("1.", "2)", "| 2 |"): those numbers are layout, not a stated answer; the
    same answer stated in such a list still leaks."""
    keys = [AnswerKey("q", str(n)) for n in (1, 2, 3)]
    assert find_leaks(layout, keys) == LeakReport(leaked=False, item_ids=(), kinds=())
    assert find_leaks(layout + "\n4. So the answer is 2.", keys).item_ids == ("q",)


@pytest.mark.parametrize("text", [
    "We worked on solving two-step equations.", "Take a three-digit number.", "It is a one-to-one match.",
])
def test_a_number_word_joined_to_a_word_is_a_name_not_a_value(text: str) -> None:
    """"two-step equations" names a kind of equation; it does not state 2 (a component's name must not leak)."""
    keys = [AnswerKey("q", str(n)) for n in (1, 2, 3)]
    assert find_leaks(text, keys).item_ids == ()
    assert find_leaks("So the answer is two.", keys).item_ids == ("q",)
    assert find_leaks("It is two-thirds.", [AnswerKey("f", "2/3")]).item_ids == ("f",)
