"""The one small helper lessons, labs and the grader use to talk to a server over MCP.

``connect("support_desk", env={...})`` starts ``python -m servers.support_desk`` as a
real stdio subprocess and returns a session whose methods are plain (blocking) calls,
so notebook cells stay short; the MCP client runs on an event loop in a helper
thread. ``connect(server_object)`` talks to an in-process server the same way.
Results come back in wire format (camelCase JSON), exactly what the model would see.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from collections.abc import Mapping
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path
from typing import Any, TextIO

import anyio
from anyio.from_thread import start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

# Fields of the 2026 result envelope that say nothing about the tool's answer.
ENVELOPE_FIELDS = ("_meta", "resultType")


def wire(result: Any, *, envelope: bool = False) -> dict[str, Any]:
    """A protocol result object as the JSON that travels on the wire (camelCase)."""
    data = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    if not envelope:
        for key in ENVELOPE_FIELDS:
            data.pop(key, None)
    return data


BASE_ENV_KEYS = ("PATH", "HOME", "LANG", "PYTHONPATH", "SYSTEMROOT")


def stdio_params(
    module: str, *, env: Mapping[str, str] | None = None, args: tuple[str, ...] = ()
) -> StdioServerParameters:
    """Parameters that start ``python -m <module>`` with this interpreter."""
    if "." not in module:
        module = f"servers.{module}"
    full_env = {k: v for k, v in os.environ.items() if k in BASE_ENV_KEYS}
    full_env.update(env or {})
    return StdioServerParameters(command=sys.executable, args=["-m", module, *args], env=full_env)


class Dispatched:
    """A server reached through a dispatcher of the caller's own: ``opened``, an async context manager yielding an
    ``mcp.shared.dispatcher.Dispatcher`` (``servers.in_turn.Caller``, say), entered when the session opens. The SDK's
    ``Client`` and ``ClientSession`` run over it as over their own."""

    def __init__(self, opened: Any) -> None:
        self.opened = opened

    async def connect(self, exit_stack: Any, mode: Any, raise_exceptions: bool) -> Any:
        return await exit_stack.enter_async_context(self.opened)


def sdk_client(server: Any, *, timeout: float | None, client_info: Any = None) -> Client:
    """The SDK's client for ``server`` (what ``Client`` takes, or a ``Dispatched``)."""
    client = Client(server, read_timeout_seconds=timeout, client_info=client_info)
    if isinstance(server, Dispatched):
        client._connect = server.connect  # the connector Client would build for a transport, replaced
    return client


class Session(AbstractContextManager["Session"]):
    """A blocking MCP client session, for notebook cells and scripts."""

    def __init__(self, server: Any, *, timeout: float | None = 30.0, client_info: Any = None) -> None:
        self._stack = ExitStack()
        self._timeout = timeout
        try:
            self._portal = self._stack.enter_context(start_blocking_portal())
            self.client: Client = self._stack.enter_context(
                self._portal.wrap_async_context_manager(sdk_client(server, timeout=timeout, client_info=client_info))
            )
        except BaseException:
            self._stack.close()
            raise

    async def _bounded(self, fn, *args: Any) -> Any:
        """``await fn(*args)``, given at most the session's timeout per request."""
        with anyio.fail_after(self._timeout) if self._timeout else nullcontext():
            return await fn(*args)

    def _run(self, fn, *args: Any) -> Any:
        return self._portal.call(self._bounded, fn, *args)

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None, /, **kwargs: Any) -> dict[str, Any]:
        """Call a tool and return its CallToolResult in wire format."""
        args = {**(arguments or {}), **kwargs}
        return wire(self._run(self.client.call_tool, tool, args))

    def call_raw(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Call a tool and return the SDK's result object (snake_case attributes)."""
        return self._run(self.client.call_tool, tool, dict(arguments or {}))

    def tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list``, each tool in wire format (its own ``_meta`` kept)."""
        return [wire(tool, envelope=True) for tool in self._run(self.client.list_tools).tools]

    def resources(self) -> list[dict[str, Any]]:
        """The server's ``resources/list``, in wire format."""
        return [wire(r) for r in self._run(self.client.list_resources).resources]

    def templates(self) -> list[dict[str, Any]]:
        """The server's ``resources/templates/list``, in wire format."""
        return [wire(t) for t in self._run(self.client.list_resource_templates).resource_templates]

    def read(self, uri: str) -> str:
        """The text of one resource (the first content block)."""
        result = self._run(self.client.read_resource, uri)
        return result.contents[0].text

    def prompts(self) -> list[dict[str, Any]]:
        """The server's ``prompts/list``, in wire format."""
        return [wire(p) for p in self._run(self.client.list_prompts).prompts]

    def prompt(self, name: str, arguments: Mapping[str, str] | None = None, /, **kwargs: str) -> dict[str, Any]:
        """``prompts/get``: the rendered messages, in wire format."""
        return wire(self._run(self.client.get_prompt, name, {**(arguments or {}), **kwargs}))

    def limit_calls(self, seconds: float) -> None:
        """From now on, give each request at most ``seconds`` (the handshake keeps the timeout it had)."""
        self._timeout = seconds if not self._timeout else min(self._timeout, seconds)

    def close(self) -> None:
        self._stack.close()

    def __exit__(self, *exc: object) -> None:
        self.close()


class InlineSession(Session):
    """A blocking session whose event loop runs in the calling thread, and only while a request is made.

    ``Session`` runs its loop in a helper thread, so a call from a notebook cell (whose kernel runs a
    loop of its own) can wait on it; each request then hops to that thread and back (and waits for the
    two threads' turns at the interpreter). Here the loop is this thread's own:
    for code that makes many requests from one thread outside any running loop, such as the grader's
    checks on a learner host. Between requests the connection's tasks wait, and what the server sends
    meanwhile waits in the pipe. Use it from one thread at a time, never inside a running event loop
    (a Jupyter cell's): the first request would fail, saying so.
    """

    def __init__(self, server: Any, *, timeout: float | None = 30.0, client_info: Any = None) -> None:
        import asyncio

        self._timeout = timeout
        self._loop = asyncio.new_event_loop()
        self._closing: Any = None
        self._held: Any = None
        try:
            self.client = self._until_done(self._open(server, client_info))
        except BaseException:
            self._loop.close()
            raise

    def _until_done(self, coroutine) -> Any:
        """Run the loop in this thread until ``coroutine`` is done (refused inside a running loop, the coroutine unstarted)."""
        try:
            return self._loop.run_until_complete(coroutine)
        except BaseException:
            coroutine.close()  # unstarted when the loop refused to run: no "never awaited" warning
            raise

    async def _open(self, server: Any, client_info: Any) -> Client:
        """Enter the client in a task that holds it until ``close`` (its cancel scopes stay in one task)."""
        import asyncio

        opened: asyncio.Future = self._loop.create_future()
        self._closing = asyncio.Event()

        async def hold() -> None:
            async with sdk_client(server, timeout=self._timeout, client_info=client_info) as client:
                opened.set_result(client)
                await self._closing.wait()

        self._held = self._loop.create_task(hold())
        await asyncio.wait([opened, self._held], return_when=asyncio.FIRST_COMPLETED)
        if not opened.done():  # the client could not start: its error, as Session raises it
            self._held.result()
        return opened.result()

    def _run(self, fn, *args: Any) -> Any:
        return self._until_done(self._bounded(fn, *args))

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            if self._held is not None and not self._held.done():
                self._closing.set()
                self._loop.run_until_complete(self._held)
        finally:
            self._loop.close()


def in_a_kernel() -> bool:
    """True inside a Jupyter kernel, where ``sys.stderr`` is the running cell's output."""
    return type(sys.stderr).__module__.startswith("ipykernel")


def server_log_path() -> Path:
    """The file a notebook's subprocess servers write their stderr to: one per kernel, in the temp folder."""
    return Path(tempfile.gettempdir()) / f"mcp-course-servers-{os.getpid()}.log"


_kernel_log: TextIO | None = None


def server_errlog() -> TextIO:
    """Where a subprocess server's stderr goes unless the caller says otherwise.

    In a Jupyter kernel, the log file ``server_log_path()``: the kernel would show every routine log line
    of a server as a red stderr box under the cell, and a server that fails to start is quoted from the
    file instead (ServerStartError). Elsewhere, the real stderr when there is one with a descriptor (a
    child process inherits the descriptor, not the Python object).
    """
    global _kernel_log
    if in_a_kernel():
        if _kernel_log is None or _kernel_log.closed:
            _kernel_log = open(server_log_path(), "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - one per kernel
        return _kernel_log
    for stream in (sys.__stderr__, sys.stderr):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (OSError, ValueError, AttributeError):
            continue
    return open(os.devnull, "w")


class ServerStartError(RuntimeError):
    """A subprocess server ended before it answered; the message quotes what it wrote to the kernel's log."""


def _first_cause(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _start(server: Any, errlog: TextIO, shown: str, timeout: float | None) -> Session:
    """Open a session; when the server's stderr goes to the kernel's log, a failed start quotes it."""
    if errlog is not _kernel_log:
        return Session(server, timeout=timeout)
    errlog.flush()
    start = os.fstat(errlog.fileno()).st_size
    try:
        return Session(server, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - an ExceptionGroup around "Connection closed", or OSError: the server is gone
        with open(errlog.name, encoding="utf-8", errors="replace") as log:
            log.seek(start)
            said = log.read().strip()
        tail = "\n".join(said.splitlines()[-15:])
        raise ServerStartError(
            f"The server {shown!r} stopped before it answered ({_first_cause(exc)})."
            + (
                f" It wrote on stderr:\n{tail}"
                if tail
                else " It wrote nothing on stderr; run it in a terminal to see why."
            )
        ) from None


def connect_params(
    command: str,
    args: list[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike | None = None,
    timeout: float | None = 30.0,
    errlog: TextIO | None = None,
) -> Session:
    """Start any stdio server command (as a configuration entry describes it) and open a session."""
    full_env = {k: v for k, v in os.environ.items() if k in BASE_ENV_KEYS}
    full_env.update(env or {})
    params = StdioServerParameters(command=command, args=list(args), env=full_env, cwd=cwd)
    errlog = errlog or server_errlog()
    return _start(stdio_client(params, errlog=errlog), errlog, shlex.join([command, *args]), timeout)


def connect(
    server: Any,
    *,
    env: Mapping[str, str] | None = None,
    args: tuple[str, ...] = (),
    timeout: float | None = 30.0,
    errlog: TextIO | None = None,
) -> Session:
    """Open a session: a module name (``"support_desk"``) starts it over stdio; a server object runs in process."""
    if isinstance(server, str):
        params = stdio_params(server, env=env, args=args)
        errlog = errlog or server_errlog()
        return _start(stdio_client(params, errlog=errlog), errlog, f"python -m {params.args[1]}", timeout)
    return Session(server, timeout=timeout)
