"""Late submissions lose the configured points through nbgrader's late-submission step: in the gradebook, the
gradebook command, the feedback and the CSV export. The due date is set by `release --due` (read in the course's
timezone) or by nbgrader's own `nbgrader db assignment add --duedate`; the submission time is its timestamp.txt
as nbgrader reads it.

One course (2 points a started day, at most 3, in Europe/Berlin) is released with a due date once for the
module, and four submissions of the solution are graded in its submitted/ folder.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys

import pytest
from coursetests import new_course, page_text, run_cli
from nbgrader.plugins import LateSubmissionPlugin
from traitlets import TraitError
from traitlets.config import Config

from grader.late import LatePenalty, penalty
from grader.pipeline import REPO, SAMPLE_SUBMISSIONS

LAB = "lab1_error_results"
HOUR, DAY = 3600, 86400
POLICY = """
c.LatePenalty.points = 2
c.LatePenalty.per = "day"
c.LatePenalty.max_points = 3
c.NbGraderAPI.timezone = "Europe/Berlin"
c.Exchange.timezone = "Europe/Berlin"
"""
# Due 2026-12-10 17:00 in Berlin, which is 16:00 UTC.
STAMPS = {
    "late": ("2026-12-11 19:00:00.000000 CET", 26 * HOUR, 3.0),  # 2 started days: 4 points, capped at 3
    "edge": ("2026-12-10 17:30:00.000000 CET", 30 * 60, 2.0),  # late only if the due date is read in Berlin time
    "ontime": ("2026-12-10 16:30:00.000000 CET", 0, 0.0),
    "unstamped": (None, 0, 0.0),
}


# --- the plugin -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seconds,points,per,cap,lost",
    [
        (0, 2, "day", None, 0),
        (1, 2, "day", None, 2),  # a started day counts
        (DAY, 2, "day", None, 2),
        (DAY + 1, 2, "day", None, 4),
        (5 * DAY, 2, "day", 6, 6),
        (90 * 60, 0.5, "hour", None, 1),
        (3 * HOUR, 1, "hour", 10, 3),
        (3 * HOUR, 0, "hour", None, 0),
    ],
)
def test_points_per_started_period_up_to_the_cap(seconds, points, per, cap, lost):
    assert penalty(seconds, points, per, cap) == lost


def test_the_plugin_is_nbgraders_configured_as_nbgrader_configures_plugins():
    config = Config()
    config.LatePenalty.points = 2
    config.LatePenalty.per = "hour"
    config.LatePenalty.max_points = 5
    plugin = LatePenalty(config=config)
    assert isinstance(plugin, LateSubmissionPlugin)
    assert plugin.late_submission_penalty("ann", 30.0, 2.5 * HOUR) == 5
    config.LatePenalty.penalty_method = "zero"  # nbgrader's own setting still means what it means
    assert LatePenalty(config=config).late_submission_penalty("ann", 30.0, 60) == 30.0
    with pytest.raises(TraitError, match="0 or more"):
        LatePenalty(points=-1)


# --- in a course ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from grader.cli import main

    root = tmp_path_factory.mktemp("late")
    course = new_course(root / "course", POLICY)
    assert main(["release", LAB, "--course", str(course.root), "--due", "2026-12-10 17:00"]) == 0
    for student, (stamp, _, _) in STAMPS.items():
        folder = course.root / "submitted" / student / LAB
        shutil.copytree(SAMPLE_SUBMISSIONS / "solution" / LAB, folder)
        if stamp:
            (folder / "timestamp.txt").write_text(stamp)
    assert main(["autograde", str(course.root / "submitted"), "--course", str(course.root), "--jobs", "2"]) == 0
    assert main(["feedback", "--course", str(course.root)]) == 0
    return course


def rows(course):
    return {r["student"]: r for r in course.gradebook()}


def test_the_release_stores_the_due_date_read_in_the_courses_timezone(tmp_path, capfd):
    course = new_course(tmp_path / "c", POLICY)
    course.release([LAB])
    assert course.due_dates() == {LAB: None}  # the release registered the lab in the gradebook, with no due date
    code, out, err = run_cli(capfd, "release", LAB, "--course", course.root, "--due", "2026-12-10 17:00")
    assert code == 0, err
    assert f"{LAB} is due 2026-12-10 17:00 CET (2026-12-10 16:00 UTC)" in out
    assert course.due_dates()[LAB].isoformat() == "2026-12-10T16:00:00"
    assert (
        course.api().get_assignment(LAB)["duedate_notimezone"].startswith("2026-12-10T17:00")
    )  # as formgrader shows it
    code, out, err = run_cli(capfd, "release", LAB, "--course", course.root, "--due", "2026-12-10 17:00 +0000")
    assert code == 0 and course.due_dates()[LAB].isoformat() == "2026-12-10T17:00:00"


@pytest.mark.parametrize("due", ["next friday", "2026-13-40 17:00", "2026-12-10 17:00 Mars/Olympus"])
def test_a_due_date_that_is_none_is_refused_before_anything_is_released(tmp_path, capfd, due):
    course = new_course(tmp_path / "c", POLICY)
    code, out, err = run_cli(capfd, "release", LAB, "--course", course.root, "--due", due)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"--due {due!r}" in err and 'for example --due "2026-12-10 17:00"' in err and "Europe/Berlin" in err
    assert not (course.root / "release").exists()


def test_a_late_submission_loses_the_configured_points_in_the_gradebook(graded):
    found = rows(graded)
    for student, (_, late, lost) in STAMPS.items():
        row = found[student]
        assert row["raw_score"] == row["max_score"], student  # the solution, every point earned
        assert (row["seconds_late"], row["penalty"], row["score"]) == (late, lost, row["max_score"] - lost), student


def test_the_gradebook_command_shows_how_late_the_penalty_and_the_score_after_it(graded, capfd):
    code, out, err = run_cli(capfd, "gradebook", "--course", graded.root)
    assert code == 0, err
    full = rows(graded)["late"]["max_score"]
    assert re.search(rf"late\s+{LAB}\s+{full - 3:g}/{full:g} \(\d+ %\)\s+1 d 2 h late: -3 \(from {full:g}\)", out), out
    assert re.search(rf"edge\s+{LAB}\s+{full - 2:g}/{full:g} \(\d+ %\)\s+30 min late: -2 \(from {full:g}\)", out), out
    assert re.search(rf"ontime\s+{LAB}\s+{full:g}/{full:g} \(100 %\)$", out, re.MULTILINE), out


def test_the_feedback_shows_the_penalty_and_the_score_after_it(graded):
    full = rows(graded)["late"]["max_score"]
    late = page_text(graded.root / "feedback" / "late" / LAB / f"{LAB}.html")
    assert "Late submission penalty (Score: -3)" in late
    assert f"(Score: {full - 3:g} / {full:g})" in late
    ontime = page_text(graded.root / "feedback" / "ontime" / LAB / f"{LAB}.html")
    assert "Late submission penalty" not in ontime and f"(Score: {full:g} / {full:g})" in ontime


def test_the_csv_export_has_the_penalty_and_the_score_after_it(graded, tmp_path):
    path = graded.export(tmp_path / "grades.csv")
    exported = {
        row["student_id"]: row for row in csv.DictReader(path.read_text(encoding="utf-8").splitlines(keepends=True))
    }
    for student, (_, _, lost) in STAMPS.items():
        row = exported[student]
        assert float(row["late_submission_penalty"]) == lost
        assert float(row["score"]) == float(row["raw_score"]) - lost
        assert row["duedate"] == "2026-12-10 16:00:00"


def test_a_due_date_set_by_nbgraders_own_db_command_is_honoured(graded, tmp_path, capfd):
    course_root = tmp_path / "course"
    shutil.copytree(graded.root, course_root)
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", "db", "assignment", "add", LAB, "--duedate=2026-12-11 18:00:00 UTC"],
        check=False,
        capture_output=True,
        text=True,
        cwd=course_root,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO), "JUPYTER_CONFIG_DIR": str(tmp_path / "no-config")},
    )
    assert run.returncode == 0, run.stderr
    code, _out, err = run_cli(capfd, "autograde", course_root / "submitted", "--course", course_root, "--jobs", "1")
    assert code == 0, err
    from grader.pipeline import Course

    found = rows(Course(course_root))
    assert found["late"]["penalty"] == 0 and found["late"]["seconds_late"] == 0  # exactly on the new due date
    assert found["edge"]["penalty"] == 0


@pytest.mark.parametrize(
    "setting,named",
    [("c.LatePenalty.points = -1", "0 or more"), ('c.AssignLatePenalties.plugin_class = "nowhere.Plugin"', "nowhere")],
)
def test_a_late_penalty_setting_nbgrader_cannot_use_stops_autograde_before_anything_is_copied(
    graded, tmp_path, capfd, setting, named
):
    course_root = tmp_path / "course"
    shutil.copytree(graded.root, course_root, ignore=shutil.ignore_patterns("submitted"))
    with (course_root / "nbgrader_config.py").open("a") as config:
        config.write(f"\n{setting}\n")
    subs = tmp_path / "subs"
    shutil.copytree(SAMPLE_SUBMISSIONS / "solution" / LAB, subs / "zed" / LAB)
    code, out, err = run_cli(capfd, "autograde", subs, "--course", course_root)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("error: The course's late-penalty setting cannot be used (") and named in err
    assert not (course_root / "submitted").exists()
