"""The computations a relation performs (:func:`operations`) and the ones that exercise each math KC
(:data:`KC_OPERATIONS`): a claim exercises the KC whose computation it performs, never the KC whose name it says."""

from __future__ import annotations

from fractions import Fraction
from typing import cast

from tutorzoo.envs.reading.chains import relation_chains
from tutorzoo.envs.reading.expressions import (
    REL,
    Node,
    constant_of,
    decimal_places,
    is_decimal,
    is_fraction,
    leaves_of,
    op_set,
    parse,
    scaled_fraction,
    subtrees,
)
from tutorzoo.envs.reading.normalise import normalise, sentences


def operations(rel: str, sides: list[Node]) -> set[str]:
    """The computations a relation performs (the vocabulary of :data:`KC_OPERATIONS`)."""
    ops: set[str] = set()
    leaves = [leaf for s in sides for leaf in leaves_of(s)]
    if any(leaf.op == "var" for leaf in leaves):
        return {"equation"}
    if any(leaf.dim in ("length", "mass", "volume", "time") for leaf in leaves):
        dims = {leaf.dim for leaf in leaves if leaf.dim}
        # (0.7 m against 0.7 cm: the same number in two units is a conversion too)
        distinct = len({(leaf.text, leaf.value) for leaf in leaves})
        if distinct >= 2 and len(dims) == 1 and all(s.op == "num" for s in sides):
            ops.add("convert")
    if any(leaf.dim == "speed" for leaf in leaves) or {"time", "length"} <= {leaf.dim for leaf in leaves}:
        ops.add("speed")
    trees = [list(subtrees(s)) for s in sides]  # each side's sub-trees, walked once for every test below
    nodes = [n for tree in trees for n in tree]
    fractions = [n for n in nodes if is_fraction(n)]
    negs = any(n.op == "neg" for n in nodes) or any(
        (constant_of(s) or 0) < 0 for s in sides)
    for s, tree in zip(sides, trees, strict=True):
        for n in tree:
            if n.op in "+-" and n.op != "neg" and len(n.op) == 1:
                if is_fraction(n.lhs) and is_fraction(n.rhs):
                    like = n.lhs.rhs.value == n.rhs.rhs.value
                    ops.add("frac_add_like" if like else "frac_add_unlike")
                elif is_decimal(n.lhs) or is_decimal(n.rhs):
                    ops.add("dec_add")
                elif negs:
                    ops.add("int_sub" if n.op == "-" else "int_add")
                else:
                    ops.add("whole_add" if n.op == "+" else "whole_sub")
        flat = op_set(s)
        if {"+", "-"} & flat and {"*", "/"} & flat and not (len(fractions) and flat <= {"/", "+", "-"}):
            ops.add("precedence")
        if "+" in flat and "-" in flat:
            ops.add("left_to_right")
        if half_product(s):
            ops.add("triangle_area")
        if is_perimeter(s):
            ops.add("perimeter")
    if rel in ("<", ">"):
        if fractions:
            ops.add("frac_compare")
        elif any(is_decimal(s) for s in sides):
            ops.add("dec_compare")
        elif negs:
            ops.add("int_compare")
    if rel == "=" and len(sides) >= 2 and all(is_fraction(s) or scaled_fraction(s) for s in sides[:2]) \
            and any(is_fraction(s) for s in sides[:2]):
        ops.add("frac_equiv")
        if constant_of(sides[0].rhs) != constant_of(sides[1].rhs):
            ops.add("rename")
    if rel == "=" and any(is_fraction(s) for s in sides) and any(is_decimal(s) for s in sides):
        ops.add("dec_fraction")
    if rel == "=" and len(sides) == 2 and all(s.op == "num" and not s.dim for s in sides) and any(
            is_decimal(s) for s in sides) and decimal_places(sides[0]) != decimal_places(sides[1]):
        ops.add("dec_equiv")  # "0.5 = 0.50": a zero after the last digit changes nothing
    if any(getattr(leaf, "text", "").endswith("%") for leaf in leaves) or any(n.op == "pct" for n in nodes):
        ops.add("percent")
    if any(n.op == "+" and n.paren and n.lhs.op == "*" and n.lhs.rhs.op == "num" and n.lhs.rhs.value == 10
           for n in nodes):
        ops.add("place")  # (7 * 10 + 11): tens and ones
    if rel == "=" and not ops and {"*"} & set().union(*(op_set(s) for s in sides)):
        ops.add("multiply")
    if rel == "=" and not ops and {"/"} & set().union(*(op_set(s) for s in sides)):
        ops.add("divide")
    return ops


def half_product(node: Node) -> bool:
    """``1/2 × b × h``, ``0.5 × b × h`` or ``b × h ÷ 2``: the triangle-area computation."""
    ops = op_set(node)
    if not (ops <= {"*", "/"} and "*" in ops):
        return False
    half = any((is_fraction(n) and n.lhs.number * 2 == n.rhs.value) or (n.op == "num" and n.value == Fraction(1, 2))
               for n in subtrees(node))
    return half or (node.op == "/" and node.rhs.op == "num" and node.rhs.value == 2)


def is_perimeter(node: Node) -> bool:
    """``2 × (a + b)``, ``2a + 2b`` or ``a + b + a + b``: the rectangle-perimeter computation."""
    ops = op_set(node)
    # (a number's value is set; an unknown's None would make sorted() raise, as it always has)
    nums = cast("list[Fraction]", [leaf.value for leaf in leaves_of(node)])
    if ops == {"+"} and len(nums) == 4 and sorted(nums)[0] == sorted(nums)[1] and sorted(nums)[2] == sorted(nums)[3]:
        return True
    if node.op == "+" and ops == {"*", "+"} and node.lhs.op == "*" == node.rhs.op and not node.paren:  # 2a + 2b
        return all(2 in (constant_of(n.lhs), constant_of(n.rhs)) for n in (node.lhs, node.rhs))
    return node.op == "*" and ops == {"*", "+"} and 2 in (constant_of(node.lhs), constant_of(node.rhs))


# The computations that exercise each math KC (a KC of the task is exercised by a claim that performs one).
KC_OPERATIONS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "fraction_equivalence": {"frac_equiv", "rename"},
    "common_denominator": {"frac_add_unlike", "rename"},
    "adding_fractions": {"frac_add_like", "frac_add_unlike"},
    "comparing_fractions": {"frac_compare"},
    "place_value": {"whole_add", "place"},
    "regrouping": {"whole_add_regroup"},
    "decimal_place_value": {"dec_compare", "dec_fraction", "dec_add", "dec_equiv"},
    "comparing_decimals": {"dec_compare"},
    "adding_decimals": {"dec_add"},
    "number_line": {"int_compare", "int_add", "int_sub"},
    "adding_integers": {"int_add"},
    "subtracting_integers": {"int_sub"},
    "operation_precedence": {"precedence"},
    "left_to_right_rule": {"left_to_right"},
    "inverse_operations": {"equation"},
    "balance_principle": {"equation"},
    "two_step_equations": {"equation"},
    "percent_meaning": {"percent"},
    "percent_of_quantity": {"percent", "multiply"},
    "percent_change": {"percent", "whole_sub"},
    "equivalent_ratios": {"frac_equiv", "ratio", "multiply"},
    "unit_rate": {"divide", "speed"},
    "area_concept": {"multiply"},
    "rectangle_properties": {"perimeter"},
    "perimeter": {"perimeter"},
    "base_and_height": set(),  # which length is the height: met through its propositions
    "triangle_area": {"triangle_area"},
    "metric_prefixes": {"convert"},
    "conversion_direction": {"convert"},
    "speed_distance_time": {"speed", "divide", "multiply"},
}.items()}


def operations_in(texts) -> frozenset[str]:
    """Every computation performed by the relations (and asked expressions) in ``texts``."""
    ops: set[str] = set()
    for text in texts:
        for sent in sentences(text):
            for chain in relation_chains(normalise(sent)):
                parts = REL.split(chain)
                nodes = [parse(s.strip(" ?")) for s in parts[0::2]]
                if None not in nodes and len(nodes) >= 2:
                    ops |= operations(parts[1], cast("list[Node]", nodes))
    return frozenset(ops)
