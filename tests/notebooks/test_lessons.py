"""Every lesson ends its main line with Exam essentials, holds exactly one "What changed since the exam guide" box
before it, points to its graded quiz, and shows no quiz key."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSONS = {
    "01_structured_tool_errors.ipynb": "quiz01_structured_tool_errors",
    "02_server_scopes.ipynb": "quiz02_server_scopes",
    "03_variable_expansion.ipynb": "quiz03_variable_expansion",
    "04_tools_vs_resources.ipynb": "quiz04_tools_vs_resources",
    "05_server_integration.ipynb": "quiz05_server_integration",
    "05b_remote_servers.ipynb": "quiz05b_remote_servers",
    "05c_search_and_checklist.ipynb": None,  # its exercise is the pre-launch checklist; the mock exam covers the rest
}


def cells(name: str) -> list:
    return nbformat.read(NOTEBOOKS / name, as_version=4).cells


def test_every_lesson_in_the_folder_is_listed_here() -> None:
    found = {p.name for p in NOTEBOOKS.glob("*.ipynb")} - {"06_mock_exam.ipynb"}
    assert found == set(LESSONS)


@pytest.mark.parametrize("name", LESSONS)
def test_one_what_changed_box_then_exam_essentials(name: str) -> None:
    all_cells = cells(name)
    boxes = [
        i
        for i, c in enumerate(all_cells)
        if c.cell_type == "markdown" and "What changed since the exam guide" in c.source
    ]
    essentials = [
        i for i, c in enumerate(all_cells) if c.cell_type == "markdown" and re.match(r"#+ .*Exam essentials", c.source)
    ]
    assert len(boxes) == 1, boxes
    assert len(essentials) == 1, essentials
    assert boxes[0] < essentials[0]


@pytest.mark.parametrize("name", [n for n, q in LESSONS.items() if q])
def test_the_lesson_points_to_its_graded_quiz(name: str) -> None:
    assert any(LESSONS[name] in c.source for c in cells(name) if c.cell_type == "markdown")


@pytest.mark.parametrize("name", LESSONS)
def test_no_quiz_key_is_shown(name: str) -> None:
    for cell in cells(name):
        if cell.cell_type == "code":
            assert "def question(" not in cell.source and not re.search(r"\banswer\(\s*\d", cell.source), cell.source[
                :200
            ]
