"""Grade many submissions at once: in parallel, resumable after a kill, the same results for any number of jobs.

Autograding a folder has two phases. First the checks: each submission's answer code is
graded (``grader.engine.grading.grade_code``: a learner host per submission, the checks in a
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

No submission can end a batch: a grading that fails in the grader (an exception out of the checks'
process, a worker process that dies, a Dask task that errs) makes that submission "not graded", with
why, and the batch goes on; a dead worker is replaced. A submission not graded is not stored, so the
next run tries it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import (
    FIRST_COMPLETED,
    CancelledError,
    ProcessPoolExecutor,
    wait,
)
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from dataclasses import asdict, dataclass
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TextIO

from grader.engine import checks_process, grading, supervisor
from grader.engine.grading import grade_task
from labkit.checking import CheckResult, capped, exception_words, neutral

STORE = ".grading"  # under the course folder
# Fault injection for the resumability tests: the process kills itself (SIGKILL, no clean-up) after
# this many submissions have been graded (phase "checks") or recorded (phase "record"), e.g. "checks:3" or
# "record:2"; or, with ":INT" ("record:2:INT"), is interrupted as a Ctrl-C at the terminal does: SIGINT to every
# process of its process group.
KILL_AFTER = "GRADER_KILL_AFTER"

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # grader/engine/batch.py


@lru_cache(maxsize=1)
def code_version() -> str:
    """A digest of the Python code of the grader, the visible checks (labkit) and the servers, and of the cases the
    hidden checks read (``grader/labs/*.json``): a change of any of them invalidates stored results."""
    digest = hashlib.sha256()
    paths = [path for folder in ("grader", "labkit", "servers") for path in (PACKAGE_ROOT / folder).rglob("*.py")]
    paths += (PACKAGE_ROOT / "grader" / "labs").glob("*.json")
    for path in sorted(paths):
        digest.update(str(path.relative_to(PACKAGE_ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def result_key(lab: str, code: str, timeout: float | None = None) -> str:
    """What a submission's results depend on: the grader's code, the lab, the answer code, and the
    call timeout when it is not the default (a result graded with 1 s per call is not one graded with 5)."""
    from grader.engine.grading import CALL_TIMEOUT_SECONDS

    limit = "" if timeout in (None, CALL_TIMEOUT_SECONDS) else f"\0timeout={float(timeout)!r}"
    # surrogatepass: a notebook's JSON may hold lone surrogates ("\\ud800"), which are not UTF-8 text.
    return hashlib.sha256(f"{code_version()}\0{lab}\0{code}{limit}".encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Task:
    student: str
    lab: str
    code: str
    timeout: float | None = None  # seconds per call into the learner's code (None: CALL_TIMEOUT_SECONDS)
    require_isolation: bool = False  # grade only with every protection of the sandbox (--require-sandbox)

    @property
    def key(self) -> str:
        return result_key(self.lab, self.code, self.timeout)

    @property
    def options(self) -> dict[str, Any]:
        """What ``grade`` takes beyond the lab, the code and the timeout (nothing, unless isolation is required)."""
        return {"require_isolation": True} if self.require_isolation else {}


@dataclass(frozen=True)
class NotGraded:
    """A submission the grader could not grade: why, in words, ending in what the instructor should do."""

    reason: str


def grading_failed(exc: BaseException) -> NotGraded:
    """Why a grading failed in the grader itself (not in the learner's code, whose failures are check results)."""
    if isinstance(exc, BrokenProcessPool):
        what = "the worker process grading it stopped before it finished (killed, or out of memory?)"
    else:
        what = f"the grader failed while grading it ({exception_words(exc)})"
    return NotGraded(
        capped(
            neutral(
                f"{what}; this is not a mark, and nothing was recorded for it. It may pass on a second try (if it "
                "fails the same way again, keep the submission and this message for the grader's maintainers): "
                "autograde again."
            )
        )
    )


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


def _kill_point() -> tuple[str, int, str] | None:
    phase, _, rest = os.environ.get(KILL_AFTER, "").partition(":")
    count, _, how = rest.partition(":")
    return (phase, int(count), how) if phase and count.isdigit() and how in ("", "INT") else None


def maybe_kill(phase: str, done: int) -> None:
    point = _kill_point()
    if point and point[:2] == (phase, done):
        if point[2] == "INT":
            os.killpg(os.getpgrp(), signal.SIGINT)
        else:
            os.kill(os.getpid(), signal.SIGKILL)


class Progress:
    """A progress line with the time left, estimated from the submissions finished so far."""

    def __init__(
        self, total: int, label: str, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
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


# A worker process costs about as much CPU to start (an interpreter, the grader's imports, its own fork server) as
# grading a dozen ordinary submissions, and on a busy machine that CPU comes out of the grading itself; beside the
# checks' process (``checks_process``), which already grades on a core of its own, it gains little on a small batch
# (a batch of 30 took longer with one than without on 2 cores, one of 200 a few percent less): by default, one more
# worker process for each this many submissions, up to the number of cores (docs/performance.md).
SUBMISSIONS_PER_WORKER = 64
# Submissions graded at once beside the grading process (``checks_process.THREADS``: in the checks' process, or else in
# the grading process's threads); a worker process grades one at a time.
THREADS = checks_process.THREADS


def cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def default_jobs(submissions: int | None = None) -> int:
    """The default number of submissions graded at once: ``THREADS`` in the checks' process (or the grading process's
    threads), and one in each worker process, of which there is one more for every ``SUBMISSIONS_PER_WORKER``
    submissions, up to one per core besides the grading process."""
    processes = cores() if submissions is None else max(1, min(cores(), 1 + submissions // SUBMISSIONS_PER_WORKER))
    return THREADS + processes - 1


def grade_all(
    tasks: Iterable[Task],
    store: ResultStore,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
    grade: Callable[..., list[dict[str, Any]]] = grade_task,
    on_result: Callable[[Task, list[CheckResult] | NotGraded], None] | None = None,
) -> dict[tuple[str, str], list[CheckResult] | NotGraded]:
    """Grade every task whose results are not stored yet; return the results of all, keyed (student, lab).

    ``jobs`` submissions at once on this machine (default: ``default_jobs`` for the batch's size), or the Dask cluster
    whose scheduler is at ``scheduler``. Each result is stored as soon as it arrives. A task whose
    grading fails in the grader comes back as ``NotGraded`` (not stored: the next run tries it again),
    and the others are graded all the same. ``grade(lab, code, timeout)`` grades one task (a module-level
    function, so worker processes can import it). ``on_result(task, results)``, when given, is called in this thread
    with each task graded here, once its results are stored, while the other tasks are still being graded (the
    stored ones are only returned).
    """
    tasks = list(tasks)
    results: dict[tuple[str, str], list[CheckResult] | NotGraded] = {}
    todo: list[Task] = []
    for task in tasks:
        stored = store.get(task.lab, task.student, task.key)
        if stored is None:
            todo.append(task)
        else:
            results[task.student, task.lab] = stored
    if progress:
        progress.advance(len(tasks) - len(todo))

    def settle(task: Task, outcome: Callable[[], list[dict[str, Any]]]) -> None:
        """Take one task's outcome: its results stored, or why it was not graded. Nothing it raises ends the batch."""
        try:
            graded = [CheckResult(**r) for r in outcome()]
        except Exception as exc:  # noqa: BLE001 - an error of the worker, the pool, Dask, or the data it sent
            results[task.student, task.lab] = grading_failed(exc)
        else:
            results[task.student, task.lab] = graded
            try:
                store.put(task.lab, task.student, task.key, graded)
            except OSError:  # a store that cannot be written: the results are still returned, and recorded from them
                pass
        if progress:
            progress.advance()
        maybe_kill("checks", len(results))
        if on_result is not None:
            on_result(task, results[task.student, task.lab])

    if not todo:
        return results
    jobs = jobs or default_jobs(len(todo))
    if scheduler:
        _on_dask(todo, scheduler, settle, grade)
    elif min(jobs, len(todo)) == 1 and not (grade is grade_task and _checks_process_begun()):
        # one worker, or one submission: no process to start for it
        for task in todo:
            settle(task, lambda task=task: grade(task.lab, task.code, task.timeout, **task.options))
    else:
        _on_pool(todo, jobs, settle, grade, local=grade is grade_task)
    return results


def _checks_process_begun() -> bool:
    return checks_process.shared() is not None


def _die_with(parent: int) -> None:
    """A worker's initializer: when the grader dies, even by SIGKILL, its workers die too (Linux)."""
    supervisor.die_with_parent(parent)


def _worker() -> ProcessPoolExecutor:
    # "spawn": the grader may hold threads (MCP sessions), and forking a threaded process is unsafe.
    return ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=_die_with, initargs=(os.getpid(),))


def _grading_thread() -> Any:
    """A local worker: one thread of this process, grading one submission at a time (``grade_task`` runs no learner
    code here)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(1, thread_name_prefix="grading")


def _warm() -> None:
    """A new worker's first work item: what grading imports and starts once, so it is ready for a submission.

    What it imported lives as long as the worker: frozen, the cycle collector no longer walks it on each full
    collection while the worker grades, nor once more as the worker ends (the batch waits for that end)."""
    import gc

    from grader.engine import forkserver, grading  # noqa: F401 - imported to be ready

    forkserver.shared()
    gc.freeze()


def _stop_now(worker: Any) -> None:
    """Stop a worker that is still starting: the batch is done, and it would only make the grader wait."""
    for process in list((getattr(worker, "_processes", None) or {}).values()):
        process.terminate()
    worker.shutdown(wait=False, cancel_futures=True)


def _on_pool(
    todo: list[Task],
    jobs: int,
    settle: Callable,
    grade: Callable,
    local: bool = False,
    warm: Callable = _warm,
    threads: int = THREADS,
) -> None:
    """Grade on ``jobs`` workers, each with one task at a time.

    With ``local`` (the engine's own ``grade_task``, which runs no learner code in this process), ``threads`` of
    them are threads of this process, which start grading at once; the others are worker processes, each a pool of its own,
    given a submission only once it has started and warmed up (``_warm``), so a small batch never waits on a
    worker's start: one still starting when the batch is done is stopped. When a worker process dies, the task it
    held is the one that was lost (not graded), and a fresh worker takes over the rest.
    """
    queue = list(reversed(todo))
    count = min(jobs, len(todo))
    workers: list[Any] = []
    ready: list[bool] = []
    warming: dict[Any, int] = {}
    checks = None
    threads_left = 0  # grading threads this batch may still start here in place of the checks' process
    if local:
        # Begun as the command started, it grades in place of the threads; it runs grade_task, so only that.
        checks = checks_process.shared() if grade is grade_task else None
        here = min(threads, count)
        if checks is None:
            workers += [_grading_thread() for _ in range(here)]
        else:
            # ``here`` at once there, and as many more queued in it: it goes on with them while this thread records.
            checks.limit(here)
            measured = grading.known_isolation()
            if measured is not None:
                checks.tell_isolation(measured)
            workers += [_Slot(checks) for _ in range(min(2 * here, len(todo)))]
            count += len(workers) - here
            threads_left = here
        ready += [True] * len(workers)
    while len(workers) < count:
        worker = _worker()
        warming[worker.submit(warm)] = len(workers)
        workers.append(worker)
        ready.append(not local)  # without a local worker, queue on the workers at once, as they start
    running: dict[Any, tuple[Task, int]] = {}
    completed = False

    def replace(slot: int) -> None:
        """A worker that broke: a fresh worker process in its place; or, in place of the checks' process (gone: killed,
        or out of memory), a grading thread of this process for each of its first slots, as where it never started,
        not new processes each with imports of its own, and its other slots, which only queued there, retired."""
        nonlocal threads_left
        lost = workers[slot]
        lost.shutdown(wait=False, cancel_futures=True)
        if not isinstance(lost, _Slot):
            workers[slot] = _worker()
        elif threads_left:
            workers[slot] = _grading_thread()
            threads_left -= 1
        else:
            ready[slot] = False

    def give(slot: int) -> None:
        while queue and ready[slot]:
            task = queue.pop()
            try:
                running[workers[slot].submit(grade, task.lab, task.code, task.timeout, **task.options)] = (task, slot)
                return
            except Exception as exc:  # noqa: BLE001 - the worker broke between two tasks, or cannot start
                replace(slot)
                settle(task, _raise(exc))

    try:
        for slot in range(len(workers)):
            give(slot)
        while running or (queue and warming):
            finished, _ = wait([*running, *warming], return_when=FIRST_COMPLETED)
            for future in finished:
                if future in warming:
                    slot = warming.pop(future)
                    if ready[slot]:
                        continue  # tasks were queued on it as it started: they say how it went
                    if future.exception() is not None:  # it could not start: the others grade without it
                        workers[slot].shutdown(wait=False, cancel_futures=True)
                        continue
                    ready[slot] = True
                    give(slot)
                    continue
                task, slot = running.pop(future)
                if isinstance(future.exception(), BrokenProcessPool):
                    replace(slot)
                give(slot)  # the worker's next submission first: settling may take a while (it may be recorded)
                settle(task, future.result)
        completed = True
    finally:
        # Interrupted (Ctrl-C, or the recording failed): nothing more is settled, so what the workers and the checks'
        # process hold is abandoned at once rather than waited for.
        starting = set(warming.values())
        for slot, worker in enumerate(workers):
            if slot in starting or not completed:
                _stop_now(worker)
            else:
                worker.shutdown(wait=True, cancel_futures=True)
        if checks is not None and completed:
            checks.finish()  # it exits once it has answered all it holds (the command's exit waits for it)
        elif checks is not None:
            checks.stop()


class _Slot:
    """One submission at a time in the checks' process (``checks_process``), where a local grading thread would be."""

    def __init__(self, checks: Any) -> None:
        self.checks = checks

    def submit(self, grade: Callable, lab: str, code: str, timeout: float | None, **options: Any):
        return self.checks.submit(lab, code, timeout, **options)  # ``grade`` is grade_task (``_on_pool``): what it runs

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """Nothing of its own to stop: the process is finished with the batch."""


def _raise(exc: Exception) -> Callable[[], Any]:
    def again() -> Any:
        raise exc

    return again


class SchedulerUnavailable(RuntimeError):
    """Dask is not installed, or its scheduler cannot be reached; the message says what to do."""


DASK_AHEAD = 2  # tasks in the cluster per worker thread: one being graded, one waiting for it
DASK_AHEAD_MIN = 8  # at least, for a cluster whose workers have not joined yet


def _dask_window(client: Any) -> int:
    """How many tasks to keep in the cluster at once: every worker thread busy, with the next one waiting."""
    return max(DASK_AHEAD_MIN, DASK_AHEAD * sum(client.nthreads().values()))


def _on_dask(
    todo: list[Task], scheduler: str, settle: Callable, grade: Callable, window: Callable[[Any], int] = _dask_window
) -> None:
    """Grade on the Dask cluster at ``scheduler``, a window of tasks at a time.

    Only ``window(client)`` tasks are in the cluster at once (worked out again each time that many have settled,
    for workers that joined or left), and each task is released once its outcome is settled here: the scheduler,
    the workers and this client hold a window of a cohort, not all of it, however large the cohort."""
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
        expected = code_version()
        require_isolation = any(task.require_isolation for task in todo)
        refuse_strangers(client, expected, require_isolation)
        waiting = iter(todo)
        held: dict[Any, Task] = {}
        running = as_completed()
        size, until = window(client), 0

        def fill() -> None:
            while len(held) < size and (task := next(waiting, None)) is not None:
                try:
                    # pure=False: two submissions with the same code are still two tasks, each graded on its own.
                    future = client.submit(
                        checked_grade, grade, expected, task.lab, task.code, task.timeout, pure=False, **task.options
                    )
                except Exception as exc:  # noqa: BLE001 - a task Dask cannot take (its data cannot be sent)
                    settle(task, _raise(exc))
                    continue
                held[future] = task
                running.add(future)

        fill()
        for future in running:
            settle(held.pop(future), lambda future=future: _dask_result(future))
            future.release()  # its result, on a worker, and its task, on the scheduler, are let go now
            until += 1
            if until >= size:
                with suppress(Exception):  # the scheduler did not answer: the window stays as it was
                    size = window(client)
                until = 0
            fill()


class WorkerRefused(SchedulerUnavailable):
    """A Dask worker runs other grader code than this grader, or (with --require-sandbox) has no full sandbox."""


def worker_identity(with_isolation: bool = False) -> dict[str, Any]:
    """What a worker says of itself: the digest of its own grader, checks and servers (``code_version``), and,
    when asked, the protections its learner hosts would be missing (``grading.isolation``)."""
    identity: dict[str, Any] = {"version": code_version()}
    if with_isolation:
        from grader.engine.grading import missing_protections

        identity["missing"] = missing_protections()
    return identity


def refusal(worker: str, identity: dict[str, Any], expected: str, require_isolation: bool) -> str | None:
    """Why ``worker`` may not grade for a grader whose code is ``expected`` (None: it may)."""
    version = str(identity.get("version", "unknown"))
    if version != expected:
        return (
            f"the Dask worker {worker} runs grader version {version[:12]}, and this grader runs version {expected[:12]}: "
            "its grader code or lab checks differ, so its results would be stored under a key they do not belong to. "
            "Give it the grader's checkout (or image) and restart it"
        )
    missing = identity.get("missing") or []
    if require_isolation and missing:
        return f"the Dask worker {worker} would run learner code without these protections: {'; '.join(missing)} (--require-sandbox)"
    return None


def refuse_strangers(client, expected: str, require_isolation: bool) -> None:
    """At connect: every worker of the cluster reports its identity, and any that is not this grader is refused."""
    try:
        identities = client.run(worker_identity, require_isolation)
    except Exception as exc:  # noqa: BLE001 - a worker that cannot even run the grader's identity check
        raise WorkerRefused(
            f"A Dask worker could not say which grader it runs ({type(exc).__name__}: {exc}); no submission was sent."
        ) from None
    refused = [
        why
        for worker, identity in sorted(identities.items())
        if (why := refusal(worker, identity, expected, require_isolation))
    ]
    if refused:
        raise WorkerRefused(
            f"Grading refuses {len(refused)} Dask worker(s), and sent no submission: " + "; ".join(refused) + "."
        )


def checked_grade(
    grade: Callable[..., list[dict[str, Any]]],
    expected: str,
    lab: str,
    code: str,
    timeout: float | None = None,
    **options: Any,
):
    """On a Dask worker: ``grade`` the submission, once the worker has shown it is the grader that sent it.

    Workers are checked at connect (``refuse_strangers``); this covers one that joined the cluster later.
    """
    require_isolation = bool(options.get("require_isolation"))
    why = refusal("that took this submission", worker_identity(require_isolation), expected, require_isolation)
    if why:
        raise WorkerRefused(why[0].upper() + why[1:] + ".")
    return grade(lab, code, timeout, **options)


def _dask_result(future) -> list[dict[str, Any]]:
    """A Dask task's result; its error (a worker lost, the task cancelled) raised as an Exception."""
    try:
        return future.result()
    except (CancelledError, asyncio.CancelledError) as exc:  # asyncio's is a BaseException
        raise RuntimeError(f"the Dask task was cancelled ({exc or 'its worker or the scheduler went away'})") from None
