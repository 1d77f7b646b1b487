"""The rules on what ``tools/list`` and ``initialize`` publish: whitelist, annotations, names, schemas, ``_meta``, instructions.

- ``whitelist``: ``tools/list`` is exactly the expected list, naming extra and missing tools.
- ``annotations.present``, ``annotations.read_only``, ``annotations.retry_safety``: every
  tool declares its hints; read-only tools say ``readOnlyHint: true``; tools that change
  things say whether repeating them is safe.
- ``name.length``, ``name.plugin_length``: the full ``mcp__...`` name within 128 characters.
- ``schema.property_names``, ``schema.valid``, ``schema.root_combinator``.
- ``meta.values``: the ``anthropic/...`` keys of a tool's ``_meta`` hold values Claude Code reads.
- ``instructions.length``: the server's instructions within 4,096 characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from grader.checker.findings import SERVER, Finding, finding, sentence
from grader.checker.limits import (
    ALWAYS_LOAD_KEY,
    DRAFT_2020_12,
    FULL_NAME_LIMIT,
    INSTRUCTIONS_LIMIT,
    MAX_RESULT_SIZE_KEY,
    PROPERTY_NAME,
    REQUIRES_USER_INTERACTION_KEY,
    RESULT_CHARS_CEILING,
    ROOT_COMBINATORS,
)
from grader.scopes import plugin_tool_name

READ_ONLY_PREFIXES = ("get_", "list_", "search_")


def check_whitelist(tools: Sequence[str], expected: Sequence[str] | None) -> Finding:
    if expected is None:
        return finding(
            "whitelist",
            SERVER,
            None,
            "No expected tool list given (--expect): the published tools were not compared with a whitelist.",
        )
    extra = [t for t in tools if t not in expected]
    missing = [t for t in expected if t not in tools]
    if not extra and not missing:
        return finding("whitelist", SERVER, True, f"tools/list publishes exactly the {len(expected)} expected tool(s).")
    parts = []
    if extra:
        parts.append(
            f"published but not on the whitelist: {', '.join(extra)} (accidental exposure: remove them from the server or add them to the list on purpose)"
        )
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
            found.append(
                finding("annotations.read_only", name, True, f"Read-only ({basis}), and readOnlyHint is true.")
            )
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
    def clean(s: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", s)

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
        found.append(
            finding(
                "schema.property_names",
                name,
                True,
                f"{len(properties)} top-level property name(s), all 1-64 characters of A-Z a-z 0-9 _ . -.",
            )
        )
    dialect = schema.get("$schema")
    if dialect is not None and dialect not in DRAFT_2020_12:
        found.append(
            finding(
                "schema.valid",
                name,
                None,
                f"The schema declares {dialect}; Claude Code checks only schemas without $schema or declaring draft 2020-12.",
            )
        )
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
        found.append(
            finding(
                "schema.root_combinator",
                name,
                True,
                "No anyOf/oneOf/allOf at the root; Claude Code sends the schema unchanged.",
            )
        )
    return found


def check_meta(tool: dict[str, Any]) -> Finding | None:
    meta = tool.get("_meta") or {}
    keys = [k for k in meta if k.startswith("anthropic/")]
    if not keys:
        return None
    problems = []
    if MAX_RESULT_SIZE_KEY in meta:
        value = meta[MAX_RESULT_SIZE_KEY]
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            problems.append(
                f"{MAX_RESULT_SIZE_KEY} should be a positive whole number of characters, not {json.dumps(value)}"
            )
        elif value > RESULT_CHARS_CEILING:
            problems.append(
                f"{MAX_RESULT_SIZE_KEY} = {value} is above the {RESULT_CHARS_CEILING:,}-character ceiling Claude Code applies"
            )
    if REQUIRES_USER_INTERACTION_KEY in meta and meta[REQUIRES_USER_INTERACTION_KEY] is not True:
        problems.append(
            f"{REQUIRES_USER_INTERACTION_KEY} is ignored unless it is JSON true (got {json.dumps(meta[REQUIRES_USER_INTERACTION_KEY])})"
        )
    if ALWAYS_LOAD_KEY in meta and not isinstance(meta[ALWAYS_LOAD_KEY], bool):
        problems.append(f"{ALWAYS_LOAD_KEY} should be true or false, not {json.dumps(meta[ALWAYS_LOAD_KEY])}")
    if problems:
        return finding("meta.values", tool["name"], False, sentence("; ".join(problems)))
    return finding("meta.values", tool["name"], True, f"{', '.join(keys)} hold values Claude Code reads.")


def check_instructions(instructions: str | None) -> Finding:
    size = len(instructions or "")
    if size <= INSTRUCTIONS_LIMIT:
        return finding(
            "instructions.length",
            SERVER,
            True,
            f"Server instructions are {size} characters (limit {INSTRUCTIONS_LIMIT:,}).",
        )
    return finding(
        "instructions.length",
        SERVER,
        False,
        f"Server instructions are {size} characters; Claude Code keeps only the first {INSTRUCTIONS_LIMIT:,}. Put the critical part first and shorten.",
    )
