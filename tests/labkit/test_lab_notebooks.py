"""The lab and quiz notebooks as a learner runs them in a real kernel: a failing check is its verdict line alone,
with no traceback; Run All on a blank released notebook reaches the last cell; the solution passes every visible
check; and no Markdown would be typeset as math.

nbclient stops at a cell that raises unless the cell is tagged ``raises-exception``, which is what JupyterLab's
Run All does too (it sends such a cell with ``stop_on_error`` false and goes on).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from grader.engine.grading import grade_code
from grader.notebook import answer_code, read_notebook
from grader.pipeline import DEFAULT_COURSE, Course
from grader.quizzes import QUIZ_MODULES

REPO = Path(__file__).resolve().parents[2]
LABS = ["lab1_error_results", "lab2_scopes_expansion", "lab3_tools_resources", "lab4_server_integration"]
QUIZZES = sorted(QUIZ_MODULES)
SOURCE = DEFAULT_COURSE / "source"
RAISES = "raises-exception"
CHECK_CALL = re.compile(r'^lab\.check\("(\w+)"\)$', re.MULTILINE)


def run(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Run every cell in order in a fresh kernel, stopping at an error as Run All does (tags honoured)."""
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    return nb


def errors(cell) -> list:
    return [o for o in cell.get("outputs", []) if o.output_type == "error"]


def text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def check_cells(nb) -> list[tuple[str, object]]:
    return [(m.group(1), c) for c in nb.cells if c.cell_type == "code" and (m := CHECK_CALL.search(c.source))]


# --- a verdict in a real kernel --------------------------------------------------------------------------------

WRONG_TRANSIENT = """
def error_result(category, message, code, retryable, **fields):
    return {"isError": True, "content": [{"type": "text", "text": message}],
            "structuredContent": {"errorCategory": category, "isRetryable": retryable, "code": code, **fields}}

def transient_error(message, retry_after_seconds=1.0, code="UPSTREAM_UNAVAILABLE"):
    return error_result("transient", message, code, False, retryAfterSeconds=retry_after_seconds)

def validation_error(message, field, reason, code="INVALID_ARGUMENT"):
    return error_result("validation", message, code, False, field=field, reason=reason)
"""


def tagged(source: str):
    cell = new_code_cell(source)
    cell.metadata["tags"] = [RAISES]
    return cell


def test_a_failing_check_in_a_kernel_is_an_error_whose_traceback_is_the_verdict_line_alone() -> None:
    nb = new_notebook(
        cells=[
            new_code_cell('from labkit import Lab\nlab = Lab("lab1_error_results")'),
            new_code_cell(WRONG_TRANSIENT),
            tagged('lab.check("results_transient")'),
            tagged('lab.check("results_validation")'),
            tagged('lab.check("results_everything")'),
            new_code_cell('print("the last cell ran")'),
        ]
    )

    failing, passing, unknown, last = run(nb).cells[2:]

    (error,) = errors(failing)
    assert error.ename == "FailedVerdict"
    assert error.traceback == [
        "[FAIL] results_transient (0/1): transient_error(...) must have isRetryable true; got False."
    ]
    assert [o.output_type for o in failing.outputs] == ["error"]  # the verdict once: nothing printed besides
    # A passing check prints its line and returns nothing, so no Out[] appears under it.
    assert [o.output_type for o in passing.outputs] == ["stream"]
    assert text(passing).startswith("[PASS] results_validation (1/1): ")
    assert errors(unknown)[0].traceback == [
        "[FAIL] results_everything: lab1_error_results has no check named 'results_everything'."
    ]
    assert text(last) == "the last cell ran\n"


# --- the notebooks as handed out, and their solutions ----------------------------------------------------------


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """The labs and quizzes released as ``python -m grader release`` hands them out (a copy of the course)."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(SOURCE, root / "source")  # the mock exam's link becomes a copy
    shutil.copy(DEFAULT_COURSE / "nbgrader_config.py", root / "nbgrader_config.py")
    Course(root).release(LABS + QUIZZES)
    return root / "release"


@pytest.mark.parametrize("lab", LABS)
def test_run_all_on_a_blank_released_lab_reaches_the_last_cell_with_one_verdict_line_per_check(released, lab) -> None:
    nb = run(nbformat.read(released / lab / f"{lab}.ipynb", as_version=4))

    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "Run All stopped before the last cell"
    checks = dict(check_cells(nb))
    assert checks
    for cell in code:
        shown = text(cell) + "".join("\n".join(e.traceback) for e in errors(cell))
        assert "Traceback" not in shown and "File " not in shown, cell.source
        assert not any(o.output_type == "stream" and o.name == "stderr" for o in cell.outputs), cell.source
    for name, cell in checks.items():
        (error,) = errors(cell)
        assert len(error.traceback) == 1 and error.traceback[0].startswith(f"[FAIL] {name} ("), error.traceback
    failed_elsewhere = [c.source for c in code if errors(c) and c not in checks.values()]
    assert failed_elsewhere == [], "only a graded check's cell may fail on a blank lab"


@pytest.mark.parametrize("lab", ["lab2_scopes_expansion", "lab3_tools_resources"])
def test_starting_code_that_runs_still_earns_nothing_when_graded(released, lab) -> None:
    # These labs hand out starting code instead of a stub that raises at module level; as handed out, the lab
    # must still score 0 on every check, visible and hidden.
    code = answer_code(nbformat.read(released / lab / f"{lab}.ipynb", as_version=4))

    assert [r.name for r in grade_code(lab, code) if r.passed] == []


@pytest.mark.parametrize("quiz", QUIZZES)
def test_run_all_on_a_blank_released_quiz_reaches_the_last_cell_without_an_error(released, quiz) -> None:
    nb = run(nbformat.read(released / quiz / f"{quiz}.ipynb", as_version=4))

    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    assert not any(errors(c) for c in code)


@pytest.mark.parametrize("lab", LABS)
def test_the_solution_passes_every_visible_check_in_its_notebook(lab) -> None:
    # Tagged cells no longer stop nbval, so this is where a solution failing its own visible check shows.
    nb = run(read_notebook(SOURCE / lab / f"{lab}.ipynb"))

    for name, cell in check_cells(nb):
        assert not errors(cell), (name, [e.traceback for e in errors(cell)])
        assert text(cell).startswith(f"[PASS] {name} ("), text(cell)
    assert not any(errors(c) for c in nb.cells if c.cell_type == "code")


# --- static: tags and Markdown ----------------------------------------------------------------------------------


def lab_notebooks() -> list[Path]:
    return sorted(SOURCE.glob("*/*.ipynb"))


@pytest.mark.parametrize("lab", LABS)
def test_exactly_the_check_cells_of_a_lab_let_run_all_go_on(lab) -> None:
    nb = read_notebook(SOURCE / lab / f"{lab}.ipynb")

    tagged_cells = [c for c in nb.cells if RAISES in c.get("metadata", {}).get("tags", [])]
    assert tagged_cells == [cell for _, cell in check_cells(nb)]
    assert all(c.metadata.get("nbgrader", {}).get("grade") for c in tagged_cells)


FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)


def typeset_dollars(markdown: str) -> list[str]:
    """The lines of ``markdown`` with a ``$`` outside code that is not escaped as ``\\$``: JupyterLab pairs such
    signs and typesets what lies between them as math ("$750 ... $500" loses its text)."""
    prose = CODE_SPAN.sub("", FENCE.sub("", markdown))
    return [line for line in prose.splitlines() if re.search(r"(?<!\\)\$", line)]


def test_the_math_finder_sees_bare_dollars_and_not_escaped_or_coded_ones() -> None:
    assert typeset_dollars("but $750 breaks the $500 policy") == ["but $750 breaks the $500 policy"]
    assert typeset_dollars("| the $750 refund |") == ["| the $750 refund |"]
    assert typeset_dollars("but \\$750 breaks the \\$500 policy, `${VAR}` and ``$`` stay") == []
    assert typeset_dollars('```json\n{"url": "${API}"}\n```\nafter') == []


@pytest.mark.parametrize("notebook", lab_notebooks(), ids=lambda p: p.parent.name)
def test_no_markdown_in_a_lab_or_quiz_would_be_typeset_as_math(notebook) -> None:
    nb = read_notebook(notebook)

    found = [line for c in nb.cells if c.cell_type == "markdown" for line in typeset_dollars(c.source)]
    assert found == [], f"write $ as \\$ outside code (or put it in backticks): {found}"
