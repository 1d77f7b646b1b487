"""The tracker over MCP, in memory: its data, resources, tools, annotations, prompt and response sizes."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import asdict
from typing import Any

import anyio
import pytest
from mcp import Client

from servers.client import Session, connect
from servers.tracker.server import build_server, tracker_from_env
from servers.tracker.tracker import (
    ASSIGNEES,
    COMPONENTS,
    MAX_ISSUES,
    PAGE_SIZE,
    PRIORITIES,
    STATUSES,
    Tracker,
    make_issue,
    to_json,
)

CATALOG = "tracker://sprints/current/issues"
SCHEMA = "tracker://schema"
TOOL_NAMES = {"list_issues", "search_issues", "get_issue", "create_issue", "set_status"}


def open_tracker(tracker: Tracker) -> Session:
    return connect(build_server(tracker), timeout=10)


def text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def structured(result: dict[str, Any]) -> dict[str, Any]:
    return result["structuredContent"]


def catalog_of(session: Session) -> dict[str, Any]:
    return json.loads(session.read(CATALOG))


def assert_validation(result: dict[str, Any], field: str) -> None:
    assert result["isError"] is True
    assert structured(result)["errorCategory"] == "validation"
    assert structured(result)["isRetryable"] is False
    assert structured(result)["field"] == field
    assert text(result).strip()


def search_total(query: str, n: int) -> list[str]:
    return [f"PROJ-{i}" for i in range(1, n + 1) if query.lower() in make_issue(i).title.lower()]


# --- the data --------------------------------------------------------------------------------


def test_issue_i_is_the_same_in_every_sprint_whatever_its_size() -> None:
    small, large = Tracker.with_issues(10), Tracker.with_issues(MAX_ISSUES)

    assert [asdict(issue) for issue in small.issues] == [asdict(issue) for issue in large.issues[:10]]
    assert asdict(large.issues[6]) == asdict(make_issue(7))
    assert asdict(make_issue(7)) == asdict(make_issue(7))
    assert [issue.key for issue in large.issues] == [f"PROJ-{i}" for i in range(1, MAX_ISSUES + 1)]


def test_the_same_issue_comes_back_from_servers_of_different_sizes() -> None:
    with open_tracker(Tracker.with_issues(10)) as small, open_tracker(Tracker.with_issues(MAX_ISSUES)) as large:
        assert small.call("get_issue", key="PROJ-7") == large.call("get_issue", key="PROJ-7")
        assert small.read("tracker://issues/PROJ-7") == large.read("tracker://issues/PROJ-7")


def test_every_generated_issue_uses_only_the_schemas_allowed_values() -> None:
    for issue in Tracker.with_issues(MAX_ISSUES).issues:
        assert issue.status in STATUSES
        assert issue.priority in PRIORITIES
        assert issue.assignee in ASSIGNEES
        assert issue.component in COMPONENTS
        assert issue.title and issue.description


@pytest.mark.parametrize("n", [0, 1, MAX_ISSUES])
def test_a_sprint_of_0_to_1000_issues_is_accepted(n: int) -> None:
    assert len(Tracker.with_issues(n).issues) == n


@pytest.mark.parametrize("n", [-1, MAX_ISSUES + 1, 10_000])
def test_a_sprint_size_outside_0_to_1000_is_rejected(n: int) -> None:
    with pytest.raises(ValueError, match=r"0 to 1000"):
        Tracker.with_issues(n)


@pytest.mark.parametrize("raw", ["1001", "-1", "lots", "", "2.5"])
def test_a_bad_tracker_issues_value_stops_the_server_with_a_sentence_saying_what_to_give(
    raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACKER_ISSUES", raw)

    with pytest.raises(SystemExit) as caught:
        tracker_from_env()

    message = str(caught.value.code)
    assert f"TRACKER_ISSUES={raw!r}" in message
    assert "whole number" in message and "0 to 1000" in message


def test_tracker_issues_sets_the_sprint_size_and_defaults_to_25(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACKER_ISSUES", "0")
    assert tracker_from_env().issues == []
    monkeypatch.delenv("TRACKER_ISSUES")
    assert len(tracker_from_env().issues) == 25


# --- resources -------------------------------------------------------------------------------


def test_resources_list_is_exactly_the_catalog_and_the_schema() -> None:
    with open_tracker(Tracker.with_issues(5)) as session:
        resources = session.resources()

    assert resources == [
        {
            "uri": CATALOG,
            "name": "current-sprint",
            "description": "Every issue of the current sprint: key, title, status, assignee.",
            "mimeType": "application/json",
        },
        {
            "uri": SCHEMA,
            "name": "schema",
            "description": "The tracker's fields and their allowed values.",
            "mimeType": "application/json",
        },
    ]


def test_templates_list_is_exactly_the_issue_template() -> None:
    with open_tracker(Tracker.with_issues(5)) as session:
        templates = session.templates()

    assert templates == [
        {
            "uriTemplate": "tracker://issues/{key}",
            "name": "issue",
            "description": "One issue in full, by key.",
            "mimeType": "application/json",
        }
    ]


def test_the_catalog_lists_every_issue_with_key_title_status_assignee_and_the_count() -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        catalog = catalog_of(session)

    assert catalog["count"] == 30
    assert catalog["sprint"] == "current"
    assert len(catalog["issues"]) == 30
    for i, entry in enumerate(catalog["issues"], start=1):
        issue = make_issue(i)
        # A summary only: the description stays behind get_issue and the issue template.
        assert entry == {"key": issue.key, "title": issue.title, "status": issue.status, "assignee": issue.assignee}


def test_the_schema_lists_every_field_and_the_allowed_values() -> None:
    with open_tracker(Tracker.with_issues(5)) as session:
        schema = json.loads(session.read(SCHEMA))

    fields = schema["fields"]
    assert set(fields) == {"key", "title", "status", "priority", "assignee", "component", "description"}
    assert fields["status"] == ["todo", "in_progress", "in_review", "done"]
    assert fields["priority"] == ["low", "medium", "high", "urgent"]
    assert fields["component"] == ["api", "web", "billing", "auth", "search"]
    assert fields["assignee"] == list(ASSIGNEES)
    # Every field of an issue is described.
    assert set(fields) == set(asdict(make_issue(1)))


def test_the_issue_template_returns_the_full_issue() -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        by_template = json.loads(session.read("tracker://issues/PROJ-17"))
        by_tool = structured(session.call("get_issue", key="PROJ-17"))["issue"]

    assert by_template == asdict(make_issue(17))
    assert by_template == by_tool


@pytest.mark.parametrize(
    "uri", ["tracker://issues/PROJ-31", "tracker://issues/proj-1", "tracker://issues/", "tracker://sprints/next/issues"]
)
def test_a_uri_naming_no_issue_is_resource_not_found(uri: str) -> None:
    from mcp.shared.exceptions import MCPError

    with open_tracker(Tracker.with_issues(30)) as session, pytest.raises(MCPError) as caught:
        session.read(uri)

    assert caught.value.code == -32002
    assert uri in str(caught.value)


def test_reading_every_resource_changes_no_state_and_gives_the_same_text_twice() -> None:
    tracker = Tracker.with_issues(30)
    before = copy.deepcopy(tracker.issues)

    with open_tracker(tracker) as session:
        catalog_before = session.read(CATALOG)
        first = [session.read(uri) for uri in (CATALOG, SCHEMA, "tracker://issues/PROJ-3")]
        second = [session.read(uri) for uri in (CATALOG, SCHEMA, "tracker://issues/PROJ-3")]
        catalog_after = session.read(CATALOG)

    assert first == second
    assert catalog_before == catalog_after
    assert tracker.writes == 0
    assert tracker.issues == before


def test_the_read_only_tools_change_no_state() -> None:
    tracker = Tracker.with_issues(30)
    before = copy.deepcopy(tracker.issues)

    with open_tracker(tracker) as session:
        catalog_before = session.read(CATALOG)
        session.call("list_issues", page=2)
        session.call("search_issues", query="fix")
        session.call("get_issue", key="PROJ-3")
        session.call("get_issue", key="PROJ-999")
        catalog_after = session.read(CATALOG)

    assert catalog_before == catalog_after
    assert tracker.writes == 0
    assert tracker.issues == before


# --- tools and annotations -------------------------------------------------------------------


def test_tools_list_names_the_five_tracker_tools_each_with_a_description() -> None:
    with open_tracker(Tracker.with_issues(5)) as session:
        tools = session.tools()

    assert {tool["name"] for tool in tools} == TOOL_NAMES
    for tool in tools:
        assert len(tool["description"]) > 60, tool["name"]
        assert tool["inputSchema"]["type"] == "object"


def annotations_by_name(session: Session) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool["annotations"] for tool in session.tools()}


def test_the_read_tools_are_annotated_read_only_idempotent_and_not_destructive() -> None:
    with open_tracker(Tracker.with_issues(5)) as session:
        annotations = annotations_by_name(session)

    for name in ("list_issues", "search_issues", "get_issue"):
        assert annotations[name]["readOnlyHint"] is True, name
        assert annotations[name]["idempotentHint"] is True, name
        assert annotations[name]["destructiveHint"] is False, name


def test_create_issue_is_annotated_as_a_write_that_is_neither_idempotent_nor_destructive() -> None:
    with open_tracker(Tracker.with_issues(5)) as session:
        annotations = annotations_by_name(session)["create_issue"]

    assert annotations["readOnlyHint"] is False
    assert annotations["idempotentHint"] is False
    assert annotations["destructiveHint"] is False


def test_set_status_is_annotated_as_an_idempotent_write() -> None:
    with open_tracker(Tracker.with_issues(5)) as session:
        annotations = annotations_by_name(session)["set_status"]

    assert annotations["readOnlyHint"] is False
    assert annotations["idempotentHint"] is True
    assert annotations["destructiveHint"] is False


# --- list_issues -----------------------------------------------------------------------------


def test_list_issues_gives_a_page_of_20_keys_and_says_how_to_get_the_next_page() -> None:
    with open_tracker(Tracker.with_issues(45)) as session:
        first = session.call("list_issues")

    assert first["isError"] is False
    assert structured(first) == {
        "keys": [f"PROJ-{i}" for i in range(1, PAGE_SIZE + 1)],
        "page": 1,
        "pages": 3,
        "nextPage": 2,
    }
    assert "page=2" in text(first)


def test_list_issues_last_page_has_no_next_page() -> None:
    with open_tracker(Tracker.with_issues(45)) as session:
        last = session.call("list_issues", page=3)

    assert last["isError"] is False
    assert structured(last) == {
        "keys": ["PROJ-41", "PROJ-42", "PROJ-43", "PROJ-44", "PROJ-45"],
        "page": 3,
        "pages": 3,
        "nextPage": None,
    }
    assert "page=" not in text(last)


def test_following_next_page_visits_every_issue_once() -> None:
    keys: list[str] = []
    with open_tracker(Tracker.with_issues(MAX_ISSUES)) as session:
        page: int | None = 1
        while page is not None:
            result = structured(session.call("list_issues", page=page))
            keys += result["keys"]
            page = result["nextPage"]

    assert keys == [f"PROJ-{i}" for i in range(1, MAX_ISSUES + 1)]


@pytest.mark.parametrize("page", [0, -1])
def test_list_issues_page_below_1_is_a_validation_error(page: int) -> None:
    with open_tracker(Tracker.with_issues(45)) as session:
        result = session.call("list_issues", page=page)

    assert_validation(result, "page")


# --- search_issues ---------------------------------------------------------------------------


def test_search_issues_returns_snippets_not_full_issues() -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        result = session.call("search_issues", query="Fix")

    expected = search_total("fix", 30)
    assert result["isError"] is False
    assert structured(result)["total"] == len(expected)
    assert [s["key"] for s in structured(result)["issues"]] == expected
    for snippet in structured(result)["issues"]:
        assert set(snippet) == {"key", "title", "status", "assignee"}
        assert snippet == make_issue(int(snippet["key"].split("-")[1])).summary()


def test_search_issues_ignores_case() -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        lower = session.call("search_issues", query="webhook retries")
        upper = session.call("search_issues", query="WEBHOOK RETRIES")

    assert structured(lower) == structured(upper)
    assert structured(lower)["total"] > 0


def test_search_issues_pages_through_every_match_with_next_page() -> None:
    expected = search_total("fix", MAX_ISSUES)
    assert len(expected) > 2 * PAGE_SIZE  # the query needs several pages to test anything

    keys: list[str] = []
    with open_tracker(Tracker.with_issues(MAX_ISSUES)) as session:
        page: int | None = 1
        while page is not None:
            result = session.call("search_issues", query="fix", page=page)
            assert len(structured(result)["issues"]) <= PAGE_SIZE
            if structured(result)["nextPage"] is not None:
                assert f"page={page + 1}" in text(result)
            keys += [s["key"] for s in structured(result)["issues"]]
            page = structured(result)["nextPage"]

    assert keys == expected


def test_a_search_that_matches_nothing_is_a_valid_empty_result_not_an_error() -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        result = session.call("search_issues", query="kubernetes")

    assert result["isError"] is False
    assert structured(result)["issues"] == []
    assert structured(result)["total"] == 0
    assert "kubernetes" in text(result)


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_search_query_is_a_validation_error(query: str) -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        result = session.call("search_issues", query=query)

    assert_validation(result, "query")


def test_a_search_without_a_query_is_a_validation_error() -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        result = session.call("search_issues", {})

    assert_validation(result, "query")


@pytest.mark.parametrize("page", [0, -1])
def test_search_issues_page_below_1_is_a_validation_error_like_list_issues(page: int) -> None:
    # list_issues rejects page < 1; search_issues should too, instead of slicing from the end.
    with open_tracker(Tracker.with_issues(MAX_ISSUES)) as session:
        result = session.call("search_issues", query="fix", page=page)

    assert_validation(result, "page")


# --- get_issue -------------------------------------------------------------------------------


def test_get_issue_returns_the_full_issue() -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        result = session.call("get_issue", key="PROJ-12")

    assert result["isError"] is False
    assert structured(result) == {"issue": asdict(make_issue(12))}
    assert make_issue(12).title in text(result)


@pytest.mark.parametrize("key", ["PROJ-31", "PROJ-0", "proj-1", "nonsense"])
def test_get_issue_with_an_unknown_key_is_not_found(key: str) -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        result = session.call("get_issue", key=key)

    assert result["isError"] is True
    assert structured(result)["errorCategory"] == "not_found"
    assert structured(result)["isRetryable"] is False
    assert structured(result)["code"] == "ISSUE_NOT_FOUND"
    assert structured(result)["key"] == key
    assert key in text(result)


# --- create_issue ----------------------------------------------------------------------------


def test_create_issue_adds_an_issue_that_the_catalog_shows_afterwards() -> None:
    tracker = Tracker.with_issues(30)

    with open_tracker(tracker) as session:
        before = catalog_of(session)
        result = session.call("create_issue", title="  Page the on-call on 5xx  ", component="api", priority="urgent")
        after = catalog_of(session)
        by_template = json.loads(session.read("tracker://issues/PROJ-31"))

    assert result["isError"] is False
    created = structured(result)["issue"]
    assert created["key"] == "PROJ-31"
    assert created["title"] == "Page the on-call on 5xx"
    assert (created["status"], created["priority"], created["component"]) == ("todo", "urgent", "api")
    assert tracker.writes == 1
    assert before["count"] == 30
    assert after["count"] == 31
    assert after["issues"][:30] == before["issues"]
    assert after["issues"][30] == {
        "key": "PROJ-31",
        "title": "Page the on-call on 5xx",
        "status": "todo",
        "assignee": created["assignee"],
    }
    assert by_template == created


def test_each_create_issue_call_creates_one_more_issue() -> None:
    tracker = Tracker.with_issues(2)

    with open_tracker(tracker) as session:
        first = session.call("create_issue", title="Same", component="web")
        second = session.call("create_issue", title="Same", component="web")
        catalog = catalog_of(session)

    assert structured(first)["issue"]["key"] == "PROJ-3"
    assert structured(second)["issue"]["key"] == "PROJ-4"
    assert structured(first)["issue"]["priority"] == "medium"
    assert tracker.writes == 2
    assert catalog["count"] == 4


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"title": "x", "component": "mobile"}, "component"),
        ({"title": "x", "component": "api", "priority": "critical"}, "priority"),
        ({"title": "   ", "component": "api"}, "title"),
        ({"title": "x"}, "component"),
    ],
    ids=["unknown-component", "unknown-priority", "blank-title", "missing-component"],
)
def test_create_issue_with_invalid_arguments_is_a_validation_error_that_creates_nothing(
    arguments: dict[str, Any], field: str
) -> None:
    tracker = Tracker.with_issues(30)

    with open_tracker(tracker) as session:
        result = session.call("create_issue", arguments)
        catalog = catalog_of(session)

    assert_validation(result, field)
    assert tracker.writes == 0
    assert catalog["count"] == 30


# --- set_status ------------------------------------------------------------------------------


def test_set_status_twice_with_the_same_status_changes_state_once() -> None:
    tracker = Tracker.with_issues(30)
    assert make_issue(4).status != "done"

    with open_tracker(tracker) as session:
        first = session.call("set_status", key="PROJ-4", status="done")
        second = session.call("set_status", key="PROJ-4", status="done")
        issue = json.loads(session.read("tracker://issues/PROJ-4"))

    assert first == second
    assert first["isError"] is False
    assert structured(first) == {"key": "PROJ-4", "status": "done"}
    assert issue["status"] == "done"
    assert tracker.writes == 1


def test_set_status_to_the_status_an_issue_already_has_changes_nothing() -> None:
    tracker = Tracker.with_issues(30)
    current = make_issue(1).status

    with open_tracker(tracker) as session:
        result = session.call("set_status", key="PROJ-1", status=current)

    assert result["isError"] is False
    assert tracker.writes == 0


def test_set_status_with_an_unknown_status_is_a_validation_error_that_changes_nothing() -> None:
    tracker = Tracker.with_issues(30)

    with open_tracker(tracker) as session:
        result = session.call("set_status", key="PROJ-4", status="closed")
        issue = json.loads(session.read("tracker://issues/PROJ-4"))

    assert_validation(result, "status")
    assert "closed" in text(result)
    assert issue == asdict(make_issue(4))
    assert tracker.writes == 0


def test_set_status_on_an_unknown_issue_is_not_found() -> None:
    tracker = Tracker.with_issues(30)

    with open_tracker(tracker) as session:
        result = session.call("set_status", key="PROJ-99", status="done")

    assert result["isError"] is True
    assert structured(result)["errorCategory"] == "not_found"
    assert tracker.writes == 0


# --- an empty sprint -------------------------------------------------------------------------


def test_an_empty_sprint_has_an_empty_catalog() -> None:
    with open_tracker(Tracker.with_issues(0)) as session:
        catalog = catalog_of(session)

    assert catalog == {"sprint": "current", "count": 0, "issues": []}


def test_list_issues_on_an_empty_sprint_is_a_valid_empty_result_not_an_error() -> None:
    with open_tracker(Tracker.with_issues(0)) as session:
        result = session.call("list_issues")
        search = session.call("search_issues", query="fix")

    assert result["isError"] is False
    assert structured(result)["keys"] == []
    assert text(result).strip()
    assert search["isError"] is False
    assert structured(search)["issues"] == []


# --- response sizes --------------------------------------------------------------------------


def response_size(result: dict[str, Any]) -> int:
    return len(text(result)) + len(json.dumps(structured(result)))


def test_every_list_page_stays_small_even_with_1000_issues() -> None:
    with open_tracker(Tracker.with_issues(MAX_ISSUES)) as session:
        sizes = [
            response_size(session.call("list_issues", page=page)) for page in range(1, MAX_ISSUES // PAGE_SIZE + 1)
        ]

    assert len(sizes) == 50
    assert max(sizes) < 2_000


def test_a_search_page_stays_small_even_with_1000_issues() -> None:
    # A page is at most PAGE_SIZE snippets; the longest snippet bounds it.
    longest_snippet = max(len(json.dumps(issue.summary())) for issue in Tracker.with_issues(MAX_ISSUES).issues)
    bound = PAGE_SIZE * (longest_snippet + 2) + 300

    with open_tracker(Tracker.with_issues(MAX_ISSUES)) as session:
        result = session.call("search_issues", query="#1")  # matches #1, #10..#19, #100..#199, #1000

    assert structured(result)["total"] > PAGE_SIZE
    assert len(structured(result)["issues"]) == PAGE_SIZE
    assert response_size(result) < bound
    assert bound < 2_500


def test_the_catalog_of_1000_issues_is_one_response_bounded_by_its_summaries() -> None:
    tracker = Tracker.with_issues(MAX_ISSUES)
    longest_summary = max(len(to_json(issue.summary())) for issue in tracker.issues)
    # Every summary plus a comma, and the envelope {"sprint":"current","count":1000,"issues":[]}.
    bound = MAX_ISSUES * (longest_summary + 1) + 64

    with open_tracker(tracker) as session:
        raw = session.read(CATALOG)

    catalog = json.loads(raw)
    assert catalog["count"] == MAX_ISSUES
    assert len(catalog["issues"]) == MAX_ISSUES
    assert len(raw) <= bound
    # Summaries only: about 90 characters an issue, far less than the full issues would take.
    assert len(raw) < len(to_json([asdict(issue) for issue in tracker.issues])) / 4
    assert len(raw) < 100_000


# --- the prompt ------------------------------------------------------------------------------


def test_prompts_list_is_exactly_summarize_incident_with_one_required_issue_key() -> None:
    with open_tracker(Tracker.with_issues(5)) as session:
        prompts = session.prompts()

    assert prompts == [
        {
            "name": "summarize_incident",
            "description": "Summarise an incident issue for the team channel.",
            "arguments": [
                {"name": "issue_key", "description": "The incident's issue key, e.g. PROJ-7.", "required": True}
            ],
        }
    ]


def test_the_incident_prompt_names_the_issue_and_its_title_and_points_at_its_resource() -> None:
    with open_tracker(Tracker.with_issues(30)) as session:
        result = session.prompt("summarize_incident", issue_key="PROJ-7")

    [message] = result["messages"]
    prompt_text = message["content"]["text"]
    assert message["role"] == "user"
    assert "PROJ-7" in prompt_text
    assert make_issue(7).title in prompt_text
    assert "tracker://issues/PROJ-7" in prompt_text


def test_the_incident_prompt_is_a_valid_claude_code_slash_command() -> None:
    # Claude Code runs a prompt as /mcp__<server>__<prompt>, replacing characters of the server
    # name outside A-Z a-z 0-9 _ - with _ and using the prompt name as declared
    # (Claude Code docs, MCP › Using MCP prompts as commands). There is no helper for that name
    # in the code, so check that both parts need no replacing and compose it here.
    with open_tracker(Tracker.with_issues(5)) as session:
        server_name = session.client.server_info.name
        [prompt] = session.prompts()

    assert re.fullmatch(r"[A-Za-z0-9_-]+", server_name)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", prompt["name"])
    assert f"/mcp__{server_name}__{prompt['name']}" == "/mcp__tracker__summarize_incident"


# --- caching and change announcements ---------------------------------------------------------


def run_client(tracker: Tracker, body, **server_options: Any) -> Any:
    """Run ``body(client)`` against the tracker in process, with the SDK's client and its response cache."""

    async def main() -> Any:
        with anyio.fail_after(20):
            async with Client(build_server(tracker, **server_options)) as client:
                return await body(client)

    return anyio.run(main)


def test_every_request_that_reaches_the_tracker_is_counted_by_method() -> None:
    tracker = Tracker.with_issues(5)
    with open_tracker(tracker) as session:
        session.read(CATALOG)
        session.read(CATALOG)
        session.call("get_issue", key="PROJ-1")

    assert tracker.requests["resources/read"] == 2
    assert tracker.requests["tools/call"] == 1


def test_without_a_cache_hint_a_client_reads_the_catalog_from_the_server_every_time() -> None:
    tracker = Tracker.with_issues(5)

    async def body(client: Client) -> None:
        for _ in range(3):
            await client.read_resource(CATALOG)

    run_client(tracker, body)
    assert tracker.requests["resources/read"] == 3


def test_with_a_cache_hint_a_repeated_read_is_served_by_the_client_and_a_repeated_tool_call_is_not() -> None:
    tracker = Tracker.with_issues(5)

    async def body(client: Client) -> list[str]:
        texts = []
        for _ in range(3):
            texts.append((await client.read_resource(CATALOG)).contents[0].text)
            await client.call_tool("get_issue", {"key": "PROJ-2"})
        return texts

    texts = run_client(tracker, body, cache_ttl_ms=60_000)
    assert len(set(texts)) == 1
    assert tracker.requests["resources/read"] == 1
    assert tracker.requests["tools/call"] == 3


def test_a_write_announces_the_catalog_and_the_issue_it_changed_and_the_next_read_is_fresh() -> None:
    tracker = Tracker.with_issues(5)
    assert tracker.issue("PROJ-2")["status"] != "done"

    async def body(client: Client) -> tuple[set[str], dict[str, Any]]:
        await client.read_resource(CATALOG)
        async with client.listen(resource_subscriptions=[CATALOG, "tracker://issues/PROJ-2"]) as changes:
            await client.call_tool("set_status", {"key": "PROJ-2", "status": "done"})
            announced = {(await anext(changes)).uri, (await anext(changes)).uri}
        fresh = json.loads((await client.read_resource(CATALOG)).contents[0].text)
        return announced, next(i for i in fresh["issues"] if i["key"] == "PROJ-2")

    announced, entry = run_client(tracker, body, cache_ttl_ms=60_000)
    assert announced == {CATALOG, "tracker://issues/PROJ-2"}
    assert entry["status"] == "done"
    assert tracker.requests["resources/read"] == 2


def test_create_issue_announces_the_new_issue_and_a_call_that_changes_nothing_announces_nothing() -> None:
    tracker = Tracker.with_issues(5)
    status = tracker.issue("PROJ-1")["status"]

    async def body(client: Client) -> list[str]:
        async with client.listen(resource_subscriptions=[CATALOG, "tracker://issues/PROJ-6"]) as changes:
            await client.call_tool("set_status", {"key": "PROJ-1", "status": status})  # already so: no change
            await client.call_tool("create_issue", {"title": "New", "component": "api"})
            return [(await anext(changes)).uri, (await anext(changes)).uri]

    assert sorted(run_client(tracker, body)) == sorted([CATALOG, "tracker://issues/PROJ-6"])
