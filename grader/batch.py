"""Grade many submissions at once: in parallel, resumable after a kill, the same results for any number of jobs.

Autograding a folder has two phases. First the checks: each submission's answer code is
graded (``grader.grading.grade_code``: a learner host per submission, the checks in a
trusted process) in a pool of worker processes, or on a Dask cluster, and each result is
written to the course's results store, atomically, under a key made of the lab, the answer
code and the grader's own code. Then nbgrader records them, one submission at a time (its
gradebook is one SQLite file): the ``TrustedChecks`` step finds the stored results by key and
does not run the checks again.

A run killed at any moment loses at most the submissions in flight: a rerun finds the stored
results and the submissions recorded in the gradebook, and grades only the rest. A change of
a submission or of the grader's code changes the key, so nothing stale is reused. Every
submission is graded on its own, in a fresh learner host, so the results do not depend on the
number of jobs or on the order in which they finish.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TextIO

from grader.checking import CheckResult

STORE = ".grading"  # under the course folder
# Fault injection for the resumability tests: the process kills itself (SIGKILL, no clean-up) after
# this many submissions have been graded (phase "checks") or recorded (phase "record").
KILL_AFTER = "GRADER_KILL_AFTER"  # e.g. "checks:3" or "record:2"

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def code_version() -> str:
    """A digest of the grader's and the servers' Python code: a change of either invalidates stored results."""
    digest = hashlib.sha256()
    for folder in ("grader", "servers"):
        for path in sorted((PACKAGE_ROOT / folder).rglob("*.py")):
            digest.update(str(path.relative_to(PACKAGE_ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def result_key(lab: str, code: str, timeout: float | None = None) -> str:
    """What a submission's results depend on: the grader's code, the lab, the answer code, and the
    call timeout when it is not the default (a result graded with 1 s per call is not one graded with 5)."""
    from grader.grading import CALL_TIMEOUT_SECONDS

    limit = "" if timeout in (None, CALL_TIMEOUT_SECONDS) else f"\0timeout={float(timeout)!r}"
    return hashlib.sha256(f"{code_version()}\0{lab}\0{code}{limit}".encode()).hexdigest()


@dataclass(frozen=True)
class Task:
    student: str
    lab: str
    code: str
    timeout: float | None = None  # seconds per call into the learner's code (None: CALL_TIMEOUT_SECONDS)

    @property
    def key(self) -> str:
        return result_key(self.lab, self.code, self.timeout)


class ResultStore:
    """The stored check results of a course, one JSON file per submission, written atomically."""

    def __init__(self, folder: Path) -> None:
        self.root = Path(folder)

    @classmethod
    def of_course(cls, course_root: Path) -> ResultStore:
        return cls(Path(course_root) / STORE / "results")

    def path(self, lab: str, student: str) -> Path:
        return self.root / lab / f"{student}.json"

    def get(self, lab: str, student: str, key: str) -> list[CheckResult] | None:
        try:
            data = json.loads(self.path(lab, student).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        try:
            return [CheckResult(**r) for r in data["results"]]
        except (KeyError, TypeError):
            return None

    def put(self, lab: str, student: str, key: str, results: list[CheckResult]) -> None:
        path = self.path(lab, student)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "results": [asdict(r) for r in results]}), encoding="utf-8")
        os.replace(tmp, path)  # a reader sees the old file or the new one, never half of one

    # nbgrader has recorded a submission's results in the gradebook: a rerun need not record it again.
    def recorded_path(self, lab: str, student: str) -> Path:
        return self.root.parent / "recorded" / lab / student

    def mark_recorded(self, lab: str, student: str, key: str) -> None:
        path = self.recorded_path(lab, student)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(key, encoding="utf-8")
        os.replace(tmp, path)

    def is_marked_recorded(self, lab: str, student: str, key: str) -> bool:
        try:
            return self.recorded_path(lab, student).read_text(encoding="utf-8") == key
        except OSError:
            return False

    def forget_recorded(self, lab: str, student: str) -> None:
        self.recorded_path(lab, student).unlink(missing_ok=True)


def grade_task(lab: str, code: str, timeout: float | None = None) -> list[dict[str, Any]]:
    """Grade one submission's answer code; plain data, so it can cross process and machine boundaries."""
    from grader.grading import CALL_TIMEOUT_SECONDS, grade_code

    return [asdict(r) for r in grade_code(lab, code, timeout=timeout or CALL_TIMEOUT_SECONDS)]


def _kill_point() -> tuple[str, int] | None:
    value = os.environ.get(KILL_AFTER, "")
    phase, _, count = value.partition(":")
    return (phase, int(count)) if phase and count.isdigit() else None


def maybe_kill(phase: str, done: int) -> None:
    point = _kill_point()
    if point and point == (phase, done):
        os.kill(os.getpid(), 9)


class Progress:
    """A progress line with the time left, estimated from the submissions finished so far."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.label, self.done = total, label, 0
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.started = clock()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._shown_tenth = -1

    def line(self) -> str:
        width = 24
        filled = width * self.done // self.total if self.total else width
        elapsed = self.clock() - self.started
        if self.done and self.done < self.total:
            left = f"about {elapsed / self.done * (self.total - self.done):.0f} s left"
        elif self.done >= self.total:
            left = "done"
        else:
            left = "estimating time left"
        pct = 100 * self.done // self.total if self.total else 100
        return f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} ({pct} %), {elapsed:.0f} s elapsed, {left}"

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.tty:
            end = "\n" if self.done >= self.total else ""
            self.stream.write("\r" + self.line() + end)
        else:  # a log: one line per tenth of the way, not one per submission
            tenth = 10 * self.done // self.total if self.total else 10
            if tenth != self._shown_tenth:
                self._shown_tenth = tenth
                self.stream.write(self.line() + "\n")
        self.stream.flush()


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def grade_all(
    tasks: Iterable[Task],
    store: ResultStore,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> dict[tuple[str, str], list[CheckResult]]:
    """Grade every task whose results are not stored yet; return the results of all, keyed (student, lab).

    ``jobs`` worker processes on this machine (default: the number of cores), or the Dask cluster
    whose scheduler is at ``scheduler``. Each result is stored as soon as it arrives.
    """
    tasks = list(tasks)
    results: dict[tuple[str, str], list[CheckResult]] = {}
    todo: list[Task] = []
    for task in tasks:
        stored = store.get(task.lab, task.student, task.key)
        if stored is None:
            todo.append(task)
        else:
            results[task.student, task.lab] = stored
    if progress:
        progress.advance(len(tasks) - len(todo))

    def arrived(task: Task, data: list[dict[str, Any]]) -> None:
        graded = [CheckResult(**r) for r in data]
        store.put(task.lab, task.student, task.key, graded)
        results[task.student, task.lab] = graded
        if progress:
            progress.advance()
        maybe_kill("checks", len(results))

    if not todo:
        return results
    if scheduler:
        _on_dask(todo, scheduler, arrived)
    elif (jobs or default_jobs()) == 1:
        for task in todo:
            arrived(task, grade_task(task.lab, task.code, task.timeout))
    else:
        _on_pool(todo, jobs or default_jobs(), arrived)
    return results


def _die_with(parent: int) -> None:
    """A worker's initializer: when the grader dies, even by SIGKILL, its workers die too (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: a worker outlives a killed grader until its task ends
        pass
    if os.getppid() != parent:  # the grader died before the line above took effect
        os._exit(1)


def _on_pool(todo: list[Task], jobs: int, arrived: Callable[[Task, list], None]) -> None:
    # "spawn": the grader may hold threads (MCP sessions), and forking a threaded process is unsafe.
    workers = min(jobs, len(todo))
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_die_with, initargs=(os.getpid(),)) as pool:
        pending = {pool.submit(grade_task, t.lab, t.code, t.timeout): t for t in todo}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                arrived(pending.pop(future), future.result())


class SchedulerUnavailable(RuntimeError):
    """Dask is not installed, or its scheduler cannot be reached; the message says what to do."""


def _on_dask(todo: list[Task], scheduler: str, arrived: Callable[[Task, list], None]) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise SchedulerUnavailable(
            "--scheduler needs Dask's distributed scheduler, which is not installed. "
            "Install it with `.venv/bin/pip install -e '.[dask]'`, or leave out --scheduler to grade on this machine."
        ) from None
    try:
        client = Client(scheduler, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise SchedulerUnavailable(
            f"Cannot reach the Dask scheduler at {scheduler} ({exc}). Check the address (tcp://HOST:PORT) and that the "
            "scheduler is running, or leave out --scheduler to grade on this machine."
        ) from None
    with client:
        # pure=False: two submissions with the same code are still two tasks, each graded on its own.
        futures = {client.submit(grade_task, t.lab, t.code, t.timeout, pure=False): t for t in todo}
        for future in as_completed(futures):
            arrived(futures[future], future.result())
