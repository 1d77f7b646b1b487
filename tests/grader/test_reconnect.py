"""The reconnection rule: the exam's (HTTP/SSE yes, stdio no) and Claude Code's schedule."""

from __future__ import annotations

import pytest

from grader.reconnect import (
    after_reconnects_fail,
    backoff_schedule,
    describe,
    first_connection_retries,
    follow_schedule,
    reconnects,
    when_stdio_exits,
)


def test_remote_servers_reconnect_five_times_from_one_second_doubling() -> None:
    assert backoff_schedule("http") == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert backoff_schedule("sse") == backoff_schedule("http") == backoff_schedule("streamable-http")
    assert sum(backoff_schedule("http")) == 31.0


def test_a_stdio_server_is_never_reconnected_on_its_own() -> None:
    assert not reconnects("stdio")
    assert backoff_schedule("stdio") == []
    assert first_connection_retries("stdio", "transient") == 0


def test_a_failed_first_connection_is_retried_three_times_only_after_a_transient_failure() -> None:
    assert first_connection_retries("http", "transient") == 3
    assert first_connection_retries("sse", "transient") == 3
    assert first_connection_retries("http", "auth") == 0
    assert first_connection_retries("http", "not_found") == 0
    with pytest.raises(ValueError, match="failure"):
        first_connection_retries("http", "gremlins")


def test_after_five_failed_attempts_a_server_is_failed_or_needs_auth() -> None:
    assert after_reconnects_fail() == "failed"
    assert after_reconnects_fail(needs_auth=True) == "needs-auth"


def test_a_stdio_server_that_exits_waits_for_reconnect_in_mcp_interactively_and_restarts_on_next_call_in_print_mode() -> (
    None
):
    assert "/mcp" in when_stdio_exits("interactive")
    assert (
        when_stdio_exits("print") == when_stdio_exits("sdk") == "started again when Claude next calls one of its tools"
    )


def test_following_the_schedule_waits_each_delay_and_stops_at_the_first_success() -> None:
    waited: list[float] = []
    tries = iter([ConnectionError("refused"), ConnectionError("refused"), "session"])

    def connect() -> str:
        outcome = next(tries)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    outcome = follow_schedule(connect, "http", sleep=waited.append)

    assert outcome.connected and outcome.result == "session"
    assert waited == [1.0, 2.0, 4.0]
    assert [a.error is None for a in outcome.attempts] == [False, False, True]
    assert outcome.attempts[0].error == "ConnectionError: refused"


def test_an_error_wrapped_in_exception_groups_is_described_by_the_error_inside() -> None:
    wrapped = ExceptionGroup("outer", [ExceptionGroup("inner", [ConnectionRefusedError("refused")])])
    assert describe(wrapped) == "ConnectionRefusedError: refused"


def test_following_the_schedule_gives_up_after_five_attempts_and_never_tries_stdio() -> None:
    waited: list[float] = []

    def refused() -> None:
        raise ConnectionError("refused")

    gave_up = follow_schedule(refused, "sse", sleep=waited.append)
    stdio = follow_schedule(refused, "stdio", sleep=waited.append)

    assert not gave_up.connected and len(gave_up.attempts) == 5
    assert waited == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert stdio.attempts == [] and not stdio.connected
