"""Opening a session on the server to check: a command line, a ``.mcp.json`` entry, or a URL; and listing its tools.

``start`` runs a stdio server with its stderr captured to a file (``log_rules`` reads it afterwards)
and connects as ``CLIENT_NAME``; ``http_session`` opens a Streamable HTTP session. A command that
does not start, or does not speak MCP, is a ``ServerStartError`` in one sentence, never a traceback.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

from grader.checker.findings import CheckInputError, describe
from grader.scopes import REMOTE_TYPES, ConfigError, resolve
from servers.client import BASE_ENV_KEYS, Session, wire

CLIENT_NAME = "grader-check-server"
CLIENT_INFO = types.Implementation(name=CLIENT_NAME, version="1.0")
PROBE_USER_AGENT = f"{CLIENT_NAME}/1.0 (MCP client)"


class ServerStartError(CheckInputError):
    """The server command did not start, or did not speak MCP on stdio."""


def command_params(
    command_line: str, *, cwd: str | os.PathLike | None = None, env: Mapping[str, str] | None = None
) -> StdioServerParameters:
    """Parameters for a command line such as ``"python -m servers.support_desk"``."""
    try:
        parts = shlex.split(command_line)
    except ValueError as exc:
        raise CheckInputError(f"Cannot split the command {command_line!r}: {exc}.") from None
    if not parts:
        raise CheckInputError('The server command is empty; give one such as "python -m servers.support_desk".')
    return StdioServerParameters(command=parts[0], args=parts[1:], env=dict(env or {}), cwd=cwd)


def mcp_json_params(
    name: str,
    *,
    project: str | os.PathLike | None = None,
    home: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
) -> StdioServerParameters:
    """The stdio server ``name`` as Claude Code would resolve it for ``project``.

    Without ``home`` the user's own ``~/.claude.json`` is not read: resolution uses an empty
    temporary home (and ignores CLAUDE_CONFIG_DIR), so only the project's ``.mcp.json`` counts.
    """
    project_dir = Path(project or Path.cwd()).resolve()
    if not project_dir.is_dir():
        raise CheckInputError(f"--project {project_dir} is not a folder.")
    env = dict(os.environ if env is None else env)
    with ExitStack() as stack:
        if home is None:
            home_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="check-server-home-")))
            env.pop("CLAUDE_CONFIG_DIR", None)
        else:
            home_dir = Path(home)
            if not home_dir.is_dir():
                raise CheckInputError(f"--home {home_dir} is not a folder.")
        try:
            res = resolve(home_dir, project_dir, env)
        except ConfigError as exc:
            raise CheckInputError(str(exc)) from None
    server = res.servers.get(name)
    if server is None:
        skipped = [s["reason"] for s in res.skipped if s["name"] == name]
        if skipped:
            raise CheckInputError(f"The server {name!r} is not loaded: {skipped[0]}.")
        known = ", ".join(sorted(res.servers)) or "none"
        raise CheckInputError(f"No MCP server named {name!r} for the project {project_dir} (servers found: {known}).")
    if server["type"] in REMOTE_TYPES:
        raise CheckInputError(
            f"{name!r} is a {server['type']} server at {server['url']}; check-server starts stdio servers only."
        )
    # Claude Code sets CLAUDE_PROJECT_DIR in a server's environment (Exam guide › Environment variable expansion).
    server_env = {"CLAUDE_PROJECT_DIR": str(project_dir), **server["env"]}
    return StdioServerParameters(command=server["command"], args=server["args"], env=server_env, cwd=project_dir)


def _last_line(path: Path) -> str:
    try:
        lines = [
            line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()
        ]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def start(params: StdioServerParameters, *, stderr_path: str | os.PathLike, timeout: float | None = 30.0) -> Session:
    """Start a stdio server with its stderr written to ``stderr_path`` and open a session.

    ServerStartError, in one sentence, when the command is missing or exits before answering.
    """
    env = {k: v for k, v in os.environ.items() if k in BASE_ENV_KEYS}
    env.update(params.env or {})
    full = StdioServerParameters(command=params.command, args=list(params.args), env=env, cwd=params.cwd)
    shown = shlex.join([params.command, *params.args])
    errlog = open(stderr_path, "w", encoding="utf-8")  # noqa: SIM115 - closed below or by the session
    try:
        session = Session(stdio_client(full, errlog=errlog), timeout=timeout, client_info=CLIENT_INFO)
    except BaseException as exc:  # FileNotFoundError, or an ExceptionGroup around "Connection closed"
        errlog.close()
        if isinstance(exc, KeyboardInterrupt):
            raise
        last = _last_line(Path(stderr_path))
        said = f" Its last words on stderr: {last}" if last else ""
        if isinstance(exc, (FileNotFoundError, PermissionError)):
            raise ServerStartError(
                f"The server command {shown!r} cannot be run: {exc.strerror}. Check the program's path (or give it in full).{said}"
            ) from None
        raise ServerStartError(
            f"The server command {shown!r} did not start an MCP server on stdio ({describe(exc)}); "
            f"run it by hand to see why.{said}"
        ) from None
    session._stack.callback(errlog.close)
    return session


def list_tools(session: Session) -> list[dict[str, Any]]:
    """Every page of ``tools/list``, each tool in wire format with its own ``_meta``."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):  # a paginator that never ends cannot hang the check
        page = session._run(lambda cursor=cursor: session.client.list_tools(cursor=cursor))
        # envelope=True: for a tool, "_meta" is the tool's own metadata (maxResultSizeChars, alwaysLoad).
        tools.extend(wire(tool, envelope=True) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def http_session(url: str, headers: Mapping[str, str], timeout: float | None) -> Session:
    """An MCP session over Streamable HTTP, sending ``headers`` (e.g. Authorization) with every request."""
    from contextlib import asynccontextmanager

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    @asynccontextmanager
    async def transport():  # the SDK's Transport: an async context manager yielding the two streams
        limits = httpx2.Timeout(timeout or 30.0, read=max(timeout or 30.0, 60.0))
        async with (
            httpx2.AsyncClient(headers={"User-Agent": PROBE_USER_AGENT, **headers}, timeout=limits) as client,
            streamable_http_client(url, http_client=client) as streams,
        ):
            yield streams

    try:
        return Session(transport(), timeout=timeout, client_info=CLIENT_INFO)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise CheckInputError(f"Could not open an MCP session at {url} ({describe(exc)}).") from None
