"""Lab 1's hidden checks: structured tool errors, the desk, the decision tree, local recovery.

Each check drives the learner host (``servers.learner_host.lab1``) over an MCP session
and judges wire-level results against the reference model in ``grader.taxonomy``,
``grader.decisions`` and ``grader.recovery``. Check names are the grade ids of the
lab notebook's graded cells.
"""

from __future__ import annotations

from typing import Any

from grader.checking import CheckFailed, CheckRegistry, describe, expect, structured
from grader.decisions import decide as reference_decide
from grader.recovery import FakeClock, recover as reference_recover
from grader.taxonomy import (
    OPERATION_FAILED,
    Category,
    business_error,
    empty_result,
    not_found_error,
    permission_error,
    result_text,
    success_result,
    transient_error,
    validation_error,
)

LAB = "lab1_error_results"
checks = CheckRegistry(LAB)


def expect_error(result: dict[str, Any], category: Category, retryable: bool, what: str) -> dict[str, Any]:
    sc = structured(result)
    expect(result.get("isError") is True, f"{what} must be an error result (isError true); got {describe(result)}.")
    expect(
        sc.get("errorCategory") == category.value,
        f"{what} must have errorCategory {category.value!r}; got {sc.get('errorCategory')!r}.",
    )
    expect(
        sc.get("isRetryable") is retryable,
        f"{what} must have isRetryable {str(retryable).lower()}; got {sc.get('isRetryable')!r}.",
    )
    expect(isinstance(sc.get("code"), str) and sc["code"], f"{what} must carry a machine-readable 'code' string.")
    text = result_text(result).strip()
    expect(
        len(text) >= 15 and text.lower() != "operation failed",
        f"{what} needs a human-readable, actionable text content (got {text!r}).",
    )
    return sc


def expect_field(sc: dict[str, Any], key: str, value: Any, what: str) -> None:
    expect(key in sc, f"{what} must carry '{key}' in structuredContent.")
    expect(sc[key] == value, f"{what}: '{key}' should be {value!r}; got {sc[key]!r}.")


def build(host, builder: str, **kwargs: Any) -> dict[str, Any]:
    return host.call("build_result", builder=builder, kwargs=kwargs)


# --- part A: error results ----------------------------------------------------------------


@checks.check("results_transient", points=1, title="transient_error builds a retryable transient result", mistake="transient errors not marked retryable")
def results_transient(host) -> None:
    what = "transient_error(...)"
    sc = expect_error(build(host, "transient_error", message="The gateway timed out; retry in 3 seconds.", retry_after_seconds=3), Category.TRANSIENT, True, what)
    expect_field(sc, "retryAfterSeconds", 3, what)


@checks.check("results_validation", points=1, title="validation_error names the field and why", mistake="validation errors without the field")
def results_validation(host) -> None:
    what = "validation_error(...)"
    sc = expect_error(build(host, "validation_error", message="amount_usd must be positive; got -5.", field="amount_usd", reason="must be greater than 0"), Category.VALIDATION, False, what)
    expect_field(sc, "field", "amount_usd", what)
    expect_field(sc, "reason", "must be greater than 0", what)


@checks.check("results_business", points=1, title="business_error matches the seed's $750 refund example", mistake="business errors without a customer message")
def results_business(host) -> None:
    what = "business_error(...) for the $750 refund"
    sc = expect_error(
        build(
            host,
            "business_error",
            message="Refund of $750 exceeds the $500 single-transaction policy.",
            code="REFUND_LIMIT_EXCEEDED",
            customer_message="We can only process refunds up to $500 in one transaction.",
            limit=500,
            requested=750,
        ),
        Category.BUSINESS,
        False,
        what,
    )
    expect_field(sc, "code", "REFUND_LIMIT_EXCEEDED", what)
    expect_field(sc, "customerMessage", "We can only process refunds up to $500 in one transaction.", what)
    expect_field(sc, "limit", 500, what)
    expect_field(sc, "requested", 750, what)


@checks.check("results_permission", points=1, title="permission_error names the missing scope and the role", mistake="permission errors without the missing scope")
def results_permission(host) -> None:
    what = "permission_error(...)"
    sc = expect_error(build(host, "permission_error", message="Role agent lacks refunds:write.", missing_scope="refunds:write", role="agent"), Category.PERMISSION, False, what)
    expect_field(sc, "missingScope", "refunds:write", what)
    expect_field(sc, "role", "agent", what)


@checks.check("results_not_found", points=1, title="not_found_error is a non-retryable not_found result", mistake="not-found reported as another class")
def results_not_found(host) -> None:
    sc = expect_error(build(host, "not_found_error", message="There is no order ORD-9999.", code="ORDER_NOT_FOUND"), Category.NOT_FOUND, False, "not_found_error(...)")
    expect_field(sc, "code", "ORDER_NOT_FOUND", "not_found_error(...)")


@checks.check("results_empty", points=1, title="empty_result is a valid empty answer, not an error", mistake="reports empty results as errors")
def results_empty(host) -> None:
    result = build(host, "empty_result", message="No orders match bob@example.com.", key="orders")
    expect(result.get("isError") is not True, f"empty_result(...) must not be an error; got {describe(result)}.")
    expect(structured(result).get("orders") == [], "empty_result(..., key='orders') must hold structuredContent {'orders': []}.")
    expect(result_text(result).strip() != "", "empty_result(...) needs a text saying that nothing matched.")


# --- part B: the desk's tools, over MCP -------------------------------------------------------


def reset(host, role: str = "supervisor", fail_first: int = 0) -> None:
    host.call("host_reset", role=role, fail_first=fail_first)


@checks.check("desk_empty_search", points=2, title="a search with no matches is a valid empty result", mistake="reports empty results as errors")
def desk_empty_search(host) -> None:
    reset(host)
    result = host.call("search_orders", customer_email="zed@example.com")
    what = "search_orders for a customer with no orders"
    expect(result.get("isError") is not True, f"{what} must not be an error (it is a valid answer); got {describe(result)}.")
    expect(structured(result).get("orders") == [], f"{what} must return structuredContent with an empty 'orders' list.")
    expect(result_text(result).strip() != "", f"{what} needs a text saying nothing matched.")
    found = host.call("search_orders", customer_email="alice@example.com")
    orders = structured(found).get("orders")
    expect(
        found.get("isError") is not True and isinstance(orders, list) and len(orders) == 2,
        f"search_orders for alice@example.com must find her 2 orders; got {describe(found)}.",
    )
    delivered = structured(host.call("search_orders", customer_email="alice@example.com", status="delivered")).get("orders")
    expect(
        isinstance(delivered, list) and [o.get("orderId") for o in delivered] == ["ORD-1001"],
        "search_orders for alice@example.com with status 'delivered' must find only ORD-1001.",
    )
    none_paid = host.call("search_orders", customer_email="bob@example.com", status="paid")
    expect(
        none_paid.get("isError") is not True and structured(none_paid).get("orders") == [],
        f"bob@example.com has no paid orders: that is a valid empty result; got {describe(none_paid)}.",
    )


@checks.check("desk_not_found", points=2, title="an unknown order is not_found, distinct from permission-denied", mistake="confuses not-found with other failures")
def desk_not_found(host) -> None:
    reset(host)
    expect_error(host.call("get_order", order_id="ORD-9999"), Category.NOT_FOUND, False, "get_order for an order that does not exist")
    ok = host.call("get_order", order_id="ORD-1001")
    expect(ok.get("isError") is not True, f"get_order for ORD-1001, which exists, must succeed; got {describe(ok)}.")
    reset(host, role="guest")
    expect_error(host.call("get_order", order_id="ORD-9999"), Category.PERMISSION, False, "get_order by a guest (no orders:read scope)")


@checks.check("desk_permission", points=2, title="a refund without the refunds:write scope is a permission error", mistake="permission errors without the missing scope")
def desk_permission(host) -> None:
    reset(host, role="agent")
    what = "refund_order by an agent (no refunds:write scope)"
    sc = expect_error(host.call("refund_order", order_id="ORD-1001", amount_usd=20, reason="damaged"), Category.PERMISSION, False, what)
    expect_field(sc, "missingScope", "refunds:write", what)
    expect_field(sc, "role", "agent", what)
    reset(host, role="supervisor")
    ok = host.call("refund_order", order_id="ORD-1001", amount_usd=20, reason="damaged")
    expect(ok.get("isError") is not True, f"The same refund by a supervisor must succeed; got {describe(ok)}.")


@checks.check("desk_business_limit", points=2, title="a refund over $500 is a non-retryable business error", mistake="policy limits not reported as business errors")
def desk_business_limit(host) -> None:
    reset(host)
    what = "refund_order of $750 on ORD-1002"
    sc = expect_error(host.call("refund_order", order_id="ORD-1002", amount_usd=750, reason="late"), Category.BUSINESS, False, what)
    expect_field(sc, "limit", 500, what)
    expect_field(sc, "requested", 750, what)
    expect(isinstance(sc.get("customerMessage"), str) and sc["customerMessage"].strip(), f"{what} needs a customerMessage.")
    ok = host.call("refund_order", order_id="ORD-1002", amount_usd=500, reason="late")
    expect(ok.get("isError") is not True, f"A refund of exactly $500 is within the policy and must succeed; got {describe(ok)}.")
    expect_error(
        host.call("refund_order", order_id="ORD-1002", amount_usd=450, reason="late"),
        Category.BUSINESS,
        False,
        "a $450 refund on ORD-1002 ($900) after $500 was already refunded",
    )
    expect_error(
        host.call("refund_order", order_id="ORD-1003", amount_usd=10, reason="late"),
        Category.BUSINESS,
        False,
        "a refund on ORD-1003, which is already refunded",
    )


@checks.check("desk_validation", points=2, title="bad input is a validation error naming the field", mistake="bad input not reported as validation")
def desk_validation(host) -> None:
    reset(host)
    cases = [
        ("refund_order", {"order_id": "ORD-1001", "amount_usd": -5, "reason": "x"}, "amount_usd", "refund_order with amount -5"),
        ("refund_order", {"order_id": "ORD-1001", "amount_usd": 0, "reason": "x"}, "amount_usd", "refund_order with amount 0"),
        ("search_orders", {"customer_email": "alice@example.com", "status": "lost"}, "status", "search_orders with status 'lost'"),
        ("refund_order", {"order_id": "1001", "amount_usd": 10, "reason": "x"}, "order_id", "refund_order with order id '1001'"),
        ("get_order", {"order_id": "order 7"}, "order_id", "get_order with order id 'order 7'"),
        ("search_orders", {"customer_email": "alice"}, "customer_email", "search_orders with e-mail 'alice'"),
    ]
    for tool, args, field, what in cases:
        sc = expect_error(host.call(tool, **args), Category.VALIDATION, False, what)
        expect_field(sc, "field", field, what)


@checks.check("desk_transient", points=2, title="a gateway outage is a retryable transient error, and nothing moves", mistake="returns exception text as a success")
def desk_transient(host) -> None:
    reset(host, fail_first=1)
    what = "refund_order while the payment gateway is down"
    sc = expect_error(host.call("refund_order", order_id="ORD-1004", amount_usd=100, reason="x"), Category.TRANSIENT, True, what)
    expect("retryAfterSeconds" in sc, f"{what} should give a retry hint in 'retryAfterSeconds'.")
    again = host.call("refund_order", order_id="ORD-1004", amount_usd=100, reason="x")
    expect(again.get("isError") is not True, f"The retried refund, with the gateway back, must succeed; got {describe(again)}.")
    order = structured(host.call("get_order", order_id="ORD-1004")).get("order") or {}
    expect(
        order.get("refundedUsd") == 100,
        f"After one failed and one successful $100 refund, ORD-1004 must show refundedUsd 100; got {order.get('refundedUsd')!r}.",
    )


@checks.check("desk_success", points=2, title="successful calls return their data in structuredContent", mistake="success results without data")
def desk_success(host) -> None:
    reset(host)
    result = host.call("get_order", order_id="ORD-1003")
    order = structured(result).get("order")
    expect(result.get("isError") is not True and isinstance(order, dict), f"get_order for ORD-1003 must return structuredContent {{'order': ...}}; got {describe(result)}.")
    expect(order.get("orderId") == "ORD-1003" and order.get("totalUsd") == 45.5, f"get_order for ORD-1003 returned the wrong order: {order!r}.")
    expect(result_text(result).strip() != "", "A successful result needs a short text for the model too.")


# --- part C: the decision tree ---------------------------------------------------------------


def learner_decision(host, result: dict[str, Any], attempt: int = 1, max_attempts: int = 3) -> dict[str, Any]:
    decision = structured(host.call("decide", result=result, attempt=attempt, max_attempts=max_attempts)).get("decision")
    expect(isinstance(decision, dict) and "action" in decision, "decide(...) must return a dict with 'action' and 'reason'.")
    reason = decision.get("reason")
    expect(isinstance(reason, str) and reason.strip(), f"decide(...) gave action {decision['action']!r} without a 'reason'.")
    return decision


def expect_action(host, result: dict[str, Any], what: str, attempt: int = 1, max_attempts: int = 3) -> None:
    want = reference_decide(result, attempt, max_attempts).action.value
    got = learner_decision(host, result, attempt, max_attempts)["action"]
    expect(got == want, f"For {what} (attempt {attempt} of {max_attempts}) the action must be {want!r}; yours is {got!r}.")


SEARCH_HIT = success_result("2 orders.", {"orders": [{"orderId": "ORD-1001"}, {"orderId": "ORD-1002"}], "count": 2})
SEARCH_EMPTY = empty_result("No orders match.", key="orders", count=0)
TRANSIENT = transient_error("The gateway timed out; retry shortly.", retry_after_seconds=1)
VALIDATION = validation_error("amount_usd must be positive.", field="amount_usd", reason="must be greater than 0")
BUSINESS = business_error(
    "Refund of $750 exceeds the $500 single-transaction policy.",
    code="REFUND_LIMIT_EXCEEDED",
    customer_message="We can only process refunds up to $500 in one transaction.",
    limit=500,
    requested=750,
)
PERMISSION = permission_error("Role agent lacks refunds:write.", missing_scope="refunds:write", role="agent")
NOT_FOUND = not_found_error("There is no order ORD-9999.", code="ORDER_NOT_FOUND")


@checks.check("decide_success_and_empty", points=1, title="success and intentionally empty results are told apart", mistake="treats empty results as failures")
def decide_success_and_empty(host) -> None:
    expect_action(host, SEARCH_HIT, "a successful search with two orders")
    expect_action(host, SEARCH_EMPTY, "a successful search with no orders")
    expect_action(host, {"isError": False, "content": []}, "a result with isError false and no content")


@checks.check("decide_not_found", points=1, title="not_found is a legitimate empty answer", mistake="treats not-found as a failure")
def decide_not_found(host) -> None:
    expect_action(host, NOT_FOUND, "a not_found error")


@checks.check("decide_transient_retry_cap", points=1, title="retryable transient errors are retried until the cap, then escalated", mistake="retries without a cap")
def decide_transient_retry_cap(host) -> None:
    for attempt in (1, 2, 3):
        expect_action(host, TRANSIENT, "a retryable transient error", attempt, 3)
    expect_action(host, TRANSIENT, "a retryable transient error", 3, 5)
    expect_action(host, TRANSIENT, "a retryable transient error", 5, 5)


@checks.check("decide_transient_not_retryable", points=1, title="a transient error marked not retryable is escalated", mistake="ignores isRetryable")
def decide_transient_not_retryable(host) -> None:
    marked = transient_error("The upstream was decommissioned.", code="UPSTREAM_GONE")
    marked["structuredContent"]["isRetryable"] = False
    expect_action(host, marked, "a transient error with isRetryable false")


@checks.check("decide_validation_replans", points=1, title="validation errors re-plan, never replay", mistake="replays validation errors")
def decide_validation_replans(host) -> None:
    for attempt in (1, 2):
        expect_action(host, VALIDATION, "a validation error", attempt, 3)


@checks.check("decide_permission_escalates", points=1, title="permission errors escalate", mistake="retries permission errors")
def decide_permission_escalates(host) -> None:
    expect_action(host, PERMISSION, "a permission error")


@checks.check("decide_business_stops", points=1, title="business errors surface the customer message and stop", mistake="retries business errors")
def decide_business_stops(host) -> None:
    expect_action(host, BUSINESS, "a business error")
    wrongly_marked = business_error(
        "Ticket TCK-9 is already closed.", code="TICKET_CLOSED", customer_message="This ticket is closed.", limit=None, requested=None
    )
    wrongly_marked["structuredContent"]["isRetryable"] = True
    expect_action(host, wrongly_marked, "a business error wrongly marked isRetryable true")


@checks.check("decide_unclassified_escalates", points=1, title="errors without a known category escalate as unclassified", mistake="guesses on unclassified errors")
def decide_unclassified_escalates(host) -> None:
    expect_action(host, OPERATION_FAILED, "the 'Operation failed' anti-pattern")
    odd = {"isError": True, "content": [{"type": "text", "text": "Quota check failed."}], "structuredContent": {"errorCategory": "quota", "isRetryable": True}}
    expect_action(host, odd, "an error with an unknown errorCategory 'quota'")


# --- part D: local recovery and the escalation envelope -------------------------------------


def ok(item: str) -> dict[str, Any]:
    return success_result(f"Order {item}.", {"order": {"orderId": item}})


def run_recover(host, items, endpoints, script, max_attempts: int = 3):
    out = structured(host.call("recover", items=items, endpoints=endpoints, script=script, max_attempts=max_attempts))
    envelope = out.get("envelope")
    expect(isinstance(envelope, dict), "recover(...) must return the envelope as a dict.")
    clock = FakeClock()
    served: dict[tuple[str, str], int] = {}

    def call(endpoint, item):
        seq = script[endpoint][item]
        n = served.get((endpoint, item), 0)
        served[(endpoint, item)] = n + 1
        return seq[min(n, len(seq) - 1)]

    reference = reference_recover(items, call, endpoints, sleep=clock.sleep, max_attempts=max_attempts)
    return envelope, out.get("calls", []), out.get("sleeps", []), reference


def done_items(envelope: dict[str, Any], key: str) -> list[Any]:
    entries = envelope.get(key)
    expect(isinstance(entries, list), f"The envelope must list its results under '{key}'.")
    return [e.get("item") if isinstance(e, dict) else e for e in entries]


@checks.check("recover_backoff", points=2, title="transient failures are retried locally with growing waits", mistake="retries without backoff")
def recover_backoff(host) -> None:
    script = {"primary": {"A": [TRANSIENT, TRANSIENT, ok("A")]}}
    envelope, calls, sleeps, _ = run_recover(host, ["A"], ["primary"], script)
    expect(envelope.get("status") == "complete", f"Two transient failures then a success must end 'complete'; got status {envelope.get('status')!r}.")
    expect(len(calls) == 3, f"Two failures then a success take 3 calls; yours made {len(calls)}.")
    expect(len(sleeps) == 2, f"There must be a wait before each of the 2 retries; yours waited {len(sleeps)} time(s).")
    expect(all(s > 0 for s in sleeps) and sleeps[1] > sleeps[0], f"The waits must be positive and grow (exponential backoff); yours were {sleeps}.")
    expect(done_items(envelope, "results") == ["A"], "A complete envelope lists every item's result under 'results'.")
    entry = envelope["results"][0]
    expect(
        isinstance(entry, dict) and entry.get("data") == ok("A")["structuredContent"] and entry.get("endpoint") == "primary",
        "Each result entry is {'item', 'endpoint', 'data'} with the structuredContent the endpoint returned.",
    )
    attempts = envelope.get("attempts")
    expect(
        isinstance(attempts, dict) and attempts.get("retryCount") == 2 and attempts.get("endpointsTried") == ["primary"],
        f"A complete envelope also says what was tried: attempts with retryCount 2 and endpointsTried ['primary']; got {attempts!r}.",
    )


@checks.check("recover_cap_and_failover", points=2, title="the retry cap holds per endpoint, then the fallback endpoint is used", mistake="retries without a cap")
def recover_cap_and_failover(host) -> None:
    script = {"primary": {"A": [TRANSIENT]}, "replica": {"A": [ok("A")]}}
    envelope, calls, _, _ = run_recover(host, ["A"], ["primary", "replica"], script)
    on_primary = sum(1 for endpoint, _ in calls if endpoint == "primary")
    expect(on_primary == 3, f"With a cap of 3 attempts, the primary gets exactly 3 calls; yours made {on_primary}.")
    expect(calls and calls[-1][0] == "replica", "After the primary's attempts are spent, the fallback endpoint must be tried.")
    expect(envelope.get("status") == "complete", f"The fallback answered, so the run must end 'complete'; got {envelope.get('status')!r}.")


@checks.check("recover_no_replay_validation", points=2, title="a validation error is never replayed and is escalated for re-planning", mistake="replays validation errors")
def recover_no_replay_validation(host) -> None:
    script = {"primary": {"A": [ok("A")], "B": [VALIDATION, ok("B")]}}
    envelope, calls, sleeps, _ = run_recover(host, ["A", "B"], ["primary"], script)
    on_b = sum(1 for _, item in calls if item == "B")
    expect(on_b == 1, f"A validation error must not be replayed: item B got {on_b} calls.")
    expect(not sleeps, "Nothing was retried, so nothing should wait.")
    expect(envelope.get("status") == "escalated", f"The validation error cannot be fixed locally: status must be 'escalated'; got {envelope.get('status')!r}.")
    expect(envelope.get("errorCategory") == "validation", f"The envelope's errorCategory must be 'validation'; got {envelope.get('errorCategory')!r}.")


@checks.check("recover_no_retry_business", points=2, title="a business error is not retried and its customer message is passed up", mistake="retries business errors")
def recover_no_retry_business(host) -> None:
    script = {"primary": {"A": [BUSINESS, ok("A")]}, "replica": {"A": [ok("A")]}}
    envelope, calls, _, _ = run_recover(host, ["A"], ["primary", "replica"], script)
    expect(len(calls) == 1, f"A business error must not be retried or tried elsewhere: yours made {len(calls)} calls.")
    expect(envelope.get("status") == "escalated" and envelope.get("errorCategory") == "business", "The envelope must be 'escalated' with errorCategory 'business'.")
    expect(envelope.get("isRetryable") is False, "A business failure is not retryable: isRetryable must be false in the envelope.")
    expect(envelope.get("customerMessage") == BUSINESS["structuredContent"]["customerMessage"], "The envelope must carry the customerMessage up to the coordinator.")


@checks.check("recover_envelope", points=2, title="an escalation carries partial results and the attempts made", mistake="escalates without partial results")
def recover_envelope(host) -> None:
    script = {
        "primary": {"A": [ok("A")], "B": [TRANSIENT], "C": [ok("C")]},
        "replica": {"A": [ok("A")], "B": [TRANSIENT], "C": [ok("C")]},
    }
    envelope, calls, _, reference = run_recover(host, ["A", "B", "C"], ["primary", "replica"], script)
    expect(envelope.get("status") == "escalated", f"Item B fails on both endpoints: status must be 'escalated'; got {envelope.get('status')!r}.")
    expect(envelope.get("errorCategory") == "transient", f"The final errorCategory is 'transient'; got {envelope.get('errorCategory')!r}.")
    expect(envelope.get("isRetryable") is True, "The last failure was retryable: isRetryable must be true, so the coordinator may try later.")
    expect(isinstance(envelope.get("description"), str) and len(envelope["description"]) >= 20, "The envelope needs a 'description' for the coordinator's log.")
    expect(done_items(envelope, "partialResults") == ["A"], "partialResults must hold the result gathered before the failure (item A).")
    expect(envelope.get("failedItem") == "B", f"failedItem must be 'B'; got {envelope.get('failedItem')!r}.")
    expect(not any(item == "C" for _, item in calls), "Work stops at the failure: item C must not be attempted.")
    attempts = envelope.get("attempts")
    expect(isinstance(attempts, dict), "The envelope must say what was tried under 'attempts'.")
    want = reference["attempts"]
    expect(attempts.get("endpointsTried") == want["endpointsTried"], f"attempts.endpointsTried must be {want['endpointsTried']}; got {attempts.get('endpointsTried')!r}.")
    expect(attempts.get("retryCount") == want["retryCount"], f"attempts.retryCount must be {want['retryCount']} (retries, not calls); got {attempts.get('retryCount')!r}.")
