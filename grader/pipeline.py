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

import datetime
import gc
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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from traitlets.config import Config

from grader import content
from grader.course import configure
from grader.engine.grading import grade_code
from grader.errors import PipelineError
from grader.labs import LAB_MODULES, UnknownLab
from grader.notebook import NotANotebook, answer_code, read_notebook
from grader.quizzes import QUIZ_MODULES, UnknownQuiz, is_quiz
from labkit.checking import capped, exception_words, neutral

# What the course can grade: the labs, then the quizzes and the mock exam (grader.quizzes).
ASSIGNMENTS = [*sorted(LAB_MODULES), *QUIZ_MODULES]


def quiz_answers(nb) -> str:
    """A quiz submission's answers as text (each graded cell's grade id and source): what its grading depends on."""
    from grader.course import graded_cells

    return json.dumps([[c.metadata.nbgrader.get("grade_id"), c.source] for c in graded_cells(nb)], ensure_ascii=False)


# The course's content (grader.content): the checkout's folders, or an installed package's copy of them.
REPO = content.ROOT
DEFAULT_COURSE = content.COURSE
SAMPLE_SUBMISSIONS = content.SAMPLE_SUBMISSIONS


@dataclass(frozen=True)
class Outcome:
    """What became of one submission: graded (``ok``), or not graded, with why and what to do (``message``)."""

    student: str
    lab: str
    ok: bool
    message: str = ""
    # Whether the course's not-graded list holds it. Not so for what never entered the course (a file where a folder
    # should be, a folder name nbgrader cannot take, an outside copy refused): that is this run's to report alone.
    listed: bool = True


NOT_GRADED = "not_graded.json"  # under the course's grading store (grader.engine.batch.STORE)
UNFINISHED = (
    "its autograde did not finish, so the gradebook holds it without scores (the run was stopped?). Autograde it again."
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
    """An nbgrader course: ``source/`` with the labs, what nbgrader writes beside it, and its configuration.

    ``root`` is the folder given (``--course``); its ``nbgrader_config.py`` and the usual Jupyter configuration
    folders are read as nbgrader reads them (``grader.config``), and a ``CourseDirectory.root`` set there moves the
    course, as it does for nbgrader's own commands.
    """

    def __init__(self, root: Path = DEFAULT_COURSE) -> None:
        from grader.config import ConfigError, load

        try:
            self.settings = load(Path(root))
        except ConfigError as exc:
            raise PipelineError(str(exc)) from None
        self.root = self.settings.root
        if not (self.root / "source").is_dir():
            moved = self.root != self.settings.folder
            raise PipelineError(
                f"{self.root} is not a course folder: it has no source/ folder. "
                + (
                    f"It is the course folder the configuration sets (CourseDirectory.root, read from "
                    f"{', '.join(map(str, self.settings.files))}): correct that setting, or pass --course with another folder."
                    if moved
                    else f"Pass --course with the folder that holds source/ (the course's own is {DEFAULT_COURSE})."
                )
            )
        self.db_path = self._configured_db_path()
        self.skipped: list[Outcome] = []  # what the last collect() passed over, and why
        _quiet_nbgrader()
        _tools_on_path()

    def _configured_db_path(self) -> Path:
        """The gradebook file: nbgrader's default ``<root>/gradebook.db``, or the SQLite file ``db_url`` names."""
        url = self.settings.setting("CourseDirectory", "db_url") or ""
        if not url:
            return self.root / "gradebook.db"
        prefix = "sqlite:///"
        if not url.startswith(prefix) or not url[len(prefix) :]:
            raise PipelineError(
                f"The configured gradebook (CourseDirectory.db_url = {url!r}) is not an SQLite file, which is the only "
                "gradebook this engine reads: set it to sqlite:///PATH (or remove it for <course>/gradebook.db), "
                "then run the command again."
            )
        return (self.root / url[len(prefix) :]).resolve()

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.db_path}"

    @property
    def course_id(self) -> str:
        """The configured course id (CourseDirectory.course_id; nbgrader's default is none, "")."""
        return str(self.settings.setting("CourseDirectory", "course_id", "") or "").strip()

    @property
    def timezone(self) -> str:
        """The timezone due dates are read and shown in (NbGraderAPI.timezone, as in formgrader)."""
        return str(self.settings.setting("NbGraderAPI", "timezone", "UTC") or "UTC")

    @property
    def exchange_root(self) -> Path:
        from nbgrader.exchange.default import Exchange

        return Path(self.settings.setting("Exchange", "root", Exchange.class_traits()["root"].default_value))

    def labs(self) -> list[str]:
        """The labs, then the quizzes, that the course's source/ folder holds."""
        found = {p.name for p in (self.root / "source").iterdir() if p.is_dir()}
        return [name for name in ASSIGNMENTS if name in found]

    def nbgrader_config(self, call_timeout: float | None = None, require_sandbox: bool = False) -> Config:
        """The course's configuration, and on top of it only what the engine needs: its steps
        (``grader.course.configure``), where batch results are kept, and the limits of this run."""
        from grader.engine.batch import ResultStore

        config = self.settings.copy()
        configure(config)
        config.CourseDirectory.root = str(self.root)
        config.CourseDirectory.db_url = self.db_url
        # Check results a batch graded ahead are recorded as they are, not graded again.
        config.TrustedChecks.results_dir = str(ResultStore.of_course(self.root).root)
        config.TrustedChecks.course_root = str(self.root)
        if call_timeout is not None:
            config.TrustedChecks.call_timeout = float(call_timeout)
        config.TrustedChecks.require_isolation = require_sandbox
        return config

    def api(self, call_timeout: float | None = None, require_sandbox: bool = False, extra: Config | None = None):
        """nbgrader's API for this course, configured by ``nbgrader_config()`` (and ``extra`` on top)."""
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        config = self.nbgrader_config(call_timeout, require_sandbox)
        if extra is not None:
            config.merge(extra)
        coursedir = CourseDirectory(config=config)
        return NbGraderAPI(coursedir=coursedir, config=config)

    def recorder(self, call_timeout: float | None = None, require_sandbox: bool = False):
        """nbgrader's Autograde for a whole batch (``grader.course.BatchAutograde``): made once, with the gradebook
        open once, each submission recorded in one transaction. Close it when the batch is recorded."""
        from grader.course import BatchAutograde

        api = self.api(call_timeout, require_sandbox)
        return BatchAutograde(coursedir=api.coursedir, parent=api)

    def check_lab(self, lab: str) -> None:
        if lab not in ASSIGNMENTS:
            raise PipelineError(
                f"{UnknownLab(lab)} Quizzes: {', '.join(QUIZ_MODULES)}. Check the spelling and run the command again "
                "with one of them."
            )
        if not (self.root / "source" / lab).is_dir():
            raise PipelineError(
                f"Lab {lab!r} has no folder in {self.root / 'source'}. Pass --course with the course that holds it."
            )

    # --- release -------------------------------------------------------------------------

    def validate_source(self, lab: str) -> None:
        """Refuse to release a lab whose own solution does not earn every point; a quiz's notebook is brought in step
        with its questions (``validate_quiz``)."""
        notebook = self.root / "source" / lab / f"{lab}.ipynb"
        if is_quiz(lab):
            self.validate_quiz(lab, notebook)
            return
        results = grade_code(lab, answer_code(read_notebook(notebook)))
        failed = [r for r in results if not r.passed]
        if failed:
            lines = "; ".join(r.line() for r in failed)
            raise PipelineError(
                f"The solution in {notebook} fails its own checks, so {lab} was not released: {lines}. "
                "Fix the solution's answer cells and release again."
            )

    def validate_quiz(self, name: str, notebook: Path) -> None:
        """A quiz's notebook is made from its questions alone (``grader.quizzes.build``): one that is not what they
        make now (the questions changed since it was written) is written again before it is released."""
        from grader.quizzes import quiz
        from grader.quizzes.build import notebook_text

        try:
            text = notebook_text(quiz(name))
        except UnknownQuiz as exc:
            raise PipelineError(f"{exc} So {name} was not released.") from None
        try:
            if notebook.is_file() and notebook.read_text(encoding="utf-8") == text:
                return
            notebook.write_text(text, encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PipelineError(
                f"{notebook} is not the notebook {name}'s questions make, and it cannot be written again "
                f"({exception_words(exc)}): run `python -m grader.quizzes.build {name}` where you can, then release again."
            ) from None

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

    # --- due dates, the exchange ----------------------------------------------------------

    def zone(self):
        """The course's timezone (``timezone``) as a tzinfo; a PipelineError when it names none."""
        from dateutil.tz import gettz

        zone = gettz(self.timezone)
        if zone is None:
            raise PipelineError(
                f"The course's timezone (NbGraderAPI.timezone = {self.timezone!r}) is not a timezone: set it in "
                "nbgrader_config.py to a name such as 'UTC' or 'Europe/Berlin', then run the command again."
            )
        return zone

    def parse_due(self, text: str) -> datetime.datetime:
        """A due date as nbgrader stores it (UTC, no zone) from ``YYYY-MM-DD HH:MM[:SS] [ZONE]``.

        A time without a zone is in the course's timezone (``timezone``), as formgrader reads it; a zone may be
        a name (``Europe/Berlin``) or an offset (``+0100``), as nbgrader's ``parse_utc`` reads them.
        """
        from dateutil.parser import parse
        from dateutil.tz import gettz
        from nbgrader.utils import parse_utc

        example = (
            'for example --due "2026-12-10 17:00" (in the course\'s timezone, '
            f'{self.timezone}) or "2026-12-10 17:00 Europe/Berlin"'
        )
        parts = text.strip().split()
        try:
            if len(parts) == 3:
                zone = parts[2]
                if not re.fullmatch(r"[+-]?\d{1,4}", zone) and gettz(zone) is None:
                    raise PipelineError(f"--due {text!r} names no timezone nbgrader knows ({zone!r}): {example}.")
                return parse_utc(" ".join(parts))
            if len(parts) not in (1, 2):
                raise ValueError(text)
            when = parse(" ".join(parts))
        except (ValueError, OverflowError):
            raise PipelineError(f"--due {text!r} is not a date and time: {example}.") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=self.zone())
        return parse_utc(when)

    def show_time(self, when: datetime.datetime) -> str:
        """A UTC time from the gradebook, in the course's timezone."""
        from nbgrader.utils import as_timezone

        local = as_timezone(when, self.timezone)
        return f"{local:%Y-%m-%d %H:%M} {local.tzname() or self.timezone}"

    def set_due(self, lab: str, when: datetime.datetime) -> None:
        """Store ``lab``'s due date in the gradebook, where nbgrader's own ``db assignment add --duedate`` puts it."""
        with self.open_gradebook() as gb:
            gb.update_or_create_assignment(lab, duedate=when)

    def due_dates(self) -> dict[str, datetime.datetime | None]:
        """Each lab's due date in the gradebook (UTC), however it was set (here, by nbgrader db, in formgrader)."""
        if not self.db_path.exists():
            return {}
        with self.open_gradebook() as gb:
            return {a.name: a.duedate for a in gb.assignments}

    def require_course_id(self, doing: str) -> str:
        if not self.course_id:
            raise PipelineError(
                f"The course has no id, which nbgrader's exchange needs to {doing}: set c.CourseDirectory.course_id "
                f"in {self.settings.folder / 'nbgrader_config.py'}, then run the command again."
            )
        return self.course_id

    def check_exchange_release(self, lab: str, force: bool = False) -> Path:
        """Where ``lab`` goes in the exchange; a PipelineError if it is there already and ``force`` is not given."""
        where = self.exchange_root / self.require_course_id(f"release {lab} there") / "outbound" / lab
        if where.exists() and not force:
            raise PipelineError(
                f"{lab} is already in the exchange ({where}), and learners may have fetched it: run the command "
                "again with --force to replace it."
            )
        return where

    def release_to_exchange(self, lab: str, force: bool = False) -> Path:
        """nbgrader's ``release_assignment``: the released lab into the exchange, where learners fetch it."""
        where = self.check_exchange_release(lab, force)
        extra = Config()
        extra.ExchangeReleaseAssignment.force = force
        result = self.api(extra=extra).release_assignment(lab)
        if not result or not result["success"]:
            said = _exchange_said(result)
            raise PipelineError(
                f"nbgrader could not release {lab} to the exchange ({said}). Check c.Exchange.root "
                f"({self.exchange_root}) in nbgrader_config.py and that you may write there, then release again."
            )
        return where

    def _collected(self, lab: str) -> dict[str, str]:
        """student -> the timestamp.txt of their submission of ``lab`` in submitted/ ("" when it has none)."""
        found = {}
        for folder in sorted((self.root / "submitted").glob(f"*/{lab}")):
            stamp = folder / "timestamp.txt"
            found[folder.parent.name] = (
                stamp.read_text(encoding="utf-8", errors="replace").strip() if stamp.is_file() else ""
            )
        return found

    def collect_from_exchange(self, lab: str) -> list[tuple[str, str]]:
        """nbgrader's ``collect``: each learner's latest submission of ``lab`` from the exchange into submitted/.

        Returns (student, time submitted) of each submission that is new or newer than the one the course held.
        """
        course_id = self.require_course_id(f"collect {lab} from it")
        before = self._collected(lab)
        result = self.api().collect(lab)
        if not result or not result["success"]:
            said = _exchange_said(result)
            inbound = self.exchange_root / course_id / "inbound"
            if "Course not found" in said:
                raise PipelineError(
                    f"The exchange holds nothing of the course {course_id!r}: {inbound} does not exist (is c.Exchange.root, "
                    f"{self.exchange_root}, the one learners submit to?). Release a lab there first with "
                    f"`python -m grader release {lab} --exchange`, then collect once learners have submitted."
                )
            raise PipelineError(
                f"nbgrader could not collect {lab} from the exchange ({said}). Check c.Exchange.root "
                f"({self.exchange_root}) in nbgrader_config.py and that you may read {inbound}, then collect again."
            )
        after = self._collected(lab)
        return [(student, stamp) for student, stamp in after.items() if before.get(student) != stamp]

    def release_feedback(self, pairs: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[Outcome]]:
        """nbgrader's ``release_feedback``: each pair's feedback page into the exchange, where its learner fetches it.

        Only a submission that came through the exchange can get its feedback back that way (nbgrader finds the
        learner by the ``submission_secret.txt`` their submit wrote); the others are failures saying so.
        """
        self.require_course_id("release feedback through it")
        api = None
        released, failures = [], []
        for student, lab in pairs:
            folder = self.root / "feedback" / student / lab
            page = folder / f"{lab}.html"
            if not page.is_file():
                failures.append(Outcome(student, lab, False, "it has no feedback page yet: run feedback first"))
                continue
            if not ((folder / "submission_secret.txt").is_file() and (folder / "timestamp.txt").is_file()):
                failures.append(
                    Outcome(
                        student,
                        lab,
                        False,
                        (
                            "it did not come through the exchange (its folder has no submission_secret.txt, which nbgrader "
                            f"submit writes), so the exchange cannot hand its feedback back: give {page} to the learner yourself"
                        ),
                    )
                )
                continue
            api = api or self.api()
            result = api.release_feedback(lab, student)
            if result and result["success"]:
                released.append((student, lab))
            else:
                failures.append(
                    Outcome(student, lab, False, f"nbgrader could not release it ({_exchange_said(result)})")
                )
        return released, failures

    # --- autograde -----------------------------------------------------------------------

    def collect(self, submissions: Path, lab: str | None = None) -> list[tuple[str, str]]:
        """The (student, lab) pairs of ``SUBMISSIONS/<student>/<lab>/`` to grade, in the course's submitted/ folder.

        The course's own ``submitted/`` (what ``nbgrader collect`` leaves), a student's folder in it, or one of their
        labs there, is graded where it is. Any other folder laid out as ``<student>/<lab>/`` is copied in, files and
        their times (nbgrader's ``timestamp.txt`` too). Nothing a learner handed in is ever deleted, moved or
        changed: a copy replaces only an earlier copy made here from outside (recorded in ``.grading/copied/``),
        never a submission that came another way. ``lab``: only that lab's folders. What is passed over, and why,
        is in ``self.skipped``: an ``Outcome`` whose ``listed`` says whether it joins the course's not-graded list
        (a problem of a submission the course holds nothing else for), or is only this run's to report.
        """
        base, where = self._submissions_folder(Path(submissions))
        in_place = where is not None
        found, problems = self._walk(base, where, lab)
        pairs = [(student, name) for student, name, _ in found]
        if not pairs:
            if lab:
                raise PipelineError(
                    f"{submissions} holds no submission of {lab}. Check --lab, or that the folders are laid out "
                    f"as <student>/{lab}/{lab}.ipynb."
                )
            detail = f" ({'; '.join(f'{p.student}/{p.lab}: {p.message}' for p in problems)})" if problems else ""
            raise PipelineError(
                f"{submissions} holds no submissions{detail}. Lay it out as <student>/<lab>/<lab>.ipynb, "
                f"with labs among: {', '.join(ASSIGNMENTS)}."
            )
        if not in_place:
            pairs = []
            self._clear_incoming()
            for student, name, source in found:
                refused = self._bring_in(source, student, name)
                if refused:
                    problems.append(Outcome(student, name, False, refused, listed=False))
                else:
                    pairs.append((student, name))
        self.skipped = problems
        return pairs

    def _submissions_folder(self, submissions: Path) -> tuple[Path, tuple[str, ...] | None]:
        """The folder to walk, and where it lies in the course's submitted/ (None: outside the course)."""
        layout = "<student>/<lab>/<lab>.ipynb"
        if not submissions.exists():
            raise PipelineError(
                f"{submissions} does not exist. Give the folder of submissions, laid out as {layout}, "
                f"or the course's own {self.root / 'submitted'}."
            )
        if not submissions.is_dir():
            raise PipelineError(
                f"{submissions} is a file, not a folder. Give the folder of submissions, laid out as {layout}."
            )
        resolved = submissions.resolve()
        submitted = (self.root / "submitted").resolve()
        if resolved.is_relative_to(submitted):
            where = resolved.relative_to(submitted).parts
            if len(where) > 2:
                raise PipelineError(
                    f"{submissions} is inside a submission of the course. Give {submitted}, one student's folder in it, "
                    "or one of their lab folders."
                )
            return resolved, where
        if resolved.is_relative_to(self.root):
            raise PipelineError(
                f"{submissions} is inside the course folder {self.root}, but not in its submitted/ folder. Give "
                f"{submitted} (what nbgrader collect fills), a student's folder in it, or a folder outside the course."
            )
        if self.root.is_relative_to(resolved):
            raise PipelineError(
                f"{submissions} holds the course folder {self.root} itself. Give the folder of submissions, laid out as {layout}."
            )
        return resolved, None

    def _walk(
        self, base: Path, where: tuple[str, ...] | None, only: str | None
    ) -> tuple[list[tuple[str, str, Path]], list[Outcome]]:
        """(student, lab, folder) of each submission under ``base``, and what is not one, with why and what to do."""
        in_place = where is not None
        shown = "the course's submitted/ folder" if in_place else str(base)

        def listed(student: str, lab: str, is_its_folder: bool = True) -> bool:
            # A problem of the course's own submission joins its list; any other only if the course holds nothing
            # else for that pair (what it holds, graded or not, stands).
            return (in_place and is_its_folder) or not (self.root / "submitted" / student / lab).exists()

        if where is None or len(where) == 0:
            try:
                students = _entries(base)
            except OSError as exc:
                raise PipelineError(
                    f"{base} cannot be read ({exc.strerror or exc}). Make it readable, then autograde again."
                ) from None
        else:
            students = [base if len(where) == 1 else base.parent]
        found, problems = [], []

        def problem(student: str, lab: str, why: str, listed: bool = False) -> None:
            problems.append(Outcome(_shown_name(student), _shown_name(lab), False, _shown_name(why), listed=listed))

        for student_dir in students:
            student = student_dir.name
            if not student_dir.is_dir():
                if not student.startswith("."):
                    problem(student, "-", _stray_at_student_level(student, shown))
                continue
            try:
                labs = [base] if where is not None and len(where) == 2 else _entries(student_dir)
            except OSError as exc:
                problem(
                    student,
                    "-",
                    f"the folder {student} cannot be read ({exc.strerror or exc}): make it readable, then autograde again.",
                )
                continue
            refused = _refused_student_id(student)
            if student.startswith(".") and not any(p.is_dir() and p.name in ASSIGNMENTS for p in labs):
                continue  # a hidden folder (.git, .ipynb_checkpoints): not a student's
            if refused:
                lab_names = [p.name for p in labs if p.is_dir() and not p.name.startswith(".")] or ["-"]
                for name in lab_names:
                    if not only or name == only:
                        problem(student, name, _rename_student(student, refused, in_place))
                continue
            for lab_dir in labs:
                name = lab_dir.name
                if name.startswith("."):
                    continue
                if not lab_dir.is_dir():
                    stem = Path(name).stem
                    if name.endswith(".ipynb") and stem in ASSIGNMENTS:
                        if not only or stem == only:
                            problem(
                                student,
                                stem,
                                (
                                    f"{student}/{name} is a notebook where the folder {student}/{stem} should be: put it in "
                                    f"that folder ({student}/{stem}/{name}), then autograde again."
                                ),
                                listed(student, stem, is_its_folder=False),
                            )
                    elif not only:
                        problem(
                            student,
                            name,
                            (
                                f"{student}/{name} is a file where a lab's folder should be ({student}/<lab>/<lab>.ipynb), so it "
                                f"was not graded: move it into its lab's folder, or out of {shown}, then autograde again."
                            ),
                        )
                    continue
                if only and name != only:
                    continue
                if name not in ASSIGNMENTS:
                    problem(
                        student,
                        name,
                        (
                            f"there is no lab named {name!r}: rename the folder {student}/{name} to one of: "
                            f"{', '.join(ASSIGNMENTS)}, then autograde again."
                        ),
                        listed(student, name),
                    )
                    continue
                if not any(lab_dir.glob("*.ipynb")):
                    problem(
                        student,
                        name,
                        (
                            f"its folder holds no notebook: put the student's {name}.ipynb in {student}/{name}, then autograde again."
                        ),
                        listed(student, name),
                    )
                    continue
                found.append((student, name, lab_dir))
        # A pair that is graded (its folder) is never listed as not graded for a file beside it.
        graded = {(student, name) for student, name, _ in found}
        return found, [replace(p, listed=False) if (p.student, p.lab) in graded else p for p in problems]

    # --- copies of outside folders -------------------------------------------------------

    @property
    def _copies(self) -> Path:
        from grader.engine.batch import STORE

        return self.root / STORE / COPIED

    def _copy_record(self, key: str, files: dict[str, str]) -> Path:
        """The record that this engine copied these very files to ``key`` ("<student>/<lab>"): one file each, written
        once and never changed, so no run rewrites what another kept."""
        manifest = json.dumps({"copy": key, "files": files}, sort_keys=True, ensure_ascii=False)
        return self._copies / f"{hashlib.sha256(manifest.encode()).hexdigest()}.json"

    def _record_copy(self, key: str, files: dict[str, str]) -> None:
        path = self._copy_record(key, files)
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(
            json.dumps({"copy": key, "files": files}, indent=1, sort_keys=True, ensure_ascii=False), encoding="utf-8"
        )
        os.replace(tmp, path)

    @property
    def _incoming(self) -> Path:
        from grader.engine.batch import STORE

        return self.root / STORE / "incoming"

    def _clear_incoming(self) -> None:
        """What a stopped run left half-copied: copies of outside folders, or an earlier copy made here."""
        if self._incoming.is_dir():
            shutil.rmtree(self._incoming)

    def _bring_in(self, source: Path, student: str, lab: str) -> str | None:
        """Copy ``source`` to the course's submitted/<student>/<lab>; None, or why it was not (and what to do)."""
        target = self.root / "submitted" / student / lab
        key = f"{student}/{lab}"
        try:
            files = _digests(source)
        except OSError as exc:
            return (
                f"a file of {source} cannot be read ({exc.strerror or exc}), so it was not copied into the course: "
                "make it readable, then autograde again."
            )
        try:
            if target.exists() or target.is_symlink():
                held = _digests(target) if target.is_dir() and not target.is_symlink() else None
                if held == files:
                    return None  # the same files are there already
                if held is None or not self._copy_record(key, held).is_file():
                    return (
                        f"the course's submitted/{student}/{lab} already holds a submission that did not come from this "
                        f"folder (collected by nbgrader?), so it was left as it is and this one was not copied: grade "
                        f"{self.root / 'submitted'} itself, or move that folder aside, then autograde again."
                    )
            self._incoming.mkdir(parents=True, exist_ok=True)
            staged = self._incoming / f"{len(os.listdir(self._incoming))}-{os.getpid()}"
            shutil.copytree(source, staged)  # with each file's times: timestamp.txt and all
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():  # an earlier copy made here, unchanged since: this one replaces it
                earlier = staged.with_name(staged.name + "-earlier")
                os.rename(target, earlier)
                os.rename(staged, target)
                shutil.rmtree(earlier)
            else:
                os.rename(staged, target)
            self._record_copy(key, files)
        except OSError as exc:
            return (
                f"it could not be copied into the course's submitted/{student}/{lab} ({exc.strerror or exc}); nothing of "
                "the course's was changed: make room or fix the folder's permissions, then autograde again."
            )
        return None

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
        """Grade the pairs: the checks in parallel (``grader.engine.batch``), and nbgrader records each one as its checks
        come in.

        ``require_sandbox``: refuse to start (a PipelineError naming what is missing) unless learner code gets
        every protection of the sandbox here; without it, a missing protection is named on ``progress`` first.

        ``call_timeout``: seconds one call into a learner's code may take (default
        ``grader.engine.grading.CALL_TIMEOUT_SECONDS``); the batch workers and nbgrader's recording both use it.

        ``jobs`` submissions at once, three of them in the checks' process the command began (``grader.engine.checks_process``;
        else in this process's threads) and one in each further worker process
        (default: ``grader.engine.batch.default_jobs``), or the Dask cluster at ``scheduler``; each submission is
        recorded by nbgrader, in this thread, as soon as its checks are in;
        ``progress``: where to write progress lines (None: nowhere). A rerun after a kill grades only
        what was not finished; the outcomes come back in the order of ``pairs``. Nothing one submission
        holds stops the others: what cannot be graded is an outcome that says why (and is listed as not
        graded, ``not_graded()``).
        """
        from grader.engine.batch import (
            NotGraded,
            Progress,
            ResultStore,
            Task,
            grade_all,
            maybe_kill,
        )
        from grader.engine.grading import isolation_warning

        if require_sandbox:
            self.require_sandbox()
        elif progress is not None and any(not is_quiz(lab) for _, lab in pairs) and (warning := isolation_warning()):
            print(warning, file=progress)
        labs = sorted({lab for _, lab in pairs})
        unreleased = {lab for lab in labs if not self.released(lab)}
        if labs and unreleased == set(labs):  # nothing could be graded: the course is not ready
            lab = labs[0]
            raise PipelineError(
                f"{lab} has not been released in {self.root}: run `python -m grader release {lab}` first."
            )
        # What nbgrader records depends on the late-penalty setting and the due dates too: a change regrades.
        policy = self.late_policy()
        dues = self.due_dates()
        outcomes: dict[tuple[str, str], Outcome] = {}
        tasks = []
        recorded_as: dict[tuple[str, str], str] = {}
        for student, lab in pairs:
            if lab in unreleased:
                outcomes[student, lab] = Outcome(
                    student,
                    lab,
                    False,
                    (
                        f"{lab} has not been released in this course, so there is nothing to grade it against: "
                        f"run `python -m grader release {lab}`, then autograde again."
                    ),
                )
                continue
            notebook = self.root / "submitted" / student / lab / f"{lab}.ipynb"
            if not notebook.exists():
                outcomes[student, lab] = Outcome(
                    student,
                    lab,
                    False,
                    (
                        f"its folder holds no {lab}.ipynb (was it given another name?): rename the student's notebook "
                        f"to {lab}.ipynb, then autograde again."
                    ),
                )
                continue
            late = _timestamp_problem(notebook.parent)
            if late:
                outcomes[student, lab] = Outcome(student, lab, False, late)
                continue
            try:
                held = read_notebook(notebook)
                code = quiz_answers(held) if is_quiz(lab) else answer_code(held)
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
            stamp = notebook.parent / "timestamp.txt"
            recorded_as[student, lab] = hashlib.sha256(
                tasks[-1].key.encode()
                + notebook.read_bytes()
                + (stamp.read_bytes() if stamp.is_file() else b"")
                + f"{dues.get(lab)!r} {policy}".encode()
            ).hexdigest()

        store = ResultStore.of_course(self.root)
        checked = [task for task in tasks if not is_quiz(task.lab)]  # a quiz runs nothing: its recording grades it
        already = self._recorded_submissions()
        recorder = None  # nbgrader's Autograde, made once for the batch, with the gradebook open (BatchAutograde)
        recorded: set[tuple[str, str]] = set()
        recording: Progress | None = None

        def record(task: Task, checks: list | NotGraded | None) -> None:
            """nbgrader records one submission (unless it recorded these very files before), in this thread."""
            nonlocal recorder
            student, lab = task.student, task.lab
            recorded.add((student, lab))
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
                    recorder = recorder or self.recorder(call_timeout, require_sandbox)
                    result = recorder.record(lab, student)
                except Exception as exc:  # noqa: BLE001 - nbgrader raising instead of reporting a failure
                    result = {"success": False, "log": "", "exception": exc}
                if result["success"]:  # committed: the gradebook holds it
                    store.mark_recorded(lab, student, recorded_as[student, lab])
                outcomes[student, lab] = Outcome(
                    student, lab, result["success"], "" if result["success"] else _not_graded(lab, result)
                )
            if recording:
                recording.advance()
            spared.recorded_one()
            maybe_kill("record", len(recorded))

        try:
            with _spared_from_collection() as spared:
                # Each submission is recorded as soon as its checks are in, while the others are checked: this thread
                # would otherwise only wait for the workers.
                graded = grade_all(
                    checked,
                    store,
                    jobs=jobs,
                    scheduler=scheduler,
                    progress=Progress(len(checked), "checks", stream=progress) if progress and checked else None,
                    on_result=record,
                )
                if progress and tasks:
                    recording = Progress(len(tasks), "record", stream=progress)
                    if recorded:  # those recorded during the checks
                        recording.advance(len(recorded))
                for task in tasks:
                    if (task.student, task.lab) not in recorded:
                        record(task, graded.get((task.student, task.lab)))
        finally:
            if recorder is not None:
                recorder.close()
        finished = [
            outcomes[pair]
            if outcomes[pair].ok
            else replace(outcomes[pair], message=self.neutral(outcomes[pair].message))
            for pair in pairs
        ]
        self.record_outcomes(finished)
        self._name_unnamed([o.student for o in finished if o.ok])
        return finished

    def late_policy(self) -> str:
        """The configured late-penalty plugin (AssignLatePenalties.plugin_class and its settings), in one line;
        a PipelineError saying what to fix when nbgrader could not use it, checked before anything is graded."""
        from nbgrader.preprocessors import AssignLatePenalties

        try:
            step = AssignLatePenalties(config=self.nbgrader_config())
            step.init_plugin()
        except Exception as exc:  # noqa: BLE001 - a plugin that cannot be imported, a setting it refuses
            raise PipelineError(
                f"The course's late-penalty setting cannot be used ({exception_words(exc)}): fix "
                "c.AssignLatePenalties.plugin_class and its settings in nbgrader_config.py, then run the command again."
            ) from None
        plugin = step.plugin_inst
        settings = {name: getattr(plugin, name) for name in sorted(plugin.trait_names(config=True))}
        return f"{type(plugin).__module__}.{type(plugin).__qualname__} {settings!r}"

    def name_students(self, roster: dict[str, tuple[str, str]]) -> None:
        """Give each student id its (first, last) name in the gradebook, as ``nbgrader db student import`` does
        (adding the student if the gradebook has none of that id)."""
        with self.open_gradebook() as gb:
            for student, (first, last) in roster.items():
                gb.update_or_create_student(student, first_name=first, last_name=last)

    def _name_unnamed(self, students: list[str]) -> None:
        """A student autograde added to the gradebook, whom no roster names, gets their id as last name: formgrader
        shows that instead of "None, None". A roster imported later (``nbgrader db student import``) names them."""
        if not students:
            return
        with self.open_gradebook() as gb:
            for student in gb.students:
                if student.id in students and student.first_name is None and student.last_name is None:
                    student.first_name, student.last_name = "", student.id
            gb.db.commit()

    # --- what is not graded --------------------------------------------------------------

    @property
    def not_graded_path(self) -> Path:
        from grader.engine.batch import STORE

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
            if not o.listed:
                continue  # this run's to report: nothing of the course's is changed for it
            if o.ok:
                listed.pop((o.student, o.lab), None)
            else:
                listed[o.student, o.lab] = self.neutral(o.message)
                not_graded.append((o.student, o.lab))
        self._forget_grades(not_graded)
        entries = [
            {"student": s, "lab": lab, "why": why}
            for (s, lab), why in sorted(listed.items(), key=lambda i: (i[0][1], i[0][0]))
        ]
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

        from grader.engine.batch import ResultStore

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
        found = dict(self._listed())
        for pair in self._unscored_submissions():
            found.setdefault(pair, UNFINISHED)
        return [
            Outcome(s, lab, False, why) for (s, lab), why in sorted(found.items(), key=lambda i: (i[0][1], i[0][0]))
        ]

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
        from grader.engine.grading import SandboxUnavailable, require_full_isolation

        try:
            require_full_isolation()
        except SandboxUnavailable as exc:
            raise PipelineError(str(exc)) from None

    def _recorded_submissions(self) -> set[tuple[str, str]]:
        """(student, lab) of every submission the gradebook holds."""
        if not self.db_path.exists():
            return set()
        with self.open_gradebook() as gb:
            return {
                (sub.student.id, assignment.name) for assignment in gb.assignments for sub in assignment.submissions
            }

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
                failures.append(
                    Outcome(student, lab, False, f"it was not graded, and {note} says so: {listed[student, lab]}")
                )
                continue
            if not (self.root / "autograded" / student / lab / f"{lab}.ipynb").exists():
                failures.append(
                    Outcome(student, lab, False, "it has no autograded notebook, because its autograde did not finish")
                )
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
        # With these two of a submission that came through the exchange, `feedback --release` hands the page back too.
        submitted = self.root / "submitted" / student / lab
        for name in ("timestamp.txt", "submission_secret.txt"):
            if (submitted / name).is_file() and not (submitted / name).is_symlink():
                shutil.copy2(submitted / name, folder / name)
        return path

    def not_graded_notes(self) -> list[tuple[Outcome, Path]]:
        """A page for each submission not graded, saying so and why; each with the page's path."""
        return [(o, self.write_not_graded_note(o.student, o.lab, o.message)) for o in self.not_graded()]

    def export(self, to: Path) -> Path:
        from nbgrader.plugins import CsvExportPlugin

        to = Path(to).resolve()
        if to.is_dir():
            raise PipelineError(
                f"{to} is a folder. Give --to the path of the CSV file to write, e.g. {to / 'grades.csv'}."
            )
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
            with Gradebook(self.db_url, course_id=self.course_id) as gb:
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
        """One row per graded submission (what has no score is in not_graded()): student, their name from the roster
        ("" when none names them), lab, score (after any late penalty, as nbgrader's export counts it), max score,
        raw_score (before it), penalty, and seconds_late (past the lab's due date, by the submission's timestamp)."""
        rows = []
        with self.open_gradebook() as gb:
            for assignment in gb.assignments:
                for sub in assignment.submissions:
                    if _unscored(sub):
                        continue
                    penalty = float(sub.late_submission_penalty or 0)
                    rows.append(
                        {
                            "student": sub.student.id,
                            "name": _roster_name(sub.student),
                            "lab": assignment.name,
                            "score": max(0.0, sub.score - penalty),
                            "max_score": sub.max_score,
                            "raw_score": sub.score,
                            "penalty": penalty,
                            "seconds_late": float(sub.total_seconds_late or 0),
                        }
                    )
        return sorted(rows, key=lambda r: (r["lab"], r["student"]))


def _roster_name(student) -> str:
    """ "First Last" as the roster gives them; "" for a student no roster names (autograde's id as last name)."""
    first, last = (student.first_name or "").strip(), (student.last_name or "").strip()
    if not first and last == student.id:
        return ""
    return " ".join(part for part in (first, last) if part)


def _duration(seconds: float) -> str:
    """A time span in days, hours and minutes: "1 d 2 h", "3 h 20 min", "45 s"."""
    seconds = round(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min" if minutes else f"{secs} s"


def _unscored(submission) -> bool:
    """nbgrader records a submission before grading it: one whose grading did not finish has checks without a score."""
    return any(g.auto_score is None and g.manual_score is None for nb in submission.notebooks for g in nb.grades)


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
        f"its answer cells hold characters that are not text ({char!a}, a lone surrogate, which no file can "
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
        details = [
            d
            for d in re.findall(r"ValidationError: ([^\n]+)$", log, re.MULTILINE)
            if "Notebook failed to validate" not in d
        ]
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
    """The gradebook as a table: student, lab, score (after any late penalty); a late column when a submission was
    late (how late, the points it lost, the score before); a name column when the roster names someone."""
    if not rows:
        return "(no graded submissions)"
    width = max(len("student"), *(len(r["student"]) for r in rows))
    scores = []
    for r in rows:
        pct = 100 * r["score"] / r["max_score"] if r["max_score"] else 0
        scores.append(f"{r['score']:g}/{r['max_score']:g} ({pct:.0f} %)")
    late = [
        (
            f"{_duration(r['seconds_late'])} late: -{r['penalty']:g} (from {r['raw_score']:g})"
            if r.get("penalty")
            else f"{_duration(r['seconds_late'])} late (no penalty)"
        )
        if r.get("seconds_late", 0) > 0
        else ""
        for r in rows
    ]
    names = [r.get("name", "") for r in rows]
    columns = [("score", scores)] + [(title, cells) for title, cells in (("late", late), ("name", names)) if any(cells)]
    widths = [max(len(title), *(len(c) for c in cells)) for title, cells in columns]

    def line(student: str, lab: str, cells: list[str]) -> str:
        text = f"{student:<{width}}  {lab:<20}"
        for cell, cell_width in zip(cells, widths, strict=True):
            text += f"  {cell:<{cell_width}}"
        return text.rstrip()

    lines = [line("student", "lab", [title for title, _ in columns])]
    lines += [line(r["student"], r["lab"], [cells[i] for _, cells in columns]) for i, r in enumerate(rows)]
    return "\n".join(lines)


COPIED = "copied"  # under the course's grading store: a record of each copy collect() made from an outside folder


def _exchange_said(result: dict | None) -> str:
    """What nbgrader's exchange said when it failed: its last error line, without the log level."""
    if not result:
        return "no details"
    lines = [line.strip() for line in (result.get("log") or "").splitlines() if line.strip()]
    for line in reversed(lines):
        match = re.match(r"\[(CRITICAL|ERROR)\]\s*(.+)", line)
        if match:
            return match.group(2).rstrip(".")
    error = [line.strip() for line in (result.get("error") or "").splitlines() if line.strip()]
    return error[-1].rstrip(".") if error else "no details"


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.iterdir(), key=lambda p: p.name)


def _digests(folder: Path) -> dict[str, str]:
    """{path inside ``folder``: sha256} of every file in it."""
    found = {}
    for where, _, files in os.walk(folder):
        for name in files:
            path = Path(where, name)
            found[path.relative_to(folder).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _shown_name(name: str) -> str:
    """A file name as text that can be printed (bytes no encoding reads shown as �)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _refused_student_id(name: str) -> str | None:
    """Why nbgrader cannot take this folder name as a student id, in words (None: it can)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "it holds bytes that are not text in any encoding nbgrader reads"
    if name != name.strip():
        return "it starts or ends with a space, which nbgrader strips off, so it would look for another folder"
    if name.startswith("."):
        return "it starts with '.', so nbgrader's listings (formgrader, `nbgrader autograde LAB`) never show it"
    wildcards = sorted(set(name) & set("*?[]"))
    if wildcards:
        return (
            f"nbgrader reads {' '.join(wildcards)} in a student id as a wildcard, so it would grade other students' "
            "folders under this name, or none"
        )
    if "+" in name:
        return "nbgrader's exchange refuses '+' in a student id (it separates the parts of a submission's file name)"
    if "," in name:
        return "nbgrader reads ',' as a separator of student ids (student_id_exclude), and its CSV export writes ids unquoted"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "it holds a control character (a line break?), which breaks nbgrader's CSV export"
    return None


def _rename_student(student: str, why: str, in_place: bool) -> str:
    where = " in the course's submitted/ folder" if in_place else ""
    return (
        f"the folder name {student!r} cannot be a student id: {why}. Rename the folder{where} to the student's id "
        "(letters, digits, '-', '_', '@', and '.' after the first character), then autograde again."
    )


def _stray_at_student_level(name: str, shown: str) -> str:
    stem = Path(name).stem
    if name.endswith(".ipynb") and stem in ASSIGNMENTS:
        return (
            f"{name} is a notebook with no student folder: put it in <student>/{stem}/{name} (<student>: its "
            "student's id), then autograde again."
        )
    return (
        f"{name} is a file where a student's folder should be (<student>/<lab>/<lab>.ipynb), so it was not graded: "
        f"move it out of {shown}, or into its student's lab folder, then autograde again."
    )


SET_ASIDE_EVERY = 200  # submissions recorded between two set-asides of what the batch holds by then


class _SetAside:
    """What a batch keeps as it goes (each submission's results until the batch returns; a Dask client's state) is set
    aside from the cycle collector too, every ``SET_ASIDE_EVERY`` submissions recorded, once a collection has freed
    the cycles that are garbage by then. A full collection then walks what the last few hundred submissions left,
    not everything the batch has kept: its cost, and so each submission's recording, stays the same from the first
    submission of a cohort to its last."""

    def __init__(self, active: bool) -> None:
        self.active = active
        self.recorded = 0

    def recorded_one(self) -> None:
        if not self.active:
            return
        self.recorded += 1
        if self.recorded % SET_ASIDE_EVERY == 0:
            gc.collect()  # the garbage goes now: set aside, it would stay until the batch ends
            gc.freeze()


@contextmanager
def _spared_from_collection() -> Iterator[_SetAside]:
    """For one batch: what this process held before it (its imports, the course, the batch's tasks) is set aside from
    Python's cycle collector, and given back after; what the batch keeps is set aside as it goes (``_SetAside``).
    Each full collection would otherwise walk all of it again, about every 50 to 200 submissions recorded: a tenth
    of a second at the start, the more as a cohort's results pile up. Left alone when something else already set
    objects aside (``gc.freeze``): that is its choice to undo, not the batch's."""
    if gc.get_freeze_count():
        yield _SetAside(active=False)
        return
    gc.freeze()
    try:
        yield _SetAside(active=True)
    finally:
        gc.unfreeze()


def _timestamp_problem(folder: Path) -> str | None:
    """Why nbgrader cannot read the submission's ``timestamp.txt`` (None: it can, or there is none)."""
    from nbgrader.utils import parse_utc

    path = folder / "timestamp.txt"
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8").strip()
        if text:
            parse_utc(text)
    except (OSError, UnicodeDecodeError, ValueError, OverflowError):
        shown = path.read_bytes()[:60].decode("utf-8", "replace").strip() if path.is_file() else ""
        return (
            f"its timestamp.txt ({shown!r}) is not a time nbgrader can read, so how late it was cannot be known: put back "
            "the timestamp.txt nbgrader collect wrote (or take the file away if it did not come through nbgrader's "
            "exchange), then autograde again."
        )
    return None
