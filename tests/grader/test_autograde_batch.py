"""Autograde a batch through the real CLI: any --jobs gives the same gradebook, and a run killed with SIGKILL
at any phase, or stopped with Ctrl-C, resumes without losing or regrading anything.

One course is released once; each case grades a copy of it. The kill is injected at an exact
point (``GRADER_KILL_AFTER``: the process sends itself SIGKILL, no clean-up), so each case is
deterministic.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.cli import AUTOGRADE_INTERRUPTED, INTERRUPTED_EXIT
from grader.course import COURSE_ID, graded_cells
from grader.engine.batch import KILL_AFTER, STORE, ResultStore, Task, grade_all
from grader.pipeline import DEFAULT_COURSE, SAMPLE_SUBMISSIONS, Course

REPO = Path(__file__).resolve().parents[2]
LAB4_MAX = json.loads((SAMPLE_SUBMISSIONS / "expected.json").read_text())["lab4_server_integration"]["max_score"]
SAMPLES = [
    ("solution", "lab1_error_results"),
    ("retries_business_error", "lab1_error_results"),
    ("solution", "lab2_scopes_expansion"),
    ("project_beats_local", "lab2_scopes_expansion"),
    ("missing_template", "lab3_tools_resources"),
    ("solution", "lab4_server_integration"),
    ("renamed_and_annotated", "lab4_server_integration"),
    ("blank", "lab4_server_integration"),
]


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("released") / "course"
    shutil.copytree(DEFAULT_COURSE / "source", root / "source")
    Course(root).release(sorted({lab for _, lab in SAMPLES}))
    return root


@pytest.fixture(scope="module")
def submissions(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("submissions")
    for student, lab in SAMPLES:
        shutil.copytree(SAMPLE_SUBMISSIONS / student / lab, folder / student / lab)
    return folder


def autograde(
    course: Path, submissions: Path, *options: str, kill_after: str | None = None
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != KILL_AFTER}
    if kill_after:
        env[KILL_AFTER] = kill_after
    return subprocess.run(
        [sys.executable, "-m", "grader", "autograde", str(submissions), "--course", str(course), *options],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        # A group of its own, as a terminal's foreground command has (a ":INT" kill point interrupts the whole group),
        # and Ctrl-C taken as an interactive shell leaves it, whatever this process was started with.
        process_group=0,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def outcome(course: Path) -> dict:
    """Every graded cell's score (gradebook) and verdict (the autograded notebook), per submission."""
    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        for student, lab in SAMPLES:
            nb = gb.find_submission_notebook(lab, lab, student)
            scores = {grade.name: grade.score for grade in nb.grades}
            autograded = nbformat.read(str(course / "autograded" / student / lab / f"{lab}.ipynb"), as_version=4)
            verdicts = {c.metadata.nbgrader["grade_id"]: c.outputs[0]["text"] for c in graded_cells(autograded)}
            found[student, lab] = (scores, verdicts)
    return found


def stamps(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def one_job(released, submissions, tmp_path_factory) -> dict:
    course = tmp_path_factory.mktemp("one-job") / "course"
    shutil.copytree(released, course)
    run = autograde(course, submissions, "--jobs", "1")
    assert run.returncode == 0, run.stderr
    return outcome(course)


def test_one_job_grades_every_submission(one_job) -> None:
    assert len(one_job) == len(SAMPLES)
    assert sum(one_job["solution", "lab4_server_integration"][0].values()) == LAB4_MAX
    assert sum(one_job["blank", "lab4_server_integration"][0].values()) == 0


def test_two_jobs_give_the_same_gradebook_and_verdicts_as_one(released, submissions, one_job, tmp_path) -> None:
    course = tmp_path / "course"
    shutil.copytree(released, course)

    run = autograde(course, submissions, "--jobs", "2")

    assert run.returncode == 0, run.stderr
    assert outcome(course) == one_job
    assert f"checks [########################] {len(SAMPLES)}/{len(SAMPLES)} (100 %)" in run.stderr
    assert "left" in run.stderr  # the estimate of time left


def test_the_command_grades_in_its_checks_process_and_records_without_the_mcp_sdk(
    released, submissions, one_job, tmp_path
) -> None:
    """The command's checks run in its checks' process (``grader.engine.checks_process``, with the fork server and the
    MCP sessions): the grading process never imports the MCP SDK nor starts a fork server of its own, and the
    gradebook and verdicts are those of the other runs."""
    course = tmp_path / "course"
    shutil.copytree(released, course)
    probe = (
        "import atexit, runpy, sys\n"
        "def report():\n"
        "    from grader.engine import forkserver\n"
        "    sdk = sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'mcp_types'})\n"
        "    print('PROBE', sdk, forkserver._shared is not None, file=sys.stderr)\n"
        "atexit.register(report)\n"
        f"sys.argv = ['grader', 'autograde', {str(submissions)!r}, '--course', {str(course)!r}]\n"
        "runpy.run_module('grader', run_name='__main__')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], check=False, cwd=REPO, capture_output=True, text=True, timeout=600
    )

    assert run.returncode == 0, run.stderr
    assert "PROBE [] False" in run.stderr
    assert outcome(course) == one_job


def test_a_submission_is_recorded_as_soon_as_its_checks_are_in(released, submissions, tmp_path) -> None:
    course = tmp_path / "course"
    shutil.copytree(released, course)

    killed = autograde(course, submissions, "--jobs", "1", kill_after="record:1")

    assert killed.returncode == -signal.SIGKILL
    # Killed once the first submission was recorded: the others were not checked yet (recorded after all the
    # checks, every submission's results would be stored), and the first is in the gradebook.
    checked = [Path(name) for name in stamps(course / STORE) if name.startswith("results")]
    assert len(checked) == 1, checked
    student, lab = checked[0].stem, checked[0].parent.name  # results/<lab>/<student>.json
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        assert gb.find_submission_notebook(lab, lab, student).score is not None


# --jobs 3: two submissions at once in the grading process's threads, one in a worker process.
@pytest.mark.parametrize("kill_after", ["checks:3", "record:5"])
def test_a_run_killed_at_any_phase_resumes_to_the_same_gradebook_without_regrading(
    released, submissions, one_job, tmp_path, kill_after
) -> None:
    course = tmp_path / "course"
    shutil.copytree(released, course)

    killed = autograde(course, submissions, "--jobs", "3", kill_after=kill_after)
    assert killed.returncode == -signal.SIGKILL
    before = stamps(course / STORE)
    assert before  # some work was kept

    rerun = autograde(course, submissions, "--jobs", "3")

    assert rerun.returncode == 0, rerun.stderr
    assert outcome(course) == one_job
    after = stamps(course / STORE)
    # Nothing kept before the kill was written again: no submission's checks ran twice, and no
    # submission recorded before the kill was recorded again.
    assert {name: after[name] for name in before} == before
    assert len([n for n in after if n.startswith("results")]) == len(SAMPLES)


# The default workers (the checks' process) and --jobs 4 (a worker process beside it); after a submission is checked,
# and after one is recorded.
@pytest.mark.parametrize(("kill_after", "jobs"), [("checks:2:INT", "2"), ("record:3:INT", "2"), ("record:2:INT", "4")])
def test_a_ctrl_c_stops_the_run_saying_how_to_go_on_and_a_run_again_finishes_it_without_regrading(
    released, submissions, one_job, tmp_path, kill_after, jobs
) -> None:
    course = tmp_path / "course"
    shutil.copytree(released, course)

    stopped = autograde(course, submissions, "--jobs", jobs, kill_after=kill_after)

    assert stopped.returncode == INTERRUPTED_EXIT, stopped.stderr
    # One sentence, from the command alone: no traceback from it, its checks' process, fork server or workers.
    assert stopped.stderr.rstrip().splitlines()[-1] == f"stopped: {AUTOGRADE_INTERRUPTED}"
    assert "Traceback" not in stopped.stderr and "KeyboardInterrupt" not in stopped.stderr, stopped.stderr
    # The submission being recorded is not taken for a broken one ("not graded <student>/<lab>: ...").
    assert not [line for line in stopped.stderr.splitlines() if line.startswith("not graded")], stopped.stderr
    before = stamps(course / STORE)
    assert [n for n in before if n.startswith("recorded")]  # what was recorded before the stop is kept

    rerun = autograde(course, submissions, "--jobs", jobs)

    assert rerun.returncode == 0, rerun.stderr
    assert outcome(course) == one_job
    after = stamps(course / STORE)
    assert {name: after[name] for name in before} == before


def test_a_rerun_of_a_finished_batch_grades_nothing_again(released, submissions, tmp_path) -> None:
    course = tmp_path / "course"
    shutil.copytree(released, course)
    assert autograde(course, submissions, "--jobs", "2").returncode == 0
    before = stamps(course / STORE)

    rerun = autograde(course, submissions, "--jobs", "2")

    assert rerun.returncode == 0
    assert stamps(course / STORE) == before
    assert "checks [########################]" in rerun.stderr


def test_a_changed_submission_is_graded_again_and_the_rest_are_not(released, submissions, tmp_path) -> None:
    course, changed = tmp_path / "course", tmp_path / "submissions"
    shutil.copytree(released, course)
    shutil.copytree(submissions, changed)
    assert autograde(course, changed, "--jobs", "2").returncode == 0
    # The student resubmits: the blank lab 4 replaced by the solution.
    shutil.copy(
        changed / "solution" / "lab4_server_integration" / "lab4_server_integration.ipynb",
        changed / "blank" / "lab4_server_integration" / "lab4_server_integration.ipynb",
    )
    before = stamps(course / STORE)

    assert autograde(course, changed, "--jobs", "2").returncode == 0

    after = stamps(course / STORE)
    rewritten = sorted(name for name in before if after[name] != before[name])
    assert rewritten == ["recorded/lab4_server_integration/blank", "results/lab4_server_integration/blank.json"]
    assert sum(outcome(course)["blank", "lab4_server_integration"][0].values()) == LAB4_MAX


# get_order answers correctly, after 1.5 s: within the default 5 s per call, past a limit of 1 s.
SLOW = ("def get_order(desk, order_id):\n", "def get_order(desk, order_id):\n    import time\n    time.sleep(1.5)\n")
CALLS_GET_ORDER = ("desk_not_found", "desk_success")


def test_the_call_timeout_reaches_the_worker_processes(released, tmp_path) -> None:
    lab = "lab1_error_results"
    notebook = nbformat.read(str(SAMPLE_SUBMISSIONS / "solution" / lab / f"{lab}.ipynb"), as_version=4)
    [cell] = [c for c in notebook.cells if SLOW[0] in c.source]
    cell.source = cell.source.replace(*SLOW)
    for student in ("slow", "slow_too"):  # two, so two workers each grade one
        (tmp_path / "submissions" / student / lab).mkdir(parents=True)
        nbformat.write(notebook, str(tmp_path / "submissions" / student / lab / f"{lab}.ipynb"))
    scores = {}
    for name, options in (("default", []), ("tight", ["--call-timeout", "1"])):
        course = tmp_path / name
        shutil.copytree(released, course)
        run = autograde(course, tmp_path / "submissions", "--jobs", "2", *options)
        assert run.returncode == 0, run.stderr
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
            for student in ("slow", "slow_too"):
                grades = gb.find_submission_notebook(lab, lab, student).grades
                scores[name, student] = {g.name: g.score for g in grades if g.name in CALLS_GET_ORDER}
    for student in ("slow", "slow_too"):
        assert all(score > 0 for score in scores["default", student].values()), scores
        assert set(scores["tight", student].values()) == {0}, scores


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--jobs", "0", "--jobs: '0' is not a whole number of 1 or more"),
        ("--call-timeout", "soon", "--call-timeout: 'soon' is not a number of seconds above 0"),
        ("--call-timeout", "-1", "--call-timeout: '-1' is not a number of seconds above 0"),
    ],
)
def test_a_bad_number_is_refused_saying_what_is_wanted(submissions, option: str, value: str, said: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "grader", "autograde", str(submissions), option, value],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert said in run.stderr
    assert "Traceback" not in run.stderr


def test_an_unreachable_scheduler_ends_in_a_sentence_saying_what_to_do(released, submissions, tmp_path) -> None:
    pytest.importorskip("dask.distributed", reason="the optional Dask extra is not installed")
    course = tmp_path / "course"
    shutil.copytree(released, course)

    run = autograde(course, submissions, "--scheduler", "tcp://127.0.0.1:9")

    assert run.returncode == 2
    assert "error: Cannot reach the Dask scheduler at tcp://127.0.0.1:9" in run.stderr
    assert "leave out --scheduler to grade on this machine" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_batch_of_one_submission_is_graded_without_starting_a_worker_process(tmp_path) -> None:
    graded_in = []

    def grade(lab, code, timeout=None, **options):
        graded_in.append(os.getpid())
        return []

    grade_all([Task("ana", "lab3_tools_resources", "x = 1")], ResultStore(tmp_path), jobs=2, grade=grade)

    assert graded_in == [os.getpid()]  # a worker would cost its start (imports, fork server) for one submission
