"""The misconceptions' computable wrong rules (:data:`WRONG_RULES`: a rule replaces the evaluation of the sub-trees
it applies to), the comparison and equivalence rules, the rule inferred for a user's own misconception, and the
verdict and value a rule gives on a claim's case."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from tutorzoo.envs.reading.chains import MATH_SPAN
from tutorzoo.envs.reading.expressions import (
    Node,
    constant_of,
    decimal_places,
    evaluate,
    frac_parts,
    is_decimal,
    leaves_of,
    op_set,
    parse,
    subtrees,
)
from tutorzoo.envs.reading.normalise import normalise
from tutorzoo.envs.reading.operations import half_product, is_perimeter
from tutorzoo.envs.tasks.base import Task


def _rule_add_tops_bottoms(node: Node) -> Fraction | None:
    if node.op == "+":
        a, b = frac_parts(node.lhs), frac_parts(node.rhs)
        if a and b and a[1] + b[1]:
            return Fraction(a[0] + b[0], a[1] + b[1])
    return None


def _rule_numerators_not_scaled(node: Node) -> Fraction | None:
    if node.op == "+":
        a, b = frac_parts(node.lhs), frac_parts(node.rhs)
        if a and b and a[1] != b[1]:
            den = math.lcm(int(a[1]), int(b[1])) if a[1].denominator == 1 == b[1].denominator else None
            if den:
                return Fraction(a[0] + b[0], den)
    return None


def _rule_left_to_right(node: Node) -> Fraction | None:
    leaves, ops = _flatten(node)
    if leaves is None or len(ops) < 2 or not ({"+", "-"} & set(ops) and {"*", "/"} & set(ops)):
        return None
    acc = leaves[0]
    for op, v in zip(ops, leaves[1:], strict=True):
        acc = acc + v if op == "+" else acc - v if op == "-" else acc * v if op == "*" else (acc / v if v else acc)
    return acc


def _rule_add_before_sub(node: Node) -> Fraction | None:
    # a - b + c read as a - (b + c)
    if node.op == "+" and node.lhs.op == "-" and not node.lhs.paren:
        a, b, c = constant_of(node.lhs.lhs), constant_of(node.lhs.rhs), constant_of(node.rhs)
        if a is not None and b is not None and c is not None:
            return a - (b + c)
    return None


def _flatten(node: Node) -> tuple[list[Fraction] | None, list[str]]:
    """Left-to-right numbers and operators of an expression without parentheses."""
    if node.op == "num":
        return [node.number], []
    if node.op in "+-*/" and len(node.op) == 1 and not node.paren:
        left, lops = _flatten(node.lhs)
        right, rops = _flatten(node.rhs)
        if left is None or right is None:
            return None, []
        return left + right, lops + [node.op] + rops
    return None, []


def _rule_ignore_signs(node: Node) -> Fraction | None:
    if any(n.op == "neg" for n in subtrees(node)) and node.op in "+-":
        vals = [abs(leaf.number) for leaf in leaves_of(node) if leaf.op == "num"]
        if len(vals) == 2:
            return vals[0] + vals[1] if node.op == "+" else vals[0] - vals[1]
    return None


def _rule_sign_of_first(node: Node) -> Fraction | None:
    if node.op == "+":
        a, b = constant_of(node.lhs), constant_of(node.rhs)
        if a is not None and b is not None and (a < 0) != (b < 0):
            mag = abs(a + b)
            return mag if a > 0 else -mag
    return None


def _rule_minus_negative(node: Node) -> Fraction | None:
    if node.op == "-" and node.rhs.op == "neg":
        a, b = constant_of(node.lhs), constant_of(node.rhs.lhs)
        if a is not None and b is not None:
            return a - b
    return None


def rule_no_regrouping(node: Node) -> Fraction | None:
    """``no_regrouping``: a two-digit sum with the carried ten dropped (``27 + 15 = 32``)."""
    if node.op == "+" and node.lhs.op == "num" == node.rhs.op and "." not in node.lhs.text + node.rhs.text:
        a, b = int(node.lhs.number), int(node.rhs.number)
        if a >= 0 and b >= 0 and (a % 10 + b % 10) >= 10:
            return Fraction(a + b - 10)
    return None


def _rule_whole_column(node: Node) -> Fraction | None:
    if node.op == "+" and node.lhs.op == "num" == node.rhs.op and "." not in node.lhs.text + node.rhs.text:
        a, b = int(node.lhs.number), int(node.rhs.number)
        ones = a % 10 + b % 10
        if a >= 0 and b >= 0 and ones >= 10:
            return Fraction(int(f"{a // 10 + b // 10}{ones}"))
    return None


def _rule_align_last(node: Node) -> Fraction | None:
    if node.op == "+" and is_decimal(node.lhs) != is_decimal(node.rhs) or node.op == "+" and \
            is_decimal(node.lhs) and is_decimal(node.rhs) and \
            decimal_places(node.lhs) != decimal_places(node.rhs):
        if node.lhs.op == "num" == node.rhs.op:
            p = max(decimal_places(node.lhs), decimal_places(node.rhs))
            a = int(node.lhs.text.replace(".", ""))
            b = int(node.rhs.text.replace(".", ""))
            return Fraction(a + b, 10 ** p)
    return None


def _rule_add_parts(node: Node) -> Fraction | None:
    if node.op == "+" and is_decimal(node.lhs) and is_decimal(node.rhs):
        (aw, af), (bw, bf) = node.lhs.text.split("."), node.rhs.text.split(".")
        frac = int(af) + int(bf)
        if len(af) == len(bf) and frac >= 10 ** len(af) or len(af) != len(bf):
            return Fraction(int(aw) + int(bw)) + Fraction(frac, 10 ** len(str(frac)))
    return None


def _rule_forget_half(node: Node) -> Fraction | None:
    if half_product(node):
        v = constant_of(node)
        return None if v is None else v * 2
    return None


def _rule_percent_as_dollars(node: Node) -> Fraction | None:
    # y - x% * y  read as  y - x
    if node.op == "-" and node.rhs.op == "*":
        y = constant_of(node.lhs)
        pct = pct_value(node.rhs.lhs) or pct_value(node.rhs.rhs)
        if y is not None and pct is not None:
            return y - pct * 100
    return None


def pct_value(node: Node) -> Fraction | None:
    """A percent written ``p/100`` as its fraction (``25/100`` -> 1/4), else ``None``."""
    if node.op == "/" and node.rhs.op == "num" and node.rhs.value == 100 and node.lhs.op == "num":
        return node.lhs.number / 100
    return None


def _rule_discount_as_price(node: Node) -> Fraction | None:
    if node.op == "-" and node.rhs.op == "*":
        y, part = constant_of(node.lhs), constant_of(node.rhs)
        if y is not None and part is not None and (pct_value(node.rhs.lhs) or pct_value(node.rhs.rhs)):
            return part
    return None


def _written(node: Node) -> Fraction | None:
    """A quantity's number as written (``40`` for "40 km/h"), for rules that work on the numbers, not the units."""
    return Fraction(node.text) if node.op == "num" and node.dim and node.text else None


def _rectangle_sides(node: Node) -> tuple[Fraction, Fraction] | None:
    """The two side lengths of a rectangle's perimeter computation (``2 × (a + b)``, ``2a + 2b``, ``a + b + a + b``)."""
    if not is_perimeter(node):
        return None
    nums = sorted(leaf.number for leaf in leaves_of(node))
    if len(nums) == 4 and op_set(node) == {"+"}:
        return nums[0], nums[2]
    if node.op == "+":  # 2a + 2b
        a, b = (n.rhs if constant_of(n.lhs) == 2 else n.lhs for n in (node.lhs, node.rhs))
        return (a.number, b.number) if a.op == "num" == b.op else None
    other = node.rhs if constant_of(node.lhs) == 2 else node.lhs
    if other.op == "+" and other.lhs.op == "num" and other.rhs.op == "num":
        return other.lhs.number, other.rhs.number
    return None


def _rule_two_sides_only(node: Node) -> Fraction | None:
    # the perimeter as the length plus the width
    sides = _rectangle_sides(node)
    return None if sides is None else sides[0] + sides[1]


def _rule_confuse_area_perimeter(node: Node) -> Fraction | None:
    # the perimeter as the length times the width
    sides = _rectangle_sides(node)
    return None if sides is None else sides[0] * sides[1]


def _trip_parts(node: Node) -> tuple[str, Fraction, Fraction, Fraction] | None:
    """A speed-distance-time computation on quantities with units: (what it finds, the two numbers as written,
    the SI size of one unit of its result): ``120 km / 40 km/h`` finds a time, ``120 km / 3 h`` a speed,
    ``40 km/h * 3 h`` a distance. Bare numbers say nothing about which is which (``None``)."""
    if node.op not in ("/", "*") or node.left is None or node.right is None:
        return None
    a, b = _written(node.left), _written(node.right)
    if a is None or b is None or a == 0 or b == 0:
        return None
    dims = (node.left.dim, node.right.dim)
    value = constant_of(node)
    if value is None:
        return None
    if node.op == "/" and dims == ("length", "speed"):
        kind, shown = "time", a / b
    elif node.op == "/" and dims == ("length", "time"):
        kind, shown = "speed", a / b
    elif node.op == "*" and set(dims) == {"speed", "time"}:
        kind, shown = "distance", a * b
    else:
        return None
    return kind, a, b, value / shown


def _rule_multiply_distance_speed(node: Node) -> Fraction | None:
    # the two numbers multiplied whatever they are: 120 km at 40 km/h "takes 4800 hours"
    parts = _trip_parts(node)
    if parts is None or parts[0] == "distance":
        return None
    _kind, a, b, unit = parts
    return a * b * unit


def _rule_invert_rate(node: Node) -> Fraction | None:
    # the division turned round (time = speed ÷ distance, speed = time ÷ distance), or the rate divided where it
    # is multiplied (distance = speed ÷ time)
    parts = _trip_parts(node)
    if parts is None:
        return None
    kind, a, b, unit = parts
    if kind == "distance":
        v, t = (a, b) if node.lhs.dim == "speed" else (b, a)
        return v / t * unit
    return b / a * unit


# A misconception's wrong rule on an expression's sub-trees (``None`` where it does not apply). Misconceptions
# without a rule here (slant side as height, conversion direction …) are met through their propositions.
WRONG_RULES: dict[str, Callable[[Node], Fraction | None]] = {
    "add_numerators_and_denominators": _rule_add_tops_bottoms,
    "numerators_not_scaled": _rule_numerators_not_scaled,
    "strictly_left_to_right": _rule_left_to_right,
    "addition_before_subtraction": _rule_add_before_sub,
    "ignore_signs": _rule_ignore_signs,
    "sign_of_first_number": _rule_sign_of_first,
    "minus_negative_is_minus": _rule_minus_negative,
    "no_regrouping": rule_no_regrouping,
    "write_whole_column_sum": _rule_whole_column,
    "align_last_digits": _rule_align_last,
    "add_parts_separately": _rule_add_parts,
    "forget_half": _rule_forget_half,
    "subtract_percent_as_dollars": _rule_percent_as_dollars,
    "discount_as_price": _rule_discount_as_price,
    "multiply_distance_speed": _rule_multiply_distance_speed,
    "invert_rate": _rule_invert_rate,
    "two_sides_only": _rule_two_sides_only,
    "confuse_area_perimeter": _rule_confuse_area_perimeter,
}


def _compare_rule(mid: str, a: Node, b: Node) -> bool | None:
    """A comparison misconception's verdict on ``a > b`` (``None``: the rule says nothing here)."""
    fa, fb = frac_parts(a), frac_parts(b)
    if mid == "larger_denominator_larger" and fa and fb and fa[1] != fb[1]:
        return fa[1] > fb[1]
    if mid == "larger_numerator_larger" and fa and fb and fa[0] != fb[0]:
        return fa[0] > fb[0]
    if mid in ("longer_decimal_larger", "shorter_decimal_larger") and is_decimal(a) and is_decimal(b):
        if decimal_places(a) == decimal_places(b):
            return None
        longer = decimal_places(a) > decimal_places(b)
        return longer if mid == "longer_decimal_larger" else not longer
    return None


def _equiv_rule(mid: str, a: Node, b: Node) -> bool | None:
    """``add_same_to_top_and_bottom``: a/b equals (a+k)/(b+k) under the wrong rule."""
    fa, fb = frac_parts(a), frac_parts(b)
    if mid == "add_same_to_top_and_bottom" and fa and fb and fb[1] != fa[1]:
        return fb[0] - fa[0] == fb[1] - fa[1]
    return None


def infer_rule(mid: str, task: Task) -> Callable[[Node], Fraction | None] | None:
    """For a misconception the curriculum does not know (a user's own task): the known wrong rule that turns an
    item's expression into the answer the item lists for this misconception."""
    for item in (*task.pretest, *task.posttest):
        wrong = item.misconception_answers.get(mid)
        if wrong is None or item.is_choice:
            continue
        stated = parse(normalise(wrong))
        target = constant_of(stated) if stated is not None else None
        if target is None:
            continue
        for span in MATH_SPAN.findall(normalise(item.stem)):
            node = parse(span.strip(" ?"))
            if node is None or node.op in ("num", "var"):
                continue
            for rule in WRONG_RULES.values():
                got = evaluate(node, rule)
                if got is not None and got[0] == 0 and got[1] == target and constant_of(node) != target:
                    return rule
    return None


def wrong_verdict(mid: str, rel: str, nodes: list[Node],
                   rule: Callable[[Node], Fraction | None] | None = None) -> tuple[bool, bool] | None:
    """(correct rule's verdict, misconception's verdict) on this relation or question; ``None``: no rule."""
    if rel in ("<", ">") and len(nodes) == 2:
        a, b = (nodes[0], nodes[1]) if rel == ">" else (nodes[1], nodes[0])
        says = _compare_rule(mid, a, b)
        if says is None:
            return None
        return (constant_of(a) or 0) > (constant_of(b) or 0), says
    if rel == "=" and len(nodes) == 2:
        eq = _equiv_rule(mid, nodes[0], nodes[1])
        if eq is not None:
            return constant_of(nodes[0]) == constant_of(nodes[1]), eq
    rule = rule or WRONG_RULES.get(mid)
    if rule is None:
        return None
    lhs = nodes[0]
    right = evaluate(lhs)
    wrong = evaluate(lhs, rule)
    if right is None or wrong is None or right[0] or wrong[0]:
        return None
    if wrong[1] == right[1]:
        return True, True  # the rule agrees with the truth on this case: no counterexample, no affirmation
    if len(nodes) == 1:
        return True, False  # a question on a discriminating case
    stated = constant_of(nodes[1])
    if stated is None:
        return None
    return stated == right[1], stated == wrong[1]


def wrong_value(mid: str, rel: str, nodes: list[Node],
                 rule: Callable[[Node], Fraction | None] | None) -> Fraction | None:
    """The value a misconception's rule gives for the claim's expression (``None``: a comparison or equivalence)."""
    rule = rule or WRONG_RULES.get(mid)
    if rule is None or rel != "=":
        return None
    wrong = evaluate(nodes[0], rule)
    return None if wrong is None or wrong[0] else wrong[1]
