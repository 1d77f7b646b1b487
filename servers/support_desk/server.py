"""MCP wiring for the support desk: one input model and truthful annotations per tool.

Configuration, read when the server starts (so a test or a lesson can choose it):
``DESK_ROLE`` (guest, agent, supervisor; default agent), ``DESK_FAIL_FIRST`` (the first N
payment-gateway calls fail), ``DESK_FAILURE_RATE`` and ``DESK_SEED`` (a repeatable share
of the rest fail), ``DESK_READS_DOWN`` (1: the orders database does not answer, so
``search_orders`` and ``get_order`` return transient errors; default 0).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from servers.support_desk.desk import ROLE_SCOPES, Caller, Desk, PaymentGateway
from servers.support_desk.tools import (  # noqa: F401 - the interface, re-exported
    MOVES_MONEY,
    READ_ONLY,
    GetOrder,
    RefundOrder,
    SearchOrders,
    desk_specs,
)
from servers.toolkit import build_server as build_mcp_server
from servers.toolkit import run_stdio


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
        reads_down = env.get("DESK_READS_DOWN", "0")
        if reads_down not in ("0", "1"):
            raise ValueError(f"DESK_READS_DOWN={reads_down!r} is not 0 or 1")
    except ValueError as exc:
        raise SystemExit(
            f"Bad desk fault-injection setting ({exc}); DESK_FAIL_FIRST and DESK_SEED are whole numbers, DESK_FAILURE_RATE a number from 0 to 1, DESK_READS_DOWN 0 or 1."
        ) from None
    return Desk(Caller(role), gateway, reads_down=reads_down == "1")


def build_server(desk: Desk | None = None):
    """The support desk server; ``desk`` defaults to one configured from the environment."""
    return build_mcp_server(
        "support-desk",
        desk_specs(desk or desk_from_env(os.environ)),
        instructions="An orders-and-refunds desk. Tool failures come back as isError results with errorCategory and isRetryable.",
    )


def main() -> None:
    run_stdio(build_server())
