"""The in-notebook side of a lab: run a named check on the code in your kernel.

A lab notebook's graded cell calls ``lab.check("name")``. In the notebook this builds the
learner host around the kernel's namespace, in process, and runs the lab's visible check of
that name (``labkit.checks``) over an MCP session, as the grader will. A pass prints its
verdict line. A failure raises ``FailedVerdict``, which IPython shows as the verdict line
alone: the cell fails (nbgrader's Validate and nbval see an error), with no traceback into
the course's code, and the cell's ``raises-exception`` tag lets Run All go on. A "try it"
cell runs under ``lab.try_it()``, which says what is not written yet instead of raising. A
hidden check's cell calls ``lab.hidden("name")``: its cases are the grader's alone, so in
the notebook it only says so. At grading time the notebook's kernel is not used at all: the
grader runs every check, visible and hidden, against the submission's answer cells in a
separate process.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labkit.checking import CheckResult, exception_words, logger_level, run_check
from labkit.checks import visible_checks


class FailedVerdict(AssertionError):
    """A failing check in a notebook cell: the cell fails, and IPython shows only the verdict's lines
    (``_render_traceback_``), never a stack into the course's code."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)

    def _render_traceback_(self) -> list[str]:
        return self.lines


def not_written_yet(exc: BaseException) -> str | None:
    """What a "try it" cell says instead of ``exc``: an answer cell's function still raises
    NotImplementedError, or a name it should define is not defined; None for anything else."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if isinstance(exc, NotImplementedError):
        where = tb.tb_frame.f_code.co_name if tb is not None else "<module>"
        what = "An answer cell" if where.startswith("<") else where
        return f"{what} is not written yet (it raises NotImplementedError): write it in its answer cell, run that cell, then run this one again."
    if type(exc) is NameError and exc.name and tb is not None and tb.tb_frame.f_code.co_name == "<module>":
        # Raised by the cell's own code, not inside a function: a name an answer cell should define.
        return f"{exc.name} is not written yet: define it in its answer cell, run that cell, then run this one again."
    return None


@contextmanager
def _environ(name: str, value: str):
    """Set one environment variable of this process for the duration of a check."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


class Lab:
    def __init__(self, name: str) -> None:
        self.name = name
        self.checks = visible_checks(name)

    def run(self, check: str, namespace: dict[str, Any]) -> CheckResult:
        """The verdict of visible check ``check`` on ``namespace``; printing nothing and raising nothing
        but ``KeyError`` for a name that is no visible check of this lab."""
        from servers.client import connect
        from servers.learner_host import build_server

        chosen = self.checks[check]
        try:
            with (
                tempfile.TemporaryDirectory(prefix="lab-state-") as state,
                _environ("LAB_STATE_DIR", state),
                logger_level("mcp", logging.CRITICAL),  # the SDK logs what the learner's server raised
                connect(build_server(self.name, namespace), timeout=10) as host,
            ):
                host.state_dir = Path(state)
                return run_check(chosen, host)
        except Exception as exc:  # noqa: BLE001 - the host around the kernel could not start or broke: say so in one line
            return CheckResult(
                chosen.name,
                chosen.points,
                False,
                f"The check could not run ({exception_words(exc)}): run the set-up cell and your answer cells, then this one again.",
            )

    def host(self, namespace: dict[str, Any] | None = None):
        """A session with your functions behind the lab's MCP server, in this kernel (use with ``with``)."""
        from servers.client import connect
        from servers.learner_host import build_server

        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        return connect(build_server(self.name, namespace), timeout=10)

    def check(self, check: str, namespace: dict[str, Any] | None = None) -> None:
        """Run check ``check`` on the functions defined in the calling notebook: print its verdict if it
        passes, raise ``FailedVerdict`` (shown as the verdict alone) if it fails or is no check of this lab."""
        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        try:
            result = self.run(check, namespace)
        except KeyError as exc:
            raise FailedVerdict(f"[FAIL] {check}: {exc.args[0]}.") from None
        if not result.passed:
            raise FailedVerdict(result.line())
        print(result.line())

    @contextmanager
    def try_it(self):
        """A "try it" cell's body: a function not written yet, a name not defined yet, or the lab server's
        sentence about your code is one line, not an error, so Run All goes on; any other exception is yours
        to see, as it is."""
        from mcp.shared.exceptions import MCPError

        from servers.learner_host.calls import LEARNER_CODE_FAILED

        try:
            yield
        except (NotImplementedError, NameError) as exc:
            words = not_written_yet(exc)
            if words is None:
                raise
            print(words)
        except MCPError as exc:
            if exc.code != LEARNER_CODE_FAILED:
                raise
            print(exc.message)  # the lab server's sentence about your code, e.g. that a handler is not written yet

    def hidden(self, check: str) -> None:
        """A hidden check's cell: say what it is; it runs only when the submission is graded."""
        print(
            f"[HIDDEN] {check}: this check runs only when your submission is graded, on cases this notebook does "
            "not show. The visible checks above test the same skills: make them pass, then try your code on inputs "
            "of your own."
        )
