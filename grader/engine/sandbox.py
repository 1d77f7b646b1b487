"""Lock the learner host down before a submission's answer cells run in it.

Grading starts the host through ``lockedhost`` (under ``supervisor.py``, which sets the
operating-system limits). Here, inside the host, after it has imported what it needs and
before the answer cells run:

* an audit hook refuses, from then on, imports of the ``grader`` package (the checks and the
  reference model), opening files of the course other than ``servers/`` and the Python
  environment, reading other processes' details under ``/proc``, starting processes, and
  walking the garbage collector's object lists;
* the grader's modules the host imported are dropped from ``sys.modules``, so importing them
  again goes through the hook;
* the top level of each answer cell gets a time limit, so a cell that never ends costs the
  names it defines, not the whole submission;
* what the cells print while they load goes to stderr, never onto the MCP wire;
* a MemoryError or a "file too large" error raised in the learner's code fails the cell that
  raised it while the cells load, and later ends the host with an exit status the supervisor
  reports, so the check can say which limit was hit.

The last is watched only where the learner's code runs, because a watch on every Python call
doubled the host's CPU. From Python 3.12, through ``sys.monitoring``'s one process-wide event
for raised exceptions, which ignores every frame but the answer cells'. On Python 3.11:
* while it runs a learner's function for a harness tool (``watched``), with a trace function in
  the main thread, not while the host serves MCP;
* while the cells load, and in the worker threads where a learner's own server runs its sync
  tools, resources and prompts, by the error that escapes a cell or such a function through an
  answer cell's frame (``escaping``). A trace there runs the SDK's code the cells call (a learner's
  server builds a pydantic model for each tool) or the kit code those functions call several
  times slower: a fifth of a lab 3 host's CPU while its cells load, a tenth while it serves.
So on 3.11 the ``async`` handlers of a learner's own server (they run in the main thread) are not
watched, and a cell's top level and a learner server's sync handlers only by what escapes them: a
MemoryError they catch themselves is not reported as the memory limit. The limit itself holds either
way.

Python-level only: code that reaches the C library (ctypes) or walks from objects the host
hands it (a kit function's ``__globals__``) gets past the hook; the supervisor's limits, user
and mount namespace are what hold there. docs/grading-sandbox.md lists both.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path

from grader.engine.supervisor import EXIT_FILE_SIZE, EXIT_MEMORY, environment_prefixes, within

ANSWER_FILES = "<answer cell"  # the file names the host compiles answer cells under

PROCESS_EVENTS = {
    "os.exec",
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "os.spawn",
    "os.system",
    "pty.spawn",
    "subprocess.Popen",
}
GC_EVENTS = {"gc.get_objects", "gc.get_referrers", "gc.get_referents"}

GRADER_IMPORT = "Your answer cells may not import the grader ({name}); use only the names the lab gives you."
CLOSED_FILE = "Your code may not open {path}: the course's own files are not part of the lab."
OTHER_PROCESS = "Your code may not read {path}: other processes are not part of the lab."
NO_PROCESSES = "Your code may not start processes or run commands in the lab server; do the work in Python."
NO_GC_WALK = "Your code may not list the lab server's objects through gc."


class LimitExceeded(BaseException):
    """The top level of an answer cell hit a limit while it loaded (a BaseException: `except Exception` keeps it)."""


class TimeLimitExceeded(LimitExceeded):
    """The top level of an answer cell ran past its time limit."""


class MemoryLimitExceeded(LimitExceeded):
    """The top level of an answer cell asked for more memory than the host may use."""


class FileSizeLimitExceeded(LimitExceeded):
    """The top level of an answer cell wrote a file past the size limit."""


class Lockdown:
    """What the audit hook enforces once ``active`` is set."""

    def __init__(self, cell_seconds: float | None) -> None:
        self.course, self.open, self.grader = _paths()
        self.pid = str(os.getpid())
        self.cell_seconds = cell_seconds
        self.loading = False
        self.active = False
        self.monitored = False  # whether sys.monitoring watches the answer cells' exceptions (3.12+)
        self.walked = True  # whether the grader's modules were found by reading every loaded module's name

    def refused_path(self, file: object) -> str | None:
        if isinstance(file, int):
            return None  # an open descriptor: its path was checked when it was opened
        try:
            path = os.path.realpath(os.fsdecode(os.fspath(file)))
        except (TypeError, ValueError):
            return None
        parts = path.split(os.sep)
        if len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and parts[2] != self.pid:
            return OTHER_PROCESS.format(path=path)
        in_grader = self.grader is not None and within(path, self.grader)
        if in_grader or (within(path, self.course) and not any(within(path, folder) for folder in self.open)):
            return CLOSED_FILE.format(path=path)
        return None

    def hook(self, event: str, args: tuple) -> None:
        if not self.active:
            return
        if event == "open":
            refused = self.refused_path(args[0])
            if refused:
                raise PermissionError(refused)
        elif event == "import":
            name = args[0]
            if name == "grader" or name.startswith("grader."):
                raise ImportError(GRADER_IMPORT.format(name=name), name=name)
        elif event in PROCESS_EVENTS:
            raise PermissionError(NO_PROCESSES)
        elif event in GC_EVENTS:
            raise PermissionError(NO_GC_WALK)
        elif event == "exec" and self.loading and self.cell_seconds:
            code = args[0]
            if getattr(code, "co_filename", "").startswith(ANSWER_FILES):
                signal.setitimer(signal.ITIMER_REAL, self.cell_seconds)  # a fresh budget for each cell

    def too_long(self, signum: int, frame) -> None:
        running = frame
        while running is not None and not running.f_code.co_filename.startswith(ANSWER_FILES):
            running = running.f_back
        if running is None:
            return  # the host's own code between two cells: the next cell arms a fresh timer
        raise TimeLimitExceeded(
            f"this cell was still running after {self.cell_seconds:g} s, so it was stopped (an endless loop "
            "at the top level?); a cell should define functions and values, and do its work when they are called"
        )


def prepare(lab: str) -> None:
    """Import everything the host will need for ``lab`` while imports are still allowed."""
    from servers.learner_host import host

    # The host's own tables of labs: calling them imports each lab's harness and kit modules.
    host._hosts()
    kits = host._kits()
    if lab in kits:
        kits[lab]()
    import mcp.server.mcpserver  # the learner_server path of the labs where learners write the server
    import mcp.server.stdio  # noqa: F401 - run_stdio imports it when serving starts


_state: Lockdown | None = None  # the host's one lockdown, once lock_down() ran


@cache
def _paths() -> tuple[str, list[str], str | None]:
    """The course's folder; the folders inside it that stay readable (the host's own servers, the Python environment);
    the grader's package, closed wherever it is installed (the Python environment included). Worked out once per
    process (a fork server's, as it warms up, for every host it forks)."""
    course = str(Path(__file__).resolve().parents[2])  # grader/engine/sandbox.py
    grader = sys.modules.get("grader")
    package = str(Path(grader.__file__).resolve().parent) if getattr(grader, "__file__", None) else None
    return course, [os.path.join(course, "servers"), *environment_prefixes()], package


# The lockdown keeps these: they hold nothing of the grader's (this module, and the supervisor it takes its exit
# statuses from).
KEPT = frozenset({__name__, "grader.engine.supervisor"})
# What ``remember`` found: how many modules were loaded then, and the grader's among them.
_remembered: tuple[int, tuple[str, ...]] | None = None


def _grader_modules() -> list[str]:
    return [name for name in sys.modules if (name == "grader" or name.startswith("grader.")) and name not in KEPT]


def remember() -> None:
    """Note the grader's modules loaded now, for ``lock_down`` in a process forked from this one (a fork server's, once
    it has imported all it will): it then drops them without reading the name of every module loaded, which copies a
    page of the parent's memory for each, several hundred in all. Any module loaded after this, or gone, and the
    lockdown reads them all again."""
    global _remembered
    _paths()
    _remembered = (len(sys.modules), tuple(_grader_modules()))


def _limit(which: int, unit: str) -> str:
    soft, _ = resource.getrlimit(which)
    return "its limit" if soft == resource.RLIM_INFINITY else f"{soft // 2**20} {unit}"


def _watch_calls(frame, event: str, arg: object):
    """Trace function: watch the frames of answer cells only."""
    if frame.f_code.co_filename.startswith(ANSWER_FILES):
        frame.f_trace_lines = False
        return _watch_answer_frame
    return None


def _watch_answer_frame(frame, event: str, arg: object):
    """Trace function of an answer cell's frame (Python 3.11): see ``_limit_hit``."""
    if event == "exception":
        _limit_hit(frame, arg[1])
    return _watch_answer_frame


# The sys.monitoring tool this module registers (ids 0, 1, 2 and 5 are named for debuggers, coverage,
# profilers and optimizers).
MONITORING_TOOL = 3


def _raised(code, offset: int, error: BaseException) -> None:
    """sys.monitoring's RAISE callback (Python 3.12+): an exception raised in, or passing through, any frame."""
    if code.co_filename.startswith(ANSWER_FILES):
        _limit_hit(sys._getframe(1), error)


def _watch_with_monitoring() -> bool:
    """Watch exceptions in answer cells through sys.monitoring, where there is one (Python 3.12+)."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return False
    try:
        monitoring.use_tool_id(MONITORING_TOOL, "learner host limits")
    except ValueError:  # the id is taken (a debugger in the grader's own tests): trace instead
        return False
    monitoring.register_callback(MONITORING_TOOL, monitoring.events.RAISE, _raised)
    monitoring.set_events(MONITORING_TOOL, monitoring.events.RAISE)
    return True


def _limit_hit(frame, error: BaseException) -> None:
    """Turn a memory or file-size error in the learner's code into a limit the learner is told about.

    While the cells load, the error becomes the cell's own failure (the other cells still load);
    during a call, the host ends with a status the supervisor reports, and is restarted.
    """
    memory = isinstance(error, MemoryError)
    file_size = isinstance(error, OSError) and error.errno == errno.EFBIG
    if not (memory or file_size):
        return
    if not _state.loading:
        os._exit(EXIT_MEMORY if memory else EXIT_FILE_SIZE)
    where = f"line {frame.f_lineno} of {frame.f_code.co_filename.strip('<>')}"
    if memory:
        limit = _limit(resource.RLIMIT_AS, "MB")
        raise MemoryLimitExceeded(f"this cell tried to use more than {limit} of memory ({where}), so it was stopped")
    limit = _limit(resource.RLIMIT_FSIZE, "MB")
    raise FileSizeLimitExceeded(f"this cell tried to write a file larger than {limit} ({where}), so it was stopped")


def lock_down(cell_seconds: float | None) -> Lockdown:
    """Drop the grader's modules, then switch the audit hook and the limit watch on, for good."""
    global _state
    lockdown = _state = Lockdown(cell_seconds)
    remembered = _remembered
    lockdown.walked = remembered is None or remembered[0] != len(sys.modules)
    for name in _grader_modules() if lockdown.walked else remembered[1]:
        sys.modules.pop(name, None)
    sys.addaudithook(lockdown.hook)  # audit hooks cannot be removed: nothing in the host can turn it off
    lockdown.active = True
    lockdown.monitored = _watch_with_monitoring()
    if not lockdown.monitored:
        _watch_worker_calls()  # the worker threads where a learner's own server runs its sync functions
    return lockdown


def escaping(run, *args):
    """``run(*args)``; a memory or file-size error that escapes it through an answer cell's frame is the limit hit
    (``_limit_hit``) where it last passed through one, as a trace would have seen it there (Python 3.11, where nothing
    else watches what runs this way)."""
    try:
        return run(*args)
    except (MemoryError, OSError) as error:
        answer = None
        step = error.__traceback__
        while step is not None:
            if step.tb_frame.f_code.co_filename.startswith(ANSWER_FILES):
                answer = step.tb_frame  # the innermost answer cell's frame it passed through
            step = step.tb_next
        if answer is not None:
            _limit_hit(answer, error)  # either limit: ends the host, or while the cells load fails the cell
        raise


def cell_runner(lockdown: Lockdown):
    """How the host runs each answer cell's top level as the cells load (``load_learner_code``'s ``run``): ``exec``,
    watched by ``sys.monitoring`` (3.12+); on Python 3.11 under ``escaping``."""
    return exec if lockdown.monitored else partial(escaping, exec)


def _watch_worker_calls() -> None:
    """Python 3.11: what the SDK hands anyio's worker threads (a learner's server's sync tools, resources and prompts)
    runs under ``escaping``."""
    import anyio.to_thread

    run_sync = anyio.to_thread.run_sync

    async def run_sync_escaping(func, *args, **kwargs):
        return await run_sync(partial(escaping, func), *args, **kwargs)

    anyio.to_thread.run_sync = run_sync_escaping


def traced(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` under the trace that watches the answer cells' frames, for that call only."""
    previous = sys.gettrace()
    sys.settrace(_watch_calls)
    try:
        return fn(*args, **kwargs)
    finally:
        sys.settrace(previous)


def watch_learner_calls(lockdown: Lockdown) -> None:
    """On Python 3.11 (no sys.monitoring): each call of a learner's function by a lab 1 or lab 2 harness tool, and
    the reading of what it returned (``servers.learner_host.calls``), runs under the trace that watches the answer
    cells' frames. The rest of the tool's handler (the harness's own checks and conversions) runs untraced: a trace
    around the whole handler called a Python function for every call the harness made too, twice as many calls."""
    if lockdown.monitored:
        return
    from servers.learner_host import calls

    calls.run_learner_with(traced)


@contextmanager
def loading(lockdown: Lockdown) -> Iterator[None]:
    """While answer cells load: each cell's top level runs under a timer, and prints go to stderr."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    previous = signal.signal(signal.SIGALRM, lockdown.too_long)
    lockdown.loading = True
    try:
        yield
    finally:
        lockdown.loading = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os.dup2(wire, 1)
        os.close(wire)
