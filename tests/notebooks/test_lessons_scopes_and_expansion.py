"""Lessons 02 and 03 lead with the exam's rules, talk to a live server, and keep observations of one version apart."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSONS = {"02_server_scopes.ipynb": "quiz02_server_scopes", "03_variable_expansion.ipynb": "quiz03_variable_expansion"}
APPENDIX = "## Appendix: how Claude Code 2.1.332 behaves"


def cells(name: str) -> list:
    return nbformat.read(NOTEBOOKS / name, as_version=4).cells


def flat(text: str) -> str:
    return " ".join(text.split())


def heading_index(cells_: list, heading: str) -> int:
    (found,) = [i for i, c in enumerate(cells_) if c.cell_type == "markdown" and c.source.startswith(heading)]
    return found


@pytest.mark.parametrize("name", LESSONS)
def test_the_lesson_has_one_what_changed_box_in_its_main_line(name: str) -> None:
    all_cells = cells(name)
    boxes = [i for i, c in enumerate(all_cells) if "What changed since the exam guide" in c.source]
    assert len(boxes) == 1
    assert boxes[0] < heading_index(all_cells, "## Exam essentials")


@pytest.mark.parametrize("name", LESSONS)
def test_exam_essentials_points_to_the_graded_quiz_and_the_appendix_follows_it(name: str) -> None:
    all_cells = cells(name)
    essentials = heading_index(all_cells, "## Exam essentials")
    assert "Exam guide › Exam emphases" in flat(all_cells[essentials].source)
    assert f"assignment `{LESSONS[name]}`" in flat(all_cells[essentials].source)
    assert heading_index(all_cells, APPENDIX) > essentials


@pytest.mark.parametrize("name", LESSONS)
def test_no_question_shows_its_key_in_the_lesson(name: str) -> None:
    assert not any("answer(" in c.source or "def question(" in c.source for c in cells(name) if c.cell_type == "code")


@pytest.mark.parametrize("name", LESSONS)
def test_the_main_line_starts_a_configured_server_for_real(name: str) -> None:
    all_cells = cells(name)
    main = all_cells[: heading_index(all_cells, "## Exam essentials")]
    assert any("connect_params(" in c.source for c in main if c.cell_type == "code")


@pytest.mark.parametrize("name", LESSONS)
def test_observations_of_one_version_stay_out_of_the_main_line(name: str) -> None:
    all_cells = cells(name)
    main = all_cells[: heading_index(all_cells, "## Exam essentials")]
    for c in main:
        assert "observed on Claude Code" not in c.source and "conformance.md §" not in c.source, c.source[:80]


def test_lesson_03_gives_the_exams_answer_on_an_unset_variable() -> None:
    text = flat(" ".join(c.source for c in cells("03_variable_expansion.ipynb")))
    assert "**parsing fails if the variable is not set**" in text
    assert "**This is the answer the exam expects.**" in text


def test_lesson_02_gives_the_exams_answer_on_a_plugin_named_like_a_user_server() -> None:
    text = flat(" ".join(c.source for c in cells("02_server_scopes.ipynb")))
    assert "A plugin server named like your user-scope server loses to it" in text
    assert "skipDangerousModePermissionPrompt" in text and "Blocked by enterprise managed policy" in text
