"""What lab 1 hands the learner: the desk's data, roles and upstream, but none of its rules.

The lab notebook imports these names, and the learner host injects the same names
into the learner's code when it grades it, so both see the same world.
"""

from grader.decisions import backoff_delay
from servers.support_desk.desk import (
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

__all__ = [
    "ORDER_ID",
    "ORDERS",
    "REFUND_LIMIT_USD",
    "ROLE_SCOPES",
    "STATUSES",
    "Caller",
    "DeskState",
    "PaymentGateway",
    "UpstreamUnavailable",
    "backoff_delay",
]
