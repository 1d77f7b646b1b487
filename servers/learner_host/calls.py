"""Calling a learner's code and turning what it returns or raises into MCP results.

The lab kits (``lab1``, ``lab2``) and the host both use these; the kits import this module, not the host,
so the host and its kits do not import each other.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

# Failures of the learner's code are reported to the grader as protocol errors of the
# harness: they are not tool results the learner produced, so no check can mistake
# them for one.
LEARNER_CODE_FAILED = -32042  # server-defined range; -32001 is the SDK's request timeout


class LearnerCodeError(MCPError):
    def __init__(self, message: str) -> None:
        super().__init__(LEARNER_CODE_FAILED, message)


def harness_result(message: str, structured: dict[str, Any]) -> dict[str, Any]:
    """What a harness tool returns: a line of text and the data the check reads.

    Built here, not with the reference model's builders: the host holds no answer key.
    """
    return {"isError": False, "content": [{"type": "text", "text": message}], "structuredContent": structured}


# The namespace key under which the host keeps what failed while the answer cells ran.
LOAD_ERRORS = "__load_errors__"


def describe_exception(exc: BaseException, filename: str | None = None) -> str:
    """``ExcType: message (line N of answer cell K)``, without the harness's frames."""
    ours = (lambda name: name == filename) if filename else (lambda name: name.startswith("<answer cell"))
    line = place = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if ours(frame.filename):
            line, place = frame.lineno, frame.filename
    text = str(exc) or "(no message)"
    if isinstance(exc, SyntaxError) and exc.filename and ours(exc.filename):
        line, place, text = exc.lineno, exc.filename, exc.msg
    if line is None:
        return f"{type(exc).__name__}: {text}"
    where = "your answer cells" if place == "<answer cells>" else place.strip("<>")
    return f"{type(exc).__name__}: {text} (line {line} of {where})"


def run_directly(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


# How the learner's functions run, and the values they return are read: directly, unless the process serving them
# watches them (the grading engine's locked-down host, on Python 3.11: see ``run_learner_with``).
_run_learner: Callable[..., Any] = run_directly


def run_learner_with(runner: Callable[..., Any]) -> None:
    """From now on, ``call_learner`` runs the learner's function, and ``as_json`` reads what it returned, as
    ``runner(fn, *args, **kwargs)``, in this process. The code around them, the harness's, runs as before."""
    global _run_learner
    _run_learner = runner


def call_learner(namespace: dict[str, Any], name: str, *args: Any, **kwargs: Any) -> Any:
    """Call the learner's function ``name``; any failure becomes a LearnerCodeError saying what happened."""
    fn = namespace.get(name)
    if fn is None:
        load_error = namespace.get(LOAD_ERRORS)
        why = f" Your answer cells failed to run: {load_error}." if load_error else ""
        raise LearnerCodeError(f"Your answer cells define no function named {name}.{why}")
    if not callable(fn):
        raise LearnerCodeError(f"{name} in your answer cells is a {type(fn).__name__}, not a function.")
    try:
        return _run_learner(fn, *args, **kwargs)
    except NotImplementedError:
        raise LearnerCodeError(f"{name} is not written yet (it raises NotImplementedError).") from None
    except BaseException as exc:  # noqa: BLE001 - learner code may raise anything, SystemExit included
        raise LearnerCodeError(f"{name} raised {describe_exception(exc)}") from None


def as_json(value: Any, what: str) -> Any:
    try:
        # Writing the value out can run the learner's code (a method of a dict subclass it returned).
        return json.loads(_run_learner(json.dumps, value))
    except (TypeError, ValueError) as exc:
        raise LearnerCodeError(f"{what} returned something that is not JSON data ({exc}).") from None


def as_call_tool_result(value: Any, what: str) -> dict[str, Any]:
    """Check that the learner returned a CallToolResult in wire format and return it."""
    if not isinstance(value, dict):
        raise LearnerCodeError(f"{what} returned a {type(value).__name__}; a tool result is a dict in wire format.")
    value = as_json(value, what)
    snake = {"is_error", "structured_content"} & value.keys()
    if snake:
        raise LearnerCodeError(
            f"{what} returned Python attribute names ({', '.join(sorted(snake))}); "
            "the wire format is camelCase: isError, structuredContent."
        )
    try:
        types.CallToolResult.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(result)"
        raise LearnerCodeError(
            f"{what} returned something that is not a CallToolResult: {where}: {first['msg']}."
        ) from None
    return value
