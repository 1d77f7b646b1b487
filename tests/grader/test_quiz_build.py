"""The quizzes' notebooks: generated from their questions, the same bytes every time, no key in them, and the
committed ones equal to a fresh build; the registry; the release refusing a notebook its questions do not make."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from quiztests import sample_quiz

from grader.pipeline import ASSIGNMENTS, DEFAULT_COURSE, Course, PipelineError
from grader.quizzes import QUIZ_MODULES, UnknownQuiz, available, quiz
from grader.quizzes.build import (
    MOCK_EXAM_NOTEBOOK,
    build_notebook,
    notebook_path,
    notebook_text,
    source_path,
)
from grader.quizzes.model import THEMES

REPO = Path(__file__).resolve().parents[2]
NAME = "quiz01_structured_tool_errors"


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", available())
def test_the_committed_notebook_is_a_fresh_build(name: str) -> None:
    assert notebook_path(name).read_text(encoding="utf-8") == notebook_text(quiz(name)), (
        f"run python -m grader.quizzes.build {name}"
    )


@pytest.mark.parametrize("name", available())
def test_no_key_and_no_explanation_in_the_notebook(name: str) -> None:
    q = quiz(name)
    text = notebook_path(name).read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    body = flat(text)
    for x in q.questions:
        assert flat(x.explanation)[:60] not in body, x.id
        if x.claude_code.strip():
            assert flat(x.claude_code)[:60] not in body, x.id
    assert set(nb.metadata) == {"kernelspec", "language_info"}
    for cell in nb.cells:
        assert set(cell.metadata) <= {"deletable", "editable", "nbgrader", "course"}
        if "course" in cell.metadata:
            assert cell.metadata.course == {"starting_code": cell.source}
            assert cell.source == f'answer("{cell.id}", "")'


@pytest.mark.skipif("mock_exam" not in available(), reason="the mock exam's questions are not written yet")
def test_the_mock_exam_is_the_lesson_notebook_linked_into_the_course() -> None:
    link = source_path("mock_exam")
    assert link.is_symlink() and os.readlink(link) == "../../../notebooks/06_mock_exam.ipynb"
    assert link.resolve() == MOCK_EXAM_NOTEBOOK.resolve() == notebook_path("mock_exam").resolve()


def test_the_notebook_shows_questions_and_options_and_builds_the_same_every_time() -> None:
    q = sample_quiz(NAME)
    assert notebook_text(q) == notebook_text(sample_quiz(NAME))
    nb = build_notebook(q)
    ids = [cell.id for cell in nb.cells]
    assert len(set(ids)) == len(ids)
    assert ids == [
        "intro",
        "setup",
        "q01-text",
        "q01",
        "q02-text",
        "q02",
        "q03-text",
        "q03",
        "q04-text",
        "q04",
        "summary",
    ]
    assert nb.cells[1].source == "from labkit.quiz import answer"
    assert nb.cells[4].source.startswith("**Question 2** · Server scopes · 2 points\n\nScenario 2:")
    assert "- **A.** Option A2\n- **B.** Option B2\n- **C.** Option C2\n- **D.** Option D2" in nb.cells[4].source
    assert nb.cells[5].metadata.nbgrader == {
        "grade": True,
        "grade_id": "q02",
        "locked": False,
        "points": 2.0,
        "schema_version": 3,
        "solution": True,
    }
    assert (
        "| Structured tool errors | 2 | 2 |" in nb.cells[0].source
        and "4 questions, 5 points in all" in nb.cells[0].source
    )
    assert all(
        c.metadata.nbgrader["locked"]
        for c in nb.cells
        if c.id in ("intro", "setup", "summary") or c.id.endswith("-text")
    )
    text = notebook_text(q)
    assert "Because the exam guide says so" not in text and "keeps the text and warns" not in text


def test_the_registry_knows_every_quiz_and_the_mock_exam(monkeypatch) -> None:
    assert list(QUIZ_MODULES) == [
        "quiz01_structured_tool_errors",
        "quiz02_server_scopes",
        "quiz03_variable_expansion",
        "quiz04_tools_vs_resources",
        "quiz05_server_integration",
        "quiz05b_remote_servers",
        "mock_exam",
    ]
    assert ASSIGNMENTS[-len(QUIZ_MODULES) :] == list(QUIZ_MODULES)
    with pytest.raises(UnknownQuiz, match="There is no quiz named 'quiz9'"):
        quiz("quiz9")
    monkeypatch.setitem(QUIZ_MODULES, NAME, "grader.quizzes.not_written_yet")
    assert NAME not in available()
    with pytest.raises(UnknownQuiz, match="has no questions yet"):
        quiz(NAME)


def test_the_build_command_names_an_unknown_quiz_without_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "grader.quizzes.build", "quiz9"], check=False, cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: There is no quiz named 'quiz9'.")


def test_the_release_writes_again_a_notebook_its_questions_no_longer_make(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setitem(QUIZ_MODULES, NAME, "quiztests")
    (tmp_path / "source" / NAME).mkdir(parents=True)
    shutil.copy2(DEFAULT_COURSE / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    nb = build_notebook(quiz(NAME))
    nb.cells[2].source += "\n- **E.** A fifth option"
    nbformat.write(nb, tmp_path / "source" / NAME / f"{NAME}.ipynb")
    course = Course(tmp_path)
    assert NAME in course.labs()
    course.release([NAME])
    assert (tmp_path / "source" / NAME / f"{NAME}.ipynb").read_text(encoding="utf-8") == notebook_text(quiz(NAME))
    assert "A fifth option" not in (tmp_path / "release" / NAME / f"{NAME}.ipynb").read_text(encoding="utf-8")


def test_the_release_of_a_quiz_without_questions_says_so(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setitem(QUIZ_MODULES, NAME, "grader.quizzes.not_written_yet")
    (tmp_path / "source" / NAME).mkdir(parents=True)
    shutil.copy2(DEFAULT_COURSE / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    with pytest.raises(PipelineError, match=f"The quiz '{NAME}' has no questions yet"):
        Course(tmp_path).release([NAME])
    assert not (tmp_path / "release").exists()


def test_every_registered_quiz_has_its_questions_and_the_mock_exam_covers_every_theme() -> None:
    assert available() == list(QUIZ_MODULES)
    mock = quiz("mock_exam")
    assert len(mock.questions) >= 30
    assert {x.theme for x in mock.questions} == set(THEMES)
