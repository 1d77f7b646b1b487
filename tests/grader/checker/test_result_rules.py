"""``grader.checker.result_rules``: sample calls, the shape of what comes back, its size, and search fragments."""

from __future__ import annotations

from grader.checker.findings import Sample
from grader.taxonomy import not_found_error
from servers.toolkit import ToolSpec, build_server

from .shop import (
    CROWDED,
    READS,
    GetOrder,
    Search,
    check,
    fragments_tool,
    only,
    raises,
    shop,
    text_tool,
)


def test_an_expected_error_passes_as_a_categorised_is_error_result() -> None:
    report = check(shop(), samples=[Sample("get_order", {"order_id": "ORD-9999"}, "error")])

    found = only(report, "result.expectation", "get_order")
    assert found.passed is True and "not_found" in found.message


def test_a_tool_that_raises_instead_of_returning_a_status_fails_as_a_protocol_error() -> None:
    broken = ToolSpec("get_refund", "Get one refund.", GetOrder, raises, READS)

    report = check(shop(broken), samples=[{"tool": "get_refund", "arguments": {"order_id": "R-1"}, "expect": "error"}])

    found = only(report, "result.expectation", "get_refund")
    assert found.passed is False and "protocol error" in found.message
    assert not report.ok


def test_an_uncategorised_operation_failed_result_fails() -> None:
    vague = ToolSpec(
        "get_refund",
        "Get one refund.",
        GetOrder,
        lambda a: {"isError": True, "content": [{"type": "text", "text": "Operation failed"}]},
        READS,
    )

    report = check(shop(vague), samples=[("get_refund", {"order_id": "R-1"}, "error")])

    found = only(report, "result.expectation", "get_refund")
    assert found.passed is False and "no errorCategory" in found.message


def test_an_expected_no_match_must_be_a_valid_empty_result_not_an_error() -> None:
    no_match_is_error = ToolSpec(
        "search_refunds", "Search refunds.", Search, lambda a: not_found_error("No refunds match."), READS
    )
    samples = [
        Sample("search_orders", {"customer_email": "nobody@example.com"}, "empty"),
        Sample("search_refunds", {"customer_email": "nobody@example.com"}, "empty"),
        Sample("search_orders", {"customer_email": "alice@example.com"}, "ok"),
    ]

    report = check(shop(no_match_is_error), samples=samples)

    assert [f.passed for f in report.of("result.expectation", "search_orders")] == [True, True]
    assert only(report, "result.expectation", "search_refunds").passed is False


def test_a_sample_for_a_tool_the_server_does_not_list_fails() -> None:
    found = only(check(shop(), samples=[Sample("refund_order", {}, "ok")]), "result.expectation", "refund_order")

    assert found.passed is False and "does not list" in found.message


def test_an_unbounded_result_over_50000_characters_fails_unless_max_result_size_chars_allows_it() -> None:
    unbounded = text_tool("get_log", 60_000)
    allowed = text_tool("get_schema", 60_000, meta={"anthropic/maxResultSizeChars": 200_000})
    samples = [Sample("get_log", {}, "ok"), Sample("get_schema", {}, "ok")]

    report = check(shop(unbounded, allowed), samples=samples)

    assert only(report, "result.size", "get_log").passed is False
    assert "saves the result to a file" in only(report, "result.size", "get_log").message
    assert only(report, "result.size", "get_schema").passed is True
    assert only(report, "meta.values", "get_schema").passed is True


def test_max_result_size_chars_cannot_raise_the_limit_past_the_500000_ceiling() -> None:
    huge = text_tool("get_dump", 600_000, meta={"anthropic/maxResultSizeChars": 1_000_000})

    report = check(shop(huge), samples=[Sample("get_dump", {}, "ok")])

    assert only(report, "result.size", "get_dump").passed is False
    assert only(report, "meta.values", "get_dump").passed is False


def test_an_error_text_past_the_truncation_point_fails() -> None:
    chatty = ToolSpec("get_refund", "Get one refund.", GetOrder, lambda a: not_found_error("No. " * 3000), READS)

    report = check(shop(chatty), samples=[Sample("get_refund", {"order_id": "R-1"}, "error")])

    assert only(report, "result.expectation", "get_refund").passed is True
    found = only(report, "result.size", "get_refund")
    assert found.passed is False and "5,000" in found.message


def test_fragments_cut_inside_words_and_crowded_by_one_source_are_named() -> None:
    report = check(
        build_server("blog", [fragments_tool(CROWDED)]), samples=[Sample("search_articles", {"query": "stdio"}, "ok")]
    )

    found = only(report, "search.fragments", "search_articles")
    assert "start inside a word" in found.message and "transports x5" in found.message
    assert found.source.startswith("Common mistakes › 4.3 Five fragments of one article instead of five articles")
