"""Where a subprocess server's stderr goes: out of a notebook's cells into a log file, and back into the cell when
the server fails to start; and the session whose loop runs in the calling thread (InlineSession)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

import anyio
import pytest
from mcp.server.mcpserver import MCPServer

from servers import client


@pytest.fixture
def in_a_notebook(tmp_path, monkeypatch):
    """The client as a Jupyter kernel runs it, with the kernel's log file under tmp_path."""
    log = tmp_path / "servers.log"
    monkeypatch.setattr(client, "in_a_kernel", lambda: True)
    monkeypatch.setattr(client, "server_log_path", lambda: log)
    monkeypatch.setattr(client, "_kernel_log", None)
    yield log
    if client._kernel_log is not None:
        client._kernel_log.close()


def test_outside_a_notebook_a_server_writes_to_the_real_stderr() -> None:
    assert client.server_errlog() is sys.__stderr__


def test_in_a_notebook_a_servers_log_lines_go_to_the_log_file_not_to_the_cell(in_a_notebook, capfd) -> None:
    with client.connect("support_desk", env={"DESK_ROLE": "agent"}) as desk:
        assert desk.tools()
    assert "client connected" in in_a_notebook.read_text()
    assert capfd.readouterr().err == ""


def test_in_a_notebook_a_server_that_fails_to_start_says_why(in_a_notebook) -> None:
    with pytest.raises(client.ServerStartError) as failed:
        client.connect("no_such_server")
    message = str(failed.value)
    assert message.startswith("The server 'python -m servers.no_such_server' stopped before it answered")
    assert "No module named servers.no_such_server" in message


def test_a_failed_command_quotes_only_its_own_lines(in_a_notebook) -> None:
    with client.connect("support_desk"):
        pass
    code = "import sys; sys.stderr.write('bad configuration: DESK_ROLE is missing\\n'); sys.exit(2)"
    with pytest.raises(client.ServerStartError) as failed:
        client.connect_params(sys.executable, ["-c", code])
    message = str(failed.value)
    assert message.endswith("It wrote on stderr:\nbad configuration: DESK_ROLE is missing")
    assert "client connected" not in message


def where_tools_run() -> MCPServer:
    """An in-process server whose tools say which thread runs them, and one that never answers."""
    server = MCPServer("where")

    @server.tool()
    async def thread() -> int:
        return threading.get_ident()

    @server.tool()
    async def forever() -> str:
        await anyio.sleep(60)
        return "late"

    return server


def test_an_inline_session_runs_its_loop_in_the_calling_thread_where_a_session_uses_a_thread_of_its_own() -> None:
    with client.Session(where_tools_run(), timeout=10) as threaded:
        assert threaded.call("thread")["structuredContent"]["result"] != threading.get_ident()
    with client.InlineSession(where_tools_run(), timeout=10) as inline:
        assert inline.call("thread")["structuredContent"]["result"] == threading.get_ident()
        assert inline.call("thread")["structuredContent"]["result"] == threading.get_ident()  # and again
        assert [tool["name"] for tool in inline.tools()] == ["thread", "forever"]


def test_an_inline_session_answers_a_stdio_server_as_a_session_does() -> None:
    from mcp.client.stdio import stdio_client

    params = client.stdio_params("support_desk", env={"DESK_ROLE": "agent"})
    with client.connect("support_desk", env={"DESK_ROLE": "agent"}) as threaded:
        want = (
            threaded.tools(),
            threaded.call("get_order", order_id="ORD-1001"),
            threaded.call("get_order", order_id="X"),
        )
    with client.InlineSession(stdio_client(params, errlog=sys.stderr), timeout=20) as inline:
        got = (inline.tools(), inline.call("get_order", order_id="ORD-1001"), inline.call("get_order", order_id="X"))
    assert got == want


def test_an_inline_sessions_call_ends_at_its_timeout_and_the_session_still_closes() -> None:
    session = client.InlineSession(where_tools_run(), timeout=10)
    session.limit_calls(0.5)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        session.call("forever")
    assert time.monotonic() - started < 5
    session.close()
    session.close()  # a second close does nothing


def test_an_inline_session_inside_a_running_loop_refuses_at_once() -> None:
    async def in_a_cell() -> None:
        client.InlineSession(where_tools_run(), timeout=10)

    with pytest.raises(RuntimeError, match="loop"):
        asyncio.run(in_a_cell())


def test_an_inline_session_whose_server_ends_at_once_raises_as_a_session_does() -> None:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-c", "pass"])
    with pytest.raises(Exception) as threaded:
        client.Session(stdio_client(params), timeout=10)
    with pytest.raises(Exception) as inline:
        client.InlineSession(stdio_client(params), timeout=10)
    assert type(inline.value) is type(threaded.value)
