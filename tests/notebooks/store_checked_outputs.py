"""Run lessons and store the outputs of their checked cells, so nbval compares those outputs on every run.

A cell whose first line is ``# NBVAL_CHECK_OUTPUT`` states a fact the lesson teaches (a resolver table, a
decision, a count, an error shape): it keeps the output it printed here. Every other code cell is saved without
outputs, as the lessons are committed. Run it from anywhere after changing what a checked cell prints::

    .venv/bin/python tests/notebooks/store_checked_outputs.py                      # every lesson
    .venv/bin/python tests/notebooks/store_checked_outputs.py notebooks/02_server_scopes.ipynb

Each notebook runs in its own folder, as nbval runs it. The file is read again just before it is written, so
edits made to its source while it ran are kept; only the outputs of the cells it ran change.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

MARKER = "# NBVAL_CHECK_OUTPUT"
ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("0*.ipynb") if p.name != "06_mock_exam.ipynb")
WIDGET = "application/vnd.jupyter.widget-view+json"


def is_checked(cell) -> bool:
    """Whether nbval compares this cell's output: a code cell whose first line is the marker."""
    return cell.cell_type == "code" and cell.source.lstrip().startswith(MARKER)


def executed(path: Path, timeout: int) -> nbformat.NotebookNode:
    """The notebook after running every cell in a fresh kernel, in the notebook's folder."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    return notebook


def kept_outputs(outputs: list) -> list:
    """A checked cell's outputs as committed: no widget views (their model ids are new on every run)."""
    return [output for output in outputs if WIDGET not in output.get("data", {})]


def store(path: Path, timeout: int = 600) -> int:
    """Run one notebook and save it with outputs on its checked cells only; the number of checked cells."""
    ran = {cell.id: cell for cell in executed(path, timeout).cells if cell.cell_type == "code"}
    notebook = nbformat.read(path, as_version=4)  # read again: keep any source edited while the notebook ran
    checked = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        cell.execution_count = None
        cell.outputs = []
        if is_checked(cell):
            if cell.id not in ran or ran[cell.id].source != cell.source:
                raise SystemExit(f"{path.name}: cell {cell.id} changed while the notebook ran; run this again")
            cell.outputs = kept_outputs(ran[cell.id].outputs)
            cell.execution_count = ran[cell.id].execution_count  # nbval skips a cell that never ran
            checked += 1
    nbformat.write(notebook, path)
    return checked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="example: store_checked_outputs.py notebooks/02_server_scopes.ipynb",
    )
    parser.add_argument("notebooks", nargs="*", type=Path, help="lessons to run (default: every lesson)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds one cell may run (default 600)")
    args = parser.parse_args(argv)
    for path in args.notebooks or LESSONS:
        path = path.resolve()
        if not path.is_file():
            print(f"{path}: no such notebook", file=sys.stderr)
            return 2
        try:
            checked = store(path, args.timeout)
        except CellExecutionError as exc:
            print(f"{path.name}: a cell failed, nothing stored:\n{str(exc)[-2000:]}", file=sys.stderr)
            return 1
        print(f"{path.name}: outputs stored for {checked} checked cell(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
