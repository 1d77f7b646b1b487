"""Quizzes through the real engine: nbgrader's release, autograde, feedback, export and the cohort report.

The sample quiz (``quiztests``) stands in for quiz 1 where the test is about the engine; every registered quiz
whose questions exist, and the mock exam, is graded through the same path: the key scores 100 %, each single
wrong answer costs exactly that question's points, and a blank submission scores 0.
"""

from __future__ import annotations

import copy
import csv
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from coursetests import page_text, run_cli
from quiztests import EXPLAINED, answered

from grader.course import (
    ClearSolutionsToStartingCode,
    TrustedChecks,
    graded_cells,
    quiz_cell_score,
)
from grader.pipeline import DEFAULT_COURSE, Course
from grader.quizzes import QUIZ_MODULES, available, quiz
from grader.quizzes.build import notebook_text, source_path
from grader.quizzes.model import Quiz

NAME = "quiz01_structured_tool_errors"  # the sample quiz takes its place in these tests
NBGRADER_KEYS = {"cell_type", "checksum", "grade", "grade_id", "locked", "points", "schema_version", "solution"}


@pytest.fixture
def sample(monkeypatch) -> Quiz:
    monkeypatch.setitem(QUIZ_MODULES, NAME, "quiztests")
    return quiz(NAME)


def quiz_course(root: Path, q: Quiz) -> Course:
    """A course holding only this quiz, its notebook freshly built, nothing released yet."""
    (root / "source" / q.name).mkdir(parents=True)
    (root / "source" / q.name / f"{q.name}.ipynb").write_text(notebook_text(q), encoding="utf-8")
    shutil.copy2(DEFAULT_COURSE / "nbgrader_config.py", root / "nbgrader_config.py")
    return Course(root)


def released(course: Course, name: str) -> nbformat.NotebookNode:
    return nbformat.read(course.root / "release" / name / f"{name}.ipynb", as_version=4)


def handed_out(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The source notebook as the release hands it out (the release's solution clearing, with starting code)."""
    nb = copy.deepcopy(nb)
    step = ClearSolutionsToStartingCode()
    for index, cell in enumerate(nb.cells):
        nb.cells[index], _ = step.preprocess_cell(cell, {"language": "python"}, index)
    return nb


def hand_in(folder: Path, name: str, notebooks: dict[str, nbformat.NotebookNode]) -> Path:
    for student, nb in notebooks.items():
        (folder / student / name).mkdir(parents=True)
        nbformat.write(nb, folder / student / name / f"{name}.ipynb")
    return folder


def wrong(letter: str) -> str:
    return "ABCD"[("ABCD".index(letter) + 1) % 4]


def graded_scores(
    course: Course, name: str, notebooks: dict[str, nbformat.NotebookNode], tmp: Path
) -> dict[str, float]:
    pairs = course.collect(hand_in(tmp, name, notebooks))
    outcomes = course.autograde(pairs, jobs=1)
    assert all(o.ok for o in outcomes), [o.message for o in outcomes if not o.ok]
    return {row["student"]: row["score"] for row in course.gradebook() if row["lab"] == name}


def submissions(nb: nbformat.NotebookNode, q: Quiz) -> dict[str, nbformat.NotebookNode]:
    """The key (in capitals and in small letters), a blank notebook, and for each question the key with that one
    question answered wrong."""
    key = {x.id: x.answer for x in q.questions}
    notebooks = {
        "key": answered(nb, key),
        "key-lower": answered(nb, {k: v.lower() for k, v in key.items()}),
        "blank": nb,
    }
    return notebooks | {f"wrong-{x.id}": answered(nb, {**key, x.id: wrong(x.answer)}) for x in q.questions}


def assert_key_blank_and_each_wrong(q: Quiz, scores: dict[str, float]) -> None:
    assert scores["key"] == scores["key-lower"] == q.max_score > 0
    assert scores["blank"] == 0
    for x in q.questions:
        assert scores[f"wrong-{x.id}"] == q.max_score - x.points, x.id


def engine_score(nb: nbformat.NotebookNode, name: str) -> float:
    """A notebook's score through the engine's autograde steps (TrustedChecks writes each verdict, and the cells
    are scored as SaveCheckGrades records them), without nbgrader's gradebook around them."""
    nb = copy.deepcopy(nb)
    TrustedChecks().preprocess(nb, {"nbgrader": {"assignment": name, "student": "s"}})
    return sum(quiz_cell_score(cell) for cell in graded_cells(nb))


def test_the_sample_quiz_key_scores_all_a_wrong_answer_its_points_a_blank_0(sample: Quiz, tmp_path: Path) -> None:
    """Through nbgrader: release, then autograde every submission into the gradebook. No learner host runs and no
    check result is stored: a quiz is graded as nbgrader records it."""
    course = quiz_course(tmp_path / "course", sample)
    course.release([NAME])
    assert_key_blank_and_each_wrong(
        sample, graded_scores(course, NAME, submissions(released(course, NAME), sample), tmp_path / "in")
    )
    assert not (course.root / ".grading" / "results" / NAME).exists()
    assert course.not_graded() == []


@pytest.mark.parametrize("name", available())
def test_each_quiz_key_scores_all_a_wrong_answer_its_points_a_blank_0(name: str) -> None:
    """Every registered quiz and the mock exam, on its committed notebook as the release hands it out."""
    q = quiz(name)
    assert 0 < len(q.questions) and all(x.points > 0 for x in q.questions)
    nb = handed_out(nbformat.read(source_path(name), as_version=4))
    assert_key_blank_and_each_wrong(
        q, {student: engine_score(sub, name) for student, sub in submissions(nb, q).items()}
    )


@pytest.mark.skipif("mock_exam" not in available(), reason="the mock exam's questions are not written yet")
def test_the_mock_exam_is_released_and_graded_from_the_course_folder(tmp_path: Path) -> None:
    """The mock exam's notebook in the course is a link to the lesson notebook: nbgrader releases and grades it."""
    q = quiz("mock_exam")
    root = tmp_path / "course"
    (root / "source").mkdir(parents=True)
    shutil.copytree(DEFAULT_COURSE / "source" / "mock_exam", root / "source" / "mock_exam", symlinks=True)
    link = root / "source" / "mock_exam" / "mock_exam.ipynb"
    target = (DEFAULT_COURSE / "source" / "mock_exam" / "mock_exam.ipynb").readlink()
    link.unlink()
    link.symlink_to(DEFAULT_COURSE.parent / "notebooks" / target.name)
    shutil.copy2(DEFAULT_COURSE / "nbgrader_config.py", root / "nbgrader_config.py")
    course = Course(root)
    course.release(["mock_exam"])
    nb = released(course, "mock_exam")
    key = {x.id: x.answer for x in q.questions}
    scores = graded_scores(course, "mock_exam", {"key": answered(nb, key), "blank": nb}, tmp_path / "in")
    assert scores == {"key": q.max_score, "blank": 0}


def test_release_autograde_feedback_export_report(sample: Quiz, tmp_path: Path, capfd) -> None:
    """The instructor's commands, as the README gives them, on a quiz: the released notebook has no key, the
    feedback explains every answer and gives the points per theme, the export and the report have them."""
    course = quiz_course(tmp_path / "course", sample)
    code, out, _ = run_cli(capfd, "release", NAME, "--course", course.root)
    assert code == 0 and f"released {NAME}" in out

    nb = released(course, NAME)
    text = (course.root / "release" / NAME / f"{NAME}.ipynb").read_text(encoding="utf-8")
    assert EXPLAINED not in text and "Claude Code keeps" not in text and "starting_code" not in text
    assert set(nb.metadata) <= {"kernelspec", "language_info"}
    for cell in nb.cells:
        assert set(cell.metadata) <= {"deletable", "editable", "nbgrader"}, cell.metadata
        assert set(cell.metadata.get("nbgrader", {})) <= NBGRADER_KEYS, cell.metadata
    answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert [c.source for c in answers] == [f'answer("{x.id}", "")' for x in sample.questions]

    key = {x.id: x.answer for x in sample.questions}
    hand_in(tmp_path / "in", NAME, {"ann": answered(nb, {**key, "q02": wrong(key["q02"])}), "bob": nb})
    code, out, err = run_cli(capfd, "autograde", tmp_path / "in", "--course", course.root)
    assert code == 0, err
    assert "autograded 2 of 2" in out
    code, out, err = run_cli(capfd, "feedback", "--course", course.root)
    assert code == 0, err

    page = page_text(course.root / "feedback" / "ann" / NAME / f"{NAME}.html")
    for number, x in enumerate(sample.questions, start=1):
        assert " ".join(x.explanation.split()).replace("*", "") in " ".join(page.split()), number
    assert f"Question 2: wrong (0 of 2 points). Your answer: {wrong(key['q02'])}. The answer: {key['q02']}." in page
    assert "Question 1: right (1 of 1 point)." in page
    assert "Claude Code 2.1.332 does this instead: Claude Code keeps the text and warns." in page
    assert "Your score: 3 of 5 points." in page
    cells = " ".join(
        re.sub(r"<[^>]+>", " ", (course.root / "feedback" / "ann" / NAME / f"{NAME}.html").read_text()).split()
    )
    assert "Structured tool errors 2 of 2 100 %" in cells and "Server scopes 0 of 2 0 %" in cells
    blank = " ".join(page_text(course.root / "feedback" / "bob" / NAME / f"{NAME}.html").split())
    assert (
        "Question 1: not answered (0 of 1 point). Your answer: none." in blank and "Your score: 0 of 5 points." in blank
    )

    code, out, err = run_cli(capfd, "export", "--to", tmp_path / "grades.csv", "--course", course.root)
    assert code == 0, err
    rows = {
        r["student_id"]: r
        for r in csv.DictReader((tmp_path / "grades.csv").read_text(encoding="utf-8").splitlines(keepends=True))
    }
    assert float(rows["ann"]["raw_score"]) == 3 and float(rows["bob"]["raw_score"]) == 0
    assert rows["ann"]["assignment"] == NAME and float(rows["ann"]["max_score"]) == 5

    code, out, err = run_cli(capfd, "report", "--out", tmp_path / "report.md", "--course", course.root)
    assert code == 0, err
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| Structured tool errors | 2 | 2 | 50 % | question 1 (50 % right), question 4 (50 % right) |" in report
    assert "| Server scopes | 1 | 2 | 0 % | question 2 (0 % right) |" in report
    assert "misses question 2 (Server scopes): Scenario 2" in report
    assert (
        "Answers that look alike" in report
        and "identical" not in report.split("Answers that look alike")[1].split("##")[0]
    )


def test_hostile_answer_cells_are_read_never_run(sample: Quiz, tmp_path: Path) -> None:
    """A cell that would write a file, a huge one, a deeply nested one, a syntax error, a forged copy of a graded
    cell, a forged grade id, a deleted answer cell: each question is scored from what its own cell says, nothing
    runs, and nothing stops the grading."""
    course = quiz_course(tmp_path / "course", sample)
    course.release([NAME])
    nb = released(course, NAME)
    key = {x.id: x.answer for x in sample.questions}
    target = tmp_path / "pwned"

    def hostile(student_cells) -> nbformat.NotebookNode:
        copy_ = answered(nb, key)
        student_cells(copy_)
        return copy_

    def cell(nb_, grade_id):
        return next(c for c in nb_.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)

    def writes(nb_):
        cell(nb_, "q01").source = f"open({str(target)!r}, 'w').write('ran')\nanswer(\"q01\", \"{key['q01']}\")"

    def huge(nb_):
        cell(nb_, "q01").source = f'answer("q01", "{key["q01"]}")\n' + "#" * 1_000_000

    def nested(nb_):
        cell(nb_, "q01").source = 'answer("q01", ' + "(" * 4000 + f'"{key["q01"]}"' + ")" * 4000 + ")"

    def broken(nb_):
        cell(nb_, "q01").source = 'answer("q01", "B"'

    def forged_copy(nb_):  # a second q02 cell with the key, after a wrong first one
        first = cell(nb_, "q02")
        first.source = f'answer("q02", "{wrong(key["q02"])}")'
        forged = copy.deepcopy(first)
        forged.id = "forged"
        forged.source = f'answer("q02", "{key["q02"]}")'
        nb_.cells.insert(nb_.cells.index(first) + 1, forged)

    def forged_id(nb_):  # an unknown grade id, and a cell answering another question than its own
        extra = copy.deepcopy(cell(nb_, "q01"))
        extra.id = "extra"
        extra.metadata.nbgrader["grade_id"] = "q99"
        nb_.cells.append(extra)
        cell(nb_, "q03").source = f'answer("q04", "{key["q04"]}")'

    def deleted(nb_):
        nb_.cells.remove(cell(nb_, "q03"))

    cases = {
        "writes": writes,
        "huge": huge,
        "nested": nested,
        "broken": broken,
        "forged-copy": forged_copy,
        "forged-id": forged_id,
        "deleted": deleted,
    }
    scores = graded_scores(course, NAME, {s: hostile(f) for s, f in cases.items()}, tmp_path / "in")
    assert not target.exists()
    assert scores == {"writes": 5, "huge": 4, "nested": 4, "broken": 4, "forged-copy": 3, "forged-id": 4, "deleted": 4}
    _, failures = course.feedback([(s, NAME) for s in cases])
    assert not failures
    said = {s: " ".join(page_text(course.root / "feedback" / s / NAME / f"{NAME}.html").split()) for s in cases}
    assert "Question 1: not answered (0 of 1 point). Your answer: none (the cell is longer than" in said["huge"]
    assert "Question 1: not answered (0 of 1 point). Your answer: none (the cell is not valid Python" in said["nested"]
    assert "Question 3: not answered" in said["deleted"] and "Question 3: not answered" in said["forged-id"]
    assert all("Traceback (most recent call last)" not in page for page in said.values())
