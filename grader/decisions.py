"""The retry/escalate decision tree for one CallToolResult, and the backoff schedule.

Source: *Exam guide › Retryable vs non-retryable decision tree*. The tree, made executable:

    isError?  no  -> success (or empty_result when the content is intentionally empty)
              yes -> transient and isRetryable is true -> retry (backoff, cap attempts, e.g. 3)
                     validation -> replan (never replay the same call)
                     permission -> escalate (with the missing scope/role)
                     business   -> surface_and_stop (show customerMessage, never retry)
                     not_found  -> empty_result (a legitimate empty answer)
                     no category, or an unknown one -> escalate (unclassified)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from grader.taxonomy import Category, is_empty_success

# The backoff schedule is a given of lab 1's world (the kit hands it to the learner), so it is defined
# there, where the learner host can import it without the rest of this model.
from servers.support_desk.world import (  # noqa: F401
    BACKOFF_FACTOR,
    BASE_DELAY_SECONDS,
    backoff_delay,
    retry_delay,
)

DEFAULT_MAX_ATTEMPTS = 3


class Action(StrEnum):
    SUCCESS = "success"
    EMPTY_RESULT = "empty_result"
    RETRY = "retry"
    REPLAN = "replan"
    ESCALATE = "escalate"
    SURFACE_AND_STOP = "surface_and_stop"


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str
    category: str | None = None
    retryable: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["action"] = self.action.value
        details = data.pop("details")
        return {**data, **details}


class MalformedResult(ValueError):
    """The input is not a CallToolResult in wire format."""


def backoff_schedule(max_attempts: int = DEFAULT_MAX_ATTEMPTS, **kwargs: float) -> list[float]:
    """The waits between ``max_attempts`` attempts: one fewer than the attempts."""
    return [backoff_delay(n, **kwargs) for n in range(1, max_attempts)]


def check_wire_result(result: Any) -> dict[str, Any]:
    """Raise MalformedResult unless ``result`` looks like a CallToolResult in wire format."""
    if not isinstance(result, dict):
        raise MalformedResult(f"a CallToolResult is a JSON object, not {type(result).__name__}")
    if "is_error" in result or "structured_content" in result:
        raise MalformedResult(
            "the result uses Python attribute names (is_error, structured_content); "
            "the wire format is camelCase: isError, structuredContent"
        )
    if "content" in result and not isinstance(result["content"], list):
        raise MalformedResult("'content' must be a list of content blocks")
    if "isError" in result and not isinstance(result["isError"], bool):
        raise MalformedResult("'isError' must be true or false")
    structured = result.get("structuredContent")
    if structured is not None and not isinstance(structured, dict):
        raise MalformedResult("'structuredContent' must be a JSON object")
    if not ({"content", "isError", "structuredContent"} & result.keys()):
        raise MalformedResult("no 'content', 'isError' or 'structuredContent': this is not a CallToolResult")
    return result


def decide(result: dict[str, Any], attempt: int = 1, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> Decision:
    """Walk the decision tree for ``result``, the outcome of attempt number ``attempt``."""
    check_wire_result(result)
    if attempt < 1 or max_attempts < 1:
        raise ValueError("attempt and max_attempts are counted from 1")

    if result.get("isError") is not True:
        if is_empty_success(result):
            return Decision(
                Action.EMPTY_RESULT, "Not an error, and intentionally empty: a valid answer with no matches."
            )
        return Decision(Action.SUCCESS, "Not an error: use the result.")

    structured = result.get("structuredContent") or {}
    raw_category = structured.get("errorCategory")
    retryable = structured.get("isRetryable")
    retryable = retryable if isinstance(retryable, bool) else None
    try:
        category = Category(raw_category)
    except ValueError:
        what = "no errorCategory" if raw_category is None else f"an unknown errorCategory {raw_category!r}"
        return Decision(
            Action.ESCALATE,
            f"Unclassified error ({what}): the agent cannot tell whether a retry could help, "
            "so it must not guess; escalate with the text it got.",
            category=raw_category if isinstance(raw_category, str) else None,
            retryable=retryable,
        )

    if category is Category.NOT_FOUND:
        return Decision(
            Action.EMPTY_RESULT,
            "not_found: the request was valid and matched nothing; a legitimate empty answer, not a failure.",
            category.value,
            retryable,
        )
    if category is Category.TRANSIENT:
        if retryable is not True:
            return Decision(
                Action.ESCALATE,
                "Transient error marked not retryable: the server says a retry will not help; escalate.",
                category.value,
                retryable,
            )
        if attempt >= max_attempts:
            return Decision(
                Action.ESCALATE,
                f"Transient error, but the retry budget is spent ({attempt} of {max_attempts} attempts); "
                "escalate with the attempts made.",
                category.value,
                retryable,
                {"attempts": attempt},
            )
        delay = retry_delay(structured, attempt)
        return Decision(
            Action.RETRY,
            f"Transient and retryable: back off {delay:g} s and retry locally "
            f"(attempt {attempt + 1} of {max_attempts}).",
            category.value,
            retryable,
            {"delaySeconds": delay, "nextAttempt": attempt + 1},
        )
    if category is Category.VALIDATION:
        field_name = structured.get("field")
        where = f" (field {field_name!r})" if field_name else ""
        return Decision(
            Action.REPLAN,
            f"Validation error{where}: correct the input and re-plan; never replay the same call.",
            category.value,
            retryable,
            {"field": field_name} if field_name else {},
        )
    if category is Category.PERMISSION:
        missing = {k: structured[k] for k in ("missingScope", "role") if structured.get(k)}
        named = ", ".join(f"{k}={v}" for k, v in missing.items()) or "no scope named"
        return Decision(
            Action.ESCALATE,
            f"Permission denied ({named}): the agent cannot grant itself access; escalate to the coordinator or a human.",
            category.value,
            retryable,
            missing,
        )
    # Category.BUSINESS
    customer_message = structured.get("customerMessage")
    return Decision(
        Action.SURFACE_AND_STOP,
        "Business rule broken: show the customer message and stop; a retry would break the same rule again.",
        category.value,
        retryable,
        {"customerMessage": customer_message} if customer_message else {},
    )
