"""Lab 1's checks against the reference solution, a catalogue of realistic wrong answers, and broken code.

Every case grades code the way the grader does: the code runs only inside the learner
host, built in process, and each check drives it over one MCP session.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import pytest

from grader.labs.lab1_error_results import checks
from grader.notebook import answer_code, read_notebook
from servers.learner_host.host import CELL_SEPARATOR
import labtests
from labtests import assert_fails_exactly, assert_sentence_in_words, blank_template, cells, failed, line_of, mutate  # noqa: F401

LAB = "lab1_error_results"
SOURCE = Path(__file__).resolve().parents[2] / "labs" / "source" / LAB / f"{LAB}.ipynb"
SOLUTION = answer_code(read_notebook(SOURCE))
ALL_CHECKS = set(checks.checks)


# grade(code): every check of the lab, in order, over one session with a host running ``code``.
grade = partial(labtests.grade, LAB)


BLANK = blank_template(SOURCE)


# --- the reference solution -------------------------------------------------------------------


def test_the_lab_has_twenty_six_named_checks_worth_thirty_eight_points() -> None:
    assert len(ALL_CHECKS) == 26
    assert checks.total_points == 38


def test_the_solution_passes_every_check() -> None:
    results = grade(SOLUTION)

    assert set(results) == ALL_CHECKS
    assert failed(results) == set(), {n: r.message for n, r in results.items() if not r.passed}
    for name, result in results.items():
        assert result.score == result.points
        assert result.message == checks[name].title
        assert not result.host_lost


# --- one realistic wrong answer (or more) per check -------------------------------------------

DECIDE_CHECKS_BUT_SUCCESS = {name for name in ALL_CHECKS if name.startswith("decide_")} - {"decide_success_and_empty"}

# (id, edits, the exact set of checks that must fail). Most mistakes fail only the check they
# stand for; where one legitimately breaks another check too (the desk's handlers use the
# builders, recover() uses decide()), the set names both.
MISTAKES: list[tuple[str, tuple[tuple[str, str], ...], set[str]]] = [
    # part A: builders
    (
        "transient_not_marked_retryable",
        (("""error_result("transient", message, code, True,""", """error_result("transient", message, code, False,"""),),
        {"results_transient", "desk_transient"},
    ),
    (
        "transient_ignores_the_retry_hint",
        (("""retryAfterSeconds=retry_after_seconds)""", """retryAfterSeconds=1.0)"""),),
        {"results_transient"},
    ),
    (
        "validation_without_reason",
        (("""False, field=field, reason=reason)""", """False, field=field)"""),),
        {"results_validation"},
    ),
    (
        "business_hardcodes_its_code",
        (("""error_result("business", message, code, False,""", """error_result("business", message, "POLICY", False,"""),),
        {"results_business"},
    ),
    (
        "business_snake_case_customer_message",
        (("""customerMessage=customer_message,""", """customer_message=customer_message,"""),),
        {"results_business", "desk_business_limit"},
    ),
    (
        "business_without_requested",
        (("""limit=limit, requested=requested)""", """limit=limit)"""),),
        {"results_business", "desk_business_limit"},
    ),
    (
        "permission_snake_case_missing_scope",
        (("""missingScope=missing_scope, role=role)""", """missing_scope=missing_scope, role=role)"""),),
        {"results_permission", "desk_permission"},
    ),
    (
        "not_found_misspells_its_category",
        (("""error_result("not_found", message, code, False)""", """error_result("not-found", message, code, False)"""),),
        {"results_not_found", "desk_not_found"},
    ),
    (
        "not_found_hardcodes_its_code",
        (("""error_result("not_found", message, code, False)""", """error_result("not_found", message, "NOT_FOUND", False)"""),),
        {"results_not_found"},
    ),
    (
        "empty_result_is_an_error",
        (("""return {"isError": False, "content": [text_block(message)], "structuredContent": {key: []}}""", """return {"isError": True, "content": [text_block(message)], "structuredContent": {key: []}}"""),),
        {"results_empty", "desk_empty_search"},
    ),
    # part B: the desk
    (
        "empty_search_without_the_orders_key",
        (("""This is a valid answer.", key="orders")""", """This is a valid answer.")"""),),
        {"desk_empty_search"},
    ),
    (
        "empty_search_is_not_found",
        (("""return empty_result(f"No orders match {customer_email}. This is a valid answer.", key="orders")""", """return not_found_error(f"No orders match {customer_email}.", "NO_ORDERS")"""),),
        {"desk_empty_search"},
    ),
    (
        "get_order_misses_the_permission_check",
        (
            (
                """def get_order(desk, order_id):\n    if not desk.caller.can("orders:read"):\n        return permission_error(f"Role {desk.caller.role} may not read orders: it lacks orders:read.", "orders:read", desk.caller.role)\n""",
                """def get_order(desk, order_id):\n""",
            ),
        ),
        {"desk_not_found"},
    ),
    (
        "unknown_order_is_a_validation_error",
        (("""return not_found_error(f"There is no order {order_id}; check the id with the customer.", "ORDER_NOT_FOUND")""", """return validation_error(f"There is no order {order_id}; check the id.", "order_id", "no such order")"""),),
        {"desk_not_found"},
    ),
    (
        "refund_misses_the_permission_check",
        (
            (
                """    if not desk.caller.can("refunds:write"):\n        return permission_error(f"Role {desk.caller.role} may not refund: it lacks refunds:write. Escalate.", "refunds:write", desk.caller.role)\n""",
                "",
            ),
        ),
        {"desk_permission"},
    ),
    (
        "refund_checks_the_wrong_scope",
        (("""if not desk.caller.can("refunds:write"):""", """if not desk.caller.can("orders:read"):"""),),
        {"desk_permission"},
    ),
    (
        "refund_limit_off_by_one",
        (("""if amount_usd > REFUND_LIMIT_USD:""", """if amount_usd >= REFUND_LIMIT_USD:"""),),
        {"desk_business_limit"},
    ),
    (
        "refund_does_not_validate_the_order_id",
        (
            (
                """    if not ORDER_ID.match(order_id):\n        return validation_error(f"{order_id!r} is not an order id; they look like ORD-1234.", "order_id", "must match ORD-NNNN")\n    if amount_usd <= 0:""",
                """    if amount_usd <= 0:""",
            ),
        ),
        {"desk_validation"},
    ),
    (
        "validation_field_in_camel_case",
        (("""validation_error(f"{customer_email!r} is not an e-mail address.", "customer_email",""", """validation_error(f"{customer_email!r} is not an e-mail address.", "customerEmail","""),),
        {"desk_validation"},
    ),
    (
        "gateway_exception_text_as_success",
        (("""return transient_error(f"The payment gateway is unavailable ({exc}); nothing moved. Retry shortly.", retry_after_seconds=2.0, code="GATEWAY_UNAVAILABLE")""", """return success_result(str(exc), {"message": str(exc)})"""),),
        {"desk_transient"},
    ),
    (
        "refund_not_recorded",
        (("""    desk.refunded_usd[order_id] = desk.refunded_usd.get(order_id, 0.0) + amount_usd\n""", ""),),
        # Every check that reads an order back after a refund sees the refund missing.
        {"desk_transient", "desk_business_limit", "desk_success"},
    ),
    (
        "refund_recorded_before_the_gateway_answers",
        (
            ("""    try:\n        refund_id = desk.gateway.refund(""", """    desk.refunded_usd[order_id] = desk.refunded_usd.get(order_id, 0.0) + amount_usd\n    try:\n        refund_id = desk.gateway.refund("""),
            ("""    desk.refunded_usd[order_id] = desk.refunded_usd.get(order_id, 0.0) + amount_usd\n    return success_result(""", """    return success_result("""),
        ),
        {"desk_transient"},
    ),
    (
        "order_success_without_text",
        (("""return success_result(f"Order {order_id}: ${order['totalUsd']:.2f}, {order['status']}.",""", """return success_result("","""),),
        {"desk_success"},
    ),
    (
        "order_not_under_the_order_key",
        (("""{"order": {**order, "refundedUsd": refunded}}""", """{**order, "refundedUsd": refunded}"""),),
        {"desk_success", "desk_transient"},
    ),
    # part C: decide
    (
        "empty_answers_count_as_plain_success",
        (("""        if empty:\n            return {"action": "empty_result", "reason": "Not an error, and nothing matched: a valid empty answer."}\n""", ""),),
        {"decide_success_and_empty"},
    ),
    (
        "not_found_is_escalated",
        (("""return {"action": "empty_result", "reason": "A valid request that matched nothing."}""", """return {"action": "escalate", "reason": "The order was not found."}"""),),
        {"decide_not_found"},
    ),
    (
        "retry_cap_hardcoded_to_three",
        (("""if sc.get("isRetryable") is True and attempt < max_attempts:""", """if sc.get("isRetryable") is True and attempt < 3:"""),),
        # recover() uses decide(), so its cap is three whatever max_attempts says.
        {"decide_transient_retry_cap", "recover_backoff", "recover_cap_and_failover", "recover_envelope"},
    ),
    (
        "retry_cap_off_by_one",
        (("""if sc.get("isRetryable") is True and attempt < max_attempts:""", """if sc.get("isRetryable") is True and attempt <= max_attempts:"""),),
        # recover() uses decide(), so its retry cap is off by one too.
        {"decide_transient_retry_cap", "recover_cap_and_failover", "recover_envelope"},
    ),
    (
        "transient_retried_whatever_is_retryable_says",
        (("""if sc.get("isRetryable") is True and attempt < max_attempts:""", """if attempt < max_attempts:"""),),
        {"decide_transient_not_retryable"},
    ),
    (
        "validation_escalated_instead_of_replanned",
        (("""return {"action": "replan", "reason": "Fix the input; never replay the same call."}""", """return {"action": "escalate", "reason": "The input was invalid."}"""),),
        {"decide_validation_replans"},
    ),
    (
        "validation_replayed",
        (("""    if category == "transient":\n""", """    if category == "validation" and attempt < max_attempts:\n        return {"action": "retry", "reason": "Try the same call again."}\n    if category == "transient":\n"""),),
        # recover() uses decide(), so it replays the validation error too.
        {"decide_validation_replans", "recover_no_replay_validation"},
    ),
    (
        "permission_retried",
        (("""    if category == "permission":\n        return {"action": "escalate",""", """    if category == "permission" and attempt < max_attempts:\n        return {"action": "retry","""),),
        {"decide_permission_escalates"},
    ),
    (
        "business_trusts_is_retryable",
        (("""    if category == "business":\n""", """    if category == "business" and sc.get("isRetryable") is not True:\n"""),),
        {"decide_business_stops"},
    ),
    (
        "business_retried",
        (("""return {"action": "surface_and_stop", "reason": f"Policy: {sc.get('customerMessage')}"}""", """return {"action": "retry", "reason": "It might go through next time."}"""),),
        # recover() uses decide(), so it retries the business error too.
        {"decide_business_stops", "recover_no_retry_business"},
    ),
    (
        "unclassified_errors_replanned",
        (("""return {"action": "escalate", "reason": "Unclassified error: no known errorCategory, so do not guess."}""", """return {"action": "replan", "reason": "Unknown failure; try another way."}"""),),
        {"decide_unclassified_escalates"},
    ),
    (
        "decision_without_reason",
        (("""return {"action": "empty_result", "reason": "A valid request that matched nothing."}""", """return {"action": "empty_result"}"""),),
        {"decide_not_found"},
    ),
    # part D: recover
    (
        "backoff_does_not_grow",
        (("""sleep(backoff_delay(attempt))""", """sleep(backoff_delay(1))"""),),
        {"recover_backoff"},
    ),
    (
        "retries_without_waiting",
        (("""                    sleep(backoff_delay(attempt))\n""", ""),),
        {"recover_backoff"},
    ),
    (
        "never_fails_over",
        (("""                if (last.get("structuredContent") or {}).get("errorCategory") == "transient":\n                    break\n""", ""),),
        # Without failover the second endpoint is never tried, so endpointsTried is short too.
        {"recover_cap_and_failover", "recover_envelope"},
    ),
    (
        "cap_off_by_one_in_recover",
        (("""action = decide(last, attempt, max_attempts)["action"]""", """action = decide(last, attempt, max_attempts + 1)["action"]"""),),
        {"recover_cap_and_failover", "recover_envelope"},
    ),
    (
        "run_served_by_the_fallback_reported_as_degraded",
        (("""return {"status": "complete", "results": results,""", """return {"status": "complete" if len(tried) == 1 else "degraded", "results": results,"""),),
        {"recover_cap_and_failover"},
    ),
    (
        "validation_replayed_in_recover",
        (("""                if action == "retry":\n""", """                if action in ("retry", "replan"):\n"""),),
        {"recover_no_replay_validation"},
    ),
    (
        "business_error_tried_on_the_next_endpoint",
        (("""\n                return escalate(item, last)\n""", """\n                break\n"""),),
        # The same break sends a validation error to the next endpoint too.
        {"recover_no_retry_business", "recover_no_replay_validation"},
    ),
    (
        "customer_message_not_passed_up",
        (("""        if "customerMessage" in sc:\n            envelope["customerMessage"] = sc["customerMessage"]\n""", ""),),
        {"recover_no_retry_business"},
    ),
    (
        "escalates_without_partial_results",
        (('''"partialResults": results,''', '''"partialResults": [],'''),),
        {"recover_envelope"},
    ),
    (
        "endpoints_tried_with_duplicates",
        (("""            if endpoint not in tried:\n                tried.append(endpoint)\n""", """            tried.append(endpoint)\n"""),),
        # A complete run of several items says what it tried too.
        {"recover_envelope", "recover_backoff"},
    ),
    (
        "zero_refund_accepted",
        (("""    if amount_usd <= 0:\n""", """    if amount_usd < 0:\n"""),),
        {"desk_validation"},
    ),
    (
        "status_not_validated",
        (("""    if status is not None and status not in STATUSES:\n""", """    if False:\n"""),),
        {"desk_validation"},
    ),
    (
        "status_filter_ignored",
        ((""" and status in (None, o["status"])]""", """]"""),),
        {"desk_empty_search"},
    ),
    (
        "remaining_amount_not_checked",
        (("""    if amount_usd > left:\n""", """    if False:\n"""),),
        {"desk_business_limit"},
    ),
    (
        "complete_envelope_without_attempts",
        (
            (
                """return {"status": "complete", "results": results, "attempts": {"endpointsTried": tried, "retryCount": retries}}""",
                """return {"status": "complete", "results": results}""",
            ),
        ),
        {"recover_backoff"},
    ),
    (
        "results_without_their_data",
        (
            (
                """results.append({"item": item, "endpoint": endpoint, "data": last.get("structuredContent")})""",
                """results.append({"item": item, "endpoint": endpoint})""",
            ),
        ),
        {"recover_backoff"},
    ),
    (
        "retry_count_counts_calls",
        (
            ("""                    retries += 1\n""", ""),
            ("""                last = call(endpoint, item)\n""", """                last = call(endpoint, item)\n                retries += 1\n"""),
        ),
        {"recover_envelope", "recover_backoff"},
    ),
    # Mistakes a check on the one case it shows would miss: each is caught on generated cases of the same kind.
    (
        "business_code_fixed_to_the_seed_example",
        (("""return error_result("business", message, code, False,""", """return error_result("business", message, "REFUND_LIMIT_EXCEEDED", False,"""),),
        {"results_business"},
    ),
    (
        "empty_result_key_fixed_to_orders",
        (("""structuredContent": {key: []}}""", """structuredContent": {"orders": []}}"""),),
        {"results_empty"},
    ),
    (
        "permission_role_fixed_to_agent",
        (("""return error_result("permission", message, code, False, missingScope=missing_scope, role=role)""", """return error_result("permission", message, code, False, missingScope=missing_scope, role="agent")"""),),
        {"results_permission", "desk_permission"},
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
                """        return validation_error(f"The refund amount must be positive; got {amount_usd}.", "amount_usd", "must be greater than 0")\n"""
                """    if not desk.caller.can("refunds:write"):\n        return permission_error(f"Role {desk.caller.role} may not refund: it lacks refunds:write.", "refunds:write", desk.caller.role)\n""",
            ),
        ),
        {"desk_permission"},
    ),
    (
        "search_misses_the_permission_check",
        (
            (
                """def search_orders(desk, customer_email, status=None):\n    if not desk.caller.can("orders:read"):\n        return permission_error(f"Role {desk.caller.role} may not read orders: it lacks orders:read.", "orders:read", desk.caller.role)\n""",
                """def search_orders(desk, customer_email, status=None):\n""",
            ),
        ),
        {"desk_permission"},
    ),
    (
        "refund_of_an_unknown_order_not_found_only_by_get_order",
        (("""    if order is None:\n        return not_found_error(f"There is no order {order_id}; nothing was refunded.", "ORDER_NOT_FOUND")\n""", ""),),
        {"desk_not_found"},
    ),
    (
        "order_id_checked_by_its_prefix",
        (
            (
                """    if not ORDER_ID.match(order_id):\n        return validation_error(f"{order_id!r} is not an order id; they look like ORD-1234.", "order_id", "must match ORD-NNNN")\n    order = next(""",
                """    if not order_id.startswith("ORD-"):\n        return validation_error(f"{order_id!r} is not an order id; they look like ORD-1234.", "order_id", "must match ORD-NNNN")\n    order = next(""",
            ),
        ),
        {"desk_validation"},
    ),
    (
        "search_without_its_count",
        (("""{"orders": found, "count": len(found)}""", """{"orders": found}"""),),
        {"desk_success"},
    ),
    (
        "decide_reads_the_text",
        (
            (
                """    sc = result.get("structuredContent") or {}\n    category = sc.get("errorCategory")\n""",
                """    sc = result.get("structuredContent") or {}\n    text = " ".join(b.get("text", "") for b in result.get("content") or []).lower()\n"""
                """    category = next((name for name, words in (("not_found", ("no order", "not found")), ("transient", ("timed out", "retry")),\n"""
                """        ("validation", ("must", "invalid")), ("permission", ("lacks", "permission")), ("business", ("exceeds", "policy", "closed")))\n"""
                """        if any(word in text for word in words)), None)\n""",
            ),
        ),
        DECIDE_CHECKS_BUT_SUCCESS,
    ),
    (
        "retryable_string_taken_as_true",
        (("""if sc.get("isRetryable") is True and attempt < max_attempts:""", """if sc.get("isRetryable") and attempt < max_attempts:"""),),
        {"decide_transient_not_retryable"},
    ),
    (
        "non_error_with_a_category_judged_by_it",
        (("""    if result.get("isError") is not True:\n""", """    if result.get("isError") is not True and "errorCategory" not in (result.get("structuredContent") or {}):\n"""),),
        {"decide_success_and_empty"},
    ),
    (
        "recover_leaves_the_cap_to_the_default_of_decide",
        (("""action = decide(last, attempt, max_attempts)["action"]""", """action = decide(last, attempt)["action"]"""),),
        {"recover_backoff", "recover_cap_and_failover", "recover_envelope"},
    ),
    (
        "recover_fails_over_on_every_error",
        (("""                if (last.get("structuredContent") or {}).get("errorCategory") == "transient":\n                    break\n                return escalate(item, last)\n""", """                break\n"""),),
        {"recover_no_replay_validation", "recover_no_retry_business"},
    ),
    (
        "retry_count_restarts_for_each_item",
        (("""    for item in items:\n        last = None\n""", """    for item in items:\n        last = None\n        retries = 0\n"""),),
        {"recover_backoff", "recover_envelope"},
    ),
    (
        "backoff_counts_the_retries_of_the_whole_run",
        (("""sleep(backoff_delay(attempt))""", """sleep(backoff_delay(retries + 1))"""),),
        {"recover_backoff"},
    ),
]


EDITS = {mistake: edits for mistake, edits, _ in MISTAKES}


@pytest.mark.parametrize(("edits", "expected"), [pytest.param(e, f, id=i) for i, e, f in MISTAKES])
def test_a_realistic_mistake_fails_exactly_the_checks_it_should(edits, expected: set[str]) -> None:
    assert_fails_exactly(grade(mutate(SOLUTION, *edits)), expected, checks)


def test_every_check_has_a_catalogued_mistake_that_fails_it_alone_or_with_named_others() -> None:
    covered = set().union(*(expected for _, _, expected in MISTAKES))
    alone = {next(iter(expected)) for _, _, expected in MISTAKES if len(expected) == 1}
    assert covered == ALL_CHECKS
    assert len(EDITS) == len(MISTAKES)
    # Every check has a mistake of its own but two: the desk's permission errors are built with
    # permission_error, and recover() decides with decide(), so their mistakes show in both places.
    assert ALL_CHECKS - alone == {"results_permission", "decide_transient_retry_cap"}


def test_a_failure_message_says_what_was_expected_and_what_came_back() -> None:
    results = grade(mutate(SOLUTION, *EDITS["transient_not_marked_retryable"]))

    message = results["results_transient"].message
    assert "isRetryable true" in message
    assert "False" in message
    assert results["desk_transient"].message.startswith("refund_order of $100 on ORD-1004 while the payment gateway is down")


# --- the blank template and code that does not run ----------------------------------------------


def test_the_blank_template_has_no_solution_left() -> None:
    assert "BEGIN SOLUTION" not in BLANK
    assert BLANK.count("raise NotImplementedError()") == 13
    assert "backoff_delay(attempt)" not in BLANK


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
    code = mutate(SOLUTION, ("def decide(result, attempt=1, max_attempts=3):\n", "raise SystemExit\ndef decide(result, attempt=1, max_attempts=3):\n"))
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
    code = mutate(SOLUTION, ("""o["customerEmail"] == customer_email.lower()""", """o["email"] == customer_email.lower()"""))
    cell, line = line_of(code, 'o["email"]')

    results = grade(code)

    # Only a search that gets past validation reaches the broken line: the searches of desk_empty_search and desk_success.
    assert failed(results) == {"desk_empty_search", "desk_success"}
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

    # Every desk check reaches a success somewhere; the builders and decide() do not use success_result.
    assert failed(results) == {"desk_empty_search", "desk_not_found", "desk_permission", "desk_business_limit", "desk_transient", "desk_success"}
    message = results["desk_success"].message
    assert message == (
        "get_order returned Python attribute names (is_error, structured_content); "
        "the wire format is camelCase: isError, structuredContent."
    )


def test_check_messages_never_show_the_checks_code() -> None:
    messages = [r.message for r in grade(BLANK).values()]
    for _, edits, _ in MISTAKES:
        messages += [r.message for r in grade(mutate(SOLUTION, *edits)).values() if not r.passed]

    assert messages
    for message in messages:
        assert_sentence_in_words(message)
