"""Start sandboxed learner hosts by forking a warm interpreter, not by starting a new one.

A learner host spends most of its start importing the ``mcp`` SDK (about half a second of
CPU). The fork server pays that once: it is started once per grading process, with the
environment the supervisor gives hosts, imports the host and every lab's kit, and then waits
on a socket only that grading process holds. For each host it forks a child that runs the
supervisor (``supervisor.main``, exactly as ``python -I supervisor.py`` would), and the
supervisor forks the host itself, which runs ``python -m grader.engine.lockedhost`` in the already
warm interpreter. The host's confinement does not change: the supervisor's set-up (user,
mount namespace, limits, environment, working folder, no inherited descriptors) runs in the
forked host before any learner code, as it runs before exec otherwise.

The fork server never runs learner code, and no host can reach it: its socket is one end of a
socket pair, closed in every child. The grading process talks to each host over two socket
pairs (requests in, replies out) whose ends the fork server passes to the supervisor.

``python -P -m grader.engine.forkserver FD`` runs the server on the socket ``FD``;
``shared()`` is the grading side.
"""

from __future__ import annotations

import gc
import json
import os
import runpy
import signal
import socket
import subprocess
import sys
import threading
import traceback
from contextlib import asynccontextmanager, suppress
from pathlib import Path

from grader.engine import supervisor

COURSE = Path(__file__).resolve().parents[2]  # grader/engine/forkserver.py
MESSAGE = 65536  # the largest request: a supervisor command line
CHUNK = 65536  # how much of what a host sends is read at once
# How long closing a session waits for the host to end by itself, then after SIGTERM to its supervisor.
CLOSE_SECONDS = 2.0


# --- the server side: runs in the warm interpreter ---------------------------------------------


# The supervisor's required options, given once as the fork server warms up.
WARM_OPTIONS = (
    "report",
    "workdir",
    "cpu-seconds",
    "memory-mb",
    "processes",
    "file-mb",
    "output-bytes",
    "message-bytes",
)


def warm() -> None:
    """Import everything a host of any lab imports, so a forked host starts with it all loaded."""
    from grader.engine import sandbox
    from servers.learner_host import host

    # Each supervisor forked from here parses its command line with the parser, and the patterns argparse compiles,
    # already built.
    supervisor.parse([*(f"--{name}=1" for name in WARM_OPTIONS), "--", "python"])
    # And builds a host's file-system view with the C library's calls, and its interpreter's paths, already found.
    libc = supervisor._libc()
    for name in supervisor.LIBC_CALLS:
        getattr(libc, name)
    supervisor.interpreter_paths(sys.executable)

    for kit in host._kits().values():
        kit()
    for specs in host._hosts().values():
        if specs is not None:
            for spec in specs({}):  # a harness tool's input schema is built once, here (servers.toolkit.input_schema)
                spec.to_tool()
    sandbox.prepare(host.known_labs()[0])
    import anyio._backends._asyncio  # noqa: F401 - the event loop's backend, which anyio.run imports on first use
    import mcp.server.mcpserver  # the server the learners of labs 3 and 4 write
    from mcp.server.mcpserver.server import Settings

    Settings.model_rebuild()  # which pydantic would otherwise complete in each host, as its first MCPServer is made
    import mcp.server.stdio  # noqa: F401 - the host's transport
    from mcp_types import methods

    import servers.toolkit  # noqa: F401 - the host's server builder

    # Each answer the host sends is checked against its result type by a validator the SDK builds on first use.
    with suppress(AttributeError):
        for result in methods.SERVER_RESULTS.values():
            methods._adapter(result)

    with suppress(ImportError):  # MCPServer() imports rich's logging where rich is installed
        import rich.console
        import rich.logging  # noqa: F401
    learner_style_server()
    sandbox.remember()  # last: the grader's modules now loaded are those every host's lockdown drops


def learner_style_server():
    """Build, once, a server of the kind the learners of labs 3 and 4 write, and throw it away: what the SDK does
    the first time in a process (the request-state key's derivation, which loads the C library's algorithm; pydantic's
    plugin scan and the validators it builds for a typed tool, resource template and prompt) is then done here, not
    in each host. Logging is left as it was: ``MCPServer()`` sets it up when nothing has (see
    ``servers.learner_host.host.plain_logging``). Returns the server."""
    from typing import Annotated

    from mcp.server.mcpserver import MCPServer
    from mcp_types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field

    from servers.learner_host.host import logging_kept

    with logging_kept():
        server = MCPServer("warm-up")

    def catalog():
        return "{}"

    def item(item_id):
        return item_id

    def search(query, page=1):
        """Search."""
        return CallToolResult(content=[TextContent(type="text", text=query)], structured_content={"page": page})

    def brief(topic):
        return topic

    # Annotations given as objects: this module's own are strings (``from __future__ import annotations``).
    catalog.__annotations__ = {"return": str}
    item.__annotations__ = {"item_id": str, "return": str}
    search.__annotations__ = {
        "query": Annotated[str, Field(description="Words to look for.")],
        "page": Annotated[int, Field(description="Which page, from 1.", ge=1)],
        "return": CallToolResult,
    }
    brief.__annotations__ = {"topic": str, "return": str}
    server.resource("warm://catalog", name="catalog", mime_type="application/json")(catalog)
    server.resource("warm://items/{item_id}", name="item", mime_type="application/json")(item)
    server.tool(annotations=ToolAnnotations(read_only_hint=True))(search)
    server.prompt()(brief)
    return server


MADV_HUGEPAGE, MADV_COLLAPSE = 14, 25


def huge_pages() -> int:
    """Back this process's heap with huge pages where the kernel can (Linux 6.1's MADV_COLLAPSE); the bytes so backed.

    A fork copies one page table entry per 4 KiB page the parent holds, some 12,000 for the warm interpreter's heap,
    and each host costs two forks of it (this process forks its supervisor, the supervisor forks the host). A huge
    page is one entry for 2 MiB. A child's first write into one splits it back into small pages for that child
    alone (and copies the 4 KiB written, as before), so each process pays only for the parts it writes: the
    supervisor writes little. A hint only: an older kernel, or huge pages switched off, leaves every page as it was.
    """
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
        maps = Path("/proc/self/maps").read_text().splitlines()
        huge = int(Path("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size").read_text())
    except (OSError, AttributeError, ValueError):  # not Linux, or no huge pages
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    backed = 0
    for line in maps:
        fields = line.split()
        if fields[1] != "rw-p" or (len(fields) > 5 and fields[5] != "[heap]"):
            continue  # only private memory of no file: the heap and the interpreter's arenas
        start, end = (int(bound, 16) for bound in fields[0].split("-"))
        start, end = -(-start // huge) * huge, end // huge * huge  # whole huge pages within
        if (
            end > start
            and madvise(start, end - start, MADV_HUGEPAGE) == 0
            and madvise(start, end - start, MADV_COLLAPSE) == 0
        ):
            backed += end - start
    return backed


class Runner:
    """Runs ``python [options] (-m MODULE | -c CODE | SCRIPT) ARGS`` in a forked child.

    As the interpreter would: ``sys.argv`` and ``sys.path[0]`` as it sets them, ``SystemExit``
    ending the process with its status, any other exception printed with its traceback and status 1.
    The interpreter's own options and start-up variables are those the fork server started with;
    a command of another interpreter, or one whose environment changes a ``PYTHON*`` variable (which
    only a new interpreter would read), is not accepted: the supervisor starts it as a new program.
    """

    def _split(self, command: list[str]) -> tuple[str, str, list[str], bool] | None:
        """(how: -m, -c or script; what; its arguments; whether -P was given), or None."""
        if not command or os.path.realpath(command[0]) != os.path.realpath(sys.executable):
            return None
        for at, option in enumerate(command[1:], start=1):
            safe_path = "-P" in command[1:at]
            if option in ("-m", "-c"):
                return (option, command[at + 1], command[at + 2 :], safe_path) if at + 1 < len(command) else None
            if option in ("-", "--") or option.startswith("-") and option not in self.options:
                return None  # standard input, or an option this runner cannot repeat
            if not option.startswith("-"):
                return "script", option, command[at + 1 :], safe_path
        return None

    # Options the warm interpreter can honour: -P (below), -B (it writes no bytecode anyway).
    options = ("-P", "-B")

    def accepts(self, command: list[str], env: dict[str, str] | None = None) -> bool:
        if self._split(command) is None:
            return False
        for key in {*(env or {}), *os.environ}:
            if key.startswith("PYTHON") and (env or {}).get(key) != os.environ.get(key):
                return False
        return True

    def run(self, command: list[str]) -> None:
        option, target, args, safe_path = self._split(command)
        status = 0
        try:
            if option == "-m":
                sys.argv = [target, *args]  # run_module sets argv[0] to the module's file
                if not safe_path:  # as python -m puts the working folder first
                    sys.path.insert(0, os.getcwd())
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            elif option == "script":
                sys.argv = [target, *args]
                if not safe_path:  # as python puts the script's folder first
                    sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
                runpy.run_path(target, run_name="__main__")
            else:
                sys.argv = ["-c", *args]
                if not safe_path:  # as python -c puts the working folder first
                    sys.path.insert(0, "")
                main = type(sys)("__main__")
                main.__builtins__ = __builtins__
                sys.modules["__main__"] = main
                exec(compile(target, "<string>", "exec"), main.__dict__)  # noqa: S102 - the command's own code
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                status = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                status = 1
        except BaseException:  # noqa: BLE001 - as the interpreter does: print it and exit with 1
            traceback.print_exc()
            status = 1
        for stream in (sys.stdout, sys.stderr):
            with suppress(Exception):
                stream.flush()
        os._exit(status)


def _supervise(control: socket.socket, fds: list[int], argv: list[str]) -> None:
    """In the forked child: become the supervisor of one host, on the descriptors the grader sent."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.close(control.detach())  # no host may ask for more hosts
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        # The host reads its requests from descriptor 0 and may not write into it.
        requests = socket.socket(fileno=os.dup(0))
        with suppress(OSError):
            requests.shutdown(socket.SHUT_WR)
        requests.close()
        status = supervisor.main(argv, runner=Runner())
    except SystemExit as exc:  # argparse's own message is already on stderr
        status = exc.code if isinstance(exc.code, int) else 2
    except BaseException:  # noqa: BLE001 - say why on the submission's stderr, end this child
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(Exception):
                stream.flush()
        os._exit(status)


def _wait_for(pids: list[int]) -> None:
    """Wait (a bounded while) for supervisors the grader has seen close their connection to end."""
    import selectors

    for pid in pids:
        try:
            handle = os.pidfd_open(pid)
        except OSError:  # already reaped, or not ours
            continue
        try:
            with selectors.DefaultSelector() as ended:
                ended.register(handle, selectors.EVENT_READ)
                ended.select(CLOSE_SECONDS)
        finally:
            os.close(handle)


def _cpu_seconds(finished: list[int]) -> float:
    """CPU time of this process and of every supervisor and host it forked that has ended."""
    import resource

    _wait_for(finished)
    supervisor.reap_ended()  # their CPU time then counts in this process's children
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def serve(control: socket.socket) -> None:
    """Answer requests until the grading process closes its end (or dies).

    A request is ``{"argv": [...]}`` with three descriptors (the new supervisor's stdin, stdout and
    stderr), answered ``{"pid": N}``; or ``{"usage": true, "wait": [pids]}``, answered ``{"cpuSeconds": S}``
    once the supervisors listed (whose connections the grader saw close) have ended.
    """
    supervisor._prctl(supervisor.PR_SET_PDEATHSIG, signal.SIGKILL)
    # A Ctrl-C at the terminal reaches every process of the command: the grading process stops the batch, and this
    # server ends with its client. Its children take it as before (``_supervise``).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warm()
    # What every host shares, frozen: the cycle collector of each forked host leaves it alone (it is the bulk of a
    # host's objects), and so does not touch, and copy, the pages it lies on.
    gc.freeze()
    huge_pages()
    try:
        control.send(b'{"ready": true}')
    except OSError:  # the grading process closed its end while this one started (it needed no host after all)
        return
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, MESSAGE, 3)
        except OSError:
            return
        if not message:
            return
        supervisor.reap_ended()  # supervisors that ended, so zombies do not pile up
        try:
            request = json.loads(message)
            if request.get("usage"):
                for fd in fds:
                    os.close(fd)
                control.send(json.dumps({"cpuSeconds": _cpu_seconds(request.get("wait", []))}).encode())
                continue
            argv = request["argv"]
            if len(fds) != 3:
                raise ValueError(f"a request carries 3 descriptors, this one {len(fds)}")
            pid = os.fork()
        except (OSError, ValueError, KeyError, AttributeError) as exc:
            for fd in fds:
                os.close(fd)
            control.send(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
            continue
        if pid == 0:
            _supervise(control, fds, argv)
        for fd in fds:
            os.close(fd)
        control.send(json.dumps({"pid": pid}).encode())


# --- the grading side -------------------------------------------------------------------------


class ForkServerError(RuntimeError):
    """The fork server could not start or answer; grading starts hosts the ordinary way instead."""


@asynccontextmanager
async def socket_caller(
    requests: socket.socket, replies: socket.socket, supervisor_pid: int, on_end=None, message_bytes: int | None = None
):
    """The client's side of a host's socket pairs, one JSON-RPC message per line each way, taken in turn
    (``servers.in_turn.Caller``): the checks make one request at a time, so each is written and its answer read
    in the task that asked, with no reading task between.

    ``message_bytes``: the host writes its replies here itself (the supervisor's ``--replies-direct``), and a message
    longer than this is not read: the supervisor gets SIGUSR1, stops the host and reports the message limit, and the
    call fails as at the end of the wire, as when the supervisor's relay stops a host for one.

    Closing it ends the host as the SDK's stdio client ends a server: requests end (the host reads
    end of input and exits), then its supervisor gets SIGTERM if the host has not ended in time.
    """
    import asyncio

    import anyio

    from servers.in_turn import Caller

    loop = asyncio.get_running_loop()
    requests.setblocking(False)
    replies.setblocking(False)

    async def send(data: bytes) -> None:
        await loop.sock_sendall(requests, data)

    async def receive() -> bytes:
        try:
            return await loop.sock_recv(replies, CHUNK)
        except OSError:  # the supervisor's end is gone: as the end of the wire
            return b""

    async def ended() -> bool:
        """Read what is left until the supervisor closes its end (the host has ended): True, or False in time."""
        with anyio.move_on_after(CLOSE_SECONDS):
            while await receive():
                pass
            return True
        return False

    def too_long() -> None:
        with suppress(OSError):
            os.kill(supervisor_pid, signal.SIGUSR1)

    caller = Caller(send, receive, line_limit=message_bytes, on_too_long=too_long)
    try:
        yield caller
    finally:
        with anyio.CancelScope(shield=True):
            caller.close()
            with suppress(OSError):
                requests.shutdown(socket.SHUT_WR)  # the host sees the end of its input
            requests.close()
            gone = await ended()
            if not gone:
                with suppress(OSError):
                    os.kill(supervisor_pid, signal.SIGTERM)
                gone = await ended()
            if gone and on_end is not None:
                on_end(supervisor_pid)
            replies.close()


class ForkServer:
    """The grading side: starts the fork server and asks it for hosts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._control: socket.socket | None = None
        self._process: subprocess.Popen | None = None
        self._finished: set[int] = set()  # supervisors whose connection closed, not yet counted
        self._broken: str | None = None  # why the fork server could not start: not tried again
        self._pending: socket.socket | None = None  # a fork server begun (``begin``), not yet known to be ready
        self.owner = os.getpid()  # the process that talks to it

    def _start(self) -> None:
        if self._broken:
            raise ForkServerError(self._broken)
        try:
            self._spawn()
        except (ForkServerError, OSError) as exc:
            self._broken = f"the fork server could not start ({exc})"
            raise ForkServerError(self._broken) from None

    def begin(self) -> None:
        """Start the fork server's process now and return at once: it boots (about half a second of imports) while
        this process goes on, and the first host asked for waits until it is ready."""
        with self._lock:
            if self._control is not None or self._pending is not None or self._broken:
                return
            try:
                self._pending = self._launch()
            except OSError as exc:
                self._broken = f"the fork server could not start ({exc})"

    def _launch(self) -> socket.socket:
        """The fork server's process, started; returns this side's control socket (the server says when it is ready)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {key: os.environ[key] for key in supervisor.ALLOWED_ENV if key in os.environ}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(COURSE), os.environ.get("PYTHONPATH")]))
        env.update(PYTHONDONTWRITEBYTECODE="1", MALLOC_ARENA_MAX="2")
        command = [sys.executable, "-P", "-m", "grader.engine.forkserver", str(theirs.fileno())]
        self._process = start_beside(command, ours, theirs, env=env, cwd="/")
        return ours

    def _spawn(self) -> None:
        ours, self._pending = self._pending or self._launch(), None
        ours.settimeout(60)
        try:
            ready = ours.recv(MESSAGE)
        except OSError as exc:
            ours.close()
            self._stop_process()
            raise ForkServerError(f"the fork server did not start: {exc}") from None
        if not ready:
            ours.close()
            self._stop_process()
            raise ForkServerError("the fork server ended while it started (its error is on stderr)")
        ours.settimeout(None)
        self._control = ours

    def _stop_process(self) -> None:
        if self._process is not None:
            with suppress(OSError):
                self._process.kill()
            self._process.wait()
            self._process = None

    def launch(self, argv: list[str], errlog, *, direct: bool = False) -> tuple[socket.socket, socket.socket, int]:
        """Start one supervised host (``argv``: the supervisor's arguments, ``--``, the host command).

        Returns the request and reply sockets of the host and its supervisor's process id. ``direct``: the host
        writes to the reply socket itself (``argv`` carries ``--replies-direct``).
        """
        request = json.dumps({"argv": argv}).encode()
        if len(request) > MESSAGE:
            raise ForkServerError("the supervisor's command line is too long for the fork server")
        requests, host_requests = socket.socketpair()
        replies, host_replies = socket.socketpair()
        try:
            with self._lock:
                for attempt in range(2):  # a fork server that died is started again, once
                    if self._control is None:
                        self._start()
                    try:
                        socket.send_fds(
                            self._control, [request], [host_requests.fileno(), host_replies.fileno(), errlog.fileno()]
                        )
                        answer = self._control.recv(MESSAGE)
                    except OSError:
                        answer = b""
                    if answer:
                        break
                    self.close_locked()
                    if attempt:
                        raise ForkServerError("the fork server stopped answering")
        except BaseException:
            for end in (requests, replies):
                end.close()
            raise
        finally:
            host_requests.close()
            host_replies.close()
        reply = json.loads(answer)
        if "pid" not in reply:
            requests.close()
            replies.close()
            raise ForkServerError(f"the fork server could not start a host: {reply.get('error')}")
        if not direct:
            # Nothing is sent the host's way on the reply socket. (A host that writes to it itself watches it for
            # the end of the grader's side, as asyncio's pipe transport does: it stays open.)
            replies.shutdown(socket.SHUT_WR)
        return requests, replies, reply["pid"]

    def connect(self, argv: list[str], *, timeout: float | None, errlog, message_bytes: int | None = None):
        """A blocking session with a freshly forked, supervised host (``servers.client.InlineSession`` or ``Session``).

        ``message_bytes``: the host writes its replies straight to this process, which caps each message (see
        ``socket_caller``), rather than through its supervisor's relay.
        """
        import asyncio

        from servers.client import Dispatched, InlineSession, Session

        # Its loop in this thread, unless one runs here already (checks run in a Jupyter kernel's cell, as stock
        # nbgrader runs hidden tests): then in a thread of its own.
        kind = InlineSession if asyncio._get_running_loop() is None else Session
        direct = message_bytes is not None
        requests, replies, pid = self.launch(["--replies-direct", *argv] if direct else argv, errlog, direct=direct)
        caller = socket_caller(requests, replies, pid, self.ended, message_bytes)
        return kind(Dispatched(caller), timeout=timeout)

    def ended(self, supervisor_pid: int) -> None:
        """Note that a supervisor closed its connection (its host has ended), so ``cpu_seconds`` waits for it."""
        self._finished.add(supervisor_pid)

    def cpu_seconds(self) -> float:
        """CPU time the fork server and every host it started (and that has ended) have used so far."""
        with self._lock:
            if self._control is None:
                return 0.0
            finished, self._finished = sorted(self._finished), set()
            self._control.send(json.dumps({"usage": True, "wait": finished}).encode())
            return float(json.loads(self._control.recv(MESSAGE))["cpuSeconds"])

    def close_locked(self) -> None:
        for end in (self._control, self._pending):
            if end is not None:
                end.close()
        self._control = self._pending = None
        if self._process is not None:
            try:
                self._process.wait(timeout=CLOSE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
            self._stop_process()

    def close(self) -> None:
        """Stop the fork server (hosts it started end with their sessions); in a forked copy of its owner, nothing."""
        if os.getpid() != self.owner:
            return
        with self._lock:
            self.close_locked()


_shared: ForkServer | None = None
_shared_lock = threading.Lock()
_starter = None  # the thread fork servers are started from (``_long_lived_thread``)


def start_beside(command: list[str], ours: socket.socket, theirs: socket.socket, **options) -> subprocess.Popen:
    """Start ``command``, a helper process of this one talking over the socket pair (``theirs`` handed to it, and closed
    here; ``ours`` closed too if it cannot start), with no input and no output of its own.

    Started from a thread that lives as long as this process: the helper dies with the thread that started it
    (PR_SET_PDEATHSIG is tied to that thread), and a batch's grading thread ends with the batch."""
    try:
        return (
            _long_lived_thread()
            .submit(
                subprocess.Popen,
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=[theirs.fileno()],
                **options,
            )
            .result()
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()


def _long_lived_thread():
    """An executor whose one thread lives until this process ends, to start fork servers from."""
    global _starter
    if _starter is None or _starter[0] != os.getpid():
        from concurrent.futures import ThreadPoolExecutor

        _starter = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="fork-server-starter"))
    return _starter[1]


def available() -> bool:
    """Whether hosts can be forked here (Linux, with the fork server's socket machinery)."""
    return (
        sys.platform.startswith("linux")
        and hasattr(socket, "send_fds")
        and os.environ.get("GRADER_HOST_START") != "exec"
    )


def shared() -> ForkServer | None:
    """This process's fork server, started on first use; None where hosts cannot be forked."""
    global _shared
    if not available():
        return None
    with _shared_lock:
        if _started_here() is None:
            # A process forked from one that had a fork server gets its own: the control socket
            # carries one conversation at a time, and the parent's stays the parent's.
            import atexit

            _shared = ForkServer()
            atexit.register(_shared.close)
        return _shared


def _started_here() -> ForkServer | None:
    """This process's fork server, if it has started one (a parent's does not count); the caller holds
    ``_shared_lock``."""
    return _shared if _shared is not None and _shared.owner == os.getpid() else None


def started() -> ForkServer | None:
    """This process's fork server if ``shared`` has started one (a parent's does not count); never starts one."""
    with _shared_lock:
        return _started_here()


def begin() -> None:
    """Start this process's fork server now, without waiting for it (``ForkServer.begin``); nothing where hosts cannot
    be forked."""
    server = shared()
    if server is not None:
        server.begin()


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
