"""The nbgrader course: configuration, the trusted-checks autograde step, and the pipeline.

Stock ``nbgrader autograde`` executes the submission in a kernel and scores each
graded cell by its output. Here the sanitising steps stay as they are (restore the
graded cells from the gradebook, check their metadata), and the execution step is
replaced by ``TrustedChecks``: it runs the lab's checks in this process against the
submission's answer cells served by a learner-host subprocess, and writes each
check's verdict into its graded cell (the message as text, the score as the cell's
result). nbgrader's own ``SaveAutoGrades`` then records those scores, so the
gradebook, formgrader, feedback and export work unchanged.
"""

from __future__ import annotations

import copy
import json
import os
import traceback
from contextlib import contextmanager
from dataclasses import replace
from typing import NamedTuple

import nbformat
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_output
from nbgrader import utils
from nbgrader.api import (
    Comment,
    Grade,
    Gradebook,
    InvalidEntry,
    MissingEntry,
    Student,
    SubmittedAssignment,
    SubmittedNotebook,
    new_uuid,
)
from nbgrader.converters import Autograde, GenerateAssignment
from nbgrader.nbgraderformat import ValidationError
from nbgrader.nbgraderformat.v3 import MetadataValidatorV3
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    ClearSolutions,
    DeduplicateIds,
    LimitOutput,
    NbGraderPreprocessor,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError, StatementError
from traitlets import Bool, Float, Unicode
from traitlets.config import Config

from grader.engine.grading import CALL_TIMEOUT_SECONDS, grade_code
from grader.feedback import configure_feedback
from grader.labs import LAB_MODULES, lab_checks
from grader.notebook import STARTING_CODE, answer_code, starting_code
from grader.quizzes import UnknownQuiz, is_quiz, quiz
from grader.quizzes.grading import Verdict, breakdown_html, breakdown_text
from grader.quizzes.grading import grade as grade_quiz
from labkit.checking import CheckResult, as_shown, exception_words, neutral

COURSE_ID = "mcp-claude-code"  # the id labs/nbgrader_config.py gives this repository's course; the engine reads the configured one


def graded_cells(nb):
    return [
        cell
        for cell in nb.cells
        if cell.cell_type == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("grade") is True
    ]


def verdict_outputs(result: CheckResult) -> list:
    """A graded cell's outputs for one check: the verdict in words, and the score as its result.

    What nbformat's ``new_output`` makes, without checking each output against the schema on its own (a fifth of
    a submission's recording, with one per check): the exporter checks the whole notebook once per pass."""
    return [
        NotebookNode(output_type="stream", name="stdout", text=result.line() + "\n"),
        NotebookNode(
            output_type="execute_result",
            metadata=NotebookNode(),
            data=NotebookNode({"text/plain": repr(float(result.score))}),
            execution_count=1,
        ),
    ]


def quiz_verdict_outputs(verdict: Verdict) -> list:
    """A quiz question's outputs: the verdict and its explanation (Markdown, and as text), and the score as its result."""
    return [
        new_output("display_data", data={"text/markdown": verdict.markdown(), "text/plain": verdict.text()}),
        new_output("execute_result", data={"text/plain": repr(float(verdict.score))}, execution_count=1),
    ]


SUMMARY_ID = (
    "summary"  # the grade id of a quiz notebook's last, locked cell: the points per theme (grader.quizzes.build)
)


def quiz_questions(lab: str) -> list[str] | None:
    """A quiz's question ids in order (its graded cells); None for a lab."""
    return [q.id for q in quiz(lab).questions] if is_quiz(lab) else None


def graded_order(lab: str) -> list[str]:
    """The grade ids of the assignment's graded cells, in notebook order: a lab's checks, or a quiz's questions."""
    questions = quiz_questions(lab)
    return questions if questions is not None else list(lab_checks(lab).checks)


def knows(lab: str) -> bool:
    return lab in LAB_MODULES or is_quiz(lab)


class GradingFailed(RuntimeError):
    """The checks could not be run on a submission, for a reason of the grader's: nbgrader records nothing for it."""


class TrustedChecks(NbGraderPreprocessor):
    """Run the lab's checks outside the learner's kernel and write their verdicts into the graded cells."""

    call_timeout = Float(CALL_TIMEOUT_SECONDS, help="Seconds one call into the learner's code may take.").tag(
        config=True
    )
    require_isolation = Bool(
        False,
        help="Run learner code only with every protection of the sandbox (own user, own file-system view, no network, hidden processes).",
    ).tag(config=True)
    results_dir = Unicode(
        "",
        help="Folder of check results graded ahead (grader.engine.batch.ResultStore); empty: always run the checks here.",
    ).tag(config=True)
    course_root = Unicode("", help="The course folder, which no verdict may show (it is shown as <course>).").tag(
        config=True
    )

    def results(self, lab: str, student: str, code: str, names: list[str]) -> dict[str, CheckResult]:
        """The checks' results: stored ones when a batch graded this very code ahead, else graded now."""
        from grader.engine.batch import ResultStore, result_key

        store = ResultStore(self.results_dir) if self.results_dir else None
        key = result_key(lab, code, self.call_timeout)
        stored = store.get(lab, student, key) if store else None
        if stored is not None:
            return {r.name: r for r in stored}
        try:
            graded = grade_code(lab, code, names, timeout=self.call_timeout, require_isolation=self.require_isolation)
        except Exception as exc:  # noqa: BLE001 - a failure of the grader, not a verdict on the learner's code
            # Raised, nbgrader fails this submission alone and records no score for it.
            raise GradingFailed(f"The grader failed while running the checks ({exception_words(exc)})") from None
        if store and [r.name for r in graded] == list(lab_checks(lab).checks):
            store.put(lab, student, key, graded)
        return {r.name: r for r in graded}

    def shown(self, lab: str, result: CheckResult) -> CheckResult:
        """The result as the learner sees it: a hidden check's without its cases (``as_shown``), and without the
        course's folder."""
        check = lab_checks(lab).checks.get(result.name)
        if check is not None:
            result = as_shown(check, result)
        if not self.course_root:
            return result
        return replace(result, message=neutral(result.message, {self.course_root: "<course>"}))

    def grade_quiz(self, name: str, nb):
        """A quiz: each answer cell read without running it, its verdict written into it; the points per theme in
        the last cell."""
        try:
            questions = quiz(name)
        except UnknownQuiz as exc:
            raise GradingFailed(f"The grader has no questions for {name} ({exc})") from None
        cells = {c.metadata.nbgrader["grade_id"]: c for c in graded_cells(nb)}
        verdicts = grade_quiz(questions, {grade_id: cell.source for grade_id, cell in cells.items()})
        for verdict in verdicts:
            cell = cells.get(verdict.question.id)
            if cell is not None:
                cell.outputs = quiz_verdict_outputs(verdict)
                cell.execution_count = 1
        summary = next(
            (c for c in nb.cells if nbgrader_meta(c).get("grade_id") == SUMMARY_ID and c.cell_type == "code"), None
        )
        if summary is None:  # the learner took it out: the breakdown is shown all the same
            summary = new_code_cell("# Your points per theme")
            nb.cells.append(summary)
        summary.outputs = [
            new_output(
                "display_data", data={"text/html": breakdown_html(verdicts), "text/plain": breakdown_text(verdicts)}
            )
        ]
        summary.execution_count = 1

    def preprocess(self, nb, resources):
        lab = resources["nbgrader"]["assignment"]
        if is_quiz(lab):
            self.grade_quiz(lab, nb)
            return nb, resources
        cells = graded_cells(nb)
        if lab not in LAB_MODULES:
            for cell in cells:
                result = CheckResult(
                    cell.metadata.nbgrader["grade_id"],
                    float(cell.metadata.nbgrader["points"]),
                    False,
                    f"No checks are defined for lab {lab!r}.",
                )
                cell.outputs = verdict_outputs(result)
            return nb, resources
        known = lab_checks(lab).checks
        names = [c.metadata.nbgrader["grade_id"] for c in cells if c.metadata.nbgrader["grade_id"] in known]
        results = self.results(lab, resources["nbgrader"]["student"], answer_code(nb), names)
        for cell in cells:
            grade_id = cell.metadata.nbgrader["grade_id"]
            result = results.get(grade_id) or CheckResult(
                grade_id,
                float(cell.metadata.nbgrader.get("points", 0)),
                False,
                f"No check is named {grade_id!r} in {lab}.",
            )
            cell.outputs = verdict_outputs(self.shown(lab, result))
            cell.execution_count = 1
        return nb, resources


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader") or {}


class ForgetForgedGradedCells(NbGraderPreprocessor):
    """Before nbgrader's sanitising: a graded cell the lab does not define, or a second copy of one, is made an
    ordinary cell. Left in, nbgrader rejects the whole notebook (a copy loses its metadata to DeduplicateIds, an
    unknown one its grade id to OverwriteCells, and CheckCellMetadata refuses both), so every check would be lost
    to one forged cell; made ordinary, it is ignored like any other cell the learner adds."""

    def preprocess(self, nb, resources):
        lab = resources["nbgrader"]["assignment"]
        known = set(graded_order(lab)) if knows(lab) else None
        seen: set[str] = set()
        for cell in nb.cells:
            meta = nbgrader_meta(cell)
            if meta.get("grade") is not True:
                continue
            grade_id = meta.get("grade_id")
            if grade_id in seen or (known is not None and grade_id not in known):
                del cell.metadata["nbgrader"]
            else:
                seen.add(grade_id)
        return nb, resources


class RestoreGradedCells(NbGraderPreprocessor):
    """After OverwriteCells: each graded cell the submission lost is put back, from the gradebook, after the graded
    cell that precedes it (the lab's checks are in notebook order), so its verdict is written and shown like every
    other."""

    def preprocess(self, nb, resources):
        lab = resources["nbgrader"]["assignment"]
        if not knows(lab):
            return nb, resources
        released = released_cells(resources)
        if released is None:  # not in a batch: read for this notebook alone
            with gradebook_of(resources) as gb:
                released = ReleasedCells(gb).released(resources["nbgrader"]["notebook"], lab)
        points = {name: cell.max_score for name, cell in released.grades.items()}
        texts = {name: cell.source for name, cell in released.sources.items() if cell.cell_type == "code"}
        checksums = {name: cell.checksum for name, cell in released.sources.items()}
        answered_here = is_quiz(lab)  # a quiz's graded cell is its answer cell, put back as released: not answered
        order = [name for name in graded_order(lab) if name in points and name in texts]
        for position, name in enumerate(order):
            where = {
                nbgrader_meta(c).get("grade_id"): i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade")
            }
            if name in where:
                continue
            before = [where[n] for n in order[:position] if n in where]
            after = [where[n] for n in order[position + 1 :] if n in where]
            at = before[-1] + 1 if before else (after[0] if after else len(nb.cells))
            cell = new_code_cell(texts[name])
            cell.metadata["nbgrader"] = {
                "grade": True,
                "grade_id": name,
                "locked": not answered_here,
                "points": points[name],
                "schema_version": 3,
                "solution": answered_here,
            }
            if answered_here and checksums.get(name):
                cell.metadata["nbgrader"]["checksum"] = checksums[name]
            nb.cells.insert(at, cell)
            self.log.warning("The graded cell %s was missing; it was put back from the release.", name)
        return nb, resources


class ClearSolutionsToStartingCode(ClearSolutions):
    """nbgrader's ClearSolutions, except that an answer cell with starting code is handed out with that code.

    Stock ClearSolutions can only put a stub where the solution was; a lab whose task is to fix
    given code needs the code, and the release must not carry the solution along in metadata.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        code = starting_code(cell)
        if code is not None and utils.is_solution(cell):
            cell.source = code
            del cell.metadata["course"][STARTING_CODE]
            if not cell.metadata["course"]:
                del cell.metadata["course"]
            return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)


def quiz_cell_score(cell, log=None) -> float | None:
    """A graded quiz answer cell's score, as nbgrader reads a check's graded cell: the result its verdict wrote."""
    as_check = copy.deepcopy(cell)
    as_check.metadata.nbgrader["solution"] = False
    return utils.determine_grade(as_check, log)[0]


class SaveCheckGrades(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, except that a quiz's answer cell (an answer cell that is graded, which nbgrader
    leaves to a person) is scored from its verdict's result, as a check's graded cell is; and, in a batch
    (``BatchAutograde``), every score of the notebook goes into the batch's open gradebook, committed once with
    the rest of the submission rather than once per cell."""

    def preprocess(self, nb, resources):
        shared = shared_gradebook(resources)
        if shared is None:
            return super().preprocess(nb, resources)
        self.notebook_id = resources["nbgrader"]["notebook"]
        self.assignment_id = resources["nbgrader"]["assignment"]
        self.student_id = resources["nbgrader"]["student"]
        self.db_url = resources["nbgrader"]["db_url"]
        self.gradebook = SubmissionScores(shared, self.notebook_id, self.assignment_id, self.student_id)
        nb, resources = super(SaveAutoGrades, self).preprocess(nb, resources)
        shared.db.commit()  # the notebook's scores and comments written at once, in the submission's transaction
        return nb, resources

    def _add_score(self, cell, resources):
        if not (utils.is_solution(cell) and is_quiz(resources["nbgrader"]["assignment"])):
            return super()._add_score(cell, resources)
        grade = self.gradebook.find_grade(
            cell.metadata["nbgrader"]["grade_id"], self.notebook_id, self.assignment_id, self.student_id
        )
        grade.auto_score = quiz_cell_score(cell, self.log)
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
        self.gradebook.db.commit()


class SubmissionScores:
    """The batch's open gradebook as SaveCheckGrades writes one submitted notebook's scores and comments through it:
    the notebook's grades and comments read in two queries, not in one six-table query per cell, and written when the
    notebook is done (``SaveCheckGrades.preprocess``) instead of flushed after each cell. nbgrader's own ``_add_score``
    and ``_add_comment`` do the writing. A name the notebook does not hold is looked up in the gradebook itself,
    which raises nbgrader's MissingEntry; everything else goes to the gradebook as well."""

    def __init__(self, gradebook, notebook: str, assignment: str, student: str) -> None:
        from types import SimpleNamespace

        from nbgrader.api import (
            Assignment,
            BaseCell,
            Comment,
            Grade,
            Notebook,
            SubmittedAssignment,
            SubmittedNotebook,
        )

        self._gradebook = gradebook
        self._where = (notebook, assignment, student)
        self.db = SimpleNamespace(commit=lambda: None)  # nbgrader commits after each cell; here, once per notebook

        def by_name(model) -> dict:
            """The notebook's rows of ``model`` by their cell's name (a notebook's cell names are its own: nbgrader
            refuses a release with two cells of one name, so a grade's cell is its grade or task cell, a comment's its
            solution or task cell, as nbgrader's lookups find them)."""
            found = (
                gradebook.db.query(model, BaseCell.name)
                .join(BaseCell, BaseCell.id == model.cell_id)
                .join(SubmittedNotebook, SubmittedNotebook.id == model.notebook_id)
                .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id)
                .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id)
                .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
                .filter(
                    Notebook.name == notebook, Assignment.name == assignment, SubmittedAssignment.student_id == student
                )
            )
            return {name: row for row, name in found}

        self._grades = by_name(Grade)
        self._comments = by_name(Comment)

    def find_grade(self, name: str, notebook: str, assignment: str, student: str):
        found = self._grades.get(name) if (notebook, assignment, student) == self._where else None
        return found if found is not None else self._gradebook.find_grade(name, notebook, assignment, student)

    def find_comment(self, name: str, notebook: str, assignment: str, student: str):
        found = self._comments.get(name) if (notebook, assignment, student) == self._where else None
        return found if found is not None else self._gradebook.find_comment(name, notebook, assignment, student)

    def __getattr__(self, name):
        return getattr(self._gradebook, name)


# --- recording a batch through one open gradebook ------------------------------------------------------------

SHARED_GRADEBOOK = (
    "shared_gradebook"  # resources["nbgrader"][...]: which open gradebook of a batch to use (BatchAutograde)
)
_OPEN: dict = {}  # that name -> the batch's open gradebook (resources are deep-copied, a gradebook cannot be)
_RELEASED: dict = {}  # that name -> its released cells, read once per batch (ReleasedCells)


def shared_gradebook(resources):
    """The batch's open gradebook when a batch records this notebook (``BatchAutograde``), else None."""
    return _OPEN.get(resources["nbgrader"].get(SHARED_GRADEBOOK))


@contextmanager
def gradebook_of(resources):
    """The batch's open gradebook when a batch records this notebook, else a gradebook opened for this step alone."""
    from nbgrader.api import Gradebook

    shared = shared_gradebook(resources)
    if shared is not None:
        yield shared
        return
    with Gradebook(resources["nbgrader"]["db_url"]) as gb:
        yield gb


class SharedOverwriteKernelspec(OverwriteKernelspec):
    """nbgrader's OverwriteKernelspec, reading the release's kernelspec as the batch read it (``ReleasedCells``)."""

    def preprocess(self, nb, resources):
        released = released_cells(resources)
        if released is None:
            return super().preprocess(nb, resources)
        kernelspec = released.kernelspec
        if kernelspec:
            nb.metadata["kernelspec"] = json.loads(kernelspec)
        return nb, resources


class Released(NamedTuple):
    """A released notebook as the recording reads it: its cells by name (each source cell's type, locked flag, source
    and checksum; each grade cell's and task cell's points), and its kernelspec."""

    sources: dict
    grades: dict
    tasks: dict
    kernelspec: str | None = None


class ReleasedCells:
    """The batch's open gradebook as OverwriteCells and RestoreGradedCells read it: the released cells of a notebook
    read once per batch, not again for every cell of every submission. A release does not change while a batch is
    recorded. A name the release does not hold raises nbgrader's MissingEntry, with nbgrader's words; everything
    else goes to the gradebook itself."""

    def __init__(self, gradebook) -> None:
        self._gradebook = gradebook
        self._notebooks: dict[tuple[str, str], Released] = {}
        self._names: dict[str, tuple[str, ...]] = {}

    def notebook_names(self, assignment: str) -> tuple[str, ...]:
        """The names of the assignment's notebooks, in the gradebook's order (nbgrader's MissingEntry when there is
        no such assignment)."""
        if assignment not in self._names:
            self._names[assignment] = tuple(nb.name for nb in self._gradebook.find_assignment(assignment).notebooks)
        return self._names[assignment]

    def released(self, notebook: str, assignment: str) -> Released:
        from types import SimpleNamespace

        key = (notebook, assignment)
        if key not in self._notebooks:
            found = self._gradebook.find_notebook(notebook, assignment)
            self._notebooks[key] = Released(
                sources={
                    c.name: SimpleNamespace(
                        name=c.name, cell_type=c.cell_type, locked=c.locked, source=c.source, checksum=c.checksum
                    )
                    for c in found.source_cells
                },
                grades={c.name: SimpleNamespace(name=c.name, max_score=c.max_score) for c in found.grade_cells},
                tasks={c.name: SimpleNamespace(name=c.name, max_score=c.max_score) for c in found.task_cells},
                kernelspec=found.kernelspec,
            )
        return self._notebooks[key]

    def find_source_cell(self, name: str, notebook: str, assignment: str):
        from nbgrader.api import MissingEntry

        cell = self.released(notebook, assignment).sources.get(name)
        if cell is None:
            raise MissingEntry(f"No such source cell: {assignment}/{notebook}/{name}")
        return cell

    def find_graded_cell(self, name: str, notebook: str, assignment: str):
        """A grade cell of that name, else a task cell, as nbgrader's ``find_graded_cell`` looks."""
        from nbgrader.api import MissingEntry

        released = self.released(notebook, assignment)
        cell = released.grades.get(name) or released.tasks.get(name)
        if cell is None:
            raise MissingEntry(f"No such grade cell: {assignment}/{notebook}/{name}")
        return cell

    def __getattr__(self, name):
        return getattr(self._gradebook, name)


def released_cells(resources) -> Released | None:
    """The released cells of the notebook being recorded, read once per batch; None outside a batch."""
    view = _RELEASED.get(resources["nbgrader"].get(SHARED_GRADEBOOK))
    if view is None:
        return None
    return view.released(resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"])


class SharedOverwriteCells(OverwriteCells):
    """nbgrader's OverwriteCells, comparing each cell with the release through the batch's open gradebook, whose
    released cells it reads once per batch (``ReleasedCells``)."""

    def preprocess(self, nb, resources):
        shared = shared_gradebook(resources)
        if shared is None:
            return super().preprocess(nb, resources)
        self.notebook_id = resources["nbgrader"]["notebook"]
        self.assignment_id = resources["nbgrader"]["assignment"]
        self.db_url = resources["nbgrader"]["db_url"]
        self.gradebook = _RELEASED[resources["nbgrader"][SHARED_GRADEBOOK]]
        nb, resources = super(OverwriteCells, self).preprocess(nb, resources)
        if self.add_missing_cells:
            nb, resources = self.add_missing_grade_cells(nb, resources)
            nb, resources = self.add_missing_task_cells(nb, resources)
        return nb, resources


class SharedAssignLatePenalties(AssignLatePenalties):
    """nbgrader's AssignLatePenalties, writing the penalty into the batch's open gradebook."""

    def preprocess(self, nb, resources):
        shared = shared_gradebook(resources)
        if shared is None:
            return super().preprocess(nb, resources)
        self.notebook_id = resources["nbgrader"]["notebook"]
        self.assignment_id = resources["nbgrader"]["assignment"]
        self.student_id = resources["nbgrader"]["student"]
        self.db_url = resources["nbgrader"]["db_url"]
        self.init_plugin()
        self.gradebook = shared
        nb, resources = super(AssignLatePenalties, self).preprocess(nb, resources)
        assignment = shared.find_submission(self.assignment_id, self.student_id)
        notebook = shared.find_submission_notebook(self.notebook_id, self.assignment_id, self.student_id)
        notebook.late_submission_penalty = None
        if assignment.total_seconds_late > 0:
            self.log.warning(f"{assignment} is {assignment.total_seconds_late} seconds late")
            penalty = self.plugin_inst.late_submission_penalty(
                self.student_id, notebook.score, assignment.total_seconds_late
            )
            self.log.warning(f"Late submission penalty: {penalty}")
            if penalty is not None:
                notebook.late_submission_penalty = self._check_late_penalty(notebook, penalty)
        shared.db.commit()
        return nb, resources


_PASSED_METADATA: set = set()  # (cell type, nbgrader metadata as JSON) that nbgrader's validator has let through
_PASSED_LIMIT = 100_000


class RememberingValidator(MetadataValidatorV3):
    """nbgrader's metadata validator (format 3), which remembers the cell metadata it let through: the graded cells
    of one lab carry the same metadata in every submission, and jsonschema checks its own schema on every call."""

    def validate_cell(self, cell) -> None:
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta is None:
            return
        try:
            key = (cell.cell_type, json.dumps(meta, sort_keys=True))
        except (TypeError, ValueError):
            key = None
        if key is not None and key in _PASSED_METADATA:
            return
        super().validate_cell(cell)
        # A changed cell type is only a warning, which each notebook that has one should log.
        if (
            key is not None
            and meta.get("cell_type", cell.cell_type) == cell.cell_type
            and len(_PASSED_METADATA) < _PASSED_LIMIT
        ):
            _PASSED_METADATA.add(key)


class SchemaCheckedOnce:
    """``jsonschema`` as nbgrader's metadata validator uses it (``jsonschema.validate(instance, schema)``), each schema
    checked, and its validator made, once rather than on every call: the schema is nbgrader's own, the same on every
    call, and checking it was nine tenths of each call. The first error is raised as ``jsonschema.validate`` raises it
    (``best_match``); anything else is the ``jsonschema`` module's."""

    def __init__(self, module) -> None:
        self._module = module
        self._validators: dict[int, tuple[dict, object]] = {}

    def validate(self, instance, schema) -> None:
        made = self._validators.get(id(schema))
        if made is None or made[0] is not schema:
            validators = self._module.validators
            kind = validators.validator_for(schema)
            kind.check_schema(schema)
            made = self._validators[id(schema)] = (schema, kind(schema))
        error = self._module.exceptions.best_match(made[1].iter_errors(instance))
        if error is not None:
            raise error

    def __getattr__(self, name: str):
        return getattr(self._module, name)


_VALIDATOR: list = []


def metadata_validator() -> RememberingValidator:
    if not _VALIDATOR:
        from nbgrader.nbgraderformat import common

        if not isinstance(common.jsonschema, SchemaCheckedOnce):
            common.jsonschema = SchemaCheckedOnce(common.jsonschema)
        _VALIDATOR.append(RememberingValidator())
    return _VALIDATOR[0]


class CheckMetadataOnce(CheckCellMetadata):
    """nbgrader's CheckCellMetadata, with one validator for the process that remembers what it let through."""

    def preprocess(self, nb, resources):
        try:
            metadata_validator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            msg = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(msg)
            raise ValidationError(msg) from None
        return nb, resources


class _DeferredSession:
    """The batch's session as nbgrader's code sees it: ``commit()`` writes what is pending and expires what was read,
    as a commit does, but the transaction stays open until ``BatchAutograde`` commits the whole submission."""

    def __init__(self, session) -> None:
        self._session = session

    def commit(self) -> None:
        self._session.flush()
        self._session.expire_all()

    def __getattr__(self, name):
        return getattr(self._session, name)


# Indexes nbgrader's gradebook lacks: SQLite does not index a foreign key by itself, and each of these columns is
# looked up by every submission recorded (a notebook's grades and comments, an assignment's notebooks, a student's
# assignments). Without them each lookup reads the whole table, and recording a submission costs more the more the
# gradebook holds. Extra indexes change no row and no query's answer; nbgrader's own tools read the file as before.
GRADEBOOK_INDEXES = {
    "mcp_course_grade_notebook": ("grade", "notebook_id"),
    "mcp_course_comment_notebook": ("comment", "notebook_id"),
    "mcp_course_submitted_notebook_assignment": ("submitted_notebook", "assignment_id"),
    "mcp_course_submitted_assignment_student": ("submitted_assignment", "student_id"),
}


def index_gradebook(session) -> None:
    """Add ``GRADEBOOK_INDEXES`` to the gradebook of this SQLAlchemy session, where missing, and commit."""
    from sqlalchemy import text

    if session.get_bind().dialect.name != "sqlite":  # other databases index as their administrators decide
        return
    for name, (table, column) in GRADEBOOK_INDEXES.items():
        session.execute(text(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({column})"))
    session.commit()


class BatchGradebook(Gradebook):
    """nbgrader's Gradebook as a batch records through it. One method differs: ``add_submission`` writes a new
    submission's rows (the submitted assignment, a submitted notebook for each of its notebooks, an empty grade
    for each grade and task cell, an empty comment for each solution and task cell) in four statements, rather
    than building each row as an ORM object for the session to order and write. They are the rows nbgrader's own
    ``add_submission`` writes, in its order, with its defaults (a test compares them row for row). What an
    assignment holds is read once per batch: a release does not change while a batch is recorded."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._layouts: dict[str, tuple[str, list[tuple[str, list[str], list[str]]]]] = {}

    def _layout(self, assignment: str) -> tuple[str, list[tuple[str, list[str], list[str]]]]:
        """The assignment's id, and for each of its notebooks: its id, the ids of the cells that get a grade
        and of those that get a comment, in nbgrader's order (MissingEntry when there is no such assignment)."""
        if assignment not in self._layouts:
            found = self.find_assignment(assignment)
            self._layouts[assignment] = (
                found.id,
                [
                    (
                        notebook.id,
                        [c.id for c in notebook.grade_cells + notebook.task_cells],
                        [c.id for c in notebook.solution_cells + notebook.task_cells],
                    )
                    for notebook in found.notebooks
                ],
            )
        return self._layouts[assignment]

    def add_submission(self, assignment: str, student: str, **kwargs):
        if "timestamp" in kwargs:
            kwargs["timestamp"] = utils.parse_utc(kwargs["timestamp"])
        assignment_id, notebooks = self._layout(assignment)
        if self.db.get(Student, student) is None:
            raise MissingEntry(f"No such student: {student}")
        submission_id = new_uuid()
        submitted, grades, comments = [], [], []
        for notebook_id, graded, commented in notebooks:
            submitted.append({"id": new_uuid(), "assignment_id": submission_id, "notebook_id": notebook_id})
            grades += [{"id": new_uuid(), "cell_id": c, "notebook_id": submitted[-1]["id"]} for c in graded]
            comments += [{"id": new_uuid(), "cell_id": c, "notebook_id": submitted[-1]["id"]} for c in commented]
        try:
            self.db.execute(
                insert(SubmittedAssignment.__table__),
                [{"id": submission_id, "assignment_id": assignment_id, "student_id": student, **kwargs}],
            )
            for model, rows in ((SubmittedNotebook, submitted), (Grade, grades), (Comment, comments)):
                if rows:
                    self.db.execute(insert(model.__table__), rows)
            self.db.commit()
        except (IntegrityError, StatementError) as e:
            self.db.rollback()
            raise InvalidEntry(*e.args) from None
        return self.db.get(SubmittedAssignment, submission_id)


class BatchAutograde(Autograde):
    """nbgrader's Autograde converter, made once for a batch of submissions: its steps made once, and every
    submission recorded through one open gradebook, in one transaction (all of its rows or none of them).

    ``record(lab, student)`` is what ``NbGraderAPI.autograde(lab, student)`` does (the same steps, the same files,
    the same rows, the same result: success, and the log), without opening the gradebook a dozen times and
    committing once per cell."""

    def __init__(self, coursedir, **kwargs) -> None:
        super().__init__(coursedir=coursedir, **kwargs)
        self.force = True
        self.create_student = True
        self.gradebook = BatchGradebook(self.coursedir.db_url, self.coursedir.course_id)
        self._session = self.gradebook.db
        index_gradebook(self._session)
        self.gradebook.db = _DeferredSession(self._session)
        self._steps: dict[bool, list] = {}
        self._ready = False  # its writer and exporter made
        self._name = f"{os.getpid()}-{id(self)}"
        _OPEN[self._name] = self.gradebook
        _RELEASED[self._name] = ReleasedCells(self.gradebook)

    def close(self) -> None:
        _OPEN.pop(self._name, None)
        _RELEASED.pop(self._name, None)
        self.gradebook.db = self._session
        self.gradebook.close()

    def _init_preprocessors(self) -> None:
        if self._sanitizing not in self._steps:
            self.exporter._preprocessors = []
            for step in self.sanitize_preprocessors if self._sanitizing else self.autograde_preprocessors:
                self.exporter.register_preprocessor(step)
            self._steps[self._sanitizing] = list(self.exporter._preprocessors)
        self.exporter._preprocessors = list(self._steps[self._sanitizing])

    def init_single_notebook_resources(self, notebook_filename):
        resources = super().init_single_notebook_resources(notebook_filename)
        resources["nbgrader"][SHARED_GRADEBOOK] = self._name
        return resources

    def convert_single_notebook(self, notebook_filename: str) -> None:
        """Autograde.convert_single_notebook: the sanitising pass, then the autograding pass on what it made. nbgrader
        writes the sanitised notebook to the autograded folder and the autograding pass reads it back, to write over
        it: here the autograding pass gets the same notebook from the same JSON in memory (``_as_written``), and only
        its own result is written. That file is all a recording leaves, as before (a failed one leaves none). Each
        pass is handed a notebook read for it alone (``_HandedOver``), which nbconvert changes in place rather than
        copying it three times first."""
        import time

        from nbconvert.exporters import Exporter

        self.log.info("Sanitizing %s", notebook_filename)
        self._sanitizing = True
        self._init_preprocessors()
        self.log.info("Converting notebook %s", notebook_filename)
        resources = self.init_single_notebook_resources(notebook_filename)
        resources = _file_resources(resources, notebook_filename, os.path.getmtime(notebook_filename))
        with open(notebook_filename, encoding="utf-8") as submitted:
            sanitised, resources = Exporter.from_notebook_node(
                self.exporter, _HandedOver(nbformat.read(submitted, as_version=4)), resources
            )
        build = self._format_dest(resources["nbgrader"]["assignment"], resources["nbgrader"]["student"])
        notebook_filename = os.path.join(build, os.path.basename(notebook_filename))
        self.log.info("Autograding %s", notebook_filename)
        self._sanitizing = False
        self._init_preprocessors()
        try:
            with utils.setenv(NBGRADER_EXECUTION="autograde"):
                self.log.info("Converting notebook %s", notebook_filename)
                resources = self.init_single_notebook_resources(notebook_filename)
                resources = _file_resources(resources, notebook_filename, time.time())  # as if written just now
                output, resources = self.exporter.from_notebook_node(
                    # checked against the schema after the sanitising pass's last step: read back, not checked again
                    _HandedOver(nbformat.reader.reads(_as_written(sanitised))),
                    resources,
                )
                self.write_single_notebook(output, resources)
        finally:
            self._sanitizing = True

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        """Autograde.init_assignment, through the open gradebook."""
        import shutil

        from nbgrader.api import MissingEntry
        from nbgrader.converters.base import BaseConverter, NbGraderException

        BaseConverter.init_assignment(self, assignment_id, student_id)
        gb = self.gradebook
        self.log.info("Creating/updating student with ID '%s': %s", student_id, {})
        gb.update_or_create_student(student_id)
        try:
            # Read once per batch, as the released cells are: a release does not change while a batch is recorded.
            names = _RELEASED[self._name].notebook_names(assignment_id)
        except MissingEntry:
            msg = f"No assignment with ID '{assignment_id}' exists in the database"
            self.log.error(msg)
            raise NbGraderException(msg) from None
        timestamp = self.coursedir.get_existing_timestamp(self._format_source(assignment_id, student_id))
        if timestamp:
            submission = gb.update_or_create_submission(assignment_id, student_id, timestamp=timestamp)
            self.log.info("%s submitted at %s", submission, timestamp)
            if submission.total_seconds_late > 0:
                self.log.warning("%s is %s seconds late", submission, submission.total_seconds_late)
        else:
            gb.update_or_create_submission(assignment_id, student_id)
        self.log.info("Overwriting files with master versions from the source directory")
        dest_path = self._format_dest(assignment_id, student_id)
        source_path = self.coursedir.format_path(self.coursedir.source_directory, ".", assignment_id)
        source_files = set(utils.find_all_files(source_path, self.coursedir.ignore + ["*.ipynb"]))
        source_files -= {os.path.join(source_path, x) for x in self.exclude_overwriting.get(assignment_id, [])}
        for filename in source_files:
            dest = os.path.join(dest_path, os.path.relpath(filename, source_path))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            if os.path.exists(dest):
                os.remove(dest)
            self.log.info("Copying %s -> %s", filename, dest)
            shutil.copy(filename, dest)
        notebooks = []
        for notebook in self.notebooks:
            if os.path.splitext(os.path.basename(notebook))[0] in names:
                notebooks.append(notebook)
            else:
                self.log.warning("Skipping unknown notebook: %s", notebook)
        self.notebooks = notebooks
        if not notebooks:
            msg = "No notebooks found, did you forget to run 'nbgrader generate_assignment'?"
            self.log.error(msg)
            raise NbGraderException(msg)
        for name in names:
            path = os.path.join(
                self.coursedir.format_path(self.coursedir.submitted_directory, student_id, assignment_id),
                f"{name}.ipynb",
            )
            if not os.path.exists(path):
                self.log.warning(f"No submitted file: {path}")
                for grade in gb.find_submission_notebook(name, assignment_id, student_id).grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
                gb.db.commit()

    def record(self, assignment_id: str, student_id: str) -> dict:
        """Sanitise, grade and record one submission, as ``NbGraderAPI.autograde`` does; committed when it succeeds,
        nothing of it kept when it fails. Returns nbgrader's result: ``success`` and ``log`` (and ``error``)."""
        from nbconvert.writers import FilesWriter
        from nbgrader.utils import capture_log

        if not self._ready:
            self.writer = FilesWriter(parent=self, config=self.config)
            self.exporter = self.exporter_class(parent=self, config=self.config)
            # nbconvert checks the whole notebook against its schema after every step (a dozen per submission, a
            # fifth of the recording's CPU); optimistically, once after the last step of each pass, which still
            # refuses a notebook that a step left invalid, naming that pass's last step.
            self.exporter.optimistic_validation = True
            self._ready = True
        coursedir = self.coursedir
        coursedir.assignment_id, coursedir.student_id = assignment_id, student_id
        converting = _Converting(self)
        try:
            result = capture_log(converting)
            if converting.interrupted:  # capture_log catches everything, Ctrl-C included: the batch stops, not this one
                raise KeyboardInterrupt
        except BaseException:
            self._session.rollback()
            raise
        finally:
            self._forget_exported()
        if result["success"]:
            try:
                self._session.commit()
            except Exception as exc:  # noqa: BLE001 - the gradebook refused the write (locked, full disk)
                self._session.rollback()
                return {"success": False, "log": result.get("log", ""), "exception": exc}
        else:
            self._session.rollback()
        return result

    def _forget_exported(self) -> None:
        """nbconvert's exporter keeps the metadata of every notebook it exported, by name, for the HTML exporter's
        widgets; nothing reads it for a notebook export. The batch's one exporter would keep every submission's to
        the end of the batch, for Python's cycle collector to walk again on each full collection."""
        kept = getattr(self.exporter, "_nb_metadata", None)
        if isinstance(kept, dict):
            kept.clear()


def _file_resources(resources: dict, filename: str, modified: float) -> dict:
    """What nbconvert's ``Exporter.from_filename`` adds to a notebook's resources from its file."""
    import datetime
    import sys

    from nbconvert.exporters.exporter import ResourcesDict

    if "metadata" not in resources or resources["metadata"] == "":
        resources["metadata"] = ResourcesDict()
    path, basename = os.path.split(filename)
    resources["metadata"]["name"] = os.path.splitext(basename)[0]
    resources["metadata"]["path"] = path
    date = datetime.datetime.fromtimestamp(modified, tz=datetime.UTC)
    resources["metadata"]["modified_date"] = date.strftime("%B %d, %Y" if sys.platform == "win32" else "%B %-d, %Y")
    return resources


class _HandedOver(NotebookNode):
    """A notebook read for one conversion alone, handed over to it. nbconvert deep-copies the notebook it is given
    before each change (the exporter, its preprocessing, nbformat's normalising; the writer once more), to leave the
    caller's copy as it was; no one else holds this one, so its copy is itself. Only the notebook as a whole is handed
    over: a copy of any part of it is a copy."""

    def __deepcopy__(self, memo: dict) -> _HandedOver:
        memo[id(self)] = self
        return self


def _as_written(nb: NotebookNode) -> str:
    """The JSON nbformat would write ``nb`` as (``nbformat.v4.nbjson.JSONWriter.writes``: its lines split, its transient
    fields stripped, bytes as base64), without the indentation, which only the pure-Python encoder makes: read back,
    the same notebook, in a tenth of the time. ``nb`` itself is not used again (its text is split in place)."""
    from nbformat.v4.nbjson import BytesEncoder
    from nbformat.v4.rwbase import split_lines, strip_transient

    return json.dumps(strip_transient(split_lines(nb)), cls=BytesEncoder, sort_keys=True, ensure_ascii=False)


class _Converting:
    """What ``capture_log`` starts for ``BatchAutograde.record``: the converter's notebooks found and converted, the
    writer and exporter it already has kept."""

    def __init__(self, converter: BatchAutograde) -> None:
        self.converter = converter
        self.log = converter.log
        self.interrupted = False

    def start(self) -> None:
        converter = self.converter
        here = os.getcwd()
        try:
            converter.init_notebooks()
            os.chdir(converter.coursedir.root)
            converter.convert_notebooks()
        except KeyboardInterrupt:
            self.interrupted = True
            raise
        finally:
            os.chdir(here)


def release_preprocessors() -> list:
    """nbgrader's release steps, with ClearSolutions replaced by ClearSolutionsToStartingCode."""
    return [
        ClearSolutionsToStartingCode if step is ClearSolutions else step
        for step in GenerateAssignment.class_traits()["preprocessors"].default()
    ]


def configure(c: Config) -> Config:
    """The grading engine's nbgrader steps (release, sanitise, autograde, and the feedback page's, ``grader.feedback``);
    ``labs/nbgrader_config.py`` and the CLI both apply them. The course's own settings (its id, exchange, late
    penalty, timezone) are in its ``nbgrader_config.py``; a lab is registered in the gradebook by its release
    (nbgrader's generate_assignment)."""
    c.GenerateAssignment.preprocessors = release_preprocessors()
    c.Autograde.sanitize_preprocessors = [
        ClearOutput,
        ForgetForgedGradedCells,
        DeduplicateIds,
        SharedOverwriteKernelspec,
        SharedOverwriteCells,
        RestoreGradedCells,
        CheckMetadataOnce,
    ]
    c.Autograde.autograde_preprocessors = [
        TrustedChecks,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveCheckGrades,
        SharedAssignLatePenalties,
        CheckMetadataOnce,
    ]
    configure_feedback(c)
    return c
