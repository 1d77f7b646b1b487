"""Generate each quiz's nbgrader source notebook from its questions: ``python -m grader.quizzes.build [NAME ...]``.

The notebook shows the questions and their options, never the key or the explanations. Each question has a
locked Markdown cell and one answer cell (an nbgrader answer cell that is graded, its grade id the question's
id), handed out as ``answer("q01", "")`` (``metadata.course.starting_code``, ``grader.course``). Cell ids are
fixed, so building twice writes the same bytes, and a test can hold the committed notebooks to a fresh build.

A quiz's notebook is ``labs/source/<name>/<name>.ipynb``; the mock exam's is ``notebooks/06_mock_exam.ipynb``
(it is also a lesson notebook), and ``labs/source/mock_exam/mock_exam.ipynb`` is a relative link to it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader import content
from grader.quizzes import UnknownQuiz, available, quiz
from grader.quizzes.model import LETTERS, THEMES, Quiz

# The course's content (grader.content): a checkout's, where the quizzes are built.
REPO = content.ROOT
SOURCE = content.COURSE / "source"
MOCK_EXAM = "mock_exam"
MOCK_EXAM_NOTEBOOK = content.LESSONS / "06_mock_exam.ipynb"

SETUP = "from labkit.quiz import answer"
SUMMARY_ID = "summary"
SUMMARY = "# Your points per theme are shown below this cell in your feedback, once your submission is graded."


def answer_source(question_id: str) -> str:
    return f'answer("{question_id}", "")'


def points(value: float) -> str:
    return f"{value:g} point{'' if value == 1 else 's'}"


def locked(cell, grade_id: str):
    cell.id = grade_id.replace("_", "-")
    cell.metadata["deletable"] = False
    cell.metadata["editable"] = False
    cell.metadata["nbgrader"] = {
        "grade": False,
        "grade_id": grade_id,
        "locked": True,
        "schema_version": 3,
        "solution": False,
    }
    return cell


def theme_table(q: Quiz) -> str:
    rows = []
    for theme, title in THEMES.items():
        mine = [x for x in q.questions if x.theme == theme]
        if mine:
            rows.append(f"| {title} | {len(mine)} | {sum(x.points for x in mine):g} |")
    return "\n".join(["| Theme | Questions | Points |", "|---|---:|---:|", *rows])


HOW_TO_ANSWER = (
    "**How to answer.** Run the first code cell once. Then, in the cell under each question, put the letter of "
    'your answer (A, B, C or D) between the empty quotes, for example `answer("q01", "B")`, and run the cell. '
    "Leave the quotes empty for a question you skip: a skipped question scores 0, and so does a wrong answer; "
    "nothing is taken off beyond the question's own points. Change nothing else in the answer cells: only "
    "the letter in the quotes is read."
)
GRADING = (
    "**Grading.** Nothing is checked in this notebook. Your answers are graded when you submit it, and your "
    "feedback shows, for every question, the answer, why it is right and why each other option is not, and "
    "your points per theme."
)


def intro(q: Quiz) -> str:
    return "\n".join(
        [
            f"# {q.title}",
            "",
            q.intro.strip(),
            "",
            HOW_TO_ANSWER,
            "",
            GRADING,
            "",
            f"{len(q.questions)} questions, {points(q.max_score)} in all:",
            "",
            theme_table(q),
        ]
    )


def question_markdown(number: int, question) -> str:
    options = "\n".join(f"- **{letter}.** {question.options[letter]}" for letter in LETTERS)
    return "\n".join(
        [
            f"**Question {number}** · {THEMES[question.theme]} · {points(question.points)}",
            "",
            question.text.strip(),
            "",
            options,
        ]
    )


def build_notebook(q: Quiz) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    cells = [locked(new_markdown_cell(intro(q)), "intro"), locked(new_code_cell(SETUP), "setup")]
    for number, question in enumerate(q.questions, start=1):
        cells.append(locked(new_markdown_cell(question_markdown(number, question)), f"{question.id}_text"))
        cell = new_code_cell(answer_source(question.id))
        cell.id = question.id
        cell.metadata["course"] = {"starting_code": answer_source(question.id)}
        cell.metadata["nbgrader"] = {
            "grade": True,
            "grade_id": question.id,
            "locked": False,
            "points": question.points,
            "schema_version": 3,
            "solution": True,
        }
        cells.append(cell)
    cells.append(locked(new_code_cell(SUMMARY), SUMMARY_ID))
    nb.cells = cells
    return nb


def notebook_text(q: Quiz) -> str:
    return nbformat.writes(build_notebook(q)) + "\n"


def notebook_path(name: str) -> Path:
    """Where the quiz's notebook is written (for the mock exam, the lesson notebook the course folder links to)."""
    return MOCK_EXAM_NOTEBOOK if name == MOCK_EXAM else SOURCE / name / f"{name}.ipynb"


def source_path(name: str) -> Path:
    """The quiz's notebook in the course's source folder (for the mock exam, a link)."""
    return SOURCE / name / f"{name}.ipynb"


def build(name: str) -> list[Path]:
    """Write the quiz's notebook (and the mock exam's link); the paths written."""
    text = notebook_text(quiz(name))
    path = notebook_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    written = [path]
    link = source_path(name)
    if link != path:
        link.parent.mkdir(parents=True, exist_ok=True)
        target = os.path.relpath(path, link.parent)
        if not (link.is_symlink() and os.readlink(link) == target):
            if link.exists() or link.is_symlink():
                link.unlink()
            link.symlink_to(target)
        written.append(link)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    names = list(argv if argv is not None else sys.argv[1:]) or available()
    for name in names:
        try:
            written = build(name)
        except UnknownQuiz as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for path in written:
            print(f"{name}: {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
