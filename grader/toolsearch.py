"""Which MCP tools Claude Code loads up front and which it defers behind tool search, and why.

The rules are those of *Claude Code docs, MCP › Scaling with MCP tool search*, *› Configuring tool search*,
*› Excluding a server from deferral*, *› Deferring a server's tools* and the author's ``_meta`` keys of
*› Tool search for MCP server authors* and *› Requiring approval for a specific tool*. A deferred tool's
name is known from the start; its definition loads when Claude searches for it. The resolution assumes a
current model on the Anthropic API (older models, and deployments that refuse tool search, load every
tool up front whatever the settings say). Where the documentation is silent, the behaviour observed in
Claude Code 2.1.332 is marked so in the reasons.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.limits import CHARS_PER_TOKEN, description_limits, full_tool_name, name_fits

ALWAYS_LOAD = "anthropic/alwaysLoad"
REQUIRES_USER_INTERACTION = "anthropic/requiresUserInteraction"
DEFAULT_THRESHOLD_PERCENT = 10
DEFAULT_CONTEXT_WINDOW = 200_000
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
# Where a server's entry comes from. An author's "anthropic/alwaysLoad": false keeps a tool deferred
# against the entry's "alwaysLoad": true only for the last three.
CONFIGURED, MCP_CONFIG, SDK, PLUGIN = "configured", "--mcp-config", "Agent SDK", "plugin"
ORIGINS = (CONFIGURED, MCP_CONFIG, SDK, PLUGIN)


@dataclass(frozen=True)
class Server:
    """One connected server as tool search sees it: its name, its ``tools/list`` (wire format, with each
    tool's ``_meta``), the ``alwaysLoad`` of its configuration entry, and where the entry comes from."""

    name: str
    tools: Sequence[Mapping[str, Any]]
    always_load: bool | None = None
    origin: str = CONFIGURED
    plugin: str | None = None

    def __post_init__(self) -> None:
        if self.origin not in ORIGINS:
            raise ValueError(f"origin must be one of {', '.join(ORIGINS)}, not {self.origin!r}")
        if self.always_load is not None and not isinstance(self.always_load, bool):
            raise ValueError(f"{self.name}: alwaysLoad is true or false, not {self.always_load!r}")


@dataclass(frozen=True)
class Mode:
    """Tool search for the session: "on", "off" or "auto" (with its threshold in percent of the context window)."""

    name: str
    why: str
    percent: int | None = None


@dataclass(frozen=True)
class ToolLoad:
    server: str
    tool: str
    full_name: str
    loads: str  # "up front", "deferred" or "left out"
    why: str
    description_chars: int
    description_limit: int
    approval_every_call: bool

    @property
    def row(self) -> dict[str, object]:
        return {
            "server": self.server,
            "tool": self.tool,
            "loads": self.loads,
            "why": self.why,
            "description chars": self.description_chars,
            "description limit": self.description_limit,
            "asks every call": self.approval_every_call,
        }


@dataclass(frozen=True)
class Resolution:
    mode: Mode
    tools: list[ToolLoad] = field(default_factory=list)
    deferrable_tokens: int = 0
    threshold_tokens: int | None = None

    def loading(self, loads: str) -> list[str]:
        return [t.full_name for t in self.tools if t.loads == loads]

    @property
    def rows(self) -> list[dict[str, object]]:
        return [t.row for t in self.tools]


def truthy(value: str) -> bool:
    return value.strip().lower() in TRUE_WORDS


def falsy(value: str) -> bool:
    return value.strip().lower() in FALSE_WORDS


def tool_search_mode(env: Mapping[str, str] | None = None) -> Mode:
    """What ENABLE_TOOL_SEARCH (and CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS) make of tool search."""
    env = env or {}
    if truthy(env.get("CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS", "")):
        return Mode(
            "off",
            "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS is set: tool search is off, and ENABLE_TOOL_SEARCH cannot turn it back on",
        )
    value = env.get("ENABLE_TOOL_SEARCH", "")
    text = value.strip()
    if not text:
        return Mode("on", "ENABLE_TOOL_SEARCH is not set: tool search is on by default")
    if text.lower() == "auto":
        return Mode(
            "auto",
            f"ENABLE_TOOL_SEARCH=auto: threshold mode at {DEFAULT_THRESHOLD_PERCENT}% of the context window",
            DEFAULT_THRESHOLD_PERCENT,
        )
    if text.lower().startswith("auto:"):
        number = text[5:].strip()
        try:
            percent = max(0, min(100, round(float(number))))
        except ValueError:
            return Mode(
                "auto",
                f"ENABLE_TOOL_SEARCH={value}: N is not a number, so the threshold stays at "
                f"{DEFAULT_THRESHOLD_PERCENT}% (observed in Claude Code 2.1.332)",
                DEFAULT_THRESHOLD_PERCENT,
            )
        if percent == 0:
            return Mode(
                "on",
                f"ENABLE_TOOL_SEARCH={value}: a 0% threshold is always reached, so tool search is on "
                "(observed in Claude Code 2.1.332)",
            )
        if percent == 100:
            return Mode(
                "off",
                f"ENABLE_TOOL_SEARCH={value}: a 100% threshold is never reached, so tool search is off "
                "(observed in Claude Code 2.1.332)",
            )
        return Mode("auto", f"ENABLE_TOOL_SEARCH={value}: threshold mode at {percent}% of the context window", percent)
    if truthy(text):
        return Mode("on", f"ENABLE_TOOL_SEARCH={value}: tool search is on, as when it is not set")
    if falsy(text):
        return Mode("off", f"ENABLE_TOOL_SEARCH={value}: every MCP tool loads up front, nothing is deferred")
    return Mode(
        "on",
        f"ENABLE_TOOL_SEARCH={value} is not a value Claude Code knows: tool search stays on, as when it "
        "is not set (observed in Claude Code 2.1.332)",
    )


def meta_of(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = tool.get("_meta")
    return meta if isinstance(meta, Mapping) else {}


def asks_every_call(tool: Mapping[str, Any]) -> bool:
    """``_meta["anthropic/requiresUserInteraction"]`` is JSON true (any other value is ignored): Claude Code asks
    the user before every call, in every permission mode, and refuses the call in dontAsk mode."""
    return meta_of(tool).get(REQUIRES_USER_INTERACTION) is True


def pinned(server: Server, tool: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the tool loads up front whatever tool search does, and why (the author's mark and the entry's)."""
    mark = meta_of(tool).get(ALWAYS_LOAD)
    if server.always_load is False:
        extra = " (the author's alwaysLoad mark is overridden)" if mark is True else ""
        return False, f'the entry says "alwaysLoad": false, so every tool of the server stays behind tool search{extra}'
    if server.always_load is True:
        if mark is False and server.origin in (MCP_CONFIG, SDK, PLUGIN):
            return False, (
                f'the author marks it alwaysLoad false, which holds against the entry\'s "alwaysLoad": true '
                f"for a server given by {server.origin}"
            )
        return (
            True,
            'the entry says "alwaysLoad": true: the server\'s tools load up front whatever ENABLE_TOOL_SEARCH says',
        )
    if mark is True:
        return True, "the author marks it anthropic/alwaysLoad true in its _meta"
    return False, ""


def definition_tokens(tool: Mapping[str, Any]) -> int:
    """About how many tokens a tool's definition (name, description, input schema) takes: characters / 4."""
    definition = {key: tool.get(key) for key in ("name", "description", "inputSchema")}
    return math.ceil(len(json.dumps(definition, separators=(",", ":"))) / CHARS_PER_TOKEN)


def resolve_tool_search(
    servers: Iterable[Server],
    env: Mapping[str, str] | None = None,
    *,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
) -> Resolution:
    """Which tools of ``servers`` Claude Code loads up front and which it defers, each with the reason.

    ``env`` is Claude Code's environment: ENABLE_TOOL_SEARCH, CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS and
    CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH. In auto mode, the tools that would otherwise be deferred load
    up front while their definitions total less than the threshold (estimated at characters / 4).
    """
    mode = tool_search_mode(env)
    upfront_limit, deferred_limit = description_limits(env)
    decided: list[tuple[Server, Mapping[str, Any], str, bool, str]] = []
    for server in servers:
        for tool in server.tools:
            name = str(tool.get("name", ""))
            full = full_tool_name(server.name, name, server.plugin)
            is_pinned, why = pinned(server, tool)
            decided.append((server, tool, full, is_pinned, why))
    deferrable = [tool for _, tool, full, is_pinned, _ in decided if not is_pinned and name_fits(full)]
    total = sum(definition_tokens(tool) for tool in deferrable)
    threshold = context_window * mode.percent // 100 if mode.percent is not None else None
    loads: list[ToolLoad] = []
    for server, tool, full, is_pinned, why in decided:
        description = str(tool.get("description") or "")
        if not name_fits(full):
            where, reason = (
                "left out",
                f"its full name is {len(full)} characters, over 128: Claude Code does not send it to Claude",
            )
        elif mode.name == "off":
            where, reason = "up front", "tool search is off"
        elif is_pinned:
            where, reason = "up front", why
        elif mode.name == "auto" and threshold is not None and total < threshold:
            where, reason = (
                "up front",
                (
                    f"auto: the deferrable definitions total about {total:,} tokens, under "
                    f"{mode.percent}% of the context window ({threshold:,})"
                ),
            )
        elif mode.name == "auto":
            where, reason = (
                "deferred",
                (
                    f"auto: the deferrable definitions total about {total:,} tokens, at or over "
                    f"{mode.percent}% of the context window ({threshold:,}), so tool search is on"
                ),
            )
        else:
            where, reason = "deferred", why or "tool search is on and nothing marks it to load up front"
        limit = deferred_limit if where == "deferred" else upfront_limit
        loads.append(
            ToolLoad(
                server.name,
                str(tool.get("name", "")),
                full,
                where,
                reason,
                len(description),
                limit,
                asks_every_call(tool),
            )
        )
    return Resolution(mode, loads, total, threshold)
