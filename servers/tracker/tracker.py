"""The tracker's data and rules as plain functions: deterministic issues of a sprint of any size.

Tools are model-controlled and may change state; resources are application-controlled,
read-only and addressed by URI (*Exam guide › MCP tools vs MCP resources*). This module holds
both kinds of capability as plain methods; the server module decides which is published as
which. Responses stay small (*Common mistakes › 4.5 A whole article in the answer eats the
client's context*): lists are pages of keys, searches return snippets, and every page says how
to get the next one.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from grader.taxonomy import (
    empty_result,
    not_found_error,
    success_result,
    validation_error,
)

STATUSES = ("todo", "in_progress", "in_review", "done")
PRIORITIES = ("low", "medium", "high", "urgent")
COMPONENTS = ("api", "web", "billing", "auth", "search")
ASSIGNEES = ("ana", "bram", "chen", "dara", "eli", "fay")
VERBS = ("Fix", "Add", "Refactor", "Document", "Speed up", "Remove", "Test", "Migrate")
OBJECTS = (
    "login form",
    "invoice export",
    "search index",
    "rate limiter",
    "user settings",
    "audit log",
    "webhook retries",
)
PAGE_SIZE = 20
MAX_ISSUES = 1000
CATALOG_URI = "tracker://sprints/current/issues"
SCHEMA_URI = "tracker://schema"
ISSUE_TEMPLATE = "tracker://issues/{key}"


@dataclass
class Issue:
    key: str
    title: str
    status: str
    priority: str
    assignee: str
    component: str
    description: str

    def summary(self) -> dict[str, str]:
        return {"key": self.key, "title": self.title, "status": self.status, "assignee": self.assignee}


def make_issue(i: int) -> Issue:
    """Issue number ``i`` (from 1) of every sprint: the same for every run and every size."""
    title = f"{VERBS[i % len(VERBS)]} {OBJECTS[(i * 3) % len(OBJECTS)]} #{i}"
    component = COMPONENTS[(i * 7) % len(COMPONENTS)]
    description = (
        f"{title}. Reported by the {component} team. Steps to reproduce: open the {component} area, "
        f"repeat the action {i % 5 + 2} times, watch the error log. Expected: no error. Actual: a warning "
        "appears and the request is retried. Notes: linked to the quarterly reliability goal; keep the fix small, "
        "add a regression test, and update the runbook when done."
    )
    return Issue(
        key=f"PROJ-{i}",
        title=title,
        status=STATUSES[(i * 5) % len(STATUSES)],
        priority=PRIORITIES[(i * 11) % len(PRIORITIES)],
        assignee=ASSIGNEES[(i * 13) % len(ASSIGNEES)],
        component=component,
        description=description,
    )


@dataclass
class Tracker:
    """One tracker: the current sprint's issues, and the changes made through its tools."""

    issues: list[Issue] = field(default_factory=list)
    writes: int = 0  # how many times a tool changed state
    requests: Counter[str] = field(default_factory=Counter)  # requests that reached the server, by MCP method

    @classmethod
    def with_issues(cls, n: int) -> Tracker:
        if not 0 <= n <= MAX_ISSUES:
            raise ValueError(f"a sprint holds 0 to {MAX_ISSUES} issues, not {n}")
        return cls([make_issue(i) for i in range(1, n + 1)])

    def _find(self, key: str) -> Issue | None:
        return next((issue for issue in self.issues if issue.key == key), None)

    # --- reads (published as resources, and as read-only tools) ---------------------------

    def catalog(self) -> dict[str, Any]:
        """The current sprint at a glance: key, title, status and assignee of every issue."""
        return {"sprint": "current", "count": len(self.issues), "issues": [i.summary() for i in self.issues]}

    def issue(self, key: str) -> dict[str, Any] | None:
        found = self._find(key)
        return asdict(found) if found else None

    @staticmethod
    def schema() -> dict[str, Any]:
        """The tracker's fields and their allowed values (the exam guide's ``db://schema`` idea)."""
        return {
            "fields": {
                "key": "string, PROJ-<n>",
                "title": "string",
                "status": list(STATUSES),
                "priority": list(PRIORITIES),
                "assignee": list(ASSIGNEES),
                "component": list(COMPONENTS),
                "description": "string",
            }
        }

    # --- tools ------------------------------------------------------------------------------

    def list_issues(self, page: int = 1) -> dict[str, Any]:
        """One page of issue keys; the details need get_issue, one call per issue."""
        if page < 1:
            return validation_error(f"page must be 1 or more, got {page}.", field="page", reason="must be >= 1")
        pages = max(1, -(-len(self.issues) // PAGE_SIZE))
        keys = [i.key for i in self.issues[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]]
        if not keys:
            return empty_result(
                f"No issues on page {page} (the sprint has {len(self.issues)}).",
                key="keys",
                page=page,
                pages=pages,
                nextPage=None,
            )
        more = f" Call again with page={page + 1} for more." if page < pages else ""
        return success_result(
            f"Issues {keys[0]}..{keys[-1]} (page {page} of {pages}).{more}",
            {"keys": keys, "page": page, "pages": pages, "nextPage": page + 1 if page < pages else None},
        )

    def search_issues(self, query: str, page: int = 1) -> dict[str, Any]:
        """Snippets (key, title, status) of issues whose title contains ``query``, a page at a time."""
        if not query.strip():
            return validation_error(
                "The query is empty; give a word from the title.", field="query", reason="must not be empty"
            )
        if page < 1:
            return validation_error(f"page must be 1 or more, got {page}.", field="page", reason="must be >= 1")
        found = [i.summary() for i in self.issues if query.lower() in i.title.lower()]
        if not found:
            return empty_result(
                f"No issue title contains {query!r}. This is a valid answer, not a failure.", key="issues", total=0
            )
        pages = -(-len(found) // PAGE_SIZE)
        if page > pages:
            return empty_result(
                f"Page {page} is past the last page ({pages}) of matches for {query!r}.", key="issues", total=len(found)
            )
        chunk = found[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        more = f" Call again with page={page + 1} for more." if page < pages else ""
        return success_result(
            f"{len(found)} issue(s) match {query!r}; page {page} of {pages}.{more}",
            {"issues": chunk, "total": len(found), "page": page, "nextPage": page + 1 if page < pages else None},
        )

    def get_issue(self, key: str) -> dict[str, Any]:
        found = self.issue(key)
        if found is None:
            return not_found_error(f"There is no issue {key} in this tracker.", code="ISSUE_NOT_FOUND", key=key)
        return success_result(f"{key}: {found['title']} ({found['status']}).", {"issue": found})

    def create_issue(self, title: str, component: str, priority: str = "medium") -> dict[str, Any]:
        if not title.strip():
            return validation_error("An issue needs a title.", field="title", reason="must not be empty")
        if component not in COMPONENTS:
            return validation_error(
                f"Unknown component {component!r}; use one of {', '.join(COMPONENTS)}.",
                field="component",
                reason="unknown component",
            )
        if priority not in PRIORITIES:
            return validation_error(
                f"Unknown priority {priority!r}; use one of {', '.join(PRIORITIES)}.",
                field="priority",
                reason="unknown priority",
            )
        issue = Issue(f"PROJ-{len(self.issues) + 1}", title.strip(), "todo", priority, "unassigned", component, "")
        self.issues.append(issue)
        self.writes += 1
        return success_result(f"Created {issue.key}: {issue.title}.", {"issue": asdict(issue)})

    def set_status(self, key: str, status: str) -> dict[str, Any]:
        if status not in STATUSES:
            return validation_error(
                f"Unknown status {status!r}; use one of {', '.join(STATUSES)}.", field="status", reason="unknown status"
            )
        found = self._find(key)
        if found is None:
            return not_found_error(f"There is no issue {key}; nothing changed.", code="ISSUE_NOT_FOUND", key=key)
        if found.status != status:
            found.status = status
            self.writes += 1
        return success_result(f"{key} is now {status}.", {"key": key, "status": status})

    def incident_prompt(self, key: str) -> str:
        found = self._find(key)
        title = found.title if found else "(unknown issue)"
        return (
            f"Summarise the incident {key} ({title}) for the team channel: what happened, who is affected, "
            f"and the next step. Read the issue from the resource tracker://issues/{key} first; "
            "do not change its status."
        )


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
