"""The course on every Python it supports: the unit tests (tests/units.py) pass on each one this machine has.

The suite runs on one interpreter, the venv's: in CI the newest supported one found (``.ci/run`` makes the venv from
it, and sets MCP_COURSE_EXPECT_NEWEST=1 so that a run on another fails here). For each other supported version,
found as tests/interpreters.py says (``python3.X`` on PATH, else the newest of pyenv's installed ``3.X.*``), a venv is
made in ``.venv/py3X`` with the course installed editable with its test extra, and the unit
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
from interpreters import SUPPORTED, Interpreter, clean_environment, find_interpreter, name, newest
from units import MIN_UNIT_TESTS, NOT_UNIT_TESTS, UNIT_TESTS, pytest_arguments

REPO = Path(__file__).resolve().parents[1]
VENVS = REPO / ".venv"

# What the unit selection must never hold: the heavy parts, run once, on the suite's own interpreter.
NOT_UNITS = ("tests/grader/engine/", "tests/browser/", "tests/e2e/", "tests/conformance/", "tests/notebooks/")


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


def course_venv(interpreter: Interpreter) -> Path:
    """The python of ``.venv/py3X``, a venv of ``interpreter`` with the course and its test extra, made if not up to date."""
    python, full_version, version = interpreter.path, interpreter.full_version, interpreter.version
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
                command, cwd=REPO, capture_output=True, text=True, timeout=1800, env=clean_environment()
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


def test_requires_python_and_the_classifiersname_the_versions_tested() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    lowest = min(SUPPORTED)
    assert project["requires-python"] == f">={lowest[0]}.{lowest[1]}"
    classifiers = project["classifiers"]
    named = {c.removeprefix("Programming Language :: Python :: ") for c in classifiers}
    assert {v for v in named if re.fullmatch(r"3\.\d+", v)} == {f"{a}.{b}" for a, b in SUPPORTED}
    assert "Programming Language :: Python :: 3 :: Only" in classifiers


@pytest.mark.parametrize("version", SUPPORTED, ids=name)
def test_the_unit_tests_pass_on(version: tuple[int, int], tmp_path: Path) -> None:
    if sys.version_info[:2] == version:
        pytest.skip(f"{name(version)} runs this suite itself")
    found = find_interpreter(version)
    if found is None:
        pytest.skip(f"this machine has no {name(version)} that runs (on PATH, or installed by pyenv)")
    venv_python = course_venv(found)
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
        env=clean_environment(),
    )
    assert ran.returncode == 0, f"the unit tests failed on {name(version)}:\n{ran.stdout[-6000:]}{ran.stderr[-3000:]}"
    assert ran.stdout.splitlines()[0] == f"interpreter {version[0]} {version[1]}"
    suite = ET.parse(junit).getroot().find("testsuite")
    counts = {key: int(suite.get(key)) for key in ("tests", "failures", "errors", "skipped")}
    assert counts["failures"] == counts["errors"] == 0
    assert counts["tests"] - counts["skipped"] >= MIN_UNIT_TESTS


def _stand_in(path: Path, version: tuple[int, int] | None, status: int = 0) -> None:
    """An executable at ``path`` that answers as Python ``version`` would and exits with ``status``, or, for None,
    fails as pyenv's shim does for a version it does not activate."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if version is None:
        body = f'echo "pyenv: {path.name}: command not found" >&2\nexit 127\n'
    else:
        body = (
            f'echo "{version[0]} {version[1]}"\necho "{version[0]}.{version[1]}.0 stand-in at {path}"\nexit {status}\n'
        )
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _newest_into(folder: Path, path: list[Path], pyenv: Path) -> subprocess.CompletedProcess[str]:
    """``tests/interpreters.py --newest-into folder``, as .ci/run runs it, with only ``path`` on PATH."""
    environment = {**clean_environment(), "PATH": os.pathsep.join(map(str, path)), "PYENV_ROOT": str(pyenv)}
    return subprocess.run(
        [sys.executable, str(REPO / "tests" / "interpreters.py"), "--newest-into", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )


def test_ci_chooses_the_newest_supported_python_that_runs(tmp_path: Path) -> None:
    bin_, pyenv = tmp_path / "bin", tmp_path / "pyenv"
    (pyenv / "versions").mkdir(parents=True)
    newest_version, middle, oldest = SUPPORTED[-1], SUPPORTED[-2], SUPPORTED[0]
    _stand_in(bin_ / name(newest_version), None)  # on PATH, but does not run
    _stand_in(bin_ / name(middle), middle)
    _stand_in(bin_ / name(oldest), oldest)

    done = _newest_into(tmp_path / "a", [bin_], pyenv)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{name(middle)}: {bin_ / name(middle)}" in done.stdout
    for launcher in ("python3", "python"):
        ran = subprocess.run([tmp_path / "a" / launcher, "-V"], capture_output=True, text=True, timeout=60)
        assert ran.stdout.splitlines()[0] == f"{middle[0]} {middle[1]}"

    # pyenv's installs of the newest version: the newest release that runs, by number (3.X.10 after 3.X.9).
    release = f"{newest_version[0]}.{newest_version[1]}"
    for patch, version in ((9, newest_version), (10, newest_version), (11, None)):
        _stand_in(pyenv / "versions" / f"{release}.{patch}" / "bin" / name(newest_version), version)
    _stand_in(pyenv / "versions" / f"{release}.12" / "bin" / name(newest_version), middle)  # says it is another
    _stand_in(pyenv / "versions" / f"{release}.13" / "bin" / name(newest_version), newest_version, status=1)  # fails
    done = _newest_into(tmp_path / "b", [bin_], pyenv)
    assert done.returncode == 0, done.stdout + done.stderr
    chosen = pyenv / "versions" / f"{release}.10" / "bin" / name(newest_version)
    assert f"{name(newest_version)}: {chosen}" in done.stdout
    assert str(chosen) in (tmp_path / "b" / "python3").read_text()

    # None runs: it says so, writes nothing and fails, so that .ci/run keeps the machine's python3.
    done = _newest_into(tmp_path / "c", [tmp_path / "empty"], tmp_path / "no-pyenv")
    assert done.returncode == 1
    assert "No supported Python" in done.stdout
    assert not (tmp_path / "c").exists()


def test_a_venv_made_by_the_launcher_is_of_the_python_found_and_outlives_it(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    this = sys.version_info[:2]
    (bin_ / name(this)).symlink_to(os.path.realpath(sys.executable))  # this suite's Python, outside its venv
    for version in SUPPORTED:
        if version > this:
            _stand_in(bin_ / name(version), None)
    done = _newest_into(tmp_path / "launchers", [bin_], tmp_path / "no-pyenv")
    assert done.returncode == 0, done.stdout + done.stderr

    # The README's first step, with the launcher as python3; then the launcher goes, as .ci/run removes it.
    made = subprocess.run(
        [tmp_path / "launchers" / "python3", "-m", "venv", "--without-pip", tmp_path / "venv"],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_environment(),
    )
    assert made.returncode == 0, made.stdout + made.stderr
    shutil.rmtree(tmp_path / "launchers")
    ran = subprocess.run(
        [tmp_path / "venv" / "bin" / "python", "-c", "import sys; print(*sys.version_info[:2], sys.prefix)"],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_environment(),
    )
    assert ran.stdout.split() == [str(this[0]), str(this[1]), str(tmp_path / "venv")], ran.stderr


def test_the_suite_runs_on_the_newest_supported_python_found() -> None:
    found = newest()
    here = f"this suite runs on {sys.executable}, Python {sys.version}"
    if os.environ.get("MCP_COURSE_EXPECT_NEWEST") != "1":
        pytest.skip(f"{here}; the newest found is {found and found.path} (CI sets MCP_COURSE_EXPECT_NEWEST=1)")
    assert found is not None, f"{here}, and no supported Python is found"
    assert sys.version_info[:2] == found.version, f"{here}, not on the newest found: {found.path}, {found.full_version}"
