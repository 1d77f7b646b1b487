"""The gradebook as a CSV file Canvas imports into its own gradebook.

Canvas's gradebook import format: the columns ``Student, ID, SIS User ID, SIS Login ID, Section``, then
one column per assignment; a second row ``Points Possible`` with each assignment's maximum score;
then one row per student. Canvas matches a row to its student by the SIS Login ID (here the nbgrader
student id; Canvas's own ID is unknown here and left blank) and leaves a blank score as it was.

Each score is the one nbgrader's own CSV export gives: the submission's score less its late-submission
penalty, never below 0. A lab a student has no graded submission for is blank, never 0; so is one
listed as not graded (``Course.not_graded``).
"""

from __future__ import annotations

import csv
from pathlib import Path

from grader.pipeline import Course, PipelineError

FIXED_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "Points Possible"


def number(value: float) -> str:
    """A score as Canvas reads it: ``7``, ``7.5``, ``7.25`` (no exponent, no trailing zeros)."""
    return f"{value:.4f}".rstrip("0").rstrip(".")


def display_name(student) -> str:
    """``Last, First`` when the gradebook has the student's names; else the one it has; else the id."""
    last, first = (student.last_name or "").strip(), (student.first_name or "").strip()
    if last and first:
        return f"{last}, {first}"
    return last or first or student.id


def canvas_rows(course: Course) -> list[list[str]]:
    """The CSV's rows: the header, the points possible, then each student of the gradebook by id."""
    not_graded = {(o.student, o.lab) for o in course.not_graded()}
    with course.open_gradebook() as gb:
        labs = sorted((a for a in gb.assignments if a.notebooks), key=lambda a: a.name)  # the released labs
        rows = [
            FIXED_COLUMNS + [lab.name for lab in labs],
            [POINTS_POSSIBLE, "", "", "", ""] + [number(lab.max_score) for lab in labs],
        ]
        scores: dict[tuple[str, str], str] = {}
        for lab in labs:
            for sub in lab.submissions:
                if (sub.student.id, lab.name) in not_graded:
                    continue
                penalty = sub.late_submission_penalty or 0.0
                scores[sub.student.id, lab.name] = number(max(0.0, sub.score - penalty))  # as nbgrader's CSV export
        for student in sorted(gb.students, key=lambda s: s.id):
            rows.append(
                [display_name(student), "", student.id, student.id, ""]
                + [scores.get((student.id, lab.name), "") for lab in labs]
            )
    return rows


def export_canvas(course: Course, to: Path) -> Path:
    """Write the course's grades to ``to`` in Canvas's gradebook import format; return its path."""
    to = Path(to).resolve()
    if to.is_dir():
        raise PipelineError(
            f"{to} is a folder. Give the path of the Canvas CSV file to write, e.g. {to / 'canvas.csv'}."
        )
    rows = canvas_rows(course)
    try:
        to.parent.mkdir(parents=True, exist_ok=True)
        with to.open("w", encoding="utf-8", newline="") as fh:
            csv.writer(fh).writerows(rows)
    except OSError as exc:
        raise PipelineError(
            f"Cannot write the Canvas grades to {to} ({exc.strerror or exc}). Give a file in a folder you can write to."
        ) from None
    return to
