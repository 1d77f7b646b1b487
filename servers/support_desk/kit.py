"""What lab 1 hands the learner: the desk's data, roles, upstream and retry schedule, but none of its rules.

The lab notebook imports these names, and the learner host injects the same names
into the learner's code when it grades it, so both see the same world. Everything here
comes from ``world``, which imports nothing of the reference model: the learner host
holds no answer key to walk to.
"""

from servers.support_desk.world import (
    ORDER_ID,
    ORDERS,
    REFUND_LIMIT_USD,
    ROLE_SCOPES,
    STATUSES,
    Caller,
    DeskState,
    PaymentGateway,
    UpstreamUnavailable,
    backoff_delay,
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
