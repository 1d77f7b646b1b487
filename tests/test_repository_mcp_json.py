"""The repository's own .mcp.json: it resolves cleanly and every server it registers starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.scopes import resolve
from servers.client import connect_params

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def resolution(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    return resolve(home, REPO, {})


def test_the_committed_mcp_json_resolves_without_warnings_or_skips(resolution):
    assert resolution.skipped == []
    assert resolution.warnings == []
    assert set(resolution.servers) == {"support-desk", "notes", "tracker"}
    for server in resolution.servers.values():
        assert server["scope"] == "project" and server["approval"] == "approved"
        # CLAUDE_PROJECT_DIR is not in Claude Code's environment: the default applies.
        assert server["command"] == "./.venv/bin/python"


def test_every_registered_server_starts_from_the_project_root_and_lists_its_tools(resolution):
    expected = {
        "support-desk": {"search_orders", "get_order", "refund_order"},
        "notes": {"add_note", "list_notes"},
        "tracker": {"list_issues", "search_issues", "get_issue", "create_issue", "set_status"},
    }
    for name, server in resolution.servers.items():
        with connect_params(server["command"], server["args"], env=server["env"], cwd=REPO, timeout=30) as session:
            assert {tool["name"] for tool in session.tools()} == expected[name]
