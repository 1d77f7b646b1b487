"""The rules on what sample calls bring back: the expected shape, the size Claude Code keeps, search fragments.

- ``result.expectation``: a sample expected to fail is an ``isError`` result with a taxonomy
  ``errorCategory`` and a boolean ``isRetryable``; one expected to match nothing is a valid empty
  answer, not an error; a protocol error (an exception) fails either way.
- ``result.size``: the result's text within what Claude Code keeps (50,000 characters, or the
  tool's own ``anthropic/maxResultSizeChars`` up to 500,000; about 11,000 for an error text).
- ``search.fragments``: fragments in a sample's answer are short, start and end on word
  boundaries, at most two per source (``grader.search_quality``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.shared.exceptions import MCPError

from grader.checker.findings import Finding, Sample, describe, finding
from grader.checker.limits import (
    ERROR_KEPT_CHARS,
    ERROR_TRUNCATION_CHARS,
    MAX_RESULT_SIZE_KEY,
    RESULT_CHARS_CEILING,
    RESULT_CHARS_LIMIT,
)
from grader.search_quality import PER_SOURCE, fragment_problems, fragments_in
from grader.taxonomy import Category, is_empty_success, is_error, result_text
from servers.client import Session


def result_limit(tool: dict[str, Any] | None) -> tuple[int, str]:
    """The text size above which Claude Code saves a successful result to a file, and why."""
    meta = (tool or {}).get("_meta") or {}
    value = meta.get(MAX_RESULT_SIZE_KEY)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        limit = min(value, RESULT_CHARS_CEILING)
        return limit, f'_meta["{MAX_RESULT_SIZE_KEY}"] = {value}' + (
            f", capped at {RESULT_CHARS_CEILING:,}" if value > RESULT_CHARS_CEILING else ""
        )
    return RESULT_CHARS_LIMIT, "the default"


def _shown(sample: Sample) -> str:
    args = json.dumps(sample.arguments, ensure_ascii=False)
    return f"{sample.tool}({args if len(args) <= 80 else args[:77] + '...'})"


def check_sample(session: Session, sample: Sample, tools: Mapping[str, dict[str, Any]]) -> list[Finding]:
    call = _shown(sample)
    if sample.tool not in tools:
        return [
            finding(
                "result.expectation",
                sample.tool,
                False,
                f"{call}: the server does not list this tool, so the sample cannot run.",
            )
        ]
    try:
        result = session.call(sample.tool, sample.arguments)
    except MCPError as exc:
        return [
            finding(
                "result.expectation",
                sample.tool,
                False,
                f"{call} (expected {sample.expect}) raised a JSON-RPC protocol error ({exc.error.code}: {exc.error.message}). "
                'The model never sees it and cannot tell "no data" from "server broken": catch the exception in the tool '
                "and return an isError result with errorCategory and isRetryable.",
            )
        ]
    except TimeoutError:
        return [
            finding("result.expectation", sample.tool, False, f"{call} did not answer within the session's timeout.")
        ]
    except Exception as exc:  # noqa: BLE001 - e.g. a result the client cannot parse: a finding, not a traceback
        return [
            finding(
                "result.expectation",
                sample.tool,
                False,
                f"{call}: the client could not read the answer ({describe(exc)}).",
            )
        ]
    found = [expectation(call, sample, result), size_finding(call, sample.tool, result, tools[sample.tool])]
    fragments = fragments_in(result.get("structuredContent"))
    if fragments and not is_error(result):
        problems = fragment_problems(fragments)
        found.append(
            finding(
                "search.fragments",
                sample.tool,
                not problems,
                f"{call}: {len(fragments)} fragment(s): "
                + (
                    "; ".join(problems) + ". Cut fragments at word boundaries and keep at most "
                    f"{PER_SOURCE} per source (or rerank for diversity, MMR)."
                    if problems
                    else f"short, on word boundaries, at most {PER_SOURCE} per source."
                ),
            )
        )
    return found


def expectation(call: str, sample: Sample, result: dict[str, Any]) -> Finding:
    structured = result.get("structuredContent") if isinstance(result.get("structuredContent"), dict) else {}
    category = structured.get("errorCategory")
    if sample.expect == "error":
        if not is_error(result):
            return finding(
                "result.expectation",
                sample.tool,
                False,
                f"{call} was expected to fail but came back with isError false.",
            )
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
            + (
                "; a query that matches nothing is not a failure: return isError false with an empty list."
                if sample.expect == "empty"
                else "."
            ),
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
            return finding(
                "result.size",
                tool_name,
                True,
                f"{call}: error text of {size} characters, under the ~{ERROR_TRUNCATION_CHARS:,} where Claude Code truncates.",
            )
        return finding(
            "result.size",
            tool_name,
            False,
            f"{call}: error text of {size} characters; above about {ERROR_TRUNCATION_CHARS:,} Claude Code keeps only the first and last "
            f"{ERROR_KEPT_CHARS:,}. Keep error messages short and actionable.",
        )
    if any(isinstance(b, dict) and b.get("type") == "image" for b in result.get("content") or []):
        return finding(
            "result.size",
            tool_name,
            None,
            f"{call}: the result holds an image; images count against MAX_MCP_OUTPUT_TOKENS, not the character limit.",
        )
    limit, why = result_limit(tool)
    if size <= limit:
        return finding(
            "result.size", tool_name, True, f"{call}: {size:,} characters of text, within {limit:,} ({why})."
        )
    return finding(
        "result.size",
        tool_name,
        False,
        f"{call}: {size:,} characters of text, over {limit:,} ({why}): Claude Code saves the result to a file and puts "
        f'only its path in the conversation, so Claude must read the file back before it can use the content. Return less (snippets, a page with a next-page hint), or raise _meta["{MAX_RESULT_SIZE_KEY}"] '
        "if the size is inherent.",
    )
