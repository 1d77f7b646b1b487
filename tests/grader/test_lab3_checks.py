"""Lab 3's checks, visible and hidden, against the reference solution, a catalogue of realistic wrong answers, and broken code.

The registry under test is the grader's (``grader.labs``): the visible checks the notebook runs
(``labkit.checks``) and the hidden ones only grading runs, in the notebook's order. Some mistakes
pass every visible check and fail only a hidden one, on cases the notebook does not show; what a
learner reads of such a verdict names the skill and the mistake, never the case.

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

import labtests
import pytest
from labtests import (
    assert_fails_exactly,
    assert_sentence_in_words,
    blank_template,
    cells,
    failed,
    graded_cell_points,
    line_of,
    mutate,
)

from grader.engine.grading import grade_code
from grader.labs import lab3_tools_resources as grading
from grader.labs.lab3_tools_resources import ORDER, checks
from grader.notebook import answer_code, read_notebook
from labkit import Lab
from labkit.checking import as_shown, run_check
from labkit.checks import lab3_tools_resources as visible
from servers.learner_host import kit_lab3, load_learner_code

LAB = "lab3_tools_resources"
SOURCE = Path(__file__).resolve().parents[2] / "labs" / "source" / LAB / f"{LAB}.ipynb"
SOLUTION = answer_code(read_notebook(SOURCE))
ALL_CHECKS = set(checks.checks)
VISIBLE = set(visible.checks.checks)
HIDDEN = set(grading.hidden.checks)
BUDGET, HIDDEN_BUDGET = "catalog_answers_within_budget", "budget_on_unseen_catalogs"
# Each visible check and the hidden check of its skill (None: a skill a listing shows whole, with no inputs to vary).
SKILLS = {
    "catalog_is_a_resource": "catalog_at_unseen_sizes",
    "runbook_template": "runbooks_by_unseen_ids",
    "reads_change_nothing": "unseen_reads_change_nothing",
    "empty_catalog_is_empty": None,
    "tools_are_the_actions": None,
    "actions_are_annotated": None,
    "actions_change_state": "actions_on_unseen_alerts",
    BUDGET: HIDDEN_BUDGET,
}
RESOURCE_CHECKS = {"catalog_is_a_resource", "runbook_template", "reads_change_nothing", "empty_catalog_is_empty"}
RESOURCE_CHECKS |= {SKILLS[name] for name in RESOURCE_CHECKS if SKILLS[name]}
TOOL_CHECKS = {"tools_are_the_actions", "actions_are_annotated", "actions_change_state", "actions_on_unseen_alerts"}


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


def test_the_lab_has_eight_visible_and_five_hidden_checks_worth_twenty_seven_points() -> None:
    assert len(VISIBLE) == 8 and visible.checks.total_points == 17
    assert len(HIDDEN) == 5 and grading.hidden.total_points == 10
    assert VISIBLE | HIDDEN == ALL_CHECKS and not VISIBLE & HIDDEN
    assert checks.total_points == 27
    assert {name for name, check in checks.checks.items() if check.hidden} == HIDDEN == set(checks.hidden)
    assert not any(check.hidden for check in visible.checks.checks.values())
    assert all(1 <= checks[name].points <= 3 for name in HIDDEN)
    # Every hidden check tests the skill of a visible one.
    assert set(SKILLS) == VISIBLE and {h for h in SKILLS.values() if h} == HIDDEN
    points = {name: check.points for name, check in checks.checks.items()}
    # The notebook's table: part B (the runbooks, resources) 14, part C (the alerts, tools) 8, part D (the budget) 5.
    assert sum(points[n] for n in RESOURCE_CHECKS) == 14
    assert sum(points[n] for n in TOOL_CHECKS) == 8
    assert points[BUDGET] + points[HIDDEN_BUDGET] == 5
    assert RESOURCE_CHECKS | TOOL_CHECKS | {BUDGET, HIDDEN_BUDGET} == ALL_CHECKS


def test_the_notebooks_graded_cells_are_the_checks_with_their_points_in_order() -> None:
    assert graded_cell_points(SOURCE) == {name: check.points for name, check in checks.checks.items()}
    graded = [
        c.metadata.nbgrader["grade_id"]
        for c in read_notebook(SOURCE).cells
        if c.metadata.get("nbgrader", {}).get("grade")
    ]
    assert graded == ORDER == list(checks.checks)
    # Each hidden check comes right after the visible check of its skill.
    for shown, hidden in SKILLS.items():
        if hidden:
            assert ORDER.index(hidden) == ORDER.index(shown) + 1


def test_the_notebook_runs_visible_checks_and_only_names_the_hidden_ones() -> None:
    cells = {
        c.metadata.nbgrader["grade_id"]: c
        for c in read_notebook(SOURCE).cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }
    for name, cell in cells.items():
        assert cell.metadata.nbgrader["locked"] is True and cell.metadata.nbgrader["solution"] is False
        if name in HIDDEN:
            comment, call = cell.source.split("\n")
            assert comment.startswith("# Hidden check: ") and call == f'lab.hidden("{name}")'
        else:
            assert cell.source == f'lab.check("{name}")'
    setup = next(c for c in read_notebook(SOURCE).cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    assert "from labkit import Lab" in setup.source
    code = [cell.source for cell in read_notebook(SOURCE).cells if cell.cell_type == "code"]
    assert not any(re.search(r"^\s*(from|import)\s+grader\b", source, re.MULTILINE) for source in code)


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
    # lab.check(name) in the notebook: Lab.run, one fresh state folder and session per check. The notebook
    # knows the visible checks only.
    fresh_alerts()
    namespace, load_error = load_learner_code(LAB, SOLUTION)
    assert load_error is None
    lab = Lab(LAB)

    results = {name: lab.run(name, namespace) for name in lab.checks.checks}

    assert set(results) == VISIBLE
    assert failed(results) == set(), {n: r.message for n, r in results.items() if not r.passed}
    for name in HIDDEN:
        with pytest.raises(KeyError):
            lab.run(name, namespace)


def test_a_hidden_cell_in_the_notebook_says_it_runs_at_grading(capsys) -> None:
    Lab(LAB).hidden("runbooks_by_unseen_ids")

    out = capsys.readouterr().out
    assert out.startswith("[HIDDEN] runbooks_by_unseen_ids: this check runs only when your submission is graded")
    assert "RB-" not in out


def test_the_checks_see_the_journal_and_leave_the_catalog_its_size() -> None:
    with hosted(SOLUTION) as host:
        for name in (
            "reads_change_nothing",
            "unseen_reads_change_nothing",
            "actions_change_state",
            "empty_catalog_is_empty",
        ):
            assert run_check(checks[name], host).passed, name
        visible_part = [json.loads(line) for line in (host.state_dir / "journal.jsonl").read_text().splitlines()]
        assert run_check(checks["actions_on_unseen_alerts"], host).passed
        journal = [json.loads(line) for line in (host.state_dir / "journal.jsonl").read_text().splitlines()]
        # The empty-catalog check takes its control file away again: the catalog lists all twelve.
        assert not (host.state_dir / "control.json").exists()
        assert len(json.loads(host.read(kit_lab3.CATALOG_URI))["runbooks"]) == kit_lab3.DEFAULT_SIZE

    # Reads recorded nothing; acknowledging ALERT-2 twice once; two notes twice; the alerts that do not exist nothing.
    assert visible_part == [
        {"change": "acknowledge", "alert": "ALERT-2"},
        {"change": "note", "alert": "ALERT-2"},
        {"change": "note", "alert": "ALERT-2"},
    ]
    # The hidden check: on two other alerts, acknowledgements by one person, another, the first again (the
    # fourth, a repeat, changes nothing); three notes each on two more; the alerts that do not exist nothing.
    assert journal[len(visible_part) :] == [
        *({"change": "acknowledge", "alert": alert} for alert in ("ALERT-4",) * 3 + ("ALERT-1",) * 3),
        *({"change": "note", "alert": alert} for alert in ("ALERT-3",) * 3 + ("ALERT-5",) * 3),
    ]


def test_a_catalog_that_also_carries_the_steps_fails_only_the_catalog_checks() -> None:
    # The notebook asks for a small catalog (no steps): the catalog check says so. With the steps in
    # the catalog the agent still answers every question, in one read.
    code = mutate(
        SOLUTION, ('("id", "title", "service", "severity")', '("id", "title", "service", "severity", "steps")')
    )

    results = grade(code)

    assert failed(results) == {"catalog_is_a_resource", "catalog_at_unseen_sizes"}
    assert results["catalog_is_a_resource"].message == (
        "The catalog entry of RB-1 carries the runbook's steps: keep the catalog small, the steps are read one runbook at a time."
    )


# --- one realistic wrong answer (or more) per check -------------------------------------------

CATALOG_DECORATOR = (
    '@server.resource(CATALOG_URI, name="catalog", description="Every runbook: id, title, service, severity.", '
    'mime_type="application/json")'
)
RUNBOOK_DECORATOR = '@server.resource(RUNBOOK_TEMPLATE, name="runbook", description="One runbook with its steps.", mime_type="application/json")'
CATALOG_BODY = (
    """json.dumps({"runbooks": [{k: r[k] for k in ("id", "title", "service", "severity")} for r in STORE.runbooks]})"""
)
ACK_HINTS = "read_only_hint=False, destructive_hint=False, idempotent_hint=True"
NOTE_HINTS = "read_only_hint=False, destructive_hint=False, idempotent_hint=False"
READ_TOOLS = """


@server.tool(description="List every runbook: id, title, service, severity.")
def list_runbooks() -> str:
    return catalog()


@server.tool(description="One runbook with its steps.")
def get_runbook(runbook_id: str) -> str:
    return json.dumps(STORE.runbook(runbook_id))
"""

# Mistakes that pass every visible check, each with the hidden checks that catch it.
HIDDEN_ONLY: list[tuple[str, tuple[tuple[str, str], ...], set[str]]] = [
    (
        "catalog_capped_at_twenty",
        (("for r in STORE.runbooks]})", "for r in STORE.runbooks[:20]]})"),),
        # Twelve and two are under the cap; twenty-three and forty-one are not, for the catalog and for the agent.
        {"catalog_at_unseen_sizes", HIDDEN_BUDGET},
    ),
    (
        "runbook_id_read_as_a_number",
        (
            (
                "found = STORE.runbook(runbook_id)",
                'number = runbook_id.removeprefix("RB-")\n    found = STORE.runbook(f"RB-{int(number)}") if number.isdigit() else None',
            ),
        ),
        # RB-0, RB-13 and rb-3 are refused; RB-03 answers as RB-3.
        {"runbooks_by_unseen_ids"},
    ),
    (
        "reading_a_sev1_runbook_leaves_a_note",
        (
            (
                "    return json.dumps(found)\n",
                '    if found["severity"] == "sev1":\n        STORE.add_note("ALERT-1", f"{runbook_id} was opened.")\n    return json.dumps(found)\n',
            ),
        ),
        # The notebook reads RB-1, RB-2 and RB-4 twice; RB-3, a sev1, is read by the hidden check.
        {"unseen_reads_change_nothing"},
    ),
    (
        "acknowledged_by_a_fixed_person",
        (("changed = STORE.acknowledge(alert_id, by)", 'changed = STORE.acknowledge(alert_id, "on-call")'),),
        {"actions_on_unseen_alerts"},
    ),
    (
        "unknown_alert_judged_by_its_number",
        (
            (
                "    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    changed",
                '    if int(alert_id.removeprefix("ALERT-")) > len(ALERTS):\n        return unknown_alert(alert_id)\n    changed',
            ),
            (
                "    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    count",
                '    if int(alert_id.removeprefix("ALERT-")) > len(ALERTS):\n        return unknown_alert(alert_id)\n    count',
            ),
        ),
        # ALERT-404 and ALERT-9 are past the last alert; ALERT-0 is not, and it breaks the tool.
        {"actions_on_unseen_alerts"},
    ),
]

# (id, edits, the exact set of checks that must fail). Most mistakes fail only the check they
# stand for and the hidden check of the same skill; where one legitimately breaks others too (a
# catalog that cannot be read cannot be read twice, nor emptied, nor answer the agent), the set
# names them all. The last ones pass every visible check: only a hidden check catches them.
MISTAKES: list[tuple[str, tuple[tuple[str, str], ...], set[str]]] = [
    # part B: which capabilities are resources, and what they give
    (
        "catalog_published_as_a_tool",
        (
            (
                CATALOG_DECORATOR + "\ndef catalog() -> str:",
                '@server.tool(description="List every runbook.")\ndef list_runbooks() -> str:',
            ),
        ),
        {
            "tools_are_the_actions",
            "catalog_is_a_resource",
            "catalog_at_unseen_sizes",
            "reads_change_nothing",
            "unseen_reads_change_nothing",
            "empty_catalog_is_empty",
            BUDGET,
            HIDDEN_BUDGET,
        },
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
        {"catalog_is_a_resource", "catalog_at_unseen_sizes"},
    ),
    (
        "catalog_a_bare_list",
        (
            (
                CATALOG_BODY,
                """json.dumps([{k: r[k] for k in ("id", "title", "service", "severity")} for r in STORE.runbooks])""",
            ),
        ),
        {"catalog_is_a_resource", "catalog_at_unseen_sizes", "empty_catalog_is_empty", BUDGET, HIDDEN_BUDGET},
    ),
    (
        "runbook_template_missing",
        ((RUNBOOK_DECORATOR + "\ndef runbook(", "def runbook("),),
        {
            "runbook_template",
            "runbooks_by_unseen_ids",
            "reads_change_nothing",
            "unseen_reads_change_nothing",
            BUDGET,
            HIDDEN_BUDGET,
        },
    ),
    (
        "runbook_template_at_another_uri",
        (("@server.resource(RUNBOOK_TEMPLATE,", '@server.resource("runbooks://runbook/{runbook_id}",'),),
        {
            "runbook_template",
            "runbooks_by_unseen_ids",
            "reads_change_nothing",
            "unseen_reads_change_nothing",
            BUDGET,
            HIDDEN_BUDGET,
        },
    ),
    (
        "runbook_gives_only_its_steps",
        (("    return json.dumps(found)\n", '    return json.dumps(found["steps"])\n'),),
        {"runbook_template", "runbooks_by_unseen_ids", BUDGET, HIDDEN_BUDGET},
    ),
    (
        "catalog_read_adds_a_note",
        (("def catalog() -> str:\n", 'def catalog() -> str:\n    STORE.add_note("ALERT-1", "Catalog viewed.")\n'),),
        {"reads_change_nothing", "unseen_reads_change_nothing"},
    ),
    (
        "catalog_stamped_with_the_time",
        (
            ("import json\n", "import json\nimport time\n"),
            ('json.dumps({"runbooks":', 'json.dumps({"generatedAt": time.time(), "runbooks":'),
        ),
        {"reads_change_nothing", "unseen_reads_change_nothing"},
    ),
    (
        "empty_catalog_raises",
        (
            (
                "def catalog() -> str:\n",
                'def catalog() -> str:\n    if not STORE.runbooks:\n        raise ResourceError("There are no runbooks.")\n',
            ),
        ),
        {"empty_catalog_is_empty"},
    ),
    (
        "catalog_cached_when_the_cell_runs",
        (
            (CATALOG_DECORATOR, "RUNBOOKS = STORE.runbooks\n\n\n" + CATALOG_DECORATOR),
            ("for r in STORE.runbooks]})", "for r in RUNBOOKS]})"),
        ),
        # Twelve runbooks whatever the store holds: the catalog check reads it at two as well.
        {"catalog_is_a_resource", "catalog_at_unseen_sizes", "empty_catalog_is_empty", HIDDEN_BUDGET},
    ),
    # part C: the actions
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
            (
                "count = STORE.add_note(alert_id, text)",
                "NOTES.setdefault(alert_id, []).append(text)\n    count = len(NOTES[alert_id])",
            ),
        ),
        {"actions_change_state", "actions_on_unseen_alerts"},
    ),
    (
        "acknowledge_also_logs_a_note",
        (
            (
                "changed = STORE.acknowledge(alert_id, by)",
                'changed = STORE.acknowledge(alert_id, by)\n    STORE.add_note(alert_id, f"Acknowledged by {by}.")',
            ),
        ),
        {"actions_change_state", "actions_on_unseen_alerts"},
    ),
    (
        "unknown_runbook_read_as_null",
        (("""    if found is None:\n        raise ResourceError(f"No runbook {runbook_id}")\n""", ""),),
        {"runbook_template", "runbooks_by_unseen_ids"},
    ),
    (
        "unknown_alert_raises",
        (
            ("    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    changed", "    changed"),
            ("    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    count", "    count"),
        ),
        {"actions_change_state", "actions_on_unseen_alerts"},
    ),
    # part D: what the agent can answer from the catalog
    (
        "catalog_trimmed_to_the_first_five",
        (("for r in STORE.runbooks]})", "for r in STORE.runbooks[:5]]})"),),
        {"catalog_is_a_resource", "catalog_at_unseen_sizes", BUDGET, HIDDEN_BUDGET},
    ),
    (
        "runbook_found_by_prefix",
        (
            (
                "found = STORE.runbook(runbook_id)",
                'found = next((r for r in STORE.runbooks if runbook_id.startswith(r["id"])), None)',
            ),
        ),
        # RB-3 comes back right; RB-10 and RB-12 come back as RB-1, RB-23 as RB-2.
        {"runbook_template", "runbooks_by_unseen_ids", HIDDEN_BUDGET},
    ),
    # Mistakes every visible check misses: each is caught on sizes, ids or alerts the notebook does not show.
    *HIDDEN_ONLY,
]

EDITS = {mistake: edits for mistake, edits, _ in MISTAKES}

# Failure messages, exactly, for the check each mistake stands for (and a few others). A hidden check's
# message is as the grader records it; a learner reads only its skill and mistake (``as_shown``).
MESSAGES: dict[str, dict[str, str]] = {
    "catalog_published_as_a_tool": {
        "tools_are_the_actions": "list_runbooks should not be a tool: reading the catalog or a runbook changes nothing "
        "and is addressed by a URI, so publish it as a resource.",
        "catalog_is_a_resource": "resources/list must include the catalog runbooks://catalog; yours lists [].",
        "reads_change_nothing": "Reading the catalog (runbooks://catalog) failed: Unknown resource: runbooks://catalog",
        BUDGET: "The agent could not work with your server: Reading the catalog (runbooks://catalog) failed: "
        "Unknown resource: runbooks://catalog",
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
        BUDGET: "The agent could not work with your server: runbooks://runbooks/RB-5 must be a JSON object.",
    },
    "catalog_read_adds_a_note": {
        "reads_change_nothing": "Reading the catalog (runbooks://catalog) changed state (1 change(s) recorded): a resource read must be read-only.",
        "unseen_reads_change_nothing": "Reading the catalog of 23 (runbooks://catalog) changed state (1 change(s) recorded): "
        "a resource read must be read-only.",
    },
    "catalog_stamped_with_the_time": {
        "reads_change_nothing": "Reading the catalog (runbooks://catalog) twice gave different text: a resource read must be deterministic.",
    },
    "empty_catalog_raises": {
        "empty_catalog_is_empty": "Reading the catalog (runbooks://catalog) failed: There are no runbooks.",
    },
    "catalog_cached_when_the_cell_runs": {
        "catalog_is_a_resource": "The catalog must list all 2 runbooks when the store holds 2; yours lists 12.",
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
        "actions_change_state": "add_note twice with the same text (it is not idempotent) must change state 2 time(s), on ALERT-2; "
        "the changes were: nothing.",
    },
    "acknowledge_also_logs_a_note": {
        "actions_change_state": "Acknowledging ALERT-2 twice by the same person (it is idempotent) must change state 1 time(s), "
        "on ALERT-2; the changes were: acknowledge on ALERT-2, note on ALERT-2, note on ALERT-2.",
    },
    "unknown_runbook_read_as_null": {
        "runbook_template": "There is no runbook 'RB-0', so reading runbooks://runbooks/RB-0 must fail with a ResourceError; yours answered 'null'.",
    },
    "unknown_alert_raises": {
        "actions_change_state": "acknowledge_alert(alert_id='ALERT-404', by='oncall'), an alert that does not exist, must be an error "
        "result with errorCategory 'not_found'; got isError true, errorCategory None, isRetryable None, text 'Error executing tool acknowledge_alert'.",
    },
    "catalog_trimmed_to_the_first_five": {
        "catalog_is_a_resource": "The catalog must list all 12 runbooks; yours lists 5.",
        BUDGET: "Asked 'How many runbooks cover the search service?', the agent answered 1 from your server; the answer is 3.",
    },
    "runbook_found_by_prefix": {
        "runbook_template": "runbooks://runbooks/RB-10 must give runbook RB-10 whole, steps included; got {'id': 'RB-1', 'title': "
        "'Billing outage playbook 1', 'service': 'billing', 'severity': 'sev2', 'steps': ['Check the billing dashboard for error spikes.', "
        "'Roll back the last billing deploy if it is under an hour old.', 'Page the service owner if errors persist for 10 minutes.']}.",
    },
    # What the grader records of the hidden checks that catch what the visible ones miss.
    "catalog_capped_at_twenty": {
        "catalog_at_unseen_sizes": "The catalog must list all 23 runbooks when the store holds 23; yours lists 20.",
        HIDDEN_BUDGET: "With 23 runbooks, asked \"How many runbooks have service 'billing'?\", the agent answered 4 from your server; "
        "the answer is 5.",
    },
    "runbook_id_read_as_a_number": {
        "runbooks_by_unseen_ids": "There is no runbook 'RB-03', so reading runbooks://runbooks/RB-03 must fail with a ResourceError; "
        'yours answered \'{"id": "RB-3", "title": "Notifications outage playbook 3", "service": "notificat\'.',
    },
    "reading_a_sev1_runbook_leaves_a_note": {
        "unseen_reads_change_nothing": "Reading runbook RB-3 (runbooks://runbooks/RB-3) changed state (1 change(s) recorded): "
        "a resource read must be read-only.",
    },
    "acknowledged_by_a_fixed_person": {
        "actions_on_unseen_alerts": "Acknowledging ALERT-4 again, by another person, must change state 1 time(s), on ALERT-4; "
        "the changes were: nothing.",
    },
    "unknown_alert_judged_by_its_number": {
        "actions_on_unseen_alerts": "acknowledge_alert(alert_id='ALERT-0', by='incident-lead'), an alert that does not exist, must be "
        "an error result with errorCategory 'not_found'; got isError true, errorCategory None, isRetryable None, "
        "text 'Error executing tool acknowledge_alert'.",
    },
}


@pytest.mark.parametrize(("mistake", "edits", "expected"), [pytest.param(i, e, f, id=i) for i, e, f in MISTAKES])
def test_a_realistic_mistake_fails_exactly_the_checks_it_should(mistake: str, edits, expected: set[str]) -> None:
    assert_fails_exactly(grade(mutate(SOLUTION, *edits)), expected, checks, MESSAGES.get(mistake))


def test_every_check_has_a_catalogued_mistake_that_fails_its_skill_alone_or_with_named_others() -> None:
    covered = set().union(*(expected for _, _, expected in MISTAKES))
    assert covered == ALL_CHECKS
    assert len(EDITS) == len(MISTAKES)
    # Each visible check has a mistake that fails it and at most the hidden check of its skill; the agent reads
    # the catalog and the runbooks, so whatever it stumbles on fails a resource check too.
    for shown, hidden in SKILLS.items():
        within = [mistake for mistake, _, expected in MISTAKES if shown in expected and expected <= {shown, hidden}]
        assert bool(within) == (shown != BUDGET), shown
    # Each hidden check has a mistake that every visible check misses.
    assert set().union(*(expected for _, _, expected in HIDDEN_ONLY)) == HIDDEN
    assert all(expected <= HIDDEN for _, _, expected in HIDDEN_ONLY)
    assert set(MESSAGES) <= set(EDITS)
    for mistake, edits, expected in MISTAKES:
        assert set(MESSAGES.get(mistake, {})) <= expected, mistake
        # Only the cell the mistake is about changes.
        code = mutate(SOLUTION, *edits)
        assert sum(a != b for a, b in zip(cells(code), cells(SOLUTION), strict=True)) == 1, mistake


@pytest.mark.parametrize(("mistake", "edits", "expected"), [pytest.param(i, e, f, id=i) for i, e, f in HIDDEN_ONLY])
def test_a_mistake_the_visible_checks_miss_passes_them_in_the_notebook_and_fails_a_hidden_check(
    mistake: str, edits, expected
) -> None:
    code = mutate(SOLUTION, *edits)
    fresh_alerts()
    namespace, load_error = load_learner_code(LAB, code)
    assert load_error is None
    lab = Lab(LAB)

    in_the_notebook = {name: lab.run(name, namespace) for name in lab.checks.checks}
    graded = grade(code)

    assert failed(in_the_notebook) == set(), {n: r.message for n, r in in_the_notebook.items() if not r.passed}
    assert failed(graded) == expected and expected <= HIDDEN


SAMPLES = json.loads(
    (Path(__file__).resolve().parents[1] / "submissions" / "expected.json").read_text(encoding="utf-8")
)[LAB]["samples"]
SAMPLES_FOR_HIDDEN_CHECKS = sorted(
    name
    for name, spec in SAMPLES.items()
    if spec["failed"] and spec["failed"] != "all" and set(spec["failed"]) <= HIDDEN
)


def test_the_samples_that_only_hidden_checks_catch_cover_every_hidden_check() -> None:
    assert {"runbook_id_read_as_a_number", "unknown_alert_judged_by_its_number"} <= set(SAMPLES_FOR_HIDDEN_CHECKS)
    assert set().union(*(SAMPLES[name]["failed"] for name in SAMPLES_FOR_HIDDEN_CHECKS)) == HIDDEN


@pytest.mark.parametrize("sample", SAMPLES_FOR_HIDDEN_CHECKS)
def test_a_sample_that_only_hidden_checks_catch_passes_every_visible_check(sample: str) -> None:
    notebook = Path(__file__).resolve().parents[1] / "submissions" / sample / LAB / f"{LAB}.ipynb"
    code = answer_code(read_notebook(notebook))

    results = grade(code)

    assert {name for name in VISIBLE if not results[name].passed} == set()
    assert failed(results) == set(SAMPLES[sample]["failed"])


# What no verdict a learner reads of a hidden check may show: its cases (numbers included) and the scenario's ids,
# as the checks write them.
HIDDEN_CASES = (
    *grading.HIDDEN_IDS,
    *grading.HIDDEN_UNKNOWN_IDS,
    *grading.ACK_ALERTS,
    *grading.NOTE_ALERTS,
    *(alert for alerts in grading.HIDDEN_NO_SUCH_ALERTS.values() for alert in alerts),
    "RB-",
    "ALERT",
    "runbooks://",
    "incident-lead",
    "Paged the owner",
)


def test_a_failed_hidden_checks_verdict_as_shown_names_its_skill_and_mistake_and_none_of_its_cases() -> None:
    seen = set()
    for _, edits, expected in HIDDEN_ONLY:
        results = grade(mutate(SOLUTION, *edits))
        for name in expected:
            recorded = results[name]
            shown = as_shown(checks[name], recorded)
            assert not shown.passed and shown.score == 0 and shown.points == recorded.points
            assert checks[name].title in shown.message and checks[name].mistake in shown.message
            assert recorded.message not in shown.message
            for case in HIDDEN_CASES:
                assert case not in shown.message, (name, case)
            assert not re.search(r"\d", shown.message), shown.message
            assert_sentence_in_words(shown.message)
            seen.add(name)
    assert seen == HIDDEN


def test_the_hidden_checks_titles_and_mistakes_name_no_case() -> None:
    for name in HIDDEN:
        for words in (checks[name].title, checks[name].mistake):
            assert not re.search(r"\d", words), words
            for case in HIDDEN_CASES:
                assert case not in words, (name, case)


def test_a_passed_hidden_check_is_shown_by_its_skill_alone() -> None:
    for name, result in grade(SOLUTION, HIDDEN).items():
        shown = as_shown(checks[name], result)
        assert shown.passed and shown.message.startswith(checks[name].title)
        assert not re.search(r"\d", shown.message)


def test_the_hidden_checks_cases_are_not_the_notebooks() -> None:
    assert not set(grading.HIDDEN_IDS) & set(visible.RUNBOOKS)
    assert not set(grading.HIDDEN_UNKNOWN_IDS) & set(visible.UNKNOWN_IDS)
    shown_sizes = {kit_lab3.DEFAULT_SIZE, visible.SMALL_SIZE, 0}
    assert not set(grading.HIDDEN_SIZES) & shown_sizes and not set(grading.BUDGET_SIZES) & shown_sizes
    assert visible.ALERT not in grading.ACK_ALERTS + grading.NOTE_ALERTS
    hidden_unknown = {alert for alerts in grading.HIDDEN_NO_SUCH_ALERTS.values() for alert in alerts}
    assert not hidden_unknown & set(visible.NO_SUCH_ALERT.values())
    assert not hidden_unknown & set(kit_lab3.ALERTS)
    assert set(grading.ACK_ALERTS + grading.NOTE_ALERTS) <= set(kit_lab3.ALERTS)


def test_a_mistake_gets_the_same_verdict_and_messages_on_every_run() -> None:
    for mistake in ("catalog_trimmed_to_the_first_five", "acknowledge_also_logs_a_note", "catalog_read_adds_a_note"):
        code = mutate(SOLUTION, *EDITS[mistake])
        assert grade(code) == grade(code), mistake
    assert grade(SOLUTION) == grade(SOLUTION)


def test_the_empty_catalog_message_says_how_many_entries_came_back() -> None:
    message = grade(mutate(SOLUTION, *EDITS["catalog_cached_when_the_cell_runs"]), {"empty_catalog_is_empty"})[
        "empty_catalog_is_empty"
    ].message

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
    assert results[BUDGET].message.startswith(
        "The agent could not work with your server: Reading the catalog (runbooks://catalog) failed"
    )


def test_code_without_a_server_fails_every_check_saying_so() -> None:
    code = SOLUTION.replace('server = MCPServer("runbooks")', 'mcp = MCPServer("runbooks")').replace(
        "@server.", "@mcp."
    )

    results = grade(code)

    assert failed(results) == ALL_CHECKS
    for result in results.values():
        assert not result.host_lost
        assert_sentence_in_words(result.message)
        assert result.message.endswith(f"{NO_SERVER}."), result.message
    assert results["tools_are_the_actions"].message == f"{NO_SERVER}."
    assert results["reads_change_nothing"].message == f"Reading the catalog (runbooks://catalog) failed: {NO_SERVER}."


def test_a_server_that_is_not_an_mcpserver_is_named_with_what_it_is() -> None:
    code = mutate(
        SOLUTION,
        ('server = MCPServer("runbooks")', 'from mcp.server.lowlevel import Server\n\nserver = Server("runbooks")'),
    )
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
    code = mutate(
        SOLUTION,
        ('server = MCPServer("runbooks")', 'from mcp.server.fastmcp import FastMCP\n\nserver = FastMCP("runbooks")'),
    )
    cell, line = line_of(code, "from mcp.server.fastmcp import FastMCP")

    results = grade(code)

    assert failed(results) == ALL_CHECKS
    for result in results.values():
        assert (
            NO_SERVER + ". Your answer cells failed to run: ModuleNotFoundError: No module named 'mcp.server.fastmcp'"
            in result.message
        )
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
        assert (
            f"{NO_SERVER}. Your answer cells failed to run: SyntaxError: expected ':' (line {line} of answer cell {cell})"
            in result.message
        )
        assert_sentence_in_words(result.message)


def test_a_syntax_error_in_the_tools_cell_costs_only_the_tool_checks() -> None:
    code = mutate(
        SOLUTION,
        (
            "def add_note(alert_id: str, text: str) -> CallToolResult:",
            "def add_note(alert_id: str, text: str) -> CallToolResult",
        ),
    )

    results = grade(code)

    assert failed(results) == TOOL_CHECKS
    for name in TOOL_CHECKS:
        assert not results[name].host_lost
        assert_sentence_in_words(results[name].message)


def test_a_syntax_error_in_the_tools_cell_is_named_with_its_line() -> None:
    code = mutate(
        SOLUTION,
        (
            "def add_note(alert_id: str, text: str) -> CallToolResult:",
            "def add_note(alert_id: str, text: str) -> CallToolResult",
        ),
    )
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
    assert sum(r.score for r in results) == 27


def test_the_grader_sees_a_side_effect_in_a_resource_read_through_the_journal() -> None:
    results = grade_code(LAB, mutate(SOLUTION, *EDITS["catalog_read_adds_a_note"]))

    failures = {r.name: r.message for r in results if not r.passed}
    assert failures == MESSAGES["catalog_read_adds_a_note"]
    assert sum(r.score for r in results) == 23
