"""The one real subprocess test: the support desk over the stdio boundary, configured by environment."""

from __future__ import annotations

from servers.client import connect


def test_the_stdio_desk_honours_its_start_up_role_and_fault_injection() -> None:
    arguments = {"order_id": "ORD-1001", "amount_usd": 20, "reason": "late delivery"}

    # connect() bounds every call with anyio.fail_after(timeout).
    with connect("support_desk", env={"DESK_ROLE": "supervisor", "DESK_FAIL_FIRST": "1"}, timeout=30) as desk:
        tool_names = {tool["name"] for tool in desk.tools()}
        first = desk.call("refund_order", arguments)
        second = desk.call("refund_order", arguments)
        order = desk.call("get_order", order_id="ORD-1001")

    assert tool_names == {"search_orders", "get_order", "refund_order"}
    # DESK_FAIL_FIRST=1: the gateway's first call fails, as a transient, retryable error result.
    assert first["isError"] is True
    assert first["structuredContent"]["errorCategory"] == "transient"
    assert first["structuredContent"]["isRetryable"] is True
    assert first["structuredContent"]["retryAfterSeconds"] > 0
    # DESK_ROLE=supervisor: the refund goes through (the default role, agent, would get a permission error).
    assert second["isError"] is False
    assert second["structuredContent"]["orderId"] == "ORD-1001"
    assert second["structuredContent"]["amountUsd"] == 20
    assert order["structuredContent"]["order"]["refundedUsd"] == 20
