"""The checks' process: a local batch's checks graded in a process beside the grading process, with the results the
grading process would get; a grading that fails there, or the process dying, costs the submissions it held (not
graded, with why), never the batch; and what the grading process imports to record results leaves the MCP SDK out."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures.process import BrokenProcessPool

import pytest

from grader.engine import batch, checks_process
from grader.engine.batch import NotGraded, ResultStore, Task, grade_all, grade_task, grading_failed
from grader.notebook import answer_code, read_notebook
from grader.pipeline import SAMPLE_SUBMISSIONS

LAB = "lab1_error_results"


def sample_code(student: str, lab: str = LAB) -> str:
    return answer_code(read_notebook(SAMPLE_SUBMISSIONS / student / lab / f"{lab}.ipynb"))


@pytest.fixture
def checks():
    checks_process.begin()
    process = checks_process.shared()
    assert process is not None
    yield process
    process.close()
    assert process.process.returncode is not None  # it ended: closing waits for it


def test_it_grades_as_the_grading_process_would(checks) -> None:
    codes = {student: sample_code(student) for student in ("solution", "blank", "retries_business_error")}
    futures = {student: checks.submit(LAB, code, None) for student, code in codes.items()}

    for student, code in codes.items():
        assert futures[student].result(timeout=120) == grade_task(LAB, code), student


def test_a_grading_that_fails_there_is_reported_under_its_own_name_and_the_process_goes_on(checks) -> None:
    failed = checks.submit("lab9_unknown", "x = 1", None)

    with pytest.raises(checks_process.RemoteError) as caught:
        failed.result(timeout=120)
    assert type(caught.value).__name__ == "UnknownLab"
    assert "UnknownLab: " in grading_failed(caught.value).reason
    assert checks.submit(LAB, sample_code("blank"), None).result(timeout=120) == grade_task(LAB, sample_code("blank"))


def test_a_killed_process_fails_what_it_held_and_is_not_offered_again(checks) -> None:
    held = checks.submit(LAB, sample_code("solution"), None)  # sent while it still starts: no answer can be in yet
    checks.process.kill()

    with pytest.raises(BrokenProcessPool):
        held.result(timeout=60)
    assert checks_process.shared() is None  # a batch after it grades in the grading process's threads
    with pytest.raises(BrokenProcessPool):
        checks.submit(LAB, "x = 1", None)
    assert "stopped before it finished" in grading_failed(BrokenProcessPool()).reason


def test_a_batch_sends_its_checks_there_one_at_a_time_or_several(checks, tmp_path) -> None:
    students = ("solution", "blank", "retries_business_error")
    tasks = [Task(student, LAB, sample_code(student)) for student in students]

    one = grade_all(tasks, ResultStore(tmp_path / "one"), jobs=1)
    assert checks._next == len(tasks)  # every submission went to the checks' process, none was graded here
    # A second batch in the same process: the first one finished it, so this one grades in this process's threads.
    assert checks_process.shared() is None
    two = grade_all(tasks, ResultStore(tmp_path / "two"), jobs=2)

    assert one == two
    assert {key: [r.passed for r in results] for key, results in one.items()} == {
        (t.student, LAB): [r["passed"] for r in grade_task(LAB, t.code)] for t in tasks
    }


# One at a time (one slot grading, one queued) and three (three grading, three queued).
@pytest.mark.parametrize("jobs", [1, 3])
def test_a_process_lost_mid_batch_costs_the_submissions_it_held_and_threads_here_grade_the_rest(
    checks, tmp_path, monkeypatch, jobs
) -> None:
    samples = ("solution", "blank", "retries_business_error")
    students = [f"{samples[i % 3]}__{i}" for i in range(10)]
    tasks = [Task(student, LAB, sample_code(student.split("__")[0])) for student in students]
    seen = []

    def kill_after_the_first(task, results) -> None:
        seen.append(task.student)
        if len(seen) == 1:
            checks.process.kill()

    def no_worker_process():
        raise AssertionError("a worker process was started in place of the checks' process")

    # Gone (killed, out of memory), it is replaced by grading threads of this process, as where it never started: no
    # worker process, each with imports of its own, for each of its slots.
    monkeypatch.setattr(batch, "_worker", no_worker_process)
    results = grade_all(tasks, ResultStore(tmp_path), jobs=jobs, on_result=kill_after_the_first)

    assert sorted(seen) == sorted(students)
    lost = [student for student in students if isinstance(results[student, LAB], NotGraded)]
    assert 1 <= len(lost) <= 2 * jobs  # those being graded there, and those queued behind them
    assert all("stopped before it finished" in results[student, LAB].reason for student in lost)
    assert len(lost) < len(students)
    for student in students:
        if student not in lost:  # graded by a grading thread here
            code = sample_code(student.split("__")[0])
            assert [r.passed for r in results[student, LAB]] == [r["passed"] for r in grade_task(LAB, code)]


def test_a_batch_without_it_grades_in_this_process(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(checks_process, "_shared", None)
    assert not batch._checks_process_begun()
    tasks = [Task("blank", LAB, sample_code("blank"))]

    assert [r.passed for r in grade_all(tasks, ResultStore(tmp_path), jobs=2)["blank", LAB]] == [
        r["passed"] for r in grade_task(LAB, tasks[0].code)
    ]


def test_recording_reads_every_lab_and_shows_results_without_the_mcp_sdk() -> None:
    """What the grading process runs besides the checks (the pipeline, each lab's checks read for names, points and
    titles, answer code taken from a notebook, a hidden check's result as shown) imports no part of the MCP SDK:
    those imports (half a second) are the checks' process's."""
    probe = (
        "import sys\n"
        "import grader.pipeline, grader.course\n"
        "from grader.labs import LAB_MODULES, lab_checks\n"
        "from grader.notebook import answer_code, read_notebook\n"
        "from labkit.checking import CheckResult, as_shown\n"
        f"answer_code(read_notebook({str(SAMPLE_SUBMISSIONS / 'solution' / LAB / (LAB + '.ipynb'))!r}))\n"
        "for lab in LAB_MODULES:\n"
        "    for check in lab_checks(lab).checks.values():\n"
        "        as_shown(check, CheckResult(check.name, check.points, False, 'x (Your answer cells failed to run: y.)'))\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'mcp_types'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_closing_waits_for_the_checks_process_to_exit_idle_or_finished_by_a_batch(monkeypatch) -> None:
    monkeypatch.setattr(checks_process, "_shared", None)
    checks_process.close()  # none started here: nothing to wait for
    for finished_by_a_batch in (False, True):
        checks_process.begin()
        begun = checks_process.shared()
        assert begun is not None
        if finished_by_a_batch:
            begun.finish()  # as a batch leaves it: no longer shared, still to be waited for
        checks_process.close()
        assert begun.process.poll() is not None
        monkeypatch.setattr(checks_process, "_shared", None)


def test_where_it_cannot_start_there_is_none_and_batches_grade_in_this_process(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(checks_process, "_shared", None)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))

    checks_process.begin()

    assert checks_process.shared() is None
    assert not batch._checks_process_begun()


def test_a_batch_hands_over_the_grading_process_measure_of_the_sandbox(checks, monkeypatch, tmp_path) -> None:
    """With ``--require-sandbox`` the grading process has measured the sandbox before the batch: the checks' process
    takes that measure instead of probing again. Told here that network isolation is missing, it refuses to run the
    learner's code for that reason, which its own probe (on a machine that isolates fully, or not) would not give."""
    from grader.engine import grading, supervisor

    told = {
        "protections": [p for p in supervisor.PROTECTIONS if p != "network"],
        "missing": ["network"],
        "fallbacks": [],
    }
    monkeypatch.setattr(grading, "_isolation", told)

    results = grade_all([Task("ana", LAB, sample_code("solution"), require_isolation=True)], ResultStore(tmp_path))

    assert isinstance(results["ana", LAB], NotGraded)
    assert "SandboxUnavailable" in results["ana", LAB].reason
    assert supervisor.PROTECTIONS["network"] in results["ana", LAB].reason
    assert checks._next == 1  # refused there, not here


def test_a_batch_graded_by_another_function_is_not_sent_there(checks) -> None:
    """The checks' process runs ``grade_task``: a batch given another grading function grades with that one, here."""
    import os

    import batchfaults

    from grader.engine.batch import _on_pool

    graded_by = {}

    def settle(task, outcome) -> None:
        graded_by[task.student] = outcome()[0]["message"]  # the pid of the process that graded it

    _on_pool([Task(s, LAB, "now") for s in ("ana", "ben")], 2, settle, batchfaults.grade_where, local=True)

    assert graded_by == dict.fromkeys(("ana", "ben"), str(os.getpid()))
    assert checks._next == 0


def test_an_interrupted_batch_stops_the_process_at_once_and_keeps_what_was_stored(checks, tmp_path) -> None:
    """Ctrl-C while a batch is recorded: the batch stops there, the checks' process is stopped without finishing what it
    holds (the command exits at once, not once those are graded), and what was stored before the stop stays."""
    students = ("solution", "blank", "retries_business_error", "solution__2", "blank__2")
    tasks = [Task(student, LAB, sample_code(student.split("__")[0])) for student in students]
    store = ResultStore(tmp_path)

    def interrupted(task, results) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        grade_all(tasks, store, jobs=1, on_result=interrupted)

    assert checks.process.poll() is not None  # stopped, not left to finish the submissions it held
    assert checks_process.shared() is None
    stored = [t.student for t in tasks if store.get(t.lab, t.student, t.key) is not None]
    assert len(stored) == 1  # the first one in, stored before it was handed on: the next run does not grade it again
