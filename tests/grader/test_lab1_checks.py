"""Lab 1's checks, visible and hidden, against the reference solution, a catalogue of realistic wrong answers, and broken code.

Every case grades code the way the grader does: the code runs only inside the learner
host, built in process, and each check drives it over one MCP session. The registry under
test is the grader's: the visible checks (``labkit.checks``) and the hidden ones together.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from functools import cache, partial
from pathlib import Path

import labtests
import pytest
from labtests import (
    assert_fails_exactly,
    assert_sentence_in_words,
    blank_template,
    failed,
    graded_cell_points,
    line_of,
    mutate,
)

from grader.labs.lab1_error_results import ORDER, checks
from grader.notebook import answer_code, read_notebook

LAB = "lab1_error_results"
REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "labs" / "source" / LAB / f"{LAB}.ipynb"
SOLUTION = answer_code(read_notebook(SOURCE))
ALL_CHECKS = set(checks.checks)
HIDDEN = set(checks.hidden)
VISIBLE = ALL_CHECKS - HIDDEN


# grade(code): every check of the lab, in order, over one session with a host running ``code``.
grade = partial(labtests.grade, LAB)


BLANK = blank_template(SOURCE)


# --- the registry and the notebook --------------------------------------------------------------


def test_the_lab_has_twenty_six_visible_checks_worth_thirty_eight_points_and_seven_hidden_worth_fourteen() -> None:
    assert len(VISIBLE) == 26
    assert sum(checks[name].points for name in VISIBLE) == 38
    assert len(HIDDEN) == 7
    assert sum(checks[name].points for name in HIDDEN) == 14
    assert checks.total_points == 52


def test_every_skill_has_hidden_checks_of_one_to_three_points_after_its_visible_ones() -> None:
    skills = ("results_", "desk_", "decide_", "recover_")
    for skill in skills:
        names = [name for name in ORDER if name.startswith(skill)]
        hidden = [name for name in names if checks[name].hidden]
        assert hidden, skill
        assert names[-len(hidden) :] == hidden, f"{skill}: the hidden checks come after the visible ones"
    assert set().union(*({n for n in ORDER if n.startswith(s)} for s in skills)) == ALL_CHECKS
    for name in HIDDEN:
        assert 1 <= checks[name].points <= 3


def test_the_notebooks_graded_cells_are_the_registry_in_order_with_its_points() -> None:
    points = graded_cell_points(SOURCE)
    assert list(points) == ORDER == list(checks.checks)
    assert points == {name: checks[name].points for name in ORDER}
    nb = read_notebook(SOURCE)
    sources = {
        cell.metadata.nbgrader["grade_id"]: cell.source
        for cell in nb.cells
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade")
    }
    for name in ORDER:
        call = f'lab.hidden("{name}")' if checks[name].hidden else f'lab.check("{name}")'
        assert sources[name].splitlines()[-1] == call, sources[name]


def test_the_solution_passes_every_check() -> None:
    results = grade(SOLUTION)

    assert set(results) == ALL_CHECKS
    assert failed(results) == set(), {n: r.message for n, r in results.items() if not r.passed}
    for name, result in results.items():
        assert result.score == result.points
        assert result.message == checks[name].title
        assert not result.host_lost


# --- one realistic wrong answer (or more) per check -------------------------------------------

# (id, edits, the exact set of checks that must fail). A mistake fails the visible check it stands
# for and the hidden check(s) of its skill, which meet it again on other cases; where it
# legitimately breaks another skill's checks too (the desk's handlers use the builders, recover()
# uses decide()), the set names those as well.
MISTAKES: list[tuple[str, tuple[tuple[str, str], ...], set[str]]] = [
    # part A: builders
    (
        "transient_not_marked_retryable",
        (
            (
                """error_result("transient", message, code, True,""",
                """error_result("transient", message, code, False,""",
            ),
        ),
        {"results_transient", "results_unseen_arguments", "desk_transient", "desk_unseen_sessions"},
    ),
    (
        "transient_ignores_the_retry_hint",
        (("""retryAfterSeconds=retry_after_seconds)""", """retryAfterSeconds=1.0)"""),),
        {"results_transient", "results_unseen_arguments"},
    ),
    (
        "validation_without_reason",
        (("""False, field=field, reason=reason)""", """False, field=field)"""),),
        {"results_validation", "results_unseen_arguments"},
    ),
    (
        "business_hardcodes_its_code",
        (
            (
                """error_result("business", message, code, False,""",
                """error_result("business", message, "POLICY", False,""",
            ),
        ),
        {"results_business", "results_unseen_arguments"},
    ),
    (
        "business_snake_case_customer_message",
        (("""customerMessage=customer_message,""", """customer_message=customer_message,"""),),
        {"results_business", "results_unseen_arguments", "desk_business_limit", "desk_unseen_sessions"},
    ),
    (
        "business_without_requested",
        (("""limit=limit, requested=requested)""", """limit=limit)"""),),
        {"results_business", "results_unseen_arguments", "desk_business_limit", "desk_unseen_sessions"},
    ),
    (
        "permission_snake_case_missing_scope",
        (("""missingScope=missing_scope, role=role)""", """missing_scope=missing_scope, role=role)"""),),
        {"results_permission", "results_unseen_arguments", "desk_permission", "desk_unseen_cases"},
    ),
    (
        "not_found_misspells_its_category",
        (
            (
                """error_result("not_found", message, code, False)""",
                """error_result("not-found", message, code, False)""",
            ),
        ),
        {"results_not_found", "results_unseen_arguments", "desk_not_found", "desk_unseen_cases"},
    ),
    (
        "not_found_hardcodes_its_code",
        (
            (
                """error_result("not_found", message, code, False)""",
                """error_result("not_found", message, "NOT_FOUND", False)""",
            ),
        ),
        {"results_not_found", "results_unseen_arguments"},
    ),
    (
        "empty_result_is_an_error",
        (
            (
                """return {"isError": False, "content": [text_block(message)], "structuredContent": {key: []}}""",
                """return {"isError": True, "content": [text_block(message)], "structuredContent": {key: []}}""",
            ),
        ),
        {"results_empty", "results_unseen_arguments", "desk_empty_search", "desk_unseen_cases"},
    ),
    # part B: the desk
    (
        "empty_search_without_the_orders_key",
        (("""This is a valid answer.", key="orders")""", """This is a valid answer.")"""),),
        {"desk_empty_search", "desk_unseen_cases"},
    ),
    (
        "empty_search_is_not_found",
        (
            (
                """return empty_result(f"No orders match {customer_email}. This is a valid answer.", key="orders")""",
                """return not_found_error(f"No orders match {customer_email}.", "NO_ORDERS")""",
            ),
        ),
        {"desk_empty_search", "desk_unseen_cases"},
    ),
    (
        "get_order_misses_the_permission_check",
        (
            (
                """def get_order(desk, order_id):\n    if not desk.caller.can("orders:read"):\n        return permission_error(f"Role {desk.caller.role} may not read orders: it lacks orders:read.", "orders:read", desk.caller.role)\n""",
                """def get_order(desk, order_id):\n""",
            ),
        ),
        {"desk_not_found", "desk_unseen_cases"},
    ),
    (
        "unknown_order_is_a_validation_error",
        (
            (
                """return not_found_error(f"There is no order {order_id}; check the id with the customer.", "ORDER_NOT_FOUND")""",
                """return validation_error(f"There is no order {order_id}; check the id.", "order_id", "no such order")""",
            ),
        ),
        {"desk_not_found", "desk_unseen_cases"},
    ),
    (
        "refund_misses_the_permission_check",
        (
            (
                """    if not desk.caller.can("refunds:write"):\n        return permission_error(f"Role {desk.caller.role} may not refund: it lacks refunds:write. Escalate.", "refunds:write", desk.caller.role)\n""",
                "",
            ),
        ),
        {"desk_permission", "desk_unseen_cases"},
    ),
    (
        "refund_checks_the_wrong_scope",
        (("""if not desk.caller.can("refunds:write"):""", """if not desk.caller.can("orders:read"):"""),),
        {"desk_permission", "desk_unseen_cases"},
    ),
    (
        "refund_limit_off_by_one",
        (("""if amount_usd > REFUND_LIMIT_USD:""", """if amount_usd >= REFUND_LIMIT_USD:"""),),
        {"desk_business_limit", "desk_unseen_sessions"},
    ),
    (
        "refund_does_not_validate_the_order_id",
        (
            (
                """    if not ORDER_ID.match(order_id):\n        return validation_error(f"{order_id!r} is not an order id; they look like ORD-1234.", "order_id", "must match ORD-NNNN")\n    if amount_usd <= 0:""",
                """    if amount_usd <= 0:""",
            ),
        ),
        {"desk_validation", "desk_unseen_cases"},
    ),
    (
        "validation_field_in_camel_case",
        (
            (
                """validation_error(f"{customer_email!r} is not an e-mail address.", "customer_email",""",
                """validation_error(f"{customer_email!r} is not an e-mail address.", "customerEmail",""",
            ),
        ),
        {"desk_validation", "desk_unseen_cases"},
    ),
    (
        "gateway_exception_text_as_success",
        (
            (
                """return transient_error(f"The payment gateway is unavailable ({exc}); nothing moved. Retry shortly.", retry_after_seconds=2.0, code="GATEWAY_UNAVAILABLE")""",
                """return success_result(str(exc), {"message": str(exc)})""",
            ),
        ),
        {"desk_transient", "desk_unseen_sessions"},
    ),
    (
        "refund_not_recorded",
        (("""    desk.refunded_usd[order_id] = desk.refunded_usd.get(order_id, 0.0) + amount_usd\n""", ""),),
        # Every check that reads an order back after a refund sees the refund missing.
        {"desk_business_limit", "desk_transient", "desk_success", "desk_unseen_sessions"},
    ),
    (
        "refund_recorded_before_the_gateway_answers",
        (
            (
                """    try:\n        refund_id = desk.gateway.refund(""",
                """    desk.refunded_usd[order_id] = desk.refunded_usd.get(order_id, 0.0) + amount_usd\n    try:\n        refund_id = desk.gateway.refund(""",
            ),
            (
                """    desk.refunded_usd[order_id] = desk.refunded_usd.get(order_id, 0.0) + amount_usd\n    return success_result(""",
                """    return success_result(""",
            ),
        ),
        {"desk_transient", "desk_unseen_sessions"},
    ),
    (
        "order_success_without_text",
        (
            (
                """return success_result(f"Order {order_id}: ${order['totalUsd']:.2f}, {order['status']}.",""",
                """return success_result("",""",
            ),
        ),
        {"desk_success", "desk_unseen_cases", "desk_unseen_sessions"},
    ),
    (
        "order_not_under_the_order_key",
        (("""{"order": {**order, "refundedUsd": refunded}}""", """{**order, "refundedUsd": refunded}"""),),
        {"desk_transient", "desk_success", "desk_unseen_cases", "desk_unseen_sessions"},
    ),
    # part C: decide
    (
        "empty_answers_count_as_plain_success",
        (
            (
                """        if empty:\n            return {"action": "empty_result", "reason": "Not an error, and nothing matched: a valid empty answer."}\n""",
                "",
            ),
        ),
        {"decide_success_and_empty", "decide_unseen_results"},
    ),
    (
        "not_found_is_escalated",
        (
            (
                """return {"action": "empty_result", "reason": "A valid request that matched nothing."}""",
                """return {"action": "escalate", "reason": "The order was not found."}""",
            ),
        ),
        {"decide_not_found", "decide_unseen_results", "recover_unseen_runs"},
    ),
    (
        "retry_cap_hardcoded_to_three",
        (
            (
                """if sc.get("isRetryable") is True and attempt < max_attempts:""",
                """if sc.get("isRetryable") is True and attempt < 3:""",
            ),
        ),
        # recover() uses decide(), so its cap is three whatever max_attempts says.
        {
            "decide_transient_retry_cap",
            "decide_unseen_budgets",
            "recover_backoff",
            "recover_cap_and_failover",
            "recover_envelope",
            "recover_unseen_runs",
            "recover_unseen_escalations",
        },
    ),
    (
        "retry_cap_off_by_one",
        (
            (
                """if sc.get("isRetryable") is True and attempt < max_attempts:""",
                """if sc.get("isRetryable") is True and attempt <= max_attempts:""",
            ),
        ),
        # recover() uses decide(), so its retry cap is off by one too.
        {
            "decide_transient_retry_cap",
            "decide_unseen_budgets",
            "recover_cap_and_failover",
            "recover_envelope",
            "recover_unseen_runs",
            "recover_unseen_escalations",
        },
    ),
    (
        "transient_retried_whatever_is_retryable_says",
        (("""if sc.get("isRetryable") is True and attempt < max_attempts:""", """if attempt < max_attempts:"""),),
        {"decide_transient_not_retryable", "decide_unseen_results"},
    ),
    (
        "validation_escalated_instead_of_replanned",
        (
            (
                """return {"action": "replan", "reason": "Fix the input; never replay the same call."}""",
                """return {"action": "escalate", "reason": "The input was invalid."}""",
            ),
        ),
        {"decide_validation_replans", "decide_unseen_results"},
    ),
    (
        "validation_replayed",
        (
            (
                """    if category == "transient":\n""",
                """    if category == "validation" and attempt < max_attempts:\n        return {"action": "retry", "reason": "Try the same call again."}\n    if category == "transient":\n""",
            ),
        ),
        # recover() uses decide(), so it replays the validation error too.
        {"decide_validation_replans", "decide_unseen_results", "recover_no_replay_validation"},
    ),
    (
        "permission_retried",
        (
            (
                """    if category == "permission":\n        return {"action": "escalate",""",
                """    if category == "permission" and attempt < max_attempts:\n        return {"action": "retry",""",
            ),
        ),
        {"decide_permission_escalates", "decide_unseen_results", "recover_unseen_escalations"},
    ),
    (
        "business_trusts_is_retryable",
        (
            (
                """    if category == "business":\n""",
                """    if category == "business" and sc.get("isRetryable") is not True:\n""",
            ),
        ),
        {"decide_business_stops", "decide_unseen_results"},
    ),
    (
        "business_retried",
        (
            (
                """return {"action": "surface_and_stop", "reason": f"Policy: {sc.get('customerMessage')}"}""",
                """return {"action": "retry", "reason": "It might go through next time."}""",
            ),
        ),
        # recover() uses decide(), so it retries the business error too.
        {"decide_business_stops", "decide_unseen_results", "recover_no_retry_business", "recover_unseen_escalations"},
    ),
    (
        "unclassified_errors_replanned",
        (
            (
                """return {"action": "escalate", "reason": "Unclassified error: no known errorCategory, so do not guess."}""",
                """return {"action": "replan", "reason": "Unknown failure; try another way."}""",
            ),
        ),
        {"decide_unclassified_escalates", "decide_unseen_results"},
    ),
    (
        "decision_without_reason",
        (
            (
                """return {"action": "empty_result", "reason": "A valid request that matched nothing."}""",
                """return {"action": "empty_result"}""",
            ),
        ),
        {"decide_not_found", "decide_unseen_results"},
    ),
    # part D: recover
    (
        "backoff_does_not_grow",
        (
            (
                """sleep(retry_delay(last["structuredContent"], attempt))""",
                """sleep(retry_delay(last["structuredContent"], 1))""",
            ),
        ),
        {"recover_backoff", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    (
        "retries_without_waiting",
        (("""                    sleep(retry_delay(last["structuredContent"], attempt))\n""", ""),),
        {"recover_backoff", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    (
        "never_fails_over",
        (
            (
                """                if (last.get("structuredContent") or {}).get("errorCategory") == "transient":\n                    break\n""",
                "",
            ),
        ),
        # Without failover the second endpoint is never tried, so endpointsTried is short too.
        {"recover_cap_and_failover", "recover_envelope", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    (
        "cap_off_by_one_in_recover",
        (
            (
                """action = decide(last, attempt, max_attempts)["action"]""",
                """action = decide(last, attempt, max_attempts + 1)["action"]""",
            ),
        ),
        {"recover_cap_and_failover", "recover_envelope", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    (
        "run_served_by_the_fallback_reported_as_degraded",
        (
            (
                """return {"status": "complete", "results": results,""",
                """return {"status": "complete" if len(tried) == 1 else "degraded", "results": results,""",
            ),
        ),
        {"recover_cap_and_failover", "recover_unseen_runs"},
    ),
    (
        "ignores_the_retry_hint",
        (("""sleep(retry_delay(last["structuredContent"], attempt))""", """sleep(backoff_delay(attempt))"""),),
        # The lesson's rule: never retry sooner than the server's retryAfterSeconds asks.
        {"recover_backoff", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    (
        "waits_the_hint_alone",
        (
            (
                """sleep(retry_delay(last["structuredContent"], attempt))""",
                """sleep(last["structuredContent"].get("retryAfterSeconds", backoff_delay(attempt)))""",
            ),
        ),
        # A short hint must not cut the backoff short: the waits still grow.
        {"recover_backoff", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    (
        "validation_replayed_in_recover",
        (("""                if action == "retry":\n""", """                if action in ("retry", "replan"):\n"""),),
        {"recover_no_replay_validation", "recover_unseen_escalations"},
    ),
    (
        "business_error_tried_on_the_next_endpoint",
        (("""\n                return escalate(item, last)\n""", """\n                break\n"""),),
        # The same break sends a validation error to the next endpoint too.
        {"recover_no_replay_validation", "recover_no_retry_business", "recover_unseen_escalations"},
    ),
    (
        "customer_message_not_passed_up",
        (
            (
                """        if "customerMessage" in sc:\n            envelope["customerMessage"] = sc["customerMessage"]\n""",
                "",
            ),
        ),
        {"recover_no_retry_business", "recover_unseen_escalations"},
    ),
    (
        "escalates_without_partial_results",
        ((""""partialResults": results,""", """"partialResults": [],"""),),
        {"recover_envelope", "recover_unseen_escalations"},
    ),
    (
        "endpoints_tried_with_duplicates",
        (
            (
                """            if endpoint not in tried:\n                tried.append(endpoint)\n""",
                """            tried.append(endpoint)\n""",
            ),
        ),
        # A complete run of several items says what it tried too.
        {"recover_backoff", "recover_envelope", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    (
        "zero_refund_accepted",
        (("""    if amount_usd <= 0:\n""", """    if amount_usd < 0:\n"""),),
        {"desk_validation"},
    ),
    (
        "status_not_validated",
        (("""    if status is not None and status not in STATUSES:\n""", """    if False:\n"""),),
        {"desk_validation", "desk_unseen_cases"},
    ),
    (
        "status_filter_ignored",
        ((""" and status in (None, o["status"])]""", """]"""),),
        {"desk_empty_search", "desk_unseen_cases"},
    ),
    (
        "remaining_amount_not_checked",
        (("""    if amount_usd > left:\n""", """    if False:\n"""),),
        {"desk_business_limit", "desk_unseen_sessions"},
    ),
    (
        "complete_envelope_without_attempts",
        (
            (
                """return {"status": "complete", "results": results, "attempts": {"endpointsTried": tried, "retryCount": retries}}""",
                """return {"status": "complete", "results": results}""",
            ),
        ),
        {"recover_backoff", "recover_unseen_runs"},
    ),
    (
        "results_without_their_data",
        (
            (
                """results.append({"item": item, "endpoint": endpoint, "data": last.get("structuredContent")})""",
                """results.append({"item": item, "endpoint": endpoint})""",
            ),
        ),
        {"recover_backoff", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    (
        "retry_count_counts_calls",
        (
            ("""                    retries += 1\n""", ""),
            (
                """                last = call(endpoint, item)\n""",
                """                last = call(endpoint, item)\n                retries += 1\n""",
            ),
        ),
        {"recover_backoff", "recover_envelope", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    # Mistakes a check on the one case it shows would miss: each is caught on generated cases of the same kind.
    (
        "business_code_fixed_to_the_exam_guides_example",
        (
            (
                """return error_result("business", message, code, False,""",
                """return error_result("business", message, "REFUND_LIMIT_EXCEEDED", False,""",
            ),
        ),
        {"results_business", "results_unseen_arguments"},
    ),
    (
        "empty_result_key_fixed_to_orders",
        (("""structuredContent": {key: []}}""", """structuredContent": {"orders": []}}"""),),
        {"results_empty", "results_unseen_arguments"},
    ),
    (
        "permission_role_fixed_to_agent",
        (
            (
                """return error_result("permission", message, code, False, missingScope=missing_scope, role=role)""",
                """return error_result("permission", message, code, False, missingScope=missing_scope, role="agent")""",
            ),
        ),
        {"results_permission", "results_unseen_arguments", "desk_permission", "desk_unseen_cases"},
    ),
    (
        "validates_before_the_permission_check",
        (
            (
                """    if not desk.caller.can("refunds:write"):\n        return permission_error(f"Role {desk.caller.role} may not refund: it lacks refunds:write. Escalate.", "refunds:write", desk.caller.role)\n""",
                "",
            ),
            (
                """        return validation_error(f"The refund amount must be positive; got {amount_usd}.", "amount_usd", "must be greater than 0")\n""",
                (
                    """        return validation_error(f"The refund amount must be positive; got {amount_usd}.", "amount_usd", "must be greater than 0")\n"""
                    """    if not desk.caller.can("refunds:write"):\n        return permission_error(f"Role {desk.caller.role} may not refund: it lacks refunds:write.", "refunds:write", desk.caller.role)\n"""
                ),
            ),
        ),
        {"desk_permission", "desk_unseen_cases"},
    ),
    (
        "search_misses_the_permission_check",
        (
            (
                """def search_orders(desk, customer_email, status=None):\n    if not desk.caller.can("orders:read"):\n        return permission_error(f"Role {desk.caller.role} may not read orders: it lacks orders:read.", "orders:read", desk.caller.role)\n""",
                """def search_orders(desk, customer_email, status=None):\n""",
            ),
        ),
        {"desk_permission", "desk_unseen_cases"},
    ),
    (
        "refund_of_an_unknown_order_not_found_only_by_get_order",
        (
            (
                """    if order is None:\n        return not_found_error(f"There is no order {order_id}; nothing was refunded.", "ORDER_NOT_FOUND")\n""",
                "",
            ),
        ),
        {"desk_not_found", "desk_unseen_cases"},
    ),
    (
        "order_id_checked_by_its_prefix",
        (
            (
                """    if not ORDER_ID.match(order_id):\n        return validation_error(f"{order_id!r} is not an order id; they look like ORD-1234.", "order_id", "must match ORD-NNNN")\n    order = next(""",
                """    if not order_id.startswith("ORD-"):\n        return validation_error(f"{order_id!r} is not an order id; they look like ORD-1234.", "order_id", "must match ORD-NNNN")\n    order = next(""",
            ),
        ),
        {"desk_validation", "desk_unseen_cases"},
    ),
    (
        "search_without_its_count",
        (("""{"orders": found, "count": len(found)}""", """{"orders": found}"""),),
        {"desk_success", "desk_unseen_cases"},
    ),
    (
        "decide_reads_the_text",
        (
            (
                """    sc = result.get("structuredContent") or {}\n    category = sc.get("errorCategory")\n""",
                (
                    """    sc = result.get("structuredContent") or {}\n    text = " ".join(b.get("text", "") for b in result.get("content") or []).lower()\n"""
                    """    category = next((name for name, words in (("not_found", ("no order", "not found")), ("transient", ("timed out", "retry")),\n"""
                    """        ("validation", ("must", "invalid")), ("permission", ("lacks", "permission")), ("business", ("exceeds", "policy", "closed")))\n"""
                    """        if any(word in text for word in words)), None)\n"""
                ),
            ),
        ),
        {
            "decide_not_found",
            "decide_transient_retry_cap",
            "decide_transient_not_retryable",
            "decide_validation_replans",
            "decide_permission_escalates",
            "decide_business_stops",
            "decide_unclassified_escalates",
            "decide_unseen_results",
            "decide_unseen_budgets",
            "recover_unseen_runs",
            "recover_unseen_escalations",
        },
    ),
    (
        "retryable_string_taken_as_true",
        (
            (
                """if sc.get("isRetryable") is True and attempt < max_attempts:""",
                """if sc.get("isRetryable") and attempt < max_attempts:""",
            ),
        ),
        {"decide_transient_not_retryable", "decide_unseen_results"},
    ),
    (
        "non_error_with_a_category_judged_by_it",
        (
            (
                """    if not is_error:\n""",
                """    if not is_error and "errorCategory" not in (result.get("structuredContent") or {}):\n""",
            ),
        ),
        {"decide_success_and_empty", "decide_unseen_results"},
    ),
    (
        "recover_leaves_the_cap_to_the_default_of_decide",
        (
            (
                """action = decide(last, attempt, max_attempts)["action"]""",
                """action = decide(last, attempt)["action"]""",
            ),
        ),
        {
            "recover_backoff",
            "recover_cap_and_failover",
            "recover_envelope",
            "recover_unseen_runs",
            "recover_unseen_escalations",
        },
    ),
    (
        "recover_fails_over_on_every_error",
        (
            (
                """                if (last.get("structuredContent") or {}).get("errorCategory") == "transient":\n                    break\n                return escalate(item, last)\n""",
                """                break\n""",
            ),
        ),
        {"recover_no_replay_validation", "recover_no_retry_business", "recover_unseen_escalations"},
    ),
    (
        "retry_count_restarts_for_each_item",
        (
            (
                """    for item in items:\n        last = None\n""",
                """    for item in items:\n        last = None\n        retries = 0\n""",
            ),
        ),
        {"recover_backoff", "recover_envelope", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
    (
        "backoff_counts_the_retries_of_the_whole_run",
        (
            (
                """sleep(retry_delay(last["structuredContent"], attempt))""",
                """sleep(retry_delay(last["structuredContent"], retries + 1))""",
            ),
        ),
        {"recover_backoff", "recover_unseen_runs", "recover_unseen_escalations"},
    ),
]


EDITS = {mistake: edits for mistake, edits, _ in MISTAKES}


@cache
def graded_mistake(mistake: str) -> dict:
    """The lab's verdicts on the solution with the catalogued ``mistake`` made (one grading per mistake per run)."""
    return grade(mutate(SOLUTION, *EDITS[mistake]))


@pytest.mark.parametrize(("mistake", "expected"), [pytest.param(i, f, id=i) for i, _, f in MISTAKES])
def test_a_realistic_mistake_fails_exactly_the_checks_it_should(mistake: str, expected: set[str]) -> None:
    assert_fails_exactly(graded_mistake(mistake), expected, checks)


def test_every_check_has_a_catalogued_mistake_that_fails_it_alone_or_with_named_others() -> None:
    covered = set().union(*(expected for _, _, expected in MISTAKES))
    alone = {next(iter(expected - HIDDEN)) for _, _, expected in MISTAKES if len(expected - HIDDEN) == 1}
    assert covered == ALL_CHECKS
    assert len(EDITS) == len(MISTAKES)
    # Every visible check has a mistake of its own (beside the hidden checks of its skill) but two: the
    # desk's permission errors are built with permission_error, and recover() decides with decide(), so
    # their mistakes show in both places.
    assert VISIBLE - alone == {"results_permission", "decide_transient_retry_cap"}


def test_a_failure_message_says_what_was_expected_and_what_came_back() -> None:
    results = graded_mistake("transient_not_marked_retryable")

    message = results["results_transient"].message
    assert "isRetryable true" in message
    assert "False" in message
    assert results["desk_transient"].message.startswith(
        "refund_order of $100 on ORD-1004 while the payment gateway is down"
    )


# --- what only the hidden checks catch ------------------------------------------------------------

# hidden check -> a realistic mistake that passes every visible check (the cases the notebook shows)
# and fails that hidden check alone. Each is also a sample submission (tests/submissions/<id>/).
HIDDEN_ONLY: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "results_unseen_arguments": (
        "retry_hint_in_whole_seconds",
        (("""retryAfterSeconds=retry_after_seconds)""", """retryAfterSeconds=int(retry_after_seconds))"""),),
    ),
    "desk_unseen_cases": (
        "empty_status_taken_as_no_filter",
        (
            (
                """    if status is not None and status not in STATUSES:\n""",
                """    if status and status not in STATUSES:\n""",
            ),
        ),
    ),
    "desk_unseen_sessions": (
        "refund_of_the_whole_rest_refused",
        (("""    if amount_usd > left:\n""", """    if amount_usd >= left:\n"""),),
    ),
    "decide_unseen_results": (
        "decide_needs_a_retry_hint",
        (
            (
                """return {"action": "retry", "reason": f"Transient and retryable; attempt {attempt + 1} of {max_attempts} after a backoff."}""",
                """return {"action": "retry", "reason": f"Transient and retryable; wait {sc['retryAfterSeconds']} s, then attempt {attempt + 1} of {max_attempts}."}""",
            ),
        ),
    ),
    "decide_unseen_budgets": (
        "retries_past_the_cap",
        (
            (
                """if sc.get("isRetryable") is True and attempt < max_attempts:""",
                """if sc.get("isRetryable") is True and attempt != max_attempts:""",
            ),
        ),
    ),
    "recover_unseen_runs": (
        "empty_answer_not_done_in_recover",
        (
            (
                """                if action in ("success", "empty_result"):\n                    results.append(""",
                """                if action == "success":\n                    results.append(""",
            ),
        ),
    ),
    "recover_unseen_escalations": (
        "fails_over_on_permission_errors",
        (
            (
                """                if (last.get("structuredContent") or {}).get("errorCategory") == "transient":\n                    break\n""",
                """                if action == "escalate":\n                    break\n""",
            ),
        ),
    ),
}
# What else a hidden-only mistake costs: only hidden checks, never a visible one.
ALSO_FAILS = {"empty_answer_not_done_in_recover": {"recover_unseen_escalations"}}
SAMPLES = REPO / "tests" / "submissions"


@cache
def graded_hidden_only(mistake: str) -> dict:
    [edits] = [edits for name, edits in HIDDEN_ONLY.values() if name == mistake]
    return grade(mutate(SOLUTION, *edits))


def test_every_hidden_check_has_a_mistake_only_it_catches() -> None:
    assert set(HIDDEN_ONLY) == HIDDEN
    assert set().union(*ALSO_FAILS.values()) <= HIDDEN


@pytest.mark.parametrize(("hidden", "mistake"), [pytest.param(h, m, id=m) for h, (m, _) in HIDDEN_ONLY.items()])
def test_a_mistake_the_visible_cases_miss_passes_every_visible_check_and_fails_its_hidden_check(
    hidden: str, mistake: str
) -> None:
    results = graded_hidden_only(mistake)

    assert_fails_exactly(results, {hidden} | ALSO_FAILS.get(mistake, set()), checks)
    assert not failed(results) & VISIBLE


@pytest.mark.parametrize("mistake", [m for m, _ in HIDDEN_ONLY.values()])
def test_the_sample_of_a_hidden_only_mistake_is_that_mistake(mistake: str) -> None:
    """The sample submission holds exactly the catalogued edit: its answer cells are the solution's, edited."""
    sample = answer_code(read_notebook(SAMPLES / mistake / LAB / f"{LAB}.ipynb"))
    [edits] = [edits for name, edits in HIDDEN_ONLY.values() if name == mistake]
    assert sample.strip() == mutate(SOLUTION, *edits).strip()


def test_the_visible_checks_import_nothing_of_the_grader_nor_outside_the_learners_package() -> None:
    code = (
        "import json, sys\n"
        "import labkit.checks.lab1_error_results\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('grader', 'labkit', 'servers'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert not [m for m in loaded if m == "grader" or m.startswith("grader.")]
    assert loaded <= learner_modules(), loaded - learner_modules()


def learner_modules() -> set[str]:
    """The modules a learner installs, as learner/setup.py lists them (read, not run: it is a setup script)."""
    tree = ast.parse((REPO / "learner" / "setup.py").read_text(encoding="utf-8"))
    [listed] = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "LEARNER_MODULES"
    ]
    return set(listed) | {
        f"{package}.{module}" for package, modules in listed.items() for module in modules if module != "__init__"
    }


def test_a_failed_hidden_check_shows_the_learner_none_of_its_inputs() -> None:
    from labkit.checking import as_shown, run_check

    for hidden, (mistake, edits) in HIDDEN_ONLY.items():
        with labtests.hosted(LAB, mutate(SOLUTION, *edits)) as host:
            recorder = Recorder(host)
            result = run_check(checks[hidden], recorder)
        assert not result.passed, mistake
        shown = as_shown(checks[hidden], result).message
        inputs = recorder.inputs()
        assert inputs, hidden
        leaked = sorted(value for value in inputs if value in shown)
        assert not leaked, f"{hidden}: {leaked}"
        assert not re.search(r"\d", shown), shown
        assert checks[hidden].title[1:] in shown and checks[hidden].mistake in shown


def test_the_hidden_checks_cases_are_none_of_the_visible_checks_cases() -> None:
    visible, hidden = set(), set()
    with labtests.hosted(LAB, SOLUTION) as host:
        for check in checks.checks.values():
            recorder = Recorder(host)
            check.run(recorder)
            (hidden if check.hidden else visible).update(recorder.cases())
    assert hidden and visible
    assert not hidden & visible, sorted(hidden & visible)[:5]


class Recorder:
    """A session that passes every call on and records what the check sent: its cases."""

    # Words of the lab itself, not of any case: the classes, actions, roles, tools and fields a check names.
    VOCABULARY = frozenset(
        {
            "transient",
            "validation",
            "business",
            "permission",
            "not_found",
            "supervisor",
            "agent",
            "guest",
            "search_orders",
            "get_order",
            "refund_order",
            "transient_error",
            "validation_error",
            "business_error",
            "permission_error",
            "not_found_error",
            "empty_result",
            "text",
        }
    )

    def __init__(self, host) -> None:
        self.host = host
        self.calls: list[tuple[str, dict]] = []

    def __getattr__(self, name: str):
        return getattr(self.host, name)

    def call(self, tool: str, **kwargs):
        self.calls.append((tool, kwargs))
        return self.host.call(tool, **kwargs)

    def inputs(self) -> set[str]:
        """Every string the check sent (of four characters or more, outside the lab's vocabulary), and every number of two digits or more."""
        found: set[str] = set()

        def walk(value) -> None:
            if isinstance(value, dict):
                for item in value.values():
                    walk(item)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    walk(item)
            elif isinstance(value, str) and len(value) >= 4 and value not in self.VOCABULARY:
                found.add(value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= 10:
                found.add(f"{value:g}")

        for _, kwargs in self.calls:
            walk(kwargs)
        return found

    def cases(self) -> set[str]:
        """Each call as a case: a desk call with the session's calls before it (its role and gateway included), any other call alone."""
        cases, session = set(), []
        for tool, kwargs in self.calls:
            if tool == "host_reset":
                session = [json.dumps(kwargs, sort_keys=True)]
                continue
            call = json.dumps([tool, kwargs], sort_keys=True)
            if tool in ("search_orders", "get_order", "refund_order"):
                session.append(call)
                cases.add("\n".join(session))
            else:
                cases.add(call)
        return cases


# --- the blank template and code that does not run ----------------------------------------------


def test_the_blank_template_has_no_solution_left() -> None:
    assert "BEGIN SOLUTION" not in BLANK
    assert BLANK.count("raise NotImplementedError()") == 13
    assert "retry_delay(" not in BLANK


def test_the_blank_template_fails_every_check_saying_the_function_is_not_written_yet() -> None:
    results = grade(BLANK)

    assert failed(results) == ALL_CHECKS
    for result in results.values():
        assert "is not written yet" in result.message, result.message
        assert not result.host_lost
        assert_sentence_in_words(result.message)
    assert results["results_transient"].message.startswith("transient_error is not written yet")
    assert results["desk_success"].message.startswith("get_order is not written yet")
    assert results["decide_not_found"].message.startswith("decide is not written yet")
    assert results["recover_envelope"].message.startswith("recover is not written yet")


RECOVER_CHECKS = {name for name in ALL_CHECKS if name.startswith("recover_")}
DECIDE_CHECKS = {name for name in ALL_CHECKS if name.startswith("decide_")}


def test_code_that_does_not_compile_at_all_fails_every_check_naming_the_error_and_its_line() -> None:
    results = grade("def broken(:\n    pass\n")

    assert failed(results) == ALL_CHECKS
    for result in results.values():
        assert "Your answer cells failed to run: SyntaxError" in result.message
        assert "line 1 of your answer cells" in result.message
        assert_sentence_in_words(result.message)


def test_a_syntax_error_in_one_answer_cell_fails_only_the_checks_that_need_that_cell() -> None:
    code = SOLUTION + "def broken(:\n    pass\n"
    cell, line = line_of(code, "def broken(:")

    results = grade(code)

    assert failed(results) == RECOVER_CHECKS
    for name in RECOVER_CHECKS:
        message = results[name].message
        assert message.startswith("Your answer cells define no function named recover.")
        assert f"SyntaxError: invalid syntax (line {line} of answer cell {cell})" in message
        assert_sentence_in_words(message)


def test_code_that_exits_while_loading_keeps_what_ran_and_names_the_exit() -> None:
    code = mutate(
        SOLUTION,
        (
            "def decide(result, attempt=1, max_attempts=3):\n",
            "raise SystemExit\ndef decide(result, attempt=1, max_attempts=3):\n",
        ),
    )
    cell, line = line_of(code, "raise SystemExit")

    results = grade(code)

    # decide() never got defined; recover() calls it; everything else still works.
    assert failed(results) == DECIDE_CHECKS | RECOVER_CHECKS
    for name in DECIDE_CHECKS:
        assert results[name].message == (
            "Your answer cells define no function named decide. Your answer cells failed to run: "
            f"SystemExit: (no message) (line {line} of answer cell {cell})."
        )
        assert not results[name].host_lost


def test_a_function_that_raises_fails_naming_the_function_and_the_exception() -> None:
    code = mutate(
        SOLUTION, ("""o["customerEmail"] == customer_email.lower()""", """o["email"] == customer_email.lower()""")
    )
    cell, line = line_of(code, 'o["email"]')

    results = grade(code)

    # Only a search that gets past validation reaches the broken line: the searches of desk_empty_search and
    # desk_success, and of the hidden desk_unseen_cases.
    assert failed(results) == {"desk_empty_search", "desk_success", "desk_unseen_cases"}
    message = results["desk_empty_search"].message
    assert message == f"search_orders raised KeyError: 'email' (line {line} of answer cell {cell})"
    assert_sentence_in_words(message)


def test_a_handler_returning_snake_case_keys_is_told_the_wire_format_is_camel_case() -> None:
    code = mutate(
        SOLUTION,
        (
            """return {"isError": False, "content": [text_block(message)], "structuredContent": data}""",
            """return {"is_error": False, "content": [text_block(message)], "structured_content": data}""",
        ),
    )

    results = grade(code)

    # Every desk check but desk_validation reaches a success somewhere; the builders and decide() do not use success_result.
    desk = {name for name in ALL_CHECKS if name.startswith("desk_")}
    assert failed(results) == desk - {"desk_validation"}
    message = results["desk_success"].message
    assert message == (
        "get_order returned Python attribute names (is_error, structured_content); "
        "the wire format is camelCase: isError, structuredContent."
    )


def test_check_messages_never_show_the_checks_code() -> None:
    messages = [r.message for r in grade(BLANK).values()]
    for mistake, _, _ in MISTAKES:
        messages += [r.message for r in graded_mistake(mistake).values() if not r.passed]
    for mistake, _ in HIDDEN_ONLY.values():
        messages += [r.message for r in graded_hidden_only(mistake).values() if not r.passed]

    assert messages
    for message in messages:
        assert_sentence_in_words(message)
