"""Grading a submission's code through a real learner-host subprocess: one bad call costs one check."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from grader.engine.grading import grade_code, sandboxed
from grader.notebook import answer_code, read_notebook

LAB = "lab1_error_results"
SOURCE = Path(__file__).resolve().parents[3] / "labs" / "source" / LAB / f"{LAB}.ipynb"
SOLUTION = answer_code(read_notebook(SOURCE))


def replace_once(code: str, old: str, new: str) -> str:
    assert code.count(old) == 1
    return code.replace(old, new)


def by_name(results):
    return {r.name: r for r in results}


def test_the_solution_earns_every_point_over_stdio():
    results = grade_code(LAB, SOLUTION)
    assert results and all(r.passed for r in results), [r.line() for r in results if not r.passed]


def test_checks_run_inside_a_running_event_loop_as_outside_one():
    """Outside a loop a host's session runs its loop in the grading thread (InlineSession); inside one (a Jupyter
    kernel's cell, where stock nbgrader and otter run hidden tests) it keeps a thread of its own, and grades the same,
    a configured server started by lab 2's check included."""
    import asyncio

    from grader.labs.lab2_scopes_expansion import checks as lab2

    lab2_solution = answer_code(
        read_notebook(SOURCE.parents[1] / "lab2_scopes_expansion" / "lab2_scopes_expansion.ipynb")
    )
    names = ["decide_not_found", "desk_transient"]

    async def in_a_cell():
        return grade_code(LAB, SOLUTION, names), grade_code("lab2_scopes_expansion", lab2_solution)

    inside, inside_lab2 = asyncio.run(in_a_cell())
    outside, outside_lab2 = grade_code(LAB, SOLUTION, names), grade_code("lab2_scopes_expansion", lab2_solution)
    assert [r.passed for r in inside] == [r.passed for r in outside] == [True, True]
    assert [(r.name, r.passed) for r in inside_lab2] == [(r.name, r.passed) for r in outside_lab2]
    assert all(r.passed for r in inside_lab2) and len(inside_lab2) == len(lab2.checks)


def test_a_handler_that_kills_its_process_fails_only_the_checks_that_call_it():
    code = replace_once(
        SOLUTION, "def get_order(desk, order_id):\n", "def get_order(desk, order_id):\n    import os; os._exit(3)\n"
    )
    names = ["desk_empty_search", "desk_not_found", "desk_permission", "desk_success", "decide_not_found"]
    results = by_name(grade_code(LAB, code, names))
    assert list(results) == names
    for name in ("desk_not_found", "desk_success"):
        assert not results[name].passed
        assert "stopped while running your code" in results[name].message
    for name in ("desk_empty_search", "desk_permission", "decide_not_found"):
        assert results[name].passed, results[name].line()


def test_an_endless_loop_fails_its_check_in_bounded_time_and_the_next_check_still_runs():
    code = replace_once(
        SOLUTION,
        "def search_orders(desk, customer_email, status=None):\n",
        "def search_orders(desk, customer_email, status=None):\n    while True:\n        pass\n",
    )
    results = by_name(grade_code(LAB, code, ["desk_empty_search", "desk_business_limit"], timeout=1.5))
    assert not results["desk_empty_search"].passed
    assert "did not answer in time" in results["desk_empty_search"].message
    assert results["desk_business_limit"].passed


def test_a_broken_answer_cell_costs_only_the_checks_that_need_it():
    # The last answer cell holds recover(); a syntax error there leaves the other cells' functions usable.
    results = by_name(grade_code(LAB, SOLUTION + "\ndef broken(:\n", ["results_transient", "recover_envelope"]))
    assert results["results_transient"].passed
    message = results["recover_envelope"].message
    assert not results["recover_envelope"].passed
    assert "define no function named recover" in message
    assert "failed to run: SyntaxError" in message and "of answer cell 4" in message


def test_printing_from_learner_code_does_not_corrupt_the_protocol():
    code = replace_once(
        SOLUTION,
        "def decide(result, attempt=1, max_attempts=3):\n",
        "def decide(result, attempt=1, max_attempts=3):\n    print('debugging', result)\n",
    )
    results = grade_code(LAB, code, ["decide_not_found", "decide_business_stops"])
    assert all(r.passed for r in results), [r.line() for r in results]


def test_a_warning_on_stderr_does_not_cost_a_correct_answer_any_point():
    # Scores come from the checks' verdicts; what the learner's code prints is only kept aside.
    noisy = SOLUTION.replace(
        "def get_order(desk, order_id):\n",
        "def get_order(desk, order_id):\n    import sys, warnings\n    warnings.warn('order lookups are slow')\n"
        "    print('WARNING: deprecated', file=sys.stderr)\n",
    )
    assert noisy != SOLUTION

    results = grade_code(LAB, noisy)

    assert all(r.passed for r in results), [r.line() for r in results if not r.passed]


# --- programs a learner configured (lab 2's servers) run sandboxed too ---------------------------

REPO = Path(__file__).resolve().parents[3]
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox user needs root")


def test_a_configured_server_starts_sandboxed_and_answers():
    with sandboxed([sys.executable, "-m", "servers.notes"], cwd=REPO) as session:
        assert {tool["name"] for tool in session.tools()}


@pytest.mark.parametrize("start", ["fork", "exec"])
@as_root
def test_a_configured_command_runs_as_the_sandbox_user_not_as_the_grader(tmp_path: Path, monkeypatch, start):
    if start == "exec":
        monkeypatch.setenv("GRADER_HOST_START", "exec")
    marker = tmp_path / "written-by-the-configuration"
    code = f"import os, sys\nprint(os.getuid(), file=sys.stderr)\nopen({str(marker)!r}, 'w').write('as the grader')"
    with tempfile.TemporaryFile("w+") as stderr:
        failed_start = pytest.raises(Exception)  # the SDK wraps a failed start in exception groups
        with failed_start, sandboxed([sys.executable, "-c", code], cwd=REPO, errlog=stderr, timeout=10):
            pass
        stderr.seek(0)
        said = stderr.read()
    assert not marker.exists()
    # It ran as a user of its own, in a view of the files where the grader's folders do not exist.
    assert int(said.split()[0]) != 0 and ("FileNotFoundError" in said or "PermissionError" in said)


@as_root
def test_a_configured_pythonpath_cannot_slip_code_into_the_grader(tmp_path: Path):
    """A sitecustomize on a PYTHONPATH the configuration sets runs in the sandbox, not in the grader."""
    marker = tmp_path / "planted"  # a folder only root may write in
    with tempfile.TemporaryDirectory() as shared, tempfile.TemporaryFile("w+") as stderr:
        plant = Path(shared)
        plant.chmod(0o755)  # any user may read it: the sandbox user imports from it
        (plant / "sitecustomize.py").write_text(
            f"import os, sys\nprint('planted code runs as', os.getuid(), file=sys.stderr)\nopen({str(marker)!r}, 'w')\n"
        )
        (plant / "sitecustomize.py").chmod(0o644)
        with sandboxed(
            [sys.executable, "-m", "servers.notes"], env={"PYTHONPATH": shared}, cwd=REPO, errlog=stderr
        ) as session:
            assert session.tools()
        stderr.seek(0)
        said = stderr.read()
    # The planted folder is not in the server's view of the files: the code runs nowhere, the grader untouched.
    assert "planted code runs as 0" not in said
    assert not marker.exists()


def test_where_the_fork_server_cannot_start_hosts_start_as_new_programs(monkeypatch, capsys):
    from grader.engine import forkserver

    def refuse(self):
        raise OSError("no fork server on this machine")

    server = forkserver.ForkServer()
    monkeypatch.setattr(forkserver.ForkServer, "_spawn", refuse)
    monkeypatch.setattr(forkserver, "_shared", server)
    results = grade_code(LAB, SOLUTION, ["desk_success", "desk_not_found"])
    assert [r.passed for r in results] == [True, True]
    said = capsys.readouterr().err
    assert said.count("the fork server could not start (no fork server on this machine)") == 1
    assert "starting learner hosts as new programs" in said


def test_a_fork_server_started_from_a_thread_that_ends_outlives_the_thread(monkeypatch):
    # A batch grades in a thread of the grading process that ends with the batch; the fork server it started
    # must still serve the next batch (it dies with the thread that starts its process, so a long-lived one does).
    import subprocess
    import threading

    from grader.engine import forkserver

    server = forkserver.ForkServer()
    monkeypatch.setattr(forkserver, "_shared", server)
    try:
        thread = threading.Thread(target=lambda: grade_code(LAB, SOLUTION, ["desk_success"]))
        thread.start()
        thread.join()
        # Killed it would be within milliseconds of the thread's end: a second passes, and it still runs.
        with pytest.raises(subprocess.TimeoutExpired):
            server._process.wait(timeout=1)
        assert server.cpu_seconds() > 0
        assert [r.passed for r in grade_code(LAB, SOLUTION, ["desk_not_found"])] == [True]
    finally:
        server.close()


def test_the_supervisor_hides_each_course_folder_but_one_inside_a_path_shown(tmp_path: Path) -> None:
    """``--hide`` for each folder the host may not see, unless a path shown holds it whole (then it is shown with it);
    a folder shown only in part stays hidden but for what is shown (supervisor.cover)."""
    from grader.engine.grading import COURSE, HIDDEN, Limits, Sandbox

    with open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog:
        args = Sandbox(tmp_path, Limits(), errlog, ["true"], shown=["grader", "labs/source", "test"]).supervisor_args()
    hidden = {args[i + 1] for i, arg in enumerate(args[: args.index("--")]) if arg == "--hide"}
    shown = {args[i + 1] for i, arg in enumerate(args[: args.index("--")]) if arg == "--show"}
    assert shown == {str(COURSE / "grader"), str(COURSE / "labs/source"), str(COURSE / "test")}
    assert str(COURSE / "grader/labs") not in hidden  # inside the grader folder shown
    assert str(COURSE / "labs") in hidden  # shown in part
    assert str(COURSE / "tests") in hidden  # "test" does not hold "tests"
    assert hidden >= {str(COURSE / name) for name in HIDDEN if name != "grader/labs"}
