"""Where Claude Code finds MCP servers, which definition wins, and what it says about the rest.

Source: shared/seeds/004_16e38cc9560e0e5c.txt lines 63-290 (transports, ``url`` without
``type``, ``type: "sdk"``, statuses, approvals, configuration warnings) and 613-777
(plugins, scopes, storage, precedence, endpoint de-duplication), and the scopes table of
shared/seeds/000_99b6002e9d2fa51e.txt. Where the seed is silent, Claude Code's observed
behaviour decides (docs/claude-code-conformance.md).

Scopes, highest precedence first: managed servers, local (``projects[<abs path>]`` in
``~/.claude.json``), project (``.mcp.json``), user (top-level ``mcpServers`` in
``~/.claude.json``), plugins, claude.ai connectors. The winning entry is used whole;
fields are never merged across scopes. The three scopes match duplicates by name;
plugins and connectors by endpoint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from grader.expansion import PLUGIN_FIELDS, expand_entry, plugin_variables

MANAGED, LOCAL, PROJECT, USER, PLUGIN, CONNECTOR = "managed", "local", "project", "user", "plugin", "connector"
PRECEDENCE = (MANAGED, LOCAL, PROJECT, USER, PLUGIN, CONNECTOR)
NAMED_SCOPES = (MANAGED, LOCAL, PROJECT, USER)

RESERVED_NAMES = frozenset({"workspace", "claude-in-chrome", "computer-use", "Claude Preview", "Claude Browser"})
VALID_NAME = re.compile(r"[A-Za-z0-9_-]+")  # used with fullmatch
TYPE_ALIASES = {"streamable-http": "http"}
REMOTE_TYPES = frozenset({"http", "sse", "ws"})
KNOWN_TYPES = REMOTE_TYPES | {"stdio"}
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


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
        self.explanations.append(f"`{server}` ({scope} scope) is skipped: {reason.removeprefix('Skipped — ')}")


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
            f"{label} ({path}) is not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}. "
            "Fix the file at that position and run again."
        ) from None


def servers_of(document: Any, label: str, path: Path, key: str = "mcpServers") -> dict[str, Any]:
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigError(f"{label} ({path}) must hold a JSON object, not {type(document).__name__}.")
    servers = document.get(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f'{label} ({path}): "{key}" must be an object mapping server names to entries.')
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
    clean = lambda s: re.sub(r"[^A-Za-z0-9_-]", "_", s)  # noqa: E731
    return f"mcp__plugin_{clean(plugin)}_{clean(server)}__{clean(tool)}"


# --- checking one entry -------------------------------------------------------------------


def entry_type(name: str, scope: str, entry: Any, res: Resolution) -> str | None:
    """The entry's transport, or None after recording why it is skipped."""
    if not isinstance(entry, dict):
        res.skip(name, scope, f'the entry of "{name}" is not a JSON object')
        return None
    raw = entry.get("type")
    if raw is None and "url" in entry:
        res.skip(
            name,
            scope,
            f'MCP server "{name}" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry.',
        )
        return None
    if raw == "sdk":
        res.skip(name, scope, f'Skipped — MCP server "{name}" declares type "sdk", which only an SDK host application can register.')
        return None
    kind = "stdio" if raw is None else TYPE_ALIASES.get(raw, raw) if isinstance(raw, str) else None
    if kind not in KNOWN_TYPES:
        res.skip(name, scope, f'MCP server "{name}" has an unknown type {raw!r}; use stdio, http, sse or ws.')
        return None
    if kind == "stdio" and not isinstance(entry.get("command"), str):
        res.skip(name, scope, f'MCP server "{name}" is a stdio server without a "command".')
        return None
    if kind in REMOTE_TYPES and not isinstance(entry.get("url"), str):
        res.skip(name, scope, f'MCP server "{name}" is a {kind} server without a "url".')
        return None
    for key, shape in (("args", list), ("env", dict), ("headers", dict)):
        if key in entry and not isinstance(entry[key], shape):
            res.skip(name, scope, f'MCP server "{name}": "{key}" must be a JSON {"array" if shape is list else "object"}.')
            return None
    return kind


def whitespace_fields(entry: Mapping[str, Any]) -> list[str]:
    """Fields whose value (or key) has hidden leading or trailing whitespace, by name only."""
    hidden = lambda s: isinstance(s, str) and s != s.strip()  # noqa: E731
    found = [key for key in ("command", "url") if hidden(entry.get(key))]
    for i, arg in enumerate(entry.get("args") or []):
        if hidden(arg):
            found.append(f"args[{i}]")
    for section in ("env", "headers"):
        values = entry.get(section)
        if isinstance(values, dict):
            for key, value in values.items():
                if hidden(key) or hidden(value):
                    found.append(f"{section}.{key.strip()}")
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


def endpoint(entry: Mapping[str, Any], kind: str) -> str:
    """What a definition connects to, for comparison: URLs normalised, command lines as written."""
    written = as_written(entry, kind)
    return normalise_url(written) if kind in REMOTE_TYPES else written


def normalise_url(url: str) -> str:
    """Same endpoint when only scheme/host case, the scheme's default port or a trailing slash differ."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    netloc = host if port in (None, DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    if userinfo:
        netloc = f"{userinfo}@{netloc}"
    path = parts.path[:-1] if parts.path.endswith("/") else parts.path
    return urlunsplit((scheme, netloc, path, parts.query, parts.fragment))


# --- resolving ------------------------------------------------------------------------------


def listed(settings: Mapping[str, Any], key: str) -> list[Any]:
    value = settings.get(key)
    return value if isinstance(value, list) else []


def approval(name: str, settings: Mapping[str, Any]) -> str:
    """A project server's approval in the user's settings: rejected beats approved beats pending.

    ``disabledMcpjsonServers`` rejects from any settings file (seed line 256); ``read_sources``
    folds the project's own files into that list only, since a cloned repository cannot
    approve its own servers (seed lines 246-247).
    """
    if name in listed(settings, "disabledMcpjsonServers"):
        return "rejected"
    if settings.get("enableAllProjectMcpServers") is True or name in listed(settings, "enabledMcpjsonServers"):
        return "approved"
    return "pending"


def read_sources(
    home: Path, project: Path, *, connectors: Path | None = None, managed: Path | None = None
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The server maps of each scope, and the user's settings, as Claude Code stores them."""
    project_key = str(Path(project).resolve())
    claude_json_path = Path(home) / ".claude.json"
    claude_json = read_json(claude_json_path, "~/.claude.json")
    sources: dict[str, dict[str, Any]] = {
        MANAGED: {},
        LOCAL: {},
        PROJECT: servers_of(read_json(Path(project) / ".mcp.json", ".mcp.json"), ".mcp.json", Path(project) / ".mcp.json"),
        USER: servers_of(claude_json, "~/.claude.json", claude_json_path),
        CONNECTOR: servers_of(read_json(connectors, "connectors file"), "connectors file", connectors) if connectors else {},
    }
    if isinstance(claude_json, dict):
        projects = claude_json.get("projects") or {}
        if isinstance(projects, dict) and isinstance(projects.get(project_key), dict):
            sources[LOCAL] = servers_of(projects[project_key], f"~/.claude.json projects[{project_key!r}]", claude_json_path)
    if managed:
        document = read_json(managed, "managed MCP configuration")
        key = "managedMcpServers" if isinstance(document, dict) and "managedMcpServers" in document else "mcpServers"
        sources[MANAGED] = servers_of(document, "managed MCP configuration", managed, key=key)
    settings = settings_file(Path(home) / ".claude" / "settings.json", "~/.claude/settings.json")
    rejected = listed(settings, "disabledMcpjsonServers")
    for name in ("settings.json", "settings.local.json"):
        project_settings = settings_file(Path(project) / ".claude" / name, f".claude/{name}")
        rejected = rejected + [n for n in listed(project_settings, "disabledMcpjsonServers") if n not in rejected]
    if rejected:
        settings = {**settings, "disabledMcpjsonServers": rejected}
    return sources, settings


def settings_file(path: Path, label: str) -> dict[str, Any]:
    settings = read_json(path, label)
    if settings is None:
        return {}
    if not isinstance(settings, dict):
        raise ConfigError(f"{label} ({path}) must hold a JSON object.")
    return settings


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
    sources, settings = read_sources(home, project, connectors=connectors, managed=managed)
    return resolve_sources(
        sources, env, settings=settings, plugins=[read_plugin(Path(p)) for p in plugins], home=Path(home), project=Path(project)
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
    project_key = str(Path(project).resolve())
    res = Resolution()

    # 1. Check every entry; keep the usable ones as candidates, in precedence order.
    candidates: list[Candidate] = []

    def consider(name: str, scope: str, entry: Any, plugin: Plugin | None = None) -> None:
        if name in RESERVED_NAMES:
            reason = f'"{name}" is reserved for a built-in Claude Code server; rename this server.'
            res.skip(name, scope, reason)
            res.warn(name, scope, "reserved_name", reason)
            return
        if plugin is None and scope != CONNECTOR and not VALID_NAME.fullmatch(name):
            res.skip(name, scope, f'"{name}" is not a valid server name: use only letters, digits, hyphens and underscores.')
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

    # 2. The three named scopes (and managed servers) de-duplicate by name.
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
            named = [d for d in defs if d.scope != MANAGED]
            if len({endpoint(d.entry, d.type) for d in named}) > 1:
                # Shown as written, ${VAR} references unexpanded, so no resolved secret appears.
                listing = "; ".join(f"{d.scope}: {as_written(d.entry, d.type)}" for d in named)
                res.warn(
                    name,
                    winner.scope,
                    "name_conflict",
                    f'MCP server "{name}" is defined in several scopes with different endpoints ({listing}); '
                    f"the {winner.scope} definition is used. Remove the others with "
                    f"`claude mcp remove {name} --scope <scope>`.",
                )
        else:
            res.explanations.append(f"`{name}` is defined only in {winner.scope} scope.")

    # 3. Plugins, then connectors, are dropped when they point at an endpoint already connected.
    def expanded_endpoint(c: Candidate) -> str:
        return endpoint(expand_for(c).entry, c.type)

    def expand_for(c: Candidate):
        variables = dict(env)
        if c.plugin_root is not None:
            data = home / ".claude" / "plugins" / "data" / c.plugin
            variables.update(plugin_variables(str(c.plugin_root), str(data), project_key))
            return expand_entry(c.entry, variables, remote=c.remote, fields=PLUGIN_FIELDS)
        return expand_entry(c.entry, variables, remote=c.remote)

    # Only servers that will connect count: not a rejected project server, not an empty-url placeholder.
    def connects(c: Candidate) -> bool:
        if c.scope == PROJECT and approval(c.name, settings) == "rejected":
            return False
        return not (c.remote and c.entry.get("url") == "")

    taken = {expanded_endpoint(c): c.name for c in winners if connects(c)}
    for c in sorted((c for c in candidates if c.scope in (PLUGIN, CONNECTOR)), key=lambda c: PRECEDENCE.index(c.scope)):
        where = expanded_endpoint(c)
        if where in taken:
            res.skip(c.name, c.scope, f"it points at the same endpoint as `{taken[where]}`, which is already connected.")
            continue
        if connects(c):
            taken[where] = c.name
        winners.append(c)
        res.explanations.append(f"`{c.name}` comes from {'plugin ' + c.plugin if c.plugin else 'claude.ai connectors'}.")

    # 4. Expand, check, and describe each winner.
    for c in sorted(winners, key=lambda c: (PRECEDENCE.index(c.scope), c.name)):
        expanded = expand_for(c)
        for name in expanded.missing:
            hint = (
                " It is set in the server's environment, not Claude Code's: write ${CLAUDE_PROJECT_DIR:-.}."
                if name == "CLAUDE_PROJECT_DIR"
                else f" Set it, or give a fallback: ${{{name}:-default}}."
            )
            res.warn(c.name, c.scope, "missing_variable", f'MCP server "{c.name}": environment variable {name} is not set; '
                     f"the text ${{{name}}} is used as written.{hint}")
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
        if c.remote:
            server["url"] = expanded.entry["url"]
            server["headers"] = expanded.entry.get("headers") or {}
            if "headersHelper" in expanded.entry:
                server["headersHelper"] = expanded.entry["headersHelper"]
            if c.entry["url"] == "":
                server["status"] = "not_configured"
                res.explanations.append(f"`{c.name}` has an empty url: it is listed as not configured and never connected.")
            elif not is_absolute_url(server["url"]):
                res.warn(c.name, c.scope, "invalid_url", f"MCP server \"{c.name}\": 'url' is not a valid URL.")
        else:
            server["command"] = expanded.entry["command"]
            server["args"] = expanded.entry.get("args") or []
            server["env"] = expanded.entry.get("env") or {}
        res.servers[c.name] = server
        res.configured[c.name] = c.entry
    return res

