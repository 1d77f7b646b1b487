"""The cohort report: score distribution per lab, pass rate per check and the commonest mistakes, from the gradebook.

The numbers come from nbgrader's gradebook (one score per graded cell, named by its
check); the words come from the labs' check registries (each check's ``mistake``).
The report is written as HTML with its histograms embedded, or as Markdown with the
histograms as PNG files beside it. A quiz or the mock exam (``grader.quizzes``) also gets its points per theme:
the cohort's mean share of each theme's points and the questions of it most missed. Submissions that were not graded (``Course.not_graded``) are
listed on their own, with why, and counted in no histogram, pass rate or mistake. Graded answers
that look alike (``grader.similarity``) are listed per lab, as a prompt to look, not a verdict.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from grader.course import graded_cells
from grader.labs import LAB_MODULES, lab_checks
from grader.notebook import NotANotebook, read_notebook
from grader.pipeline import Course, Outcome, PipelineError
from grader.quizzes import UnknownQuiz, is_quiz, quiz
from grader.quizzes.model import THEMES, Quiz
from grader.similarity import IDENTICAL, SIMILARITY_THRESHOLD, Group, alike_in_course

FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}
TOP_MISTAKES = 10


# --- the numbers ----------------------------------------------------------------------------


def read_grades(course: Course) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """One row per graded cell of every scored submission, and the (lab, student) pairs nbgrader holds unscored.

    nbgrader records a submission before grading it, so one whose autograde did not finish
    sits in the gradebook with no score at all; counting it would read as every mistake at once.
    """
    rows, unscored = [], []
    with course.open_gradebook() as gb:
        for assignment in gb.assignments:
            for submission in assignment.submissions:
                grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
                if any(g.auto_score is None and g.manual_score is None for g in grades):
                    unscored.append((assignment.name, submission.student.id))
                    continue
                rows += [
                    (assignment.name, submission.student.id, g.name, float(g.score), float(g.max_score)) for g in grades
                ]
    grades = pd.DataFrame(rows, columns=["lab", "student", "check", "score", "max_score"])
    grades["passed"] = grades["score"] >= grades["max_score"]
    return grades, sorted(unscored)


def notebook_order(course: Course, lab: str, checks) -> list[str]:
    """The checks in the order of the lab notebook's graded cells (any the notebook lacks go last)."""
    try:
        order = [
            cell.metadata.nbgrader["grade_id"]
            for cell in graded_cells(read_notebook(course.root / "source" / lab / f"{lab}.ipynb"))
        ]
    except NotANotebook:  # no source notebook: a lab's checks are registered in notebook order too
        order = list(lab_checks(lab).checks) if lab in LAB_MODULES else []
    checks = set(checks)
    return [c for c in order if c in checks] + sorted(checks - set(order))


def quiz_of(lab: str) -> Quiz | None:
    try:
        return quiz(lab) if is_quiz(lab) else None
    except UnknownQuiz:
        return None


def question_words(questions: Quiz, question_id: str) -> str | None:
    for number, question in enumerate(questions.questions, start=1):
        if question.id == question_id:
            text = " ".join(question.text.split())
            return f"question {number} ({THEMES[question.theme]}): {text[:80] + '…' if len(text) > 80 else text}"
    return None


def mistake_of(lab: str, check: str) -> str:
    if lab in LAB_MODULES and check in lab_checks(lab).checks:
        return lab_checks(lab).checks[check].mistake
    questions = quiz_of(lab)
    words = question_words(questions, check) if questions else None
    if words:
        return f"misses {words}"
    return f"fails {check}"


MOST_MISSED = 3  # questions named per theme


def theme_table(lab: str, grades: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame | None:
    """A quiz's points per theme: theme, questions, points, the cohort's mean share of them, the questions most
    missed (lowest share right first; none when every answer was right). None for a lab."""
    questions = quiz_of(lab)
    if questions is None:
        return None
    theme = {q.id: q.theme for q in questions.questions}
    number = {q.id: n for n, q in enumerate(questions.questions, start=1)}
    known = grades[grades["check"].isin(list(theme))].copy()
    known["theme"] = known["check"].map(theme)
    rows = []
    for key, title in THEMES.items():
        mine = known[known["theme"] == key]
        if mine.empty:
            continue
        per_student = mine.groupby("student").agg(score=("score", "sum"), max_score=("max_score", "sum"))
        share = (per_student["score"] / per_student["max_score"].where(per_student["max_score"] > 0)).fillna(0.0).mean()
        rates = checks[checks["check"].isin(mine["check"].unique())].sort_values("pass_rate", kind="stable")
        missed = [
            f"question {number[c.check]} ({pct(c.pass_rate)} right)" for c in rates.itertuples() if c.pass_rate < 1
        ][:MOST_MISSED]
        rows.append(
            {
                "theme": title,
                "questions": int(mine["check"].nunique()),
                "points": float(mine.groupby("check")["max_score"].max().sum()),
                "mean_share": float(share),
                "most_missed": ", ".join(missed) or "none: every answer was right",
            }
        )
    return pd.DataFrame(rows, columns=["theme", "questions", "points", "mean_share", "most_missed"])


@dataclass(frozen=True)
class LabSection:
    lab: str
    max_score: float
    scores: pd.DataFrame  # student, score, max_score, percent
    checks: pd.DataFrame  # check, points, passed, submissions, pass_rate, mistake; in notebook order
    themes: pd.DataFrame | None = None  # a quiz's: theme, questions, points, mean_share, most_missed (theme_table)

    @property
    def submissions(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class CohortReport:
    course: str  # the course's id, or its folder's name: never a folder of this machine
    labs: list[LabSection] = field(default_factory=list)
    # lab, mistake, checks, made, submissions, share; most common first
    mistakes: pd.DataFrame = field(default_factory=pd.DataFrame)
    not_graded: list[Outcome] = field(default_factory=list)  # by lab, then student; each with why
    alike: list[Group] = field(default_factory=list)  # graded answers that look alike, by lab
    alike_threshold: float = SIMILARITY_THRESHOLD

    @property
    def empty(self) -> bool:
        return not self.labs

    @property
    def empty_sentence(self) -> str:
        return (
            f"No submission has been graded yet in the course {self.course}, so there is nothing to report. "
            "Autograde a folder of submissions (`python -m grader autograde SUBMISSIONS`), then write the report again."
        )


def lab_section(course: Course, lab: str, grades: pd.DataFrame) -> LabSection:
    scores = (
        grades.groupby("student", sort=True).agg(score=("score", "sum"), max_score=("max_score", "sum")).reset_index()
    )
    scores["percent"] = (100 * scores["score"] / scores["max_score"].where(scores["max_score"] > 0)).fillna(0.0)
    checks = (
        grades.groupby("check")
        .agg(points=("max_score", "max"), passed=("passed", "sum"), submissions=("student", "nunique"))
        .reindex(notebook_order(course, lab, grades["check"].unique()))
        .rename_axis("check")
        .reset_index()
    )
    checks["pass_rate"] = checks["passed"] / checks["submissions"]
    checks["mistake"] = [mistake_of(lab, c) for c in checks["check"]]
    return LabSection(lab, float(scores["max_score"].max()), scores, checks, theme_table(lab, grades, checks))


def common_mistakes(grades: pd.DataFrame, sections: list[LabSection]) -> pd.DataFrame:
    """Per lab and mistake: how many submissions failed at least one check standing for it, and their share.

    Several checks may stand for one mistake ("retries business errors" is both a decision and a
    recovery check); a submission that fails both made the mistake once.
    """
    frames = []
    for section in sections:
        lab_grades = grades[grades["lab"] == section.lab].merge(section.checks[["check", "mistake"]], on="check")
        position = {check: i for i, check in enumerate(section.checks["check"])}
        failed = lab_grades[~lab_grades["passed"]]
        per_mistake = failed.groupby("mistake").agg(
            made=("student", "nunique"),
            checks=("check", lambda names, position=position: ", ".join(sorted(set(names), key=position.get))),
            first=("check", lambda names, position=position: min(position[n] for n in names)),
        )
        per_mistake["lab"] = section.lab
        per_mistake["submissions"] = section.submissions
        frames.append(per_mistake.reset_index())
    columns = ["lab", "mistake", "checks", "made", "submissions", "share"]
    if not frames:
        return pd.DataFrame(columns=columns)
    mistakes = pd.concat(frames, ignore_index=True)
    mistakes["share"] = mistakes["made"] / mistakes["submissions"]
    mistakes = mistakes.sort_values(
        ["share", "made", "lab", "first"], ascending=[False, False, True, True], kind="stable"
    )
    return mistakes[columns].reset_index(drop=True)


def build_report(course: Course, alike_threshold: float = SIMILARITY_THRESHOLD) -> CohortReport:
    grades, _ = read_grades(course)  # the unscored ones are among course.not_graded()
    sections = [lab_section(course, lab, lab_grades) for lab, lab_grades in grades.groupby("lab", sort=True)]
    # A quiz's answers are letters: alike answers there are no sign of anything.
    alike = [g for g in alike_in_course(course, alike_threshold) if not is_quiz(g.lab)] if sections else []
    name = course.course_id or course.root.name
    return CohortReport(name, sections, common_mistakes(grades, sections), course.not_graded(), alike, alike_threshold)


BIN_EDGES = tuple(range(0, 101, 10))  # ten bins of 10 % below full marks: 0-9 %, ..., 90-99 %
BIN_LABELS = (*(f"{low}-{low + 9}" for low in BIN_EDGES[:-1]), "full")
BAR, FULL_BAR = "#4c72b0", "#55a868"


def score_bins(section: LabSection) -> list[int]:
    """Submissions per bar: ten bins of 10 % for scores below full marks (a score is counted in the bin its
    percentage, rounded down, falls in), and full marks alone last, so a near miss never reads as full marks."""
    counts = [0] * len(BIN_LABELS)
    for row in section.scores.itertuples():
        if row.max_score > 0 and row.score >= row.max_score:
            counts[-1] += 1
        else:
            counts[min(int(row.percent // 10), len(BIN_LABELS) - 2)] += 1
    return counts


def histogram_png(section: LabSection) -> bytes:
    """The lab's score distribution, ten bars of 10 % and full marks apart, drawn off-screen with the Agg canvas."""
    fig = Figure(figsize=(6.4, 3.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    counts = score_bins(section)
    bars = ax.bar(
        range(len(counts)), counts, width=0.9, color=[BAR] * (len(counts) - 1) + [FULL_BAR], edgecolor="white"
    )
    ax.bar_label(bars, labels=[str(n) if n else "" for n in counts], fontsize=8)
    ax.set_xticks(range(len(counts)), BIN_LABELS, fontsize=8)
    ax.set_xlabel(f"score, % of {section.max_score:g} points (full marks apart)")
    ax.set_ylabel("submissions")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, max(counts) * 1.15 + 0.5)
    ax.set_title(f"{section.lab}: {section.submissions} graded submission(s)")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


# --- the words ------------------------------------------------------------------------------
# The report is a short list of blocks, rendered once as Markdown and once as HTML.


def pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def not_graded_blocks(report: CohortReport) -> list[tuple]:
    if not report.not_graded:
        return []
    return [
        ("h2", "Not graded"),
        (
            "p",
            (
                f"{len(report.not_graded)} submission(s) were not graded, so they have no score and are counted in none of "
                "the numbers of this report. Do what each line says, then autograde them again to count them."
            ),
        ),
        (
            "table",
            ["student", "lab", "why"],
            [[o.student, o.lab, " ".join(o.message.split())] for o in report.not_graded],
            "lll",
        ),
    ]


def how_alike(group: Group) -> str:
    if group.kind == IDENTICAL:
        return "identical"
    return f"near-identical ({math.floor(100 * group.similarity)} % alike)"  # floored: never "100 %" unless identical


def alike_blocks(report: CohortReport) -> list[tuple]:
    out: list[tuple] = [("h2", "Answers that look alike")]
    if not report.alike:
        return out + [("p", "No two graded submissions of a lab have answers that look alike.")]
    out.append(
        (
            "p",
            (
                "Students of a lab whose answer code is the same or nearly so once comments, layout, quotes and the names "
                "of variables and functions are set aside, leaving out the code every learner was given "
                f"(near-identical: at least {pct(report.alike_threshold)} of their own code in common). This is a prompt "
                "to look at their answers side by side, not a verdict: they may have worked together as allowed, or "
                "reached the same answer on their own."
            ),
        )
    )
    out.append(
        (
            "table",
            ["lab", "students", "how alike"],
            [[g.lab, ", ".join(g.students), how_alike(g)] for g in report.alike],
            "lll",
        )
    )
    return out


def blocks(report: CohortReport) -> list[tuple]:
    out: list[tuple] = [("h1", "Cohort report")]
    if report.empty:
        out.append(("p", report.empty_sentence))
        return out + not_graded_blocks(report)
    students = {s for section in report.labs for s in section.scores["student"]}
    total = sum(section.submissions for section in report.labs)
    out.append(
        (
            "p",
            f"Course `{report.course}`: {total} graded submission(s) from {len(students)} student(s) in {len(report.labs)} lab(s).",
        )
    )
    out.append(
        (
            "table",
            ["lab", "graded", "mean", "median", "lowest", "highest", "full marks"],
            [
                [
                    s.lab,
                    str(s.submissions),
                    f"{s.scores['percent'].mean():.0f} %",
                    f"{s.scores['percent'].median():.0f} %",
                    f"{s.scores['percent'].min():.0f} %",
                    f"{s.scores['percent'].max():.0f} %",
                    str(int((s.scores["score"] >= s.scores["max_score"]).sum())),
                ]
                for s in report.labs
            ],
            "lrrrrrr",
        )
    )
    if report.not_graded:
        out.append(("p", f"Not counted: {len(report.not_graded)} submission(s) that were not graded (see Not graded)."))
    out += not_graded_blocks(report)

    out.append(("h2", "Most common mistakes"))
    shown = report.mistakes.head(TOP_MISTAKES)
    if shown.empty:
        out.append(("p", "No graded submission failed a check."))
    else:
        out.append(
            ("p", "Each mistake with the share of the lab's graded submissions that made it, most common first.")
        )
        out.append(
            (
                "list",
                [
                    f"{m.mistake}: {pct(m.share)} ({m.made} of {m.submissions} in {m.lab}; "
                    f"{'checks' if ',' in m.checks else 'check'} {m.checks})"
                    for m in shown.itertuples()
                ],
            )
        )
        if len(report.mistakes) > len(shown):
            out.append(("p", f"{len(report.mistakes) - len(shown)} less common mistake(s) are in the tables below."))
    out += alike_blocks(report)

    for s in report.labs:
        out.append(("h2", s.lab))
        out.append(("image", s.lab, f"Score distribution of {s.lab}", histogram_png(s)))
        if s.themes is not None and not s.themes.empty:
            out.append(
                (
                    "p",
                    "Points per theme: the cohort's mean share of each theme's points, and its questions most missed.",
                )
            )
            out.append(
                (
                    "table",
                    ["theme", "questions", "points", "mean share", "most missed"],
                    [
                        [t.theme, str(t.questions), f"{t.points:g}", pct(t.mean_share), t.most_missed]
                        for t in s.themes.itertuples()
                    ],
                    "lrrrl",
                )
            )
        out.append(("p", f"Pass rate per check, in the order of the notebook ({s.submissions} graded submission(s))."))
        out.append(
            (
                "table",
                ["check", "points", "passed", "pass rate", "mistake when failed"],
                [
                    [c.check, f"{c.points:g}", f"{c.passed} of {c.submissions}", pct(c.pass_rate), c.mistake]
                    for c in s.checks.itertuples()
                ],
                "lrrrl",
            )
        )
    return out


def render_markdown(items: list[tuple], image_name) -> tuple[str, dict[str, bytes]]:
    """Markdown text, and the PNG files it links to (name -> bytes)."""
    lines, images = [], {}
    for item in items:
        kind = item[0]
        if kind == "h1":
            lines += [f"# {item[1]}", ""]
        elif kind == "h2":
            lines += [f"## {item[1]}", ""]
        elif kind == "p":
            lines += [item[1], ""]
        elif kind == "list":
            lines += [f"- {entry}" for entry in item[1]] + [""]
        elif kind == "table":
            _, header, rows, align = item
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|" + "|".join("---:" if a == "r" else "---" for a in align) + "|")
            lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in rows]
            lines.append("")
        elif kind == "image":
            _, lab, alt, png = item
            name = image_name(lab)
            images[name] = png
            lines += [f"![{alt}]({name})", ""]
    return "\n".join(lines), images


def inline(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def render_html(items: list[tuple]) -> str:
    body = []
    for item in items:
        kind = item[0]
        if kind in ("h1", "h2"):
            body.append(f"<{kind}>{inline(item[1])}</{kind}>")
        elif kind == "p":
            body.append(f"<p>{inline(item[1])}</p>")
        elif kind == "list":
            body.append("<ul>" + "".join(f"<li>{inline(entry)}</li>" for entry in item[1]) + "</ul>")
        elif kind == "table":
            _, header, rows, align = item
            num = [' class="num"' if a == "r" else "" for a in align]
            head = "".join(f"<th{num[i]}>{html.escape(h)}</th>" for i, h in enumerate(header))
            cells = "".join(
                "<tr>" + "".join(f"<td{num[i]}>{html.escape(str(v))}</td>" for i, v in enumerate(row)) + "</tr>"
                for row in rows
            )
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>")
        elif kind == "image":
            _, _, alt, png = item
            body.append(
                f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'
            )
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Cohort report</title><style>'
        "body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:1em 0}th,td{border-bottom:1px solid #ddd;padding:.3em .8em;text-align:left}"
        "th.num,td.num{text-align:right;white-space:nowrap}img{max-width:100%}"
        "</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def report_format(out: Path) -> str:
    try:
        return FORMATS[Path(out).suffix.lower()]
    except KeyError:
        raise PipelineError(
            f"Cannot tell the report's format from {Path(out).name!r}. Give --out a file ending in .html "
            "(histograms embedded) or .md (histograms written beside it)."
        ) from None


def write_report(course: Course, out: Path, alike_threshold: float = SIMILARITY_THRESHOLD) -> tuple[CohortReport, Path]:
    """Build the cohort report from the course's gradebook and write it to ``out`` (.html or .md).

    ``alike_threshold``: how alike (0 to 1) two answers must be to be listed as near-identical."""
    out = Path(out).resolve()
    kind = report_format(out)
    if not 0 < alike_threshold <= 1:
        raise PipelineError(
            f"{alike_threshold!r} cannot be how alike answers must be: give a number above 0 and at most 1 "
            f"(the default is {SIMILARITY_THRESHOLD:g})."
        )
    report = build_report(course, alike_threshold)
    items = blocks(report)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if kind == "html":
            out.write_text(render_html(items), encoding="utf-8")
        else:
            text, images = render_markdown(items, lambda lab: f"{out.stem}_{lab}.png")
            for name, png in images.items():
                (out.parent / name).write_bytes(png)
            out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise PipelineError(
            f"Cannot write the report to {out} ({exc.strerror or exc}). Give --out a file in a folder you can write to."
        ) from None
    return report, out
