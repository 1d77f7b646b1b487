"""The course on every Python it supports: the unit tests (tests/units.py) pass on each one this machine has.

The suite runs on one interpreter, the venv's. For each other supported version, found as ``python3.X`` on PATH
or, where PATH has only pyenv's shim for a version pyenv does not activate, as the newest of pyenv's installed
``3.X.*``, a venv is made in ``.venv/py3X`` with the course installed editable with its test extra, and the unit
tests run in it. The venv is kept while what the install depends on (``pyproject.toml``'s build system, project
and setuptools tables, ``setup.py``) and the interpreter are the ones it was made from, so a later run only runs
the tests. A version this machine does not have is skipped, saying so.

The venvs are in ``.venv``, beside the suite's own, and not in ``build``: the grading sandbox hides the course's
``build`` folder, and a server lab 2's checks start from such a venv could not read its libraries. Git, ruff and
the copies the tests make of the checkout all leave ``.venv`` out.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from units import MIN_UNIT_TESTS, NOT_UNIT_TESTS, UNIT_TESTS, pytest_arguments

REPO = Path(__file__).resolve().parents[1]
SUPPORTED = ((3, 11), (3, 12), (3, 13))
VENVS = REPO / ".venv"

# What the unit selection must never hold: the heavy parts, run once, on the suite's own interpreter.
NOT_UNITS = ("tests/grader/engine/", "tests/browser/", "tests/e2e/", "tests/conformance/", "tests/notebooks/")


def _name(version: tuple[int, int]) -> str:
    return f"python{version[0]}.{version[1]}"


def _clean_environment() -> dict[str, str]:
    """This process's environment without the venv it runs in, so a child uses only the interpreter it is given."""
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH")}


def find_interpreter(version: tuple[int, int]) -> tuple[Path, str] | None:
    """The interpreter for ``version`` and its full ``sys.version``, or None when this machine has none that runs."""
    name = _name(version)
    candidates: list[str | Path | None] = [shutil.which(name)]
    versions = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    release = re.compile(rf"{version[0]}\.{version[1]}\.(\d+)")
    installed = [path for path in versions.glob(f"*/bin/{name}") if release.fullmatch(path.parents[1].name)]
    candidates += sorted(installed, key=lambda path: -int(release.fullmatch(path.parents[1].name)[1]))
    for candidate in filter(None, candidates):
        try:
            answer = subprocess.run(
                [candidate, "-c", "import sys; print(*sys.version_info[:2]); print(sys.version)"],
                capture_output=True,
                text=True,
                timeout=60,
                env=_clean_environment(),
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        lines = answer.stdout.splitlines()
        if answer.returncode == 0 and lines[:1] == [f"{version[0]} {version[1]}"]:
            return Path(candidate), lines[1]
    return None


def _test_extra() -> str:
    """``[test]`` when the course declares that extra, else nothing (the test tools are then runtime dependencies)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return "[test]" if "test" in project.get("optional-dependencies", {}) else ""


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def course_venv(python: Path, full_version: str, version: tuple[int, int]) -> Path:
    """The python of ``.venv/py3X``, a venv of ``python`` with the course and its test extra, made if not up to date."""
    folder = VENVS / f"py{version[0]}{version[1]}"
    extra = _test_extra()
    # What the install depends on: the build system, the project's metadata, setuptools' tables, setup.py.
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    installs = {key: pyproject.get(key) for key in ("build-system", "project")}
    installs["setuptools"] = pyproject.get("tool", {}).get("setuptools")
    setup = (REPO / "setup.py").read_text() if (REPO / "setup.py").exists() else ""
    made_from = hashlib.sha256(json.dumps([installs, setup, full_version, extra], sort_keys=True).encode())
    stamp = folder / "course-stamp"
    venv_python = folder / "bin" / "python"
    with _locked(VENVS / f"py{version[0]}{version[1]}.lock"):
        if venv_python.exists() and stamp.exists() and stamp.read_text() == made_from.hexdigest():
            return venv_python
        shutil.rmtree(folder, ignore_errors=True)
        for command in (
            [str(python), "-m", "venv", str(folder)],
            [str(venv_python), "-m", "pip", "install", "--quiet", "-e", f".{extra}"],
        ):
            done = subprocess.run(
                command, cwd=REPO, capture_output=True, text=True, timeout=1800, env=_clean_environment()
            )
            assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        stamp.write_text(made_from.hexdigest())
    return venv_python


def test_the_unit_selection_collects_the_unit_tests_and_nothing_heavy() -> None:
    for path in (*UNIT_TESTS, *NOT_UNIT_TESTS):
        assert (REPO / path).exists(), f"tests/units.py names {path}, which is not in the checkout"
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *pytest_arguments()],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    assert len(ids) >= MIN_UNIT_TESTS
    heavy = [i for i in ids if i.startswith((*NOT_UNITS, *NOT_UNIT_TESTS)) or ".ipynb" in i]
    assert heavy == []


def test_requires_python_and_the_classifiers_name_the_versions_tested() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    lowest = min(SUPPORTED)
    assert project["requires-python"] == f">={lowest[0]}.{lowest[1]}"
    classifiers = project["classifiers"]
    named = {c.removeprefix("Programming Language :: Python :: ") for c in classifiers}
    assert {v for v in named if re.fullmatch(r"3\.\d+", v)} == {f"{a}.{b}" for a, b in SUPPORTED}
    assert "Programming Language :: Python :: 3 :: Only" in classifiers


@pytest.mark.parametrize("version", SUPPORTED, ids=_name)
def test_the_unit_tests_pass_on(version: tuple[int, int], tmp_path: Path) -> None:
    if sys.version_info[:2] == version:
        pytest.skip(f"{_name(version)} runs this suite itself")
    found = find_interpreter(version)
    if found is None:
        pytest.skip(f"this machine has no {_name(version)} that runs (on PATH, or installed by pyenv)")
    venv_python = course_venv(*found, version)
    junit = tmp_path / "units.xml"
    report_and_run = (
        "import sys; print('interpreter', *sys.version_info[:2], flush=True); import pytest; sys.exit(pytest.main())"
    )
    ran = subprocess.run(
        [str(venv_python), "-c", report_and_run, *pytest_arguments(), "-q", f"--junitxml={junit}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1200,
        env=_clean_environment(),
    )
    assert ran.returncode == 0, f"the unit tests failed on {_name(version)}:\n{ran.stdout[-6000:]}{ran.stderr[-3000:]}"
    assert ran.stdout.splitlines()[0] == f"interpreter {version[0]} {version[1]}"
    suite = ET.parse(junit).getroot().find("testsuite")
    counts = {key: int(suite.get(key)) for key in ("tests", "failures", "errors", "skipped")}
    assert counts["failures"] == counts["errors"] == 0
    assert counts["tests"] - counts["skipped"] >= MIN_UNIT_TESTS
