"""Load learner code into a namespace and publish a lab's harness tools over MCP."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from servers.learner_host.calls import LOAD_ERRORS, LearnerCodeError, describe_exception
from servers.learner_host.cells import CELL_SEPARATOR, LOAD_ERROR_MARK
from servers.toolkit import ToolSpec, run_stdio
from servers.toolkit import build_server as build_mcp_server


def harness_arguments_refused(tool: str, exc: ValidationError) -> dict[str, Any]:
    """Arguments the grader sent a harness tool do not fit it: a protocol error, not a lab result."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(arguments)"
    raise MCPError(types.INVALID_PARAMS, f"Invalid arguments for {tool}: {where}: {first['msg']}")


def _kits() -> dict[str, Callable[[], dict[str, Any]]]:
    def lab1() -> dict[str, Any]:
        from servers.support_desk import kit

        return {name: getattr(kit, name) for name in kit.__all__}

    def lab2() -> dict[str, Any]:
        from servers.learner_host import kit_lab2

        return {name: getattr(kit_lab2, name) for name in kit_lab2.__all__}

    def lab3() -> dict[str, Any]:
        from servers.learner_host import kit_lab3

        return {name: getattr(kit_lab3, name) for name in kit_lab3.__all__}

    def lab4() -> dict[str, Any]:
        from servers.learner_host import kit_lab4

        return {name: getattr(kit_lab4, name) for name in kit_lab4.__all__}

    return {
        "lab1_error_results": lab1,
        "lab2_scopes_expansion": lab2,
        "lab3_tools_resources": lab3,
        "lab4_server_integration": lab4,
    }


def _hosts() -> dict[str, Callable[[dict[str, Any]], list[ToolSpec]]]:
    from servers.learner_host.lab1 import lab1_specs
    from servers.learner_host.lab2 import lab2_specs

    return {
        "lab1_error_results": lab1_specs,
        "lab2_scopes_expansion": lab2_specs,
        "lab3_tools_resources": None,
        "lab4_server_integration": None,
    }


# Labs whose learners write the server itself: the host serves their `server` object.
SERVER_LABS = {"lab3_tools_resources", "lab4_server_integration"}


def known_labs() -> list[str]:
    return sorted(_hosts())


def plain_logging() -> None:
    """Log to stderr in plain lines before any learner code runs.

    The SDK's ``MCPServer()`` sets up logging itself when nothing has, with rich's handler where rich is installed;
    rendering one traceback that way takes a host seconds, so a ``sys.exit`` in a learner's tool would end its
    process only after the grader had given up on the call. With a handler already on the root logger, the SDK
    leaves logging as it is.
    """
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(handler)


@contextmanager
def logging_kept() -> Iterator[None]:
    """The root logger's handlers and level as they were before, whatever ran inside set up: ``MCPServer()`` sets up
    logging when nothing has, and so does ``load_learner_code`` (``plain_logging``)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def load_learner_code(
    lab: str, code: str, run: Callable[[Any, dict[str, Any]], Any] = exec
) -> tuple[dict[str, Any], str | None]:
    """Run the learner's answer cells, each on its own, in a fresh namespace holding the lab's kit.

    Returns the namespace and, when any cell failed, what went wrong (the names a failed cell
    did define stay usable). ``run(code, namespace)`` runs one compiled cell (default ``exec``).
    """
    kits = _kits()
    if lab not in kits:
        raise SystemExit(f"No lab named {lab!r}; known labs: {', '.join(sorted(kits))}.")
    plain_logging()
    namespace: dict[str, Any] = {"__name__": "submission", **kits[lab]()}
    cells = code.split(f"\n{CELL_SEPARATOR}\n")
    errors = []
    for number, cell in enumerate(cells, start=1):
        filename = "<answer cells>" if len(cells) == 1 else f"<answer cell {number}>"
        try:
            run(compile(cell, filename, "exec"), namespace)  # the learner's cells, in the host
        except NotImplementedError:
            which = "your answer cells are" if filename == "<answer cells>" else f"{filename.strip('<>')} is"
            errors.append(f"{which} not written yet (it raises NotImplementedError)")
        except BaseException as exc:  # noqa: BLE001 - a learner's SystemExit or KeyboardInterrupt must not stop the host
            errors.append(describe_exception(exc, filename))
    load_error = "; ".join(errors) or None
    namespace[LOAD_ERRORS] = load_error
    return namespace, load_error


def call_here(handler: Callable[..., Any], *args: Any) -> Any:
    """How the host over stdio runs a harness tool's handler, and the learner's function in it: in the serving thread.

    The harness's calls are short and one at a time, and whoever talks to the host over stdio stops it when a
    call hangs (the grader), so no worker thread has to keep the loop free: each call is spared the hop to one
    and back, and the two threads' turns at the interpreter. The learner's function sees no event loop running, as in
    the worker thread an in-process host (a lab notebook's) runs it in: it may start one of its own.
    """
    loop = asyncio._get_running_loop()
    asyncio._set_running_loop(None)
    try:
        return handler(*args)
    finally:
        asyncio._set_running_loop(loop)


def build_server(
    lab: str, namespace: dict[str, Any], *, load_error: str | None = None, run: Callable[..., Any] | None = None
) -> Server:
    """The learner host for ``lab`` around ``namespace``.

    ``load_error`` (what failed while the answer cells ran) is added to the message of any
    call that needs a name those cells did not define. In a lab where the learner writes the
    server, that server itself is served. ``run(handler, *args)`` runs each harness tool's handler
    (default: in a worker thread, which an in-process host needs: see ``servers.toolkit.build_server``).
    """
    hosts = _hosts()
    if lab not in hosts:
        raise SystemExit(f"No lab named {lab!r}; known labs: {', '.join(sorted(hosts))}.")
    if load_error is not None:
        namespace.setdefault(LOAD_ERRORS, load_error)
    if lab in SERVER_LABS:
        return learner_server(namespace)
    return build_mcp_server(
        f"learner-host-{lab}", hosts[lab](namespace), invalid_arguments=harness_arguments_refused, run=run
    )


def learner_server(namespace: dict[str, Any]) -> Server:
    """The learner's own MCPServer, or a server whose every request says why there is none."""
    from mcp.server.mcpserver import MCPServer

    server = namespace.get("server")
    load_error = namespace.get(LOAD_ERRORS)
    if isinstance(server, MCPServer):
        lowlevel = server._lowlevel_server  # the low-level server behind it, as the SDK's own Client uses
        if load_error:
            # The server is served as far as the cells built it; the handshake's instructions carry
            # what failed, so every failing check can say why (labkit.checking.run_check).
            lowlevel.instructions = f"{LOAD_ERROR_MARK}{load_error}"
        return lowlevel
    why = f" Your answer cells failed to run: {load_error}." if load_error else ""
    found = "" if server is None else f" (`server` is a {type(server).__name__})"
    message = f"Your answer cells define no `server = MCPServer(...)`{found}.{why}"

    async def refuse(ctx: Any, params: Any) -> Any:
        raise LearnerCodeError(message)

    return Server(
        "no-server",
        on_list_tools=refuse,
        on_call_tool=refuse,
        on_list_resources=refuse,
        on_list_resource_templates=refuse,
        on_read_resource=refuse,
    )


def untraced(server: Server) -> Server:
    """``server`` without the SDK's OpenTelemetry middleware, its other middleware kept (a learner's own included).

    The SDK puts a span around every request, on by default; grading exports no traces, so each span is made and
    dropped, which cost a lab 1 host about a tenth of its CPU. Nothing on the wire changes.
    """
    try:
        from mcp.server._otel import OpenTelemetryMiddleware
    except ImportError:  # an SDK that moved it: the spans stay
        return server
    server.middleware[:] = [step for step in server.middleware if not isinstance(step, OpenTelemetryMiddleware)]
    return server


def serve(lab: str, namespace: dict[str, Any], load_error: str | None, run: Callable[..., Any] = call_here) -> NoReturn:
    """Serve the host for ``lab`` around ``namespace`` on stdio until the session ends, then end the process.

    It ends at once, whatever threads remain: a worker thread still running learner code (a tool of a
    learner's server that loops, or one the exit cut short) must not keep the process alive after its
    session is over. ``run``: as ``build_server`` takes it. It serves no OpenTelemetry spans (``untraced``).
    """
    try:
        run_stdio(untraced(build_server(lab, namespace, load_error=load_error, run=run)), in_turn=True)
    except SystemExit as exc:  # sys.exit in a tool of a learner-written server ends the serving loop from inside
        status = exc.code if isinstance(exc.code, int) else 1
    else:
        status = 0
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
