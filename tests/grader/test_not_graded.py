"""What nbgrader refuses, or the engine cannot read, is "not graded: why", never a score of 0: in what
``autograde`` says, in the gradebook and ``gradebook`` command, in feedback and in the cohort report, and in
the list the course keeps (``.grading/not_graded.json``), which each run keeps in step.

One batch, autograded once through ``python -m grader autograde`` (real nbgrader, real learner hosts):
good submissions beside a notebook nbgrader refuses for an inconsistent checksum, one with a malformed
grade_id, one that is not JSON, an empty file, cells that are not cells, a notebook of zero cells (its
graded cells are put back, so it is graded: every check fails), a lab the course does not have, a lab
that was not released, a folder whose notebook has another name and a folder with no notebook.
"""

from __future__ import annotations

import copy
import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from coursetests import MATRIX, copy_samples, new_course, page_text, run_cli
from nbgrader.api import Gradebook, MissingEntry

from grader.course import COURSE_ID, graded_cells
from grader.labs import lab_checks
from grader.notebook import is_answer_cell
from grader.pipeline import REPO, SAMPLE_SUBMISSIONS, Course

LAB, LAB3 = "lab1_error_results", "lab3_tools_resources"
FULL, RETRIES = MATRIX[LAB]["max_score"], MATRIX[LAB]["samples"]["retries_business_error"]["score"]
GRADED = {"solution": FULL, "retries_business_error": RETRIES, "zero_cells": 0}
assert GRADED["solution"] == MATRIX[LAB]["samples"]["solution"]["score"]
assert GRADED["retries_business_error"] == MATRIX[LAB]["samples"]["retries_business_error"]["score"]
# (student, lab) -> what the reason must say
NOT_GRADED = {
    (
        "checksum",
        LAB,
    ): "nbgrader could not grade it (the locked cell 'intro' of the release was changed in a way it cannot undo",
    (
        "bad_grade_id",
        LAB,
    ): "nbgrader could not grade it (its nbgrader metadata is damaged: a cell carries the grade_id 'bad id!'",
    ("not_json", LAB): f"{LAB}.ipynb is not a readable Jupyter notebook (NotJSONError",
    ("empty", LAB): f"{LAB}.ipynb is an empty file, not a readable Jupyter notebook.",
    ("odd_cells", LAB): "its cells cannot be read as a lab notebook's (AttributeError",
    ("ann", "lab9_nothing"): "there is no lab named 'lab9_nothing': rename the folder ann/lab9_nothing to one of: ",
    ("cam", LAB3): f"{LAB3} has not been released in this course, so there is nothing to grade it against: "
    f"run `python -m grader release {LAB3}`",
    ("dee", LAB): f"its folder holds no {LAB}.ipynb (was it given another name?)",
    ("eli", LAB): f"its folder holds no notebook: put the student's {LAB}.ipynb in eli/{LAB}",
}
WHAT_TO_DO = re.compile(r"(then )?autograde (it |them )?again\.$", re.IGNORECASE)


def solution() -> nbformat.NotebookNode:
    return copy.deepcopy(nbformat.read(str(SAMPLE_SUBMISSIONS / "solution" / LAB / f"{LAB}.ipynb"), as_version=4))


def put(folder: Path, student: str, lab: str, content: nbformat.NotebookNode | bytes, name: str | None = None) -> None:
    (folder / student / lab).mkdir(parents=True)
    path = folder / student / lab / (name or f"{lab}.ipynb")
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())


def inconsistent_checksum() -> nbformat.NotebookNode:
    # A locked cell marked as an answer cell: OverwriteCells puts its text back, but its checksum still differs.
    nb = solution()
    [intro] = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "intro"]
    intro.metadata.nbgrader["solution"] = True
    return nb


def malformed_grade_id() -> nbformat.NotebookNode:
    nb = solution()
    [cell] = [c for c in nb.cells if is_answer_cell(c) and c.metadata.nbgrader["grade_id"] == "answer_decide"]
    cell.metadata.nbgrader["grade_id"] = "bad id!"
    return nb


def cells_that_are_not_cells() -> bytes:
    data = json.loads(json.dumps(solution()))
    [cell] = [c for c in data["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "answer_decide"]
    cell["source"] = 5
    return json.dumps(data).encode()


def refused_batch(folder: Path) -> Path:
    subs = copy_samples(folder, {LAB: ["solution", "retries_business_error"], LAB3: ["solution"]})
    shutil.move(subs / "solution" / LAB3, subs / "cam" / LAB3)
    put(subs, "checksum", LAB, inconsistent_checksum())
    put(subs, "bad_grade_id", LAB, malformed_grade_id())
    put(subs, "not_json", LAB, b'{"cells": [ this is not json')
    put(subs, "empty", LAB, b"")
    put(subs, "odd_cells", LAB, cells_that_are_not_cells())
    put(subs, "zero_cells", LAB, nbformat.v4.new_notebook())
    put(subs, "ann", "lab9_nothing", b"{}")
    put(subs, "dee", LAB, solution(), name="my_lab.ipynb")
    (subs / "eli" / LAB).mkdir(parents=True)
    return subs


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("not-graded")
    course = new_course(root / "course")
    course.release([LAB])
    subs = refused_batch(root / "subs")
    run = subprocess.run(
        [sys.executable, "-m", "grader", "autograde", str(subs), "--course", str(course.root), "--jobs", "2"],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    return course, subs, run


def test_the_good_submissions_are_graded_with_their_expected_scores(batch) -> None:
    course, _, run = batch
    assert "Traceback" not in run.stdout + run.stderr
    assert {r["student"]: r["score"] for r in course.gradebook()} == GRADED


def test_a_notebook_of_zero_cells_is_graded_each_check_failing_in_a_sentence(batch) -> None:
    course, _, _ = batch
    nb = nbformat.read(str(course.root / "autograded" / "zero_cells" / LAB / f"{LAB}.ipynb"), as_version=4)
    verdicts = {c.metadata.nbgrader["grade_id"]: c.outputs[0]["text"] for c in graded_cells(nb)}
    assert list(verdicts) == list(lab_checks(LAB).checks)
    for verdict in verdicts.values():
        assert verdict.startswith("[FAIL] ") and verdict.rstrip().endswith(".") and "Traceback" not in verdict


def test_autograde_says_what_was_not_graded_why_and_what_to_do(batch) -> None:
    _, _, run = batch
    assert run.returncode == 1
    said = {}
    for line in run.stderr.splitlines():
        match = re.match(r"not graded ([^/]+)/(\S+): (.*)$", line)
        if match:
            said[match.group(1), match.group(2)] = match.group(3)
    assert set(said) == set(NOT_GRADED)
    for key, why in said.items():
        assert why.startswith(NOT_GRADED[key]) or NOT_GRADED[key] in why, (key, why)
        assert WHAT_TO_DO.search(why), (key, why)
    assert run.stderr.splitlines()[-1] == (
        f"3 submission(s) were graded and saved in the gradebook; {len(NOT_GRADED)} were not graded: "
        "fix or replace each as its line above says and run autograde again."
    )
    graded, listed = run.stdout.split(f"\nNot graded ({len(NOT_GRADED)}): ")
    assert "autograded 3 of 12 submission(s)" in graded
    assert {tuple(line.split()[:2]) for line in listed.splitlines()[2:]} == set(NOT_GRADED)


def test_a_notebook_nbgrader_refused_has_no_row_in_the_gradebook(batch) -> None:
    course, _, _ = batch
    with Gradebook(course.db_url, course_id=COURSE_ID) as gb:
        for student in ("checksum", "bad_grade_id"):
            with pytest.raises(MissingEntry):
                gb.find_submission(LAB, student)
        assert gb.find_submission(LAB, "solution").score == FULL
    assert not (course.root / "autograded" / "checksum").exists()


def test_the_csv_export_lists_only_what_was_graded(batch, tmp_path) -> None:
    course, _, _ = batch
    with course.export(tmp_path / "grades.csv").open(encoding="utf-8") as grades:
        rows = {row["student_id"]: float(row["score"]) for row in csv.DictReader(grades) if row["assignment"] == LAB}
    assert rows == GRADED


def test_the_course_keeps_the_list_with_why(batch) -> None:
    course, _, _ = batch
    kept = json.loads((course.root / ".grading" / "not_graded.json").read_text(encoding="utf-8"))["not_graded"]
    assert {(e["student"], e["lab"]) for e in kept} == set(NOT_GRADED)
    assert [(o.student, o.lab) for o in course.not_graded()] == sorted(NOT_GRADED, key=lambda key: (key[1], key[0]))
    assert all(str(course.root) not in e["why"] for e in kept)


def test_the_gradebook_command_prints_the_scores_then_what_was_not_graded(batch, capfd) -> None:
    course, _, _ = batch
    code, out, err = run_cli(capfd, "gradebook", "--course", course.root)
    assert (code, err) == (0, "")
    graded, listed = out.split(f"\nNot graded ({len(NOT_GRADED)}): ")
    assert re.search(rf"solution\s+lab1_error_results\s+{FULL}/{FULL}", graded) and "checksum" not in graded
    rows = listed.splitlines()
    assert rows[0] == "these have no score; do what each line says, then autograde them again."
    assert re.match(r"student\s+lab\s+why$", rows[1])
    assert {tuple(row.split()[:2]) for row in rows[2:]} == set(NOT_GRADED)
    assert all(WHAT_TO_DO.search(row) for row in rows[2:])


def test_feedback_says_plainly_that_a_submission_was_not_graded_and_why(batch, capfd) -> None:
    course, _, _ = batch
    code, out, err = run_cli(capfd, "feedback", "--course", course.root)
    assert (code, err) == (0, "")
    pages = [line.split()[1] for line in out.splitlines() if line.startswith("feedback ")]
    assert sorted(Path(p).parts[-3] for p in pages) == sorted(GRADED)
    notes = {}
    for line in out.splitlines():
        match = re.match(r"not graded ([^/]+)/(\S+), so (\S+) says so instead of feedback: (.*)$", line)
        if match:
            notes[match.group(1), match.group(2)] = (Path(match.group(3)), match.group(4))
    assert set(notes) == set(NOT_GRADED)
    for (student, lab), (page, why) in notes.items():
        assert page == course.root / "feedback" / student / lab / f"{lab}.html"
        text = page_text(page)
        assert f"{lab}: not graded" in text and "this is not a score of 0" in text
        assert NOT_GRADED[student, lab] in text and f"Why: {why}" in text
        assert f"/{FULL}" not in text and "[FAIL]" not in text and str(course.root) not in text


def test_the_cohort_report_lists_what_was_not_graded_apart_from_its_numbers(batch, tmp_path, capfd) -> None:
    course, _, _ = batch
    out = tmp_path / "report.md"
    assert run_cli(capfd, "report", "--course", course.root, "--out", out)[0] == 0
    text = out.read_text(encoding="utf-8")
    assert f"| {LAB} | 3 |" in text  # three graded submissions, no more
    section = text.split("## Not graded", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| student")]
    assert {tuple(cell.strip() for cell in row.strip("|").split(" | ")[:2]) for row in rows} == set(NOT_GRADED)
    assert "counted in none of the numbers" in section
    assert f"## {LAB3}" not in text and "## lab9_nothing" not in text


def test_a_later_run_takes_off_the_list_what_it_grades_and_a_refused_resubmission_shows_no_old_score(
    batch, tmp_path
) -> None:
    course_before, _, _ = batch
    shutil.copytree(course_before.root, tmp_path / "course")
    course = Course(tmp_path / "course")
    subs = tmp_path / "subs"
    put(subs, "checksum", LAB, solution())  # fixed
    put(subs, "solution", LAB, inconsistent_checksum())  # a graded student resubmits a notebook nbgrader refuses
    old_page = course.root / "feedback" / "solution" / LAB / f"{LAB}.html"
    old_page.parent.mkdir(parents=True, exist_ok=True)
    old_page.write_text(f"<p>{FULL}/{FULL}</p>", encoding="utf-8")

    outcomes = {(o.student, o.lab): o.ok for o in course.autograde(course.collect(subs), jobs=1)}

    assert outcomes == {("checksum", LAB): True, ("solution", LAB): False}
    listed = {(o.student, o.lab) for o in course.not_graded()}
    assert listed == (set(NOT_GRADED) - {("checksum", LAB)}) | {("solution", LAB)}
    assert {r["student"]: r["score"] for r in course.gradebook()} == {
        "checksum": FULL,
        "retries_business_error": RETRIES,
        "zero_cells": 0,
    }
    assert not old_page.exists()  # the feedback of the notebook it replaced is gone with its score


def test_an_exception_from_nbgrader_is_that_submissions_outcome_and_the_loop_goes_on(
    batch, tmp_path, monkeypatch
) -> None:
    course_before, _, _ = batch
    shutil.copytree(
        course_before.root, tmp_path / "course", ignore=shutil.ignore_patterns("autograded", "feedback", ".grading")
    )
    course = Course(tmp_path / "course")
    subs = copy_samples(tmp_path / "subs", {LAB: ["solution"]})
    shutil.copytree(subs / "solution" / LAB, subs / "boom" / LAB)
    from grader.course import BatchAutograde

    real_record = BatchAutograde.record

    def record(self, lab, student):  # nbgrader raising while it records one submission of the batch
        if student == "boom":
            raise RuntimeError("database is locked")
        return real_record(self, lab, student)

    monkeypatch.setattr(BatchAutograde, "record", record)
    outcomes = {o.student: o for o in course.autograde(course.collect(subs), jobs=1)}

    assert outcomes["solution"].ok
    assert not outcomes["boom"].ok
    assert outcomes["boom"].message.startswith("nbgrader could not grade it (RuntimeError: database is locked).")
    assert WHAT_TO_DO.search(outcomes["boom"].message)
    assert ("boom", LAB) in {(o.student, o.lab) for o in course.not_graded()}


def test_checks_that_fail_in_the_grader_while_nbgrader_records_leave_the_submission_not_graded(
    batch, tmp_path, monkeypatch
) -> None:
    import grader.course
    from grader.engine.batch import ResultStore

    course_before, _, _ = batch
    shutil.copytree(
        course_before.root, tmp_path / "course", ignore=shutil.ignore_patterns("autograded", "feedback", ".grading")
    )
    course = Course(tmp_path / "course")
    subs = copy_samples(tmp_path / "subs", {LAB: ["solution"]})
    shutil.copytree(subs / "solution" / LAB, subs / "late" / LAB)

    def fails(*args, **kwargs):
        raise OSError(28, "No space left on device")

    # The batch's results are not found again when nbgrader records, so the checks run there, and fail there.
    monkeypatch.setattr(ResultStore, "get", lambda self, lab, student, key: None)
    monkeypatch.setattr(grader.course, "grade_code", fails)
    outcomes = {o.student: o for o in course.autograde(course.collect(subs), jobs=1)}

    for student in ("solution", "late"):
        assert not outcomes[student].ok
        assert outcomes[student].message.startswith(
            "The grader failed while running the checks (OSError: [Errno 28] No space left on device); this is not a mark"
        ), outcomes[student].message
        assert WHAT_TO_DO.search(outcomes[student].message)
    assert not {"solution", "late"} & {
        r["student"] for r in course.gradebook()
    }  # the earlier full marks of solution too
    assert {("solution", LAB), ("late", LAB)} <= {(o.student, o.lab) for o in course.not_graded()}
