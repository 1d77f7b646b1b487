"""The instructor's pages in Chromium: formgrader on the demo course, a lab's and a quiz's feedback, the cohort report.

The demo course is built once, on a few of the demo's samples and one quiz submission; JupyterLab starts in it as
the README's instructor command does. What the pages must show is read from the course's gradebook with
nbgrader's own API, never written here.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from grader.report import BAR, FULL_BAR

from .instructor_demo import (
    FAILING_LAB,
    QUIZ,
    QUIZ_STUDENT,
    QUIZ_WRONG,
    gradebook_figures,
)
from .labpage import REPO, shot, watch

# nbgrader's submission view loads MathJax from a CDN; blocked here as offline, it logs these two errors.
MATHJAX_CDN = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/"
MATHJAX_OFFLINE = (
    r"^console error: Failed to load resource: net::ERR_FAILED$",
    r"^page error: MathJax is not defined$",
)
# Formgrader has filled in its tables, or (a submission view) its score boxes.
LOADED = "() => window.models !== undefined && window.models.loaded === true"
GRADES_LOADED = "() => window.formgrader !== undefined && formgrader.grades !== undefined && formgrader.grades.loaded"
# The report's first table: each lab and its count in the "full marks" column.
FULL_MARKS = """() => {
    const table = document.querySelector('table');
    const column = [...table.tHead.rows[0].cells].findIndex(c => c.textContent.trim() === 'full marks');
    return [...table.tBodies[0].rows].map(r => [r.cells[0].textContent.trim(), column < 0 ? null : r.cells[column].textContent.trim()]);
}"""
# Each marked check of a feedback page: its name, its status class, the word of its verdict, its colours.
MARKS = """items => items.map(item => {
    const heading = item.querySelector('.panel-heading') || item;
    const style = getComputedStyle(heading);
    return {
        name: item.querySelector('code').textContent.trim(),
        status: [...item.classList].find(c => /^check-/.test(c)),
        word: item.querySelector('.verdict').textContent,
        colour: style.backgroundColor + ' ' + style.borderColor + ' ' + style.borderLeftColor,
    };
})"""
# How many pixels of each colour (r, g, b) an image holds, drawn on a canvas.
PIXELS = """(img, colours) => {
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const counts = colours.map(() => 0);
    for (let i = 0; i < data.length; i += 4) {
        colours.forEach(([r, g, b], k) => { if (data[i] === r && data[i + 1] === g && data[i + 2] === b) counts[k] += 1; });
    }
    return counts;
}"""
SCORE = re.compile(r"^\s*([\d.]+)\s*/\s*([\d.]+)\s*$")


@pytest.fixture(scope="module")
def demo(demo_build) -> Path:
    return demo_build.wait()


@pytest.fixture(scope="module")
def figures(demo: Path) -> dict:
    return gradebook_figures(demo)


@pytest.fixture(scope="module")
def server(jupyter_lab, demo: Path):
    """JupyterLab started in the demo course, as the README's instructor command starts it."""
    return jupyter_lab(demo)


@pytest.fixture(scope="module")
def formgrader(server, module_context):
    """A browser context logged in to the server; requests leaving 127.0.0.1 are blocked and listed."""
    blocked: list[str] = []

    def local_only(route) -> None:
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    module_context.route("**/*", local_only)
    page = module_context.new_page()
    server.login(page)
    page.close()
    module_context.blocked = blocked
    return module_context


def open_formgrader(context, server, path: str, *allow: str, loaded: str = LOADED):
    page = context.new_page()
    console = watch(page, *allow)
    page.goto(f"{server.url}{path}")
    page.wait_for_function(loaded, timeout=30_000)
    return page, console


def column(page, css: str) -> list[str]:
    return page.eval_on_selector_all(f"#main-table {css}", "cells => cells.map(c => c.textContent.trim())")


def rgb(colour: str) -> list[int]:
    return [int(colour[i : i + 2], 16) for i in (1, 3, 5)]


def score(text: str) -> tuple[float, float]:
    found = SCORE.match(text)
    assert found, f"not a score: {text!r}"
    return float(found[1]), float(found[2])


def assert_score(shown: str, expected: float, maximum: float, what: str) -> None:
    got, out_of = score(shown)
    assert (got, out_of) == (pytest.approx(expected, abs=0.005), pytest.approx(maximum, abs=0.005)), what


def test_manage_assignments_lists_every_assignment_with_the_gradebooks_submission_counts(formgrader, server, figures):
    page, console = open_formgrader(formgrader, server, "/formgrader/manage_assignments")
    shot(page, "instructor_formgrader_manage_assignments")
    names = column(page, "td.name")
    counts = dict(zip(names, column(page, "td.num-submissions"), strict=True))
    assert counts == {name: str(a["submissions"]) for name, a in figures["assignments"].items()}
    assert {"lab1_error_results", "lab2_scopes_expansion", "lab3_tools_resources", "lab4_server_integration"} <= set(
        names
    )
    assert figures["released"] == set(names), "the demo releases every assignment to its exchange"
    assert set(column(page, "td.status")) == {"released"}
    text = page.evaluate("document.body.textContent")
    assert "exchange directory" not in text and "does not exist" not in text, "the exchange-missing banner shows"
    page.close()
    console.check()
    assert "not recognized by" not in server.log_text(), (
        "the course's configuration sets an option nbgrader does not know"
    )


def test_manage_students_names_every_student(formgrader, server, figures):
    page, console = open_formgrader(formgrader, server, "/formgrader/manage_students")
    shot(page, "instructor_formgrader_manage_students")
    shown = dict(zip(column(page, "td.id"), column(page, "td.name"), strict=True))
    assert shown == {sid: f"{last}, {first}" for sid, (first, last) in figures["students"].items()}
    assert all(first and last for first, last in figures["students"].values()), figures["students"]
    assert "None" not in " ".join(shown.values())
    page.close()
    console.check()


def test_the_gradebook_pages_show_the_gradebooks_scores(formgrader, server, figures):
    page, console = open_formgrader(formgrader, server, "/formgrader/gradebook")
    shot(page, "instructor_formgrader_gradebook")
    shown = dict(zip(column(page, "td.name"), column(page, "td.score"), strict=True))
    assert set(shown) == set(figures["assignments"])
    for name, a in figures["assignments"].items():
        assert_score(shown[name], a["mean"], a["max"], name)
    lab = FAILING_LAB[1]
    page.goto(f"{server.url}/formgrader/gradebook/{lab}/{lab}")
    page.wait_for_function(LOADED, timeout=30_000)
    shot(page, f"instructor_formgrader_gradebook_{lab}")
    links = page.eval_on_selector_all("#main-table td.name a.name-shown", "links => links.map(a => a.href)")
    scores = dict(zip((link.rstrip("/").rsplit("/", 1)[-1] for link in links), column(page, "td.score"), strict=True))
    expected = {s["notebook_id"]: s for (_, name), s in figures["submissions"].items() if name == lab}
    assert set(scores) == set(expected)
    for notebook_id, s in expected.items():
        assert_score(scores[notebook_id], s["score"], s["max"], notebook_id)
    page.close()
    console.check()


def test_a_submission_view_shows_a_fail_verdict_and_the_gradebooks_auto_scores(formgrader, server, figures):
    student, lab, check = FAILING_LAB
    submission = figures["submissions"][student, lab]
    assert check in submission["failed"]
    page, console = open_formgrader(
        formgrader,
        server,
        f"/formgrader/submissions/{submission['notebook_id']}",
        *MATHJAX_OFFLINE,
        loaded=GRADES_LOADED,
    )
    page.locator(f"input.score#{check}").scroll_into_view_if_needed()
    shot(page, "instructor_formgrader_submission")
    text = page.evaluate("document.body.textContent")
    assert f"[FAIL] {check} " in text
    placeholders = dict(page.eval_on_selector_all("input.score", "inputs => inputs.map(i => [i.id, i.placeholder])"))
    assert {k: float(v) for k, v in placeholders.items()} == submission["auto"]
    page.close()
    console.check()
    assert all(url.startswith(MATHJAX_CDN) for url in formgrader.blocked), formgrader.blocked


# --- pages opened as files: feedback and the report ---


@pytest.fixture
def offline(page):
    """The test's page with every request other than a file or inline data blocked; ``page.requested`` lists them."""
    page.requested = []

    def files_only(route) -> None:
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            page.requested.append(route.request.url)
            route.abort()

    page.route("**/*", files_only)
    return page


def feedback_page(demo: Path, student: str, lab: str) -> Path:
    return demo / "feedback" / student / lab / f"{lab}.html"


def assert_feedback_names_checks_and_marks_failures(page, path: Path, checks: list[str], failed: list[str]) -> None:
    """The summary and the graded cells name every check; those not passed, and only those, are marked in words and
    in colour; no prompt shows; nothing was requested."""
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    assert page.requested == [], f"the feedback page requested {page.requested}"
    for where in ("#toc li.check", "div.nbgrader_cell.check"):
        marks = page.eval_on_selector_all(where, MARKS)
        assert sorted(m["name"] for m in marks) == sorted(checks), f"{where} does not name each check once"
        unpassed = [m for m in marks if m["status"] != "check-passed"]
        assert sorted(m["name"] for m in unpassed) == sorted(failed), f"{where} marks other checks than those failed"
        passed_colour = next(m["colour"] for m in marks if m["status"] == "check-passed")
        for m in unpassed:
            assert re.search(r"failed|partly", m["word"]) and m["colour"] != passed_colour, f"{where}: {m}"
    text = page.evaluate("document.body.textContent")
    assert "Out[" not in text, "a prompt shows under a verdict"
    assert "Test cell" not in text


def test_a_labs_feedback_names_its_checks_marks_its_failures_and_loads_nothing(offline, demo, figures):
    student, lab, check = FAILING_LAB
    submission = figures["submissions"][student, lab]
    assert_feedback_names_checks_and_marks_failures(
        offline, feedback_page(demo, student, lab), list(submission["auto"]), submission["failed"]
    )
    assert f"[FAIL] {check} " in offline.evaluate("document.body.textContent")
    shot(offline, "instructor_feedback_lab")


def test_a_quizs_feedback_names_its_questions_marks_the_wrong_ones_and_loads_nothing(offline, demo, figures):
    submission = figures["submissions"][QUIZ_STUDENT, QUIZ]
    assert sorted(submission["failed"]) == sorted(QUIZ_WRONG)
    assert_feedback_names_checks_and_marks_failures(
        offline, feedback_page(demo, QUIZ_STUDENT, QUIZ), list(submission["auto"]), submission["failed"]
    )
    shot(offline, "instructor_feedback_quiz")


def test_the_report_shows_its_histograms_and_mistakes_and_no_machine_folder(offline, demo, figures):
    offline.goto((demo / "report.html").as_uri())
    offline.wait_for_load_state("load")
    shot(offline, "instructor_report")
    assert offline.requested == [], f"the report requested {offline.requested}"
    images = offline.eval_on_selector_all("img", "imgs => imgs.map(i => [i.alt, i.complete && i.naturalWidth])")
    graded = [name for name, a in figures["assignments"].items() if a["submissions"]]
    assert len(images) >= len(graded), images
    assert all(width for _, width in images), images
    text = offline.evaluate("document.body.textContent")
    assert "Most common mistakes" in text
    assert dict(offline.evaluate(FULL_MARKS)) == {name: str(n) for name, n in figures["full_marks"].items()}
    # Full marks are a bar of their own, in their own colour: a near miss never shares it.
    for name in graded:
        scores = [s for (_, lab), s in figures["submissions"].items() if lab == name]
        image = offline.locator(f'img[alt="Score distribution of {name}"]')
        below, full = image.evaluate(PIXELS, [rgb(BAR), rgb(FULL_BAR)])
        assert (below > 0, full > 0) == (any(s["score"] < s["max"] for s in scores), figures["full_marks"][name] > 0), (
            name
        )
    for folder in {str(demo), str(demo.parent), str(REPO), str(Path.home())}:
        assert folder not in text, f"the report names the folder {folder}"
