"""The checks of a local batch, in a process of their own beside the grading process.

The grading process imports nbgrader (about half a second of CPU) and records each submission in the
gradebook; the checks import the MCP SDK (another half second), ask the fork server for learner hosts and
make their calls. In one process all of it takes turns at one interpreter, however many cores the machine
has. This process is started as the command starts, from a clean interpreter (never forked from the fork
server, whose children are learner hosts: the hidden checks and their cases never sit in a host's memory).
It begins the fork server, of which it is the only client, imports the checks while the grading process
imports nbgrader, and then grades the submissions it is sent, ``THREADS`` at a time, each exactly as
``grading.grade_task`` grades one in the grading process.

A request is one JSON message ``{"id", "lab", "code", "timeout", "options"}``; its answer is ``{"id", "results"}``
(``grading.grade_task``'s plain data) or ``{"id", "error": [type, message]}``. Either end seeing the other's end of the
connection ends: this process finishes the submissions it holds and exits; the grading side fails what it
was waiting for with ``ChecksProcessLost`` (a ``BrokenProcessPool``: the batch says the process grading it
stopped, and grades the rest in the grading process's threads).

``python -c`` (``_command``) runs ``serve`` on the connection's descriptor; ``begin`` and ``shared`` are the
grading side.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from multiprocessing.connection import Connection
from socket import SHUT_WR, socketpair
from typing import Any

from grader.engine import forkserver, supervisor

# How long closing waits for the process to finish what it holds and exit, before it is killed.
CLOSE_SECONDS = 10.0
# Submissions graded here at once. A grading spends most of its time waiting on the learner's host (another process)
# and the servers it starts, so three share one interpreter well, at no start-up cost (three graded a batch of 30 a
# few percent faster than two, docs/performance.md).
THREADS = 3


class ChecksProcessLost(BrokenProcessPool):
    """The checks' process ended (killed, out of memory) before it answered."""


class RemoteError(RuntimeError):
    """An exception raised by a grading in the checks' process; ``exception_words`` shows it under its own name."""


def _remote_error(name: str, message: str) -> Exception:
    return type(str(name), (RemoteError,), {})(message)


# --- the checks' side: runs in the process of its own ------------------------------------------


def warm() -> None:
    """What every grading here imports, imported now, while the grading process imports nbgrader."""
    import gc
    import importlib

    from grader.labs import LAB_MODULES, lab_checks

    for lab in LAB_MODULES:
        lab_checks(lab)
    # The grading itself, the checks' client (a host's session) and what run_check imports when it first runs.
    for module in ("grader.engine.grading", "servers.client", "mcp.shared.exceptions", "mcp_types"):
        importlib.import_module(module)
    gc.freeze()  # what is imported lives as long as the process: the cycle collector leaves it alone


def serve(fd: int, parent: int) -> None:
    """Grade what the grading process sends on ``fd`` until it closes its end."""
    from concurrent.futures import ThreadPoolExecutor

    supervisor.die_with_parent(parent)
    # A Ctrl-C at the terminal reaches this process too: the grading process answers it, and this one ends with it (its
    # connection closes, or it dies with it), with no traceback of its own. A handler, not SIG_IGN: the fork server
    # started below (a new program) does not inherit it.
    signal.signal(signal.SIGINT, lambda number, frame: None)
    forkserver.begin()  # the learner hosts' fork server boots in its own process while this one imports the checks
    from grader.engine import grading

    warm()
    connection = Connection(fd)
    sending = threading.Lock()
    turns = threading.Semaphore(THREADS)  # how many grade at once: THREADS, or fewer as a batch asks (``limit``)

    def grade(request: dict[str, Any]) -> None:
        with turns:
            try:
                answer = {
                    "id": request["id"],
                    "results": grading.grade_task(
                        request["lab"], request["code"], request["timeout"], **request["options"]
                    ),
                }
            except Exception as exc:  # noqa: BLE001 - the grading side turns it into "not graded", with why
                answer = {"id": request["id"], "error": [type(exc).__name__, str(exc)]}
        data = json.dumps(answer).encode()
        with sending, suppress(OSError):
            connection.send_bytes(data)

    with ThreadPoolExecutor(THREADS, thread_name_prefix="grading") as pool:
        while True:
            try:
                request = json.loads(connection.recv_bytes())
            except (EOFError, OSError):
                break
            if "limit" in request:  # sent before a batch's first submission, while none is being graded
                turns = threading.Semaphore(max(1, min(THREADS, int(request["limit"]))))
                continue
            if "isolation" in request:  # the grading process's measure of the sandbox: not probed again here
                grading.assume_isolation(request["isolation"])
                continue
            pool.submit(grade, request)
    connection.close()
    server = forkserver.shared()
    if server is not None:
        server.close()  # waited for, so its CPU and its hosts' count in this process's children


# --- the grading side ---------------------------------------------------------------------------


def _command(fd: int) -> list[str]:
    """This interpreter, with this process's module path, running ``serve`` on ``fd``."""
    code = (
        f"import sys; sys.path[:] = {sys.path!r}; from grader.engine.checks_process import serve; "
        f"serve({fd}, {os.getpid()})"
    )
    return [sys.executable, "-c", code]


class ChecksProcess:
    """The grading side: the process, and the submissions sent to it that it has not answered yet."""

    def __init__(self) -> None:
        ours, theirs = socketpair()
        # Nothing on the command's output, which is its report; its warnings go to the stderr both share.
        self.process = forkserver.start_beside(_command(theirs.fileno()), ours, theirs)
        self.owner = os.getpid()
        self._socket = ours  # shut for writing to say "no more"; the answers are read through the connection
        self._connection = Connection(os.dup(ours.fileno()))
        self._lock = threading.Lock()
        self._waiting: dict[int, Future] = {}
        self._next = 0
        self._lost: str | None = None
        threading.Thread(target=self._read, name="checks-process-answers", daemon=True).start()

    def submit(self, lab: str, code: str, timeout: float | None, **options: Any) -> Future:
        """Send one submission to be graded; the future holds ``grade_task``'s results."""
        future: Future = Future()
        with self._lock:
            if self._lost:
                raise ChecksProcessLost(self._lost)
            self._next += 1
            number = self._next
            self._waiting[number] = future
            request = {"id": number, "lab": lab, "code": code, "timeout": timeout, "options": options}
            try:
                self._connection.send_bytes(json.dumps(request).encode())
            except (OSError, ValueError) as exc:
                del self._waiting[number]
                self._lose_locked(f"the checks' process cannot be reached ({exc})")
                raise ChecksProcessLost(self._lost) from None
        return future

    def limit(self, at_once: int) -> None:
        """Grade at most ``at_once`` submissions at the same time (up to ``THREADS``); those sent beyond wait their turn
        there. Said before the batch's first submission."""
        self._say({"limit": at_once})

    def tell_isolation(self, measured: dict) -> None:
        """Hand over this process's measure of the sandbox (``grading.isolation()``), so that a batch that requires it
        does not start a probe of its own there before its first submission. Said before the batch's first one."""
        self._say({"isolation": measured})

    def _say(self, message: dict) -> None:
        """A message that needs no answer; nothing if the process is gone (the batch's first submission says so)."""
        with self._lock:
            if not self._lost:
                with suppress(OSError, ValueError):
                    self._connection.send_bytes(json.dumps(message).encode())

    def _read(self) -> None:
        while True:
            try:
                answer = json.loads(self._connection.recv_bytes())
            except (EOFError, OSError, ValueError):
                break
            with self._lock:
                future = self._waiting.pop(answer.get("id"), None)
            if future is None:
                continue
            if "error" in answer:
                future.set_exception(_remote_error(*answer["error"]))
            else:
                future.set_result(answer["results"])
        with self._lock:
            self._lose_locked("the checks' process stopped before it answered (killed, or out of memory?)")
        self._connection.close()
        self._socket.close()

    def _lose_locked(self, why: str) -> None:
        self._lost = self._lost or why
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            future.set_exception(ChecksProcessLost(self._lost))

    def finish(self) -> None:
        """Send no more: the process finishes what it holds and exits (``close`` waits for that)."""
        with self._lock:
            self._lost = self._lost or "the checks' process was closed"
            with suppress(OSError):
                self._socket.shutdown(SHUT_WR)

    def stop(self) -> None:
        """End the process now, without waiting for what it holds (the batch was interrupted): those fail with
        ``ChecksProcessLost``. Its fork server and learner hosts die with it."""
        if os.getpid() != self.owner:
            return
        with self._lock:
            self._lose_locked("the checks' process was stopped: the batch was interrupted")
        with suppress(OSError):
            self.process.kill()
        self.process.wait()

    def close(self) -> None:
        """Let the process finish what it holds and exit (waited for, a bounded while; then killed)."""
        if os.getpid() != self.owner:
            return
        self.finish()
        try:
            self.process.wait(CLOSE_SECONDS)
        except subprocess.TimeoutExpired:
            with suppress(OSError):
                self.process.kill()
            self.process.wait()


_shared: ChecksProcess | None = None
_shared_lock = threading.Lock()


def _begun_here() -> ChecksProcess | None:
    """The checks' process ``begin`` started in this process, finished or not (a parent's does not count); the caller
    holds ``_shared_lock``."""
    return _shared if _shared is not None and _shared.owner == os.getpid() else None


def begin() -> None:
    """Start this process's checks' process now (it starts the fork server and imports the checks while this process
    goes on); a batch graded here later sends its submissions to it. Nothing where it cannot start."""
    global _shared
    with _shared_lock:
        begun = _begun_here()
        if begun is not None and not begun._lost:
            return
        try:
            _shared = ChecksProcess()
        except Exception:  # noqa: BLE001 - no process (no interpreter to start, no descriptors left): the threads grade
            _shared = None
            return
    import atexit

    atexit.register(_shared.close)


def close() -> None:
    """Wait for the checks' process ``begin`` started in this process to finish what it holds and exit, as the
    command's exit does; a batch that finished it leaves it to exit on its own. Nothing when none was started here."""
    with _shared_lock:
        begun = _begun_here()
    if begun is not None:
        begun.close()


def shared() -> ChecksProcess | None:
    """The checks' process ``begin`` started in this process, while it can take submissions; else None."""
    with _shared_lock:
        begun = _begun_here()
        return None if begun is None or begun._lost else begun
