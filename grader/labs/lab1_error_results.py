"""Lab 1's hidden checks, and its full registry: the visible checks (``labkit.checks``) and these.

The hidden checks test the lab's four skills on cases the notebook does not show, with the expected
answers taken from the reference model: ``grader.taxonomy`` for the builders, the desk's own rules
(``servers.support_desk.desk``) for the handlers, ``grader.decisions`` and ``grader.recovery`` for the
decision tree and local recovery.

- the builders on other codes, fields, keys and numbers, a fractional retry hint, and the defaults
  left out (``grader.labs.cases.covering``);
- the desk on other customers, orders, roles and bad inputs, each call judged in full against the
  desk's own answer; and sessions of refunds the lab does not show: an order refunded down to the
  last cent, several orders at once, the gateway down while other rules refuse first;
- decide() on results of every class with texts naming another class, retry flags of other shapes
  and other attempt counts; and the retry budget at caps and attempts the lab does not show, past
  the cap included;
- recover() on generated runs (a fixed seed): other items, endpoints and caps, empty and not_found
  answers, failures spread over endpoints; and runs that end in an escalation of every kind, after
  work done and retries made.

Their inputs are kept apart from the visible checks' (other messages, codes, order ids, e-mails,
amounts, result texts, items and endpoint names), so code that special-cases what the notebook shows
still fails here. A failure message names the case, for the instructor's eyes; a learner is shown only
a hidden check's title and the mistake it looks for (``labkit.checking.as_shown``).
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from grader import taxonomy
from grader.decisions import decide as reference_decide
from grader.labs.cases import covering
from grader.recovery import FakeClock
from grader.recovery import recover as reference_recover
from labkit.checking import CheckRegistry, expect
from labkit.checks import lab1_error_results as visible
from labkit.checks.lab1_error_results import (
    Fails,
    Succeeds,
    Want,
    call_text,
    expect_built,
    expect_calls,
    expect_description,
    expect_desk_result,
    expect_entries,
    expect_status,
    learner_decision,
    run_recover,
    shown,
)
from servers.support_desk.desk import Caller, Desk, PaymentGateway

LAB = "lab1_error_results"
hidden = CheckRegistry(LAB)


# --- part A: error results ----------------------------------------------------------------------

REFERENCE_BUILDERS = {
    "transient_error": taxonomy.transient_error,
    "validation_error": taxonomy.validation_error,
    "business_error": taxonomy.business_error,
    "permission_error": taxonomy.permission_error,
    "not_found_error": taxonomy.not_found_error,
    "empty_result": taxonomy.empty_result,
}
MESSAGES = (
    "The search index is rebuilding; try again in a moment.",
    "Coupon SPRING-24 expired yesterday and cannot be applied.",
    "Role intern may not export invoices: ask the billing lead.",
    "No invoices were issued in this period.",
)
OMITTED = object()  # a dimension value meaning "leave the argument out: the builder's default applies"
# What varies in the generated calls of each builder besides its message: values the lab does not show,
# fractional numbers, and each defaulted argument left out.
BUILDER_VARIANTS: dict[str, dict[str, list[Any]]] = {
    "transient_error": {"retry_after_seconds": [0.25, 1.5, OMITTED], "code": ["INDEX_REBUILDING", OMITTED]},
    "validation_error": {
        "field": ["invoice_date", "quantity"],
        "reason": ["must be a date", "must be a whole number"],
        "code": ["BAD_DATE", OMITTED],
    },
    "business_error": {
        "code": ["COUPON_EXPIRED", "CREDIT_LIMIT"],
        "customer_message": ["This coupon has expired.", "Your credit limit is $1,200.50."],
        "limit": [1200.5, 3, None],
        "requested": [1500.25, 4, None],
    },
    "permission_error": {
        "missing_scope": ["invoices:export", "tickets:close"],
        "role": ["intern", "auditor"],
        "code": ["ROLE_FORBIDDEN", OMITTED],
    },
    "not_found_error": {"code": ["INVOICE_NOT_FOUND", OMITTED]},
    "empty_result": {"key": ["invoices", "alerts", OMITTED]},
}


@cache
def builder_cases(builder: str) -> list[dict[str, Any]]:
    """Generated keyword arguments for ``builder``: every variant value used at least once."""
    cases = covering(len(builder) + 101, BUILDER_VARIANTS[builder])
    return [
        {"message": MESSAGES[i % len(MESSAGES)], **{k: v for k, v in case.items() if v is not OMITTED}}
        for i, case in enumerate(cases)
    ]


@hidden.check(
    "results_unseen_arguments",
    points=2,
    title="the result builders on arguments the lab does not show",
    mistake="a builder that keeps a value fixed, rounds it or drops it instead of passing its argument on, or gets a default wrong",
    hidden=True,
)
def results_unseen_arguments(host) -> None:
    for builder in REFERENCE_BUILDERS:
        for kwargs in builder_cases(builder):
            want = REFERENCE_BUILDERS[builder](**kwargs)["structuredContent"]
            expect_built(host, builder, kwargs, want, call_text(builder, kwargs))


# --- part B: the desk's tools ---------------------------------------------------------------------
#
# Every call is made on the desk's own rules too (the reference Desk, in the same state), and the
# learner's result must give what the desk gives, judged in full: the class, the retry flag and the
# fields of every error, all the data of every success.

NAMING_FIELDS = {"validation": ("field",), "permission": ("missingScope", "role")}


def want_of(tool: str, result: dict[str, Any]) -> Want:
    """What the reference desk's ``result`` calls for, in the visible checks' terms, every field judged."""
    sc = result["structuredContent"]
    if taxonomy.is_error(result):
        category = sc["errorCategory"]
        names = NAMING_FIELDS.get(category, ())
        if sc.get("code") == "REFUND_LIMIT_EXCEEDED":
            names = ("limit", "requested")
        return Fails(
            category,
            sc["isRetryable"],
            {key: sc[key] for key in names},
            customer_message=category == "business",
            retry_hint=category == "transient",
        )
    if tool == "refund_order":
        return Succeeds(data={key: sc[key] for key in ("orderId", "amountUsd", "reason")})
    return Succeeds(data=sc)


def run_like_the_desk(
    host, steps: list[tuple[str, dict[str, Any], str]], role: str = "supervisor", fail_first: int = 0
) -> None:
    """A fresh session on both desks, then each call on both, in order; the learner's must give what the desk's gives."""
    visible.reset(host, role, fail_first)
    desk = Desk(Caller(role), PaymentGateway(fail_first=fail_first))
    for tool, args, what in steps:
        want = want_of(tool, getattr(desk, tool)(**args))
        where = f"{what} (as {role}{f', the first {fail_first} gateway call(s) failing' if fail_first else ''})"
        expect_desk_result(host.call(tool, **args), tool, want, where)


search, get, refund = visible.search, visible.get, visible.refund

# (role, calls): customers, orders, statuses and bad inputs the visible checks do not use.
UNSEEN_CASES: tuple[tuple[str, list[tuple[str, dict[str, Any], str]]], ...] = (
    (
        "supervisor",
        [
            search("carol@example.com"),
            search("bob@example.com"),
            search("alice@example.com", "shipped"),
            search("dave@example.com", "delivered"),
            search("carol@example.com", "paid"),
            search("frank@example.com"),
            search("alice@example.com", "refunded"),
            search("dave@example.com", "paid"),
            get("ORD-1002"),
            get("ORD-1004"),
            get("ORD-1006"),
            get("ORD-4321"),
            get("ORD-0000"),
            refund("ORD-1006", 5, reason="duplicate charge"),
            refund("ORD-4321", 999, reason="duplicate charge"),
            search("carol.example.com"),
            search(""),
            search("bob@example.com", "Shipped"),
            search("bob@example.com", ""),
            get("ORD-100"),
            get("ord-1001"),
            get("ORD-1001x"),
            get("ORD 1001"),
            refund("ORD-1O01", 5, reason="duplicate charge"),
            refund("ORD-1004", -0.25, reason="duplicate charge"),
            refund("ORD-5555", -1, reason="duplicate charge"),
        ],
    ),
    (
        "agent",
        [
            search("alice@example.com"),
            get("ORD-1003"),
            get("ORD-2468"),
            search("erin@example.com", "paid"),
            refund("ORD-1004", 5, reason="goodwill"),
            refund("ORD-9000", 700, reason="goodwill"),
            refund("bad", 5, reason="goodwill"),
        ],
    ),
    (
        "guest",
        [
            get("ORD-1002"),
            search("dave@example.com"),
            search("x", "lost"),
            get("nope"),
            refund("ORD-1005", 600, reason="goodwill"),
        ],
    ),
)

# (fail_first, calls): refunds through a session, read back; amounts are exact in binary, so "the rest" is exact.
UNSEEN_SESSIONS: tuple[tuple[int, list[tuple[str, dict[str, Any], str]]], ...] = (
    (
        0,
        [
            refund("ORD-1004", 500, " ($650 order)", reason="broken screen"),
            refund("ORD-1004", 150, " ($650 order) after $500: exactly what is left", reason="broken screen"),
            refund("ORD-1004", 0.25, " ($650 order) after $650", reason="broken screen"),
            get("ORD-1004", " after $650 of refunds"),
            refund("ORD-1001", 120, " ($120 order): the whole order", reason="never arrived"),
            refund("ORD-1001", 1, " ($120 order) after $120", reason="never arrived"),
            refund("ORD-1002", 499.75, " ($900 order)", reason="partial return"),
            refund("ORD-1002", 400.5, " ($900 order) after $499.75", reason="partial return"),
            refund("ORD-1002", 400.25, " ($900 order) after $499.75: exactly what is left", reason="partial return"),
            get("ORD-1002", " after $900 of refunds"),
            refund("ORD-1005", 25.5, " ($75 order)", reason="wrong colour"),
            refund("ORD-1005", 49.5, " ($75 order) after $25.50: exactly what is left", reason="wrong colour"),
            get("ORD-1005", " after $75 of refunds"),
            refund("ORD-1003", 0.5, ", which is already refunded", reason="wrong colour"),
            get("ORD-1003", ", which is already refunded"),
            refund(
                "ORD-1004", 501, " after $650 of refunds (the $500 policy is checked first)", reason="broken screen"
            ),
        ],
    ),
    (
        3,
        [
            refund("ORD-1002", 600, " (over the $500 policy: the gateway is not called)", reason="late parcel"),
            refund("ORD-1004", 10, " while the payment gateway is down", reason="late parcel"),
            refund("ORD-1004", 10, " while the payment gateway is still down", reason="late parcel"),
            refund("ORD-1001", -1, " (a bad amount: the gateway is not called)", reason="late parcel"),
            refund("ORD-1004", 10, " while the payment gateway is down a third time", reason="late parcel"),
            refund("ORD-1004", 10, " with the gateway back", reason="late parcel"),
            get("ORD-1004", " after three failed and one successful $10 refund"),
            refund("ORD-1004", 640, " ($650 order) after $10: exactly what is left", reason="late parcel"),
            get("ORD-1004", " after $650 of refunds"),
        ],
    ),
    (
        1,
        [
            refund("ORD-1005", 75, " ($75 order) while the payment gateway is down", reason="not as described"),
            get("ORD-1005", " after a failed $75 refund"),
            refund("ORD-1005", 75, " ($75 order) with the gateway back", reason="not as described"),
            refund("ORD-1005", 0.25, " ($75 order) after $75", reason="not as described"),
            refund("ORD-1002", 1000, " (over the $500 policy)", reason="not as described"),
        ],
    ),
)


@hidden.check(
    "desk_unseen_cases",
    points=3,
    title="the desk's tools on customers, orders, roles and inputs the lab does not show",
    mistake="a rule of the desk that holds only for the cases the lab shows, or rules checked in another order",
    hidden=True,
)
def desk_unseen_cases(host) -> None:
    for role, steps in UNSEEN_CASES:
        run_like_the_desk(host, steps, role=role)


@hidden.check(
    "desk_unseen_sessions",
    points=2,
    title="refunds tracked through sessions the lab does not show",
    mistake="what is left to refund miscounted over a session: at the boundary, across orders, or when the gateway failed",
    hidden=True,
)
def desk_unseen_sessions(host) -> None:
    for fail_first, steps in UNSEEN_SESSIONS:
        run_like_the_desk(host, steps, fail_first=fail_first)


# --- part C: the decision tree ----------------------------------------------------------------------


def expect_like_the_tree(host, result: dict[str, Any], attempt: int, max_attempts: int) -> None:
    want = reference_decide(result, attempt, max_attempts).action.value
    got = learner_decision(host, result, attempt, max_attempts)["action"]
    expect(
        got == want,
        f"For {shown(result)} (attempt {attempt} of {max_attempts}) the action must be {want!r}; yours is {got!r}.",
    )


# Texts that name a class other than the result's own (none of them the visible checks' texts).
MISLEADING = {
    "transient": "Upstream unavailable (503): try the call again shortly.",
    "validation": "Bad request: the quantity field is malformed.",
    "business": "Blocked by policy: the credit limit would be exceeded.",
    "permission": "Forbidden: this role lacks the invoices:export scope.",
    "not_found": "No such invoice INV-77; nothing matched.",
    "unclassified": "Something went wrong.",
}
OMIT = object()
EXTRA_FIELDS = {
    "transient": {"retryAfterSeconds": 0.75},
    "validation": {"field": "quantity", "reason": "must be a whole number"},
    "business": {"customerMessage": "Your credit limit would be exceeded.", "limit": 1200.5, "requested": 1500},
    "permission": {"missingScope": "invoices:export", "role": "intern"},
    "not_found": {},
}


def error_case(category: Any, words: str, retryable: Any, **fields: Any) -> dict[str, Any]:
    sc: dict[str, Any] = {}
    if category is not OMIT:
        sc["errorCategory"] = category
    if retryable is not OMIT:
        sc["isRetryable"] = retryable
    return {
        "isError": True,
        "content": [taxonomy.text_block(words)],
        "structuredContent": {**sc, "code": "E_UNSEEN", **fields},
    }


@cache
def unseen_results() -> tuple[tuple[dict[str, Any], int, int], ...]:
    """Results of every class, each with texts naming other classes, every retry flag and several attempt counts."""
    cases: list[tuple[dict[str, Any], int, int]] = []
    flags = {
        "not_found": [False, True, OMIT],
        "validation": [True, False, OMIT],
        "business": [True, False, OMIT],
        "permission": [True, False, "true"],
        "transient": [False, OMIT, "true", None],
    }
    for seed, (category, retryable) in enumerate(flags.items()):
        texts = [words for name, words in MISLEADING.items() if name != category]
        for case in covering(
            seed + 211, {"text": texts, "retryable": retryable, "attempts": [(1, 2), (2, 4), (4, 4), (1, 6)]}
        ):
            cases.append(
                (error_case(category, case["text"], case["retryable"], **EXTRA_FIELDS[category]), *case["attempts"])
            )
    # A retryable transient error with no hint at all, and one whose hint is longer than the backoff.
    cases += [
        (error_case("transient", MISLEADING["business"], True), 1, 4),
        (error_case("transient", MISLEADING["not_found"], True, retryAfterSeconds=30), 2, 4),
        (
            {
                "isError": True,
                "content": [taxonomy.text_block(MISLEADING["validation"])],
                "structuredContent": {"errorCategory": "transient", "isRetryable": True},
            },
            1,
            2,
        ),
    ]
    # Unclassified: no category, an empty one, categories the taxonomy does not have; with or without isRetryable true.
    for category, words, retryable in (
        (OMIT, MISLEADING["transient"], True),
        ("timeout", MISLEADING["transient"], True),
        ("rate_limit", MISLEADING["not_found"], True),
        ("internal", MISLEADING["validation"], False),
        (None, MISLEADING["business"], True),
    ):
        cases.append((error_case(category, words, retryable), 1, 4))
    cases.append(
        ({"isError": True, "content": [taxonomy.text_block(MISLEADING["unclassified"])], "structuredContent": {}}, 1, 2)
    )
    # Not errors: other keys, several lists, a category on a result that is not an error, no isError at all.
    cases += [
        (
            {
                "isError": False,
                "content": [taxonomy.text_block("3 invoices.")],
                "structuredContent": {"invoices": [{"id": "INV-1"}, {"id": "INV-2"}, {"id": "INV-3"}], "total": 3},
            },
            1,
            4,
        ),
        (
            {
                "isError": False,
                "content": [taxonomy.text_block("Nothing to page.")],
                "structuredContent": {"alerts": [], "pages": []},
            },
            2,
            4,
        ),
        ({"content": [taxonomy.text_block("No alerts are open.")], "structuredContent": {"alerts": []}}, 1, 2),
        (
            {
                "isError": False,
                "content": [taxonomy.text_block("One match; none skipped.")],
                "structuredContent": {"matches": [{"id": "m1"}], "skipped": []},
            },
            1,
            6,
        ),
        (
            {
                "isError": False,
                "content": [taxonomy.text_block(MISLEADING["validation"])],
                "structuredContent": {"errorCategory": "validation", "matches": [{"id": "m2"}]},
            },
            1,
            4,
        ),
        (
            {
                "isError": False,
                "content": [taxonomy.text_block(MISLEADING["not_found"])],
                "structuredContent": {"errorCategory": "not_found", "invoices": [{"id": "INV-9"}]},
            },
            4,
            4,
        ),
        ({"isError": False, "content": [], "structuredContent": {"invoices": [], "nextCursor": None}}, 1, 2),
    ]
    return tuple(cases)


@hidden.check(
    "decide_unseen_results",
    points=2,
    title="decide() on results the lab does not show",
    mistake="a decision read from the text, from a flag of the wrong kind or from one shape of result instead of isError, errorCategory and isRetryable",
    hidden=True,
)
def decide_unseen_results(host) -> None:
    for result, attempt, max_attempts in unseen_results():
        expect_like_the_tree(host, result, attempt, max_attempts)


# A retryable transient error at caps and attempts the lab does not show: a cap of one, two, four and six,
# the last attempt before the cap, the cap itself, and attempts past it.
BUDGETS = ((1, 2), (2, 2), (1, 4), (3, 4), (4, 4), (5, 4), (4, 3), (7, 4), (2, 6), (5, 6), (6, 6), (2, 1), (9, 6))


BUDGET_TEXTS = ("Connection reset by the ledger; try again.", "The ledger is busy (429).")


def budget_result(n: int) -> dict[str, Any]:
    return error_case("transient", BUDGET_TEXTS[n % 2], True, retryAfterSeconds=(0.1, 0.4)[n % 2])


@hidden.check(
    "decide_unseen_budgets",
    points=1,
    title="decide()'s retry budget at attempts and caps the lab does not show",
    mistake="a retry budget that is fixed, off by one, or not kept once the attempts are past the cap",
    hidden=True,
)
def decide_unseen_budgets(host) -> None:
    for n, (attempt, max_attempts) in enumerate(BUDGETS):
        expect_like_the_tree(host, budget_result(n), attempt, max_attempts)


# --- part D: local recovery and the escalation envelope ---------------------------------------------
#
# Generated runs: each endpoint answers each item with a list of results (the last one repeats). Their
# transient errors hint a wait (retryAfterSeconds) that depends on the item: shorter than any backoff,
# or longer than the first backoffs, so the waits are retry_delay(hint, attempt), attempt counted on
# each endpoint anew, and a recover() that ignores the hint waits too little.

Run = tuple[
    list[str], list[str], dict[str, dict[str, list[str]]], int
]  # items, endpoints, kinds per endpoint and item, max_attempts


def ok(item: str) -> dict[str, Any]:
    return taxonomy.success_result(f"Record {item} fetched.", {"record": {"id": item, "source": "ledger"}})


RETRY_HINTS = (
    0.1,
    1.25,
    3.0,
)  # seconds: shorter than backoff_delay(1), between the 2nd and 3rd backoffs, longer than the 3rd


def hint_of(item: str) -> float:
    """The retryAfterSeconds an item's transient errors carry: fixed per item, different across items."""
    return RETRY_HINTS[sum(map(ord, item)) % len(RETRY_HINTS)]


def step(kind: str, item: str) -> dict[str, Any]:
    if kind == "ok":
        return ok(item)
    if kind == "empty":
        return taxonomy.empty_result(f"Nothing recorded for {item}.", key="entries", count=0)
    if kind == "not_found":
        return taxonomy.not_found_error(f"The ledger has no {item}.", code="RECORD_NOT_FOUND")
    if kind == "transient":
        return taxonomy.transient_error(
            f"{item}: the ledger did not answer in time.", retry_after_seconds=hint_of(item)
        )
    if kind == "validation":
        return taxonomy.validation_error(
            f"{item}: the date range is inverted.", field="date_range", reason="start after end"
        )
    if kind == "business":
        return taxonomy.business_error(
            f"{item} is frozen by an audit.",
            code="RECORD_FROZEN",
            customer_message=f"{item} is under audit and cannot change now.",
            limit=None,
            requested=None,
        )
    if kind == "permission":
        return taxonomy.permission_error(
            f"{item}: the ledger refuses this role.", missing_scope="ledger:read", role="intern"
        )
    if kind == "unclassified":
        return {"isError": True, "content": [taxonomy.text_block(f"{item}: something went wrong.")]}
    raise ValueError(kind)


def script_of(run: Run) -> dict[str, dict[str, list[dict[str, Any]]]]:
    _, _, kinds, _ = run
    return {
        endpoint: {item: [step(k, item) for k in seq] for item, seq in per_item.items()}
        for endpoint, per_item in kinds.items()
    }


KIND_WORDS = {
    "ok": "success",
    "empty": "an empty result",
    "not_found": "not_found",
    "validation": "a validation error",
    "business": "a business error",
    "permission": "a permission error",
    "unclassified": "an error without a category",
}


def kind_words(kind: str, item: str) -> str:
    if kind == "transient":
        return f"a transient error hinting {hint_of(item):g} s"
    return KIND_WORDS[kind]


def run_text(run: Run) -> str:
    items, endpoints, kinds, max_attempts = run
    answers = "; ".join(
        f"{endpoint} answers {item} with {', '.join(kind_words(k, item) for k in seq)}"
        + (" (and again)" if seq[-1] == "transient" else "")
        for endpoint in endpoints
        for item, seq in kinds[endpoint].items()
    )
    return f"items {items}, endpoints {endpoints}, max_attempts {max_attempts} ({answers})"


ITEM_POOLS = (["INV-1", "INV-2", "INV-3", "INV-4"], ["t-1", "t-2", "t-3"], ["K7", "K8", "K9", "K10"])
ENDPOINT_POOLS = (["eu", "us"], ["main", "backup", "archive"], ["north"], ["dc1", "dc2"])


@cache
def completed_runs() -> tuple[Run, ...]:
    """Runs in which every item is done in the end: retries with backoff, endpoints spent, empty and not_found answers."""
    rng = random.Random("lab1-recover-unseen-complete")
    runs: list[Run] = []
    for n in range(6):
        items = ITEM_POOLS[n % len(ITEM_POOLS)][: rng.randint(2, 4)]
        endpoints = ENDPOINT_POOLS[n % len(ENDPOINT_POOLS)]
        cap = (1, 4, 2, 5, 3, 2)[n]
        kinds: dict[str, dict[str, list[str]]] = {e: {} for e in endpoints}
        for i in items:
            spent = rng.randint(0, len(endpoints) - 1)  # endpoints that only fail, before the one that answers
            for e in endpoints[:spent]:
                kinds[e][i] = ["transient"]
            for e in endpoints[spent:]:
                kinds[e][i] = ["transient"] * rng.randint(0, cap - 1) + [rng.choice(["ok", "ok", "empty", "not_found"])]
        runs.append((items, endpoints, kinds, cap))
    # Every answer kind that counts as done, on the first attempt, at a cap of one.
    runs.append(
        (["z-1", "z-2", "z-3"], ["solo-b"], {"solo-b": {"z-1": ["empty"], "z-2": ["not_found"], "z-3": ["ok"]}}, 1)
    )
    return tuple(runs)


@cache
def escalated_runs() -> tuple[Run, ...]:
    """Runs that stop at an item after others were done: each class that cannot be fixed locally, and budgets spent everywhere."""
    rng = random.Random("lab1-recover-unseen-escalated")
    runs: list[Run] = []
    endings = ("validation", "business", "permission", "unclassified", "spent", "validation", "business", "spent")
    for n, ending in enumerate(endings):
        items = ITEM_POOLS[(n + 1) % len(ITEM_POOLS)][: rng.randint(2, 4)]
        endpoints = ENDPOINT_POOLS[(n + 1) % len(ENDPOINT_POOLS)]
        cap = rng.randint(2, 4)
        failing = items[rng.randint(1, len(items) - 1)]
        kinds: dict[str, dict[str, list[str]]] = {e: {} for e in endpoints}
        for i in items:
            for e in endpoints:
                kinds[e][i] = (
                    ["transient"] * rng.randint(0, cap - 1) + [rng.choice(["ok", "empty"])]
                    if e == endpoints[0]
                    else ["ok"]
                )
        if ending == "spent":
            for e in endpoints:
                kinds[e][failing] = ["transient"]
        else:
            # Some transient failures first (on a later endpoint, once the first is spent, half the time), then the ending.
            at = rng.randint(0, len(endpoints) - 1)
            for e in endpoints[:at]:
                kinds[e][failing] = ["transient"]
            kinds[endpoints[at]][failing] = ["transient"] * rng.randint(0, cap - 1) + [ending, "ok"]
            for e in endpoints[at + 1 :]:
                kinds[e][failing] = ["ok"]
        runs.append((items, endpoints, kinds, cap))
    return tuple(runs)


def reference_run(run: Run) -> tuple[dict[str, Any], list[list[str]], list[float]]:
    """What the reference recover() gives on ``run``: its envelope, its calls and its waits."""
    items, endpoints, _, max_attempts = run
    script = script_of(run)
    clock = FakeClock()
    served: dict[tuple[str, str], int] = {}
    calls: list[list[str]] = []

    def call(endpoint: str, item: str) -> dict[str, Any]:
        calls.append([endpoint, item])
        seq = script[endpoint][item]
        n = served.get((endpoint, item), 0)
        served[(endpoint, item)] = n + 1
        return seq[min(n, len(seq) - 1)]

    envelope = reference_recover(list(items), call, list(endpoints), sleep=clock.sleep, max_attempts=max_attempts)
    return envelope, calls, clock.sleeps


def expect_run_like_reference(host, run: Run) -> None:
    """recover() on ``run`` must do what the reference does: the same calls and waits, the same envelope."""
    items, endpoints, _, max_attempts = run
    want, want_calls, want_sleeps = reference_run(run)
    envelope, calls, sleeps = run_recover(host, list(items), list(endpoints), script_of(run), max_attempts)
    where = f"With {run_text(run)}"
    expect_calls(calls, want_calls, where)
    expect_status(envelope, want["status"], where)
    expect(
        sleeps == want_sleeps,
        f"{where}: the waits must be retry_delay of each attempt that failed (the server's hint when it asks for longer than the backoff), {want_sleeps}; yours were {sleeps}.",
    )
    key = "results" if want["status"] == "complete" else "partialResults"
    expect_entries(envelope, key, [{k: e[k] for k in ("item", "endpoint", "data")} for e in want[key]], where)
    attempts = envelope.get("attempts")
    attempts = attempts if isinstance(attempts, dict) else {}
    for name in ("endpointsTried", "retryCount"):
        expect(
            attempts.get(name) == want["attempts"][name],
            f"{where}: attempts.{name} must be {want['attempts'][name]!r}; yours is {attempts.get(name)!r}.",
        )
    if want["status"] != "escalated":
        return
    expect_description(envelope, where)
    unclassified = want["errorCategory"] is None
    # What an unclassified failure's errorCategory is called, the lab leaves open; everything else is judged.
    for name in (
        ("isRetryable", "failedItem")
        if unclassified
        else ("errorCategory", "isRetryable", "failedItem", "customerMessage")
    ):
        if name in want or name in envelope:
            expect(
                envelope.get(name) == want.get(name),
                f"{where}: the envelope's {name} must be {want.get(name)!r}; yours is {envelope.get(name)!r}.",
            )


@hidden.check(
    "recover_unseen_runs",
    points=2,
    title="recover() on runs the lab does not show",
    mistake="local recovery that holds only for the runs the lab shows: other caps, more endpoints, empty answers, failures spread over endpoints",
    hidden=True,
)
def recover_unseen_runs(host) -> None:
    for run in completed_runs():
        expect_run_like_reference(host, run)


@hidden.check(
    "recover_unseen_escalations",
    points=2,
    title="recover()'s escalations on runs the lab does not show",
    mistake="an escalation that retries or fails over what cannot be fixed locally, or leaves out what the coordinator needs",
    hidden=True,
)
def recover_unseen_escalations(host) -> None:
    for run in escalated_runs():
        expect_run_like_reference(host, run)


# The notebook's order of graded cells: each skill's visible checks, then its hidden ones.
ORDER = [
    "results_transient",
    "results_validation",
    "results_business",
    "results_permission",
    "results_not_found",
    "results_empty",
    "results_unseen_arguments",
    "desk_empty_search",
    "desk_not_found",
    "desk_permission",
    "desk_business_limit",
    "desk_validation",
    "desk_transient",
    "desk_success",
    "desk_unseen_cases",
    "desk_unseen_sessions",
    "decide_success_and_empty",
    "decide_not_found",
    "decide_transient_retry_cap",
    "decide_transient_not_retryable",
    "decide_validation_replans",
    "decide_permission_escalates",
    "decide_business_stops",
    "decide_unclassified_escalates",
    "decide_unseen_results",
    "decide_unseen_budgets",
    "recover_backoff",
    "recover_cap_and_failover",
    "recover_no_replay_validation",
    "recover_no_retry_business",
    "recover_envelope",
    "recover_unseen_runs",
    "recover_unseen_escalations",
]

checks = CheckRegistry.combined(LAB, ORDER, visible.checks, hidden)
