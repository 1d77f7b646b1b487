"""The four labs in JupyterLab in Chromium, as a learner works them: released into a temporary course, opened
blank, answered wrong, answered right, validated.

A verdict is the whole message: ``[FAIL] <check> (0/N): <message>``, never a traceback into the course's code.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from . import labpage

LABS = labpage.LABS
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
NOT_A_VERDICT = re.compile(r"Traceback|File \"|labkit|grader/")
VALIDATE_TIMEOUT = 120_000  # ms: Validate saves the notebook and runs it in a fresh kernel
AHEAD = 0  # labs started while the tests work the current one (none: a lab is short)


def answer_cells(nb: dict) -> dict[str, int]:
    """grade id -> index among the code cells, for the answer cells."""
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return {
        c["metadata"]["nbgrader"]["grade_id"]: i
        for i, c in enumerate(code)
        if c["metadata"].get("nbgrader", {}).get("solution")
    }


def code_index(nb: dict, grade_id: str) -> int:
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return next(i for i, c in enumerate(code) if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


def solution(lab: str, grade_id: str) -> str:
    """The labs/source answer cell's code, its solution markers' lines dropped."""
    nb = json.loads((labpage.REPO / "labs" / "source" / lab / f"{lab}.ipynb").read_text())
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)
    return "\n".join(line for line in "".join(cell["source"]).splitlines() if line.strip() not in MARKERS)


def lab1_wrong() -> str:
    right = 'return error_result("transient", message, code, True, retryAfterSeconds=retry_after_seconds)'
    code = solution("lab1_error_results", "answer_results")
    assert right in code
    return code.replace(right, 'return error_result("transient", message, code, True)')


def lab2_wrong() -> str:
    code = solution("lab2_scopes_expansion", "answer_expand").splitlines()
    branch = next(
        i for i, line in enumerate(code) if line.strip() == "if remote_field and name in CREDENTIAL_VARIABLES:"
    )
    assert code[branch + 1].strip() == 'return ""'
    return "\n".join(code[:branch] + code[branch + 2 :])


LAB3_WRONG = '''import json

server = MCPServer("runbooks")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False))
def list_runbooks() -> CallToolResult:
    """List every runbook: id, title, service, severity."""
    data = {"runbooks": [{k: r[k] for k in ("id", "title", "service", "severity")} for r in STORE.runbooks]}
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data))], structured_content=data)
'''

# Per lab: the answer cell to write a plausible wrong answer into (None: its released starting code is the wrong
# answer), that answer, and the check that must then fail.
WRONG = {
    "lab1_error_results": ("answer_results", lab1_wrong, "results_transient"),
    "lab2_scopes_expansion": ("answer_expand", lab2_wrong, "expand_credentials_blank"),
    "lab3_tools_resources": ("answer_resources", lambda: LAB3_WRONG, "catalog_is_a_resource"),
    "lab4_server_integration": (None, None, "only_public_tools"),
}


@pytest.fixture(scope="module")
def course(released_labs):
    """The shared JupyterLab's temporary course (conftest's course_lab), its four labs released with
    ``python -m grader release`` (conftest's released_labs, started with the session)."""
    return released_labs()


@pytest.fixture(scope="module")
def labs_lab(course_lab, course):
    return course_lab.ready()


def learner_copy(course, lab: str, name: str) -> tuple[str, dict]:
    """A copy of the released lab for one scenario (server path, notebook), so scenarios do not share edits."""
    released = course / "release" / lab / f"{lab}.ipynb"
    copy = course / "learner" / name / lab / f"{lab}.ipynb"
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(released, copy)
    return str(copy.relative_to(course)), json.loads(released.read_text())


@pytest.fixture(scope="module")
def logged_in(labs_lab, module_context):
    page = module_context.new_page()
    labs_lab.login(page)
    page.close()
    return module_context


@pytest.fixture(scope="module")
def started(course, labs_lab, logged_in):
    """Each lab's blank copy opened in a page of its own with Run All clicked, a few ahead of the tests that read it."""
    paths = {lab: learner_copy(course, lab, "blank")[0] for lab in LABS}
    runs = labpage.RunAhead(logged_in, labs_lab, paths, AHEAD)
    yield runs
    runs.close()


@pytest.fixture(scope="module", params=LABS)
def blank(request, course, labs_lab, started):
    """The blank released lab, opened and run with Run All; ``.ran`` is why Run All fell short, if it did.

    Its tests then work it as a learner does, in this one page: a wrong answer, then the solution and Validate."""
    page = started.take(request.param, f"{request.param}_blank")
    page.lab = request.param
    page.nb = json.loads((course / "release" / page.lab / f"{page.lab}.ipynb").read_text())
    yield page
    page.close()
    labs_lab.shut_down_kernels(page.path)


def check_outputs(page, nb: dict) -> dict[str, str]:
    """grade id -> output text of every code cell that calls lab.check(."""
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    outputs = labpage.outputs_text(page)
    return {
        c["metadata"].get("nbgrader", {}).get("grade_id", str(i)): outputs[i]
        for i, c in enumerate(code)
        if "lab.check(" in "".join(c["source"])
    }


def test_run_all_on_a_blank_lab_reaches_the_last_cell(blank):
    assert blank.ran is None, blank.ran


def test_each_check_on_a_blank_lab_gives_a_verdict_and_no_traceback(blank):
    verdicts = check_outputs(blank, blank.nb)
    assert verdicts and all(v.startswith("[FAIL] ") for v in verdicts.values()), verdicts
    assert not [v for v in verdicts.values() if NOT_A_VERDICT.search(v)]


def test_no_text_in_a_lab_is_typeset_as_math(blank):
    labpage.scroll_through(blank)
    assert labpage.math_count(blank) == 0, "a pair of $ signs was typeset as math"


def test_a_wrong_answer_gives_its_check_s_verdict_and_no_traceback(blank):
    """On the blank lab, already run: one answer cell written wrong and run, then its check."""
    answer, wrong, check = WRONG[blank.lab]
    if answer:
        cell = labpage.code_cell(blank, code_index(blank.nb, answer))
        labpage.set_source(blank, cell, wrong())
        labpage.run_cell(blank, cell)
    graded = labpage.code_cell(blank, code_index(blank.nb, check))
    labpage.run_cell(blank, graded)
    graded.scroll_into_view_if_needed()
    labpage.shot(blank, f"{blank.lab}_wrong_answer")
    verdict = graded.locator(".jp-Cell-outputWrapper").text_content().strip()
    assert verdict.startswith(f"[FAIL] {check} (0/"), verdict
    assert not NOT_A_VERDICT.search(verdict), verdict


def test_the_solution_passes_every_check_and_validates(blank):
    """On the same page, after the wrong answer: every answer cell written right, the kernel restarted and its outputs
    cleared, Run All, then the toolbar's Validate."""
    for grade_id, index in answer_cells(blank.nb).items():
        labpage.set_source(blank, labpage.code_cell(blank, index), solution(blank.lab, grade_id))
    labpage.restart_and_clear(blank)
    labpage.run_all(blank)
    labpage.wait_all_run(blank)
    labpage.shot(blank, f"{blank.lab}_solution")
    verdicts = check_outputs(blank, blank.nb)
    assert verdicts and {k: v for k, v in verdicts.items() if not v.startswith("[PASS] ")} == {}
    assert labpage.error_outputs(blank) == []
    blank.locator(f"{labpage.NOTEBOOK} .jp-Toolbar").get_by_text("Validate", exact=True).click()
    blank.locator(".jp-Dialog").get_by_text("Success! Your notebook passes all the tests.").wait_for(
        timeout=VALIDATE_TIMEOUT
    )
    labpage.shot(blank, f"{blank.lab}_validated")


def test_the_blank_lab_s_page_reports_no_errors(blank):
    blank.console.check()
