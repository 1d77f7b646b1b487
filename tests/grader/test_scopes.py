"""Scopes, precedence, approvals, skips, warnings and endpoint de-duplication.

Source: shared/seeds/004_16e38cc9560e0e5c.txt lines 63-290 and 613-840, and the scopes
section of shared/seeds/000_99b6002e9d2fa51e.txt (lines 101-116).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from grader.scopes import (
    PRECEDENCE,
    RESERVED_NAMES,
    ConfigError,
    approval,
    is_absolute_url,
    normalise_url,
    plugin_tool_name,
    read_plugin,
    read_sources,
    resolve,
    resolve_sources,
)

# --- building the files in tmp_path ---------------------------------------------------------


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def claude_json(home: Path, *, user: dict | None = None, local: dict | None = None, project: Path | None = None) -> None:
    """~/.claude.json: top-level mcpServers (user scope), projects[<abs path>].mcpServers (local scope)."""
    document: dict[str, Any] = {}
    if user is not None:
        document["mcpServers"] = user
    if local is not None:
        assert project is not None
        document["projects"] = {str(project.resolve()): {"mcpServers": local}}
    write_json(home / ".claude.json", document)


def mcp_json(project: Path, servers: dict) -> Path:
    return write_json(project / ".mcp.json", {"mcpServers": servers})


def settings(home: Path, **values: Any) -> None:
    write_json(home / ".claude" / "settings.json", values)


def make_plugin(root: Path, servers: dict, *, name: str | None = None, inline: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {} if name is None else {"name": name}
    if inline:
        manifest["mcpServers"] = servers
    else:
        write_json(root / ".mcp.json", {"mcpServers": servers})
    if manifest:
        write_json(root / "plugin.json", manifest)
    return root


def http(url: str, **extra: Any) -> dict[str, Any]:
    return {"type": "http", "url": url, **extra}


def stdio(command: str, *args: str, **extra: Any) -> dict[str, Any]:
    return {"command": command, "args": list(args), **extra}


def kinds(res, server: str | None = None) -> list[str]:
    return [w["kind"] for w in res.warnings if server is None or w["server"] == server]


def skip_reason(res, name: str) -> str:
    [reason] = [s["reason"] for s in res.skipped if s["name"] == name]
    return reason


# --- where each scope is read from -----------------------------------------------------------


def test_user_scope_is_the_top_level_mcp_servers_of_claude_json(home: Path, project: Path) -> None:
    claude_json(home, user={"notes": stdio("npx", "-y", "@me/notes-mcp")})

    res = resolve(home, project, {})

    assert res.servers["notes"] == {"scope": "user", "type": "stdio", "command": "npx", "args": ["-y", "@me/notes-mcp"], "env": {}}


def test_local_scope_is_read_under_the_resolved_project_path(home: Path, project: Path) -> None:
    claude_json(home, local={"scratch": stdio("python", "./scratch_server.py")}, project=project)

    res = resolve(home, project, {})

    assert res.servers["scratch"]["scope"] == "local"


def test_local_scope_is_found_when_the_project_is_given_as_a_relative_path(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude_json(home, local={"scratch": stdio("python")}, project=project)
    monkeypatch.chdir(project.parent)

    res = resolve(home, Path("project"), {})

    assert res.servers["scratch"]["scope"] == "local"


def test_another_projects_local_servers_are_not_seen(home: Path, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    claude_json(home, local={"scratch": stdio("python")}, project=other)

    res = resolve(home, project, {})

    assert res.servers == {}


def test_project_scope_is_the_mcp_json_at_the_project_root(home: Path, project: Path) -> None:
    mcp_json(project, {"jira": http("https://mcp.atlassian.com/v1/sse")})

    res = resolve(home, project, {})

    assert res.servers["jira"]["scope"] == "project"
    assert res.servers["jira"]["url"] == "https://mcp.atlassian.com/v1/sse"


def test_read_sources_returns_each_scope_and_the_user_settings(home: Path, project: Path) -> None:
    claude_json(home, user={"u": stdio("u")}, local={"l": stdio("l")}, project=project)
    mcp_json(project, {"p": stdio("p")})
    settings(home, enableAllProjectMcpServers=True)

    sources, user_settings = read_sources(home, project)

    assert sources["user"] == {"u": stdio("u")}
    assert sources["local"] == {"l": stdio("l")}
    assert sources["project"] == {"p": stdio("p")}
    assert sources["managed"] == {} and sources["connector"] == {}
    assert user_settings == {"enableAllProjectMcpServers": True}


def test_missing_files_are_simply_empty(home: Path, project: Path) -> None:
    res = resolve(home, project, {})

    assert res.to_json() == {"servers": {}, "skipped": [], "warnings": []}


def test_an_empty_file_counts_as_missing(home: Path, project: Path) -> None:
    write_json(project / ".mcp.json", "  \n")

    assert resolve(home, project, {}).servers == {}


# --- precedence ----------------------------------------------------------------------------


def test_precedence_is_managed_local_project_user_plugin_connector() -> None:
    assert PRECEDENCE == ("managed", "local", "project", "user", "plugin", "connector")


def test_local_beats_project_beats_user_and_the_winner_is_used_whole(home: Path, project: Path) -> None:
    claude_json(
        home,
        user={"github": http("https://user.example.com/mcp", headers={"X-User": "u"})},
        local={"github": http("https://local.example.com/mcp")},
        project=project,
    )
    mcp_json(project, {"github": http("https://project.example.com/mcp", headers={"X-Project": "p"})})

    res = resolve(home, project, {})

    assert res.servers["github"] == {"scope": "local", "type": "http", "url": "https://local.example.com/mcp", "headers": {}}
    assert res.configured["github"] == http("https://local.example.com/mcp")


def test_project_beats_user_without_merging_fields(home: Path, project: Path) -> None:
    claude_json(home, user={"db": stdio("npx", "user-db", env={"FROM_USER": "1"})})
    mcp_json(project, {"db": stdio("npx", "project-db")})

    res = resolve(home, project, {})

    assert res.servers["db"]["scope"] == "project"
    assert res.servers["db"]["args"] == ["project-db"]
    assert res.servers["db"]["env"] == {}


def test_the_override_is_explained_in_one_sentence(home: Path, project: Path) -> None:
    claude_json(home, user={"github": http("https://a/mcp")}, local={"github": http("https://a/mcp")}, project=project)
    mcp_json(project, {"github": http("https://a/mcp")})

    res = resolve(home, project, {})

    assert (
        "Local scope overrides the project and user definitions of `github`; its entry is used whole, no fields are merged."
        in res.explanations
    )


def test_a_single_loser_is_named_in_the_singular(home: Path, project: Path) -> None:
    claude_json(home, user={"github": http("https://a/mcp")})
    mcp_json(project, {"github": http("https://a/mcp")})

    res = resolve(home, project, {})

    assert any(e.startswith("Project scope overrides the user definition of `github`;") for e in res.explanations)


@pytest.mark.parametrize("key", ["mcpServers", "managedMcpServers"])
def test_managed_servers_beat_every_scope(home: Path, project: Path, tmp_path: Path, key: str) -> None:
    managed = write_json(tmp_path / "managed.json", {key: {"github": http("https://corp.example.com/mcp")}})
    claude_json(home, user={"github": http("https://u/mcp")}, local={"github": http("https://l/mcp")}, project=project)
    mcp_json(project, {"github": http("https://p/mcp")})

    res = resolve(home, project, {}, managed=managed)

    assert res.servers["github"]["scope"] == "managed"
    assert res.servers["github"]["url"] == "https://corp.example.com/mcp"


def test_a_managed_server_also_drops_a_plugin_with_its_endpoint(home: Path, project: Path, tmp_path: Path) -> None:
    managed = write_json(tmp_path / "managed.json", {"managedMcpServers": {"corp": http("https://corp.example.com/mcp")}})
    plugin = make_plugin(tmp_path / "p", {"corp": http("https://CORP.example.com:443/mcp/")}, name="p")

    res = resolve(home, project, {}, managed=managed, plugins=[plugin])

    assert "plugin:p:corp" not in res.servers
    assert "`corp`" in skip_reason(res, "plugin:p:corp")


def test_resolve_sources_works_on_in_memory_maps() -> None:
    res = resolve_sources({"user": {"a": stdio("u")}, "project": {"a": stdio("p")}}, {}, settings={"enabledMcpjsonServers": ["a"]})

    assert res.servers["a"] == {"scope": "project", "type": "stdio", "approval": "approved", "command": "p", "args": [], "env": {}}


# --- approvals -------------------------------------------------------------------------------


def test_a_project_server_is_pending_until_approved(home: Path, project: Path) -> None:
    mcp_json(project, {"jira": http("https://j/mcp")})

    res = resolve(home, project, {})

    assert res.servers["jira"]["approval"] == "pending"
    assert any("awaiting approval" in e for e in res.explanations)


@pytest.mark.parametrize(
    "values", [{"enableAllProjectMcpServers": True}, {"enabledMcpjsonServers": ["jira"]}], ids=["enable-all", "listed"]
)
def test_a_project_server_is_approved_by_the_user_settings(home: Path, project: Path, values: dict) -> None:
    mcp_json(project, {"jira": http("https://j/mcp")})
    settings(home, **values)

    assert resolve(home, project, {}).servers["jira"]["approval"] == "approved"


def test_disabled_mcpjson_servers_rejects_even_when_also_approved(home: Path, project: Path) -> None:
    mcp_json(project, {"jira": http("https://j/mcp"), "other": http("https://o/mcp")})
    settings(home, enableAllProjectMcpServers=True, enabledMcpjsonServers=["jira"], disabledMcpjsonServers=["jira"])

    res = resolve(home, project, {})

    assert res.servers["jira"]["approval"] == "rejected"
    assert res.servers["other"]["approval"] == "approved"


def test_approval_function_orders_rejected_over_approved_over_pending() -> None:
    assert approval("x", {}) == "pending"
    assert approval("x", {"enableAllProjectMcpServers": "yes"}) == "pending"  # only a real true approves
    assert approval("x", {"enabledMcpjsonServers": ["y"]}) == "pending"
    assert approval("x", {"enabledMcpjsonServers": ["x"]}) == "approved"
    assert approval("x", {"enabledMcpjsonServers": ["x"], "disabledMcpjsonServers": ["x"]}) == "rejected"


def test_only_project_servers_carry_an_approval(home: Path, project: Path) -> None:
    claude_json(home, user={"u": stdio("u")}, local={"l": stdio("l")}, project=project)

    res = resolve(home, project, {})

    assert "approval" not in res.servers["u"] and "approval" not in res.servers["l"]


def test_a_committed_project_settings_file_cannot_approve_its_own_servers(home: Path, project: Path) -> None:
    # Seed lines 246-247: approvals committed in the project's .claude/settings.json are ignored.
    mcp_json(project, {"jira": http("https://j/mcp")})
    write_json(project / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})

    assert resolve(home, project, {}).servers["jira"]["approval"] == "pending"


def test_disabled_mcpjson_servers_in_the_project_settings_still_rejects(home: Path, project: Path) -> None:
    # Seed line 256: "Запись disabledMcpjsonServers в любом файле настроек по-прежнему отклоняет сервер."
    mcp_json(project, {"jira": http("https://j/mcp")})
    settings(home, enableAllProjectMcpServers=True)
    write_json(project / ".claude" / "settings.json", {"disabledMcpjsonServers": ["jira"]})

    assert resolve(home, project, {}).servers["jira"]["approval"] == "rejected"


# --- skipped entries ---------------------------------------------------------------------------


def test_a_url_without_type_is_skipped_with_the_seed_message(home: Path, project: Path) -> None:
    mcp_json(project, {"x": {"url": "https://x.example.com/mcp"}})

    res = resolve(home, project, {})

    assert "x" not in res.servers
    assert res.skipped == [
        {
            "name": "x",
            "scope": "project",
            "reason": 'MCP server "x" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry.',
        }
    ]


def test_an_sdk_entry_is_skipped_with_the_seed_message(home: Path, project: Path) -> None:
    claude_json(home, user={"inproc": {"type": "sdk", "name": "inproc"}})

    res = resolve(home, project, {})

    assert "inproc" not in res.servers
    assert skip_reason(res, "inproc") == (
        'Skipped — MCP server "inproc" declares type "sdk", which only an SDK host application can register.'
    )


def test_the_reserved_names_are_those_of_the_seed() -> None:
    assert RESERVED_NAMES == {"workspace", "claude-in-chrome", "computer-use", "Claude Preview", "Claude Browser"}


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_a_reserved_name_is_skipped_with_a_warning_to_rename_it(home: Path, project: Path, name: str) -> None:
    claude_json(home, user={name: stdio("run")})

    res = resolve(home, project, {})

    assert name not in res.servers
    assert "rename" in skip_reason(res, name)
    assert [w for w in res.warnings if w["server"] == name and w["kind"] == "reserved_name" and "rename" in w["message"]]


@pytest.mark.parametrize("name", ["my server", "a.b", "слон", "x/y", "github\n"])
def test_a_name_with_characters_outside_letters_digits_hyphen_underscore_is_skipped(
    home: Path, project: Path, name: str
) -> None:
    # Seed line 192: only letters, digits, hyphens and underscores make a server name.
    mcp_json(project, {name: stdio("run")})

    res = resolve(home, project, {})

    assert res.servers == {}
    assert "not a valid server name" in skip_reason(res, name)


@given(st.text(min_size=1, max_size=12))
@example("ok\n")
def test_every_name_outside_the_allowed_characters_is_skipped(name: str) -> None:
    res = resolve_sources({"user": {name: stdio("run")}}, {})

    allowed = re.fullmatch(r"[A-Za-z0-9_-]+", name) is not None
    assert (name in res.servers) == (allowed and name not in RESERVED_NAMES)


def test_an_unknown_type_is_skipped(home: Path, project: Path) -> None:
    mcp_json(project, {"x": {"type": "grpc", "url": "https://x"}})

    res = resolve(home, project, {})

    assert "unknown type" in skip_reason(res, "x")


def test_a_malformed_type_is_skipped_not_a_crash() -> None:
    # A type that is not a string is an unknown type: the entry is skipped, the rest still resolve.
    res = resolve_sources({"project": {"x": {"type": ["http"], "url": "https://x"}, "ok": stdio("run")}}, {})

    assert "x" not in res.servers and "ok" in res.servers
    assert "unknown type" in skip_reason(res, "x")


def test_a_stdio_entry_without_a_command_is_skipped(home: Path, project: Path) -> None:
    mcp_json(project, {"x": {"type": "stdio", "args": ["a"]}})

    res = resolve(home, project, {})

    assert res.servers == {}
    assert 'without a "command"' in skip_reason(res, "x")


def test_an_entry_without_type_or_command_is_skipped_not_a_crash(home: Path, project: Path) -> None:
    # No "type" means stdio (seed line 83), and a stdio server needs a command to start.
    mcp_json(project, {"y": {"env": {"A": "1"}}, "ok": stdio("run")})

    res = resolve(home, project, {})

    assert "y" not in res.servers and "ok" in res.servers
    assert 'without a "command"' in skip_reason(res, "y")


def test_a_remote_entry_without_a_url_is_skipped(home: Path, project: Path) -> None:
    mcp_json(project, {"x": {"type": "sse"}})

    assert 'without a "url"' in skip_reason(resolve(home, project, {}), "x")


def test_an_entry_that_is_not_an_object_is_skipped(home: Path, project: Path) -> None:
    mcp_json(project, {"x": "npx server"})

    assert "not a JSON object" in skip_reason(resolve(home, project, {}), "x")


def test_a_skipped_name_does_not_hide_a_valid_lower_scope_definition(home: Path, project: Path) -> None:
    claude_json(home, user={"x": http("https://user/mcp")})
    mcp_json(project, {"x": {"url": "https://project/mcp"}})

    res = resolve(home, project, {})

    assert res.servers["x"]["scope"] == "user"
    assert skip_reason(res, "x").startswith('MCP server "x" has a "url" but no "type"')


# --- transports and urls ------------------------------------------------------------------------


def test_streamable_http_is_an_alias_for_http(home: Path, project: Path) -> None:
    mcp_json(project, {"x": {"type": "streamable-http", "url": "https://x.example.com/mcp"}})

    assert resolve(home, project, {}).servers["x"]["type"] == "http"


@pytest.mark.parametrize("kind,url", [("sse", "https://mcp.asana.com/sse"), ("ws", "wss://mcp.example.com/socket")])
def test_sse_and_ws_are_remote_transports(home: Path, project: Path, kind: str, url: str) -> None:
    mcp_json(project, {"x": {"type": kind, "url": url, "headers": {"Authorization": "Bearer t"}}})

    server = resolve(home, project, {}).servers["x"]

    assert server["type"] == kind and server["url"] == url and server["headers"] == {"Authorization": "Bearer t"}


def test_an_empty_url_is_listed_as_not_configured_without_any_warning(home: Path, project: Path) -> None:
    mcp_json(project, {"later": http("")})

    res = resolve(home, project, {})

    assert res.servers["later"]["status"] == "not_configured"
    assert res.warnings == []
    assert any("not configured" in e for e in res.explanations)


def test_a_url_that_expands_to_a_relative_path_is_warned_as_invalid(home: Path, project: Path) -> None:
    # Seed lines 809-810: API_BASE_URL="" makes the url /mcp, reported as 'url' is not a valid URL.
    mcp_json(project, {"api-server": http("${API_BASE_URL:-https://api.example.com}/mcp")})

    res = resolve(home, project, {"API_BASE_URL": ""})

    assert res.servers["api-server"]["url"] == "/mcp"
    [warning] = [w for w in res.warnings if w["kind"] == "invalid_url"]
    assert "'url' is not a valid URL" in warning["message"] and warning["server"] == "api-server"


def test_the_default_base_url_is_valid_and_not_warned(home: Path, project: Path) -> None:
    mcp_json(project, {"api-server": http("${API_BASE_URL:-https://api.example.com}/mcp")})

    res = resolve(home, project, {})

    assert res.servers["api-server"]["url"] == "https://api.example.com/mcp"
    assert res.warnings == []


def test_is_absolute_url_needs_a_scheme_and_a_host() -> None:
    assert is_absolute_url("https://h/mcp")
    assert not is_absolute_url("/mcp")
    assert not is_absolute_url("h/mcp")
    assert not is_absolute_url("http://[::1")


# --- warnings ---------------------------------------------------------------------------------


def test_whitespace_warning_names_each_field_and_never_its_value(home: Path, project: Path) -> None:
    mcp_json(
        project,
        {
            "local-tool": {"command": " run", "args": ["ok", "tail\n"], "env": {"TOKEN ": "v", "SECRET": "s3cr3t-value\n"}},
            "remote": http("https://h/mcp ", headers={"Authorization": "Bearer ghp_hidden_token\n"}),
        },
    )

    res = resolve(home, project, {})

    [local_tool] = [w for w in res.warnings if w["server"] == "local-tool"]
    [remote] = [w for w in res.warnings if w["server"] == "remote" and w["kind"] == "whitespace"]
    assert local_tool["kind"] == "whitespace"
    assert local_tool["message"] == "Leading or trailing whitespace in: command, args[1], env.TOKEN, env.SECRET"
    assert remote["message"] == "Leading or trailing whitespace in: url, headers.Authorization"
    text = json.dumps(res.warnings)
    assert "s3cr3t-value" not in text and "ghp_hidden_token" not in text


def test_whitespace_is_kept_not_trimmed(home: Path, project: Path) -> None:
    mcp_json(project, {"x": stdio("run", " --flag ")})

    assert resolve(home, project, {}).servers["x"]["args"] == [" --flag "]


def test_a_name_conflict_with_different_endpoints_is_warned_with_endpoints_as_written(home: Path, project: Path) -> None:
    claude_json(home, user={"github": http("https://user.example.com/mcp?key=${API_KEY}")})
    mcp_json(project, {"github": http("https://api.githubcopilot.com/mcp")})

    res = resolve(home, project, {"API_KEY": "resolved-secret-42"})

    [warning] = [w for w in res.warnings if w["kind"] == "name_conflict"]
    assert warning["server"] == "github" and warning["scope"] == "project"
    assert "project: https://api.githubcopilot.com/mcp" in warning["message"]
    assert "user: https://user.example.com/mcp?key=${API_KEY}" in warning["message"]
    assert "claude mcp remove github --scope <scope>" in warning["message"]
    assert "resolved-secret-42" not in json.dumps(res.warnings)


@pytest.mark.parametrize(
    "other",
    ["https://api.example.com/mcp/", "HTTPS://API.Example.COM/mcp", "https://api.example.com:443/mcp"],
    ids=["trailing-slash", "case", "default-port"],
)
def test_the_same_endpoint_spelled_differently_is_no_name_conflict(home: Path, project: Path, other: str) -> None:
    claude_json(home, user={"api": http(other)})
    mcp_json(project, {"api": http("https://api.example.com/mcp")})

    res = resolve(home, project, {})

    assert "name_conflict" not in kinds(res)
    assert res.servers["api"]["scope"] == "project"


def test_a_different_command_line_is_a_name_conflict(home: Path, project: Path) -> None:
    claude_json(home, user={"db": stdio("npx", "db@1")}, local={"db": stdio("npx", "db@2")}, project=project)

    res = resolve(home, project, {})

    [warning] = [w for w in res.warnings if w["kind"] == "name_conflict"]
    assert "local: npx db@2" in warning["message"] and "user: npx db@1" in warning["message"]


def test_a_missing_variable_is_warned_by_name_once_and_left_literal(home: Path, project: Path) -> None:
    mcp_json(project, {"github": http("https://h/${TENANT}", headers={"Authorization": "Bearer ${TOKEN}", "X-T": "${TENANT}"})})

    res = resolve(home, project, {})

    messages = [w["message"] for w in res.warnings if w["kind"] == "missing_variable"]
    assert len(messages) == 2
    assert "environment variable TENANT is not set" in messages[0] and "${TENANT:-default}" in messages[0]
    assert "environment variable TOKEN is not set" in messages[1]
    assert res.servers["github"]["headers"]["Authorization"] == "Bearer ${TOKEN}"


def test_claude_project_dir_in_mcp_json_needs_a_default_and_the_warning_says_so(home: Path, project: Path) -> None:
    # Seed line 119: CLAUDE_PROJECT_DIR lives in the server's environment, not Claude Code's.
    mcp_json(project, {"fs": stdio("node", "${CLAUDE_PROJECT_DIR}/server.js")})

    res = resolve(home, project, {})

    [warning] = [w for w in res.warnings if w["kind"] == "missing_variable"]
    assert "CLAUDE_PROJECT_DIR" in warning["message"] and "${CLAUDE_PROJECT_DIR:-.}" in warning["message"]
    assert res.servers["fs"]["args"] == ["${CLAUDE_PROJECT_DIR}/server.js"]


def test_claude_project_dir_with_a_default_uses_the_default_in_mcp_json(home: Path, project: Path) -> None:
    mcp_json(project, {"fs": stdio("node", "${CLAUDE_PROJECT_DIR:-.}/server.js")})

    res = resolve(home, project, {})

    assert res.servers["fs"]["args"] == ["./server.js"]
    assert res.warnings == []


def test_credential_variables_are_blank_in_remote_headers_without_a_warning(home: Path, project: Path) -> None:
    mcp_json(project, {"x": http("https://x/mcp", headers={"Authorization": "Bearer ${ANTHROPIC_AUTH_TOKEN}"})})

    for env in ({}, {"ANTHROPIC_AUTH_TOKEN": "sk-ant-oat-secret"}):
        res = resolve(home, project, env)

        assert res.servers["x"]["headers"] == {"Authorization": "Bearer "}
        assert res.warnings == []


def test_headers_helper_is_not_expanded_outside_plugins(home: Path, project: Path) -> None:
    mcp_json(project, {"x": http("https://x/mcp", headersHelper="${HELPER_DIR}/token.sh")})

    res = resolve(home, project, {"HELPER_DIR": "/opt"})

    assert res.servers["x"]["headersHelper"] == "${HELPER_DIR}/token.sh"


# --- plugins -----------------------------------------------------------------------------------


def test_plugin_servers_are_named_plugin_plugin_server(home: Path, project: Path, tmp_path: Path) -> None:
    root = make_plugin(
        tmp_path / "plugins" / "folder",
        {"database-tools": stdio("${CLAUDE_PLUGIN_ROOT}/servers/db-server", "--config", "${CLAUDE_PLUGIN_ROOT}/config.json")},
        name="my-plugin",
    )

    res = resolve(home, project, {}, plugins=[root])

    server = res.servers["plugin:my-plugin:database-tools"]
    assert server["scope"] == "plugin" and server["plugin"] == "my-plugin"
    assert server["command"] == f"{root}/servers/db-server"
    assert server["args"] == ["--config", f"{root}/config.json"]


def test_a_plugin_without_a_manifest_name_is_named_after_its_folder(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "folder-name", {"s": stdio("run")})

    assert read_plugin(root).name == "folder-name"


def test_a_plugin_manifest_may_live_in_dot_claude_plugin(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "folder", {"s": stdio("run")})
    write_json(root / ".claude-plugin" / "plugin.json", {"name": "from-manifest"})

    assert read_plugin(root).name == "from-manifest"


def test_plugin_servers_may_be_inline_in_plugin_json(home: Path, project: Path, tmp_path: Path) -> None:
    servers = {"plugin-api": stdio("${CLAUDE_PLUGIN_ROOT}/servers/api-server", "--port", "8080")}
    root = make_plugin(tmp_path / "p", servers, name="my-plugin", inline=True)

    res = resolve(home, project, {}, plugins=[root])

    assert res.servers["plugin:my-plugin:plugin-api"]["command"] == f"{root}/servers/api-server"


def test_plugin_placeholders_are_substituted_directly_without_warnings(home: Path, project: Path, tmp_path: Path) -> None:
    root = make_plugin(
        tmp_path / "p",
        {
            "s": stdio(
                "${CLAUDE_PLUGIN_ROOT}/run", "${CLAUDE_PROJECT_DIR}", env={"DATA": "${CLAUDE_PLUGIN_DATA}", "DB_URL": "${DB_URL}"}
            )
        },
        name="p",
    )

    res = resolve(home, project, {"DB_URL": "postgres://db"}, plugins=[root])

    server = res.servers["plugin:p:s"]
    assert server["args"] == [str(project.resolve())]
    assert server["env"]["DB_URL"] == "postgres://db"
    assert server["env"]["DATA"].startswith(str(home)) and "${" not in server["env"]["DATA"]
    assert res.warnings == []


def test_plugin_placeholders_win_over_the_given_environment(home: Path, project: Path, tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "p", {"s": stdio("${CLAUDE_PLUGIN_ROOT}/run")}, name="p")

    res = resolve(home, project, {"CLAUDE_PLUGIN_ROOT": "/elsewhere"}, plugins=[root])

    assert res.servers["plugin:p:s"]["command"] == f"{root}/run"


def test_a_plugin_remote_server_expands_url_headers_and_headers_helper(home: Path, project: Path, tmp_path: Path) -> None:
    root = make_plugin(
        tmp_path / "p",
        {
            "api": http(
                "https://api.example.com/${TENANT}",
                headers={"X-Root": "${CLAUDE_PLUGIN_ROOT}"},
                headersHelper="${CLAUDE_PLUGIN_ROOT}/bin/token",
            )
        },
        name="p",
    )

    res = resolve(home, project, {"TENANT": "acme"}, plugins=[root])

    server = res.servers["plugin:p:api"]
    assert server["url"] == "https://api.example.com/acme"
    assert server["headers"] == {"X-Root": str(root)}
    assert server["headersHelper"] == f"{root}/bin/token"


def test_a_plugin_remote_server_never_receives_credentials(home: Path, project: Path, tmp_path: Path) -> None:
    api = http("https://api.example.com/mcp", headers={"Authorization": "Bearer ${ANTHROPIC_API_KEY}"})
    root = make_plugin(tmp_path / "p", {"api": api}, name="p")

    res = resolve(home, project, {"ANTHROPIC_API_KEY": "sk-ant-xyz"}, plugins=[root])

    assert res.servers["plugin:p:api"]["headers"] == {"Authorization": "Bearer "}


def test_plugin_tool_name_replaces_characters_outside_the_allowed_set() -> None:
    assert plugin_tool_name("my-plugin", "database-tools", "query") == "mcp__plugin_my-plugin_database-tools__query"
    assert plugin_tool_name("my.plugin", "db tools", "run/sql") == "mcp__plugin_my_plugin_db_tools__run_sql"


@given(st.text(max_size=10), st.text(max_size=10), st.text(max_size=10))
def test_plugin_tool_names_only_hold_allowed_characters(plugin: str, server: str, tool: str) -> None:
    name = plugin_tool_name(plugin, server, tool)

    assert re.fullmatch(r"mcp__plugin_[A-Za-z0-9_-]*", name)
    # One character out for each character in: "mcp__plugin_" + plugin + "_" + server + "__" + tool.
    assert len(name) == len("mcp__plugin_") + len(plugin) + 1 + len(server) + 2 + len(tool)


# --- de-duplication by endpoint ---------------------------------------------------------------


@pytest.mark.parametrize(
    "plugin_url",
    ["https://mcp.example.com/mcp", "HTTPS://MCP.Example.com/mcp", "https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp/"],
)
def test_a_plugin_pointing_at_a_connected_endpoint_is_dropped_naming_the_kept_server(
    home: Path, project: Path, tmp_path: Path, plugin_url: str
) -> None:
    claude_json(home, user={"mine": http("https://mcp.example.com/mcp")})
    root = make_plugin(tmp_path / "p", {"dup": http(plugin_url)}, name="p")

    res = resolve(home, project, {}, plugins=[root])

    assert "plugin:p:dup" not in res.servers
    assert skip_reason(res, "plugin:p:dup") == "it points at the same endpoint as `mine`, which is already connected."


@pytest.mark.parametrize(
    "plugin_url",
    [
        "https://mcp.example.com/other",
        "https://mcp.example.com/mcp?team=a",
        "https://bot@mcp.example.com/mcp",
        "https://mcp.example.com:8443/mcp",
        "http://mcp.example.com/mcp",
    ],
    ids=["path", "query", "userinfo", "port", "scheme"],
)
def test_a_plugin_with_a_different_endpoint_is_kept(home: Path, project: Path, tmp_path: Path, plugin_url: str) -> None:
    claude_json(home, user={"mine": http("https://mcp.example.com/mcp")})
    root = make_plugin(tmp_path / "p", {"other": http(plugin_url)}, name="p")

    res = resolve(home, project, {}, plugins=[root])

    assert "plugin:p:other" in res.servers
    assert res.skipped == []


def test_a_plugin_stdio_server_with_the_same_command_line_is_dropped(home: Path, project: Path, tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "p", {"db": stdio("${CLAUDE_PLUGIN_ROOT}/db", "--ro")}, name="p")
    claude_json(home, user={"db-mine": stdio(f"{root}/db", "--ro")})

    res = resolve(home, project, {}, plugins=[root])

    assert "plugin:p:db" not in res.servers
    assert "`db-mine`" in skip_reason(res, "plugin:p:db")


def test_a_plugin_is_compared_with_the_expanded_endpoint(home: Path, project: Path, tmp_path: Path) -> None:
    mcp_json(project, {"api": http("${BASE}/mcp")})
    root = make_plugin(tmp_path / "p", {"api": http("https://api.example.com/mcp")}, name="p")

    res = resolve(home, project, {"BASE": "https://api.example.com"}, plugins=[root])

    assert "plugin:p:api" not in res.servers


def test_a_rejected_project_server_does_not_block_a_plugin_with_its_endpoint(home: Path, project: Path, tmp_path: Path) -> None:
    mcp_json(project, {"jira": http("https://mcp.atlassian.com/v1/sse")})
    settings(home, disabledMcpjsonServers=["jira"])
    root = make_plugin(tmp_path / "p", {"jira": http("https://mcp.atlassian.com/v1/sse")}, name="p")

    res = resolve(home, project, {}, plugins=[root])

    assert "plugin:p:jira" in res.servers
    assert res.servers["jira"]["approval"] == "rejected"


def test_empty_url_placeholders_never_de_duplicate_each_other(home: Path, project: Path, tmp_path: Path) -> None:
    mcp_json(project, {"later": http("")})
    one = make_plugin(tmp_path / "one", {"slot": http("")}, name="one")
    two = make_plugin(tmp_path / "two", {"slot": http("")}, name="two")
    connectors = write_json(tmp_path / "connectors.json", {"mcpServers": {"claude.ai Slot": http("")}})

    res = resolve(home, project, {}, plugins=[one, two], connectors=connectors)

    assert {"later", "plugin:one:slot", "plugin:two:slot", "claude.ai Slot"} <= set(res.servers)
    assert all(res.servers[n]["status"] == "not_configured" for n in ("later", "plugin:one:slot", "plugin:two:slot", "claude.ai Slot"))
    assert res.skipped == []


def test_connectors_come_after_plugins_and_lose_to_them(home: Path, project: Path, tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "p", {"slack": http("https://mcp.slack.com/mcp")}, name="p")
    connectors = write_json(
        tmp_path / "connectors.json",
        {
            "mcpServers": {
                "claude.ai Slack": http("https://mcp.slack.com/mcp/"),
                "claude.ai Gmail": http("https://gmail.mcp.claude.com/mcp"),
            }
        },
    )

    res = resolve(home, project, {}, plugins=[root], connectors=connectors)

    assert "claude.ai Slack" not in res.servers
    assert skip_reason(res, "claude.ai Slack") == "it points at the same endpoint as `plugin:p:slack`, which is already connected."
    assert res.servers["claude.ai Gmail"]["scope"] == "connector"
    assert list(res.servers) == ["plugin:p:slack", "claude.ai Gmail"]


def test_the_first_of_two_plugins_with_one_endpoint_is_kept(home: Path, project: Path, tmp_path: Path) -> None:
    one = make_plugin(tmp_path / "one", {"s": http("https://same.example.com/mcp")}, name="one")
    two = make_plugin(tmp_path / "two", {"s": http("https://same.example.com/mcp")}, name="two")

    res = resolve(home, project, {}, plugins=[one, two])

    assert "plugin:one:s" in res.servers and "plugin:two:s" not in res.servers
    assert "`plugin:one:s`" in skip_reason(res, "plugin:two:s")


# --- normalise_url -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written,normal",
    [
        ("HTTPS://Mcp.Example.COM/mcp", "https://mcp.example.com/mcp"),
        ("https://h.example.com:443/mcp", "https://h.example.com/mcp"),
        ("http://h.example.com:80/mcp", "http://h.example.com/mcp"),
        ("ws://h.example.com:80/socket", "ws://h.example.com/socket"),
        ("wss://h.example.com:443/socket", "wss://h.example.com/socket"),
        ("http://h.example.com:443/mcp", "http://h.example.com:443/mcp"),
        ("https://h.example.com:8443/mcp", "https://h.example.com:8443/mcp"),
        ("https://h.example.com/mcp/", "https://h.example.com/mcp"),
        ("https://h.example.com/", "https://h.example.com"),
        ("https://h.example.com/MCP", "https://h.example.com/MCP"),
        ("http://[::1]:80/mcp", "http://[::1]/mcp"),
        ("http://[FE80::1]:8080/", "http://[fe80::1]:8080"),
        ("https://h.example.com/mcp?Team=A", "https://h.example.com/mcp?Team=A"),
        ("https://User:Pw@H.example.com:443/mcp", "https://User:Pw@h.example.com/mcp"),
    ],
)
def test_normalise_url(written: str, normal: str) -> None:
    assert normalise_url(written) == normal


HOSTS = st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z]{2,5}){1,2}", fullmatch=True)
PATHS = st.from_regex(r"(/[A-Za-z0-9_-]{1,8}){0,3}", fullmatch=True)


@given(st.sampled_from(["http", "https", "ws", "wss"]), HOSTS, PATHS, st.booleans(), st.booleans(), st.booleans())
def test_case_default_port_and_trailing_slash_never_change_the_endpoint(
    scheme: str, host: str, path: str, upper: bool, port: bool, slash: bool
) -> None:
    default = {"http": 80, "https": 443, "ws": 80, "wss": 443}[scheme]
    spelled = f"{scheme.upper() if upper else scheme}://{host.upper() if upper else host}"
    spelled += f":{default}" if port else ""
    spelled += path + ("/" if slash else "")

    assert normalise_url(spelled) == normalise_url(f"{scheme}://{host}{path}")


# --- malformed files -------------------------------------------------------------------------


def test_malformed_json_names_the_file_the_line_and_the_column(home: Path, project: Path) -> None:
    path = write_json(project / ".mcp.json", '{\n  "mcpServers": {\n    "x": {"command": "run",}\n  }\n}\n')

    with pytest.raises(ConfigError) as caught:
        resolve(home, project, {})

    message = str(caught.value)
    assert str(path) in message
    assert "line 3, column 28" in message


def test_malformed_claude_json_names_that_file(home: Path, project: Path) -> None:
    path = write_json(home / ".claude.json", "{not json")

    with pytest.raises(ConfigError, match=re.escape(str(path))) as caught:
        resolve(home, project, {})

    assert "line 1, column 2" in str(caught.value)


@pytest.mark.parametrize("document", ["[]", '"servers"', "42"])
def test_a_document_that_is_not_an_object_is_a_config_error(home: Path, project: Path, document: str) -> None:
    path = write_json(project / ".mcp.json", document)

    with pytest.raises(ConfigError, match="must hold a JSON object") as caught:
        resolve(home, project, {})

    assert str(path) in str(caught.value)


@pytest.mark.parametrize("servers", [[], "github", 3])
def test_mcp_servers_that_is_not_an_object_is_a_config_error(home: Path, project: Path, servers: Any) -> None:
    write_json(project / ".mcp.json", {"mcpServers": servers})

    with pytest.raises(ConfigError, match='"mcpServers" must be an object'):
        resolve(home, project, {})


def test_user_settings_that_are_not_an_object_are_a_config_error(home: Path, project: Path) -> None:
    write_json(home / ".claude" / "settings.json", '["enableAllProjectMcpServers"]')

    with pytest.raises(ConfigError, match="settings.json"):
        resolve(home, project, {})


def test_a_malformed_plugin_manifest_is_a_config_error(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write_json(root / "plugin.json", '{"name": ')

    with pytest.raises(ConfigError, match=re.escape(str(root / "plugin.json"))):
        read_plugin(root)


def test_to_json_has_servers_skipped_and_warnings(home: Path, project: Path) -> None:
    mcp_json(project, {"x": {"url": "https://x"}, "y": stdio(" y")})

    data = resolve(home, project, {}).to_json()

    assert set(data) == {"servers", "skipped", "warnings"}
    assert set(data["skipped"][0]) == {"name", "scope", "reason"}
    assert set(data["warnings"][0]) == {"server", "scope", "kind", "message"}
    json.dumps(data)
