"""``Lab(name).check(...)`` in a notebook: the lab's visible check, run in process on the kernel's functions;
``Lab(name).hidden(...)``: a hidden check's cell, which only says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from solution_edits import replace_once

from grader.labs import LAB_MODULES, UnknownLab, lab_checks
from grader.notebook import answer_code, read_notebook
from labkit import Lab
from labkit.lab import FailedVerdict
from servers.learner_host import load_learner_code

LAB = "lab1_error_results"
SOLUTION = answer_code(read_notebook(Path(__file__).resolve().parents[2] / "labs" / "source" / LAB / f"{LAB}.ipynb"))
# A realistic mistake: transient errors not marked retryable.
RETRYABLE, NOT_RETRYABLE_TEXT = (
    """error_result("transient", message, code, True,""",
    """error_result("transient", message, code, False,""",
)
NOT_RETRYABLE = replace_once(SOLUTION, RETRYABLE, NOT_RETRYABLE_TEXT)


def kernel(code: str) -> dict:
    """A namespace like a notebook kernel's after running ``code``: the kit's names plus the learner's."""
    namespace, load_error = load_learner_code(LAB, code)
    assert load_error is None, load_error
    return namespace


def test_check_prints_a_pass_line_for_the_solution_and_returns_nothing(capsys) -> None:
    assert Lab(LAB).check("results_transient", kernel(SOLUTION)) is None  # so a notebook shows no Out[]

    title = Lab(LAB).checks["results_transient"].title
    assert capsys.readouterr().out == f"[PASS] results_transient (1/1): {title}\n"


def test_a_failing_check_raises_its_verdict_line_alone_and_prints_nothing(capsys) -> None:
    with pytest.raises(FailedVerdict) as caught:
        Lab(LAB).check("results_transient", kernel(NOT_RETRYABLE))

    line = str(caught.value)
    assert line.startswith("[FAIL] results_transient (0/1): ") and "isRetryable" in line and "\n" not in line
    assert caught.value._render_traceback_() == [line]  # what IPython shows instead of a traceback
    assert isinstance(caught.value, AssertionError)  # the cell fails, for nbgrader's Validate and nbval
    assert capsys.readouterr().out == ""


def test_check_reads_the_calling_cells_globals_when_no_namespace_is_given(capsys) -> None:
    cell_globals = kernel(SOLUTION)
    cell_globals["lab"] = Lab(LAB)

    exec("lab.check('decide_business_stops')", cell_globals)  # noqa: S102 - a notebook cell, as the kernel runs it

    assert capsys.readouterr().out.startswith("[PASS] decide_business_stops (1/1): ")


def test_check_of_an_unwritten_function_says_it_is_not_written_yet() -> None:
    blank = kernel("def decide(result, attempt=1, max_attempts=3):\n    raise NotImplementedError()\n")

    with pytest.raises(FailedVerdict) as caught:
        Lab(LAB).check("decide_not_found", blank)

    assert caught.value.lines == [
        "[FAIL] decide_not_found (0/1): decide is not written yet (it raises NotImplementedError)."
    ]


def test_run_returns_the_verdict_without_printing_or_raising(capsys) -> None:
    result = Lab(LAB).run("desk_transient", kernel(NOT_RETRYABLE))

    assert not result.passed
    assert result.score == 0 and result.points == 2
    assert "isRetryable true" in result.message
    assert capsys.readouterr().out == ""


def test_the_host_gives_a_session_with_the_kernels_functions() -> None:
    with Lab(LAB).host(kernel(SOLUTION)) as desk:
        desk.call("host_reset", role="supervisor", fail_first=1)
        first = desk.call("refund_order", order_id="ORD-1004", amount_usd=100, reason="damaged")
        second = desk.call("refund_order", order_id="ORD-1004", amount_usd=100, reason="damaged")

    assert first["structuredContent"]["errorCategory"] == "transient"
    assert second["isError"] is False


def test_an_unknown_check_name_is_one_failing_line_naming_the_lab() -> None:
    with pytest.raises(FailedVerdict) as caught:
        Lab(LAB).check("results_everything", kernel(SOLUTION))

    assert caught.value.lines == [
        "[FAIL] results_everything: lab1_error_results has no check named 'results_everything'."
    ]
    with pytest.raises(KeyError):
        Lab(LAB).run("results_everything", kernel(SOLUTION))


def test_a_check_whose_host_cannot_start_is_one_failing_line(monkeypatch) -> None:
    import servers.learner_host

    def broken(lab, namespace):
        raise RuntimeError("no room left")

    monkeypatch.setattr(servers.learner_host, "build_server", broken)
    with pytest.raises(FailedVerdict) as caught:
        Lab(LAB).check("results_transient", kernel(SOLUTION))

    assert caught.value.lines == [
        (
            "[FAIL] results_transient (0/1): The check could not run (RuntimeError: no room left): "
            "run the set-up cell and your answer cells, then this one again."
        )
    ]


def test_an_unknown_lab_is_refused_naming_the_known_labs() -> None:
    with pytest.raises(UnknownLab) as caught:
        Lab("no_such_lab")

    assert str(caught.value) == f"There is no lab named 'no_such_lab'. Known labs: {', '.join(sorted(LAB_MODULES))}."
    assert isinstance(caught.value, LookupError)


def test_the_notebook_has_the_visible_checks_only() -> None:
    visible, everything = Lab(LAB).checks, lab_checks(LAB)
    assert visible.hidden == [] and visible.checks
    assert everything.hidden, "the grader holds hidden checks"
    assert set(visible.checks) == {name for name in everything.checks if name not in everything.hidden}


def test_a_hidden_check_is_not_run_in_the_notebook(capsys) -> None:
    hidden = lab_checks(LAB).hidden[0]
    with pytest.raises(FailedVerdict):
        Lab(LAB).check(hidden, kernel(SOLUTION))

    Lab(LAB).hidden(hidden)

    out = capsys.readouterr().out
    assert out.startswith(f"[HIDDEN] {hidden}: this check runs only when your submission is graded")


def run_cell(code: str, namespace: dict, lab: Lab) -> None:
    """``code`` as a "try it" cell: run by the kernel at module level, in the notebook's namespace."""
    namespace["lab"] = lab
    exec(compile(code, "<cell>", "exec"), namespace)  # noqa: S102 - a notebook cell, as the kernel runs it


def test_try_it_names_the_function_not_written_yet_instead_of_raising(capsys) -> None:
    blank = kernel("def decide(result, attempt=1, max_attempts=3):\n    raise NotImplementedError()\n")

    run_cell("with lab.try_it():\n    print(decide({'isError': False}))\n", blank, Lab(LAB))

    assert capsys.readouterr().out == (
        "decide is not written yet (it raises NotImplementedError): write it in its answer cell, run that cell, "
        "then run this one again.\n"
    )


def test_try_it_names_an_answer_cells_name_not_defined_yet(capsys) -> None:
    run_cell("with lab.try_it():\n    print(MY_CONFIG)\n", kernel(SOLUTION), Lab(LAB))

    assert capsys.readouterr().out.startswith("MY_CONFIG is not written yet: define it in its answer cell")


def test_try_it_says_the_lab_servers_sentence_about_a_handler_not_written_yet(capsys) -> None:
    blank = kernel(
        replace_once(
            SOLUTION,
            "def search_orders(desk, customer_email, status=None):\n",
            "def search_orders(desk, customer_email, status=None):\n    raise NotImplementedError()\n",
        )
    )
    code = "with lab.try_it(), lab.host() as desk:\n    print(desk.call('search_orders', customer_email='zed@example.com'))\n"

    run_cell(code, blank, Lab(LAB))

    assert capsys.readouterr().out == "search_orders is not written yet (it raises NotImplementedError).\n"


def test_try_it_lets_the_learners_own_mistakes_through_as_they_are() -> None:
    namespace = kernel(SOLUTION)
    with pytest.raises(KeyError):
        run_cell("with lab.try_it():\n    {}['missing']\n", namespace, Lab(LAB))
    with pytest.raises(NameError):  # a name misspelt inside a function is the learner's mistake, not a cell to write
        run_cell("def broken():\n    return undefined_name\nwith lab.try_it():\n    broken()\n", namespace, Lab(LAB))
