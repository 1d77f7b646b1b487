"""The support desk's business rules as plain functions: orders, refunds, roles, an upstream.

Every function returns a CallToolResult in wire format built with
``grader.taxonomy``, so each class of the taxonomy appears in the shape of
*Exam guide › The `isError` flag: schema and example*. The server module only wires these
functions to MCP; lessons and the lab reuse the data and the rules from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from grader.taxonomy import (
    business_error,
    empty_result,
    not_found_error,
    permission_error,
    success_result,
    transient_error,
    validation_error,
)
from servers.support_desk.world import (  # noqa: F401 - the desk's world, re-exported for the server and lessons
    ORDER_ID,
    ORDERS,
    REFUND_LIMIT_USD,
    ROLE_SCOPES,
    STATUSES,
    Caller,
    DeskState,
    PaymentGateway,
    UpstreamUnavailable,
)


@dataclass
class Desk(DeskState):
    """The desk's rules over a DeskState; each method is one tool.

    ``reads_down``: the orders database does not answer, so the two reads fail as transient errors
    after the caller's scope and the input are checked (lesson 01 serves a stale cached read then).
    """

    reads_down: bool = False

    def _unreadable(self) -> dict[str, Any] | None:
        if not self.reads_down:
            return None
        return transient_error(
            "The orders database did not answer (timed out after 5 s); nothing was read. Retry this call in a second.",
            retry_after_seconds=1.0,
            code="ORDERS_DB_UNAVAILABLE",
        )

    def _denied(self, scope: str, action: str) -> dict[str, Any] | None:
        if self.caller.can(scope):
            return None
        return permission_error(
            f"Role '{self.caller.role}' may not {action}: it lacks the '{scope}' scope. "
            "Ask a supervisor, or escalate to the coordinator.",
            missing_scope=scope,
            role=self.caller.role,
        )

    def search_orders(self, customer_email: str, status: str | None = None) -> dict[str, Any]:
        if denied := self._denied("orders:read", "read orders"):
            return denied
        if "@" not in customer_email:
            return validation_error(
                f"'{customer_email}' is not an e-mail address. Pass the customer's e-mail, e.g. alice@example.com.",
                field="customer_email",
                reason="not an e-mail address",
            )
        if status is not None and status not in STATUSES:
            return validation_error(
                f"Unknown status '{status}'. Use one of: {', '.join(STATUSES)}, or leave it out.",
                field="status",
                reason=f"must be one of {', '.join(STATUSES)}",
            )
        if down := self._unreadable():
            return down
        found = [
            order
            for order in ORDERS
            if order["customerEmail"] == customer_email.lower() and status in (None, order["status"])
        ]
        if not found:
            what = f" with status '{status}'" if status else ""
            return empty_result(
                f"No orders match {customer_email}{what}. This is a valid answer, not a failure.",
                key="orders",
                count=0,
            )
        return success_result(
            f"{len(found)} order(s) for {customer_email}: " + ", ".join(o["orderId"] for o in found) + ".",
            {"orders": found, "count": len(found)},
        )

    def get_order(self, order_id: str) -> dict[str, Any]:
        if denied := self._denied("orders:read", "read orders"):
            return denied
        if not ORDER_ID.match(order_id):
            return validation_error(
                f"'{order_id}' is not an order id. Order ids look like ORD-1234.",
                field="order_id",
                reason="must match ORD-NNNN",
            )
        if down := self._unreadable():
            return down
        order = next((o for o in ORDERS if o["orderId"] == order_id), None)
        if order is None:
            return not_found_error(
                f"There is no order {order_id}. Check the id with the customer, or search by e-mail.",
                code="ORDER_NOT_FOUND",
                orderId=order_id,
            )
        refunded = self.refunded_usd.get(order_id, 0.0)
        return success_result(
            f"Order {order_id}: ${order['totalUsd']:.2f}, {order['status']}.",
            {"order": {**order, "refundedUsd": refunded}},
        )

    def refund_order(self, order_id: str, amount_usd: float, reason: str) -> dict[str, Any]:
        if denied := self._denied("refunds:write", "issue refunds"):
            return denied
        if not ORDER_ID.match(order_id):
            return validation_error(
                f"'{order_id}' is not an order id. Order ids look like ORD-1234.",
                field="order_id",
                reason="must match ORD-NNNN",
            )
        if not math.isfinite(amount_usd) or amount_usd <= 0:
            return validation_error(
                f"The refund amount must be a positive number of dollars, got {amount_usd}.",
                field="amount_usd",
                reason="must be greater than 0",
            )
        order = next((o for o in ORDERS if o["orderId"] == order_id), None)
        if order is None:
            return not_found_error(
                f"There is no order {order_id}; nothing was refunded.", code="ORDER_NOT_FOUND", orderId=order_id
            )
        if amount_usd > REFUND_LIMIT_USD:
            return business_error(
                f"Refund of ${amount_usd:g} exceeds the ${REFUND_LIMIT_USD} single-transaction policy. "
                "Ask the customer to split the refund or open a manager-approval ticket.",
                code="REFUND_LIMIT_EXCEEDED",
                customer_message=f"We can only process refunds up to ${REFUND_LIMIT_USD} in one transaction.",
                limit=REFUND_LIMIT_USD,
                requested=amount_usd,
            )
        remaining = order["totalUsd"] - self.refunded_usd.get(order_id, 0.0)
        if order["status"] == "refunded":
            remaining = 0.0
        if amount_usd > remaining:
            return business_error(
                f"Order {order_id} has only ${remaining:.2f} left to refund; ${amount_usd:g} was asked. "
                "Refund at most the remaining amount.",
                code="REFUND_EXCEEDS_ORDER",
                customer_message=f"This order has ${remaining:.2f} left that can be refunded.",
                limit=remaining,
                requested=amount_usd,
            )
        try:
            refund_id = self.gateway.refund(order_id, amount_usd)
        except UpstreamUnavailable as exc:
            return transient_error(
                f"The payment gateway is unavailable ({exc}). Nothing was charged or refunded; "
                "retry this call in a few seconds.",
                retry_after_seconds=2.0,
                code="GATEWAY_UNAVAILABLE",
            )
        self.refunded_usd[order_id] = self.refunded_usd.get(order_id, 0.0) + amount_usd
        return success_result(
            f"Refunded ${amount_usd:.2f} on {order_id} (refund {refund_id}).",
            {"refundId": refund_id, "orderId": order_id, "amountUsd": amount_usd, "reason": reason},
        )
