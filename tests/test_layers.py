"""The import contracts of pyproject.toml ([tool.importlinter]) hold: lint-imports, run as the test command runs.

The contracts: the instructor side (CLI, pipeline, course) over the grading engine over the learner's side
(labkit, the learner host, the protocol helpers); the teaching side never imports the engine; what learners
run imports nothing of the grader; the engine imports nothing of the lessons' servers or the grader's tools
(the server checker among them); no cycle between sibling packages. Each is shown to fail on a copy of the
code that breaks it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("grader", "labkit", "servers")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(
    not LINT_IMPORTS.exists(), reason="import-linter is not installed (pip install -e '.[dev]')"
)


def lint_imports(folder: Path) -> subprocess.CompletedProcess:
    """lint-imports on the packages under ``folder``, with ``folder``'s pyproject.toml."""
    env = {**os.environ, "PYTHONPATH": str(folder)}  # the packages of folder, ahead of the installed course
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(folder / "pyproject.toml"), "--no-cache"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The course's packages and pyproject.toml, copied: a copy a test may break."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_import_contracts_of_pyproject_are_kept():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


BREAKS = {
    # a lab kit reaching into the engine
    "labkit/engine_by_the_back_door.py": ("import grader.engine.batch\n", "never imports the grading engine"),
    # the learner host reaching the reference model
    "servers/learner_host/answer_key.py": (
        "import grader.decisions\n",
        "What learners run imports nothing of the grader",
    ),
    # the engine reaching the server checker
    "grader/engine/checks_servers.py": ("import grader.checker\n", "nothing else of the teaching side"),
    # the engine reaching up into the pipeline, which imports the engine: a cycle, and a layer upside down
    "grader/engine/upward.py": ("import grader.pipeline\n", "No cycle between the packages"),
}


@pytest.mark.parametrize("module", sorted(BREAKS))
def test_a_copy_with_an_import_that_breaks_a_contract_fails_the_check_and_names_the_contract(copy: Path, module: str):
    line, contract = BREAKS[module]
    (copy / module).write_text(line, encoding="utf-8")
    done = lint_imports(copy)
    assert done.returncode != 0, done.stdout
    broken = " ".join(done.stdout.split("Broken contracts", 1)[-1].split())  # lint-imports wraps long names
    assert contract in broken, done.stdout
    assert module.removesuffix(".py").replace("/", ".") in broken


def test_the_unbroken_copy_passes_so_the_failures_above_are_the_imports_they_add(copy: Path):
    done = lint_imports(copy)
    assert done.returncode == 0, done.stdout + done.stderr
