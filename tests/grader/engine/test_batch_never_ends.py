"""No submission can end a batch: whatever a learner's code returns, and whatever fails in the grader while it
grades one submission, the others are graded and recorded, and that one is graded with failed checks whose
messages are sentences, or listed as not graded with why.

The real batch: a released course (labs 1 and 2) and submissions made from the solution the way
``tests/submissions/make_samples.py`` makes them, each with an edit that makes a check meet a value it
indexes, hashes, compares or decodes as something else (a list for a dict, a dict for a list, an int
for a list, a list for a string, bytes, a lone surrogate, a 10^6-digit int, a 5 MB string, nesting
too deep for JSON), or a lab 2 configuration value of the wrong shape. Before run_check caught what a
check raises, the first of them ended ``autograde`` with a traceback and nothing recorded. It is
autograded three at a time (two in the grading process's threads, one in a worker process) beside good samples,
whose scores must be those of
``tests/submissions/expected.json``.

Then the batch machinery alone, with ``batchfaults.grade`` standing in for the grading: a worker
process that dies, an exception in a worker, results that cannot come back, on a pool and on Dask.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import batchfaults
import nbformat
import pytest
from coursetests import MATRIX, copy_samples, expected_failed, new_course, page_text
from nbgrader.api import Gradebook

from grader.course import COURSE_ID, graded_cells
from grader.engine.batch import NotGraded, Progress, ResultStore, Task, grade_all
from grader.labs import lab_checks
from grader.notebook import is_answer_cell
from grader.pipeline import SAMPLE_SUBMISSIONS
from labkit.checking import MESSAGE_LIMIT

REPO = Path(__file__).resolve().parents[3]
L1, L2 = "lab1_error_results", "lab2_scopes_expansion"
GOOD = {L1: ["solution", "retries_business_error"], L2: ["solution", "project_beats_local"]}
JUDGE = "The grader could not judge what your code returned ("

# student -> (lab, [(text of the solution's answer cells, replacement)], {check it is aimed at: phrase of its verdict}).
# The labs word their own verdicts, so only the grader's own phrases are named; None: any sentence will do.
HOSTILE: dict[str, tuple[str, list[tuple[str, str]], dict[str, str | None]]] = {
    # a list of strings where the check reads each order as a dict: AttributeError
    "orders_as_strings": (
        L1,
        [
            (
                '{"orders": found, "count": len(found)}',
                '{"orders": [o["orderId"] for o in found], "count": len(found)}',
            )
        ],
        {"desk_empty_search": f"{JUDGE}AttributeError: 'str' object has no attribute 'get')"},
    ),
    # a list where the order, a dict, is expected
    "order_as_list": (
        L1,
        [
            (
                '{"order": {**order, "refundedUsd": refunded}}',
                '{"order": [{**order, "refundedUsd": refunded}]}',
            )
        ],
        {"desk_transient": f"{JUDGE}AttributeError: 'list' object has no attribute 'get')", "desk_success": None},
    ),
    # the waits as lists, compared with numbers: TypeError
    "sleeps_as_lists": (
        L1,
        [
            (
                'sleep(retry_delay(last["structuredContent"], attempt))',
                'sleep([retry_delay(last["structuredContent"], attempt)])',
            )
        ],
        {"recover_backoff": f"{JUDGE}TypeError: '>' not supported between instances of 'list' and 'int')"},
    ),
    # a dict where the envelope's results, a list, are expected
    "results_as_dict": (
        L1,
        [('{"status": "complete", "results": results,', '{"status": "complete", "results": {"A": results},')],
        {"recover_backoff": None},
    ),
    # isError as a list
    "is_error_as_list": (
        L1,
        [('return {"isError": True, "content"', 'return {"isError": [True], "content"')],
        {"results_transient": None},
    ),
    # structuredContent with a list where a string is expected
    "category_as_list": (
        L1,
        [('structured = {"errorCategory": category,', 'structured = {"errorCategory": [category],')],
        {"results_transient": None, "desk_not_found": None},
    ),
    # a 10^6-digit int
    "huge_int": (
        L1,
        [("retryAfterSeconds=retry_after_seconds)", "retryAfterSeconds=10 ** 1_000_000)")],
        {"results_transient": None},
    ),
    # a 5 MB string: a message quoting it is cut short
    "huge_string": (
        L1,
        [('return error_result("transient", message,', 'return error_result("y" * 5_000_000, message,')],
        {"results_transient": None},
    ),
    # bytes, invalid UTF-8
    "bytes_in_result": (
        L1,
        [
            (
                'return error_result("not_found", message, code, False)',
                'return error_result("not_found", message, b"\\xff\\xfe", False)',
            )
        ],
        {"results_not_found": None},
    ),
    # a lone surrogate in a string of the result (the host replaces it on the wire: the code is then wrong)
    "surrogate_in_result": (
        L1,
        [
            (
                'return error_result("not_found", message, code, False)',
                'return error_result("not_found", message, code + "\\ud800", False)',
            )
        ],
        {"results_not_found": None},
    ),
    # nesting too deep for JSON
    "deeply_nested": (
        L1,
        [
            (
                'def not_found_error(message, code="NOT_FOUND"):\n',
                (
                    'def not_found_error(message, code="NOT_FOUND"):\n    deep = []\n    for _ in range(5000):\n        deep = [deep]\n'
                    '    return error_result("not_found", message, code, False, deep=deep)\n'
                ),
            )
        ],
        {"results_not_found": "could not send back what your code returned"},
    ),
    # lab 2: configuration values of the wrong shape
    "args_as_int": (
        L2,
        [('"args": ["-m", "servers.notes"]', '"args": 5')],
        {"config_scopes": f"{JUDGE}TypeError: argument of type 'int' is not iterable)"},
    ),
    "args_as_text": (L2, [('"args": ["-m", "servers.notes"]', '"args": "x"')], {"config_scopes": None}),
    "env_as_list": (
        L2,
        [('"env": {"DESK_ROLE": "supervisor", "DESK_API_TOKEN": "dsk_live_8c1e55a0"}', '"env": ["A=1"]')],
        {"config_scopes": None},
    ),
    "servers_as_list": (
        L2,
        [
            (
                "USER_SERVERS = {\n",
                'PROJECT_MCP_JSON["mcpServers"] = list(PROJECT_MCP_JSON["mcpServers"].values())\n\nUSER_SERVERS = {\n',
            )
        ],
        {"config_scopes": None},
    ),
    "headers_as_list": (
        L2,
        [
            (
                '"headers": {"Authorization": "Bearer ${TRACKER_TOKEN}"}',
                '"headers": ["Authorization: Bearer ${TRACKER_TOKEN}"]',
            )
        ],
        {"config_placeholders": f"{JUDGE}AttributeError: 'list' object has no attribute 'get')"},
    ),
    "authorization_as_list": (
        L2,
        [('"Authorization": "Bearer ${TRACKER_TOKEN}"', '"Authorization": ["Bearer ${TRACKER_TOKEN}"]')],
        {"config_placeholders": f"{JUDGE}TypeError: expected string or bytes-like object, got 'list')"},
    ),
    "type_as_list": (
        L2,
        [('"notes": {"type": "stdio"', '"notes": {"type": ["stdio"]')],
        {"config_servers_start": None},
    ),
    # a script that is not there: the visible check names it as written; the hidden one, which starts it, fails too
    "missing_script": (
        L2,
        [("/servers/support_desk/__main__.py", "/servers/support_desk/nope.py")],
        {"config_servers_start": "servers/support_desk/nope.py", "config_servers_start_for_real": None},
    ),
}
# A lone surrogate in the answer code itself: no file can hold it, so the code cannot be run.
NOT_GRADED = {"surrogate_in_code": (L1, "a lone surrogate")}


def edited(lab: str, edits: list[tuple[str, str]]) -> nbformat.NotebookNode:
    """The solution sample with each edit made in the one answer cell that holds its text once."""
    nb = copy.deepcopy(nbformat.read(str(SAMPLE_SUBMISSIONS / "solution" / lab / f"{lab}.ipynb"), as_version=4))
    for old, new in edits:
        [cell] = [c for c in nb.cells if is_answer_cell(c) and old in c.source]
        assert cell.source.count(old) == 1, old
        cell.source = cell.source.replace(old, new)
    return nb


def write(folder: Path, student: str, lab: str, nb: nbformat.NotebookNode) -> None:
    (folder / student / lab).mkdir(parents=True)
    # json, not nbformat.write: a lone surrogate must reach the file as the escape a browser would write.
    (folder / student / lab / f"{lab}.ipynb").write_text(json.dumps(nb), encoding="ascii")


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("never-ends")
    course = new_course(root / "course")
    course.release([L1, L2])
    subs = copy_samples(root / "subs", GOOD)
    for student, (lab, edits, _) in HOSTILE.items():
        write(subs, student, lab, edited(lab, edits))
    nb = edited(L1, [])
    [cell] = [c for c in nb.cells if is_answer_cell(c) and "def decide(" in c.source]
    cell.source = "GREETING = '\ud800'\n" + cell.source
    write(subs, "surrogate_in_code", L1, nb)

    pairs = course.collect(subs)
    outcomes = {(o.student, o.lab): o for o in course.autograde(pairs, jobs=3)}
    pages, _ = course.feedback(pairs)
    return course, outcomes, {(p.parts[-3], p.parts[-2]): p for p in pages}


def scores(course, student: str, lab: str) -> dict[str, float]:
    with Gradebook(course.db_url, course_id=COURSE_ID) as gb:
        return {grade.name: grade.score for grade in gb.find_submission_notebook(lab, lab, student).grades}


def verdicts(course, student: str, lab: str) -> dict[str, str]:
    nb = nbformat.read(str(course.root / "autograded" / student / lab / f"{lab}.ipynb"), as_version=4)
    return {cell.metadata.nbgrader["grade_id"]: cell.outputs[0]["text"] for cell in graded_cells(nb)}


def assert_a_sentence(verdict: str) -> None:
    """One line: ``[FAIL] name (0/p): message``, the message in words, not a traceback, and not too long."""
    assert verdict.endswith("\n") and verdict.count("\n") == 1, verdict[:300]
    message = verdict.split("): ", 1)[1].rstrip("\n")
    assert "Traceback" not in message and 'File "' not in message, message[:300]
    assert len(message) <= MESSAGE_LIMIT
    assert message.endswith((".", ".)", "?)", "characters)")), message[-200:]


def test_the_whole_batch_is_recorded_and_nothing_is_left_out(batch) -> None:
    course, outcomes, _ = batch
    expected = {(s, lab) for lab, students in GOOD.items() for s in students} | {
        (s, lab) for s, (lab, _, _) in HOSTILE.items()
    }
    assert {key for key, o in outcomes.items() if o.ok} == expected
    assert {(r["student"], r["lab"]) for r in course.gradebook()} == expected


@pytest.mark.parametrize(("lab", "student"), [(lab, s) for lab, students in GOOD.items() for s in students])
def test_each_good_submission_beside_them_keeps_its_expected_score(batch, lab: str, student: str) -> None:
    course, _, _ = batch
    found = scores(course, student, lab)
    assert {name for name, score in found.items() if score == 0} == expected_failed(
        lab, student, lab_checks(lab).checks
    )
    assert sum(found.values()) == MATRIX[lab]["samples"][student]["score"]


@pytest.mark.parametrize("student", sorted(HOSTILE))
def test_each_bad_result_fails_its_checks_with_sentences(batch, student: str) -> None:
    course, _, _ = batch
    lab, _, failing = HOSTILE[student]
    found, said = scores(course, student, lab), verdicts(course, student, lab)
    assert set(found) == set(lab_checks(lab).checks)
    assert sum(found.values()) < MATRIX[lab]["max_score"]
    for name, phrase in failing.items():
        # The labs judge shapes in words of their own more and more instead of breaking on them: the grader's own
        # phrases are checked here, the "could not judge" sentence across the batch below.
        if phrase is not None and not phrase.startswith(JUDGE):
            assert found[name] == 0 and phrase in said[name], said[name][:500]
    for name, score in found.items():
        if score == 0:
            assert_a_sentence(said[name])


def test_checks_that_broke_on_a_value_said_so_in_a_sentence(batch) -> None:
    # Where a check indexes, hashes or compares what it did not expect, the check raised in the worker process:
    # its verdict is the grader's sentence, not a traceback, and the batch went on.
    course, _, _ = batch
    judged = [
        verdict
        for student, (lab, _, failing) in HOSTILE.items()
        for name, verdict in verdicts(course, student, lab).items()
        if name in failing and verdict.split("): ", 1)[1].startswith(JUDGE)
    ]
    assert judged
    for verdict in judged:
        assert verdict.rstrip().endswith("check that each tool returns the shape the lab asks for.")


def test_a_notebook_whose_code_no_file_can_hold_is_listed_as_not_graded_with_why(batch) -> None:
    course, outcomes, _ = batch
    [(student, (lab, phrase))] = NOT_GRADED.items()
    outcome = outcomes[student, lab]
    assert not outcome.ok and phrase in outcome.message
    assert outcome.message.endswith("autograde again.")
    assert [(o.student, o.lab, o.message) for o in course.not_graded()] == [(student, lab, outcome.message)]


def test_no_feedback_page_shows_a_folder_of_the_grading_machine(batch) -> None:
    course, _, pages = batch
    assert set(pages) >= {(s, lab) for s, (lab, _, _) in HOSTILE.items()}
    for key, page in pages.items():
        text = page.read_text(encoding="utf-8")
        assert str(REPO) not in text and str(course.root) not in text, key
    assert "servers/support_desk/nope.py" in page_text(pages["missing_script", L2])


# --- the batch machinery alone ---------------------------------------------------------------------


def tasks_of(codes: dict[str, str]) -> list[Task]:
    return [Task(student, L1, code) for student, code in codes.items()]


CODES = {
    "ana": "ok-1",
    "ben": "die",
    "cai": "ok-2",
    "dan": "raise",
    "eva": "ok-3",
    "fay": "unpicklable",
    "gus": "die",
    "hal": "malformed",
    "ivy": "ok-4",
}
FINE = {student for student, code in CODES.items() if code.startswith("ok")}


def test_workers_that_die_or_fail_cost_only_their_submissions_and_are_replaced(tmp_path: Path) -> None:
    import io

    store, out = ResultStore(tmp_path), io.StringIO()

    results = grade_all(
        tasks_of(CODES), store, jobs=2, grade=batchfaults.grade, progress=Progress(len(CODES), "checks", stream=out)
    )

    assert set(results) == {(s, L1) for s in CODES}
    for student in FINE:
        [result] = results[student, L1]
        assert result.passed and result.message == f"{L1} graded {CODES[student]}"
    reasons = {s: results[s, L1].reason for s in CODES if s not in FINE}
    assert all(isinstance(results[s, L1], NotGraded) for s in reasons)
    assert "the worker process grading it stopped before it finished" in reasons["ben"]
    assert (
        "the worker process grading it stopped before it finished" in reasons["gus"]
    )  # a second death: replaced again
    assert "(TypeError: unhashable type: 'list')" in reasons["dan"]
    assert (
        "the grader failed while grading it" in reasons["fay"]
        and "the grader failed while grading it" in reasons["hal"]
    )
    assert all(why.endswith(": autograde again.") and "Traceback" not in why for why in reasons.values())
    # Only what was graded is stored; the progress line reached the end.
    assert {p.stem for p in (tmp_path / L1).glob("*.json")} == FINE
    assert out.getvalue().splitlines()[-1].startswith(f"checks [########################] {len(CODES)}/{len(CODES)}")


def test_a_rerun_tries_again_only_what_was_not_graded(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    grade_all(tasks_of(CODES), store, jobs=2, grade=batchfaults.grade)
    tried = []

    def grade(lab: str, code: str, timeout=None):
        tried.append(code)
        return batchfaults.grade(lab, "ok-again")

    results = grade_all(tasks_of(CODES), store, jobs=1, grade=grade)

    assert sorted(tried) == sorted(code for code in CODES.values() if not code.startswith("ok"))
    assert all(not isinstance(r, NotGraded) for r in results.values())


def test_one_job_in_this_process_survives_a_failing_grading_too(tmp_path: Path) -> None:
    results = grade_all(tasks_of({"dan": "raise", "eva": "ok"}), ResultStore(tmp_path), jobs=1, grade=batchfaults.grade)
    assert isinstance(results["dan", L1], NotGraded) and results["eva", L1][0].passed


REAL_FAILURES = {
    # grade_task for real, failing in the grader: a lab it has no checks for, code no file can hold
    Task("nadia", "lab9_nothing", "x = 1\n"): "the grader failed while grading it",
    Task("omar", L1, "GREETING = '\ud800'\n"): "UnicodeEncodeError",
}


def test_a_real_grading_that_fails_in_a_worker_is_not_graded_and_the_rest_are(tmp_path: Path) -> None:
    good = Task("solution", L1, _solution_code())
    results = grade_all([*REAL_FAILURES, good], ResultStore(tmp_path), jobs=2)
    for task, phrase in REAL_FAILURES.items():
        assert (
            isinstance(results[task.student, task.lab], NotGraded) and phrase in results[task.student, task.lab].reason
        )
    assert sum(r.score for r in results["solution", L1]) == MATRIX[L1]["max_score"]


def test_a_dask_task_that_fails_is_not_graded_and_the_rest_are(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed", reason="the optional Dask extra is not installed")
    good = Task("solution", L1, _solution_code())
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        results = grade_all([*REAL_FAILURES, good], ResultStore(tmp_path), scheduler=cluster.scheduler_address)
    for task, phrase in REAL_FAILURES.items():
        assert (
            isinstance(results[task.student, task.lab], NotGraded) and phrase in results[task.student, task.lab].reason
        )
    assert sum(r.score for r in results["solution", L1]) == MATRIX[L1]["max_score"]


def _solution_code() -> str:
    from grader.notebook import answer_code, read_notebook

    return answer_code(read_notebook(SAMPLE_SUBMISSIONS / "solution" / L1 / f"{L1}.ipynb"))
