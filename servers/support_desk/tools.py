"""The support desk's tools as Claude sees them: names, input models, descriptions, annotations.

The interface without the rules: ``desk_specs(desk)`` publishes any object with the three handler
methods, the reference ``Desk`` or, in lab 1's learner host, the learner's handlers. It imports
nothing of the reference model, so the learner host can use it.
"""

from __future__ import annotations

import mcp_types as types
from pydantic import BaseModel, Field

from servers.toolkit import ToolSpec


class SearchOrders(BaseModel):
    customer_email: str = Field(description="The customer's e-mail address, e.g. alice@example.com.")
    status: str | None = Field(None, description="Only orders in this status: paid, shipped, delivered, refunded.")


class GetOrder(BaseModel):
    order_id: str = Field(description="The order id, ORD- followed by four digits, e.g. ORD-1001.")


class RefundOrder(BaseModel):
    order_id: str = Field(description="The order to refund, e.g. ORD-1001.")
    amount_usd: float = Field(description="Amount to refund in US dollars; at most $500 per transaction.")
    reason: str = Field(description="Why the customer is refunded, for the audit log.")


READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# A refund moves money through the payment gateway and cannot be undone; repeating it refunds twice.
MOVES_MONEY = types.ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)


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
