"""The unit tests: the part of the suite that tests/test_interpreters.py runs on every other Python found.

Unit tests run in the test process, or in a course server it starts over stdio or HTTP on 127.0.0.1: the
reference model (decisions, expansion, scopes, taxonomy, recovery, simulator, tool search, limits, search
quality, reconnection, similarity), the quizzes' model and reading of answer cells, check-server's rules, the
course's servers and the learner host, and labkit's visible checks. They take about a minute and a half.

Not unit tests: the grading engine and its sandboxes (tests/grader/engine, the labs' hidden checks graded in
the learner host), the nbgrader pipeline and the command line's course commands, notebooks (nbval, a kernel),
the browser, the hub, the conformance tests against Claude Code, and the tests that build venvs or packages.

Run them alone from the checkout's root:

    .venv/bin/python -m pytest $(.venv/bin/python tests/units.py)
"""

from __future__ import annotations

# Folders and files, relative to the checkout's root.
UNIT_TESTS = (
    "tests/servers",
    "tests/labkit",
    "tests/grader/checker",
    "tests/grader/quizzes",
    "tests/grader/test_cli.py",
    "tests/grader/test_cli_resolve.py",
    "tests/grader/test_decisions.py",
    "tests/grader/test_expansion.py",
    "tests/grader/test_lab2_hidden.py",
    "tests/grader/test_limits.py",
    "tests/grader/test_mock_exam.py",
    "tests/grader/test_quiz_grading.py",
    "tests/grader/test_reconnect.py",
    "tests/grader/test_recovery.py",
    "tests/grader/test_scopes.py",
    "tests/grader/test_search_quality.py",
    "tests/grader/test_similarity.py",
    "tests/grader/test_simulator.py",
    "tests/grader/test_taxonomy.py",
    "tests/grader/test_toolsearch.py",
)

# Inside those folders, what is not a unit test: the lab and quiz notebooks run in a real kernel.
NOT_UNIT_TESTS = ("tests/labkit/test_lab_notebooks.py",)

# The selection collects at least this many tests (1,080 when it was written).
MIN_UNIT_TESTS = 1000


def pytest_arguments() -> list[str]:
    """The selection as pytest's arguments, from the checkout's root."""
    return [*UNIT_TESTS, *(f"--ignore={path}" for path in NOT_UNIT_TESTS)]


if __name__ == "__main__":
    print(" ".join(pytest_arguments()))
