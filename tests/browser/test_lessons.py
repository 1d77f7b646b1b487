"""Every lesson in JupyterLab in Chromium, as a learner meets it: Run All, then what the page shows.

The lessons run from a copy of notebooks/ in a temporary folder (conftest's ``course_lab``), so nothing is written
into the course.
Each lesson opens once in its own page, started while the tests read the lessons before it; the tests after it
read that page.
"""

from __future__ import annotations

import re

import pytest

from . import labpage

LESSONS = sorted(p.stem for p in (labpage.REPO / "notebooks").glob("0*.ipynb"))
WITH_PLOTS = {"01_structured_tool_errors", "02_server_scopes", "04_tools_vs_resources", "05c_search_and_checklist"}
ANSWER_TIMEOUT = 15_000  # ms for a widget's answer to follow one interaction
AHEAD = 2  # lessons started while the tests read the current one


@pytest.fixture(scope="module")
def lessons_lab(course_lab):
    """The shared JupyterLab (conftest's course_lab), whose notebooks/ is a copy of the course's."""
    return course_lab.ready()


@pytest.fixture(scope="module")
def started(lessons_lab, module_context):
    """Lessons opened in their own page with Run All clicked, a few ahead of the tests that read them, so that
    several kernels share the machine's cores (a lesson's kernel often waits on the servers it talks to)."""
    page = module_context.new_page()
    lessons_lab.login(page)
    page.close()
    runs = labpage.RunAhead(module_context, lessons_lab, {name: f"notebooks/{name}.ipynb" for name in LESSONS}, AHEAD)
    yield runs
    runs.close()


@pytest.fixture(scope="module", params=LESSONS)
def lesson(request, lessons_lab, started):
    """The lesson run with Run All; ``.ran`` is why Run All fell short, if it did."""
    page = started.take(request.param, f"lesson_{request.param}")
    yield page
    page.close()
    lessons_lab.shut_down_kernels(page.path)


def test_run_all_reaches_the_last_cell(lesson):
    assert lesson.ran is None, lesson.ran


def test_no_error_and_no_stderr_output(lesson):
    assert labpage.error_outputs(lesson) == []
    assert labpage.stderr_outputs(lesson) == [], "server logs or warnings shown as stderr"


def test_no_text_is_typeset_as_math(lesson):
    labpage.scroll_through(lesson)
    assert labpage.math_count(lesson) == 0, "a pair of $ signs was typeset as math"


def test_no_cyrillic_text(lesson):
    text = labpage.notebook_text(lesson)
    assert not labpage.CYRILLIC.search(text), labpage.CYRILLIC.search(text)


def test_plots_are_shown(lesson):
    images = lesson.locator(f"{labpage.NOTEBOOK} .jp-OutputArea-output img")
    if lesson.name not in WITH_PLOTS:
        pytest.skip("this lesson draws no plot")
    assert images.count() >= 1
    assert all(images.nth(i).evaluate("img => img.naturalWidth > 0") for i in range(images.count()))


def test_lesson_04s_quiz_is_unanswered_after_run_all(lesson):
    if lesson.name != "04_tools_vs_resources":
        pytest.skip("only lesson 04 has the try-it-yourself quiz")
    # Runs before the widget test picks anything: a module's tests run in the order they are written.
    pickers = cell_with(lesson, "pickers = {item: widgets.Dropdown(").locator(".widget-dropdown select")
    picked = [pickers.nth(i).evaluate("s => s.selectedOptions[0].textContent") for i in range(pickers.count())]
    assert picked and set(picked) == {"(choose)"}, picked
    verdict = check_cell(lesson).locator(".jp-Cell-outputWrapper").text_content()
    assert not re.search(r"\d/7 right", verdict), verdict


def cell_with(page, source: str):
    """The code cell whose code contains ``source``."""
    editor = page.locator(".jp-InputArea-editor", has_text=source)
    return page.locator(f"{labpage.NOTEBOOK} .jp-CodeCell").filter(has=editor).first


def check_cell(page):
    """Lesson 04's Check cell: its code is folded away, so it is found by its button."""
    return page.locator(f"{labpage.NOTEBOOK} .jp-CodeCell:has(.jp-OutputArea-output .widget-button)").first


def answers_once(cell, expected: str) -> list[str]:
    """The cell's outputs (the widget, then its answer) once the answer shows ``expected``."""
    cell.locator(".jp-Cell-outputWrapper").get_by_text(expected).first.wait_for(timeout=ANSWER_TIMEOUT)
    cell.scroll_into_view_if_needed()  # for the screenshot
    outputs = cell.evaluate(
        "c => [...c.querySelector('.jp-OutputArea').children].filter(o => o.classList.contains('jp-OutputArea-child'))"
        ".map(o => o.textContent)"
    )
    assert outputs and expected in outputs[-1], f"the answer is not the cell's last output: {outputs}"
    return outputs


def l01(page) -> tuple[list[str], str]:
    cell = cell_with(page, "picker = widgets.Dropdown(")
    cell.locator(".widget-dropdown select").first.select_option("permission")
    return answers_once(cell, "permission @ attempt 1/3 -> escalate: Permission denied"), r"@ attempt \d+/\d+ ->"


def l02(page) -> tuple[list[str], str]:
    cell = cell_with(page, "boxes = {")
    cell.locator(".widget-textarea textarea").nth(1).fill("{ not json")  # user, local, project, settings, env
    return answers_once(cell, "Cannot resolve: The local box is not valid JSON"), r"effective servers:|Cannot resolve:"


def l03(page) -> tuple[list[str], str]:
    cell = cell_with(page, "config_box = widgets.Textarea(")
    cell.locator(".widget-dropdown select").first.select_option(label="stdio")
    return answers_once(cell, "gateway (stdio):"), r"gateway \("


def l04(page) -> tuple[list[str], str]:
    pickers = cell_with(page, "pickers = {item: widgets.Dropdown(")
    pickers.locator(".widget-dropdown select").first.select_option("tool")  # send a Slack message: a tool
    check = check_cell(page)
    check.locator(".widget-button").click()
    return answers_once(check, "send a Slack message: tool, right"), r"\d+/7 right"


WIDGETS = {
    "01_structured_tool_errors": l01,
    "02_server_scopes": l02,
    "03_variable_expansion": l03,
    "04_tools_vs_resources": l04,
}


def test_each_widget_answers_one_interaction_with_one_current_answer(lesson):
    if lesson.name not in WIDGETS:
        pytest.skip("this lesson has no widget")
    outputs, one_answer = WIDGETS[lesson.name](lesson)
    labpage.shot(lesson, f"lesson_{lesson.name}_widget")
    assert len(outputs) == 2, f"the widget and one answer, not {len(outputs)} outputs: {outputs}"
    answers = re.findall(one_answer, "\n".join(outputs))  # in the widget's own outputs too
    assert len(answers) == 1, f"not exactly one current answer: {outputs}"


def test_the_page_reports_no_errors(lesson):
    lesson.console.check()
