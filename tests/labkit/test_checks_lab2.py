"""Lab 2's visible checks as a learner runs them: ``lab.check`` in the kernel, on the cases they write out.

They pass on the solution, and a failure says which input was given and what was expected. Part C's
check judges the configuration as written, so it works where the scenario's servers are not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from solution_edits import replace_once

from grader.notebook import answer_code, read_notebook
from labkit import Lab
from labkit.checks import lab2_scopes_expansion as visible
from servers.learner_host import load_learner_code

LAB = "lab2_scopes_expansion"
SOLUTION = answer_code(read_notebook(Path(__file__).resolve().parents[2] / "labs" / "source" / LAB / f"{LAB}.ipynb"))


def kernel(code: str) -> dict:
    namespace, load_error = load_learner_code(LAB, code)
    assert load_error is None, load_error
    return namespace


def edited(old: str, new: str) -> str:
    return replace_once(SOLUTION, old, new)


@pytest.mark.parametrize("name", list(visible.checks.checks))
def test_every_visible_check_passes_on_the_solution_in_the_kernel(name: str, capsys) -> None:
    Lab(LAB).check(name, kernel(SOLUTION))
    assert capsys.readouterr().out.startswith(f"[PASS] {name} ")


def test_a_hidden_checks_cell_only_says_it_runs_at_grading(capsys) -> None:
    Lab(LAB).hidden("expand_unseen_values")
    assert capsys.readouterr().out.startswith(
        "[HIDDEN] expand_unseen_values: this check runs only when your submission is graded"
    )


def test_a_failure_shows_the_input_and_what_was_expected() -> None:
    wrong = kernel(
        edited(
            """        if name in env:\n            return env[name]""",
            """        if env.get(name):\n            return env[name]""",
        )
    )

    result = Lab(LAB).run("expand_empty_is_set", wrong)

    assert not result.passed
    assert result.message == (
        "The docs' example of an empty API_BASE_URL: expanding '${API_BASE_URL:-https://api.example.com}/mcp' in a value with env "
        "{'API_BASE_URL': ''} must give '/mcp'; yours gives 'https://api.example.com/mcp'."
    )


def test_the_resolvers_table_shows_the_configuration_and_the_servers_expected() -> None:
    wrong = kernel(
        edited("""                if entry["url"] == "":""", """                if expanded["url"] == "":""")
    )

    result = Lab(LAB).run("resolve_matches_reference", wrong)

    assert not result.passed
    assert result.message.startswith(
        "Only a url written as the empty string is not configured; its headers still expand. With user={}"
    )
    assert "'url': '${URLV}'" in result.message and "'status': 'not_configured'" in result.message


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        (
            '"${CLAUDE_PROJECT_DIR:-.}/servers/support_desk/__main__.py"',
            '"${CLAUDE_PROJECT_DIR}/servers/support_desk/__main__.py"',
            "keeps an unset reference without a default",
        ),
        (
            '"${CLAUDE_PROJECT_DIR:-.}/servers/support_desk/__main__.py"',
            '"/home/alice/support-app/servers/support_desk/__main__.py"',
            "exists on one machine only",
        ),
        (
            '"${CLAUDE_PROJECT_DIR:-.}/servers/support_desk/__main__.py"',
            '"${CLAUDE_PROJECT_DIR:-.}/servers/support_desk/main.py"',
            "which is not the scenario's script",
        ),
        ('"args": ["-m", "servers.notes"]', '"args": ["-m", "servers.note"]', "is not a module of the scenario"),
        (
            '"args": ["-m", "servers.notes"]',
            '"args": ["-c", "import servers.notes"]',
            "python -c runs code written on the command line",
        ),
        (
            '"command": "python", "args": ["-m", "servers.notes"]',
            '"command": "npx", "args": ["-m", "servers.notes"]',
            "the scenario's servers are started with python; yours runs 'npx'",
        ),
        ('"DESK_ROLE": "supervisor"', '"DESK_ROLE": 1', "env must map names to strings"),
    ],
    ids=[
        "project_dir_without_default",
        "absolute_path",
        "other_script",
        "misspelt_module",
        "dash_c",
        "npx",
        "env_not_strings",
    ],
)
def test_part_cs_visible_check_judges_each_stdio_server_as_written(old: str, new: str, says: str) -> None:
    result = Lab(LAB).run("config_servers_start", kernel(edited(old, new)))

    assert not result.passed
    assert says in result.message, result.message


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Relative to the project root, where Claude Code starts the server: it starts.
        ('"${CLAUDE_PROJECT_DIR:-.}/servers/support_desk/__main__.py"', '"servers/support_desk/__main__.py"'),
        (
            '"${CLAUDE_PROJECT_DIR:-.}/servers/support_desk/__main__.py"',
            '"${CLAUDE_PROJECT_DIR:-./}/servers/support_desk/__main__.py"',
        ),
        (
            '"command": "python", "args": ["-m", "servers.notes"]',
            '"command": "${CLAUDE_PROJECT_DIR:-.}/.venv/bin/python3", "args": ["-u", "-m", "servers.notes"]',
        ),
    ],
    ids=["relative_script", "default_with_a_slash", "venv_python_with_an_option"],
)
def test_part_cs_visible_check_accepts_other_ways_that_start(old: str, new: str) -> None:
    assert Lab(LAB).run("config_servers_start", kernel(edited(old, new))).passed
