"""The wheel is the product: built from the repository, installed into a fresh venv and run from another folder,
it loads every shipped config (lessons, personas, rewards, suites, train recipes) and plays the same episode,
to the byte, as the checkout.

The fresh venv has no pip and no dependencies of its own; a ``.pth`` file lends it this interpreter's
site-packages for numpy, pydantic and the rest (no download), while TutorZoo itself comes only from the wheel:
the first check asserts that ``tutorzoo.envs`` is imported from the fresh venv, not from the checkout.
The build runs offline (``--no-build-isolation``) with this venv's setuptools, which the ``dev`` extra brings.
About 30 s (build 5 s, install 5 s, the rest in the installed package's runs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.eval.rollout import run_episode

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
NOT_SOURCE = (".git", ".venv", "build", "dist", "runs", "wandb", "models", "*.egg-info", "__pycache__",
              ".pytest_cache", ".ruff_cache")
PERSONA = "weak_knowledge_partly_wrong"

ROLLOUT = """
import json, sys
from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.student.personas import get_persona
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.envs.resources import config_dir
from tutorzoo.eval.rollout import run_episode
spec = EpisodeSpec(task_set=sys.argv[1], persona=sys.argv[2], seed=int(sys.argv[3]))
student = SimulatedStudent(get_persona(spec.persona, config_dir("personas")))
print(json.dumps(run_episode(spec, make_tutor("socratic"), student, "socratic").to_json(), sort_keys=True))
"""

COUNTS = """
import json
from tutorzoo import envs
from tutorzoo.agents.student.personas import load_personas
from tutorzoo.envs.resources import config_dir
from tutorzoo.envs.tasks.stem import StemTaskSet
from tutorzoo.eval.suite import load_suite
from tutorzoo.rewards.rubric import load_rubric
suites = sorted(p.stem for p in config_dir("suites").glob("*.yaml"))
print(json.dumps({
    "envs": envs.__file__,
    "lessons": len(StemTaskSet().task_ids()),
    "personas": len(load_personas(config_dir("personas"))),
    "suites": [load_suite(name).name for name in suites],
    "rewards": sorted(p.stem for p in config_dir("rewards").glob("*.yaml") if load_rubric(p.stem)),
}))
"""


def _personas_in_checkout() -> int:
    from tutorzoo.agents.student.personas import load_personas

    return len(load_personas(CONFIGS / "personas"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Build the wheel from a copy of the source tree, install it into a fresh venv; the venv's python, its
    ``tutorzoo`` script, a working folder outside both, and an environment without PYTHONPATH."""
    work = tmp_path_factory.mktemp("wheel")
    src, dist, venv, elsewhere = work / "src", work / "dist", work / "venv", work / "elsewhere"
    # A copy, so that the build's build/ and *.egg-info never land in the checkout; links stay links.
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    # Without PYTHONPATH (another test may have set it in this process): pip would find the checkout through it,
    # call the package "already satisfied" and install nothing into the fresh venv.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"COLUMNS": "200"}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--disable-pip-version-check", "-w", str(dist), str(src)], check=True, env=env)
    wheels = sorted(dist.glob("tutorzoo-*.whl"))
    assert len(wheels) == 1, f"expected one tutorzoo wheel in {dist}, found {wheels}"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "--ignore-installed", "--quiet", "--disable-pip-version-check", str(wheels[0])],
                   check=True, env=env)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # The dependencies, lent by this interpreter (its .pth files, e.g. an editable install's finder, do not run).
    (Path(site) / "_tutorzoo_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    elsewhere.mkdir()
    return {"python": str(python), "tutorzoo": str(venv / "bin" / "tutorzoo"), "cwd": elsewhere, "env": env,
            "wheel": wheels[0], "venv": venv}


def _run(installed: dict, *argv: str) -> str:
    done = subprocess.run(list(argv), cwd=installed["cwd"], env=installed["env"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{argv[0]} {argv[1:3]} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout


def test_wheel_ships_every_config_file(installed: dict) -> None:
    import zipfile

    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    expected = {f"tutorzoo/envs/configs/{p.relative_to(CONFIGS).as_posix()}" for p in CONFIGS.rglob("*.yaml")}
    assert len(expected) >= 60
    assert expected - names == set()
    assert "tutorzoo/train/templates/smollm2.jinja" in names
    assert {"tutorzoo/eval/assets/report.css", "tutorzoo/eval/assets/report.js"} <= names  # report.html's assets
    assert {f"tutorzoo/envs/prompts/{name}.txt"
            for name in ("tutor_system", "student_system", "test_answer_format")} <= names


def test_wheel_installs_one_top_level_name(installed: dict) -> None:
    import zipfile

    wheel = zipfile.ZipFile(installed["wheel"])
    tops = {name.split("/")[0] for name in wheel.namelist() if ".dist-info/" not in name}
    assert tops == {"tutorzoo"}
    [top_level] = [n for n in wheel.namelist() if n.endswith(".dist-info/top_level.txt")]
    assert wheel.read(top_level).decode().split() == ["tutorzoo"]
    for package in ("envs", "agents", "rewards", "train", "eval"):
        assert f"tutorzoo/{package}/__init__.py" in wheel.namelist()


def test_installed_package_loads_every_config(installed: dict) -> None:
    counts = json.loads(_run(installed, installed["python"], "-c", COUNTS))
    assert Path(counts["envs"]).is_relative_to(installed["venv"]), f"envs came from {counts['envs']}, not the wheel"
    assert counts["lessons"] == len(list((CONFIGS / "lessons").glob("*.yaml"))) == 48
    assert counts["personas"] == _personas_in_checkout() > 0
    assert counts["suites"] == [yaml.safe_load(p.read_text(encoding="utf-8"))["name"]
                                for p in sorted((CONFIGS / "suites").glob("*.yaml"))]
    assert counts["rewards"] == sorted(p.stem for p in (CONFIGS / "rewards").glob("*.yaml"))


def _fake_distribution(work: Path, name: str) -> Path:
    """A wheel of a distribution ``name`` whose one top-level module is ``name`` (as PyPI's ``envs`` is)."""
    src = work / f"{name}-src"
    (src / name).mkdir(parents=True)
    (src / name / "__init__.py").write_text(f"WHO = 'the {name} distribution'\n", encoding="utf-8")
    (src / "pyproject.toml").write_text(
        f'[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "9.9"\n[tool.setuptools]\npackages = ["{name}"]\n', encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--disable-pip-version-check", "-w", str(work / "dist"), str(src)], check=True)
    return next((work / "dist").glob(f"{name}-9.9-*.whl"))


def test_installed_beside_packages_named_like_its_folders(installed: dict, tmp_path: Path) -> None:
    """PyPI has packages named envs, agents, rewards, train and eval; each installs beside TutorZoo, and both work."""
    names = ("envs", "agents", "rewards", "train", "eval")
    wheels = [str(_fake_distribution(tmp_path, name)) for name in names]
    subprocess.run([sys.executable, "-m", "pip", "--python", installed["python"], "install", "--no-deps",
                    "--no-index", "--quiet", "--disable-pip-version-check", *wheels], check=True, env=installed["env"])
    try:
        code = ("import envs, agents, rewards, train, eval; print(envs.WHO, eval.WHO); "
                "from tutorzoo.envs import tutoring_v0; env = tutoring_v0.env(task_set='math'); env.reset(seed=0); "
                "print(env.agents)")
        out = _run(installed, installed["python"], "-c", code)
        assert out.splitlines() == ["the envs distribution the eval distribution", "['tutor', 'student']"]
        assert re.search(r"^sid_core +", _run(installed, installed["tutorzoo"], "list", "personas"), re.MULTILINE)
    finally:
        subprocess.run([sys.executable, "-m", "pip", "--python", installed["python"], "uninstall", "--yes",
                        "--quiet", *names], check=True, env=installed["env"])


def test_installed_cli_lists_suites(installed: dict) -> None:
    out = _run(installed, installed["tutorzoo"], "list", "suites")
    names = [yaml.safe_load(p.read_text(encoding="utf-8"))["name"] for p in sorted((CONFIGS / "suites").glob("*.yaml"))]
    assert re.findall(r"^(\S+) +v\d", out, flags=re.MULTILINE) == names


@pytest.mark.parametrize(("task_set", "seed"), [("math", 1), ("stem", 3)], ids=["math", "stem"])
def test_installed_episode_is_the_checkouts(installed: dict, task_set: str, seed: int) -> None:
    out = _run(installed, installed["python"], "-c", ROLLOUT, task_set, PERSONA, str(seed))
    spec = EpisodeSpec(task_set=task_set, persona=PERSONA, seed=seed)
    here = run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona), "socratic")
    assert len(here["transcript"]) > 4
    assert out.strip() == json.dumps(here.to_json(), sort_keys=True)


def test_installed_cli_lists_every_persona(installed: dict) -> None:
    out = _run(installed, installed["tutorzoo"], "list", "personas")
    assert len([line for line in out.splitlines() if line.strip()]) == _personas_in_checkout()


def test_installed_train_recipes_are_found(installed: dict) -> None:
    out = _run(installed, installed["python"], "-c",
               "from tutorzoo.train.common import CONFIG_DIR; print(len(list(CONFIG_DIR.glob('*.yaml'))))")
    assert int(out) == len(list((CONFIGS / "train").glob("*.yaml")))
