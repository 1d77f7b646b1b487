"""``grader.checker.connect``: a server found in ``.mcp.json``, a command that does not start, a session given by the caller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.checker.connect import mcp_json_params
from grader.checker.findings import CheckInputError
from grader.cli import main
from grader.server_check import check_server
from servers.client import connect

from .shop import shop


def test_a_session_opened_by_the_caller_is_checked_and_left_open() -> None:
    with connect(shop(), timeout=10) as session:
        report = check_server(session, server_name="shop")
        assert [t["name"] for t in session.tools()] == ["search_orders", "get_order"]

    assert report.ok


def test_a_server_is_found_in_the_projects_mcp_json_without_reading_the_users_home(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "desk": {
                        "command": "python",
                        "args": ["-m", "servers.support_desk"],
                        "env": {"DESK_ROLE": "${ROLE:-guest}"},
                    }
                }
            }
        )
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"private": {"command": "python"}}}))

    params = mcp_json_params("desk", project=project, env={})

    assert (params.command, params.args, params.cwd) == ("python", ["-m", "servers.support_desk"], project.resolve())
    assert params.env["DESK_ROLE"] == "guest" and params.env["CLAUDE_PROJECT_DIR"] == str(project.resolve())
    with pytest.raises(CheckInputError, match="No MCP server named 'private'"):
        mcp_json_params("private", project=project, env={})
    assert mcp_json_params("private", project=project, home=home, env={}).command == "python"


def test_a_remote_server_in_mcp_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"api": {"type": "http", "url": "https://mcp.example.com/mcp"}}})
    )

    with pytest.raises(CheckInputError, match="stdio servers only"):
        mcp_json_params("api", project=tmp_path, env={})


def test_the_cli_exits_2_with_one_line_when_the_command_does_not_start_or_the_sample_file_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "samples.json"
    broken.write_text("not json")

    assert main(["check-server", "--command", "no-such-server-command-xyz"]) == 2
    missing = capsys.readouterr().err
    assert main(["check-server", "--command", "python -m servers.support_desk", "--sample", str(broken)]) == 2
    bad_sample = capsys.readouterr().err

    assert missing.count("\n") == 1 and "cannot be run" in missing
    assert bad_sample.count("\n") == 1 and "not valid JSON" in bad_sample
