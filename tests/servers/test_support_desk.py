"""The support desk over MCP, in memory: tools, annotations, and every error class in the exam guide's shape."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from grader.taxonomy import GUIDE_REFUND_EXAMPLE
from servers.client import wire
from servers.support_desk.desk import (
    REFUND_LIMIT_USD,
    Caller,
    Desk,
    PaymentGateway,
    UpstreamUnavailable,
)
from servers.support_desk.server import build_server, desk_from_env

pytestmark = pytest.mark.anyio


def desk(role: str = "supervisor", **gateway: Any) -> Desk:
    return Desk(Caller(role), PaymentGateway(**gateway))


async def call(the_desk: Desk, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call through an in-memory MCP client, returned in wire format."""
    with anyio.fail_after(10):
        async with Client(build_server(the_desk)) as client:
            return wire(await client.call_tool(tool, arguments))


def structured(result: dict[str, Any]) -> dict[str, Any]:
    return result["structuredContent"]


def text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def assert_error_shape(result: dict[str, Any], category: str, retryable: bool) -> None:
    assert result["isError"] is True
    assert text(result).strip()
    assert structured(result)["errorCategory"] == category
    assert structured(result)["isRetryable"] is retryable
    assert structured(result)["code"]


async def test_tools_list_names_the_three_desk_tools() -> None:
    with anyio.fail_after(10):
        async with Client(build_server(desk())) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == {"search_orders", "get_order", "refund_order"}
    for tool in tools.values():
        assert tool.description and len(tool.description) > 60
        assert tool.input_schema["type"] == "object"
    assert tools["refund_order"].input_schema["required"] == ["order_id", "amount_usd", "reason"]
    assert tools["refund_order"].input_schema["properties"]["amount_usd"]["type"] == "number"


async def test_read_tools_are_annotated_read_only_and_idempotent() -> None:
    with anyio.fail_after(10):
        async with Client(build_server(desk())) as client:
            tools = {tool.name: wire(tool) for tool in (await client.list_tools()).tools}

    for name in ("search_orders", "get_order"):
        annotations = tools[name]["annotations"]
        assert annotations["readOnlyHint"] is True, name
        assert annotations["idempotentHint"] is True, name
        assert annotations["destructiveHint"] is False, name


async def test_refund_is_annotated_as_a_destructive_non_idempotent_write() -> None:
    with anyio.fail_after(10):
        async with Client(build_server(desk())) as client:
            tools = {tool.name: wire(tool) for tool in (await client.list_tools()).tools}

    annotations = tools["refund_order"]["annotations"]
    assert annotations["readOnlyHint"] is False
    assert annotations["idempotentHint"] is False
    assert annotations["destructiveHint"] is True


async def test_a_search_with_matches_returns_the_orders() -> None:
    result = await call(desk("agent"), "search_orders", {"customer_email": "alice@example.com"})

    assert result["isError"] is False
    assert [o["orderId"] for o in structured(result)["orders"]] == ["ORD-1001", "ORD-1002"]
    assert structured(result)["count"] == 2


async def test_a_valid_search_with_no_matches_is_an_empty_success_not_an_error() -> None:
    result = await call(desk("agent"), "search_orders", {"customer_email": "zoe@example.com"})

    assert result["isError"] is False
    assert structured(result)["orders"] == []
    assert structured(result)["count"] == 0
    assert "No orders match" in text(result)
    assert "errorCategory" not in structured(result)


async def test_a_search_filtered_to_an_absent_status_is_an_empty_success() -> None:
    result = await call(desk("agent"), "search_orders", {"customer_email": "alice@example.com", "status": "refunded"})

    assert result["isError"] is False
    assert structured(result)["orders"] == []
    assert "refunded" in text(result)


async def test_a_search_with_an_unknown_status_is_a_validation_error() -> None:
    result = await call(desk("agent"), "search_orders", {"customer_email": "alice@example.com", "status": "lost"})

    assert_error_shape(result, "validation", False)
    assert structured(result)["field"] == "status"


async def test_an_unknown_order_is_not_found() -> None:
    result = await call(desk("agent"), "get_order", {"order_id": "ORD-9999"})

    assert_error_shape(result, "not_found", False)
    assert structured(result)["code"] == "ORDER_NOT_FOUND"
    assert "ORD-9999" in text(result)


async def test_a_known_order_reports_what_was_refunded() -> None:
    result = await call(desk("agent"), "get_order", {"order_id": "ORD-1001"})

    assert result["isError"] is False
    assert structured(result)["order"]["totalUsd"] == 120.0
    assert structured(result)["order"]["refundedUsd"] == 0.0


async def test_an_agent_may_not_refund_and_is_told_the_missing_scope_and_role() -> None:
    gateway = PaymentGateway()
    result = await call(
        Desk(Caller("agent"), gateway), "refund_order", {"order_id": "ORD-1001", "amount_usd": 10, "reason": "late"}
    )

    assert_error_shape(result, "permission", False)
    assert structured(result)["missingScope"] == "refunds:write"
    assert structured(result)["role"] == "agent"
    assert gateway.calls == 0


async def test_a_guest_cannot_search_orders() -> None:
    result = await call(desk("guest"), "search_orders", {"customer_email": "alice@example.com"})

    assert_error_shape(result, "permission", False)
    assert structured(result)["missingScope"] == "orders:read"
    assert structured(result)["role"] == "guest"
    assert "orders" not in structured(result)


async def test_a_750_refund_is_the_exam_guides_business_example_word_for_word() -> None:
    gateway = PaymentGateway()
    result = await call(
        Desk(Caller("supervisor"), gateway),
        "refund_order",
        {"order_id": "ORD-1002", "amount_usd": 750, "reason": "damaged"},
    )

    assert result == GUIDE_REFUND_EXAMPLE
    assert structured(result)["limit"] == REFUND_LIMIT_USD
    assert gateway.calls == 0


@pytest.mark.parametrize("amount", [-5, 0], ids=["negative", "zero"])
async def test_a_non_positive_amount_is_a_validation_error_on_amount_usd(amount: float) -> None:
    gateway = PaymentGateway()
    result = await call(
        Desk(Caller("supervisor"), gateway),
        "refund_order",
        {"order_id": "ORD-1001", "amount_usd": amount, "reason": "x"},
    )

    assert_error_shape(result, "validation", False)
    assert structured(result)["field"] == "amount_usd"
    assert structured(result)["reason"]
    assert gateway.calls == 0


async def test_a_non_numeric_amount_is_a_validation_error_not_a_crash() -> None:
    result = await call(desk(), "refund_order", {"order_id": "ORD-1001", "amount_usd": "abc", "reason": "x"})

    assert_error_shape(result, "validation", False)
    assert structured(result)["field"] == "amount_usd"
    assert "amount_usd" in text(result)


async def test_a_missing_argument_is_a_validation_error_naming_it() -> None:
    result = await call(desk(), "refund_order", {"order_id": "ORD-1001", "amount_usd": 10})

    assert_error_shape(result, "validation", False)
    assert structured(result)["field"] == "reason"


@pytest.mark.parametrize("amount", ["nan", "NaN"])
async def test_a_nan_amount_is_a_validation_error_and_refunds_nothing(amount: str) -> None:
    the_desk = desk()
    result = await call(the_desk, "refund_order", {"order_id": "ORD-1001", "amount_usd": amount, "reason": "x"})

    assert_error_shape(result, "validation", False)
    assert structured(result)["field"] == "amount_usd"
    assert the_desk.gateway.calls == 0
    assert the_desk.refunded_usd == {}


async def test_a_malformed_order_id_is_a_validation_error_on_order_id() -> None:
    result = await call(desk(), "refund_order", {"order_id": "1001", "amount_usd": 10, "reason": "x"})

    assert_error_shape(result, "validation", False)
    assert structured(result)["field"] == "order_id"


async def test_the_gateway_failing_twice_gives_two_transient_errors_then_a_refund() -> None:
    the_desk = desk(fail_first=2)
    arguments = {"order_id": "ORD-1001", "amount_usd": 20, "reason": "late delivery"}
    with anyio.fail_after(10):
        async with Client(build_server(the_desk)) as client:
            results = [wire(await client.call_tool("refund_order", arguments)) for _ in range(3)]

    for failed in results[:2]:
        assert_error_shape(failed, "transient", True)
        assert structured(failed)["retryAfterSeconds"] > 0
        assert "Nothing was charged or refunded" in text(failed)
    assert results[2]["isError"] is False
    assert structured(results[2])["amountUsd"] == 20
    assert structured(results[2])["refundId"].startswith("RF-1001-")
    assert the_desk.refunded_usd == {"ORD-1001": 20}


async def test_the_sdk_result_object_uses_snake_case_attributes() -> None:
    with anyio.fail_after(10):
        async with Client(build_server(desk(fail_first=1))) as client:
            result = await client.call_tool("refund_order", {"order_id": "ORD-1001", "amount_usd": 5, "reason": "x"})

    assert result.is_error is True
    assert result.structured_content["errorCategory"] == "transient"
    assert wire(result)["isError"] is True


async def test_refunding_more_than_is_left_on_the_order_is_a_business_error() -> None:
    the_desk = desk()
    with anyio.fail_after(10):
        async with Client(build_server(the_desk)) as client:
            first = wire(
                await client.call_tool("refund_order", {"order_id": "ORD-1001", "amount_usd": 100, "reason": "x"})
            )
            second = wire(
                await client.call_tool("refund_order", {"order_id": "ORD-1001", "amount_usd": 50, "reason": "x"})
            )
            order = wire(await client.call_tool("get_order", {"order_id": "ORD-1001"}))

    assert first["isError"] is False
    assert_error_shape(second, "business", False)
    assert structured(second)["code"] == "REFUND_EXCEEDS_ORDER"
    assert structured(second)["limit"] == 20
    assert structured(second)["requested"] == 50
    assert "$20.00" in structured(second)["customerMessage"]
    assert structured(order)["order"]["refundedUsd"] == 100
    assert the_desk.gateway.calls == 1


async def test_an_already_refunded_order_cannot_be_refunded_again() -> None:
    result = await call(desk(), "refund_order", {"order_id": "ORD-1003", "amount_usd": 1, "reason": "x"})

    assert_error_shape(result, "business", False)
    assert structured(result)["limit"] == 0


async def test_an_unknown_tool_is_a_protocol_error_not_a_result() -> None:
    with anyio.fail_after(10):
        async with Client(build_server(desk())) as client:
            with pytest.raises(MCPError, match="Unknown tool: delete_order"):
                await client.call_tool("delete_order", {"order_id": "ORD-1001"})


async def failure_sequence(seed: int, n: int = 12) -> list[bool]:
    the_desk = desk(failure_rate=0.5, seed=seed)
    arguments = {"order_id": "ORD-1002", "amount_usd": 1, "reason": "x"}
    with anyio.fail_after(10):
        async with Client(build_server(the_desk)) as client:
            return [wire(await client.call_tool("refund_order", arguments))["isError"] for _ in range(n)]


async def test_a_seeded_failure_rate_gives_the_same_sequence_every_time() -> None:
    first = await failure_sequence(seed=7)
    second = await failure_sequence(seed=7)

    assert first == second
    assert True in first and False in first


def test_a_seeded_gateway_is_deterministic_without_mcp() -> None:
    def outcomes(seed: int) -> list[bool]:
        gateway = PaymentGateway(failure_rate=0.3, seed=seed)
        out = []
        for _ in range(50):
            try:
                gateway.refund("ORD-1001", 1)
                out.append(True)
            except UpstreamUnavailable:
                out.append(False)
        return out

    assert outcomes(3) == outcomes(3)
    assert outcomes(3) != outcomes(4)


def test_desk_from_env_reads_role_and_fault_injection() -> None:
    the_desk = desk_from_env(
        {"DESK_ROLE": "supervisor", "DESK_FAIL_FIRST": "2", "DESK_FAILURE_RATE": "0.25", "DESK_SEED": "9"}
    )

    assert the_desk.caller.role == "supervisor"
    assert (the_desk.gateway.fail_first, the_desk.gateway.failure_rate, the_desk.gateway.seed) == (2, 0.25, 9)


def test_desk_from_env_defaults_to_an_agent_with_a_healthy_gateway() -> None:
    the_desk = desk_from_env({})

    assert the_desk.caller.role == "agent"
    assert (the_desk.gateway.fail_first, the_desk.gateway.failure_rate) == (0, 0.0)


def test_desk_from_env_rejects_an_unknown_role_with_a_clear_message() -> None:
    with pytest.raises(SystemExit) as exit_info:
        desk_from_env({"DESK_ROLE": "admin"})

    message = str(exit_info.value.code)
    assert "DESK_ROLE='admin'" in message
    assert "guest, agent, supervisor" in message


@pytest.mark.parametrize(
    "env",
    [{"DESK_FAIL_FIRST": "two"}, {"DESK_FAILURE_RATE": "often"}, {"DESK_SEED": "1.5"}],
    ids=["fail-first-word", "failure-rate-word", "seed-fraction"],
)
def test_desk_from_env_rejects_bad_numbers_with_a_clear_message(env: dict[str, str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        desk_from_env(env)

    message = str(exit_info.value.code)
    assert "DESK_FAIL_FIRST" in message and "DESK_FAILURE_RATE" in message
    assert "Traceback" not in message


@pytest.mark.parametrize(
    "env",
    [{"DESK_FAILURE_RATE": "1.5"}, {"DESK_FAILURE_RATE": "-0.2"}, {"DESK_FAILURE_RATE": "nan"}],
    ids=["above-1", "below-0", "nan"],
)
def test_desk_from_env_rejects_a_failure_rate_outside_0_to_1(env: dict[str, str]) -> None:
    # The desk's own message promises "DESK_FAILURE_RATE a number from 0 to 1".
    with pytest.raises(SystemExit) as exit_info:
        desk_from_env(env)

    assert "DESK_FAILURE_RATE" in str(exit_info.value.code)


def test_the_kits_backoff_delay_is_the_reference_schedule_and_leads_nowhere_near_the_reference_model() -> None:
    from grader.decisions import backoff_delay as reference
    from servers.support_desk import kit

    assert [kit.backoff_delay(n) for n in (1, 2, 3)] == [reference(n) for n in (1, 2, 3)]
    assert kit.backoff_delay(2, base=1.0) == reference(2, base=1.0)
    # Its globals are the desk's world, which holds data and no rule: nothing there reaches the model.
    assert kit.backoff_delay.__globals__["__name__"] == "servers.support_desk.world"
    assert not any(
        getattr(value, "__module__", "").startswith("grader") for value in kit.backoff_delay.__globals__.values()
    )
    assert "decide" not in kit.backoff_delay.__globals__


def test_the_kits_retry_delay_is_the_reference_one_the_longer_of_the_hint_and_the_backoff() -> None:
    from grader.decisions import retry_delay as reference
    from servers.support_desk import kit

    assert kit.retry_delay is reference
    assert kit.retry_delay.__globals__["__name__"] == "servers.support_desk.world"
    # A hint longer than the backoff is honoured; a shorter one, or none, leaves the backoff.
    assert [kit.retry_delay({"retryAfterSeconds": 1.5}, n) for n in (1, 2, 3)] == [1.5, 1.5, 2.0]
    assert [kit.retry_delay({"retryAfterSeconds": 0.1}, n) for n in (1, 2)] == [
        kit.backoff_delay(1),
        kit.backoff_delay(2),
    ]
    assert kit.retry_delay({}, 3) == kit.backoff_delay(3)


async def test_with_the_orders_database_down_both_reads_are_retryable_transient_errors() -> None:
    the_desk = Desk(Caller("agent"), PaymentGateway(), reads_down=True)

    for tool, arguments in (
        ("search_orders", {"customer_email": "alice@example.com"}),
        ("get_order", {"order_id": "ORD-1001"}),
    ):
        result = await call(the_desk, tool, arguments)
        assert_error_shape(result, "transient", True)
        assert structured(result)["code"] == "ORDERS_DB_UNAVAILABLE"
        assert structured(result)["retryAfterSeconds"] == 1.0


async def test_with_the_orders_database_down_scope_and_input_are_still_checked_first() -> None:
    guest = Desk(Caller("guest"), PaymentGateway(), reads_down=True)
    agent = Desk(Caller("agent"), PaymentGateway(), reads_down=True)

    assert_error_shape(await call(guest, "search_orders", {"customer_email": "alice@example.com"}), "permission", False)
    assert_error_shape(await call(agent, "get_order", {"order_id": "1001"}), "validation", False)


def test_desk_from_env_reads_the_orders_database_switch_and_rejects_other_values() -> None:
    assert desk_from_env({"DESK_READS_DOWN": "1"}).reads_down is True
    assert desk_from_env({}).reads_down is False
    with pytest.raises(SystemExit) as exit_info:
        desk_from_env({"DESK_READS_DOWN": "yes"})
    assert "DESK_READS_DOWN='yes' is not 0 or 1" in str(exit_info.value.code)
