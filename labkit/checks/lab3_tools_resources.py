"""Lab 3's visible checks: the learner's own server, with each capability published as the right primitive.

Source: *Exam guide › MCP tools vs MCP resources* (tools are model-controlled and may
have side effects; resources are application-controlled, read-only, addressed by URI; a
catalog as a resource spares the agent an N+1 sequence of tool calls). The learner's server
runs in the learner host; the checks talk to it over MCP and verify state from outside the
protocol through the kit store's journal.

These are the checks ``lab.check`` runs in the notebook. Each tries a few fixed cases whose
answers are written out here: the catalog of twelve runbooks and of two, runbooks RB-3 and
RB-10, ids that do not exist, reads of the catalog and three runbooks, acknowledgements and
notes on ALERT-2, and four questions an agent answers from the catalog. The grader adds hidden
checks of the same skills on cases not shown here (``grader.labs``). The helpers below (the
journal, the catalog's size, reads) serve both.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labkit import labstate
from labkit.checking import (
    CheckFailed,
    CheckRegistry,
    describe,
    expect,
    expect_hints,
    logger_level,
    structured,
)
from servers.learner_host.kit_lab3 import CATALOG_URI, RUNBOOK_TEMPLATE

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError

# The MCP SDK is imported where a check runs, not with this module: the grader's recording reads the lab's checks
# (names, points, titles) without it.

LAB = "lab3_tools_resources"
checks = CheckRegistry(LAB)

# The scenario's actions and the hints each must carry (*Common mistakes › 2.3 Tools without a read-only
# mark*: readOnlyHint, destructiveHint, idempotentHint).
ACTIONS = {
    "acknowledge_alert": {"readOnlyHint": False, "idempotentHint": True, "destructiveHint": False},
    "add_note": {"readOnlyHint": False, "idempotentHint": False, "destructiveHint": False},
}
SUMMARY_FIELDS = ("id", "title", "service", "severity")

# The catalog of the store as the lab starts (twelve runbooks), entry by entry.
CATALOG = [
    {"id": "RB-1", "title": "Billing outage playbook 1", "service": "billing", "severity": "sev2"},
    {"id": "RB-2", "title": "Search outage playbook 2", "service": "search", "severity": "sev3"},
    {"id": "RB-3", "title": "Notifications outage playbook 3", "service": "notifications", "severity": "sev1"},
    {"id": "RB-4", "title": "Auth outage playbook 4", "service": "auth", "severity": "sev2"},
    {"id": "RB-5", "title": "Checkout outage playbook 5", "service": "checkout", "severity": "sev3"},
    {"id": "RB-6", "title": "Billing outage playbook 6", "service": "billing", "severity": "sev1"},
    {"id": "RB-7", "title": "Search outage playbook 7", "service": "search", "severity": "sev2"},
    {"id": "RB-8", "title": "Notifications outage playbook 8", "service": "notifications", "severity": "sev3"},
    {"id": "RB-9", "title": "Auth outage playbook 9", "service": "auth", "severity": "sev1"},
    {"id": "RB-10", "title": "Checkout outage playbook 10", "service": "checkout", "severity": "sev2"},
    {"id": "RB-11", "title": "Billing outage playbook 11", "service": "billing", "severity": "sev3"},
    {"id": "RB-12", "title": "Search outage playbook 12", "service": "search", "severity": "sev1"},
]
SMALL_SIZE = 2  # the store shrunk to its first two runbooks: the catalog follows the store
CHECKOUT_STEPS = [
    "Check the checkout dashboard for error spikes.",
    "Roll back the last checkout deploy if it is under an hour old.",
    "Page the service owner if errors persist for 10 minutes.",
]
# Two runbooks read whole through the template (RB-10: an id that RB-1 is a prefix of).
RUNBOOKS = {
    "RB-3": {
        "id": "RB-3",
        "title": "Notifications outage playbook 3",
        "service": "notifications",
        "severity": "sev1",
        "steps": [
            "Check the notifications dashboard for error spikes.",
            "Roll back the last notifications deploy if it is under an hour old.",
            "Page the service owner if errors persist for 10 minutes.",
        ],
    },
    "RB-10": {
        "id": "RB-10",
        "title": "Checkout outage playbook 10",
        "service": "checkout",
        "severity": "sev2",
        "steps": CHECKOUT_STEPS,
    },
}
# Ids no runbook has: before the first, after the last, another case.
UNKNOWN_IDS = ("RB-0", "RB-13", "rb-3")
# What reads_change_nothing reads, each twice.
READ_IDS = ("RB-1", "RB-2", "RB-4")
# The alert the actions are tried on, and an alert id of each tool that does not exist.
ALERT = "ALERT-2"
NO_SUCH_ALERT = {"acknowledge_alert": "ALERT-404", "add_note": "ALERT-9"}

# The team's questions about the catalog of twelve, each as (question, kind, field it looks at, value it looks
# for, field it asks for, the answer): a count of matches, or a field of the first match (None: no runbook matches).
QUESTIONS = (
    ("How many runbooks cover the search service?", "count", "service", "search", None, 3),
    (
        "What is the severity of the runbook titled 'Auth outage playbook 9'?",
        "lookup",
        "title",
        "Auth outage playbook 9",
        "severity",
        "sev1",
    ),
    (
        "What are the steps of the runbook titled 'Checkout outage playbook 5'?",
        "lookup",
        "title",
        "Checkout outage playbook 5",
        "steps",
        CHECKOUT_STEPS,
    ),
    (
        "What is the severity of the runbook titled 'Database outage playbook'?",
        "lookup",
        "title",
        "Database outage playbook",
        "severity",
        None,
    ),
)
BUDGET = 2  # requests per question: read the catalog, then at most one runbook


# --- the state folder, reads and calls (shared with the hidden checks) --------------------------


def journal(host) -> list[dict[str, Any]]:
    """The kit's journal of changes, read without following anything the learner's code put in its place."""
    try:
        text = labstate.read_text(host, "journal.jsonl")
    except labstate.StateFileRefused as exc:
        raise CheckFailed(str(exc)) from None
    try:
        return [json.loads(line) for line in (text or "").splitlines()]
    except ValueError:
        raise CheckFailed(
            "The lab's journal of changes was rewritten by your code; leave the lab's files to the kit."
        ) from None


@contextmanager
def catalog_size(host, size: int) -> Iterator[None]:
    """The kit's store holds runbooks RB-1 to RB-``size`` for the duration."""
    labstate.write_text(host, "control.json", json.dumps({"size": size}))
    try:
        yield
    finally:
        labstate.remove(host, "control.json")


def host_lost(exc: MCPError) -> bool:
    """The learner's server hung or died: not a verdict on this read; run_check restarts the host."""
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    return exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


def read(host, uri: str, what: str) -> str:
    from mcp.shared.exceptions import MCPError

    try:
        return host.read(uri)
    except MCPError as exc:
        if host_lost(exc):
            raise
        raise CheckFailed(f"Reading {what} ({uri}) failed: {exc.message}") from None


def read_json(host, uri: str, what: str) -> Any:
    text = read(host, uri, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise CheckFailed(f"{what} ({uri}) must be JSON; it starts {text[:60]!r}.") from None


def catalog_entries(host) -> list[Any]:
    catalog = read_json(host, CATALOG_URI, "the catalog")
    entries = catalog.get("runbooks") if isinstance(catalog, dict) else None
    expect(isinstance(entries, list), 'The catalog must be a JSON object with a "runbooks" list.')
    return entries


def runbook_uri(runbook_id: str) -> str:
    return RUNBOOK_TEMPLATE.replace("{runbook_id}", runbook_id)


def expect_catalog(entries: list[Any], want: list[dict[str, Any]], when: str = "") -> None:
    """The catalog lists exactly the runbooks of ``want`` (summaries), each once, without its steps."""
    expect(
        len(entries) == len(want), f"The catalog must list all {len(want)} runbooks{when}; yours lists {len(entries)}."
    )
    by_id = {entry.get("id"): entry for entry in entries if isinstance(entry, dict)}
    for summary in want:
        expect(summary["id"] in by_id, f"The catalog{when} has no entry with id {summary['id']!r}.")
        got = {k: by_id[summary["id"]].get(k) for k in SUMMARY_FIELDS}
        expect(
            got == summary,
            f"The catalog entry of {summary['id']} must carry {', '.join(SUMMARY_FIELDS)}: expected {summary}, got {got}.",
        )
        expect(
            "steps" not in by_id[summary["id"]],
            f"The catalog entry of {summary['id']} carries the runbook's steps: keep the catalog small, the steps are read one runbook at a time.",
        )


def expect_runbook(host, runbook_id: str, want: dict[str, Any], when: str = "") -> None:
    """Reading ``runbook_id`` through the template gives ``want``, the whole runbook."""
    uri = runbook_uri(runbook_id)
    got = read_json(host, uri, f"runbook {runbook_id}")
    expect(got == want, f"{uri} must give runbook {runbook_id} whole, steps included{when}; got {got}.")


@contextmanager
def refusals_unlogged() -> Iterator[None]:
    """The SDK's server logs every read it refuses; in the notebook, where the server runs in the kernel, that
    would print a line per unknown id a check reads, before the check's verdict."""
    with logger_level("mcp.server.mcpserver.server", logging.WARNING):
        yield


def expect_no_runbook(host, runbook_id: str, when: str = "") -> None:
    """Reading an id that does not exist is an error (ResourceError), not a runbook, null or an empty object."""
    from mcp.shared.exceptions import MCPError

    uri = runbook_uri(runbook_id)
    try:
        with refusals_unlogged():
            text = host.read(uri)
    except MCPError as exc:
        if host_lost(exc):
            raise
        return
    raise CheckFailed(
        f"There is no runbook {runbook_id!r}{when}, so reading {uri} must fail with a ResourceError; yours answered {text[:80]!r}."
    )


def expect_reads_change_nothing(host, uris: list[tuple[str, str]]) -> None:
    """Each of ``uris`` (uri, what) read twice: the same text both times, and no change recorded."""
    before = journal(host)
    for uri, what in uris:
        first = read(host, uri, what)
        changes = len(journal(host)) - len(before)
        expect(
            changes == 0,
            f"Reading {what} ({uri}) changed state ({changes} change(s) recorded): a resource read must be read-only.",
        )
        second = read(host, uri, what)
        expect(
            first == second, f"Reading {what} ({uri}) twice gave different text: a resource read must be deterministic."
        )
    after = journal(host)
    expect(
        after == before,
        f"Reading resources changed state ({len(after) - len(before)} change(s) recorded): a resource read must be read-only.",
    )


def shown_call(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"


def act(host, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Call one action; it must succeed. Returns the changes it recorded."""
    before = len(journal(host))
    result = host.call(tool, arguments)
    expect(result.get("isError") is not True, f"{shown_call(tool, arguments)} failed: {describe(result)}.")
    return journal(host)[before:]


def expect_changes(changes: list[dict[str, Any]], change: str, alert: str, count: int, what: str) -> None:
    want = [{"change": change, "alert": alert}] * count
    got = [{"change": c.get("change"), "alert": c.get("alert")} for c in changes]
    said = ", ".join(f"{c['change']} on {c['alert']}" for c in got) or "nothing"
    expect(got == want, f"{what} must change state {count} time(s), on {alert}; the changes were: {said}.")


def expect_not_found(host, tool: str, arguments: dict[str, Any]) -> None:
    """A call on an alert that does not exist is a not_found error result, and changes nothing."""
    shown = shown_call(tool, arguments)
    count = len(journal(host))
    result = host.call(tool, arguments)
    category = structured(result).get("errorCategory")
    expect(
        result.get("isError") is True and category == "not_found",
        f"{shown}, an alert that does not exist, must be an error result with errorCategory 'not_found'; got {describe(result)}.",
    )
    expect(len(journal(host)) == count, f"{shown}, an alert that does not exist, must change nothing.")


# --- part B: the runbook capabilities, as resources ----------------------------------------------


@checks.check(
    "catalog_is_a_resource",
    points=2,
    title="the runbook catalog is a resource listing every runbook",
    mistake="publishes the catalog as a tool",
)
def catalog_is_a_resource(host) -> None:
    uris = [r.get("uri") for r in host.resources()]
    expect(CATALOG_URI in uris, f"resources/list must include the catalog {CATALOG_URI}; yours lists {uris}.")
    expect_catalog(catalog_entries(host), CATALOG)
    with catalog_size(host, SMALL_SIZE):
        expect_catalog(catalog_entries(host), CATALOG[:SMALL_SIZE], f" when the store holds {SMALL_SIZE}")


@checks.check(
    "runbook_template",
    points=2,
    title="one runbook is a resource addressed by a URI template",
    mistake="misses the resource template",
)
def runbook_template(host) -> None:
    templates = [t.get("uriTemplate") for t in host.templates()]
    expect(
        RUNBOOK_TEMPLATE in templates,
        f"resources/templates/list must include {RUNBOOK_TEMPLATE}; yours lists {templates}.",
    )
    for runbook_id, want in RUNBOOKS.items():
        expect_runbook(host, runbook_id, want)
    for runbook_id in UNKNOWN_IDS:
        expect_no_runbook(host, runbook_id)
    with catalog_size(host, SMALL_SIZE):
        expect_no_runbook(host, "RB-3", f" when the store holds {SMALL_SIZE}")


@checks.check(
    "reads_change_nothing",
    points=2,
    title="reading resources is deterministic and changes no state",
    mistake="has side effects in resource reads",
)
def reads_change_nothing(host) -> None:
    expect_reads_change_nothing(
        host, [(CATALOG_URI, "the catalog")] + [(runbook_uri(i), f"runbook {i}") for i in READ_IDS]
    )


@checks.check(
    "empty_catalog_is_empty",
    points=2,
    title="an empty catalog is an empty result, not an error",
    mistake="reports empty results as errors",
)
def empty_catalog_is_empty(host) -> None:
    with catalog_size(host, 0):
        entries = catalog_entries(host)
    expect(entries == [], f"With no runbooks the catalog must be an empty list; yours lists {len(entries)} entries.")


# --- part C: the alert capabilities, as tools ----------------------------------------------------


@checks.check(
    "tools_are_the_actions",
    points=2,
    title="exactly the actions that change state are tools",
    mistake="publishes read-only data as tools",
)
def tools_are_the_actions(host) -> None:
    names = {tool["name"] for tool in host.tools()}
    missing = sorted(set(ACTIONS) - names)
    extra = sorted(names - set(ACTIONS))
    expect(
        not missing,
        f"{', '.join(missing)} must be published as tools: they change state, so the model decides when to call them.",
    )
    expect(
        not extra,
        f"{', '.join(extra)} should not be {'a tool' if len(extra) == 1 else 'tools'}: reading the catalog or a runbook "
        "changes nothing and is addressed by a URI, so publish it as a resource.",
    )


@checks.check(
    "actions_are_annotated",
    points=2,
    title="each action carries truthful annotations",
    mistake="annotations that do not match behaviour",
)
def actions_are_annotated(host) -> None:
    tools = {tool["name"]: tool for tool in host.tools()}
    for name, hints in ACTIONS.items():
        expect(name in tools, f"{name} is not a tool.")
        expect_hints(
            tools[name],
            hints,
            lambda hint, value, said, name=name: f"{name} must say {hint}: {str(value).lower()}; yours says {said!r}.",
        )


@checks.check(
    "actions_change_state",
    points=2,
    title="the actions do what they say: acknowledge once, note every time",
    mistake="actions that do not change state",
)
def actions_change_state(host) -> None:
    person = f"oncall-{Path(host.state_dir).name}"  # new for every run, so a re-run in one kernel counts afresh
    changes: list[dict[str, Any]] = []
    for _ in range(2):
        changes += act(host, "acknowledge_alert", {"alert_id": ALERT, "by": person})
    expect_changes(
        changes, "acknowledge", ALERT, 1, f"Acknowledging {ALERT} twice by the same person (it is idempotent)"
    )
    changes = []
    for _ in range(2):
        changes += act(host, "add_note", {"alert_id": ALERT, "text": "rolled back"})
    expect_changes(changes, "note", ALERT, 2, "add_note twice with the same text (it is not idempotent)")
    expect_not_found(host, "acknowledge_alert", {"alert_id": NO_SUCH_ALERT["acknowledge_alert"], "by": "oncall"})
    expect_not_found(host, "add_note", {"alert_id": NO_SUCH_ALERT["add_note"], "text": "rolled back"})


# --- part D: the payoff ----------------------------------------------------------------------------


class CountingReader:
    """The agent's side of the server: every read it sends is counted."""

    def __init__(self, host) -> None:
        self.host = host
        self.requests = 0

    def read_json(self, uri: str, what: str) -> Any:
        self.requests += 1
        return read_json(self.host, uri, what)

    def catalog(self) -> list[Any]:
        self.requests += 1
        return catalog_entries(self.host)

    def runbook(self, runbook_id: Any) -> dict[str, Any]:
        found = self.read_json(runbook_uri(str(runbook_id)), f"runbook {runbook_id}")
        expect(isinstance(found, dict), f"{runbook_uri(str(runbook_id))} must be a JSON object.")
        return found


def agent_answer(reader: CountingReader, kind: str, where: str, value: Any, wanted: str | None) -> Any:
    """Answer one question as an agent does: read the catalog first, fetch a runbook only for a field the catalog
    lacks; when the catalog cannot narrow the search, read runbooks one by one."""
    entries = reader.catalog()
    if all(isinstance(e, dict) and where in e for e in entries):
        matches = [e for e in entries if e[where] == value]
        if kind == "count":
            return len(matches)
        if not matches:
            return None
        if wanted in matches[0]:
            return matches[0][wanted]
        return reader.runbook(matches[0].get("id")).get(wanted)
    gathered = []
    for entry in entries:
        runbook = reader.runbook(entry.get("id") if isinstance(entry, dict) else entry)
        gathered.append(runbook)
        if kind == "lookup" and runbook.get(where) == value:
            return runbook.get(wanted)
    return sum(1 for r in gathered if r.get(where) == value) if kind == "count" else None


@checks.check(
    "catalog_answers_within_budget",
    points=3,
    title="an agent answers the team's questions from the catalog within the budget",
    mistake="makes the agent explore with tool calls",
)
def catalog_answers_within_budget(host) -> None:
    for question, kind, where, value, wanted, answer in QUESTIONS:
        reader = CountingReader(host)
        try:
            got = agent_answer(reader, kind, where, value, wanted)
        except CheckFailed as exc:
            raise CheckFailed(f"The agent could not work with your server: {exc}") from None
        expect(
            got == answer, f"Asked {question!r}, the agent answered {got!r} from your server; the answer is {answer!r}."
        )
        expect(
            reader.requests <= BUDGET,
            f"Asked {question!r}, the agent needed {reader.requests} requests; the budget is {BUDGET} "
            "(read the catalog, then at most one runbook).",
        )
