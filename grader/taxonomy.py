"""The error taxonomy of MCP tool results, and builders for results in wire format.

Sources: *Exam guide › Error category taxonomy* and *Exam guide › The `isError` flag:
schema and example*. A tool failure is reported *inside* the
CallToolResult (``isError: true``) with ``errorCategory``, ``isRetryable`` and a
human-readable, actionable text; JSON-RPC protocol errors are reserved for an
unknown tool or a server that does not support tools.

Every builder returns a plain ``dict`` in wire format (camelCase keys), so the same
value can be sent by a server, shown in a lesson, or compared by the grader.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Category(StrEnum):
    """The five ``errorCategory`` values of the taxonomy table."""

    TRANSIENT = "transient"
    VALIDATION = "validation"
    BUSINESS = "business"
    PERMISSION = "permission"
    NOT_FOUND = "not_found"


# The "typical isRetryable" column of the taxonomy table.
TYPICAL_RETRYABLE: dict[Category, bool] = {
    Category.TRANSIENT: True,
    Category.VALIDATION: False,
    Category.BUSINESS: False,
    Category.PERMISSION: False,
    Category.NOT_FOUND: False,
}

# What each class means and what the agent should do: the table's other two columns.
MEANING: dict[Category, str] = {
    Category.TRANSIENT: "Timeout, 5xx, rate limit, connection reset",
    Category.VALIDATION: "Schema mismatch, wrong enum value, missing field",
    Category.BUSINESS: "A policy, limit or state rule was broken (refund > $500, ticket already closed)",
    Category.PERMISSION: "401/403, a missing scope, an RBAC refusal",
    Category.NOT_FOUND: "A valid request that matched nothing",
}
AGENT_SHOULD: dict[Category, str] = {
    Category.TRANSIENT: "Back off and retry locally, inside the subagent",
    Category.VALIDATION: "Re-plan with corrected input; never replay the same call",
    Category.BUSINESS: "Show the customer-facing explanation; stop",
    Category.PERMISSION: "Escalate to the coordinator or a human",
    Category.NOT_FOUND: "Treat as a legitimate empty result, not a failure",
}

# The fields the course's servers put into structuredContent for each class, besides the three common
# ones. The exam guide names only errorCategory and isRetryable for every class; its $750 example adds
# code, limit, requested and customerMessage to a business error, and its decision tree escalates a
# permission error "with the missing scope/role" in prose. retryAfterSeconds, field/reason and
# missingScope/role are this course's convention.
REQUIRED_FIELDS: dict[Category, tuple[str, ...]] = {
    Category.TRANSIENT: ("retryAfterSeconds",),
    Category.VALIDATION: ("field", "reason"),
    Category.BUSINESS: ("customerMessage", "limit", "requested"),
    Category.PERMISSION: ("missingScope", "role"),
    Category.NOT_FOUND: (),
}
COMMON_FIELDS = ("errorCategory", "isRetryable", "code")

# The anti-pattern the exam guide names: an error that tells the agent nothing.
OPERATION_FAILED: dict[str, Any] = {"isError": True, "content": [{"type": "text", "text": "Operation failed"}]}

# The exam guide's well-structured failure, verbatim (*Exam guide › The `isError` flag: schema and example*).
GUIDE_REFUND_EXAMPLE: dict[str, Any] = {
    "isError": True,
    "content": [
        {
            "type": "text",
            "text": "Refund of $750 exceeds the $500 single-transaction policy. "
            "Ask the customer to split the refund or open a manager-approval ticket.",
        }
    ],
    "structuredContent": {
        "errorCategory": "business",
        "isRetryable": False,
        "code": "REFUND_LIMIT_EXCEEDED",
        "limit": 500,
        "requested": 750,
        "customerMessage": "We can only process refunds up to $500 in one transaction.",
    },
}


def text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def error_result(
    category: Category | str,
    message: str,
    *,
    code: str,
    retryable: bool | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """An ``isError: true`` result of the given class, in wire format.

    ``message`` is the human-readable, actionable text the model reads;
    ``fields`` go into ``structuredContent`` beside ``errorCategory``,
    ``isRetryable`` (the class's typical value unless given) and ``code``.
    """
    category = Category(category)
    if not message.strip():
        raise ValueError("an error result needs a human-readable message")
    structured: dict[str, Any] = {
        "errorCategory": category.value,
        "isRetryable": TYPICAL_RETRYABLE[category] if retryable is None else retryable,
        "code": code,
    }
    structured.update(fields)
    return {"isError": True, "content": [text_block(message)], "structuredContent": structured}


def transient_error(message: str, *, retry_after_seconds: float = 1.0, code: str = "UPSTREAM_UNAVAILABLE") -> dict:
    return error_result(Category.TRANSIENT, message, code=code, retryAfterSeconds=retry_after_seconds)


def validation_error(message: str, *, field: str, reason: str, code: str = "INVALID_ARGUMENT") -> dict:
    return error_result(Category.VALIDATION, message, code=code, field=field, reason=reason)


def business_error(message: str, *, code: str, customer_message: str, limit: Any, requested: Any) -> dict[str, Any]:
    return error_result(
        Category.BUSINESS, message, code=code, customerMessage=customer_message, limit=limit, requested=requested
    )


def permission_error(message: str, *, missing_scope: str, role: str, code: str = "PERMISSION_DENIED") -> dict:
    return error_result(Category.PERMISSION, message, code=code, missingScope=missing_scope, role=role)


def not_found_error(message: str, *, code: str = "NOT_FOUND", **fields: Any) -> dict[str, Any]:
    return error_result(Category.NOT_FOUND, message, code=code, **fields)


def success_result(message: str, structured: dict[str, Any]) -> dict[str, Any]:
    """A successful result: a short text for the model and the data in ``structuredContent``."""
    return {"isError": False, "content": [text_block(message)], "structuredContent": structured}


def empty_result(message: str, *, key: str = "items", **fields: Any) -> dict[str, Any]:
    """A valid empty answer: ``isError: false``, an empty list, and text saying nothing matched.

    Not an error: "no orders match this filter" is a normal, successful outcome
    (*Exam guide › Local recovery in the subagent vs escalation to the coordinator*: a valid
    empty result is not an error).
    """
    return success_result(message, {key: [], **fields})


def is_error(result: dict[str, Any]) -> bool:
    return result.get("isError") is True


def is_empty_success(result: dict[str, Any]) -> bool:
    """True for a non-error result that is intentionally empty.

    Empty means: no content blocks at all, or a ``structuredContent`` that holds
    at least one list and every list in it is empty (``{"orders": [], "count": 0}``).
    """
    if is_error(result):
        return False
    if not result.get("content") and not result.get("structuredContent"):
        return True
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        lists = [v for v in structured.values() if isinstance(v, list)]
        return bool(lists) and all(not v for v in lists)
    return False


def result_text(result: dict[str, Any]) -> str:
    """All text content of a result, joined by newlines."""
    return "\n".join(block.get("text", "") for block in result.get("content") or [] if isinstance(block, dict))
