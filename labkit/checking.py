"""Named checks of a lab, run against a learner host over an MCP session: the vocabulary both sides share.

A lab has visible checks, which ship to learners (``labkit.checks``) so that ``lab.check`` runs them in
the notebook, and hidden checks, which only the grader holds (``grader.labs``) and runs at grading: the
same skills on cases the lab does not show. Both are ``Check``s of this module; a hidden one is marked
``hidden``, and what a learner is shown of its verdict names the skill, never the case (``as_shown``).

A check is a function of a session that raises ``CheckFailed`` with a message in
words. The message says what was expected and what came back; it never shows the
check's code. Each check also names, in a few words, the mistake its failure stands
for ("retries business errors"), for the cohort report.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any


def result_text(result: dict[str, Any]) -> str:
    """All text content of a result, joined by newlines."""
    return "\n".join(block.get("text", "") for block in result.get("content") or [] if isinstance(block, dict))


@contextmanager
def logger_level(name: str, level: int) -> Iterator[None]:
    """Raise logger ``name`` to ``level`` for the duration: for SDK log lines a verdict already says in words,
    which in a notebook would show as a stderr box under it."""
    log = logging.getLogger(name)
    before = log.level
    log.setLevel(level)
    try:
        yield
    finally:
        log.setLevel(before)


class CheckFailed(AssertionError):
    """A check's verdict: the learner's code did not do what the check expects."""


@dataclass(frozen=True)
class Check:
    name: str
    points: float
    title: str
    mistake: str
    run: Callable[[Any], None]
    hidden: bool = False  # run only at grading; its cases are never shown to the learner


MESSAGE_LIMIT = 2000  # characters of one check's message; what a learner's code puts in one can be far longer
REPOSITORY = Path(__file__).resolve().parents[1]


@cache
def _private_folders() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Folders of the grading machine a message must not show, each with the word shown instead, most specific first.

    The repository (the course's code, where lab 2's servers run), the temporary folders where hosts and
    their servers run, and the home folder.
    """
    folders: list[tuple[str, str, str]] = []  # (path, what follows it, word)
    for path in {str(REPOSITORY), os.path.realpath(REPOSITORY)}:
        folders.append((path, "", "<course>"))
    for path in {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())}:
        folders.append((path, r"/[^/\s'\"]+", "<scratch>"))  # a scratch folder: the temporary folder and its first part
    home = os.path.expanduser("~")
    if home not in ("", "/", "~"):
        folders.append((home, "", "~"))
    folders.sort(key=lambda folder: len(folder[0]), reverse=True)
    return tuple((re.compile(re.escape(path) + tail + r"(?![\w.-])"), word) for path, tail, word in folders)


def neutral(text: str, folders: dict[str, str] | None = None) -> str:
    """``text`` with the grading machine's folders (the repository, temporary folders, the home folder, and
    ``folders``: path -> word, e.g. the course folder) replaced by neutral words such as ``<course>``."""

    def private(text: str) -> str:
        for pattern, word in _private_folders():
            text = pattern.sub(lambda _, word=word: word, text)
        return text

    extra = sorted((folders or {}).items(), key=lambda item: len(item[0]), reverse=True)
    for path, word in extra:
        path = path.rstrip("/")
        if path:
            # The folder as written, and as a message already cleaned of the machine's folders shows it.
            for form in dict.fromkeys((path, private(path))):
                text = re.sub(re.escape(form) + r"(?![\w.-])", lambda _, word=word: word, text)
    return private(text)


def capped(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters, saying how much was left out (a cut text is not cut again)."""
    if len(text) <= limit:
        return text
    keep = limit - 60  # room for the note
    return f"{text[:keep].rstrip()} … (message cut: {len(text) - keep} more characters)"


@dataclass(frozen=True)
class CheckResult:
    name: str
    points: float
    passed: bool
    message: str
    # True when the learner host hung or died during the check: it must be restarted.
    host_lost: bool = False

    def __post_init__(self) -> None:
        # Whatever made it, a message shows no folder of the grading machine and stays short enough for a
        # feedback page and a gradebook cell, however long the text the learner's code produced.
        message = self.message if isinstance(self.message, str) else str(self.message)
        object.__setattr__(self, "message", capped(neutral(message)))

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

    def check(self, name: str, *, points: float, title: str, mistake: str, hidden: bool = False) -> Callable:
        def register(fn: Callable[[Any], None]) -> Callable[[Any], None]:
            if name in self.checks:
                raise ValueError(f"check {name!r} is defined twice in {self.lab}")
            self.checks[name] = Check(name, points, title, mistake, fn, hidden)
            return fn

        return register

    @classmethod
    def combined(cls, lab: str, order: list[str], *registries: CheckRegistry) -> CheckRegistry:
        """One registry of the checks of ``registries`` (visible and hidden) in ``order``, the lab notebook's order
        of graded cells; a name in no registry, or a check left out of ``order``, is an error."""
        found: dict[str, Check] = {}
        for registry in registries:
            for name, check in registry.checks.items():
                if name in found:
                    raise ValueError(f"check {name!r} is defined twice in {lab}")
                found[name] = check
        missing, left_out = [n for n in order if n not in found], [n for n in found if n not in order]
        if missing or left_out or len(set(order)) != len(order):
            raise ValueError(f"{lab}: the order names unknown checks {missing} or leaves out {left_out}")
        return cls(lab, {name: found[name] for name in order})

    @property
    def hidden(self) -> list[str]:
        return [name for name, check in self.checks.items() if check.hidden]

    def __getitem__(self, name: str) -> Check:
        try:
            return self.checks[name]
        except KeyError:
            raise KeyError(f"{self.lab} has no check named {name!r}") from None

    @property
    def total_points(self) -> float:
        return sum(c.points for c in self.checks.values())


# How the grader's sentences about the learner's server itself begin (TIMED_OUT, HOST_DIED, NOT_SENT, and the
# grader's words for a server that was stopped or did not start): a hidden check shows them as they are.
SERVER_SENTENCES = ("Your code did not answer in time", "The lab server ")
HIDDEN_NOTE = (
    "a hidden check: it tests this skill on cases the lab does not show, and runs only when your submission is graded"
)


def as_shown(check: Check, result: CheckResult) -> CheckResult:
    """``result`` as a learner may see it: a hidden check's verdict names the skill it tests (its title) and
    the mistake it looks for, never its inputs or what came back; a visible check's is unchanged."""
    from servers.learner_host.cells import LOAD_ERROR_MARK

    if not check.hidden:
        return result
    if result.passed:
        message = f"{check.title} ({HIDDEN_NOTE})."
    elif result.message.startswith(SERVER_SENTENCES):
        # What happened to the learner's server (it hung, died, could not start): no case in it, and the
        # learner needs it more than the mistake the check looks for.
        message = f"Not yet: {check.title[:1].lower()}{check.title[1:]} ({HIDDEN_NOTE}). {result.message}"
    else:
        message = (
            f"Not yet: {check.title[:1].lower()}{check.title[1:]} ({HIDDEN_NOTE}). The mistake it looks for: "
            f"{check.mistake}. Its cases are not shown; try your code on inputs the visible checks do not use."
        )
        load_error = result.message.find(f" (Your {LOAD_ERROR_MARK}")
        if load_error >= 0:  # the answer cells failed to load: that, not the case, is what to fix
            message += result.message[load_error:]
    return CheckResult(result.name, result.points, result.passed, message, result.host_lost)


def load_error_note(session: Any) -> str:
    """What failed while a learner-written server's answer cells ran, as its handshake said."""
    from servers.learner_host.cells import LOAD_ERROR_MARK

    try:
        instructions = session.client.instructions or ""
    except Exception:  # noqa: BLE001 - no handshake (an in-process test double), or the host is gone
        return ""
    return f" (Your {instructions}.)" if instructions.startswith(LOAD_ERROR_MARK) else ""


TIMED_OUT = "Your code did not answer in time (an endless loop, or a wait that never ends?)."
HOST_DIED = "The lab server stopped while running your code (did it exit, or crash?)."
NOT_SENT = (
    "The lab server could not send back what your code returned (a value nested too deeply, or not JSON data?): "
    "check that each tool returns the shape the lab asks for."
)


def exception_words(exc: BaseException, limit: int = 200) -> str:
    """``Type: message`` of an exception on one line, cut short: a learner's value can make the message huge."""
    name = type(exc).__name__
    if isinstance(exc, MemoryError):
        return f"{name}: it is too large to handle"
    try:
        text = " ".join(str(exc).split())
    except Exception:  # noqa: BLE001 - an exception whose text cannot even be made
        text = ""
    if len(text) > limit:
        text = text[:limit].rstrip() + " …"
    return f"{name}: {text}" if text else name


def could_not_judge(exc: Exception) -> str:
    """The message of a check that broke on what the learner's code returned, in words, never a traceback."""
    return (
        f"The grader could not judge what your code returned ({exception_words(exc)}): "
        "check that each tool returns the shape the lab asks for."
    )


def _connection_lost(exc: BaseException) -> bool:
    """The session's stream to the host broke: the host is gone, whatever raised it."""
    import anyio

    return isinstance(
        exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, BrokenPipeError, ConnectionError)
    )


def run_check(check: Check, session: Any) -> CheckResult:
    """Run one check; whatever the learner's code does, the outcome is a CheckResult.

    A check that breaks on what the learner's code returned (a list where it indexes a dict, a value it
    cannot hash, compare or decode, one nested too deeply, one too large) fails with a sentence saying so;
    the session is then counted as lost, so the next check gets a fresh host. Only the grader's own
    interruption (KeyboardInterrupt, SystemExit) goes through.
    """

    # Imported here, not with this module: the grading process reads results without the MCP SDK (0.4 s of imports).
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, INTERNAL_ERROR, REQUEST_TIMEOUT

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
        if exc.code == INTERNAL_ERROR:
            return failed(NOT_SENT)
        return failed(exc.message)
    except Exception as exc:  # noqa: BLE001 - anything else a learner's value can make a check raise
        if _connection_lost(exc):
            return failed(HOST_DIED, host_lost=True)
        return failed(could_not_judge(exc), host_lost=True)
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
