"""The grades as a Canvas gradebook import: a course released, a few samples autograded, then exported."""

from __future__ import annotations

import csv
import shutil

import pytest
from coursetests import copy_samples, new_course, run_cli
from nbgrader.api import Gradebook

from grader.canvas import export_canvas
from grader.course import COURSE_ID, graded_cells
from grader.notebook import read_notebook
from grader.pipeline import SAMPLE_SUBMISSIONS, Course, PipelineError

LAB1, LAB3 = "lab1_error_results", "lab3_tools_resources"
GRADED = {LAB1: ["solution", "blank", "retries_business_error"], LAB3: ["solution", "retries_business_error"]}
LATE = ("solution", LAB1, 2.5)  # (student, lab, late-submission penalty in points)
UNFINISHED = ("blank", LAB1)  # its autograde "did not finish": in the gradebook without scores
HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    root = tmp_path_factory.mktemp("canvas")
    course = new_course(root / "course")
    course.release(list(GRADED))
    subs = copy_samples(root / "subs", {LAB1: GRADED[LAB1], LAB3: ["solution"]})
    # The lab 3 notebook as released, handed in untouched: graded, and a real 0.
    shutil.copytree(SAMPLE_SUBMISSIONS / "blank" / LAB3, subs / "retries_business_error" / LAB3)
    # one that cannot be graded: not a notebook
    (subs / "blank" / LAB3).mkdir(parents=True)
    (subs / "blank" / LAB3 / f"{LAB3}.ipynb").write_text("not a notebook")
    outcomes = course.autograde(course.collect(subs))
    assert [(o.student, o.lab) for o in outcomes if not o.ok] == [("blank", LAB3)]
    with Gradebook(course.db_url, course_id=COURSE_ID) as gb:
        student, lab, penalty = LATE
        gb.find_submission_notebook(lab, lab, student).late_submission_penalty = penalty
        for grade in gb.find_submission_notebook(UNFINISHED[1], UNFINISHED[1], UNFINISHED[0]).grades:
            grade.auto_score = None
            grade.manual_score = None
        gb.update_or_create_student("solution", first_name="Ada", last_name="Lovelace")
        gb.update_or_create_student("retries_business_error", first_name="Jean", last_name='de la Fontaine, "Jr."')
        gb.update_or_create_student("roster_only", first_name="Grace", last_name="Hopper")  # imported, never submitted
        gb.db.commit()
    return course


@pytest.fixture(scope="module")
def exported(course, tmp_path_factory):
    path = export_canvas(course, tmp_path_factory.mktemp("out") / "canvas.csv")
    with path.open(newline="", encoding="utf-8") as fh:
        return path, list(csv.reader(fh))


def test_the_header_names_canvas_columns_then_one_column_per_released_lab(exported):
    _, rows = exported
    assert rows[0] == [*HEADER, LAB1, LAB3]


def test_the_second_row_gives_each_labs_points_possible(course, exported):
    _, rows = exported
    maxima = {row["lab"]: row["max_score"] for row in course.gradebook()}
    assert rows[1] == ["Points Possible", "", "", "", "", f"{maxima[LAB1]:g}", f"{maxima[LAB3]:g}"]
    # the points of the released notebooks' graded cells
    released = [read_notebook(course.root / "release" / lab / f"{lab}.ipynb") for lab in (LAB1, LAB3)]
    assert [float(v) for v in rows[1][5:]] == [
        sum(c.metadata.nbgrader["points"] for c in graded_cells(nb)) for nb in released
    ]


def test_each_student_is_named_last_first_and_matched_by_their_id(exported):
    _, rows = exported
    people = {row[3]: row[:5] for row in rows[2:]}
    assert people == {
        "blank": ["blank", "", "blank", "blank", ""],  # no names in the gradebook: the id
        "retries_business_error": [
            'de la Fontaine, "Jr.", Jean',
            "",
            "retries_business_error",
            "retries_business_error",
            "",
        ],
        "roster_only": ["Hopper, Grace", "", "roster_only", "roster_only", ""],
        "solution": ["Lovelace, Ada", "", "solution", "solution", ""],
    }


def test_a_name_with_a_comma_or_quotes_is_quoted_as_csv_requires(exported):
    path, _ = exported
    lines = path.read_text(encoding="utf-8").splitlines()
    assert any(line.startswith('"de la Fontaine, ""Jr."", Jean",,retries_business_error,') for line in lines)
    assert any(line.startswith('"Lovelace, Ada",,solution,solution,,') for line in lines)


def test_each_score_is_the_gradebooks_less_the_late_penalty_and_blank_when_there_is_none(course, exported, tmp_path):
    _, rows = exported
    canvas = {(row[3], lab): value for row in rows[2:] for lab, value in zip(rows[0][5:], row[5:], strict=True)}
    graded = {(r["student"], r["lab"]): r for r in course.gradebook()}
    blank = {pair for pair, value in canvas.items() if value == ""}
    assert blank == set(canvas) - set(graded)
    assert blank == {("blank", LAB1), ("blank", LAB3), ("roster_only", LAB1), ("roster_only", LAB3)}
    assert UNFINISHED in {(o.student, o.lab) for o in course.not_graded()}  # held without scores: blank, not a 0
    for pair, row in graded.items():
        if pair != LATE[:2]:
            assert float(canvas[pair]) == row["score"]
    assert canvas["retries_business_error", LAB3] == "0"  # graded, and nothing earned: a 0, not a blank

    with Gradebook(course.db_url, course_id=COURSE_ID) as gb:
        raw = gb.find_submission(LATE[1], LATE[0]).score
    assert raw > LATE[2]
    assert float(canvas[LATE[:2]]) == raw - LATE[2]

    # nbgrader's own CSV export gives the same scores after the penalty (and 0 where Canvas is left blank). It writes
    # names unquoted, so the row of a name with a comma in it is split at that comma: that student is left out here.
    nbgrader_csv = course.export(tmp_path / "grades.csv")
    with nbgrader_csv.open(newline="") as fh:
        theirs = {(r["student_id"], r["assignment"]): float(r["score"]) for r in csv.DictReader(fh)}
    comma = "retries_business_error"
    ours = {pair: float(value) for pair, value in canvas.items() if value and pair[0] != comma}
    assert LATE[:2] in ours
    assert ours == {pair: score for pair, score in theirs.items() if pair not in blank and pair[0] != comma}


def test_a_course_without_a_gradebook_is_refused_with_what_to_do(tmp_path):
    (tmp_path / "course" / "source").mkdir(parents=True)
    with pytest.raises(PipelineError, match="has no gradebook yet: release a lab and autograde submissions first"):
        export_canvas(Course(tmp_path / "course"), tmp_path / "canvas.csv")
    assert not (tmp_path / "canvas.csv").exists()


def test_a_folder_or_a_place_that_cannot_be_written_is_refused_with_what_to_do(course, tmp_path):
    with pytest.raises(
        PipelineError, match=r"is a folder\. Give the path of the Canvas CSV file to write, e\.g\. .*canvas\.csv"
    ):
        export_canvas(course, tmp_path)
    (tmp_path / "a_file").write_text("")
    with pytest.raises(
        PipelineError, match=r"Cannot write the Canvas grades to .*\. Give a file in a folder you can write to\."
    ):
        export_canvas(course, tmp_path / "a_file" / "canvas.csv")


def test_export_writes_the_canvas_file_beside_nbgraders_when_asked(course, exported, tmp_path, capfd):
    code, out, _ = run_cli(
        capfd, "export", "--course", course.root, "--to", tmp_path / "grades.csv", "--canvas", tmp_path / "canvas.csv"
    )
    assert code == 0
    assert out.splitlines() == [
        f"grades written to {tmp_path / 'grades.csv'}",
        f"Canvas grades written to {tmp_path / 'canvas.csv'}",
    ]
    assert (tmp_path / "canvas.csv").read_text(encoding="utf-8") == exported[0].read_text(encoding="utf-8")


def test_export_without_canvas_writes_nbgraders_file_only(course, tmp_path, capfd):
    code, out, _ = run_cli(capfd, "export", "--course", course.root, "--to", tmp_path / "grades.csv")
    assert code == 0 and "Canvas" not in out and sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv"]
