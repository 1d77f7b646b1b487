"""The course's JupyterLab extension in Chromium: nbgrader's Validate button and Create Assignment sidebar show on
assignments (a notebook with a cell nbgrader marks) and not on lessons; a learner's JupyterLab has no Create
Assignment at all."""

from __future__ import annotations

import re
import shutil

import nbformat
import pytest
from nbgrader.preprocessors import ClearOutput
from playwright.sync_api import expect

from grader.course import ClearSolutionsToStartingCode

from . import labpage

LESSON = "01_structured_tool_errors.ipynb"
LAB = "lab1_error_results"
FOLDER = "extension"  # the instructor's files, in the shared JupyterLab
LEARNER_CONFIG = labpage.REPO / "jupyter" / "learner"  # what the learner's install adds to Jupyter's config path


def released(lab: str) -> nbformat.NotebookNode:
    """The lab as the release hands it out: solutions cleared to the starting code, no outputs."""
    nb = nbformat.read(labpage.REPO / "labs" / "source" / lab / f"{lab}.ipynb", as_version=4)
    for step in (ClearSolutionsToStartingCode(), ClearOutput()):
        for index, cell in enumerate(nb.cells):
            nb.cells[index], _ = step.preprocess_cell(cell, {"language": "python"}, index)
    return nb


def course_folder(root):
    """A lesson and a released lab, side by side in ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(labpage.REPO / "notebooks" / LESSON, root / LESSON)
    nbformat.write(released(LAB), root / f"{LAB}.ipynb")
    return root


@pytest.fixture(scope="module")
def instructor_lab(course_lab):
    """JupyterLab as the course's own environment has it, every part of nbgrader on: the shared one (conftest's
    course_lab), where this module's files are in ``extension/``."""
    course_folder(course_lab.root / FOLDER)
    return course_lab.ready()


@pytest.fixture(scope="module", autouse=True)
def learner_server(jupyter_lab, tmp_path_factory):
    """The learner's JupyterLab, started with the module's first test and waited for by the test that uses it."""
    root = course_folder(tmp_path_factory.mktemp("learner"))
    return jupyter_lab(root, env={"JUPYTER_CONFIG_PATH": str(LEARNER_CONFIG)}, wait=False)


@pytest.fixture(scope="module")
def learner_lab(learner_server):
    return learner_server.ready()


def validate_button(page):
    return page.locator(f"{labpage.NOTEBOOK} .jp-Toolbar").get_by_text("Validate", exact=True)


def create_assignment_tab(page):
    return page.locator(".jp-SideBar.jp-mod-right .lm-TabBar-tab", has_text="Create Assignment")


def open_in_file_browser(page, name: str) -> None:
    page.locator(".jp-DirListing-item", has_text=name).dblclick()
    expect(page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current", has_text=name)).to_be_visible()
    page.locator(f"{labpage.NOTEBOOK} .jp-Notebook .jp-Cell").first.wait_for()


def switch_to(page, name: str) -> None:
    page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text=name).click()
    expect(page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current", has_text=name)).to_be_visible()


def test_a_lesson_has_neither_until_an_instructor_makes_it_an_assignment(page, instructor_lab):
    """The tools follow the notebook in front. Nbgrader > Create assignment still opens the sidebar on any notebook,
    since making an assignment starts there; once a cell is marked, the notebook is an assignment and has Validate."""
    instructor_lab.login(page)
    labpage.open_notebook(page, instructor_lab, f"{FOLDER}/{LESSON}")
    expect(validate_button(page)).to_be_hidden()
    expect(create_assignment_tab(page)).to_have_count(0)
    labpage.shot(page, "course_ui_lesson")
    # (That Validate works on an assignment is tests/browser/test_labs.py's: it validates every lab.)
    open_in_file_browser(page, f"{LAB}.ipynb")
    expect(validate_button(page)).to_be_visible()
    expect(create_assignment_tab(page)).to_have_count(1)
    switch_to(page, LESSON)
    expect(validate_button(page)).to_be_hidden()
    expect(create_assignment_tab(page)).to_have_count(0)
    page.locator("#jp-menu-panel .lm-MenuBar-item", has_text=re.compile(r"^Nbgrader$")).click()
    page.locator('.lm-Menu-item[data-command="nbgrader:open-create-assignment"]').click()
    expect(create_assignment_tab(page)).to_have_count(1)
    expect(page.locator("#nbgrader-create_assignemnt")).to_be_visible()
    expect(validate_button(page)).to_be_hidden()
    page.locator("#nbgrader-create_assignemnt .nbgrader-CellType select").first.select_option("readonly")
    expect(validate_button(page)).to_be_visible()


def test_a_learner_has_validate_on_an_assignment_and_no_create_assignment(page, learner_lab):
    learner_lab.login(page)
    labpage.open_notebook(page, learner_lab, f"{LAB}.ipynb")
    expect(validate_button(page)).to_be_visible()
    expect(create_assignment_tab(page)).to_have_count(0)
    page.locator("#jp-menu-panel .lm-MenuBar-item", has_text=re.compile(r"^Nbgrader$")).click()
    expect(page.locator(".lm-Menu-item:not(.lm-mod-hidden)")).to_have_text(["Assignment List"])
    labpage.shot(page, "course_ui_learner_lab")
    page.keyboard.press("Escape")
    open_in_file_browser(page, LESSON)
    expect(validate_button(page)).to_be_hidden()
