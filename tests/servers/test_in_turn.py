"""Serving in turn (servers.in_turn) puts on the wire what the SDK's own loop puts there, line for line.

Each test serves the same server twice through ``servers.toolkit.serve_wire``, as the SDK serves it and in turn,
and compares every line that went each way: the lab's own checks talking to the lab's host (the traffic grading
makes), then a corpus of the protocol's edge cases (errors, notifications, a line that is not JSON, a handshake
on a 2026-era connection, text UTF-8 cannot encode).
"""

from __future__ import annotations

import contextvars
import importlib
import json
import logging
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.message import SessionMessage

from grader.engine.grading import sandboxed
from grader.labs import lab_checks
from grader.notebook import answer_code, read_notebook
from grader.pipeline import SAMPLE_SUBMISSIONS
from labkit.checking import logger_level, run_check
from labkit.lab import _environ
from servers import in_turn
from servers.client import Dispatched, Session
from servers.learner_host.host import build_server, call_here, load_learner_code, untraced
from servers.toolkit import serve_wire

KITS = ("servers.learner_host.kit_lab2", "servers.learner_host.kit_lab3", "servers.learner_host.kit_lab4")
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Wire:
    """Both ends of a served wire, in memory: the lines the server reads and writes, each kept in ``log``.

    A request's line is handed over only once the one before it has been answered, as a client that waits for
    each answer sends them, so the two ways of serving see the same order of events."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.incoming, self.lines_in = anyio.create_memory_object_stream[str](100)
        self.answered: dict[Any, anyio.Event] = {}
        self.on_line = None  # what to do with each line the server writes (a client transport delivers it)

    def __aiter__(self) -> Wire:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self.lines_in.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
        self.log.append(("in", line.rstrip("\n")))
        return line

    async def send(self, line: str) -> None:
        """Hand the server one line; a request's, then wait for its answer."""
        message = json.loads(line) if line.lstrip().startswith("{") else None
        waits = isinstance(message, dict) and "method" in message and "id" in message
        if waits:
            self.answered[message["id"]] = anyio.Event()
        await self.incoming.send(line)
        if waits:
            with anyio.fail_after(30):
                await self.answered[message["id"]].wait()

    # what the server writes to
    async def write(self, text: str) -> None:
        for line in text.splitlines():
            self.log.append(("out", line))
            message = json.loads(line)
            if "id" in message and "method" not in message and message["id"] in self.answered:
                self.answered[message["id"]].set()
            if self.on_line is not None:
                await self.on_line(line)

    async def flush(self) -> None:
        pass


async def serve_lines(server: Any, lines: list[str], *, turn: bool) -> list[tuple[str, str]]:
    """Every line that went each way when ``server`` was served ``lines`` (``turn``: in turn)."""
    wire = Wire()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: serve_wire(server, wire, wire, in_turn=turn))
        for line in lines:
            await wire.send(line)
        await wire.incoming.aclose()
    return wire.log


@asynccontextmanager
async def line_transport(server: Any, turn: bool, log: list[tuple[str, str]]):
    """An MCP client transport to ``server`` served by ``serve_wire`` over lines in memory: what the SDK's client
    writes goes to the server as lines, and what the server writes comes back as messages."""
    wire = Wire()
    wire.log = log
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](100)
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](100)

    async def deliver(line: str) -> None:
        await to_client.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False)))

    async def pump() -> None:
        async with from_client:
            async for message in from_client:
                await wire.incoming.send(message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n")
        await wire.incoming.aclose()

    wire.on_line = deliver
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: serve_wire(server, wire, wire, in_turn=turn))
        tasks.start_soon(pump)
        yield from_server, to_server
        await to_server.aclose()


@asynccontextmanager
async def caller_transport(server: Any, log: list[tuple[str, str]]):
    """A ``servers.in_turn.Caller`` to ``server`` served in turn over lines in memory, as the grader's checks
    reach a learner host (``grader.engine.forkserver.socket_caller``)."""
    wire = Wire()
    wire.log = log
    to_caller, from_server = anyio.create_memory_object_stream[bytes](100)

    async def deliver(line: str) -> None:
        await to_caller.send((line + "\n").encode())

    async def send(data: bytes) -> None:
        for line in data.decode().splitlines(keepends=True):
            await wire.incoming.send(line)

    async def receive() -> bytes:
        try:
            return await from_server.receive()
        except anyio.EndOfStream:
            return b""

    async def serving() -> None:
        async with to_caller:
            await serve_wire(server, wire, wire, in_turn=True)

    wire.on_line = deliver
    caller = in_turn.Caller(send, receive)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(serving)
        try:
            yield caller
        finally:
            caller.close()
            await wire.incoming.aclose()


def graded_traffic(lab: str, student: str, way: str) -> tuple[list[tuple[str, str]], list[tuple[bool, str]]]:
    """The lines the lab's checks (hidden ones too) and the host exchanged on one submission, and the verdicts.

    ``way``: ``sdk`` (the SDK's client and the SDK's loop), ``turn`` (the SDK's client, the host served in turn),
    ``caller`` (the client's side in turn too, and the host without OpenTelemetry spans, as the grader talks to a
    learner host: ``host.serve``)."""
    code = answer_code(read_notebook(SAMPLE_SUBMISSIONS / student / lab / f"{lab}.ipynb"))
    for kit in KITS:  # a kit's state (lab 3's alerts) starts afresh, as in a new host process
        importlib.reload(importlib.import_module(kit))
    namespace, load_error = load_learner_code(lab, code)
    server = build_server(lab, namespace, load_error=load_error, run=call_here)
    server = getattr(server, "_lowlevel_server", server)
    if way == "caller":
        traced = len(server.middleware)
        assert len(untraced(server).middleware) == traced - 1
    registry = lab_checks(lab)
    log: list[tuple[str, str]] = []
    with (
        tempfile.TemporaryDirectory(prefix="lab-state-") as state,
        _environ("LAB_STATE_DIR", state),
        logger_level("mcp", logging.CRITICAL),
        Session(
            Dispatched(caller_transport(server, log))
            if way == "caller"
            else line_transport(server, way == "turn", log),
            timeout=30,
        ) as session,
    ):
        session.state_dir, session.sandboxed = Path(state), sandboxed
        verdicts = [run_check(registry[name], session) for name in registry.checks]
    # A check may name things after its own state folder, which each run makes anew.
    folder = Path(state).name
    return (
        [(way, line.replace(folder, "<state>")) for way, line in log],
        [(result.passed, result.message.replace(folder, "<state>")) for result in verdicts],
    )


@pytest.fixture
def spied(monkeypatch) -> list[int]:
    """How many connections were served in turn (so a comparison cannot pass by both falling back to the SDK)."""
    served: list[int] = []
    serve = in_turn.serve

    async def counted(*args: Any, **kwargs: Any) -> None:
        served.append(1)
        await serve(*args, **kwargs)

    monkeypatch.setattr(in_turn, "serve", counted)
    return served


@pytest.mark.parametrize(
    ("lab", "student"),
    [
        ("lab1_error_results", "solution"),
        ("lab1_error_results", "retries_business_error"),
        ("lab2_scopes_expansion", "solution"),
        ("lab2_scopes_expansion", "field_merge_across_scopes"),
        ("lab3_tools_resources", "solution"),
        ("lab3_tools_resources", "side_effect_in_resource_read"),
        ("lab4_server_integration", "solution"),
        ("lab4_server_integration", "exception_on_unknown_slug"),
        ("lab4_server_integration", "blank"),
    ],
)
def test_a_labs_checks_see_the_same_wire_served_in_turn(lab: str, student: str, spied: list[int]) -> None:
    sdk_log, sdk_verdicts = graded_traffic(lab, student, "sdk")
    assert not spied
    turn_log, turn_verdicts = graded_traffic(lab, student, "turn")
    assert spied == [1]
    assert len(sdk_log) > 10
    assert turn_verdicts == sdk_verdicts
    assert turn_log == sdk_log
    caller_log, caller_verdicts = graded_traffic(lab, student, "caller")
    assert spied == [1, 1]
    assert caller_verdicts == sdk_verdicts
    assert caller_log == sdk_log


REMEMBERED: contextvars.ContextVar[str] = contextvars.ContextVar("remembered", default="(nothing)")


def edge_server() -> Any:
    server = MCPServer("edges")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    def broken() -> str:
        """Always raises."""
        raise RuntimeError("the tool broke")

    @server.tool()
    def lone_surrogate() -> str:
        """Returns text UTF-8 cannot encode."""
        return "half \ud800 of a pair"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Reports progress on the way."""
        await ctx.report_progress(1, 2, "halfway")
        return "done"

    @server.tool()
    async def remember(text: str) -> str:
        """Sets a context variable in the request's context."""
        REMEMBERED.set(text)
        return "kept"

    @server.tool()
    async def recall() -> str:
        """What an earlier request set: nothing, each request running in a context of its own."""
        return REMEMBERED.get()

    @server.resource("note://one", mime_type="text/plain")
    def one() -> str:
        return "the first note"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Greet {name}."

    return server._lowlevel_server


def request(number: int, method: str, params: dict[str, Any] | None = None, *, envelope: bool = True) -> str:
    params = dict(params or {})
    if envelope:
        params["_meta"] = {**params.get("_meta", {}), **ENVELOPE}
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": method}
    if params:
        message["params"] = params
    return json.dumps(message) + "\n"


EDGE_LINES = [
    request(1, "server/discover"),
    request(2, "tools/list"),
    request(3, "tools/call", {"name": "echo", "arguments": {"text": "héllo"}}),
    request(4, "tools/call", {"name": "echo", "arguments": {"text": 5}}),
    request(5, "tools/call", {"name": "echo", "arguments": {}}),
    request(6, "tools/call", {"name": "no_such_tool", "arguments": {}}),
    request(7, "tools/call", {"name": "broken", "arguments": {}}),
    request(8, "tools/call", {"name": "lone_surrogate", "arguments": {}}),
    request(9, "tools/call", {"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p-1"}}),
    request(10, "resources/list"),
    request(11, "resources/read", {"uri": "note://one"}),
    request(12, "resources/read", {"uri": "note://none"}),
    request(13, "prompts/list"),
    request(14, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
    request(15, "prompts/get", {"name": "greet", "arguments": {}}),
    request(16, "ping"),
    request(17, "no/such/method"),
    request(18, "tools/list", envelope=False),  # a request without its envelope, on a 2026-era connection
    request(19, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x"}}),
    "this line is not JSON\n",
    json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}) + "\n",
    json.dumps({"jsonrpc": "2.0", "id": 99, "result": {}}) + "\n",  # an answer to a request nobody sent
    request(20, "tools/call", {"name": "remember", "arguments": {"text": "a secret"}}),
    request(21, "tools/call", {"name": "recall", "arguments": {}}),
    request(22, "tools/call", {"name": "echo", "arguments": {"text": "still here"}}),
]


def test_the_protocols_edge_cases_get_the_same_answers_in_turn(spied: list[int]) -> None:
    with logger_level("mcp", logging.CRITICAL), logger_level("servers", logging.CRITICAL):
        sdk = anyio.run(lambda: serve_lines(edge_server(), EDGE_LINES, turn=False))
        turn = anyio.run(lambda: serve_lines(edge_server(), EDGE_LINES, turn=True))
    assert spied == [1]
    assert turn == sdk
    answers = {json.loads(line).get("id"): json.loads(line) for way, line in turn if way == "out"}
    assert set(answers) >= set(range(1, 23))  # every request answered
    assert answers[7]["result"]["isError"] is True
    assert "\ud800" not in answers[8]["result"]["content"][0]["text"]
    assert answers[17]["error"]["code"] == types.METHOD_NOT_FOUND
    assert answers[19]["error"]["code"] == types.UNSUPPORTED_PROTOCOL_VERSION
    assert answers[21]["result"]["content"][0]["text"] == "(nothing)"
    notes = [json.loads(line)["method"] for way, line in turn if way == "out" and "method" in json.loads(line)]
    assert "notifications/progress" in notes


def test_a_client_that_opens_with_the_handshake_is_served_by_the_sdks_loop(spied: list[int]) -> None:
    """Claude Code and the Inspector open with ``initialize``: the lines read to see that are replayed to the SDK."""
    lines = [
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n",  # before any request
        request(
            1,
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
            envelope=False,
        ),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n",
        request(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}, envelope=False),
    ]
    with logger_level("mcp", logging.CRITICAL):
        sdk = anyio.run(lambda: serve_lines(edge_server(), lines, turn=False))
        turn = anyio.run(lambda: serve_lines(edge_server(), lines, turn=True))
    assert not spied
    assert turn == sdk
    answers = [json.loads(line) for way, line in turn if way == "out"]
    assert answers[0]["result"]["serverInfo"]["name"] == "edges"
    assert answers[1]["result"]["content"][0]["text"] == "hi"


# --- the client's side on its own ----------------------------------------------------------------------------------


class Replies:
    """A wire in memory for a ``Caller``: what it writes, kept; what it reads, handed out line by line (then the
    end, or nothing ever, for a server that hangs)."""

    def __init__(self, lines: list[dict | str], *, hang: bool = False) -> None:
        self.written: list[dict] = []
        self.lines = [line if isinstance(line, str) else json.dumps(line) for line in lines]
        self.hang = hang

    async def send(self, data: bytes) -> None:
        self.written.extend(json.loads(line) for line in data.decode().splitlines())

    async def receive(self) -> bytes:
        if self.lines:
            return (self.lines.pop(0) + "\n").encode()
        if self.hang:
            await anyio.sleep_forever()
        return b""


async def with_caller(replies: Replies, use, *, limit: dict | None = None, **callbacks: Any) -> Any:
    caller = in_turn.Caller(replies.send, replies.receive, **(limit or {}))

    async def nothing(*args: Any) -> None:
        return None

    async with anyio.create_task_group() as tasks:
        await tasks.start(
            lambda task_status: caller.run(
                callbacks.get("on_request", nothing),
                callbacks.get("on_notify", nothing),
                callbacks.get("intercept"),
                task_status=task_status,
            )
        )
        try:
            return await use(caller)
        finally:
            caller.close()


def test_a_caller_raises_what_the_sdks_dispatcher_raises() -> None:
    from mcp.shared.exceptions import MCPError

    async def error_answer(caller: Any) -> MCPError:
        with pytest.raises(MCPError) as raised:
            await caller.send_raw_request("tools/call", {"name": "x"})
        return raised.value

    replies = Replies([{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad", "data": {"why": 1}}}])
    error = anyio.run(with_caller, replies, error_answer)
    assert (error.code, error.message, error.data) == (-32602, "bad", {"why": 1})
    assert replies.written == [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}]

    async def twice(caller: Any) -> tuple[MCPError, MCPError]:
        return await error_answer(caller), await error_answer(caller)

    first, second = anyio.run(with_caller, Replies([]), twice)  # the wire ends before any answer
    assert first.code == second.code == types.CONNECTION_CLOSED

    async def timed(caller: Any) -> MCPError:
        with pytest.raises(MCPError) as raised:
            await caller.send_raw_request("tools/call", {"name": "slow"}, {"timeout": 0.05})
        return raised.value

    replies = Replies([], hang=True)
    error = anyio.run(with_caller, replies, timed)
    assert error.code == types.REQUEST_TIMEOUT
    assert replies.written[-1]["method"] == "notifications/cancelled"
    assert replies.written[-1]["params"]["requestId"] == 1


class Chunks(Replies):
    """A wire that hands out the bytes given, chunk by chunk, then hangs: a server still writing."""

    def __init__(self, chunks: list[bytes]) -> None:
        super().__init__([], hang=True)
        self.chunks = list(chunks)
        self.read = 0

    async def receive(self) -> bytes:
        if self.chunks:
            self.read += 1
            return self.chunks.pop(0)
        await anyio.sleep_forever()


def test_a_caller_with_a_line_limit_reads_no_message_longer_and_says_so_once() -> None:
    """The grader caps each message a host writes straight to it (``forkserver.socket_caller``): a message of more
    bytes than the limit (the newline not counted) ends the wire, once told; one of exactly the limit is read."""
    from mcp.shared.exceptions import MCPError

    answer = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}}).encode()
    told: list[str] = []
    limit = {"line_limit": len(answer), "on_too_long": lambda: told.append("too long")}

    async def call(caller: Any) -> Any:
        return await caller.send_raw_request("tools/call", {"name": "x"})

    async def two_calls(caller: Any) -> tuple[int, int]:
        codes = []
        for _ in range(2):
            with pytest.raises(MCPError) as raised:
                await call(caller)
            codes.append(raised.value.code)
        return tuple(codes)

    # Exactly at the limit, in pieces: read.
    wire = Chunks([answer[:10], answer[10:] + b"\n"])
    assert anyio.run(lambda: with_caller(wire, call, limit=limit)) == {"content": [], "isError": False}
    assert told == []
    # One byte over, whole: the wire ends (each call after it too), and the limit is told once.
    over = answer.replace(b'"content"', b'"contents"')
    wire = Chunks([over + b"\n"])
    assert anyio.run(lambda: with_caller(wire, two_calls, limit=limit)) == (types.CONNECTION_CLOSED,) * 2
    assert told == ["too long"]
    # Not yet finished, and already over: nothing more is waited for (the wire would hang).
    told.clear()
    wire = Chunks([b"x" * 40, b"x" * 40, b"x" * 10_000, b"never read"])

    async def in_time(caller: Any) -> tuple[int, int]:
        with anyio.fail_after(5):
            return await two_calls(caller)

    assert (
        anyio.run(lambda: with_caller(wire, in_time, limit={**limit, "line_limit": 100}))
        == (types.CONNECTION_CLOSED,) * 2
    )
    assert told == ["too long"] and wire.read == 3
    # A long line after a good one in the same chunk: the good one is read, the long one stops the next call.
    told.clear()
    wire = Chunks([answer + b"\n" + b"y" * (len(answer) + 1) + b"\n"])
    codes: list = []

    async def good_then_bad(caller: Any) -> None:
        codes.append(await call(caller))
        with pytest.raises(MCPError) as raised:
            await call(caller)
        codes.append(raised.value.code)

    anyio.run(lambda: with_caller(wire, good_then_bad, limit=limit))
    assert codes == [{"content": [], "isError": False}, types.CONNECTION_CLOSED] and told == ["too long"]
    # Without a limit, a long line is only a line the wire drops (as the SDK's reader drops what is not a message).
    wire = Chunks([b"z" * 300_000 + b"\n" + answer + b"\n"])
    assert anyio.run(lambda: with_caller(wire, call)) == {"content": [], "isError": False}


def test_a_caller_hands_the_session_what_the_server_sends_before_its_answer() -> None:
    seen: dict[str, list] = {"progress": [], "notes": [], "requests": []}

    async def on_notify(context: Any, method: str, params: Any) -> None:
        seen["notes"].append(method)

    async def on_request(context: Any, method: str, params: Any) -> dict:
        seen["requests"].append((method, context.request_id))
        return {}

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((done, total, message))

    async def call(caller: Any) -> dict:
        return await caller.send_raw_request("tools/call", {"name": "x"}, {"on_progress": progress})

    replies = Replies(
        [
            "not a message",
            {"jsonrpc": "2.0", "id": 41, "result": {"late": True}},  # an answer to a request long gone
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1, "total": 2, "message": "half"},
            },
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}},
            {"jsonrpc": "2.0", "id": "s-1", "method": "ping"},
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}},
        ]
    )
    result = anyio.run(lambda: with_caller(replies, call, on_notify=on_notify, on_request=on_request))
    assert result == {"content": [], "isError": False}
    assert seen["progress"] == [(1.0, 2.0, "half")]
    assert seen["notes"] == ["notifications/progress", "notifications/message"]
    assert seen["requests"] == [("ping", "s-1")]
    assert replies.written[0]["params"]["_meta"] == {"progressToken": 1}
    assert replies.written[1] == {"jsonrpc": "2.0", "id": "s-1", "result": {}}


def test_a_notification_without_params_leaves_them_off_the_wire_as_the_sdk_does() -> None:
    """JSON-RPC forbids ``"params": null``; the SDK's dispatcher leaves the field unset, and keeps an empty object."""
    assert json.loads(in_turn.encode(in_turn.notification("notifications/x", None))) == {
        "jsonrpc": "2.0",
        "method": "notifications/x",
    }
    assert json.loads(in_turn.encode(in_turn.notification("notifications/x", {})))["params"] == {}
