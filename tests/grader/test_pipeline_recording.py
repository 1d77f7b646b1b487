"""Recording a batch costs its set-up once: nbgrader's Autograde converter and the gradebook are opened once per
batch, not once per submission, and each submission is one transaction (real nbgrader, real checks, one lab)."""

from __future__ import annotations

import gc
import os
import re
import shutil
import sys
import weakref
from pathlib import Path

import nbformat
import pytest
from nbconvert.exporters import Exporter
from nbformat import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.converters import Autograde
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from grader.course import BatchAutograde, _DeferredSession
from grader.notebook import read_notebook
from grader.pipeline import DEFAULT_COURSE, SAMPLE_SUBMISSIONS, Course

LAB = "lab3_tools_resources"
STUDENTS = ["solution", "blank", "missing_template", "catalog_as_a_tool"]


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("released") / "course"
    shutil.copytree(DEFAULT_COURSE / "source" / LAB, root / "source" / LAB)
    Course(root).release([LAB])
    return root


def collected(released: Path, where: Path, students: list[str]) -> tuple[Course, Path, list[tuple[str, str]]]:
    """A copy of the released course in ``where`` with ``students``' samples collected: (course, its root, pairs)."""
    course_root, submissions = where / "course", where / "submissions"
    shutil.copytree(released, course_root)
    for student in students:
        shutil.copytree(SAMPLE_SUBMISSIONS / student / LAB, submissions / student / LAB)
    course = Course(course_root)
    return course, course_root, course.collect(submissions)


def grade_counting(released: Path, where: Path, students: list[str], monkeypatch) -> dict[str, int]:
    """Autograde ``students``' samples in a copy of the course, counting what the recording set up and committed."""
    course, course_root, pairs = collected(released, where, students)
    counts = {"gradebooks": 0, "converters": 0, "commits": 0, "validations": 0, "lookups": 0, "flushes": 0}
    counts.update(assignments=0, notebooks=0)

    def counted(cls, name, key):
        original = getattr(cls, name)

        def wrapper(self, *args, **kwargs):
            counts[key] += 1
            return original(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, wrapper)

    course.autograde(pairs, jobs=1)  # the checks, stored; then nbgrader's recording, counted below
    for student in students:  # recorded again from the stored checks: only the recording is counted
        shutil.rmtree(course_root / "autograded" / student)
    counted(Gradebook, "__init__", "gradebooks")
    counted(Autograde, "__init__", "converters")
    counted(Session, "commit", "commits")
    counted(Exporter, "_validate_preprocessor", "validations")
    counted(Gradebook, "find_grade", "lookups")
    counted(Gradebook, "find_comment", "lookups")
    counted(_DeferredSession, "commit", "flushes")
    counted(Gradebook, "find_assignment", "assignments")
    counted(Gradebook, "find_notebook", "notebooks")
    counts["released_reads"] = 0
    counts["notebook_copies"] = 0
    copy_node = NotebookNode.__deepcopy__

    def copied(self, memo):
        counts["notebook_copies"] += "cells" in self  # a whole notebook, not one of its parts
        return copy_node(self, memo)

    monkeypatch.setattr(NotebookNode, "__deepcopy__", copied)
    counts["notebook_parts_kept"] = 0
    close = BatchAutograde.close

    def closing(self) -> None:  # the batch's end, its recorder still open: what it still holds of the notebooks
        gc.collect()
        counts["notebook_parts_kept"] = sum(isinstance(o, NotebookNode) for o in gc.get_objects())
        close(self)

    monkeypatch.setattr(BatchAutograde, "close", closing)

    def seen(conn, cursor, statement, parameters, context, executemany) -> None:
        if statement.lstrip().upper().startswith("SELECT") and re.search(r"\bFROM source_cell\b", statement):
            counts["released_reads"] += 1

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        outcomes = course.autograde(pairs, jobs=1)
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    monkeypatch.undo()
    assert all(o.ok for o in outcomes), outcomes
    return counts


def test_recording_opens_the_gradebook_and_makes_the_converter_once_per_batch(released, tmp_path, monkeypatch) -> None:
    one = grade_counting(released, tmp_path / "one", STUDENTS[:1], monkeypatch)
    four = grade_counting(released, tmp_path / "four", STUDENTS, monkeypatch)

    assert four["converters"] == one["converters"] == 1
    assert four["gradebooks"] == one["gradebooks"]  # none per submission
    assert four["commits"] - one["commits"] == len(STUDENTS) - 1  # one transaction per submission, not per cell
    # The notebook checked against nbformat's schema once after each of the two passes (sanitising, autograding), not
    # after each of their dozen steps.
    assert four["validations"] == 2 * len(STUDENTS)
    # The released cells each submission is compared with (OverwriteCells) are read once per batch, not per cell.
    assert 0 < four["released_reads"] == one["released_reads"]
    # A submission's scores and comments are read in two queries and written once (SubmissionScores), not looked up
    # in a query of their own and flushed cell by cell: nbgrader's per-cell lookups are never sent.
    assert four["lookups"] == one["lookups"] == 0
    assert four["flushes"] - one["flushes"] <= 4 * (len(STUDENTS) - 1)  # four per submission, none per cell
    # Each pass is handed a notebook read for it alone: nbconvert and nbformat change it in place, without the
    # seven whole copies (three a pass, one as it is written) they would make of a notebook its caller keeps.
    assert four["notebook_copies"] == one["notebook_copies"] == 0
    # The assignment and its notebooks (which notebooks it has, their kernelspecs) are looked up once per batch, as
    # its released cells are (recorded again here, so no submission's rows are added: nbgrader's add_submission,
    # which looks the assignment up once more, is not called).
    assert four["notebooks"] == one["notebooks"]
    assert four["assignments"] == one["assignments"]
    # Nothing of a recorded notebook is kept to the end of the batch (nbconvert's exporter would keep the metadata of
    # each one it exported).
    assert four["notebook_parts_kept"] == one["notebook_parts_kept"]


def test_a_batch_sets_what_came_before_it_aside_from_the_cycle_collector_and_gives_it_back(
    released, tmp_path, monkeypatch
) -> None:
    """While a batch records, a full collection does not walk the process's imports and the course again (about a
    tenth of a second each time, every 200 submissions or so); once it ends, they are the collector's again. Objects
    something else set aside are left to it."""
    gc.unfreeze()
    course, _, pairs = collected(released, tmp_path / "alone", STUDENTS[:1])
    set_aside: list[int] = []
    record = BatchAutograde.record

    def recording(self, *args, **kwargs):
        set_aside.append(gc.get_freeze_count())
        return record(self, *args, **kwargs)

    monkeypatch.setattr(BatchAutograde, "record", recording)

    assert all(o.ok for o in course.autograde(pairs, jobs=1))
    assert set_aside and min(set_aside) > 10_000  # the imports, the course and the batch's tasks
    assert gc.get_freeze_count() == 0

    course, _, pairs = collected(released, tmp_path / "theirs", STUDENTS[1:2])
    gc.freeze()
    theirs = gc.get_freeze_count()
    set_aside.clear()
    try:
        assert all(o.ok for o in course.autograde(pairs, jobs=1))
        # none added, none given back (a few of theirs freed as they went)
        assert len(set_aside) == 1 and theirs - 1000 < set_aside[0] <= theirs
        assert theirs - 1000 < gc.get_freeze_count() <= theirs
    finally:
        gc.unfreeze()


class _Cycle:
    """A reference cycle: freed only by the cycle collector."""

    def __init__(self) -> None:
        self.me = self


def test_what_a_batch_keeps_is_set_aside_as_it_goes_once_its_garbage_is_collected(
    released, tmp_path, monkeypatch
) -> None:
    """Each submission's results stay until the batch returns: set aside every few submissions recorded, so that a
    full collection does not walk a whole cohort's again and again, and cost more the further a batch has gone. Only
    what is alive is set aside: the cycles that are garbage by then are freed first (the automatic collections are
    off here, so nothing else frees them)."""
    import grader.pipeline as pipeline

    gc.unfreeze()
    monkeypatch.setattr(pipeline, "SET_ASIDE_EVERY", 2)
    course, _, pairs = collected(released, tmp_path / "course", STUDENTS)
    set_aside: list[int] = []
    left: list[list] = []  # per recording: the garbage cycles made before it, each by a weak reference
    made = []
    record = BatchAutograde.record

    def recording(self, *args, **kwargs):
        set_aside.append(gc.get_freeze_count())
        left.append([alive() is not None for alive in made])
        try:
            return record(self, *args, **kwargs)
        finally:
            made.append(weakref.ref(_Cycle()))  # garbage as soon as it is made

    monkeypatch.setattr(BatchAutograde, "record", recording)
    gc.disable()
    try:
        assert all(o.ok for o in course.autograde(pairs, jobs=1))
    finally:
        gc.enable()
    assert len(set_aside) == 4
    # after the second submission, what the first two left is set aside too (their results, at the least)
    assert set_aside[2] > set_aside[1] + 40 and set_aside[1] - 1000 < set_aside[0] <= set_aside[1] + 1000
    assert left[1] == [True]  # no set-aside yet: nothing freed the first one's cycle
    assert left[2] == [False, False]  # freed before the set-aside, not kept in it until the batch ends
    assert gc.get_freeze_count() == 0

    # Objects something else set aside: the batch adds none as it goes either.
    course, _, pairs = collected(released, tmp_path / "theirs", STUDENTS)
    gc.freeze()
    theirs = gc.get_freeze_count()
    set_aside.clear()
    try:
        assert all(o.ok for o in course.autograde(pairs, jobs=1))
        assert len(set_aside) == 4 and max(set_aside) <= theirs
    finally:
        gc.unfreeze()


def test_a_notebook_a_step_leaves_invalid_is_still_refused_and_nothing_of_it_recorded(
    released, tmp_path, monkeypatch
) -> None:
    """Validated once per pass, a notebook that one step (here nbgrader's LimitOutput, in the autograding pass) leaves
    invalid is still refused: the submission is not graded, saying why, and the gradebook holds nothing of it."""
    from nbgrader.preprocessors import LimitOutput

    course, course_root, pairs = collected(released, tmp_path, STUDENTS[:2])
    original = LimitOutput.preprocess

    def breaks_the_notebook(self, nb, resources):
        nb, resources = original(self, nb, resources)
        if resources["nbgrader"]["student"] == STUDENTS[1]:
            nb.cells[0]["cell_type"] = "not a cell type"
        return nb, resources

    monkeypatch.setattr(LimitOutput, "preprocess", breaks_the_notebook)
    outcomes = {o.student: o for o in course.autograde(pairs, jobs=1)}
    assert outcomes[STUDENTS[0]].ok
    assert not outcomes[STUDENTS[1]].ok and outcomes[STUDENTS[1]].message
    assert [r["student"] for r in course.gradebook()] == [STUDENTS[0]]


def test_a_batch_records_the_same_scores_as_nbgraders_own_autograde_one_submission_at_a_time(
    released, tmp_path
) -> None:
    batch_root, single_root, submissions = tmp_path / "batch", tmp_path / "single", tmp_path / "submissions"
    for student in STUDENTS:
        shutil.copytree(SAMPLE_SUBMISSIONS / student / LAB, submissions / student / LAB)
    students = [*STUDENTS, tampered(submissions)]
    shutil.copytree(released, batch_root)
    batch = Course(batch_root)
    assert all(o.ok for o in batch.autograde(batch.collect(submissions), jobs=1))
    shutil.copytree(released, single_root)
    single = Course(single_root)
    single.autograde(single.collect(submissions), jobs=1)  # the checks, stored, then recorded again below by nbgrader
    api = single.api()
    for student in students:
        assert api.autograde(LAB, student)["success"]

    def grades(course: Course) -> dict:
        with course.open_gradebook() as gb:
            return {
                (student, g.name): (g.auto_score, g.needs_manual_grade)
                for student in STUDENTS
                for g in gb.find_submission_notebook(LAB, LAB, student).grades
            }

    assert grades(batch) == grades(single)
    assert [r["score"] for r in batch.gradebook()] == [r["score"] for r in single.gradebook()]
    # The autograded notebooks are nbgrader's to the byte, though the batch hands the sanitised notebook to the
    # autograding pass in memory rather than through the file nbgrader writes and reads back.
    for student in students:
        made = Path("autograded") / student / LAB / f"{LAB}.ipynb"
        assert (batch_root / made).read_bytes() == (single_root / made).read_bytes(), student
        assert sorted(p.name for p in (batch_root / made).parent.iterdir()) == sorted(
            p.name for p in (single_root / made).parent.iterdir()
        )
    # what the sanitising pass undoes is undone: the autograding pass got its notebook, not the one submitted
    made = (batch_root / "autograded" / students[-1] / LAB / f"{LAB}.ipynb").read_text(encoding="utf-8")
    assert TAMPERED not in made and "an output left in" not in made and OTHER_KERNEL not in made


def gradebook_rows(course: Course) -> dict[str, list[tuple]]:
    """Every row of the tables a recording writes, each id (a fresh uuid in each gradebook) replaced by what it names:
    a student, an assignment's name, a notebook's name, a cell's name. Rows are grouped by student, in the order
    SQLite keeps them within each student's (a batch records its submissions in its own order)."""
    import sqlite3

    with sqlite3.connect(course.root / "gradebook.db") as db:
        rows = {
            # the students' ids: their names are the pipeline's to give (an unnamed one is named by its id)
            "student": db.execute("SELECT id FROM student ORDER BY rowid").fetchall(),
            "submitted_assignment": db.execute(
                "SELECT a.name, s.student_id, s.timestamp, s.extension FROM submitted_assignment s "
                "JOIN assignment a ON a.id = s.assignment_id ORDER BY s.rowid"
            ).fetchall(),
            "submitted_notebook": db.execute(
                "SELECT s.student_id, n.name, sn.flagged, sn.late_submission_penalty FROM submitted_notebook sn "
                "JOIN submitted_assignment s ON s.id = sn.assignment_id JOIN notebook n ON n.id = sn.notebook_id "
                "ORDER BY sn.rowid"
            ).fetchall(),
            "grade": db.execute(
                "SELECT s.student_id, n.name, c.name, g.auto_score, g.manual_score, g.extra_credit, "
                "g.needs_manual_grade FROM grade g JOIN base_cell c ON c.id = g.cell_id "
                "JOIN submitted_notebook sn ON sn.id = g.notebook_id JOIN notebook n ON n.id = sn.notebook_id "
                "JOIN submitted_assignment s ON s.id = sn.assignment_id ORDER BY g.rowid"
            ).fetchall(),
            "comment": db.execute(
                "SELECT s.student_id, n.name, c.name, m.auto_comment, m.manual_comment FROM comment m "
                "JOIN base_cell c ON c.id = m.cell_id JOIN submitted_notebook sn ON sn.id = m.notebook_id "
                "JOIN notebook n ON n.id = sn.notebook_id JOIN submitted_assignment s ON s.id = sn.assignment_id "
                "ORDER BY m.rowid"
            ).fetchall(),
            "counts": [
                db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
                for table in ("student", "submitted_assignment", "submitted_notebook", "grade", "comment")
            ],
        }
    student = {"submitted_assignment": 1}  # which column names the student (the first, in the other tables)
    return {
        table: found if table == "counts" else sorted(found, key=lambda row: row[student.get(table, 0)])
        for table, found in rows.items()
    }


@pytest.mark.filterwarnings("ignore:.*not in session")  # nbgrader's own add_submission trips it, as the pipeline knows
def test_a_new_submission_gets_the_very_rows_nbgraders_add_submission_writes(tmp_path, monkeypatch) -> None:
    """``BatchGradebook.add_submission`` against nbgrader's own, in one gradebook, on an assignment of two notebooks
    with grade, solution and task cells: the same rows in every table, in the same order, with nbgrader's defaults;
    nbgrader's errors, with its words, for an unknown assignment or student and for a second submission; and, in a
    batch, the rows written inside the submission's transaction."""
    import sqlite3

    from nbgrader.api import InvalidEntry, MissingEntry

    from grader.course import BatchGradebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("hw", duedate="2030-01-01 00:00:00")
        for notebook, cells in (("first", ("a", "b")), ("second", ("c",))):
            gb.add_notebook(notebook, "hw")
            for cell in cells:
                gb.add_grade_cell(f"{cell}_grade", notebook, "hw", max_score=2, cell_type="code")
                gb.add_solution_cell(f"{cell}_answer", notebook, "hw")
            gb.add_task_cell(f"{notebook}_task", notebook, "hw", max_score=1, cell_type="markdown")
        for student in ("theirs", "ours"):
            gb.add_student(student)
        gb.add_submission("hw", "theirs", timestamp="2030-01-02 03:04:05.6789 UTC")
    with BatchGradebook(url) as gb:
        gb.add_submission("hw", "ours", timestamp="2030-01-02 03:04:05.6789 UTC")
        for call, theirs_error in (
            (lambda g: g.add_submission("nohw", "ours"), MissingEntry),
            (lambda g: g.add_submission("hw", "nobody"), MissingEntry),
            (lambda g: g.add_submission("hw", "ours"), InvalidEntry),
        ):
            with Gradebook(url) as plain, pytest.raises(theirs_error) as theirs:
                call(plain)
            with pytest.raises(theirs_error) as ours:
                call(gb)
            if theirs_error is MissingEntry:
                assert str(ours.value) == str(theirs.value)
        assert gb.find_submission("hw", "ours").total_seconds_late == 97445.6789  # usable as nbgrader's own

        # In a batch the rows are part of the submission's transaction: unseen by others until the batch commits it,
        # and gone when the batch rolls it back.
        gb.add_student("rolled_back")
        session, gb.db = gb.db, _DeferredSession(gb.db)
        gb.add_submission("hw", "rolled_back")
        assert gb.find_submission("hw", "rolled_back").notebooks
        with sqlite3.connect(tmp_path / "gradebook.db") as other:
            assert other.execute("SELECT COUNT(*) FROM submitted_assignment").fetchone() == (2,)
        session.rollback()
        gb.db = session
        with pytest.raises(MissingEntry):
            gb.find_submission("hw", "rolled_back")

    def rows(student: str) -> dict[str, list[tuple]]:
        where = "JOIN submitted_assignment s ON s.id = sn.assignment_id WHERE s.student_id = ?"
        with sqlite3.connect(tmp_path / "gradebook.db") as db:
            return {
                "submitted_assignment": db.execute(
                    "SELECT assignment_id, timestamp, extension FROM submitted_assignment WHERE student_id = ?",
                    (student,),
                ).fetchall(),
                "submitted_notebook": db.execute(
                    f"SELECT sn.notebook_id, sn.flagged, sn.late_submission_penalty FROM submitted_notebook sn {where} "
                    "ORDER BY sn.rowid",
                    (student,),
                ).fetchall(),
                **{
                    table: db.execute(
                        f"SELECT sn.notebook_id, t.cell_id, {columns} FROM {table} t "
                        f"JOIN submitted_notebook sn ON sn.id = t.notebook_id {where} ORDER BY t.rowid",
                        (student,),
                    ).fetchall()
                    for table, columns in (
                        ("grade", "t.auto_score, t.manual_score, t.extra_credit, t.needs_manual_grade"),
                        ("comment", "t.auto_comment, t.manual_comment"),
                    )
                },
            }

    theirs, ours = rows("theirs"), rows("ours")
    assert [len(theirs[t]) for t in ("submitted_notebook", "grade", "comment")] == [2, 5, 5]
    assert ours == theirs


def test_a_batch_writes_the_very_rows_nbgraders_own_autograde_writes(released, tmp_path) -> None:
    """A batch writes a new submission's rows itself (``BatchGradebook.add_submission``), in four statements. A course
    recorded by a batch and the same course recorded by nbgrader's own autograde, one submission at a time from the
    same stored check results, hold the same rows of every table a recording writes, in the same order: the late
    submission's time, the empty grades and comments nbgrader makes for every graded and commented cell, the scores
    and comments recorded into them, and the late penalty."""
    batch_root, single_root, submissions = tmp_path / "batch", tmp_path / "single", tmp_path / "submissions"
    for student in STUDENTS:
        shutil.copytree(SAMPLE_SUBMISSIONS / student / LAB, submissions / student / LAB)
    students = [*STUDENTS, tampered(submissions)]
    late = "2030-01-03 03:04:05.678900 UTC"  # 2 days 3 hours after the due date
    (submissions / "solution" / LAB / "timestamp.txt").write_text(late)
    late_policy = 'c.AssignLatePenalties.plugin_class = "grader.late.LatePenalty"\nc.LatePenalty.points = 2\n'
    for root in (batch_root, single_root):
        shutil.copytree(released, root)
        (root / "nbgrader_config.py").write_text(late_policy, encoding="utf-8")
        Course(root).set_due(LAB, Course(root).parse_due("2030-01-01 00:00"))
    batch, single = Course(batch_root), Course(single_root)
    assert all(o.ok for o in batch.autograde(batch.collect(submissions), jobs=1))
    single.collect(submissions)
    shutil.copytree(batch_root / ".grading" / "results", single_root / ".grading" / "results")  # the same verdicts
    api = single.api()
    for student in students:
        assert api.autograde(LAB, student)["success"]

    ours, theirs = gradebook_rows(batch), gradebook_rows(single)
    assert theirs["counts"][:3] == [(5,)] * 3 and theirs["counts"][3][0] > 5 and theirs["counts"][4][0] > 5
    assert ours == theirs
    assert [row[2] for row in ours["submitted_assignment"] if row[1] == "solution"] == ["2030-01-03 03:04:05.678900"]
    assert {row[0]: row[3] for row in ours["submitted_notebook"]}["solution"] == 6  # 2 points a day begun
    assert any(row[3] for row in ours["grade"]) and any(row[3] for row in ours["comment"])  # scores, comments


TAMPERED = "a read-only cell, rewritten by the learner"
OTHER_KERNEL = "a-kernel-the-release-does-not-name"


def tampered(submissions: Path) -> str:
    """The solution with a locked cell rewritten, an output left in an answer cell and another kernel chosen:
    nbgrader's sanitising pass restores the cell and the release's kernelspec and clears the output."""
    nb = read_notebook(SAMPLE_SUBMISSIONS / "solution" / LAB / f"{LAB}.ipynb")
    locked = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("locked"))
    locked.source = TAMPERED
    answer = next(c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))
    answer.outputs = [nbformat.v4.new_output("stream", name="stdout", text="an output left in")]
    nb.metadata["kernelspec"] = {"name": OTHER_KERNEL, "display_name": "Another kernel", "language": "python"}
    (submissions / "tampered" / LAB).mkdir(parents=True)
    nbformat.write(nb, submissions / "tampered" / LAB / f"{LAB}.ipynb")
    return "tampered"


# The gradebook's tables that grow with every submission recorded, and the columns that single out one submission's
# rows in each: a lookup keyed by anything less (a grade by its cell alone: that cell's grade of every submission)
# reads more rows the larger the cohort.
GROWING = {
    "grade": ("id", "notebook_id"),
    "comment": ("id", "notebook_id"),
    "submitted_notebook": ("id", "assignment_id"),  # its assignment_id is the id of one learner's submission
    "submitted_assignment": ("id", "student_id"),
    "student": ("id",),
}


def test_each_lookup_of_a_recording_reads_only_that_submissions_rows(released, tmp_path) -> None:
    """Every query nbgrader's recording sends for each submission finds the rows of the growing tables through an
    index on what singles the submission out, so recording one costs the same in a gradebook of 2,000 as in an empty
    one (SQLite does not index a foreign key, and nbgrader's schema leaves a notebook's grades and comments, an
    assignment's notebooks and a student's assignments unindexed: measured, the recording's cost grew by 30% over
    2,000 submissions)."""
    import sqlite3
    from collections import Counter

    course, course_root, pairs = collected(released, tmp_path, STUDENTS)
    sent: Counter = Counter()
    parameters_of: dict = {}

    def seen(conn, cursor, statement, parameters, context, executemany) -> None:
        if not executemany and statement.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE")):
            sent[statement] += 1
            parameters_of[statement] = parameters

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        assert all(o.ok for o in course.autograde(pairs, jobs=1))
    finally:
        event.remove(Engine, "before_cursor_execute", seen)

    per_submission = [statement for statement, n in sent.items() if n >= len(STUDENTS)]
    assert len(per_submission) > 5  # the recording's own queries were seen
    wide = set()
    with sqlite3.connect(course_root / "gradebook.db") as db:
        for statement in per_submission:
            for row in db.execute(f"EXPLAIN QUERY PLAN {statement}", parameters_of[statement]):
                found = re.match(r"(?:SCAN|SEARCH) (\w+)(.*)", row[-1])
                if not found or found.group(1) not in GROWING:
                    continue
                keys = set(re.findall(r"(\w+)=\?", found.group(2)))
                if not keys & set(GROWING[found.group(1)]):
                    wide.add((row[-1], statement.split("FROM", 1)[-1].strip()[:100]))
    assert not wide, wide


def test_released_cells_answer_as_the_gradebook_does(released) -> None:
    """What OverwriteCells reads of the release, read once: each source cell and graded cell as nbgrader's own
    lookups give it, and nbgrader's MissingEntry, with its words, for a name the release does not hold."""
    from nbgrader.api import MissingEntry

    from grader.course import ReleasedCells

    with Gradebook(f"sqlite:///{released / 'gradebook.db'}") as gb:
        view = ReleasedCells(gb)
        notebook = gb.find_notebook(LAB, LAB)
        assert notebook.source_cells and notebook.grade_cells
        for cell in notebook.source_cells:
            got = view.find_source_cell(cell.name, LAB, LAB)
            assert (got.cell_type, got.locked, got.source, got.checksum) == (
                cell.cell_type,
                cell.locked,
                cell.source,
                cell.checksum,
            )
        for cell in notebook.grade_cells + notebook.task_cells:
            assert (
                view.find_graded_cell(cell.name, LAB, LAB).max_score
                == gb.find_graded_cell(cell.name, LAB, LAB).max_score
            )
        for lookup in ("find_source_cell", "find_graded_cell"):
            with pytest.raises(MissingEntry) as theirs:
                getattr(gb, lookup)("no_such_cell", LAB, LAB)
            with pytest.raises(MissingEntry) as ours:
                getattr(view, lookup)("no_such_cell", LAB, LAB)
            assert str(ours.value) == str(theirs.value)
        assert view.find_notebook(LAB, LAB) is notebook  # anything else is the gradebook's own


def test_submission_scores_answer_as_the_gradebook_does(released, tmp_path) -> None:
    """What SaveCheckGrades reads of one submitted notebook, read in two queries: each grade and comment the very
    row nbgrader's own lookups give, and nbgrader's MissingEntry, with its words, for a name the notebook lacks or
    another submission's notebook."""
    from nbgrader.api import MissingEntry

    from grader.course import SubmissionScores

    course, course_root, pairs = collected(released, tmp_path, STUDENTS[:2])
    assert all(o.ok for o in course.autograde(pairs, jobs=1))
    with Gradebook(f"sqlite:///{course_root / 'gradebook.db'}") as gb:
        notebook = gb.find_notebook(LAB, LAB)
        graded = [c.name for c in notebook.grade_cells + notebook.task_cells]
        commented = [c.name for c in notebook.solution_cells + notebook.task_cells]
        assert graded and commented
        for student in STUDENTS[:2]:
            view = SubmissionScores(gb, LAB, LAB, student)
            for name in graded:
                assert view.find_grade(name, LAB, LAB, student) is gb.find_grade(name, LAB, LAB, student)
            for name in commented:
                assert view.find_comment(name, LAB, LAB, student) is gb.find_comment(name, LAB, LAB, student)
        view = SubmissionScores(gb, LAB, LAB, STUDENTS[0])
        other = view.find_grade(graded[0], LAB, LAB, STUDENTS[1])  # another submission: the gradebook's own lookup
        assert other is gb.find_grade(graded[0], LAB, LAB, STUDENTS[1]) and other.student.id == STUDENTS[1]
        for lookup in ("find_grade", "find_comment"):
            with pytest.raises(MissingEntry) as theirs:
                getattr(gb, lookup)("no_such_cell", LAB, LAB, STUDENTS[0])
            with pytest.raises(MissingEntry) as ours:
                getattr(view, lookup)("no_such_cell", LAB, LAB, STUDENTS[0])
            assert str(ours.value) == str(theirs.value)


def test_a_checks_outputs_are_what_nbformat_makes_and_valid() -> None:
    """The verdict's outputs, made without nbformat's per-output schema check, are what ``new_output`` makes, and
    each passes that check."""
    from nbformat import validate
    from nbformat.v4 import new_output

    from grader.course import verdict_outputs
    from labkit.checking import CheckResult

    for result in (CheckResult("c", 3, True, "ok"), CheckResult("c", 2, False, "Wrong: <b> & ünïcode\n")):
        ours = verdict_outputs(result)
        theirs = [
            new_output("stream", name="stdout", text=result.line() + "\n"),
            new_output("execute_result", data={"text/plain": repr(float(result.score))}, execution_count=1),
        ]
        assert ours == theirs
        for output in ours:
            validate(output, ref=output.output_type, version=4)


def test_a_ctrl_c_inside_nbgraders_steps_stops_the_batch_and_does_not_fail_the_submission(
    released, tmp_path, monkeypatch
) -> None:
    """nbgrader's ``capture_log`` catches everything its converter raises, Ctrl-C included, and calls it a failed
    submission: the batch takes it back for what it is. The batch stops, the submission being recorded is neither
    recorded nor listed as not graded, and a run again records it."""
    from nbgrader.preprocessors import LimitOutput

    course, course_root, pairs = collected(released, tmp_path, STUDENTS[:2])
    original = LimitOutput.preprocess

    first, second = (student for student, _ in pairs)

    def ctrl_c(self, nb, resources):
        if resources["nbgrader"]["student"] == second:
            raise KeyboardInterrupt
        return original(self, nb, resources)

    monkeypatch.setattr(LimitOutput, "preprocess", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        course.autograde(pairs, jobs=1)
    assert [r["student"] for r in course.gradebook()] == [first]
    assert course.not_graded() == []

    monkeypatch.setattr(LimitOutput, "preprocess", original)
    assert all(o.ok for o in course.autograde(pairs, jobs=1))
    assert sorted(r["student"] for r in course.gradebook()) == sorted(STUDENTS[:2])
