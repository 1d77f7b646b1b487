"""Secrets a grading machine holds outside the sandbox, for tests that prove a learner host cannot reach them.

Each helper also proves the secret can be reached from outside the sandbox, so a test that then finds
nothing from inside the host is testing the sandbox, not a secret that was never there.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def on_a_command_line(argument: str) -> Iterator[int]:
    """A process holding ``argument`` on its command line (as ``grader resolve --env K=V`` would); its pid."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; print('ready', flush=True); sys.stdin.read()", argument],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline() == b"ready\n"  # it runs, its command line in place
        assert argument.encode() in Path(f"/proc/{holder.pid}/cmdline").read_bytes()  # readable from outside
        yield holder.pid
    finally:
        holder.communicate(b"")


@contextmanager
def on_a_loopback_port(secret: bytes) -> Iterator[int]:
    """A port on 127.0.0.1 that answers every connection with ``secret``; its number."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.sendall(secret)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5) as outside:
            assert outside.recv(len(secret) + 1) == secret  # the port answers from outside the sandbox
        yield port
    finally:
        listener.close()
        thread.join(timeout=5)
