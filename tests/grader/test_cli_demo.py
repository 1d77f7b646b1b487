"""The demo course as an instructor opens it: nbgrader's commands and formgrader, started in it as the README says,
find its configuration, its exchange, its submissions and its named students, and print no configuration warning.

The demo is built once for the module, on two of its samples of lab 1, with the command the README gives
(``python -m grader demo``); formgrader runs in a real Jupyter server started in the course folder.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from coursetests import new_course
from nbgrader.api import Gradebook

import grader.pipeline
from grader.cli import demo_roster, main
from grader.course import COURSE_ID
from grader.pipeline import DEFAULT_COURSE, SAMPLE_SUBMISSIONS, Course

LAB1 = "lab1_error_results"
SAMPLES = ("solution", "retries_business_error")
WARNING = "not recognized by"  # traitlets' words for a setting no class of the app has
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``python -m grader demo`` on two samples of lab 1 (the only lab of its course): the course folder, and what
    the command printed."""
    samples = tmp_path_factory.mktemp("samples")
    for student in SAMPLES:
        shutil.copytree(SAMPLE_SUBMISSIONS / student / LAB1, samples / student / LAB1)
    # The repository's course with lab 1 alone, so the demo releases one lab.
    repository = tmp_path_factory.mktemp("repository")
    shutil.copytree(DEFAULT_COURSE / "source" / LAB1, repository / "source" / LAB1)
    shutil.copy2(DEFAULT_COURSE / "nbgrader_config.py", repository / "nbgrader_config.py")
    work = tmp_path_factory.mktemp("demo") / "demo-course"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grader.pipeline, "SAMPLE_SUBMISSIONS", samples)
        patch.setattr(grader.pipeline, "DEFAULT_COURSE", repository)
        out = tmp_path_factory.mktemp("out") / "printed.txt"
        with out.open("w") as printed, pytest.MonkeyPatch.context() as stdout:
            stdout.setattr(sys, "stdout", printed)
            code = main(["demo", "--work", str(work)])
    assert code == 0
    return work, out.read_text()


def nbgrader(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    """An nbgrader command run in ``folder``, as an instructor runs it there."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [BIN / "nbgrader", *argv], check=False, cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


# --- the demo course's configuration, exchange and roster ----------------------------------------------------


def test_the_demo_course_has_the_courses_configuration_and_an_exchange_of_its_own(demo):
    work, printed = demo
    course = Course(work)
    repository = Course(DEFAULT_COURSE)
    assert course.course_id == repository.course_id == COURSE_ID
    assert course.late_policy() == repository.late_policy() and course.timezone == repository.timezone
    assert course.exchange_root == work / "exchange" and course.exchange_root.is_dir()
    outbound = course.exchange_root / COURSE_ID / "outbound"
    assert sorted(p.name for p in outbound.iterdir()) == sorted(course.labs())
    assert f"cd {work} && {BIN / 'jupyter'} lab" in printed


def test_the_demos_students_have_first_and_last_names(demo):
    work, printed = demo
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        names = {s.id: (s.first_name, s.last_name) for s in gb.students}
    assert names == demo_roster(SAMPLES)
    assert all(first and last for first, last in names.values())
    header = next(line for line in printed.splitlines() if line.startswith("student "))
    assert header.split()[-1] == "name"  # the gradebook it printed names them


def test_a_roster_names_up_to_143_students_apart():
    roster = demo_roster([f"s{i:03}" for i in range(143)])
    assert len(set(roster.values())) == 143 and all(" " not in f + last for f, last in roster.values())


# --- nbgrader's commands and formgrader -----------------------------------------------------------------------


def test_nbgrader_commands_in_the_course_and_in_the_demo_print_no_configuration_warning(demo, tmp_path):
    work, _ = demo
    course = new_course(tmp_path / "course")  # the repository's labs/nbgrader_config.py, in a folder of its own
    course.release([LAB1])
    for folder in (course.root, work):
        done = nbgrader(folder, "db", "assignment", "list")
        assert done.returncode == 0, done.stderr
        assert LAB1 in done.stdout
        assert WARNING not in done.stdout + done.stderr and "No nbgrader_config.py" not in done.stderr
    listed = nbgrader(work, "db", "student", "list").stdout  # "id (last, first) -- email, lms id" per student
    assert all(f"{student} ({last}, {first}) --" in listed for student, (first, last) in demo_roster(SAMPLES).items())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def formgrader(demo):
    """A Jupyter server started in the demo course, as the README's command starts it: its URL, token and log."""
    work, _ = demo
    port, token = free_port(), secrets.token_hex(16)
    server = subprocess.Popen(
        [BIN / "jupyter", "server", "--no-browser", "--allow-root", f"--port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}"],
        cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    log: list[str] = []

    def read() -> None:
        with server.stderr as stderr:  # closed once the server ends
            for line in stderr:
                log.append(line)
                lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    try:
        while not listening(port):  # each try waits for the server's next line, or a fifth of a second
            assert server.poll() is None and time.monotonic() < deadline, "".join(log)
            try:
                lines.get(timeout=0.2)
            except queue.Empty:
                pass
        yield url, token, log
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def get(url: str, token: str) -> str:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read().decode("utf-8")


def test_formgrader_in_the_demo_course_shows_its_submissions_named_students_and_scores(demo, formgrader):
    work, _ = demo
    url, token, log = formgrader
    assignments = {a["name"]: a for a in json.loads(get(f"{url}/formgrader/api/assignments", token))}
    assert WARNING not in "".join(log)
    assert set(assignments) == set(Course(work).labs())
    assert assignments[LAB1]["num_submissions"] == len(SAMPLES) and assignments[LAB1]["status"] == "released"
    students = {
        s["id"]: (s["first_name"], s["last_name"]) for s in json.loads(get(f"{url}/formgrader/api/students", token))
    }
    assert students == demo_roster(SAMPLES)
    scores = {s["student"]: s["score"] for s in json.loads(get(f"{url}/formgrader/api/submissions/{LAB1}", token))}
    assert scores == {row["student"]: row["score"] for row in Course(work).gradebook() if row["lab"] == LAB1}
    page = get(f"{url}/formgrader/manage_assignments", token)
    assert "does not exist" not in page and "warning-exchange" not in page
    assert WARNING not in "".join(log)  # nor while it served them
