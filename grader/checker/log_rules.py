"""The rule on the server's log: ``initialize.logged``, its stderr shows the client's protocol version and name.

When ``check_server`` starts the server it captures stderr itself and connects with the client name
``CLIENT_NAME``; given a session someone else opened, it needs ``stderr_path`` and looks for that
session's client name. Over HTTP the log is out of reach, and the finding says where to look.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from grader.checker.findings import SERVER, Finding, finding


def check_initialize_log(
    stderr_path: str | os.PathLike | None, protocol_version: str | None, client_name: str
) -> Finding:
    if stderr_path is None:
        return finding(
            "initialize.logged",
            SERVER,
            None,
            "No capture of the server's stderr: cannot tell whether it logs the client's protocol version and name.",
        )
    try:
        log = Path(stderr_path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return finding(
            "initialize.logged", SERVER, None, f"Cannot read the stderr capture {stderr_path}: {exc.strerror}."
        )
    has_version = bool(protocol_version) and protocol_version in log
    has_name = re.search(rf"(?<![\w-]){re.escape(client_name)}(?![\w-])", log) is not None
    if has_version and has_name:
        return finding(
            "initialize.logged",
            SERVER,
            True,
            f"stderr shows the client's protocol version {protocol_version} and name {client_name}.",
        )
    missing = [
        what
        for what, ok in (
            (f"protocol version {protocol_version}", has_version),
            (f"client name {client_name}", has_name),
        )
        if not ok
    ]
    return finding(
        "initialize.logged",
        SERVER,
        False,
        f"stderr does not show the client's {' or '.join(missing)}. Log both when a client connects (initialize, or the "
        "first request's _meta on 2026-era connections), so you know who connects and how.",
    )
