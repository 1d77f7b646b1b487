"""What the server checker takes and gives: samples in, findings and a report out, every rule's citation.

The bottom of ``grader.checker``: it imports nothing from the rest of the package. Each finding
names its rule, the sources the rule comes from (short name › section heading, as
``docs/sources.md`` lists them), its severity ("required": Claude Code drops, truncates or
misreads something, or the course requires it; "advice": a habit the sources recommend), whether it
passed (``None`` when it could not be checked), its subject (a tool, or "server") and a
sentence saying what was seen and what to do. ``RULES`` holds every rule's citation and severity.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

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
LENGTH_LIMITS = (DOCS, "Changing description length limits")
APPROVAL = (DOCS, "Requiring approval for a specific tool")
VERSIONS = (MISTAKES, '1.1 "Unrecognized field": client and server on different protocol versions')
PROXY_HTML = (MISTAKES, "1.4 An HTML page instead of JSON: the proxy's bot protection")
FRAMEWORK = (MISTAKES, "1.5 A 403 or a redirect to a login page: the framework's default security")

# rule id -> (citation, severity)
RULES: dict[str, tuple[str, str]] = {
    "whitelist": (
        cite((MISTAKES, "2.1 The framework published private tools on its own"), CHECKLIST, (MISTAKES, "FAQ")),
        REQUIRED,
    ),
    # The article says clients react differently to a tool without hints (ChatGPT treats it as one
    # that may change data); requiring the hints on every tool is this course's policy.
    "annotations.present": (cite(READ_ONLY_MARK, CHECKLIST), REQUIRED),
    "annotations.read_only": (cite(READ_ONLY_MARK, CHECKLIST), REQUIRED),
    "annotations.retry_safety": (cite((DOCS, "Marking tools that are safe to call twice")), ADVICE),
    "description.upfront_limit": (cite(AUTHORS), REQUIRED),
    "description.deferred_limit": (cite(AUTHORS, LENGTH_LIMITS), REQUIRED),
    "description.keywords_first": (cite(AUTHORS, VAGUE), ADVICE),
    "description.what_when_how": (cite(VAGUE, CHECKLIST, (EXAM, "What this section covers")), ADVICE),
    "name.length": (cite(LONG_NAMES), REQUIRED),
    "name.plugin_length": (cite((DOCS, "MCP servers provided by plugins"), LONG_NAMES), REQUIRED),
    "schema.property_names": (cite(SCHEMAS), REQUIRED),
    "schema.valid": (cite(SCHEMAS), REQUIRED),
    "schema.root_combinator": (cite(SCHEMAS), ADVICE),
    "meta.values": (cite(OUTPUT, APPROVAL, AUTHORS), ADVICE),
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
    "initialize.logged": (cite(VERSIONS, (MISTAKES, "FAQ"), CHECKLIST), ADVICE),
    "tools.list": (cite((MISTAKES, "FAQ")), REQUIRED),
    "http.initialize": (cite(PROXY_HTML, FRAMEWORK, CHECKLIST), REQUIRED),
    "http.fresh_reply": (cite(PROXY_HTML, CHECKLIST), REQUIRED),
    "http.no_cookie": (cite(FRAMEWORK, CHECKLIST), REQUIRED),
    "http.newer_client": (cite(VERSIONS, CHECKLIST), REQUIRED),
    "http.rate_limit": (
        cite((MISTAKES, "3.1 The rate limit counts the proxy's IP instead of the client's"), CHECKLIST),
        REQUIRED,
    ),
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

EXPECTATIONS = ("error", "empty", "ok")


class CheckInputError(ValueError):
    """Input the person at the keyboard can fix (a sample file, a server name); the text says how."""


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
                f'{where} must be an object {{"tool": ..., "arguments": {{...}}, "expect": "error|empty|ok"}}.'
            )
        if not isinstance(sample.tool, str) or not sample.tool:
            raise CheckInputError(f'{where} needs "tool": the name of a tool to call.')
        if not isinstance(sample.arguments, Mapping):
            raise CheckInputError(f'{where}: "arguments" must be a JSON object.')
        if sample.expect not in EXPECTATIONS:
            raise CheckInputError(f'{where}: "expect" must be one of {", ".join(EXPECTATIONS)}, not {sample.expect!r}.')
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


def parse_names(value: str | None) -> list[str] | None:
    """``"a, b,c"`` -> ["a", "b", "c"]; None stays None."""
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def describe(exc: BaseException) -> str:
    """An exception in a few words for a finding or an error message: its type and text (the first of a group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
