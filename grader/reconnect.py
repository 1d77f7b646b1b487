"""What happens when an MCP server's connection fails or drops: the exam's rule and Claude Code's schedule.

Sources:

- *Exam guide › Verifying the connection (`/mcp`)*: HTTP/SSE servers reconnect automatically up to five
  times with exponential backoff; stdio servers, local subprocesses, are not reconnected.
- *Claude Code docs, MCP › Automatic reconnection*: the delays (1 s, doubled each time); three retries of
  a failed first connection after a transient error, none after an authentication or "not found" error;
  what becomes of a stdio server that exits.

Plain functions, no MCP dependency: the lesson, its tests and any client that wants to behave like
Claude Code use the same rule. ``follow_schedule`` runs it against a real connect function.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

MAX_RECONNECTS = 5  # attempts after a remote server drops during a session
FIRST_DELAY_SECONDS = 1.0  # doubled before each further attempt
FIRST_CONNECTION_RETRIES = 3  # a remote server's failed first connection, after a transient error
REMOTE = ("http", "sse", "streamable-http")
FAILURES = ("transient", "auth", "not_found")  # transient: a 5xx reply, a refused connection, a timeout
MODES = ("interactive", "print", "sdk")  # a terminal session, ``claude -p``, an Agent SDK session


def transport_of(kind: str) -> str:
    """The transport a configuration's ``type`` names (``streamable-http`` is an alias of ``http``)."""
    kind = kind.strip().lower()
    return "http" if kind == "streamable-http" else kind


def reconnects(kind: str) -> bool:
    """The exam's rule: does a server of this transport reconnect on its own when it drops?"""
    return transport_of(kind) in ("http", "sse")


def backoff_schedule(kind: str) -> list[float]:
    """Seconds to wait before each automatic reconnection attempt after the server dropped mid-session.

    HTTP and SSE: five attempts, 1 s first and doubled each time (1, 2, 4, 8, 16). stdio: none.
    """
    if not reconnects(kind):
        return []
    return [FIRST_DELAY_SECONDS * 2**n for n in range(MAX_RECONNECTS)]


def first_connection_retries(kind: str, failure: str) -> int:
    """How many times Claude Code retries a server's failed FIRST connection.

    A remote (HTTP or SSE) server after a transient failure: three. A stdio server, or an
    authentication or "not found" failure (which only a change of configuration fixes): none.
    """
    if failure not in FAILURES:
        raise ValueError(f"failure={failure!r}: choose one of {', '.join(FAILURES)}.")
    return FIRST_CONNECTION_RETRIES if reconnects(kind) and failure == "transient" else 0


def after_reconnects_fail(needs_auth: bool = False) -> str:
    """The status a remote server gets once all five reconnection attempts failed."""
    return "needs-auth" if needs_auth else "failed"


def when_stdio_exits(mode: str) -> str:
    """What Claude Code does when a stdio server's process exits during a session."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: choose one of {', '.join(MODES)}.")
    if mode == "interactive":
        return "failed: choose Reconnect in the server's menu in /mcp"
    return "started again when Claude next calls one of its tools"


def describe(exc: BaseException) -> str:
    """``Type: message`` of the first real error inside (task groups wrap a transport's errors in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class Attempt:
    number: int
    waited: float
    error: str | None  # None: connected


@dataclass
class Outcome(Generic[T]):
    result: T | None
    attempts: list[Attempt]

    @property
    def connected(self) -> bool:
        return self.result is not None


def follow_schedule(
    connect: Callable[[], T],
    kind: str = "http",
    *,
    sleep: Callable[[float], None] = time.sleep,
    before_attempt: Callable[[int], None] | None = None,
) -> Outcome[T]:
    """Reconnect as Claude Code does: wait, try ``connect()``, and repeat along ``backoff_schedule(kind)``.

    ``connect`` raises on failure. ``sleep`` can be replaced (a test records the delays instead of
    waiting); ``before_attempt(n)`` runs before attempt n. A stdio server gets no attempt at all.
    """
    attempts: list[Attempt] = []
    for number, delay in enumerate(backoff_schedule(kind), start=1):
        sleep(delay)
        if before_attempt is not None:
            before_attempt(number)
        try:
            result = connect()
        except Exception as exc:  # noqa: BLE001 - any failure to connect is one failed attempt
            attempts.append(Attempt(number, delay, describe(exc)))
            continue
        attempts.append(Attempt(number, delay, None))
        return Outcome(result, attempts)
    return Outcome(None, attempts)
