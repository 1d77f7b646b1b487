"""Where Claude Code finds MCP servers, which definition wins, and what it says about the rest.

Sources: *Claude Code docs, MCP* (Installing MCP servers, Server status, Approval of project
servers and workspace trust, Configuration warnings, MCP servers provided by plugins, MCP
installation scopes, Scope hierarchy and precedence) and *Exam guide › Scopes: local / project /
user*. Where they are silent, Claude Code 2.1.332 as observed decides
(docs/claude-code-conformance.md, "Rules to implement").

Scopes, highest precedence first: managed servers, local (``projects[<key>]`` in
``~/.claude.json``, keyed by the project's git root), project (``.mcp.json`` in the
project folder or any folder above it, the nearest winning), user (top-level
``mcpServers`` in ``~/.claude.json``), plugins, claude.ai connectors. The winning entry
is used whole; fields are never merged across scopes. The named scopes match duplicates
by name; plugins and connectors by endpoint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from grader.expansion import PLUGIN_FIELDS, display, expand_entry, plugin_variables

MANAGED, LOCAL, PROJECT, USER, PLUGIN, CONNECTOR = "managed", "local", "project", "user", "plugin", "connector"
PRECEDENCE = (MANAGED, LOCAL, PROJECT, USER, PLUGIN, CONNECTOR)
NAMED_SCOPES = (MANAGED, LOCAL, PROJECT, USER)
# The order Claude Code lists scopes in its conflict warning.
CONFLICT_ORDER = (USER, PROJECT, LOCAL)

RESERVED_NAMES = frozenset({"workspace", "claude-in-chrome", "computer-use", "Claude Preview", "Claude Browser"})
# `claude mcp add` accepts only these names; entries written into the files load whatever their name.
VALID_NAME = re.compile(r"[A-Za-z0-9_-]+")  # used with fullmatch
TYPE_ALIASES = {"streamable-http": "http"}
REMOTE_TYPES = frozenset({"http", "sse", "ws"})
KNOWN_TYPES = REMOTE_TYPES | {"stdio"}
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


class ConfigError(Exception):
    """A configuration file that cannot be read; the message names the file and the place."""


@dataclass
class Resolution:
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    explanations: list[str] = field(default_factory=list)
    # The winning entries as written (references unexpanded), for display.
    configured: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"servers": self.servers, "skipped": self.skipped, "warnings": self.warnings}

    def warn(self, server: str, scope: str, kind: str, message: str) -> None:
        self.warnings.append({"server": server, "scope": scope, "kind": kind, "message": message})

    def skip(self, server: str, scope: str, reason: str) -> None:
        self.skipped.append({"name": server, "scope": scope, "reason": reason})
        self.explanations.append(f"`{server}` ({scope} scope) is not loaded: {reason.removeprefix('Skipped — ')}.")


@dataclass(frozen=True)
class Candidate:
    name: str
    scope: str
    entry: dict[str, Any]  # as written
    type: str
    plugin: str | None = None
    plugin_root: Path | None = None

    @property
    def remote(self) -> bool:
        return self.type in REMOTE_TYPES


# --- reading the files ------------------------------------------------------------------


def read_json(path: Path, label: str) -> Any | None:
    """The parsed file, or None when it does not exist; ConfigError names the file and the position."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{label} ({path}) cannot be read: {exc}.") from None
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{label} ({path}) is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
            "Fix the file at that position and run again."
        ) from None


def servers_of(document: Any, label: str, path: Path, key: str = "mcpServers") -> dict[str, Any]:
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigError(f"{label} ({path}) must hold a JSON object, not {type(document).__name__}.")
    if key not in document and "servers" in document and key == "mcpServers":
        raise ConfigError(
            f'{label} ({path}): Missing "mcpServers" — found "servers" instead. '
            'Claude Code reads MCP servers from the "mcpServers" key.'
        )
    servers = document.get(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f'{label} ({path}): "{key}" must be an object mapping server names to entries.')
    return servers


def project_key(project: Path) -> str:
    """The key of the local scope: the project's git root (symlinks resolved), or the folder itself."""
    here = Path(project).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return str(folder)
    return str(here)


def project_servers(project: Path) -> dict[str, Any]:
    """``.mcp.json`` of the project folder and of every folder above it; the nearest file wins."""
    here = Path(project).resolve()
    servers: dict[str, Any] = {}
    for folder in (here, *here.parents):
        path = folder / ".mcp.json"
        for name, entry in servers_of(read_json(path, ".mcp.json"), ".mcp.json", path).items():
            servers.setdefault(name, entry)
    return servers


@dataclass(frozen=True)
class Plugin:
    name: str
    root: Path
    servers: dict[str, Any]


def read_plugin(root: Path) -> Plugin:
    """A plugin folder: servers from ``.mcp.json`` at its root, or inline in ``plugin.json``."""
    manifest_path = root / "plugin.json"
    if not manifest_path.exists():
        manifest_path = root / ".claude-plugin" / "plugin.json"
    manifest = read_json(manifest_path, "plugin manifest") or {}
    name = manifest.get("name") if isinstance(manifest, dict) else None
    name = name if isinstance(name, str) and name else root.name
    servers = servers_of(read_json(root / ".mcp.json", f"plugin {name}'s .mcp.json"), ".mcp.json", root / ".mcp.json")
    if not servers and isinstance(manifest, dict):
        servers = servers_of(manifest, "plugin manifest", manifest_path)
    return Plugin(name, root, servers)


def plugin_tool_name(plugin: str, server: str, tool: str) -> str:
    """``mcp__plugin_<plugin>_<server>__<tool>``, characters outside A-Z a-z 0-9 _ - replaced by _."""

    def clean(s: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", s)

    return f"mcp__plugin_{clean(plugin)}_{clean(server)}__{clean(tool)}"


# --- checking one entry -------------------------------------------------------------------


def json_kind(value: Any) -> str:
    if value is None:
        return "undefined"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


def schema_problem(entry: dict[str, Any], kind: str) -> str | None:
    """The first field that breaks the entry's schema, worded as Claude Code words it."""
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str):
            return f"command: expected string, received {json_kind(command)}"
        if command == "":
            return "command: Command cannot be empty"
        if "args" in entry:
            if not isinstance(entry["args"], list):
                return f"args: expected array, received {json_kind(entry['args'])}"
            for i, arg in enumerate(entry["args"]):
                if not isinstance(arg, str):
                    return f"args[{i}]: expected string, received {json_kind(arg)}"
        sections = ("env",)
    else:
        if not isinstance(entry.get("url"), str):
            return f"url: expected string, received {json_kind(entry.get('url'))}"
        sections = ("headers",)
    for section in sections:
        values = entry.get(section)
        if values is None:
            continue
        if not isinstance(values, dict):
            return f"{section}: expected object, received {json_kind(values)}"
        for key, value in values.items():
            if not isinstance(value, str):
                return f"{section}.{key}: expected string, received {json_kind(value)}"
    return None


def entry_type(name: str, scope: str, entry: Any, res: Resolution) -> str | None:
    """The entry's transport, or None after recording why it is skipped."""
    if not isinstance(entry, dict):
        res.skip(
            name,
            scope,
            f'Skipped — invalid MCP server config for "{name}": (root): expected object, received {json_kind(entry)}',
        )
        return None
    raw = entry.get("type")
    if raw is None and "url" in entry:
        res.skip(
            name,
            scope,
            f'Skipped — MCP server "{name}" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry',
        )
        return None
    if raw == "sdk":
        res.skip(
            name,
            scope,
            f'Skipped — MCP server "{name}" declares type "sdk", which only an SDK host application can register',
        )
        return None
    kind = "stdio" if raw is None else TYPE_ALIASES.get(raw, raw) if isinstance(raw, str) else None
    if kind not in KNOWN_TYPES:
        shown = raw if isinstance(raw, str) else json.dumps(raw)
        res.skip(name, scope, f'Skipped — unknown MCP server type "{shown}" for server "{name}"')
        return None
    problem = schema_problem(entry, kind)
    if problem:
        res.skip(name, scope, f'Skipped — invalid MCP server config for "{name}": {problem}')
        return None
    return kind


def whitespace_fields(entry: Mapping[str, Any]) -> list[str]:
    """Fields whose value or name has hidden leading or trailing whitespace, named as Claude Code names them."""

    def hidden(s: Any) -> bool:
        return isinstance(s, str) and s != s.strip()

    found = [key for key in ("command", "url") if hidden(entry.get(key))]
    for i, arg in enumerate(entry.get("args") or []):
        if hidden(arg):
            found.append(f"args[{i}]")
    for section, label in (("env", "env name"), ("headers", "header name")):
        values = entry.get(section)
        if isinstance(values, dict):
            for key, value in values.items():
                if hidden(key):
                    found.append(f'{label} "{key}"')
                if hidden(value):
                    found.append(f"{section}.{key}")
    return found


def is_absolute_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return bool(parts.scheme and parts.netloc)


def as_written(entry: Mapping[str, Any], kind: str) -> str:
    """A definition's endpoint as written: its URL, or its command line."""
    if kind in REMOTE_TYPES:
        return str(entry.get("url", ""))
    return " ".join([str(entry.get("command", "")), *[str(a) for a in entry.get("args") or []]])


def exact_endpoint(entry: Mapping[str, Any], kind: str) -> str:
    """The endpoint the scope-conflict warning compares: exact, after expansion, no normalisation."""
    if kind in REMOTE_TYPES:
        return f"url:{entry.get('url', '')}"
    return "stdio:" + json.dumps([entry.get("command", ""), *(entry.get("args") or [])])


def endpoint(entry: Mapping[str, Any], kind: str, *, with_env: bool = False) -> str:
    """The endpoint plugin and connector de-duplication compares: URLs normalised, command lines
    exact; between two plugin servers a stdio server's environment counts too (conformance record
    section 7)."""
    if kind in REMOTE_TYPES:
        return "url:" + normalise_url(str(entry.get("url", "")))
    if with_env:
        return exact_endpoint(entry, kind) + json.dumps(entry.get("env") or {}, sort_keys=True)
    return exact_endpoint(entry, kind)


CANONICAL_PATH = re.compile(r"^(?:/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-F]{2})*)*$")


def normalise_url(url: str) -> str:
    """Same endpoint when only scheme/host case, the scheme's default port, a trailing slash or a
    ``#fragment`` differ (*Claude Code docs, MCP › Scope hierarchy and precedence*; conformance record section 7). A URL a browser
    would rewrite (dot segments, odd escapes) is compared as written, less one trailing slash
    when it has no query.
    """
    raw_fallback = url if "?" in url else url.removesuffix("/")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return raw_fallback
    segments = parts.path.split("/")
    if (
        not parts.scheme
        or not parts.netloc
        or any(ch in url for ch in " \t\r\n\x7f")
        or "." in segments
        or ".." in segments
        or not CANONICAL_PATH.match(parts.path)
    ):
        return raw_fallback
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    netloc = host if port in (None, DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    if userinfo:
        netloc = f"{userinfo}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path.removesuffix("/"), parts.query, ""))


# --- approvals --------------------------------------------------------------------------------


def listed(settings: Mapping[str, Any], key: str) -> list[Any]:
    value = settings.get(key)
    return value if isinstance(value, list) else []


def approval(name: str, settings: Mapping[str, Any]) -> str:
    """A project server's approval: rejected beats approved beats pending.

    ``settings`` holds what counts: ``read_sources`` folds in ``disabledMcpjsonServers`` from
    every file and the enables only from files a cloned repository cannot write for itself,
    unless the folder is trusted (*Claude Code docs, MCP › Approval of project servers and workspace trust*).
    """
    if name in listed(settings, "disabledMcpjsonServers"):
        return "rejected"
    if settings.get("enableAllProjectMcpServers") is True or name in listed(settings, "enabledMcpjsonServers"):
        return "approved"
    return "pending"


def settings_file(path: Path, label: str) -> dict[str, Any]:
    settings = read_json(path, label)
    if settings is None:
        return {}
    if not isinstance(settings, dict):
        raise ConfigError(f"{label} ({path}) must hold a JSON object.")
    return settings


def config_dir(home: Path, env: Mapping[str, str]) -> Path:
    """Where ``.claude.json`` and ``settings.json`` live: CLAUDE_CONFIG_DIR, or ~/.claude (record rule 4)."""
    return Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else Path(home) / ".claude"


def claude_json_path(home: Path, env: Mapping[str, str]) -> Path:
    return (
        Path(env["CLAUDE_CONFIG_DIR"]) / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else Path(home) / ".claude.json"
    )


def effective_settings(
    home: Path, project: Path, local_entry: Mapping[str, Any], env: Mapping[str, str] = {}
) -> dict[str, Any]:
    """The approval settings in force for ``project``."""
    user = settings_file(config_dir(home, env) / "settings.json", "~/.claude/settings.json")
    project_files = [
        settings_file(Path(project) / ".claude" / name, f".claude/{name}")
        for name in ("settings.json", "settings.local.json")
    ]
    trusted = local_entry.get("hasTrustDialogAccepted") is True
    # Your own configuration folder needs no trust dialog (Claude Code docs, MCP › Approval of project servers and workspace trust).
    own_folder = Path(project_key(project)) in (Path(home).resolve(), config_dir(home, env).resolve().parent)
    sources = [user, local_entry, *project_files]
    if trusted:
        enable_sources = [user, local_entry, *project_files]
    elif own_folder:
        enable_sources = [user, project_files[1]]
    else:
        enable_sources = [user]
    result: dict[str, Any] = {
        "enableAllProjectMcpServers": any(s.get("enableAllProjectMcpServers") is True for s in enable_sources),
        "enabledMcpjsonServers": [n for s in enable_sources for n in listed(s, "enabledMcpjsonServers")],
        "disabledMcpjsonServers": [n for s in sources for n in listed(s, "disabledMcpjsonServers")],
        "disabledMcpServers": listed(local_entry, "disabledMcpServers"),
    }
    return result


# --- resolving ------------------------------------------------------------------------------


def read_sources(
    home: Path,
    project: Path,
    *,
    connectors: Path | None = None,
    managed: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The server maps of each scope, and the approval settings, as Claude Code stores them."""
    env = env or {}
    key = project_key(project)
    claude_json_file = claude_json_path(home, env)
    claude_json = read_json(claude_json_file, "~/.claude.json")
    local_entry: dict[str, Any] = {}
    if isinstance(claude_json, dict):
        projects = claude_json.get("projects") or {}
        if isinstance(projects, dict) and isinstance(projects.get(key), dict):
            local_entry = projects[key]
    sources: dict[str, dict[str, Any]] = {
        MANAGED: {},
        LOCAL: servers_of(local_entry, f"~/.claude.json projects[{key!r}]", claude_json_file) if local_entry else {},
        PROJECT: project_servers(project),
        USER: servers_of(claude_json, "~/.claude.json", claude_json_file),
        CONNECTOR: servers_of(read_json(connectors, "connectors file"), "connectors file", connectors)
        if connectors
        else {},
    }
    if managed:
        document = read_json(managed, "managed MCP configuration")
        name = "managedMcpServers" if isinstance(document, dict) and "managedMcpServers" in document else "mcpServers"
        sources[MANAGED] = servers_of(document, "managed MCP configuration", managed, key=name)
    return sources, effective_settings(home, project, local_entry, env)


def resolve(
    home: Path,
    project: Path,
    env: Mapping[str, str],
    *,
    plugins: Iterable[Path] = (),
    connectors: Path | None = None,
    managed: Path | None = None,
) -> Resolution:
    """Resolve the effective MCP servers for ``project`` as seen from ``home``, with exactly ``env``."""
    sources, settings = read_sources(home, project, connectors=connectors, managed=managed, env=env)
    return resolve_sources(
        sources,
        env,
        settings=settings,
        plugins=[read_plugin(Path(p)) for p in plugins],
        home=Path(home),
        project=Path(project),
    )


def resolve_sources(
    sources: Mapping[str, Mapping[str, Any]],
    env: Mapping[str, str],
    *,
    settings: Mapping[str, Any] | None = None,
    plugins: Iterable[Plugin] = (),
    home: Path = Path("~"),
    project: Path = Path("."),
) -> Resolution:
    """Resolve servers from in-memory scope maps (``sources[scope]`` is a name -> entry map)."""
    settings = settings or {}
    project_dir = str(Path(project).resolve())
    res = Resolution()

    # 1. Check every entry; keep the usable ones as candidates.
    candidates: list[Candidate] = []

    def consider(name: str, scope: str, entry: Any, plugin: Plugin | None = None) -> None:
        if name in RESERVED_NAMES:
            reason = f'"{name}" is a reserved MCP server name and was not loaded'
            res.skip(name, scope, reason)
            res.warn(name, scope, "reserved_name", f"{reason}; rename this server.")
            return
        kind = entry_type(name, scope, entry, res)
        if kind is not None:
            candidates.append(
                Candidate(name, scope, entry, kind, plugin.name if plugin else None, plugin.root if plugin else None)
            )

    for scope in NAMED_SCOPES:
        for name, entry in (sources.get(scope) or {}).items():
            consider(name, scope, entry)
    for plugin in plugins:
        for server, entry in plugin.servers.items():
            consider(f"plugin:{plugin.name}:{server}", PLUGIN, entry, plugin=plugin)
    for name, entry in (sources.get(CONNECTOR) or {}).items():
        consider(name, CONNECTOR, entry)

    def expand_for(c: Candidate):
        if c.plugin_root is not None:
            data = Path(home) / ".claude" / "plugins" / "data" / c.plugin
            variables = {**env, **plugin_variables(str(c.plugin_root), str(data), project_dir)}
            return expand_entry(c.entry, variables, remote=c.remote, fields=PLUGIN_FIELDS)
        return expand_entry(c.entry, env, remote=c.remote)

    # 2. Managed servers and the three named scopes de-duplicate by name.
    by_name: dict[str, list[Candidate]] = {}
    for c in candidates:
        if c.scope in NAMED_SCOPES:
            by_name.setdefault(c.name, []).append(c)
    winners: list[Candidate] = []
    for name, defs in by_name.items():
        defs.sort(key=lambda c: PRECEDENCE.index(c.scope))
        winner = defs[0]
        winners.append(winner)
        losers = [d.scope for d in defs[1:]]
        if losers:
            res.explanations.append(
                f"{winner.scope.capitalize()} scope overrides the {' and '.join(losers)} definition"
                f"{'s' if len(losers) > 1 else ''} of `{name}`; its entry is used whole, no fields are merged."
            )
        else:
            res.explanations.append(f"`{name}` is defined only in {winner.scope} scope.")
        conflict_warning(name, defs, expand_for, res)

    # 3. Plugins, then connectors, are dropped when they point at an endpoint that an enabled
    #    server above already uses (Claude Code docs, MCP › Scope hierarchy and precedence): not a pending or rejected project server,
    #    not one disabled for this project, not an empty-url placeholder.
    def enabled(c: Candidate) -> bool:
        if c.scope == PROJECT and approval(c.name, settings) != "approved":
            return False
        if c.name in listed(settings, "disabledMcpServers"):
            return False
        return not (c.remote and not str(c.entry.get("url", "")).strip())

    taken = {endpoint(expand_for(c).entry, c.type): c.name for c in winners if enabled(c)}
    plugin_taken: dict[str, str] = {}  # between plugins a stdio server's env counts
    plugin_urls: dict[str, str] = {}  # what a connector is compared with
    for c in [c for c in candidates if c.scope == PLUGIN] + [c for c in candidates if c.scope == CONNECTOR]:
        expanded = expand_for(c).entry
        where = endpoint(expanded, c.type)
        kept = taken.get(where)
        if kept is None and c.scope == PLUGIN:
            kept = plugin_taken.get(endpoint(expanded, c.type, with_env=True))
        if kept is None and c.scope == CONNECTOR:
            kept = plugin_urls.get(where)
        if kept is not None:
            res.skip(
                c.name, c.scope, f'it duplicates "{kept}", which points at the same endpoint and is already connected'
            )
            continue
        if enabled(c):
            if c.scope == PLUGIN:
                plugin_taken[endpoint(expanded, c.type, with_env=True)] = c.name
                plugin_urls.setdefault(where, c.name)
            else:
                taken[where] = c.name
        winners.append(c)
        res.explanations.append(
            f"`{c.name}` comes from {'plugin ' + c.plugin if c.plugin else 'claude.ai connectors'}."
        )

    # 4. Expand, check, and describe each winner.
    for c in sorted(winners, key=lambda c: (PRECEDENCE.index(c.scope), c.name)):
        describe_winner(c, expand_for(c), settings, res)
    return res


def conflict_warning(name: str, defs: list[Candidate], expand_for, res: Resolution) -> None:
    """One name in several of the user, project and local scopes with different endpoints."""
    named = sorted((d for d in defs if d.scope in CONFLICT_ORDER), key=lambda d: CONFLICT_ORDER.index(d.scope))
    if len({exact_endpoint(expand_for(d).entry, d.type) for d in named}) < 2:
        return
    # Shown as written, every reference by its name, so no resolved secret appears.
    listing = ", ".join(f"{d.scope} ({display(as_written(d.entry, d.type))})" for d in named)
    removals = " or ".join(f"`claude mcp remove {name} -s {d.scope}`" for d in named)
    winner = defs[0]
    res.warn(
        name,
        winner.scope,
        "name_conflict",
        f'Server "{name}" is defined in multiple scopes with different endpoints: {listing}. OAuth tokens are stored '
        f"per endpoint, so authenticating in one context will not carry over. Keep the correct endpoint and remove "
        f"the others: {removals}",
    )


def describe_winner(c: Candidate, expanded, settings: Mapping[str, Any], res: Resolution) -> None:
    if expanded.missing and c.scope != PLUGIN:
        hint = (
            " CLAUDE_PROJECT_DIR is set in the server's environment, not Claude Code's: write ${CLAUDE_PROJECT_DIR:-.}."
            if "CLAUDE_PROJECT_DIR" in expanded.missing
            else ""
        )
        res.warn(
            c.name, c.scope, "missing_variable", f"Missing environment variables: {', '.join(expanded.missing)}.{hint}"
        )
    hidden = whitespace_fields(c.entry)
    if hidden:
        res.warn(c.name, c.scope, "whitespace", f"Leading or trailing whitespace in: {', '.join(hidden)}")
    server: dict[str, Any] = {"scope": c.scope, "type": c.type}
    if c.plugin:
        server["plugin"] = c.plugin
    if c.scope == PROJECT:
        server["approval"] = approval(c.name, settings)
        if server["approval"] == "pending":
            res.explanations.append(
                f"`{c.name}` is a project server awaiting approval: run claude to approve it, or list it in "
                "enabledMcpjsonServers in ~/.claude/settings.json."
            )
        elif server["approval"] == "rejected":
            res.explanations.append(f"`{c.name}` is rejected by disabledMcpjsonServers and will not connect.")
    if c.name in listed(settings, "disabledMcpServers"):
        server["status"] = "disabled"
        res.explanations.append(f"`{c.name}` is disabled for this project (re-enable it in /mcp).")
    if c.remote:
        server["url"] = expanded.entry["url"]
        server["headers"] = expanded.entry.get("headers") or {}
        if "headersHelper" in expanded.entry:
            server["headersHelper"] = expanded.entry["headersHelper"]
        if not c.entry["url"].strip():
            server["status"] = "not_configured"
            res.explanations.append(f"`{c.name}` has an empty url: it is listed as not configured and never connected.")
        elif not is_absolute_url(server["url"].strip()):
            res.warn(
                c.name, c.scope, "invalid_url", "'url' is not a valid URL. Update the server's config and reconnect."
            )
    else:
        server["command"] = expanded.entry["command"]
        server["args"] = expanded.entry.get("args") or []
        server["env"] = expanded.entry.get("env") or {}
    res.servers[c.name] = server
    res.configured[c.name] = c.entry
