"""``grader.checker.checklist``: the article's thirteen items, each automatic one failing on its mistake and passing once fixed."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.checker.checklist import checklist, checklist_table
from grader.checker.findings import Sample
from grader.taxonomy import success_result
from servers.toolkit import ToolSpec, build_server

from .shop import (
    CROWDED,
    DIVERSE,
    READS,
    SEARCH_DESCRIPTION,
    WRITES,
    GetOrder,
    NoArguments,
    Search,
    check,
    fragments_tool,
    item,
    logging_server,
    raises,
    search,
    shop,
)


def test_the_checklist_has_the_articles_thirteen_items_each_citing_its_section() -> None:
    lines = checklist(check(shop()))

    assert [line.item.number for line in lines] == list(range(1, 14))
    for line in lines:
        source = line.to_json()["source"]
        assert source.startswith("Common mistakes › Pre-launch checklist; Common mistakes › ")
        assert line.result in ("pass", "FAIL", "answer yourself")


@pytest.mark.parametrize(
    ("number", "flawed", "fixed"),
    [
        (
            1,
            {
                "server": shop(
                    ToolSpec("export_analytics", "Export.", NoArguments, lambda a: success_result("", {}), READS)
                ),
                "expected_tools": ["search_orders", "get_order"],
            },
            {"server": shop(), "expected_tools": ["search_orders", "get_order"]},
        ),
        (
            8,
            {"server": build_server("shop", [ToolSpec("search_orders", SEARCH_DESCRIPTION, Search, search, WRITES)])},
            {"server": shop()},
        ),
        (
            10,
            {
                "server": build_server("blog", [fragments_tool(CROWDED)]),
                "samples": [Sample("search_articles", {"query": "stdio"}, "ok")],
            },
            {
                "server": build_server("blog", [fragments_tool(DIVERSE)]),
                "samples": [Sample("search_articles", {"query": "stdio"}, "ok")],
            },
        ),
        (
            11,
            {
                "server": shop(ToolSpec("get_refund", "Get one refund.", GetOrder, raises, READS)),
                "samples": [Sample("get_refund", {"order_id": "R-1"}, "error")],
            },
            {
                "server": shop(),
                "samples": [
                    Sample("get_order", {"order_id": "ORD-9999"}, "error"),
                    Sample("search_orders", {"customer_email": "nobody@example.com"}, "empty"),
                ],
            },
        ),
        (
            12,
            {"server": build_server("shop", [ToolSpec("search_orders", "Search.", Search, search, READS)])},
            {"server": shop()},
        ),
    ],
    ids=["1-whitelist", "8-read-only-hint", "10-fragments", "11-statuses", "12-descriptions"],
)
def test_each_automatic_item_fails_on_the_mistake_and_passes_once_fixed(number: int, flawed: dict, fixed: dict) -> None:
    bad = item(check(flawed.pop("server"), **flawed), number)
    good = item(check(fixed.pop("server"), **fixed), number)

    assert bad.result == "FAIL", bad
    assert good.result == "pass", good


def test_the_logging_item_passes_with_a_logged_connection_and_still_asks_about_queries_and_durations(
    tmp_path: Path,
) -> None:
    log = tmp_path / "stderr.log"
    logged = item(check(logging_server(log), stderr_path=log), 13)
    log.write_text("nothing useful\n")
    silent = item(check(shop(), stderr_path=log), 13)

    assert logged.result == "pass" and "how long" in logged.question
    assert silent.result == "FAIL"


def test_on_a_stdio_server_the_http_items_and_the_authors_items_are_questions_with_what_to_look_at() -> None:
    lines = {line.item.number: line for line in checklist(check(shop()))}

    for number in (2, 3, 5):
        assert lines[number].result == "answer yourself" and "only over HTTP" in lines[number].evidence
    assert lines[4].result == "answer yourself" and "protocol" in lines[4].evidence
    assert "spend cap" in lines[6].question and "published" in lines[7].question and "production" in lines[9].question
    assert all(lines[n].result == "answer yourself" for n in (6, 7, 9))


def test_the_checklist_table_lists_every_item_with_its_result_and_a_count() -> None:
    table = checklist_table(checklist(check(shop(), expected_tools=["search_orders", "get_order"])), "shop")

    assert "Common mistakes › Pre-launch checklist" in table
    assert " 1. [pass] tools/list returns only the tools you publish on purpose." in table
    assert "13. [" in table and table.rstrip().endswith("to answer yourself.")
