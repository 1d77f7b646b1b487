"""Shared helpers of the lab-check tests: host a solution, edit it, find a line, read a verdict."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from solution_edits import find, replace_once

from grader.engine.grading import sandboxed
from grader.labs import lab_checks
from grader.notebook import answer_code, is_answer_cell, read_notebook
from labkit.checking import CheckResult, run_check
from servers.client import connect
from servers.learner_host import build_server, load_learner_code
from servers.learner_host.cells import CELL_SEPARATOR

# Pieces of the checks' own code that must never reach a learner's feedback.
CHECK_CODE = (
    "expect(",
    "def ",
    "structured(",
    "learner_expand(",
    "reference_resolve(",
    "host.read(",
    "host.call(",
    "catalog_entries(",
    "read_json(",
)


def failed(results: dict[str, CheckResult]) -> set[str]:
    return {name for name, result in results.items() if not result.passed}


def mutate(code: str, *edits: tuple[str, str]) -> str:
    """Apply replacements, each of whose text must occur exactly once (found by its code, whatever its layout)."""
    for old, new in edits:
        code = replace_once(code, old, new)
    return code


def cells(code: str) -> list[str]:
    return code.split(f"\n{CELL_SEPARATOR}\n")


def line_of(code: str, fragment: str) -> tuple[int, int]:
    """(answer cell number, 1-based line within that cell) of the one line holding ``fragment``, or where the one
    piece of code whose tokens are those of ``fragment`` starts (a statement the formatter wrapped)."""
    hits = [
        (cell, n)
        for cell, text in enumerate(cells(code), start=1)
        for n, line in enumerate(text.splitlines(), start=1)
        if fragment in line
    ] or [
        (cell, text.count("\n", 0, start) + 1)
        for cell, text in enumerate(cells(code), start=1)
        for start, _ in find(text, fragment)
    ]
    assert len(hits) == 1, hits
    return hits[0]


def assert_sentence_in_words(message: str) -> None:
    """A failure message a learner can read: words, never a traceback or the check's code."""
    assert message.strip()
    assert "Traceback" not in message
    assert 'File "' not in message
    for fragment in CHECK_CODE:
        assert fragment not in message, fragment
    assert re.search(r"[A-Za-z]{3,} [A-Za-z]{2,}", message), message


def blank_template(source: Path) -> str:
    """The released lab: each solution region replaced by ``raise NotImplementedError()``, read as the grader reads it."""
    nb = read_notebook(source)
    for cell in nb.cells:
        if is_answer_cell(cell):
            cell.source = re.sub(
                r"^(\s*)### BEGIN SOLUTION\n.*?### END SOLUTION",
                r"\1# YOUR CODE HERE\n\1raise NotImplementedError()",
                cell.source,
                flags=re.DOTALL | re.MULTILINE,
            )
    return answer_code(nb)


def assert_fails_exactly(results: dict[str, CheckResult], expected: set[str], registry, messages=None) -> None:
    """Exactly ``expected`` failed, each scoring 0 with a readable message of its own; pinned messages match."""
    assert failed(results) == expected, {n: r.message for n, r in results.items() if not r.passed}
    for name in expected:
        result = results[name]
        assert result.score == 0
        assert not result.host_lost
        assert_sentence_in_words(result.message)
        assert result.message != registry[name].title
    for name, message in (messages or {}).items():
        assert results[name].message == message


def write_json(path: Path, data) -> Path:
    """Write ``data`` as JSON (a string is written as is, to test malformed files), creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@contextmanager
def state_folder() -> Iterator[Path]:
    """A fresh folder named by LAB_STATE_DIR for the duration, as Lab.run sets it; restored after."""
    before = os.environ.get("LAB_STATE_DIR")
    with tempfile.TemporaryDirectory(prefix="lab-state-") as folder:
        os.environ["LAB_STATE_DIR"] = folder
        try:
            yield Path(folder)
        finally:
            if before is None:
                os.environ.pop("LAB_STATE_DIR", None)
            else:
                os.environ["LAB_STATE_DIR"] = before


@contextmanager
def hosted(lab: str, code: str, *, reset: Callable[[], None] | None = None) -> Iterator[Any]:
    """A session with the learner host of ``lab`` running ``code``, as ``Lab.run`` opens one.

    The state folder is fresh and attached as the session's ``state_dir`` for every lab, and the engine's
    ``sandboxed`` as its ``sandboxed``, as the grader does, though only labs 3 and 4 read it. ``reset`` runs first: it gives a kit
    that keeps state per process (lab 3's alerts) what a grader subprocess starts with.
    """
    if reset is not None:
        reset()
    with state_folder() as folder:
        namespace, load_error = load_learner_code(lab, code)
        with connect(build_server(lab, namespace, load_error=load_error), timeout=10) as host:
            host.state_dir = folder
            host.sandboxed = sandboxed  # as the engine's hosts give it (grader.engine.grading.Hosts.start)
            yield host


def grade(
    lab: str, code: str, names: set[str] | None = None, *, reset: Callable[[], None] | None = None
) -> dict[str, CheckResult]:
    """The checks of ``lab`` (all, or ``names``), in order, over one session (``hosted``) with a host running ``code``."""
    checks = lab_checks(lab).checks
    with hosted(lab, code, reset=reset) as host:
        return {name: run_check(check, host) for name, check in checks.items() if names is None or name in names}


def graded_cell_points(source: Path) -> dict[str, float]:
    """grade_id -> points of every graded cell of a lab notebook."""
    return {
        cell.metadata.nbgrader["grade_id"]: cell.metadata.nbgrader["points"]
        for cell in read_notebook(source).cells
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade") is True
    }
