"""Hostile answer code under grade_code: each limit ends in a clear message for its check alone.

Each case starts from lab 1's correct solution and makes get_order hostile (or the top level of
its cell); the check that calls get_order fails with the message below, in bounded time, and the
checks around it, served by the same host or a fresh one, still pass.
"""

from __future__ import annotations

import sys
import time

import pytest

from grader.engine.grading import COURSE, grade_code
from grader.notebook import answer_code, read_notebook

LAB = "lab1_error_results"
SOURCE = COURSE / "labs" / "source" / LAB / f"{LAB}.ipynb"
SOLUTION = answer_code(read_notebook(SOURCE))
GET_ORDER = "def get_order(desk, order_id):\n"

# desk_not_found calls get_order; the checks before and after it do not.
BEFORE, AFFECTED, AFTER = "desk_empty_search", "desk_not_found", "decide_not_found"
# A bound no case should come near: start, one lost call, the stop, and a restart.
BOUND_SECONDS = 30


def in_get_order(body: str) -> str:
    """The solution with ``body`` run first in every call of get_order."""
    assert SOLUTION.count(GET_ORDER) == 1
    return SOLUTION.replace(GET_ORDER, GET_ORDER + body)


def before_get_order(top_level: str) -> str:
    """The solution with ``top_level`` run at the top level of get_order's cell, just before its def."""
    assert SOLUTION.count(GET_ORDER) == 1
    return SOLUTION.replace(GET_ORDER, top_level + "\n\n" + GET_ORDER)


def graded(code: str, **limits):
    started = time.monotonic()
    results = {r.name: r for r in grade_code(LAB, code, [BEFORE, AFFECTED, AFTER], **limits)}
    elapsed = time.monotonic() - started
    assert elapsed < BOUND_SECONDS, f"grading took {elapsed:.1f} s"
    return results


def assert_only_get_order_failed(results, message: str) -> None:
    assert not results[AFFECTED].passed and results[AFFECTED].score == 0
    assert message in results[AFFECTED].message, results[AFFECTED].message
    for name in (BEFORE, AFTER):
        assert results[name].passed, results[name].line()


GRADER_CHECKS = COURSE / "grader" / "labs" / f"{LAB}.py"

CASES = {
    "endless_loop_in_a_call": (
        in_get_order("    while True:\n        pass\n"),
        {"timeout": 1.5},
        "did not answer in time",
    ),
    "busy_loop_past_the_cpu_limit": (
        in_get_order("    while True:\n        pass\n"),
        {"cpu_seconds": 2, "timeout": 20},
        "Your code used more than 2 s of CPU time, so the lab server was stopped",
    ),
    "endless_loop_at_the_top_level": (
        before_get_order("while True:\n    pass"),
        {"cell_seconds": 0.5},
        (
            "define no function named get_order. Your answer cells failed to run: TimeLimitExceeded: "
            "this cell was still running after 0.5 s"
        ),
    ),
    "sys_exit_in_a_call": (
        in_get_order("    import sys\n    sys.exit(3)\n"),
        {},
        "get_order raised SystemExit: 3",
    ),
    "raise_system_exit_in_a_call": (
        in_get_order("    raise SystemExit('bye')\n"),
        {},
        "get_order raised SystemExit: bye",
    ),
    "os_exit_in_a_call": (
        in_get_order("    import os\n    os._exit(3)\n"),
        {},
        "The lab server stopped while running your code: its process exited with status 3",
    ),
    "segfault_through_ctypes": (
        in_get_order("    import ctypes\n    ctypes.string_at(0)\n"),
        {},
        "The lab server stopped while running your code: it crashed (a segmentation fault, SIGSEGV)",
    ),
    "memory_bomb_in_a_call": (
        in_get_order("    hoard = []\n    while True:\n        hoard.append(bytearray(10**7))\n"),
        {"memory_mb": 300},
        "Your code tried to use more than 300 MB of memory, so the lab server was stopped",
    ),
    # The learner's own `except` does not hide the limit: the watch sees the error where it is raised.
    "memory_bomb_caught_by_the_learner": (
        in_get_order("    try:\n        hoard = bytearray(10**10)\n    except MemoryError:\n        hoard = None\n"),
        {"memory_mb": 300},
        "Your code tried to use more than 300 MB of memory, so the lab server was stopped",
    ),
    "memory_bomb_at_the_top_level": (
        before_get_order("hoard = bytearray(10**10)"),
        {"memory_mb": 300},
        "failed to run: MemoryLimitExceeded: this cell tried to use more than 300 MB of memory",
    ),
    "fork_bomb": (
        in_get_order("    import os\n    while True:\n        os.fork()\n"),
        {},
        "get_order raised PermissionError: Your code may not start processes",
    ),
    "fork_bomb_through_ctypes": (
        in_get_order("    import ctypes\n    fork = ctypes.CDLL(None).fork\n    while True:\n        fork()\n"),
        {"processes": 16},
        "Your code started too many processes or threads (the limit is 16), so the lab server was stopped",
    ),
    "printing_100_mb_to_stdout": (
        in_get_order("    for _ in range(100):\n        print('x' * 10**6)\n"),
        {},
        "Your code printed more than 1 MB, so the lab server was stopped",
    ),
    "printing_100_mb_to_stderr": (
        in_get_order("    import sys\n    for _ in range(100):\n        sys.stderr.write('x' * 10**6)\n"),
        {},
        "Your code printed more than 1 MB, so the lab server was stopped",
    ),
    "a_huge_tool_result": (
        in_get_order("    return success_result('x' * 20_000_000, {})\n"),
        {"message_bytes": 1_000_000},
        "Your code returned an answer larger than 1 MB, so the lab server was stopped",
    ),
    "a_huge_file": (
        in_get_order(
            "    with open('big.bin', 'wb') as big:\n        for _ in range(10):\n            big.write(b'x' * 10**6)\n"
        ),
        {"file_mb": 2},
        "Your code tried to write a file larger than 2 MB, so the lab server was stopped",
    ),
    "importing_the_checks": (
        in_get_order("    import grader.labs.lab1_error_results\n"),
        {},
        "get_order raised ImportError: Your answer cells may not import the grader",
    ),
    "importing_the_reference_model_the_host_loaded": (
        in_get_order("    from grader.decisions import decide\n"),
        {},
        "get_order raised ImportError: Your answer cells may not import the grader (grader",
    ),
    "reading_the_checks": (
        in_get_order(f"    open({str(GRADER_CHECKS)!r}).read()\n"),
        {},
        # the message names the course's file without the grading machine's folder (<course>)
        f"get_order raised PermissionError: Your code may not open <course>/{GRADER_CHECKS.relative_to(COURSE)}",
    ),
    "reading_the_source_notebook": (
        in_get_order(f"    from pathlib import Path\n    Path({str(SOURCE)!r}).read_text()\n"),
        {},
        f"get_order raised PermissionError: Your code may not open <course>/{SOURCE.relative_to(COURSE)}",
    ),
    "walking_the_garbage_collector": (
        in_get_order("    import gc\n    gc.get_objects()\n"),
        {},
        "get_order raised PermissionError: Your code may not list the lab server's objects",
    ),
}


@pytest.mark.parametrize("code, limits, message", CASES.values(), ids=CASES.keys())
def test_hostile_code_fails_its_own_check_with_a_clear_message(code: str, limits: dict, message: str) -> None:
    assert_only_get_order_failed(graded(code, **limits), message)


SECRET = "s3cr3t-4f9a1c2e7b"

# Looks for the grader's secret everywhere a process could: its own environment, and every
# other process's environment under /proc; when it finds it, it says so in a failed call.
FIND_THE_SECRET = """\
    import os
    leaks = [f"env {k}" for k, v in os.environ.items() if "s3cr3t" in v or k == "GRADER_SECRET"]
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if b"s3cr3t" in environ.read():
                    leaks.append(f"/proc/{entry}/environ")
        except OSError:
            pass
    if leaks:
        raise RuntimeError(f"found the secret in {leaks}")
"""


def test_answer_code_cannot_find_a_secret_in_the_graders_environment(monkeypatch) -> None:
    monkeypatch.setenv("GRADER_SECRET", SECRET)
    results = graded(in_get_order(FIND_THE_SECRET))
    assert all(r.passed for r in results.values()), [r.line() for r in results.values()]
    assert not any(SECRET in r.message for r in results.values())


def test_a_submission_past_its_time_budget_has_its_remaining_checks_failed_unrun() -> None:
    code = in_get_order("    while True:\n        pass\n")
    started = time.monotonic()
    results = grade_code(LAB, code, [AFFECTED, BEFORE, AFTER], timeout=1.0, submission_seconds=0.5)
    assert time.monotonic() - started < BOUND_SECONDS
    assert [r.name for r in results] == [AFFECTED, BEFORE, AFTER]
    assert "did not answer in time" in results[0].message
    for result in results[1:]:
        assert not result.passed
        assert result.message.startswith("This check was not run: grading this submission took more than 0.5 s in all")


def test_answer_cells_that_crash_the_host_as_it_starts_fail_every_check_with_the_reason() -> None:
    results = graded(before_get_order("import ctypes\nctypes.string_at(0)"))
    for result in results.values():
        assert not result.passed
        assert result.message.startswith("The lab server did not start: while your answer cells ran, it crashed"), (
            result.message
        )


def test_after_one_hung_call_later_calls_of_the_submission_get_a_short_timeout() -> None:
    # Three checks call get_order, which loops: the first waits the full timeout (8 s), each later
    # one HUNG_CALL_TIMEOUT_SECONDS (2 s); waiting the full timeout three times would take over 24 s.
    from grader.engine.grading import HUNG_CALL_TIMEOUT_SECONDS
    from labkit.checking import TIMED_OUT

    names = ["desk_not_found", "desk_validation", "desk_success"]
    started = time.monotonic()
    results = grade_code(LAB, in_get_order("    while True:\n        pass\n"), names, timeout=8)
    elapsed = time.monotonic() - started

    assert [r.message for r in results] == [TIMED_OUT] * 3
    assert HUNG_CALL_TIMEOUT_SECONDS == 2.0
    assert elapsed < 20, f"grading took {elapsed:.1f} s"


def test_text_no_encoding_can_carry_is_replaced_on_the_wire_not_left_to_hang_the_call() -> None:
    """A lone surrogate in what get_order returns cannot be written as UTF-8; the host replaces it, so the
    check judges the answer at once instead of waiting out the call limit."""
    code = in_get_order(
        '    return {"isError": False, "content": [{"type": "text", "text": "\\ud800"}], "structuredContent": {}}\n'
    )
    started = time.monotonic()
    results = {r.name: r for r in grade_code(LAB, code, [AFFECTED, AFTER])}
    assert time.monotonic() - started < 5  # the call limit is 5 s: it was not waited out
    assert not results[AFFECTED].passed and "did not answer in time" not in results[AFFECTED].message
    assert results[AFTER].passed


LAB3 = "lab3_tools_resources"
LAB3_SOLUTION = answer_code(read_notebook(COURSE / "labs" / "source" / LAB3 / f"{LAB3}.ipynb"))
ADD_NOTE = "    count = STORE.add_note(alert_id, text)\n"  # in add_note, a sync tool of the learner's own server
HOARD = {
    "escaping": "    hoard = bytearray(10**10)\n",
    "caught": "    try:\n        hoard = bytearray(10**10)\n    except MemoryError:\n        hoard = None\n",
}


@pytest.mark.parametrize("how", sorted(HOARD))
def test_a_memory_error_in_a_sync_tool_of_the_learners_own_server_names_the_memory_limit(how: str) -> None:
    """The SDK runs a learner server's sync tools in worker threads. On Python 3.12+ every raise in an answer cell's
    frame is watched there; on 3.11 the error that escapes the tool (grader.engine.sandbox.escaping)."""
    if how == "caught" and sys.version_info < (3, 12):
        pytest.skip("on Python 3.11 an error a learner's sync tool catches itself is not watched (sandbox.py)")
    assert LAB3_SOLUTION.count(ADD_NOTE) == 1
    results = grade_code(LAB3, LAB3_SOLUTION.replace(ADD_NOTE, HOARD[how] + ADD_NOTE), memory_mb=300)
    named = [r for r in results if "Your code tried to use more than 300 MB of memory" in r.message]
    assert named and all(not r.passed for r in named)
    assert any(r.passed for r in results)  # the checks that never add a note still pass


def hoarding_helper(caught: bool) -> str:
    """A helper that asks for 10 GB, called at the top level of get_order's cell; ``caught``: the cell catches it."""
    call = "try:\n    hoard = hoard_it()\nexcept MemoryError:\n    hoard = None" if caught else "hoard = hoard_it()"
    return before_get_order("def hoard_it():\n    return bytearray(10**10)\n\n" + call)


@pytest.mark.parametrize("caught", [False, True], ids=["escaping", "caught"])
def test_a_memory_error_while_a_cell_loads_fails_that_cell_and_names_where(caught: bool) -> None:
    """While the cells load, a memory error fails its cell, naming the line that asked (inside the helper, not where the
    cell called it). Python 3.12+ watches every raise in an answer cell's frame; 3.11 what escapes the cell
    (grader.engine.sandbox.cell_runner)."""
    if caught and sys.version_info < (3, 12):
        pytest.skip("on Python 3.11 an error a cell's top level catches itself is not watched (sandbox.py)")
    code = hoarding_helper(caught)
    cells = code.split("\n# ---- next answer cell ----\n")
    (cell,) = [number for number, text in enumerate(cells, start=1) if "def hoard_it" in text]
    line = cells[cell - 1].splitlines().index("    return bytearray(10**10)") + 1
    assert_only_get_order_failed(
        graded(code, memory_mb=300),
        f"MemoryLimitExceeded: this cell tried to use more than 300 MB of memory (line {line} of answer cell {cell})",
    )
