"""``grader.checker.findings``: every rule's citation, the report as JSON and as a table, and the sample file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from grader.checker.findings import RULES, CheckInputError, Sample, load_samples
from grader.taxonomy import success_result
from servers.toolkit import ToolSpec

from .citations import unlisted
from .shop import READS, NoArguments, check, shop


def test_every_rule_cites_its_sources_by_short_name_and_section_heading() -> None:
    short_names = ("Exam guide › ", "Common mistakes › ", "Claude Code docs, MCP › ")
    for rule, (source, _severity) in RULES.items():
        for place in source.split("; "):
            assert place.startswith(short_names), (rule, place)
        assert "/" not in source and not re.search(r"\.txt|\bline|\bl\. ?\d", source), (rule, source)


def test_the_report_gives_json_and_a_table_with_rule_subject_result_and_message() -> None:
    private = ToolSpec("export_analytics", "Export.", NoArguments, lambda a: success_result("", {}), READS)
    report = check(shop(private), expected_tools=["search_orders", "get_order"])

    data = report.to_json()
    table = report.table()

    assert data["ok"] is False and data["failedRequired"] == 1
    assert {"rule", "source", "severity", "passed", "subject", "message"} <= set(data["findings"][0])
    assert table.splitlines()[0].split() == ["rule", "subject", "result", "message"]
    assert any(line.startswith("whitelist") and "FAIL" in line for line in table.splitlines())


def test_a_sample_file_that_is_not_json_or_has_a_bad_expectation_is_refused_in_one_sentence(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("[{tool: get_order}]")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps([{"tool": "get_order", "arguments": {}, "expect": "fine"}]))
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps({"samples": [{"tool": "get_order", "arguments": {"order_id": "X"}, "expectation": "error"}]})
    )

    with pytest.raises(CheckInputError, match="not valid JSON"):
        load_samples(broken)
    with pytest.raises(CheckInputError, match="must be one of error, empty, ok"):
        load_samples(wrong)
    assert load_samples(good) == [Sample("get_order", {"order_id": "X"}, "error")]


def test_every_section_a_rule_cites_is_one_docs_sources_md_lists() -> None:
    for rule, (source, _severity) in RULES.items():
        assert unlisted(source) == [], rule
