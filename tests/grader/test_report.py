"""What an instructor reads after grading: the cohort report, and each learner's feedback page.

One small course is released and a few sample submissions autograded once for the module
(real learner hosts, real nbgrader gradebook); the expected numbers come from
``tests/submissions/expected.json`` and the labs' check registries, not from the report code.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import inspect
import io
import re
import statistics
from pathlib import Path

import matplotlib.image
import nbformat
import numpy as np
import pandas as pd
import pytest
from coursetests import MATRIX, copy_samples, expected_failed, new_course, page_text
from nbgrader.api import Gradebook

from grader.cli import main
from grader.course import COURSE_ID, graded_cells
from grader.engine.grading import grade_code
from grader.labs import LAB_MODULES, lab_checks
from grader.notebook import answer_code, read_notebook
from grader.pipeline import SAMPLE_SUBMISSIONS, PipelineError
from grader.report import (
    BIN_LABELS,
    FULL_BAR,
    TOP_MISTAKES,
    LabSection,
    blocks,
    build_report,
    histogram_png,
    render_html,
    score_bins,
    write_report,
)
from grader.similarity import NEAR_IDENTICAL, SIMILARITY_THRESHOLD, Group, similarity
from labkit.checking import HIDDEN_NOTE, as_shown

LAB1, LAB3 = "lab1_error_results", "lab3_tools_resources"
REPORTED = {LAB1: ["solution", "blank", "retries_business_error"], LAB3: ["solution", "side_effect_in_resource_read"]}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    root = tmp_path_factory.mktemp("cohort")
    course = new_course(root / "course")
    course.release(list(REPORTED))
    subs = copy_samples(root / "subs", REPORTED)
    # A notebook with no cells left: its graded cells are put back and it is graded; then its scores are
    # taken out of the gradebook, as they are for a submission waiting on manual grading.
    (subs / "no_cells" / LAB1).mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), str(subs / "no_cells" / LAB1 / f"{LAB1}.ipynb"))
    pairs = course.collect(subs)
    outcomes = course.autograde(pairs)
    assert all(o.ok for o in outcomes), [o for o in outcomes if not o.ok]
    from nbgrader.api import Gradebook

    from grader.course import COURSE_ID

    with Gradebook(course.db_url, course_id=COURSE_ID) as gb:
        for grade in gb.find_submission_notebook(LAB1, LAB1, "no_cells").grades:
            grade.auto_score = None
            grade.manual_score = None
        gb.db.commit()
    _, failures = course.feedback([(s, lab) for s, lab in pairs if s != "no_cells"])
    assert not failures
    return course


@pytest.fixture(scope="module")
def markdown(cohort, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "cohort.md"
    assert main(["report", "--course", str(cohort.root), "--out", str(out)]) == 0
    return out


def released_order(course, lab: str) -> list[str]:
    nb = nbformat.read(str(course.root / "release" / lab / f"{lab}.ipynb"), as_version=4)
    return [cell.metadata.nbgrader["grade_id"] for cell in graded_cells(nb)]


def expected_mistakes() -> dict[tuple[str, str], tuple[int, int]]:
    """(lab, mistake) -> (submissions that failed a check standing for it, graded submissions of the lab)."""
    shares = {}
    for lab, students in REPORTED.items():
        registry = lab_checks(lab).checks
        for mistake in {check.mistake for check in registry.values()}:
            stands_for = {name for name, check in registry.items() if check.mistake == mistake}
            made = sum(bool(expected_failed(lab, s, registry) & stands_for) for s in students)
            if made:
                shares[lab, mistake] = (made, len(students))
    return shares


def section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def table_rows(text: str) -> list[list[str]]:
    rows = [line.strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:]]  # the header goes


MISTAKE_LINE = re.compile(
    r"^- (?P<mistake>.+): (?P<pct>\d+) % \((?P<made>\d+) of (?P<n>\d+) in (?P<lab>\w+); checks? (?P<checks>[\w, ]+)\)$"
)


# --- the cohort report ------------------------------------------------------------------------


def test_the_most_common_mistakes_are_named_in_words_with_their_share_most_common_first(markdown):
    listed = [
        MISTAKE_LINE.match(line)
        for line in section(markdown.read_text(), "## Most common mistakes").splitlines()
        if line.startswith("- ")
    ]
    assert all(listed), listed
    expected = expected_mistakes()
    assert len(listed) == min(TOP_MISTAKES, len(expected))
    shares = []
    for m in listed:
        made, n = expected[m["lab"], m["mistake"]]
        assert (int(m["made"]), int(m["n"])) == (made, n)
        assert m["pct"] == f"{100 * made / n:.0f}"
        shares.append(made / n)
    assert shares == sorted(shares, reverse=True)
    unlisted = set(expected) - {(m["lab"], m["mistake"]) for m in listed}
    assert all(expected[key][0] / expected[key][1] <= shares[-1] for key in unlisted)
    # Two checks stand for this mistake; the sample that fails both made it once.
    first = listed[0]
    assert (first["mistake"], first["pct"], first["made"], first["lab"]) == ("retries business errors", "67", "2", LAB1)
    assert first["checks"] == "decide_business_stops, recover_no_retry_business"


@pytest.mark.parametrize("lab", sorted(REPORTED))
def test_the_pass_rate_of_every_check_is_listed_in_notebook_order(cohort, markdown, lab):
    rows = table_rows(section(markdown.read_text(), f"## {lab}"))
    registry = lab_checks(lab).checks
    students = REPORTED[lab]
    assert [row[0] for row in rows] == released_order(cohort, lab)
    for check, points, passed, rate, mistake in rows:
        n_passed = sum(check not in expected_failed(lab, s, registry) for s in students)
        assert points == f"{registry[check].points:g}"
        assert passed == f"{n_passed} of {len(students)}"
        assert rate == f"{100 * n_passed / len(students):.0f} %"
        assert mistake == registry[check].mistake


def test_each_lab_is_summed_up_and_a_submission_without_scores_is_listed_as_not_graded(markdown):
    text = markdown.read_text()
    summary = {row[0]: row[1:] for row in table_rows(text.split("## ")[0])}
    assert set(summary) == set(REPORTED)
    for lab, students in REPORTED.items():
        pcts = [100 * MATRIX[lab]["samples"][s]["score"] / MATRIX[lab]["max_score"] for s in students]
        full = sum(p == 100 for p in pcts)
        assert summary[lab] == [
            str(len(students)),
            f"{statistics.mean(pcts):.0f} %",
            f"{statistics.median(pcts):.0f} %",
            f"{min(pcts):.0f} %",
            f"{max(pcts):.0f} %",
            str(full),
        ]
    assert "Not counted: 1 submission(s) that were not graded (see Not graded)." in text
    section = text.split("## Not graded", 1)[1].split("\n## ", 1)[0]
    assert f"| no_cells | {LAB1} | its autograde did not finish, so the gradebook holds it without scores" in section


def test_the_markdown_report_links_a_histogram_per_lab_written_beside_it(markdown):
    links = re.findall(r"!\[Score distribution of (\w+)\]\(([^)]+)\)", markdown.read_text())
    assert [lab for lab, _ in links] == sorted(REPORTED)
    for _, name in links:
        png = (markdown.parent / name).read_bytes()
        assert png.startswith(PNG_MAGIC)
        assert has_bars(png)


def test_the_html_report_embeds_its_histograms_and_says_what_the_markdown_says(cohort, markdown, tmp_path, capfd):
    out = tmp_path / "cohort.html"
    assert main(["report", "--course", str(cohort.root), "--out", str(out)]) == 0
    assert f"report written to {out}" in capfd.readouterr().out
    page = out.read_text()
    images = re.findall(r'<img alt="Score distribution of (\w+)" src="data:image/png;base64,([^"]+)"', page)
    assert [lab for lab, _ in images] == sorted(REPORTED)
    assert all(has_bars(base64.b64decode(data)) for _, data in images)
    text = page_text(out)
    for line in markdown.read_text().splitlines():
        if line.startswith("- "):
            assert line[2:] in text


def has_bars(png: bytes, colour: str = "#4c72b0") -> bool:
    """The picture decodes and holds bars of this colour (the histogram's, #4c72b0, unless told)."""
    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
    bar = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return bool((np.abs(pixels[..., :3] - bar).max(axis=-1) < 0.02).sum() > 500)


def a_lab_scored(points: list[float], out_of: float) -> LabSection:
    scores = pd.DataFrame({"student": [f"s{i}" for i in range(len(points))], "score": points, "max_score": out_of})
    scores["percent"] = 100 * scores["score"] / scores["max_score"]
    return LabSection(LAB1, out_of, scores, pd.DataFrame())


def test_full_marks_have_a_bar_of_their_own_apart_from_near_misses():
    # 38 of 38, 37 of 38 (97 %), 37.9 of 38 (99.7 %), 34.2 (90 %), 33 (87 %), 0 and 3.7 (9.7 %)
    section = a_lab_scored([38, 38, 37, 37.9, 34.2, 33, 0, 3.7], 38)
    counts = score_bins(section)
    assert BIN_LABELS[-2:] == ("90-99", "full") and len(counts) == 11
    assert counts == [2, 0, 0, 0, 0, 0, 0, 0, 1, 3, 2]
    png = histogram_png(section)
    assert has_bars(png) and has_bars(png, FULL_BAR)
    assert not has_bars(histogram_png(a_lab_scored([37, 20], 38)), FULL_BAR)  # no full marks: no such bar


def test_the_report_names_the_course_by_its_id_never_by_a_folder_of_this_machine(cohort, markdown, tmp_path, capfd):
    text = markdown.read_text()
    assert f"Course `{COURSE_ID}`: " in text
    assert str(cohort.root) not in text and cohort.root.name not in text
    out = tmp_path / "cohort.html"
    assert main(["report", "--course", str(cohort.root), "--out", str(out)]) == 0
    assert str(cohort.root) not in out.read_text() and f"Course <code>{COURSE_ID}</code>: " in out.read_text()
    # A course without an id is named by its folder's name alone.
    (tmp_path / "unnamed" / "source").mkdir(parents=True)
    (tmp_path / "unnamed" / "nbgrader_config.py").write_text("c = get_config()\n")
    with Gradebook(f"sqlite:///{tmp_path / 'unnamed' / 'gradebook.db'}"):
        pass
    capfd.readouterr()
    assert main(["report", "--course", str(tmp_path / "unnamed"), "--out", str(tmp_path / "empty.md")]) == 0
    printed = capfd.readouterr().out
    assert "No submission has been graded yet in the course unnamed," in printed
    assert str(tmp_path / "unnamed") not in printed.replace(str(tmp_path / "empty.md"), "")


def test_an_empty_gradebook_gives_a_sentence_instead_of_numbers(tmp_path, capfd):
    (tmp_path / "course" / "source").mkdir(parents=True)
    with Gradebook(f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}", course_id=COURSE_ID):
        pass
    out = tmp_path / "empty.md"
    code = main(["report", "--course", str(tmp_path / "course"), "--out", str(out)])
    printed = capfd.readouterr().out
    assert code == 0
    assert "No submission has been graded yet" in printed and "autograde" in printed
    text = out.read_text()
    assert "No submission has been graded yet" in text
    assert "|" not in text and not list(tmp_path.glob("*.png"))


def test_a_report_file_of_another_kind_is_refused_before_anything_is_read(tmp_path, capfd):
    code = main(["report", "--course", str(tmp_path), "--out", str(tmp_path / "report.txt")])
    err = capfd.readouterr().err
    assert code == 2
    assert "has no source/ folder" in err  # the course is checked first
    (tmp_path / "source").mkdir()
    code = main(["report", "--course", str(tmp_path), "--out", str(tmp_path / "report.txt")])
    err = capfd.readouterr().err
    assert code == 2
    assert "'report.txt'" in err and err.rstrip().endswith("or .md (histograms written beside it).")
    assert not (tmp_path / "report.txt").exists()


# --- answers that look alike ------------------------------------------------------------------


ALIKE = "## Answers that look alike"


def released_answers(course, lab: str) -> list[str]:
    return [answer_code(read_notebook(course.root / "release" / lab / f"{lab}.ipynb"))]


def sample_answer(student: str, lab: str) -> str:
    return answer_code(read_notebook(SAMPLE_SUBMISSIONS / student / lab / f"{lab}.ipynb"))


def test_answers_that_look_alike_are_listed_per_lab_with_the_students_in_both_renderings(cohort, markdown, tmp_path):
    # Each sample is the solution with one mistake made; "blank" is the release as handed out.
    part = section(markdown.read_text(), ALIKE)
    assert "a prompt to look at their answers side by side, not a verdict" in part
    expected = []
    for lab, mistaken in [(LAB1, "retries_business_error"), (LAB3, "side_effect_in_resource_read")]:
        value = similarity(sample_answer("solution", lab), sample_answer(mistaken, lab), released_answers(cohort, lab))
        assert SIMILARITY_THRESHOLD <= value < 1
        expected.append([lab, f"{mistaken}, solution", f"near-identical ({int(100 * value)} % alike)"])
    assert table_rows(part) == expected
    assert "blank" not in part  # the released stub, left as it was, is no evidence

    out = tmp_path / "cohort.html"
    write_report(cohort, out)
    text = page_text(out)
    start = text.index("\nAnswers that look alike\n")
    part = text[start : text.index(f"\n{LAB1}\n", start)]  # up to the heading of the first lab's own section
    assert "not a verdict" in part
    for lab, students, how in expected:
        assert f"{lab}{students}{how}" in part  # one table row, its cells run together once the tags are gone


def test_when_no_answers_look_alike_the_section_says_so_in_one_line(cohort, tmp_path):
    out = tmp_path / "strict.md"
    report, _ = write_report(cohort, out, alike_threshold=1.0)  # only identical answers would be listed
    assert report.alike == []
    lines = [line for line in section(out.read_text(), ALIKE).splitlines() if line.strip()]
    assert lines == [ALIKE, "No two graded submissions of a lab have answers that look alike."]


def test_names_in_the_alike_section_are_escaped_in_html(cohort):
    report = dataclasses.replace(
        build_report(cohort),
        alike=[Group(LAB1, ("<script>alert(1)</script>", "o'neil & <b>co</b>"), NEAR_IDENTICAL, 0.91)],
    )
    page = render_html(blocks(report))
    assert "<script>alert" not in page and "<b>co" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;, o&#x27;neil &amp; &lt;b&gt;co&lt;/b&gt;" in page
    assert "near-identical (91 % alike)" in page


def test_a_threshold_that_is_no_share_is_refused_before_anything_is_written(cohort, tmp_path):
    for threshold in (0, 1.5, -0.2):
        with pytest.raises(PipelineError, match="above 0 and at most 1"):
            write_report(cohort, tmp_path / "report.md", alike_threshold=threshold)
    assert not list(tmp_path.iterdir())


def test_the_report_command_takes_the_threshold_and_refuses_one_that_is_no_share(cohort, tmp_path, capfd):
    assert (
        main(["report", "--course", str(cohort.root), "--out", str(tmp_path / "r.md"), "--alike-threshold", "1.5"]) == 2
    )
    assert "above 0 and at most 1" in capfd.readouterr().err and not list(tmp_path.iterdir())
    assert (
        main(["report", "--course", str(cohort.root), "--out", str(tmp_path / "r.md"), "--alike-threshold", "1"]) == 0
    )
    assert "Answers that look alike" in (tmp_path / "r.md").read_text(encoding="utf-8")


# --- each learner's feedback ------------------------------------------------------------------


def feedback_page(course, student: str, lab: str) -> Path:
    return course.root / "feedback" / student / lab / f"{lab}.html"


def verdict_lines(text: str) -> list[str]:
    return re.findall(r"^\[(?:PASS|FAIL)\] .*$", text, re.MULTILINE)


def test_feedback_gives_every_check_its_verdict_and_message_in_notebook_order(cohort):
    student = "retries_business_error"
    order = released_order(cohort, LAB1)
    # The checks run again here, straight on the sample's answer cells, in the order the grader runs them.
    code = answer_code(read_notebook(SAMPLE_SUBMISSIONS / student / LAB1 / f"{LAB1}.ipynb"))
    checks = lab_checks(LAB1)
    # A hidden check's verdict is shown as the learner may see it: its skill, never its cases.
    expected = [as_shown(checks[result.name], result).line() for result in grade_code(LAB1, code, order)]
    lines = verdict_lines(page_text(feedback_page(cohort, student, LAB1)))
    assert lines == expected
    assert {re.match(r"\[FAIL\] (\w+)", line)[1] for line in lines if line.startswith("[FAIL]")} == set(
        MATRIX[LAB1]["samples"][student]["failed"]
    )


@pytest.mark.parametrize("lab,student", [(lab, s) for lab, students in sorted(REPORTED.items()) for s in students])
def test_every_feedback_page_lists_each_check_once_in_notebook_order(cohort, lab, student):
    lines = verdict_lines(page_text(feedback_page(cohort, student, lab)))
    assert [re.match(r"\[\w+\] (\w+) \(", line)[1] for line in lines] == released_order(cohort, lab)
    failed = {re.match(r"\[FAIL\] (\w+)", line)[1] for line in lines if line.startswith("[FAIL]")}
    assert failed == expected_failed(lab, student, lab_checks(lab).checks)
    checks = lab_checks(lab)
    for line in lines:
        name = re.match(r"\[\w+\] (\w+)", line)[1]
        if line.startswith("[PASS]"):
            assert line.endswith(f": {checks[name].title}") != checks[name].hidden
            assert line.endswith(f": {checks[name].title} ({HIDDEN_NOTE}).") == checks[name].hidden
        elif checks[name].hidden:
            assert f"The mistake it looks for: {checks[name].mistake}." in line


@pytest.mark.parametrize("lab", sorted(REPORTED))
def test_feedback_never_shows_a_line_of_the_hidden_checks(cohort, lab):
    module = inspect.getsource(importlib.import_module(LAB_MODULES[lab]))
    checks_code = {line.strip() for line in module.splitlines() if len(line.strip()) >= 12}
    # What the learner's own notebook holds (the released cells, their answers) is no secret.
    released = notebook_lines(cohort.root / "release" / lab / f"{lab}.ipynb")
    for student in REPORTED[lab]:
        # A line of the checks that is part of a line of the notebook (``for endpoint in endpoints`` of the
        # learner's ``for endpoint in endpoints:``) is no secret either.
        learners = "\n".join(released | notebook_lines(SAMPLE_SUBMISSIONS / student / lab / f"{lab}.ipynb"))
        hidden = {line for line in checks_code if line not in learners}
        assert len(hidden) > 50
        text = page_text(feedback_page(cohort, student, lab))
        assert [line for line in hidden if line in text] == []


def notebook_lines(path: Path) -> set[str]:
    nb = nbformat.read(str(path), as_version=4)
    return {line.strip() for cell in nb.cells for line in cell.source.splitlines()}
