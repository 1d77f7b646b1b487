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
from dataclasses import replace

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat.v4 import new_code_cell, new_output
from nbgrader import utils
from nbgrader.converters import GenerateAssignment
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
from traitlets import Bool, Float, Unicode
from traitlets.config import Config

from grader.feedback import configure_feedback
from grader.engine.grading import CALL_TIMEOUT_SECONDS, grade_code
from grader.labs import LAB_MODULES, lab_checks
from grader.notebook import answer_code
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
    """A graded cell's outputs for one check: the verdict in words, and the score as its result."""
    return [
        new_output("stream", name="stdout", text=result.line() + "\n"),
        new_output("execute_result", data={"text/plain": repr(float(result.score))}, execution_count=1),
    ]


def quiz_verdict_outputs(verdict: Verdict) -> list:
    """A quiz question's outputs: the verdict and its explanation (Markdown, and as text), and the score as its result."""
    return [
        new_output("display_data", data={"text/markdown": verdict.markdown(), "text/plain": verdict.text()}),
        new_output("execute_result", data={"text/plain": repr(float(verdict.score))}, execution_count=1),
    ]


SUMMARY_ID = "summary"  # the grade id of a quiz notebook's last, locked cell: the points per theme (grader.quizzes.build)


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

    call_timeout = Float(CALL_TIMEOUT_SECONDS, help="Seconds one call into the learner's code may take.").tag(config=True)
    require_isolation = Bool(
        False, help="Run learner code only with every protection of the sandbox (own user, own file-system view, no network, hidden processes)."
    ).tag(config=True)
    results_dir = Unicode(
        "", help="Folder of check results graded ahead (grader.engine.batch.ResultStore); empty: always run the checks here."
    ).tag(config=True)
    course_root = Unicode("", help="The course folder, which no verdict may show (it is shown as <course>).").tag(config=True)

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
        summary = next((c for c in nb.cells if nbgrader_meta(c).get("grade_id") == SUMMARY_ID and c.cell_type == "code"), None)
        if summary is None:  # the learner took it out: the breakdown is shown all the same
            summary = new_code_cell("# Your points per theme")
            nb.cells.append(summary)
        summary.outputs = [new_output("display_data", data={"text/html": breakdown_html(verdicts), "text/plain": breakdown_text(verdicts)})]
        summary.execution_count = 1

    def preprocess(self, nb, resources):
        lab = resources["nbgrader"]["assignment"]
        if is_quiz(lab):
            self.grade_quiz(lab, nb)
            return nb, resources
        cells = graded_cells(nb)
        if lab not in LAB_MODULES:
            for cell in cells:
                result = CheckResult(cell.metadata.nbgrader["grade_id"], float(cell.metadata.nbgrader["points"]), False, f"No checks are defined for lab {lab!r}.")
                cell.outputs = verdict_outputs(result)
            return nb, resources
        known = lab_checks(lab).checks
        names = [c.metadata.nbgrader["grade_id"] for c in cells if c.metadata.nbgrader["grade_id"] in known]
        results = self.results(lab, resources["nbgrader"]["student"], answer_code(nb), names)
        for cell in cells:
            grade_id = cell.metadata.nbgrader["grade_id"]
            result = results.get(grade_id) or CheckResult(
                grade_id, float(cell.metadata.nbgrader.get("points", 0)), False, f"No check is named {grade_id!r} in {lab}."
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
        from nbgrader.api import Gradebook

        lab = resources["nbgrader"]["assignment"]
        if not knows(lab):
            return nb, resources
        with Gradebook(resources["nbgrader"]["db_url"]) as gb:
            source = gb.find_notebook(resources["nbgrader"]["notebook"], lab)
            points = {cell.name: cell.max_score for cell in source.grade_cells}
            texts = {cell.name: cell.source for cell in source.source_cells if cell.cell_type == "code"}
            checksums = {cell.name: cell.checksum for cell in source.source_cells}
        answered_here = is_quiz(lab)  # a quiz's graded cell is its answer cell, put back as released: not answered
        order = [name for name in graded_order(lab) if name in points and name in texts]
        for position, name in enumerate(order):
            where = {nbgrader_meta(c).get("grade_id"): i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade")}
            if name in where:
                continue
            before = [where[n] for n in order[:position] if n in where]
            after = [where[n] for n in order[position + 1 :] if n in where]
            at = before[-1] + 1 if before else (after[0] if after else len(nb.cells))
            cell = new_code_cell(texts[name])
            cell.metadata["nbgrader"] = {
                "grade": True, "grade_id": name, "locked": not answered_here, "points": points[name], "schema_version": 3,
                "solution": answered_here,
            }
            if answered_here and checksums.get(name):
                cell.metadata["nbgrader"]["checksum"] = checksums[name]
            nb.cells.insert(at, cell)
            self.log.warning("The graded cell %s was missing; it was put back from the release.", name)
        return nb, resources


STARTING_CODE = "starting_code"  # key under an answer cell's metadata["course"]


def starting_code(cell) -> str | None:
    """The code an answer cell hands out instead of a stub (lab 4: the flawed server to fix), if any."""
    value = cell.get("metadata", {}).get("course", {}).get(STARTING_CODE)
    if value is None:
        return None
    return value if isinstance(value, str) else "".join(value)


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
    leaves to a person) is scored from its verdict's result, as a check's graded cell is."""

    def _add_score(self, cell, resources):
        if not (utils.is_solution(cell) and is_quiz(resources["nbgrader"]["assignment"])):
            return super()._add_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id, self.assignment_id, self.student_id)
        grade.auto_score = quiz_cell_score(cell, self.log)
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
        self.gradebook.db.commit()


def release_preprocessors() -> list:
    """nbgrader's release steps, with ClearSolutions replaced by ClearSolutionsToStartingCode."""
    return [ClearSolutionsToStartingCode if step is ClearSolutions else step for step in GenerateAssignment.class_traits()["preprocessors"].default()]


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
        OverwriteKernelspec,
        OverwriteCells,
        RestoreGradedCells,
        CheckCellMetadata,
    ]
    c.Autograde.autograde_preprocessors = [
        TrustedChecks,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveCheckGrades,
        AssignLatePenalties,
        CheckCellMetadata,
    ]
    configure_feedback(c)
    return c
