"""What a learner is shown of a hidden check's verdict (``as_shown``): the skill, never the case."""

from __future__ import annotations

from labkit.checking import (
    HIDDEN_NOTE,
    HOST_DIED,
    TIMED_OUT,
    Check,
    CheckResult,
    as_shown,
)

HIDDEN = Check(
    "decide_unseen",
    2,
    "decide() on results the lab does not show",
    "retries business errors",
    lambda s: None,
    hidden=True,
)
VISIBLE = Check(
    "decide_business_stops", 1, "decide stops on business errors", "retries business errors", lambda s: None
)
CASE = "refund of $9,431.17 on ORD-7731 refused: over the limit"  # what a hidden case's verdict says


def failed(message: str, host_lost: bool = False) -> CheckResult:
    return CheckResult(HIDDEN.name, HIDDEN.points, False, message, host_lost)


def test_a_visible_verdict_is_shown_as_it_is() -> None:
    result = CheckResult(VISIBLE.name, 1, False, f"For {CASE!r} yours is 'retry'.")
    assert as_shown(VISIBLE, result) == result


def test_a_failed_hidden_verdict_names_the_skill_and_the_mistake_not_the_case() -> None:
    shown = as_shown(HIDDEN, failed(f"For {CASE!r} yours is 'retry'."))
    assert not shown.passed and shown.score == 0 and shown.points == 2
    assert "decide() on results the lab does not show" in shown.message and HIDDEN_NOTE in shown.message
    assert "The mistake it looks for: retries business errors." in shown.message
    assert "ORD-7731" not in shown.message and "9,431" not in shown.message and "retry'" not in shown.message


def test_a_passed_hidden_verdict_is_its_title() -> None:
    shown = as_shown(HIDDEN, CheckResult(HIDDEN.name, 2, True, CASE))
    assert shown.passed and shown.message == f"decide() on results the lab does not show ({HIDDEN_NOTE})."


def test_what_happened_to_the_learners_server_is_shown_as_it_is() -> None:
    for sentence in (
        TIMED_OUT,
        HOST_DIED,
        "The lab server stopped while running your code: its process exited with status 3.",
    ):
        shown = as_shown(HIDDEN, failed(sentence, host_lost=True))
        assert shown.message.endswith(sentence) and shown.host_lost
        assert "The mistake it looks for" not in shown.message


def test_answer_cells_that_failed_to_load_are_named_but_the_case_is_not() -> None:
    note = " (Your answer cells failed to run: NameError: name 'STATUSES' is not defined.)"
    shown = as_shown(HIDDEN, failed(f"For {CASE!r} decide raised NameError.{note}"))
    assert shown.message.endswith(note) and "ORD-7731" not in shown.message
