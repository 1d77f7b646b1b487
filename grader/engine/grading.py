"""Grade one submission's answer code: start the learner host over stdio, run the lab's checks.

The checks run here, in the trusted grader process; the learner's code runs only in the host
subprocess, under the limits below (docs/grading-sandbox.md lists them, with what the learner
sees and what they do not cover). A check whose call hangs, crashes the host or hits a limit
costs that check alone: the host is stopped, the check's message says what happened, and a
fresh host serves the checks that follow.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from grader.engine import forkserver, supervisor
from grader.labs import lab_checks
from labkit import labstate
from labkit.checking import TIMED_OUT, CheckResult, run_check

# Limits on the learner host; grade_code takes each as a keyword argument (``timeout`` for the first).
CALL_TIMEOUT_SECONDS = 5.0  # wall clock of one call into learner code; a correct handler answers in milliseconds, a host starts in under 1 s
SUBMISSION_SECONDS = 180.0  # wall clock of all checks of one submission; a submission whose every call hangs still ends
CPU_SECONDS = 10  # CPU time of one host process, its start included (0.05 s forked, 0.6 s as a new program); catches busy threads the call timeout misses
MEMORY_MB = 512  # address space of one host process; the host with its libraries maps 100 to 250 MB
PROCESSES = 64  # processes and threads of one host; it runs a handful of threads and answer code needs no processes
FILE_MB = 16  # the largest file answer code may write; the labs write small JSON files
OUTPUT_BYTES = 1_000_000  # what answer code prints (stdout and stderr together); a few lines are enough to debug
MESSAGE_BYTES = 8_000_000  # one message from the host to the grader; lab results are a few kilobytes
CELL_SECONDS = 3.0  # the top level of one answer cell while it loads; cells define things, calls do the work
# Once a call of a submission has hung, each later call gets this much: a hang is rarely alone (every check
# calling the same looping handler would cost the full timeout), and a working handler answers in milliseconds.
HUNG_CALL_TIMEOUT_SECONDS = 2.0

COURSE = Path(supervisor.__file__).resolve().parents[2]  # grader/engine/supervisor.py
# What of the course a learner host sees, in a file-system view of its own: the host, the kits it hands
# out, the protocol wiring, and the engine's own modules that run inside the host (the lockdown, the exit
# statuses it shares with the supervisor, the fork server a warm host was forked from). Nothing of the
# reference model, the checks, the solutions or the rest of the grader: none of these modules imports them
# (tests/grader/engine/test_isolation.py keeps it so).
ENGINE_IN_HOST = (
    "grader/__init__.py",
    "grader/engine/__init__.py",
    "grader/engine/forkserver.py",
    "grader/engine/lockedhost.py",
    "grader/engine/sandbox.py",
    "grader/engine/supervisor.py",
)
HOST_FILES = (
    *ENGINE_IN_HOST,
    "servers/__init__.py",
    "servers/toolkit.py",
    "servers/pipes.py",
    "servers/in_turn.py",
    "servers/learner_host",
    "servers/support_desk/__init__.py",
    "servers/support_desk/kit.py",
    "servers/support_desk/tools.py",
    "servers/support_desk/world.py",
)
# What a server a learner's lab 2 configuration names sees: the course's servers, and the one module of
# the reference model they build their results with.
SERVER_FILES = ("servers", "grader/__init__.py", "grader/taxonomy.py")
# Folders the view must cover wherever they are (the grader's package installed among the libraries, say),
# and, where no view can be made, the folders the older mount namespace hides.
HIDDEN = ("labs", "tests", "build", ".git", "grader/labs")


@dataclass(frozen=True)
class Limits:
    """The limits of one grade_code call (defaults: the constants above)."""

    timeout: float = CALL_TIMEOUT_SECONDS
    submission_seconds: float = SUBMISSION_SECONDS
    cpu_seconds: int = CPU_SECONDS
    memory_mb: int = MEMORY_MB
    processes: int = PROCESSES
    file_mb: int = FILE_MB
    output_bytes: int = OUTPUT_BYTES
    message_bytes: int = MESSAGE_BYTES
    cell_seconds: float = CELL_SECONDS
    require_isolation: bool = False  # start learner code with every protection or not at all


@functools.cache
def grader_package() -> tuple[Path, ...]:
    """The course's package folders no view may show whole: the grader's, wherever it is installed; and, in a
    course installed among the libraries (which a view holds whole, with the interpreter's import path), the servers'
    too, so that a host sees of it only the files it is shown, as it does from a checkout (where the view holds
    nothing of the checkout but those files). Worked out once per process."""
    import grader
    import servers
    from grader import content

    folders = [Path(grader.__file__).resolve().parent]
    if content.CHECKOUT is None:
        folders.append(Path(servers.__file__).resolve().parent)
    return tuple(folders)


def _size(count: int) -> str:
    return f"{count / 1_000_000:g} MB" if count >= 1_000_000 else f"{count / 1000:g} kB"


CRASHES = {
    "SIGSEGV": "a segmentation fault",
    "SIGBUS": "a bus error",
    "SIGILL": "an illegal instruction",
    "SIGFPE": "an arithmetic fault",
    "SIGABRT": "an abort",
    "SIGSYS": "a forbidden system call",
}


def _what_happened(report: dict, limits: Limits) -> tuple[str, str] | None:
    """(what the host did, what to do about it) when it ended for a reason of its own, else None."""
    reason = report.get("reason")
    if reason == supervisor.CPU:
        return (
            f"your code used more than {limits.cpu_seconds} s of CPU time",
            "look for an endless loop, or work done again and again",
        )
    if reason == supervisor.MEMORY:
        return f"your code tried to use more than {limits.memory_mb} MB of memory", "keep only the data the tool needs"
    if reason == supervisor.FILE_SIZE:
        return f"your code tried to write a file larger than {limits.file_mb} MB", "the lab needs only small files"
    if reason == supervisor.PROCESSES:
        return (
            f"your code started too many processes or threads (the limit is {limits.processes})",
            "a tool should do its work in Python, within its own call",
        )
    if reason == supervisor.OUTPUT:
        return (
            f"your code printed more than {_size(limits.output_bytes)}",
            "print less (a few lines are enough to debug)",
        )
    if reason == supervisor.MESSAGE:
        return (
            f"your code returned an answer larger than {_size(limits.message_bytes)}",
            "return only what the tool's caller needs",
        )
    if reason == supervisor.CRASH:
        name = report.get("signal", "a signal")
        return (
            f"it crashed ({CRASHES.get(name, 'a fatal signal')}, {name})",
            "this comes from native code such as ctypes: write plain Python",
        )
    if reason == supervisor.EXIT:
        return (
            f"its process exited with status {report.get('exit')} (sys.exit or os._exit?)",
            "a tool should return a result, not end the process",
        )
    return None  # stopped from outside (a call that timed out): the check's own message says so


def limit_message(report: dict, limits: Limits) -> str | None:
    """The message for a check during which the host ended for a reason of its own."""
    happened = _what_happened(report, limits)
    if happened is None:
        return None
    what, advice = happened
    if report.get("reason") in (supervisor.CRASH, supervisor.EXIT):
        return f"The lab server stopped while running your code: {what}; {advice}."
    return f"{what[0].upper()}{what[1:]}, so the lab server was stopped; {advice}."


def start_message(report: dict, limits: Limits) -> str | None:
    """The message for the checks of a submission whose answer cells keep the host from starting."""
    happened = _what_happened(report, limits)
    if happened is None:
        return None
    what, advice = happened
    return f"The lab server did not start: while your answer cells ran, {what}; {advice}."


_said: set[str] = set()


def _say_once(message: str) -> None:
    if message not in _said:
        _said.add(message)
        print(message, file=sys.stderr)


class Sandbox:
    """One program run under the supervisor, with the limits: its folders, its user, how it started and ended.

    ``command`` is the program (``[sys.executable, ...]``); ``env`` its variables beyond the allowed
    few; ``cwd`` its working folder (default: a home folder of its own under ``scratch``). It starts
    forked from this process's fork server where there is one, else as new programs.
    """

    def __init__(
        self,
        scratch: Path,
        limits: Limits,
        errlog,
        command: list[str],
        *,
        env=None,
        cwd: Path | None = None,
        shown=HOST_FILES,
    ) -> None:
        self.limits, self.errlog, self.program, self.cwd = limits, errlog, list(command), cwd
        self.env = dict(env or {})
        self.shown = [COURSE / path for path in shown]
        self.view = scratch / "view"  # an empty folder the supervisor builds the program's own root in
        self.view.mkdir(exist_ok=True)
        self.report = scratch / "report.json"
        self.pid_file = scratch / "supervisor.pid"
        self.workdir = scratch / "work"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.user = supervisor.sandbox_user()
        scratch.chmod(0o711)  # the sandbox user passes through to its own folder and the code, nothing else
        self.give(self.workdir)
        self.workdir.chmod(0o700)  # no other submission's program may look in

    def give(self, path: Path) -> None:
        """Hand a file or folder to the sandbox user."""
        if self.user is not None:
            os.chown(path, self.user, self.user)

    def supervisor_args(self) -> list[str]:
        """The supervisor's command line: its options, ``--``, then the program's command."""
        limits = self.limits
        python_path = os.pathsep.join(filter(None, [str(COURSE), os.environ.get("PYTHONPATH")]))
        args = [
            "--report",
            str(self.report),
            "--pid-file",
            str(self.pid_file),
            "--workdir",
            str(self.workdir),
            "--cpu-seconds",
            str(int(limits.cpu_seconds)),
            "--memory-mb",
            str(int(limits.memory_mb)),
            "--processes",
            str(int(limits.processes)),
            "--file-mb",
            str(int(limits.file_mb)),
            "--output-bytes",
            str(int(limits.output_bytes)),
            "--message-bytes",
            str(int(limits.message_bytes)),
        ]
        if self.cwd is not None:
            args += ["--cwd", str(self.cwd)]
        for key, value in {"PYTHONPATH": python_path, **self.env}.items():
            args += ["--env", f"{key}={value}"]
        if self.user is not None:
            args += ["--user", str(self.user), "--view", str(self.view)]
        shown = [str(path) for path in self.shown]
        for path in shown:
            args += ["--show", path]
        for folder in [*(str(COURSE / name) for name in HIDDEN), *map(str, grader_package())]:
            # A folder shown in part stays hidden but for the paths shown (supervisor.cover); one inside a path shown
            # is shown with it.
            if not any(supervisor.within(folder, path) for path in shown):
                args += ["--hide", folder]
        if self.limits.require_isolation:
            args.append("--require-isolation")
        return [*args, "--", *self.program]

    def command(self) -> list[str]:
        """The interpreter's arguments that start the supervisor, and the program under it, as new programs."""
        return ["-I", supervisor.__file__, *self.supervisor_args()]

    def start(self):
        """A session with a fresh program: forked from the warm fork server where there is one, else started anew."""
        from servers.client import connect_params

        self.report.unlink(missing_ok=True)
        self.pid_file.unlink(missing_ok=True)
        warm = forkserver.shared()
        if warm is not None:
            try:
                return warm.connect(
                    self.supervisor_args(),
                    timeout=self.limits.timeout,
                    errlog=self.errlog,
                    message_bytes=self.limits.message_bytes,
                )
            except forkserver.ForkServerError as exc:
                _say_once(f"grader: {exc}; starting learner hosts as new programs, which is slower.")
        return connect_params(sys.executable, self.command(), timeout=self.limits.timeout, errlog=self.errlog)

    def stop(self, session) -> None:
        """Stop a program that hung or broke at once: SIGTERM its supervisor, which stops it and writes
        its report, so closing the session need not wait out the client's grace period for a stuck process."""
        try:
            os.kill(int(self.pid_file.read_text(encoding="utf-8")), signal.SIGTERM)
        except (OSError, ValueError):  # already gone, or it never started
            pass
        session.close()

    def ending(self) -> dict:
        """How the last program ended, as the supervisor wrote it (empty when it wrote nothing)."""
        try:
            return json.loads(self.report.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}


class Hosts(Sandbox):
    """The learner hosts of one submission: ``python -m grader.engine.lockedhost`` on its answer code."""

    def __init__(self, lab: str, scratch: Path, limits: Limits, errlog) -> None:
        self.lab = lab
        self.code_file = scratch / "answers.py"
        self.state_dir = scratch / "work" / "state"
        self.state_dir.mkdir(parents=True)
        # -P: the host's folder is not on its import path, so files the learner's code writes there
        # cannot stand in for modules the next host imports.
        host = [sys.executable, "-P", "-m", "grader.engine.lockedhost", "--lab", lab, "--code", str(self.code_file)]
        host += ["--cell-seconds", str(limits.cell_seconds)]
        super().__init__(scratch, limits, errlog, host, env={"LAB_STATE_DIR": str(self.state_dir)})
        self.shown.append(self.code_file)  # the one file of the submission the host reads
        # Opened before any learner code runs: the checks reach the state folder through this descriptor,
        # never through its path, which the learner's code could turn into a link (labkit.labstate).
        self.state_fd = labstate.open_folder(self.state_dir)
        self.give(self.state_dir)
        self.give(self.code_file)
        self.state_dir.chmod(0o700)
        self.code_file.chmod(0o400)

    def close(self) -> None:
        os.close(self.state_fd)

    def start(self):
        session = super().start()
        # Checks that verify state from outside the protocol read and steer it through this folder.
        session.state_dir = self.state_dir
        session.state_fd = self.state_fd
        # Checks that start what a learner configured (lab 2's servers) start it through this, under the sandbox:
        # given with the session, so the labs' checks need not import the engine that runs them.
        session.sandboxed = sandboxed
        return session


@contextmanager
def sandboxed(
    command: list[str],
    *,
    env=None,
    cwd: Path | None = None,
    timeout: float = 20.0,
    errlog=None,
    limits: Limits | None = None,
):
    """A session with a stdio server started from a learner's configuration, under the same limits as the host.

    For checks that start what a learner configured (lab 2): the command runs as the sandbox user,
    with the course's private folders out of sight, never with the grader's privileges.
    """
    limits = replace(limits or Limits(), timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="server-") as scratch, ExitStack() as stack:
        if errlog is None:
            errlog = stack.enter_context(open(Path(scratch) / "stderr.log", "w", encoding="utf-8", opener=_private))
        run = Sandbox(Path(scratch), limits, errlog, command, env=env, cwd=cwd, shown=SERVER_FILES)
        session = run.start()
        try:
            yield session
        finally:
            session.close()


class SandboxUnavailable(RuntimeError):
    """Learner code would run with a protection missing, and the grader was told to require them all."""


def refusal(why: list[str]) -> str:
    return (
        f"Grading refuses to run learner code without its sandbox ({'; '.join(why)}). Run the grader as root "
        "on Linux, where it can give each learner host a user of its own, a file-system view of its own, no network "
        "and no sight of other processes; or leave out --require-sandbox to grade with what this machine allows."
    )


_isolation: dict | None = None
_isolation_lock = threading.Lock()


def isolation() -> dict:
    """The protections a learner host gets on this machine: the report of one program started the way hosts start.

    ``{"protections": [...], "missing": [...], "fallbacks": [why, ...]}``; measured once per process (a caller that
    asks while it is being measured waits for that measurement).
    """
    global _isolation
    with _isolation_lock:
        if _isolation is None:
            measured = _probe_isolation()
            if _isolation is None:  # still unknown (a test may have said what to assume meanwhile)
                _isolation = measured
        return _isolation


def known_isolation() -> dict | None:
    """``isolation()`` where it was measured (or told) in this process already; None, without measuring, where not."""
    with _isolation_lock:
        return _isolation


def assume_isolation(measured: dict) -> None:
    """Take ``measured`` (another process's ``isolation()`` on this machine, started the same way) as this process's,
    unless this one has measured its own."""
    global _isolation
    with _isolation_lock:
        if _isolation is None:
            _isolation = measured


def _probe_isolation() -> dict:
    with tempfile.TemporaryDirectory(prefix="probe-") as scratch, open(os.devnull, "w") as quiet:
        probe = Sandbox(Path(scratch), Limits(), quiet, [sys.executable, "-c", "pass"])
        subprocess.run(
            [sys.executable, *probe.command()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )
        report = probe.ending()
    protections = report.get("protections", [])
    return {
        "protections": protections,
        "missing": [name for name in supervisor.PROTECTIONS if name not in protections],
        "fallbacks": report.get("fallbacks", []) or ([] if report else ["the sandbox's supervisor did not run"]),
    }


def measure_isolation_soon() -> None:
    """Start measuring ``isolation`` in a thread of its own and return at once: its probe (a program started under the
    supervisor, waited for) then runs while this process imports and reads the course, not before the first
    submission is graded."""
    threading.Thread(target=isolation, name="isolation-probe").start()  # not a daemon: the probe cleans up before exit


def missing_protections() -> list[str]:
    """Each protection learner code would run without here, in words (empty: fully isolated)."""
    return [supervisor.PROTECTIONS[name] for name in isolation()["missing"]]


def isolation_warning() -> str | None:
    """What to tell an instructor at the start of a run when learner code will not be fully isolated."""
    missing = missing_protections()
    if not missing:
        return None
    return (
        "grader: warning: learner code will run without these protections on this machine: "
        + "; ".join(missing)
        + ". Grade as root on Linux for all of them, or pass --require-sandbox to refuse to grade without them."
    )


def require_full_isolation() -> None:
    """Raise SandboxUnavailable when any protection is missing here."""
    missing = isolation()["missing"]
    if missing:
        raise SandboxUnavailable(refusal([f"missing: {'; '.join(missing_protections())}"]))


def _private(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)


def grade_code(
    lab: str,
    code: str,
    names: Iterable[str] | None = None,
    *,
    timeout: float = CALL_TIMEOUT_SECONDS,
    submission_seconds: float = SUBMISSION_SECONDS,
    cpu_seconds: int = CPU_SECONDS,
    memory_mb: int = MEMORY_MB,
    processes: int = PROCESSES,
    file_mb: int = FILE_MB,
    output_bytes: int = OUTPUT_BYTES,
    message_bytes: int = MESSAGE_BYTES,
    cell_seconds: float = CELL_SECONDS,
    require_isolation: bool = False,
) -> list[CheckResult]:
    """Run the named checks of ``lab`` (all of them, in order, by default) on ``code``, under the limits.

    ``require_isolation``: raise ``SandboxUnavailable`` rather than run the learner's code with any
    protection missing (see ``missing_protections``).
    """
    limits = Limits(
        timeout,
        submission_seconds,
        cpu_seconds,
        memory_mb,
        processes,
        file_mb,
        output_bytes,
        message_bytes,
        cell_seconds,
        require_isolation,
    )
    if require_isolation:
        require_full_isolation()
    registry = lab_checks(lab)
    selected = [registry[name] for name in (names if names is not None else registry.checks)]
    deadline = time.monotonic() + limits.submission_seconds
    results: list[CheckResult] = []
    with tempfile.TemporaryDirectory(prefix="learner-") as scratch, ExitStack() as stack:
        scratch = Path(scratch)
        (scratch / "answers.py").write_text(code, encoding="utf-8")
        # What the learner's code prints stays with the submission (capped), not the grader's terminal.
        errlog = stack.enter_context(open(scratch / "stderr.log", "w", encoding="utf-8", opener=_private))
        hosts = Hosts(lab, scratch, limits, errlog)
        host = None
        not_started = None  # why the host cannot start, once that is known not to change
        failed_starts = 0
        hung = False  # a call of this submission has hung: later calls get HUNG_CALL_TIMEOUT_SECONDS
        try:
            for check in selected:
                if not_started is None and time.monotonic() > deadline:
                    not_started = (
                        f"This check was not run: grading this submission took more than {limits.submission_seconds:g} s "
                        "in all (the limit for one submission), because earlier calls hung or ran slowly."
                    )
                if not_started is not None:
                    results.append(CheckResult(check.name, check.points, False, not_started))
                    continue
                if host is None:
                    try:
                        host = hosts.start()
                        failed_starts = 0
                        if hung:
                            host.limit_calls(HUNG_CALL_TIMEOUT_SECONDS)
                    except Exception as exc:  # noqa: BLE001 - the host could not start: say why, from its report when it wrote one
                        failed_starts += 1
                        ending = hosts.ending()
                        if limits.require_isolation and ending.get("fallbacks") and not ending.get("protections"):
                            raise SandboxUnavailable(refusal(ending["fallbacks"])) from None
                        why = start_message(ending, limits)
                        message = why or f"The lab server did not start ({exc})."
                        if why or failed_starts >= 2:
                            not_started = message  # the answer cells will fail the same way for every check
                        results.append(CheckResult(check.name, check.points, False, message))
                        continue
                result = run_check(check, host)
                hung = hung or result.message.startswith(TIMED_OUT)
                if result.host_lost:
                    hosts.stop(host)
                    host = None
                    why = limit_message(hosts.ending(), limits)
                    if why:
                        result = replace(result, message=why)
                results.append(result)
        finally:
            if host is not None:
                host.close()
            hosts.close()
    return results


def grade_task(
    lab: str, code: str, timeout: float | None = None, require_isolation: bool = False
) -> list[dict[str, Any]]:
    """Grade one submission's answer code; plain data, so it can cross process and machine boundaries."""
    return [
        asdict(r)
        for r in grade_code(lab, code, timeout=timeout or CALL_TIMEOUT_SECONDS, require_isolation=require_isolation)
    ]
