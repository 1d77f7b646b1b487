"""Every instructor command the README shows runs on a copy of the course without printing a warning or a
deprecation (each in its own process, so whatever nbgrader, traitlets or any library prints is seen): the week
(a roster imported with nbgrader, release with a due date to the exchange, a learner's submit, collect,
autograde, feedback released, export, gradebook, report) and the other commands of the table."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from coursetests import inside, new_course
from nbgrader.tests import run_nbgrader

from grader.course import COURSE_ID
from grader.pipeline import REPO, SAMPLE_SUBMISSIONS

LAB = "lab1_error_results"
# "[WARNING]", "warning:", "UserWarning", "deprecated"; not resolve's JSON key "warnings" (its list of findings) nor
# check-server's column "warn" (advice not followed).
WARNING = re.compile(r"\w*warning\b|deprecat", re.IGNORECASE)


def readme_commands() -> set[str]:
    """The ``python -m grader`` commands of the README's instructors section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Instructors: the grading pipeline", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"python -m grader ([a-z][a-z-]*)", section))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(command line, exit code, stdout, stderr) of each command, in the order a week runs them."""
    from grader.engine.grading import isolation

    root = tmp_path_factory.mktemp("readme")
    exchange = root / "exchange"
    course = new_course(root / "course", f'c.Exchange.root = "{exchange}"\n')
    env = {**os.environ, "PYTHONPATH": str(REPO), "JUPYTER_CONFIG_DIR": str(root / "jupyter-config")}
    done = []

    def run(*argv, cwd: Path = REPO) -> subprocess.CompletedProcess:
        ran = subprocess.run(
            [sys.executable, *map(str, argv)],
            check=False,
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=600,
        )
        done.append((argv, ran.returncode, ran.stdout, ran.stderr))
        return ran

    def grader(*argv) -> subprocess.CompletedProcess:
        return run("-m", "grader", *argv, "--course", course.root)

    (root / "roster.csv").write_text("id,first_name,last_name,email\nalice,Alice,Liddell,alice@example.org\n")
    run("-m", "nbgrader", "db", "student", "import", root / "roster.csv", cwd=course.root)
    grader("release", LAB, "--due", "2030-12-10 17:00", "--exchange")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_CONFIG_DIR", str(root / "jupyter-config"))
        home = root / "alice"
        home.mkdir()
        learner = [
            "--course",
            COURSE_ID,
            f"--Exchange.root={exchange}",
            f"--Exchange.cache={home / 'cache'}",
            "--student=alice",
        ]
        with inside(home):
            run_nbgrader(["fetch_assignment", LAB, *learner])
            (home / LAB / f"{LAB}.ipynb").write_bytes(
                (SAMPLE_SUBMISSIONS / "solution" / LAB / f"{LAB}.ipynb").read_bytes()
            )
            run_nbgrader(["submit", LAB, *learner])
    grader("collect", LAB)
    sandbox = [] if isolation()["missing"] else ["--require-sandbox"]
    grader("autograde", course.root / "submitted", "--jobs", "1", *sandbox)
    grader("feedback", "--release")
    grader("export", "--to", root / "grades.csv")
    grader("gradebook")
    grader("report", "--out", root / "report.md")
    (root / "result.json").write_text(json.dumps({"isError": True, "content": [{"type": "text", "text": "timeout"}]}))
    run("-m", "grader", "decide", root / "result.json")
    (root / "home").mkdir()
    (root / "project").mkdir()
    run("-m", "grader", "resolve", "--home", root / "home", "--project", root / "project")
    run("-m", "grader", "check-server", "--command", f"{sys.executable} -m servers.tracker")
    return done, bool(sandbox)


def test_every_readme_instructor_command_is_run(runs):
    done, _ = runs
    ran = {argv[2] for argv, *_ in done if argv[:2] == ("-m", "grader")}
    assert readme_commands() <= ran, readme_commands() - ran
    assert {"release", "collect", "autograde", "feedback", "export", "gradebook", "report"} <= readme_commands()


def test_no_command_prints_a_warning_or_a_deprecation(runs):
    done, _ = runs
    found = [
        (" ".join(map(str, argv[2:4])), line)
        for argv, _, out, err in done
        for line in (out + err).splitlines()
        if WARNING.search(line)
    ]
    assert found == []


def test_every_command_of_the_week_succeeds(runs):
    done, _ = runs
    failed = [(argv, code, err) for argv, code, _, err in done if code != 0 and "check-server" not in argv]
    assert failed == []
    assert all("Traceback" not in out + err for _, _, out, err in done)
