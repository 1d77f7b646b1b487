"""The in-notebook side of a lab: run a named check on the code in your kernel.

A lab notebook's graded cell calls ``lab.check("name")``. In the notebook this
builds the learner host around the kernel's namespace, in process, and runs the
very check the grader runs, over an MCP session; it prints the verdict and raises
on failure. At grading time the notebook's kernel is not used at all: the grader
runs the same check against the submission's answer cells in a separate process.
"""

from __future__ import annotations

import sys
from typing import Any

from grader.checking import CheckResult, run_check
from grader.labs import lab_checks


class Lab:
    def __init__(self, name: str) -> None:
        self.name = name
        self.checks = lab_checks(name)

    def run(self, check: str, namespace: dict[str, Any]) -> CheckResult:
        from servers.client import connect
        from servers.learner_host import build_server

        with connect(build_server(self.name, namespace), timeout=10) as host:
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
