"""A stand-in for ``grader.engine.batch.grade_task`` that fails the ways a grading can fail in the grader.

It lives in a module of its own so that the batch's worker processes can import it by name. The answer
code says what it does: ``die`` ends the worker process at once (as the kernel's OOM killer would),
``raise`` raises in the worker, ``unpicklable`` returns what cannot be sent back, ``malformed`` returns
data that is not a check result; any other code is graded at once with one passing check.
"""

from __future__ import annotations

import os
import threading
from dataclasses import asdict
from typing import Any

from labkit.checking import CheckResult


def grade(lab: str, code: str, timeout: float | None = None) -> list[Any]:
    if code == "die":
        os._exit(9)
    if code == "raise":
        raise TypeError("unhashable type: 'list'")
    if code == "unpicklable":
        return [threading.Lock()]
    if code == "malformed":
        return [{"verdict": "fine"}]
    return [asdict(CheckResult("fine", 1, True, f"{lab} graded {code}"))]


def grade_where(lab: str, code: str, timeout: float | None = None) -> list[Any]:
    """Grades at once, saying which process graded it; ``wait:FIFO`` first waits until another process opens
    the named pipe FIFO for writing, which ``open:FIFO`` does, so a test can make two workers meet."""
    kind, _, fifo = code.partition(":")
    if kind == "wait":
        with open(fifo, "rb"):  # blocks until a writer opens the pipe
            pass
    elif kind == "open":
        with open(fifo, "wb"):
            pass
    return [asdict(CheckResult("where", 1, True, str(os.getpid())))]


def never_warm() -> None:
    """A worker's warm-up that never ends: the worker never becomes ready."""
    threading.Event().wait()
