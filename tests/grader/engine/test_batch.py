"""Batch grading: stored results by key, atomic writes, a progress line with the time left, and the same
results from one job, a pool of worker processes and a Dask cluster."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import batchfaults
import pytest

from grader.engine.batch import Progress, ResultStore, Task, grade_all, result_key
from grader.notebook import answer_code, read_notebook
from grader.pipeline import SAMPLE_SUBMISSIONS
from labkit.checking import CheckResult

LAB = "lab1_error_results"


def sample_code(student: str, lab: str = LAB) -> str:
    return answer_code(read_notebook(SAMPLE_SUBMISSIONS / student / lab / f"{lab}.ipynb"))


# --- the store -------------------------------------------------------------------------------------


def test_the_key_changes_with_the_code_and_the_lab() -> None:
    assert result_key(LAB, "a = 1") == result_key(LAB, "a = 1")
    assert result_key(LAB, "a = 1") != result_key(LAB, "a = 2")
    assert result_key(LAB, "a = 1") != result_key("lab2_scopes_expansion", "a = 1")


def test_the_key_changes_with_a_call_timeout_other_than_the_default() -> None:
    from grader.engine.grading import CALL_TIMEOUT_SECONDS

    assert result_key(LAB, "a = 1", 1.0) != result_key(LAB, "a = 1")
    assert result_key(LAB, "a = 1", CALL_TIMEOUT_SECONDS) == result_key(LAB, "a = 1", None) == result_key(LAB, "a = 1")
    assert Task("s", LAB, "a = 1", 1.0).key == result_key(LAB, "a = 1", 1.0)


def test_stored_results_are_found_only_under_their_own_key(tmp_path) -> None:
    store = ResultStore(tmp_path)
    results = [CheckResult("x", 2, True, "fine"), CheckResult("y", 1, False, "wrong", host_lost=True)]

    store.put(LAB, "ana", "k1", results)

    assert store.get(LAB, "ana", "k1") == results
    assert store.get(LAB, "ana", "k2") is None
    assert store.get(LAB, "bob", "k1") is None
    assert [p.name for p in (tmp_path / LAB).iterdir()] == ["ana.json"]  # no temporary file left behind


@pytest.mark.parametrize("content", ["", "{not json", '{"key": "k1"}', '{"key": "k1", "results": [{"name": 1}]}', "[]"])
def test_a_damaged_stored_result_is_graded_again_not_trusted(tmp_path, content) -> None:
    store = ResultStore(tmp_path)
    store.path(LAB, "ana").parent.mkdir(parents=True)
    store.path(LAB, "ana").write_text(content)

    assert store.get(LAB, "ana", "k1") is None


def test_stored_results_are_not_graded_again(tmp_path) -> None:
    # Results stored under the task's key are returned as they are: a rerun does not grade them again
    # (these ones could not come from grading: no check of lab 1 is named "stored").
    store = ResultStore(tmp_path)
    task = Task("ana", LAB, "print('hello')")
    fake = [CheckResult("stored", 1, True, "from the store")]
    store.put(LAB, "ana", task.key, fake)

    assert grade_all([task], store, jobs=1) == {("ana", LAB): fake}


# --- progress --------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_estimates_the_time_left_from_the_pace_so_far() -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress(10, "autograde", stream=out, clock=clock)
    assert progress.line().endswith("0/10 (0 %), 0 s elapsed, estimating time left")

    clock.now += 8
    progress.advance(4)

    assert "[#########...............] 4/10 (40 %), 8 s elapsed, about 12 s left" in progress.line()
    clock.now += 12
    progress.advance(6)
    assert progress.line().endswith("10/10 (100 %), 20 s elapsed, done")


def test_progress_in_a_log_prints_a_line_per_tenth_not_per_submission() -> None:
    out = io.StringIO()
    progress = Progress(40, "checks", stream=out, clock=Clock())
    for _ in range(40):
        progress.advance()
    lines = out.getvalue().splitlines()
    # The first submission (the first estimate), then one line at each tenth of the way.
    assert [line.split("] ")[1].split(" ")[0] for line in lines] == ["1/40"] + [f"{4 * n}/40" for n in range(1, 11)]
    assert lines[-1].startswith("checks [########################] 40/40 (100 %)")


# --- the same results however the batch runs -------------------------------------------------------

STUDENTS = ["solution", "blank", "retries_business_error", "empty_search_is_error"]


@pytest.fixture(scope="module")
def one_job(tmp_path_factory):
    tasks = [Task(s, LAB, sample_code(s)) for s in STUDENTS]
    return tasks, grade_all(tasks, ResultStore(tmp_path_factory.mktemp("one")), jobs=1)


def scores(results) -> dict:
    return {key: [(r.name, r.passed, r.message) for r in value] for key, value in results.items()}


def test_one_job_grades_each_submission_as_expected(one_job) -> None:
    expected = json.loads((SAMPLE_SUBMISSIONS / "expected.json").read_text())[LAB]["samples"]
    _, results = one_job
    for student in STUDENTS:
        assert sum(r.score for r in results[student, LAB]) == expected[student]["score"]


def test_two_threads_and_a_worker_process_give_the_same_results_as_one_job(one_job, tmp_path) -> None:
    tasks, one = one_job
    store = ResultStore(tmp_path)
    out = io.StringIO()

    two = grade_all(tasks, store, jobs=3, progress=Progress(len(tasks), "checks", stream=out))

    assert scores(two) == scores(one)
    assert sorted(p.stem for p in (tmp_path / LAB).glob("*.json")) == sorted(STUDENTS)
    assert out.getvalue().splitlines()[-1].startswith(f"checks [########################] {len(tasks)}/{len(tasks)}")


def test_a_dask_cluster_of_two_workers_gives_the_same_results_as_one_job(one_job, tmp_path) -> None:
    distributed = pytest.importorskip("dask.distributed", reason="the optional Dask extra is not installed")
    tasks, one = one_job
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        on_dask = grade_all(tasks, ResultStore(tmp_path), scheduler=cluster.scheduler_address)

    assert scores(on_dask) == scores(one)


def test_a_dask_cohort_is_sent_a_window_at_a_time_and_each_task_let_go_once_settled() -> None:
    """However large the cohort, the scheduler (and so the workers, and this client) holds a window of it: a task is
    sent only as one settles, and a settled one is released, its result no longer kept anywhere in the cluster."""
    distributed = pytest.importorskip("dask.distributed", reason="the optional Dask extra is not installed")
    from grader.engine import batch

    tasks = [Task(f"s{i:02}", LAB, "raise" if i == 7 else f"code {i}") for i in range(30)]
    held, outcomes, windows = [], {}, []

    def window(client) -> int:
        windows.append(len(client.nthreads()))
        if len(windows) == 4:
            raise OSError("the scheduler did not answer")  # once, mid-batch: the window stays as it was
        return 3

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:

        def settle(task, outcome) -> None:
            held.append(len(cluster.scheduler.tasks))  # the scheduler runs in this process; its workers do not
            try:
                outcomes[task.student] = outcome()[0]["message"]
            except Exception as exc:  # noqa: BLE001 - the one that raises is settled as its error
                outcomes[task.student] = repr(exc)

        batch._on_dask(tasks, cluster.scheduler_address, settle, batchfaults.grade, window=window)

    assert len(outcomes) == 30
    assert outcomes["s08"] == f"{LAB} graded code 8"
    assert "unhashable type" in outcomes["s07"]
    assert max(held) <= 3, held
    assert len(windows) >= 30 // 3 and set(windows) == {2}  # worked out again as the batch goes


def test_an_unreachable_scheduler_is_refused_with_what_to_do(tmp_path) -> None:
    pytest.importorskip("dask.distributed", reason="the optional Dask extra is not installed")
    from grader.engine.batch import SchedulerUnavailable

    with pytest.raises(
        SchedulerUnavailable, match=r"Cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9.*leave out --scheduler"
    ):
        grade_all([Task("ana", LAB, "x = 1")], ResultStore(tmp_path), scheduler="tcp://127.0.0.1:9")


@pytest.mark.parametrize(
    "changed",
    [
        "grader/labs/lab1_error_results.py",
        "grader/labs/lab2_cases.json",
        "labkit/checks/lab1_error_results.py",
        "servers/learner_host/host.py",
    ],
)
def test_a_change_to_any_checks_code_invalidates_stored_results(tmp_path, monkeypatch, changed) -> None:
    """The key of a stored result covers the hidden checks (grader) and the cases they read, the visible ones (labkit)
    and the host (servers)."""
    from grader.engine import batch

    for folder in ("grader", "labkit", "servers"):
        shutil.copytree(batch.PACKAGE_ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(batch, "PACKAGE_ROOT", tmp_path)
    version = batch.code_version.__wrapped__  # not the process's cached digest
    before = version()
    with (tmp_path / changed).open("a", encoding="utf-8") as handle:
        handle.write("\n")
    assert version() != before


# --- the grading process is a worker too -------------------------------------------------------------


def pooled(tasks, jobs: int, **options) -> dict:
    from grader.engine.batch import _on_pool

    results = {}

    def settle(task, outcome) -> None:
        results[task.student] = outcome()[0]["message"]  # the pid of the process that graded it

    _on_pool(tasks, jobs, settle, batchfaults.grade_where, **options)
    return results


def test_a_worker_still_starting_gets_no_submission_and_is_stopped_when_the_batch_is_done() -> None:
    import multiprocessing
    import os

    tasks = [Task(s, LAB, "now") for s in ("ana", "ben", "cai")]

    graded_by = pooled(tasks, 2, local=True, warm=batchfaults.never_warm, threads=1)

    # The grading process graded all three while the worker started; the worker, never ready, was not waited for.
    assert graded_by == dict.fromkeys(("ana", "ben", "cai"), str(os.getpid()))
    for child in multiprocessing.active_children():
        child.join(30)
    left = [child for child in multiprocessing.active_children() if child.is_alive() and running(child.pid)]
    assert not left, [(child, Path(f"/proc/{child.pid}/status").read_text()[:400]) for child in left]


def running(pid: int) -> bool:
    """Whether process ``pid`` still runs. ``is_alive()`` alone says so of a child that ended when another waiter of
    this process took its exit status (the status is then lost to multiprocessing), so the kernel is asked."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_worker_that_has_started_takes_submissions_beside_the_grading_process(tmp_path) -> None:
    import os

    fifo = tmp_path / "meet"
    os.mkfifo(fifo)
    # The grading process takes the first and waits in it until another process opens the pipe: only a started
    # worker can, by grading the second.
    tasks = [Task("ana", LAB, f"wait:{fifo}"), Task("ben", LAB, f"open:{fifo}")]

    graded_by = pooled(tasks, 2, local=True, threads=1)

    assert graded_by["ana"] == str(os.getpid())
    assert graded_by["ben"] != str(os.getpid())


def test_the_grading_process_grades_two_submissions_at_once_in_threads(tmp_path) -> None:
    import os
    import threading

    fifo = tmp_path / "meet"
    os.mkfifo(fifo)
    # Graded one after the other, the first would wait for ever for the second: only two at once can meet.
    tasks = [Task("ana", LAB, f"wait:{fifo}"), Task("ben", LAB, f"open:{fifo}")]
    graded_by: dict = {}
    batch = threading.Thread(target=lambda: graded_by.update(pooled(tasks, 2, local=True)), daemon=True)
    batch.start()
    batch.join(60)
    if batch.is_alive():  # let the waiting grading end, then fail
        with open(fifo, "wb"):
            pass
        batch.join(60)
        pytest.fail("the grading process graded one submission at a time")

    # Both in this process (threads), and no worker process was started for them.
    assert graded_by == dict.fromkeys(("ana", "ben"), str(os.getpid()))


def test_by_default_a_small_batch_starts_no_worker_process_and_a_large_one_uses_every_core(monkeypatch) -> None:
    from grader.engine import batch

    monkeypatch.setattr(batch, "cores", lambda: 4)
    monkeypatch.setattr(batch, "THREADS", 2)
    # Two at once in the checks' process (or the grading process's threads), then one more worker process per 64, up
    # to one per core beside the grading process.
    assert [batch.default_jobs(n) for n in (1, 12, 30, 63, 64, 127, 128, 192, 2000)] == [2, 2, 2, 2, 3, 3, 4, 5, 5]
    assert batch.default_jobs() == 5


def test_the_grader_does_not_pay_for_rfc3987_syntax_grammar_on_import() -> None:
    # jsonschema compiles that package's grammar on import (1-2 CPU-s per process) only to check "iri" formats.
    import subprocess
    import sys

    probe = "import sys, grader.pipeline, jsonschema; print(sys.modules.get('rfc3987_syntax') is None)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
