"""nbval checks what the lessons teach: each lesson commits the outputs of the cells that state its facts, marked
``# NBVAL_CHECK_OUTPUT``, and a change to the rule a lesson teaches makes nbval fail on that lesson.

The outputs are stored by ``tests/notebooks/store_checked_outputs.py``; what varies between runs (times,
temporary paths, process ids, ports, table ids) is replaced by ``tests/notebooks/nbval_sanitize.cfg``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import get_sanitize_patterns

from tests.notebooks.store_checked_outputs import LESSONS, MARKER, WIDGET, is_checked

ROOT = Path(__file__).resolve().parents[2]
SANITIZE = ROOT / "tests" / "notebooks" / "nbval_sanitize.cfg"
FEWEST_CHECKED = 5
SCOPES_LESSON = "02_server_scopes.ipynb"


def code_cells(path: Path) -> list:
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def sanitized(text: str) -> str:
    for regex, replace in get_sanitize_patterns(SANITIZE.read_text()):
        text = re.sub(regex, replace, text)
    return text


def test_the_lessons_are_found() -> None:
    assert len(LESSONS) == 7 and all(p.name[:2] in {"01", "02", "03", "04", "05"} for p in LESSONS)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_lesson_checks_several_cells_and_each_has_its_output(path: Path) -> None:
    checked = [c for c in code_cells(path) if is_checked(c)]
    assert len(checked) >= FEWEST_CHECKED, f"{len(checked)} checked cells"
    assert all(c.outputs for c in checked), [c.id for c in checked if not c.outputs]
    assert all(c.execution_count for c in checked), "nbval skips a cell stored with no execution count"
    assert all(c.source.startswith(MARKER + "\n") for c in checked), "the marker is the cell's first line"


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_a_cell_not_checked_is_committed_without_outputs(path: Path) -> None:
    assert not [c.id for c in code_cells(path) if not is_checked(c) and c.outputs]


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_checked_outputs_are_facts_not_errors_widgets_or_math(path: Path) -> None:
    for cell in (c for c in code_cells(path) if is_checked(c)):
        for output in cell.outputs:
            assert output.output_type != "error" and output.get("name") != "stderr", (cell.id, output)
            data = output.get("data", {})
            assert WIDGET not in data, cell.id
            html = data.get("text/html", "")
            if "<table" in html:  # JupyterLab would typeset `${VAR}` in a table that lets math in
                assert "mathjax_ignore" in html, cell.id


def test_the_sanitize_file_hides_what_varies_and_keeps_what_is_taught() -> None:
    varies = (
        '<table id="table-0123456789ab"> /tmp/tmp_3tmkovu/project /tmp/lesson03-z7av10is 14:22:16 '
        "2026-12-02T14:22:16.123Z 0.532 s pid 1234 http://127.0.0.1:9401/mcp localhost:45123 0x7f12ab34cd56"
    )
    assert sanitized(varies) == (
        '<table id="table-ID"> TMPDIR/project TMPDIR HH:MM:SS DATETIME N s pid PID '
        "http://127.0.0.1:PORT/mcp localhost:PORT 0xADDRESS"
    )
    taught = "timed out after 5 s; http://localhost:8082/mcp; limit 25,000 tokens; ORD-1001; RF-1001-001"
    assert sanitized(taught) == taught


def copy_for_nbval(destination: Path, precedence: str | None = None) -> Path:
    """What lesson 02 needs to run under the repository's pytest options, optionally with another precedence."""
    ignore = shutil.ignore_patterns("__pycache__")
    for package in ("grader", "servers", "labkit"):
        shutil.copytree(ROOT / package, destination / package, ignore=ignore)
    (destination / "notebooks").mkdir()
    shutil.copy2(ROOT / "notebooks" / SCOPES_LESSON, destination / "notebooks")
    (destination / "tests" / "notebooks").mkdir(parents=True)
    shutil.copy2(SANITIZE, destination / "tests" / "notebooks")
    shutil.copy2(ROOT / "pyproject.toml", destination)  # its addopts: --nbval-lax and the sanitize file
    if precedence is not None:
        scopes = destination / "grader" / "scopes.py"
        rule = re.compile(r"^PRECEDENCE = \(.*\)$", re.MULTILINE)
        assert len(rule.findall(scopes.read_text())) == 1, "grader/scopes.py no longer states PRECEDENCE on one line"
        scopes.write_text(rule.sub(f"PRECEDENCE = {precedence}", scopes.read_text()))
    return destination


def start_nbval(copy: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(copy)}  # the kernel and `python -m grader` import the copy
    env.pop("CLAUDE_CODE_BIN", None)  # the appendix's live Claude Code run checks nothing and takes long
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-rf", f"notebooks/{SCOPES_LESSON}"],
        cwd=copy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_nbval_fails_lesson_02_on_a_checked_cell_when_local_scope_loses_to_project_scope(tmp_path: Path) -> None:
    # The lesson teaches local > project > user; here project scope wins over local.
    swapped = copy_for_nbval(tmp_path / "swapped", "(MANAGED, PROJECT, LOCAL, USER, PLUGIN, CONNECTOR)")
    unchanged = copy_for_nbval(tmp_path / "unchanged")
    runs = {name: start_nbval(copy) for name, copy in (("swapped", swapped), ("unchanged", unchanged))}
    out = {name: run.communicate(timeout=300)[0] for name, run in runs.items()}

    assert runs["unchanged"].returncode == 0, out["unchanged"][-4000:]
    assert runs["swapped"].returncode == 1, out["swapped"][-4000:]
    failed = {int(n) for n in re.findall(rf"FAILED notebooks/{SCOPES_LESSON}::Cell (\d+)", out["swapped"])}
    cells = code_cells(ROOT / "notebooks" / SCOPES_LESSON)
    assert failed and all(is_checked(cells[n]) for n in failed), (failed, out["swapped"][-4000:])
    shown = {cells[n].id for n in failed}
    assert {"cell-17", "cell-21", "live-01"} <= shown, shown  # the table, the CLI's answer, the live desk
