"""``grader.checker.tool_rules``: whitelist, annotations, full names, input schemas and ``_meta``, each passing and failing."""

from __future__ import annotations

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field

from grader.taxonomy import success_result
from servers.toolkit import ToolSpec

from .shop import (
    READS,
    WRITES,
    GetOrder,
    NoArguments,
    RawTool,
    check,
    get_order,
    only,
    shop,
)

# --- whitelist ---------------------------------------------------------------------------------------


def test_a_private_tool_exposed_by_accident_is_named_and_fails_the_whitelist() -> None:
    private = ToolSpec(
        "export_analytics", "Export the site's analytics.", NoArguments, lambda a: success_result("", {}), READS
    )

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


def test_a_get_tool_that_does_not_say_read_only_fails_when_no_read_only_list_is_given() -> None:
    unmarked = ToolSpec("get_invoice", "Get one invoice.", GetOrder, get_order, WRITES)

    report = check(shop(unmarked))

    found = only(report, "annotations.read_only", "get_invoice")
    assert found.passed is False and "readOnlyHint" in found.message


def test_the_read_only_list_decides_which_tools_must_say_read_only_and_which_may_not() -> None:
    refund = ToolSpec(
        "refund_order", "Refund an order.", GetOrder, get_order, READS
    )  # claims read-only, but moves money

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
    model_config = ConfigDict(
        json_schema_extra=lambda s: s.update(anyOf=[{"required": ["email"]}, {"required": ["phone"]}])
    )
    email: str | None = Field(None, description="E-mail.")
    phone: str | None = Field(None, description="Phone.")


def test_a_property_name_with_a_space_or_over_64_characters_fails() -> None:
    spaced = ToolSpec("get_refund", "Get one refund.", SpacedName, lambda a: success_result("", {}), READS)
    long_name = RawTool(
        "get_return",
        "Get one return.",
        NoArguments,
        lambda a: success_result("", {}),
        READS,
        schema={"type": "object", "properties": {"r" * 65: {"type": "string"}}},
    )

    report = check(shop(spaced, long_name))

    assert only(report, "schema.property_names", "get_refund").passed is False
    assert "'order id'" in only(report, "schema.property_names", "get_refund").message
    assert only(report, "schema.property_names", "get_return").passed is False
    assert only(report, "schema.property_names", "get_order").passed is True


def test_a_schema_invalid_under_draft_2020_12_fails_and_another_dialect_is_not_checked() -> None:
    invalid = RawTool(
        "get_refund",
        "Get one refund.",
        NoArguments,
        lambda a: success_result("", {}),
        READS,
        schema={"type": "object", "properties": {"id": {"type": "strng"}}},
    )
    draft7 = RawTool(
        "get_return",
        "Get one return.",
        NoArguments,
        lambda a: success_result("", {}),
        READS,
        schema={
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"id": {"type": "strng"}},
        },
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


# --- _meta ----------------------------------------------------------------------------------------------


def test_a_requires_user_interaction_flag_that_is_not_json_true_gets_advice() -> None:
    flagged = RawTool(
        "grant_access",
        "Grant access.",
        NoArguments,
        lambda a: success_result("", {}),
        WRITES,
        meta={"anthropic/requiresUserInteraction": "yes"},
    )

    found = only(check(shop(flagged)), "meta.values", "grant_access")

    assert found.passed is False and "ignored" in found.message
