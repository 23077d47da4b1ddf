"""Mutation testing of the critical modules: would the tests notice a small, realistic bug?

Each mutant is one AST-level edit that looks like a real bug, applied alone to a scratch copy of the work tree:

- ``compare``: a comparison flipped at its boundary or negated (``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <->
  ``!=``, ``is`` <-> ``is not``, ``in`` <-> ``not in``);
- ``boolop``: ``and`` <-> ``or``;  ``not``: a ``not`` dropped;  ``bool``: ``True`` <-> ``False``;
- ``number``: an integer off by one (``n`` -> ``n + 1``), a float off by 10% (``x`` -> ``1.1 x``, 0 -> 0.1);
- ``term``: the right operand of ``a + b`` / ``a - b`` dropped (``a``).

Strings, f-strings and decorators are never mutated (a changed error message is not a bug the metrics would
show). The test files that cover a module (``TARGETS``) run once unmutated and traced (one run per set of test
files, shared by the modules that share it), which records the functions each test calls; then each mutant runs,
with ``pytest -x -q -p no:cacheprovider``, only the tests that called its function, from only the files holding
them (all of them for a mutant outside any function; none, and no run, when no test calls it). Two workers (each
a process that has imported the third-party modules once and forks a child per mutant) run mutants at once.
It is *killed* when they fail or time out (1.5x the traced run + 10 s),
*survives* when they pass or none calls its function. A timeout counts as killed and is reported apart. A
mutant on the skip list (``SKIPS``: equivalent, or on a path the code cannot take, each with its reason) is not
run and not in the rate. The script prints the kill rate per module and every survivor (``file:line [function]
operator: before -> after``), and writes the same as JSON. Each worker mutates its own scratch copy of the
tree, taken at the start, so edits made to the work tree during a run do not mix into it.
It is not part of ``make test``: run it with ``make mutation`` (all modules, 2 workers) or, for some modules,
``make mutation MODULES="envs/tutoring.py agents/student/model.py"`` (``python .ci/mutation.py --module
envs/tutoring.py``); ``--list`` only counts the mutants.

Why not mutmut or cosmic-ray: see the note at ``TARGETS``. Why one file of ~750 lines: it is a script run by
``make mutation``, not a package module; its parts (the mutation operators, the traced selection of tests, the
worker pool, the report) serve this one run, and about a third of it is the target table and the skip list with
the reason for each skipped mutant.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    """A module to mutate, the test files that cover it and, optionally, the only functions to mutate."""

    path: str
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()  # qualified names ("Class.method"); empty = the whole module


# Written by hand because the maintained tools did not fit this budget: mutmut 3.8 first runs the configured
# test suite to map tests to functions, mutates every string literal (each error message is a mutant) and
# can only be narrowed to the critical functions (the runner's resume, the judges' fail-closed paths) with
# `# pragma: no mutate` comments in the modules themselves, several of which other work owns.
# The targeted tests first: with -x most mutants die in them before the slower files run.
_METRICS_TESTS = ("tests/eval/test_mut_metrics.py", "tests/eval/test_metrics.py")
# the reward-term registry (rewards/terms.py: register_term, import paths) has its own test file
_REWARD_TESTS = ("tests/rewards/test_mut_rewards.py", "tests/rewards/test_rewards.py",
                 "tests/rewards/test_reward_registry.py")
_JUDGE_TESTS = ("tests/eval/test_mut_judges.py", "tests/eval/test_judges.py")
TARGETS: tuple[Target, ...] = (
    Target("eval/metrics/stats.py", _METRICS_TESTS),
    Target("eval/metrics/educationq.py", _METRICS_TESTS),
    Target("eval/metrics/suite.py", _METRICS_TESTS),
    Target("eval/metrics/mathdial.py", (*_METRICS_TESTS, "tests/eval/test_peers_mathdial.py")),
    Target("eval/metrics/mrbench.py", _METRICS_TESTS),
    Target("rewards/sid.py", _METRICS_TESTS),
    Target("rewards/gate.py", _REWARD_TESTS),
    Target("rewards/rubric.py", _REWARD_TESTS),
    Target("rewards/terms.py", _REWARD_TESTS),
    # the detector (not its --eval command line)
    Target("envs/leak.py", ("tests/envs/test_mut_leak.py", "tests/envs/test_leak.py"),
           ("_form", "_target", "_targets", "_givens", "_given_valued", "_restates_givens", "_value_mentions",
            "_mention_matches", "_letter_patterns", "_letters_referenced", "_letter_leak", "_parts", "_split_values",
            "find_leaks")),
    Target("envs/grading.py", ("tests/envs/test_mut_grading.py", "tests/envs/test_grading.py")),
    Target("envs/tutoring.py", ("tests/envs/test_mut_tutoring.py", "tests/envs/test_mut_tutoring_phases.py",
                                "tests/envs/test_env_api.py"),
           ("TutoringEnv.step", "TutoringEnv._student_step", "TutoringEnv._tutor_step", "TutoringEnv._answer_item",
            "TutoringEnv._credit", "TutoringEnv._start_posttest", "TutoringEnv._finish")),
    # the runner's resume: the records file and the resume rule (eval/run_folder.py since the harness split), and
    # how pending episodes are cut into chunks
    Target("eval/run_folder.py", ("tests/eval/test_mut_runner.py", "tests/eval/test_runner.py"),
           ("read_records", "record_key", "run_identity", "prepare_output")),
    Target("eval/runner.py", ("tests/eval/test_mut_runner.py", "tests/eval/test_runner.py"), ("_chunks",)),
    Target("eval/judges/judge.py", _JUDGE_TESTS,
           ("Verdict.n_failed", "Verdict.ok", "Verdict.failed", "parse_sample", "aggregate",
            "Judge.judge_many", "Judge._generate")),
    Target("eval/judges/sid.py", _JUDGE_TESTS, ("sid_rubric_metrics", "_summary")),
    # the student model's update rules, respond() (the turn's learning step) included, against the tests that pin
    # its documented equations to literal values; tests/agents/test_student_model.py (statistical effects over hundreds
    # of seeded episodes, about a minute a run here) is left out: a survivor would run it whole
    Target("agents/student/model.py", ("tests/agents/test_mut_student_respond.py",
                                       "tests/agents/test_mut_student_answer.py",
                                       "tests/agents/test_student_equations.py"),
           ("respond", "p_correct", "_slip", "_mislead", "_preference", "_competing", "_fire", "_repair",
            "begin_posttest", "item_mastery", "answer_item")),
)


_FLIP: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
}
_OP_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is",
            ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


@dataclass(frozen=True)
class Site:
    """One mutation: the ``index``-th mutable node of the module (in :func:`_nodes` order) and what to do."""

    index: int
    op: str
    line: int
    function: str
    before: str
    after: str
    detail: int = 0  # which comparator of a chained comparison
    code: str = ""  # the mutated line as written (stripped): what the skip list matches


@dataclass(frozen=True)
class Skip:
    """A mutant left out of the kill rate because no test could notice it, with the reason.

    It matches a site of ``path`` in ``function`` with this operator and before/after text whose line contains
    ``code`` (line numbers move as the module is edited; its code does not)."""

    path: str
    function: str
    code: str
    op: str
    before: str
    after: str
    reason: str

    def matches(self, path: str, site: Site) -> bool:
        return (path, site.function, site.op, site.before, site.after) == (
            self.path, self.function, self.op, self.before, self.after) and self.code in site.code


# Mutants no test can notice: each changes no behaviour (equivalent) or sits on a path the env cannot take.
# They are listed (and counted apart) instead of being called survivors; each line says why.
SKIPS: tuple[Skip, ...] = (
    Skip("envs/tutoring.py", "TutoringEnv.step", "self.terminations.get(agent, False)", "bool", "False", "True",
         "the default of a lookup that always hits: agent_selection is a key of terminations and truncations "
         "while the env has agents (PettingZoo's _was_dead_step removes an agent from both at once); stepping an "
         "env with no agents is outside the AEC API"),
    *(Skip("envs/tutoring.py", function, code, "number", "0", "1",
           f"the index of a {code.split(chr(34))[1]!r} student step: only pre-test and post-test steps read "
           "their index (_student_step, _student_text, _refresh_infos)")
      for function, code in (("TutoringEnv._student_step", '("reply", 0)'),
                             ("TutoringEnv._answer_item", '("open", 0)'),
                             ("TutoringEnv._answer_item", '("reply", 0)'),
                             ("TutoringEnv._tutor_step", '("reply", 0)'))),
    Skip("envs/tutoring.py", "TutoringEnv._tutor_step", "self._ctx.student_spoke_last = False", "bool", "False",
         "True", "every tutor turn is followed either by the student's reply (which sets it back to True before the "
         "next tutor turn is annotated) or by the post-test (no more annotation): the value is never read"),
    Skip("envs/tutoring.py", "TutoringEnv._finish", "self.episode_record(copy=False)", "bool", "False", "True",
         "copy=False only saves copying: the reward model reads the env's own lists instead of equal copies, so "
         "only a reward model that wrote into the record could tell (RewardModel.episode reads it)"),
    Skip("envs/tutoring.py", "TutoringEnv._finish", "if (post is not None and pre is not None) else 0.0",
         "number", "0.0", "0.1", "unreachable default: a terminated episode has both scores (a task has pre-test "
         "items, the post-test is refused without its items: Task and make_config), and a truncated one never reads "
         "gain "
         "(learning_gain is None without a post-test score; the student's reward is set only when not truncated)"),
    Skip("agents/student/model.py", "respond", "e = min(1.0, max(0.02, e))", "number", "1.0", "1.1",
         "unreachable cap: engagement starts at most 1 (Persona.engagement <= 1), decay is >= 0, encouragement moves "
         "e toward 1 and a success caps it at 1, so e never exceeds 1 here"),
    Skip("agents/student/model.py", "respond", 'w, mode = 0.0, "question"', "number", "0.0", "0.1",
         "a placeholder: every question branch (a misconception fired, a success, a failure) sets w before it is "
         "used, and the scaling in between only scales the placeholder"),
    Skip("agents/student/model.py", "respond", "if not labelled and w > 0.0:", "compare", ">", ">=",
         "the guard only skips scaling a weight of 0 (0 scaled is 0)"),
    *(Skip("agents/student/model.py", "respond", code, "number", "1", "2",
           "min(1, bloom) above the zone is the Bloom level itself: above means demand - bloom >= 2 and no demand "
           "exceeds 3 (L3, transfer), so bloom <= 1 there")
      for code in ('plan = Plan("ask_hint" if asks else "confused", state_label, min(1, state.bloom)',
                   'plan = Plan("confused", "vague_understanding", min(1, state.bloom)')),
    Skip("agents/student/model.py", "_competing", "state.mastery.get(kc, 0.0)", "number", "0.0", "0.1",
         "unreachable default: a misconception's component is always one of the task's (Task validates it), so "
         "its mastery is always there"),
    Skip("agents/student/model.py", "begin_posttest", "if lk > l0:", "compare", ">", ">=",
         "at lk == l0 forgetting gives l0 + 0 (1 - F) = lk: both branches leave mastery as it is"),
    Skip("agents/student/model.py", "respond", "n_true = reading.true_statements(kc) if kc is not None else 0",
         "number", "0", "1", "the count for a turn on no component: respond returns the off-topic plan before "
         "n_true is read"),
)


@dataclass
class Result:
    site: Site
    status: str  # killed | survived | timeout | skipped
    seconds: float


@dataclass
class ModuleReport:
    target: Target
    results: list[Result] = field(default_factory=list)
    baseline_seconds: float = 0.0
    baseline_error: str = ""
    tally: dict[str, int] = field(default_factory=lambda: {"killed": 0, "timeout": 0, "survived": 0})

    @property
    def killed(self) -> int:
        """Killed by a failing test or by the timeout (a mutant that makes the tests hang is caught too)."""
        return sum(r.status in ("killed", "timeout") for r in self.results)

    @property
    def timeouts(self) -> int:
        return sum(r.status == "timeout" for r in self.results)

    @property
    def skipped(self) -> int:
        return sum(r.status == "skipped" for r in self.results)

    @property
    def counted(self) -> int:
        """The mutants in the kill rate: all but the skipped (equivalent or unreachable) ones."""
        return len(self.results) - self.skipped


def _nodes(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every node that may be mutated, with its enclosing function's qualified name, in a fixed order."""

    def visit(node: ast.AST, scope: list[str]) -> Iterator[tuple[ast.AST, str]]:
        if isinstance(node, ast.JoinedStr):
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = [*scope, node.name]
            for child in ast.iter_child_nodes(node):
                if child in getattr(node, "decorator_list", []) or child is getattr(node, "returns", None):
                    continue
                yield from visit(child, inner)
            return
        if isinstance(node, (ast.arg, ast.AnnAssign)):
            if isinstance(node, ast.AnnAssign) and node.value is not None:
                yield from visit(node.value, scope)
            return
        yield node, ".".join(scope) or "<module>"
        for child in ast.iter_child_nodes(node):
            yield from visit(child, scope)

    yield from visit(tree, [])


def function_scopes(source: str) -> set[str]:
    """Qualified names (as :func:`_nodes` writes them) of the module's functions and methods."""
    found: set[str] = set()

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = [*scope, child.name]
                if not isinstance(child, ast.ClassDef):
                    found.add(".".join(name))
                visit(child, name)
            else:
                visit(child, scope)

    visit(ast.parse(source), [])
    return found


def _number_after(value: int | float) -> int | float:
    if isinstance(value, int):
        return value + 1
    return 0.1 if value == 0 else value * 1.1


def sites(source: str) -> list[Site]:
    """All mutations of ``source`` (see the module docstring for the operators)."""
    out: list[Site] = []
    lines = source.splitlines()
    for index, (node, function) in enumerate(_nodes(ast.parse(source))):
        line = getattr(node, "lineno", 0)
        code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        if isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                flipped = _FLIP.get(type(op))
                if flipped is not None:
                    out.append(Site(index, "compare", line, function, _OP_TEXT[type(op)], _OP_TEXT[flipped], k,
                                    code=code))
        elif isinstance(node, ast.BoolOp):
            before, after = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            out.append(Site(index, "boolop", line, function, before, after, code=code))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append(Site(index, "not", line, function, "not x", "x", code=code))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            out.append(Site(index, "bool", line, function, str(node.value), str(not node.value), code=code))
        elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            after = repr(_number_after(node.value))
            out.append(Site(index, "number", line, function, repr(node.value), after, code=code))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            sign = "+" if isinstance(node.op, ast.Add) else "-"
            out.append(Site(index, "term", line, function, f"a {sign} b", "a", code=code))
    return out


class _Apply(ast.NodeTransformer):
    def __init__(self, target: ast.AST, site: Site) -> None:
        self.target, self.site = target, site

    def visit(self, node: ast.AST) -> ast.AST:
        if node is not self.target:
            return self.generic_visit(node)
        s = self.site
        if s.op == "compare":
            node.ops[s.detail] = _FLIP[type(node.ops[s.detail])]()
        elif s.op == "boolop":
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif s.op == "not":
            return node.operand
        elif s.op in ("bool", "number"):
            node.value = (not node.value) if s.op == "bool" else _number_after(node.value)
        elif s.op == "term":
            return node.left
        return node


def mutate(source: str, site: Site) -> str:
    """``source`` with ``site`` applied (comments and formatting are lost; the code is the same otherwise)."""
    tree = ast.parse(source)
    target = next(node for i, (node, _) in enumerate(_nodes(tree)) if i == site.index)
    return ast.unparse(ast.fix_missing_locations(_Apply(target, site).visit(tree)))


def _selected(target: Target, all_sites: list[Site]) -> list[Site]:
    if not target.functions:
        return all_sites
    wanted = set(target.functions)
    missing = wanted - {s.function.split(".")[0] for s in all_sites} - {s.function for s in all_sites}
    if missing:
        print(f"warning: {target.path} has no mutable code in {sorted(missing)}", file=sys.stderr)
    return [s for s in all_sites if s.function in wanted or any(s.function.startswith(f + ".") for f in wanted)]


def _copy_tree(dest: Path) -> None:
    """The work tree's tracked and untracked (not ignored) files: what a checkout plus local edits holds."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_symlink():  # e.g. envs/configs -> ../configs: a link, as in a checkout
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(src), dest / rel)
        elif src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


# Third-party modules the tests and pytest's plugins import: loaded once per worker, before it forks a child per
# mutant (about a second saved per mutant).
_PRELOAD = ("numpy", "pydantic", "yaml", "rich", "gymnasium", "pettingzoo", "pytest", "_pytest.main",
            "_pytest.python", "_pytest.assertion.rewrite", "asyncio", "anyio", "anyio.pytest_plugin",
            "platformdirs", "platformdirs.pytest_plugin", "readline")


_RUNNING: list[_Worker] = []  # the live workers, stopped with the run (see _stop)
_SCRATCH: list[str] = []  # the scratch directory of the run


def _stop(*_: object) -> None:
    """SIGTERM: stop the workers (each kills its running mutant's process group), remove the scratch copies."""
    for worker in _RUNNING:
        worker.proc.terminate()
    for worker in _RUNNING:
        try:
            worker.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            worker.proc.kill()
    for tmp in _SCRATCH:
        shutil.rmtree(tmp, ignore_errors=True)
    os._exit(143)


class _Worker:
    """A process that has imported pytest and the heavy third-party modules (never the project's own) and
    forks a child per mutant, so a mutant pays for importing the project and running its tests only."""

    def __init__(self, copy: Path) -> None:
        self.copy = copy
        env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
        _RUNNING.append(self)
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", str(copy)],
                                     cwd=copy, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, tests: tuple[str, ...], timeout: float, select: list[str] | None = None,
            trace: list[str] | None = None, trace_out: str | None = None) -> tuple[str, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"tests": list(tests), "timeout": timeout, "select": select, "trace": trace, "trace_out": trace_out}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        return reply["status"], reply["seconds"]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


class _Trace:
    """A pytest plugin recording, per test, which functions of the given source files it called (setup
    included), as ``path::qualname``: one traced run serves every module that shares the same test files."""

    def __init__(self, copy: str, paths: list[str], out: str) -> None:
        self.files = {os.path.realpath(os.path.join(copy, p)): p for p in paths}
        self.out = out
        self.called: dict[str, set[str]] = {}
        self.order: list[str] = []

    def _profile(self, called: set[str]) -> Callable[..., None]:
        files = self.files

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event == "call":
                path = files.get(frame.f_code.co_filename)
                if path is not None:
                    called.add(path + "::" + frame.f_code.co_qualname.replace(".<locals>", ""))

        return profile

    def pytest_collection_finish(self, session: Any) -> None:
        self.order = [item.nodeid for item in session.items]

    def _clear_caches(self) -> None:
        """Empty the module's functools caches: a cache hit runs no Python code, so without this a later test
        that reads a cached result would not count as calling the function (and would not be selected)."""
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if path is None or os.path.realpath(path) not in self.files:
                continue
            for value in vars(module).values():
                for obj in (value, *vars(value).values()) if isinstance(value, type) else (value,):
                    if callable(getattr(obj, "cache_clear", None)):
                        obj.cache_clear()

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self._clear_caches()
        profile = self._profile(self.called.setdefault(nodeid, set()))
        sys.setprofile(profile)
        threading.setprofile(profile)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]

    def pytest_sessionfinish(self, session: Any) -> None:
        data = {"order": self.order, "called": {k: sorted(v) for k, v in self.called.items()}}
        Path(self.out).write_text(json.dumps(data), encoding="utf-8")


class _Select:
    """A pytest plugin keeping only the given test ids (in collection order)."""

    def __init__(self, nodeids: list[str]) -> None:
        self.keep = set(nodeids)

    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        dropped = [i for i in items if i.nodeid not in self.keep]
        items[:] = [i for i in items if i.nodeid in self.keep]
        config.hook.pytest_deselected(items=dropped)


def _serve(copy: str) -> int:
    """The worker's loop: one JSON request a line on stdin, one JSON reply a line on stdout."""
    import importlib

    os.chdir(copy)
    sys.path.insert(0, copy)
    for name in _PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    out = sys.stdout
    current = [0]  # the running mutant's pid (its process group): killed with the worker

    def stop(*_: object) -> None:
        if current[0]:
            try:
                os.killpg(current[0], signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(143)

    signal.signal(signal.SIGTERM, stop)
    for line in sys.stdin:
        request = json.loads(line)
        start = time.monotonic()
        pid = os.fork()
        current[0] = pid
        if pid == 0:  # the child: its own process group, so a timeout kills what the tests started too
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            import pytest

            plugins: list[object] = []
            if request.get("trace"):
                plugins.append(_Trace(copy, request["trace"], request["trace_out"]))
            if request.get("select") is not None:
                plugins.append(_Select(request["select"]))
            args = ["-x", "-q", "-p", "no:cacheprovider", "-m", "not slow", *request["tests"]]
            os._exit(int(pytest.main(args, plugins=plugins)))
        status = "timeout"
        while time.monotonic() - start < request["timeout"]:
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                # 5: no test selected (no test calls the mutated function): nothing could notice the bug
                status = "survived" if os.waitstatus_to_exitcode(code) in (0, 5) else "killed"
                break
            time.sleep(0.01)
        else:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
        out.write(json.dumps({"status": status, "seconds": time.monotonic() - start}) + "\n")
        out.flush()
    return 0


def _tests_for(site: Site, functions: set[str], traced: dict[str, Any]) -> list[str] | None:
    """The tests that called the mutated function (or a function nested in it); None (all of them) for a
    mutant outside any function (module or class body: it acts at import)."""
    if site.function not in functions:
        return None
    prefix = site.function + "."
    return [t for t in traced["order"]
            if any(q == site.function or q.startswith(prefix) for q in traced["called"].get(t, ()))]


def run(targets: list[Target], jobs: int) -> list[ModuleReport]:
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="tutorzoo-mutation-") as tmp:
        _SCRATCH.append(tmp)
        workers: list[_Worker] = []
        for j in range(jobs):
            copy = Path(tmp) / f"w{j}"
            _copy_tree(copy)
            workers.append(_Worker(copy))
        idle = list(workers)
        try:
            reports = [ModuleReport(t) for t in targets]
            for report in reports:
                t = report.target
                report.target = Target(t.path, tuple(p for p in t.tests if (ROOT / p.split("::")[0]).is_file()),
                                       t.functions)
            # the unmutated tests, traced: they must pass, and they say which test calls which function; one run
            # per set of test files (modules sharing their tests share the run), two at a time
            groups: dict[tuple[str, ...], list[ModuleReport]] = {}
            for report in reports:
                groups.setdefault(report.target.tests, []).append(report)

            def baseline(k: int, tests: tuple[str, ...]) -> tuple[str, float, dict[str, Any]]:
                with lock:
                    worker = idle.pop()
                trace_out = Path(tmp) / f"trace{k}.json"
                try:
                    status, seconds = worker.run(tests, timeout=1800, trace=[r.target.path for r in groups[tests]],
                                                 trace_out=str(trace_out))
                finally:
                    with lock:
                        idle.append(worker)
                traced = json.loads(trace_out.read_text(encoding="utf-8")) if status == "survived" else {}
                return status, seconds, traced

            with ThreadPoolExecutor(max_workers=jobs) as ex:
                baselines = dict(zip(groups, ex.map(baseline, range(len(groups)), groups), strict=True))
            work: list[tuple[ModuleReport, Site, str, float, list[str] | None]] = []
            for report in reports:
                t = report.target
                tests = t.tests
                status, seconds, traced_all = baselines[tests]
                report.baseline_seconds = seconds  # slower than a plain run (the tracing): a generous timeout
                if status != "survived":
                    report.baseline_error = f"the unmutated tests fail ({status}): {' '.join(tests)}"
                    print(f"{t.path}: {report.baseline_error}", flush=True)
                    continue
                # the scratch copy's source, not the work tree's: a module edited by someone else during the run
                # is mutated as it was when the tests were traced
                source = (workers[0].copy / t.path).read_text(encoding="utf-8")
                prefix = t.path + "::"
                traced = {"order": traced_all["order"], "called": {
                    test: [q[len(prefix):] for q in called if q.startswith(prefix)]
                    for test, called in traced_all["called"].items()}}
                functions = function_scopes(source)
                for site in _selected(t, sites(source)):
                    if any(skip.matches(t.path, site) for skip in SKIPS):
                        report.results.append(Result(site, "skipped", 0.0))
                        continue
                    select = _tests_for(site, functions, traced)
                    work.append((report, site, source, 1.5 * seconds + 10, select))
            print(f"{len(work)} mutants", flush=True)
            done = [0]
            left = {id(r): sum(1 for w in work if w[0] is r) for r in reports}
            start = time.monotonic()

            def one(item: tuple[ModuleReport, Site, str, float, list[str] | None]) -> Result:
                report, site, source, timeout, select = item
                if select == []:  # no test calls the mutated function: nothing could notice it, no run needed
                    status, seconds = "survived", 0.0
                else:
                    # only the files that hold the selected tests: the others would be imported and collected
                    # for nothing
                    tests = report.target.tests if select is None else tuple(
                        f for f in report.target.tests if any(t.split("::")[0] == f for t in select))
                    with lock:
                        worker = idle.pop()
                    path = worker.copy / report.target.path
                    try:
                        path.write_text(mutate(source, site), encoding="utf-8")
                        status, seconds = worker.run(tests, timeout, select)
                    finally:
                        path.write_text(source, encoding="utf-8")
                        with lock:
                            idle.append(worker)
                with lock:
                    done[0] += 1
                    left[id(report)] -= 1
                    if status == "survived":  # as they come, so a long run can be read while it goes on
                        print(f"[{done[0]}/{len(work)}] survived {_describe(report.target.path, site)}", flush=True)
                    elif done[0] % 50 == 0:
                        print(f"[{done[0]}/{len(work)}] {time.monotonic() - start:.0f} s", flush=True)
                    if status in ("killed", "timeout", "survived"):
                        report.tally[status] += 1
                    if left[id(report)] == 0:  # a module's line as soon as its last mutant is back
                        t = report.tally
                        n = sum(t.values()) + sum(r.status == "skipped" for r in report.results)
                        n_rate = sum(t.values())
                        pct = 100.0 * (t["killed"] + t["timeout"]) / n_rate if n_rate else 100.0
                        print(f"[{done[0]}/{len(work)}] {report.target.path}: {t['killed'] + t['timeout']}/{n_rate} "
                              f"killed ({pct:.1f}%, {t['timeout']} by timeout), {n - n_rate} skipped, "
                              f"{time.monotonic() - start:.0f} s", flush=True)
                return Result(site, status, seconds)

            with ThreadPoolExecutor(max_workers=jobs) as ex:
                results = list(ex.map(one, work))
            for (report, *_), result in zip(work, results, strict=True):
                report.results.append(result)
        finally:
            for worker in workers:
                worker.close()
    return reports


def _describe(path: str, s: Site) -> str:
    return f"{path}:{s.line} [{s.function}] {s.op}: {s.before} -> {s.after}"


def print_report(reports: list[ModuleReport], seconds: float) -> None:
    width = max(len(r.target.path) for r in reports)
    # killed includes the timeouts (shown apart); skipped mutants (SKIPS) are not in the rate
    print(f"{'module':<{width}}  mutants  skipped  killed  (timeout)  survived  killed %")
    for r in reports:
        if r.baseline_error:
            print(f"{r.target.path:<{width}}  {r.baseline_error}")
            continue
        n = r.counted
        pct = f"{100.0 * r.killed / n:.1f}" if n else "-"
        print(f"{r.target.path:<{width}}  {n:>7}  {r.skipped:>7}  {r.killed:>6}  {r.timeouts:>9}  {n - r.killed:>8}"
              f"  {pct:>8}")
    total = sum(r.counted for r in reports)
    killed = sum(r.killed for r in reports)
    if total:
        print(f"{'total':<{width}}  {total:>7}  {sum(r.skipped for r in reports):>7}  {killed:>6}"
              f"  {sum(r.timeouts for r in reports):>9}  {total - killed:>8}  {100.0 * killed / total:>8.1f}")
    print(f"({seconds:.0f} s)")
    survivors = [(r.target.path, x.site) for r in reports for x in r.results if x.status == "survived"]
    if survivors:
        print("\nsurvivors:")
        for path, s in survivors:
            print(f"  {_describe(path, s)}")
    skipped = [(r.target.path, x.site) for r in reports for x in r.results if x.status == "skipped"]
    if skipped:
        print("\nskipped (not in the rate; the reasons are in SKIPS):")
        for path, s in skipped:
            print(f"  {_describe(path, s)}")
    timeouts = [(r.target.path, x.site) for r in reports for x in r.results if x.status == "timeout"]
    if timeouts:
        print("\nkilled by the timeout:")
        for path, s in timeouts:
            print(f"  {_describe(path, s)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", default=[],
                        help="mutate only this module (repeatable), e.g. rewards/gate.py")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once, each in its own copy (2)")
    parser.add_argument("--list", action="store_true", help="count the mutants per module and exit")
    parser.add_argument("--json", default="runs/mutation.json", help="where to write the results")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # internal: run as a worker in this copy
    args = parser.parse_args(argv)
    if args.serve:
        return _serve(args.serve)
    signal.signal(signal.SIGTERM, _stop)  # stop the workers and clean up the scratch copies when stopped
    known = {t.path: t for t in TARGETS}
    unknown = [m for m in args.module if m not in known]
    if unknown:
        parser.error(f"unknown module(s) {unknown}; known: {sorted(known)}")
    targets = [known[m] for m in args.module] if args.module else list(TARGETS)
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    if args.list:
        for t in targets:
            found = _selected(t, sites((ROOT / t.path).read_text(encoding="utf-8")))
            skipped = sum(any(skip.matches(t.path, site) for skip in SKIPS) for site in found)
            print(f"{t.path}: {len(found) - skipped} mutants ({skipped} more skipped)")
        return 0
    start = time.monotonic()
    reports = run(targets, args.jobs)
    for r in reports:  # in source order (the workers finish out of order)
        r.results.sort(key=lambda x: (x.site.line, x.site.index, x.site.detail))
    print_report(reports, time.monotonic() - start)
    out = ROOT / args.json
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([{
        "module": r.target.path, "tests": list(r.target.tests), "baseline_seconds": round(r.baseline_seconds, 2),
        "baseline_error": r.baseline_error, "mutants": r.counted, "killed": r.killed, "timeouts": r.timeouts,
        "skipped": r.skipped, "kill_rate": round(r.killed / r.counted, 4) if r.counted else None,
        "survivors": [{"line": x.site.line, "function": x.site.function, "op": x.site.op, "before": x.site.before,
                       "after": x.site.after, "code": x.site.code} for x in r.results if x.status == "survived"],
    } for r in reports], indent=1), encoding="utf-8")
    return 1 if any(r.baseline_error for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
