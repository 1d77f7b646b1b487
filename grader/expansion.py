"""``${VAR}`` and ``${VAR:-default}`` expansion in MCP server entries, as Claude Code does it.

Source: *Claude Code docs, MCP › Environment variable expansion in `.mcp.json`* (with its
Variables set to an empty string and How references are shown in `/mcp` and CLI output) and
*Exam guide › Environment variable expansion*; where they are silent, Claude Code 2.1.332 as
observed in docs/claude-code-conformance.md (sections 4 and 5). The exam guide says parsing fails
when a variable is unset; Claude Code keeps the text and warns, and this model does what Claude
Code does.

- One pass of ``\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\\}``: a set value wins, even
  ``""``; else the default (literal text up to the first ``}``); else the reference stays
  as written and the name is reported missing. No other syntax: ``$VAR``, ``${VAR-d}``
  and escapes are left alone.
- It applies to ``command``, ``args``, ``env`` values, ``url`` and ``headers`` values
  (never to env or header names), in every scope.
- Toward a remote server (its ``url`` and ``headers``) the credential variables read as
  empty, set or not, and their ``:-default`` is ignored; a provider base URL such as
  ``ANTHROPIC_BASE_URL`` still expands unless its value carries credentials (userinfo).
- Claude Code's own session secrets read as empty everywhere, stdio included, when set.
- ``${CLAUDE_PROJECT_DIR}`` is an ordinary variable outside plugins (it is set in the
  server's environment, not Claude Code's, so it usually needs a default); plugin
  configurations substitute it, ``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PLUGIN_DATA}``.

Names are compared case-insensitively for the credential sets. Claude Code's full list
holds about a hundred names; this model keeps the ones the docs and the conformance
record name, and the patterns the record quotes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

# Claude Code's own session secrets: empty wherever they are referenced, when set.
SESSION_SECRETS = frozenset(
    {
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_SESSIONS_OAUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
        "CLAUDE_CODE_ARTIFACTS_API_TOKEN",
        "CLAUDE_CODE_SLACK_TAG_TOKEN",
        "CLAUDE_CODE_HFI_BEARER_TOKEN",
        "CLAUDE_BRIDGE_OAUTH_TOKEN",
        "CLAUDE_TRUSTED_DEVICE_TOKEN",
        "AGENT_PROXY_AUTH_TOKEN",
        "CLAUDE_CODE_MCP_SERVE_AUTH_TOKEN",
        "CLAUDE_SESSION_INGRESS_TOKEN_FILE",
        "CLAUDE_CODE_HOST_CREDS_FILE",
        "CLAUDE_CODE_MESSAGING_TOKEN",
        "CLAUDE_CODE_MEMORY_API_BASE_URL",
        "CLAUDE_CODE_MEMORY_API_TOKEN",
        "CLAUDE_CODE_OTEL_DIAG_STDERR",
        "MCP_CLIENT_SECRET",
        "MCP_XAA_IDP_CLIENT_SECRET",
        "ENVIRONMENT_SERVICE_KEY",
        "SELF_HOSTED_RUNNER_POOL_SECRET",
        "SELF_HOSTED_RUNNER_ENVIRONMENT_SECRET",
    }
)
SESSION_SECRET_PATTERNS = (
    re.compile(r"^OTEL_"),
    re.compile(r"^CLAUDE_CODE_ARTIFACT\w*_BASE_URL$"),
    re.compile(r"^CLAUDE_BG_"),
)

# Read as empty toward a remote server (Claude Code docs, MCP › Environment variable expansion in `.mcp.json`; conformance record section 5).
REMOTE_CREDENTIALS = SESSION_SECRETS | frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_FOUNDRY_API_KEY",
        "ANTHROPIC_FOUNDRY_AUTH_TOKEN",
        "ANTHROPIC_AWS_API_KEY",
        "ANTHROPIC_CUSTOM_HEADERS",
        "ANTHROPIC_IDENTITY_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_GHA_CREDS_PATH",
        "GOOGLE_OAUTH_ACCESS_TOKEN",
        "CLOUDSDK_AUTH_ACCESS_TOKEN",
        "AZURE_CLIENT_SECRET",
        "AZURE_CLIENT_CERTIFICATE_PASSWORD",
        "AZURE_PASSWORD",
        "IDENTITY_HEADER",
        "MSI_SECRET",
        "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE",
        "CLAUDE_CODE_CLIENT_KEY",
        "CLAUDE_CODE_CLIENT_CERT",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "ALL_PROXY",
        "NPM_TOKEN",
        "NODE_AUTH_TOKEN",
        "NUGET_AUTH_TOKEN",
        "CARGO_REGISTRY_TOKEN",
        "CODEARTIFACT_AUTH_TOKEN",
        "TWINE_PASSWORD",
        "TWINE_USERNAME",
        "PYPI_TOKEN",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "UV_INDEX_URL",
        "UV_EXTRA_INDEX_URL",
        "UV_DEFAULT_INDEX",
        "UV_INDEX",
        "GOPROXY",
        "GOAUTH",
        "VAULT_TOKEN",
        "CONSUL_HTTP_TOKEN",
        "NOMAD_TOKEN",
        "SONAR_TOKEN",
        "SLACK_WEBHOOK_URL",
        "SLACK_WEBHOOK",
        "DISCORD_WEBHOOK",
        "ACTIONS_RUNTIME_TOKEN",
        "COMPOSER_AUTH",
        "OVERRIDE_GITHUB_TOKEN",
        "DEFAULT_WORKFLOW_TOKEN",
        "SSH_SIGNING_KEY",
    }
)
REMOTE_CREDENTIAL_PATTERNS = (
    *SESSION_SECRET_PATTERNS,
    re.compile(r"^GIT_CONFIG_(?:PARAMETERS|(?:KEY|VALUE)_\d+)$"),
    re.compile(r"^CARGO_REGISTRIES_[A-Z0-9_]+_TOKEN$"),
    re.compile(r"^BUNDLE_[A-Z0-9_]+__"),
)
# Kept out of the set on purpose by Claude Code (conformance record, section 5).
NOT_CREDENTIALS = frozenset(
    {"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACEHUB_API_TOKEN"}
)
# Expand toward a remote server unless the value itself carries credentials.
PROVIDER_BASE_URLS = frozenset(
    {
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_BEDROCK_BASE_URL",
        "ANTHROPIC_VERTEX_BASE_URL",
        "ANTHROPIC_FOUNDRY_BASE_URL",
        "CLAUDE_CODE_API_BASE_URL",
    }
)

# The names the lessons and lab 2 use as "the credential variables".
CREDENTIAL_VARIABLES = REMOTE_CREDENTIALS

PLUGIN_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR")

EXPANDED_FIELDS = ("command", "args", "env", "url", "headers")
# A plugin's placeholders also reach a remote server's headersHelper (Claude Code docs, MCP › MCP servers provided by plugins).
PLUGIN_FIELDS = (*EXPANDED_FIELDS, "headersHelper")
REMOTE_FIELDS = ("url", "headers")


def _bare(name: str) -> str:
    upper = name.upper()
    return upper.removeprefix("INPUT_")


def is_session_secret(name: str) -> bool:
    bare = _bare(name)
    return bare in SESSION_SECRETS or any(p.search(bare) for p in SESSION_SECRET_PATTERNS)


def is_credential(name: str) -> bool:
    """True for a name that reads as empty toward a remote server, whatever it holds."""
    bare = _bare(name)
    if bare in NOT_CREDENTIALS:
        return False
    return bare in REMOTE_CREDENTIALS or any(p.search(bare) for p in REMOTE_CREDENTIAL_PATTERNS)


def carries_credentials(value: str) -> bool:
    """A URL with userinfo (``https://user:pass@host``) carries credentials."""
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return False
    return bool(parts.username or parts.password)


@dataclass
class Expanded:
    """The result of expanding one entry: the values, and what the expansion noticed."""

    entry: dict[str, Any]
    missing: list[str] = field(default_factory=list)  # unset, no default: left literal
    blanked: list[str] = field(default_factory=list)  # credential variables read as empty


def expand_text(
    text: str, env: Mapping[str, str], *, blank_credentials: bool = False, found: Expanded | None = None
) -> str:
    """Expand every reference in ``text`` from ``env``; ``blank_credentials`` marks a remote url/header."""
    if "${" not in text:
        return text

    def blank(name: str) -> str:
        if found is not None and name not in found.blanked:
            found.blanked.append(name)
        return ""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if blank_credentials and is_credential(name):
            return blank(name)
        if value is not None and is_session_secret(name):
            return blank(name)
        if blank_credentials and value is not None and _bare(name) in PROVIDER_BASE_URLS and carries_credentials(value):
            return blank(name)
        if value is not None:
            return value
        if default is not None:
            return default
        if found is not None and name not in found.missing:
            found.missing.append(name)
        return match.group(0)

    return REFERENCE.sub(replace, text)


def display(text: str) -> str:
    """A value as Claude Code displays it: every reference by its name, defaults dropped."""
    return REFERENCE.sub(lambda m: "${" + m.group(1) + "}", text)


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
    return dict(zip(PLUGIN_VARIABLES, (plugin_root, plugin_data, project_dir), strict=True))
