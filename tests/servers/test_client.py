"""Where a subprocess server's stderr goes: out of a notebook's cells into a log file, and back into the cell when
the server fails to start."""

from __future__ import annotations

import sys

import pytest

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
