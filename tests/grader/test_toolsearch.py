"""Which tools Claude Code loads up front and which it defers, as grader.toolsearch resolves them."""

from __future__ import annotations

import pytest

from grader.toolsearch import (
    PLUGIN,
    SDK,
    Server,
    asks_every_call,
    resolve_tool_search,
    tool_search_mode,
)


def tool(name, description="Does one thing.", **meta):
    entry = {"name": name, "description": description, "inputSchema": {"type": "object", "properties": {}}}
    if meta:
        entry["_meta"] = {f"anthropic/{key}": value for key, value in meta.items()}
    return entry


def loads(resolution):
    return {t.tool: t.loads for t in resolution.tools}


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        (None, "on"),
        ("", "on"),
        ("true", "on"),
        ("1", "on"),
        ("false", "off"),
        ("0", "off"),
        ("auto", "auto"),
        ("auto:5", "auto"),
        ("auto:0", "on"),
        ("auto:100", "off"),
        ("auto:abc", "auto"),
        ("sometimes", "on"),
    ],
)
def test_enable_tool_search_values(value, mode):
    env = {} if value is None else {"ENABLE_TOOL_SEARCH": value}
    assert tool_search_mode(env).name == mode


def test_auto_threshold_percent():
    assert tool_search_mode({"ENABLE_TOOL_SEARCH": "auto"}).percent == 10
    assert tool_search_mode({"ENABLE_TOOL_SEARCH": "auto:5"}).percent == 5
    assert tool_search_mode({"ENABLE_TOOL_SEARCH": "auto:abc"}).percent == 10


def test_disabling_experimental_betas_turns_tool_search_off_whatever_enable_tool_search_says():
    mode = tool_search_mode({"CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "1", "ENABLE_TOOL_SEARCH": "true"})
    assert mode.name == "off" and "cannot turn it back on" in mode.why


def test_by_default_every_mcp_tool_is_deferred():
    resolution = resolve_tool_search([Server("tracker", [tool("get_issue"), tool("list_issues")])])
    assert loads(resolution) == {"get_issue": "deferred", "list_issues": "deferred"}
    assert resolution.tools[0].description_limit == 16_384


def test_false_loads_everything_up_front_with_the_shorter_description_limit():
    resolution = resolve_tool_search(
        [Server("tracker", [tool("get_issue")], always_load=False)], {"ENABLE_TOOL_SEARCH": "false"}
    )
    assert loads(resolution) == {"get_issue": "up front"}
    assert resolution.tools[0].description_limit == 4_096


def test_an_author_marks_one_tool_to_load_up_front():
    resolution = resolve_tool_search([Server("desk", [tool("search", alwaysLoad=True), tool("refund")])])
    assert loads(resolution) == {"search": "up front", "refund": "deferred"}


def test_an_entry_with_always_load_true_loads_every_tool_of_the_server_up_front():
    servers = [Server("core", [tool("a"), tool("b", alwaysLoad=False)], always_load=True), Server("other", [tool("c")])]
    assert loads(resolve_tool_search(servers)) == {"a": "up front", "b": "up front", "c": "deferred"}


@pytest.mark.parametrize("origin", [SDK, PLUGIN, "--mcp-config"])
def test_an_authors_false_keeps_a_tool_deferred_against_always_load_true_for_servers_given_by_flag_sdk_or_plugin(
    origin,
):
    server = Server("core", [tool("a"), tool("b", alwaysLoad=False)], always_load=True, origin=origin)
    assert loads(resolve_tool_search([server])) == {"a": "up front", "b": "deferred"}


def test_an_entry_with_always_load_false_defers_even_the_tools_the_author_marked():
    resolution = resolve_tool_search([Server("desk", [tool("search", alwaysLoad=True)], always_load=False)])
    assert loads(resolution) == {"search": "deferred"}
    assert "overridden" in resolution.tools[0].why


def test_always_load_true_holds_even_when_tool_search_is_off_and_on():
    server = Server("core", [tool("a")], always_load=True)
    for env in ({}, {"ENABLE_TOOL_SEARCH": "false"}, {"ENABLE_TOOL_SEARCH": "auto:1"}):
        assert loads(resolve_tool_search([server], env)) == {"a": "up front"}


def test_auto_loads_small_sets_up_front_and_defers_large_ones():
    small = [Server("s", [tool(f"t{i}") for i in range(3)])]
    assert set(loads(resolve_tool_search(small, {"ENABLE_TOOL_SEARCH": "auto"})).values()) == {"up front"}
    big = [Server("s", [tool(f"t{i}", "x" * 4_000) for i in range(30)])]  # about 30,000 tokens, over 10% of 200,000
    resolution = resolve_tool_search(big, {"ENABLE_TOOL_SEARCH": "auto"})
    assert set(loads(resolution).values()) == {"deferred"}
    assert resolution.threshold_tokens == 20_000 and resolution.deferrable_tokens > 20_000
    assert set(loads(resolve_tool_search(big, {"ENABLE_TOOL_SEARCH": "auto:50"})).values()) == {"up front"}


def test_a_tool_whose_full_name_is_over_128_characters_is_left_out():
    long_name = "get_article_outline_with_title_summary_and_section_headings_for_one_published_blog_post"
    resolution = resolve_tool_search(
        [Server("blog", [tool(long_name), tool("search")], plugin="acme-engineering-handbook")]
    )
    assert loads(resolution) == {long_name: "left out", "search": "deferred"}
    assert resolution.tools[1].full_name == "mcp__plugin_acme-engineering-handbook_blog__search"


def test_requires_user_interaction_must_be_json_true():
    assert asks_every_call(tool("grant", requiresUserInteraction=True))
    assert not asks_every_call(tool("grant", requiresUserInteraction="true"))
    assert not asks_every_call(tool("grant"))


def test_a_bad_origin_or_always_load_is_refused_with_a_message():
    with pytest.raises(ValueError, match="origin must be one of"):
        Server("s", [], origin="somewhere")
    with pytest.raises(ValueError, match="true or false"):
        Server("s", [], always_load="yes")
