"""The grader's side of a learner host's state folder: read and write it without following the learner's links.

Labs 3 and 4 verify state from outside the protocol: the kit writes a journal into the folder named
by ``LAB_STATE_DIR``, and the checks steer the kit through a control file there. That folder belongs
to the learner's code, which may replace any entry in it (or the folder itself) with a link, a FIFO
or a huge file. The grader runs with more rights than the learner (as root, while grading), so it
never resolves a path there: it works through a descriptor of the folder opened before any learner
code ran (``Hosts`` keeps one as ``session.state_fd``), opens each entry with ``O_NOFOLLOW``, takes
only regular files, and reads at most ``READ_LIMIT`` bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

READ_LIMIT = 4_000_000  # bytes of one state file the grader reads; a journal of a lab run is a few kilobytes


class StateFileRefused(Exception):
    """A state entry is not a plain file the grader may read (a link, a FIFO, a device, too large)."""


def open_folder(path: Path) -> int:
    """A descriptor of the state folder, refusing a link in its place."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def _folder(host: Any) -> tuple[int, bool]:
    """The state folder's descriptor, and whether it is ours to close."""
    fd = getattr(host, "state_fd", None)
    if fd is not None:
        return fd, False
    return open_folder(Path(host.state_dir)), True


def read_text(host: Any, name: str) -> str | None:
    """The text of state file ``name`` (None when there is none); a link, a special file or one larger
    than READ_LIMIT raises StateFileRefused, which the check reports in words."""
    folder, close = _folder(host)
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as exc:  # ELOOP: a link in its place
            raise StateFileRefused(
                f"{name} in the lab's state folder is not a plain file ({exc.strerror}); leave the lab's files to the kit."
            ) from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise StateFileRefused(
                    f"{name} in the lab's state folder is not a plain file; leave the lab's files to the kit."
                )
            data = handle.read(READ_LIMIT + 1)
        if len(data) > READ_LIMIT:
            raise StateFileRefused(
                f"{name} in the lab's state folder is larger than {READ_LIMIT // 1_000_000} MB; the lab writes a few kilobytes."
            )
        return data.decode("utf-8", errors="replace")
    finally:
        if close:
            os.close(folder)


def write_text(host: Any, name: str, text: str) -> None:
    """Write state file ``name`` afresh: whatever stands under that name (a link included) is removed first."""
    folder, close = _folder(host)
    try:
        remove(host, name)
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    finally:
        if close:
            os.close(folder)


def remove(host: Any, name: str) -> None:
    """Remove state entry ``name`` if there is one (a link is removed, never followed)."""
    folder, close = _folder(host)
    try:
        try:
            os.unlink(name, dir_fd=folder)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            pass  # a folder of the learner's own under that name: the O_EXCL create then fails in words
    finally:
        if close:
            os.close(folder)
