"""``grader.checker.description_rules``: the description limits, keywords first, and the what / when / how heuristic."""

from __future__ import annotations

from servers.toolkit import ToolSpec

from .shop import READS, GetOrder, Search, check, get_order, only, search, shop


def test_a_vague_description_gets_advice_that_says_what_the_heuristic_missed() -> None:
    vague = ToolSpec("search_invoices", "Does a lookup.", Search, search, READS)

    report = check(shop(vague))

    heuristic = only(report, "description.what_when_how", "search_invoices")
    assert heuristic.passed is False and heuristic.severity == "advice"
    assert "when to call ✗" in heuristic.message and "Heuristic" in heuristic.message
    assert only(report, "description.keywords_first", "search_invoices").passed is False
    assert report.ok  # advice never fails the report


def test_a_description_over_4096_characters_fails_and_over_16384_fails_both_limits() -> None:
    long = ToolSpec("get_refund", "Get one refund. " + "x" * 5000, GetOrder, get_order, READS)
    huge = ToolSpec("get_return", "Get one return. " + "x" * 17000, GetOrder, get_order, READS)

    report = check(shop(long, huge))

    assert only(report, "description.upfront_limit", "get_refund").passed is False
    assert only(report, "description.deferred_limit", "get_refund").passed is True
    assert only(report, "description.deferred_limit", "get_return").passed is False
    assert only(report, "description.upfront_limit", "get_order").passed is True


def test_a_description_that_buries_the_tools_words_past_the_first_100_characters_gets_advice() -> None:
    buried = ToolSpec("get_invoice", "A" * 120 + " invoice.", GetOrder, get_order, READS)

    found = only(check(shop(buried)), "description.keywords_first", "get_invoice")

    assert found.passed is False
