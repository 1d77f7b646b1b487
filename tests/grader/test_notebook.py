"""What the grader takes from a notebook: the answer cells' code only, markers dropped, in order."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.notebook import NotANotebook, answer_code, read_notebook
from servers.learner_host.cells import CELL_SEPARATOR

LAB_SOURCE = Path(__file__).resolve().parents[2] / "labs" / "source" / "lab1_error_results" / "lab1_error_results.ipynb"


def nbgrader(grade_id: str, *, solution: bool, grade: bool, points: float | None = None) -> dict:
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": not solution, "schema_version": 3}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def answer(grade_id: str, source: str):
    return new_code_cell(source, metadata=nbgrader(grade_id, solution=True, grade=False))


def write(tmp_path: Path, nb) -> Path:
    path = tmp_path / "lab.ipynb"
    nbformat.write(nb, str(path))
    return path


def test_answer_code_keeps_only_answer_cells_in_notebook_order(tmp_path: Path) -> None:
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Lab", metadata=nbgrader("intro", solution=False, grade=False)),
            new_code_cell(
                "from labkit import Lab\nlab = Lab('lab1_error_results')",
                metadata=nbgrader("setup", solution=False, grade=False),
            ),
            answer("answer_b", "def second():\n    return 2"),
            new_code_cell("print(second())"),
            new_code_cell("lab.check('second')", metadata=nbgrader("second", solution=False, grade=True, points=1)),
            new_markdown_cell("Explain.", metadata=nbgrader("prose_answer", solution=True, grade=False)),
            answer("answer_a", "def first():\n    return 1"),
        ]
    )

    code = answer_code(read_notebook(write(tmp_path, nb)))

    assert code == f"def second():\n    return 2\n{CELL_SEPARATOR}\ndef first():\n    return 1\n"


def test_answer_code_drops_the_marker_lines_but_keeps_the_indentation_inside() -> None:
    nb = new_notebook(
        cells=[
            answer(
                "answer",
                "def f(x):\n"
                '    """Double x."""\n'
                "    ### BEGIN SOLUTION\n"
                "    if x:\n"
                "        return 2 * x\n"
                "    return 0\n"
                "    ### END SOLUTION\n"
                "\n"
                "### BEGIN SOLUTION\n"
                "LIMIT = 3\n"
                "### END SOLUTION",
            )
        ]
    )

    code = answer_code(nb)

    assert code == 'def f(x):\n    """Double x."""\n    if x:\n        return 2 * x\n    return 0\n\nLIMIT = 3\n'
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102 - the test's own code
    assert namespace["f"](4) == 8


def test_cells_that_are_graded_or_not_answers_are_left_out(tmp_path: Path) -> None:
    nb = new_notebook(
        cells=[
            new_code_cell("plain = 1"),
            new_code_cell("locked = 1", metadata=nbgrader("locked", solution=False, grade=False)),
            new_code_cell("assert plain == 1", metadata=nbgrader("test", solution=False, grade=True, points=2)),
            new_code_cell("graded_answer = 1", metadata=nbgrader("manual", solution=True, grade=True, points=2)),
            answer("answer", "kept = 1"),
        ]
    )

    assert answer_code(read_notebook(write(tmp_path, nb))) == "kept = 1\n"


def test_the_lab_sources_answer_code_is_the_reference_solution_without_markers() -> None:
    code = answer_code(read_notebook(LAB_SOURCE))

    assert "### BEGIN SOLUTION" not in code and "### END SOLUTION" not in code
    assert "lab.check(" not in code
    assert "from labkit import Lab" not in code
    compile(code, "<answer cells>", "exec")
    for name in ("transient_error", "empty_result", "search_orders", "get_order", "refund_order", "decide", "recover"):
        assert f"\ndef {name}(" in code


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("notes.ipynb", "These are my notes, not a notebook.\n"),
        ("truncated.ipynb", '{"cells": [{"cell_type": "code", "source": "x = 1"'),
        ("not-a-notebook.ipynb", '{"hello": "world"}'),
    ],
)
def test_reading_a_file_that_is_not_a_notebook_says_so_with_its_path(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")

    with pytest.raises(NotANotebook) as caught:
        read_notebook(path)

    message = str(caught.value)
    assert message.startswith(f"{path} is not a readable Jupyter notebook (")
    assert "Traceback" not in message


def test_reading_a_missing_file_says_so_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "missing.ipynb"

    with pytest.raises(NotANotebook) as caught:
        read_notebook(path)

    assert str(path) in str(caught.value)
    assert isinstance(caught.value, ValueError)
