"""Lab 2's checks, visible and hidden together, against the reference solution, a catalogue of realistic
wrong answers, and broken code.

Every case grades code the way the grader does: the code runs only inside the learner
host, built in process, and each check drives it over one MCP session. The two hidden
property checks search generated cases deterministically and report the smallest
disagreement (to the instructor; a learner sees only the check's skill); the catalogue pins
that smallest case for every mistake they catch.

``config_servers_start_for_real`` starts real stdio servers. It reads nothing of the learner's
but the authored configuration (PROJECT_MCP_JSON, USER_SERVERS, LOCAL_SERVERS, resolved by the
reference resolver), so it runs only for code whose resolved stdio servers differ from the
solution's; for every other mistake its verdict is the solution's, which is tested once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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

from grader.labs.lab2_scopes_expansion import checks
from grader.notebook import answer_code, read_notebook
from grader.scopes import resolve_sources
from labkit.checking import run_check
from servers.learner_host import load_learner_code
from servers.learner_host.kit_lab2 import SCENARIO

LAB = "lab2_scopes_expansion"
REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "labs" / "source" / LAB / f"{LAB}.ipynb"
SOLUTION = answer_code(read_notebook(SOURCE))
ALL_CHECKS = set(checks.checks)
STARTS = "config_servers_start_for_real"
PROPERTY_CHECKS = {"expand_unseen_values", "resolve_unseen_configurations"}
HIDDEN_CHECKS = set(checks.hidden)
VISIBLE_CHECKS = ALL_CHECKS - HIDDEN_CHECKS
EXPAND_CHECKS = {name for name in ALL_CHECKS if name.startswith("expand_")}
RESOLVE_CHECKS = {name for name in ALL_CHECKS if name.startswith("resolve_")}
CONFIG_CHECKS = {name for name in ALL_CHECKS if name.startswith("config_")}


def stdio_servers(code: str) -> dict[str, tuple] | None:
    """The stdio servers config_servers_start_for_real would start for ``code``: name -> (command, args, env)."""
    namespace, _ = load_learner_code(LAB, code)
    try:
        sources = {
            scope: namespace[name]
            for scope, name in (("project", "PROJECT_MCP_JSON"), ("user", "USER_SERVERS"), ("local", "LOCAL_SERVERS"))
        }
        sources["project"] = sources["project"]["mcpServers"]
        resolved = resolve_sources(sources, {SCENARIO["tracker_token_variable"]: "test-token"}, project=REPO)
    except Exception:  # noqa: BLE001 - anything unusual: let the check itself decide
        return None
    return {n: (s["command"], s["args"], s["env"]) for n, s in resolved.servers.items() if s["type"] == "stdio"}


def checks_for(code: str) -> set[str]:
    """Every check; config_servers_start_for_real only when the servers it would start differ from the solution's.

    That check reads nothing of the learner's but the authored configuration, resolves it with
    the reference resolver and starts each stdio server: with the same servers, its verdict is
    the solution's, which test_the_solution_passes_every_check pins.
    """
    mine = stdio_servers(code)
    if mine is not None and mine == SOLUTION_STDIO:
        return ALL_CHECKS - {STARTS}
    return ALL_CHECKS


# hosted(code): a session with a host running ``code``; grade(code, names=None): the checks of
# the lab (all, or ``names``), in order, over one such session.
hosted = partial(labtests.hosted, LAB)
grade = partial(labtests.grade, LAB)


BLANK = blank_template(SOURCE)
SOLUTION_STDIO = stdio_servers(SOLUTION)


# --- the reference solution -------------------------------------------------------------------


def test_the_lab_has_fourteen_visible_and_six_hidden_checks_worth_forty_five_points() -> None:
    assert len(VISIBLE_CHECKS) == 14 and len(HIDDEN_CHECKS) == 6
    assert checks.total_points == 45
    assert sum(checks[n].points for n in VISIBLE_CHECKS) == 30
    points = {name: check.points for name, check in checks.checks.items()}
    assert sum(points[n] for n in EXPAND_CHECKS) == 15
    assert sum(points[n] for n in RESOLVE_CHECKS) == 16
    assert sum(points[n] for n in CONFIG_CHECKS) == 14
    # Each skill (answer cell) has hidden checks of 1 to 3 points.
    for part in (EXPAND_CHECKS, RESOLVE_CHECKS, CONFIG_CHECKS):
        assert part & HIDDEN_CHECKS
    assert all(1 <= points[n] <= 3 for n in HIDDEN_CHECKS)


def test_the_notebooks_graded_cells_are_the_checks_with_their_points_in_order() -> None:
    assert graded_cell_points(SOURCE) == {name: check.points for name, check in checks.checks.items()}
    assert list(graded_cell_points(SOURCE)) == list(checks.checks)


def test_the_solution_passes_every_check() -> None:
    results = grade(SOLUTION)

    assert set(results) == ALL_CHECKS
    assert failed(results) == set(), {n: r.message for n, r in results.items() if not r.passed}
    for name, result in results.items():
        assert result.score == result.points
        assert result.message == checks[name].title
        assert not result.host_lost


# --- one realistic wrong answer (or more) per check -------------------------------------------

NOTES = """    "notes": {"type": "stdio", "command": "python", "args": ["-m", "servers.notes"]},\n"""
EXPERIMENT = """    "desk-experiment": {
        "type": "stdio",
        "command": "python",
        "args": ["-m", "servers.support_desk"],
        "env": {"DESK_ROLE": "supervisor", "DESK_API_TOKEN": "dsk_live_8c1e55a0"},
    },
"""
DESK_SCRIPT = '"${CLAUDE_PROJECT_DIR:-.}/servers/support_desk/__main__.py"'
RESOLVER_LOOP = """(("local", local), ("project", project), ("user", user))"""

# (id, edits, the exact set of checks that must fail). A hidden check fails together with the
# visible one whenever the mistake shows on the cases it does not show too; several checks fail
# together where one mistake legitimately breaks several of them. A few mistakes pass every
# visible check and only a hidden check catches them (HIDDEN_ONLY).
MISTAKES: list[tuple[str, tuple[tuple[str, str], ...], set[str]]] = [
    # part A: expand_value
    (
        "default_applied_to_empty_string",
        (
            (
                """        if name in env:\n            return env[name]""",
                """        if env.get(name):\n            return env[name]""",
            ),
        ),
        {"expand_empty_is_set", "expand_unseen_values", "resolve_matches_reference", "resolve_unseen_configurations"},
    ),
    (
        "unset_variable_becomes_empty",
        (("""        return match.group(0)\n""", """        return ""\n"""),),
        {"expand_unseen_values", "expand_unset_stays_literal", "resolve_unseen_configurations"},
    ),
    (
        "credentials_never_blanked",
        (("""        if remote_field and name in CREDENTIAL_VARIABLES:\n            return ""\n""", ""),),
        {
            "expand_credentials_blank",
            "expand_matches_reference",
            "expand_unseen_credentials",
            "expand_unseen_values",
            "resolve_expands_fields",
            "resolve_matches_reference",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "credentials_blanked_in_every_field",
        (("""if remote_field and name in CREDENTIAL_VARIABLES:""", """if name in CREDENTIAL_VARIABLES:"""),),
        {
            "expand_credentials_blank",
            "expand_unseen_credentials",
            "expand_unseen_values",
            "resolve_expands_fields",
            "resolve_matches_reference",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "blanked_credential_keeps_its_default",
        (
            (
                """            return ""\n        if name in env:""",
                """            return default or ""\n        if name in env:""",
            ),
        ),
        {
            "expand_credentials_blank",
            "expand_matches_reference",
            "expand_unseen_credentials",
            "expand_unseen_values",
            "resolve_matches_reference",
            "resolve_unseen_configurations",
        },
    ),
    (
        "regex_without_the_default_form",
        (
            (
                r"""re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")""",
                r"""re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")""",
            ),
            ("""name, default = match.group(1), match.group(2)""", """name, default = match.group(1), None"""),
        ),
        {
            "expand_basic",
            "expand_credentials_blank",
            "expand_empty_is_set",
            "expand_matches_reference",
            "expand_unseen_credentials",
            "expand_unseen_values",
            "resolve_expands_fields",
            "resolve_matches_reference",
            "resolve_types_and_skips",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "only_the_first_reference_expands",
        (("""return REFERENCE.sub(replace, text)""", """return REFERENCE.sub(replace, text, count=1)"""),),
        {
            "expand_basic",
            "expand_matches_reference",
            "expand_unseen_values",
            "resolve_expands_fields",
            "resolve_matches_reference",
            "resolve_unseen_configurations",
        },
    ),
    (
        "default_runs_to_the_last_brace",
        ((r"""(?::-([^}]*))?\}""", r"""(?::-(.*))?\}"""),),
        # The visible table has two references with a default in one value.
        {
            "expand_matches_reference",
            "expand_unseen_values",
            "resolve_matches_reference",
            "resolve_unseen_configurations",
        },
    ),
    # part B: resolve_servers
    (
        "user_beats_local",
        ((RESOLVER_LOOP, """(("user", user), ("project", project), ("local", local))"""),),
        {
            "resolve_matches_reference",
            "resolve_no_field_merge",
            "resolve_precedence",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "project_beats_local",
        ((RESOLVER_LOOP, """(("project", project), ("local", local), ("user", user))"""),),
        {
            "resolve_matches_reference",
            "resolve_precedence",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "fields_merged_across_scopes",
        (
            (
                """            if name in result:\n                continue\n""",
                (
                    """            if name in result:\n                lower = expand_fields(entry, env, kind != "stdio")\n"""
                    """                for key in ("args", "env", "headers"):\n"""
                    """                    if key in lower and not result[name].get(key):\n"""
                    """                        result[name][key] = lower[key]\n"""
                    """                continue\n"""
                ),
            ),
        ),
        {
            "resolve_matches_reference",
            "resolve_no_field_merge",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "streamable_http_not_aliased",
        (("""            kind = {"streamable-http": "http"}.get(kind, kind)\n""", ""),),
        {"resolve_matches_reference", "resolve_types_and_skips", "resolve_unseen_configurations"},
    ),
    (
        "url_without_type_taken_as_http",
        (
            (
                """                if "url" in entry:\n                    continue\n                kind = "stdio\"""",
                """                kind = "http" if "url" in entry else "stdio\"""",
            ),
        ),
        {"resolve_types_and_skips", "resolve_unseen_combinations", "resolve_unseen_configurations"},
    ),
    (
        "sdk_entry_not_skipped",
        (("""            if kind == "sdk":\n                continue\n""", ""),),
        {"resolve_types_and_skips", "resolve_unseen_combinations", "resolve_unseen_configurations"},
    ),
    (
        "skipped_entry_still_claims_its_name",
        (
            ("""    result = {}\n""", """    result = {}\n    claimed = set()\n"""),
            (
                """        for name, entry in servers.items():\n""",
                """        for name, entry in servers.items():\n            if name in claimed:\n                continue\n            claimed.add(name)\n""",
            ),
        ),
        # The visible cases never define a skipped entry and a usable one under the same name.
        {"resolve_unseen_combinations", "resolve_unseen_configurations"},
    ),
    (
        "remote_fields_not_blanked",
        (("""expand_fields(entry, env, kind != "stdio")""", """expand_fields(entry, env, False)"""),),
        {
            "resolve_expands_fields",
            "resolve_matches_reference",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "args_not_expanded",
        (
            (
                """for key in ("command", "args", "env", "url", "headers"):""",
                """for key in ("command", "env", "url", "headers"):""",
            ),
        ),
        {"resolve_expands_fields", "resolve_matches_reference", "resolve_unseen_configurations"},
    ),
    (
        "env_without_its_empty_default",
        (("""\"env": expanded.get("env") or {}""", """\"env": expanded.get("env")"""),),
        {
            "resolve_matches_reference",
            "resolve_no_field_merge",
            "resolve_precedence",
            "resolve_types_and_skips",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "headers_without_their_empty_default",
        (("""\"headers": expanded.get("headers") or {}""", """\"headers": expanded.get("headers")"""),),
        {
            "resolve_matches_reference",
            "resolve_no_field_merge",
            "resolve_types_and_skips",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "empty_url_without_its_status",
        (
            (
                """                if entry["url"] == "":\n                    server["status"] = "not_configured"\n""",
                "",
            ),
        ),
        {
            "resolve_matches_reference",
            "resolve_types_and_skips",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    # Mistakes one example alone would miss: each is caught by a case of its own kind, visible or hidden.
    (
        "credentials_hard_coded_to_three_names",
        (
            (
                """if remote_field and name in CREDENTIAL_VARIABLES:""",
                """if remote_field and name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "NPM_TOKEN"):""",
            ),
        ),
        {
            "expand_credentials_blank",
            "expand_unseen_credentials",
            "expand_unseen_values",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "values_expanded_again",
        (
            (
                """    return REFERENCE.sub(replace, text)""",
                """    expanded = REFERENCE.sub(replace, text)\n    while expanded != text:\n        text, expanded = expanded, REFERENCE.sub(replace, expanded)\n    return expanded""",
            ),
        ),
        {"expand_matches_reference", "expand_unseen_values", "resolve_unseen_configurations"},
    ),
    (
        "bare_dollar_variable_expanded",
        (
            (
                """    return REFERENCE.sub(replace, text)""",
                """    text = REFERENCE.sub(replace, text)\n    return re.sub(r"\\$([A-Za-z_][A-Za-z0-9_]*)", lambda m: env.get(m.group(1), m.group(0)), text)""",
            ),
        ),
        # The generated configurations hold no bare $NAME: the expander's table and search find it.
        {"expand_matches_reference", "expand_unseen_values"},
    ),
    (
        "command_not_expanded",
        (
            (
                """for key in ("command", "args", "env", "url", "headers"):""",
                """for key in ("args", "env", "url", "headers"):""",
            ),
        ),
        {
            "resolve_expands_fields",
            "resolve_matches_reference",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "url_expanded_as_a_local_field",
        (
            (
                """        blank = remote and key in ("url", "headers")""",
                """        blank = remote and key == "headers\"""",
            ),
        ),
        {"resolve_expands_fields", "resolve_matches_reference", "resolve_unseen_configurations"},
    ),
    (
        "not_configured_judged_after_expansion",
        (("""                if entry["url"] == "":""", """                if expanded["url"] == "":"""),),
        {"resolve_matches_reference", "resolve_types_and_skips", "resolve_unseen_configurations"},
    ),
    # part C: the authored configuration
    (
        "tracker_token_written_in_mcp_json",
        (("""\"Bearer ${TRACKER_TOKEN}\"""", """\"Bearer trk_live_4f9a1c2e7b\""""),),
        {"config_no_secret_committed", "config_per_developer", "config_placeholders"},
    ),
    (
        "tracker_token_as_the_placeholders_default",
        (("""\"Bearer ${TRACKER_TOKEN}\"""", """\"Bearer ${TRACKER_TOKEN:-trk_live_4f9a1c2e7b}\""""),),
        {"config_no_secret_committed", "config_placeholders"},
    ),
    (
        "tracker_without_a_type",
        (
            (
                """\"type": "http",\n            "url": "https://tracker.example.com/mcp",""",
                """\"url": "https://tracker.example.com/mcp",""",
            ),
        ),
        # Claude Code skips it: no stdio server is lost, so they all still start, but no developer gets the tracker.
        {"config_per_developer", "config_placeholders"},
    ),
    (
        "notes_in_project_scope",
        (
            ("""USER_SERVERS = {\n""" + NOTES + "}", """USER_SERVERS = {}"""),
            (
                """    "mcpServers": {\n        "desk\"""",
                """    "mcpServers": {\n    """ + NOTES + """        "desk\"""",
            ),
        ),
        {"config_per_developer", "config_scopes"},
    ),
    (
        "experimental_token_in_user_scope",
        (
            ("""LOCAL_SERVERS = {\n""" + EXPERIMENT + "}", """LOCAL_SERVERS = {}"""),
            ("""USER_SERVERS = {\n""", """USER_SERVERS = {\n""" + EXPERIMENT),
        ),
        {"config_no_secret_committed", "config_per_developer", "config_scopes"},
    ),
    (
        "experimental_desk_committed_in_mcp_json",
        (
            ("""LOCAL_SERVERS = {\n""" + EXPERIMENT + "}", """LOCAL_SERVERS = {}"""),
            (
                """    "mcpServers": {\n        "desk\"""",
                """    "mcpServers": {\n    """ + EXPERIMENT.replace("\n    ", "\n        ") + """        "desk\"""",
            ),
        ),
        {"config_no_secret_committed", "config_per_developer", "config_scopes"},
    ),
    (
        "project_dir_without_a_default",
        ((DESK_SCRIPT, '"${CLAUDE_PROJECT_DIR}/servers/support_desk/__main__.py"'),),
        # Claude Code leaves ${CLAUDE_PROJECT_DIR} literal, so the desk's script is not found (nor judged startable).
        {"config_placeholders", "config_servers_start", STARTS},
    ),
    (
        "desk_path_relative_to_the_working_directory",
        ((DESK_SCRIPT, '"servers/support_desk/__main__.py"'),),
        # It starts, because servers start from the project root; it would not from any other
        # directory, which only the placeholder check can tell.
        {"config_placeholders"},
    ),
    (
        "desk_path_absolute_on_one_machine",
        ((DESK_SCRIPT, '"/home/alice/support-app/servers/support_desk/__main__.py"'),),
        {"config_placeholders", "config_servers_start", STARTS},
    ),
    (
        "notes_started_with_npx",
        (
            (
                """\"command": "python", "args": ["-m", "servers.notes"]""",
                """\"command": "npx", "args": ["-m", "servers.notes"]""",
            ),
        ),
        {"config_servers_start", STARTS},
    ),
    (
        "experimental_desk_module_misspelt",
        (
            (
                """\"args": ["-m", "servers.support_desk"],""",
                """\"args": ["-m", "servers.support_desk_experimental"],""",
            ),
        ),
        {"config_servers_start", STARTS},
    ),
    # Mistakes every visible check misses (tests/submissions holds samples with these edits).
    (
        "credentials_of_the_visible_cases_only",
        (
            (
                """if remote_field and name in CREDENTIAL_VARIABLES:""",
                """if remote_field and name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN"):""",
            ),
        ),
        {
            "expand_unseen_credentials",
            "expand_unseen_values",
            "resolve_unseen_combinations",
            "resolve_unseen_configurations",
        },
    ),
    (
        "local_desk_shadows_the_team_desk",
        (("""LOCAL_SERVERS = {\n    "desk-experiment": {""", """LOCAL_SERVERS = {\n    "desk": {"""),),
        # The local entry takes the team desk's name: you lose the team's desk, and one stdio server with it.
        {"config_per_developer", STARTS},
    ),
]
HIDDEN_ONLY = {
    "skipped_entry_still_claims_its_name",
    "credentials_of_the_visible_cases_only",
    "local_desk_shadows_the_team_desk",
}

EDITS = {mistake: edits for mistake, edits, _ in MISTAKES}
REMOTE_SERVER_LINE = """"url": expanded["url"],"""
SDK_LINE = line_of(mutate(SOLUTION, *EDITS["sdk_entry_not_skipped"]), REMOTE_SERVER_LINE)

# Failure messages, exactly. Every property check a mistake fails is here with the smallest
# case it reports (the search is deterministic, so the feedback is the same on every run);
# a few named checks' messages are here too.
E = "Smallest case where your expand_value differs: "
R = "Smallest configuration where your resolve_servers differs: "
MESSAGES: dict[str, dict[str, str]] = {
    "default_applied_to_empty_string": {
        "expand_unseen_values": E + "text='${V}', env={'V': ''}, remote_field=False: expected '', yours '${V}'.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'command': '${EXE:-uvx}'}}, env={'EXE': ''}: expected {'api': {'scope': 'project', 'type': 'stdio', 'command': '', 'args': [], 'env': {}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}.",
    },
    "unset_variable_becomes_empty": {
        "expand_unseen_values": E + "text='${V}', env={}, remote_field=False: expected '${V}', yours ''.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': 'https://s.example/${SEG}'}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://s.example/${SEG}', 'headers': {}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://s.example/', 'headers': {}}}.",
    },
    "credentials_never_blanked": {
        "expand_unseen_values": E
        + "text='${VAULT_TOKEN}', env={}, remote_field=True: expected '', yours '${VAULT_TOKEN}'.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${VAULT_TOKEN}'}}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': ''}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${VAULT_TOKEN}'}}}.",
    },
    "credentials_blanked_in_every_field": {
        "expand_unseen_values": E
        + "text='${VAULT_TOKEN}', env={}, remote_field=False: expected '${VAULT_TOKEN}', yours ''.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'command': 'uvx', 'env': {'LEVEL': '${VAULT_TOKEN}'}}}, env={}: expected {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {'LEVEL': '${VAULT_TOKEN}'}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {'LEVEL': ''}}}.",
    },
    "blanked_credential_keeps_its_default": {
        "expand_unseen_values": E + "text='${VAULT_TOKEN:-d}', env={}, remote_field=True: expected '', yours 'd'.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${PYPI_TOKEN:-p}/${SEG}'}}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '/${SEG}'}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': 'p/${SEG}'}}}.",
    },
    "regex_without_the_default_form": {
        "expand_unseen_values": E + "text='${V:-}', env={}, remote_field=False: expected '', yours '${V:-}'.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'command': '${EXE:-uvx}'}}, env={}: expected {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': '${EXE:-uvx}', 'args': [], 'env': {}}}.",
    },
    "only_the_first_reference_expands": {
        "expand_unseen_values": E
        + "text='${V}${V:-}', env={}, remote_field=False: expected '${V}', yours '${V}${V:-}'.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'command': 'uvx', 'env': {'LEVEL': '${PYPI_TOKEN:-p}/${SEG}'}}}, env={'SEG': ''}: expected {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {'LEVEL': 'p/'}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {'LEVEL': 'p/${SEG}'}}}.",
    },
    "default_runs_to_the_last_brace": {
        "expand_unseen_values": E + "text='${V:-}${V}', env={}, remote_field=False: expected '${V}', yours '}${V'.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${PYPI_TOKEN:-p}/${SEG}'}}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '/${SEG}'}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': ''}}}.",
        "expand_matches_reference": "A default ends at its own '}', not at the last one: expanding '${A:-d}${B}' in a value with env {'B': '2'} must give 'd2'; yours gives 'd}${B'.",
    },
    "user_beats_local": {
        "resolve_unseen_configurations": R
        + "user={}, local={'api': {'command': 'uvx'}}, project={'api': {'command': 'uvx'}}, env={}: expected {'api': {'scope': 'local', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}.",
    },
    "project_beats_local": {
        "resolve_unseen_configurations": R
        + "user={}, local={'api': {'command': 'uvx'}}, project={'api': {'command': 'uvx'}}, env={}: expected {'api': {'scope': 'local', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}.",
    },
    "fields_merged_across_scopes": {
        "resolve_unseen_configurations": R
        + "user={}, local={'api': {'command': 'uvx'}}, project={'api': {'type': 'http', 'url': 'https://q.example/mcp', 'headers': {}}}, env={}: expected {'api': {'scope': 'local', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}, yours {'api': {'scope': 'local', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}, 'headers': {}}}.",
    },
    "streamable_http_not_aliased": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'streamable-http', 'url': 'https://q.example/mcp'}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {}}}, yours {'api': {'scope': 'project', 'type': 'streamable-http', 'url': 'https://q.example/mcp', 'headers': {}}}.",
    },
    "url_without_type_taken_as_http": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'url': 'https://u.example/mcp'}}, env={}: expected {}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://u.example/mcp', 'headers': {}}}.",
    },
    "sdk_entry_not_skipped": {
        "resolve_unseen_configurations": f"resolve_servers raised KeyError: 'url' (line {SDK_LINE[1]} of answer cell {SDK_LINE[0]}) (smallest failing configuration: user={{}}, local={{}}, project={{'api': {{'type': 'sdk'}}}}, env={{}}).",
    },
    "skipped_entry_still_claims_its_name": {
        "resolve_unseen_configurations": R
        + "user={}, local={'api': {'url': 'https://u.example/mcp'}}, project={'api': {'command': 'uvx'}}, env={}: expected {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}, yours {}.",
        "resolve_unseen_combinations": "With user={}, local={'wiki': {'url': 'https://w.example/mcp'}}, project={'wiki': {'command': 'uvx', 'args': ['wiki-mcp']}}, env={} the servers must be {'wiki': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': ['wiki-mcp'], 'env': {}}}; yours are {}.",
    },
    "remote_fields_not_blanked": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${VAULT_TOKEN}'}}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': ''}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${VAULT_TOKEN}'}}}.",
    },
    "args_not_expanded": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'command': 'uvx', 'args': ['${SEG:-s}']}}, env={}: expected {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': ['s'], 'env': {}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': ['${SEG:-s}'], 'env': {}}}.",
    },
    "env_without_its_empty_default": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'command': 'uvx'}}, env={}: expected {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': None}}.",
    },
    "headers_without_their_empty_default": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': 'https://q.example/mcp'}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': None}}.",
    },
    "empty_url_without_its_status": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': ''}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': '', 'headers': {}, 'status': 'not_configured'}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': '', 'headers': {}}}.",
    },
    "credentials_hard_coded_to_three_names": {
        "expand_unseen_values": E
        + "text='${VAULT_TOKEN}', env={}, remote_field=True: expected '', yours '${VAULT_TOKEN}'.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${VAULT_TOKEN}'}}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': ''}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${VAULT_TOKEN}'}}}.",
    },
    "values_expanded_again": {
        "expand_unseen_values": E
        + "text='${V}', env={'W': '', 'V': '${W}'}, remote_field=False: expected '${W}', yours ''.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'command': 'uvx', 'args': ['${VAULT_TOKEN}']}}, env={'VAULT_TOKEN': '${SEG}', 'SEG': ''}: expected {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': ['${SEG}'], 'env': {}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [''], 'env': {}}}.",
    },
    "bare_dollar_variable_expanded": {
        "expand_unseen_values": E + "text='$V', env={'V': ''}, remote_field=False: expected '$V', yours ''.",
        "expand_matches_reference": "A default is literal text: its '$B' is not a reference: expanding '${A:-$B}' in a value with env {'B': 'b'} must give '$B'; yours gives 'b'.",
    },
    "command_not_expanded": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'command': '${EXE:-uvx}'}}, env={}: expected {'api': {'scope': 'project', 'type': 'stdio', 'command': 'uvx', 'args': [], 'env': {}}}, yours {'api': {'scope': 'project', 'type': 'stdio', 'command': '${EXE:-uvx}', 'args': [], 'env': {}}}.",
    },
    "url_expanded_as_a_local_field": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': 'https://t.example/mcp?key=${PYPI_TOKEN}'}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://t.example/mcp?key=', 'headers': {}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://t.example/mcp?key=${PYPI_TOKEN}', 'headers': {}}}.",
    },
    "not_configured_judged_after_expansion": {
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': '${ADDR}'}}, env={'ADDR': ''}: expected {'api': {'scope': 'project', 'type': 'http', 'url': '', 'headers': {}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': '', 'headers': {}, 'status': 'not_configured'}}.",
    },
    "tracker_token_written_in_mcp_json": {
        "config_no_secret_committed": "A real token is written in PROJECT_MCP_JSON, which is committed to git; reference it with ${VAR} instead.",
        "config_placeholders": "The tracker's Authorization header must be 'Bearer ${TRACKER_TOKEN}', each developer's own token; yours is 'Bearer trk_live_4f9a1c2e7b'.",
    },
    "tracker_without_a_type": {
        "config_placeholders": 'The tracker is a remote server: its entry needs "type": "http" (a url without a type is skipped).',
        "config_per_developer": "You, in this project: the team's tracker is not among the servers Claude Code uses (desk, desk-experiment, notes); is it skipped, or hidden by an entry of the same name in a scope that wins?",
    },
    "notes_in_project_scope": {
        "config_scopes": "your notes utility belongs in user scope only; yours is in: project (.mcp.json).",
        "config_per_developer": "A teammate who clones the repository: they get your notes utility (notes), which is not meant for them.",
    },
    "experimental_token_in_user_scope": {
        "config_scopes": "the experimental desk with its token belongs in local scope only; yours is in: user.",
        "config_no_secret_committed": "The experimental token belongs to this project only (local scope), not to every project (user scope).",
    },
    "project_dir_without_a_default": {
        "config_placeholders": "${CLAUDE_PROJECT_DIR} in PROJECT_MCP_JSON needs a default such as ${CLAUDE_PROJECT_DIR:-.}: it is set in the server's environment, not Claude Code's.",
    },
    "desk_path_relative_to_the_working_directory": {
        "config_placeholders": "Reference the team's desk script relative to the project root with ${CLAUDE_PROJECT_DIR:-.}, so it works wherever the repository is cloned.",
    },
    "notes_started_with_npx": {
        STARTS: "Server 'notes': the scenario's servers are started with python; yours runs 'npx'.",
    },
    "credentials_of_the_visible_cases_only": {
        "expand_unseen_values": E
        + "text='${VAULT_TOKEN}', env={}, remote_field=True: expected '', yours '${VAULT_TOKEN}'.",
        "resolve_unseen_configurations": R
        + "user={}, local={}, project={'api': {'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${VAULT_TOKEN}'}}}, env={}: expected {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': ''}}}, yours {'api': {'scope': 'project', 'type': 'http', 'url': 'https://q.example/mcp', 'headers': {'Authorization': '${VAULT_TOKEN}'}}}.",
        "expand_unseen_credentials": "Your expand_value gets 142 of 203 credential cases wrong; the first: expanding 'Token ${ACTIONS_RUNTIME_TOKEN}' in a remote server's url/headers with env {'ACTIONS_RUNTIME_TOKEN': 's3cret-0'} must give 'Token '; yours gives 'Token s3cret-0'.",
    },
    "local_desk_shadows_the_team_desk": {
        STARTS: "The scenario has three stdio servers (team desk, notes, experimental desk); your configuration resolves to 2.",
        "config_per_developer": "You, in this project: the team's desk server is not among the servers Claude Code uses (desk, notes, tracker); is it skipped, or hidden by an entry of the same name in a scope that wins?",
    },
}


@pytest.mark.parametrize(("mistake", "edits", "expected"), [pytest.param(i, e, f, id=i) for i, e, f in MISTAKES])
def test_a_realistic_mistake_fails_exactly_the_checks_it_should(mistake: str, edits, expected: set[str]) -> None:
    code = mutate(SOLUTION, *edits)
    assert_fails_exactly(grade(code, checks_for(code)), expected, checks, MESSAGES.get(mistake))


def test_every_check_has_a_catalogued_mistake_that_fails_it() -> None:
    covered = set().union(*(expected for _, _, expected in MISTAKES))
    assert covered == ALL_CHECKS
    assert len(EDITS) == len(MISTAKES)


def test_every_mistake_a_visible_check_misses_a_hidden_check_catches() -> None:
    # Every catalogued mistake costs points; those no visible check sees are the hidden checks' alone,
    # and between them they fail every hidden check.
    assert {mistake for mistake, _, expected in MISTAKES if not expected & VISIBLE_CHECKS} == HIDDEN_ONLY
    only_hidden = set().union(*(expected for mistake, _, expected in MISTAKES if mistake in HIDDEN_ONLY))
    assert only_hidden == HIDDEN_CHECKS


def test_every_mistake_a_property_check_catches_pins_its_smallest_case() -> None:
    assert set(MESSAGES) <= set(EDITS)
    for mistake, _, expected in MISTAKES:
        pinned = set(MESSAGES.get(mistake, {}))
        assert pinned <= expected, mistake
        assert pinned & PROPERTY_CHECKS == expected & PROPERTY_CHECKS, mistake


def test_servers_are_started_for_every_mistake_that_changes_them() -> None:
    assert len(SOLUTION_STDIO) == 3
    started = set()
    for mistake, edits, expected in MISTAKES:
        code = mutate(SOLUTION, *edits)
        # Only the cell the mistake is about changes.
        changed = [i for i, (a, b) in enumerate(zip(cells(code), cells(SOLUTION), strict=True)) if a != b]
        assert len(changed) == 1, mistake
        if STARTS in checks_for(code):
            started.add(mistake)
            assert changed == [2], mistake
        else:
            assert STARTS not in expected, mistake
    # A desk script written relative to the working directory runs config_servers_start_for_real, which passes.
    assert started == {
        "project_dir_without_a_default",
        "desk_path_relative_to_the_working_directory",
        "desk_path_absolute_on_one_machine",
        "notes_started_with_npx",
        "experimental_desk_module_misspelt",
        "local_desk_shadows_the_team_desk",
    }


# --- what the messages say ------------------------------------------------------------------------


def test_a_failure_message_says_what_was_expected_and_what_came_back() -> None:
    code = mutate(SOLUTION, *EDITS["default_applied_to_empty_string"])
    results = grade(code, {"expand_empty_is_set", "expand_unseen_values"})

    assert results["expand_empty_is_set"].message == (
        "The docs' example of an empty API_BASE_URL: expanding '${API_BASE_URL:-https://api.example.com}/mcp' in a value with env "
        "{'API_BASE_URL': ''} must give '/mcp'; yours gives 'https://api.example.com/mcp'."
    )
    assert "env={'V': ''}" in results["expand_unseen_values"].message


def test_a_property_check_gives_the_same_smallest_case_on_every_run() -> None:
    code = mutate(SOLUTION, *EDITS["default_applied_to_empty_string"])
    with hosted(code) as host:
        first = [run_check(checks[name], host) for name in sorted(PROPERTY_CHECKS)]
        second = [run_check(checks[name], host) for name in sorted(PROPERTY_CHECKS)]
    again = grade(code, PROPERTY_CHECKS)

    for one, two in zip(first, second, strict=True):
        assert not one.passed
        assert one.message == two.message
        assert one.message == again[one.name].message


GRADE_IN_THIS_FOLDER = """
import json, sys
from grader.engine.grading import grade_code
results = grade_code(sys.argv[1], open(sys.argv[2], encoding="utf-8").read(), json.loads(sys.argv[3]))
print(json.dumps({r.name: r.passed for r in results}))
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "hypothesis")[:3]))
"""


def test_grading_leaves_nothing_in_the_folder_it_runs_from(tmp_path: Path) -> None:
    # A fresh process, as a grading worker is. A wrong expander and resolver, so the generated comparisons also shrink
    # a disagreement. The generated cases are stored: grading never imports hypothesis (it once wrote .hypothesis/
    # here, and its search cost about a second of CPU per process).
    code = tmp_path.parent / f"{tmp_path.name}-answers.py"
    code.write_text(mutate(SOLUTION, *EDITS["default_applied_to_empty_string"]), encoding="utf-8")
    names = sorted(ALL_CHECKS - {STARTS})
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYPOTHESIS")}

    done = subprocess.run(
        [sys.executable, "-c", GRADE_IN_THIS_FOLDER, LAB, str(code), json.dumps(names)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    passed = json.loads(done.stdout.splitlines()[-2])
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert {name for name, ok in passed.items() if not ok} == {
        "expand_empty_is_set",
        "expand_unseen_values",
        "resolve_matches_reference",
        "resolve_unseen_configurations",
    }
    assert list(tmp_path.iterdir()) == []


def test_a_resolver_that_raises_is_named_with_the_exception_and_its_line() -> None:
    code = mutate(SOLUTION, *EDITS["sdk_entry_not_skipped"])
    cell, line = line_of(code, REMOTE_SERVER_LINE)

    results = grade(code, {"resolve_types_and_skips"})

    assert (
        results["resolve_types_and_skips"].message
        == f"resolve_servers raised KeyError: 'url' (line {line} of answer cell {cell})"
    )


def test_a_server_that_does_not_start_is_named() -> None:
    code = mutate(SOLUTION, *EDITS["experimental_desk_module_misspelt"])

    message = grade(code, {STARTS})[STARTS].message

    assert message.startswith("Server 'desk-experiment' did not start and answer tools/list")
    assert_sentence_in_words(message)


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox user needs root")
def test_a_configured_command_runs_sandboxed_not_as_the_grader(tmp_path: Path) -> None:
    marker = tmp_path / "written-by-the-configuration"  # a folder only root may write in
    payload = f"open({str(marker)!r}, 'w').write('ran as the grader')"
    code = mutate(SOLUTION, ('"args": ["-m", "servers.notes"]', f'"args": ["-c", {payload!r}]'))

    message = grade(code, {STARTS})[STARTS].message

    # the folder the configuration writes into does not exist in the server's own view of the files
    assert message.startswith("Server 'notes' did not start and answer tools/list: FileNotFoundError"), message
    assert not marker.exists()


# --- the blank template and code that does not run ----------------------------------------------


def test_the_blank_template_has_no_solution_left() -> None:
    assert "BEGIN SOLUTION" not in BLANK
    assert BLANK.count("raise NotImplementedError()") == 4
    assert len(cells(BLANK)) == 3
    for name in ("PROJECT_MCP_JSON", "USER_SERVERS", "LOCAL_SERVERS", "dsk_live_", "CREDENTIAL_VARIABLES"):
        assert name not in BLANK


def test_the_blank_template_fails_every_check_saying_what_is_not_written_yet() -> None:
    results = grade(BLANK)

    assert failed(results) == ALL_CHECKS
    for name, result in results.items():
        assert not result.host_lost
        assert_sentence_in_words(result.message)
        if name in EXPAND_CHECKS:
            assert "expand_value is not written yet (it raises NotImplementedError)" in result.message, result.message
        elif name in RESOLVE_CHECKS:
            assert "resolve_servers is not written yet (it raises NotImplementedError)" in result.message, (
                result.message
            )
        else:
            assert result.message.startswith(
                "Your answer cells do not define PROJECT_MCP_JSON, USER_SERVERS, LOCAL_SERVERS"
            ), result.message
    assert results["expand_basic"].message == "expand_value is not written yet (it raises NotImplementedError)."
    assert (
        results["resolve_precedence"].message == "resolve_servers is not written yet (it raises NotImplementedError)."
    )


def test_a_property_check_on_an_unwritten_function_ends_in_one_full_stop() -> None:
    results = grade(BLANK, PROPERTY_CHECKS)

    for result in results.values():
        assert "is not written yet" in result.message
        assert not result.message.endswith(".."), result.message


def test_a_syntax_error_in_the_expanders_cell_is_named_with_its_line() -> None:
    code = mutate(
        SOLUTION,
        ("def expand_value(text, env, remote_field=False):", "def expand_value(text, env, remote_field=False)"),
    )
    cell, line = line_of(code, "def expand_value(")

    results = grade(code, ALL_CHECKS - {STARTS})

    # The resolver calls expand_value, so it cannot work either; the configuration is untouched.
    assert failed(results) == EXPAND_CHECKS | RESOLVE_CHECKS
    for name in EXPAND_CHECKS & VISIBLE_CHECKS:
        assert results[name].message == (
            "Your answer cells define no function named expand_value. Your answer cells failed to run: "
            f"SyntaxError: expected ':' (line {line} of answer cell {cell})."
        )
    for name in RESOLVE_CHECKS - PROPERTY_CHECKS:
        assert results[name].message.startswith("resolve_servers raised NameError: name 'expand_value' is not defined")
    for result in results.values():
        assert_sentence_in_words(result.message)


def test_a_syntax_error_in_the_configuration_cell_is_named_with_its_line() -> None:
    code = mutate(SOLUTION, ('"tracker": {', '"tracker" {'))
    cell, line = line_of(code, '"tracker" {')

    results = grade(code, CONFIG_CHECKS - {STARTS})

    assert failed(results) == CONFIG_CHECKS - {STARTS}
    for result in results.values():
        assert "SyntaxError" in result.message, result.message
        assert f"(line {line} of answer cell {cell})" in result.message, result.message


def test_a_configuration_cell_that_does_not_compile_costs_only_the_configuration_checks() -> None:
    code = mutate(SOLUTION, ('"tracker": {', '"tracker" {'))

    results = grade(code)

    assert failed(results) == CONFIG_CHECKS
    for name in CONFIG_CHECKS:
        assert results[name].message.startswith(
            "Your answer cells do not define PROJECT_MCP_JSON, USER_SERVERS, LOCAL_SERVERS"
        )
        assert not results[name].host_lost
