"""Lab 3's checks as the grader runs them: the visible ones (``labkit.checks``) and the hidden ones, defined here.

Source: *Exam guide › MCP tools vs MCP resources*. The hidden checks test the
skills of the visible ones on cases the lab does not show, with the expected answers taken from the kit's
own data (``make_runbook``, ``ALERTS``) and, for the agent, from the course's simulator: the catalog at
other sizes (one runbook, more than twenty, going up and down), runbooks by other ids and ids that only
look like one, every other runbook read (and read again after others), actions on the other alerts by
several people, alert ids that do not exist, and the agent's questions about catalogs of other sizes.
Their inputs are kept apart from the visible checks' (which read RB-3 and RB-10, the catalog of twelve
and of two, and act on ALERT-2), so a server that special-cases what the notebook shows still fails here.
"""

from __future__ import annotations

from pathlib import Path

from grader.simulator import Scenario, SimulatorError, questions_for, run
from labkit.checking import CheckFailed, CheckRegistry, expect
from labkit.checks import lab3_tools_resources as visible
from labkit.checks.lab3_tools_resources import (
    LAB,
    READ_IDS,
    SUMMARY_FIELDS,
    act,
    catalog_entries,
    catalog_size,
    expect_catalog,
    expect_changes,
    expect_no_runbook,
    expect_not_found,
    expect_reads_change_nothing,
    expect_runbook,
    host_lost,
    read,
    runbook_uri,
)
from servers.learner_host.kit_lab3 import (
    CATALOG_URI,
    DEFAULT_SIZE,
    RUNBOOK_TEMPLATE,
    make_runbook,
)

hidden = CheckRegistry(LAB)

# Catalog sizes the notebook does not show, in an order that goes up and down: one runbook, more than
# twenty (a fixed cap), more than forty, and one between.
HIDDEN_SIZES = (23, 1, 41, 7)
# Runbooks read whole at the default size (runbooks_by_unseen_ids also reads some beyond the twelfth at larger sizes).
HIDDEN_IDS = ("RB-1", "RB-7", "RB-12")
# Ids no runbook has that look like one: a leading zero, too large, the bare number, the prefix alone, a tail.
HIDDEN_UNKNOWN_IDS = ("RB-03", "RB-999", "7", "RB-", "RB-12a", "Rb-1")
# The other alerts, each acknowledged by several people; the alerts that take notes; alert ids that do not exist.
ACK_ALERTS = ("ALERT-4", "ALERT-1")
NOTE_ALERTS = ("ALERT-3", "ALERT-5")
HIDDEN_NO_SUCH_ALERTS = {
    "acknowledge_alert": ("ALERT-0", "ALERT-6", "alert-1"),
    "add_note": ("ALERT-10", "ALERT-01", "ALERT"),
}
# Catalog sizes the agent answers questions about.
BUDGET_SIZES = (4, 23, 41)


def summaries(size: int) -> list[dict]:
    return [{k: make_runbook(i)[k] for k in SUMMARY_FIELDS} for i in range(1, size + 1)]


@hidden.check(
    "catalog_at_unseen_sizes",
    points=2,
    title="the catalog lists every runbook, and only its summary, whatever the store holds",
    mistake="a catalog capped at a fixed count, cached, or carrying more than each runbook's summary",
    hidden=True,
)
def catalog_at_unseen_sizes(host) -> None:
    for size in HIDDEN_SIZES:
        with catalog_size(host, size):
            expect_catalog(catalog_entries(host), summaries(size), f" when the store holds {size}")


@hidden.check(
    "runbooks_by_unseen_ids",
    points=2,
    title="every runbook is read whole by its own id, and an id that is no runbook's is an error",
    mistake="a runbook found by a loose match of its id, or an unknown id answered instead of refused",
    hidden=True,
)
def runbooks_by_unseen_ids(host) -> None:
    for runbook_id in HIDDEN_IDS:
        expect_runbook(host, runbook_id, make_runbook(int(runbook_id[3:])))
    for runbook_id in HIDDEN_UNKNOWN_IDS:
        expect_no_runbook(host, runbook_id)
    for size, number in ((23, 20), (41, 41)):
        with catalog_size(host, size):
            when = f" when the store holds {size}"
            expect_runbook(host, f"RB-{number}", make_runbook(number), when)
            expect_no_runbook(host, f"RB-{size + 1}", when)
    with catalog_size(host, 0):
        expect_no_runbook(host, "RB-1", " when the store holds none")


@hidden.check(
    "unseen_reads_change_nothing",
    points=2,
    title="reading any resource, in any order and at any size, changes nothing and gives the same text",
    mistake="side effects or changing answers in the reads of some runbooks, some sizes or unknown ids",
    hidden=True,
)
def unseen_reads_change_nothing(host) -> None:
    ids = [f"RB-{i}" for i in range(1, DEFAULT_SIZE + 1) if f"RB-{i}" not in READ_IDS]
    uris = [(runbook_uri(i), f"runbook {i}") for i in ids]
    expect_reads_change_nothing(host, uris)
    # Read again in the other order: each gives what it gave before, whatever was read in between.
    before = visible.journal(host)
    first = {uri: read(host, uri, what) for uri, what in uris}
    for uri, what in reversed(uris):
        expect(read(host, uri, what) == first[uri], f"Reading {what} ({uri}) after other reads gave different text.")
    from mcp.shared.exceptions import MCPError  # here: recording a lab 3 submission reads this module's checks alone

    # Ids that do not exist: whatever the read answers, it changes nothing either.
    for runbook_id in ("RB-404", "RB-00"):
        try:
            host.read(runbook_uri(runbook_id))
        except MCPError as exc:
            if host_lost(exc):
                raise
    after = visible.journal(host)
    expect(after == before, f"Reading resources changed state ({len(after) - len(before)} change(s) recorded).")
    with catalog_size(host, 23):
        expect_reads_change_nothing(
            host,
            [(CATALOG_URI, "the catalog of 23")] + [(runbook_uri(f"RB-{i}"), f"runbook RB-{i}") for i in range(13, 24)],
        )


@hidden.check(
    "actions_on_unseen_alerts",
    points=2,
    title="each action acts on the alert and the person it is given, and refuses an alert that does not exist",
    mistake="actions that ignore their arguments, or that break on alert ids the lab does not show",
    hidden=True,
)
def actions_on_unseen_alerts(host) -> None:
    first = f"primary-{Path(host.state_dir).name}"  # new for every run
    second = f"secondary-{Path(host.state_dir).name}"
    for alert in ACK_ALERTS:
        for person, count, what in (
            (first, 1, f"Acknowledging {alert}"),
            (second, 1, f"Acknowledging {alert} again, by another person,"),
            (first, 1, f"Acknowledging {alert} by the first person again, after another,"),
            (first, 0, f"Acknowledging {alert} twice in a row by the same person"),
        ):
            expect_changes(
                act(host, "acknowledge_alert", {"alert_id": alert, "by": person}), "acknowledge", alert, count, what
            )
    for alert in NOTE_ALERTS:
        changes = []
        for _ in range(3):
            changes += act(host, "add_note", {"alert_id": alert, "text": "Paged the owner — waiting"})
        expect_changes(changes, "note", alert, 3, f"add_note three times on {alert}")
    for tool, alerts in HIDDEN_NO_SUCH_ALERTS.items():
        for alert in alerts:
            arguments = (
                {"alert_id": alert, "by": "incident-lead"}
                if tool == "acknowledge_alert"
                else {"alert_id": alert, "text": "Paged the owner"}
            )
            expect_not_found(host, tool, arguments)


@hidden.check(
    "budget_on_unseen_catalogs",
    points=2,
    title="an agent answers the team's questions within the budget from catalogs of any size",
    mistake="a catalog an agent cannot answer from at every size, so it explores one runbook after another",
    hidden=True,
)
def budget_on_unseen_catalogs(host) -> None:
    from mcp.shared.exceptions import MCPError

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
    for size in BUDGET_SIZES:
        questions = questions_for(scenario, [make_runbook(i) for i in range(1, size + 1)])
        texts = {q.id: q.text for q in questions}
        with catalog_size(host, size):
            try:
                outcomes = run(host, scenario, "catalog_first", questions)
            except (SimulatorError, MCPError) as exc:
                if isinstance(exc, MCPError) and host_lost(exc):
                    raise
                raise CheckFailed(f"With {size} runbooks the agent could not work with your server: {exc}") from None
        for outcome in outcomes:
            asked = f"With {size} runbooks, asked {texts[outcome.question_id]!r}"
            expect(
                outcome.correct,
                f"{asked}, the agent answered {outcome.answer!r} from your server; the answer is {outcome.expected!r}.",
            )
            expect(
                outcome.tally.round_trips <= visible.BUDGET,
                f"{asked}, the agent needed {outcome.tally.round_trips} requests; the budget is {visible.BUDGET}.",
            )


# The notebook's order of graded cells: each hidden check after the visible check of its skill.
ORDER = [
    "catalog_is_a_resource",
    "catalog_at_unseen_sizes",
    "runbook_template",
    "runbooks_by_unseen_ids",
    "reads_change_nothing",
    "unseen_reads_change_nothing",
    "empty_catalog_is_empty",
    "tools_are_the_actions",
    "actions_are_annotated",
    "actions_change_state",
    "actions_on_unseen_alerts",
    "catalog_answers_within_budget",
    "budget_on_unseen_catalogs",
]

checks = CheckRegistry.combined(LAB, ORDER, visible.checks, hidden)
