"""``python -m grader resolve``: the effective MCP servers as JSON, or explained in sentences."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from labtests import write_json

from grader.cli import main

REPO = Path(__file__).resolve().parents[2]
SECRET = "ghp_resolved_secret_value_123"


GITHUB = {
    "type": "http",
    "url": "https://api.githubcopilot.com/mcp",
    "headers": {"Authorization": "Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}"},
}


def guide_example(home: Path, project: Path) -> None:
    """The .mcp.json of *Exam guide › The `.mcp.json` schema (with an example)*, plus a user and a local `github`."""
    write_json(
        project / ".mcp.json",
        {
            "mcpServers": {
                "github": GITHUB,
                "postgres-readonly": {
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-postgres", "${DATABASE_URL_RO}"],
                    "env": {"PGSSLMODE": "require"},
                },
            }
        },
    )
    write_json(
        home / ".claude.json",
        {
            "mcpServers": {"github": {"type": "http", "url": "https://user.example.com/mcp"}},
            "projects": {str(project.resolve()): {"mcpServers": {"github": GITHUB}}},
        },
    )


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["resolve", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(err: str, *fragments: str) -> None:
    assert err.startswith("error: ")
    assert err.count("\n") == 1 and err.endswith("\n")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


def test_resolve_prints_servers_skipped_and_warnings_as_json(home: Path, project: Path, capsys) -> None:
    guide_example(home, project)

    code, out, err = run(
        capsys, "--home", str(home), "--project", str(project), "--env", f"GITHUB_PERSONAL_ACCESS_TOKEN={SECRET}"
    )

    data = json.loads(out)
    assert code == 0 and err == ""
    assert set(data) == {"servers", "skipped", "warnings"}
    assert data["servers"]["github"] == {
        "scope": "local",
        "type": "http",
        "url": "https://api.githubcopilot.com/mcp",
        "headers": {"Authorization": f"Bearer {SECRET}"},
    }
    assert data["servers"]["postgres-readonly"]["approval"] == "pending"
    assert [w["kind"] for w in data["warnings"]] == ["name_conflict", "missing_variable"]


def test_env_pairs_set_variables_and_an_empty_value_counts_as_set(home: Path, project: Path, capsys) -> None:
    write_json(
        project / ".mcp.json",
        {
            "mcpServers": {
                "api-server": {
                    "type": "http",
                    "url": "${API_BASE_URL:-https://api.example.com}/mcp",
                    "headers": {"K": "${API_KEY}"},
                }
            }
        },
    )

    code, out, _ = run(
        capsys, "--home", str(home), "--project", str(project), "--env", "API_BASE_URL=", "--env", "API_KEY=a=b"
    )

    data = json.loads(out)
    assert code == 0
    assert data["servers"]["api-server"]["url"] == "/mcp"
    assert data["servers"]["api-server"]["headers"] == {"K": "a=b"}
    assert [w["kind"] for w in data["warnings"]] == ["invalid_url"]


@pytest.mark.parametrize("pair", ["NOEQUALS", "=value"])
def test_a_bad_env_pair_exits_2_with_a_one_line_message(home: Path, project: Path, capsys, pair: str) -> None:
    code, out, err = run(capsys, "--home", str(home), "--project", str(project), "--env", pair)

    assert code == 2 and out == ""
    assert_one_line_error(err, "--env takes KEY=VALUE", repr(pair))


def test_only_the_given_environment_is_used(home: Path, project: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    write_json(project / ".mcp.json", {"mcpServers": {"github": GITHUB}})
    monkeypatch.setenv("GITHUB_PERSONAL_ACCESS_TOKEN", SECRET)

    code, out, _ = run(capsys, "--home", str(home), "--project", str(project))

    data = json.loads(out)
    assert code == 0
    assert data["servers"]["github"]["headers"] == {"Authorization": "Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}"}
    assert data["warnings"][0]["message"] == "Missing environment variables: GITHUB_PERSONAL_ACCESS_TOKEN."
    assert SECRET not in out


def test_readable_shows_references_by_name_never_the_secret_and_explains(home: Path, project: Path, capsys) -> None:
    guide_example(home, project)

    code, out, _ = run(
        capsys,
        "--home", str(home), "--project", str(project), "--readable",
        "--env", f"GITHUB_PERSONAL_ACCESS_TOKEN={SECRET}",
        "--env", "DATABASE_URL_RO=postgres://reader:pg-password@db/orders",
    )  # fmt: skip

    assert code == 0
    assert SECRET not in out and "pg-password" not in out
    assert "github  (local scope, http)" in out
    assert "header Authorization: Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}" in out
    assert "command: npx -y @modelcontextprotocol/server-postgres ${DATABASE_URL_RO}" in out
    assert "postgres-readonly  (project scope, stdio, pending)" in out
    assert "Local scope overrides the project and user definitions of `github`" in out
    assert "\nwhy:\n" in out


def test_readable_lists_skipped_entries_and_warnings(home: Path, project: Path, capsys) -> None:
    write_json(
        project / ".mcp.json",
        {"mcpServers": {"x": {"url": "https://x.example.com/mcp"}, "later": {"type": "http", "url": ""}}},
    )

    code, out, _ = run(capsys, "--home", str(home), "--project", str(project), "--readable")

    assert code == 0
    assert "later  (project scope, http, pending, not configured)" in out
    assert (
        '\nskipped:\n  x (project): Skipped — MCP server "x" has a "url" but no "type"; '
        'add "type": "http" (or "sse" / "ws") to this entry\n'
    ) in out
    assert '`x` (project scope) is not loaded: MCP server "x" has a "url" but no "type";' in out


def test_readable_shows_every_reference_by_name_with_its_default_dropped(home: Path, project: Path, capsys) -> None:
    # Conformance record rule 17: `${A:-x}/mcp` is displayed `${A}/mcp`, in every field.
    write_json(
        project / ".mcp.json",
        {
            "mcpServers": {
                "api": {
                    "type": "http",
                    "url": "${BASE:-https://fallback.example.com}/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN:-anonymous}"},
                },
                "tool": {
                    "command": "${PY:-/usr/bin/python3}",
                    "args": ["${SCRIPT:-server.py}", "--db=${DB_URL}"],
                    "env": {"PASSWORD": "${DB_PASSWORD:-hunter2}"},
                },
            }
        },
    )

    code, out, _ = run(
        capsys,
        "--home", str(home), "--project", str(project), "--readable",
        "--env", "BASE=https://resolved-base.example.com", "--env", f"TOKEN={SECRET}",
        "--env", "PY=/opt/resolved/python", "--env", "DB_URL=postgres://reader:pg-password@db/orders",
    )  # fmt: skip

    assert code == 0
    assert "  url: ${BASE}/mcp\n" in out
    assert "  header Authorization: Bearer ${TOKEN}\n" in out
    assert "  command: ${PY} ${SCRIPT} --db=${DB_URL}\n" in out
    assert "  env PASSWORD=${DB_PASSWORD}\n" in out
    for resolved in (
        "resolved-base",
        SECRET,
        "/opt/resolved",
        "pg-password",
        "fallback.example.com",
        "anonymous",
        "hunter2",
        ":-",
    ):
        assert resolved not in out


def test_readable_shows_a_scope_conflict_with_references_by_name(home: Path, project: Path, capsys) -> None:
    write_json(
        home / ".claude.json",
        {
            "mcpServers": {"api": {"type": "http", "url": "${H:-http://localhost:1}/mcp"}},
            "projects": {
                str(project.resolve()): {"mcpServers": {"api": {"type": "http", "url": "http://localhost:1/mcp"}}}
            },
        },
    )

    code, out, _ = run(
        capsys, "--home", str(home), "--project", str(project), "--readable", "--env", "H=http://other.example:1"
    )

    assert code == 0
    assert (
        '  api (local, name_conflict): Server "api" is defined in multiple scopes with different endpoints: '
        "user (${H}/mcp), local (http://localhost:1/mcp). OAuth tokens are stored per endpoint"
    ) in out
    assert "other.example" not in out


def test_readable_marks_a_server_disabled_for_this_project(home: Path, project: Path, capsys) -> None:
    write_json(project / ".mcp.json", {"mcpServers": {"a": {"command": "run"}}})
    write_json(home / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})
    write_json(home / ".claude.json", {"projects": {str(project.resolve()): {"disabledMcpServers": ["a"]}}})

    code, out, _ = run(capsys, "--home", str(home), "--project", str(project), "--readable")

    assert code == 0
    assert "a  (project scope, stdio, approved, disabled for this project)" in out


def test_a_servers_key_instead_of_mcp_servers_exits_2_naming_both_keys(home: Path, project: Path, capsys) -> None:
    path = write_json(project / ".mcp.json", {"servers": {"github": GITHUB}})

    code, out, err = run(capsys, "--home", str(home), "--project", str(project))

    assert code == 2 and out == ""
    assert_one_line_error(err, str(path), 'Missing "mcpServers" — found "servers" instead')


def test_readable_shows_only_the_host_of_a_managed_server(home: Path, project: Path, tmp_path: Path, capsys) -> None:
    # Claude Code docs, MCP › How references are shown in `/mcp` and CLI output: for a managedMcpServers server these views show only the URL's host.
    managed = write_json(
        tmp_path / "managed.json",
        {
            "managedMcpServers": {
                "corp": {"type": "http", "url": "https://mcp.corp.example.com/tenants/${TENANT_ID}/mcp"}
            }
        },
    )

    code, out, _ = run(capsys, "--home", str(home), "--project", str(project), "--managed", str(managed), "--readable")

    assert code == 0
    assert "mcp.corp.example.com" in out
    assert "/tenants/" not in out


def test_malformed_mcp_json_exits_2_naming_the_file_and_position(home: Path, project: Path, capsys) -> None:
    path = write_json(project / ".mcp.json", '{\n  "mcpServers": {\n    "x": {"command": "run",}\n  }\n}\n')

    code, out, err = run(capsys, "--home", str(home), "--project", str(project))

    assert code == 2 and out == ""
    # Python 3.13's json points at the trailing comma itself, earlier versions at the brace after it.
    assert_one_line_error(err, str(path), "line 3, column 27" if sys.version_info >= (3, 13) else "line 3, column 28")


def test_a_non_object_mcp_servers_exits_2(home: Path, project: Path, capsys) -> None:
    write_json(project / ".mcp.json", {"mcpServers": ["github"]})

    code, _, err = run(capsys, "--home", str(home), "--project", str(project))

    assert code == 2
    assert_one_line_error(err, '"mcpServers" must be an object')


@pytest.mark.parametrize("flag", ["--home", "--project"])
def test_a_folder_that_is_not_a_folder_exits_2(home: Path, project: Path, tmp_path: Path, capsys, flag: str) -> None:
    not_a_folder = write_json(tmp_path / "file.json", "{}")
    folders = {"--home": str(home), "--project": str(project), flag: str(not_a_folder)}

    code, out, err = run(capsys, "--home", folders["--home"], "--project", folders["--project"])

    assert code == 2 and out == ""
    assert_one_line_error(err, flag, "is not a folder")


def test_plugins_and_connectors_are_given_on_the_command_line(
    home: Path, project: Path, tmp_path: Path, capsys
) -> None:
    plugin = tmp_path / "plugins" / "p"
    write_json(
        plugin / "plugin.json", {"name": "my-plugin", "mcpServers": {"tools": {"command": "${CLAUDE_PLUGIN_ROOT}/run"}}}
    )
    gmail = {"type": "http", "url": "https://gmail.example.com/mcp"}
    connectors = write_json(tmp_path / "connectors.json", {"mcpServers": {"claude.ai Gmail": gmail}})

    code, out, _ = run(
        capsys, "--home", str(home), "--project", str(project), "--plugin", str(plugin), "--connectors", str(connectors)
    )

    servers = json.loads(out)["servers"]
    assert code == 0
    assert servers["plugin:my-plugin:tools"]["command"] == f"{plugin}/run"
    assert servers["claude.ai Gmail"]["scope"] == "connector"


def test_python_m_grader_resolve_runs_end_to_end(home: Path, project: Path, tmp_path: Path) -> None:
    write_json(project / ".mcp.json", {"mcpServers": {"github": GITHUB}})
    environment = {**os.environ, "GITHUB_PERSONAL_ACCESS_TOKEN": SECRET}

    ok = subprocess.run(
        [sys.executable, "-m", "grader", "resolve", "--home", str(home), "--project", str(project)],
        check=False, cwd=REPO, env=environment, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    broken = subprocess.run(
        [sys.executable, "-m", "grader", "resolve", "--home", str(tmp_path / "absent"), "--project", str(project)],
        check=False, cwd=REPO, env=environment, capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["servers"]["github"]["headers"] == {"Authorization": "Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}"}
    assert SECRET not in ok.stdout
    assert broken.returncode == 2
    assert broken.stdout == "" and broken.stderr.startswith("error: --home") and "Traceback" not in broken.stderr
