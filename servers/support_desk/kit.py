"""What lab 1 hands the learner: the desk's data, roles and upstream, but none of its rules.

The lab notebook imports these names, and the learner host injects the same names
into the learner's code when it grades it, so both see the same world.
"""

import builtins
import types

from grader.decisions import backoff_delay as _backoff_delay
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



def detached(fn: types.FunctionType) -> types.FunctionType:
    """``fn`` with globals of its own (builtins only): the learner gets the function, not, through its
    ``__globals__``, the module that defines it (the reference model, whose ``decide`` is lab 1's answer)."""
    copy = types.FunctionType(fn.__code__, {"__builtins__": builtins}, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__doc__ = fn.__doc__
    return copy


backoff_delay = detached(_backoff_delay)

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
