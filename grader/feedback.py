"""The learner's feedback page: nbgrader's feedback, with each check named and marked passed or failed, offline.

nbgrader's ``generate_feedback`` renders the autograded notebook with its own template. The course's
template (``grader/templates/course_feedback``) extends it: the summary names each check (or quiz question)
with its title and marks it passed or failed in words and colour, as its cell does; tables are padded, long
lines wrap, and nothing is loaded from the network (no MathJax: the course's pages hold no math).
``FeedbackView`` prepares the notebook for it, on the feedback's copy alone: the autograded notebook,
the gradebook and formgrader keep the scores as they are.
"""

from __future__ import annotations

from pathlib import Path

import nbgrader
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets.config import Config

from grader.labs import LAB_MODULES, lab_checks
from grader.quizzes import UnknownQuiz, is_quiz, quiz
from grader.quizzes.model import THEMES

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "course_feedback"
NBGRADER_TEMPLATES = Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates"
# Where nbgrader's feedback finds the Bootstrap CSS it inlines (GenerateFeedback sets the same).
BOOTSTRAP_CSS = NBGRADER_TEMPLATES.parent / "static" / "node_modules" / "bootstrap" / "dist" / "css"

PASSED, FAILED, PARTLY, UNSCORED = "passed", "failed", "partly", "unscored"


def titles(assignment: str) -> dict[str, str]:
    """Each graded cell's title by grade id: a lab check's own title, or a quiz question's number and theme."""
    if assignment in LAB_MODULES:
        return {name: check.title for name, check in lab_checks(assignment).checks.items()}
    if is_quiz(assignment):
        try:
            questions = quiz(assignment).questions
        except UnknownQuiz:
            return {}
        return {q.id: f"Question {n}: {THEMES[q.theme]}" for n, q in enumerate(questions, start=1)}
    return {}


def status(score, points) -> str:
    """A graded cell's verdict from its score: passed (every point), failed (none), partly, or unscored (no score)."""
    if score is None:
        return UNSCORED
    if float(score) >= float(points):
        return PASSED
    return FAILED if float(score) <= 0 else PARTLY


class FeedbackView(NbGraderPreprocessor):
    """After nbgrader's GetGrades: each graded cell gets its title and verdict (``metadata.feedback``), and a
    check's score-carrying result (the ``Out`` nbgrader scored it by) goes, since the page shows the score."""

    def preprocess(self, nb, resources):
        named = titles(resources["nbgrader"]["assignment"])
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader") or {}
            if not meta.get("grade"):
                continue
            grade_id = meta.get("grade_id", "")
            cell.metadata["feedback"] = {
                "title": named.get(grade_id, ""),
                "status": status(meta.get("score"), meta.get("points", 0)),
            }
            if cell.cell_type == "code":
                cell.outputs = [o for o in cell.get("outputs", []) if o.get("output_type") != "execute_result"]
        return nb, resources


def configure_feedback(c: Config) -> Config:
    """nbgrader's generate_feedback with the course's template and ``FeedbackView``; other exporters (formgrader's
    manual grading among them) keep their own."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades

    c.GenerateFeedback.preprocessors = [GetGrades, FeedbackView, CSSHTMLHeaderPreprocessor]
    exporter = c.GenerateFeedback.HTMLExporter
    exporter.template_name = TEMPLATE
    exporter.extra_template_basedirs = [str(TEMPLATES), str(NBGRADER_TEMPLATES)]
    # nbgrader's feedback template is extended by its path ('feedback/index.html.j2'); the CSS is inlined.
    exporter.extra_template_paths = [str(BOOTSTRAP_CSS), str(NBGRADER_TEMPLATES)]
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    return c
