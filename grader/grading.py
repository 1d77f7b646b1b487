"""Grade one submission's answer code: start the learner host over stdio, run the lab's checks.

The checks run here, in the trusted grader process; the learner's code runs only in
the host subprocess. A check that hangs costs that check alone: the host is stopped
and a fresh one serves the checks that follow.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from collections.abc import Iterable
from pathlib import Path

from grader.checking import CheckResult, run_check
from grader.labs import lab_checks

CALL_TIMEOUT_SECONDS = 10.0


def _start_host(lab: str, code_file: Path, timeout: float, state_dir: Path, errlog):
    from servers.client import connect

    session = connect(
        "servers.learner_host",
        args=("--lab", lab, "--code", str(code_file)),
        env={"LAB_STATE_DIR": str(state_dir)},
        timeout=timeout,
        errlog=errlog,
    )
    # Checks that verify state from outside the protocol read and steer it through this folder.
    session.state_dir = state_dir
    return session


def grade_code(
    lab: str, code: str, names: Iterable[str] | None = None, *, timeout: float = CALL_TIMEOUT_SECONDS
) -> list[CheckResult]:
    """Run the named checks of ``lab`` (all of them, in order, by default) on ``code``."""
    registry = lab_checks(lab)
    selected = [registry[name] for name in (names if names is not None else registry.checks)]
    results: list[CheckResult] = []
    with tempfile.TemporaryDirectory(prefix="learner-") as scratch, ExitStack() as stack:
        code_file = Path(scratch) / "answers.py"
        code_file.write_text(code, encoding="utf-8")
        state_dir = Path(scratch) / "state"
        state_dir.mkdir()
        # What the learner's code prints to stderr stays with the submission, not the grader's terminal.
        errlog = stack.enter_context(open(Path(scratch) / "stderr.log", "w", encoding="utf-8"))
        host = None
        try:
            for check in selected:
                if host is None:
                    try:
                        host = _start_host(lab, code_file, timeout, state_dir, errlog)
                    except Exception as exc:  # the host could not start: every remaining check fails
                        results.append(CheckResult(check.name, check.points, False, f"The lab server did not start ({exc})."))
                        continue
                result = run_check(check, host)
                results.append(result)
                if result.host_lost:
                    host.close()
                    host = None
        finally:
            if host is not None:
                host.close()
    return results
