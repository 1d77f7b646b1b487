"""The remote server as a real process: its command line, and ``running()`` to start one for a lesson or a test.

The process binds 127.0.0.1 only (port 0 picks a free one), prints ``ready <base url>`` once it accepts
connections, then one line per request. ``running()`` reads those lines; nothing waits on a timer.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

from servers.remote.app import LIMITER_MODES, MCP_PATH, Options, RemoteApp

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[2]


def rate(text: str) -> tuple[int, float]:
    count, _, window = text.partition("/")
    try:
        return int(count), float(window)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: write requests/seconds, e.g. 5/60") from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m servers.remote", description="The remote course server (Streamable HTTP on 127.0.0.1)."
    )
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    p.add_argument("--token", help="require Authorization: Bearer TOKEN; answer 401 with WWW-Authenticate otherwise")
    p.add_argument("--bot-check", action="store_true", help="a proxy's bot check: programs get a 403 HTML challenge")
    p.add_argument("--bot-check-exempt-mcp", action="store_true", help="the fix: the bot check lets /mcp through")
    p.add_argument("--cached-reply", action="store_true", help="a caching proxy replays the first POST /mcp reply")
    p.add_argument(
        "--framework-defaults",
        action="store_true",
        help="session cookie on every reply; POST without CSRF token -> 302 /login",
    )
    p.add_argument(
        "--rate-limit",
        type=rate,
        metavar="N/SECONDS",
        help="at most N requests per SECONDS per client (429 + Retry-After)",
    )
    p.add_argument(
        "--trusted-proxy",
        dest="trusted_proxies",
        action="append",
        default=[],
        metavar="IP",
        help="a peer whose forwarding headers are believed",
    )
    p.add_argument(
        "--key-by-peer-only", action="store_true", help="the mistake: count every client as the peer (the proxy's IP)"
    )
    p.add_argument("--daily-cap", type=int, help="at most this many requests per day across all clients")
    p.add_argument(
        "--limiter",
        choices=LIMITER_MODES,
        default="up",
        help="the limiter's store: up, or down and failing open or closed",
    )
    p.add_argument("--exit-after", type=int, help="exit after answering this many requests")
    p.add_argument("--instructions", help="the server's instructions (default: the built-in English text)")
    p.add_argument(
        "--stdio", action="store_true", help="serve over stdio instead (only --exit-after and --instructions apply)"
    )
    return p


def main(argv: list[str] | None = None) -> None:
    import asyncio
    import logging

    import uvicorn

    logging.getLogger("mcp").setLevel(logging.WARNING)  # the log is one line per request, nothing else

    args = parser().parse_args(argv)
    names = {f.name for f in fields(Options)}
    try:
        options = Options(
            **{k: (tuple(v) if k == "trusted_proxies" else v) for k, v in vars(args).items() if k in names}
        )
    except ValueError as exc:
        raise SystemExit(f"python -m servers.remote: {exc}") from None
    if args.stdio:
        serve_stdio(args.exit_after, args.instructions)
        return
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, args.port))
    except OSError as exc:
        raise SystemExit(
            f"python -m servers.remote: cannot listen on {HOST}:{args.port}: {exc.strerror}. Choose another --port."
        ) from None
    port = sock.getsockname()[1]

    def emit(line: str) -> None:
        print(line, flush=True)

    class Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            emit(f"ready http://{HOST}:{port}")

    from servers.remote.server import build_server

    server_holder: list[Server] = []
    app = RemoteApp(
        options,
        server=build_server(args.instructions),
        emit=emit,
        on_exit=lambda: setattr(server_holder[0], "should_exit", True),
    )
    # proxy_headers=False: uvicorn would otherwise rewrite the peer from X-Forwarded-For itself, and the
    # trusted-proxy rule in servers.remote.app is what the lesson shows.
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=1, proxy_headers=False
    )
    server = Server(config)
    server_holder.append(server)
    try:
        asyncio.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:
        pass


def serve_stdio(exit_after: int | None, instructions: str | None) -> None:
    """The same server over stdio; with ``exit_after`` N the process dies when request N+1 arrives."""
    import os

    from servers.remote.server import build_server
    from servers.toolkit import run_stdio

    server = build_server(instructions)
    answered = 0

    async def die_after(ctx, call_next):
        nonlocal answered
        if getattr(ctx, "request_id", None) is not None:
            if exit_after is not None and answered >= exit_after:
                os._exit(0)  # as a crash would: no reply, no goodbye
            answered += 1
        return await call_next(ctx)

    server._lowlevel_server.middleware.append(die_after)
    run_stdio(server)


class Running:
    """A remote server process: ``url`` (the MCP endpoint), ``base``, ``log()``, ``restart()``, ``stop()``."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.port = 0
        self.base = ""
        self.url = ""
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self.process: subprocess.Popen[str] | None = None
        self.start()

    def start(self, timeout: float = 30.0) -> None:
        command = [sys.executable, "-m", "servers.remote", "--port", str(self.port), *self.options.to_args()]
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        ready = threading.Event()
        found: list[str] = []

        def read() -> None:
            assert process.stdout is not None
            with process.stdout as output:  # closed once the process ends
                for raw in output:
                    line = raw.rstrip("\n")
                    with self._lock:
                        self._lines.append(line)
                    if line.startswith("ready ") and not ready.is_set():
                        found.append(line.split(" ", 1)[1])
                        ready.set()
            ready.set()  # the process ended: stop waiting

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(timeout) or not found:
            process.kill()
            process.wait()
            raise RuntimeError("The remote server did not start:\n" + "\n".join(self.log()[-20:]))
        self.process = process
        self.base = found[0]
        self.port = int(self.base.rsplit(":", 1)[1])
        self.url = self.base + MCP_PATH

    def log(self) -> list[str]:
        """Every line the server printed so far (across restarts): ``ready``, one per request, ``exiting``."""
        with self._lock:
            return list(self._lines)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait(self, timeout: float = 10.0) -> int:
        """Wait for the process to end on its own (``exit_after``) and return its exit code."""
        assert self.process is not None
        return self.process.wait(timeout)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self) -> None:
        """Stop the process if it still runs and start a new one on the same port, with the same options."""
        self.stop()
        self.start()


@contextmanager
def running(options: Options | None = None, **fields_: object) -> Iterator[Running]:
    """Start ``python -m servers.remote`` with ``options`` (or these fields) as a real process; stop it on leaving."""
    if options is None:
        options = Options(**fields_)  # type: ignore[arg-type]
    elif fields_:
        from dataclasses import replace

        options = replace(options, **fields_)  # type: ignore[arg-type]
    server = Running(options)
    try:
        yield server
    finally:
        server.stop()
