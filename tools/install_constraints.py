"""The constraints ``make install`` passes to pip: ``constraints.txt``, except that a torch already installed in
the target environment is kept when it satisfies the package's own range (``pyproject.toml``, extra ``hf``).

Why: ``constraints.txt`` pins ``torch==2.13.0``, the CPU build the project's machines install from a local file
(an unpinned torch, or a range that admits a newer release, makes pip fetch a multi-GB CUDA build there). pip
applies a constraint to an installed package too: on a machine with its own CUDA build (say ``2.5.1+cu121``)
the pin would make ``make install`` replace it with the CPU build. So the torch line is rewritten to the
installed version (``torch==2.5.1+cu121``), which pip then leaves alone; an installed torch outside the range,
or none, keeps the pin.

Run it with the target environment's Python (standard library only; nothing of TutorZoo is imported)::

    .venv/bin/python tools/install_constraints.py constraints.txt pyproject.toml > .venv/constraints.txt
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib import metadata
from pathlib import Path

_TORCH_LINE = re.compile(r"^\s*torch\s*==", re.IGNORECASE)
# A quoted torch requirement in pyproject.toml ("torch>=2.4"); read with a pattern, since tomllib is Python 3.11+.
_TORCH_REQUIREMENT = re.compile(r"""["']torch\s*(?P<spec>[<>=!][^"';]*)?["']""", re.IGNORECASE)
_RELEASE = re.compile(r"^(\d+(?:\.\d+)*)")


def torch_range(pyproject: str) -> str:
    """The version range the package's extras give torch, e.g. ``">=2.4"`` (``""``: any version)."""
    m = _TORCH_REQUIREMENT.search(pyproject)
    if m is None:
        raise ValueError("pyproject.toml names no torch requirement; expected one such as \"torch>=2.4\"")
    return (m["spec"] or "").replace(" ", "")


def _release(version: str) -> tuple[int, ...]:
    m = _RELEASE.match(version)
    if m is None:
        raise ValueError(f"cannot read the torch version {version!r}")
    return tuple(int(p) for p in m[1].split("."))


def satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` (its release part: ``2.5.1+cu121`` -> 2.5.1) meets every clause of ``spec``
    (``>=``, ``>``, ``<=``, ``<``, ``==``, ``!=``, with numeric releases; the forms pyproject.toml uses)."""
    have = _release(version)
    for clause in filter(None, spec.split(",")):
        m = re.fullmatch(r"(>=|<=|==|!=|>|<)(\d+(?:\.\d+)*)", clause)
        if m is None:
            raise ValueError(f"unsupported torch range clause {clause!r} in pyproject.toml")
        op, want = m[1], _release(m[2])
        width = max(len(have), len(want))
        a, b = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
        ok = {">=": a >= b, "<=": a <= b, "==": a == b, "!=": a != b, ">": a > b, "<": a < b}[op]
        if not ok:
            return False
    return True


def effective_constraints(constraints: str, pyproject: str, installed: str | None) -> str:
    """``constraints`` with its torch pin replaced by ``installed`` when that satisfies the package's range."""
    if installed is None or not satisfies(installed, torch_range(pyproject)):
        return constraints
    lines = []
    for line in constraints.splitlines():
        if _TORCH_LINE.match(line):
            lines.append(f"# {line.strip()} replaced: the environment's torch {installed} meets the package's range")
            line = f"torch=={installed}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def installed_torch() -> str | None:
    """The version of torch installed where this Python looks, or None."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("constraints", type=Path, help="the repository's constraints.txt")
    parser.add_argument("pyproject", type=Path, help="the repository's pyproject.toml")
    args = parser.parse_args(argv)
    sys.stdout.write(effective_constraints(args.constraints.read_text(encoding="utf-8"),
                                           args.pyproject.read_text(encoding="utf-8"), installed_torch()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
