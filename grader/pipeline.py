"""The instructor's pipeline over nbgrader: release, autograde a folder, feedback, export, gradebook.

A thin layer: each step is nbgrader's own (``generate_assignment``, ``autograde``,
``generate_feedback``, the CSV export plugin), configured by ``grader.course``. What
this adds is checking the inputs first and saying in one sentence what to do when
they are wrong, and one submission's failure never stops the others.

A submission that cannot be graded (a file that is not a notebook, one nbgrader refuses, a lab the
course does not have, a grading that failed in the grader) is "not graded": it shows no score (whatever
the gradebook held for it is taken out), and it is listed with why and what to do in
``<course>/.grading/not_graded.json``, which each autograde run keeps in step. The gradebook command,
the feedback (a page saying so instead of a score) and the cohort report all show that list.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import os
import re
import shutil
import sqlite3
import sys
import warnings
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from traitlets.config import Config

from labkit.checking import capped, exception_words, neutral
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
    """What became of one submission: graded (``ok``), or not graded, with why and what to do (``message``)."""

    student: str
    lab: str
    ok: bool
    message: str = ""


NOT_GRADED = "not_graded.json"  # under the course's grading store (grader.batch.STORE)
UNFINISHED = (
    "its autograde did not finish, so the gradebook holds it without scores (the run was stopped?). "
    "Autograde it again."
)


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
        self.skipped: list[Outcome] = []  # what the last collect() passed over, and why
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

    def api(self, call_timeout: float | None = None, require_sandbox: bool = False):
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        from grader.batch import ResultStore

        config = configure(Config())
        config.CourseDirectory.root = str(self.root)
        # Check results a batch graded ahead are recorded as they are, not graded again.
        config.TrustedChecks.results_dir = str(ResultStore.of_course(self.root).root)
        config.TrustedChecks.course_root = str(self.root)
        if call_timeout is not None:
            config.TrustedChecks.call_timeout = float(call_timeout)
        config.TrustedChecks.require_isolation = require_sandbox
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
        """Copy ``SUBMISSIONS/<student>/<lab>/*.ipynb`` into the course; return the (student, lab) pairs.

        Given the course's own ``submitted/`` folder, nothing is copied, moved or removed: it is graded in place.
        """
        submissions = Path(submissions)
        if not submissions.is_dir():
            raise PipelineError(f"{submissions} is not a folder. Give a folder laid out as <student>/<lab>/<lab>.ipynb.")
        pairs = []
        problems: list[Outcome] = []
        for student_dir in sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith(".")):
            for lab_dir in sorted(p for p in student_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
                student, lab = student_dir.name, lab_dir.name
                if lab not in LAB_MODULES:
                    problems.append(Outcome(student, lab, False, (
                        f"there is no lab named {lab!r}: rename the folder {student}/{lab} to one of: "
                        f"{', '.join(sorted(LAB_MODULES))}, then autograde again."
                    )))
                    continue
                if not any(lab_dir.glob("*.ipynb")):
                    problems.append(Outcome(student, lab, False, (
                        f"its folder holds no notebook: put the student's {lab}.ipynb in {student}/{lab}, then autograde again."
                    )))
                    continue
                pairs.append((student, lab))
        if not pairs:
            detail = f" ({'; '.join(f'{p.student}/{p.lab}: {p.message}' for p in problems)})" if problems else ""
            raise PipelineError(
                f"{submissions} holds no submissions{detail}. Lay it out as <student>/<lab>/<lab>.ipynb, "
                f"with labs among: {', '.join(sorted(LAB_MODULES))}."
            )
        for student, lab in pairs:
            source, target = submissions / student / lab, self.root / "submitted" / student / lab
            if target.exists() and target.resolve() == source.resolve():
                continue  # the course's own submitted folder (what `nbgrader collect` leaves): graded where it is
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(source, target)
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
        require_sandbox: bool = False,
    ) -> list[Outcome]:
        """Grade the pairs: the checks in parallel (``grader.batch``), then nbgrader records each one.

        ``require_sandbox``: refuse to start (a PipelineError naming what is missing) unless learner code gets
        every protection of the sandbox here; without it, a missing protection is named on ``progress`` first.

        ``call_timeout``: seconds one call into a learner's code may take (default
        ``grader.grading.CALL_TIMEOUT_SECONDS``); the batch workers and nbgrader's recording both use it.

        ``jobs`` worker processes (default: the number of cores), or the Dask cluster at ``scheduler``;
        ``progress``: where to write progress lines (None: nowhere). A rerun after a kill grades only
        what was not finished; the outcomes come back in the order of ``pairs``. Nothing one submission
        holds stops the others: what cannot be graded is an outcome that says why (and is listed as not
        graded, ``not_graded()``).
        """
        from grader.batch import NotGraded, Progress, ResultStore, Task, grade_all, maybe_kill
        from grader.grading import isolation_warning

        if require_sandbox:
            self.require_sandbox()
        elif progress is not None and (warning := isolation_warning()):
            print(warning, file=progress)
        labs = sorted({lab for _, lab in pairs})
        unreleased = {lab for lab in labs if not self.released(lab)}
        if labs and unreleased == set(labs):  # nothing could be graded: the course is not ready
            lab = labs[0]
            raise PipelineError(f"{lab} has not been released in {self.root}: run `python -m grader release {lab}` first.")
        outcomes: dict[tuple[str, str], Outcome] = {}
        tasks = []
        recorded_as: dict[tuple[str, str], str] = {}
        for student, lab in pairs:
            if lab in unreleased:
                outcomes[student, lab] = Outcome(student, lab, False, (
                    f"{lab} has not been released in this course, so there is nothing to grade it against: "
                    f"run `python -m grader release {lab}`, then autograde again."
                ))
                continue
            notebook = self.root / "submitted" / student / lab / f"{lab}.ipynb"
            if not notebook.exists():
                outcomes[student, lab] = Outcome(student, lab, False, (
                    f"its folder holds no {lab}.ipynb (was it given another name?): rename the student's notebook "
                    f"to {lab}.ipynb, then autograde again."
                ))
                continue
            try:
                code = answer_code(read_notebook(notebook))
                code.encode("utf-8")
            except NotANotebook as exc:
                outcomes[student, lab] = Outcome(student, lab, False, _not_a_notebook(notebook, exc))
                continue
            except UnicodeEncodeError as exc:
                outcomes[student, lab] = Outcome(student, lab, False, _not_text(lab, exc))
                continue
            except Exception as exc:  # noqa: BLE001 - cells whose shape nbformat let through
                outcomes[student, lab] = Outcome(student, lab, False, _unreadable_cells(lab, exc))
                continue
            tasks.append(Task(student, lab, code, call_timeout, require_sandbox))
            # What nbgrader recorded depends on the whole notebook, not on the answer code alone: a notebook
            # resubmitted with the same code but other cells (one nbgrader now refuses) is recorded again.
            recorded_as[student, lab] = hashlib.sha256(tasks[-1].key.encode() + notebook.read_bytes()).hexdigest()

        store = ResultStore.of_course(self.root)
        graded = grade_all(
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
            checks = graded.get((student, lab))
            done = (
                (student, lab) in already
                and store.is_marked_recorded(lab, student, recorded_as[student, lab])
                and (self.root / "autograded" / student / lab / f"{lab}.ipynb").exists()
            )
            if isinstance(checks, NotGraded):
                outcomes[student, lab] = Outcome(student, lab, False, checks.reason)
            elif done:
                outcomes[student, lab] = Outcome(student, lab, True)
            else:
                store.forget_recorded(lab, student)
                try:
                    api = api or self.api(call_timeout, require_sandbox)
                    result = api.autograde(lab, student)
                except Exception as exc:  # noqa: BLE001 - nbgrader raising instead of reporting a failure
                    result = {"success": False, "log": "", "exception": exc}
                if result["success"]:
                    store.mark_recorded(lab, student, recorded_as[student, lab])
                outcomes[student, lab] = Outcome(student, lab, result["success"], "" if result["success"] else _not_graded(lab, result))
            if recording:
                recording.advance()
            maybe_kill("record", n)
        finished = [outcomes[pair] if outcomes[pair].ok else replace(outcomes[pair], message=self.neutral(outcomes[pair].message)) for pair in pairs]
        self.record_outcomes(finished)
        return finished

    # --- what is not graded --------------------------------------------------------------

    @property
    def not_graded_path(self) -> Path:
        from grader.batch import STORE

        return self.root / STORE / NOT_GRADED

    def _listed(self) -> dict[tuple[str, str], str]:
        """The not-graded list as kept in the course: (student, lab) -> why (a damaged file reads as empty)."""
        try:
            data = json.loads(self.not_graded_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        entries = data.get("not_graded") if isinstance(data, dict) else None
        listed = {}
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("student", "lab", "why")):
                listed[entry["student"], entry["lab"]] = entry["why"]
        return listed

    def record_outcomes(self, outcomes: Iterable[Outcome]) -> None:
        """Keep the not-graded list in step with these outcomes: a submission graded now leaves it; one not
        graded joins it, with why, and whatever the gradebook and earlier runs held for it is taken out, so no
        score is shown for a notebook that was not graded."""
        listed = self._listed()
        not_graded = []
        for o in outcomes:
            if o.ok:
                listed.pop((o.student, o.lab), None)
            else:
                listed[o.student, o.lab] = self.neutral(o.message)
                not_graded.append((o.student, o.lab))
        self._forget_grades(not_graded)
        entries = [{"student": s, "lab": lab, "why": why} for (s, lab), why in sorted(listed.items(), key=lambda i: (i[0][1], i[0][0]))]
        path = self.not_graded_path
        text = json.dumps({"not_graded": entries}, indent=1, ensure_ascii=False)
        try:
            unchanged = path.read_text(encoding="utf-8") == text
        except OSError:
            unchanged = not entries  # nothing to list, and no list yet
        if unchanged:
            return  # a rerun that changes nothing writes nothing
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)

    def neutral(self, text: str) -> str:
        """``text`` without this machine's folders (the course's shown as ``<course>``), short enough to show."""
        return capped(neutral(text, {str(self.root): "<course>"}))

    def _forget_grades(self, pairs: list[tuple[str, str]]) -> None:
        """Take out what the gradebook and the course folders hold for submissions that are not graded now."""
        from nbgrader.api import MissingEntry

        from grader.batch import ResultStore

        if not pairs:
            return
        store = ResultStore.of_course(self.root)
        for student, lab in pairs:
            store.forget_recorded(lab, student)
            for folder in ("autograded", "feedback"):
                path = self.root / folder / student / lab
                if path.is_dir() and path.resolve().is_relative_to(self.root / folder):
                    shutil.rmtree(path)
        if self.db_path.exists():
            with self.open_gradebook() as gb:
                for student, lab in pairs:
                    try:
                        gb.remove_submission(lab, student)
                    except MissingEntry:  # never recorded, or a lab the gradebook does not have
                        continue
                    # Autograde made the student for this submission; left with none, nbgrader's CSV would list them at 0.
                    if not gb.find_student(student).submissions:
                        gb.remove_student(student)

    def not_graded(self) -> list[Outcome]:
        """Every submission of the course that has no score, with why and what to do, by lab then student: the
        list autograde keeps, and any the gradebook holds without scores (an autograde that did not finish)."""
        found = {pair: why for pair, why in self._listed().items()}
        for pair in self._unscored_submissions():
            found.setdefault(pair, UNFINISHED)
        return [Outcome(s, lab, False, why) for (s, lab), why in sorted(found.items(), key=lambda i: (i[0][1], i[0][0]))]

    def _unscored_submissions(self) -> set[tuple[str, str]]:
        """(student, lab) of the submissions the gradebook holds with a check that has no score."""
        if not self.db_path.exists():
            return set()
        with self.open_gradebook() as gb:
            return {
                (sub.student.id, assignment.name)
                for assignment in gb.assignments
                for sub in assignment.submissions
                if _unscored(sub)
            }

    @staticmethod
    def require_sandbox() -> None:
        """Refuse (a PipelineError naming what is missing) unless learner code gets every protection here."""
        from grader.grading import SandboxUnavailable, require_full_isolation

        try:
            require_full_isolation()
        except SandboxUnavailable as exc:
            raise PipelineError(str(exc)) from None

    def _recorded_submissions(self) -> set[tuple[str, str]]:
        """(student, lab) of every submission the gradebook holds."""
        if not self.db_path.exists():
            return set()
        with self.open_gradebook() as gb:
            return {(sub.student.id, assignment.name) for assignment in gb.assignments for sub in assignment.submissions}

    # --- after grading -------------------------------------------------------------------

    def feedback(self, pairs: list[tuple[str, str]]) -> tuple[list[Path], list[Outcome]]:
        """Write feedback for each pair; return the pages written and the pairs that failed, with why.

        A pair listed as not graded gets a page saying so, and why, in place of feedback (never a page that
        reads as a score of 0); it is among the failures, with the path of that page.
        """
        listed = {(o.student, o.lab): o.message for o in self.not_graded()}
        api = None
        paths, failures = [], []
        for student, lab in pairs:
            if (student, lab) in listed:
                note = self.write_not_graded_note(student, lab, listed[student, lab])
                failures.append(Outcome(student, lab, False, f"it was not graded, and {note} says so: {listed[student, lab]}"))
                continue
            if not (self.root / "autograded" / student / lab / f"{lab}.ipynb").exists():
                failures.append(Outcome(student, lab, False, "it has no autograded notebook, because its autograde did not finish"))
                continue
            api = api or self.api()
            result = api.generate_feedback(lab, student)
            if result["success"]:
                paths.append(self.root / "feedback" / student / lab / f"{lab}.html")
            else:
                failures.append(Outcome(student, lab, False, _last_line(result)))
        return paths, failures

    def write_not_graded_note(self, student: str, lab: str, why: str) -> Path:
        """The page a learner finds in place of feedback for a submission that was not graded."""
        folder = self.root / "feedback" / student / lab
        if folder.is_dir():
            shutil.rmtree(folder)  # an earlier submission's feedback is not this one's
        folder.mkdir(parents=True)
        path = folder / f"{lab}.html"
        path.write_text(not_graded_page(student, lab, self.neutral(why)), encoding="utf-8")
        return path

    def not_graded_notes(self) -> list[tuple[Outcome, Path]]:
        """A page for each submission not graded, saying so and why; each with the page's path."""
        return [(o, self.write_not_graded_note(o.student, o.lab, o.message)) for o in self.not_graded()]

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
        """One row per graded submission: student, lab, score, max score (what has no score is in not_graded())."""
        rows = []
        with self.open_gradebook() as gb:
            for assignment in gb.assignments:
                for sub in assignment.submissions:
                    if _unscored(sub):
                        continue
                    rows.append({"student": sub.student.id, "lab": assignment.name, "score": sub.score, "max_score": sub.max_score})
        return sorted(rows, key=lambda r: (r["lab"], r["student"]))


def _unscored(submission) -> bool:
    """nbgrader records a submission before grading it: one whose grading did not finish has checks without a score."""
    return any(g.auto_score is None and g.manual_score is None for nb in submission.notebooks for g in nb.grades)


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


def _not_text(lab: str, exc: UnicodeEncodeError) -> str:
    char = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else ""
    return (
        f"its answer cells hold characters that are not text ({ascii(char)}, a lone surrogate, which no file can "
        f"hold), so its code cannot be run. Ask the student to remove them and save {lab}.ipynb again in Jupyter, "
        "put it in place of this one and autograde again."
    )


def _unreadable_cells(lab: str, exc: Exception) -> str:
    return (
        f"its cells cannot be read as a lab notebook's ({exception_words(exc)}); it was edited outside Jupyter? "
        f"Ask the student for {lab}.ipynb as Jupyter saved it, put it in place of this one and autograde again."
    )


def _nbgrader_refusal(log: str) -> str | None:
    """What nbgrader refused in a notebook, in words, from its log (None: not a refusal it explains)."""
    # The message's own line, not the line of nbgrader's code that the traceback quotes.
    checksum = re.findall(r"Inconsistent checksums for cell ([\w-]+)\s*$", log, re.MULTILINE)
    if checksum:
        return (
            f"the locked cell {checksum[-1]!r} of the release was changed in a way it cannot undo: "
            "its nbgrader metadata was edited"
        )
    if "Notebook failed to validate" in log:
        unknown = re.findall(r"Cell '([^'\n]*)' does not exist in the database\s*$", log, re.MULTILINE)
        if unknown:
            return f"its nbgrader metadata is damaged: a cell carries the grade_id {unknown[0]!r}, which no cell of the released lab has"
        details = [d for d in re.findall(r"ValidationError: ([^\n]+)$", log, re.MULTILINE) if "Notebook failed to validate" not in d]
        detail = f" ({capped(details[0], 200)})" if details else ""
        return f"its nbgrader metadata is damaged{detail}"
    if re.search(r"use an? (newer|old) version", log):
        return "its nbgrader metadata is of another version of nbgrader than the course's"
    return None


def _not_graded(lab: str, result: dict) -> str:
    """Why nbgrader did not grade a submission, and what to do."""
    if result.get("exception") is not None:
        return (
            f"nbgrader could not grade it ({exception_words(result['exception'])}). Check that it is the student's "
            f"{lab} notebook with the graded cells left in place, then autograde again."
        )
    log = result.get("log") or ""
    grader_failed = re.findall(r"GradingFailed: (.+)$", log, re.MULTILINE)
    if grader_failed:  # grader.course.TrustedChecks could not run the checks: no fault of the notebook
        return (
            f"{grader_failed[-1].rstrip('.')}; this is not a mark, and nothing was recorded for it. It may pass on a "
            "second try (if it fails the same way again, keep the submission and this message for the grader's "
            "maintainers): autograde again."
        )
    refusal = _nbgrader_refusal(log)
    if refusal:
        return (
            f"nbgrader could not grade it ({refusal}). Ask the student to copy their answers into a fresh copy of the "
            f"released {lab}.ipynb (or put the notebook's nbgrader metadata back as released), put it in place of "
            "this one and autograde again."
        )
    return (
        f"nbgrader could not grade it ({_last_line(result)}). Check that it is the student's {lab} notebook "
        "with the graded cells left in place, then autograde again."
    )


def not_graded_page(student: str, lab: str, why: str) -> str:
    """A learner's page in place of feedback: the submission was not graded, why, and that this is no score."""
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(lab)}: not graded</title>"
        "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto;padding:0 1em}</style></head><body>\n"
        f"<h1>{html.escape(lab)}: not graded</h1>\n"
        f"<p>The submission of {html.escape(student)} for {html.escape(lab)} was not graded, so it has no score yet: "
        "this is not a score of 0.</p>\n"
        f"<p>Why: {html.escape(why)}</p>\n"
        "<p>Your instructor has the same note. Once a notebook that can be graded is in its place, it is graded "
        "and this page is replaced by your feedback.</p>\n"
        "</body></html>\n"
    )


def format_not_graded(outcomes: list[Outcome]) -> str:
    """The not-graded section of the gradebook: student, lab, and why with what to do ("" when there is none)."""
    if not outcomes:
        return ""
    width = max(len("student"), *(len(o.student) for o in outcomes))
    lab_width = max(20, *(len(o.lab) for o in outcomes))
    lines = [
        f"Not graded ({len(outcomes)}): these have no score; do what each line says, then autograde them again.",
        f"{'student':<{width}}  {'lab':<{lab_width}}  why",
    ]
    lines += [f"{o.student:<{width}}  {o.lab:<{lab_width}}  {o.message}" for o in outcomes]
    return "\n".join(lines)


def format_gradebook(rows: list[dict]) -> str:
    if not rows:
        return "(no graded submissions)"
    width = max(len(r["student"]) for r in rows)
    lines = [f"{'student':<{width}}  {'lab':<20}  score"]
    for r in rows:
        pct = 100 * r["score"] / r["max_score"] if r["max_score"] else 0
        lines.append(f"{r['student']:<{width}}  {r['lab']:<20}  {r['score']:g}/{r['max_score']:g} ({pct:.0f} %)")
    return "\n".join(lines)
