"""Lab 1's checks: structured tool errors, the desk, the decision tree, local recovery.

Each check drives the learner host (``servers.learner_host.lab1``) over an MCP session and
judges wire-level results against the reference model: ``grader.taxonomy`` for the builders,
the desk's own rules (``servers.support_desk.desk``) for the handlers, ``grader.decisions``
and ``grader.recovery`` for the decision tree and local recovery. A check tries its named
case, then generated ones of the same kind (``grader.labs.cases``): other codes, keys and
numbers for a builder; other customers, orders, roles and amounts for the desk; other texts,
retry flags and attempt counts for decide(); other items, endpoints, caps and orders of
failures for recover(). So a mistake that hides in the case not shown still fails.

Each check keeps to inputs of its own (a $750 refund is desk_business_limit's, a permission
error reaches decide() only in decide_permission_escalates), so code that breaks on one input
costs the check that stands for it. Check names are the grade ids of the lab notebook's
graded cells.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from labkit.checking import CheckFailed, CheckRegistry, describe, expect, structured
from grader.decisions import decide as reference_decide
from grader.labs.cases import covering
from grader.recovery import FakeClock, recover as reference_recover
from grader import taxonomy
from grader.taxonomy import (
    OPERATION_FAILED,
    Category,
    business_error,
    empty_result,
    is_error,
    not_found_error,
    permission_error,
    result_text,
    success_result,
    transient_error,
    validation_error,
)
from servers.support_desk.desk import Caller, Desk, PaymentGateway
from servers.support_desk.world import backoff_delay

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
    same = sc[key] == value and type(sc[key]) is type(value) or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and type(sc[key]) in (int, float) and sc[key] == value
    )
    expect(same, f"{what}: '{key}' should be {value!r}; got {sc[key]!r}.")


def build(host, builder: str, **kwargs: Any) -> dict[str, Any]:
    return host.call("build_result", builder=builder, kwargs=kwargs)


def call_text(name: str, kwargs: dict[str, Any]) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


# --- part A: error results ----------------------------------------------------------------

# The reference builders, called with the same keyword arguments as the learner's.
REFERENCE_BUILDERS = {
    "transient_error": taxonomy.transient_error,
    "validation_error": taxonomy.validation_error,
    "business_error": taxonomy.business_error,
    "permission_error": taxonomy.permission_error,
    "not_found_error": taxonomy.not_found_error,
    "empty_result": taxonomy.empty_result,
}
MESSAGES = (
    "The gateway timed out after 5 s; retry in a few seconds.",
    "Ticket TCK-7 is closed: reopen it before you add a refund.",
    "Role guest may not read orders: ask a supervisor.",
    "No tickets match this filter; this is a valid answer.",
)
OMITTED = object()  # a dimension value meaning "leave the argument out: the builder's default applies"
# What varies in the generated calls of each builder besides its message.
BUILDER_VARIANTS: dict[str, dict[str, list[Any]]] = {
    "transient_error": {"retry_after_seconds": [0.25, OMITTED], "code": ["RATE_LIMITED", OMITTED]},
    "validation_error": {"field": ["customer_email"], "reason": ["not an e-mail address"], "code": ["BAD_EMAIL"]},
    "business_error": {
        "code": ["TICKET_CLOSED", "REFUND_EXCEEDS_ORDER"],
        "customer_message": ["This ticket is closed.", "This order has $45.50 left that can be refunded."],
        "limit": [45.5, None],
        "requested": [60, None],
    },
    "permission_error": {"missing_scope": ["orders:read"], "role": ["guest"], "code": ["SCOPE_MISSING"]},
    "not_found_error": {"code": [OMITTED]},
    "empty_result": {"key": ["tickets", OMITTED]},
}


@cache
def builder_cases(builder: str) -> list[dict[str, Any]]:
    """Generated keyword arguments for ``builder``: every variant value used at least once."""
    cases = covering(len(builder), BUILDER_VARIANTS[builder])
    return [
        {"message": MESSAGES[i % len(MESSAGES)], **{k: v for k, v in case.items() if v is not OMITTED}}
        for i, case in enumerate(cases)
    ]


def expect_built(host, builder: str, kwargs: dict[str, Any], what: str | None = None) -> dict[str, Any]:
    """The learner's ``builder(**kwargs)`` matches the reference: class, retry flag, code, every field, the message as text."""
    what = what or call_text(builder, kwargs)
    want = REFERENCE_BUILDERS[builder](**kwargs)
    result = build(host, builder, **kwargs)
    text = result_text(result)
    if builder == "empty_result":
        key = kwargs.get("key", "items")
        expect(result.get("isError") is not True, f"{what} must not be an error; got {describe(result)}.")
        expect(structured(result).get(key) == [], f"{what} must hold an empty list under {key!r} in structuredContent; got {structured(result)!r}.")
    else:
        sc_want = want["structuredContent"]
        sc = expect_error(result, Category(sc_want["errorCategory"]), sc_want["isRetryable"], what)
        for key, value in sc_want.items():
            if key not in ("errorCategory", "isRetryable"):
                expect_field(sc, key, value, what)
    expect(kwargs["message"] in text, f"{what} must carry the message it was given as its text; its text is {text!r}.")
    return result


def expect_builder(host, builder: str, named: dict[str, Any], what: str) -> None:
    expect_built(host, builder, named, what)
    for kwargs in builder_cases(builder):
        expect_built(host, builder, kwargs)


@checks.check("results_transient", points=1, title="transient_error builds a retryable transient result", mistake="transient errors not marked retryable")
def results_transient(host) -> None:
    expect_builder(host, "transient_error", {"message": "The gateway timed out; retry in 3 seconds.", "retry_after_seconds": 3}, "transient_error(...)")


@checks.check("results_validation", points=1, title="validation_error names the field and why", mistake="validation errors without the field")
def results_validation(host) -> None:
    named = {"message": "amount_usd must be positive; got -5.", "field": "amount_usd", "reason": "must be greater than 0"}
    expect_builder(host, "validation_error", named, "validation_error(...)")


@checks.check("results_business", points=1, title="business_error matches the seed's $750 refund example", mistake="business errors without a customer message")
def results_business(host) -> None:
    named = {
        "message": "Refund of $750 exceeds the $500 single-transaction policy.",
        "code": "REFUND_LIMIT_EXCEEDED",
        "customer_message": "We can only process refunds up to $500 in one transaction.",
        "limit": 500,
        "requested": 750,
    }
    expect_builder(host, "business_error", named, "business_error(...) for the $750 refund")


@checks.check("results_permission", points=1, title="permission_error names the missing scope and the role", mistake="permission errors without the missing scope")
def results_permission(host) -> None:
    named = {"message": "Role agent lacks refunds:write.", "missing_scope": "refunds:write", "role": "agent"}
    expect_builder(host, "permission_error", named, "permission_error(...)")


@checks.check("results_not_found", points=1, title="not_found_error is a non-retryable not_found result", mistake="not-found reported as another class")
def results_not_found(host) -> None:
    expect_builder(host, "not_found_error", {"message": "There is no order ORD-9999.", "code": "ORDER_NOT_FOUND"}, "not_found_error(...)")


@checks.check("results_empty", points=1, title="empty_result is a valid empty answer, not an error", mistake="reports empty results as errors")
def results_empty(host) -> None:
    expect_builder(host, "empty_result", {"message": "No orders match bob@example.com.", "key": "orders"}, "empty_result(..., key='orders')")


# --- part B: the desk's tools, over MCP -------------------------------------------------------
#
# Every call is also made on the desk's own rules (the reference Desk, in the same state), and
# the learner's result must agree with it: an error of the same class and retry flag, a success
# where the desk succeeds. Each check judges in full only what it stands for (the fields of its
# own class of error; the data of a success in desk_success), so one mistake costs the check
# that names it, not every check that happens to meet it.


def reset(host, role: str = "supervisor", fail_first: int = 0) -> Desk:
    host.call("host_reset", role=role, fail_first=fail_first)
    return Desk(Caller(role), PaymentGateway(fail_first=fail_first))


def same_number(a: Any, b: Any) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and isinstance(b, (int, float)) and a == b


# The fields that name what went wrong, for each class.
NAMING_FIELDS = {Category.VALIDATION: ("field",), Category.PERMISSION: ("missingScope", "role")}


def expect_like_the_desk(host, desk: Desk, tool: str, args: dict[str, Any], what: str, own: Category | None, data: str) -> None:
    """Call ``tool`` on the learner's handlers and on the reference desk; the two must agree.

    ``own``: the class of error whose fields this check judges; ``data``: how much of a success
    it judges ("all", "found": the ids a search finds, "refunded": an order's refundedUsd, "" none).
    """
    got = host.call(tool, **args)
    want = getattr(desk, tool)(**args)
    if is_error(want):
        sc_want = want["structuredContent"]
        category = Category(sc_want["errorCategory"])
        sc = expect_error(got, category, sc_want["isRetryable"], what)
        if category is not own:
            return
        names = NAMING_FIELDS.get(category, ())
        if sc_want.get("code") == "REFUND_LIMIT_EXCEEDED":
            names = ("limit", "requested")
        for key in names:
            expect_field(sc, key, sc_want[key], what)
        if category is Category.BUSINESS:
            message = sc.get("customerMessage")
            expect(isinstance(message, str) and message.strip(), f"{what} needs a customerMessage to show the customer.")
        if category is Category.TRANSIENT:
            hint = sc.get("retryAfterSeconds")
            expect(
                same_number(hint, hint) and hint > 0,
                f"{what} should give a retry hint in 'retryAfterSeconds', a positive number of seconds; got {hint!r}.",
            )
        return
    wanted = want["structuredContent"]
    empty = taxonomy.is_empty_success(want)
    expect(
        got.get("isError") is not True,
        f"{what} {'matches nothing, which is a valid answer' if empty else 'must succeed'}: it must not be an error; got {describe(got)}.",
    )
    sc = structured(got)
    if tool == "search_orders" and data in ("all", "found"):
        want_ids = [o["orderId"] for o in wanted["orders"]]
        orders = sc.get("orders")
        expect(isinstance(orders, list), f"{what} must give its orders as a list under 'orders' in structuredContent; got {sc!r}.")
        got_ids = [o.get("orderId") if isinstance(o, dict) else o for o in orders]
        expect(sorted(map(str, got_ids)) == sorted(want_ids), f"{what} must find {want_ids or 'no orders'}; yours found {got_ids or 'none'}.")
        if not want_ids:
            expect(result_text(got).strip() != "", f"{what} matches nothing: its result needs a text saying so.")
    if data != "all":
        if tool == "get_order" and data == "refunded":
            refunded = (sc.get("order") or {}).get("refundedUsd") if isinstance(sc.get("order"), dict) else None
            want_refunded = wanted["order"]["refundedUsd"]
            expect(same_number(refunded, want_refunded), f"{what} must show refundedUsd {want_refunded:g}; yours shows {refunded!r}.")
        return
    expect(result_text(got).strip() != "", f"{what} succeeded, but its result needs a short text for the model too.")
    if tool == "search_orders":
        by_id = {o.get("orderId"): o for o in sc["orders"] if isinstance(o, dict)}
        for order in wanted["orders"]:
            expect(by_id.get(order["orderId"]) == order, f"{what} must give each order with all its fields, {order}; yours gave {by_id.get(order['orderId'])}.")
        count = len(wanted["orders"])
        if count:
            expect(same_number(sc.get("count"), count), f"{what} must say 'count': {count}; yours says {sc.get('count')!r}.")
    elif tool == "get_order":
        expect(sc.get("order") == wanted["order"], f"{what} must return {{'order': {wanted['order']}}}, the order's fields and refundedUsd; yours returned {sc!r}.")
    else:
        for key in ("orderId", "amountUsd", "reason"):
            expect_field(sc, key, wanted[key], what)
        expect(isinstance(sc.get("refundId"), str) and sc["refundId"], f"{what} must return the gateway's refundId; got {sc.get('refundId')!r}.")


def run_desk(host, steps: list[tuple], *, own: Category | None = None, data: str = "", role: str = "supervisor", fail_first: int = 0) -> None:
    """Reset the desk, then make each call (tool, args, what) on both desks, in order."""
    desk = reset(host, role, fail_first)
    for tool, args, what in steps:
        expect_like_the_desk(host, desk, tool, args, what, own, data)


def search(email: str, status: str | None = None, why: str = "") -> tuple:
    args = {"customer_email": email} if status is None else {"customer_email": email, "status": status}
    return "search_orders", args, f"search_orders for {email!r}" + (f" with status {status!r}" if status else "") + why


def get(order_id: str, why: str = "") -> tuple:
    return "get_order", {"order_id": order_id}, f"get_order for {order_id}{why}"


def refund(order_id: str, amount: float, why: str = "", reason: str = "late delivery") -> tuple:
    dollars = f"${amount:g}" if amount >= 0 else f"-${-amount:g}"
    return "refund_order", {"order_id": order_id, "amount_usd": amount, "reason": reason}, f"refund_order of {dollars} on {order_id}{why}"


@checks.check("desk_empty_search", points=2, title="a search with no matches is a valid empty result", mistake="reports empty results as errors")
def desk_empty_search(host) -> None:
    named = [search("zed@example.com"), search("alice@example.com", "delivered"), search("bob@example.com", "paid")]
    generated = covering(7, {"email": ["carol@example.com", "erin@example.com", "bob@example.com"], "status": [None, "shipped", "refunded"]})
    run_desk(host, named + [search(case["email"], case["status"]) for case in generated], data="found")


@checks.check("desk_not_found", points=2, title="an unknown order is not_found, distinct from permission-denied", mistake="confuses not-found with other failures")
def desk_not_found(host) -> None:
    # Other unknown ids, by get_order and by refund_order (with an amount over the limit: not_found comes first).
    unknown = covering(11, {"order_id": ["ORD-1006", "ORD-4321"], "tool": ["get_order", "refund_order"]})
    steps = [get("ORD-9999", ", which does not exist"), get("ORD-1001", ", which exists")]
    for case in unknown:
        if case["tool"] == "get_order":
            steps.append(get(case["order_id"], ", which does not exist"))
        else:
            steps.append(refund(case["order_id"], 600, ", an order that does not exist"))
    run_desk(host, steps, own=Category.NOT_FOUND)
    run_desk(host, [get("ORD-9999", " by a guest (no orders:read scope)")], own=Category.NOT_FOUND, role="guest")


@checks.check("desk_permission", points=2, title="a refund without the refunds:write scope is a permission error", mistake="permission errors without the missing scope")
def desk_permission(host) -> None:
    # Every tool a role lacks the scope for (get_order by a guest is desk_not_found's), and permission
    # first: before the input is even looked at.
    run_desk(
        host,
        [
            refund("ORD-1001", 20, " by an agent (no refunds:write scope)", reason="damaged"),
            refund("ORD-1002", -5, " by an agent (no refunds:write scope; the amount is checked only after the scope)"),
        ],
        own=Category.PERMISSION,
        role="agent",
    )
    run_desk(
        host,
        [
            search("alice", why=" by a guest (no orders:read scope; the e-mail is checked only after the scope)"),
            refund("ORD-1004", 10, " by a guest (no refunds:write scope)"),
        ],
        own=Category.PERMISSION,
        role="guest",
    )
    run_desk(host, [refund("ORD-1001", 20, " by a supervisor", reason="damaged")], own=Category.PERMISSION)


@checks.check("desk_business_limit", points=2, title="a refund over $500 is a non-retryable business error", mistake="policy limits not reported as business errors")
def desk_business_limit(host) -> None:
    run_desk(
        host,
        [
            refund("ORD-1002", 750),
            refund("ORD-1002", 500, " (exactly the limit)"),
            refund("ORD-1002", 450, " ($900 order) after $500 was already refunded"),
            refund("ORD-1003", 10, ", which is already refunded"),
            refund("ORD-1001", 500.01, " ($120 order: the $500 policy is checked first)"),
            refund("ORD-1005", 50, " ($75 order)"),
            refund("ORD-1005", 30, " ($75 order) after $50 was refunded"),
        ],
        own=Category.BUSINESS,
    )


@checks.check("desk_validation", points=2, title="bad input is a validation error naming the field", mistake="bad input not reported as validation")
def desk_validation(host) -> None:
    bad_ids = covering(17, {"order_id": ["ORD-12", "ORD-10011"], "tool": ["get_order", "refund_order"]})
    run_desk(
        host,
        [
            refund("ORD-1001", -5, " (amount -5)", reason="x"),
            refund("ORD-1001", 0, " (amount 0)", reason="x"),
            search("alice@example.com", "lost"),
            refund("1001", 10, " (order id '1001')", reason="x"),
            get("order 7", " (order id 'order 7')"),
            search("alice"),
            *(get(c["order_id"], f" (order id {c['order_id']!r})") if c["tool"] == "get_order" else refund(c["order_id"], 10, f" (order id {c['order_id']!r})") for c in bad_ids),
            refund("ORD-7777", 0, " (amount 0, on an order that does not exist: the input is checked first)"),
        ],
        own=Category.VALIDATION,
    )


@checks.check("desk_transient", points=2, title="a gateway outage is a retryable transient error, and nothing moves", mistake="returns exception text as a success")
def desk_transient(host) -> None:
    run_desk(
        host,
        [
            refund("ORD-1004", 100, " while the payment gateway is down"),
            refund("ORD-1004", 100, " retried, with the gateway back"),
            get("ORD-1004", " after one failed and one successful $100 refund"),
        ],
        own=Category.TRANSIENT,
        data="refunded",
        fail_first=1,
    )
    run_desk(
        host,
        [
            refund("ORD-1005", 30, " while the payment gateway is down"),
            refund("ORD-1005", 30, " while the payment gateway is still down"),
            refund("ORD-1005", 30, " retried, with the gateway back"),
        ],
        own=Category.TRANSIENT,
        fail_first=2,
    )


@checks.check("desk_success", points=2, title="successful calls return their data in structuredContent", mistake="success results without data")
def desk_success(host) -> None:
    run_desk(
        host,
        [
            get("ORD-1003"),
            get("ORD-1001"),
            search("alice@example.com"),
            refund("ORD-1005", 20, reason="wrong size"),
            get("ORD-1005", " after a $20 refund"),
        ],
        data="all",
    )


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


def shown(result: dict[str, Any]) -> str:
    """A generated result in words, as a failure message shows it."""
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


def expect_actions(host, cases: list[tuple[dict[str, Any], int, int]]) -> None:
    for result, attempt, max_attempts in cases:
        expect_action(host, result, shown(result), attempt, max_attempts)


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

# Texts that name a class other than the result's own: a decide() that reads the text instead of
# errorCategory takes the wrong branch on them.
TEXTS = {
    "transient": "The gateway timed out; retry in a few seconds.",
    "validation": "Invalid input: amount_usd must be positive.",
    "business": "Refund exceeds the $500 policy limit; we cannot refund this.",
    "permission": "Permission denied: role agent lacks refunds:write.",
    "not_found": "Not found: there is no order ORD-4040.",
    "unclassified": "Operation failed",
}


def other_texts(category: str) -> list[str]:
    return [text for name, text in TEXTS.items() if name != category]


def error_case(category: Any, text: str, retryable: Any = OMITTED, **fields: Any) -> dict[str, Any]:
    """An error result with exactly the given errorCategory (OMITTED: none) and isRetryable (OMITTED: none)."""
    sc: dict[str, Any] = {}
    if category is not OMITTED:
        sc["errorCategory"] = category
    if retryable is not OMITTED:
        sc["isRetryable"] = retryable
    return {"isError": True, "content": [taxonomy.text_block(text)], "structuredContent": {**sc, "code": "E_GENERATED", **fields}}


def generated_errors(seed: int, category: str, dimensions: dict[str, list[Any]], **fields: Any) -> list[tuple[dict[str, Any], int, int]]:
    """Errors of ``category`` with every listed isRetryable flag, attempt count and misleading text used at least once."""
    cases = covering(seed, {"text": other_texts(category)[:3], **dimensions})
    return [
        (error_case(category, case["text"], case.get("retryable", OMITTED), **fields), *case.get("attempts", (1, 3)))
        for case in cases[: max(len(v) for v in dimensions.values())]
    ]


# Non-error results of other shapes: other keys, lists beside other fields, a list that is not
# empty beside one that is, an errorCategory on a result that is not an error, no isError at all.
NON_ERRORS = [
    {"isError": False, "content": [taxonomy.text_block("No tickets match; error-free.")], "structuredContent": {"tickets": [], "total": 0}},
    {"content": [taxonomy.text_block("1 refund; no orders.")], "structuredContent": {"orders": [], "refunds": [{"refundId": "RF-1"}]}},
    {"isError": False, "content": [taxonomy.text_block("Retry later if you want more.")], "structuredContent": {"errorCategory": "transient", "isRetryable": True, "items": [{"id": 1}]}},
]


@checks.check("decide_success_and_empty", points=1, title="success and intentionally empty results are told apart", mistake="treats empty results as failures")
def decide_success_and_empty(host) -> None:
    expect_action(host, SEARCH_HIT, "a successful search with two orders")
    expect_action(host, SEARCH_EMPTY, "a successful search with no orders")
    expect_action(host, {"isError": False, "content": []}, "a result with isError false and no content")
    expect_actions(host, [(result, 1, 3) for result in NON_ERRORS])


@checks.check("decide_not_found", points=1, title="not_found is a legitimate empty answer", mistake="treats not-found as a failure")
def decide_not_found(host) -> None:
    expect_action(host, NOT_FOUND, "a not_found error")
    expect_actions(host, generated_errors(19, "not_found", {"retryable": [False, True, OMITTED], "attempts": [(1, 3), (3, 3), (2, 5)]}))


@checks.check("decide_transient_retry_cap", points=1, title="retryable transient errors are retried until the cap, then escalated", mistake="retries without a cap")
def decide_transient_retry_cap(host) -> None:
    for attempt in (1, 3):
        expect_action(host, TRANSIENT, "a retryable transient error", attempt, 3)
    expect_action(host, TRANSIENT, "a retryable transient error", 3, 5)
    expect_action(host, TRANSIENT, "a retryable transient error", 5, 5)
    expect_actions(host, generated_errors(23, "transient", {"retryable": [True], "attempts": [(1, 1), (4, 6)]}, retryAfterSeconds=0.5))


@checks.check("decide_transient_not_retryable", points=1, title="a transient error marked not retryable is escalated", mistake="ignores isRetryable")
def decide_transient_not_retryable(host) -> None:
    marked = transient_error("The upstream was decommissioned.", code="UPSTREAM_GONE")
    marked["structuredContent"]["isRetryable"] = False
    expect_action(host, marked, "a transient error with isRetryable false")
    expect_actions(host, generated_errors(29, "transient", {"retryable": [OMITTED, "false"]}))


@checks.check("decide_validation_replans", points=1, title="validation errors re-plan, never replay", mistake="replays validation errors")
def decide_validation_replans(host) -> None:
    for attempt in (1, 2):
        expect_action(host, VALIDATION, "a validation error", attempt, 3)
    expect_actions(host, generated_errors(31, "validation", {"retryable": [True, False], "attempts": [(3, 3), (1, 5)]}, field="status"))


@checks.check("decide_permission_escalates", points=1, title="permission errors escalate", mistake="retries permission errors")
def decide_permission_escalates(host) -> None:
    expect_action(host, PERMISSION, "a permission error")
    expect_actions(host, generated_errors(37, "permission", {"retryable": [True, False], "attempts": [(1, 5), (2, 3)]}, missingScope="orders:read", role="guest"))


@checks.check("decide_business_stops", points=1, title="business errors surface the customer message and stop", mistake="retries business errors")
def decide_business_stops(host) -> None:
    expect_action(host, BUSINESS, "a business error")
    wrongly_marked = business_error(
        "Ticket TCK-9 is already closed.", code="TICKET_CLOSED", customer_message="This ticket is closed.", limit=None, requested=None
    )
    wrongly_marked["structuredContent"]["isRetryable"] = True
    expect_action(host, wrongly_marked, "a business error wrongly marked isRetryable true")
    expect_actions(host, generated_errors(41, "business", {"retryable": [True, OMITTED], "attempts": [(1, 5), (2, 2)]}, customerMessage="We cannot do this."))


UNCLASSIFIED = [
    (error_case("", TEXTS["transient"], True), 1, 3),
    (error_case(OMITTED, TEXTS["validation"], True), 2, 5),
    ({"isError": True, "content": [taxonomy.text_block(TEXTS["not_found"])]}, 1, 3),
]


@checks.check("decide_unclassified_escalates", points=1, title="errors without a known category escalate as unclassified", mistake="guesses on unclassified errors")
def decide_unclassified_escalates(host) -> None:
    expect_action(host, OPERATION_FAILED, "the 'Operation failed' anti-pattern")
    odd = {"isError": True, "content": [{"type": "text", "text": "Quota check failed."}], "structuredContent": {"errorCategory": "quota", "isRetryable": True}}
    expect_action(host, odd, "an error with an unknown errorCategory 'quota'")
    expect_actions(host, UNCLASSIFIED)


# --- part D: local recovery and the escalation envelope -------------------------------------


def ok(item: str) -> dict[str, Any]:
    return success_result(f"Order {item}.", {"order": {"orderId": item}})


def run_recover(host, items, endpoints, script, max_attempts: int = 3):
    out = structured(host.call("recover", items=items, endpoints=endpoints, script=script, max_attempts=max_attempts))
    envelope = out.get("envelope")
    expect(isinstance(envelope, dict), "recover(...) must return the envelope as a dict.")
    clock = FakeClock()
    served: dict[tuple[str, str], int] = {}
    calls: list[list[str]] = []

    def call(endpoint, item):
        calls.append([endpoint, item])
        seq = script[endpoint][item]
        n = served.get((endpoint, item), 0)
        served[(endpoint, item)] = n + 1
        return seq[min(n, len(seq) - 1)]

    reference = reference_recover(items, call, endpoints, sleep=clock.sleep, max_attempts=max_attempts)
    reference["calls"] = calls
    return envelope, out.get("calls", []), out.get("sleeps", []), reference


def done_items(envelope: dict[str, Any], key: str) -> list[Any]:
    entries = envelope.get(key)
    expect(isinstance(entries, list), f"The envelope must list its results under '{key}'.")
    return [e.get("item") if isinstance(e, dict) else e for e in entries]


# The generated runs: each endpoint answers each item with a list of results (the last one
# repeats). Their transient errors hint a wait shorter than backoff_delay(1), so the waits are
# exactly backoff_delay(attempt), attempt counted on each endpoint anew.
def step(kind: str, item: str) -> dict[str, Any]:
    if kind == "ok":
        return ok(item)
    if kind == "empty":
        return empty_result(f"Nothing on {item}.", key="orders", count=0)
    if kind == "not_found":
        return not_found_error(f"There is no {item}.", code="ITEM_NOT_FOUND")
    if kind == "transient":
        return transient_error(f"{item}: the upstream timed out.", retry_after_seconds=0.25)
    if kind == "validation":
        return validation_error(f"{item}: the filter is malformed.", field="filter", reason="malformed")
    if kind == "business":
        return business_error(
            f"{item} is locked by policy.", code="ITEM_LOCKED", customer_message=f"{item} cannot be changed now.", limit=None, requested=None
        )
    raise ValueError(kind)


Run = tuple[list[str], list[str], dict[str, dict[str, list[str]]], int]  # items, endpoints, kinds per endpoint and item, max_attempts


def script_of(run: Run) -> dict[str, dict[str, list[dict[str, Any]]]]:
    _, _, kinds, _ = run
    return {endpoint: {item: [step(k, item) for k in seq] for item, seq in per_item.items()} for endpoint, per_item in kinds.items()}


KIND_WORDS = {"ok": "success", "empty": "an empty result", "not_found": "not_found", "validation": "a validation error", "business": "a business error"}


def run_text(run: Run) -> str:
    items, endpoints, kinds, max_attempts = run
    answers = "; ".join(
        f"{endpoint} answers {item} with {', '.join(KIND_WORDS.get(k, k) for k in seq)}" + (" (and again)" if seq[-1] == "transient" else "")
        for endpoint in endpoints
        for item, seq in kinds[endpoint].items()
    )
    return f"items {items}, endpoints {endpoints}, max_attempts {max_attempts} ({answers})"


@cache
def generated_runs(kind: str) -> tuple[Run, ...]:
    """Two runs of recover() for the check of ``kind``, made from a fixed seed."""
    rng = random.Random(f"lab1-recover-{kind}")
    pools = [["X1", "X2", "X3"], ["ORD-7", "ORD-8"], ["t-1", "t-2", "t-3", "t-4"]]
    ends = [["east", "west"], ["main", "backup", "archive"], ["eu", "us"]]
    runs = []
    for n in range(2):
        items = pools[n % len(pools)][: rng.randint(2, 3)]
        endpoints = ends[n % len(ends)]
        cap = rng.randint(2, 4)
        kinds: dict[str, dict[str, list[str]]] = {e: {} for e in endpoints}
        if kind == "backoff":
            endpoints = endpoints[:1]
            cap = [5, 2, 4][n]
            kinds = {endpoints[0]: {i: ["transient"] * rng.randint(j % 2, cap - 1) + [rng.choice(["ok", "empty"])] for j, i in enumerate(items)}}
        elif kind == "failover":
            cap = [2, 4][n]
            for i in items:
                spent = rng.randint(1, len(endpoints) - 1)
                for e in endpoints[:spent]:
                    kinds[e][i] = ["transient"]
                for e in endpoints[spent:]:
                    kinds[e][i] = ["transient"] * rng.randint(0, cap - 1) + [rng.choice(["ok", "empty", "not_found"])]
        else:
            failing = items[rng.randint(1, len(items) - 1)] if kind == "envelope" else rng.choice(items)
            for i in items:
                for e in endpoints:
                    kinds[e][i] = ["transient"] * rng.randint(0, cap - 1) + ["ok"] if e == endpoints[0] else ["ok"]
            what = {"validation": "validation", "business": "business"}.get(kind)
            if what:
                kinds[endpoints[0]][failing] = ["transient"] * rng.randint(0, cap - 1) + [what, "ok"]
            else:  # envelope: every endpoint's attempts spent on one item, after the items before it were done
                for e in endpoints:
                    kinds[e][failing] = ["transient"]
        runs.append((items, endpoints, kinds, cap))
    return tuple(runs)


def expect_run_like_reference(host, run: Run, *, compare: tuple[str, ...]) -> None:
    """Run recover() on a generated run; it must do what the reference does, in the aspects of ``compare``."""
    items, endpoints, _, max_attempts = run
    envelope, calls, sleeps, reference = run_recover(host, list(items), list(endpoints), script_of(run), max_attempts)
    where = f"With {run_text(run)}"
    want_calls = reference["calls"]
    if [list(c) for c in calls] != want_calls:
        show = lambda cs: ", ".join(f"{e}/{i}" for e, i in cs) or "none"  # noqa: E731
        raise CheckFailed(f"{where}: the calls (endpoint/item) must be {show(want_calls)}; yours were {show(calls)}.")
    status = reference["status"]
    expect(envelope.get("status") == status, f"{where}: the status must be {status!r}; yours is {envelope.get('status')!r}.")
    if "sleeps" in compare:
        want_sleeps = [backoff_delay(a) for a in attempts_before_retries(want_calls)]
        expect(sleeps == want_sleeps, f"{where}: the waits must be backoff_delay of each attempt that failed, {want_sleeps}; yours were {sleeps}.")
    key = "results" if status == "complete" else "partialResults"
    if "results" in compare or "data" in compare:
        fields = ("item", "endpoint", "data") if "data" in compare else ("item", "endpoint")
        want = [{k: e[k] for k in fields} for e in reference[key]]
        got = envelope.get(key)
        got = [{k: e.get(k) for k in fields} if isinstance(e, dict) else e for e in got] if isinstance(got, list) else got
        expect(got == want, f"{where}: '{key}' must be {want}; yours is {got!r}.")
    if "attempts" in compare:
        attempts = envelope.get("attempts")
        attempts = attempts if isinstance(attempts, dict) else {}
        for field in ("endpointsTried", "retryCount"):
            want = reference["attempts"][field]
            expect(attempts.get(field) == want, f"{where}: attempts.{field} must be {want!r}; yours is {attempts.get(field)!r}.")
    if status == "escalated":
        for field in ("errorCategory", "isRetryable", "failedItem", "customerMessage"):
            if field in compare and (field in reference or field in envelope):
                want = reference.get(field)
                expect(envelope.get(field) == want, f"{where}: the envelope's {field} must be {want!r}; yours is {envelope.get(field)!r}.")
        if "description" in compare:
            expect(isinstance(envelope.get("description"), str) and len(envelope["description"]) >= 20, f"{where}: the envelope needs a 'description' for the coordinator's log.")


def attempts_before_retries(calls: list[list[str]]) -> list[int]:
    """The attempt number (on its endpoint, for its item) of every call that was followed by a retry of it."""
    numbers: list[int] = []
    previous = None
    attempt = 0
    for endpoint, item in calls:
        if previous == (endpoint, item):
            numbers.append(attempt)
            attempt += 1
        else:
            attempt = 1
        previous = (endpoint, item)
    return numbers


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
    for run in generated_runs("backoff"):
        expect_run_like_reference(host, run, compare=("sleeps", "data", "attempts"))


@checks.check("recover_cap_and_failover", points=2, title="the retry cap holds per endpoint, then the fallback endpoint is used", mistake="retries without a cap")
def recover_cap_and_failover(host) -> None:
    script = {"primary": {"A": [TRANSIENT]}, "replica": {"A": [ok("A")]}}
    envelope, calls, _, _ = run_recover(host, ["A"], ["primary", "replica"], script)
    on_primary = sum(1 for endpoint, _ in calls if endpoint == "primary")
    expect(on_primary == 3, f"With a cap of 3 attempts, the primary gets exactly 3 calls; yours made {on_primary}.")
    expect(calls and calls[-1][0] == "replica", "After the primary's attempts are spent, the fallback endpoint must be tried.")
    expect(envelope.get("status") == "complete", f"The fallback answered, so the run must end 'complete'; got {envelope.get('status')!r}.")
    for run in generated_runs("failover"):
        expect_run_like_reference(host, run, compare=("results",))


@checks.check("recover_no_replay_validation", points=2, title="a validation error is never replayed and is escalated for re-planning", mistake="replays validation errors")
def recover_no_replay_validation(host) -> None:
    script = {"primary": {"A": [ok("A")], "B": [VALIDATION, ok("B")]}}
    envelope, calls, sleeps, _ = run_recover(host, ["A", "B"], ["primary"], script)
    on_b = sum(1 for _, item in calls if item == "B")
    expect(on_b == 1, f"A validation error must not be replayed: item B got {on_b} calls.")
    expect(not sleeps, "Nothing was retried, so nothing should wait.")
    expect(envelope.get("status") == "escalated", f"The validation error cannot be fixed locally: status must be 'escalated'; got {envelope.get('status')!r}.")
    expect(envelope.get("errorCategory") == "validation", f"The envelope's errorCategory must be 'validation'; got {envelope.get('errorCategory')!r}.")
    for run in generated_runs("validation"):
        expect_run_like_reference(host, run, compare=("errorCategory", "failedItem"))


@checks.check("recover_no_retry_business", points=2, title="a business error is not retried and its customer message is passed up", mistake="retries business errors")
def recover_no_retry_business(host) -> None:
    script = {"primary": {"A": [BUSINESS, ok("A")]}, "replica": {"A": [ok("A")]}}
    envelope, calls, _, _ = run_recover(host, ["A"], ["primary", "replica"], script)
    expect(len(calls) == 1, f"A business error must not be retried or tried elsewhere: yours made {len(calls)} calls.")
    expect(envelope.get("status") == "escalated" and envelope.get("errorCategory") == "business", "The envelope must be 'escalated' with errorCategory 'business'.")
    expect(envelope.get("isRetryable") is False, "A business failure is not retryable: isRetryable must be false in the envelope.")
    expect(envelope.get("customerMessage") == BUSINESS["structuredContent"]["customerMessage"], "The envelope must carry the customerMessage up to the coordinator.")
    for run in generated_runs("business"):
        expect_run_like_reference(host, run, compare=("errorCategory", "isRetryable", "customerMessage"))


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
    for run in generated_runs("envelope"):
        expect_run_like_reference(host, run, compare=("results", "attempts", "errorCategory", "isRetryable", "failedItem", "description"))
