"""Check a running MCP server, through a real MCP client, against the course's pre-launch rules.

``check_server`` opens a session (or uses the one it is given), reads ``tools/list``, makes
the sample calls the caller provides, and returns a ``Report`` of ``Finding``s. ``check_url``
does the same for a Streamable HTTP server at a URL, after probing it with plain HTTP as a
client meets it. ``checklist`` turns a report into the thirteen items of *Common mistakes ›
Pre-launch checklist*: pass, FAIL, or a question only the server's author can answer. Each finding
names its rule, the sources the rule comes from (short name › section heading, as
``docs/sources.md`` lists them), its severity ("required": Claude Code drops, truncates or
misreads something, or the course requires it; "advice": a habit the sources recommend), whether it
passed (``None`` when it could not be checked), its subject (a tool, or "server") and a
sentence saying what was seen and what to do.

Rules (``RULES`` holds each one's citation):

- ``whitelist``: ``tools/list`` is exactly the expected list, naming extra and missing tools.
- ``annotations.present``, ``annotations.read_only``, ``annotations.retry_safety``: every
  tool declares its hints; read-only tools say ``readOnlyHint: true``; tools that change
  things say whether repeating them is safe.
- ``description.upfront_limit``, ``description.deferred_limit``: 4,096 and 16,384 characters.
- ``description.keywords_first`` and ``description.what_when_how`` (advice, a heuristic).
- ``name.length``, ``name.plugin_length``: the full ``mcp__...`` name within 128 characters.
- ``schema.property_names``, ``schema.valid``, ``schema.root_combinator``.
- ``meta.values``: the ``anthropic/...`` keys of a tool's ``_meta`` hold values Claude Code reads.
- ``instructions.length``: the server's instructions within 4,096 characters.
- ``result.expectation``, ``result.size``: for each sample call.
- ``initialize.logged``: the server's stderr shows the client's protocol version and name.
- ``search.fragments``: fragments in a sample's answer are short, start and end on word
  boundaries, at most two per source (``grader.search_quality``).
- Over HTTP only: ``http.initialize`` (initialize answered with JSON-RPC, not a proxy's HTML or
  a framework's redirect), ``http.fresh_reply`` (not a cached answer), ``http.no_cookie``,
  ``http.newer_client`` (a client announcing a newer protocol and unknown capabilities is
  accepted) and, with a burst, ``http.rate_limit`` (429 with Retry-After) and
  ``http.client_identity`` (clients behind a proxy counted apart; a forged forwarding header
  sent straight to the server not believed).

The description heuristic (``description.what_when_how``) looks for the four things
*Common mistakes › 5.2 Vague descriptions: the model does not call the tool* puts in a
description, with plain word matching; it cannot tell a good description from a bad one that
uses the right words, so its findings are advice and say what they looked for:

- what data: a noun from the tool's name (``search_orders`` -> "order") appears in the text;
- when to call: a when-clause such as "call it when", "use it when/before", "when the user",
  "if the user", "instead of";
- what to do with the result: "returns", "result", "an empty list means", "next page",
  "means";
- how to phrase the input: every top-level input property has a description.

``description.keywords_first`` passes when a noun of the tool's name (or, for a name without
one, any word of it) appears in the first 100 characters, because tool search matches only the
start of a description.

``initialize.logged`` reads the server's stderr. When ``check_server`` starts the server it
captures stderr itself and connects with the client name ``CLIENT_NAME``; given a session
someone else opened, it needs ``stderr_path`` and looks for that session's client name.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from mcp import StdioServerParameters
from mcp.client.session import DEFAULT_CLIENT_INFO
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from grader.scopes import REMOTE_TYPES, ConfigError, plugin_tool_name, resolve
from grader.search_quality import PER_SOURCE, fragment_problems, fragments_in
from grader.taxonomy import Category, is_empty_success, is_error, result_text
from labkit.descriptions import (
    RESULT_HINTS,
    WHEN_CLAUSES,
    first_match,
    undescribed_parameters,
)
from servers.client import BASE_ENV_KEYS, Session, stdio_params, wire

REQUIRED, ADVICE = "required", "advice"
SERVER = "server"

EXAM, MISTAKES, DOCS = "Exam guide", "Common mistakes", "Claude Code docs, MCP"


def cite(*places: tuple[str, str]) -> str:
    """Citations as docs/sources.md writes them: "short name › section heading", joined by "; "."""
    return "; ".join(f"{short} › {heading}" for short, heading in places)


CHECKLIST = (MISTAKES, "Pre-launch checklist")
READ_ONLY_MARK = (MISTAKES, "2.3 Tools without a read-only mark")
VAGUE = (MISTAKES, "5.2 Vague descriptions: the model does not call the tool")
AUTHORS = (DOCS, "Tool search for MCP server authors")
LONG_NAMES = (DOCS, "Tools with names longer than 128 characters")
SCHEMAS = (DOCS, "Tool input schemas")
OUTPUT = (DOCS, "MCP output limits and warnings")

# rule id -> (citation, severity)
RULES: dict[str, tuple[str, str]] = {
    "whitelist": (cite((MISTAKES, "2.1 The framework published private tools on its own"), CHECKLIST, (MISTAKES, "FAQ")), REQUIRED),
    # The article says clients react differently to a tool without hints (ChatGPT treats it as one
    # that may change data); requiring the hints on every tool is this course's policy.
    "annotations.present": (cite(READ_ONLY_MARK, CHECKLIST), REQUIRED),
    "annotations.read_only": (cite(READ_ONLY_MARK, CHECKLIST), REQUIRED),
    "annotations.retry_safety": (cite((DOCS, "Marking tools that are safe to call twice")), ADVICE),
    "description.upfront_limit": (cite(AUTHORS), REQUIRED),
    "description.deferred_limit": (cite(AUTHORS, (DOCS, "Changing description length limits")), REQUIRED),
    "description.keywords_first": (cite(AUTHORS, VAGUE), ADVICE),
    "description.what_when_how": (cite(VAGUE, CHECKLIST, (EXAM, "What this section covers")), ADVICE),
    "name.length": (cite(LONG_NAMES), REQUIRED),
    "name.plugin_length": (cite((DOCS, "MCP servers provided by plugins"), LONG_NAMES), REQUIRED),
    "schema.property_names": (cite(SCHEMAS), REQUIRED),
    "schema.valid": (cite(SCHEMAS), REQUIRED),
    "schema.root_combinator": (cite(SCHEMAS), ADVICE),
    "meta.values": (cite(OUTPUT, (DOCS, "Requiring approval for a specific tool"), AUTHORS), ADVICE),
    "instructions.length": (cite(AUTHORS), REQUIRED),
    "result.expectation": (
        cite(
            (EXAM, "Error category taxonomy"),
            (EXAM, "The `isError` flag: schema and example"),
            (MISTAKES, "5.1 Exceptions instead of statuses"),
        ),
        REQUIRED,
    ),
    "result.size": (cite(OUTPUT, (MISTAKES, "4.5 A whole article in the answer eats the client's context")), REQUIRED),
    "initialize.logged": (
        cite((MISTAKES, '1.1 "Unrecognized field": client and server on different protocol versions'), (MISTAKES, "FAQ"), CHECKLIST),
        ADVICE,
    ),
    "tools.list": (cite((MISTAKES, "FAQ")), REQUIRED),
}

# Claude Code docs, MCP › Tool search for MCP server authors (defaults; CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH changes both)
UPFRONT_DESCRIPTION_LIMIT = 4_096
DEFERRED_DESCRIPTION_LIMIT = 16_384
KEYWORD_WINDOW = 100
FULL_NAME_LIMIT = 128  # Claude Code docs, MCP › Tools with names longer than 128 characters
PROPERTY_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # Claude Code docs, MCP › Tool input schemas; used with fullmatch
DRAFT_2020_12 = ("https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#")
ROOT_COMBINATORS = ("anyOf", "oneOf", "allOf")
# Claude Code docs, MCP › MCP output limits and warnings: results over this are saved to a file unless the tool raises it.
RESULT_CHARS_LIMIT = 50_000
RESULT_CHARS_CEILING = 500_000
# The same section: longer error texts keep only their first and last 5,000 characters.
ERROR_TRUNCATION_CHARS = 11_000
ERROR_KEPT_CHARS = 5_000
MAX_RESULT_SIZE_KEY = "anthropic/maxResultSizeChars"
REQUIRES_USER_INTERACTION_KEY = "anthropic/requiresUserInteraction"
ALWAYS_LOAD_KEY = "anthropic/alwaysLoad"

READ_ONLY_PREFIXES = ("get_", "list_", "search_")
EXPECTATIONS = ("error", "empty", "ok")
CLIENT_NAME = "grader-check-server"
CLIENT_INFO = types.Implementation(name=CLIENT_NAME, version="1.0")

GENERIC_VERBS = frozenset(
    ["get", "list", "search", "find", "set", "create", "update", "delete", "add", "remove", "fetch", "read", "write", "run", "do", "make", "new", "query", "lookup"]
)


class CheckInputError(ValueError):
    """Input the person at the keyboard can fix (a sample file, a server name); the text says how."""


class ServerStartError(CheckInputError):
    """The server command did not start, or did not speak MCP on stdio."""


@dataclass(frozen=True)
class Finding:
    rule: str
    source: str
    severity: str  # "required" or "advice"
    passed: bool | None  # None: not checked
    subject: str  # a tool name, or "server"
    message: str

    @property
    def result(self) -> str:
        if self.passed is None:
            return "skip"
        if self.passed:
            return "pass"
        return "FAIL" if self.severity == REQUIRED else "warn"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def finding(rule: str, subject: str, passed: bool | None, message: str) -> Finding:
    source, severity = RULES[rule]
    return Finding(rule, source, severity, passed, subject, message)


@dataclass
class Report:
    server: str
    tools: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    url: str | None = None  # set when the server was checked over HTTP
    protocol_version: str | None = None  # the version the session agreed

    @property
    def failed_required(self) -> list[Finding]:
        return [f for f in self.findings if f.passed is False and f.severity == REQUIRED]

    @property
    def failed_advice(self) -> list[Finding]:
        return [f for f in self.findings if f.passed is False and f.severity == ADVICE]

    @property
    def ok(self) -> bool:
        return not self.failed_required

    def of(self, rule: str, subject: str | None = None) -> list[Finding]:
        """The findings of one rule (for one subject)."""
        return [f for f in self.findings if f.rule == rule and (subject is None or f.subject == subject)]

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "tools": self.tools,
            "ok": self.ok,
            "failedRequired": len(self.failed_required),
            "failedAdvice": len(self.failed_advice),
            "findings": [f.to_json() for f in self.findings],
        }

    def table(self, width: int = 72) -> str:
        """A plain-text table: rule, subject, result, message (wrapped)."""
        rows = [("rule", "subject", "result", "message")] + [
            (f.rule, f.subject, f.result, f.message) for f in self.findings
        ]
        w_rule = max(len(r[0]) for r in rows)
        w_subject = max(len(r[1]) for r in rows)
        w_result = max(len(r[2]) for r in rows)
        indent = " " * (w_rule + w_subject + w_result + 6)
        lines = []
        for i, (rule, subject, result, message) in enumerate(rows):
            wrapped = textwrap.wrap(message, width) or [""]
            lines.append(f"{rule:<{w_rule}}  {subject:<{w_subject}}  {result:<{w_result}}  {wrapped[0]}".rstrip())
            lines.extend(indent + more for more in wrapped[1:])
            if i == 0:
                lines.append("-" * (len(indent) + width))
        verdict = "every required rule passed" if self.ok else f"{len(self.failed_required)} required rule(s) failed"
        lines.append("")
        lines.append(
            f"{self.server}: {len(self.tools)} tool(s); {verdict}; {len(self.failed_advice)} advice finding(s). "
            "FAIL = required rule failed, warn = advice not followed, skip = not checked."
        )
        return "\n".join(lines)


@dataclass(frozen=True)
class Sample:
    """One sample call and what should come back: "error", "empty" (a valid no-match) or "ok"."""

    tool: str
    arguments: dict[str, Any]
    expect: str

    @classmethod
    def coerce(cls, value: Any, where: str = "sample") -> Sample:
        if isinstance(value, Sample):
            sample = value
        elif isinstance(value, Mapping):
            expect = value.get("expect", value.get("expectation"))
            sample = cls(value.get("tool"), value.get("arguments", {}), expect)  # type: ignore[arg-type]
        elif isinstance(value, (tuple, list)) and len(value) == 3:
            sample = cls(*value)
        else:
            raise CheckInputError(
                f"{where} must be an object {{\"tool\": ..., \"arguments\": {{...}}, \"expect\": \"error|empty|ok\"}}."
            )
        if not isinstance(sample.tool, str) or not sample.tool:
            raise CheckInputError(f"{where} needs \"tool\": the name of a tool to call.")
        if not isinstance(sample.arguments, Mapping):
            raise CheckInputError(f"{where}: \"arguments\" must be a JSON object.")
        if sample.expect not in EXPECTATIONS:
            raise CheckInputError(f"{where}: \"expect\" must be one of {', '.join(EXPECTATIONS)}, not {sample.expect!r}.")
        return cls(sample.tool, dict(sample.arguments), sample.expect)


def load_samples(path: str | os.PathLike) -> list[Sample]:
    """Samples from a JSON file: a list of {"tool", "arguments", "expect"}, or {"samples": [...]}."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CheckInputError(f"Cannot read the sample file {path}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise CheckInputError(f"The sample file {path} is not UTF-8 text.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CheckInputError(
            f"The sample file {path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
            'Give a list like [{"tool": "get_order", "arguments": {"order_id": "ORD-0000"}, "expect": "error"}].'
        ) from None
    if isinstance(data, dict) and "samples" in data:
        data = data["samples"]
    if not isinstance(data, list):
        raise CheckInputError(f"The sample file {path} must hold a JSON list of sample calls.")
    return [Sample.coerce(item, f"{path} item {i + 1}") for i, item in enumerate(data)]


# --- starting a server ------------------------------------------------------------------------


def command_params(command_line: str, *, cwd: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> StdioServerParameters:
    """Parameters for a command line such as ``"python -m servers.support_desk"``."""
    try:
        parts = shlex.split(command_line)
    except ValueError as exc:
        raise CheckInputError(f"Cannot split the command {command_line!r}: {exc}.") from None
    if not parts:
        raise CheckInputError("The server command is empty; give one such as \"python -m servers.support_desk\".")
    return StdioServerParameters(command=parts[0], args=parts[1:], env=dict(env or {}), cwd=cwd)


def mcp_json_params(
    name: str,
    *,
    project: str | os.PathLike | None = None,
    home: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
) -> StdioServerParameters:
    """The stdio server ``name`` as Claude Code would resolve it for ``project``.

    Without ``home`` the user's own ``~/.claude.json`` is not read: resolution uses an empty
    temporary home (and ignores CLAUDE_CONFIG_DIR), so only the project's ``.mcp.json`` counts.
    """
    project_dir = Path(project or Path.cwd()).resolve()
    if not project_dir.is_dir():
        raise CheckInputError(f"--project {project_dir} is not a folder.")
    env = dict(os.environ if env is None else env)
    with ExitStack() as stack:
        if home is None:
            home_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="check-server-home-")))
            env.pop("CLAUDE_CONFIG_DIR", None)
        else:
            home_dir = Path(home)
            if not home_dir.is_dir():
                raise CheckInputError(f"--home {home_dir} is not a folder.")
        try:
            res = resolve(home_dir, project_dir, env)
        except ConfigError as exc:
            raise CheckInputError(str(exc)) from None
    server = res.servers.get(name)
    if server is None:
        skipped = [s["reason"] for s in res.skipped if s["name"] == name]
        if skipped:
            raise CheckInputError(f"The server {name!r} is not loaded: {skipped[0]}.")
        known = ", ".join(sorted(res.servers)) or "none"
        raise CheckInputError(f"No MCP server named {name!r} for the project {project_dir} (servers found: {known}).")
    if server["type"] in REMOTE_TYPES:
        raise CheckInputError(f"{name!r} is a {server['type']} server at {server['url']}; check-server starts stdio servers only.")
    # Claude Code sets CLAUDE_PROJECT_DIR in a server's environment (Exam guide › Environment variable expansion).
    server_env = {"CLAUDE_PROJECT_DIR": str(project_dir), **server["env"]}
    return StdioServerParameters(command=server["command"], args=server["args"], env=server_env, cwd=project_dir)


def _last_line(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def start(params: StdioServerParameters, *, stderr_path: str | os.PathLike, timeout: float | None = 30.0) -> Session:
    """Start a stdio server with its stderr written to ``stderr_path`` and open a session.

    ServerStartError, in one sentence, when the command is missing or exits before answering.
    """
    env = {k: v for k, v in os.environ.items() if k in BASE_ENV_KEYS}
    env.update(params.env or {})
    full = StdioServerParameters(command=params.command, args=list(params.args), env=env, cwd=params.cwd)
    shown = shlex.join([params.command, *params.args])
    errlog = open(stderr_path, "w", encoding="utf-8")  # noqa: SIM115 - closed below or by the session
    try:
        session = Session(stdio_client(full, errlog=errlog), timeout=timeout, client_info=CLIENT_INFO)
    except BaseException as exc:  # FileNotFoundError, or an ExceptionGroup around "Connection closed"
        errlog.close()
        if isinstance(exc, KeyboardInterrupt):
            raise
        last = _last_line(Path(stderr_path))
        said = f" Its last words on stderr: {last}" if last else ""
        if isinstance(exc, (FileNotFoundError, PermissionError)):
            raise ServerStartError(
                f"The server command {shown!r} cannot be run: {exc.strerror}. Check the program's path (or give it in full).{said}"
            ) from None
        raise ServerStartError(
            f"The server command {shown!r} did not start an MCP server on stdio ({_describe(exc)}); "
            f"run it by hand to see why.{said}"
        ) from None
    session._stack.callback(errlog.close)
    return session


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# --- the rules ----------------------------------------------------------------------------------


def words(name: str) -> list[str]:
    parts = re.split(r"[_\-.\s/]+|(?<=[a-z0-9])(?=[A-Z])", name)
    return [p.lower() for p in parts if p]


def singular(word: str) -> str:
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def name_nouns(name: str) -> list[str]:
    """The words of a tool name that name its data: ``search_orders`` -> ["order"]."""
    all_words = [singular(w) for w in words(name) if len(w) >= 3]
    nouns = [w for w in all_words if w not in GENERIC_VERBS]
    return nouns or all_words


def mentioned(terms: Iterable[str], text: str) -> list[str]:
    found = {singular(w) for w in re.findall(r"[^\W_]+", text.lower())}
    return [t for t in terms if t in found]


def check_whitelist(tools: Sequence[str], expected: Sequence[str] | None) -> Finding:
    if expected is None:
        return finding(
            "whitelist", SERVER, None, "No expected tool list given (--expect): the published tools were not compared with a whitelist."
        )
    extra = [t for t in tools if t not in expected]
    missing = [t for t in expected if t not in tools]
    if not extra and not missing:
        return finding("whitelist", SERVER, True, f"tools/list publishes exactly the {len(expected)} expected tool(s).")
    parts = []
    if extra:
        parts.append(f"published but not on the whitelist: {', '.join(extra)} (accidental exposure: remove them from the server or add them to the list on purpose)")
    if missing:
        parts.append(f"expected but not published: {', '.join(missing)}")
    return finding("whitelist", SERVER, False, sentence("; ".join(parts)))


def check_annotations(tool: dict[str, Any], read_only: Sequence[str] | None) -> list[Finding]:
    name = tool["name"]
    hints = tool.get("annotations") or {}
    found = []
    declared = isinstance(hints.get("readOnlyHint"), bool)
    if declared:
        found.append(finding("annotations.present", name, True, "Annotations declared, readOnlyHint included."))
    else:
        what = "no annotations at all" if not tool.get("annotations") else "annotations without readOnlyHint"
        found.append(
            finding(
                "annotations.present",
                name,
                False,
                f"The tool has {what}. Clients react differently to a tool without hints (ChatGPT, for one, treats it as one "
                "that may change data and handles it more carefully); this course requires the hints on every tool. "
                "Declare readOnlyHint (and destructiveHint, idempotentHint) truthfully.",
            )
        )
    says_read_only = hints.get("readOnlyHint") is True
    if read_only is not None:
        should = name in read_only
        basis = "on the read-only list given" if should else None
    else:
        should = name.startswith(READ_ONLY_PREFIXES)
        basis = f"named {name.split('_')[0]}_..." if should else None
    if should:
        if says_read_only:
            found.append(finding("annotations.read_only", name, True, f"Read-only ({basis}), and readOnlyHint is true."))
        else:
            found.append(
                finding(
                    "annotations.read_only",
                    name,
                    False,
                    f"Read-only ({basis}), but readOnlyHint is {json.dumps(hints.get('readOnlyHint'))}: declare readOnlyHint: true "
                    "(and destructiveHint: false) so clients need not treat it as a tool that changes data.",
                )
            )
    elif read_only is not None and says_read_only:
        found.append(
            finding(
                "annotations.read_only",
                name,
                False,
                "Declares readOnlyHint: true but is not on the read-only list given. A hint is a promise, not a protection: "
                "if the tool changes anything, the hint misleads the client; otherwise add it to the list.",
            )
        )
    if not says_read_only and declared:
        if isinstance(hints.get("idempotentHint"), bool):
            found.append(
                finding(
                    "annotations.retry_safety",
                    name,
                    True,
                    f"Changes data and says idempotentHint: {json.dumps(hints['idempotentHint'])}, so Claude Code knows whether "
                    "repeating a call cut off by a closed connection is safe.",
                )
            )
        else:
            found.append(
                finding(
                    "annotations.retry_safety",
                    name,
                    False,
                    "Changes data but does not say idempotentHint: Claude Code retries a call interrupted by a closed connection "
                    "only when idempotentHint or readOnlyHint is true. Declare it, true only if repeating the call is safe.",
                )
            )
    return found


def check_description(tool: dict[str, Any]) -> list[Finding]:
    name = tool["name"]
    text = tool.get("description") or ""
    size = len(text)
    found = [
        finding(
            "description.upfront_limit",
            name,
            size <= UPFRONT_DESCRIPTION_LIMIT,
            f"{size} characters, within the {UPFRONT_DESCRIPTION_LIMIT:,} a tool loaded up front keeps (and the part tool search matches)."
            if size <= UPFRONT_DESCRIPTION_LIMIT
            else f"{size} characters: Claude Code cuts a description loaded up front at {UPFRONT_DESCRIPTION_LIMIT:,} characters, "
            "and tool search matches only that much. Shorten it and put the critical details first.",
        ),
        finding(
            "description.deferred_limit",
            name,
            size <= DEFERRED_DESCRIPTION_LIMIT,
            f"{size} characters, within the {DEFERRED_DESCRIPTION_LIMIT:,} a tool loaded through tool search keeps."
            if size <= DEFERRED_DESCRIPTION_LIMIT
            else f"{size} characters: even loaded through tool search the description is cut at {DEFERRED_DESCRIPTION_LIMIT:,} characters.",
        ),
    ]
    nouns = name_nouns(name)
    head = text[:KEYWORD_WINDOW]
    early = mentioned(nouns, head)
    if early:
        found.append(finding("description.keywords_first", name, True, f"The first {KEYWORD_WINDOW} characters name {', '.join(early)!s}."))
    else:
        found.append(
            finding(
                "description.keywords_first",
                name,
                False,
                f"None of the name's words ({', '.join(nouns) or 'none'}) appears in the first {KEYWORD_WINDOW} characters; "
                "tool search matches the start of a description, so open with the tool's data and action. "
                "(Heuristic: plain word matching.)",
            )
        )
    found.append(what_when_how(tool, nouns))
    return found


def what_when_how(tool: dict[str, Any], nouns: Sequence[str]) -> Finding:
    """The *Common mistakes › 5.2* heuristic; see the module docstring for what it looks for."""
    name = tool["name"]
    text = tool.get("description") or ""
    lowered = text.lower()
    data = mentioned(nouns, text)
    when, result = first_match(WHEN_CLAUSES, lowered), first_match(RESULT_HINTS, lowered)
    undescribed = undescribed_parameters(tool)
    checks = [
        ("what data", bool(data), f"mentions {', '.join(data)}" if data else f"no noun of the name ({', '.join(nouns)})"),
        ("when to call", when is not None, f'"{when}"' if when else 'no when-clause ("call it when...", "use it when...", "when the user...")'),
        ("what to do with the result", result is not None, f'"{result}"' if result else 'no word on the result ("returns...", "an empty list means...", "next page")'),
        ("how to phrase the input", not undescribed, "every parameter described" if not undescribed else f"no description for {', '.join(undescribed)}"),
    ]
    summary = "; ".join(f"{label} {'✓' if ok else '✗'} ({why})" for label, ok, why in checks)
    passed = all(ok for _, ok, _ in checks)
    tail = (
        " Heuristic word matching, not a judge: read the description as the model would."
        if passed
        else " A description that says what data, when to call, how to ask and what to do with the result keeps the model "
        "from answering from memory or falling back to built-ins like Grep. Heuristic word matching, not a judge."
    )
    return finding("description.what_when_how", name, passed, summary + "." + tail)


def full_name_finding(rule: str, tool: str, full: str) -> Finding:
    if len(full) <= FULL_NAME_LIMIT:
        return finding(rule, tool, True, f"{full} is {len(full)} characters (limit {FULL_NAME_LIMIT}).")
    return finding(
        rule,
        tool,
        False,
        f"{full} is {len(full)} characters: Claude Code leaves a tool whose full name exceeds {FULL_NAME_LIMIT} out of the "
        "tools it sends to Claude. Shorten the tool or server name.",
    )


def check_names(tool: str, server_name: str, plugin: str | None) -> list[Finding]:
    clean = lambda s: re.sub(r"[^A-Za-z0-9_-]", "_", s)
    found = [full_name_finding("name.length", tool, f"mcp__{clean(server_name)}__{clean(tool)}")]
    if plugin:
        found.append(full_name_finding("name.plugin_length", tool, plugin_tool_name(plugin, server_name, tool)))
    return found


def check_schema(tool: dict[str, Any]) -> list[Finding]:
    name = tool["name"]
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return [finding("schema.valid", name, False, "inputSchema is missing or not a JSON object.")]
    found = []
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    bad = [p for p in properties if not PROPERTY_NAME.fullmatch(p)]
    if bad:
        found.append(
            finding(
                "schema.property_names",
                name,
                False,
                f"Top-level propert{'ies' if len(bad) > 1 else 'y'} {', '.join(repr(p) for p in bad)} break{'' if len(bad) > 1 else 's'} the rule "
                "(1-64 characters of A-Z a-z 0-9 _ . -); Claude Code drops the whole tool.",
            )
        )
    else:
        found.append(finding("schema.property_names", name, True, f"{len(properties)} top-level property name(s), all 1-64 characters of A-Z a-z 0-9 _ . -."))
    dialect = schema.get("$schema")
    if dialect is not None and dialect not in DRAFT_2020_12:
        found.append(finding("schema.valid", name, None, f"The schema declares {dialect}; Claude Code checks only schemas without $schema or declaring draft 2020-12."))
    else:
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(root)"
            found.append(
                finding(
                    "schema.valid",
                    name,
                    False,
                    f"Not a valid JSON Schema draft 2020-12 at {where}: {exc.message}. Claude Code drops the tool.",
                )
            )
        else:
            found.append(finding("schema.valid", name, True, "Valid against the JSON Schema draft 2020-12 metaschema."))
    roots = [k for k in ROOT_COMBINATORS if k in schema]
    if roots:
        found.append(
            finding(
                "schema.root_combinator",
                name,
                False,
                f"Root-level {', '.join(roots)}: the Claude API refuses it, so Claude Code merges the branches into one object "
                "and describes the groups in the description (anyOf/oneOf required lists are no longer enforced). Prefer one "
                "object schema, and keep validating the combination on the server.",
            )
        )
    else:
        found.append(finding("schema.root_combinator", name, True, "No anyOf/oneOf/allOf at the root; Claude Code sends the schema unchanged."))
    return found


def result_limit(tool: dict[str, Any] | None) -> tuple[int, str]:
    """The text size above which Claude Code saves a successful result to a file, and why."""
    meta = (tool or {}).get("_meta") or {}
    value = meta.get(MAX_RESULT_SIZE_KEY)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        limit = min(value, RESULT_CHARS_CEILING)
        return limit, f'_meta["{MAX_RESULT_SIZE_KEY}"] = {value}' + (f", capped at {RESULT_CHARS_CEILING:,}" if value > RESULT_CHARS_CEILING else "")
    return RESULT_CHARS_LIMIT, "the default"


def check_meta(tool: dict[str, Any]) -> Finding | None:
    meta = tool.get("_meta") or {}
    keys = [k for k in meta if k.startswith("anthropic/")]
    if not keys:
        return None
    problems = []
    if MAX_RESULT_SIZE_KEY in meta:
        value = meta[MAX_RESULT_SIZE_KEY]
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            problems.append(f"{MAX_RESULT_SIZE_KEY} should be a positive whole number of characters, not {json.dumps(value)}")
        elif value > RESULT_CHARS_CEILING:
            problems.append(f"{MAX_RESULT_SIZE_KEY} = {value} is above the {RESULT_CHARS_CEILING:,}-character ceiling Claude Code applies")
    if REQUIRES_USER_INTERACTION_KEY in meta and meta[REQUIRES_USER_INTERACTION_KEY] is not True:
        problems.append(f"{REQUIRES_USER_INTERACTION_KEY} is ignored unless it is JSON true (got {json.dumps(meta[REQUIRES_USER_INTERACTION_KEY])})")
    if ALWAYS_LOAD_KEY in meta and not isinstance(meta[ALWAYS_LOAD_KEY], bool):
        problems.append(f"{ALWAYS_LOAD_KEY} should be true or false, not {json.dumps(meta[ALWAYS_LOAD_KEY])}")
    if problems:
        return finding("meta.values", tool["name"], False, sentence("; ".join(problems)))
    return finding("meta.values", tool["name"], True, f"{', '.join(keys)} hold values Claude Code reads.")


def check_instructions(instructions: str | None) -> Finding:
    size = len(instructions or "")
    if size <= UPFRONT_DESCRIPTION_LIMIT:
        return finding("instructions.length", SERVER, True, f"Server instructions are {size} characters (limit {UPFRONT_DESCRIPTION_LIMIT:,}).")
    return finding(
        "instructions.length",
        SERVER,
        False,
        f"Server instructions are {size} characters; Claude Code keeps only the first {UPFRONT_DESCRIPTION_LIMIT:,}. Put the critical part first and shorten.",
    )


def _shown(sample: Sample) -> str:
    args = json.dumps(sample.arguments, ensure_ascii=False)
    return f"{sample.tool}({args if len(args) <= 80 else args[:77] + '...'})"


def check_sample(session: Session, sample: Sample, tools: Mapping[str, dict[str, Any]]) -> list[Finding]:
    call = _shown(sample)
    if sample.tool not in tools:
        return [finding("result.expectation", sample.tool, False, f"{call}: the server does not list this tool, so the sample cannot run.")]
    try:
        result = session.call(sample.tool, sample.arguments)
    except MCPError as exc:
        return [
            finding(
                "result.expectation",
                sample.tool,
                False,
                f"{call} (expected {sample.expect}) raised a JSON-RPC protocol error ({exc.error.code}: {exc.error.message}). "
                "The model never sees it and cannot tell \"no data\" from \"server broken\": catch the exception in the tool "
                "and return an isError result with errorCategory and isRetryable.",
            )
        ]
    except TimeoutError:
        return [finding("result.expectation", sample.tool, False, f"{call} did not answer within the session's timeout.")]
    except Exception as exc:  # noqa: BLE001 - e.g. a result the client cannot parse: a finding, not a traceback
        return [finding("result.expectation", sample.tool, False, f"{call}: the client could not read the answer ({_describe(exc)}).")]
    found = [expectation(call, sample, result), size_finding(call, sample.tool, result, tools[sample.tool])]
    fragments = fragments_in(result.get("structuredContent"))
    if fragments and not is_error(result):
        problems = fragment_problems(fragments)
        found.append(
            finding(
                "search.fragments",
                sample.tool,
                not problems,
                f"{call}: {len(fragments)} fragment(s): " + ("; ".join(problems) + ". Cut fragments at word boundaries and keep at most "
                f"{PER_SOURCE} per source (or rerank for diversity, MMR)." if problems else f"short, on word boundaries, at most {PER_SOURCE} per source."),
            )
        )
    return found


def expectation(call: str, sample: Sample, result: dict[str, Any]) -> Finding:
    structured = result.get("structuredContent") if isinstance(result.get("structuredContent"), dict) else {}
    category = structured.get("errorCategory")
    if sample.expect == "error":
        if not is_error(result):
            return finding("result.expectation", sample.tool, False, f"{call} was expected to fail but came back with isError false.")
        if category not in {c.value for c in Category}:
            shown = "no errorCategory" if category is None else f"errorCategory {category!r}, not one of the taxonomy's"
            return finding(
                "result.expectation",
                sample.tool,
                False,
                f"{call} returned isError true with {shown}: an uncategorised error leaves the agent guessing whether to retry. "
                f"Add errorCategory ({', '.join(c.value for c in Category)}) and isRetryable to structuredContent.",
            )
        if not isinstance(structured.get("isRetryable"), bool):
            return finding(
                "result.expectation",
                sample.tool,
                False,
                f"{call} returned a {category} error without a boolean isRetryable; always send both errorCategory and isRetryable.",
            )
        return finding(
            "result.expectation",
            sample.tool,
            True,
            f"{call} returned an isError result, errorCategory {category}, isRetryable {json.dumps(structured['isRetryable'])}.",
        )
    if is_error(result):
        said = f" ({category})" if category else ""
        what = "a valid empty answer" if sample.expect == "empty" else "a success"
        return finding(
            "result.expectation",
            sample.tool,
            False,
            f"{call} returned an error{said} where {what} was expected"
            + ("; a query that matches nothing is not a failure: return isError false with an empty list." if sample.expect == "empty" else "."),
        )
    if sample.expect == "empty" and not is_empty_success(result):
        return finding(
            "result.expectation",
            sample.tool,
            False,
            f"{call} was expected to match nothing, but the result is not a valid empty answer (no content, or structuredContent whose lists are all empty).",
        )
    what = "a valid empty result (isError false)" if sample.expect == "empty" else "isError false"
    return finding("result.expectation", sample.tool, True, f"{call} returned {what}, as expected.")


def size_finding(call: str, tool_name: str, result: dict[str, Any], tool: dict[str, Any]) -> Finding:
    text = result_text(result)
    size = len(text)
    if is_error(result):
        if size <= ERROR_TRUNCATION_CHARS:
            return finding("result.size", tool_name, True, f"{call}: error text of {size} characters, under the ~{ERROR_TRUNCATION_CHARS:,} where Claude Code truncates.")
        return finding(
            "result.size",
            tool_name,
            False,
            f"{call}: error text of {size} characters; above about {ERROR_TRUNCATION_CHARS:,} Claude Code keeps only the first and last "
            f"{ERROR_KEPT_CHARS:,}. Keep error messages short and actionable.",
        )
    if any(isinstance(b, dict) and b.get("type") == "image" for b in result.get("content") or []):
        return finding("result.size", tool_name, None, f"{call}: the result holds an image; images count against MAX_MCP_OUTPUT_TOKENS, not the character limit.")
    limit, why = result_limit(tool)
    if size <= limit:
        return finding("result.size", tool_name, True, f"{call}: {size:,} characters of text, within {limit:,} ({why}).")
    return finding(
        "result.size",
        tool_name,
        False,
        f"{call}: {size:,} characters of text, over {limit:,} ({why}): Claude Code saves the result to a file and puts "
        f"only its path in the conversation, so Claude must read the file back before it can use the content. Return less (snippets, a page with a next-page hint), or raise _meta[\"{MAX_RESULT_SIZE_KEY}\"] "
        "if the size is inherent.",
    )


def check_initialize_log(stderr_path: str | os.PathLike | None, protocol_version: str | None, client_name: str) -> Finding:
    if stderr_path is None:
        return finding(
            "initialize.logged",
            SERVER,
            None,
            "No capture of the server's stderr: cannot tell whether it logs the client's protocol version and name.",
        )
    try:
        log = Path(stderr_path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return finding("initialize.logged", SERVER, None, f"Cannot read the stderr capture {stderr_path}: {exc.strerror}.")
    has_version = bool(protocol_version) and protocol_version in log
    has_name = re.search(rf"(?<![\w-]){re.escape(client_name)}(?![\w-])", log) is not None
    if has_version and has_name:
        return finding("initialize.logged", SERVER, True, f"stderr shows the client's protocol version {protocol_version} and name {client_name}.")
    missing = [what for what, ok in ((f"protocol version {protocol_version}", has_version), (f"client name {client_name}", has_name)) if not ok]
    return finding(
        "initialize.logged",
        SERVER,
        False,
        f"stderr does not show the client's {' or '.join(missing)}. Log both when a client connects (initialize, or the "
        "first request's _meta on 2026-era connections), so you know who connects and how.",
    )


# --- the check ------------------------------------------------------------------------------------


def list_tools(session: Session) -> list[dict[str, Any]]:
    """Every page of ``tools/list``, each tool in wire format with its own ``_meta``."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):  # a paginator that never ends cannot hang the check
        page = session._run(lambda cursor=cursor: session.client.list_tools(cursor=cursor))
        # envelope=True: for a tool, "_meta" is the tool's own metadata (maxResultSizeChars, alwaysLoad).
        tools.extend(wire(tool, envelope=True) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def check_server(
    session_or_params: Any,
    *,
    server_name: str | None,
    expected_tools: Sequence[str] | None = None,
    read_only: Sequence[str] | None = None,
    samples: Iterable[Sample | Mapping[str, Any] | tuple] = (),
    plugin: str | None = None,
    stderr_path: str | os.PathLike | None = None,
    timeout: float | None = 30.0,
) -> Report:
    """Check one server and return the Report.

    ``session_or_params``: an open ``servers.client.Session`` (used, not closed); a
    ``StdioServerParameters`` (started here, stderr captured to ``stderr_path`` or a temporary
    file); a module name such as ``"support_desk"`` (started the same way); or an in-process
    server object. ``server_name`` is the name Claude Code knows the server by (``mcp__<name>__``);
    None uses the name the server reports. ``read_only`` lists the read-only tools; without it,
    tools named get_/list_/search_ are taken as read-only.
    """
    samples = [Sample.coerce(s, f"sample {i + 1}") for i, s in enumerate(samples)]
    with ExitStack() as keep:  # outlives the session: the stderr capture is read after the server exits
        with ExitStack() as stack:
            if isinstance(session_or_params, Session):
                session = session_or_params
                client_name = (session.client.client_info or DEFAULT_CLIENT_INFO).name
            else:
                params = stdio_params(session_or_params) if isinstance(session_or_params, str) else session_or_params
                if isinstance(params, StdioServerParameters):
                    if stderr_path is None:
                        stderr_path = Path(keep.enter_context(tempfile.TemporaryDirectory(prefix="check-server-"))) / "stderr.log"
                    session = start(params, stderr_path=stderr_path, timeout=timeout)
                else:
                    session = Session(params, timeout=timeout, client_info=CLIENT_INFO)
                client_name = CLIENT_NAME
                stack.callback(session.close)
            report = run_rules(session, server_name, expected_tools, read_only, samples, plugin)
            protocol_version = report.protocol_version = session.client.protocol_version
        # A server started here has exited by now, so its stderr is complete.
        report.findings.append(check_initialize_log(stderr_path, protocol_version, client_name))
    return report


def run_rules(
    session: Session,
    server_name: str | None,
    expected_tools: Sequence[str] | None,
    read_only: Sequence[str] | None,
    samples: Sequence[Sample],
    plugin: str | None,
) -> Report:
    info = session.client.server_info
    name = server_name or (info.name if info else "server")
    report = Report(name)
    try:
        tools = list_tools(session)
    except (MCPError, TimeoutError) as exc:
        report.findings.append(finding("tools.list", SERVER, False, f"tools/list failed ({_describe(exc)}); nothing else could be checked."))
        return report
    report.tools = [t["name"] for t in tools]
    by_name = {t["name"]: t for t in tools}
    report.findings.append(check_whitelist(report.tools, list(expected_tools) if expected_tools is not None else None))
    report.findings.append(check_instructions(session.client.instructions))
    if read_only is not None:
        for unknown in [t for t in read_only if t not in by_name]:
            report.findings.append(finding("annotations.read_only", unknown, None, "On the read-only list, but the server does not list this tool."))
    for tool in tools:
        report.findings.extend(check_annotations(tool, list(read_only) if read_only is not None else None))
        report.findings.extend(check_description(tool))
        report.findings.extend(check_names(tool["name"], name, plugin))
        report.findings.extend(check_schema(tool))
        meta = check_meta(tool)
        if meta:
            report.findings.append(meta)
    for sample in samples:
        report.findings.extend(check_sample(session, sample, by_name))
    return report


def parse_names(value: str | None) -> list[str] | None:
    """``"a, b,c"`` -> ["a", "b", "c"]; None stays None."""
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


# --- over HTTP: what a client sees at the server's URL ------------------------------------------------------

# What the probes send: an MCP client's User-Agent (not a browser's) and a JSON-RPC initialize.
PROBE_USER_AGENT = f"{CLIENT_NAME}/1.0 (MCP client)"
PROBE_CLIENT = {"name": CLIENT_NAME, "version": "1.0"}
NEWER_CLIENT_CAPABILITIES = {"elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": True}, "x-future-capability": {}}
# Documentation addresses, never real clients: one client forwarded by a proxy, a second one, a forged one.
CLIENT_A, CLIENT_B, FORGED = "203.0.113.10", "203.0.113.20", "198.51.100.23"
BODY_LIMIT = 1_000_000

PROXY_HTML = (MISTAKES, "1.4 An HTML page instead of JSON: the proxy's bot protection")
FRAMEWORK = (MISTAKES, "1.5 A 403 or a redirect to a login page: the framework's default security")
RULES.update(
    {
        "http.initialize": (cite(PROXY_HTML, FRAMEWORK, CHECKLIST), REQUIRED),
        "http.fresh_reply": (cite(PROXY_HTML, CHECKLIST), REQUIRED),
        "http.no_cookie": (cite(FRAMEWORK, CHECKLIST), REQUIRED),
        "http.newer_client": (cite((MISTAKES, '1.1 "Unrecognized field": client and server on different protocol versions'), CHECKLIST), REQUIRED),
        "http.rate_limit": (cite((MISTAKES, "3.1 The rate limit counts the proxy's IP instead of the client's"), CHECKLIST), REQUIRED),
        "http.client_identity": (
            cite(
                (MISTAKES, "3.1 The rate limit counts the proxy's IP instead of the client's"),
                (MISTAKES, "3.2 A forged `CF-Connecting-IP` sent straight to the server"),
            ),
            REQUIRED,
        ),
        "search.fragments": (
            cite(
                (MISTAKES, "4.3 Five fragments of one article instead of five articles"),
                (MISTAKES, "4.4 Fragments start with a cut word"),
                CHECKLIST,
            ),
            REQUIRED,
        ),
    }
)


@dataclass(frozen=True)
class HttpReply:
    """One HTTP answer as the client received it (redirects are not followed)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def content_type(self) -> str:
        return (self.header("Content-Type") or "").split(";")[0].strip().lower()

    def message(self) -> dict[str, Any] | None:
        """The JSON-RPC message in the body: plain JSON, or the first ``data:`` of an event stream."""
        text = self.body.decode("utf-8", errors="replace")
        if self.content_type == "text/event-stream":
            candidates = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        else:
            candidates = [text]
        for candidate in candidates:
            try:
                data = json.loads(candidate)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict) and data.get("jsonrpc") == "2.0":
                return data
        return None

    def shown(self) -> str:
        kind = self.content_type or "no Content-Type"
        return f"HTTP {self.status} ({kind})"


def initialize_request(request_id: str, *, newer: bool = False) -> dict[str, Any]:
    """A JSON-RPC initialize; ``newer`` plays a client newer than the server (newest version, more capabilities)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": types.version.LATEST_HANDSHAKE_VERSION if newer else "2025-06-18",
            "capabilities": NEWER_CLIENT_CAPABILITIES if newer else {},
            "clientInfo": PROBE_CLIENT,
        },
    }


def http_post(url: str, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None, *, timeout: float | None = 30.0) -> HttpReply:
    """POST one JSON-RPC message the way an MCP client does; CheckInputError when nothing answers."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CheckInputError(f"{url!r} is not an http(s) URL; give the server's MCP endpoint, e.g. http://127.0.0.1:8000/mcp.")
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, parts.port, timeout=timeout)
    sent = {
        "User-Agent": PROBE_USER_AGENT,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **(headers or {}),
    }
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", path, body=json.dumps(payload).encode(), headers=sent)
        response = connection.getresponse()
        if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
            body = _first_event(response)
        else:
            body = response.read(BODY_LIMIT)
        return HttpReply(response.status, tuple(response.getheaders()), body)
    except (OSError, http.client.HTTPException) as exc:
        raise CheckInputError(f"Nothing answers MCP at {url} ({_describe(exc)}). Is the server running, and is this its /mcp address?") from None
    finally:
        connection.close()


def _first_event(response: Any) -> bytes:
    """An event stream may stay open: read up to the end of the first event that carries data."""
    lines: list[bytes] = []
    size = 0
    while size < BODY_LIMIT:
        line = response.readline()
        if not line:
            break
        lines.append(line)
        size += len(line)
        if not line.strip() and any(prior.startswith(b"data:") for prior in lines):
            break
    return b"".join(lines)


def _identity(address: str) -> dict[str, str]:
    """The headers a proxy such as Cloudflare adds for the client at ``address``."""
    return {"CF-Connecting-IP": address, "X-Forwarded-For": address}


def answered(reply: HttpReply, request_id: str) -> bool:
    message = reply.message()
    return 200 <= reply.status < 300 and message is not None and message.get("id") == request_id and "result" in message


def probe_initialize(url: str, headers: Mapping[str, str], timeout: float | None) -> tuple[list[Finding], bool]:
    """initialize as an MCP client sends it (twice, and once as a newer client); the findings, and whether MCP works."""
    first = http_post(url, initialize_request("check-server-1"), headers, timeout=timeout)
    found: list[Finding] = []
    cookies = [c.split("=", 1)[0] for c in first.all("Set-Cookie")]
    location = first.header("Location")
    if first.status in (401, 403) and first.header("WWW-Authenticate"):
        found.append(
            finding(
                "http.initialize",
                SERVER,
                None,
                f"initialize got HTTP {first.status} with WWW-Authenticate: {first.header('WWW-Authenticate')}. The server asks for "
                'authorization: give --header "Authorization: Bearer <token>" to check the rest.',
            )
        )
        return found, False
    if answered(first, "check-server-1"):
        found.append(finding("http.initialize", SERVER, True, f"initialize answered {first.shown()} with a JSON-RPC result."))
    elif first.content_type == "text/html":
        found.append(
            finding(
                "http.initialize",
                SERVER,
                False,
                f"initialize got {first.shown()}: an HTML page, not JSON. A proxy's bot check (or a login page) answers MCP clients, "
                "which are servers, not browsers. Exempt the /mcp path from bot checks and caching.",
            )
        )
    elif 300 <= first.status < 400:
        found.append(
            finding(
                "http.initialize",
                SERVER,
                False,
                f"initialize got {first.shown()}, a redirect to {location or '(no Location)'}: a web framework's default security "
                "(CSRF on POST, login redirects) stands in front of /mcp. Give /mcp its own rules: open, no CSRF, no sessions.",
            )
        )
    else:
        message = first.message()
        said = f": JSON-RPC error {message['error']}" if message and "error" in message else ""
        found.append(finding("http.initialize", SERVER, False, f"initialize got {first.shown()}{said}, not a JSON-RPC result for its request."))
    works = found[-1].passed is True

    second = http_post(url, initialize_request("check-server-2"), headers, timeout=timeout)
    cookies += [c.split("=", 1)[0] for c in second.all("Set-Cookie")]
    if works:
        echoed = (second.message() or {}).get("id")
        if answered(second, "check-server-2"):
            found.append(finding("http.fresh_reply", SERVER, True, "A second initialize got its own answer (its own request id), not a stored one."))
        else:
            why = "the first request's answer again (request id check-server-1)" if echoed == "check-server-1" else second.shown()
            found.append(
                finding(
                    "http.fresh_reply",
                    SERVER,
                    False,
                    f"A second initialize got {why}: something in front of the server serves a cached reply. Exempt /mcp from caching.",
                )
            )
            works = False
    if cookies:
        found.append(
            finding(
                "http.no_cookie",
                SERVER,
                False,
                f"initialize answers set cookies ({', '.join(sorted(set(cookies)))}): a framework creates a session per request. "
                "MCP clients keep no cookies; give /mcp a chain without sessions or CSRF (and check the admin area stays closed).",
            )
        )
    elif 300 <= first.status < 400 and "login" in (location or "").lower():
        found.append(finding("http.no_cookie", SERVER, False, f"initialize was redirected to a login page ({location}): the framework's default security covers /mcp."))
    else:
        found.append(finding("http.no_cookie", SERVER, True, "No Set-Cookie on the initialize answers, and no redirect to a login page."))

    if works:
        newer = http_post(url, initialize_request("check-server-3", newer=True), headers, timeout=timeout)
        if answered(newer, "check-server-3"):
            version = ((newer.message() or {}).get("result") or {}).get("protocolVersion")
            found.append(
                finding(
                    "http.newer_client",
                    SERVER,
                    True,
                    f"A client announcing protocol {types.version.LATEST_HANDSHAKE_VERSION} and capabilities the server may not know "
                    f"(elicitation.form, x-future-capability) was accepted (protocol {version} agreed).",
                )
            )
        else:
            message = newer.message() or {}
            said = f"JSON-RPC error {message['error'].get('message')!r}" if isinstance(message.get("error"), dict) else newer.shown()
            found.append(
                finding(
                    "http.newer_client",
                    SERVER,
                    False,
                    f"A client announcing protocol {types.version.LATEST_HANDSHAKE_VERSION} and capabilities the server does not know "
                    f"was refused ({said}), while a plain initialize works: the server parses strictly, so newer clients cannot "
                    "connect. Update the SDK (or ignore unknown fields).",
                )
            )
    return found, works


def probe_rate_limit(url: str, headers: Mapping[str, str], burst: int, *, behind_proxy: bool, timeout: float | None) -> list[Finding]:
    """Up to ``burst`` requests as one client; then whether another client (or a forged header) gets through."""
    me = _identity(CLIENT_A) if behind_proxy else {}
    limited: HttpReply | None = None
    for i in range(burst):
        reply = http_post(url, initialize_request(f"burst-{i + 1}"), {**headers, **me}, timeout=timeout)
        if reply.status == 429:
            limited = reply
            sent = i + 1
            break
    if limited is None:
        return [
            finding(
                "http.rate_limit",
                SERVER,
                False,
                f"{burst} requests in a row were all served: no rate limit within {burst} requests. Limit each client "
                "(the article: 30 a minute) and answer 429 with Retry-After.",
            )
        ]
    retry_after = limited.header("Retry-After")
    valid = retry_after is not None and (retry_after.strip().isdigit() or _http_date(retry_after))
    found = [
        finding("http.rate_limit", SERVER, True, f"Request {sent} of the burst got 429 with Retry-After: {retry_after}.")
        if valid
        else finding(
            "http.rate_limit",
            SERVER,
            False,
            f"Request {sent} of the burst got 429 without a valid Retry-After ({retry_after!r}): say when to come back, in seconds.",
        )
    ]
    if behind_proxy:
        other = http_post(url, initialize_request("burst-other-client"), {**headers, **_identity(CLIENT_B)}, timeout=timeout)
        if other.status == 429:
            found.append(
                finding(
                    "http.client_identity",
                    SERVER,
                    False,
                    f"Once client {CLIENT_A} was limited, client {CLIENT_B} (other CF-Connecting-IP and X-Forwarded-For through the same proxy) got 429 "
                    "too: the limit counts the proxy's address, so one busy client blocks everyone. Key it on the client's address "
                    "from the headers your proxy sets (CF-Connecting-IP, then X-Forwarded-For).",
                )
            )
        else:
            found.append(finding("http.client_identity", SERVER, True, f"Client {CLIENT_B} was served ({other.shown()}) while {CLIENT_A} was limited: each client has its own budget."))
    else:
        forged = http_post(url, initialize_request("burst-forged"), {**headers, **_identity(FORGED)}, timeout=timeout)
        if forged.status == 429:
            found.append(finding("http.client_identity", SERVER, True, f"A forged CF-Connecting-IP and X-Forwarded-For ({FORGED}) sent straight to the server were not believed: still limited."))
        else:
            found.append(
                finding(
                    "http.client_identity",
                    SERVER,
                    False,
                    f"Once limited, the same client sent a forged CF-Connecting-IP and X-Forwarded-For ({FORGED}) straight to the server "
                    f"and got past the limit ({forged.shown()}): anyone can buy a fresh budget per request. Believe those headers only from "
                    "your proxy's addresses (or accept traffic only through the proxy).",
                )
            )
    return found


def _http_date(value: str) -> bool:
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(value) is not None
    except (TypeError, ValueError):
        return False


def parse_headers(values: Sequence[str]) -> dict[str, str]:
    """``["Authorization: Bearer x"]`` -> {"Authorization": "Bearer x"}."""
    headers = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise CheckInputError(f'--header takes "Name: value", got {value!r}.')
        headers[name.strip()] = content.strip()
    return headers


def http_session(url: str, headers: Mapping[str, str], timeout: float | None) -> Session:
    """An MCP session over Streamable HTTP, sending ``headers`` (e.g. Authorization) with every request."""
    from contextlib import asynccontextmanager

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    @asynccontextmanager
    async def transport():  # the SDK's Transport: an async context manager yielding the two streams
        limits = httpx2.Timeout(timeout or 30.0, read=max(timeout or 30.0, 60.0))
        async with (
            httpx2.AsyncClient(headers={"User-Agent": PROBE_USER_AGENT, **headers}, timeout=limits) as client,
            streamable_http_client(url, http_client=client) as streams,
        ):
            yield streams

    try:
        return Session(transport(), timeout=timeout, client_info=CLIENT_INFO)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise CheckInputError(f"Could not open an MCP session at {url} ({_describe(exc)}).") from None


def check_url(
    url: str,
    *,
    server_name: str | None,
    headers: Mapping[str, str] | None = None,
    expected_tools: Sequence[str] | None = None,
    read_only: Sequence[str] | None = None,
    samples: Iterable[Sample | Mapping[str, Any] | tuple] = (),
    plugin: str | None = None,
    burst: int | None = None,
    behind_proxy: bool = False,
    timeout: float | None = 30.0,
) -> Report:
    """Check a Streamable HTTP server at ``url``: what a client sees on the wire, then every rule through a real session.

    ``burst``: also send up to that many requests in a row and expect a 429 with Retry-After
    (last, since it leaves this client limited). ``behind_proxy``: the check's requests reach
    the server through a proxy it trusts, so clients are told apart by the headers it forwards;
    otherwise the check is a client talking straight to the server, and a forged header must
    not help it.
    """
    headers = dict(headers or {})
    samples = [Sample.coerce(s, f"sample {i + 1}") for i, s in enumerate(samples)]
    probes, works = probe_initialize(url, headers, timeout)
    report = Report(server_name or url)
    if not works:
        report.findings.append(
            finding("tools.list", SERVER, False, "initialize did not come back as JSON-RPC, so no MCP session could be opened; nothing else was checked.")
        )
    else:
        try:
            with http_session(url, headers, timeout) as session:
                report = run_rules(session, server_name, expected_tools, read_only, samples, plugin)
                report.protocol_version = session.client.protocol_version
        except CheckInputError as exc:  # e.g. a rate limit already spent by the probes
            report.findings.append(finding("tools.list", SERVER, False, f"{exc} Nothing else was checked."))
    report.findings[:0] = probes
    report.url = url
    report.findings.append(
        finding(
            "initialize.logged",
            SERVER,
            None,
            f"check-server cannot read a remote server's log: look there for this check's client name {CLIENT_NAME} and its protocol version.",
        )
    )
    if burst:
        report.findings.extend(probe_rate_limit(url, headers, burst, behind_proxy=behind_proxy, timeout=timeout))
    return report


# --- the article's pre-launch checklist ---------------------------------------------------------------------------

PASS, FAIL, ASK = "pass", "FAIL", "answer yourself"


@dataclass(frozen=True)
class Item:
    number: int
    text: str
    section: str  # the article's section the item comes from
    rules: tuple[str, ...]  # the rules that check it; () when only the author can answer
    question: str  # what to do or look at when check-server could not check the item
    residual: str = ""  # what check-server cannot see even when its checks pass


CHECKLIST_ITEMS: tuple[Item, ...] = (
    Item(1, "tools/list returns only the tools you publish on purpose.", "2.1 The framework published private tools on its own",
         ("whitelist",), "Give --expect with the tools you mean to publish, and run the check after every deploy."),
    Item(2, "initialize sent to the production address from outside returns JSON, not the proxy's HTML page.",
         "1.4 An HTML page instead of JSON: the proxy's bot protection", ("http.initialize", "http.fresh_reply"),
         "Run check-server --url against the production address, from a machine outside it.",
         "Was this the production address, checked from outside it?"),
    Item(3, "Answers carry no Set-Cookie; the admin area and other closed sections stay closed.",
         "1.5 A 403 or a redirect to a login page: the framework's default security", ("http.no_cookie",),
         "Run check-server --url; then open the admin area without logging in: it must refuse.",
         "Is the admin area still closed? Open it without logging in: it must refuse (401/403 or a login page)."),
    Item(4, "The connection is tested with the newest clients (Inspector, Claude Code, web clients).",
         '1.1 "Unrecognized field": client and server on different protocol versions', ("http.newer_client",),
         "Connect with today's MCP Inspector, Claude Code and a web client; did each list the tools?",
         "check-server played a newer client; connect with today's MCP Inspector, Claude Code and a web client too."),
    Item(5, "The rate limit counts the client's real IP, not the proxy's; over it the answer is 429 with Retry-After.",
         "3.1 The rate limit counts the proxy's IP instead of the client's", ("http.rate_limit", "http.client_identity"),
         "Run check-server --url with --burst N (N above the limit); through your proxy, add --behind-proxy."),
    Item(6, "There is an overall daily cap on spending.", "3.3 No daily safety cap", (),
         "Is there a counter of all requests per day, a spend cap at the embedding provider (best, a key of its own for MCP), "
         "budget alerts, and a choice of fail-open or fail-closed for when the limiter's store is down, made by the cost of one call?"),
    Item(7, "Only published data goes out (a filter on status in the query itself).", "2.2 Drafts and deleted pages in the vector store", (),
         "Does the search query itself keep only published items whose publication date has come? Search for a draft's title: "
         "it must not come back (a --sample with \"expect\": \"empty\" checks it on every run)."),
    Item(8, "Tools that only read are marked readOnlyHint.", "2.3 Tools without a read-only mark", ("annotations.read_only",),
         "Give --read-only with your read-only tools if their names do not start with get_, list_ or search_.",
         "A hint is a promise, not a protection: does every tool marked read-only really change nothing?"),
    Item(9, "The relevance threshold is calibrated on the production embedding model.",
         "4.2 Local and production embeddings score differently: the threshold does not hold", (),
         "Which model produced the scores you chose the threshold from? Log the scores of a few queries of three kinds "
         "(on the site, a neighbouring topic, off the site) in production, and put the threshold between the last two."),
    Item(10, "Fragments are short, without cut words, at most 1-2 per source.", "4.4 Fragments start with a cut word", ("search.fragments",),
         "Give a --sample that calls the search tool with \"expect\": \"ok\"; check-server then reads its fragments."),
    Item(11, "Tools return statuses (ok / not_found / unavailable), not exceptions.", "5.1 Exceptions instead of statuses", ("result.expectation",),
         "Give --sample calls: one that matches nothing (\"expect\": \"empty\") and one that must fail (\"expect\": \"error\").",
         "What does the search tool answer when the embedding service is down? It should be an unavailable status, not an exception."),
    Item(12, "Tool descriptions answer what the data is, when to call and what to do with the result.",
         "5.2 Vague descriptions: the model does not call the tool", ("description.what_when_how",),
         "Read each description as the model would.",
         "Word matching is not a judge: ask a real client a question the tool answers, without naming the tool, and look in "
         "the server log for the call."),
    Item(13, "The logs show who connected, what query the model wrote and how long the call took.",
         '1.1 "Unrecognized field": client and server on different protocol versions', ("initialize.logged",),
         "Look in your server's log for this check's connection (client name, protocol version), its calls and their durations.",
         "Do your server's logs show each call's query (as the model wrote it) and how long it took?"),
)


@dataclass(frozen=True)
class ChecklistLine:
    item: Item
    result: str  # PASS, FAIL or ASK
    evidence: str  # what check-server saw
    question: str  # what the author answers: the whole item (ASK), or what the checks cannot see

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item.number,
            "text": self.item.text,
            "source": cite(CHECKLIST, (MISTAKES, self.item.section)),
            "result": self.result,
            "evidence": self.evidence,
            "question": self.question,
        }


def checklist(report: Report) -> list[ChecklistLine]:
    """The thirteen items of *Common mistakes › Pre-launch checklist*: pass, FAIL or answer yourself.

    An item passes when every check of it ran and passed, fails when one failed, and is the
    author's to answer when none could run (a stdio server for the HTTP items, no --expect, no
    samples) or when no check exists (a spend cap, the threshold's calibration).
    """
    lines = []
    for item in CHECKLIST_ITEMS:
        found = [f for f in report.findings if f.rule in item.rules]
        checked = [f for f in found if f.passed is not None]
        failed = [f for f in checked if f.passed is False]
        if failed:
            result = FAIL
            evidence = " ".join(f"[{f.subject}] {f.message}" for f in failed[:2]) + (f" (and {len(failed) - 2} more)" if len(failed) > 2 else "")
        elif checked:
            result, evidence = PASS, _passed(checked)
        else:
            result, evidence = ASK, " ".join(f.message for f in found) or _not_checked(item, report)
        lines.append(ChecklistLine(item, result, evidence, item.question if result == ASK else item.residual))
    return lines


def _passed(checked: Sequence[Finding]) -> str:
    """One finding as it is; several of a rule as "rule passed for a, b, c" (their messages say the same)."""
    if len(checked) == 1:
        return f"[{checked[0].subject}] {checked[0].message}"
    parts = []
    for rule in dict.fromkeys(f.rule for f in checked):
        of_rule = [f for f in checked if f.rule == rule]
        parts.append(
            f"[{of_rule[0].subject}] {of_rule[0].message}" if len(of_rule) == 1 else f"{rule} passed for {', '.join(f.subject for f in of_rule)}."
        )
    return " ".join(parts)


def _not_checked(item: Item, report: Report) -> str:
    if item.number == 4 and report.url is None and report.protocol_version:
        return f"check-server connected with the newest client of its SDK; protocol {report.protocol_version} agreed."
    if any(rule.startswith("http.") for rule in item.rules) and report.url is None:
        return "Checked only over HTTP: this server was started over stdio."
    if item.rules and any(f.rule == "tools.list" and f.passed is False for f in report.findings):
        return "No MCP session could be opened (tools/list failed), so this was not checked."
    if not item.rules:
        return "Only the server's author can answer this one."
    return "Not checked in this run."


def checklist_table(lines: Sequence[ChecklistLine], server: str, width: int = 96) -> str:
    out = [f"Pre-launch checklist for {server} ({cite(CHECKLIST)})", ""]
    for line in lines:
        out.append(f"{line.item.number:>2}. [{line.result}] {line.item.text}")
        out.extend(textwrap.wrap(line.evidence, width, initial_indent="      seen: ", subsequent_indent="            "))
        if line.question:
            out.extend(textwrap.wrap(line.question, width, initial_indent="      you:  ", subsequent_indent="            "))
    counts = {r: sum(1 for x in lines if x.result == r) for r in (PASS, FAIL, ASK)}
    out += ["", f"{counts[PASS]} pass, {counts[FAIL]} FAIL, {counts[ASK]} to answer yourself."]
    return "\n".join(out)
