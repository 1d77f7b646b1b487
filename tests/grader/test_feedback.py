"""The learner's feedback page: each check named and marked passed or failed, no score result under a verdict,
readable tables and code, and nothing loaded from the network.

One small course (lab 1 with two samples, quiz 1 with one learner) is released, autograded and given feedback
once for the module; what the page must say comes from the labs' check registries, the quiz's questions and the
gradebook, never from the template.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from coursetests import expected_failed, new_course
from quiztests import answered

from grader.course import graded_cells
from grader.feedback import FAILED, PARTLY, PASSED, UNSCORED, FeedbackView, status
from grader.labs import lab_checks
from grader.pipeline import SAMPLE_SUBMISSIONS
from grader.quizzes import quiz

LAB1, QUIZ = "lab1_error_results", "quiz01_structured_tool_errors"
FAILING = "retries_business_error"
QUIZ_WRONG = {"q02", "q05"}
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("feedback")
    course = new_course(root / "course")
    course.release([LAB1, QUIZ])
    subs = root / "subs"
    for student in ("solution", FAILING):
        shutil.copytree(SAMPLE_SUBMISSIONS / student / LAB1, subs / student / LAB1)
    released = nbformat.read(course.root / "release" / QUIZ / f"{QUIZ}.ipynb", as_version=4)
    letters = {
        q.id: ("ABCD"[("ABCD".index(q.answer) + 1) % 4] if q.id in QUIZ_WRONG else q.answer)
        for q in quiz(QUIZ).questions
    }
    (subs / "ann" / QUIZ).mkdir(parents=True)
    nbformat.write(answered(released, letters), subs / "ann" / QUIZ / f"{QUIZ}.ipynb")
    pairs = course.collect(subs)
    assert all(o.ok for o in course.autograde(pairs, jobs=2))
    _, failures = course.feedback(pairs)
    assert not failures
    return course


def page(course, student: str, lab: str) -> Path:
    return course.root / "feedback" / student / lab / f"{lab}.html"


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def words(tag) -> str:
    return " ".join(tag.get_text(" ").split())


def summary(path: Path) -> list[tuple[str, str, str]]:
    """(grade id, status class, text) of each entry of the page's summary, in order."""
    entries = []
    for li in soup(path).select("#toc ol.checks li.check"):
        kind = next(c.removeprefix("check-") for c in li["class"] if c.startswith("check-"))
        entries.append((li.code.get_text(), kind, words(li)))
    return entries


def scores_in_gradebook(course, student: str, lab: str) -> dict[str, tuple[float, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url, course_id=course.course_id) as gb:
        notebook = gb.find_submission_notebook(lab, lab, student)
        return {g.name: (float(g.score), float(g.max_score)) for g in notebook.grades}


# --- the summary and the cells ------------------------------------------------------------------------------


@pytest.mark.parametrize("student", ["solution", FAILING])
def test_the_summary_names_every_check_with_its_title_and_score_and_marks_each_failure(course, student):
    checks = lab_checks(LAB1).checks
    released = nbformat.read(course.root / "release" / LAB1 / f"{LAB1}.ipynb", as_version=4)
    order = [cell.metadata.nbgrader["grade_id"] for cell in graded_cells(released)]
    failed = expected_failed(LAB1, student, checks)
    scores = scores_in_gradebook(course, student, LAB1)
    entries = summary(page(course, student, LAB1))
    assert [name for name, _, _ in entries] == order
    for name, kind, text in entries:
        assert checks[name].title in text
        score, points = scores[name]
        assert f"(Score: {score:g} / {points:g})" in text
        if name in failed:
            assert kind == FAILED and text.startswith("\u2717 failed")
        else:
            assert kind == PASSED and text.startswith("\u2713 passed")
    tally = words(soup(page(course, student, LAB1)).select_one("p.tally"))
    assert tally.startswith(f"{len(order) - len(failed)} of {len(order)} passed")
    assert all(name in tally for name in failed)


def test_each_check_cell_is_marked_in_words_and_its_failures_in_colour(course):
    html = soup(page(course, FAILING, LAB1))
    failed = expected_failed(LAB1, FAILING, lab_checks(LAB1).checks)
    cells = html.select("div.nbgrader_cell.check")
    marked = {}
    for cell in cells:
        heading = words(cell.select_one(".panel-heading"))
        name = cell.select_one(".panel-heading code").get_text()
        marked[name] = heading
        assert ("check-failed" in cell["class"]) == (name in failed)
    assert {n for n, heading in marked.items() if heading.startswith("\u2717 failed Check")} == failed
    assert all(heading.startswith("\u2713 passed Check") for n, heading in marked.items() if n not in failed)
    style = " ".join(s.get_text() for s in html.find_all("style"))
    assert re.search(r"\.check-failed\s*>\s*\.panel-heading\s*\{[^}]*background", style)
    assert re.search(r"\.verdict-failed\s*\{[^}]*color", style)


def test_no_score_result_is_shown_under_a_verdict_and_the_gradebook_keeps_every_score(course):
    text = page(course, FAILING, LAB1).read_text(encoding="utf-8")
    assert "Out[" not in text and "output_execute_result" not in text and "In&nbsp;[" not in text
    # Each verdict is followed by the next cell, not by its score: 0.0 or 1.0 alone in an output.
    outputs = [words(o) for o in soup(page(course, FAILING, LAB1)).select("div.output_subarea")]
    assert outputs and all(re.match(r"\[(PASS|FAIL)\] \w+ \(", o) for o in outputs)
    # The autograded notebook, which formgrader shows and scores from, keeps the results nbgrader scored.
    autograded = nbformat.read(course.root / "autograded" / FAILING / LAB1 / f"{LAB1}.ipynb", as_version=4)
    results = {
        c.metadata.nbgrader["grade_id"]: [o for o in c.outputs if o.output_type == "execute_result"]
        for c in graded_cells(autograded)
    }
    scores = scores_in_gradebook(course, FAILING, LAB1)
    assert {name: float(r[0].data["text/plain"]) for name, r in results.items()} == {
        n: s for n, (s, _) in scores.items()
    }


def test_a_quiz_page_names_each_question_and_marks_the_wrong_answers(course):
    questions = quiz(QUIZ).questions
    entries = summary(page(course, "ann", QUIZ))
    assert [name for name, _, _ in entries] == [q.id for q in questions]
    for number, (name, kind, text) in enumerate(entries, start=1):
        assert f"Question {number}: Structured tool errors" in text
        assert (kind == FAILED) == (name in QUIZ_WRONG)
        assert text.startswith("\u2717 failed" if name in QUIZ_WRONG else "\u2713 passed")
    html = soup(page(course, "ann", QUIZ))
    cells = {c.select_one(".panel-heading code").get_text(): c for c in html.select("div.nbgrader_cell.check")}
    assert {n for n, c in cells.items() if "check-failed" in c["class"]} == QUIZ_WRONG
    text = page(course, "ann", QUIZ).read_text(encoding="utf-8")
    assert "Out[" not in text and "output_execute_result" not in text


# --- readable, and offline ----------------------------------------------------------------------------------


def test_the_page_loads_nothing_from_the_network_and_has_no_math_typesetter(course):
    for student, lab in (("solution", LAB1), (FAILING, LAB1), ("ann", QUIZ)):
        html = soup(page(course, student, lab))
        for tag in html.find_all(["script", "link", "img", "iframe"]):
            where = tag.get("src") or tag.get("href") or ""
            assert not re.match(r"(https?:)?//", where), (student, lab, str(tag)[:200])
        assert [str(s)[:80] for s in html.find_all("script") if "mathjax" in str(s).lower()] == []


def test_markdown_tables_are_padded_and_long_code_lines_wrap(course):
    style = " ".join(s.get_text() for s in soup(page(course, FAILING, LAB1)).find_all("style"))
    assert re.search(r"\.rendered_html th, \.rendered_html td \{[^}]*padding: \.3em \.8em", style)
    assert re.search(r"div\.input_area pre, div\.output_area pre \{[^}]*white-space: pre-wrap", style)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_in_chromium_offline_the_page_requests_nothing_logs_no_error_and_shows_failures(course):
    from playwright.sync_api import sync_playwright

    requested, errors = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            tab = browser.new_page(viewport={"width": 1000, "height": 800})

            def offline(route) -> None:
                if route.request.url.startswith("file:"):
                    route.continue_()
                else:
                    requested.append(route.request.url)
                    route.abort()

            tab.route("**/*", offline)
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.goto(page(course, FAILING, LAB1).as_uri())
            tab.wait_for_load_state("load")
            seen = tab.evaluate(
                """() => {
                    const li = document.querySelector("#toc li.check-failed");
                    const mark = li.querySelector(".verdict");
                    const cell = document.querySelector("td") || document.querySelector("th");
                    const pres = [...document.querySelectorAll("div.input_area pre, div.output_area pre")];
                    return {
                        mark: mark.innerText, colour: getComputedStyle(mark).color,
                        background: getComputedStyle(li).backgroundColor,
                        padding: cell ? parseFloat(getComputedStyle(cell).paddingLeft) : 0,
                        cut: pres.filter(p => p.scrollWidth > p.clientWidth + 1).length,
                    };
                }"""
            )
        finally:
            browser.close()
    assert requested == [] and errors == []
    assert (
        seen["mark"].endswith("failed")
        and seen["colour"] != "rgb(0, 0, 0)"
        and seen["background"] != "rgba(0, 0, 0, 0)"
    )
    assert seen["padding"] >= 4
    assert seen["cut"] == 0


# --- FeedbackView on its own --------------------------------------------------------------------------------


def test_a_verdict_is_told_from_the_score():
    assert [status(1, 1), status(0, 2), status(1, 2), status(None, 1), status(2.0, 2)] == [
        PASSED,
        FAILED,
        PARTLY,
        UNSCORED,
        PASSED,
    ]


def test_feedback_view_drops_only_a_graded_cells_result_and_names_it():
    nb = nbformat.v4.new_notebook()
    check = nbformat.v4.new_code_cell('lab.check("results_business")')
    check.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "grade_id": "results_business",
        "points": 1,
        "score": 0.0,
    }
    check.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="[FAIL] results_business (0/1): ...\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "0.0"}, execution_count=1),
    ]
    plain = nbformat.v4.new_code_cell("1 + 1")
    plain.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1)]
    nb.cells = [check, plain]
    nb, _ = FeedbackView().preprocess(nb, {"nbgrader": {"assignment": LAB1}})
    assert [o.output_type for o in nb.cells[0].outputs] == ["stream"]
    assert nb.cells[0].metadata["feedback"] == {
        "title": lab_checks(LAB1).checks["results_business"].title,
        "status": FAILED,
    }
    assert [o.output_type for o in nb.cells[1].outputs] == ["execute_result"] and "feedback" not in nb.cells[1].metadata
