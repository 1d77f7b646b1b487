"""The agent simulator: exact request counts and context bytes of the two strategies, in memory."""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import asdict, replace

import pytest
from mcp.shared.exceptions import MCPError

from grader.simulator import (
    CATALOG_FIRST,
    EXPLORATORY,
    STRATEGIES,
    TRACKER,
    CountingSession,
    Scenario,
    SimulatorError,
    StrategyUnavailable,
    measure,
    questions_for,
    reference_items,
    run,
    tool_result_bytes,
)
from servers.client import connect
from servers.toolkit import ResourceSpec, TemplateSpec
from servers.toolkit import build_server as build_mcp_server
from servers.tracker import build_server
from servers.tracker.tracker import CATALOG_URI, Tracker


@contextmanager
def tracker(n: int):
    """A session to an in-process tracker of ``n`` issues, and the questions about it."""
    data = Tracker.with_issues(n)
    with connect(build_server(data)) as session:
        yield session, questions_for(TRACKER, [asdict(issue) for issue in data.issues])


def by_id(outcomes):
    return {o.question_id: o for o in outcomes}


def utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class SilentSession:
    """Fails the test if the simulator sends anything."""

    def call(self, *args, **kwargs):
        raise AssertionError("no request should have been sent")

    read = call


class ScriptedSession:
    """A stand-in server that answers every tool call and read with the same response."""

    def __init__(self, result=None, text=""):
        self.result, self.text, self.sent = result, text, 0

    def call(self, tool, arguments):
        self.sent += 1
        return self.result

    def read(self, uri):
        self.sent += 1
        return self.text


# --- exact counts -----------------------------------------------------------------------------


def test_exploratory_count_on_45_issues_makes_3_list_calls_then_45_gets_in_order():
    with tracker(45) as (session, questions):
        count = by_id(run(session, TRACKER, EXPLORATORY, questions))["count"]
    assert (count.tally.tool_calls, count.tally.resource_reads, count.tally.round_trips) == (48, 0, 48)
    sent = [(r.target, dict(r.arguments)) for r in count.requests]
    assert sent[:3] == [("list_issues", {"page": p}) for p in (1, 2, 3)]
    assert sent[3:] == [("get_issue", {"key": f"PROJ-{i}"}) for i in range(1, 46)]


def test_exploratory_lookup_stops_at_the_first_matching_item():
    with tracker(45) as (session, questions):
        middle = by_id(run(session, TRACKER, EXPLORATORY, questions))["lookup_middle"]
    # The middle item is index 45 // 2 = 22, PROJ-23: 3 list pages, then 23 gets.
    assert middle.tally.round_trips == 3 + 23
    assert middle.requests[-1].arguments == {"key": "PROJ-23"}


def test_exploratory_gets_every_item_when_no_title_matches():
    with tracker(45) as (session, questions):
        missing = by_id(run(session, TRACKER, EXPLORATORY, questions))["no_such_title"]
    assert missing.answer is None and missing.correct
    assert missing.tally.tool_calls == 3 + 45


def test_catalog_first_answers_the_count_with_exactly_one_resource_read():
    with tracker(45) as (session, questions):
        count = by_id(run(session, TRACKER, CATALOG_FIRST, questions))["count"]
    assert (count.tally.tool_calls, count.tally.resource_reads, count.tally.round_trips) == (0, 1, 1)
    assert [r.target for r in count.requests] == [CATALOG_URI]


def test_catalog_first_answers_the_detail_question_in_exactly_two_round_trips():
    with tracker(45) as (session, questions):
        detail = by_id(run(session, TRACKER, CATALOG_FIRST, questions))["detail_last"]
    assert detail.tally.round_trips == 2 and detail.tally.resource_reads == 2
    assert [r.target for r in detail.requests] == [CATALOG_URI, "tracker://issues/PROJ-45"]


def test_without_a_template_catalog_first_fetches_the_detail_with_one_get_call():
    no_template = replace(TRACKER, item_template=None)
    with tracker(45) as (session, questions):
        detail = by_id(run(session, no_template, CATALOG_FIRST, questions))["detail_last"]
    assert detail.correct
    assert (detail.tally.resource_reads, detail.tally.tool_calls, detail.tally.round_trips) == (1, 1, 2)
    assert detail.requests[1].arguments == {"key": "PROJ-45"}


def test_catalog_first_answers_lookups_in_the_catalog_with_one_read():
    with tracker(45) as (session, questions):
        outcomes = by_id(run(session, TRACKER, CATALOG_FIRST, questions))
    assert outcomes["lookup_middle"].tally.round_trips == 1
    assert outcomes["no_such_title"].tally.round_trips == 1


# --- correct answers --------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("size", [1, 20, 21, 45])
def test_every_answer_is_correct_for_both_strategies(size, strategy):
    with tracker(size) as (session, questions):
        outcomes = run(session, TRACKER, strategy, questions)
    assert [o.question_id for o in outcomes] == ["count", "lookup_middle", "detail_last", "no_such_title"]
    assert all(o.correct for o in outcomes), [(o.question_id, o.answer, o.expected) for o in outcomes]


def test_reference_answers_agree_with_the_tracker_data():
    issues = Tracker.with_issues(45).issues
    questions = {q.id: q for q in questions_for(TRACKER, [asdict(i) for i in issues])}
    assert questions["count"].expected == sum(1 for i in issues if i.status == issues[0].status)
    assert questions["lookup_middle"].expected == issues[22].assignee
    assert questions["detail_last"].expected == issues[44].description
    assert questions["no_such_title"].expected is None
    assert issues[44].title in questions["detail_last"].text


def test_an_empty_tracker_gives_zero_and_none_and_exploratory_makes_one_list_call():
    with tracker(0) as (session, questions):
        explored = run(session, TRACKER, EXPLORATORY, questions)
        from_catalog = run(session, TRACKER, CATALOG_FIRST, questions)
    for outcomes in (explored, from_catalog):
        assert [o.answer for o in outcomes] == [0, None, None, None]
        assert all(o.correct for o in outcomes)
    assert all((o.tally.tool_calls, o.tally.round_trips) == (1, 1) for o in explored)
    assert all(o.requests[0].target == "list_issues" for o in explored)
    assert all((o.tally.resource_reads, o.tally.round_trips) == (1, 1) for o in from_catalog)


# --- context bytes ----------------------------------------------------------------------------


def test_context_bytes_equal_the_utf8_sizes_of_the_responses_read():
    with tracker(2) as (session, questions):
        count, _, detail, _ = questions
        explored = by_id(run(session, TRACKER, EXPLORATORY, [count]))["count"]
        from_catalog = by_id(run(session, TRACKER, CATALOG_FIRST, [detail]))["detail_last"]
        responses = [
            session.call("list_issues", page=1),
            session.call("get_issue", key="PROJ-1"),
            session.call("get_issue", key="PROJ-2"),
        ]
        texts = [session.read(CATALOG_URI), session.read("tracker://issues/PROJ-2")]
    by_hand = sum(utf8(r["content"][0]["text"]) + utf8(compact(r["structuredContent"])) for r in responses)
    assert explored.tally.context_bytes == by_hand
    assert from_catalog.tally.context_bytes == utf8(texts[0]) + utf8(texts[1])


def test_an_empty_list_page_costs_its_text_plus_its_compact_structured_content():
    with tracker(0) as (session, questions):
        count = run(session, TRACKER, EXPLORATORY, questions[:1])[0]
    text, structured = "No issues on page 1 (the sprint has 0).", '{"keys":[],"page":1,"pages":1,"nextPage":null}'
    assert count.tally.context_bytes == len(text) + len(structured) == 85


def test_context_bytes_count_utf8_bytes_not_characters():
    result = {
        "content": [{"type": "text", "text": "Ticket日本"}, {"type": "image", "data": "AAAA"}],
        "structuredContent": {"k": "é"},
    }
    proxy = CountingSession(ScriptedSession(result=result, text="ß"))
    proxy.call("anything")
    proxy.read("any://uri")
    # "Ticket日本" is 12 bytes; the image block counts 0; {"k":"é"} is 10 bytes; "ß" is 2.
    assert tool_result_bytes(result) == 22
    assert proxy.tally.context_bytes == 24


# --- the counting proxy -----------------------------------------------------------------------


def test_the_proxy_counts_an_error_result_as_a_sent_tool_call():
    with tracker(3) as (session, _):
        proxy = CountingSession(session)
        result = proxy.call("get_issue", key="PROJ-99")
    assert result["isError"] is True
    assert (proxy.tally.tool_calls, proxy.tally.round_trips) == (1, 1)
    assert proxy.tally.context_bytes == tool_result_bytes(result) > 0


def test_the_proxy_counts_a_failed_resource_read_and_reraises_the_error():
    with tracker(3) as (session, _):
        proxy = CountingSession(session)
        with pytest.raises(MCPError):
            proxy.read("tracker://issues/PROJ-99")
    assert (proxy.tally.resource_reads, proxy.tally.round_trips) == (1, 1)
    assert "PROJ-99" in proxy.requests[0].error
    assert proxy.tally.context_bytes == utf8(proxy.requests[0].error)


def test_listings_count_as_round_trips_too():
    with tracker(3) as (session, _):
        proxy = CountingSession(session)
        tools, resources = proxy.tools(), proxy.resources()
    assert (proxy.tally.listings, proxy.tally.round_trips, proxy.tally.tool_calls) == (2, 2, 0)
    assert proxy.tally.context_bytes == utf8(compact(tools)) + utf8(compact(resources))


# --- refusals and errors ----------------------------------------------------------------------


def test_a_scenario_without_a_list_tool_refuses_exploratory_before_sending_anything():
    catalog_only = replace(TRACKER, list_tool=None)
    with pytest.raises(StrategyUnavailable, match="no list tool .* exploratory strategy cannot run"):
        run(SilentSession(), catalog_only, EXPLORATORY, [])


def test_an_unknown_strategy_is_refused_with_the_known_ones_named():
    with pytest.raises(SimulatorError, match="exploratory, catalog_first"):
        run(SilentSession(), TRACKER, "guess", [])


def test_a_list_tool_whose_pages_never_end_is_reported_not_looped_on():
    looping = {"content": [], "structuredContent": {"keys": ["A"], "nextPage": 1}, "isError": False}
    questions = questions_for(TRACKER, [])
    with pytest.raises(SimulatorError, match="never reaches a last page"):
        run(ScriptedSession(result=looping), TRACKER, EXPLORATORY, questions[:1])


def test_an_item_template_needs_exactly_one_placeholder():
    with pytest.raises(SimulatorError, match="exactly one"):
        replace(TRACKER, item_template="tracker://{project}/{key}")


# --- any server -------------------------------------------------------------------------------


def runbook_server(n: int):
    """A catalog-only server, as a learner might write one: a catalog and a template, no tools."""
    books = {
        f"RB-{i}": {
            "id": f"RB-{i}",
            "title": f"Playbook {i}",
            "service": "search" if i % 2 else "auth",
            "steps": [f"step {i}"],
        }
        for i in range(1, n + 1)
    }
    catalog = {"runbooks": [{k: v for k, v in b.items() if k != "steps"} for b in books.values()]}
    return build_mcp_server(
        "runbooks",
        [],
        resources=[ResourceSpec("runbooks://catalog", "catalog", "Every runbook.", lambda: compact(catalog))],
        templates=[
            TemplateSpec(
                "runbooks://runbooks/{runbook_id}",
                "runbook",
                "One runbook.",
                lambda v: compact(books[v["runbook_id"]]) if v["runbook_id"] in books else None,
            )
        ],
    )


RUNBOOKS = Scenario(
    name="runbooks",
    catalog_uri="runbooks://catalog",
    items_key="runbooks",
    id_field="id",
    title_field="title",
    count_field="service",
    lookup_field="service",
    detail_field="steps",
    item_template="runbooks://runbooks/{runbook_id}",
    item_noun="runbook",
)


def test_catalog_first_answers_a_catalog_only_server_with_another_catalog():
    with connect(runbook_server(7)) as session:
        questions = questions_for(RUNBOOKS, reference_items(session, RUNBOOKS))
        outcomes = by_id(run(session, RUNBOOKS, CATALOG_FIRST, questions))
        with pytest.raises(StrategyUnavailable):
            run(session, RUNBOOKS, EXPLORATORY, questions)
    assert all(o.correct for o in outcomes.values())
    assert outcomes["count"].answer == 4
    assert outcomes["detail_last"].answer == ["step 7"]
    assert [r.target for r in outcomes["detail_last"].requests] == ["runbooks://catalog", "runbooks://runbooks/RB-7"]


# --- determinism and the lesson's table -------------------------------------------------------


def test_two_runs_give_identical_outcomes():
    with tracker(21) as (session, questions):
        first = [run(session, TRACKER, s, questions) for s in STRATEGIES]
        second = [run(session, TRACKER, s, questions) for s in STRATEGIES]
    assert first == second


def test_measure_sums_the_questions_per_size_and_strategy():
    rows = measure((1, 21))
    assert [(r["size"], r["strategy"]) for r in rows] == [
        (1, EXPLORATORY),
        (1, CATALOG_FIRST),
        (21, EXPLORATORY),
        (21, CATALOG_FIRST),
    ]
    assert all(r["correct"] == r["questions"] == 4 for r in rows)
    # 21 issues, 2 list pages: count 2 + 21, middle (PROJ-11) 2 + 11, last 2 + 21, none 2 + 21.
    assert rows[2]["round_trips"] == rows[2]["tool_calls"] == 23 + 13 + 23 + 23
    # Catalog first: one read each, plus one item read for the detail.
    assert rows[3]["round_trips"] == rows[3]["resource_reads"] == 5
    assert rows[0]["round_trips"] == 4 * (1 + 1)
