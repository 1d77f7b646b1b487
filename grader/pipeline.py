"""The instructor's pipeline over nbgrader: release, autograde a folder, feedback, export, gradebook.

A thin layer: each step is nbgrader's own (``generate_assignment``, ``autograde``,
``generate_feedback``, the CSV export plugin), configured by ``grader.course``. What
this adds is checking the inputs first and saying in one sentence what to do when
they are wrong, and one submission's failure never stops the others.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from traitlets.config import Config

from grader.course import configure
from grader.grading import grade_code
from grader.labs import LAB_MODULES, UnknownLab
from grader.notebook import NotANotebook, answer_code, read_notebook

REPO = Path(__file__).resolve().parents[1]
DEFAULT_COURSE = REPO / "labs"
SAMPLE_SUBMISSIONS = REPO / "tests" / "submissions"


class PipelineError(Exception):
    """A problem with the pipeline's input; the message says what to do."""


@dataclass(frozen=True)
class Outcome:
    student: str
    lab: str
    ok: bool
    message: str = ""


def _quiet_nbgrader() -> None:
    for name in ("traitlets", "NbGraderAPI", "nbgrader"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # nbgrader's own gradebook code trips these SQLAlchemy warnings; they are not ours to fix.
    warnings.filterwarnings("ignore", message=r".*not in session.*")


def _tools_on_path() -> None:
    """nbgrader runs the ``alembic`` command by name: make this interpreter's scripts findable."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


class Course:
    """An nbgrader course directory: ``source/`` with the labs, and what nbgrader writes beside it."""

    def __init__(self, root: Path = DEFAULT_COURSE) -> None:
        self.root = Path(root).resolve()
        if not (self.root / "source").is_dir():
            raise PipelineError(
                f"{self.root} is not a course folder: it has no source/ folder. "
                f"Pass --course with the folder that holds source/ (the repository's is {DEFAULT_COURSE})."
            )
        self.skipped: list[str] = []  # what the last collect() passed over, and why
        _quiet_nbgrader()
        _tools_on_path()

    @property
    def db_path(self) -> Path:
        return self.root / "gradebook.db"

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.db_path}"

    def labs(self) -> list[str]:
        return sorted(p.name for p in (self.root / "source").iterdir() if p.is_dir() and p.name in LAB_MODULES)

    def api(self, call_timeout: float | None = None):
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        from grader.batch import ResultStore

        config = configure(Config())
        config.CourseDirectory.root = str(self.root)
        # Check results a batch graded ahead are recorded as they are, not graded again.
        config.TrustedChecks.results_dir = str(ResultStore.of_course(self.root).root)
        if call_timeout is not None:
            config.TrustedChecks.call_timeout = float(call_timeout)
        coursedir = CourseDirectory(config=config)
        return NbGraderAPI(coursedir=coursedir, config=config)

    def check_lab(self, lab: str) -> None:
        if lab not in LAB_MODULES:
            raise PipelineError(f"{UnknownLab(lab)} Check the spelling and run the command again with one of them.")
        if not (self.root / "source" / lab).is_dir():
            raise PipelineError(
                f"Lab {lab!r} has no folder in {self.root / 'source'}. Pass --course with the course that holds it."
            )

    # --- release -------------------------------------------------------------------------

    def validate_source(self, lab: str) -> None:
        """Refuse to release a lab whose own solution does not earn every point."""
        notebook = self.root / "source" / lab / f"{lab}.ipynb"
        results = grade_code(lab, answer_code(read_notebook(notebook)))
        failed = [r for r in results if not r.passed]
        if failed:
            lines = "; ".join(r.line() for r in failed)
            raise PipelineError(
                f"The solution in {notebook} fails its own checks, so {lab} was not released: {lines}. "
                "Fix the solution's answer cells and release again."
            )

    def release(self, labs: list[str] | None = None) -> list[Path]:
        labs = labs or self.labs()
        for lab in labs:
            self.check_lab(lab)
        released = []
        api = self.api()
        for lab in labs:
            self.validate_source(lab)
            result = api.generate_assignment(lab)
            if not result["success"]:
                raise PipelineError(
                    f"nbgrader could not release {lab}: {_last_line(result)}. Fix the source notebook and release again."
                )
            released.append(self.root / "release" / lab)
        return released

    def released(self, lab: str) -> bool:
        return (self.root / "release" / lab).is_dir() and self.db_path.exists()

    # --- autograde -----------------------------------------------------------------------

    def collect(self, submissions: Path) -> list[tuple[str, str]]:
        """Copy ``SUBMISSIONS/<student>/<lab>/*.ipynb`` into the course; return the (student, lab) pairs."""
        submissions = Path(submissions)
        if not submissions.is_dir():
            raise PipelineError(f"{submissions} is not a folder. Give a folder laid out as <student>/<lab>/<lab>.ipynb.")
        pairs = []
        problems = []
        for student_dir in sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith(".")):
            for lab_dir in sorted(p for p in student_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
                if lab_dir.name not in LAB_MODULES:
                    problems.append(f"{lab_dir}: there is no lab named {lab_dir.name!r} (rename the folder to one of: {', '.join(sorted(LAB_MODULES))})")
                    continue
                if not any(lab_dir.glob("*.ipynb")):
                    problems.append(f"{lab_dir}: no notebook in it (put the student's {lab_dir.name}.ipynb there)")
                    continue
                pairs.append((student_dir.name, lab_dir.name))
        if not pairs:
            detail = f" ({'; '.join(problems)})" if problems else ""
            raise PipelineError(
                f"{submissions} holds no submissions{detail}. Lay it out as <student>/<lab>/<lab>.ipynb, "
                f"with labs among: {', '.join(sorted(LAB_MODULES))}."
            )
        for student, lab in pairs:
            target = self.root / "submitted" / student / lab
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(submissions / student / lab, target)
        self.skipped = problems
        return pairs

    def autograde(
        self,
        pairs: list[tuple[str, str]],
        *,
        jobs: int | None = None,
        scheduler: str | None = None,
        progress: TextIO | None = None,
        call_timeout: float | None = None,
    ) -> list[Outcome]:
        """Grade the pairs: the checks in parallel (``grader.batch``), then nbgrader records each one.

        ``call_timeout``: seconds one call into a learner's code may take (default
        ``grader.grading.CALL_TIMEOUT_SECONDS``); the batch workers and nbgrader's recording both use it.

        ``jobs`` worker processes (default: the number of cores), or the Dask cluster at ``scheduler``;
        ``progress``: where to write progress lines (None: nowhere). A rerun after a kill grades only
        what was not finished; the outcomes come back in the order of ``pairs``.
        """
        from grader.batch import Progress, ResultStore, Task, grade_all, maybe_kill

        for lab in sorted({lab for _, lab in pairs}):
            if not self.released(lab):
                raise PipelineError(f"{lab} has not been released in {self.root}: run `python -m grader release {lab}` first.")
        outcomes: dict[tuple[str, str], Outcome] = {}
        tasks = []
        for student, lab in pairs:
            notebook = self.root / "submitted" / student / lab / f"{lab}.ipynb"
            if not notebook.exists():
                outcomes[student, lab] = Outcome(student, lab, False, f"no {lab}.ipynb in the submission (it was given another name?)")
                continue
            try:
                nb = read_notebook(notebook)
            except NotANotebook as exc:
                outcomes[student, lab] = Outcome(student, lab, False, _not_a_notebook(notebook, exc))
                continue
            tasks.append(Task(student, lab, answer_code(nb), call_timeout))

        store = ResultStore.of_course(self.root)
        grade_all(
            tasks,
            store,
            jobs=jobs,
            scheduler=scheduler,
            progress=Progress(len(tasks), "checks", stream=progress) if progress and tasks else None,
        )

        recording = Progress(len(tasks), "record", stream=progress) if progress and tasks else None
        already = self._recorded_submissions()
        api = None
        for n, task in enumerate(tasks, start=1):
            student, lab = task.student, task.lab
            done = (
                (student, lab) in already
                and store.is_marked_recorded(lab, student, task.key)
                and (self.root / "autograded" / student / lab / f"{lab}.ipynb").exists()
            )
            if done:
                outcomes[student, lab] = Outcome(student, lab, True)
            else:
                store.forget_recorded(lab, student)
                api = api or self.api(call_timeout)
                result = api.autograde(lab, student)
                if result["success"]:
                    store.mark_recorded(lab, student, task.key)
                outcomes[student, lab] = Outcome(student, lab, result["success"], "" if result["success"] else _not_graded(lab, result))
            if recording:
                recording.advance()
            maybe_kill("record", n)
        return [outcomes[pair] for pair in pairs]

    def _recorded_submissions(self) -> set[tuple[str, str]]:
        """(student, lab) of every submission the gradebook holds."""
        if not self.db_path.exists():
            return set()
        with self.open_gradebook() as gb:
            return {(sub.student.id, assignment.name) for assignment in gb.assignments for sub in assignment.submissions}

    # --- after grading -------------------------------------------------------------------

    def feedback(self, pairs: list[tuple[str, str]]) -> tuple[list[Path], list[Outcome]]:
        """Write feedback for each pair; return the pages written and the pairs that failed, with why."""
        api = self.api()
        paths, failures = [], []
        for student, lab in pairs:
            if not (self.root / "autograded" / student / lab / f"{lab}.ipynb").exists():
                failures.append(Outcome(student, lab, False, "it has no autograded notebook, because its autograde did not finish"))
                continue
            result = api.generate_feedback(lab, student)
            if result["success"]:
                paths.append(self.root / "feedback" / student / lab / f"{lab}.html")
            else:
                failures.append(Outcome(student, lab, False, _last_line(result)))
        return paths, failures

    def export(self, to: Path) -> Path:
        from nbgrader.plugins import CsvExportPlugin

        to = Path(to).resolve()
        if to.is_dir():
            raise PipelineError(f"{to} is a folder. Give --to the path of the CSV file to write, e.g. {to / 'grades.csv'}.")
        with self.open_gradebook() as gb:
            try:
                to.parent.mkdir(parents=True, exist_ok=True)
                CsvExportPlugin(to=str(to)).export(gb)
            except OSError as exc:
                raise PipelineError(
                    f"Cannot write the grades to {to} ({exc.strerror or exc}). Give --to a file in a folder you can write to."
                ) from None
        return to

    def require_gradebook(self) -> None:
        if not self.db_path.exists():
            raise PipelineError(f"{self.root} has no gradebook yet: release a lab and autograde submissions first.")

    @contextmanager
    def open_gradebook(self):
        """nbgrader's gradebook of this course; a damaged file ends in a PipelineError saying what to do."""
        from nbgrader.api import Gradebook
        from sqlalchemy.exc import SQLAlchemyError

        self.require_gradebook()
        try:
            with Gradebook(self.db_url, course_id=_course_id()) as gb:
                yield gb
        except (SQLAlchemyError, sqlite3.Error) as exc:  # junk bytes, a truncated file, missing tables
            raise PipelineError(
                f"The gradebook {self.db_path} cannot be read ({type(exc).__name__}), so nothing was changed. "
                "Restore it from a backup, or move it aside, release the labs again and autograde again."
            ) from None

    def check_gradebook(self) -> None:
        """Refuse early, before grading anything, when a gradebook exists but cannot be read."""
        if self.db_path.exists():
            with self.open_gradebook():
                pass  # opening reads the course table, which is what a damaged file fails at

    def gradebook(self) -> list[dict]:
        """One row per graded submission: student, lab, score, max score."""
        from nbgrader.api import MissingEntry

        rows = []
        with self.open_gradebook() as gb:
            for assignment in gb.assignments:
                for student in gb.students:
                    try:
                        sub = gb.find_submission(assignment.name, student.id)
                    except MissingEntry:
                        continue
                    rows.append({"student": student.id, "lab": assignment.name, "score": sub.score, "max_score": sub.max_score})
        return sorted(rows, key=lambda r: (r["lab"], r["student"]))


def _course_id() -> str:
    from grader.course import COURSE_ID

    return COURSE_ID


def _last_line(result: dict) -> str:
    """The most telling line of an nbgrader failure: the last exception line of its log."""
    lines = [line.strip() for line in (result.get("log") or "").splitlines()]
    for line in reversed(lines):
        if ("Error" in line or "Exception" in line) and not line.startswith("[ERROR]"):
            return line
    errors = [line for line in lines if line.startswith("[ERROR]")]
    return errors[-1] if errors else "no details"


def _not_a_notebook(notebook: Path, exc: NotANotebook) -> str:
    if notebook.stat().st_size == 0:
        what = f"{notebook.name} is an empty file, not a readable Jupyter notebook"
    else:  # name the file as the student handed it in, not by its copy inside the course
        what = str(exc).replace(str(notebook), notebook.name).rstrip(".")
    return f"{what}. Ask the student for the notebook as Jupyter saved it, put it in place of this one and autograde again."


def _not_graded(lab: str, result: dict) -> str:
    return (
        f"nbgrader could not grade it ({_last_line(result)}). Check that it is the student's {lab} notebook "
        "with the graded cells left in place, then autograde again."
    )


def format_gradebook(rows: list[dict]) -> str:
    if not rows:
        return "(no graded submissions)"
    width = max(len(r["student"]) for r in rows)
    lines = [f"{'student':<{width}}  {'lab':<20}  score"]
    for r in rows:
        pct = 100 * r["score"] / r["max_score"] if r["max_score"] else 0
        lines.append(f"{r['student']:<{width}}  {r['lab']:<20}  {r['score']:g}/{r['max_score']:g} ({pct:.0f} %)")
    return "\n".join(lines)
