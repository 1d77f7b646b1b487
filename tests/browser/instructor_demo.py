"""The demo course on a few of its samples, one lab and one quiz submission with failures, and what its gradebook holds."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from grader.pipeline import DEFAULT_COURSE, SAMPLE_SUBMISSIONS
from grader.quizzes import quiz

from .labpage import REPO

DEMO_TIMEOUT = 600  # seconds for the demo to release, grade and report
# A few of the demo's samples (grading all of them takes minutes): failures in every lab, and in lab 1 full marks
# beside a near miss (51 of 52).
SAMPLES = {
    "lab1_error_results": ["solution", "retries_past_the_cap", "retries_business_error"],
    "lab2_scopes_expansion": ["project_beats_local"],
    "lab3_tools_resources": ["catalog_as_a_tool"],
    "lab4_server_integration": ["private_tool_left_in"],
}
FAILING_LAB = ("retries_business_error", "lab1_error_results", "decide_business_stops")
QUIZ = "quiz01_structured_tool_errors"
QUIZ_STUDENT = "retries_business_error"
QUIZ_WRONG = ("q01", "q02")  # the questions the quiz submission answers wrong; the rest it answers right

# What `python -m grader demo` does (grader.cli.build_demo), on the samples in the folder given first, less one step:
# its release does not grade each lab's own solution first (Course.validate_source). That a lab's solution earns
# every point when released is tests/grader/test_pipeline.py's (it releases every lab), and test_labs.py runs each
# solution's checks and Validate in the browser; the quizzes' notebooks are still checked against their questions.
DEMO = """
import sys
from grader.cli import build_demo
from grader.pipeline import Course
from grader.quizzes import is_quiz

validate_source = Course.validate_source
Course.validate_source = lambda course, name: validate_source(course, name) if is_quiz(name) else None
_, outcomes = build_demo(sys.argv[2], sys.argv[1])
sys.exit(0 if all(o.ok for o in outcomes) else 1)
"""


def quiz_submission(folder: Path) -> None:
    """``folder/<student>/<quiz>/<quiz>.ipynb``: the quiz as handed out, answered right except QUIZ_WRONG."""
    nb = nbformat.read(DEFAULT_COURSE / "source" / QUIZ / f"{QUIZ}.ipynb", as_version=4)
    letters = {}
    for question in quiz(QUIZ).questions:
        right = question.answer
        letters[question.id] = "ABCD"[("ABCD".index(right) + 1) % 4] if question.id in QUIZ_WRONG else right
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in letters:
            cell.source = f'answer("{grade_id}", "{letters[grade_id]}")'
    (folder / QUIZ_STUDENT / QUIZ).mkdir(parents=True)
    nbformat.write(nb, folder / QUIZ_STUDENT / QUIZ / f"{QUIZ}.ipynb")


class DemoBuild:
    """The demo course being built in the background (it takes a while): started early, waited for when needed."""

    def __init__(self, work: Path, samples: Path) -> None:
        for lab, students in SAMPLES.items():
            for student in students:
                shutil.copytree(SAMPLE_SUBMISSIONS / student / lab, samples / student / lab)
        quiz_submission(samples)
        self.work = work
        self.output = samples.parent / f"{samples.name}-demo.log"
        with self.output.open("wb") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-c", DEMO, str(samples), str(work)],
                cwd=REPO, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip

    def wait(self) -> Path:
        """The built course; fail with the demo's output if it failed."""
        try:
            returncode = self.process.wait(timeout=DEMO_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.stop()
            returncode = None
        text = self.output.read_text(errors="replace")
        assert returncode == 0, f"the demo failed ({returncode}):\n{text[-4000:]}"
        return self.work

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def gradebook_figures(course: Path) -> dict:
    """What the course's gradebook holds, read with nbgrader's own API: per assignment its submissions, mean and
    maximum score, and how many scored full marks; per student their name; per submission its score, failed checks,
    automatic scores and notebook id; and the assignments released to the course's exchange."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assignments = {
            a.name: {"submissions": a.num_submissions, "mean": gb.average_assignment_score(a.name), "max": a.max_score}
            for a in gb.assignments
        }
        students = {s.id: (s.first_name, s.last_name) for s in gb.students}
        submissions = {}
        for name in assignments:
            for sub in gb.assignment_submissions(name):
                notebook = sub.notebooks[0]
                submissions[sub.student_id, name] = {
                    "score": sub.score,
                    "max": sub.max_score,
                    "notebook_id": notebook.id,
                    "failed": [g.name for g in notebook.grades if g.score < g.max_score],
                    "auto": {g.name: g.auto_score for g in notebook.grades},
                }
    full_marks = {
        name: sum(s["score"] == s["max"] for (_, lab), s in submissions.items() if lab == name)
        for name, a in assignments.items() if a["submissions"]
    }  # fmt: skip
    released = {path.name for path in course.glob("exchange/*/outbound/*")}  # what the course's exchange holds
    return {
        "assignments": assignments, "students": students, "submissions": submissions, "full_marks": full_marks,
        "released": released,
    }  # fmt: skip
