"""Dask workers prove they run the grader that sends them submissions, on a real two-worker LocalCluster.

A worker whose grader code or lab checks differ from the client's (here: a worker that reads its code from
a copy of the course with one hidden check changed) is refused at connect, with both versions named; with
--require-sandbox, so is a worker whose learner hosts would lack a protection. A worker that joins after
that check refuses each submission itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.engine import batch
from grader.engine.batch import (
    ResultStore,
    Task,
    WorkerRefused,
    checked_grade,
    code_version,
    grade_all,
    grade_task,
)

distributed = pytest.importorskip("dask.distributed", reason="the optional Dask extra is not installed")

LAB = "lab1_error_results"
CODE = "x = 1\n"  # answer cells that define nothing: graded quickly, every check fails
SCHEDULER_PORT = 9151  # this suite's ports: 9100-9199


def read_code_from(root: str) -> None:
    """On a worker: take the grader's code from ``root``, as a worker with another checkout would."""
    batch.PACKAGE_ROOT = Path(root)
    batch.code_version.cache_clear()


def hosts_without_the_sandbox() -> None:
    """On a worker: what isolation() measures on a machine where the grader is not root and user namespaces are off."""
    from grader.engine import grading

    grading._isolation = {
        "protections": [],
        "missing": ["user", "files", "network", "processes"],
        "fallbacks": ["not root"],
    }


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, scheduler_port=SCHEDULER_PORT
    ) as cluster:
        yield cluster


@pytest.fixture
def one_worker_changed(cluster):
    """Run ``change`` on one worker of the cluster; the worker is restarted afterwards, fresh."""
    client = distributed.Client(cluster)

    def change(function, *args) -> str:
        worker = min(client.scheduler_info()["workers"])
        client.run(function, *args, workers=[worker])
        return worker

    yield change
    client.restart()
    client.close()


@pytest.fixture(scope="module")
def other_checkout(tmp_path_factory) -> Path:
    """A copy of the course's code whose hidden checks of lab 1 differ by one line."""
    root = tmp_path_factory.mktemp("other-checkout")
    for folder in ("grader", "labkit", "servers"):
        shutil.copytree(batch.PACKAGE_ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    with (root / "grader/labs/lab1_error_results.py").open("a", encoding="utf-8") as checks:
        checks.write("\n# a check changed on this worker only\n")
    return root


def test_a_worker_running_other_checks_is_refused_at_connect_naming_both_versions(
    cluster, one_worker_changed, other_checkout, tmp_path, monkeypatch
):
    worker = one_worker_changed(read_code_from, str(other_checkout))
    ours = code_version()
    monkeypatch.setattr(batch, "PACKAGE_ROOT", other_checkout)
    theirs = batch.code_version.__wrapped__()  # the changed copy's digest, computed here
    monkeypatch.undo()
    assert theirs != ours

    with pytest.raises(WorkerRefused) as refused:
        grade_all([Task("ana", LAB, CODE)], ResultStore(tmp_path), scheduler=cluster.scheduler_address)

    message = str(refused.value)
    assert worker in message and theirs[:12] in message and ours[:12] in message
    assert "grader code or lab checks differ" in message and "sent no submission" in message
    assert not list(tmp_path.rglob("*.json"))  # nothing graded, nothing stored


def test_with_require_sandbox_a_worker_without_the_sandbox_is_refused_and_without_it_grades(
    cluster, one_worker_changed, tmp_path
):
    worker = one_worker_changed(hosts_without_the_sandbox)

    with pytest.raises(WorkerRefused) as refused:
        grade_all(
            [Task("ana", LAB, CODE, require_isolation=True)], ResultStore(tmp_path), scheduler=cluster.scheduler_address
        )
    message = str(refused.value)
    assert worker in message and "--require-sandbox" in message and "network isolation" in message
    assert "1 Dask worker(s)" in message  # the other worker, fully isolated, is not refused

    graded = grade_all([Task("ana", LAB, CODE)], ResultStore(tmp_path), scheduler=cluster.scheduler_address)
    assert [result.passed for result in graded["ana", LAB]] and not any(result.passed for result in graded["ana", LAB])


def test_a_worker_that_joined_after_the_check_refuses_each_submission_itself():
    sent_by = "0123456789ab" + "0" * 52  # the digest of another grader's code
    with pytest.raises(
        WorkerRefused, match=rf"runs grader version {code_version()[:12]}, and this grader runs version 0123456789ab"
    ):
        checked_grade(grade_task, sent_by, LAB, CODE)


def test_a_worker_running_this_grader_grades_what_it_is_sent():
    [first, *_] = checked_grade(grade_task, code_version(), LAB, CODE)
    assert first["passed"] is False
