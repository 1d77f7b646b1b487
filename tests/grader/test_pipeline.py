"""The whole grading pipeline on real nbgrader: release, autograde the sample matrix, feedback, export.

One course is released and the bundled samples autograded once per module (real
learner-host subprocesses, real nbgrader gradebook); the tests read what came out.
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from coursetests import new_course, run_cli
from nbgrader.api import Gradebook

from grader.course import COURSE_ID
from grader.labs import lab_checks
from grader.pipeline import SAMPLE_SUBMISSIONS, Course

LAB = "lab1_error_results"
MATRIX = json.loads((SAMPLE_SUBMISSIONS / "expected.json").read_text())
EXPECTED = MATRIX[LAB]
CHECK_ORDER = list(lab_checks(LAB).checks)
SAMPLES = [(lab, student) for lab, spec in sorted(MATRIX.items()) for student in sorted(spec["samples"])]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    course = new_course(root)
    course.release()
    pairs = course.collect(SAMPLE_SUBMISSIONS)
    outcomes = course.autograde(pairs)
    _, feedback_failures = course.feedback(pairs)
    assert not feedback_failures
    return course, pairs, outcomes


def cell_scores(course: Course, student: str, lab: str = LAB) -> dict[str, float]:
    with Gradebook(course.db_url, course_id=COURSE_ID) as gb:
        nb = gb.find_submission_notebook(lab, lab, student)
        return {grade.name: grade.score for grade in nb.grades}


def feedback_text(course: Course, student: str) -> str:
    page = (course.root / "feedback" / student / LAB / f"{LAB}.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_every_sample_of_every_lab_is_autograded(graded):
    _, pairs, outcomes = graded
    assert sorted((lab, student) for student, lab in pairs) == SAMPLES
    assert all(o.ok for o in outcomes), [o for o in outcomes if not o.ok]


@pytest.mark.parametrize("lab,student", SAMPLES)
def test_each_sample_scores_exactly_its_expected_checks(graded, lab, student):
    course, _, _ = graded
    expected = MATRIX[lab]["samples"][student]
    checks = set(lab_checks(lab).checks)
    scores = cell_scores(course, student, lab)
    assert set(scores) == checks
    failed = {name for name, score in scores.items() if score == 0}
    want = checks if expected["failed"] == "all" else set(expected["failed"])
    assert failed == want
    assert sum(scores.values()) == expected["score"]


@pytest.mark.parametrize("lab", sorted(MATRIX))
def test_solution_scores_full_marks_and_blank_release_scores_zero(graded, lab):
    course, _, _ = graded
    rows = {r["student"]: r for r in course.gradebook() if r["lab"] == lab}
    assert rows["solution"]["score"] == rows["solution"]["max_score"] == MATRIX[lab]["max_score"]
    assert rows["blank"]["score"] == 0


def test_a_fix_it_lab_is_released_with_its_starting_code_and_without_the_solution(graded):
    from grader.course import starting_code
    from grader.notebook import is_answer_cell

    course, _, _ = graded
    lab = "lab4_server_integration"
    source = nbformat.read(str(course.root / "source" / lab / f"{lab}.ipynb"), as_version=4)
    released = nbformat.read(str(course.root / "release" / lab / f"{lab}.ipynb"), as_version=4)
    (source_cell,) = [c for c in source.cells if is_answer_cell(c)]
    (released_cell,) = [c for c in released.cells if is_answer_cell(c)]
    assert released_cell.source == starting_code(source_cell) != source_cell.source
    assert "course" not in released_cell.metadata
    text = nbformat.writes(released)
    assert "def failure(" not in text and "SearchUnavailable as exc" not in text
    # The other labs still get nbgrader's stub.
    lab1 = nbformat.read(str(course.root / "release" / LAB / f"{LAB}.ipynb"), as_version=4)
    assert all("raise NotImplementedError()" in c.source for c in lab1.cells if is_answer_cell(c))


def test_feedback_lists_every_check_in_notebook_order_with_its_message(graded):
    course, _, _ = graded
    text = feedback_text(course, "retries_business_error")
    lines = re.findall(r"\[(PASS|FAIL)\] (\w+) \(", text)
    assert [name for _, name in lines] == CHECK_ORDER
    assert ("FAIL", "decide_business_stops") in lines
    assert "the action must be 'surface_and_stop'; yours is 'retry'" in text


def test_feedback_never_shows_the_hidden_checks_code(graded):
    course, _, _ = graded
    text = feedback_text(course, "blank")
    for fragment in ("expect_action(", "expect_error(", "reference_recover", "def desk_"):
        assert fragment not in text
    assert "is not written yet" in text


def test_the_feedback_command_writes_a_page_per_graded_submission(graded, capsys):
    course, _, _ = graded
    code, out, _ = run_cli(capsys, "feedback", "--course", str(course.root))
    assert code == 0
    pages = [Path(line.split(" ", 1)[1]) for line in out.splitlines() if line.startswith("feedback ")]
    assert sorted((p.parts[-2], p.parts[-3]) for p in pages) == SAMPLES
    assert all(p.exists() for p in pages)


def test_export_writes_nbgrader_csv_with_every_score(graded, tmp_path):
    course, _, _ = graded
    path = course.export(tmp_path / "grades.csv")
    rows = {
        (row["assignment"], row["student_id"]): row
        for row in csv.DictReader(path.read_text(encoding="utf-8").splitlines(keepends=True))
    }
    # nbgrader lists every student for every lab; a lab a student did not submit scores 0.
    assert set(SAMPLES) <= set(rows)
    assert all(float(row["score"]) == 0 for key, row in rows.items() if key not in SAMPLES)
    for lab, student in SAMPLES:
        assert float(rows[lab, student]["score"]) == MATRIX[lab]["samples"][student]["score"]
        assert float(rows[lab, student]["max_score"]) == MATRIX[lab]["max_score"]


def test_an_edited_graded_cell_is_restored_and_graded_by_its_check(tmp_path):
    course = new_course(tmp_path / "course")
    course.release([LAB])
    nb = nbformat.read(str(SAMPLE_SUBMISSIONS / "retries_business_error" / LAB / f"{LAB}.ipynb"), as_version=4)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "decide_business_stops":
            cell.source = "print('all good')  # the check was here"
    target = tmp_path / "subs" / "tamperer" / LAB
    target.mkdir(parents=True)
    nbformat.write(nb, str(target / f"{LAB}.ipynb"))
    [outcome] = course.autograde(course.collect(tmp_path / "subs"))
    assert outcome.ok
    assert cell_scores(course, "tamperer")["decide_business_stops"] == 0


# --- errors an instructor can cause -------------------------------------------------------


def test_autograde_before_release_says_to_release_first(tmp_path, capsys):
    new_course(tmp_path / "course")
    code, _, err = run_cli(capsys, "autograde", str(SAMPLE_SUBMISSIONS), "--course", str(tmp_path / "course"))
    assert code == 2
    assert "has not been released" in err and "python -m grader release lab1_error_results" in err
    assert "Traceback" not in err


def test_an_empty_submissions_folder_is_refused_with_the_layout_expected(tmp_path, capsys):
    new_course(tmp_path / "course")
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(capsys, "autograde", str(tmp_path / "empty"), "--course", str(tmp_path / "course"))
    assert code == 2
    assert "holds no submissions" in err and "<student>/<lab>/<lab>.ipynb" in err


def test_an_unknown_lab_is_named_with_the_known_ones(tmp_path, capsys):
    new_course(tmp_path / "course")
    code, _, err = run_cli(capsys, "release", "lab9_nothing", "--course", str(tmp_path / "course"))
    assert code == 2
    assert "lab9_nothing" in err and "lab1_error_results" in err
    (tmp_path / "subs" / "ann" / "lab9_nothing").mkdir(parents=True)
    (tmp_path / "subs" / "ann" / "lab9_nothing" / "x.ipynb").write_text("{}")
    code, _, err = run_cli(capsys, "autograde", str(tmp_path / "subs"), "--course", str(tmp_path / "course"))
    assert code == 2
    assert "no lab named 'lab9_nothing'" in err


def test_a_course_folder_without_source_is_refused(tmp_path, capsys):
    code, _, err = run_cli(capsys, "gradebook", "--course", str(tmp_path))
    assert code == 2
    assert "has no source/ folder" in err


def test_a_broken_submission_is_reported_and_loses_nothing_already_graded(tmp_path, capsys):
    course = new_course(tmp_path / "course")
    course.release([LAB])
    subs = tmp_path / "subs"
    shutil.copytree(SAMPLE_SUBMISSIONS / "solution" / LAB, subs / "good" / LAB)
    (subs / "broken" / LAB).mkdir(parents=True)
    (subs / "broken" / LAB / f"{LAB}.ipynb").write_text('{"cells": [ this is not json')
    code, out, err = run_cli(capsys, "autograde", str(subs), "--course", str(course.root))
    assert code == 1
    assert "not graded broken/lab1_error_results" in err and "not a readable Jupyter notebook" in err
    assert "Traceback" not in err
    full = f"{EXPECTED['max_score']:g}"
    assert re.search(rf"good\s+lab1_error_results\s+{full}/{full}", out)
    # The next batch, with the broken one fixed, keeps the earlier grade.
    shutil.rmtree(subs / "good")
    shutil.copytree(SAMPLE_SUBMISSIONS / "blank" / LAB, subs / "broken" / LAB, dirs_exist_ok=True)
    assert run_cli(capsys, "autograde", str(subs), "--course", str(course.root))[0] == 0
    rows = {r["student"]: r["score"] for r in course.gradebook()}
    assert rows == {"good": EXPECTED["max_score"], "broken": 0}
    assert course.not_graded() == []  # graded now, so no longer listed


def test_a_corrupt_gradebook_ends_in_a_sentence_saying_what_to_do(tmp_path, capsys):
    course = new_course(tmp_path / "course")
    course.db_path.write_bytes(b"this is not a database" * 100)
    code, _, err = run_cli(capsys, "gradebook", "--course", str(course.root))
    assert code == 2
    assert "cannot be read" in err and "autograde again" in err
