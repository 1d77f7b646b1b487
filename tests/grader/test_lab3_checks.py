"""Lab 3's checks against the reference solution, a catalogue of realistic wrong answers, and broken code.

Every case grades code the way ``Lab.run`` does, in process: a fresh state folder named by
``LAB_STATE_DIR`` for the run (the kit's store writes its journal there and reads the
catalog size from it), the learner host built around the answer cells, and each check
driven over one MCP session whose ``state_dir`` is that folder. Two cases go through the
real grader, a learner host in a subprocess.

The kit's ``STORE`` is one object per process, shared by every namespace: the alerts it
holds (who acknowledged what, the notes) outlive a graded run. Each run here starts from
fresh alerts, as a grader subprocess does; ``test_acknowledging_twice_in_one_kernel...``
shows what happens when it does not.
"""

from __future__ import annotations

import json
import os
import re
from functools import partial
from pathlib import Path

import pytest

from labkit.checking import run_check
from grader.grading import grade_code
from labkit import Lab
from grader.labs.lab3_tools_resources import checks
from grader.notebook import answer_code, is_answer_cell, read_notebook
from servers.learner_host import load_learner_code
from servers.learner_host import kit_lab3
from servers.learner_host.host import CELL_SEPARATOR
import labtests
from labtests import assert_fails_exactly, assert_sentence_in_words, blank_template, cells, failed, graded_cell_points, line_of, mutate  # noqa: F401

LAB = "lab3_tools_resources"
SOURCE = Path(__file__).resolve().parents[2] / "labs" / "source" / LAB / f"{LAB}.ipynb"
SOLUTION = answer_code(read_notebook(SOURCE))
ALL_CHECKS = set(checks.checks)
RESOURCE_CHECKS = {"catalog_is_a_resource", "runbook_template", "reads_change_nothing", "empty_catalog_is_empty"}
TOOL_CHECKS = {"tools_are_the_actions", "actions_are_annotated", "actions_change_state"}
BUDGET = "catalog_answers_within_budget"


def fresh_alerts() -> None:
    """Every alert unacknowledged and without notes, as in a grader subprocess that just started."""
    kit_lab3.STORE.alerts = kit_lab3.RunbookStore().alerts


# hosted(code): a session with the learner host running ``code``, its state folder attached,
# alerts fresh; grade(code, names=None): the checks of the lab (all, or ``names``), in order,
# over one such session.
hosted = partial(labtests.hosted, LAB, reset=fresh_alerts)
grade = partial(labtests.grade, LAB, reset=fresh_alerts)


BLANK = blank_template(SOURCE)


# --- the reference solution -------------------------------------------------------------------


def test_the_lab_has_eight_named_checks_worth_seventeen_points() -> None:
    assert len(ALL_CHECKS) == 8
    assert checks.total_points == 17
    points = {name: check.points for name, check in checks.checks.items()}
    # The notebook's table: part A (resources) 8, part B (tools) 6, part C (the budget) 3.
    assert sum(points[n] for n in RESOURCE_CHECKS) == 8
    assert sum(points[n] for n in TOOL_CHECKS) == 6
    assert points[BUDGET] == 3
    assert RESOURCE_CHECKS | TOOL_CHECKS | {BUDGET} == ALL_CHECKS


def test_the_notebooks_graded_cells_are_the_checks_with_their_points() -> None:
    assert graded_cell_points(SOURCE) == {name: check.points for name, check in checks.checks.items()}


def test_the_solution_passes_every_check() -> None:
    before = os.environ.get("LAB_STATE_DIR")

    results = grade(SOLUTION)

    assert set(results) == ALL_CHECKS
    assert failed(results) == set(), {n: r.message for n, r in results.items() if not r.passed}
    for name, result in results.items():
        assert result.score == result.points
        assert result.message == checks[name].title
        assert not result.host_lost
    assert os.environ.get("LAB_STATE_DIR") == before


def test_the_solution_passes_every_check_the_way_the_notebook_runs_them() -> None:
    # lab.check(name) in the notebook: Lab.run, one fresh state folder and session per check.
    fresh_alerts()
    namespace, load_error = load_learner_code(LAB, SOLUTION)
    assert load_error is None
    lab = Lab(LAB)

    results = {name: lab.run(name, namespace) for name in checks.checks}

    assert failed(results) == set(), {n: r.message for n, r in results.items() if not r.passed}


def test_the_checks_see_the_journal_and_leave_the_catalog_its_size() -> None:
    with hosted(SOLUTION) as host:
        for name in ("reads_change_nothing", "actions_change_state", "empty_catalog_is_empty"):
            assert run_check(checks[name], host).passed, name
        journal = [json.loads(line) for line in (host.state_dir / "journal.jsonl").read_text().splitlines()]
        # The empty-catalog check takes its control file away again: the catalog lists all twelve.
        assert not (host.state_dir / "control.json").exists()
        assert len(json.loads(host.read(kit_lab3.CATALOG_URI))["runbooks"]) == kit_lab3.DEFAULT_SIZE

    # Reads recorded nothing; acknowledging twice once; two notes twice; then on two other alerts an
    # acknowledgement, one by another person, and a note each; the alerts that do not exist nothing.
    others = [
        {"change": change, "alert": alert}
        for alert in ("ALERT-1", "ALERT-3")
        for change in ("acknowledge", "acknowledge", "note")
    ]
    assert journal == [
        {"change": "acknowledge", "alert": "ALERT-2"},
        {"change": "note", "alert": "ALERT-2"},
        {"change": "note", "alert": "ALERT-2"},
        *others,
    ]


def test_a_catalog_that_also_carries_the_steps_fails_only_the_catalog_check() -> None:
    # The notebook asks for a small catalog (no steps): the catalog check says so. With the steps in
    # the catalog the agent still answers every question, in one read.
    code = mutate(SOLUTION, ('("id", "title", "service", "severity")', '("id", "title", "service", "severity", "steps")'))

    results = grade(code)

    assert failed(results) == {"catalog_is_a_resource"}
    assert results["catalog_is_a_resource"].message == (
        "The catalog entry of RB-1 carries the runbook's steps: keep the catalog small, the steps are read one runbook at a time."
    )


# --- one realistic wrong answer (or more) per check -------------------------------------------

CATALOG_DECORATOR = (
    '@server.resource(CATALOG_URI, name="catalog", description="Every runbook: id, title, service, severity.", '
    'mime_type="application/json")'
)
RUNBOOK_DECORATOR = '@server.resource(RUNBOOK_TEMPLATE, name="runbook", description="One runbook with its steps.", mime_type="application/json")'
CATALOG_BODY = """json.dumps({"runbooks": [{k: r[k] for k in ("id", "title", "service", "severity")} for r in STORE.runbooks]})"""
ACK_HINTS = "read_only_hint=False, destructive_hint=False, idempotent_hint=True"
NOTE_HINTS = "read_only_hint=False, destructive_hint=False, idempotent_hint=False"
READ_TOOLS = '''


@server.tool(description="List every runbook: id, title, service, severity.")
def list_runbooks() -> str:
    return catalog()


@server.tool(description="One runbook with its steps.")
def get_runbook(runbook_id: str) -> str:
    return json.dumps(STORE.runbook(runbook_id))
'''

# (id, edits, the exact set of checks that must fail). Most mistakes fail only the check they
# stand for; where one legitimately breaks others too (a catalog that cannot be read cannot be
# read twice, nor emptied, nor answer the agent), the set names them all.
MISTAKES: list[tuple[str, tuple[tuple[str, str], ...], set[str]]] = [
    # part A: which capabilities are resources, and what they give
    (
        "catalog_published_as_a_tool",
        ((CATALOG_DECORATOR + "\ndef catalog() -> str:", '@server.tool(description="List every runbook.")\ndef list_runbooks() -> str:'),),
        {"tools_are_the_actions", "catalog_is_a_resource", "reads_change_nothing", "empty_catalog_is_empty", BUDGET},
    ),
    (
        "reads_also_published_as_tools",
        (("    return json.dumps(found)\n", "    return json.dumps(found)" + READ_TOOLS),),
        {"tools_are_the_actions"},
    ),
    (
        "catalog_entries_without_severity",
        (('("id", "title", "service", "severity")', '("id", "title", "service")'),),
        # The agent still answers: it fetches the one runbook whose severity it is asked.
        {"catalog_is_a_resource"},
    ),
    (
        "catalog_a_bare_list",
        ((CATALOG_BODY, """json.dumps([{k: r[k] for k in ("id", "title", "service", "severity")} for r in STORE.runbooks])"""),),
        {"catalog_is_a_resource", "empty_catalog_is_empty", BUDGET},
    ),
    (
        "runbook_template_missing",
        ((RUNBOOK_DECORATOR + "\ndef runbook(", "def runbook("),),
        {"runbook_template", "reads_change_nothing", BUDGET},
    ),
    (
        "runbook_template_at_another_uri",
        (("@server.resource(RUNBOOK_TEMPLATE,", '@server.resource("runbooks://runbook/{runbook_id}",'),),
        {"runbook_template", "reads_change_nothing", BUDGET},
    ),
    (
        "runbook_gives_only_its_steps",
        (("    return json.dumps(found)\n", '    return json.dumps(found["steps"])\n'),),
        {"runbook_template", BUDGET},
    ),
    (
        "catalog_read_adds_a_note",
        (("def catalog() -> str:\n", 'def catalog() -> str:\n    STORE.add_note("ALERT-1", "Catalog viewed.")\n'),),
        {"reads_change_nothing"},
    ),
    (
        "catalog_stamped_with_the_time",
        (("import json\n", "import json\nimport time\n"), ('json.dumps({"runbooks":', 'json.dumps({"generatedAt": time.time(), "runbooks":')),
        {"reads_change_nothing"},
    ),
    (
        "empty_catalog_raises",
        (("def catalog() -> str:\n", 'def catalog() -> str:\n    if not STORE.runbooks:\n        raise ResourceError("There are no runbooks.")\n'),),
        {"empty_catalog_is_empty"},
    ),
    (
        "catalog_cached_when_the_cell_runs",
        ((CATALOG_DECORATOR, "RUNBOOKS = STORE.runbooks\n\n\n" + CATALOG_DECORATOR), ("for r in STORE.runbooks]})", "for r in RUNBOOKS]})")),
        # Twelve runbooks whatever the store holds: the catalog check reads it at other sizes too.
        {"catalog_is_a_resource", "empty_catalog_is_empty"},
    ),
    # part B: the actions
    (
        "acknowledge_not_idempotent",
        ((ACK_HINTS, "read_only_hint=False, destructive_hint=False, idempotent_hint=False"),),
        {"actions_are_annotated"},
    ),
    (
        "add_note_idempotent",
        ((NOTE_HINTS, "read_only_hint=False, destructive_hint=False, idempotent_hint=True"),),
        {"actions_are_annotated"},
    ),
    (
        "acknowledge_read_only",
        ((ACK_HINTS, "read_only_hint=True, destructive_hint=False, idempotent_hint=True"),),
        {"actions_are_annotated"},
    ),
    (
        "add_note_destructive",
        ((NOTE_HINTS, "read_only_hint=False, destructive_hint=True, idempotent_hint=False"),),
        {"actions_are_annotated"},
    ),
    (
        "add_note_without_annotations",
        ((f"@server.tool(annotations=ToolAnnotations({NOTE_HINTS}, open_world_hint=False))", "@server.tool()"),),
        {"actions_are_annotated"},
    ),
    (
        "notes_kept_outside_the_store",
        (
            ("def unknown_alert(alert_id):", "NOTES = {}\n\n\ndef unknown_alert(alert_id):"),
            ("count = STORE.add_note(alert_id, text)", "NOTES.setdefault(alert_id, []).append(text)\n    count = len(NOTES[alert_id])"),
        ),
        {"actions_change_state"},
    ),
    (
        "acknowledge_also_logs_a_note",
        (("changed = STORE.acknowledge(alert_id, by)", 'changed = STORE.acknowledge(alert_id, by)\n    STORE.add_note(alert_id, f"Acknowledged by {by}.")'),),
        {"actions_change_state"},
    ),
    # Mistakes the one case a check names would miss: each is caught on other sizes, ids or alerts.
    (
        "catalog_capped_at_twenty",
        (("for r in STORE.runbooks]})", "for r in STORE.runbooks[:20]]})"),),
        {"catalog_is_a_resource"},
    ),
    (
        "unknown_runbook_read_as_null",
        (("""    if found is None:\n        raise ResourceError(f"No runbook {runbook_id}")\n""", ""),),
        {"runbook_template"},
    ),
    (
        "reading_a_sev1_runbook_leaves_a_note",
        (("    return json.dumps(found)\n", '    if found["severity"] == "sev1":\n        STORE.add_note("ALERT-1", f"{runbook_id} was opened.")\n    return json.dumps(found)\n'),),
        {"reads_change_nothing"},
    ),
    (
        "acknowledged_by_a_fixed_person",
        (("changed = STORE.acknowledge(alert_id, by)", 'changed = STORE.acknowledge(alert_id, "on-call")'),),
        {"actions_change_state"},
    ),
    (
        "unknown_alert_raises",
        (
            ("    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    changed", "    changed"),
            ("    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    count", "    count"),
        ),
        {"actions_change_state"},
    ),
    # part C: what the agent can answer from the catalog
    (
        "catalog_trimmed_to_the_first_five",
        (("for r in STORE.runbooks]})", "for r in STORE.runbooks[:5]]})"),),
        {"catalog_is_a_resource", BUDGET},
    ),
    (
        "runbook_found_by_prefix",
        (("found = STORE.runbook(runbook_id)", 'found = next((r for r in STORE.runbooks if runbook_id.startswith(r["id"])), None)'),),
        # RB-3 and RB-1 come back right; RB-10 and RB-12 come back as RB-1.
        {"runbook_template", BUDGET},
    ),
]

EDITS = {mistake: edits for mistake, edits, _ in MISTAKES}

# Failure messages, exactly, for the check each mistake stands for (and a few others).
MESSAGES: dict[str, dict[str, str]] = {
    "catalog_published_as_a_tool": {
        "tools_are_the_actions": "list_runbooks should not be a tool: reading the catalog or a runbook changes nothing "
        "and is addressed by a URI, so publish it as a resource.",
        "catalog_is_a_resource": "resources/list must include the catalog runbooks://catalog; yours lists [].",
        "reads_change_nothing": "Reading the catalog (runbooks://catalog) failed: Unknown resource: runbooks://catalog",
        BUDGET: "The agent could not work with your server: Reading runbooks://catalog failed: Unknown resource: runbooks://catalog",
    },
    "reads_also_published_as_tools": {
        "tools_are_the_actions": "get_runbook, list_runbooks should not be tools: reading the catalog or a runbook changes "
        "nothing and is addressed by a URI, so publish it as a resource.",
    },
    "catalog_entries_without_severity": {
        "catalog_is_a_resource": "The catalog entry of RB-1 must carry id, title, service, severity: expected {'id': 'RB-1', 'title': "
        "'Billing outage playbook 1', 'service': 'billing', 'severity': 'sev2'}, got {'id': 'RB-1', 'title': "
        "'Billing outage playbook 1', 'service': 'billing', 'severity': None}.",
    },
    "catalog_a_bare_list": {
        "catalog_is_a_resource": 'The catalog must be a JSON object with a "runbooks" list.',
        "empty_catalog_is_empty": 'The catalog must be a JSON object with a "runbooks" list.',
    },
    "runbook_template_missing": {
        "runbook_template": "resources/templates/list must include runbooks://runbooks/{runbook_id}; yours lists [].",
    },
    "runbook_template_at_another_uri": {
        "runbook_template": "resources/templates/list must include runbooks://runbooks/{runbook_id}; "
        "yours lists ['runbooks://runbook/{runbook_id}'].",
        "reads_change_nothing": "Reading runbook RB-1 (runbooks://runbooks/RB-1) failed: Unknown resource: runbooks://runbooks/RB-1",
    },
    "runbook_gives_only_its_steps": {
        BUDGET: "The agent could not work with your server: runbooks://runbooks/RB-12 must be a JSON object.",
    },
    "catalog_read_adds_a_note": {
        "reads_change_nothing": "Reading the catalog (runbooks://catalog) changed state (1 change(s) recorded): a resource read must be read-only.",
    },
    "catalog_stamped_with_the_time": {
        "reads_change_nothing": "Reading the catalog (runbooks://catalog) twice gave different text: a resource read must be deterministic.",
    },
    "empty_catalog_raises": {
        "empty_catalog_is_empty": "Reading the catalog (runbooks://catalog) failed: There are no runbooks.",
    },
    "acknowledge_not_idempotent": {
        "actions_are_annotated": "acknowledge_alert must say idempotentHint: true; yours says False.",
    },
    "add_note_idempotent": {
        "actions_are_annotated": "add_note must say idempotentHint: false; yours says True.",
    },
    "acknowledge_read_only": {
        "actions_are_annotated": "acknowledge_alert must say readOnlyHint: false; yours says True.",
    },
    "add_note_destructive": {
        "actions_are_annotated": "add_note must say destructiveHint: false; yours says True.",
    },
    "add_note_without_annotations": {
        "actions_are_annotated": "add_note must say readOnlyHint: false; yours says None.",
    },
    "notes_kept_outside_the_store": {
        "actions_change_state": "add_note twice must add two notes (it is not idempotent); it added 0.",
    },
    "acknowledge_also_logs_a_note": {
        "actions_change_state": "Acknowledging ALERT-2 twice by the same person must change state once (it is idempotent); "
        "it changed 3 time(s).",
    },
    "catalog_trimmed_to_the_first_five": {
        "catalog_is_a_resource": "The catalog must list all 12 runbooks; yours lists 5.",
        BUDGET: "Asked \"How many runbooks have service 'billing'?\", the agent answered 1 from your server, which is wrong.",
    },
    "catalog_capped_at_twenty": {
        "catalog_is_a_resource": "The catalog must list all 23 runbooks when the store holds 23; yours lists 20.",
    },
    "unknown_runbook_read_as_null": {
        "runbook_template": "There is no runbook 'RB-0', so reading runbooks://runbooks/RB-0 must fail with a ResourceError; yours answered 'null'.",
    },
    "reading_a_sev1_runbook_leaves_a_note": {
        "reads_change_nothing": "Reading runbook RB-6 (runbooks://runbooks/RB-6) changed state (1 change(s) recorded): a resource read must be read-only.",
    },
    "acknowledged_by_a_fixed_person": {
        "actions_change_state": "Acknowledging ALERT-1 again, by another person, must change state 1 time(s), on ALERT-1; the changes were: nothing.",
    },
    "unknown_alert_raises": {
        "actions_change_state": "acknowledge_alert(alert_id='ALERT-404', by='oncall'), an alert that does not exist, must be an error "
        "result with errorCategory 'not_found'; got isError true, errorCategory None, isRetryable None, text 'Error executing tool acknowledge_alert'.",
    },
    "runbook_found_by_prefix": {
        BUDGET: "Asked \"What is the 'steps' of the runbook titled 'Search outage playbook 12'?\", the agent answered None "
        "from your server, which is wrong.",
    },
}


@pytest.mark.parametrize(("mistake", "edits", "expected"), [pytest.param(i, e, f, id=i) for i, e, f in MISTAKES])
def test_a_realistic_mistake_fails_exactly_the_checks_it_should(mistake: str, edits, expected: set[str]) -> None:
    assert_fails_exactly(grade(mutate(SOLUTION, *edits)), expected, checks, MESSAGES.get(mistake))


def test_every_check_has_a_catalogued_mistake_that_fails_it_alone_or_with_named_others() -> None:
    covered = set().union(*(expected for _, _, expected in MISTAKES))
    alone = {next(iter(expected)) for _, _, expected in MISTAKES if len(expected) == 1}
    assert covered == ALL_CHECKS
    assert len(EDITS) == len(MISTAKES)
    # The agent reads the catalog and the runbooks, so whatever it stumbles on fails a resource check too.
    assert ALL_CHECKS - alone == {BUDGET}
    assert set(MESSAGES) <= set(EDITS)
    for mistake, edits, expected in MISTAKES:
        assert set(MESSAGES.get(mistake, {})) <= expected, mistake
        # Only the cell the mistake is about changes.
        code = mutate(SOLUTION, *edits)
        assert sum(a != b for a, b in zip(cells(code), cells(SOLUTION), strict=True)) == 1, mistake


def test_a_mistake_gets_the_same_verdict_and_messages_on_every_run() -> None:
    for mistake in ("catalog_trimmed_to_the_first_five", "acknowledge_also_logs_a_note", "catalog_read_adds_a_note"):
        code = mutate(SOLUTION, *EDITS[mistake])
        assert grade(code) == grade(code), mistake
    assert grade(SOLUTION) == grade(SOLUTION)


def test_the_empty_catalog_message_says_how_many_entries_came_back() -> None:
    message = grade(mutate(SOLUTION, *EDITS["catalog_cached_when_the_cell_runs"]), {"empty_catalog_is_empty"})["empty_catalog_is_empty"].message

    assert message == "With no runbooks the catalog must be an empty list; yours lists 12 entries."


# --- the blank template and code that does not run ----------------------------------------------

NO_SERVER = "Your answer cells define no `server = MCPServer(...)`"


def test_the_blank_template_has_no_solution_left() -> None:
    assert "BEGIN SOLUTION" not in BLANK
    assert len(cells(BLANK)) == 2
    assert BLANK.count("raise NotImplementedError()") == 2
    # The server itself is given; everything published on it is the learner's.
    assert 'server = MCPServer("runbooks")' in BLANK
    for name in ("@server.resource", "@server.tool", "ToolAnnotations(", "STORE.acknowledge", "def catalog"):
        assert name not in BLANK


def test_the_blank_template_fails_every_check_saying_what_is_missing() -> None:
    results = grade(BLANK)

    assert failed(results) == ALL_CHECKS
    for result in results.values():
        assert not result.host_lost
        assert_sentence_in_words(result.message)
    unwritten = (
        " (Your answer cells failed to run: answer cell 1 is not written yet (it raises NotImplementedError); "
        "answer cell 2 is not written yet (it raises NotImplementedError).)"
    )
    assert results["tools_are_the_actions"].message == (
        "acknowledge_alert, add_note must be published as tools: they change state, so the model decides when to call them."
        + unwritten
    )
    assert results["catalog_is_a_resource"].message == (
        "resources/list must include the catalog runbooks://catalog; yours lists []." + unwritten
    )
    assert results["runbook_template"].message == (
        "resources/templates/list must include runbooks://runbooks/{runbook_id}; yours lists []." + unwritten
    )
    assert results["actions_are_annotated"].message == "acknowledge_alert is not a tool." + unwritten
    assert results[BUDGET].message.startswith("The agent could not work with your server: Reading runbooks://catalog failed")


def test_code_without_a_server_fails_every_check_saying_so() -> None:
    code = SOLUTION.replace('server = MCPServer("runbooks")', 'mcp = MCPServer("runbooks")').replace("@server.", "@mcp.")

    results = grade(code)

    assert failed(results) == ALL_CHECKS
    for result in results.values():
        assert not result.host_lost
        assert_sentence_in_words(result.message)
        assert result.message.endswith(f"{NO_SERVER}."), result.message
    assert results["tools_are_the_actions"].message == f"{NO_SERVER}."
    assert results["reads_change_nothing"].message == f"Reading the catalog (runbooks://catalog) failed: {NO_SERVER}."


def test_a_server_that_is_not_an_mcpserver_is_named_with_what_it_is() -> None:
    code = mutate(SOLUTION, ('server = MCPServer("runbooks")', 'from mcp.server.lowlevel import Server\n\nserver = Server("runbooks")'))
    resources = line_of(code, "@server.resource(CATALOG_URI")
    tools = line_of(code, f"@server.tool(annotations=ToolAnnotations({ACK_HINTS}")

    results = grade(code)

    assert failed(results) == ALL_CHECKS
    assert results["tools_are_the_actions"].message == (
        f"{NO_SERVER} (`server` is a Server). Your answer cells failed to run: "
        f"AttributeError: 'Server' object has no attribute 'resource' (line {resources[1]} of answer cell {resources[0]}); "
        f"AttributeError: 'Server' object has no attribute 'tool' (line {tools[1]} of answer cell {tools[0]})."
    )
    for result in results.values():
        assert "(`server` is a Server)" in result.message
        assert_sentence_in_words(result.message)


def test_the_v1_fastmcp_import_is_named_with_its_line() -> None:
    code = mutate(SOLUTION, ('server = MCPServer("runbooks")', 'from mcp.server.fastmcp import FastMCP\n\nserver = FastMCP("runbooks")'))
    cell, line = line_of(code, "from mcp.server.fastmcp import FastMCP")

    results = grade(code)

    assert failed(results) == ALL_CHECKS
    for result in results.values():
        assert NO_SERVER + ". Your answer cells failed to run: ModuleNotFoundError: No module named 'mcp.server.fastmcp'" in result.message
        assert f"(line {line} of answer cell {cell})" in result.message
        assert "NameError: name 'server' is not defined" in result.message
        assert_sentence_in_words(result.message)


def test_a_syntax_error_in_the_resources_cell_fails_every_check_naming_it() -> None:
    code = mutate(SOLUTION, ("def catalog() -> str:", "def catalog() -> str"))
    cell, line = line_of(code, "def catalog() -> str")

    results = grade(code)

    # The cell that creates `server` did not run, so the tools' cell could not use it either.
    assert failed(results) == ALL_CHECKS
    for result in results.values():
        assert f"{NO_SERVER}. Your answer cells failed to run: SyntaxError: expected ':' (line {line} of answer cell {cell})" in result.message
        assert_sentence_in_words(result.message)


def test_a_syntax_error_in_the_tools_cell_costs_only_the_tool_checks() -> None:
    code = mutate(SOLUTION, ("def add_note(alert_id: str, text: str) -> CallToolResult:", "def add_note(alert_id: str, text: str) -> CallToolResult"))

    results = grade(code)

    assert failed(results) == TOOL_CHECKS
    for name in TOOL_CHECKS:
        assert not results[name].host_lost
        assert_sentence_in_words(results[name].message)


def test_a_syntax_error_in_the_tools_cell_is_named_with_its_line() -> None:
    code = mutate(SOLUTION, ("def add_note(alert_id: str, text: str) -> CallToolResult:", "def add_note(alert_id: str, text: str) -> CallToolResult"))
    cell, line = line_of(code, "def add_note(")

    results = grade(code, TOOL_CHECKS)

    for name in TOOL_CHECKS:
        assert f"SyntaxError: expected ':' (line {line} of answer cell {cell})" in results[name].message


def test_acknowledging_twice_in_one_kernel_still_passes_a_correct_solution() -> None:
    fresh_alerts()
    namespace, _ = load_learner_code(LAB, SOLUTION)
    lab = Lab(LAB)

    first = lab.run("actions_change_state", namespace)
    again = lab.run("actions_change_state", namespace)  # the learner runs the graded cell again

    assert first.passed
    assert again.passed, again.message


def test_check_messages_never_show_the_checks_code() -> None:
    messages = [r.message for r in grade(BLANK).values()]
    for _, edits, _ in MISTAKES:
        messages += [r.message for r in grade(mutate(SOLUTION, *edits)).values() if not r.passed]

    assert messages
    for message in messages:
        assert_sentence_in_words(message)


# --- through the grader: the learner host in a subprocess --------------------------------------


def test_the_grader_passes_the_solution_through_a_subprocess_host() -> None:
    results = grade_code(LAB, SOLUTION)

    assert [r.name for r in results] == list(checks.checks)
    assert [r.name for r in results if not r.passed] == [], {r.name: r.message for r in results if not r.passed}
    assert sum(r.score for r in results) == 17


def test_the_grader_sees_a_side_effect_in_a_resource_read_through_the_journal() -> None:
    results = grade_code(LAB, mutate(SOLUTION, *EDITS["catalog_read_adds_a_note"]))

    failures = {r.name: r.message for r in results if not r.passed}
    assert failures == {"reads_change_nothing": MESSAGES["catalog_read_adds_a_note"]["reads_change_nothing"]}
    assert sum(r.score for r in results) == 15
