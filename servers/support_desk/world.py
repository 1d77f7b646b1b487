"""The support desk's world, without its rules: orders, roles, the upstream, a session's state.

What lab 1 hands the learner comes from here (``servers.support_desk.kit``), and the learner
host imports it while it serves a submission, so this module imports nothing of the reference
model: the rules that turn a request into a result live in ``desk.py``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

# The retry schedule lab 1 hands the learner (backoff_delay, and retry_delay, which honours the
# server's hint); grader.decisions uses the same one.
BASE_DELAY_SECONDS = 0.5
BACKOFF_FACTOR = 2.0


def backoff_delay(attempt: int, *, base: float = BASE_DELAY_SECONDS, factor: float = BACKOFF_FACTOR) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based): base, base*2, base*4, ..."""
    if attempt < 1:
        raise ValueError("attempts are numbered from 1")
    return base * factor ** (attempt - 1)


def retry_delay(structured: dict[str, Any], attempt: int) -> float:
    """Seconds to wait after failed attempt number ``attempt``: the server's ``retryAfterSeconds`` hint
    when it asks for longer than ``backoff_delay(attempt)``, else the backoff. Never sooner than asked."""
    hint = structured.get("retryAfterSeconds")
    delay = backoff_delay(attempt)
    if isinstance(hint, (int, float)) and not isinstance(hint, bool) and hint > delay:
        return float(hint)
    return delay


# The exam guide's example policy: "Refund of $750 exceeds the $500 single-transaction policy".
REFUND_LIMIT_USD = 500

ROLE_SCOPES: dict[str, frozenset[str]] = {
    "guest": frozenset(),
    "agent": frozenset({"orders:read"}),
    "supervisor": frozenset({"orders:read", "refunds:write"}),
}

ORDER_ID = re.compile(r"^ORD-\d{4}$")
STATUSES = ("paid", "shipped", "delivered", "refunded")

ORDERS: tuple[dict[str, Any], ...] = (
    {"orderId": "ORD-1001", "customerEmail": "alice@example.com", "totalUsd": 120.0, "status": "delivered"},
    {"orderId": "ORD-1002", "customerEmail": "alice@example.com", "totalUsd": 900.0, "status": "shipped"},
    {"orderId": "ORD-1003", "customerEmail": "bob@example.com", "totalUsd": 45.5, "status": "refunded"},
    {"orderId": "ORD-1004", "customerEmail": "carol@example.com", "totalUsd": 650.0, "status": "paid"},
    {"orderId": "ORD-1005", "customerEmail": "dave@example.com", "totalUsd": 75.0, "status": "delivered"},
)


class UpstreamUnavailable(Exception):
    """The payment gateway did not answer (timeout, 503, connection reset)."""


@dataclass
class PaymentGateway:
    """An upstream dependency with deterministic fault injection.

    ``fail_first`` makes the first N calls fail; ``failure_rate`` with ``seed`` makes a
    repeatable pseudo-random share of the rest fail.
    """

    fail_first: int = 0
    failure_rate: float = 0.0
    seed: int = 0
    calls: int = 0
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def refund(self, order_id: str, amount_usd: float) -> str:
        self.calls += 1
        failed_by_rate = self._rng.random() < self.failure_rate
        if self.calls <= self.fail_first or failed_by_rate:
            raise UpstreamUnavailable("payment gateway timed out after 5 s")
        return f"RF-{order_id[4:]}-{self.calls:03d}"


@dataclass(frozen=True)
class Caller:
    """Who is calling: a role and the scopes it grants (set when the server starts)."""

    role: str

    @property
    def scopes(self) -> frozenset[str]:
        return ROLE_SCOPES.get(self.role, frozenset())

    def can(self, scope: str) -> bool:
        return scope in self.scopes


@dataclass
class DeskState:
    """One desk session's state: who calls, the upstream gateway, and the refunds made so far."""

    caller: Caller
    gateway: PaymentGateway
    refunded_usd: dict[str, float] = field(default_factory=dict)
