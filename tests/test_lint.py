"""The repository passes ruff's lint and format checks with the configuration in pyproject.toml, the labs' source
notebooks included, and that configuration can fail: on unsorted imports, old-style annotations, a mutable default,
an unformatted file, and in notebooks as in Python files."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = REPO / "pyproject.toml"
INSTALL = "ruff is not installed: install the course with its [dev] extra, pip install -e '.[dev]'"


def ruff_bin() -> str:
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        pytest.fail(INSTALL)
    return str(find_ruff_bin())


def ruff(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [ruff_bin(), *args, "--no-cache"], check=False, capture_output=True, text=True, cwd=cwd, timeout=120
    )


def codes(done: subprocess.CompletedProcess) -> dict[str, set[str]]:
    """The rule codes ruff reported, by file name."""
    found: dict[str, set[str]] = {}
    for finding in json.loads(done.stdout):
        found.setdefault(Path(finding["filename"]).name, set()).add(finding["code"])
    return found


def test_the_ruff_that_runs_is_the_version_the_dev_extra_pins() -> None:
    # The formatter's style changes between ruff's versions: everyone formats with the same one.
    extras = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"].get("optional-dependencies", {})
    pins = [req for req in extras.get("dev", []) if re.match(r"ruff\b", req)]
    assert len(pins) == 1, f"the [dev] extra should name ruff once: {extras.get('dev')}"
    (pin,) = pins
    version = ruff("--version").stdout.split()[-1]
    if "==" in pin:
        assert pin.split("==")[1] == version, f"ruff {version} is installed, the [dev] extra pins {pin}"


def test_the_repository_passes_ruff_check() -> None:
    done = ruff("check", ".")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_repository_is_formatted() -> None:
    done = ruff("format", "--check", ".")
    assert done.returncode == 0, "run `ruff format` on:\n" + done.stdout[-4000:] + done.stderr[-2000:]


def test_the_labs_source_notebooks_are_formatted_not_left_out() -> None:
    # The solutions the labs are graded against: the formatter checks them as it checks any file. An excluded file
    # would be skipped without a word; here it is named in the count of files checked.
    labs = sorted(path.relative_to(REPO).as_posix() for path in REPO.glob("labs/source/lab*/*.ipynb"))
    assert len(labs) == 4, labs

    done = ruff("format", "--check", "--force-exclude", *labs)

    assert done.returncode == 0, "run `ruff format` on:\n" + done.stdout[-4000:] + done.stderr[-2000:]
    assert f"{len(labs)} files already formatted" in done.stdout, done.stdout + done.stderr


def test_the_lessons_and_labs_notebooks_are_linted_and_the_learners_submissions_are_not() -> None:
    done = ruff("check", "--show-files", ".")
    files = {Path(line).relative_to(REPO).as_posix() for line in done.stdout.splitlines() if line.startswith("/")}
    assert {
        "notebooks/02_server_scopes.ipynb",
        "labs/source/lab1_error_results/lab1_error_results.ipynb",
        "labs/source/quiz01_structured_tool_errors/quiz01_structured_tool_errors.ipynb",
        "grader/pipeline.py",
    } <= files
    assert not [f for f in files if f.startswith(("tests/submissions/", "tests/hostile/", "build/"))]


BAD = """import sys
import os
from typing import List

import grader


def collect(items: List[str] = []) -> List[str]:
    items.append(os.sep + sys.platform + grader.__name__)
    return items
"""


def test_the_configuration_reports_unsorted_imports_old_annotations_and_mutable_defaults(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    cell = {"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [], "source": BAD}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "bad.ipynb").write_text(json.dumps(notebook), encoding="utf-8")

    done = ruff("check", "--config", str(PYPROJECT), "--output-format", "json", ".", cwd=tmp_path)

    assert done.returncode == 1, done.stderr
    # I001: imports unsorted; UP006/UP035: typing.List where list will do; B006: a mutable default argument.
    expected = {"I001", "UP006", "UP035", "B006"}
    assert codes(done) == {"bad.py": expected, "bad.ipynb": expected}


def test_the_configuration_passes_the_same_code_written_as_it_asks(tmp_path: Path) -> None:
    good = (
        # The course's packages are first-party: a section of their own, after the third-party ones.
        "import os\nimport sys\n\nimport nbformat\n\nimport grader\n\n\n"
        "def collect(items: list[str] | None = None) -> list[str]:\n"
        "    items = [] if items is None else items\n"
        "    items.append(os.sep + sys.platform + grader.__name__ + nbformat.__name__)\n"
        "    return items\n"
    )
    (tmp_path / "good.py").write_text(good, encoding="utf-8")

    assert ruff("check", "--config", str(PYPROJECT), ".", cwd=tmp_path).returncode == 0
    assert ruff("format", "--check", "--config", str(PYPROJECT), ".", cwd=tmp_path).returncode == 0


def test_an_unformatted_file_fails_the_format_check(tmp_path: Path) -> None:
    (tmp_path / "messy.py").write_text("def f( x ):\n  return {'a':x}\n", encoding="utf-8")

    done = ruff("format", "--check", "--config", str(PYPROJECT), ".", cwd=tmp_path)

    assert done.returncode == 1
    assert "messy.py" in done.stdout + done.stderr
