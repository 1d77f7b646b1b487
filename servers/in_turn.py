"""Serve a 2026-era MCP client one request at a time, on the event loop's own thread, with the SDK's own handling.

The SDK's stdio loop passes every message through a chain of tasks: a reader, a replay relay, the
dispatcher's read loop, a task per request, a writer, each handing the message on through a memory
stream. For a client that waits for each answer before it sends its next request (the grader's checks,
a hundred requests or more per submission), that chain costs a learner host several times what the
request itself does. Here a request is read, handled and answered before the next line is read:

* the handling is the SDK's own for a 2026-07-28 request (``mcp.server.runner.serve_one``: the envelope
  classifier, the server's middleware, the params' validation, the handler, the result's shaping), in a
  task of its own with a copy of the serving task's context, as the SDK's dispatcher runs each handler;
* errors reach the wire as the SDK's modern loop maps them (``MCPError`` and ``ValidationError`` by the
  shared ladder, anything else as a logged INTERNAL_ERROR);
* each message is encoded once, as the SDK's stdio writer encodes it.

What differs is only order: a request sent before the previous one was answered waits for it, where the
SDK would start it at once. A client that opens with the ``initialize`` handshake (the 2025 era: Claude
Code, the MCP Inspector) is served by the SDK's own loop, with the lines already read replayed into it.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import nullcontext, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from pydantic import ValidationError

log = logging.getLogger("servers")

try:  # the SDK's per-request pieces of its 2026-era loop (mcp.server.runner._serve_modern_stream)
    from mcp.server.connection import Connection, NotifyOnlyOutbound
    from mcp.server.runner import (
        ServerRunner,
        _has_modern_envelope,
        _initialize_after_modern_data,
        aclose_shielded,
        modern_error_data,
        serve_one,
    )
    from mcp.shared.dispatcher import coerce_request_id, run_notify_intercept
    from mcp.shared.exceptions import MCPError, NoBackChannelError
    from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request
    from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
    from mcp.shared.transport_context import TransportContext
    from mcp_types.version import LATEST_MODERN_VERSION
except ImportError:  # another SDK release: the SDK's own loop serves every client
    serve_one = None

# How many frames before the client's first request are kept for the loop that serves it (as the SDK keeps).
LEAD_LIMIT = 8


def available() -> bool:
    """Whether this SDK release has the pieces serving in turn is built from."""
    return serve_one is not None


def replaced(message: types.JSONRPCMessage) -> types.JSONRPCMessage:
    """``message`` with the text UTF-8 cannot encode (a lone surrogate a handler returned) replaced."""
    data = message.model_dump(by_alias=True, exclude_unset=True, mode="python")
    text = json.dumps(data, ensure_ascii=False).encode("utf-8", errors="replace").decode("utf-8")
    return types.jsonrpc_message_adapter.validate_json(text, by_name=False)


def encode(message: types.JSONRPCMessage) -> str:
    """``message`` as one line of the wire, as the SDK's stdio writer encodes it, its text made encodable
    (``replaced``) where it would otherwise stop the writer and leave the client waiting."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # pydantic's serialization error: "surrogates not allowed"
        return replaced(message).model_dump_json(by_alias=True, exclude_unset=True)


def notification(method: str, params: Mapping[str, Any] | None) -> types.JSONRPCNotification:
    """A notification as the SDK's dispatcher writes it: ``params`` left unset when there are none (an explicit None
    would go on the wire as ``"params": null``, which JSON-RPC forbids)."""
    if params is None:
        return types.JSONRPCNotification(jsonrpc="2.0", method=method)
    return types.JSONRPCNotification(jsonrpc="2.0", method=method, params=dict(params))


class Wire:
    """The writing side: one encoded message per line, sent before the next request is read."""

    def __init__(self, out: Any) -> None:
        self.out = out

    async def send(self, message: types.JSONRPCMessage) -> None:
        await self.out.write(encode(message) + "\n")
        await self.out.flush()

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        await self.send(notification(method, params))


@dataclass
class Exchange:
    """The dispatch context of one request or notification (``mcp.shared.dispatcher.DispatchContext``): a
    2026-era connection, so notifications and progress ride the pipe and requests to the client are refused."""

    wire: Wire
    request_id: Any
    progress_token: Any = None
    message_metadata: Any = None
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)

    @property
    def transport(self) -> TransportContext:
        return TransportContext(kind="jsonrpc", can_send_request=False)

    @property
    def can_send_request(self) -> bool:
        return False

    async def send_raw_request(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> dict:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        await self.wire.notify(method, params, opts)

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)


def _token(value: Any) -> Any:
    """``value`` if it can be a progress token (a string or an integer, not a bool), else None."""
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _progress_token(params: Mapping[str, Any] | None) -> Any:
    meta = (params or {}).get("_meta")
    return _token(meta.get("progressToken")) if isinstance(meta, Mapping) else None


def _parse(line: str | bytes) -> types.JSONRPCMessage | None:
    try:
        return types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except (ValidationError, ValueError) as exc:
        log.debug("transport yielded exception: %r", exc)  # as the SDK's dispatcher drops it
        return None


def opens_modern(message: types.JSONRPCMessage | None) -> bool:
    """Whether the client's first request opens a 2026-07-28 connection (``serve_dual_era_loop``'s rule)."""
    return (
        isinstance(message, types.JSONRPCRequest)
        and message.method != "initialize"
        and _has_modern_envelope(message.params)
    )


async def opening(lines: AsyncIterator[str]) -> tuple[list[str], types.JSONRPCMessage | None]:
    """The lines up to the client's first request (at most ``LEAD_LIMIT`` before it kept), and that request."""
    lead: list[str] = []
    async for line in lines:
        message = _parse(line)
        if isinstance(message, types.JSONRPCRequest):
            lead.append(line)
            return lead, message
        if len(lead) < LEAD_LIMIT:
            lead.append(line)
    return lead, None


class Replayed:
    """``lines`` with the lines already read in front of them."""

    def __init__(self, lead: list[str], lines: AsyncIterator[str]) -> None:
        self.lead = list(lead)
        self.lines = lines

    def __aiter__(self) -> Replayed:
        return self

    async def __anext__(self) -> str:
        if self.lead:
            return self.lead.pop(0)
        return await self.lines.__anext__()


async def serve(server: Any, lead: list[str], lines: AsyncIterator[str], out: Any) -> None:
    """Serve ``server`` (low-level) in turn: the ``lead`` lines, then ``lines`` until they end."""
    wire = Wire(out)
    outbound = NotifyOnlyOutbound(wire)
    loop = asyncio.get_running_loop()
    async with server.lifespan(server) as state:

        async def request(message: types.JSONRPCRequest) -> None:
            method, params = message.method, message.params
            exchange = Exchange(wire, message.id, _progress_token(params))
            try:
                if method == "initialize":
                    raise MCPError(
                        code=types.UNSUPPORTED_PROTOCOL_VERSION,
                        message="connection is serving the 2026-07-28 protocol; the initialize handshake is not "
                        "accepted",
                        data=_initialize_after_modern_data(params),
                    )
                route = classify_inbound_request({"method": method, "params": params})
                if isinstance(route, InboundLadderRejection):
                    raise MCPError(code=route.code, message=route.message, data=route.data)
                connection = Connection.from_envelope(
                    route.protocol_version, route.client_info, route.client_capabilities, outbound=outbound
                )
                try:
                    result = await serve_one(
                        server, exchange, method, params, connection=connection, lifespan_state=state
                    )
                except (MCPError, ValidationError):
                    raise
                except Exception as exc:  # as the SDK's modern loop: logged, a generic error
                    error = modern_error_data(exc)
                    raise MCPError(code=error.code, message=error.message, data=error.data) from exc
            except Exception as exc:  # the dispatcher's one exception-to-wire boundary
                error = handler_exception_to_error_data(exc)
                if error is None:
                    log.exception("handler for %r raised", method)
                    error = types.ErrorData(code=0, message=str(exc))
                await wire.send(types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error))
                return
            await wire.send(types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result))

        async def notification(message: types.JSONRPCNotification) -> None:
            connection = Connection.from_envelope(LATEST_MODERN_VERSION, None, None, outbound=outbound)
            runner = ServerRunner(server, connection, state)
            try:
                await serve_notification(runner, Exchange(wire, None), message)
            except Exception:  # a notification handler that raised costs only that one
                log.exception("notification handler for %r raised", message.method)

        async def handle(message: types.JSONRPCMessage | None) -> None:
            if isinstance(message, types.JSONRPCRequest):
                await in_own_task(loop, request(message))
            elif isinstance(message, types.JSONRPCNotification):
                await in_own_task(loop, notification(message))
            # a response or an error from the client: a 2026-era server sends no requests, so none is awaited

        for line in lead:
            await handle(_parse(line))
        async for line in lines:
            await handle(_parse(line))


async def serve_notification(runner: Any, exchange: Exchange, message: types.JSONRPCNotification) -> None:
    """A notification as the SDK's modern loop serves it: at the latest version, on a connection of its own."""
    try:
        await runner.on_notify(exchange, message.method, message.params)
    finally:
        await aclose_shielded(runner.connection)


async def in_own_task(loop: asyncio.AbstractEventLoop, coroutine: Any) -> None:
    """Run ``coroutine`` in a task of its own, in a copy of this task's context (as the SDK runs each handler)."""
    await loop.create_task(coroutine, context=contextvars.copy_context())


# --- the client's side ---------------------------------------------------------------------------

# How long a courtesy cancel of an abandoned request may take to write (as the SDK's dispatcher bounds it).
ABANDON_SECONDS = 1.0


class Caller:
    """The client's side in turn: an ``mcp.shared.dispatcher.Dispatcher`` that writes a request, then reads the wire
    until its answer, with no task of its own. What the server sends meanwhile (notifications, a request of its own) is
    handed to the session as it arrives, as the SDK's dispatcher hands it.

    For a client that makes one request at a time (the grader's checks on a learner host): the SDK's
    ``ClientSession`` and ``Client`` over it work as over the SDK's dispatcher (the requests they write are the same
    lines), without its reading task and memory streams. ``send(data)`` writes bytes; ``receive()`` returns the next
    bytes read, ``b""`` at the end of the wire. ``line_limit``: a message longer than this many bytes (its newline not
    counted) is not read: ``on_too_long()`` is called once, and the wire is taken as ended.
    """

    def __init__(self, send: Any, receive: Any, *, line_limit: int | None = None, on_too_long: Any = None) -> None:
        self._send = send
        self._receive = receive
        self._line_limit = line_limit
        self._on_too_long = on_too_long
        self._chunks: list[bytes] = []  # what was read after the last whole line
        self._pending = 0  # their bytes
        self._next_id = 0
        self._closed = False
        self._stopped: anyio.Event | None = None
        self._on_request: Any = None
        self._on_notify: Any = None
        self._intercept: Any = None

    async def run(
        self, on_request: Any, on_notify: Any, on_notify_intercept: Any = None, *, task_status: Any = None
    ) -> None:
        """Keep the session's callbacks; nothing is read until a request waits for its answer."""
        self._on_request, self._on_notify, self._intercept = on_request, on_notify, on_notify_intercept
        self._stopped = anyio.Event()
        if task_status is not None:
            task_status.started()
        try:
            await self._stopped.wait()
        finally:
            self._closed = True

    def close(self) -> None:
        self._closed = True
        if self._stopped is not None:
            self._stopped.set()

    async def send(self, message: types.JSONRPCMessage) -> None:
        try:
            await self._send((message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode())
        except OSError:  # the server's end is gone
            self._closed = True
            raise MCPError(code=types.CONNECTION_CLOSED, message="Connection closed") from None

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        if self._closed:
            return
        with suppress(MCPError):  # fire and forget, as the SDK's dispatcher drops it on a torn-down wire
            await self.send(notification(method, params))

    async def send_raw_request(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> dict:
        """Write the request and read until its answer (the SDK dispatcher's contract: ``MCPError`` for an error
        answer, ``REQUEST_TIMEOUT`` when ``opts["timeout"]`` passes, ``CONNECTION_CLOSED`` at the end of the wire)."""
        if self._closed:
            raise MCPError(code=types.CONNECTION_CLOSED, message="Connection closed")
        opts = opts or {}
        request_id = opts.get("request_id")
        if request_id is None:
            self._next_id += 1
            request_id = self._next_id
        out_params = dict(params) if params is not None else {}
        out_meta = dict(out_params.get("_meta") or {})
        on_progress = opts.get("on_progress")
        if on_progress is not None:
            out_meta["progressToken"] = request_id  # the request id doubles as the progress token, as in the SDK
        if out_meta:
            out_params["_meta"] = out_meta
        else:
            out_params.pop("_meta", None)
        if out_params:
            request = types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=out_params)
        else:
            request = types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method)
        await self.send(request)
        timeout = opts.get("timeout")
        try:
            with anyio.fail_after(timeout) if timeout is not None else nullcontext():
                outcome = await self._answer(coerce_request_id(request_id), on_progress)
        except TimeoutError:
            await self._abandon(request_id, f"timed out after {timeout}s")
            raise MCPError(code=types.REQUEST_TIMEOUT, message=f"Request {method!r} timed out") from None
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._abandon(request_id, "caller cancelled")
            raise
        if isinstance(outcome, types.ErrorData):
            raise MCPError(code=outcome.code, message=outcome.message, data=outcome.data)
        return outcome

    async def _abandon(self, request_id: Any, reason: str) -> None:
        """The courtesy cancel of a request no longer waited for (the spec recommends it)."""
        with anyio.move_on_after(ABANDON_SECONDS):
            await self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})

    async def _answer(self, key: Any, on_progress: Any) -> dict | types.ErrorData:
        while True:
            message = await self._next_message()
            if message is None:
                self._closed = True
                raise MCPError(code=types.CONNECTION_CLOSED, message="Connection closed")
            if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                if message.id is not None and coerce_request_id(message.id) == key:
                    return message.result if isinstance(message, types.JSONRPCResponse) else message.error
                log.debug("dropping response for unknown/late request id %r", message.id)
            elif isinstance(message, types.JSONRPCNotification):
                await self._notified(message, key, on_progress)
            else:
                await self._requested(message)

    async def _notified(self, message: types.JSONRPCNotification, key: Any, on_progress: Any) -> None:
        params = message.params or {}
        if message.method == "notifications/progress" and on_progress is not None:
            token, progress = _token(params.get("progressToken")), params.get("progress")
            if (
                token is not None
                and coerce_request_id(token) == key
                and isinstance(progress, int | float)
                and not isinstance(progress, bool)
            ):
                total, text = params.get("total"), params.get("message")
                with suppress(Exception):
                    await on_progress(
                        float(progress),
                        float(total) if isinstance(total, int | float) else None,
                        text if isinstance(text, str) else None,
                    )
        if run_notify_intercept(self._intercept, message.method, message.params):
            return
        try:
            await self._on_notify(Exchange(self, None), message.method, message.params)
        except Exception:  # a notification the session could not take costs only that notification
            log.exception("notification handler for %r raised", message.method)

    async def _requested(self, message: types.JSONRPCRequest) -> None:
        """A request of the server's own (a 2025-era server asking for sampling, say): answered by the session."""
        try:
            result = await self._on_request(
                Exchange(self, message.id, _progress_token(message.params)), message.method, message.params
            )
        except Exception as exc:  # noqa: BLE001 - the answer says what went wrong, as the SDK's dispatcher answers
            error = handler_exception_to_error_data(exc) or types.ErrorData(code=0, message=str(exc))
            await self.send(types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error))
        else:
            await self.send(types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result))

    async def _next_message(self) -> types.JSONRPCMessage | None:
        """The next message on the wire (a line that is not one is dropped, as the SDK drops it); None at its end, or
        at a message longer than the line limit."""
        limit = self._line_limit
        while True:
            if self._chunks and b"\n" in self._chunks[-1]:
                data = b"".join(self._chunks)
                line, _, rest = data.partition(b"\n")
                self._chunks, self._pending = ([rest], len(rest)) if rest else ([], 0)
                if limit is not None and len(line) > limit:
                    return self._too_long()
                message = _parse(line)
                if message is not None:
                    return message
                continue
            if limit is not None and self._pending > limit:  # an unfinished line already too long
                return self._too_long()
            chunk = await self._receive()
            if not chunk:
                return None
            self._chunks.append(chunk)
            self._pending += len(chunk)

    def _too_long(self) -> None:
        """A message over the line limit: nothing more is read; the wire is taken as ended."""
        self._chunks, self._pending, self._closed = [], 0, True
        if self._on_too_long is not None:
            self._on_too_long()
            self._on_too_long = None
