"""What the grader takes from a lab notebook: the code of its answer cells, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


class NotANotebook(ValueError):
    """The file cannot be read as a Jupyter notebook."""


def read_notebook(path: Path) -> nbformat.NotebookNode:
    try:
        return nbformat.read(str(path), as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises JSON, validation and OS errors alike
        raise NotANotebook(f"{path} is not a readable Jupyter notebook ({type(exc).__name__}: {exc}).") from None


def is_answer_cell(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and meta.get("solution") is True and meta.get("grade") is not True


STARTING_CODE = "starting_code"  # key under an answer cell's metadata["course"]


def starting_code(cell) -> str | None:
    """The code an answer cell hands out instead of a stub (lab 4: the flawed server to fix), if any."""
    value = cell.get("metadata", {}).get("course", {}).get(STARTING_CODE)
    if value is None:
        return None
    return value if isinstance(value, str) else "".join(value)


def answer_code(nb: nbformat.NotebookNode) -> str:
    """The answer cells' code in notebook order, with solution markers dropped (for source notebooks).

    Cells are joined by a separator line, so the learner host can run each cell on its own.
    """
    from servers.learner_host.cells import CELL_SEPARATOR

    parts = []
    for cell in nb.cells:
        if is_answer_cell(cell):
            lines = [line for line in cell.source.splitlines() if not MARKER.match(line)]
            parts.append("\n".join(lines))
    return f"\n{CELL_SEPARATOR}\n".join(parts) + "\n"
