"""Local recovery inside a subagent, and the escalation envelope it hands the coordinator.

Source: *Exam guide › Local recovery in the subagent vs escalation to the coordinator*. The subagent retries transient failures with backoff,
fails over to a fallback endpoint, or serves a stale cached read; it escalates only
what it cannot resolve locally (a class that is not retryable, or a spent budget),
with the final errorCategory/isRetryable, a description for the coordinator's log,
the partial results gathered before the failure, and what it tried (endpoints, retry
count), so the coordinator does not repeat the work.

Time is injected (``sleep``), so tests and graders never wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from grader.decisions import DEFAULT_MAX_ATTEMPTS, Action, decide
from grader.taxonomy import result_text

Call = Callable[[str, Any], dict[str, Any]]
"""``call(endpoint, item)`` performs one tool call and returns its CallToolResult in wire format."""


class FakeClock:
    """A clock whose ``sleep`` only records: recovery runs instantly and its waits can be read back."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class RealClock:
    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def recover(
    items: Iterable[Any],
    call: Call,
    endpoints: Sequence[str],
    *,
    sleep: Callable[[float], None],
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    cache: Mapping[Any, Any] | None = None,
) -> dict[str, Any]:
    """Fetch every item, recovering locally where the taxonomy allows; return the envelope.

    Per item, each endpoint in turn gets up to ``max_attempts`` attempts; a transient
    failure that exhausts them moves on to the next endpoint, and when every endpoint
    is spent a cached value (if ``cache`` has one) is served as stale. Any other error
    class stops the work at once: it cannot be fixed by retrying.
    """
    if not endpoints:
        raise ValueError("recover needs at least one endpoint")
    items = list(items)
    results: list[dict[str, Any]] = []
    tried: list[str] = []
    retries = 0
    calls = 0

    def attempts_log() -> dict[str, Any]:
        return {"endpointsTried": list(tried), "retryCount": retries, "calls": calls}

    for index, item in enumerate(items):
        last_result: dict[str, Any] | None = None
        done = False
        for endpoint in endpoints:
            if endpoint not in tried:
                tried.append(endpoint)
            attempt = 1
            while True:
                result = call(endpoint, item)
                calls += 1
                last_result = result
                decision = decide(result, attempt, max_attempts)
                if decision.action in (Action.SUCCESS, Action.EMPTY_RESULT):
                    results.append({"item": item, "endpoint": endpoint, "data": result.get("structuredContent")})
                    done = True
                    break
                if decision.action is Action.RETRY:
                    sleep(decision.details["delaySeconds"])
                    retries += 1
                    attempt += 1
                    continue
                if decision.category == "transient":
                    break  # budget spent on this endpoint, or not retryable here: fail over
                return _escalation(decision, item, items[index + 1 :], results, result, attempts_log())
            if done:
                break
        if done:
            continue
        if cache is not None and item in cache:
            results.append({"item": item, "endpoint": "cache", "data": cache[item], "stale": True})
            continue
        assert last_result is not None
        final = decide(last_result, max_attempts, max_attempts)
        return _escalation(final, item, items[index + 1 :], results, last_result, attempts_log())

    return {"status": "complete", "results": results, "attempts": attempts_log()}


def _escalation(decision, item, not_attempted, results, result, attempts) -> dict[str, Any]:
    structured = result.get("structuredContent") or {}
    text = result_text(result) or "(no text)"
    description = (
        f"Stopped at item {item!r}: {decision.category or 'unclassified'} error "
        f"after {attempts['calls']} call(s), {attempts['retryCount']} retry(ies), "
        f"endpoints tried: {', '.join(attempts['endpointsTried'])}. "
        f"{len(results)} item(s) done before the failure. Server said: {text}"
    )
    envelope: dict[str, Any] = {
        "status": "escalated",
        "errorCategory": decision.category,
        "isRetryable": structured.get("isRetryable") if isinstance(structured.get("isRetryable"), bool) else False,
        "action": decision.action.value,
        "description": description,
        "failedItem": item,
        "partialResults": results,
        "notAttempted": list(not_attempted),
        "attempts": attempts,
    }
    for key in ("customerMessage", "missingScope", "role", "field"):
        if key in structured:
            envelope[key] = structured[key]
    return envelope
