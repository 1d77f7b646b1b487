"""Watch the wire: a stdio proxy that records every JSON-RPC line between a client and a server.

``python -m servers.tracker.wiretap LOG -- COMMAND [ARGS...]`` starts COMMAND (any stdio MCP server,
the tracker in lesson 04), passes each line from the client to it and each line back, unchanged,
and appends every line to LOG as it passes: one JSON object per line, ``{"from": "client" or
"server", "line": the text sent}``. A client that starts the proxy instead of the server (the SDK,
or Claude Code from a configuration entry) sees no difference; ``read_log(LOG)`` gives back what
crossed the pipe, in order. The server's stderr is its own and is not recorded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO, TextIO

USAGE = "usage: python -m servers.tracker.wiretap LOG -- COMMAND [ARGS...]"


def read_log(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """The messages a wiretap recorded in ``path``, in order: ``("client" or "server", the JSON-RPC message)``."""
    records = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(record["from"], json.loads(record["line"])) for record in records]


def relay(source: BinaryIO, target: BinaryIO, side: str, log: TextIO, lock: threading.Lock) -> None:
    """Copy ``source`` to ``target`` line by line, recording each line as sent by ``side``."""
    try:
        for line in source:
            with lock:
                log.write(json.dumps({"from": side, "line": line.decode("utf-8", "replace").rstrip("\r\n")}) + "\n")
                log.flush()
            target.write(line)
            target.flush()
    except (BrokenPipeError, ValueError):  # the other end has gone: nothing left to pass on
        pass
    finally:
        try:
            target.close()
        except OSError:
            pass


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3 or args[1] != "--":
        print(USAGE, file=sys.stderr)
        return 2
    log_path, command = Path(args[0]), args[2:]
    try:
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as exc:
        print(
            f"wiretap: cannot start {command[0]!r} ({exc.strerror or exc}); check the command after --.",
            file=sys.stderr,
        )
        return 127
    lock = threading.Lock()
    with open(log_path, "a", encoding="utf-8") as log:
        upstream = threading.Thread(
            target=relay, args=(sys.stdin.buffer, server.stdin, "client", log, lock), daemon=True
        )
        upstream.start()
        relay(server.stdout, sys.stdout.buffer, "server", log, lock)
        code = server.wait()
    return code


if __name__ == "__main__":
    sys.exit(main())
