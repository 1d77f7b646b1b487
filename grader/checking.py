"""Named, trusted checks of a lab, run against a learner host over an MCP session.

A check is a function of a session that raises ``CheckFailed`` with a message in
words. The message says what was expected and what came back; it never shows the
check's code. Each check also names, in a few words, the mistake its failure stands
for ("retries business errors"), for the cohort report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from grader.taxonomy import result_text


class CheckFailed(AssertionError):
    """A check's verdict: the learner's code did not do what the check expects."""


@dataclass(frozen=True)
class Check:
    name: str
    points: float
    title: str
    mistake: str
    run: Callable[[Any], None]


@dataclass(frozen=True)
class CheckResult:
    name: str
    points: float
    passed: bool
    message: str
    # True when the learner host hung or died during the check: it must be restarted.
    host_lost: bool = False

    @property
    def score(self) -> float:
        return self.points if self.passed else 0.0

    def line(self) -> str:
        mark = "PASS" if self.passed else "FAIL"
        return f"[{mark}] {self.name} ({self.score:g}/{self.points:g}): {self.message}"


@dataclass
class CheckRegistry:
    """The ordered checks of one lab."""

    lab: str
    checks: dict[str, Check] = field(default_factory=dict)

    def check(self, name: str, *, points: float, title: str, mistake: str) -> Callable:
        def register(fn: Callable[[Any], None]) -> Callable[[Any], None]:
            if name in self.checks:
                raise ValueError(f"check {name!r} is defined twice in {self.lab}")
            self.checks[name] = Check(name, points, title, mistake, fn)
            return fn

        return register

    def __getitem__(self, name: str) -> Check:
        try:
            return self.checks[name]
        except KeyError:
            raise KeyError(f"{self.lab} has no check named {name!r}") from None

    @property
    def total_points(self) -> float:
        return sum(c.points for c in self.checks.values())


def load_error_note(session: Any) -> str:
    """What failed while a learner-written server's answer cells ran, as its handshake said."""
    from servers.learner_host.host import LOAD_ERROR_MARK

    try:
        instructions = session.client.instructions or ""
    except Exception:  # no handshake (an in-process test double), or the host is gone
        return ""
    return f" (Your {instructions}.)" if instructions.startswith(LOAD_ERROR_MARK) else ""


TIMED_OUT = "Your code did not answer in time (an endless loop, or a wait that never ends?)."
HOST_DIED = "The lab server stopped while running your code (did it exit, or crash?)."


def run_check(check: Check, session: Any) -> CheckResult:
    """Run one check; whatever the learner's code does, the outcome is a CheckResult."""

    def failed(message: str, host_lost: bool = False) -> CheckResult:
        return CheckResult(check.name, check.points, False, message + load_error_note(session), host_lost)

    try:
        check.run(session)
    except CheckFailed as exc:
        return failed(str(exc))
    except TimeoutError:
        return failed(TIMED_OUT, host_lost=True)
    except MCPError as exc:
        if exc.code == REQUEST_TIMEOUT:
            return failed(TIMED_OUT, host_lost=True)
        if exc.code == CONNECTION_CLOSED:
            return failed(HOST_DIED, host_lost=True)
        return failed(exc.message)
    return CheckResult(check.name, check.points, True, check.title)


# --- small vocabulary for writing checks -------------------------------------------------


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def expect_hints(tool: dict[str, Any], hints: dict[str, bool], message: Callable[[str, bool, Any], str]) -> None:
    """The tool's annotations declare each of ``hints`` with exactly its value; for the first that
    does not, fail with ``message(hint, wanted, declared)``.

    Exactly: a hint of 1 or "true" is not the boolean true a client acts on. Each lab words the
    message for its own scenario; the verdict is the same rule everywhere.
    """
    declared = tool.get("annotations") or {}
    for hint, value in hints.items():
        if declared.get(hint) is not value:
            raise CheckFailed(message(hint, value, declared.get(hint)))


def structured(result: dict[str, Any]) -> dict[str, Any]:
    value = result.get("structuredContent")
    return value if isinstance(value, dict) else {}


def describe(result: dict[str, Any]) -> str:
    """A one-line account of a result, for failure messages."""
    if result.get("isError") is not True:
        return f"isError false, structuredContent {structured(result)!r}"
    sc = structured(result)
    return (
        f"isError true, errorCategory {sc.get('errorCategory')!r}, isRetryable {sc.get('isRetryable')!r}, "
        f"text {result_text(result)[:80]!r}"
    )
