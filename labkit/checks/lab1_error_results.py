"""Lab 1's visible checks: the learner's error results, desk handlers, decide() and recover() on fixed cases.

Every case's answer is written out here (the taxonomy table, the desk's rules and the decision tree as the
lab notebook states them), never computed: these checks ship to learners. Each case is chosen for the
mistake its check names: a value fixed instead of passed on, a rule checked out of order or not at all, a
decision read from the text instead of errorCategory, a cap that is fixed or off by one, an escalation
without what the coordinator needs. The grader adds hidden checks of the same skills on cases none of
these tables shows (``grader.labs.lab1_error_results``).

Each check keeps to inputs of its own (a $750 refund is desk_business_limit's, a permission error reaches
decide() only in decide_permission_escalates), so code that breaks on one input costs the check that
stands for it. The helpers that judge one result (``expect_error``, ``expect_desk_result``, ...) are the
vocabulary the hidden checks use too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from labkit.checking import (
    CheckFailed,
    CheckRegistry,
    describe,
    expect,
    result_text,
    structured,
)
from servers.support_desk.world import backoff_delay

LAB = "lab1_error_results"
checks = CheckRegistry(LAB)

RETRY = "retry"
ESCALATE = "escalate"
REPLAN = "replan"
SUCCESS = "success"
EMPTY = "empty_result"
STOP = "surface_and_stop"


# --- judging one result --------------------------------------------------------------------------


def same_number(a: Any, b: Any) -> bool:
    return (
        isinstance(a, (int, float))
        and not isinstance(a, bool)
        and isinstance(b, (int, float))
        and not isinstance(b, bool)
        and a == b
    )


def same_value(got: Any, want: Any) -> bool:
    """Equal, and of the same kind: 1 is not True, "500" is not 500 (an int and a float of one number are)."""
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return same_number(got, want)
    return got == want and type(got) is type(want)


def expect_error(result: dict[str, Any], category: str, retryable: bool, what: str) -> dict[str, Any]:
    """An error result of ``category`` with isRetryable ``retryable``, a code and an actionable text; its structuredContent."""
    sc = structured(result)
    expect(result.get("isError") is True, f"{what} must be an error result (isError true); got {describe(result)}.")
    expect(
        sc.get("errorCategory") == category,
        f"{what} must have errorCategory {category!r}; got {sc.get('errorCategory')!r}.",
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
    expect(same_value(sc[key], value), f"{what}: '{key}' should be {value!r}; got {sc[key]!r}.")


def call_text(name: str, kwargs: dict[str, Any]) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


# --- part A: error results -----------------------------------------------------------------------


def build(host, builder: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    return host.call("build_result", builder=builder, kwargs=kwargs)


def expect_built(host, builder: str, kwargs: dict[str, Any], want: dict[str, Any], what: str | None = None) -> None:
    """The learner's ``builder(**kwargs)`` is ``want``'s result: for an error, its errorCategory and isRetryable and
    every other field of ``want``; for empty_result, not an error and ``want``'s structuredContent. Its text is the message."""
    what = what or call_text(builder, kwargs)
    result = build(host, builder, kwargs)
    if "errorCategory" in want:
        sc = expect_error(result, want["errorCategory"], want["isRetryable"], what)
        for key, value in want.items():
            if key not in ("errorCategory", "isRetryable"):
                expect_field(sc, key, value, what)
    else:
        expect(result.get("isError") is not True, f"{what} must not be an error; got {describe(result)}.")
        [(key, _)] = want.items()
        expect(
            structured(result) == want,
            f"{what} must hold an empty list under {key!r} in structuredContent; got {structured(result)!r}.",
        )
    text = result_text(result)
    expect(kwargs["message"] in text, f"{what} must carry the message it was given as its text; its text is {text!r}.")


def expect_builds(host, builder: str, cases: tuple[tuple[dict[str, Any], dict[str, Any]], ...], named: str) -> None:
    """Each (keyword arguments, the structuredContent they make); the first case is the one the lab names."""
    for n, (kwargs, want) in enumerate(cases):
        expect_built(host, builder, kwargs, want, named if n == 0 else None)


# (keyword arguments, the structuredContent they must make), per builder.
TRANSIENT_CASES = (
    (
        {"message": "The gateway timed out; retry in 3 seconds.", "retry_after_seconds": 3},
        {"errorCategory": "transient", "isRetryable": True, "code": "UPSTREAM_UNAVAILABLE", "retryAfterSeconds": 3},
    ),
    (
        {"message": "Too many requests to the ledger; slow down.", "retry_after_seconds": 10, "code": "RATE_LIMITED"},
        {"errorCategory": "transient", "isRetryable": True, "code": "RATE_LIMITED", "retryAfterSeconds": 10},
    ),
)
VALIDATION_CASES = (
    (
        {"message": "amount_usd must be positive; got -5.", "field": "amount_usd", "reason": "must be greater than 0"},
        {
            "errorCategory": "validation",
            "isRetryable": False,
            "code": "INVALID_ARGUMENT",
            "field": "amount_usd",
            "reason": "must be greater than 0",
        },
    ),
    (
        {
            "message": "'bob.example.com' is not an e-mail address.",
            "field": "customer_email",
            "reason": "not an e-mail address",
            "code": "BAD_EMAIL",
        },
        {
            "errorCategory": "validation",
            "isRetryable": False,
            "code": "BAD_EMAIL",
            "field": "customer_email",
            "reason": "not an e-mail address",
        },
    ),
)
BUSINESS_CASES = (
    (
        {
            "message": "Refund of $750 exceeds the $500 single-transaction policy.",
            "code": "REFUND_LIMIT_EXCEEDED",
            "customer_message": "We can only process refunds up to $500 in one transaction.",
            "limit": 500,
            "requested": 750,
        },
        {
            "errorCategory": "business",
            "isRetryable": False,
            "code": "REFUND_LIMIT_EXCEEDED",
            "customerMessage": "We can only process refunds up to $500 in one transaction.",
            "limit": 500,
            "requested": 750,
        },
    ),
    (
        {
            "message": "Ticket TCK-7 is closed: reopen it first.",
            "code": "TICKET_CLOSED",
            "customer_message": "This ticket is closed.",
            "limit": None,
            "requested": None,
        },
        {
            "errorCategory": "business",
            "isRetryable": False,
            "code": "TICKET_CLOSED",
            "customerMessage": "This ticket is closed.",
            "limit": None,
            "requested": None,
        },
    ),
)
PERMISSION_CASES = (
    (
        {"message": "Role agent lacks refunds:write.", "missing_scope": "refunds:write", "role": "agent"},
        {
            "errorCategory": "permission",
            "isRetryable": False,
            "code": "PERMISSION_DENIED",
            "missingScope": "refunds:write",
            "role": "agent",
        },
    ),
    (
        {
            "message": "Role guest may not read orders: ask a supervisor.",
            "missing_scope": "orders:read",
            "role": "guest",
            "code": "SCOPE_MISSING",
        },
        {
            "errorCategory": "permission",
            "isRetryable": False,
            "code": "SCOPE_MISSING",
            "missingScope": "orders:read",
            "role": "guest",
        },
    ),
)
NOT_FOUND_CASES = (
    (
        {"message": "There is no order ORD-9999.", "code": "ORDER_NOT_FOUND"},
        {"errorCategory": "not_found", "isRetryable": False, "code": "ORDER_NOT_FOUND"},
    ),
    (
        {"message": "There is no ticket TCK-404; check its number.", "code": "TICKET_NOT_FOUND"},
        {"errorCategory": "not_found", "isRetryable": False, "code": "TICKET_NOT_FOUND"},
    ),
)
EMPTY_CASES = (
    ({"message": "No orders match bob@example.com.", "key": "orders"}, {"orders": []}),
    ({"message": "No tickets match this filter; this is a valid answer.", "key": "tickets"}, {"tickets": []}),
)


@checks.check(
    "results_transient",
    points=1,
    title="transient_error builds a retryable transient result",
    mistake="transient errors not marked retryable",
)
def results_transient(host) -> None:
    expect_builds(host, "transient_error", TRANSIENT_CASES, "transient_error(...)")


@checks.check(
    "results_validation",
    points=1,
    title="validation_error names the field and why",
    mistake="validation errors without the field",
)
def results_validation(host) -> None:
    expect_builds(host, "validation_error", VALIDATION_CASES, "validation_error(...)")


@checks.check(
    "results_business",
    points=1,
    title="business_error matches the exam guide's $750 refund example",
    mistake="business errors without a customer message",
)
def results_business(host) -> None:
    expect_builds(host, "business_error", BUSINESS_CASES, "business_error(...) for the $750 refund")


@checks.check(
    "results_permission",
    points=1,
    title="permission_error names the missing scope and the role",
    mistake="permission errors without the missing scope",
)
def results_permission(host) -> None:
    expect_builds(host, "permission_error", PERMISSION_CASES, "permission_error(...)")


@checks.check(
    "results_not_found",
    points=1,
    title="not_found_error is a non-retryable not_found result",
    mistake="not-found reported as another class",
)
def results_not_found(host) -> None:
    expect_builds(host, "not_found_error", NOT_FOUND_CASES, "not_found_error(...)")


@checks.check(
    "results_empty",
    points=1,
    title="empty_result is a valid empty answer, not an error",
    mistake="reports empty results as errors",
)
def results_empty(host) -> None:
    expect_builds(host, "empty_result", EMPTY_CASES, "empty_result(..., key='orders')")


# --- part B: the desk's tools, over MCP ----------------------------------------------------------
#
# A desk case is a session: a role, how many gateway calls fail first, and calls in order, each with
# what it must give. Each check judges in full only what it stands for (the fields of its own class of
# error; the data of a success in desk_success): of an error of another class only the class and the
# retry flag, so one mistake costs the check that names it, not every check that happens to meet it.


@dataclass(frozen=True)
class Fails:
    """An error of ``category`` with isRetryable ``retryable``, and the fields of it this check judges."""

    category: str
    retryable: bool
    fields: dict[str, Any] = field(default_factory=dict)
    customer_message: bool = False  # a customerMessage to show the customer
    retry_hint: bool = False  # a positive retryAfterSeconds


@dataclass(frozen=True)
class Succeeds:
    """Not an error; and, of search_orders, the ids it finds (``finds``), of get_order the refundedUsd it shows
    (``refunded``), or, with ``data``, the whole structuredContent (a refund's refundId is the gateway's, any string)."""

    finds: tuple[str, ...] | None = None
    refunded: float | None = None
    data: dict[str, Any] | None = None


Want = Fails | Succeeds


def expect_desk_result(got: dict[str, Any], tool: str, want: Want, what: str) -> None:
    if isinstance(want, Fails):
        sc = expect_error(got, want.category, want.retryable, what)
        for key, value in want.fields.items():
            expect_field(sc, key, value, what)
        if want.customer_message:
            message = sc.get("customerMessage")
            expect(
                isinstance(message, str) and message.strip(), f"{what} needs a customerMessage to show the customer."
            )
        if want.retry_hint:
            hint = sc.get("retryAfterSeconds")
            expect(
                same_number(hint, hint) and hint > 0,
                f"{what} should give a retry hint in 'retryAfterSeconds', a positive number of seconds; got {hint!r}.",
            )
        return
    empty = want.finds == () or (want.data is not None and want.data.get("orders") == [])
    expect(
        got.get("isError") is not True,
        f"{what} {'matches nothing, which is a valid answer' if empty else 'must succeed'}: it must not be an error; got {describe(got)}.",
    )
    sc = structured(got)
    if want.finds is not None:
        orders = sc.get("orders")
        expect(
            isinstance(orders, list),
            f"{what} must give its orders as a list under 'orders' in structuredContent; got {sc!r}.",
        )
        got_ids = [o.get("orderId") if isinstance(o, dict) else o for o in orders]
        expect(
            sorted(map(str, got_ids)) == sorted(want.finds),
            f"{what} must find {list(want.finds) or 'no orders'}; yours found {got_ids or 'none'}.",
        )
        if not want.finds:
            expect(result_text(got).strip() != "", f"{what} matches nothing: its result needs a text saying so.")
    if want.refunded is not None:
        order = sc.get("order")
        refunded = order.get("refundedUsd") if isinstance(order, dict) else None
        expect(
            same_number(refunded, want.refunded),
            f"{what} must show refundedUsd {want.refunded:g}; yours shows {refunded!r}.",
        )
    if want.data is not None:
        expect_data(got, tool, want.data, what)


def expect_data(got: dict[str, Any], tool: str, data: dict[str, Any], what: str) -> None:
    """A success's structuredContent is ``data``, with a short text for the model."""
    sc = structured(got)
    if tool == "search_orders" and not data["orders"]:
        orders = sc.get("orders")
        expect(orders == [], f"{what} must give an empty list under 'orders' in structuredContent; got {sc!r}.")
        expect(result_text(got).strip() != "", f"{what} matches nothing: its result needs a text saying so.")
        return
    expect(result_text(got).strip() != "", f"{what} succeeded, but its result needs a short text for the model too.")
    if tool == "search_orders":
        orders = sc.get("orders")
        expect(
            isinstance(orders, list),
            f"{what} must give its orders as a list under 'orders' in structuredContent; got {sc!r}.",
        )
        by_id = {o.get("orderId"): o for o in orders if isinstance(o, dict)}
        for order in data["orders"]:
            expect(
                by_id.get(order["orderId"]) == order,
                f"{what} must give each order with all its fields, {order}; yours gave {by_id.get(order['orderId'])}.",
            )
        expect(
            len(orders) == len(data["orders"]),
            f"{what} must give {len(data['orders'])} order(s); yours gave {len(orders)}.",
        )
        expect(
            same_number(sc.get("count"), data["count"]),
            f"{what} must say 'count': {data['count']}; yours says {sc.get('count')!r}.",
        )
    elif tool == "get_order":
        expect(
            sc.get("order") == data["order"],
            f"{what} must return {{'order': {data['order']}}}, the order's fields and refundedUsd; yours returned {sc!r}.",
        )
    else:
        for key in ("orderId", "amountUsd", "reason"):
            expect_field(sc, key, data[key], what)
        expect(
            isinstance(sc.get("refundId"), str) and sc["refundId"],
            f"{what} must return the gateway's refundId; got {sc.get('refundId')!r}.",
        )


def search(email: str, status: str | None = None, why: str = "") -> tuple[str, dict[str, Any], str]:
    args = {"customer_email": email} if status is None else {"customer_email": email, "status": status}
    return (
        "search_orders",
        args,
        f"search_orders for {email!r}" + (f" with status {status!r}" if status is not None else "") + why,
    )


def get(order_id: str, why: str = "") -> tuple[str, dict[str, Any], str]:
    return "get_order", {"order_id": order_id}, f"get_order for {order_id}{why}"


def refund(
    order_id: str, amount: float, why: str = "", reason: str = "late delivery"
) -> tuple[str, dict[str, Any], str]:
    dollars = f"${amount:g}" if amount >= 0 else f"-${-amount:g}"
    return (
        "refund_order",
        {"order_id": order_id, "amount_usd": amount, "reason": reason},
        f"refund_order of {dollars} on {order_id}{why}",
    )


def reset(host, role: str = "supervisor", fail_first: int = 0) -> None:
    host.call("host_reset", role=role, fail_first=fail_first)


def run_session(
    host, steps: list[tuple[tuple[str, dict[str, Any], str], Want]], role: str = "supervisor", fail_first: int = 0
) -> None:
    """A fresh desk session for ``role``, then each call in order, judged against what it must give."""
    reset(host, role, fail_first)
    for (tool, args, what), want in steps:
        expect_desk_result(host.call(tool, **args), tool, want, what)


NOT_FOUND = Fails("not_found", False)
DENIED = Fails("permission", False)
INVALID = Fails("validation", False)
REFUSED = Fails("business", False)
DONE = Succeeds()

ORDER_1001 = {"orderId": "ORD-1001", "customerEmail": "alice@example.com", "totalUsd": 120.0, "status": "delivered"}
ORDER_1002 = {"orderId": "ORD-1002", "customerEmail": "alice@example.com", "totalUsd": 900.0, "status": "shipped"}
ORDER_1003 = {"orderId": "ORD-1003", "customerEmail": "bob@example.com", "totalUsd": 45.5, "status": "refunded"}
ORDER_1005 = {"orderId": "ORD-1005", "customerEmail": "dave@example.com", "totalUsd": 75.0, "status": "delivered"}


@checks.check(
    "desk_empty_search",
    points=2,
    title="a search with no matches is a valid empty result",
    mistake="reports empty results as errors",
)
def desk_empty_search(host) -> None:
    run_session(
        host,
        [
            (search("zed@example.com"), Succeeds(finds=())),
            (search("alice@example.com", "delivered"), Succeeds(finds=("ORD-1001",))),
            (search("bob@example.com", "paid"), Succeeds(finds=())),
            (search("carol@example.com", "shipped"), Succeeds(finds=())),
            (search("dave@example.com"), Succeeds(finds=("ORD-1005",))),
            (search("erin@example.com", "refunded"), Succeeds(finds=())),
        ],
    )


@checks.check(
    "desk_not_found",
    points=2,
    title="an unknown order is not_found, distinct from permission-denied",
    mistake="confuses not-found with other failures",
)
def desk_not_found(host) -> None:
    run_session(
        host,
        [
            (get("ORD-9999", ", which does not exist"), NOT_FOUND),
            (get("ORD-1001", ", which exists"), DONE),
            (get("ORD-5000", ", which does not exist"), NOT_FOUND),
            # Over the $500 limit too: not_found comes first.
            (refund("ORD-8888", 600, ", an order that does not exist"), NOT_FOUND),
        ],
    )
    run_session(host, [(get("ORD-9999", " by a guest (no orders:read scope)"), DENIED)], role="guest")


@checks.check(
    "desk_permission",
    points=2,
    title="a refund without the refunds:write scope is a permission error",
    mistake="permission errors without the missing scope",
)
def desk_permission(host) -> None:
    # Permission first: before the input is even looked at. (get_order by a guest is desk_not_found's.)
    agent = Fails("permission", False, {"missingScope": "refunds:write", "role": "agent"})
    run_session(
        host,
        [
            (refund("ORD-1001", 20, " by an agent (no refunds:write scope)", reason="damaged"), agent),
            (
                refund(
                    "ORD-1002", -5, " by an agent (no refunds:write scope; the amount is checked only after the scope)"
                ),
                agent,
            ),
        ],
        role="agent",
    )
    run_session(
        host,
        [
            (
                search("alice", why=" by a guest (no orders:read scope; the e-mail is checked only after the scope)"),
                Fails("permission", False, {"missingScope": "orders:read", "role": "guest"}),
            ),
            (
                refund("ORD-1004", 10, " by a guest (no refunds:write scope)"),
                Fails("permission", False, {"missingScope": "refunds:write", "role": "guest"}),
            ),
        ],
        role="guest",
    )
    run_session(host, [(refund("ORD-1001", 20, " by a supervisor", reason="damaged"), DONE)])


@checks.check(
    "desk_business_limit",
    points=2,
    title="a refund over $500 is a non-retryable business error",
    mistake="policy limits not reported as business errors",
)
def desk_business_limit(host) -> None:
    def over_the_policy(requested: float) -> Fails:
        return Fails("business", False, {"limit": 500, "requested": requested}, customer_message=True)

    over_what_is_left = Fails("business", False, customer_message=True)
    run_session(
        host,
        [
            (refund("ORD-1002", 750), over_the_policy(750)),
            (refund("ORD-1002", 500, " (exactly the limit)"), DONE),
            (refund("ORD-1002", 450, " ($900 order) after $500 was already refunded"), over_what_is_left),
            (refund("ORD-1003", 10, ", which is already refunded"), over_what_is_left),
            (refund("ORD-1001", 500.01, " ($120 order: the $500 policy is checked first)"), over_the_policy(500.01)),
            (refund("ORD-1005", 50, " ($75 order)"), DONE),
            (refund("ORD-1005", 30, " ($75 order) after $50 was refunded"), over_what_is_left),
        ],
    )


@checks.check(
    "desk_validation",
    points=2,
    title="bad input is a validation error naming the field",
    mistake="bad input not reported as validation",
)
def desk_validation(host) -> None:
    def bad(field: str) -> Fails:
        return Fails("validation", False, {"field": field})

    run_session(
        host,
        [
            (refund("ORD-1001", -5, " (amount -5)", reason="x"), bad("amount_usd")),
            (refund("ORD-1001", 0, " (amount 0)", reason="x"), bad("amount_usd")),
            (search("alice@example.com", "lost"), bad("status")),
            (refund("1001", 10, " (order id '1001')", reason="x"), bad("order_id")),
            (get("order 7", " (order id 'order 7')"), bad("order_id")),
            (search("alice"), bad("customer_email")),
            (get("ORD-12", " (order id 'ORD-12')"), bad("order_id")),
            (refund("ORD-10011", 10, " (order id 'ORD-10011')"), bad("order_id")),
            (
                refund("ORD-7777", 0, " (amount 0, on an order that does not exist: the input is checked first)"),
                bad("amount_usd"),
            ),
        ],
    )


@checks.check(
    "desk_transient",
    points=2,
    title="a gateway outage is a retryable transient error, and nothing moves",
    mistake="returns exception text as a success",
)
def desk_transient(host) -> None:
    outage = Fails("transient", True, retry_hint=True)
    run_session(
        host,
        [
            (refund("ORD-1004", 100, " while the payment gateway is down"), outage),
            (refund("ORD-1004", 100, " retried, with the gateway back"), DONE),
            (get("ORD-1004", " after one failed and one successful $100 refund"), Succeeds(refunded=100)),
        ],
        fail_first=1,
    )
    run_session(
        host,
        [
            (refund("ORD-1005", 30, " while the payment gateway is down"), outage),
            (refund("ORD-1005", 30, " while the payment gateway is still down"), outage),
            (refund("ORD-1005", 30, " retried, with the gateway back"), DONE),
        ],
        fail_first=2,
    )


@checks.check(
    "desk_success",
    points=2,
    title="successful calls return their data in structuredContent",
    mistake="success results without data",
)
def desk_success(host) -> None:
    run_session(
        host,
        [
            (get("ORD-1003"), Succeeds(data={"order": {**ORDER_1003, "refundedUsd": 0.0}})),
            (get("ORD-1001"), Succeeds(data={"order": {**ORDER_1001, "refundedUsd": 0.0}})),
            (search("alice@example.com"), Succeeds(data={"orders": [ORDER_1001, ORDER_1002], "count": 2})),
            (
                refund("ORD-1005", 20, reason="wrong size"),
                Succeeds(data={"orderId": "ORD-1005", "amountUsd": 20, "reason": "wrong size"}),
            ),
            (get("ORD-1005", " after a $20 refund"), Succeeds(data={"order": {**ORDER_1005, "refundedUsd": 20.0}})),
        ],
    )


# --- part C: the decision tree -------------------------------------------------------------------


def learner_decision(host, result: dict[str, Any], attempt: int = 1, max_attempts: int = 3) -> dict[str, Any]:
    decision = structured(host.call("decide", result=result, attempt=attempt, max_attempts=max_attempts)).get(
        "decision"
    )
    expect(
        isinstance(decision, dict) and "action" in decision,
        "decide(...) must return a dict with 'action' and 'reason'.",
    )
    reason = decision.get("reason")
    expect(
        isinstance(reason, str) and reason.strip(),
        f"decide(...) gave action {decision['action']!r} without a 'reason'.",
    )
    return decision


def expect_action(host, result: dict[str, Any], want: str, what: str, attempt: int = 1, max_attempts: int = 3) -> None:
    got = learner_decision(host, result, attempt, max_attempts)["action"]
    expect(
        got == want, f"For {what} (attempt {attempt} of {max_attempts}) the action must be {want!r}; yours is {got!r}."
    )


def shown(result: dict[str, Any]) -> str:
    """A result in words, as a failure message shows it."""
    text = result_text(result)
    said = f" and the text {text!r}" if text else " and no text"
    if "isError" not in result:
        return f"a result without isError, structuredContent {result.get('structuredContent')!r}{said}"
    if result["isError"] is not True:
        return f"a result with isError false, structuredContent {result.get('structuredContent')!r}{said}"
    sc = result.get("structuredContent")
    if not isinstance(sc, dict):
        return f"an error result without structuredContent{said}"
    flags = ", ".join(f"{k} {sc[k]!r}" for k in ("errorCategory", "isRetryable") if k in sc) or "no errorCategory"
    return f"an error result with {flags}{said}"


Decision = tuple[dict[str, Any], int, int, str]  # result, attempt, max_attempts, the action it calls for


def expect_decisions(host, cases: tuple[Decision, ...]) -> None:
    for result, attempt, max_attempts, want in cases:
        expect_action(host, result, want, shown(result), attempt, max_attempts)


def text(words: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": words}]


# Texts that name a class other than the result's own: a decide() that reads the text instead of
# errorCategory takes the wrong branch on them.
SAYS_TRANSIENT = "The gateway timed out; retry in a few seconds."
SAYS_VALIDATION = "Invalid input: amount_usd must be positive."
SAYS_BUSINESS = "Refund exceeds the $500 policy limit; we cannot refund this."
SAYS_PERMISSION = "Permission denied: role agent lacks refunds:write."
SAYS_NOT_FOUND = "Not found: there is no order ORD-4040."

SEARCH_HIT = {
    "isError": False,
    "content": text("2 orders."),
    "structuredContent": {"orders": [{"orderId": "ORD-1001"}, {"orderId": "ORD-1002"}], "count": 2},
}
SEARCH_EMPTY = {"isError": False, "content": text("No orders match."), "structuredContent": {"orders": [], "count": 0}}
TRANSIENT = {
    "isError": True,
    "content": text("The gateway timed out; retry shortly."),
    "structuredContent": {
        "errorCategory": "transient",
        "isRetryable": True,
        "code": "UPSTREAM_UNAVAILABLE",
        "retryAfterSeconds": 0.5,
    },
}
VALIDATION = {
    "isError": True,
    "content": text("amount_usd must be positive."),
    "structuredContent": {
        "errorCategory": "validation",
        "isRetryable": False,
        "code": "INVALID_ARGUMENT",
        "field": "amount_usd",
        "reason": "must be greater than 0",
    },
}
BUSINESS = {
    "isError": True,
    "content": text("Refund of $750 exceeds the $500 single-transaction policy."),
    "structuredContent": {
        "errorCategory": "business",
        "isRetryable": False,
        "code": "REFUND_LIMIT_EXCEEDED",
        "customerMessage": "We can only process refunds up to $500 in one transaction.",
        "limit": 500,
        "requested": 750,
    },
}
PERMISSION = {
    "isError": True,
    "content": text("Role agent lacks refunds:write."),
    "structuredContent": {
        "errorCategory": "permission",
        "isRetryable": False,
        "code": "PERMISSION_DENIED",
        "missingScope": "refunds:write",
        "role": "agent",
    },
}
NOT_FOUND_RESULT = {
    "isError": True,
    "content": text("There is no order ORD-9999."),
    "structuredContent": {"errorCategory": "not_found", "isRetryable": False, "code": "ORDER_NOT_FOUND"},
}
OPERATION_FAILED = {"isError": True, "content": text("Operation failed")}


def error(words: str, **sc: Any) -> dict[str, Any]:
    """An error result with exactly the structuredContent given."""
    return {"isError": True, "content": text(words), "structuredContent": sc}


DECIDE_SUCCESS_AND_EMPTY: tuple[Decision, ...] = (
    (SEARCH_HIT, 1, 3, SUCCESS),
    (SEARCH_EMPTY, 1, 3, EMPTY),
    ({"isError": False, "content": []}, 1, 3, EMPTY),
    (
        {
            "isError": False,
            "content": text("No tickets match; error-free."),
            "structuredContent": {"tickets": [], "total": 0},
        },
        1,
        3,
        EMPTY,
    ),
    # No isError at all; a list that is not empty beside one that is.
    (
        {
            "content": text("1 refund; no orders."),
            "structuredContent": {"orders": [], "refunds": [{"refundId": "RF-1"}]},
        },
        1,
        3,
        SUCCESS,
    ),
    # An errorCategory on a result that is not an error.
    (
        {
            "isError": False,
            "content": text("Retry later if you want more."),
            "structuredContent": {"errorCategory": "transient", "isRetryable": True, "items": [{"id": 1}]},
        },
        1,
        3,
        SUCCESS,
    ),
)
DECIDE_NOT_FOUND: tuple[Decision, ...] = (
    (NOT_FOUND_RESULT, 1, 3, EMPTY),
    (error(SAYS_TRANSIENT, errorCategory="not_found", isRetryable=True, code="E_LOOKUP"), 3, 3, EMPTY),
    (error(SAYS_PERMISSION, errorCategory="not_found", code="E_LOOKUP"), 2, 5, EMPTY),
)
DECIDE_TRANSIENT_RETRY_CAP: tuple[Decision, ...] = (
    (TRANSIENT, 1, 3, RETRY),
    (TRANSIENT, 2, 3, RETRY),
    (TRANSIENT, 3, 3, ESCALATE),
    (TRANSIENT, 3, 5, RETRY),
    (TRANSIENT, 5, 5, ESCALATE),
    (
        error(SAYS_VALIDATION, errorCategory="transient", isRetryable=True, code="E_UPSTREAM", retryAfterSeconds=0.5),
        1,
        1,
        ESCALATE,
    ),
    (
        error(SAYS_BUSINESS, errorCategory="transient", isRetryable=True, code="E_UPSTREAM", retryAfterSeconds=0.5),
        4,
        6,
        RETRY,
    ),
)
DECIDE_TRANSIENT_NOT_RETRYABLE: tuple[Decision, ...] = (
    (
        error(
            "The upstream was decommissioned.",
            errorCategory="transient",
            isRetryable=False,
            code="UPSTREAM_GONE",
            retryAfterSeconds=1.0,
        ),
        1,
        3,
        ESCALATE,
    ),
    (error(SAYS_NOT_FOUND, errorCategory="transient", code="E_UPSTREAM"), 1, 3, ESCALATE),
    (error(SAYS_TRANSIENT, errorCategory="transient", isRetryable="false", code="E_UPSTREAM"), 1, 3, ESCALATE),
)
DECIDE_VALIDATION_REPLANS: tuple[Decision, ...] = (
    (VALIDATION, 1, 3, REPLAN),
    (VALIDATION, 2, 3, REPLAN),
    (error(SAYS_TRANSIENT, errorCategory="validation", isRetryable=True, code="E_INPUT", field="status"), 3, 3, REPLAN),
    (
        error(SAYS_PERMISSION, errorCategory="validation", isRetryable=False, code="E_INPUT", field="status"),
        1,
        5,
        REPLAN,
    ),
)
DECIDE_PERMISSION_ESCALATES: tuple[Decision, ...] = (
    (PERMISSION, 1, 3, ESCALATE),
    (
        error(
            SAYS_TRANSIENT,
            errorCategory="permission",
            isRetryable=True,
            code="E_SCOPE",
            missingScope="orders:read",
            role="guest",
        ),
        1,
        5,
        ESCALATE,
    ),
    (
        error(
            SAYS_NOT_FOUND,
            errorCategory="permission",
            isRetryable=False,
            code="E_SCOPE",
            missingScope="orders:read",
            role="guest",
        ),
        2,
        3,
        ESCALATE,
    ),
)
DECIDE_BUSINESS_STOPS: tuple[Decision, ...] = (
    (BUSINESS, 1, 3, STOP),
    (
        error(
            "Ticket TCK-9 is already closed.",
            errorCategory="business",
            isRetryable=True,
            code="TICKET_CLOSED",
            customerMessage="This ticket is closed.",
            limit=None,
            requested=None,
        ),
        1,
        3,
        STOP,
    ),
    (
        error(SAYS_TRANSIENT, errorCategory="business", code="E_POLICY", customerMessage="We cannot do this."),
        2,
        2,
        STOP,
    ),
)
DECIDE_UNCLASSIFIED: tuple[Decision, ...] = (
    (OPERATION_FAILED, 1, 3, ESCALATE),
    (error("Quota check failed.", errorCategory="quota", isRetryable=True), 1, 3, ESCALATE),
    (error(SAYS_TRANSIENT, errorCategory="", isRetryable=True, code="E_UNKNOWN"), 1, 3, ESCALATE),
    (error(SAYS_VALIDATION, isRetryable=True, code="E_UNKNOWN"), 2, 5, ESCALATE),
    ({"isError": True, "content": text(SAYS_NOT_FOUND)}, 1, 3, ESCALATE),
)


@checks.check(
    "decide_success_and_empty",
    points=1,
    title="success and intentionally empty results are told apart",
    mistake="treats empty results as failures",
)
def decide_success_and_empty(host) -> None:
    expect_action(host, SEARCH_HIT, SUCCESS, "a successful search with two orders")
    expect_action(host, SEARCH_EMPTY, EMPTY, "a successful search with no orders")
    expect_decisions(host, DECIDE_SUCCESS_AND_EMPTY[2:])


@checks.check(
    "decide_not_found",
    points=1,
    title="not_found is a legitimate empty answer",
    mistake="treats not-found as a failure",
)
def decide_not_found(host) -> None:
    expect_action(host, NOT_FOUND_RESULT, EMPTY, "a not_found error")
    expect_decisions(host, DECIDE_NOT_FOUND[1:])


@checks.check(
    "decide_transient_retry_cap",
    points=1,
    title="retryable transient errors are retried until the cap, then escalated",
    mistake="retries without a cap",
)
def decide_transient_retry_cap(host) -> None:
    for result, attempt, max_attempts, want in DECIDE_TRANSIENT_RETRY_CAP[:5]:
        expect_action(host, result, want, "a retryable transient error", attempt, max_attempts)
    expect_decisions(host, DECIDE_TRANSIENT_RETRY_CAP[5:])


@checks.check(
    "decide_transient_not_retryable",
    points=1,
    title="a transient error marked not retryable is escalated",
    mistake="ignores isRetryable",
)
def decide_transient_not_retryable(host) -> None:
    expect_action(host, DECIDE_TRANSIENT_NOT_RETRYABLE[0][0], ESCALATE, "a transient error with isRetryable false")
    expect_decisions(host, DECIDE_TRANSIENT_NOT_RETRYABLE[1:])


@checks.check(
    "decide_validation_replans",
    points=1,
    title="validation errors re-plan, never replay",
    mistake="replays validation errors",
)
def decide_validation_replans(host) -> None:
    for result, attempt, max_attempts, want in DECIDE_VALIDATION_REPLANS[:2]:
        expect_action(host, result, want, "a validation error", attempt, max_attempts)
    expect_decisions(host, DECIDE_VALIDATION_REPLANS[2:])


@checks.check(
    "decide_permission_escalates", points=1, title="permission errors escalate", mistake="retries permission errors"
)
def decide_permission_escalates(host) -> None:
    expect_action(host, PERMISSION, ESCALATE, "a permission error")
    expect_decisions(host, DECIDE_PERMISSION_ESCALATES[1:])


@checks.check(
    "decide_business_stops",
    points=1,
    title="business errors surface the customer message and stop",
    mistake="retries business errors",
)
def decide_business_stops(host) -> None:
    expect_action(host, BUSINESS, STOP, "a business error")
    expect_action(host, DECIDE_BUSINESS_STOPS[1][0], STOP, "a business error wrongly marked isRetryable true")
    expect_decisions(host, DECIDE_BUSINESS_STOPS[2:])


@checks.check(
    "decide_unclassified_escalates",
    points=1,
    title="errors without a known category escalate as unclassified",
    mistake="guesses on unclassified errors",
)
def decide_unclassified_escalates(host) -> None:
    expect_action(host, OPERATION_FAILED, ESCALATE, "the 'Operation failed' anti-pattern")
    expect_action(host, DECIDE_UNCLASSIFIED[1][0], ESCALATE, "an error with an unknown errorCategory 'quota'")
    expect_decisions(host, DECIDE_UNCLASSIFIED[2:])


# --- part D: local recovery and the escalation envelope ------------------------------------------
#
# A run: items, endpoints, a script (each endpoint answers each item with a list of results, the last
# one repeating) and max_attempts. The waits are retry_delay(hint, attempt), as the kit hands it to the
# learner: the server's retryAfterSeconds when it asks for longer than backoff_delay(attempt), else the
# backoff. Most transient errors here hint no longer than the backoff; recover_backoff's last run hints
# longer, so a recover() that ignores the hint (or always waits the hint alone) fails there.


def ok(item: str) -> dict[str, Any]:
    return {"isError": False, "content": text(f"Order {item}."), "structuredContent": {"order": {"orderId": item}}}


def data(item: str) -> dict[str, Any]:
    """The structuredContent ``ok(item)`` carries, as a result entry holds it."""
    return {"order": {"orderId": item}}


def run_recover(
    host,
    items: list[str],
    endpoints: list[str],
    script: dict[str, dict[str, list[dict[str, Any]]]],
    max_attempts: int = 3,
):
    """The learner's envelope, and the calls ([endpoint, item]) and waits the host saw."""
    out = structured(host.call("recover", items=items, endpoints=endpoints, script=script, max_attempts=max_attempts))
    envelope = out.get("envelope")
    expect(isinstance(envelope, dict), "recover(...) must return the envelope as a dict.")
    return envelope, out.get("calls", []), out.get("sleeps", [])


def done_items(envelope: dict[str, Any], key: str) -> list[Any]:
    entries = envelope.get(key)
    expect(isinstance(entries, list), f"The envelope must list its results under '{key}'.")
    return [e.get("item") if isinstance(e, dict) else e for e in entries]


def show_calls(calls: list[Any]) -> str:
    return ", ".join("/".join(map(str, c)) if isinstance(c, (list, tuple)) else repr(c) for c in calls) or "none"


def expect_calls(calls: list[Any], want: list[list[str]], where: str) -> None:
    if [list(c) if isinstance(c, (list, tuple)) else c for c in calls] != want:
        raise CheckFailed(
            f"{where}: the calls (endpoint/item) must be {show_calls(want)}; yours were {show_calls(calls)}."
        )


def expect_entries(envelope: dict[str, Any], key: str, want: list[dict[str, Any]], where: str) -> None:
    """The envelope's ``key`` lists exactly ``want``'s entries, in order (each judged on the keys ``want`` gives)."""
    entries = envelope.get(key)
    expect(isinstance(entries, list), f"{where}: the envelope must list its results under '{key}'.")
    fields = list(want[0]) if want else ["item"]
    got = [{k: e.get(k) for k in fields} if isinstance(e, dict) else e for e in entries]
    expect(got == want, f"{where}: '{key}' must be {want}; yours is {got!r}.")


def expect_attempts(envelope: dict[str, Any], endpoints_tried: list[str], retry_count: int, where: str) -> None:
    attempts = envelope.get("attempts")
    expect(isinstance(attempts, dict), f"{where}: the envelope must say what was tried under 'attempts'.")
    expect(
        attempts.get("endpointsTried") == endpoints_tried,
        f"{where}: attempts.endpointsTried must be {endpoints_tried}; yours is {attempts.get('endpointsTried')!r}.",
    )
    expect(
        attempts.get("retryCount") == retry_count,
        f"{where}: attempts.retryCount must be {retry_count} (retries, not calls); yours is {attempts.get('retryCount')!r}.",
    )


def expect_status(envelope: dict[str, Any], status: str, where: str) -> None:
    expect(
        envelope.get("status") == status,
        f"{where}: the status must be {status!r}; yours is {envelope.get('status')!r}.",
    )


def expect_description(envelope: dict[str, Any], where: str) -> None:
    expect(
        isinstance(envelope.get("description"), str) and len(envelope["description"]) >= 20,
        f"{where}: the envelope needs a 'description' for the coordinator's log.",
    )


def transient(words: str = "The upstream timed out.") -> dict[str, Any]:
    return error(words, errorCategory="transient", isRetryable=True, code="UPSTREAM_TIMEOUT", retryAfterSeconds=0.25)


@checks.check(
    "recover_backoff",
    points=2,
    title="transient failures are retried locally, waiting the server's hint or a growing backoff",
    mistake="retries without backoff, or sooner than the server's retry hint",
)
def recover_backoff(host) -> None:
    envelope, calls, sleeps = run_recover(host, ["A"], ["primary"], {"primary": {"A": [TRANSIENT, TRANSIENT, ok("A")]}})
    expect(
        envelope.get("status") == "complete",
        f"Two transient failures then a success must end 'complete'; got status {envelope.get('status')!r}.",
    )
    expect(len(calls) == 3, f"Two failures then a success take 3 calls; yours made {len(calls)}.")
    expect(len(sleeps) == 2, f"There must be a wait before each of the 2 retries; yours waited {len(sleeps)} time(s).")
    want_sleeps = [backoff_delay(1), backoff_delay(2)]
    expect(
        sleeps == want_sleeps,
        f"The waits must be retry_delay of each failed attempt, {want_sleeps}, growing (exponential backoff: the 0.5 s hint asks for no longer); yours were {sleeps}.",
    )
    expect(done_items(envelope, "results") == ["A"], "A complete envelope lists every item's result under 'results'.")
    entry = envelope["results"][0]
    expect(
        isinstance(entry, dict) and entry.get("data") == data("A") and entry.get("endpoint") == "primary",
        "Each result entry is {'item', 'endpoint', 'data'} with the structuredContent the endpoint returned.",
    )
    attempts = envelope.get("attempts")
    expect(
        isinstance(attempts, dict)
        and attempts.get("retryCount") == 2
        and attempts.get("endpointsTried") == ["primary"],
        f"A complete envelope also says what was tried: attempts with retryCount 2 and endpointsTried ['primary']; got {attempts!r}.",
    )
    # Five attempts allowed: item B fails four times before it answers; item A once. Each item's attempts count anew.
    where = "With items ['A', 'B'], one endpoint 'solo' and max_attempts 5 (A fails once then answers, B fails 4 times then answers)"
    script = {"solo": {"A": [transient(), ok("A")], "B": [transient()] * 4 + [ok("B")]}}
    envelope, calls, sleeps = run_recover(host, ["A", "B"], ["solo"], script, max_attempts=5)
    expect_calls(calls, [["solo", "A"]] * 2 + [["solo", "B"]] * 5, where)
    expect_status(envelope, "complete", where)
    want_sleeps = [backoff_delay(1), backoff_delay(1), backoff_delay(2), backoff_delay(3), backoff_delay(4)]
    expect(
        sleeps == want_sleeps,
        f"{where}: the waits must be retry_delay of each failed attempt, {want_sleeps} (the 0.25 s hint asks for no longer than the backoff); yours were {sleeps}.",
    )
    expect_entries(
        envelope,
        "results",
        [{"item": "A", "endpoint": "solo", "data": data("A")}, {"item": "B", "endpoint": "solo", "data": data("B")}],
        where,
    )
    expect_attempts(envelope, ["solo"], 5, where)
    # The server asks for 1.5 s: longer than the first two backoffs (0.5 s, 1 s), shorter than the third (2 s).
    where = "With item 'H', one endpoint 'main' and max_attempts 4 (H fails 3 times with a transient error hinting retryAfterSeconds 1.5, then answers)"
    hinted = error(
        "The ledger is rate-limited; retry after 1.5 seconds.",
        errorCategory="transient",
        isRetryable=True,
        code="RATE_LIMITED",
        retryAfterSeconds=1.5,
    )
    envelope, calls, sleeps = run_recover(
        host, ["H"], ["main"], {"main": {"H": [hinted] * 3 + [ok("H")]}}, max_attempts=4
    )
    expect_calls(calls, [["main", "H"]] * 4, where)
    expect_status(envelope, "complete", where)
    want_sleeps = [1.5, 1.5, 2.0]
    expect(
        sleeps == want_sleeps,
        f"{where}: the waits must be retry_delay of each failed attempt, {want_sleeps}: the server's 1.5 s while it is longer "
        f"than backoff_delay (0.5 s, 1 s), then the backoff (2 s); never sooner than the server asked. Yours were {sleeps}.",
    )


@checks.check(
    "recover_cap_and_failover",
    points=2,
    title="the retry cap holds per endpoint, then the fallback endpoint is used",
    mistake="retries without a cap",
)
def recover_cap_and_failover(host) -> None:
    envelope, calls, _ = run_recover(
        host, ["A"], ["primary", "replica"], {"primary": {"A": [TRANSIENT]}, "replica": {"A": [ok("A")]}}
    )
    on_primary = sum(1 for c in calls if isinstance(c, (list, tuple)) and c[:1] == ["primary"])
    expect(on_primary == 3, f"With a cap of 3 attempts, the primary gets exactly 3 calls; yours made {on_primary}.")
    expect(
        calls and list(calls[-1])[:1] == ["replica"],
        "After the primary's attempts are spent, the fallback endpoint must be tried.",
    )
    expect(
        envelope.get("status") == "complete",
        f"The fallback answered, so the run must end 'complete'; got {envelope.get('status')!r}.",
    )
    # A cap of two, three endpoints: the first two are spent, the third answers on its second attempt.
    where = "With item 'X', endpoints ['east', 'west', 'south'] and max_attempts 2 (east and west keep failing, south fails once then answers)"
    script = {"east": {"X": [transient()]}, "west": {"X": [transient()]}, "south": {"X": [transient(), ok("X")]}}
    envelope, calls, _ = run_recover(host, ["X"], ["east", "west", "south"], script, max_attempts=2)
    expect_calls(calls, [["east", "X"]] * 2 + [["west", "X"]] * 2 + [["south", "X"]] * 2, where)
    expect_status(envelope, "complete", where)
    expect_entries(envelope, "results", [{"item": "X", "endpoint": "south"}], where)


@checks.check(
    "recover_no_replay_validation",
    points=2,
    title="a validation error is never replayed and is escalated for re-planning",
    mistake="replays validation errors",
)
def recover_no_replay_validation(host) -> None:
    envelope, calls, sleeps = run_recover(
        host, ["A", "B"], ["primary"], {"primary": {"A": [ok("A")], "B": [VALIDATION, ok("B")]}}
    )
    on_b = sum(1 for c in calls if isinstance(c, (list, tuple)) and list(c)[1:] == ["B"])
    expect(on_b == 1, f"A validation error must not be replayed: item B got {on_b} calls.")
    expect(not sleeps, "Nothing was retried, so nothing should wait.")
    expect(
        envelope.get("status") == "escalated",
        f"The validation error cannot be fixed locally: status must be 'escalated'; got {envelope.get('status')!r}.",
    )
    expect(
        envelope.get("errorCategory") == "validation",
        f"The envelope's errorCategory must be 'validation'; got {envelope.get('errorCategory')!r}.",
    )
    # After a retried transient failure, a validation error: not replayed, and not sent to the other endpoint either.
    where = "With item 'C', endpoints ['primary', 'replica'] (primary fails once with a transient error, then gives a validation error; replica answers)"
    script = {"primary": {"C": [transient(), VALIDATION]}, "replica": {"C": [ok("C")]}}
    envelope, calls, _ = run_recover(host, ["C"], ["primary", "replica"], script)
    expect_calls(calls, [["primary", "C"], ["primary", "C"]], where)
    expect_status(envelope, "escalated", where)
    expect(
        envelope.get("errorCategory") == "validation",
        f"{where}: the envelope's errorCategory must be 'validation'; yours is {envelope.get('errorCategory')!r}.",
    )
    expect(
        envelope.get("failedItem") == "C",
        f"{where}: the envelope's failedItem must be 'C'; yours is {envelope.get('failedItem')!r}.",
    )


@checks.check(
    "recover_no_retry_business",
    points=2,
    title="a business error is not retried and its customer message is passed up",
    mistake="retries business errors",
)
def recover_no_retry_business(host) -> None:
    envelope, calls, _ = run_recover(
        host, ["A"], ["primary", "replica"], {"primary": {"A": [BUSINESS, ok("A")]}, "replica": {"A": [ok("A")]}}
    )
    expect(len(calls) == 1, f"A business error must not be retried or tried elsewhere: yours made {len(calls)} calls.")
    expect(
        envelope.get("status") == "escalated" and envelope.get("errorCategory") == "business",
        "The envelope must be 'escalated' with errorCategory 'business'.",
    )
    expect(
        envelope.get("isRetryable") is False,
        "A business failure is not retryable: isRetryable must be false in the envelope.",
    )
    expect(
        envelope.get("customerMessage") == BUSINESS["structuredContent"]["customerMessage"],
        "The envelope must carry the customerMessage up to the coordinator.",
    )
    # The second item fails once, then meets a business rule: the work stops there, with the first item done.
    closed = error(
        "Ticket TCK-2 is closed.",
        errorCategory="business",
        isRetryable=False,
        code="TICKET_CLOSED",
        customerMessage="This ticket is closed.",
        limit=None,
        requested=None,
    )
    where = "With items ['X', 'Y'], endpoints ['primary', 'replica'] (X answers; Y fails once with a transient error, then gives a business error)"
    script = {"primary": {"X": [ok("X")], "Y": [transient(), closed]}, "replica": {"X": [ok("X")], "Y": [ok("Y")]}}
    envelope, calls, _ = run_recover(host, ["X", "Y"], ["primary", "replica"], script)
    expect_calls(calls, [["primary", "X"], ["primary", "Y"], ["primary", "Y"]], where)
    expect_status(envelope, "escalated", where)
    expect(
        envelope.get("errorCategory") == "business",
        f"{where}: the envelope's errorCategory must be 'business'; yours is {envelope.get('errorCategory')!r}.",
    )
    expect(
        envelope.get("isRetryable") is False,
        f"{where}: the envelope's isRetryable must be false; yours is {envelope.get('isRetryable')!r}.",
    )
    expect(
        envelope.get("customerMessage") == "This ticket is closed.",
        f"{where}: the envelope must carry the customerMessage 'This ticket is closed.'; yours is {envelope.get('customerMessage')!r}.",
    )


@checks.check(
    "recover_envelope",
    points=2,
    title="an escalation carries partial results and the attempts made",
    mistake="escalates without partial results",
)
def recover_envelope(host) -> None:
    script = {
        "primary": {"A": [ok("A")], "B": [TRANSIENT], "C": [ok("C")]},
        "replica": {"A": [ok("A")], "B": [TRANSIENT], "C": [ok("C")]},
    }
    envelope, calls, _ = run_recover(host, ["A", "B", "C"], ["primary", "replica"], script)
    expect(
        envelope.get("status") == "escalated",
        f"Item B fails on both endpoints: status must be 'escalated'; got {envelope.get('status')!r}.",
    )
    expect(
        envelope.get("errorCategory") == "transient",
        f"The final errorCategory is 'transient'; got {envelope.get('errorCategory')!r}.",
    )
    expect(
        envelope.get("isRetryable") is True,
        "The last failure was retryable: isRetryable must be true, so the coordinator may try later.",
    )
    expect_description(envelope, "Item B fails on both endpoints")
    expect(
        done_items(envelope, "partialResults") == ["A"],
        "partialResults must hold the result gathered before the failure (item A).",
    )
    expect(envelope.get("failedItem") == "B", f"failedItem must be 'B'; got {envelope.get('failedItem')!r}.")
    expect(
        not any(isinstance(c, (list, tuple)) and list(c)[1:] == ["C"] for c in calls),
        "Work stops at the failure: item C must not be attempted.",
    )
    attempts = envelope.get("attempts")
    expect(isinstance(attempts, dict), "The envelope must say what was tried under 'attempts'.")
    expect(
        attempts.get("endpointsTried") == ["primary", "replica"],
        f"attempts.endpointsTried must be ['primary', 'replica']; got {attempts.get('endpointsTried')!r}.",
    )
    expect(
        attempts.get("retryCount") == 4,
        f"attempts.retryCount must be 4 (retries, not calls); got {attempts.get('retryCount')!r}.",
    )
    # Two attempts allowed, one endpoint: P answers after one retry, Q's attempts are spent.
    where = "With items ['P', 'Q'], one endpoint 'only' and max_attempts 2 (P fails once then answers, Q keeps failing)"
    envelope, calls, _ = run_recover(
        host, ["P", "Q"], ["only"], {"only": {"P": [transient(), ok("P")], "Q": [transient()]}}, max_attempts=2
    )
    expect_calls(calls, [["only", "P"]] * 2 + [["only", "Q"]] * 2, where)
    expect_status(envelope, "escalated", where)
    expect(
        envelope.get("errorCategory") == "transient" and envelope.get("isRetryable") is True,
        f"{where}: the envelope must say errorCategory 'transient' and isRetryable true.",
    )
    expect(
        envelope.get("failedItem") == "Q", f"{where}: failedItem must be 'Q'; yours is {envelope.get('failedItem')!r}."
    )
    expect_description(envelope, where)
    expect_entries(envelope, "partialResults", [{"item": "P", "endpoint": "only"}], where)
    expect_attempts(envelope, ["only"], 2, where)
