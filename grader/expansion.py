"""``${VAR}`` and ``${VAR:-default}`` expansion in MCP server entries, as Claude Code does it.

Source: shared/seeds/004_16e38cc9560e0e5c.txt lines 778-840 ("Подстановка переменных
окружения в .mcp.json") and 115-119 (``CLAUDE_PROJECT_DIR``); details the seed leaves
open were observed on Claude Code itself (docs/claude-code-conformance.md).

- Expansion applies to ``command``, ``args``, ``env``, ``url`` and ``headers``.
- ``${VAR}`` unset, with no default: the literal text stays and a warning names VAR.
- An empty string counts as set: ``${VAR:-default}`` gives the empty string.
- In a remote server's ``url`` and ``headers`` the credential variables read as empty,
  set or not, and their ``:-default`` is ignored; provider base URLs still expand.
- ``${CLAUDE_PROJECT_DIR}`` is set in the server's environment, not Claude Code's, so in
  ``.mcp.json`` and ``~/.claude.json`` it expands only from the environment given (it
  usually needs a default); plugin configurations substitute it, ``${CLAUDE_PLUGIN_ROOT}``
  and ``${CLAUDE_PLUGIN_DATA}`` directly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

# Read as empty toward a remote server (seed lines 808-819): Claude Code's own keys, cloud
# provider credentials, and other credentials commonly found in a shell.
CREDENTIAL_VARIABLES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "NPM_TOKEN",
    }
)

PLUGIN_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR")

EXPANDED_FIELDS = ("command", "args", "env", "url", "headers")
# A plugin's placeholders also reach a remote server's headersHelper (seed lines 659-662).
PLUGIN_FIELDS = (*EXPANDED_FIELDS, "headersHelper")
REMOTE_FIELDS = ("url", "headers")


def is_credential(name: str) -> bool:
    return name in CREDENTIAL_VARIABLES


@dataclass
class Expanded:
    """The result of expanding one entry: the values, and what the expansion noticed."""

    entry: dict[str, Any]
    missing: list[str] = field(default_factory=list)  # unset, no default: left literal
    blanked: list[str] = field(default_factory=list)  # credential variables read as empty


def expand_text(
    text: str, env: Mapping[str, str], *, blank_credentials: bool = False, found: Expanded | None = None
) -> str:
    """Expand every reference in ``text`` from ``env``."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if blank_credentials and is_credential(name):
            if found is not None and name not in found.blanked:
                found.blanked.append(name)
            return ""
        if name in env:
            return env[name]
        if default is not None:
            return default
        if found is not None and name not in found.missing:
            found.missing.append(name)
        return match.group(0)

    return REFERENCE.sub(replace, text)


def references(value: Any) -> list[str]:
    """Every variable name referenced in a string, list or mapping (values only)."""
    if isinstance(value, str):
        return [m.group(1) for m in REFERENCE.finditer(value)]
    if isinstance(value, list):
        return [name for item in value for name in references(item)]
    if isinstance(value, dict):
        return [name for item in value.values() for name in references(item)]
    return []


def expand_entry(
    entry: Mapping[str, Any], env: Mapping[str, str], *, remote: bool, fields: tuple[str, ...] = EXPANDED_FIELDS
) -> Expanded:
    """Expand the fields Claude Code expands in one server entry; other fields are kept as written."""
    result = Expanded(dict(entry))
    for key in fields:
        if key not in entry:
            continue
        blank = remote and key in REMOTE_FIELDS
        value = entry[key]
        if isinstance(value, str):
            result.entry[key] = expand_text(value, env, blank_credentials=blank, found=result)
        elif isinstance(value, list):
            result.entry[key] = [
                expand_text(v, env, blank_credentials=blank, found=result) if isinstance(v, str) else v for v in value
            ]
        elif isinstance(value, dict):
            result.entry[key] = {
                k: expand_text(v, env, blank_credentials=blank, found=result) if isinstance(v, str) else v
                for k, v in value.items()
            }
    return result


def plugin_variables(plugin_root: str, plugin_data: str, project_dir: str) -> dict[str, str]:
    """The placeholders a plugin's MCP configuration gets substituted directly."""
    return dict(zip(PLUGIN_VARIABLES, (plugin_root, plugin_data, project_dir)))
