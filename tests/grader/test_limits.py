"""Claude Code's limits on results, descriptions and tool names, as grader.limits states them."""

from __future__ import annotations

import pytest

from grader.limits import (
    CHARS_LIMIT,
    description_limits,
    estimate_tokens,
    full_tool_name,
    max_output_tokens,
    name_fits,
    result_fate,
)

MAX_50K = {"MAX_MCP_OUTPUT_TOKENS": "50000"}


def text_of(tokens: int) -> str:
    return "word " * (tokens * 4 // 5)  # five characters a word: tokens * 4 characters


def test_tokens_are_estimated_as_characters_over_four():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens(text_of(5_000)) == 5_000


@pytest.mark.parametrize("env", [{}, MAX_50K])
def test_a_result_of_about_five_thousand_tokens_reaches_claude_whole_without_a_warning(env):
    fate = result_fate(text_of(5_000), env=env)
    assert (fate.outcome, fate.warning) == ("in the conversation", False)


@pytest.mark.parametrize("env", [{}, MAX_50K])
def test_a_result_of_about_twelve_thousand_tokens_reaches_claude_with_a_warning(env):
    fate = result_fate(text_of(11_500), env=env)
    assert (fate.outcome, fate.warning) == ("in the conversation", True)
    assert fate.chars < CHARS_LIMIT


def test_a_result_of_about_thirty_thousand_tokens_goes_to_a_file_by_default_for_its_tokens():
    fate = result_fate(text_of(30_000))
    assert fate.outcome == "saved to a file"
    assert "25,000-token limit" in fate.why and "reads the file when it needs the content" in fate.why


def test_raising_the_token_limit_does_not_keep_a_long_text_result_out_of_a_file():
    fate = result_fate(text_of(30_000), env=MAX_50K)
    assert fate.outcome == "saved to a file"
    assert "50,000" in fate.why and "does not change" in fate.why


def test_a_lowered_token_limit_sends_a_small_result_to_a_file():
    assert result_fate(text_of(5_000), env={"MAX_MCP_OUTPUT_TOKENS": "4000"}).outcome == "saved to a file"


def test_a_declared_max_result_size_replaces_both_limits_for_text_up_to_its_ceiling():
    big = text_of(30_000)
    assert result_fate(big, meta={"anthropic/maxResultSizeChars": 200_000}).outcome == "in the conversation"
    assert result_fate(big, meta={"anthropic/maxResultSizeChars": 100_000}).outcome == "saved to a file"
    huge = "x" * 600_000
    assert result_fate(huge, meta={"anthropic/maxResultSizeChars": 1_000_000}).outcome == "saved to a file"
    assert (
        result_fate(huge[:499_000], meta={"anthropic/maxResultSizeChars": 1_000_000}).outcome == "in the conversation"
    )


def test_an_error_text_is_cut_in_the_middle_and_never_saved_to_a_file():
    assert result_fate("e" * 20_000, is_error=True).outcome == "error text cut"
    assert result_fate("e" * 200_000, is_error=True).outcome == "error text cut"
    assert result_fate("e" * 10_000, is_error=True).outcome == "in the conversation"


@pytest.mark.parametrize("value", ["", "0", "-5", "many", "2.5"])
def test_a_token_limit_that_is_not_a_positive_number_leaves_the_default(value):
    assert max_output_tokens({"MAX_MCP_OUTPUT_TOKENS": value}) == 25_000


def test_the_description_length_override_sets_both_limits():
    assert description_limits({}) == (4_096, 16_384)
    assert description_limits({"CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH": "8192"}) == (8_192, 8_192)


def test_full_tool_names_plain_and_in_a_plugin():
    assert full_tool_name("tracker", "get_issue") == "mcp__tracker__get_issue"
    assert full_tool_name("database-tools", "query", "my-plugin") == "mcp__plugin_my-plugin_database-tools__query"
    assert full_tool_name("support desk", "get.order") == "mcp__support_desk__get_order"


def test_a_full_name_over_128_characters_does_not_fit():
    assert name_fits("m" * 128) and not name_fits("m" * 129)
