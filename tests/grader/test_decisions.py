"""Every branch of the exam guide's retry/escalate decision tree, and the backoff schedule."""

from __future__ import annotations

import itertools

import pytest

from grader.decisions import (
    BASE_DELAY_SECONDS,
    Action,
    MalformedResult,
    backoff_delay,
    backoff_schedule,
    check_wire_result,
    decide,
    retry_delay,
)
from grader.taxonomy import (
    OPERATION_FAILED,
    business_error,
    empty_result,
    error_result,
    not_found_error,
    permission_error,
    success_result,
    transient_error,
    validation_error,
)


def transient(retry_after: float = 0.0, **structured_overrides):
    result = transient_error("The gateway timed out; retry shortly.", retry_after_seconds=retry_after)
    result["structuredContent"].update(structured_overrides)
    return result


def test_a_non_error_result_is_a_success() -> None:
    decision = decide(success_result("1 order: ORD-1001.", {"orders": [{"orderId": "ORD-1001"}], "count": 1}))

    assert decision.action is Action.SUCCESS
    assert decision.category is None


def test_a_result_without_is_error_defaults_to_success() -> None:
    assert decide({"content": [{"type": "text", "text": "Done."}]}).action is Action.SUCCESS


def test_an_intentionally_empty_success_is_an_empty_result() -> None:
    decision = decide(empty_result("No orders match.", key="orders", count=0))

    assert decision.action is Action.EMPTY_RESULT


def test_a_success_with_no_content_is_an_empty_result() -> None:
    assert decide({"isError": False, "content": []}).action is Action.EMPTY_RESULT


def test_not_found_is_a_legitimate_empty_result_not_a_failure() -> None:
    decision = decide(not_found_error("There is no order ORD-9999.", code="ORDER_NOT_FOUND"))

    assert decision.action is Action.EMPTY_RESULT
    assert decision.category == "not_found"


def test_a_retryable_transient_error_with_attempts_left_is_retried_after_the_backoff() -> None:
    decision = decide(transient(retry_after=0.0), attempt=1, max_attempts=3)

    assert decision.action is Action.RETRY
    assert decision.category == "transient"
    assert decision.retryable is True
    assert decision.details == {"delaySeconds": backoff_delay(1), "nextAttempt": 2}


def test_the_second_retry_waits_twice_as_long_as_the_first() -> None:
    first = decide(transient(retry_after=0.0), attempt=1, max_attempts=3)
    second = decide(transient(retry_after=0.0), attempt=2, max_attempts=3)

    assert second.action is Action.RETRY
    assert second.details["delaySeconds"] == 2 * first.details["delaySeconds"]
    assert second.details["nextAttempt"] == 3


def test_the_servers_retry_after_hint_wins_when_it_is_longer_than_the_backoff() -> None:
    decision = decide(transient(retry_after=7.0), attempt=1, max_attempts=3)

    assert decision.action is Action.RETRY
    assert decision.details["delaySeconds"] == 7.0


def test_a_retry_after_hint_shorter_than_the_backoff_is_ignored() -> None:
    decision = decide(transient(retry_after=0.1), attempt=2, max_attempts=3)

    assert decision.details["delaySeconds"] == backoff_delay(2)


def test_a_transient_error_on_the_last_attempt_is_escalated() -> None:
    decision = decide(transient(), attempt=3, max_attempts=3)

    assert decision.action is Action.ESCALATE
    assert decision.category == "transient"
    assert decision.details == {"attempts": 3}
    assert "3 of 3" in decision.reason


@pytest.mark.parametrize(
    ("retryable", "reported"), [(False, False), (None, None), ("yes", None)], ids=["false", "missing", "not-a-bool"]
)
def test_a_transient_error_not_marked_retryable_is_escalated(retryable, reported) -> None:
    result = transient()
    if retryable is None:
        del result["structuredContent"]["isRetryable"]
    else:
        result["structuredContent"]["isRetryable"] = retryable

    decision = decide(result, attempt=1, max_attempts=3)

    assert decision.action is Action.ESCALATE
    assert decision.category == "transient"
    assert decision.retryable is reported


def test_a_validation_error_is_replanned_with_the_field_never_replayed() -> None:
    decision = decide(validation_error("Bad amount.", field="amount_usd", reason="must be > 0"))

    assert decision.action is Action.REPLAN
    assert decision.category == "validation"
    assert decision.details == {"field": "amount_usd"}
    assert "amount_usd" in decision.reason


def test_a_validation_error_is_replanned_even_with_attempts_left_and_retryable_true() -> None:
    result = validation_error("Bad amount.", field="amount_usd", reason="must be > 0")
    result["structuredContent"]["isRetryable"] = True

    assert decide(result, attempt=1, max_attempts=3).action is Action.REPLAN


def test_a_permission_error_is_escalated_with_the_missing_scope_and_role() -> None:
    decision = decide(permission_error("No refunds for agents.", missing_scope="refunds:write", role="agent"))

    assert decision.action is Action.ESCALATE
    assert decision.category == "permission"
    assert decision.details == {"missingScope": "refunds:write", "role": "agent"}
    assert "refunds:write" in decision.reason and "agent" in decision.reason


def test_a_business_error_is_surfaced_with_its_customer_message_and_stopped() -> None:
    decision = decide(
        business_error(
            "Too much.", code="REFUND_LIMIT_EXCEEDED", customer_message="Up to $500 only.", limit=500, requested=750
        )
    )

    assert decision.action is Action.SURFACE_AND_STOP
    assert decision.category == "business"
    assert decision.details == {"customerMessage": "Up to $500 only."}


def test_business_error_is_never_retried_even_when_wrongly_marked_retryable() -> None:
    result = business_error(
        "Too much.", code="REFUND_LIMIT_EXCEEDED", customer_message="Up to $500.", limit=500, requested=750
    )
    result["structuredContent"]["isRetryable"] = True

    decision = decide(result, attempt=1, max_attempts=3)

    assert decision.action is Action.SURFACE_AND_STOP
    assert decision.details["customerMessage"] == "Up to $500."


def test_an_error_without_a_category_is_escalated_as_unclassified() -> None:
    decision = decide(
        {"isError": True, "content": [{"type": "text", "text": "Boom"}], "structuredContent": {"code": "X"}}
    )

    assert decision.action is Action.ESCALATE
    assert decision.category is None
    assert "Unclassified" in decision.reason and "no errorCategory" in decision.reason


def test_an_error_with_an_unknown_category_is_escalated_as_unclassified() -> None:
    result = {"isError": True, "content": [], "structuredContent": {"errorCategory": "flaky", "isRetryable": True}}

    decision = decide(result)

    assert decision.action is Action.ESCALATE
    assert decision.category == "flaky"
    assert "unknown errorCategory 'flaky'" in decision.reason


def test_an_error_with_a_non_string_category_is_escalated_not_crashed() -> None:
    decision = decide({"isError": True, "structuredContent": {"errorCategory": ["transient"]}})

    assert decision.action is Action.ESCALATE
    assert decision.category is None


def test_the_operation_failed_anti_pattern_is_escalated_as_unclassified() -> None:
    decision = decide(OPERATION_FAILED, attempt=1, max_attempts=3)

    assert decision.action is Action.ESCALATE
    assert decision.category is None
    assert "Unclassified" in decision.reason


def test_decision_to_json_flattens_details_beside_action_and_reason() -> None:
    data = decide(transient(retry_after=0.0)).to_json()

    assert data["action"] == "retry"
    assert data["category"] == "transient"
    assert data["retryable"] is True
    assert data["delaySeconds"] == BASE_DELAY_SECONDS
    assert data["nextAttempt"] == 2
    assert "details" not in data
    assert isinstance(data["reason"], str) and data["reason"]


@pytest.mark.parametrize(
    "malformed",
    [
        pytest.param([], id="a-list"),
        pytest.param("isError: true", id="a-string"),
        pytest.param(None, id="null"),
        pytest.param({"is_error": True, "content": []}, id="snake-case-is_error"),
        pytest.param({"isError": True, "structured_content": {}}, id="snake-case-structured_content"),
        pytest.param({"isError": True, "content": "Operation failed"}, id="content-not-a-list"),
        pytest.param({"isError": "true", "content": []}, id="isError-a-string"),
        pytest.param({"isError": 1, "content": []}, id="isError-an-int"),
        pytest.param({"isError": True, "structuredContent": ["transient"]}, id="structuredContent-a-list"),
        pytest.param({"isError": True, "structuredContent": "transient"}, id="structuredContent-a-string"),
        pytest.param({}, id="empty-object"),
        pytest.param({"errorCategory": "transient"}, id="structured-fields-at-top-level"),
    ],
)
def test_a_malformed_result_raises_malformed_result(malformed) -> None:
    with pytest.raises(MalformedResult):
        decide(malformed)
    with pytest.raises(MalformedResult):
        check_wire_result(malformed)


def test_the_snake_case_complaint_names_the_camel_case_keys() -> None:
    with pytest.raises(MalformedResult, match="isError, structuredContent"):
        check_wire_result({"is_error": True})


def test_malformed_result_is_a_value_error() -> None:
    assert issubclass(MalformedResult, ValueError)


def test_check_wire_result_returns_a_valid_result_unchanged() -> None:
    result = transient()

    assert check_wire_result(result) is result


def test_attempts_are_counted_from_one() -> None:
    with pytest.raises(ValueError):
        decide(transient(), attempt=0)
    with pytest.raises(ValueError):
        decide(transient(), max_attempts=0)
    with pytest.raises(ValueError):
        backoff_delay(0)


def test_backoff_is_exponential() -> None:
    assert [backoff_delay(n) for n in (1, 2, 3, 4)] == [
        BASE_DELAY_SECONDS,
        BASE_DELAY_SECONDS * 2,
        BASE_DELAY_SECONDS * 4,
        BASE_DELAY_SECONDS * 8,
    ]
    assert backoff_delay(3, base=1.0, factor=3.0) == 9.0


@pytest.mark.parametrize("max_attempts", [1, 2, 3, 5])
def test_the_backoff_schedule_has_one_wait_fewer_than_the_attempts(max_attempts: int) -> None:
    schedule = backoff_schedule(max_attempts)

    assert len(schedule) == max_attempts - 1
    assert all(later == 2 * earlier for earlier, later in itertools.pairwise(schedule))


def test_the_default_schedule_is_three_attempts_with_two_waits() -> None:
    assert backoff_schedule() == [0.5, 1.0]


def test_retry_delay_ignores_a_boolean_or_missing_hint() -> None:
    assert retry_delay({"retryAfterSeconds": True}, 1) == backoff_delay(1)
    assert retry_delay({}, 2) == backoff_delay(2)
    assert retry_delay({"retryAfterSeconds": "30"}, 1) == backoff_delay(1)


def test_every_class_of_the_taxonomy_gets_the_exam_guides_action() -> None:
    expected = {
        "transient": Action.RETRY,
        "validation": Action.REPLAN,
        "permission": Action.ESCALATE,
        "business": Action.SURFACE_AND_STOP,
        "not_found": Action.EMPTY_RESULT,
    }
    for category, action in expected.items():
        result = error_result(category, f"A {category} error.", code="X")
        assert decide(result, attempt=1, max_attempts=3).action is action, category
