"""Every limit of Claude Code the server checker applies, each with the source section it comes from.

The numbers are ``grader.limits``'s and ``grader.toolsearch``'s (the lessons' model of Claude Code), so the
checker and the lessons cannot drift apart; this module names them as the rules use them and cites each
one (``SOURCES``: limit -> "short name › section heading", as ``docs/sources.md`` lists them).
"""

from __future__ import annotations

import re

from grader import limits as claude_code
from grader import toolsearch
from grader.checker.findings import (
    APPROVAL,
    AUTHORS,
    LENGTH_LIMITS,
    LONG_NAMES,
    OUTPUT,
    SCHEMAS,
    cite,
)

# Defaults; CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH changes both.
UPFRONT_DESCRIPTION_LIMIT = (
    claude_code.UPFRONT_DESCRIPTION_LIMIT
)  # a tool loaded up front, and what tool search matches
DEFERRED_DESCRIPTION_LIMIT = claude_code.DEFERRED_DESCRIPTION_LIMIT  # a tool loaded through tool search
INSTRUCTIONS_LIMIT = claude_code.UPFRONT_DESCRIPTION_LIMIT  # the server's instructions
FULL_NAME_LIMIT = claude_code.NAME_LIMIT  # mcp__<server>__<tool>, longer is left out of the tools Claude sees
PROPERTY_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # a top-level input property's name; used with fullmatch
DRAFT_2020_12 = ("https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#")
ROOT_COMBINATORS = ("anyOf", "oneOf", "allOf")  # merged into one object schema before the API sees it
RESULT_CHARS_LIMIT = claude_code.CHARS_LIMIT  # a longer successful result is saved to a file
RESULT_CHARS_CEILING = claude_code.CHARS_CEILING  # the most maxResultSizeChars can raise that to
ERROR_TRUNCATION_CHARS = claude_code.ERROR_TRUNCATED_OVER  # a longer error text keeps only its first and last...
ERROR_KEPT_CHARS = claude_code.ERROR_KEPT  # ...this many characters
MAX_RESULT_SIZE_KEY = claude_code.MAX_RESULT_SIZE_CHARS
REQUIRES_USER_INTERACTION_KEY = toolsearch.REQUIRES_USER_INTERACTION
ALWAYS_LOAD_KEY = toolsearch.ALWAYS_LOAD

# limit -> where it comes from
SOURCES: dict[str, str] = {
    "UPFRONT_DESCRIPTION_LIMIT": cite(AUTHORS, LENGTH_LIMITS),
    "DEFERRED_DESCRIPTION_LIMIT": cite(AUTHORS, LENGTH_LIMITS),
    "INSTRUCTIONS_LIMIT": cite(AUTHORS),
    "FULL_NAME_LIMIT": cite(LONG_NAMES),
    "PROPERTY_NAME": cite(SCHEMAS),
    "DRAFT_2020_12": cite(SCHEMAS),
    "ROOT_COMBINATORS": cite(SCHEMAS),
    "RESULT_CHARS_LIMIT": cite(OUTPUT),
    "RESULT_CHARS_CEILING": cite(OUTPUT),
    "ERROR_TRUNCATION_CHARS": cite(OUTPUT),
    "ERROR_KEPT_CHARS": cite(OUTPUT),
    "MAX_RESULT_SIZE_KEY": cite(OUTPUT),
    "REQUIRES_USER_INTERACTION_KEY": cite(APPROVAL),
    "ALWAYS_LOAD_KEY": cite(AUTHORS),
}
