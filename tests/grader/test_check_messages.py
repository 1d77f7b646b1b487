"""A check's message is a sentence for the learner, whatever the learner's code made the check raise: never a
traceback, never longer than a feedback page can hold, never a folder of the machine that graded it."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from grader.course import TrustedChecks
from grader.engine.grading import grade_code
from grader.notebook import answer_code, read_notebook
from grader.pipeline import SAMPLE_SUBMISSIONS
from labkit.checking import MESSAGE_LIMIT, Check, CheckFailed, CheckResult, run_check

REPO = Path(__file__).resolve().parents[2]
LAB2 = "lab2_scopes_expansion"


def check_raising(exc: BaseException) -> Check:
    def run(session) -> None:
        raise exc

    return Check("a_check", 2, "the check passes", "makes a mistake", run)


class Shape(BaseModel):
    count: int


def validation_error() -> Exception:
    try:
        Shape.model_validate({"count": ["not", "a", "number"]})
    except Exception as exc:  # noqa: BLE001 - the error pydantic raises while decoding a result
        return exc
    raise AssertionError("pydantic accepted a list as an int")


def unicode_decode_error() -> Exception:
    try:
        b"\xff\xfe invalid".decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc
    raise AssertionError("the bytes decoded")


def overflow_error() -> Exception:
    try:
        math.exp(10**6)
    except OverflowError as exc:
        return exc
    raise AssertionError("no overflow")


RAISED = {
    "unhashable": TypeError("unhashable type: 'list'"),
    "key": KeyError("structuredContent"),
    "attribute": AttributeError("'list' object has no attribute 'get'"),
    "recursion": RecursionError("maximum recursion depth exceeded while decoding a JSON array"),
    "validation": validation_error(),
    "unicode": unicode_decode_error(),
    "overflow": overflow_error(),
    "memory": MemoryError(),
    "digits": ValueError("Exceeds the limit (4300 digits) for integer string conversion"),
}


@pytest.mark.parametrize("kind", sorted(RAISED))
def test_any_exception_a_check_raises_fails_that_check_with_a_sentence_and_a_fresh_host(kind: str) -> None:
    exc = RAISED[kind]

    result = run_check(check_raising(exc), session=object())

    assert (result.passed, result.score, result.host_lost) == (False, 0.0, True)
    assert result.message.startswith(f"The grader could not judge what your code returned ({type(exc).__name__}")
    assert result.message.endswith("check that each tool returns the shape the lab asks for.")
    assert "Traceback" not in result.message and "\n" not in result.message


def test_the_unhashable_list_is_named_in_words() -> None:
    result = run_check(check_raising(TypeError("unhashable type: 'list'")), session=object())
    assert result.message == (
        "The grader could not judge what your code returned (TypeError: unhashable type: 'list'): "
        "check that each tool returns the shape the lab asks for."
    )


def test_a_connection_that_breaks_under_the_check_is_a_lost_host() -> None:
    result = run_check(check_raising(anyio.ClosedResourceError()), session=object())
    assert result.host_lost and result.message.startswith("The lab server stopped while running your code")


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(2)], ids=["KeyboardInterrupt", "SystemExit"])
def test_the_graders_own_interruption_is_not_taken_for_a_verdict(exc: BaseException) -> None:
    with pytest.raises(type(exc)):
        run_check(check_raising(exc), session=object())


def test_a_huge_exception_text_is_cut_short() -> None:
    result = run_check(check_raising(TypeError("x" * 5_000_000)), session=object())
    assert len(result.message) < 400
    assert result.message.endswith("check that each tool returns the shape the lab asks for.")


def test_a_huge_failure_message_is_cut_to_the_limit_saying_how_much_was_left_out() -> None:
    result = run_check(check_raising(CheckFailed("got " + "y" * 5_000_000)), session=object())
    assert len(result.message) <= MESSAGE_LIMIT
    assert result.message.startswith("got yyy")
    assert result.message.endswith("more characters)") and "(message cut: " in result.message


def test_a_cut_message_is_not_cut_again_when_the_result_is_stored_and_read_back() -> None:
    result = CheckResult("a", 1, False, "z" * 10_000)
    assert CheckResult(**result.__dict__).message == result.message


def test_a_message_shows_no_folder_of_the_grading_machine() -> None:
    scratch = Path(tempfile.gettempdir()) / "learner-k2j4x9"
    message = (
        f"Server 'desk' did not start: can't open file '{REPO}/servers/support_desk/nope.py'; "
        f"state in {scratch}/work/state/orders.json; the key is in {Path.home()}/secrets."
    )

    result = run_check(check_raising(CheckFailed(message)), session=object())

    assert (
        str(REPO) not in result.message
        and str(scratch) not in result.message
        and str(Path.home()) not in result.message
    )
    assert "'<course>/servers/support_desk/nope.py'" in result.message
    assert "<scratch>/work/state/orders.json" in result.message
    assert "~/secrets" in result.message


def test_a_result_made_outside_run_check_is_cleaned_too() -> None:
    scratch = Path(tempfile.gettempdir()) / "server-abc123"
    result = CheckResult("a", 1, False, f"The lab server did not start ({scratch}/stderr.log: {REPO}/grader).")
    assert result.message == "The lab server did not start (<scratch>/stderr.log: <course>/grader)."


@pytest.mark.parametrize(
    "where", ["/srv/teaching", tempfile.gettempdir(), str(Path.home())], ids=["elsewhere", "temporary", "home"]
)
def test_the_course_folder_is_taken_out_of_each_verdict_nbgrader_records(where: str) -> None:
    course = Path(where) / "mcp-course-2026" / "course"
    step = TrustedChecks(course_root=str(course))
    result = CheckResult("a", 1, False, f"Your notebook {course}/submitted/ana/lab/lab.ipynb broke.")
    assert (
        step.shown("lab1_error_results", result).message == "Your notebook <course>/submitted/ana/lab/lab.ipynb broke."
    )


def test_lab_2s_feedback_names_a_configured_script_without_the_repository_path() -> None:
    # The learner's .mcp.json points at a script that does not exist: the server's own complaint names the
    # path, expanded from ${CLAUDE_PROJECT_DIR:-.} to the repository where the grader runs.
    code = answer_code(read_notebook(SAMPLE_SUBMISSIONS / "solution" / LAB2 / f"{LAB2}.ipynb"))
    code = code.replace("/servers/support_desk/__main__.py", "/servers/support_desk/nope.py")

    [result] = grade_code(LAB2, code, ["config_servers_start_for_real"])  # the hidden check that starts them

    assert not result.passed
    assert "<course>/servers/support_desk/nope.py" in result.message
    assert str(REPO) not in result.message and tempfile.gettempdir() + "/" not in result.message
