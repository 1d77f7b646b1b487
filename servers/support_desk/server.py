"""MCP wiring for the support desk: one input model and truthful annotations per tool.

Configuration, read when the server starts (so a test or a lesson can choose it):
``DESK_ROLE`` (guest, agent, supervisor; default agent), ``DESK_FAIL_FIRST`` (the first N
payment-gateway calls fail), ``DESK_FAILURE_RATE`` and ``DESK_SEED`` (a repeatable share
of the rest fail).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import mcp_types as types
from pydantic import BaseModel, Field

from servers.support_desk.desk import ROLE_SCOPES, Caller, Desk, PaymentGateway
from servers.toolkit import ToolSpec, build_server as build_mcp_server, run_stdio


class SearchOrders(BaseModel):
    customer_email: str = Field(description="The customer's e-mail address, e.g. alice@example.com.")
    status: str | None = Field(None, description="Only orders in this status: paid, shipped, delivered, refunded.")


class GetOrder(BaseModel):
    order_id: str = Field(description="The order id, ORD- followed by four digits, e.g. ORD-1001.")


class RefundOrder(BaseModel):
    order_id: str = Field(description="The order to refund, e.g. ORD-1001.")
    amount_usd: float = Field(description="Amount to refund in US dollars; at most $500 per transaction.")
    reason: str = Field(description="Why the customer is refunded, for the audit log.")


READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# A refund moves money through the payment gateway and cannot be undone; repeating it refunds twice.
MOVES_MONEY = types.ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)


def desk_from_env(env: Mapping[str, str]) -> Desk:
    role = env.get("DESK_ROLE", "agent")
    if role not in ROLE_SCOPES:
        raise SystemExit(f"DESK_ROLE={role!r} is not a role of this desk; use one of: {', '.join(ROLE_SCOPES)}.")
    try:
        gateway = PaymentGateway(
            fail_first=int(env.get("DESK_FAIL_FIRST", "0")),
            failure_rate=float(env.get("DESK_FAILURE_RATE", "0")),
            seed=int(env.get("DESK_SEED", "0")),
        )
        if not 0 <= gateway.failure_rate <= 1:
            raise ValueError(f"DESK_FAILURE_RATE={gateway.failure_rate} is outside 0..1")
    except ValueError as exc:
        raise SystemExit(f"Bad desk fault-injection setting ({exc}); DESK_FAIL_FIRST and DESK_SEED are whole numbers, DESK_FAILURE_RATE a number from 0 to 1.") from None
    return Desk(Caller(role), gateway)


def desk_specs(desk) -> list[ToolSpec]:
    """The desk's three tools, answered by ``desk`` (the reference Desk, or a learner's handlers)."""
    return [
        ToolSpec(
            name="search_orders",
            title="Search a customer's orders",
            description=(
                "Search the support desk's orders by customer e-mail (optionally by status). "
                "Call it when a customer asks about their orders and you do not know the order id. "
                "Returns the matching orders with id, total and status; an empty list means the "
                "customer has no such orders, which is a valid answer to report, not an error."
            ),
            input_model=SearchOrders,
            handler=lambda a: desk.search_orders(a.customer_email, a.status),
            annotations=READ_ONLY,
        ),
        ToolSpec(
            name="get_order",
            title="Get one order",
            description=(
                "Get one order of the support desk by its id (ORD-NNNN): total, status and amount "
                "already refunded. Call it before a refund to check what can still be refunded. "
                "An unknown id returns a not_found error result: tell the user the order does not exist."
            ),
            input_model=GetOrder,
            handler=lambda a: desk.get_order(a.order_id),
            annotations=READ_ONLY,
        ),
        ToolSpec(
            name="refund_order",
            title="Refund an order",
            description=(
                "Refund part or all of an order through the payment gateway. Call it only when the "
                "customer asked for a refund and you know the order id and amount. Single refunds are "
                "capped at $500 (a business error: show its customerMessage and stop); a transient "
                "error means the gateway was down and nothing moved, so retry after the hinted delay."
            ),
            input_model=RefundOrder,
            handler=lambda a: desk.refund_order(a.order_id, a.amount_usd, a.reason),
            annotations=MOVES_MONEY,
        ),
    ]


def build_server(desk: Desk | None = None):
    """The support desk server; ``desk`` defaults to one configured from the environment."""
    return build_mcp_server(
        "support-desk",
        desk_specs(desk or desk_from_env(os.environ)),
        instructions="An orders-and-refunds desk. Tool failures come back as isError results with errorCategory and isRetryable.",
    )


def main() -> None:
    run_stdio(build_server())
