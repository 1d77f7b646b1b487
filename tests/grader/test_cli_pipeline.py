"""The grading commands when the instructor's input is wrong: a sentence saying what to do, never a traceback.

One batch is autograded once for the module through ``python -m grader`` in a subprocess
(so anything any library prints reaches the test): two good notebooks beside a garbage
one, an empty file, a folder named for no lab and a folder with no notebook. The other
tests run the CLI in process on that course, or on a copy of it with its gradebook
overwritten by junk.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from coursetests import MATRIX, copy_samples, new_course, run_cli

from grader.pipeline import REPO

LAB = "lab1_error_results"
GOOD = {
    "solution": MATRIX[LAB]["samples"]["solution"]["score"],
    "retries_business_error": MATRIX[LAB]["samples"]["retries_business_error"]["score"],
}
CORRUPT_TODO = "Restore it from a backup, or move it aside, release the labs again and autograde again."


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """The course after autograding the mixed batch, the batch's folder, and what the command said."""
    root = tmp_path_factory.mktemp("batch")
    course = new_course(root / "course")
    course.release([LAB])
    subs = copy_samples(root / "subs", {LAB: list(GOOD)})
    (subs / "garbage" / LAB).mkdir(parents=True)
    (subs / "garbage" / LAB / f"{LAB}.ipynb").write_bytes(b"\x00\x01 not a notebook at all \xff")
    (subs / "empty" / LAB).mkdir(parents=True)
    (subs / "empty" / LAB / f"{LAB}.ipynb").write_bytes(b"")
    (subs / "ann" / "lab9_nothing").mkdir(parents=True)
    (subs / "ann" / "lab9_nothing" / "lab9_nothing.ipynb").write_text("{}")
    (subs / "bob" / LAB).mkdir(parents=True)
    run = subprocess.run(
        [sys.executable, "-m", "grader", "autograde", str(subs), "--course", str(course.root)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    return course, subs, run


def assert_error_then_what_to_do(err: str, *fragments: str, todo: str) -> None:
    assert err.startswith("error: ") and err.count("\n") == 1
    for fragment in fragments:
        assert fragment in err
    assert err.rstrip().endswith(todo)


# --- a batch with submissions that are not notebooks ------------------------------------------


def test_notebooks_that_are_not_notebooks_are_named_and_the_good_ones_graded(batch):
    course, _, run = batch
    assert "Traceback" not in run.stdout + run.stderr
    assert run.returncode == 1
    lines = run.stderr.splitlines()
    assert any(
        line.startswith(f"not graded garbage/{LAB}: {LAB}.ipynb is not a readable Jupyter notebook") for line in lines
    ), lines
    assert f"not graded empty/{LAB}: {LAB}.ipynb is an empty file, not a readable Jupyter notebook." in run.stderr
    assert (
        "not graded ann/lab9_nothing: there is no lab named 'lab9_nothing': rename the folder ann/lab9_nothing to one of: "
        in run.stderr
    )
    assert (
        f"not graded bob/{LAB}: its folder holds no notebook: put the student's {LAB}.ipynb in bob/{LAB}, then autograde again."
        in run.stderr
    )
    assert lines[-1] == (
        "2 submission(s) were graded and saved in the gradebook; 4 were not graded: "
        "fix or replace each as its line above says and run autograde again."
    )
    assert "autograded 2 of 6 submission(s)" in run.stdout
    graded, not_graded = run.stdout.split("\nNot graded (4): ")
    assert "garbage" not in graded and all(f"{student}  " in graded for student in GOOD)
    assert {line.split()[0] for line in not_graded.splitlines()[2:]} == {"ann", "bob", "empty", "garbage"}
    assert {r["student"]: r["score"] for r in course.gradebook()} == GOOD


@pytest.mark.parametrize("command", ["gradebook", "export", "feedback", "report"])
def test_every_later_step_still_serves_the_good_submissions_and_names_the_others(batch, tmp_path, capfd, command):
    course, _, _ = batch
    extra = {"export": ["--to", tmp_path / "grades.csv"], "report": ["--out", tmp_path / "report.md"]}.get(command, [])
    code, out, err = run_cli(capfd, command, "--course", course.root, *extra)
    assert (code, err) == (0, "")
    not_graded = {"garbage", "empty", "ann", "bob"}
    if command == "gradebook":
        graded, listed = out.split("\nNot graded (4): ")
        assert all(f"{student}  " in graded for student in GOOD) and "garbage" not in graded
        assert {line.split()[0] for line in listed.splitlines()[2:]} == not_graded
    elif command == "export":
        rows = {
            row["student_id"]: float(row["score"])
            for row in csv.DictReader((tmp_path / "grades.csv").read_text(encoding="utf-8").splitlines(keepends=True))
        }
        assert rows == GOOD
    elif command == "feedback":
        pages = sorted(line.split()[1] for line in out.splitlines() if line.startswith("feedback "))
        assert pages == sorted(str(course.root / "feedback" / s / LAB / f"{LAB}.html") for s in GOOD)
        assert all(Path(page).exists() for page in pages)
        notes = [line for line in out.splitlines() if line.startswith("not graded ")]
        assert {line.split()[2].split("/")[0] for line in notes} == not_graded
    else:
        text = (tmp_path / "report.md").read_text()
        assert f"| {LAB} | 2 |" in text
        assert "## Not graded" in text and all(f"| {student} |" in text for student in not_graded)


# --- wrong arguments --------------------------------------------------------------------------


def test_an_unknown_lab_is_named_with_the_known_ones_before_anything_is_copied(batch, capfd):
    course, subs, _ = batch
    before = sorted(p.name for p in (course.root / "submitted").iterdir())
    code, _, err = run_cli(capfd, "autograde", subs, "--lab", "lab9_nothing", "--course", course.root)
    assert code == 2
    assert_error_then_what_to_do(
        err,
        "There is no lab named 'lab9_nothing'",
        LAB,
        todo="Check the spelling and run the command again with one of them.",
    )
    assert sorted(p.name for p in (course.root / "submitted").iterdir()) == before
    code, _, err = run_cli(capfd, "release", "lab9_nothing", "--course", course.root)
    assert code == 2
    assert_error_then_what_to_do(
        err, "'lab9_nothing'", todo="Check the spelling and run the command again with one of them."
    )


def test_a_lab_with_no_submission_in_the_folder_says_how_the_folder_should_look(batch, capfd):
    course, subs, _ = batch
    code, _, err = run_cli(capfd, "autograde", subs, "--lab", "lab3_tools_resources", "--course", course.root)
    assert code == 2
    last = err.splitlines()[-1]
    assert last.startswith(f"error: {subs} holds no submission of lab3_tools_resources.")
    assert last.endswith("<student>/lab3_tools_resources/lab3_tools_resources.ipynb.")


def test_an_empty_submissions_folder_says_how_the_folder_should_look(tmp_path, capfd):
    new_course(tmp_path / "course")
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(capfd, "autograde", tmp_path / "empty", "--course", tmp_path / "course")
    assert code == 2
    assert err.startswith(f"error: {tmp_path / 'empty'} holds no submissions. ") and err.count("\n") == 1
    last_sentence = err.rstrip().rsplit(". ", 1)[1]
    assert last_sentence.startswith("Lay it out as <student>/<lab>/<lab>.ipynb, with labs among: ")
    assert LAB in last_sentence and last_sentence.endswith(".")


# --- a gradebook overwritten with junk --------------------------------------------------------


@pytest.mark.parametrize("command", ["autograde", "feedback", "export", "gradebook", "report", "release"])
def test_a_corrupt_gradebook_stops_every_command_with_what_to_do_and_keeps_what_was_graded(
    batch, tmp_path, capfd, command
):
    course, subs, _ = batch
    copy = tmp_path / "course"
    shutil.copytree(course.root, copy)
    junk = b"SQLite format 3\x00" + bytes(range(256)) * 20
    (copy / "gradebook.db").write_bytes(junk)
    graded = {p: p.read_bytes() for p in (copy / "autograded").rglob("*.ipynb")}
    assert len(graded) == len(GOOD)
    argv = {
        "autograde": ["autograde", subs],
        "export": ["export", "--to", tmp_path / "grades.csv"],
        "report": ["report", "--out", tmp_path / "report.html"],
        "release": ["release", LAB],
    }.get(command, [command])

    code, out, err = run_cli(capfd, *argv, "--course", copy)

    assert code == 2 and out == ""
    assert_error_then_what_to_do(err, f"The gradebook {copy / 'gradebook.db'} cannot be read", todo=CORRUPT_TODO)
    assert (copy / "gradebook.db").read_bytes() == junk
    assert {p: p.read_bytes() for p in (copy / "autograded").rglob("*.ipynb")} == graded
    assert not (tmp_path / "grades.csv").exists() and not (tmp_path / "report.html").exists()


# --- the sandbox: required, or its missing protections named ---------------------------------------------


def test_with_the_sandbox_required_autograde_grades_where_every_protection_is_in_place(tmp_path, capfd):
    from grader.engine.grading import isolation

    if isolation()["missing"]:
        pytest.skip("this machine does not give learner code every protection (run the tests as root on Linux)")
    course = new_course(tmp_path / "course")
    course.release([LAB])
    subs = copy_samples(tmp_path / "subs", {LAB: ["solution"]})
    code, out, err = run_cli(capfd, "autograde", subs, "--course", course.root, "--require-sandbox", "--jobs", "1")
    assert code == 0, err
    assert f"{GOOD['solution']:g}/" in out and "warning" not in err


def test_with_a_protection_missing_autograde_warns_first_or_refuses_when_the_sandbox_is_required(
    batch, tmp_path, capfd, monkeypatch
):
    from grader.engine import grading

    monkeypatch.setattr(
        grading, "_isolation", {"protections": ["user", "files"], "missing": ["network", "processes"], "fallbacks": []}
    )
    course, subs, _ = batch
    copy = tmp_path / "course"
    shutil.copytree(course.root, copy)
    before = (copy / "gradebook.db").read_bytes()
    shutil.rmtree(copy / "submitted")
    code, out, err = run_cli(capfd, "autograde", subs, "--course", copy, "--require-sandbox")
    assert code != 0 and out == ""
    assert_error_then_what_to_do(
        err,
        "network isolation",
        "process isolation",
        todo="or leave out --require-sandbox to grade with what this machine allows.",
    )
    assert (copy / "gradebook.db").read_bytes() == before  # nothing graded, nothing changed
    assert not (copy / "submitted").exists()  # nor copied
    code, out, err = run_cli(capfd, "autograde", subs, "--course", copy, "--lab", LAB)
    first = err.splitlines()[0]
    assert (
        first.startswith("grader: warning: learner code will run without these protections")
        and "network isolation" in first
    )
    assert f"{GOOD['solution']:g}/" in out


def test_autograde_writes_nothing_into_the_folder_it_is_run_from(tmp_path):
    """Grading writes only into the course folder and the system's temporary folder: not where it is run from
    (lab 2's generated comparisons once left a .hypothesis folder there)."""
    course = new_course(tmp_path / "course")
    course.release(["lab2_scopes_expansion"])
    subs = copy_samples(tmp_path / "subs", {"lab2_scopes_expansion": ["solution"]})
    here = tmp_path / "here"
    here.mkdir()
    run = subprocess.run(
        [sys.executable, "-m", "grader", "autograde", str(subs), "--course", str(course.root), "--jobs", "1"],
        capture_output=True,
        text=True,
        cwd=here,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 0, run.stderr
    assert list(here.iterdir()) == []


def test_autograding_the_courses_own_submitted_folder_grades_it_and_changes_no_file_of_it(tmp_path, capfd):
    """What `nbgrader collect` leaves is <course>/submitted: grading it must not delete, move or rewrite a file."""
    import hashlib

    course = new_course(tmp_path / "course")
    course.release([LAB])
    copy_samples(course.root / "submitted", {LAB: ["solution", "retries_business_error"]})
    (course.root / "submitted" / "solution" / LAB / "timestamp.txt").write_text("2026-11-30 09:00:00.000000 UTC")

    def digests() -> dict[str, str]:
        return {
            str(path.relative_to(course.root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted((course.root / "submitted").rglob("*"))
            if path.is_file()
        }

    before = digests()
    code, out, err = run_cli(capfd, "autograde", course.root / "submitted", "--course", course.root, "--jobs", "1")
    assert code == 0, err
    assert digests() == before
    assert f"{GOOD['solution']:g}/" in out and f"{GOOD['retries_business_error']:g}/" in out
