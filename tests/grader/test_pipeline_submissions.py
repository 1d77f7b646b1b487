"""Nothing a learner submitted is ever lost or changed, whichever folder autograde is given.

The course's own submitted/ folder (what `nbgrader collect` leaves) and a student's folder in it are graded
where they are; any other folder laid out as <student>/<lab>/ is copied in with its files' times and
nbgrader's timestamp.txt. Every input file's sha256 is compared before and after. A copy made here is replaced
by a resubmission; a submission that came another way never is. Input that is wrong is a one-line error (exit 2)
or a "not graded: why" row, and a run with wrong input takes away no earlier grade of another submission.

One course is released once for the module; each test grades a copy of it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from coursetests import copy_samples, digests, new_course, run_cli
from nbgrader.api import Gradebook

from grader.pipeline import SAMPLE_SUBMISSIONS, Course

LAB = "lab1_error_results"
FULL = "full marks"
STAMP = "2026-11-30 09:00:00.000000 UTC"


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    course = new_course(tmp_path_factory.mktemp("released") / "course")
    course.release([LAB])
    return course.root


@pytest.fixture
def course(released, tmp_path) -> Course:
    shutil.copytree(released, tmp_path / "course")
    return Course(tmp_path / "course")


def submission(folder: Path, student: str, sample: str, stamp: str | None = STAMP) -> Path:
    """``folder/<student>/<lab>/``: a sample's notebook, with nbgrader's timestamp.txt when ``stamp``."""
    shutil.copytree(SAMPLE_SUBMISSIONS / sample / LAB, folder / student / LAB)
    if stamp:
        (folder / student / LAB / "timestamp.txt").write_text(stamp, encoding="utf-8")
    return folder / student / LAB


def times(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in sorted(folder.rglob("*")) if p.is_file()}


def scores(course: Course) -> dict[str, float | str]:
    """Each student's score of the lab, FULL when it is the lab's maximum (the solution's)."""
    return {
        r["student"]: FULL if r["score"] == r["max_score"] else r["score"]
        for r in course.gradebook()
        if r["lab"] == LAB
    }


def autograde(capfd, course: Course, folder: Path, *options) -> tuple[int, str, str]:
    return run_cli(capfd, "autograde", folder, "--course", course.root, "--jobs", "1", *options)


def not_graded_lines(err: str) -> dict[tuple[str, str], str]:
    said = {}
    for line in err.splitlines():
        match = re.match(r"not graded (.+?)/(\S+): (.*)$", line)
        if match:
            said[match.group(1), match.group(2)] = match.group(3)
    return said


# --- the three kinds of folder ----------------------------------------------------------------------


def test_the_courses_submitted_folder_is_graded_in_place_and_no_file_or_time_changes(course, capfd):
    submitted = course.root / "submitted"
    submission(submitted, "alice", "solution")
    submission(submitted, "bob", "blank", stamp="2026-11-30 10:15:00.000000 CET")
    before, mtimes = digests(submitted), times(submitted)

    code, _out, err = autograde(capfd, course, submitted)

    assert code == 0, err
    assert digests(submitted) == before and times(submitted) == mtimes
    assert (submitted / "bob" / LAB / "timestamp.txt").read_text() == "2026-11-30 10:15:00.000000 CET"
    assert scores(course) == {"alice": FULL, "bob": 0}
    assert not (course.root / ".grading" / "copied").exists()  # nothing was copied


def test_a_student_folder_inside_submitted_is_that_students_labs_graded_in_place(course, capfd):
    submitted = course.root / "submitted"
    submission(submitted, "alice", "solution")
    submission(submitted, "bob", "blank")
    before = digests(submitted)

    code, out, err = autograde(capfd, course, submitted / "alice")

    assert code == 0, err
    assert digests(submitted) == before
    assert scores(course) == {"alice": FULL}  # bob's was not asked for
    assert "autograded 1 of 1 submission(s)" in out
    assert not (course.root / ".grading" / "copied").exists()
    code, _, err = autograde(capfd, course, submitted / "bob" / LAB)  # one lab folder of one student, too
    assert code == 0, err
    assert scores(course) == {"alice": FULL, "bob": 0}
    assert digests(submitted) == before


def test_an_outside_folder_is_copied_in_with_its_times_and_timestamps_and_left_as_it_was(course, capfd, tmp_path):
    outside = tmp_path / "handed-in"
    submission(outside, "alice", "solution", stamp="2026-11-30 09:00:00.000000 UTC")
    submission(outside, "bob", "blank", stamp=None)
    (outside / "alice" / LAB / "data.csv").write_text("a,b\n1,2\n")
    before, mtimes = digests(outside), times(outside)

    code, _out, err = autograde(capfd, course, outside)

    assert code == 0, err
    assert digests(outside) == before and times(outside) == mtimes
    copy = course.root / "submitted"
    assert digests(copy) == before and times(copy) == mtimes  # files and their times, timestamp.txt and all
    assert (copy / "alice" / LAB / "timestamp.txt").read_text() == "2026-11-30 09:00:00.000000 UTC"
    assert scores(course) == {"alice": FULL, "bob": 0}
    with Gradebook(course.db_url) as gb:  # nbgrader read the submission time from timestamp.txt
        assert gb.find_submission(LAB, "alice").timestamp.isoformat() == "2026-11-30T09:00:00"
    recorded = {
        r["copy"]: r["files"]
        for r in map(json.loads, map(Path.read_text, (course.root / ".grading" / "copied").glob("*.json")))
    }
    assert recorded == {f"alice/{LAB}": digests(outside / "alice" / LAB), f"bob/{LAB}": digests(outside / "bob" / LAB)}


def test_a_collected_submission_is_never_replaced_by_an_outside_copy(course, capfd, tmp_path):
    submitted = course.root / "submitted"
    submission(submitted, "alice", "solution")  # as nbgrader collect left it
    assert autograde(capfd, course, submitted)[0] == 0
    held = digests(submitted)
    outside = tmp_path / "handed-in"
    submission(outside, "alice", "blank", stamp="2026-12-01 09:00:00.000000 UTC")
    submission(outside, "carl", "solution")
    before = digests(outside)

    code, out, err = autograde(capfd, course, outside)

    assert code == 1
    assert digests(submitted / "alice") == {k.removeprefix("alice/"): v for k, v in held.items()}
    assert digests(outside) == before
    why = not_graded_lines(err)[("alice", LAB)]
    assert why.startswith(
        f"the course's submitted/alice/{LAB} already holds a submission that did not come from this folder"
    )
    assert why.endswith(f"grade {course.root / 'submitted'} itself, or move that folder aside, then autograde again.")
    # alice's collected submission keeps its grade and is not listed as not graded; carl is graded.
    assert scores(course) == {"alice": FULL, "carl": FULL}
    assert ("alice", LAB) not in {(o.student, o.lab) for o in course.not_graded()}
    assert re.search(rf"alice\s+{LAB}\s+the course's submitted/alice/{LAB} already holds", out)  # in the run's list


def test_a_copy_made_here_is_replaced_by_a_resubmission_unless_it_was_changed_since(course, capfd, tmp_path):
    outside = tmp_path / "week1"
    submission(outside, "alice", "blank")
    assert autograde(capfd, course, outside)[0] == 0
    assert scores(course) == {"alice": 0}
    shutil.rmtree(outside / "alice")
    submission(outside, "alice", "solution", stamp="2026-12-01 09:00:00.000000 UTC")  # the resubmission

    assert autograde(capfd, course, outside)[0] == 0
    assert scores(course) == {"alice": FULL}
    assert digests(course.root / "submitted" / "alice") == digests(outside / "alice")

    # Someone changes the course's copy by hand: it is no longer the copy made here, so it stays.
    changed = course.root / "submitted" / "alice" / LAB / "timestamp.txt"
    changed.write_text("2026-12-02 09:00:00.000000 UTC")
    shutil.rmtree(outside / "alice")
    submission(outside, "alice", "blank")
    code, _, err = autograde(capfd, course, outside)
    assert code == 1 and "already holds a submission that did not come from this folder" in err
    assert changed.read_text() == "2026-12-02 09:00:00.000000 UTC"


# --- input that is wrong ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_folder_that_does_not_exist_or_is_a_file_is_one_line_saying_what_to_give(course, capfd, tmp_path, kind):
    given = tmp_path / "subs"
    if kind == "file":
        given.write_text("alice,lab1\n")
    code, out, err = autograde(capfd, course, given)
    assert code == 2 and out == "" and err.count("\n") == 1
    said = "does not exist" if kind == "missing" else "is a file, not a folder"
    assert err.startswith(
        f"error: {given} {said}. Give the folder of submissions, laid out as <student>/<lab>/<lab>.ipynb"
    )
    assert not (course.root / "submitted").exists()


def test_a_folder_inside_the_course_but_not_in_submitted_is_refused(course, capfd):
    code, out, err = autograde(capfd, course, course.root / "release")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "is inside the course folder" in err and "but not in its submitted/ folder" in err
    code, _out, err = autograde(capfd, course, course.root.parent)
    assert code == 2 and "holds the course folder" in err


BAD_NAMES = {
    "star*": "as a wildcard",
    "what?": "as a wildcard",
    "brack[1]": "as a wildcard",
    "plus+one": "refuses '+'",
    " spaced": "starts or ends with a space",
    ".hidden": "starts with '.'",
    "comma,name": "separator of student ids",
}


@pytest.fixture(scope="module")
def bad_run(released, tmp_path_factory):
    """A course with two graded submissions, then a second batch of wrong input beside one good submission."""
    import subprocess
    import sys

    from grader.pipeline import REPO

    root = tmp_path_factory.mktemp("bad")
    shutil.copytree(released, root / "course")
    course = Course(root / "course")
    first = copy_samples(root / "first", {LAB: ["solution", "blank"]})
    assert course.autograde(course.collect(first), jobs=1)
    graded_before = scores(course)

    subs = root / "second"
    submission(subs, "good", "solution")
    shutil.copy(
        SAMPLE_SUBMISSIONS / "blank" / LAB / f"{LAB}.ipynb", subs / "good" / f"{LAB}.ipynb"
    )  # beside its folder
    (subs / "README.txt").write_text("week 2 submissions\n")  # a file where a student's folder should be
    (subs / f"{LAB}.ipynb").write_text("{}")  # a notebook with no student folder
    (subs / "solution").mkdir()  # a file where solution's lab folder should be: the graded one stays
    shutil.copy(SAMPLE_SUBMISSIONS / "blank" / LAB / f"{LAB}.ipynb", subs / "solution" / f"{LAB}.ipynb")
    (subs / "dora").mkdir()
    (subs / "dora" / "notes.txt").write_text("my notes")
    (subs / "not_json" / LAB).mkdir(parents=True)
    (subs / "not_json" / LAB / f"{LAB}.ipynb").write_text('{"cells": [ this is not json')
    (subs / "zero_bytes" / LAB).mkdir(parents=True)
    (subs / "zero_bytes" / LAB / f"{LAB}.ipynb").write_bytes(b"")
    (subs / "no_cells" / LAB).mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), str(subs / "no_cells" / LAB / f"{LAB}.ipynb"))
    (subs / "ann" / "lab9_nothing").mkdir(parents=True)
    (subs / "ann" / "lab9_nothing" / "lab9_nothing.ipynb").write_text("{}")
    submission(subs, "bad_stamp", "solution", stamp="the day after the deadline")
    for name in BAD_NAMES:
        submission(subs, name, "solution")
    os.makedirs(os.path.join(os.fsencode(subs), b"caf\xe9", os.fsencode(LAB)))  # a name in no encoding's text
    (subs / ".git").mkdir()  # hidden and holding no lab: not a student's folder, passed over
    before = digests(subs)
    run = subprocess.run(
        [sys.executable, "-m", "grader", "autograde", str(subs), "--course", str(course.root), "--jobs", "2"],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    return course, subs, run, graded_before, before


def test_wrong_input_takes_away_no_earlier_grade_and_changes_no_input_file(bad_run):
    course, subs, run, graded_before, before = bad_run
    assert "Traceback" not in run.stdout + run.stderr
    assert run.returncode == 1
    assert digests(subs) == before
    now = scores(course)
    assert {k: now[k] for k in graded_before} == graded_before  # solution's grade too, though its folder was wrong
    assert now["good"] == FULL
    assert (
        now["no_cells"] == 0
    )  # decided: its graded cells are put back from the release, and each check says why it fails


def test_a_file_where_a_folder_should_be_is_reported_at_either_level(bad_run):
    course, _, run, _, _ = bad_run
    said = not_graded_lines(run.stderr)
    assert said[("README.txt", "-")].startswith("README.txt is a file where a student's folder should be")
    assert said[(f"{LAB}.ipynb", "-")].startswith(
        f"{LAB}.ipynb is a notebook with no student folder: put it in <student>/{LAB}/"
    )
    assert said[("solution", LAB)].startswith(
        f"solution/{LAB}.ipynb is a notebook where the folder solution/{LAB} should be"
    )
    assert said[("dora", "notes.txt")].startswith("dora/notes.txt is a file where a lab's folder should be")
    assert said[("good", LAB)].startswith(f"good/{LAB}.ipynb is a notebook where the folder good/{LAB} should be")
    listed = {(o.student, o.lab) for o in course.not_graded()}
    # None of these entered the course: its list is not changed for them (the graded submissions stand).
    assert not listed & {
        ("README.txt", "-"),
        (f"{LAB}.ipynb", "-"),
        ("solution", LAB),
        ("dora", "notes.txt"),
        ("good", LAB),
    }
    section = run.stdout.split("\nNot graded (", 1)[1]
    assert re.search(r"README\.txt\s+-\s+README\.txt is a file", section)


def test_notebooks_that_cannot_be_graded_are_listed_with_why(bad_run):
    course, _, run, _, _ = bad_run
    said = not_graded_lines(run.stderr)
    assert said[("not_json", LAB)].startswith(f"{LAB}.ipynb is not a readable Jupyter notebook")
    assert said[("zero_bytes", LAB)].startswith(f"{LAB}.ipynb is an empty file, not a readable Jupyter notebook.")
    assert said[("ann", "lab9_nothing")].startswith("there is no lab named 'lab9_nothing'")
    assert said[("bad_stamp", LAB)].startswith(
        "its timestamp.txt ('the day after the deadline') is not a time nbgrader can read"
    )
    listed = {(o.student, o.lab) for o in course.not_graded()}
    assert {("not_json", LAB), ("zero_bytes", LAB), ("ann", "lab9_nothing"), ("bad_stamp", LAB)} <= listed
    for why in (said[("not_json", LAB)], said[("bad_stamp", LAB)]):
        assert why.endswith("autograde again.")


def test_student_folder_names_nbgrader_would_mishandle_are_not_graded_before_it_sees_them(bad_run):
    course, _, run, _, _ = bad_run
    said = not_graded_lines(run.stderr)
    for name, reason in BAD_NAMES.items():
        why = said[(name, LAB)]
        assert why.startswith(f"the folder name {name!r} cannot be a student id: ") and reason in why, why
        assert why.endswith("then autograde again.")
    [undecodable] = [key for key in said if key[0].startswith("caf")]
    assert "not text" in said[undecodable]
    with Gradebook(course.db_url) as gb:
        ids = {s.id for s in gb.students}
    assert not ids & set(BAD_NAMES) and not any(i.startswith("caf") for i in ids)
    assert not (course.root / "submitted" / "star*").exists()  # never copied in
    assert ".git" not in {key[0] for key in said}


def test_the_run_counts_every_problem_and_says_what_to_do(bad_run):
    _, _, run, _, _ = bad_run
    said = not_graded_lines(run.stderr)
    assert run.stderr.splitlines()[-1] == (
        f"2 submission(s) were graded and saved in the gradebook; {len(said)} were not graded: "
        "fix or replace each as its line above says and run autograde again."
    )
    assert f"autograded 2 of {2 + len(said)} submission(s)" in run.stdout  # good, and no_cells
