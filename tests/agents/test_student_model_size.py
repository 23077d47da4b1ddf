"""The student model stays readable: no function in ``agents/student/model.py`` is longer than 60 lines (issue 29)."""

from __future__ import annotations

import ast
from pathlib import Path

MODEL = Path(__file__).resolve().parents[2] / "agents" / "student" / "model.py"
LIMIT = 60


def test_no_function_in_the_student_model_exceeds_60_lines() -> None:
    tree = ast.parse(MODEL.read_text(encoding="utf-8"))
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert len(functions) > 10  # the model's functions were found
    long = {n.name: n.end_lineno - n.lineno + 1 for n in functions if n.end_lineno - n.lineno + 1 > LIMIT}
    assert not long, f"functions over {LIMIT} lines in {MODEL.name}: {long}; split them into named steps"


def test_every_plan_is_built_by_keyword() -> None:
    tree = ast.parse(MODEL.read_text(encoding="utf-8"))
    positional = [n.lineno for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Plan" and n.args]
    assert not positional, f"Plan(...) with positional arguments at lines {positional}; name each field"
