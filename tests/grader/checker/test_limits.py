"""``grader.checker.limits``: each limit cites a section ``docs/sources.md`` lists, and is the edge its rule applies."""

from __future__ import annotations

from typing import Any

import pytest

from grader import limits as claude_code
from grader.checker import findings, limits
from grader.checker.description_rules import check_description
from grader.checker.result_rules import size_finding
from grader.checker.tool_rules import (
    check_instructions,
    check_schema,
    full_name_finding,
)

from .citations import unlisted

# The module's own constants: not the section names it imports from findings, not SOURCES itself.
LIMITS = [name for name in vars(limits) if name.isupper() and name != "SOURCES" and not hasattr(findings, name)]


def tool(description: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "name": "get_order",
        "description": description,
        "inputSchema": {"type": "object", "properties": {}},
        **extra,
    }


def text_result(size: int, *, error: bool = False) -> dict[str, Any]:
    return {"isError": error, "content": [{"type": "text", "text": "x" * size}]}


def test_every_limit_names_the_section_it_comes_from_and_docs_sources_md_lists_that_section() -> None:
    assert sorted(limits.SOURCES) == sorted(LIMITS)
    for name, citation in limits.SOURCES.items():
        assert citation.startswith("Claude Code docs, MCP › "), (name, citation)
        assert unlisted(citation) == [], (name, citation)


def test_the_checkers_numbers_are_those_the_lessons_teach() -> None:
    assert (limits.UPFRONT_DESCRIPTION_LIMIT, limits.DEFERRED_DESCRIPTION_LIMIT) == claude_code.description_limits({})
    assert (limits.FULL_NAME_LIMIT, limits.RESULT_CHARS_LIMIT, limits.RESULT_CHARS_CEILING) == (128, 50_000, 500_000)
    assert (limits.ERROR_TRUNCATION_CHARS, limits.ERROR_KEPT_CHARS) == (11_000, 5_000)


@pytest.mark.parametrize(
    ("rule", "limit"),
    [
        ("description.upfront_limit", limits.UPFRONT_DESCRIPTION_LIMIT),
        ("description.deferred_limit", limits.DEFERRED_DESCRIPTION_LIMIT),
    ],
)
def test_a_description_exactly_at_a_limit_passes_and_one_character_more_fails(rule: str, limit: int) -> None:
    at, over = (next(f for f in check_description(tool("x" * size)) if f.rule == rule) for size in (limit, limit + 1))

    assert at.passed is True and over.passed is False
    assert f"{limit:,}" in over.message


def test_instructions_and_full_names_pass_at_their_limit_and_fail_past_it() -> None:
    assert check_instructions("x" * limits.INSTRUCTIONS_LIMIT).passed is True
    assert check_instructions("x" * (limits.INSTRUCTIONS_LIMIT + 1)).passed is False
    assert full_name_finding("name.length", "t", "m" * limits.FULL_NAME_LIMIT).passed is True
    assert full_name_finding("name.length", "t", "m" * (limits.FULL_NAME_LIMIT + 1)).passed is False


def test_result_sizes_pass_at_each_limit_and_fail_one_character_past_it() -> None:
    raised = tool(_meta={limits.MAX_RESULT_SIZE_KEY: 10 * limits.RESULT_CHARS_CEILING})
    cases = [
        (text_result(limits.RESULT_CHARS_LIMIT), tool(), True),
        (text_result(limits.RESULT_CHARS_LIMIT + 1), tool(), False),
        (text_result(limits.RESULT_CHARS_CEILING), raised, True),
        (text_result(limits.RESULT_CHARS_CEILING + 1), raised, False),
        (text_result(limits.ERROR_TRUNCATION_CHARS, error=True), tool(), True),
        (text_result(limits.ERROR_TRUNCATION_CHARS + 1, error=True), tool(), False),
    ]

    assert [size_finding("get_order()", "get_order", result, described).passed for result, described, _ in cases] == [
        expected for _, _, expected in cases
    ]


def test_a_property_name_of_64_allowed_characters_passes_and_65_fails() -> None:
    def names_ok(name: str) -> bool | None:
        schema = {"type": "object", "properties": {name: {"type": "string"}}}
        return next(f for f in check_schema(tool(inputSchema=schema)) if f.rule == "schema.property_names").passed

    assert names_ok("a.b-c_" + "d" * 58) is True
    assert names_ok("d" * 65) is False
    assert names_ok("order id") is False
