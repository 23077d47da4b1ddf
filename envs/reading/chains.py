"""The math of a normalised sentence: its relation chains trimmed of prose (:func:`relation_chains`), a blank solved
from its side (:func:`fill_blank`), the equation a turn works on (:func:`first_equation`), a step said in words
written out on the value before it, a run of steps continued into one computation, and the numbers written aside."""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import replace
from fractions import Fraction
from typing import cast

from tutorzoo.envs.reading.expressions import (
    REL,
    Lin,
    Node,
    check_relation,
    constant_of,
    evaluate,
    instance_of,
    leaves_of,
    parse,
)
from tutorzoo.envs.reading.normalise import normalise, sentences
from tutorzoo.envs.reading.numbers import ANY_DIGIT, plain_number
from tutorzoo.envs.reading.units import UNIT_ALT


def continued(node: Node, carry: list) -> Node:
    """``node`` with its first operand replaced by the computation that produced it in the step before
    (``90 ÷ 2`` after ``9 × 10 = 90`` is ``(9 × 10) ÷ 2``), so a run of steps is credited as one computation."""
    if not carry or node.op not in ("+", "-", "*", "/") or node.left is None:
        return node
    value, prev = carry[0][:2]
    if node.left.op == "num" and node.left.value == value:
        return Node(node.op, replace(prev, paren=True), node.right)
    if node.right is not None and node.right.op == "num" and node.right.value == value:  # 21 + 20 after 4 × 5 = 20
        return Node(node.op, node.left, replace(prev, paren=True))
    if node.left.op in ("+", "-", "*", "/"):
        inner = continued(node.left, carry)
        return node if inner is node.left else Node(node.op, inner, node.right)
    return node
MATH_SPAN = re.compile(rf"-?[\d(?][\d\s.+\-*/()%?x]*|(?:{UNIT_ALT})\b", re.IGNORECASE)


def relation_chains(norm: str) -> list[str]:
    """Relation chains of a normalised sentence, each trimmed to its math on both ends."""
    out = []
    if not REL.search(norm):
        return out
    pieces = REL.split(norm)
    # trim the prose around: the left side keeps its trailing math, the right its leading math
    trimmed = []
    for i, piece in enumerate(pieces):
        if i % 2 == 1:
            trimmed.append(piece)
            continue
        if i == 0:
            trimmed.append(_trailing_math(piece))
        elif i == len(pieces) - 1:
            trimmed.append(_leading_math(piece))
        else:
            m = _leading_math(piece)
            trimmed.append(m)
            if m.strip() != piece.strip():  # prose between two relations: a new chain starts
                trimmed.append(None)
                trimmed.append(_trailing_math(piece))
    chain: list[str] = []
    for t in trimmed:
        if t is None:
            if len(chain) >= 3:
                out.append("".join(chain))
            chain = []
            continue
        chain.append(t)
        chain = chain if t not in ("", None) else chain
    if len(chain) >= 3:
        out.append("".join(chain))
    out = [c for c in map(_unlabelled, out) if all(p.strip() for p in REL.split(c)[0::2])]
    if "x" in norm:  # "8x = 16 comes to 2": an equation in x, then its solution
        out = [piece for c in out for piece in _solution_after(c)]
    return out


def _solution_after(chain: str) -> tuple[str, ...]:
    m = _SOLVED_AFTER.match(chain) if chain.count("=") == 2 and len(chain) < 200 else None
    return (m.group(1), f"x = {m.group(2)}") if m else (chain,)


_SOLVED_AFTER = re.compile(r"^([^=<>]*(?<![A-Za-z'])x(?![A-Za-z'])[^=<>]*=\s*-?\d+(?:\.\d+)?\s*)="
                           r"\s*(-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?)\s*$")


def _unlabelled(chain: str) -> str:
    """A chain without a named first side ("Area = 1/2 × 6 × 4 = 12": the area is the chain's subject) when two
    sides with math remain. (A last side that is not math stays: "… = 20.8 dollars" may count something else.)"""
    parts = REL.split(chain)
    while len(parts) >= 5 and not parts[0].strip():
        parts = parts[2:]
    return "".join(parts)


# the math at the end / start of a piece of prose; a quantity's unit may follow each number ("6 cm × 4 cm")
# (the unknown alone is a side too: "so x = 5")
_TAIL = re.compile(rf"(?:[-(]*\s*(?:[\d□]|(?<![\w'])x(?![\w']))(?:[\d\s.+\-*/()%x□]|(?<=[\d\s□])(?:{UNIT_ALT})\b)*"
                   rf"|(?<![\w'])x\s*)$",
                   re.IGNORECASE)
_HEAD = re.compile(rf"^\s*(?:\?|[-(]*\s*[\d(□][\d\s.+\-*/()%x□]*(?:\s*(?:{UNIT_ALT})\b)?(?:\s*[-+*/]\s*[\d(□]"
                   rf"[\d\s.+\-*/()%x□]*(?:\s*(?:{UNIT_ALT})\b)?)*)", re.IGNORECASE)


def _trailing_math(piece: str) -> str:
    m = _TAIL.search(piece.rstrip(" ,"))
    if m and "v" in piece and _VERSUS.search(piece, 0, m.start()):
        return ""  # "1/9 vs 1/10 comes to 1/9": the choice between two, not 1/10 = 1/9
    if m and piece[:m.start()].rstrip()[-1:] in ("+", "*", "/", "(", "^"):
        return ""  # "(base * height) / 2 = …": the math goes on into words; its last number alone is not a side
    if m and "by" in piece and _BY_WORD.search(piece, 0, m.start()):
        return ""  # "multiply the top and bottom by 4 to get 8/12": the 4 is what they are multiplied by
    return m.group(0) if m else ""


_BY_WORD = re.compile(r"\bby\s*$", re.IGNORECASE)
_VERSUS = re.compile(r"\b(?:vs\.?|versus)\s*$", re.IGNORECASE)


def _leading_math(piece: str) -> str:
    m = _HEAD.match(piece)
    if not m:
        return ""
    head = m.group(0)
    while head.count("(") > head.count(")"):  # "= 14 (not 20)": the aside is not part of the value
        head = head[: head.rindex("(")]
    rest = piece[len(head):].lstrip()
    if rest[:1].isalpha() and not rest.lower().startswith(("and ", "so ", "then ", "which ", "because ", "but ")):
        return ""  # "0.5 is 5 dimes": a count of something else, not a value to check
    return head.rstrip(" .,")


def _values(text: str) -> Counter:
    """The numbers a normalised text writes: (exact value, as written), with how often each is written."""
    out: Counter = Counter()
    for tok in _VALUE.findall(text):
        try:
            out[Fraction(tok), tok] += 1
        except (ValueError, ZeroDivisionError):
            continue
    return out


@functools.lru_cache(maxsize=16384)
def said_aside(norm: str) -> frozenset[tuple[Fraction, str]]:
    """The numbers a normalised sentence writes outside its relation chains ("1/2 + 1/2 = 1, not 2/4": 2/4)."""
    rest = _values(norm)
    if REL.search(norm):
        for chain in relation_chains(norm):
            rest -= _values(chain)
    return frozenset(rest)


_VALUE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:/\d+)?(?![\d/]|\.\d)")  # "2/5." ends with a full stop, not a digit
UNKNOWN_X = re.compile(r"(?<![a-wyz])x(?![a-wyz])", re.IGNORECASE)  # an x that is not inside a word ("3x", "x = 5")
# "Let's solve 6 + 4 × 8.", "Let's work out 84 - 10% of 84 together.", "Let's add 3/4 + 1/6."
_SET_OUT = re.compile(r"\b(?:let'?s|let us|we(?:'ll| will)?|i'?ll)\s+(?:solve|work out|work through|compute|calculate|"
                      r"evaluate|find|simplify|figure out|do|add|subtract|multiply|divide|try|take|look at)\b",
                      re.IGNORECASE)


def named_problem(norm: str, written: bool = False) -> str | None:
    """The one computation a sentence sets out to work ("Let's solve 6 + 4 × 8."), else ``None`` (``written``:
    any sentence that writes out one computation)."""
    if not written and not _SET_OUT.search(norm):
        return None
    found = [span.strip(" ?.,:") for span in MATH_SPAN.findall(norm)
             if (n := parse(span.strip(" ?.,:"))) is not None and n.op not in ("num", "var")]
    if len(found) != 1 or (node := parse(found[0])) is None or constant_of(node) is None:
        return None
    return found[0]


@functools.lru_cache(maxsize=4096)
def first_equation(text: str) -> tuple[Lin, Node, Node] | None:
    """The first equation in x of ``text`` that is more than ``x = value``: its solution and its two sides."""
    if "x" not in text or not UNKNOWN_X.search(text):
        return None
    # sentence by sentence: "Solve 8x + 20 = 52. Computing 52 - 20, we get 32." is not one chain
    for chain in (c for sent in sentences(text) if UNKNOWN_X.search(sent) for c in relation_chains(normalise(sent))):
        parts = REL.split(chain)
        parsed = [parse(s) for s in parts[0::2]]
        if None in parsed:
            continue
        nodes = cast("list[Node]", parsed)
        if len(nodes) >= 2 and not (nodes[0].op == "var" and nodes[1].op == "num") and parts[1] == "=":
            verdict, ref = check_relation(nodes[:2], parts[1:2], None)
            if ref is not None:
                return ref, nodes[0], nodes[1]
    return None


# a step said in words after the value it works on: "4 × 2 = 8, then add 3 to get 11", "Now divide by 9 to get 2."
STEP_WORDS = re.compile(r"\b(add|subtract|take away|multiply by|divide by)\s+(-?\d+(?:\.\d+)?)\s*=\s*"
                         r"(?=-?\d)", re.IGNORECASE)
LCD = re.compile(r"\b(lcd|lcm|(?:least|lowest|smallest) common (?:denominator|multiple)|"
                  r"a common (?:denominator|multiple))\s+"
                  r"(?:of|for)\s+(\d+)\s*(?:and|,|&)\s*(\d+)(?:\s*(?:=|is)\s*(\d+)(?!\d|\.\d|\s*/))?", re.IGNORECASE)
_STEP_SIGN = {"add": "+", "subtract": "-", "take away": "-", "multiply by": "*", "divide by": "/"}
_LAST_VALUE = re.compile(r"=\s*(-?\d+(?:\.\d+)?)(?![\d.]|\s*[-+*/(])")


def steps_in_words(norm: str, carried: Fraction | None) -> str:
    """``norm`` with each step said in words written out on the value before it: the last value a relation of the
    sentence gave ("= 8, then add 3 = 11": 8 + 3 = 11), or at the sentence's start the last step's before it."""
    def written(m: re.Match) -> str:
        before = [v.group(1) for v in _LAST_VALUE.finditer(norm, 0, m.start())]
        if before:
            value = before[-1]
        elif carried is not None and not ANY_DIGIT.search(norm, 0, m.start()):
            value = plain_number(carried)
            if value is None:
                return m.group(0)
        else:
            return m.group(0)
        return f"; {value} {_STEP_SIGN[m.group(1).lower()]} {m.group(2)} = "
    return STEP_WORDS.sub(written, norm)


def undone_and_checked(node: Node, stated: Node) -> bool:
    """``a × ((c − b) ÷ a) + b = c``: a run of steps that undid ``a x + b = c`` ("34 − 16 = 18; 18 ÷ 9 = 2") and
    put the value back to check it ("9 × 2 + 16 = 34"), as the continued steps read it: an equation solved."""
    if node.op not in ("+", "-") or node.lhs.op != "*" or node.rhs.op != "num" or stated.op != "num":
        return False
    b, c = node.rhs.value, stated.value
    for a, undo in ((node.lhs.lhs, node.lhs.rhs), (node.lhs.rhs, node.lhs.lhs)):
        if a.op == "num" and undo.op == "/" and undo.rhs.op == "num" and undo.rhs.value == a.value \
                and undo.lhs.op == ("-" if node.op == "+" else "+") and undo.lhs.lhs.op == "num" \
                and undo.lhs.lhs.value == c and undo.lhs.rhs.op == "num" and undo.lhs.rhs.value == b:
            return True
    return False


def substituted(template: tuple[Node, Node], nodes: list[Node]) -> bool:
    """Whether ``a = b`` is the equation ``template`` with a number written for its unknown ("2(5) + 20 = 30" for
    2x + 20 = 30: the check of a solution), either way round."""
    if len(nodes) != 2 or any(leaf.op == "var" for n in nodes for leaf in leaves_of(n)):
        return False
    for left, right in (template, template[::-1]):
        bound: list[Fraction] = []
        if instance_of(left, nodes[0], bound) and instance_of(right, nodes[1], bound) and bound:
            return True
    return False


def fill_blank(parsed: list[Node | None], rels: list[str]) -> tuple[int, list[Node], list[str], bool] | None:
    """A chain with one blank (``□``) in it, the blank solved from the side it is equated to: (the blank's side,
    the sides with the blank's value written in, the relations, whether the turn said the value) when the blank is
    a whole side, a quantity's number ("__ km") or a fraction's part ("__/9"); (-1, the two sides of the equation,
    …) when it is inside a computation ("3 × __ = 15": an equation in an unknown); ``None`` when it cannot be
    solved or its value is not a plain number. A bare number after the blank's side is its value said ("1 L = __
    mL gives 1000"): written in, the relation is a statement to check, not a question."""
    if None in parsed or len(parsed) < 2:
        return None
    nodes = cast("list[Node]", parsed)
    holding = [i for i, n in enumerate(nodes) if any(leaf.op == "var" for leaf in leaves_of(n))]
    if len(holding) != 1:
        return None
    j = holding[0]
    side = nodes[j]
    blanks = [leaf for leaf in leaves_of(side) if leaf.op == "var"]
    if len(blanks) != 1 or blanks[0].text != "□":
        return None
    part = side.op == "/" and {side.lhs.op, side.rhs.op} == {"num", "var"}
    unit = blanks[0].value or Fraction(1)
    said = None
    if j > 0 and j + 2 == len(nodes) and rels[j] == "=" and nodes[j + 1].op == "num" and not nodes[j + 1].dim \
            and (side.op == "var" or part):
        said, nodes, rels = nodes[j + 1].value, nodes[:-1], rels[:-1]
    k = j - 1 if j > 0 and rels[j - 1] == "=" else j + 1 if j < len(rels) and rels[j] == "=" else None
    if k is None:
        return None
    other = constant_of(nodes[k])
    if other is None:
        return None
    lin = evaluate(side)
    if said is not None:
        value = said
    elif lin is not None and lin[0] != 0:
        value = (other - lin[1]) / lin[0] / unit  # in the blank's unit ("9500 m = __ km": 9.5)
    elif side.op == "/" and side.rhs.op == "var" and (top := constant_of(side.lhs)) is not None and other != 0:
        value = top / other  # "6/__ = 2/3"
    else:
        return None
    if side.op != "var" and not part:
        return -1, [side, nodes[k]], rels, False
    text = plain_number(value)
    if text is None or part and value.denominator != 1:
        return None
    number = Node("num", value=value * unit, text=text, dim=blanks[0].dim)
    if side.op == "var":
        side = number
    else:
        side = replace(side, left=number) if side.lhs.op == "var" else replace(side, right=number)
    return j, [*nodes[:j], side, *nodes[j + 1:]], rels, said is not None
