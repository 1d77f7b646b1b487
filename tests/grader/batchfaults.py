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
