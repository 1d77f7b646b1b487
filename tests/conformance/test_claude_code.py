"""Conformance: the reference resolver and the real Claude Code CLI agree, case by case.

Each case writes one configuration (a throw-away HOME, a git project, an environment),
resolves it with ``grader.scopes`` and runs ``claude mcp list`` / ``get`` / ``add`` on it
with exactly that environment (``env -i`` semantics). Stdio servers are a recorder that
writes down the argv and environment Claude Code started it with; remote servers point at
a loopback listener that writes down the headers it received.

Skipped when Claude Code is not installed. ``.ci/run`` installs the pinned version into
``build/claude-code``; elsewhere set CLAUDE_CODE_BIN or put ``claude`` on PATH. Recorded
against the version below (docs/claude-code-conformance.md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from grader.scopes import project_key, resolve

CLAUDE_CODE_VERSION = "2.1.332"
REPO = Path(__file__).resolve().parents[2]
RECORDER = Path(__file__).with_name("recorder_server.py")


def find_claude() -> str | None:
    for candidate in (
        os.environ.get("CLAUDE_CODE_BIN"),
        REPO / "build" / "claude-code" / "node_modules" / ".bin" / "claude",
    ):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return shutil.which("claude")


CLAUDE = find_claude()
pytestmark = pytest.mark.skipif(CLAUDE is None, reason="Claude Code is not installed (see .ci/run)")


@pytest.fixture(scope="module", autouse=True)
def pinned_version():
    version = subprocess.run(
        [CLAUDE, "--version"], check=False, capture_output=True, text=True, timeout=60
    ).stdout.strip()
    if not version.startswith(CLAUDE_CODE_VERSION):
        pytest.skip(f"conformance is recorded against Claude Code {CLAUDE_CODE_VERSION}; found {version!r}")


class World:
    """A throw-away HOME and git project, the environment Claude Code gets, and the recorders."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.project = root / "project"
        self.records = root / "records.jsonl"
        (self.home / ".claude").mkdir(parents=True)
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.settings({"enableAllProjectMcpServers": True})
        self.env: dict[str, str] = {}

    def settings(self, value: dict) -> None:
        (self.home / ".claude" / "settings.json").write_text(json.dumps(value))

    def recorder(self, tag: str, *args: str, **extra) -> dict:
        return {
            "type": "stdio",
            "command": sys.executable,
            "args": [str(RECORDER), str(self.records), tag, *args],
            **extra,
        }

    def write(self, *, user: dict | None = None, local: dict | None = None, project: dict | None = None) -> None:
        claude_json = {"mcpServers": user or {}, "projects": {project_key(self.project): {"mcpServers": local or {}}}}
        (self.home / ".claude.json").write_text(json.dumps(claude_json))
        if project is not None:
            (self.project / ".mcp.json").write_text(json.dumps({"mcpServers": project}))

    def claude(self, *args: str) -> str:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), **self.env}
        done = subprocess.run(
            [CLAUDE, *args], check=False, cwd=self.project, env=env, capture_output=True, text=True, timeout=120
        )
        return done.stdout + done.stderr

    def resolve(self):
        return resolve(self.home, self.project, self.env)

    def forget_starts(self) -> None:
        self.records.unlink(missing_ok=True)

    def started(self) -> dict[str, dict]:
        """What each recorder was started with, by its tag."""
        if not self.records.exists():
            return {}
        lines = [json.loads(line) for line in self.records.read_text().splitlines() if line.strip()]
        return {line["argv"][0]: line for line in lines}


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path)


class Listener:
    """A loopback HTTP listener that records the headers of every request."""

    def __init__(self) -> None:
        seen = self.requests = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                seen.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
                self.send_response(404)
                self.end_headers()

            do_GET = do_POST

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


# --- scopes -------------------------------------------------------------------------------


def test_local_beats_project_beats_user_and_the_winner_is_used_whole(world):
    world.write(
        user={"dup": world.recorder("user", env={"A": "1"})},
        local={"dup": world.recorder("local")},
        project={"dup": world.recorder("project")},
    )
    assert world.resolve().servers["dup"]["scope"] == "local"
    assert "Scope: Local config" in world.claude("mcp", "get", "dup")

    world.write(user={"dup": world.recorder("user", env={"A": "1"})}, project={"dup": world.recorder("project")})
    resolved = world.resolve().servers["dup"]
    assert resolved["scope"] == "project" and "A" not in resolved["env"]
    world.forget_starts()  # `mcp get` above started the local winner for its health check
    world.claude("mcp", "list")
    started = world.started()
    assert set(started) == {"project"}  # only the winner is started
    assert "A" not in started["project"]["env"]  # the user's env was not merged in


def test_the_conflict_warning_appears_exactly_when_the_resolver_warns(world):
    world.write(user={"dup": world.recorder("user")}, local={"dup": world.recorder("local")})
    warnings = [w for w in world.resolve().warnings if w["kind"] == "name_conflict"]
    output = world.claude("mcp", "list")
    assert len(warnings) == 1
    assert warnings[0]["message"].split(" OAuth")[0] in output

    world.write(user={"dup": world.recorder("same")}, local={"dup": world.recorder("same", env={"B": "2"})})
    assert not [w for w in world.resolve().warnings if w["kind"] == "name_conflict"]
    assert "defined in multiple scopes" not in world.claude("mcp", "list")


def test_each_claude_mcp_add_scope_writes_where_the_resolver_reads(world):
    world.write()
    for scope in ("local", "project", "user"):
        output = world.claude(
            "mcp", "add", "--scope", scope, "--transport", "stdio", f"s-{scope}", "--", sys.executable, str(RECORDER)
        )
        assert f"to {scope} config" in output
    servers = world.resolve().servers
    assert {name: servers[name]["scope"] for name in servers} == {
        "s-local": "local",
        "s-project": "project",
        "s-user": "user",
    }


def test_the_local_scope_is_keyed_by_the_git_root_of_a_subfolder(world):
    world.write()
    sub = world.project / "src" / "pkg"
    sub.mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(world.home)}
    subprocess.run(
        [CLAUDE, "mcp", "add", "deep", "--", "npx", "x"],
        check=False,
        cwd=sub,
        env=env,
        capture_output=True,
        timeout=120,
    )
    projects = json.loads((world.home / ".claude.json").read_text())["projects"]
    assert "deep" in projects[project_key(sub)]["mcpServers"]
    assert project_key(sub) == str(world.project.resolve())


# --- diagnostics --------------------------------------------------------------------------


def test_every_skip_and_warning_of_the_resolver_is_what_claude_code_reports(world):
    world.write(
        project={
            "urlnotype": {"url": "https://x.example/mcp"},
            "sdk1": {"type": "sdk"},
            "workspace": world.recorder("reserved"),
            "unknowntype": {"type": "foo", "command": "x"},
            "nocommand": {"type": "stdio"},
            "ws-arg": world.recorder("ws", "x\n"),
            "missing": world.recorder("missing", "${UNSET_ONE}", "${UNSET_TWO:-d}", "${UNSET_THREE}"),
        }
    )
    resolution = world.resolve()
    output = world.claude("mcp", "list")
    assert {s["name"] for s in resolution.skipped} == {"urlnotype", "sdk1", "workspace", "unknowntype", "nocommand"}
    for skipped in resolution.skipped:
        assert skipped["reason"] in output, skipped
    for warning in resolution.warnings:
        if warning["kind"] in ("whitespace", "missing_variable"):
            assert warning["message"].rstrip(".") in output, warning


def test_an_empty_url_is_not_configured_in_both(world):
    world.write(project={"later": {"type": "http", "url": ""}})
    assert world.resolve().servers["later"]["status"] == "not_configured"
    assert "Not configured" in world.claude("mcp", "get", "later")


def test_approvals_read_the_same_settings(world):
    world.settings({"enabledMcpjsonServers": ["a"], "disabledMcpjsonServers": ["b"]})
    world.write(project={"a": world.recorder("a"), "b": world.recorder("b"), "c": world.recorder("c")})
    approvals = {name: s["approval"] for name, s in world.resolve().servers.items()}
    assert approvals == {"a": "approved", "b": "rejected", "c": "pending"}
    assert "Rejected" in world.claude("mcp", "get", "b")
    assert "Pending approval" in world.claude("mcp", "get", "c")
    assert "Connected" in world.claude("mcp", "get", "a")


# --- expansion ------------------------------------------------------------------------------

FORMS = [
    "${SETVAR}",
    "${SETVAR:-def}",
    "${UNSET:-def}",
    "${EMPTY:-def}",
    "${UNSET}",
    "$SETVAR",
    "${UNSET-def}",
    "${UNSET:-${OTHER}}",
    "$${SETVAR}",
    "pre-${SETVAR}-${OTHER}",
    "${CLAUDE_PROJECT_DIR:-.}",
    "${CLAUDE_CODE_OAUTH_TOKEN:-x}",
    "${ANTHROPIC_API_KEY}",
]


def test_a_stdio_server_receives_exactly_the_arguments_and_environment_the_resolver_expands(world):
    world.env = {
        "SETVAR": "hello",
        "EMPTY": "",
        "OTHER": "oth",
        "CLAUDE_CODE_OAUTH_TOKEN": "session",
        "ANTHROPIC_API_KEY": "sk-ant",
    }
    world.write(
        project={
            "forms": world.recorder(
                "forms", *FORMS, env={"E_SET": "${SETVAR}", "E_DEF": "${UNSET:-d}", "E_KEY": "${ANTHROPIC_API_KEY}"}
            )
        }
    )
    resolved = world.resolve().servers["forms"]
    world.claude("mcp", "list")
    started = world.started()["forms"]
    assert started["argv"][1:] == resolved["args"][3:]
    for name, value in resolved["env"].items():
        assert started["env"][name] == value


def test_a_remote_server_receives_exactly_the_headers_the_resolver_expands(world, listener):
    world.env = {
        "ANTHROPIC_AUTH_TOKEN": "sk-ant-secret",
        "API_KEY": "k-123",
        "NPM_TOKEN": "npm-secret",
        "ANTHROPIC_BASE_URL": listener.url,
    }
    world.write(
        project={
            "remote": {
                "type": "http",
                "url": "${ANTHROPIC_BASE_URL}/mcp",
                "headers": {
                    "Authorization": "Bearer ${ANTHROPIC_AUTH_TOKEN}",
                    "X-Api-Key": "${API_KEY}",
                    "X-Npm": "n=${NPM_TOKEN:-default}",
                },
            }
        }
    )
    resolved = world.resolve().servers["remote"]
    world.claude("mcp", "list")
    assert listener.requests, "Claude Code did not reach the listener"
    received = listener.requests[0]
    assert received["path"] == "/mcp" and resolved["url"] == f"{listener.url}/mcp"
    for name, value in resolved["headers"].items():
        assert received["headers"].get(name.lower(), "").strip() == value.strip(), name


# --- the repository's own .mcp.json ------------------------------------------------------------


@pytest.mark.parametrize("folder", [".", "notebooks"])
def test_claude_code_starts_every_server_of_the_repository_mcp_json(tmp_path, folder):
    """From the checkout's root and from a folder below it, as a learner would run ``claude``."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    expected = set(resolve(home, REPO, {}).servers)
    assert expected == {"support-desk", "notes", "tracker"}
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    output = subprocess.run(
        [CLAUDE, "mcp", "list"], check=False, cwd=REPO / folder, env=env, capture_output=True, text=True, timeout=120
    ).stdout
    for name in expected:
        line = next((line for line in output.splitlines() if line.startswith(f"{name}:")), "")
        assert "Connected" in line, output
