"""What lab 1 hands the learner: the desk's data, roles, upstream and retry schedule (``backoff_delay``,
and ``retry_delay``, which honours a server's ``retryAfterSeconds``), but none of its rules.

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
    retry_delay,
)

__all__ = [
    "ORDERS",
    "ORDER_ID",
    "REFUND_LIMIT_USD",
    "ROLE_SCOPES",
    "STATUSES",
    "Caller",
    "DeskState",
    "PaymentGateway",
    "UpstreamUnavailable",
    "backoff_delay",
    "retry_delay",
]
