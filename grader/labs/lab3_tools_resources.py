"""Lab 3's checks: the learner's own server, with each capability published as the right primitive.

Source: the exam guide, MCP integration section, "MCP tools vs MCP resources" (tools are model-controlled and may
have side effects; resources are application-controlled, read-only, addressed by URI; a
catalog as a resource spares the agent an N+1 sequence of tool calls). The learner's server
runs in the learner host; the checks talk to it over MCP and verify state from outside the
protocol through the kit store's journal.

Each check tries more than the one case it names: the catalog at other sizes (one runbook,
more than a page of them), runbooks by other ids and ids that do not exist, every runbook
read twice, acknowledgements by other people and notes on other alerts, and alerts that do
not exist. Each keeps to inputs of its own (RB-3 is runbook_template's), so a server that
breaks on one input costs the check that stands for it.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from labkit import labstate
from labkit.checking import CheckFailed, CheckRegistry, describe, expect, expect_hints, structured
from servers.learner_host.kit_lab3 import ALERTS, CATALOG_URI, DEFAULT_SIZE, RUNBOOK_TEMPLATE, make_runbook

LAB = "lab3_tools_resources"
checks = CheckRegistry(LAB)

# The scenario's actions and the hints each must carry (the field report on MCP server pitfalls,
# section 2.3: readOnlyHint, destructiveHint, idempotentHint).
ACTIONS = {
    "acknowledge_alert": {"readOnlyHint": False, "idempotentHint": True, "destructiveHint": False},
    "add_note": {"readOnlyHint": False, "idempotentHint": False, "destructiveHint": False},
}
SUMMARY_FIELDS = ("id", "title", "service", "severity")
# Catalog sizes besides the default: one runbook, and more than a page of them (a catalog that
# stops at a fixed count, or at the first page of the store, lists too few).
OTHER_SIZES = (1, 23, 41)
# runbook_template reads these ids and these that do not exist; reads_change_nothing reads every
# other runbook. An unknown id is an error, at every size.
TEMPLATE_IDS = ("RB-3", "RB-1", "RB-10")
UNKNOWN_IDS = ("RB-0", "RB-13", "RB-999", "rb-2", "3")


def journal(host) -> list[dict[str, Any]]:
    """The kit's journal of changes, read without following anything the learner's code put in its place."""
    try:
        text = labstate.read_text(host, "journal.jsonl")
    except labstate.StateFileRefused as exc:
        raise CheckFailed(str(exc)) from None
    try:
        return [json.loads(line) for line in (text or "").splitlines()]
    except ValueError:
        raise CheckFailed("The lab's journal of changes was rewritten by your code; leave the lab's files to the kit.") from None


@contextmanager
def catalog_size(host, size: int):
    labstate.write_text(host, "control.json", json.dumps({"size": size}))
    try:
        yield
    finally:
        labstate.remove(host, "control.json")


def host_lost(exc: MCPError) -> bool:
    """The learner's server hung or died: not a verdict on this read; run_check restarts the host."""
    return exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


def read(host, uri: str, what: str) -> str:
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


def catalog_entries(host) -> list[dict[str, Any]]:
    catalog = read_json(host, CATALOG_URI, "the catalog")
    entries = catalog.get("runbooks") if isinstance(catalog, dict) else None
    expect(isinstance(entries, list), 'The catalog must be a JSON object with a "runbooks" list.')
    return entries


@checks.check("tools_are_the_actions", points=2, title="exactly the actions that change state are tools", mistake="publishes read-only data as tools")
def tools_are_the_actions(host) -> None:
    names = {tool["name"] for tool in host.tools()}
    missing = sorted(set(ACTIONS) - names)
    extra = sorted(names - set(ACTIONS))
    expect(not missing, f"{', '.join(missing)} must be published as tools: they change state, so the model decides when to call them.")
    expect(
        not extra,
        f"{', '.join(extra)} should not be {'a tool' if len(extra) == 1 else 'tools'}: reading the catalog or a runbook "
        "changes nothing and is addressed by a URI, so publish it as a resource.",
    )


def runbook_uri(runbook_id: str) -> str:
    return RUNBOOK_TEMPLATE.replace("{runbook_id}", runbook_id)


def expect_whole_catalog(entries: list[Any], size: int, when: str = "") -> None:
    """Every runbook of a store of ``size`` once, each with its summary fields and without its steps."""
    expect(len(entries) == size, f"The catalog must list all {size} runbooks{when}; yours lists {len(entries)}.")
    by_id = {entry.get("id"): entry for entry in entries if isinstance(entry, dict)}
    for i in range(1, size + 1):
        want = {k: make_runbook(i)[k] for k in SUMMARY_FIELDS}
        expect(want["id"] in by_id, f"The catalog{when} has no entry with id {want['id']!r}.")
        got = {k: by_id[want["id"]].get(k) for k in SUMMARY_FIELDS}
        expect(got == want, f"The catalog entry of {want['id']} must carry {', '.join(SUMMARY_FIELDS)}: expected {want}, got {got}.")
        expect(
            "steps" not in by_id[want["id"]],
            f"The catalog entry of {want['id']} carries the runbook's steps: keep the catalog small, the steps are read one runbook at a time.",
        )


@checks.check("catalog_is_a_resource", points=2, title="the runbook catalog is a resource listing every runbook", mistake="publishes the catalog as a tool")
def catalog_is_a_resource(host) -> None:
    uris = [r.get("uri") for r in host.resources()]
    expect(CATALOG_URI in uris, f"resources/list must include the catalog {CATALOG_URI}; yours lists {uris}.")
    expect_whole_catalog(catalog_entries(host), DEFAULT_SIZE)
    for size in OTHER_SIZES:
        with catalog_size(host, size):
            expect_whole_catalog(catalog_entries(host), size, f" when the store holds {size}")


def expect_no_runbook(host, runbook_id: str, when: str = "") -> None:
    """Reading an id that does not exist is an error (ResourceError), not a runbook, null or an empty object."""
    uri = runbook_uri(runbook_id)
    try:
        text = host.read(uri)
    except MCPError as exc:
        if host_lost(exc):
            raise
        return
    raise CheckFailed(f"There is no runbook {runbook_id!r}{when}, so reading {uri} must fail with a ResourceError; yours answered {text[:80]!r}.")


@checks.check("runbook_template", points=2, title="one runbook is a resource addressed by a URI template", mistake="misses the resource template")
def runbook_template(host) -> None:
    templates = [t.get("uriTemplate") for t in host.templates()]
    expect(RUNBOOK_TEMPLATE in templates, f"resources/templates/list must include {RUNBOOK_TEMPLATE}; yours lists {templates}.")
    got = read_json(host, "runbooks://runbooks/RB-3", "runbook RB-3")
    expect(got == make_runbook(3), f"runbooks://runbooks/RB-3 must give the whole runbook, steps included; got {got}.")
    for runbook_id in TEMPLATE_IDS[1:]:
        got = read_json(host, runbook_uri(runbook_id), f"runbook {runbook_id}")
        want = make_runbook(int(runbook_id[3:]))
        expect(got == want, f"{runbook_uri(runbook_id)} must give runbook {runbook_id} whole, steps included; got {got}.")
    for runbook_id in UNKNOWN_IDS:
        expect_no_runbook(host, runbook_id)
    with catalog_size(host, 23):
        got = read_json(host, runbook_uri("RB-20"), "runbook RB-20")
        expect(got == make_runbook(20), f"When the store holds 23 runbooks, {runbook_uri('RB-20')} must give runbook RB-20; got {got}.")
        expect_no_runbook(host, "RB-24", " when the store holds 23")


@checks.check("reads_change_nothing", points=2, title="reading resources is deterministic and changes no state", mistake="has side effects in resource reads")
def reads_change_nothing(host) -> None:
    # The catalog and every runbook but runbook_template's own, each read twice: a read may change
    # state or answer differently for some ids only.
    ids = [f"RB-{i}" for i in range(1, DEFAULT_SIZE + 1) if f"RB-{i}" not in TEMPLATE_IDS[:1]]
    uris = [(CATALOG_URI, "the catalog")] + [(runbook_uri(i), f"runbook {i}") for i in ids]
    before = journal(host)
    for uri, what in uris:
        first = read(host, uri, what)
        changes = len(journal(host)) - len(before)
        expect(changes == 0, f"Reading {what} ({uri}) changed state ({changes} change(s) recorded): a resource read must be read-only.")
        second = read(host, uri, what)
        expect(first == second, f"Reading {what} ({uri}) twice gave different text: a resource read must be deterministic.")
    after = journal(host)
    expect(after == before, f"Reading resources changed state ({len(after) - len(before)} change(s) recorded): a resource read must be read-only.")


@checks.check("actions_are_annotated", points=2, title="each action carries truthful annotations", mistake="annotations that do not match behaviour")
def actions_are_annotated(host) -> None:
    tools = {tool["name"]: tool for tool in host.tools()}
    for name, hints in ACTIONS.items():
        expect(name in tools, f"{name} is not a tool.")
        expect_hints(
            tools[name],
            hints,
            lambda hint, value, said: f"{name} must say {hint}: {str(value).lower()}; yours says {said!r}.",
        )


def act(host, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Call one action; it must succeed. Returns the changes it recorded."""
    before = len(journal(host))
    result = host.call(tool, arguments)
    shown = f"{tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
    expect(result.get("isError") is not True, f"{shown} failed: {describe(result)}.")
    return journal(host)[before:]


def expect_changes(changes: list[dict[str, Any]], change: str, alert: str, count: int, what: str) -> None:
    want = [{"change": change, "alert": alert}] * count
    got = [{"change": c.get("change"), "alert": c.get("alert")} for c in changes]
    said = ", ".join(f"{c['change']} on {c['alert']}" for c in got) or "nothing"
    expect(got == want, f"{what} must change state {count} time(s), on {alert}; the changes were: {said}.")


@checks.check("actions_change_state", points=2, title="the actions do what they say: acknowledge once, note every time", mistake="actions that do not change state")
def actions_change_state(host) -> None:
    before = len(journal(host))
    person = f"oncall-{Path(host.state_dir).name}"  # new for every run, so a re-run in one kernel counts afresh
    for _ in range(2):
        result = host.call("acknowledge_alert", alert_id="ALERT-2", by=person)
        expect(result.get("isError") is not True, f"acknowledge_alert(ALERT-2) failed: {describe(result)}.")
    acks = len(journal(host)) - before
    expect(acks == 1, f"Acknowledging ALERT-2 twice by the same person must change state once (it is idempotent); it changed {acks} time(s).")
    for text in ("rolled back", "rolled back"):
        result = host.call("add_note", alert_id="ALERT-2", text=text)
        expect(result.get("isError") is not True, f"add_note(ALERT-2) failed: {describe(result)}.")
    notes = len(journal(host)) - before - acks
    expect(notes == 2, f"add_note twice must add two notes (it is not idempotent); it added {notes}.")
    # The same on other alerts, by other people: each call acts on the alert and the person it is given.
    others = [a for a in ALERTS if a != "ALERT-2"]
    for n, alert in enumerate(others[:2]):
        expect_changes(act(host, "acknowledge_alert", {"alert_id": alert, "by": person}), "acknowledge", alert, 1, f"Acknowledging {alert}")
        relief = f"{person}-relief"
        expect_changes(act(host, "acknowledge_alert", {"alert_id": alert, "by": relief}), "acknowledge", alert, 1, f"Acknowledging {alert} again, by another person,")
        expect_changes(act(host, "add_note", {"alert_id": alert, "text": f"note {n}"}), "note", alert, 1, f"add_note on {alert}")
    # An alert that does not exist: a not_found error result, and nothing changes.
    for tool, arguments in (("acknowledge_alert", {"alert_id": "ALERT-404", "by": "oncall"}), ("add_note", {"alert_id": "ALERT-9", "text": "x"})):
        shown = f"{tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
        count = len(journal(host))
        result = host.call(tool, arguments)
        category = structured(result).get("errorCategory")
        expect(
            result.get("isError") is True and category == "not_found",
            f"{shown}, an alert that does not exist, must be an error result with errorCategory 'not_found'; got {describe(result)}.",
        )
        expect(len(journal(host)) == count, f"{shown}, an alert that does not exist, must change nothing.")


@checks.check("empty_catalog_is_empty", points=2, title="an empty catalog is an empty result, not an error", mistake="reports empty results as errors")
def empty_catalog_is_empty(host) -> None:
    with catalog_size(host, 0):
        entries = catalog_entries(host)
    expect(entries == [], f"With no runbooks the catalog must be an empty list; yours lists {len(entries)} entries.")


@checks.check("catalog_answers_within_budget", points=3, title="an agent answers the team's questions from the catalog within the budget", mistake="makes the agent explore with tool calls")
def catalog_answers_within_budget(host) -> None:
    from grader.simulator import Scenario, SimulatorError, questions_for, run

    scenario = Scenario(
        name="runbooks",
        catalog_uri=CATALOG_URI,
        items_key="runbooks",
        id_field="id",
        title_field="title",
        count_field="service",
        lookup_field="severity",
        detail_field="steps",
        item_template=RUNBOOK_TEMPLATE,
        item_noun="runbook",
    )
    items = [make_runbook(i) for i in range(1, DEFAULT_SIZE + 1)]
    questions = questions_for(scenario, items)
    texts = {q.id: q.text for q in questions}
    try:
        outcomes = run(host, scenario, "catalog_first", questions)
    except (SimulatorError, MCPError) as exc:
        if isinstance(exc, MCPError) and host_lost(exc):
            raise
        raise CheckFailed(f"The agent could not work with your server: {exc}") from None
    for outcome in outcomes:
        asked = texts[outcome.question_id]
        expect(outcome.correct, f"Asked {asked!r}, the agent answered {outcome.answer!r} from your server, which is wrong.")
        expect(
            outcome.tally.round_trips <= 2,
            f"Asked {asked!r}, the agent needed {outcome.tally.round_trips} requests; the budget is 2 "
            "(read the catalog, then at most one runbook).",
        )
