"""What Claude Code does with what an MCP server sends it: result sizes, description lengths, full tool names.

The rules are those of *Claude Code docs, MCP › MCP output limits and warnings*, *› Tool search for MCP
server authors*, *› Changing description length limits*, *› Tools with names longer than 128 characters* and
*› MCP servers provided by plugins*. Claude Code counts a result's size in tokens; this module estimates
tokens as characters / 4, the rough estimate Claude Code itself starts from (observed in Claude Code
2.1.332, which asks the API for an exact count when a result comes near its limit), so a result within a
few percent of a token threshold may land on either side of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

WARNING_TOKENS = 10_000  # Claude Code shows a warning above this; the threshold is fixed
DEFAULT_MAX_TOKENS = 25_000  # the default of MAX_MCP_OUTPUT_TOKENS
CHARS_LIMIT = 50_000  # a successful text result longer than this is saved to a file, whatever the token limit
CHARS_CEILING = 500_000  # the most anthropic/maxResultSizeChars can raise a tool's own threshold to
ERROR_TRUNCATED_OVER = 11_000  # an error text longer than about this keeps only its first and last 5,000
ERROR_KEPT = 5_000
RESPONSE_BYTES = 16 * 1024 * 1024  # an HTTP or SSE response over 16 MiB is not read: the call fails
CHARS_PER_TOKEN = 4

MAX_RESULT_SIZE_CHARS = "anthropic/maxResultSizeChars"
FILE_NOTE = "the session's tool-results folder under ~/.claude/projects/"

UPFRONT_DESCRIPTION_LIMIT = 4_096  # server instructions, and the description of a tool loaded up front
DEFERRED_DESCRIPTION_LIMIT = 16_384  # the description of a tool Claude loads through tool search
NAME_LIMIT = 128  # a tool whose full name is longer is left out of the tools Claude sees


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is: characters / 4, rounded up. An estimate, not the model's count."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def positive_int(value: object) -> int | None:
    """``value`` as a positive whole number (an environment variable's text, or a JSON number), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and value > 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip()) or None
    return None


def max_output_tokens(env: Mapping[str, str] | None = None) -> int:
    """The token limit for MCP output: MAX_MCP_OUTPUT_TOKENS when it is a positive number, else 25,000."""
    return positive_int((env or {}).get("MAX_MCP_OUTPUT_TOKENS")) or DEFAULT_MAX_TOKENS


def declared_chars(meta: Mapping[str, object] | None) -> int | None:
    """A tool's own character threshold from its ``_meta["anthropic/maxResultSizeChars"]``, capped at 500,000."""
    value = positive_int((meta or {}).get(MAX_RESULT_SIZE_CHARS))
    return min(value, CHARS_CEILING) if value else None


@dataclass(frozen=True)
class Fate:
    """What Claude Code does with one tool result, and why, in a sentence."""

    chars: int
    tokens: int  # estimated: characters / 4
    warning: bool  # Claude Code shows the user its large-output warning
    outcome: str  # "in the conversation", "saved to a file", "error text cut"
    why: str

    @property
    def row(self) -> dict[str, object]:
        return {
            "characters": self.chars,
            "tokens (est.)": self.tokens,
            "warning": self.warning,
            "Claude Code": self.outcome,
            "why": self.why,
        }


def result_fate(
    text: str,
    *,
    env: Mapping[str, str] | None = None,
    meta: Mapping[str, object] | None = None,
    is_error: bool = False,
) -> Fate:
    """What Claude Code does with a text result of a call that finishes in the foreground.

    ``env`` is Claude Code's environment (MAX_MCP_OUTPUT_TOKENS), ``meta`` the tool's ``_meta`` in its
    ``tools/list`` entry (``anthropic/maxResultSizeChars``), ``is_error`` the result's ``isError``.
    A result saved to a file is not lost: the conversation gets a message with the file's path, in
    the session's tool-results folder, and Claude reads the file when it needs the content.
    """
    chars, tokens = len(text), estimate_tokens(text)
    warning = tokens > WARNING_TOKENS
    warned = f"; over {WARNING_TOKENS:,} tokens, so the user sees a warning" if warning else ""
    if is_error:
        if chars > ERROR_TRUNCATED_OVER:
            return Fate(
                chars,
                tokens,
                False,
                "error text cut",
                f"an isError result over about {ERROR_TRUNCATED_OVER:,} characters keeps its first and last "
                f"{ERROR_KEPT:,} characters, with a marker saying how many were removed; it is not saved to a file",
            )
        return Fate(chars, tokens, False, "in the conversation", "an error text this short reaches Claude whole")
    declared = declared_chars(meta)
    saved = f"saved to a file in {FILE_NOTE}; the conversation gets its path and Claude reads the file when it needs the content"
    if declared is not None:
        if chars > declared:
            return Fate(
                chars,
                tokens,
                warning,
                "saved to a file",
                f"{chars:,} characters is over the {declared:,} the tool declares with {MAX_RESULT_SIZE_CHARS}: {saved}",
            )
        return Fate(
            chars,
            tokens,
            warning,
            "in the conversation",
            f"within the {declared:,} characters the tool declares; a declared limit replaces MAX_MCP_OUTPUT_TOKENS "
            f"for text{warned}",
        )
    limit = max_output_tokens(env)
    if tokens > limit:
        return Fate(
            chars,
            tokens,
            warning,
            "saved to a file",
            f"about {tokens:,} tokens is over the {limit:,}-token limit (MAX_MCP_OUTPUT_TOKENS"
            f"{'' if limit != DEFAULT_MAX_TOKENS else ', default'}): {saved}",
        )
    if chars > CHARS_LIMIT:
        return Fate(
            chars,
            tokens,
            warning,
            "saved to a file",
            f"{chars:,} characters is over {CHARS_LIMIT:,}, a threshold MAX_MCP_OUTPUT_TOKENS does not change: {saved}",
        )
    return Fate(
        chars,
        tokens,
        warning,
        "in the conversation",
        f"under {CHARS_LIMIT:,} characters and the {limit:,}-token limit{warned}",
    )


def description_limits(env: Mapping[str, str] | None = None) -> tuple[int, int]:
    """(up front, through tool search): how many characters of a description Claude sees.

    The first also holds for server instructions. CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH, when set to a
    number, replaces both (raising one and lowering the other when it lies between them).
    """
    override = positive_int((env or {}).get("CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH"))
    return (override, override) if override else (UPFRONT_DESCRIPTION_LIMIT, DEFERRED_DESCRIPTION_LIMIT)


def name_part(name: str) -> str:
    """A server, plugin or tool name as it appears in a full tool name: anything outside A-Z, a-z, 0-9, _ and - becomes _."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def full_tool_name(server: str, tool: str, plugin: str | None = None) -> str:
    """The name Claude calls a tool by: ``mcp__<server>__<tool>``, or ``mcp__plugin_<plugin>_<server>__<tool>``
    for a server a plugin provides."""
    prefix = f"mcp__plugin_{name_part(plugin)}_{name_part(server)}" if plugin else f"mcp__{name_part(server)}"
    return f"{prefix}__{name_part(tool)}"


def name_fits(full_name: str) -> bool:
    """Whether Claude Code sends the tool to Claude at all: a full name over 128 characters is left out."""
    return len(full_name) <= NAME_LIMIT
