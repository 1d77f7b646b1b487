"""Scopes, precedence, approvals, skips, warnings and endpoint de-duplication.

Sources: *Claude Code docs, MCP* (Installing MCP servers to How references are shown in `/mcp` and
CLI output) and *Exam guide › Scopes: local / project / user*.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from labtests import write_json

from grader.scopes import (
    PRECEDENCE,
    RESERVED_NAMES,
    ConfigError,
    approval,
    is_absolute_url,
    normalise_url,
    plugin_tool_name,
    project_key,
    read_plugin,
    read_sources,
    resolve,
    resolve_sources,
)

# --- building the files in tmp_path ---------------------------------------------------------


def claude_json(
    home: Path, *, user: dict | None = None, local: dict | None = None, project: Path | None = None
) -> None:
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


# Why a plugin or connector is dropped (the CLI logs `duplicates manually-configured "<kept>"`).
DUPLICATE = 'it duplicates "{}", which points at the same endpoint and is already connected'


# --- where each scope is read from -----------------------------------------------------------


def test_user_scope_is_the_top_level_mcp_servers_of_claude_json(home: Path, project: Path) -> None:
    claude_json(home, user={"notes": stdio("npx", "-y", "@me/notes-mcp")})

    res = resolve(home, project, {})

    assert res.servers["notes"] == {
        "scope": "user",
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "@me/notes-mcp"],
        "env": {},
    }


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


def git_repo(path: Path) -> Path:
    """A folder that is the root of a git repository (only ``.git`` matters here)."""
    (path / ".git").mkdir(parents=True)
    return path


def test_the_local_scope_key_is_the_git_root_above_the_project_folder(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    deeper = repo / "sub" / "deeper"
    deeper.mkdir(parents=True)
    write_json(
        home / ".claude.json",
        {
            "projects": {
                str(repo.resolve()): {"mcpServers": {"at-root": stdio("root")}},
                str(deeper.resolve()): {"mcpServers": {"at-deeper": stdio("deeper")}},
            }
        },
    )

    res = resolve(home, deeper, {})

    assert project_key(deeper) == str(repo.resolve())
    assert set(res.servers) == {"at-root"}
    assert res.servers["at-root"]["scope"] == "local"


def test_the_local_scope_key_resolves_symlinks(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "real" / "repo")
    (repo / "sub").mkdir()
    link = tmp_path / "link"
    link.symlink_to(repo, target_is_directory=True)
    write_json(home / ".claude.json", {"projects": {str(repo.resolve()): {"mcpServers": {"scratch": stdio("python")}}}})

    res = resolve(home, link / "sub", {})

    assert project_key(link / "sub") == str(repo.resolve())
    assert res.servers["scratch"]["scope"] == "local"


def test_outside_git_the_local_scope_key_is_the_folder_itself_not_a_parent(home: Path, tmp_path: Path) -> None:
    outer = tmp_path / "nongit"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    write_json(home / ".claude.json", {"projects": {str(outer.resolve()): {"mcpServers": {"parent-tool": stdio("p")}}}})

    assert project_key(inner) == str(inner.resolve())
    assert resolve(home, inner, {}).servers == {}


def test_mcp_json_is_read_from_the_project_folder_and_every_folder_above_it_the_nearest_winning(
    home: Path, tmp_path: Path
) -> None:
    # Conformance record rule 3 and section 8: nest/.mcp.json above the git root counts too.
    nest = tmp_path / "nest"
    repo = git_repo(nest / "repo")
    sub = repo / "sub"
    sub.mkdir()
    mcp_json(nest, {"shared": stdio("from-nest"), "top": stdio("from-nest")})
    mcp_json(repo, {"shared": stdio("from-repo")})
    mcp_json(sub, {"own": stdio("from-sub")})

    res = resolve(home, sub, {})
    sources, _ = read_sources(home, sub)

    assert {name: server["command"] for name, server in res.servers.items()} == {
        "own": "from-sub",
        "shared": "from-repo",
        "top": "from-nest",
    }
    assert all(server["scope"] == "project" for server in res.servers.values())
    assert sources["project"] == {"own": stdio("from-sub"), "shared": stdio("from-repo"), "top": stdio("from-nest")}
    assert res.warnings == []  # one name in two .mcp.json files is no scope conflict


def test_an_mcp_json_below_the_project_folder_is_not_read(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    mcp_json(repo / "sub", {"below": stdio("run")})

    assert resolve(home, repo, {}).servers == {}


def test_project_scope_is_the_mcp_json_at_the_project_root(home: Path, project: Path) -> None:
    mcp_json(project, {"jira": http("https://mcp.atlassian.com/v1/sse")})

    res = resolve(home, project, {})

    assert res.servers["jira"]["scope"] == "project"
    assert res.servers["jira"]["url"] == "https://mcp.atlassian.com/v1/sse"


def test_read_sources_returns_each_scope_and_the_approval_settings_in_force(home: Path, project: Path) -> None:
    claude_json(home, user={"u": stdio("u")}, local={"l": stdio("l")}, project=project)
    mcp_json(project, {"p": stdio("p")})
    settings(home, enableAllProjectMcpServers=True)

    sources, in_force = read_sources(home, project)

    assert sources["user"] == {"u": stdio("u")}
    assert sources["local"] == {"l": stdio("l")}
    assert sources["project"] == {"p": stdio("p")}
    assert sources["managed"] == {} and sources["connector"] == {}
    assert in_force == {
        "enableAllProjectMcpServers": True,
        "enabledMcpjsonServers": [],
        "disabledMcpjsonServers": [],
        "disabledMcpServers": [],
    }


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

    assert res.servers["github"] == {
        "scope": "local",
        "type": "http",
        "url": "https://local.example.com/mcp",
        "headers": {},
    }
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
    managed = write_json(
        tmp_path / "managed.json", {"managedMcpServers": {"corp": http("https://corp.example.com/mcp")}}
    )
    plugin = make_plugin(tmp_path / "p", {"corp": http("https://CORP.example.com:443/mcp/")}, name="p")

    res = resolve(home, project, {}, managed=managed, plugins=[plugin])

    assert "plugin:p:corp" not in res.servers
    assert skip_reason(res, "plugin:p:corp") == DUPLICATE.format("corp")


def test_resolve_sources_works_on_in_memory_maps() -> None:
    res = resolve_sources(
        {"user": {"a": stdio("u")}, "project": {"a": stdio("p")}}, {}, settings={"enabledMcpjsonServers": ["a"]}
    )

    assert res.servers["a"] == {
        "scope": "project",
        "type": "stdio",
        "approval": "approved",
        "command": "p",
        "args": [],
        "env": {},
    }


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
    # Claude Code docs, MCP › Approval of project servers and workspace trust: approvals committed in the project's .claude/settings.json are ignored.
    mcp_json(project, {"jira": http("https://j/mcp")})
    write_json(project / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})

    assert resolve(home, project, {}).servers["jira"]["approval"] == "pending"


def test_disabled_mcpjson_servers_in_the_project_settings_still_rejects(home: Path, project: Path) -> None:
    # Claude Code docs, MCP › Approval of project servers and workspace trust: "A disabledMcpjsonServers entry in any settings file still rejects the server."
    mcp_json(project, {"jira": http("https://j/mcp")})
    settings(home, enableAllProjectMcpServers=True)
    write_json(project / ".claude" / "settings.json", {"disabledMcpjsonServers": ["jira"]})

    assert resolve(home, project, {}).servers["jira"]["approval"] == "rejected"


def trust(home: Path, project: Path, trusted: bool, **values: Any) -> None:
    """``~/.claude.json`` ``projects[<key>]``: the trust flag and any approval settings."""
    write_json(
        home / ".claude.json", {"projects": {project_key(project): {"hasTrustDialogAccepted": trusted, **values}}}
    )


def approvals(res) -> dict[str, str]:
    return {name: server["approval"] for name, server in res.servers.items()}


THREE = {"a": stdio("run", "a"), "b": stdio("run", "b"), "c": stdio("run", "c")}
PENDING = {"a": "pending", "b": "pending", "c": "pending"}
APPROVED = {"a": "approved", "b": "approved", "c": "approved"}


@pytest.mark.parametrize("file", ["settings.json", "settings.local.json"])
@pytest.mark.parametrize("trusted,expected", [(False, PENDING), (True, APPROVED)], ids=["untrusted", "trusted"])
def test_the_project_settings_files_approve_only_once_the_folder_is_trusted(
    home: Path, project: Path, file: str, trusted: bool, expected: dict
) -> None:
    # Claude Code docs, MCP › Approval of project servers and workspace trust; conformance record section 6.
    mcp_json(project, THREE)
    write_json(project / ".claude" / file, {"enableAllProjectMcpServers": True})
    trust(home, project, trusted)

    assert approvals(resolve(home, project, {})) == expected


def test_claude_json_project_entry_approves_only_once_the_folder_is_trusted(home: Path, project: Path) -> None:
    mcp_json(project, THREE)

    trust(home, project, False, enabledMcpjsonServers=["a"], disabledMcpjsonServers=["b"])
    untrusted = approvals(resolve(home, project, {}))
    trust(home, project, True, enabledMcpjsonServers=["a"])
    trusted = approvals(resolve(home, project, {}))

    assert untrusted == {"a": "pending", "b": "rejected", "c": "pending"}
    assert trusted == {"a": "approved", "b": "pending", "c": "pending"}


def test_enable_all_in_an_untrusted_claude_json_project_entry_approves_nothing(home: Path, project: Path) -> None:
    mcp_json(project, THREE)
    trust(home, project, False, enableAllProjectMcpServers=True)

    assert approvals(resolve(home, project, {})) == PENDING


def test_trust_is_read_under_the_git_root_key(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    mcp_json(repo, THREE)
    write_json(
        home / ".claude.json",
        {"projects": {str(repo.resolve()): {"hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["c"]}}},
    )

    assert approvals(resolve(home, repo, {})) == {"a": "pending", "b": "pending", "c": "approved"}


@pytest.mark.parametrize("where", ["settings.json", "settings.local.json", "claude.json"])
def test_disabled_mcpjson_servers_from_any_untrusted_source_rejects(home: Path, project: Path, where: str) -> None:
    # Claude Code docs, MCP › Approval of project servers and workspace trust: "A disabledMcpjsonServers entry in any settings file still rejects the server."
    mcp_json(project, THREE)
    settings(home, enableAllProjectMcpServers=True)
    if where == "claude.json":
        trust(home, project, False, disabledMcpjsonServers=["b"])
    else:
        write_json(project / ".claude" / where, {"disabledMcpjsonServers": ["b"]})

    assert approvals(resolve(home, project, {})) == {"a": "approved", "b": "rejected", "c": "approved"}


def test_the_home_folders_own_settings_local_json_approves_without_trust(home: Path) -> None:
    # Claude Code docs, MCP › Approval of project servers and workspace trust: the wait for the trust dialog does not apply when the folder is
    # "your home directory"; conformance record section 6, last row (cwd = HOME,
    # ~/.claude/settings.local.json enableAll -> Connected).
    mcp_json(home, THREE)
    write_json(home / ".claude" / "settings.local.json", {"enableAllProjectMcpServers": True})

    assert approvals(resolve(home, home, {})) == APPROVED


def test_claude_config_dir_holds_claude_json_and_settings_json(home: Path, project: Path, tmp_path: Path) -> None:
    # Conformance record rule 4: with CLAUDE_CONFIG_DIR set, .claude.json and settings.json
    # are read from that folder instead.
    config = tmp_path / "config"
    write_json(config / ".claude.json", {"mcpServers": {"from-config-dir": stdio("run")}})
    write_json(config / "settings.json", {"enableAllProjectMcpServers": True})
    claude_json(home, user={"from-home": stdio("run")})
    mcp_json(project, {"p": stdio("run")})

    res = resolve(home, project, {"CLAUDE_CONFIG_DIR": str(config)})

    assert set(res.servers) == {"from-config-dir", "p"}
    assert res.servers["p"]["approval"] == "approved"


def test_disabled_mcp_servers_of_the_project_entry_marks_a_server_disabled(home: Path, project: Path) -> None:
    mcp_json(project, THREE)
    settings(home, enableAllProjectMcpServers=True)
    trust(home, project, False, disabledMcpServers=["a"])

    res = resolve(home, project, {})

    assert res.servers["a"]["status"] == "disabled"
    assert "status" not in res.servers["b"] and "status" not in res.servers["c"]
    assert approvals(res) == APPROVED
    assert "`a` is disabled for this project (re-enable it in /mcp)." in res.explanations


def test_read_sources_merges_the_approval_settings_from_the_right_files(home: Path, project: Path) -> None:
    settings(home, enabledMcpjsonServers=["from-user"], disabledMcpjsonServers=["off-user"])
    write_json(
        project / ".claude" / "settings.json",
        {
            "enableAllProjectMcpServers": True,
            "enabledMcpjsonServers": ["from-project"],
            "disabledMcpjsonServers": ["off-project"],
        },
    )
    write_json(project / ".claude" / "settings.local.json", {"disabledMcpjsonServers": ["off-local"]})
    trust(home, project, False, enabledMcpjsonServers=["from-entry"], disabledMcpServers=["muted"])

    _, untrusted = read_sources(home, project)
    trust(home, project, True, enabledMcpjsonServers=["from-entry"], disabledMcpServers=["muted"])
    _, trusted = read_sources(home, project)

    assert untrusted["enableAllProjectMcpServers"] is False
    assert untrusted["enabledMcpjsonServers"] == ["from-user"]
    assert sorted(untrusted["disabledMcpjsonServers"]) == ["off-local", "off-project", "off-user"]
    assert untrusted["disabledMcpServers"] == ["muted"]
    assert trusted["enableAllProjectMcpServers"] is True
    assert sorted(trusted["enabledMcpjsonServers"]) == ["from-entry", "from-project", "from-user"]
    assert sorted(trusted["disabledMcpjsonServers"]) == ["off-local", "off-project", "off-user"]


# --- skipped entries ---------------------------------------------------------------------------


def test_a_url_without_type_is_skipped_with_claude_codes_message(home: Path, project: Path) -> None:
    # Claude Code docs, MCP › Installing MCP servers; the CLI prefixes it with "Skipped — " (conformance record, section 3).
    mcp_json(project, {"x": {"url": "https://x.example.com/mcp"}})

    res = resolve(home, project, {})

    assert "x" not in res.servers
    assert res.skipped == [
        {
            "name": "x",
            "scope": "project",
            "reason": 'Skipped — MCP server "x" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry',
        }
    ]


def test_an_sdk_entry_is_skipped_with_the_docs_message(home: Path, project: Path) -> None:
    claude_json(home, user={"inproc": {"type": "sdk", "name": "inproc"}})

    res = resolve(home, project, {})

    assert "inproc" not in res.servers
    assert skip_reason(res, "inproc") == (
        'Skipped — MCP server "inproc" declares type "sdk", which only an SDK host application can register'
    )


def test_the_reserved_names_are_those_of_the_docs() -> None:
    assert RESERVED_NAMES == {"workspace", "claude-in-chrome", "computer-use", "Claude Preview", "Claude Browser"}


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_a_reserved_name_is_skipped_with_a_warning_to_rename_it(home: Path, project: Path, name: str) -> None:
    claude_json(home, user={name: stdio("run")})

    res = resolve(home, project, {})

    assert name not in res.servers
    assert skip_reason(res, name) == f'"{name}" is a reserved MCP server name and was not loaded'
    [warning] = [w for w in res.warnings if w["server"] == name]
    assert warning["kind"] == "reserved_name" and warning["scope"] == "user"
    assert warning["message"].startswith(f'"{name}" is a reserved MCP server name and was not loaded')
    assert "rename" in warning["message"]


@pytest.mark.parametrize("scope", ["local", "project", "user"])
def test_a_reserved_name_is_skipped_in_every_scope(scope: str) -> None:
    res = resolve_sources({scope: {"workspace": stdio("run")}}, {})

    assert res.servers == {}
    assert res.skipped == [
        {"name": "workspace", "scope": scope, "reason": '"workspace" is a reserved MCP server name and was not loaded'}
    ]


@pytest.mark.parametrize("name", ["my server", "bad.name", "日本語", "x/y", "github\n"])
def test_a_name_with_characters_outside_letters_digits_hyphen_underscore_loads_without_a_warning(
    home: Path, project: Path, name: str
) -> None:
    # Conformance record rule 12: only `claude mcp add` rejects such names; files load them.
    mcp_json(project, {name: stdio("run")})

    res = resolve(home, project, {})

    assert res.servers[name]["command"] == "run"
    assert res.skipped == [] and res.warnings == []


@given(st.text(min_size=1, max_size=12))
@example("ok\n")
@example("Claude Preview")
def test_every_name_but_the_reserved_ones_loads_from_a_file(name: str) -> None:
    res = resolve_sources({"user": {name: stdio("run")}}, {})

    assert (name in res.servers) == (name not in RESERVED_NAMES)


@pytest.mark.parametrize("written", ["grpc", "HTTP", "${T}"], ids=["grpc", "upper-case", "reference"])
def test_an_unknown_type_is_skipped_and_the_check_is_case_sensitive_and_unexpanded(
    home: Path, project: Path, written: str
) -> None:
    mcp_json(project, {"x": {"type": written, "url": "https://x"}})

    res = resolve(home, project, {"T": "http"})

    assert res.servers == {}
    assert skip_reason(res, "x") == f'Skipped — unknown MCP server type "{written}" for server "x"'


def test_a_malformed_type_is_skipped_not_a_crash() -> None:
    # A type that is not a string is an unknown type: the entry is skipped, the rest still resolve.
    res = resolve_sources({"project": {"x": {"type": ["http"], "url": "https://x"}, "ok": stdio("run")}}, {})

    assert "x" not in res.servers and "ok" in res.servers
    assert skip_reason(res, "x").startswith("Skipped — unknown MCP server type ")
    assert skip_reason(res, "x").endswith(' for server "x"')


@pytest.mark.parametrize(
    "entry,problem",
    [
        ({"type": "stdio", "args": ["a"]}, "command: expected string, received undefined"),
        ({"env": {"A": "1"}}, "command: expected string, received undefined"),
        ({"command": ""}, "command: Command cannot be empty"),
        ({"command": "run", "args": "--flag"}, "args: expected array, received string"),
        ({"command": "run", "env": {"N": 1}}, "env.N: expected string, received number"),
        ({"type": "sse"}, "url: expected string, received undefined"),
        ("npx server", "(root): expected object, received string"),
    ],
    ids=[
        "stdio-no-command",
        "no-type-no-command",
        "empty-command",
        "args-not-list",
        "env-number",
        "remote-no-url",
        "string",
    ],
)
def test_an_entry_breaking_the_schema_is_skipped_naming_the_field(
    home: Path, project: Path, entry: Any, problem: str
) -> None:
    # Conformance record section 3: "Skipped — invalid MCP server config for "<n>": <field>: <problem>".
    mcp_json(project, {"x": entry, "ok": stdio("run")})

    res = resolve(home, project, {})

    assert "x" not in res.servers and "ok" in res.servers
    assert skip_reason(res, "x") == f'Skipped — invalid MCP server config for "x": {problem}'


def test_a_skipped_name_does_not_hide_a_valid_lower_scope_definition(home: Path, project: Path) -> None:
    claude_json(home, user={"x": http("https://user/mcp")})
    mcp_json(project, {"x": {"url": "https://project/mcp"}})

    res = resolve(home, project, {})

    assert res.servers["x"]["scope"] == "user"
    assert skip_reason(res, "x").startswith('Skipped — MCP server "x" has a "url" but no "type"')


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


def test_a_whitespace_only_url_is_not_configured_and_warned_about_its_whitespace(home: Path, project: Path) -> None:
    mcp_json(project, {"later": http("   ")})

    res = resolve(home, project, {})

    assert res.servers["later"]["status"] == "not_configured"
    assert res.warnings == [
        {
            "server": "later",
            "scope": "project",
            "kind": "whitespace",
            "message": "Leading or trailing whitespace in: url",
        }
    ]


def test_a_url_that_expands_to_a_relative_path_is_warned_as_invalid(home: Path, project: Path) -> None:
    # Claude Code docs, MCP › Variables set to an empty string: API_BASE_URL="" makes the url /mcp, reported as 'url' is not a valid URL.
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
            "local-tool": {
                "command": " run",
                "args": ["ok", "tail\n"],
                "env": {"TOKEN ": "v", "SECRET": "s3cr3t-value\n"},
            },
            "remote": http("https://h/mcp ", headers={"Authorization": "Bearer ghp_hidden_token\n"}),
        },
    )

    res = resolve(home, project, {})

    [local_tool] = [w for w in res.warnings if w["server"] == "local-tool"]
    [remote] = [w for w in res.warnings if w["server"] == "remote" and w["kind"] == "whitespace"]
    assert local_tool["kind"] == "whitespace"
    assert local_tool["message"] == 'Leading or trailing whitespace in: command, args[1], env name "TOKEN ", env.SECRET'
    assert remote["message"] == "Leading or trailing whitespace in: url, headers.Authorization"
    text = json.dumps(res.warnings)
    assert "s3cr3t-value" not in text and "ghp_hidden_token" not in text


def test_whitespace_in_a_header_name_is_named_with_the_name_quoted(home: Path, project: Path) -> None:
    mcp_json(project, {"remote": http("https://h/mcp", headers={" X-A": "v", "X-B": "ok"})})

    [warning] = resolve(home, project, {}).warnings

    assert warning["kind"] == "whitespace"
    assert warning["message"] == 'Leading or trailing whitespace in: header name " X-A"'


def test_whitespace_is_kept_not_trimmed(home: Path, project: Path) -> None:
    mcp_json(project, {"x": stdio("run", " --flag ")})

    assert resolve(home, project, {}).servers["x"]["args"] == [" --flag "]


def test_a_name_conflict_with_different_endpoints_is_warned_with_endpoints_as_written(
    home: Path, project: Path
) -> None:
    claude_json(home, user={"github": http("https://user.example.com/mcp?key=${API_KEY}")})
    mcp_json(project, {"github": http("https://api.githubcopilot.com/mcp")})

    res = resolve(home, project, {"API_KEY": "resolved-secret-42"})

    [warning] = [w for w in res.warnings if w["kind"] == "name_conflict"]
    assert warning["server"] == "github" and warning["scope"] == "project"
    assert warning["message"] == (
        'Server "github" is defined in multiple scopes with different endpoints: '
        "user (https://user.example.com/mcp?key=${API_KEY}), project (https://api.githubcopilot.com/mcp). "
        "OAuth tokens are stored per endpoint, so authenticating in one context will not carry over. "
        "Keep the correct endpoint and remove the others: "
        "`claude mcp remove github -s user` or `claude mcp remove github -s project`"
    )
    assert "resolved-secret-42" not in json.dumps(res.warnings)


def test_the_conflict_lists_user_project_local_in_that_order(home: Path, project: Path) -> None:
    claude_json(home, user={"dup": stdio("run", "user")}, local={"dup": stdio("run", "local")}, project=project)
    mcp_json(project, {"dup": stdio("run", "project")})

    [warning] = resolve(home, project, {}).warnings

    assert warning["scope"] == "local"
    assert "different endpoints: user (run user), project (run project), local (run local). OAuth" in warning["message"]
    assert warning["message"].endswith(
        "`claude mcp remove dup -s user` or `claude mcp remove dup -s project` or `claude mcp remove dup -s local`"
    )


@pytest.mark.parametrize(
    "other",
    [
        "https://api.example.com/mcp/",
        "HTTPS://API.Example.COM/mcp",
        "https://api.example.com:443/mcp",
        "https://api.example.com/mcp#x",
        "https://api.example.com/MCP",
    ],
    ids=["trailing-slash", "case", "default-port", "fragment", "path-case"],
)
def test_any_other_spelling_of_an_endpoint_is_a_name_conflict(home: Path, project: Path, other: str) -> None:
    # Conformance record rule 9: the scope-conflict check compares the expanded strings exactly.
    claude_json(home, user={"api": http(other)})
    mcp_json(project, {"api": http("https://api.example.com/mcp")})

    res = resolve(home, project, {})

    assert kinds(res) == ["name_conflict"]
    assert res.servers["api"]["scope"] == "project"


@pytest.mark.parametrize(
    "user,local",
    [
        (stdio("run", "same", env={"B": "2"}), stdio("run", "same")),
        (stdio("/bin/false", "x", env={"A": "1"}), {"type": "stdio", "command": "/bin/false", "args": ["x"]}),
        (http("http://localhost:1/h", headers={"A": "1"}), http("http://localhost:1/h", headers={"A": "2"})),
        ({"type": "sse", "url": "http://localhost:1/t"}, http("http://localhost:1/t")),
    ],
    ids=["env", "explicit-type", "headers", "transport"],
)
def test_env_headers_and_type_never_make_a_name_conflict(home: Path, project: Path, user: dict, local: dict) -> None:
    claude_json(home, user={"s": user}, local={"s": local}, project=project)

    res = resolve(home, project, {})

    assert res.warnings == []
    assert res.servers["s"]["scope"] == "local"


def test_endpoints_are_compared_after_expansion(home: Path, project: Path) -> None:
    claude_json(
        home,
        user={"api": http("${H:-http://localhost:1}/mcp")},
        local={"api": http("http://localhost:1/mcp")},
        project=project,
    )

    assert resolve(home, project, {"H": "http://localhost:1"}).warnings == []
    assert resolve(home, project, {}).warnings == []
    [warning] = resolve(home, project, {"H": "http://other:1"}).warnings
    assert "user (${H}/mcp), local (http://localhost:1/mcp)" in warning["message"]
    assert "http://other:1" not in warning["message"]


def test_a_conflicting_command_line_is_shown_with_references_by_name(home: Path, project: Path) -> None:
    claude_json(
        home,
        user={"db": stdio("${CMD:-/bin/false}", "${ARG:-a}")},
        local={"db": stdio("/bin/false", "a")},
        project=project,
    )

    [warning] = resolve(home, project, {"CMD": "/bin/true"}).warnings

    assert "user (${CMD} ${ARG}), local (/bin/false a)" in warning["message"]


def test_a_different_command_line_is_a_name_conflict(home: Path, project: Path) -> None:
    claude_json(home, user={"db": stdio("npx", "db@1")}, local={"db": stdio("npx", "db@2")}, project=project)

    res = resolve(home, project, {})

    [warning] = [w for w in res.warnings if w["kind"] == "name_conflict"]
    assert "user (npx db@1), local (npx db@2)" in warning["message"]


def test_missing_variables_are_warned_once_per_server_by_name_and_left_literal(home: Path, project: Path) -> None:
    mcp_json(
        project,
        {"github": http("https://h/${TENANT}", headers={"Authorization": "Bearer ${TOKEN}", "X-T": "${TENANT}"})},
    )

    res = resolve(home, project, {})

    [warning] = res.warnings
    assert warning == {
        "server": "github",
        "scope": "project",
        "kind": "missing_variable",
        "message": "Missing environment variables: TENANT, TOKEN.",
    }
    assert res.servers["github"]["url"] == "https://h/${TENANT}"
    assert res.servers["github"]["headers"]["Authorization"] == "Bearer ${TOKEN}"


def test_missing_variables_are_named_in_the_order_command_args_env(home: Path, project: Path) -> None:
    mcp_json(project, {"s": stdio("${C}", "${A}", "${C}", env={"E": "${E}", "A2": "${A}"})})

    [warning] = resolve(home, project, {}).warnings

    assert warning["message"] == "Missing environment variables: C, A, E."


@pytest.mark.parametrize("scope", ["local", "project", "user"])
def test_references_expand_the_same_way_in_every_scope(scope: str) -> None:
    # Conformance record section 4: identical results for local, project and user entries.
    entry = stdio("${PY:-/usr/bin/python3}", "${SETVAR}", "${EMPTY:-def}", "${UNSET}", env={"E": "${UNSET:-d}"})

    res = resolve_sources(
        {scope: {"s": entry}}, {"SETVAR": "hello", "EMPTY": ""}, settings={"enableAllProjectMcpServers": True}
    )

    server = res.servers["s"]
    assert (server["command"], server["args"], server["env"]) == (
        "/usr/bin/python3",
        ["hello", "", "${UNSET}"],
        {"E": "d"},
    )
    assert res.warnings == [
        {"server": "s", "scope": scope, "kind": "missing_variable", "message": "Missing environment variables: UNSET."}
    ]


def test_claude_project_dir_in_mcp_json_needs_a_default_and_the_warning_says_so(home: Path, project: Path) -> None:
    # Claude Code docs, MCP › Installing MCP servers: CLAUDE_PROJECT_DIR lives in the server's environment, not Claude Code's.
    mcp_json(project, {"fs": stdio("node", "${CLAUDE_PROJECT_DIR}/server.js")})

    res = resolve(home, project, {})

    [warning] = [w for w in res.warnings if w["kind"] == "missing_variable"]
    assert warning["message"].startswith("Missing environment variables: CLAUDE_PROJECT_DIR. ")
    assert "${CLAUDE_PROJECT_DIR:-.}" in warning["message"]
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


def test_a_provider_base_url_carrying_userinfo_is_blanked_leaving_an_invalid_url(home: Path, project: Path) -> None:
    # Conformance record section 5: ANTHROPIC_BEDROCK_BASE_URL=http://user:pass@... made the url "/mcp2".
    mcp_json(project, {"x": http("${ANTHROPIC_BEDROCK_BASE_URL}/mcp2")})

    res = resolve(home, project, {"ANTHROPIC_BEDROCK_BASE_URL": "http://user:pass@127.0.0.1:9"})

    assert res.servers["x"]["url"] == "/mcp2"
    assert kinds(res) == ["invalid_url"]
    assert "user:pass" not in json.dumps(res.to_json())


def test_claude_codes_own_session_secret_is_blank_in_a_stdio_server_only_when_set(home: Path, project: Path) -> None:
    mcp_json(
        project, {"s": stdio("run", "--token=${CLAUDE_CODE_OAUTH_TOKEN}", env={"T": "${CLAUDE_CODE_OAUTH_TOKEN}"})}
    )

    when_set = resolve(home, project, {"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat-secret"})
    when_unset = resolve(home, project, {})

    assert when_set.servers["s"]["args"] == ["--token="] and when_set.servers["s"]["env"] == {"T": ""}
    assert when_set.warnings == []
    assert when_unset.servers["s"]["args"] == ["--token=${CLAUDE_CODE_OAUTH_TOKEN}"]
    assert [w["message"] for w in when_unset.warnings] == ["Missing environment variables: CLAUDE_CODE_OAUTH_TOKEN."]


def test_headers_helper_is_not_expanded_outside_plugins(home: Path, project: Path) -> None:
    mcp_json(project, {"x": http("https://x/mcp", headersHelper="${HELPER_DIR}/token.sh")})

    res = resolve(home, project, {"HELPER_DIR": "/opt"})

    assert res.servers["x"]["headersHelper"] == "${HELPER_DIR}/token.sh"


# --- plugins -----------------------------------------------------------------------------------


def test_plugin_servers_are_named_plugin_plugin_server(home: Path, project: Path, tmp_path: Path) -> None:
    root = make_plugin(
        tmp_path / "plugins" / "folder",
        {
            "database-tools": stdio(
                "${CLAUDE_PLUGIN_ROOT}/servers/db-server", "--config", "${CLAUDE_PLUGIN_ROOT}/config.json"
            )
        },
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


def test_plugin_placeholders_are_substituted_directly_without_warnings(
    home: Path, project: Path, tmp_path: Path
) -> None:
    root = make_plugin(
        tmp_path / "p",
        {
            "s": stdio(
                "${CLAUDE_PLUGIN_ROOT}/run",
                "${CLAUDE_PROJECT_DIR}",
                env={"DATA": "${CLAUDE_PLUGIN_DATA}", "DB_URL": "${DB_URL}"},
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


def test_a_plugin_remote_server_expands_url_headers_and_headers_helper(
    home: Path, project: Path, tmp_path: Path
) -> None:
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
    [
        "https://mcp.example.com/mcp",
        "HTTPS://MCP.Example.com/mcp",
        "https://mcp.example.com:443/mcp",
        "https://mcp.example.com/mcp/",
        "https://mcp.example.com/mcp#section",
        "HTTPS://MCP.EXAMPLE.COM:443/mcp/#top",
    ],
)
def test_a_plugin_pointing_at_a_connected_endpoint_is_dropped_naming_the_kept_server(
    home: Path, project: Path, tmp_path: Path, plugin_url: str
) -> None:
    claude_json(home, user={"mine": http("https://mcp.example.com/mcp")})
    root = make_plugin(tmp_path / "p", {"dup": http(plugin_url)}, name="p")

    res = resolve(home, project, {}, plugins=[root])

    assert "plugin:p:dup" not in res.servers
    assert skip_reason(res, "plugin:p:dup") == DUPLICATE.format("mine")


@pytest.mark.parametrize(
    "plugin_url",
    [
        "https://mcp.example.com/other",
        "https://mcp.example.com/mcp?team=a",
        "https://bot@mcp.example.com/mcp",
        "https://mcp.example.com:8443/mcp",
        "http://mcp.example.com/mcp",
        "https://mcp.example.com/MCP",
        "https://mcp.example.com//mcp",
        "https://mcp.example.com/x/../mcp",
    ],
    ids=["path", "query", "userinfo", "port", "scheme", "path-case", "double-slash", "dot-segment"],
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
    assert skip_reason(res, "plugin:p:db") == DUPLICATE.format("db-mine")


def test_a_plugin_is_compared_with_the_expanded_endpoint(home: Path, project: Path, tmp_path: Path) -> None:
    mcp_json(project, {"api": http("${BASE}/mcp")})
    settings(home, enabledMcpjsonServers=["api"])
    root = make_plugin(tmp_path / "p", {"api": http("https://api.example.com/mcp")}, name="p")

    res = resolve(home, project, {"BASE": "https://api.example.com"}, plugins=[root])

    assert "plugin:p:api" not in res.servers
    assert skip_reason(res, "plugin:p:api") == DUPLICATE.format("api")


def test_a_rejected_project_server_does_not_block_a_plugin_with_its_endpoint(
    home: Path, project: Path, tmp_path: Path
) -> None:
    mcp_json(project, {"jira": http("https://mcp.atlassian.com/v1/sse")})
    settings(home, disabledMcpjsonServers=["jira"])
    root = make_plugin(tmp_path / "p", {"jira": http("https://mcp.atlassian.com/v1/sse")}, name="p")

    res = resolve(home, project, {}, plugins=[root])

    assert "plugin:p:jira" in res.servers
    assert res.servers["jira"]["approval"] == "rejected"


def test_a_pending_project_server_does_not_block_a_plugin_with_its_endpoint(
    home: Path, project: Path, tmp_path: Path
) -> None:
    # Claude Code docs, MCP › Scope hierarchy and precedence: a plugin duplicates an *enabled*
    # server above it. Claude Code 2.1.332 keeps plugin:p:x beside a pending .mcp.json server with the
    # same url, and suppresses it beside an approved one (`claude mcp list`, checked offline).
    mcp_json(project, {"jira": http("https://mcp.atlassian.com/v1/sse")})
    root = make_plugin(tmp_path / "p", {"jira": http("https://mcp.atlassian.com/v1/sse")}, name="p")

    res = resolve(home, project, {}, plugins=[root])

    assert res.servers["jira"]["approval"] == "pending"
    assert "plugin:p:jira" in res.servers
    assert res.skipped == []


def test_a_server_disabled_for_this_project_does_not_block_a_plugin_with_its_endpoint(
    home: Path, project: Path, tmp_path: Path
) -> None:
    # Claude Code docs, MCP › Scope hierarchy and precedence ("an enabled server above"); Claude Code 2.1.332 lists both the
    # "⊘ Disabled for this project" user server and the plugin server with its url.
    write_json(
        home / ".claude.json",
        {
            "mcpServers": {"mine": http("https://mcp.example.com/mcp")},
            "projects": {project_key(project): {"disabledMcpServers": ["mine"]}},
        },
    )
    root = make_plugin(tmp_path / "p", {"dup": http("https://mcp.example.com/mcp")}, name="p")

    res = resolve(home, project, {}, plugins=[root])

    assert res.servers["mine"]["status"] == "disabled"
    assert "plugin:p:dup" in res.servers
    assert res.skipped == []


def test_two_plugin_stdio_servers_differing_only_in_env_are_both_kept(
    home: Path, project: Path, tmp_path: Path
) -> None:
    # Conformance record section 7: plugins are compared among themselves with bI(cfg), whose
    # stdio signature includes env; only the comparison with configured servers drops env.
    # Claude Code 2.1.332 listed both plugin:vplug:env1 and plugin:vplug:env2.
    root = make_plugin(
        tmp_path / "p",
        {"env1": stdio("/bin/tool", "same", env={"A": "1"}), "env2": stdio("/bin/tool", "same", env={"A": "2"})},
        name="p",
    )

    res = resolve(home, project, {}, plugins=[root])

    assert {"plugin:p:env1", "plugin:p:env2"} <= set(res.servers)
    assert res.skipped == []


def test_empty_url_placeholders_never_de_duplicate_each_other(home: Path, project: Path, tmp_path: Path) -> None:
    mcp_json(project, {"later": http("")})
    one = make_plugin(tmp_path / "one", {"slot": http("")}, name="one")
    two = make_plugin(tmp_path / "two", {"slot": http("")}, name="two")
    connectors = write_json(tmp_path / "connectors.json", {"mcpServers": {"claude.ai Slot": http("")}})

    res = resolve(home, project, {}, plugins=[one, two], connectors=connectors)

    assert {"later", "plugin:one:slot", "plugin:two:slot", "claude.ai Slot"} <= set(res.servers)
    assert all(
        res.servers[n]["status"] == "not_configured"
        for n in ("later", "plugin:one:slot", "plugin:two:slot", "claude.ai Slot")
    )
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
    assert skip_reason(res, "claude.ai Slack") == DUPLICATE.format("plugin:p:slack")
    assert res.servers["claude.ai Gmail"]["scope"] == "connector"
    assert list(res.servers) == ["plugin:p:slack", "claude.ai Gmail"]


def test_the_first_of_two_plugins_with_one_endpoint_is_kept(home: Path, project: Path, tmp_path: Path) -> None:
    one = make_plugin(tmp_path / "one", {"s": http("https://same.example.com/mcp")}, name="one")
    two = make_plugin(tmp_path / "two", {"s": http("https://same.example.com/mcp")}, name="two")

    res = resolve(home, project, {}, plugins=[one, two])

    assert "plugin:one:s" in res.servers and "plugin:two:s" not in res.servers
    assert skip_reason(res, "plugin:two:s") == DUPLICATE.format("plugin:one:s")


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


def test_a_trailing_slash_before_a_query_does_not_change_the_endpoint() -> None:
    # Conformance record section 7, mgt(): `n.pathname = n.pathname.replace(/\/$/, "") || "/"`
    # runs whether or not there is a query. Claude Code 2.1.332 suppressed a plugin at
    # http://127.0.0.1:9/q/?x=1 as a duplicate of a user server at http://127.0.0.1:9/q?x=1.
    assert normalise_url("https://h.example.com/mcp/?Team=A") == "https://h.example.com/mcp?Team=A"


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
    # Python 3.13's json points at the trailing comma itself, earlier versions at the brace after it.
    assert ("line 3, column 27" if sys.version_info >= (3, 13) else "line 3, column 28") in message


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


def test_a_servers_key_instead_of_mcp_servers_is_a_config_error_naming_both_keys(home: Path, project: Path) -> None:
    path = write_json(project / ".mcp.json", {"servers": {"github": http("https://api.githubcopilot.com/mcp")}})

    with pytest.raises(ConfigError) as caught:
        resolve(home, project, {})

    message = str(caught.value)
    assert str(path) in message
    assert 'Missing "mcpServers" — found "servers" instead' in message
    assert 'Claude Code reads MCP servers from the "mcpServers" key' in message


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
