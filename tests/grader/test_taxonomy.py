"""The taxonomy builders produce results in the exam guide's wire shape (*Exam guide › Error category taxonomy*, *Exam guide › The `isError` flag: schema and example*)."""

from __future__ import annotations

import pytest

from grader.taxonomy import (
    COMMON_FIELDS,
    GUIDE_REFUND_EXAMPLE,
    OPERATION_FAILED,
    REQUIRED_FIELDS,
    TYPICAL_RETRYABLE,
    Category,
    business_error,
    empty_result,
    error_result,
    is_empty_success,
    is_error,
    not_found_error,
    permission_error,
    result_text,
    success_result,
    transient_error,
    validation_error,
)

BUILT = {
    Category.TRANSIENT: transient_error("The gateway timed out; retry in a few seconds.", retry_after_seconds=2.0),
    Category.VALIDATION: validation_error("amount_usd must be positive.", field="amount_usd", reason="must be > 0"),
    Category.BUSINESS: business_error(
        "Refund exceeds the policy.",
        code="REFUND_LIMIT_EXCEEDED",
        customer_message="Up to $500.",
        limit=500,
        requested=750,
    ),
    Category.PERMISSION: permission_error(
        "Role agent lacks refunds:write.", missing_scope="refunds:write", role="agent"
    ),
    Category.NOT_FOUND: not_found_error("There is no order ORD-9999.", code="ORDER_NOT_FOUND", orderId="ORD-9999"),
}


@pytest.mark.parametrize("category", list(Category), ids=str)
def test_each_builder_returns_an_error_result_in_the_exam_guides_shape(category: Category) -> None:
    result = BUILT[category]

    assert result["isError"] is True
    assert is_error(result)
    assert isinstance(result["content"], list) and len(result["content"]) == 1
    assert result["content"][0]["type"] == "text"
    assert result["content"][0]["text"].strip()
    structured = result["structuredContent"]
    for key in (*COMMON_FIELDS, *REQUIRED_FIELDS[category]):
        assert key in structured, f"{category} result lacks {key}"
    assert structured["errorCategory"] == category.value
    assert structured["isRetryable"] is TYPICAL_RETRYABLE[category]
    assert isinstance(structured["code"], str) and structured["code"]


def test_only_transient_errors_are_typically_retryable() -> None:
    assert {c for c, retryable in TYPICAL_RETRYABLE.items() if retryable} == {Category.TRANSIENT}


def test_builders_put_the_class_fields_in_structured_content_in_camel_case() -> None:
    assert BUILT[Category.TRANSIENT]["structuredContent"]["retryAfterSeconds"] == 2.0
    assert BUILT[Category.VALIDATION]["structuredContent"]["field"] == "amount_usd"
    assert BUILT[Category.VALIDATION]["structuredContent"]["reason"] == "must be > 0"
    assert BUILT[Category.BUSINESS]["structuredContent"]["customerMessage"] == "Up to $500."
    assert BUILT[Category.PERMISSION]["structuredContent"]["missingScope"] == "refunds:write"
    assert BUILT[Category.PERMISSION]["structuredContent"]["role"] == "agent"
    assert BUILT[Category.NOT_FOUND]["structuredContent"]["orderId"] == "ORD-9999"
    for result in BUILT.values():
        assert not any("_" in key for key in result), "wire keys are camelCase"
        assert "missing_scope" not in result["structuredContent"]
        assert "customer_message" not in result["structuredContent"]


def test_an_explicit_retryable_overrides_the_typical_value() -> None:
    result = error_result(Category.TRANSIENT, "Rate limited for good.", code="QUOTA_GONE", retryable=False)

    assert result["structuredContent"]["isRetryable"] is False


def test_an_error_result_without_a_message_is_refused() -> None:
    with pytest.raises(ValueError):
        error_result(Category.BUSINESS, "   ", code="X")


def test_an_unknown_category_is_refused() -> None:
    with pytest.raises(ValueError):
        error_result("flaky", "Something odd.", code="X")


def test_business_builder_reproduces_the_exam_guides_750_refund_example() -> None:
    result = business_error(
        "Refund of $750 exceeds the $500 single-transaction policy. "
        "Ask the customer to split the refund or open a manager-approval ticket.",
        code="REFUND_LIMIT_EXCEEDED",
        customer_message="We can only process refunds up to $500 in one transaction.",
        limit=500,
        requested=750,
    )

    assert result == GUIDE_REFUND_EXAMPLE


def test_empty_result_is_not_an_error() -> None:
    result = empty_result("No orders match bob@example.com.", key="orders", count=0)

    assert result["isError"] is False
    assert not is_error(result)
    assert result["structuredContent"] == {"orders": [], "count": 0}
    assert "No orders match" in result_text(result)
    assert is_empty_success(result)


def test_a_result_with_empty_lists_is_an_empty_success() -> None:
    assert is_empty_success({"isError": False, "content": [], "structuredContent": {"orders": [], "tickets": []}})


def test_a_result_with_no_content_at_all_is_an_empty_success() -> None:
    assert is_empty_success({"isError": False, "content": []})
    assert is_empty_success({"content": []})


def test_a_result_with_one_non_empty_list_is_not_empty() -> None:
    assert not is_empty_success({"isError": False, "content": [], "structuredContent": {"orders": [], "tickets": [1]}})


def test_a_non_list_structured_payload_is_not_empty() -> None:
    result = success_result("Order ORD-1001: $120.00.", {"order": {"orderId": "ORD-1001"}})

    assert not is_empty_success(result)
    assert not is_empty_success({"isError": False, "content": [], "structuredContent": {"count": 0}})


def test_a_text_only_success_is_not_empty() -> None:
    assert not is_empty_success({"isError": False, "content": [{"type": "text", "text": "Done."}]})


@pytest.mark.parametrize("category", list(Category), ids=str)
def test_errors_are_never_empty_successes(category: Category) -> None:
    assert not is_empty_success(BUILT[category])


def test_an_error_with_no_content_is_still_not_an_empty_success() -> None:
    assert not is_empty_success({"isError": True, "content": []})
    assert not is_empty_success(OPERATION_FAILED)


def test_result_text_joins_all_text_blocks() -> None:
    result = {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}

    assert result_text(result) == "one\ntwo"
    assert result_text({"isError": True}) == ""
