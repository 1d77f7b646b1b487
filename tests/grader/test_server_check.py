"""``grader.server_check``: each pre-launch rule, passing and failing, against small in-memory servers."""

from __future__ import annotations

import http.server
import json
import re
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field

from grader.cli import main
from grader.server_check import (
    CLIENT_NAME,
    RULES,
    CheckInputError,
    Report,
    Sample,
    check_server,
    check_url,
    checklist,
    checklist_table,
    load_samples,
    mcp_json_params,
    probe_initialize,
)
from grader.taxonomy import empty_result, not_found_error, success_result
from servers.client import connect
from servers.remote import running
from servers.toolkit import ToolSpec, build_server

REPO = Path(__file__).resolve().parents[2]
READS = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = types.ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True)

SEARCH_DESCRIPTION = (
    "Search the shop's orders by customer e-mail. Call it when a customer asks about their orders. "
    "Returns matching orders; an empty list means the customer has none."
)
GET_DESCRIPTION = "Get one order by id. Call it before a refund. An unknown id returns a not_found error result."


class Search(BaseModel):
    customer_email: str = Field(description="The customer's e-mail address.")


class GetOrder(BaseModel):
    order_id: str = Field(description="The order id, e.g. ORD-1001.")


class NoArguments(BaseModel):
    pass


@dataclass(frozen=True)
class RawTool(ToolSpec):
    """A tool whose published schema or ``_meta`` is written by hand, for rules pydantic would not break."""

    schema: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_tool(self) -> types.Tool:
        tool = super().to_tool()
        update: dict[str, Any] = {}
        if self.schema is not None:
            update["input_schema"] = self.schema
        if self.meta is not None:
            update["meta"] = self.meta
        return tool.model_copy(update=update)


def search(arguments: Search) -> dict[str, Any]:
    if arguments.customer_email == "alice@example.com":
        return success_result("1 order.", {"orders": [{"id": "ORD-1001"}]})
    return empty_result("No orders for this customer.", key="orders")


def get_order(arguments: GetOrder) -> dict[str, Any]:
    if arguments.order_id == "ORD-1001":
        return success_result("ORD-1001: paid.", {"id": "ORD-1001", "status": "paid"})
    return not_found_error(f"No order {arguments.order_id}. Tell the user the order does not exist.")


def shop_tools() -> list[ToolSpec]:
    return [
        ToolSpec("search_orders", SEARCH_DESCRIPTION, Search, search, READS),
        ToolSpec("get_order", GET_DESCRIPTION, GetOrder, get_order, READS),
    ]


def shop(*extra: ToolSpec) -> Server:
    return build_server("shop", [*shop_tools(), *extra])


def check(server: Any, **kwargs: Any) -> Report:
    kwargs.setdefault("server_name", "shop")
    return check_server(server, **kwargs)


def only(report: Report, rule: str, subject: str):
    (found,) = report.of(rule, subject)
    return found


def text_tool(name: str, size: int, meta: dict[str, Any] | None = None) -> RawTool:
    return RawTool(name, f"Dump {name} text. Call it when asked. Returns text.", NoArguments, lambda a: success_result("x" * size, {}), READS, meta=meta)


# --- a good server -----------------------------------------------------------------------------


def test_a_well_built_server_passes_every_required_rule_and_the_description_heuristic() -> None:
    report = check(shop(), expected_tools=["search_orders", "get_order"])

    assert report.ok and report.failed_required == []
    assert report.of("description.what_when_how", "search_orders")[0].passed is True
    assert report.tools == ["search_orders", "get_order"]


@pytest.mark.parametrize("module", ["support_desk", "notes", "tracker"])
def test_the_course_servers_pass_every_required_rule(module: str) -> None:
    build = __import__(f"servers.{module}", fromlist=["build_server"]).build_server

    report = check(build(), server_name=module)

    assert report.failed_required == [], report.table()


# --- whitelist -------------------------------------------------------------------------------------


def test_a_private_tool_exposed_by_accident_is_named_and_fails_the_whitelist() -> None:
    private = ToolSpec("export_analytics", "Export the site's analytics.", NoArguments, lambda a: success_result("", {}), READS)

    report = check(shop(private), expected_tools=["search_orders", "get_order", "refund_order"])

    found = only(report, "whitelist", "server")
    assert found.passed is False and found.severity == "required"
    assert "export_analytics" in found.message and "refund_order" in found.message
    assert found.source.startswith("Common mistakes › 2.1 The framework published private tools on its own; ")


def test_without_an_expected_list_the_whitelist_is_reported_as_not_checked() -> None:
    found = only(check(shop()), "whitelist", "server")

    assert found.passed is None and found.result == "skip"


# --- annotations ------------------------------------------------------------------------------------


def test_a_tool_without_annotations_fails() -> None:
    bare = ToolSpec("ping_shop", "Ping the shop.", NoArguments, lambda a: success_result("pong", {}), None)  # type: ignore[arg-type]

    report = check(shop(bare))

    unmarked = only(report, "annotations.present", "ping_shop")
    assert unmarked.passed is False
    assert "Clients react differently" in unmarked.message and "this course requires" in unmarked.message
    assert only(report, "annotations.present", "get_order").passed is True


def test_every_rule_cites_its_sources_by_short_name_and_section_heading() -> None:
    short_names = ("Exam guide › ", "Common mistakes › ", "Claude Code docs, MCP › ")
    for rule, (source, _severity) in RULES.items():
        for place in source.split("; "):
            assert place.startswith(short_names), (rule, place)
        assert "/" not in source and not re.search(r"\.txt|\bline|\bl\. ?\d", source), (rule, source)


def test_a_get_tool_that_does_not_say_read_only_fails_when_no_read_only_list_is_given() -> None:
    unmarked = ToolSpec("get_invoice", "Get one invoice.", GetOrder, get_order, WRITES)

    report = check(shop(unmarked))

    found = only(report, "annotations.read_only", "get_invoice")
    assert found.passed is False and "readOnlyHint" in found.message


def test_the_read_only_list_decides_which_tools_must_say_read_only_and_which_may_not() -> None:
    refund = ToolSpec("refund_order", "Refund an order.", GetOrder, get_order, READS)  # claims read-only, but moves money

    report = check(shop(refund), read_only=["search_orders", "get_order"])

    assert only(report, "annotations.read_only", "get_order").passed is True
    assert only(report, "annotations.read_only", "refund_order").passed is False


def test_a_tool_that_changes_data_is_advised_to_say_whether_a_retry_is_safe() -> None:
    vague = types.ToolAnnotations(read_only_hint=False)
    cancel = ToolSpec("cancel_order", "Cancel an order.", GetOrder, get_order, vague)

    report = check(shop(cancel))

    found = only(report, "annotations.retry_safety", "cancel_order")
    assert found.passed is False and found.severity == "advice"
    assert report.ok


# --- descriptions ------------------------------------------------------------------------------------


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


# --- names ----------------------------------------------------------------------------------------------


def test_a_full_tool_name_over_128_characters_fails_and_exactly_128_passes() -> None:
    prefix = len("mcp__shop__")
    fits = ToolSpec("a" * (128 - prefix), "Fits.", NoArguments, lambda a: success_result("", {}), READS)
    too_long = ToolSpec("b" * (129 - prefix), "Too long.", NoArguments, lambda a: success_result("", {}), READS)

    report = check(shop(fits, too_long))

    assert only(report, "name.length", fits.name).passed is True
    assert only(report, "name.length", too_long.name).passed is False


def test_the_plugin_form_of_the_name_is_checked_when_a_plugin_is_given() -> None:
    tool = ToolSpec("c" * 105, "Long.", NoArguments, lambda a: success_result("", {}), READS)

    report = check(shop(tool), plugin="my-plugin")

    assert only(report, "name.length", tool.name).passed is True
    found = only(report, "name.plugin_length", tool.name)
    assert found.passed is False and "mcp__plugin_my-plugin_shop__" in found.message
    assert report.of("name.plugin_length", "get_order")[0].passed is True


# --- input schemas ---------------------------------------------------------------------------------------


class SpacedName(BaseModel):
    order_id: str = Field(alias="order id", description="The order.")


class EitherKey(BaseModel):
    model_config = ConfigDict(json_schema_extra=lambda s: s.update(anyOf=[{"required": ["email"]}, {"required": ["phone"]}]))
    email: str | None = Field(None, description="E-mail.")
    phone: str | None = Field(None, description="Phone.")


def test_a_property_name_with_a_space_or_over_64_characters_fails() -> None:
    spaced = ToolSpec("get_refund", "Get one refund.", SpacedName, lambda a: success_result("", {}), READS)
    long_name = RawTool(
        "get_return", "Get one return.", NoArguments, lambda a: success_result("", {}), READS,
        schema={"type": "object", "properties": {"r" * 65: {"type": "string"}}},
    )

    report = check(shop(spaced, long_name))

    assert only(report, "schema.property_names", "get_refund").passed is False
    assert "'order id'" in only(report, "schema.property_names", "get_refund").message
    assert only(report, "schema.property_names", "get_return").passed is False
    assert only(report, "schema.property_names", "get_order").passed is True


def test_a_schema_invalid_under_draft_2020_12_fails_and_another_dialect_is_not_checked() -> None:
    invalid = RawTool(
        "get_refund", "Get one refund.", NoArguments, lambda a: success_result("", {}), READS,
        schema={"type": "object", "properties": {"id": {"type": "strng"}}},
    )
    draft7 = RawTool(
        "get_return", "Get one return.", NoArguments, lambda a: success_result("", {}), READS,
        schema={"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"id": {"type": "strng"}}},
    )

    report = check(shop(invalid, draft7))

    assert only(report, "schema.valid", "get_refund").passed is False
    assert only(report, "schema.valid", "get_return").passed is None
    assert only(report, "schema.valid", "get_order").passed is True


def test_a_root_any_of_gets_advice_that_claude_code_rewrites_it() -> None:
    either = ToolSpec("search_customers", "Search customers.", EitherKey, lambda a: success_result("", {}), READS)

    report = check(shop(either))

    found = only(report, "schema.root_combinator", "search_customers")
    assert found.passed is False and found.severity == "advice" and "anyOf" in found.message
    assert only(report, "schema.root_combinator", "get_order").passed is True


# --- sample results --------------------------------------------------------------------------------------------


def raises(arguments: BaseModel) -> dict[str, Any]:
    raise MCPError(-32603, "database is down")


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
        "get_refund", "Get one refund.", GetOrder,
        lambda a: {"isError": True, "content": [{"type": "text", "text": "Operation failed"}]}, READS,
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


def test_a_requires_user_interaction_flag_that_is_not_json_true_gets_advice() -> None:
    flagged = RawTool("grant_access", "Grant access.", NoArguments, lambda a: success_result("", {}), WRITES,
                      meta={"anthropic/requiresUserInteraction": "yes"})

    found = only(check(shop(flagged)), "meta.values", "grant_access")

    assert found.passed is False and "ignored" in found.message


# --- initialize logging --------------------------------------------------------------------------------------------


def logging_server(log: Path) -> Server:
    """A server that logs the connecting client's protocol version and name, as *Common mistakes › 1.1* asks."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        client = ctx.session.client_params.client_info
        with log.open("a", encoding="utf-8") as out:
            out.write(f"client connected: protocolVersion={ctx.protocol_version} clientInfo.name={client.name}\n")
        return types.ListToolsResult(tools=[])

    return Server("logging", on_list_tools=list_tools)


def test_initialize_logging_passes_when_stderr_shows_the_clients_protocol_version_and_name(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"

    report = check(logging_server(log), stderr_path=log)

    found = only(report, "initialize.logged", "server")
    assert found.passed is True and CLIENT_NAME in found.message


def test_initialize_logging_fails_as_advice_when_stderr_lacks_them_and_is_not_checked_without_a_capture(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_text("WARNING: something unrelated\n")

    silent = only(check(shop(), stderr_path=log), "initialize.logged", "server")
    unknown = only(check(shop()), "initialize.logged", "server")

    assert silent.passed is False and silent.severity == "advice"
    assert unknown.passed is None and unknown.severity == "advice"


def test_a_session_opened_by_the_caller_is_checked_and_left_open() -> None:
    with connect(shop(), timeout=10) as session:
        report = check_server(session, server_name="shop")
        assert [t["name"] for t in session.tools()] == ["search_orders", "get_order"]

    assert report.ok


# --- the report and its inputs -----------------------------------------------------------------------------------


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
    good.write_text(json.dumps({"samples": [{"tool": "get_order", "arguments": {"order_id": "X"}, "expectation": "error"}]}))

    with pytest.raises(CheckInputError, match="not valid JSON"):
        load_samples(broken)
    with pytest.raises(CheckInputError, match="must be one of error, empty, ok"):
        load_samples(wrong)
    assert load_samples(good) == [Sample("get_order", {"order_id": "X"}, "error")]


def test_a_server_is_found_in_the_projects_mcp_json_without_reading_the_users_home(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"desk": {"command": "python", "args": ["-m", "servers.support_desk"], "env": {"DESK_ROLE": "${ROLE:-guest}"}}}})
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"private": {"command": "python"}}}))

    params = mcp_json_params("desk", project=project, env={})

    assert (params.command, params.args, params.cwd) == ("python", ["-m", "servers.support_desk"], project.resolve())
    assert params.env["DESK_ROLE"] == "guest" and params.env["CLAUDE_PROJECT_DIR"] == str(project.resolve())
    with pytest.raises(CheckInputError, match="No MCP server named 'private'"):
        mcp_json_params("private", project=project, env={})
    assert mcp_json_params("private", project=project, home=home, env={}).command == "python"


def test_a_remote_server_in_mcp_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"api": {"type": "http", "url": "https://mcp.example.com/mcp"}}}))

    with pytest.raises(CheckInputError, match="stdio servers only"):
        mcp_json_params("api", project=tmp_path, env={})


def test_the_cli_exits_2_with_one_line_when_the_command_does_not_start_or_the_sample_file_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "samples.json"
    broken.write_text("not json")

    assert main(["check-server", "--command", "no-such-server-command-xyz"]) == 2
    missing = capsys.readouterr().err
    assert main(["check-server", "--command", "python -m servers.support_desk", "--sample", str(broken)]) == 2
    bad_sample = capsys.readouterr().err

    assert missing.count("\n") == 1 and "cannot be run" in missing
    assert bad_sample.count("\n") == 1 and "not valid JSON" in bad_sample


def test_check_server_over_stdio_end_to_end_prints_json_and_exits_0() -> None:
    completed = subprocess.run(
        [
            sys.executable, "-m", "grader", "check-server",
            "--command", f"{sys.executable} -m servers.support_desk",
            "--expect", "search_orders,get_order,refund_order",
            "--json",
        ],
        check=False, cwd=REPO, capture_output=True, text=True, timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    assert report["ok"] is True and report["tools"] == ["search_orders", "get_order", "refund_order"]
    assert report["server"] == "support-desk"
    assert next(f for f in report["findings"] if f["rule"] == "whitelist")["passed"] is True
    # The checker captured the server's stderr itself and found the toolkit's "client connected" line.
    assert next(f for f in report["findings"] if f["rule"] == "initialize.logged")["passed"] is True


# --- the pre-launch checklist, in memory -------------------------------------------------------------------------

BLOG_DESCRIPTION = (
    "Search the blog's articles on MCP servers. Call it when the user asks how to build or deploy one. "
    "Returns short fragments with each article's slug; an empty list means the blog has nothing on it."
)


class Query(BaseModel):
    query: str = Field(description="What to look for, in plain English.")


def fragments_tool(fragments: list[dict[str, str]]) -> ToolSpec:
    def search_articles(arguments: Query) -> dict[str, Any]:
        if arguments.query == "nothing":
            return empty_result("Nothing found.", key="fragments")
        return success_result(f"{len(fragments)} fragment(s).", {"fragments": fragments})

    return ToolSpec("search_articles", BLOG_DESCRIPTION, Query, search_articles, READS)


CROWDED = [{"slug": "transports", "fragment": f"ansports part {i}: stdio runs the server as a child proc"} for i in range(5)]
DIVERSE = [
    {"slug": "transports", "fragment": "Streamable HTTP serves a URL; stdio runs the server as a child process."},
    {"slug": "transports", "fragment": "Use stdio for local tools…"},
    {"slug": "rate-limits", "fragment": "Answer 429 with Retry-After."},
]


def item(report: Report, number: int):
    return next(line for line in checklist(report) if line.item.number == number)


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
        (1, {"server": shop(ToolSpec("export_analytics", "Export.", NoArguments, lambda a: success_result("", {}), READS)),
             "expected_tools": ["search_orders", "get_order"]},
         {"server": shop(), "expected_tools": ["search_orders", "get_order"]}),
        (8, {"server": build_server("shop", [ToolSpec("search_orders", SEARCH_DESCRIPTION, Search, search, WRITES)])},
         {"server": shop()}),
        (10, {"server": build_server("blog", [fragments_tool(CROWDED)]), "samples": [Sample("search_articles", {"query": "stdio"}, "ok")]},
         {"server": build_server("blog", [fragments_tool(DIVERSE)]), "samples": [Sample("search_articles", {"query": "stdio"}, "ok")]}),
        (11, {"server": shop(ToolSpec("get_refund", "Get one refund.", GetOrder, raises, READS)),
              "samples": [Sample("get_refund", {"order_id": "R-1"}, "error")]},
         {"server": shop(), "samples": [Sample("get_order", {"order_id": "ORD-9999"}, "error"),
                                        Sample("search_orders", {"customer_email": "nobody@example.com"}, "empty")]}),
        (12, {"server": build_server("shop", [ToolSpec("search_orders", "Search.", Search, search, READS)])},
         {"server": shop()}),
    ],
    ids=["1-whitelist", "8-read-only-hint", "10-fragments", "11-statuses", "12-descriptions"],
)
def test_each_automatic_item_fails_on_the_mistake_and_passes_once_fixed(number: int, flawed: dict, fixed: dict) -> None:
    bad = item(check(flawed.pop("server"), **flawed), number)
    good = item(check(fixed.pop("server"), **fixed), number)

    assert bad.result == "FAIL", bad
    assert good.result == "pass", good


def test_fragments_cut_inside_words_and_crowded_by_one_source_are_named() -> None:
    report = check(build_server("blog", [fragments_tool(CROWDED)]), samples=[Sample("search_articles", {"query": "stdio"}, "ok")])

    found = only(report, "search.fragments", "search_articles")
    assert "start inside a word" in found.message and "transports x5" in found.message
    assert found.source.startswith("Common mistakes › 4.3 Five fragments of one article instead of five articles")


def test_the_logging_item_passes_with_a_logged_connection_and_still_asks_about_queries_and_durations(tmp_path: Path) -> None:
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


# --- the HTTP probes against a strict server (protocol versions) ----------------------------------------------------


class StrictMCP(http.server.BaseHTTPRequestHandler):
    """Answers initialize like an old SDK that parses strictly: an unknown client capability is an error."""

    strict = True

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        capabilities = request["params"].get("capabilities", {})
        if self.strict and capabilities:
            field = next(iter(capabilities))
            answer = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32602, "message": f'Unrecognized field "{field}"'}}
        else:
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "strict", "version": "1"}}
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def strict_url():
    def serve(strict: bool) -> str:
        handler = type("Handler", (StrictMCP,), {"strict": strict})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/mcp"

    servers: list[http.server.ThreadingHTTPServer] = []
    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_server_that_refuses_a_newer_clients_capabilities_fails_item_4_and_a_tolerant_one_passes(strict_url) -> None:
    strict, _ = probe_initialize(strict_url(True), {}, 10)
    tolerant, _ = probe_initialize(strict_url(False), {}, 10)

    refused = next(f for f in strict if f.rule == "http.newer_client")
    assert refused.passed is False and 'Unrecognized field "elicitation"' in refused.message
    assert item(Report("strict", findings=strict), 4).result == "FAIL"
    assert item(Report("tolerant", findings=tolerant, url="x"), 4).result == "pass"


# --- the HTTP items against the remote course server, a real process on 127.0.0.1 ------------------------------------

HTTP_CASES = [
    (2, {"bot_check": True}, {"bot_check": True, "bot_check_exempt_mcp": True}, {}),
    (2, {"cached_reply": True}, {}, {}),
    (3, {"framework_defaults": True}, {}, {}),
    (5, {}, {"rate_limit": (12, 60)}, {"burst": 20}),
    (5, {"rate_limit": (12, 60), "trusted_proxies": ("127.0.0.1",)}, {"rate_limit": (12, 60)}, {"burst": 20}),
    (
        5,
        {"rate_limit": (12, 60), "trusted_proxies": ("127.0.0.1",), "key_by_peer_only": True},
        {"rate_limit": (12, 60), "trusted_proxies": ("127.0.0.1",)},
        {"burst": 20, "behind_proxy": True},
    ),
]


@pytest.mark.parametrize(
    ("number", "flawed", "fixed", "kwargs"),
    HTTP_CASES,
    ids=["2-bot-check", "2-cached-reply", "3-framework-cookies", "5-no-limit", "5-forged-cf-connecting-ip", "5-proxy-ip"],
)
def test_each_http_item_fails_on_the_deployment_mistake_and_passes_once_fixed(number: int, flawed: dict, fixed: dict, kwargs: dict) -> None:
    results = []
    for options in (flawed, fixed):
        with running(**options) as server:
            results.append(item(check_url(server.url, server_name="remote", timeout=15, **kwargs), number))

    bad, good = results
    assert bad.result == "FAIL", bad
    assert good.result == "pass", good


def test_a_proxys_html_challenge_and_a_frameworks_login_redirect_are_named() -> None:
    with running(bot_check=True) as server:
        html = only(check_url(server.url, server_name="remote", timeout=15), "http.initialize", "server")
    with running(framework_defaults=True) as server:
        report = check_url(server.url, server_name="remote", timeout=15)

    assert "HTML page" in html.message and "403" in html.message
    assert "/login" in only(report, "http.initialize", "server").message
    assert "session" in only(report, "http.no_cookie", "server").message
    assert only(report, "tools.list", "server").passed is False  # no session could be opened


def test_a_server_asking_for_a_token_leaves_item_2_to_answer_until_the_header_is_given() -> None:
    with running(token="s3cret") as server:
        asked = check_url(server.url, server_name="remote", timeout=15)
        signed_in = check_url(server.url, server_name="remote", headers={"Authorization": "Bearer s3cret"}, timeout=15)

    assert item(asked, 2).result == "answer yourself" and "--header" in item(asked, 2).evidence
    assert item(signed_in, 2).result == "pass" and signed_in.tools == ["search_articles", "get_article"]


def test_over_http_every_rule_runs_through_a_real_session_and_the_fragments_are_read() -> None:
    with running() as server:
        report = check_url(
            server.url,
            server_name="remote",
            expected_tools=["search_articles", "get_article"],
            samples=[Sample("search_articles", {"query": "proxy"}, "ok"), Sample("search_articles", {"query": "pricing"}, "empty")],
            timeout=15,
        )

    lines = {line.item.number: line for line in checklist(report)}
    assert [lines[n].result for n in (1, 2, 3, 4, 8, 10, 11)] == ["pass"] * 7
    assert lines[13].result == "answer yourself" and CLIENT_NAME in lines[13].evidence
    assert report.protocol_version


def test_check_server_url_checklist_runs_as_a_command_and_exits_1_on_a_failed_item() -> None:
    with running(bot_check=True) as server:
        completed = subprocess.run(
            [sys.executable, "-m", "grader", "check-server", "--url", server.url, "--checklist", "--json", "--timeout", "15"],
            check=False, cwd=REPO, capture_output=True, text=True, timeout=120,
        )

    lines = json.loads(completed.stdout)
    assert completed.returncode == 1, completed.stderr
    assert [line["item"] for line in lines] == list(range(1, 14))
    assert lines[1]["result"] == "FAIL" and lines[5]["result"] == "answer yourself"


def test_http_only_flags_without_a_url_are_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check-server", "--command", "python -m servers.notes", "--burst", "5"])

    assert code == 2 and "give --url" in capsys.readouterr().err


def test_a_session_refused_after_the_probes_is_a_finding_and_the_burst_still_runs() -> None:
    with running(rate_limit=(3, 60)) as server:
        report = check_url(server.url, server_name="remote", burst=5, timeout=15)

    assert only(report, "tools.list", "server").passed is False
    assert item(report, 1).result == "answer yourself" and "No MCP session" in item(report, 1).evidence
    assert item(report, 5).result == "pass"
