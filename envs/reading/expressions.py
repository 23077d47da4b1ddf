"""The expression tree (:class:`Node`), its parser (:func:`parse`: ``+ - * /``, parentheses, decimals, one unknown,
units) and exact evaluation (:func:`evaluate`, linear in the unknown), with the tree queries the other modules use
and :func:`check_relation`, the verdict of a chain of relations."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import cast

from tutorzoo.envs.reading.units import UNIT_ALT, UNITS

Lin = tuple[Fraction, Fraction]  # a*x + b

_TOKEN = re.compile(rf"\s*(?:(?P<num>\d+(?:\.\d+)?)(?:\s*(?P<unit>{UNIT_ALT})(?![a-z]))?|(?P<var>[a-z])(?![a-z])|"
                    rf"(?P<blank>□)(?:\s*(?P<bunit>{UNIT_ALT})(?![a-z]))?|(?P<op>[-+*/()]))", re.IGNORECASE)


class _NotEvaluated:
    """The type of :data:`_NOT_EVALUATED`."""


_NOT_EVALUATED = _NotEvaluated()  # a node's value not computed yet (None is a value: not linear, or undefined)


@dataclass(frozen=True, slots=True)
class Node:
    """An expression tree: ``op`` is ``num``/``var``/``neg`` or a binary operator; ``text`` the number as
    written (its decimal places matter to some misconceptions); ``unit`` a dimension for quantities.

    A node is immutable, so :func:`parse` hands out one tree per text and :func:`evaluate` keeps a node's value
    on it (``lin``: no part of the node's identity, equality or hash)."""

    op: str
    left: Node | None = None
    right: Node | None = None
    value: Fraction | None = None
    text: str = ""
    dim: str | None = None
    paren: bool = False
    lin: Lin | None | _NotEvaluated = field(default=_NOT_EVALUATED, init=False, repr=False, compare=False)

    # An operator's operands are set and a leaf's are not, which the field types cannot say: code that has checked
    # ``op`` reads them through these (reading one a node lacks raises AttributeError, as ``None.op`` would).
    @property
    def lhs(self) -> Node:
        """The first operand (of a binary operator or ``neg``)."""
        if self.left is None:
            raise AttributeError(f"a {self.op!r} node has no first operand")
        return self.left

    @property
    def rhs(self) -> Node:
        """The second operand (of a binary operator)."""
        if self.right is None:
            raise AttributeError(f"a {self.op!r} node has no second operand")
        return self.right

    @property
    def number(self) -> Fraction:
        """The value of a number (or of a blank with a unit: its unit's factor)."""
        if self.value is None:
            raise AttributeError(f"a {self.op!r} node has no value")
        return self.value


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.toks, self.i = tokens, 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expr(self) -> Node:
        node = self.term()
        while (t := self.peek()) and t[1] in "+-":
            self.take()
            node = Node(t[1], node, self.term())
        return node

    def term(self) -> Node:
        node = self.factor()
        while True:
            t = self.peek()
            if t and t[1] in "*/":
                self.take()
                node = Node(t[1], node, self.factor())
            elif t and t[0] in ("num", "var", "blank") or t and t[1] == "(":  # implicit product: 3x, 2(4 + 1)
                node = Node("*", node, self.factor())
            else:
                return node

    def factor(self) -> Node:
        t = self.take()
        if t[1] == "-":
            return Node("neg", self.factor())
        if t[1] == "(":
            node = self.expr()
            if self.take()[1] != ")":
                raise ValueError("unbalanced")
            return Node(node.op, node.left, node.right, node.value, node.text, node.dim, paren=True)
        if t[0] == "num":
            text, _, unit = t[1].partition("|")
            value = Fraction(text)
            if unit:
                dim, factor = UNITS[unit.lower()]
                return Node("num", value=value * factor, text=text, dim=dim)
            return Node("num", value=value, text=text)
        if t[0] == "var":
            return Node("var", text=t[1])
        if t[0] == "blank":  # an unknown to fill in; its unit's size is its value's factor
            unit = t[1].partition("|")[2]
            if unit:
                dim, factor = UNITS[unit.lower()]
                return Node("var", value=factor, text="□", dim=dim)
            return Node("var", text="□")
        raise ValueError(f"unexpected {t}")


@functools.lru_cache(maxsize=2048)  # the sides a turn writes recur (a draw's small numbers); a tree is never modified
def parse(expr: str) -> Node | None:
    """An arithmetic expression (``+ - * /``, parentheses, decimals, one unknown, units) or ``None``."""
    toks: list[tuple[str, str]] = []
    pos = 0
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None or m.end() == pos:
            if expr[pos:].strip() == "":
                break
            return None
        if m.group("num"):
            toks.append(("num", m.group("num") + ("|" + m.group("unit") if m.group("unit") else "")))
        elif m.group("var"):
            toks.append(("var", m.group("var").lower()))
        elif m.group("blank"):
            toks.append(("blank", "□|" + (m.group("bunit") or "")))
        else:
            toks.append(("op", m.group("op")))
        pos = m.end()
    if not toks or len(toks) > 300:  # (no side of a sentence is that long: a deep tree would overflow the stack)
        return None
    try:
        p = _Parser(toks)
        node = p.expr()
        return node if p.i == len(toks) else None
    except (ValueError, IndexError, ZeroDivisionError, KeyError):
        return None


def evaluate(node: Node, rule: Callable[[Node], Fraction | None] | None = None) -> Lin | None:
    """``(a, b)`` with the value ``a x + b`` (``a = 0`` for numbers); ``None`` when not linear or undefined.

    ``rule`` lets a misconception replace the evaluation of some sub-trees (it returns ``None`` elsewhere)."""
    if rule is None:  # the correct value: computed once per node (a reading evaluates each side many times)
        lin = node.lin
        if isinstance(lin, _NotEvaluated):
            lin = _evaluate(node, None)
            object.__setattr__(node, "lin", lin)
        return lin
    return _evaluate(node, rule)


def _evaluate(node: Node, rule: Callable[[Node], Fraction | None] | None) -> Lin | None:
    if rule is not None and node.op not in ("num", "var"):
        v = rule(node)
        if v is not None:
            return (Fraction(0), v)
    if node.op == "num":
        return (Fraction(0), node.number)
    if node.op == "var":
        return (node.value if node.value is not None else Fraction(1), Fraction(0))
    if node.op == "neg":
        v = evaluate(node.lhs, rule)
        return None if v is None else (-v[0], -v[1])
    a, b = evaluate(node.lhs, rule), evaluate(node.rhs, rule)
    if a is None or b is None:
        return None
    if node.op == "+":
        return (a[0] + b[0], a[1] + b[1])
    if node.op == "-":
        return (a[0] - b[0], a[1] - b[1])
    if node.op == "*":
        if a[0] and b[0]:
            return None
        return (a[0] * b[1] + b[0] * a[1], a[1] * b[1])
    if node.op == "/":
        if b[0] or b[1] == 0:
            return None
        return (a[0] / b[1], a[1] / b[1])
    return None


def constant_of(node: Node) -> Fraction | None:
    """The value of ``node`` when it is a number (no unknown), else ``None``."""
    v = evaluate(node)
    return v[1] if v is not None and v[0] == 0 else None


def leaves_of(node: Node | None) -> Iterable[Node]:
    """The numbers and unknowns of ``node``, left to right."""
    if node is None:
        return
    if node.op in ("num", "var"):
        yield node
    else:
        yield from leaves_of(node.left)
        yield from leaves_of(node.right)


def op_set(node: Node | None) -> set[str]:
    """The binary operators ``node`` uses."""
    if node is None or node.op in ("num", "var"):
        return set()
    return {node.op} | op_set(node.left) | op_set(node.right)


def is_fraction(node: Node) -> bool:
    """``a/b`` with two whole numbers as written (``3/4``, not ``0.5/2``)."""
    return node.op == "/" and node.lhs.op == "num" and node.rhs.op == "num" and "." not in node.lhs.text + \
        node.rhs.text


def scaled_fraction(node: Node) -> bool:
    """``(2 × 4)/(3 × 4)``: a fraction with its top and bottom multiplied by the same number."""
    if node.op != "/" or node.lhs.op != "*" or node.rhs.op != "*":
        return False
    top = {n.value for n in (node.lhs.lhs, node.lhs.rhs) if n.op == "num"}
    return len(list(leaves_of(node))) == 4 and bool(
        top & {n.value for n in (node.rhs.lhs, node.rhs.rhs) if n.op == "num"})


def is_decimal(node: Node) -> bool:
    """A number written with a decimal point."""
    return node.op == "num" and "." in node.text


def subtrees(node: Node | None) -> Iterable[Node]:
    """``node`` and every sub-tree of it, outermost first."""
    if node is None:
        return
    yield node
    if node.op not in ("num", "var"):
        yield from subtrees(node.left)
        yield from subtrees(node.right)


def frac_parts(node: Node) -> tuple[Fraction, Fraction] | None:
    """A fraction's numerator and denominator, else ``None``."""
    n = node
    if is_fraction(n):
        return n.lhs.number, n.rhs.number
    return None


def decimal_places(node: Node) -> int:
    """How many decimal places a number is written with."""
    return len(node.text.split(".")[1]) if "." in node.text else 0


# the relation signs a chain joins its sides with
REL = re.compile(r"(!=|<=|>=|=|<|>)")


def check_relation(nodes: list[Node], rels: list[str], reference: Lin | None) -> tuple[bool | None, Lin | None]:
    """The verdict on the chain ``nodes[0] rels[0] nodes[1] …`` (``None``: not checkable) and the solution of the
    unknown it is checked against (``reference``, else the chain's own: an equation in x sets it)."""
    vals = [evaluate(n) for n in nodes]
    if any(v is None for v in vals):
        return None, reference
    vals = cast("list[Lin]", vals)
    dims = {leaf.dim for n in nodes for leaf in leaves_of(n)}
    side_dims = [{leaf.dim for leaf in leaves_of(n)} - {None} for n in nodes]
    if "speed" in dims or any(side_dims) and (not all(side_dims) or any(len(d) > 1 for d in side_dims)
                                              or len(set().union(*side_dims)) > 1):
        # rates, areas, a unit on one side only and sides of different kinds ("180 km ÷ 60 km/h = 3 h", "6 cm × 4
        # cm ÷ 2 = 12", "90 ÷ 60 = 1.5 hours", "a pendulum (1.0 m) gives 2.0 s") combine dimensions this checker
        # does not track: the numbers as written are checked, and only agreement counts (a mismatch may be a unit
        # change or two different quantities, so it is not called false)
        ok, ref = check_relation([_unitless(n) for n in nodes], rels, reference)
        return (True, ref) if ok else (None, reference)
    has_var = any(v[0] != 0 for v in vals)
    ok = True
    for rel, a, b in zip(rels, vals, vals[1:], strict=False):
        if has_var:
            if rel != "=":
                return None, reference
            coef, const = a[0] - b[0], b[1] - a[1]
            if coef == 0:
                if const != 0:
                    ok = False
                continue
            sol = const / coef
            if reference is None:
                reference = (Fraction(1), sol)
            ok = ok and reference[1] == sol
            continue
        x, y = a[1], b[1]
        ok = ok and {"=": x == y, "!=": x != y, "<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[rel]
    return ok, reference


def _unitless(node: Node) -> Node:
    """``node`` with each quantity's number as written and no unit."""
    if node.op == "num":
        return replace(node, value=Fraction(node.text), dim=None) if node.dim else node
    if node.op == "var":
        return node
    return replace(node, left=_unitless(node.left) if node.left else None,
                   right=_unitless(node.right) if node.right else None)


def written_tokens(nodes: list[Node]) -> frozenset[str]:
    """The numbers an expression is written with, as written ("1/2 + 1/2": 1/2, 1, 2): a rule's result equal to
    one of them, written the same way, is the case's own number, not the contrast."""
    out = set()
    for n in nodes:
        for sub in subtrees(n):
            if sub.op == "num":
                out.add(sub.text)
            elif sub.op == "/" and sub.left is not None and sub.right is not None and sub.left.op == "num" \
                    and sub.right.op == "num":
                out.add(f"{sub.left.text}/{sub.right.text}")
    return frozenset(out)


def instance_of(t: Node | None, n: Node | None, bound: list[Fraction]) -> bool:
    """Whether ``n`` is the tree ``t`` with one number for its unknown (bound in ``bound``)."""
    if t is None or n is None:
        return t is n
    if t.op == "var":
        if n.op != "num" or (bound and bound[0] != n.value):
            return False
        bound[:] = [n.number]
        return True
    if t.op == "num":
        return n.op == "num" and n.value == t.value
    return t.op == n.op and instance_of(t.left, n.left, bound) and instance_of(t.right, n.right, bound)
