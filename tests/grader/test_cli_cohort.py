"""A cohort's week through ``python -m grader`` and nbgrader's exchange, as the course's nbgrader_config.py sets it:
a roster imported with ``nbgrader db student import``, ``release --exchange``, learners fetching and submitting
with nbgrader's own commands (run as nbgrader's tests run them), ``collect``, ``autograde`` of the course's
submitted/ folder, ``feedback --release``, and learners fetching their feedback.

The week runs once for the module, in a temporary course whose exchange is a temporary folder.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from coursetests import inside, new_course, page_text, run_cli
from nbgrader.tests import run_nbgrader

from grader.cli import main
from grader.course import COURSE_ID
from grader.pipeline import REPO, SAMPLE_SUBMISSIONS

LAB = "lab1_error_results"
ROSTER = "id,first_name,last_name,email\nalice,Alice,Liddell,alice@example.org\ncarol,Carol,Danvers,carol@example.org\n"


class Week:
    """The course, its exchange, the learners' homes, and the exit code of each instructor command."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.exchange = root / "exchange"
        self.course = new_course(root / "course", f'c.Exchange.root = "{self.exchange}"\n')
        self.exit: dict[str, int] = {}

    def instructor(self, step: str, *argv) -> None:
        """``python -m grader ARGV`` in this process (the tests that check its words run it again, captured)."""
        self.exit[step] = main([str(a) for a in (*argv, "--course", self.course.root)])

    def learner(self, student: str, *argv: str) -> str:
        """A learner's nbgrader command, in their home folder, with the course's exchange."""
        home = self.root / "home" / student
        home.mkdir(parents=True, exist_ok=True)
        with inside(home):
            return run_nbgrader(
                [
                    *argv,
                    "--course",
                    COURSE_ID,
                    f"--Exchange.root={self.exchange}",
                    f"--Exchange.cache={home / '.cache'}",
                    f"--student={student}",
                ]
            )

    def home(self, student: str) -> Path:
        return self.root / "home" / student


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    root = tmp_path_factory.mktemp("week")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("JUPYTER_CONFIG_DIR", str(root / "jupyter-config"))  # no configuration of this machine's user
        week = Week(root)
        (root / "roster.csv").write_text(ROSTER)
        imported = subprocess.run(
            [sys.executable, "-m", "nbgrader", "db", "student", "import", str(root / "roster.csv")],
            check=False,
            capture_output=True,
            text=True,
            cwd=week.course.root,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert imported.returncode == 0, imported.stderr
        week.instructor("release", "release", LAB, "--exchange")
        week.instructor("release again", "release", LAB, "--exchange")
        for student in ("alice", "bob", "carol"):
            week.learner(student, "fetch_assignment", LAB)
        solution = (SAMPLE_SUBMISSIONS / "solution" / LAB / f"{LAB}.ipynb").read_bytes()
        (week.home("alice") / LAB / f"{LAB}.ipynb").write_bytes(solution)
        (week.home("carol") / LAB / f"{LAB}.ipynb").write_text(
            '{"cells": [ saved half-way'
        )  # bob hands in the release as is
        for student in ("alice", "bob", "carol"):
            week.learner(student, "submit", LAB)
        week.instructor("collect", "collect", LAB)
        week.instructor("autograde", "autograde", week.course.root / "submitted", "--jobs", "2")
        week.instructor("feedback", "feedback", "--release")
        week.instructor("collect again", "collect", LAB)
        for student in ("alice", "carol"):
            week.learner(student, "fetch_feedback", LAB)
        yield week


def fetched_feedback(week: Week, student: str) -> str:
    [page] = (week.home(student) / LAB / "feedback").glob(f"*/{LAB}.html")
    return page_text(page)


def test_release_to_the_exchange_puts_the_lab_where_learners_fetch_it(week):
    assert week.exit["release"] == 0
    assert (week.exchange / COURSE_ID / "outbound" / LAB / f"{LAB}.ipynb").is_file()
    assert (week.home("bob") / LAB / f"{LAB}.ipynb").is_file()


def test_a_lab_already_in_the_exchange_is_replaced_only_when_asked(week, capfd, tmp_path):
    assert week.exit["release again"] == 2
    code, out, err = run_cli(capfd, "release", LAB, "--exchange", "--course", week.course.root)
    assert code == 2 and out == "" and err.count("\n") == 1
    where = week.exchange / COURSE_ID / "outbound" / LAB
    assert err == (
        f"error: {LAB} is already in the exchange ({where}), and learners may have fetched it: "
        "run the command again with --force to replace it.\n"
    )
    course = tmp_path / "course"
    shutil.copytree(week.course.root, course)
    (week.exchange / COURSE_ID / "outbound" / LAB / "stale.txt").write_text("an earlier release's file")
    code, out, err = run_cli(capfd, "release", LAB, "--exchange", "--force", "--course", course)
    assert code == 0, err
    assert f"released {LAB} to the exchange -> {where}" in out
    assert not (where / "stale.txt").exists() and (where / f"{LAB}.ipynb").is_file()


def test_collect_brings_each_learners_submission_into_the_course_with_nbgraders_timestamp(week, capfd):
    assert week.exit["collect"] == 0
    submitted = week.course.root / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["alice", "bob", "carol"]
    for student in ("alice", "bob", "carol"):
        assert (submitted / student / LAB / "timestamp.txt").is_file()
        assert (submitted / student / LAB / "submission_secret.txt").is_file()
    assert week.exit["collect again"] == 0
    code, out, err = run_cli(capfd, "collect", LAB, "--course", week.course.root)
    assert code == 0, err
    assert out.startswith(f"nothing new to collect for {LAB}")


def test_collect_says_what_it_collected_and_how_to_grade_it(week, capfd, tmp_path):
    course = tmp_path / "course"
    shutil.copytree(week.course.root, course, ignore=shutil.ignore_patterns("submitted"))
    code, out, err = run_cli(capfd, "collect", LAB, "--course", course)
    assert code == 0, err
    lines = out.splitlines()
    assert sorted(re.sub(r" \(submitted .*\)$", "", line) for line in lines[:3]) == [
        f"collected {s}/{LAB}" for s in ("alice", "bob", "carol")
    ]
    assert all(re.search(r"\(submitted 20\d\d-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \w+\)$", line) for line in lines[:3])
    assert lines[3] == (
        f"3 submission(s) of {LAB} are in {course / 'submitted'}; grade them with: "
        f"python -m grader autograde {course / 'submitted'} --lab {LAB} --course {course}"
    )


def test_the_week_is_graded_and_what_cannot_be_is_listed(week):
    assert week.exit["autograde"] == 1  # carol's notebook is not one
    rows = {r["student"]: r for r in week.course.gradebook()}
    assert set(rows) == {"alice", "bob"}
    assert rows["alice"]["score"] == rows["alice"]["max_score"] and rows["bob"]["score"] == 0
    assert [(o.student, o.lab) for o in week.course.not_graded()] == [("carol", LAB)]


def test_feedback_is_released_and_each_learner_fetches_theirs(week):
    assert week.exit["feedback"] == 0
    alice = fetched_feedback(week, "alice")
    full = week.course.gradebook()[0]["max_score"]
    assert f"(Score: {full:g} / {full:g})" in alice
    carol = fetched_feedback(week, "carol")
    assert f"{LAB}: not graded" in carol and "this is not a score of 0" in carol


def test_names_from_the_roster_reach_formgrader_the_gradebook_and_the_export(week, capfd, tmp_path):
    students = {s["id"]: s for s in week.course.api().get_students()}  # what formgrader lists
    assert (students["alice"]["first_name"], students["alice"]["last_name"]) == ("Alice", "Liddell")
    # bob is in no roster: autograde added him, and formgrader must not show him as "None, None"
    assert students["bob"]["first_name"] is not None and students["bob"]["last_name"] == "bob"
    code, out, err = run_cli(capfd, "gradebook", "--course", week.course.root)
    assert code == 0, err
    assert re.search(rf"alice\s+{LAB}\s+\S+ \(100 %\)\s+Alice Liddell$", out, re.MULTILINE), out
    assert re.search(rf"^bob\s+{LAB}\s+0/\S+ \(0 %\)$", out, re.MULTILINE), out
    exported = {
        r["student_id"]: r
        for r in csv.DictReader(
            week.course.export(tmp_path / "grades.csv").read_text(encoding="utf-8").splitlines(keepends=True)
        )
    }
    assert (exported["alice"]["first_name"], exported["alice"]["last_name"], exported["alice"]["email"]) == (
        "Alice",
        "Liddell",
        "alice@example.org",
    )


def test_feedback_of_a_submission_that_did_not_come_through_the_exchange_is_not_released_and_says_why(
    week, capfd, tmp_path
):
    course = tmp_path / "course"
    shutil.copytree(week.course.root, course)
    shutil.copytree(SAMPLE_SUBMISSIONS / "blank" / LAB, tmp_path / "subs" / "dan" / LAB)
    assert run_cli(capfd, "autograde", tmp_path / "subs", "--course", course, "--jobs", "1")[0] == 0
    code, out, err = run_cli(capfd, "feedback", "--release", "--course", course)
    assert code == 1
    assert f"released the feedback of alice/{LAB} to the exchange" in out
    assert f"feedback of dan/{LAB} not released: it did not come through the exchange" in err
    assert str(course / "feedback" / "dan" / LAB / f"{LAB}.html") in err


def test_the_exchange_commands_need_a_course_id(tmp_path, capfd):
    course = new_course(tmp_path / "c", 'c.CourseDirectory.course_id = ""\n')
    for argv in (["release", LAB, "--exchange"], ["collect", LAB]):
        code, out, err = run_cli(capfd, *argv, "--course", course.root)
        assert code == 2 and out == "" and "The course has no id, which nbgrader's exchange needs" in err
        assert f"set c.CourseDirectory.course_id in {course.root / 'nbgrader_config.py'}" in err
    assert not (course.root / "release").exists()


def test_collect_from_an_exchange_that_holds_nothing_of_the_course_says_to_release_first(tmp_path, capfd):
    course = new_course(tmp_path / "c", f'c.Exchange.root = "{tmp_path / "empty-exchange"}"\n')
    (tmp_path / "empty-exchange").mkdir()
    code, out, err = run_cli(capfd, "collect", LAB, "--course", course.root)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "The exchange holds nothing of the course 'mcp-claude-code'" in err
    assert f"python -m grader release {LAB} --exchange" in err
