"""Import direction: ``envs`` <- ``agents`` <- ``rewards`` <- ``train``, ``eval``; no package imports one above it.

The rules, checked over every module of the five packages (benchmarks and tests may import anything):

- A package imports only itself and the packages below it: ``envs`` (the protocol, the tasks, the seeds) nothing
  else, ``agents`` (tutors, students, backends) ``envs``, ``rewards`` ``envs`` and ``agents``.
- ``train`` and ``eval`` are the top layer. Between them only ``train -> eval`` is allowed: a training recipe
  evaluates with the benchmark's suites, rollouts and statistics, while the benchmark never needs the trainers
  (``tutorzoo eval`` runs without the ``train`` extra installed).
- Every import counts wherever it is written: at module level, inside a function, under ``TYPE_CHECKING``, or
  as ``importlib.import_module("pkg.mod")`` with a literal name. A lazy import hides an edge from the import
  graph at start-up, not from the design.
- One exception by rule, the CLI dispatch: ``eval/cli.py`` holds the single ``tutorzoo`` entry point, and its
  ``train`` subcommand may import ``train`` *inside the function that dispatches it*, never at module level
  (so ``tutorzoo eval`` and ``tutorzoo list`` import no trainer).
- :data:`KNOWN_BACK_EDGES` lists the edges not fixed yet, each with the reason and the fix. An edge that is
  neither allowed nor listed fails; a listed edge that no longer exists is reported as a warning, so that whoever
  removes it also removes its line.

And one rule inside and across the packages: no module uses another module's underscore name, neither as
``from tutorzoo.x import _y`` nor as ``x._y`` (or ``getattr(x, "_y")``) on an imported module. What two modules
share gets a public name in the module that owns it; :data:`KNOWN_PRIVATE_IMPORTS` lists the files not fixed yet.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "tutorzoo"  # the one installed name; the packages are tutorzoo.envs, tutorzoo.agents, ...
RANK = {"envs": 0, "agents": 1, "rewards": 2, "train": 3, "eval": 3}
SIBLING_EDGES = {("train", "eval")}  # (importer, imported) within the top layer
CLI_DISPATCH = ("eval/cli.py", "train")  # may import train inside a function only

# (importing module, imported package): why it is still there, and what removes it.
KNOWN_BACK_EDGES: dict[tuple[str, str], str] = {}

# Files that still use another module's underscore names: which, and what removes the line.
KNOWN_PRIVATE_IMPORTS: dict[str, str] = {}


@dataclass(frozen=True)
class Edge:
    module: str  # the importing file, relative to the repository
    line: int
    target: str  # the imported module's dotted name
    where: str  # "module", "function" or "type_checking"

    @property
    def source_package(self) -> str:
        return self.module.split("/")[0]

    @property
    def target_package(self) -> str:
        return self.target.split(".")[0]


def _absolute_names(node: ast.AST) -> list[str]:
    """The dotted names an import statement or call names, as written (``tutorzoo.`` included)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module == NAMESPACE:  # from tutorzoo import envs
            return [f"{NAMESPACE}.{alias.name}" for alias in node.names]
        return [node.module]
    if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and ast.unparse(node.func) in ("importlib.import_module", "import_module", "__import__")):
        return [node.args[0].value]
    return []


def _imported_names(node: ast.AST) -> list[str]:
    """The modules of the five packages an import names, without the ``tutorzoo.`` prefix."""
    prefix = NAMESPACE + "."
    return [name[len(prefix):] for name in _absolute_names(node) if name.startswith(prefix)]


def edges_of(path: Path, root: Path = ROOT) -> list[Edge]:
    """Every import of another of the five packages in one file, with where it is written."""
    rel = path.relative_to(root).as_posix()
    found: list[Edge] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inner = "function"
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test) and where == "module":
                inner = "type_checking"
            for name in _imported_names(child):
                top = name.split(".")[0]
                if top in RANK and top != rel.split("/")[0]:
                    found.append(Edge(rel, child.lineno, name, inner))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=rel), "module")
    return found


def all_edges() -> list[Edge]:
    return [e for package in RANK for path in sorted((ROOT / package).rglob("*.py")) for e in edges_of(path)]


def allowed(edge: Edge) -> bool:
    src, dst = edge.source_package, edge.target_package
    if RANK[dst] < RANK[src] or (src, dst) in SIBLING_EDGES:
        return True
    return (edge.module, dst) == CLI_DISPATCH and edge.where == "function"


def _scan(source: str, tmp_path: Path, module: str) -> list[Edge]:
    fake = tmp_path / module
    fake.parent.mkdir(parents=True, exist_ok=True)
    fake.write_text(source, encoding="utf-8")
    return edges_of(fake, root=tmp_path)


# The scanner itself, on cases named by what they catch: a check that finds nothing proves nothing.
SCANNER_CASES = [
    ("module-level", "envs/x.py", "from tutorzoo.agents.tutor import make_tutor\n",
     [("agents.tutor", "module", False)]),
    ("plain-import", "envs/x.py", "import tutorzoo.rewards.rubric\n", [("rewards.rubric", "module", False)]),
    ("lazy", "agents/x.py", "def f():\n    from tutorzoo.eval.suite import load_suite\n",
     [("eval.suite", "function", False)]),
    ("type-checking", "rewards/x.py", 
     "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tutorzoo import train\n",
     [("train", "type_checking", False)]),
    ("import-module", "envs/x.py", "import importlib\nm = importlib.import_module('tutorzoo.agents.student')\n",
     [("agents.student", "module", False)]),
    ("downward", "eval/x.py", "from tutorzoo.envs.config import EpisodeSpec\nfrom tutorzoo import agents\n",
     [("envs.config", "module", True), ("agents", "module", True)]),
    ("train-uses-eval", "train/x.py", "from tutorzoo.eval.rollout import run_episode\n",
     [("eval.rollout", "module", True)]),
    ("eval-uses-train", "eval/x.py", "from tutorzoo.train.common import load_recipe_config\n",
     [("train.common", "module", False)]),
    ("cli-dispatch-lazy", "eval/cli.py", "def run():\n    from tutorzoo.train.cli import main\n",
     [("train.cli", "function", True)]),
    ("cli-dispatch-at-top", "eval/cli.py", "from tutorzoo.train.cli import main\n", [("train.cli", "module", False)]),
    ("own-package", "agents/x.py", "from tutorzoo.agents.tutor import make_tutor\nimport numpy\n", []),
]


@pytest.mark.parametrize(("module", "source", "expected"), [c[1:] for c in SCANNER_CASES],
                         ids=[c[0] for c in SCANNER_CASES])
def test_scanner_finds_each_kind_of_edge(tmp_path: Path, module: str, source: str, expected: list) -> None:
    edges = _scan(source, tmp_path, module)
    assert [(e.target, e.where, allowed(e)) for e in edges] == expected


def test_no_back_edge_between_the_packages() -> None:
    edges = all_edges()
    assert len(edges) > 50, f"only {len(edges)} cross-package imports found: is the scanner reading the packages?"
    bad = [e for e in edges if not allowed(e) and (e.module, e.target_package) not in KNOWN_BACK_EDGES]
    assert not bad, "imports against the layering envs <- agents <- rewards <- train, eval:\n" + "\n".join(
        f"  {e.module}:{e.line} imports {e.target} ({e.where}): move the code to the lower package, or pass the "
        "object in from above" for e in bad)
    present = {(e.module, e.target_package) for e in edges if not allowed(e)}
    for stale in sorted(set(KNOWN_BACK_EDGES) - present):
        warnings.warn(f"KNOWN_BACK_EDGES lists {stale}, which no longer exists: remove its line", stacklevel=1)


def test_known_back_edges_say_why_and_are_back_edges() -> None:
    for (module, package), reason in KNOWN_BACK_EDGES.items():
        assert (ROOT / module).is_file(), f"{module} is listed but does not exist"
        assert RANK[package] >= RANK[module.split("/")[0]], f"{module} -> {package} is not a back edge"
        assert "Fix:" in reason, f"{module} -> {package}: say what removes the edge"


def test_no_module_imports_a_bare_package_name() -> None:
    """``import envs`` works only from a checkout's root (and then shadows PyPI's ``envs``): every import of the five
    packages goes through ``tutorzoo.``, in the packages, the tests and the benchmarks alike."""
    bare = []
    for folder in (*RANK, "tests", "benchmarks", "tutorzoo"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                for name in _absolute_names(node):
                    if name.split(".")[0] in RANK:
                        bare.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert not bare, "write tutorzoo.<package>:\n" + "\n".join(bare)


# ------------------------------------------------------------------------------------------- private names


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_of(rel: str) -> str:
    """``eval/report_board.py`` -> ``tutorzoo.eval.report_board`` (a package's ``__init__`` is the package)."""
    dotted = rel.removesuffix(".py").replace("/", ".")
    return f"{NAMESPACE}.{dotted.removesuffix('.__init__')}"


def _is_module(dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[0] != NAMESPACE or len(parts) < 2:
        return False
    path = ROOT.joinpath(*parts[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _from_module(node: ast.ImportFrom, own: str, is_package: bool) -> str:
    """The absolute name of the module an ``import from`` reads, relative imports resolved."""
    if node.level == 0:
        return node.module or ""
    base = own.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def private_uses_of(path: Path, root: Path = ROOT) -> list[str]:
    """Every use in one file of another module's underscore name: ``line: what``."""
    rel = path.relative_to(root).as_posix()
    own, is_package = _module_of(rel), path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    modules: dict[str, str] = {}  # local name (or dotted expression) -> the tutorzoo module it is bound to
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _from_module(node, own, is_package)
            if not (source == NAMESPACE or source.startswith(NAMESPACE + ".")):
                continue
            for alias in node.names:
                if _is_private(alias.name) and source != own:
                    found.append(f"{node.lineno}: from {source} import {alias.name}")
                if _is_module(f"{source}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(NAMESPACE + "."):
                    modules[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            base, attr = ast.unparse(node.value), node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr")
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and _is_private(node.args[1].value)):
            base, attr = ast.unparse(node.args[0]), node.args[1].value
        else:
            continue
        target = modules.get(base)
        if target is None and _is_module(base):
            target = base
        if target is not None and target != own:
            found.append(f"{node.lineno}: {base}.{attr} ({target})")
    return found


def _scan_private(source: str, tmp_path: Path, module: str) -> list[str]:
    fake = tmp_path / module
    fake.parent.mkdir(parents=True, exist_ok=True)
    fake.write_text(source, encoding="utf-8")
    return [use.split(": ", 1)[1] for use in private_uses_of(fake, root=tmp_path)]


# The modules named here exist in the tree (a name counts as a module when its file does).
PRIVATE_CASES = [
    ("from-import", "eval/x.py", "from tutorzoo.eval.report_board import _esc, esc\n",
     ["from tutorzoo.eval.report_board import _esc"]),
    ("from-import-aliased", "eval/x.py", "from tutorzoo.eval.runner import _chunks as chunks\n",
     ["from tutorzoo.eval.runner import _chunks"]),
    ("relative", "eval/kinds/x.py", "from ..report_board import _esc\nfrom . import _y\n",
     ["from tutorzoo.eval.report_board import _esc", "from tutorzoo.eval.kinds import _y"]),
    ("attribute-on-from-imported-module", "eval/x.py",
     "from tutorzoo.eval import executors\nexecutors._ray_module()\n",
     ["executors._ray_module (tutorzoo.eval.executors)"]),
    ("attribute-on-aliased-module", "agents/x.py", "import tutorzoo.envs.grading as g\ng._NUMBER_RE.search('')\n",
     ["g._NUMBER_RE (tutorzoo.envs.grading)"]),
    ("attribute-on-dotted-module", "agents/x.py", "import tutorzoo.envs.grading\ntutorzoo.envs.grading._X\n",
     ["tutorzoo.envs.grading._X (tutorzoo.envs.grading)"]),
    ("getattr-on-module", "agents/x.py", "from tutorzoo.envs import grading\ngetattr(grading, '_X')\n",
     ["grading._X (tutorzoo.envs.grading)"]),
    ("lazy", "eval/x.py", "def f():\n    from tutorzoo.eval.executors import _failure\n",
     ["from tutorzoo.eval.executors import _failure"]),
    ("own-module", "eval/report_board.py", "from tutorzoo.eval.report_board import _x\n", []),
    ("public-and-dunder", "eval/x.py", "from tutorzoo.eval.report_board import esc\nimport tutorzoo\n"
     "tutorzoo.__version__\nfrom tutorzoo.eval import executors\nexecutors.run_chunk\n", []),
    ("not-a-module", "eval/x.py", "from tutorzoo.eval.executors import Chunk\nChunk._fields\nself._x\n"
     "import json\njson._default_encoder\n", []),
]


@pytest.mark.parametrize(("module", "source", "expected"), [c[1:] for c in PRIVATE_CASES],
                         ids=[c[0] for c in PRIVATE_CASES])
def test_private_scanner_finds_each_kind_of_use(tmp_path: Path, module: str, source: str, expected: list) -> None:
    assert _scan_private(source, tmp_path, module) == expected


def test_no_module_uses_another_modules_underscore_name() -> None:
    paths = [path for package in RANK for path in sorted((ROOT / package).rglob("*.py"))]
    assert len(paths) > 100, f"only {len(paths)} modules found: is the scan reading the packages?"
    uses = {path.relative_to(ROOT).as_posix(): private_uses_of(path) for path in paths}
    bad = [f"  {module}:{use}" for module, found in uses.items() if module not in KNOWN_PRIVATE_IMPORTS
           for use in found]
    assert not bad, ("modules using another module's underscore names: give the shared thing a public name in the "
                     "module that owns it (or move it to the module whose job it is):\n" + "\n".join(bad))
    for stale in sorted(m for m in KNOWN_PRIVATE_IMPORTS if not uses.get(m)):
        warnings.warn(f"KNOWN_PRIVATE_IMPORTS lists {stale}, which no longer uses a private name: remove its line",
                      stacklevel=1)


def test_known_private_imports_say_what_removes_them() -> None:
    for module, reason in KNOWN_PRIVATE_IMPORTS.items():
        assert (ROOT / module).is_file(), f"{module} is listed but does not exist"
        assert "Fix:" in reason and "remove this line" in reason, f"{module}: say what removes the entry"
