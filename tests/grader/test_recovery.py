"""Local recovery in a subagent and the escalation envelope (*Exam guide › Local recovery in the subagent vs escalation to the coordinator*)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from grader.decisions import backoff_schedule
from grader.recovery import FakeClock, recover
from grader.taxonomy import (
    business_error,
    not_found_error,
    permission_error,
    success_result,
    transient_error,
    validation_error,
)

PRIMARY, FALLBACK = "primary", "fallback"


def ok(item: Any) -> dict[str, Any]:
    return success_result(f"Order {item}.", {"order": {"orderId": item}})


def down() -> dict[str, Any]:
    # retryAfterSeconds 0 so the wait is the pure backoff.
    return transient_error("The gateway timed out; retry shortly.", retry_after_seconds=0.0)


class Upstream:
    """A scripted ``call``: per (endpoint, item), a list of answers played in order; records every call."""

    def __init__(self, default: Callable[[str, Any], dict[str, Any]] = lambda endpoint, item: ok(item)) -> None:
        self.scripts: dict[tuple[str, Any], list[dict[str, Any]]] = {}
        self.default = default
        self.calls: list[tuple[str, Any]] = []

    def script(self, endpoint: str, item: Any, *answers: dict[str, Any]) -> None:
        self.scripts[(endpoint, item)] = list(answers)

    def __call__(self, endpoint: str, item: Any) -> dict[str, Any]:
        self.calls.append((endpoint, item))
        answers = self.scripts.get((endpoint, item))
        if answers:
            return answers.pop(0) if len(answers) > 1 else answers[0]
        return self.default(endpoint, item)

    def count(self, endpoint: str | None = None, item: Any = None) -> int:
        return sum(1 for e, i in self.calls if (endpoint is None or e == endpoint) and (item is None or i == item))


def test_all_items_succeeding_first_time_complete_without_sleeping() -> None:
    clock, upstream = FakeClock(), Upstream()

    envelope = recover(["A", "B", "C"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep)

    assert envelope["status"] == "complete"
    assert [r["item"] for r in envelope["results"]] == ["A", "B", "C"]
    assert all(r["endpoint"] == PRIMARY for r in envelope["results"])
    assert envelope["results"][0]["data"] == {"order": {"orderId": "A"}}
    assert envelope["attempts"] == {"endpointsTried": [PRIMARY], "retryCount": 0, "calls": 3}
    assert clock.sleeps == []
    assert upstream.count(FALLBACK) == 0


def test_a_transient_error_then_success_is_retried_once_after_the_backoff() -> None:
    clock, upstream = FakeClock(), Upstream()
    upstream.script(PRIMARY, "A", down(), ok("A"))

    envelope = recover(["A"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep)

    assert envelope["status"] == "complete"
    assert envelope["results"] == [{"item": "A", "endpoint": PRIMARY, "data": {"order": {"orderId": "A"}}}]
    assert envelope["attempts"] == {"endpointsTried": [PRIMARY], "retryCount": 1, "calls": 2}
    assert clock.sleeps == [backoff_schedule()[0]]


def test_recovery_waits_the_servers_retry_after_hint_when_it_is_longer() -> None:
    clock, upstream = FakeClock(), Upstream()
    upstream.script(PRIMARY, "A", transient_error("Rate limited.", retry_after_seconds=4.0), ok("A"))

    recover(["A"], upstream, [PRIMARY], sleep=clock.sleep)

    assert clock.sleeps == [4.0]


def test_a_primary_down_on_every_attempt_fails_over_to_the_fallback() -> None:
    clock, upstream = FakeClock(), Upstream()
    upstream.script(PRIMARY, "A", down())

    envelope = recover(["A"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep, max_attempts=3)

    assert envelope["status"] == "complete"
    assert envelope["results"][0]["endpoint"] == FALLBACK
    assert envelope["attempts"]["endpointsTried"] == [PRIMARY, FALLBACK]
    assert upstream.count(PRIMARY) == 3
    assert upstream.count(FALLBACK) == 1
    assert envelope["attempts"] == {"endpointsTried": [PRIMARY, FALLBACK], "retryCount": 2, "calls": 4}
    assert clock.sleeps == backoff_schedule(3)


@pytest.mark.parametrize("max_attempts", [1, 2, 4])
def test_calls_per_endpoint_are_capped_at_max_attempts(max_attempts: int) -> None:
    clock, upstream = FakeClock(), Upstream(default=lambda endpoint, item: down())

    envelope = recover(["A"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep, max_attempts=max_attempts)

    assert envelope["status"] == "escalated"
    assert upstream.count(PRIMARY) == max_attempts
    assert upstream.count(FALLBACK) == max_attempts
    assert clock.sleeps == backoff_schedule(max_attempts) * 2


def test_everything_transient_escalates_with_partial_results_and_an_exact_attempt_log() -> None:
    clock, upstream = FakeClock(), Upstream()
    for endpoint in (PRIMARY, FALLBACK):
        upstream.script(endpoint, "B", down())

    envelope = recover(["A", "B", "C", "D"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep, max_attempts=3)

    assert envelope["status"] == "escalated"
    assert envelope["errorCategory"] == "transient"
    assert envelope["isRetryable"] is True
    assert envelope["action"] == "escalate"
    assert envelope["failedItem"] == "B"
    assert envelope["partialResults"] == [{"item": "A", "endpoint": PRIMARY, "data": {"order": {"orderId": "A"}}}]
    assert envelope["notAttempted"] == ["C", "D"]
    # A: 1 call; B: 3 on primary + 3 on fallback, with 2 retries on each.
    assert envelope["attempts"] == {"endpointsTried": [PRIMARY, FALLBACK], "retryCount": 4, "calls": 7}
    assert upstream.count(item="C") == upstream.count(item="D") == 0
    description = envelope["description"]
    assert "'B'" in description and "transient" in description
    assert "7 call(s)" in description and "4 retry(ies)" in description
    assert "primary, fallback" in description
    assert "1 item(s) done" in description
    assert "The gateway timed out" in description


def test_a_validation_error_is_never_replayed_and_escalates_for_a_replan() -> None:
    clock, upstream = FakeClock(), Upstream()
    upstream.script(PRIMARY, "B", validation_error("Bad order id.", field="order_id", reason="must match ORD-NNNN"))

    envelope = recover(["A", "B", "C"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep)

    assert upstream.count(item="B") == 1
    assert upstream.count(FALLBACK) == 0
    assert clock.sleeps == []
    assert envelope["status"] == "escalated"
    assert envelope["action"] == "replan"
    assert envelope["errorCategory"] == "validation"
    assert envelope["isRetryable"] is False
    assert envelope["field"] == "order_id"
    assert envelope["failedItem"] == "B"
    assert [r["item"] for r in envelope["partialResults"]] == ["A"]
    assert envelope["notAttempted"] == ["C"]
    assert envelope["attempts"] == {"endpointsTried": [PRIMARY], "retryCount": 0, "calls": 2}


def test_a_business_error_surfaces_the_customer_message_without_a_retry() -> None:
    clock, upstream = FakeClock(), Upstream()
    upstream.script(
        PRIMARY,
        "A",
        business_error(
            "Refund of $750 exceeds the $500 policy.",
            code="REFUND_LIMIT_EXCEEDED",
            customer_message="We can only process refunds up to $500 in one transaction.",
            limit=500,
            requested=750,
        ),
    )

    envelope = recover(["A", "B"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep)

    assert upstream.calls == [(PRIMARY, "A")]
    assert clock.sleeps == []
    assert envelope["status"] == "escalated"
    assert envelope["action"] == "surface_and_stop"
    assert envelope["errorCategory"] == "business"
    assert envelope["customerMessage"] == "We can only process refunds up to $500 in one transaction."
    assert envelope["notAttempted"] == ["B"]
    assert envelope["partialResults"] == []


def test_a_business_error_wrongly_marked_retryable_is_still_not_retried() -> None:
    clock, upstream = FakeClock(), Upstream()
    wrong = business_error(
        "Closed.", code="TICKET_CLOSED", customer_message="Ticket closed.", limit=None, requested=None
    )
    wrong["structuredContent"]["isRetryable"] = True
    upstream.script(PRIMARY, "A", wrong)

    envelope = recover(["A"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep)

    assert upstream.count() == 1
    assert envelope["action"] == "surface_and_stop"


def test_a_permission_error_escalates_with_the_missing_scope() -> None:
    clock, upstream = FakeClock(), Upstream()
    upstream.script(PRIMARY, "A", permission_error("No refunds.", missing_scope="refunds:write", role="agent"))

    envelope = recover(["A"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep)

    assert upstream.count() == 1
    assert clock.sleeps == []
    assert envelope["status"] == "escalated"
    assert envelope["action"] == "escalate"
    assert envelope["errorCategory"] == "permission"
    assert envelope["missingScope"] == "refunds:write"
    assert envelope["role"] == "agent"


def test_an_unclassified_error_escalates_at_once() -> None:
    clock, upstream = FakeClock(), Upstream()
    upstream.script(PRIMARY, "A", {"isError": True, "content": [{"type": "text", "text": "Operation failed"}]})

    envelope = recover(["A"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep)

    assert upstream.count() == 1
    assert envelope["status"] == "escalated"
    assert envelope["errorCategory"] is None
    assert envelope["isRetryable"] is False
    assert "Operation failed" in envelope["description"]


def test_a_not_found_item_counts_as_done_with_an_empty_answer() -> None:
    clock, upstream = FakeClock(), Upstream()
    upstream.script(PRIMARY, "X", not_found_error("No order X.", code="ORDER_NOT_FOUND"))

    envelope = recover(["X", "A"], upstream, [PRIMARY], sleep=clock.sleep)

    assert envelope["status"] == "complete"
    assert [r["item"] for r in envelope["results"]] == ["X", "A"]
    assert upstream.count(item="X") == 1


def test_a_stale_cached_read_is_served_when_every_endpoint_is_down() -> None:
    clock, upstream = FakeClock(), Upstream(default=lambda endpoint, item: down())
    cache = {"A": {"order": {"orderId": "A", "asOf": "yesterday"}}}

    envelope = recover(["A"], upstream, [PRIMARY, FALLBACK], sleep=clock.sleep, cache=cache)

    assert envelope["status"] == "complete"
    assert envelope["results"] == [
        {"item": "A", "endpoint": "cache", "data": {"order": {"orderId": "A", "asOf": "yesterday"}}, "stale": True}
    ]
    assert upstream.count(PRIMARY) == 3 and upstream.count(FALLBACK) == 3


def test_the_cache_is_not_used_while_an_endpoint_still_answers() -> None:
    clock, upstream = FakeClock(), Upstream()
    envelope = recover(["A"], upstream, [PRIMARY], sleep=clock.sleep, cache={"A": "old"})

    assert envelope["results"][0]["endpoint"] == PRIMARY
    assert "stale" not in envelope["results"][0]


def test_an_item_missing_from_the_cache_still_escalates() -> None:
    clock, upstream = FakeClock(), Upstream(default=lambda endpoint, item: down())

    envelope = recover(["A", "B"], upstream, [PRIMARY], sleep=clock.sleep, cache={"A": "old"})

    assert envelope["status"] == "escalated"
    assert envelope["failedItem"] == "B"
    assert envelope["partialResults"] == [{"item": "A", "endpoint": "cache", "data": "old", "stale": True}]


def test_recover_with_no_endpoints_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one endpoint"):
        recover(["A"], Upstream(), [], sleep=FakeClock().sleep)


def test_the_fake_clock_records_waits_without_sleeping() -> None:
    clock = FakeClock()
    clock.sleep(0.5)
    clock.sleep(1.0)

    assert clock.sleeps == [0.5, 1.0]
    assert clock.now == 1.5
