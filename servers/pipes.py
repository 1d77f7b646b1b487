"""Stdin and stdout for an MCP server, read and written by the event loop itself.

The SDK's ``stdio_server`` reads and writes through ``anyio.wrap_file``: every line read, every
message written and every flush is handed to a worker thread and back, three thread hops per
request. A learner host answers a hundred requests or more per submission, and those hops were
a large share of its CPU. Here the same two descriptors are served through asyncio's pipe
transports (non-blocking reads and writes on the loop's own thread), and the SDK's
``stdio_server`` is given them as its streams, so the framing, parsing and encoding stay the SDK's.

As the SDK does while it serves, the process's own descriptors 0 and 1 are pointed elsewhere
(standard input at the null device, standard output at standard error), so what a handler, or
a learner's code, prints never reaches the wire. Only pipes and sockets are served this way: a
terminal stays with the SDK's transport, since making it non-blocking would affect the shell.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

LINE_LIMIT = 64 * 2**20  # the longest message read, in bytes (asyncio's default is 64 KiB)


def servable(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket, which the loop can read and write without a thread."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class Lines:
    """What the SDK's reader iterates: decoded lines of the wire, until end of file."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class Writer:
    """What the SDK's writer calls: ``write`` a message, then ``flush``."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


@asynccontextmanager
async def loop_stdio() -> AsyncIterator[tuple[Lines, Writer]]:
    """The wire as (lines in, writer out), with descriptors 0 and 1 diverted while it is served."""
    loop = asyncio.get_running_loop()
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
    )
    write_transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    try:
        yield Lines(reader), Writer(writer)
    finally:
        read_transport.close()
        write_transport.close()
        sys.stdout.flush()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
