"""The in-notebook side of a lab: run a named check on the code in your kernel.

A lab notebook's graded cell calls ``lab.check("name")``. In the notebook this
builds the learner host around the kernel's namespace, in process, and runs the
lab's visible check of that name (``labkit.checks``) over an MCP session, as the
grader will; it prints the verdict and raises on failure. A hidden check's cell
calls ``lab.hidden("name")``: its cases are the grader's alone, so in the notebook
it only says so. At grading time the notebook's kernel is not used at all: the
grader runs every check, visible and hidden, against the submission's answer cells
in a separate process.
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labkit.checking import CheckResult, run_check
from labkit.checks import visible_checks


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
        from servers.client import connect
        from servers.learner_host import build_server

        with (
            tempfile.TemporaryDirectory(prefix="lab-state-") as state,
            _environ("LAB_STATE_DIR", state),
            connect(build_server(self.name, namespace), timeout=10) as host,
        ):
            host.state_dir = Path(state)
            return run_check(self.checks[check], host)

    def host(self, namespace: dict[str, Any] | None = None):
        """A session with your functions behind the lab's MCP server, in this kernel (use with ``with``)."""
        from servers.client import connect
        from servers.learner_host import build_server

        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        return connect(build_server(self.name, namespace), timeout=10)

    def check(self, check: str, namespace: dict[str, Any] | None = None) -> None:
        """Run check ``check`` on the functions defined in the calling notebook; raise if it fails."""
        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        result = self.run(check, namespace)
        print(result.line())
        if not result.passed:
            raise AssertionError(f"{check}: {result.message}")

    def hidden(self, check: str) -> None:
        """A hidden check's cell: say what it is; it runs only when the submission is graded."""
        print(
            f"[HIDDEN] {check}: this check runs only when your submission is graded, on cases this notebook does "
            "not show. The visible checks above test the same skills: make them pass, then try your code on inputs "
            "of your own."
        )
