"""MCP wiring for the tracker: which capability is a tool, which a resource, which a prompt.

- Resources (application-controlled, read-only, addressed by URI): the current sprint's
  catalog, one issue by URI template, the schema.
- Tools (model-controlled): search and page through issues, get one, and the two that
  change state (create an issue; set a status, idempotent), with truthful annotations.
- Prompt (user-invoked): summarise an incident, ``/mcp__tracker__summarize_incident PROJ-7``.

Resources cache well because they are addressed by URI and change nothing: with ``cache_ttl_ms``
the tracker tells a client how long a read stays fresh (the ``ttlMs`` hint of protocol revision
2026-07-28), and whenever a tool changes an issue it announces which resources changed
(``subscriptions/listen``), so a client's cache keyed by URI drops exactly those. Every request
that reaches the tracker is counted in ``tracker.requests``, by method: what a cache saves shows there.

``TRACKER_ISSUES`` (0 to 1000, default 25) sets the sprint's size; 0 is an empty sprint.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import anyio.from_thread
import mcp_types as types
from mcp.server.caching import CacheHint, validate_cache_hints
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourceUpdated,
)
from pydantic import BaseModel, Field

from servers.toolkit import PromptSpec, ResourceSpec, TemplateSpec, ToolSpec, run_stdio
from servers.toolkit import build_server as build_mcp_server
from servers.tracker.tracker import (
    CATALOG_URI,
    ISSUE_TEMPLATE,
    MAX_ISSUES,
    SCHEMA_URI,
    Tracker,
    to_json,
)


class ListIssues(BaseModel):
    page: int = Field(1, description="Which page of keys, from 1.")


class SearchIssues(BaseModel):
    query: str = Field(description="A word or phrase from the issue title.")
    page: int = Field(1, description="Which page of matches, from 1.")


class GetIssue(BaseModel):
    key: str = Field(description="The issue key, e.g. PROJ-7.")


class CreateIssue(BaseModel):
    title: str = Field(description="One-line title.")
    component: str = Field(description="api, web, billing, auth or search.")
    priority: str = Field("medium", description="low, medium, high or urgent.")


class SetStatus(BaseModel):
    key: str = Field(description="The issue key, e.g. PROJ-7.")
    status: str = Field(description="todo, in_progress, in_review or done.")


READS = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
CREATES = types.ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
UPDATES = types.ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def tracker_from_env() -> Tracker:
    raw = os.environ.get("TRACKER_ISSUES", "25")
    try:
        return Tracker.with_issues(int(raw))
    except ValueError:
        raise SystemExit(f"TRACKER_ISSUES={raw!r}: give a whole number of issues from 0 to {MAX_ISSUES}.") from None


class CountRequests:
    """Server middleware: count every request that reaches the tracker, by method."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if getattr(ctx, "request_id", None) is not None:
            self.tracker.requests[ctx.method] += 1
        return await call_next(ctx)


def build_server(tracker: Tracker | None = None, *, cache_ttl_ms: int = 0):
    """The tracker's MCP server; ``cache_ttl_ms`` > 0 lets clients keep a resource read that long."""
    tracker = tracker or tracker_from_env()
    bus = InMemorySubscriptionBus()

    def announcing(handler: Callable[[Any], dict[str, Any]], key_of: Callable[[Any, dict[str, Any]], str]):
        # Tool handlers run in a worker thread; the announcement goes out on the server's event loop.
        def run(arguments: Any) -> dict[str, Any]:
            before = tracker.writes
            result = handler(arguments)
            if tracker.writes != before:
                for uri in (CATALOG_URI, ISSUE_TEMPLATE.format(key=key_of(arguments, result))):
                    anyio.from_thread.run(bus.publish, ResourceUpdated(uri=uri))
            return result

        return run

    def created_key(arguments: Any, result: dict[str, Any]) -> str:
        return result["structuredContent"]["issue"]["key"]

    tools = [
        ToolSpec(
            "list_issues",
            "List one page (20) of the current sprint's issue keys, without details. Use it when you must walk every issue key in order; for a whole-sprint overview read the resource tracker://sprints/current/issues instead. Returns keys and nextPage: call again with page=nextPage until it is null, then get_issue for each key you need.",
            ListIssues,
            lambda a: tracker.list_issues(a.page),
            READS,
        ),
        ToolSpec(
            "search_issues",
            "Find tracker issues whose title contains a word. Call it when the user names an issue by its title rather than its key. Returns snippets (key, title, status), 20 per page, with nextPage when there are more; an empty list means no title matches, a valid answer.",
            SearchIssues,
            lambda a: tracker.search_issues(a.query, a.page),
            READS,
        ),
        ToolSpec(
            "get_issue",
            "Get one tracker issue in full (status, priority, assignee, component, description) by key. Call it when you need an issue's details beyond the catalog. Returns the issue; an unknown key is a not_found result: tell the user the issue does not exist.",
            GetIssue,
            lambda a: tracker.get_issue(a.key),
            READS,
        ),
        ToolSpec(
            "create_issue",
            "Create a new tracker issue in the current sprint. Call it only when the user asks for a new issue; each call creates one more. Returns the new issue with its key: give the key to the user.",
            CreateIssue,
            announcing(lambda a: tracker.create_issue(a.title, a.component, a.priority), created_key),
            CREATES,
        ),
        ToolSpec(
            "set_status",
            "Set a tracker issue's status (todo, in_progress, in_review, done). Call it when the user asks to move an issue. Safe to repeat: setting the same status twice changes nothing. Returns the key and its new status.",
            SetStatus,
            announcing(lambda a: tracker.set_status(a.key, a.status), lambda a, _: a.key),
            UPDATES,
        ),
    ]
    resources = [
        ResourceSpec(
            CATALOG_URI,
            "current-sprint",
            "Every issue of the current sprint: key, title, status, assignee.",
            lambda: to_json(tracker.catalog()),
        ),
        ResourceSpec(
            SCHEMA_URI, "schema", "The tracker's fields and their allowed values.", lambda: to_json(tracker.schema())
        ),
    ]
    templates = [
        TemplateSpec(
            ISSUE_TEMPLATE,
            "issue",
            "One issue in full, by key.",
            lambda v: to_json(i) if (i := tracker.issue(v["key"])) else None,
        ),
    ]
    prompts = [
        PromptSpec(
            "summarize_incident",
            "Summarise an incident issue for the team channel.",
            (("issue_key", "The incident's issue key, e.g. PROJ-7.", True),),
            lambda args: tracker.incident_prompt(args["issue_key"]),
        )
    ]
    server = build_mcp_server(
        "tracker",
        tools,
        resources=resources,
        templates=templates,
        prompts=prompts,
        instructions="A ticket tracker. The current sprint's catalog is the resource tracker://sprints/current/issues.",
    )
    server.middleware.append(CountRequests(tracker))
    server.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, ListenHandler(bus))
    if cache_ttl_ms:
        server.cache_hints = validate_cache_hints({"resources/read": CacheHint(ttl_ms=cache_ttl_ms)})
    return server


def main() -> None:
    run_stdio(build_server())
