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
        # Claude Code starts a stdio server in the folder it was started from, so the command finds the
        # checkout's root itself rather than relying on a relative path or ${CLAUDE_PROJECT_DIR:-.}.
        assert server["command"] == "sh" and "git rev-parse --show-toplevel" in server["args"][1]
        # Expansion is for secrets, not for switching a server's behaviour: no variables, no env switches.
        assert "${" not in json.dumps(server) and not server["env"]


@pytest.mark.parametrize("folder", [".", "notebooks", "labs/source"])
def test_every_registered_server_starts_from_any_folder_of_the_checkout_and_lists_its_tools(resolution, folder):
    expected = {
        "support-desk": {"search_orders", "get_order", "refund_order"},
        "notes": {"add_note", "list_notes"},
        "tracker": {"list_issues", "search_issues", "get_issue", "create_issue", "set_status"},
    }
    for name, server in resolution.servers.items():
        with connect_params(
            server["command"], server["args"], env=server["env"], cwd=REPO / folder, timeout=30
        ) as session:
            assert {tool["name"] for tool in session.tools()} == expected[name]
