"""The remote server's HTTP side: the MCP endpoint behind small ASGI layers that act out real deployments.

Each layer is off unless ``Options`` turns it on. In the order a request meets them: the proxy's bot
check and cache, the rate limiter (per client, with a daily cap, and a store that may be down), the web
framework's defaults (session cookie, CSRF redirect), OAuth's 401, and finally the MCP endpoint. One
log line per request says what happened, with ``protocolVersion`` and ``clientInfo``, as
*Common mistakes › 1.1 "Unrecognized field": client and server on different protocol versions* asks.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from typing import Any

MCP_PATH = "/mcp"
METADATA_PATH = "/.well-known/oauth-protected-resource"
LOGIN_PATH = "/login"
LIMITER_MODES = ("up", "down-open", "down-closed")
DAY = 86400.0

CHALLENGE_PAGE = (
    "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
    "<h1>Checking your browser before accessing the site.</h1>"
    "<p>Enable JavaScript and cookies to continue.</p></body></html>"
)
LOGIN_PAGE = (
    "<!DOCTYPE html><html><head><title>Sign in</title></head><body><form method=post>Sign in</form></body></html>"
)


@dataclass(frozen=True)
class Options:
    """What stands in front of the MCP endpoint. Everything is off by default."""

    token: str | None = None
    bot_check: bool = False
    bot_check_exempt_mcp: bool = False
    cached_reply: bool = False
    framework_defaults: bool = False
    rate_limit: tuple[int, float] | None = None  # (requests, window in seconds) per client
    trusted_proxies: tuple[str, ...] = ()
    key_by_peer_only: bool = False
    daily_cap: int | None = None
    limiter: str = "up"  # "up", "down-open" or "down-closed"
    exit_after: int | None = None

    def __post_init__(self) -> None:
        if self.limiter not in LIMITER_MODES:
            raise ValueError(f"limiter={self.limiter!r}: choose one of {', '.join(LIMITER_MODES)}.")
        if self.rate_limit is not None:
            count, window = self.rate_limit
            if int(count) < 1 or float(window) <= 0:
                raise ValueError(f"rate_limit={self.rate_limit!r}: give (requests >= 1, window in seconds > 0).")
            object.__setattr__(self, "rate_limit", (int(count), float(window)))
        object.__setattr__(self, "trusted_proxies", tuple(self.trusted_proxies))

    def to_args(self) -> list[str]:
        """The command-line flags of ``python -m servers.remote`` that give these options."""
        args: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            flag = "--" + f.name.replace("_", "-")
            if value is None or value is False or value == () or (f.name == "limiter" and value == "up"):
                continue
            if value is True:
                args.append(flag)
            elif f.name == "rate_limit":
                args += [flag, f"{value[0]}/{value[1]}"]
            elif f.name == "trusted_proxies":
                for peer in value:
                    args += ["--trusted-proxy", peer]
            else:
                args += [flag, str(value)]
        return args


def client_identity(peer: str, headers: dict[str, str], options: Options) -> str:
    """Who the client is, for the limiter: the peer, or what a trusted proxy says the client is.

    Forwarding headers are believed only from a trusted proxy; from anyone else they are ignored, so a
    forged ``CF-Connecting-IP`` sent straight to the server changes nothing. ``X-Forwarded-For`` is read
    from the right, because a client can write anything into its left end. Sources:
    *Common mistakes › 3.1 The rate limit counts the proxy's IP instead of the client's*;
    *Common mistakes › 3.2 A forged `CF-Connecting-IP` sent straight to the server*.
    """
    if options.key_by_peer_only or peer not in options.trusted_proxies:
        return peer
    if cf := headers.get("cf-connecting-ip", "").strip():
        return cf
    hops = [h.strip() for h in headers.get("x-forwarded-for", "").split(",") if h.strip()]
    for hop in reversed(hops):  # the rightmost address no trusted proxy vouches for
        if hop not in options.trusted_proxies:
            return hop
    return peer


class Limiter:
    """Requests per client in a sliding window, and a total per day; the clock is injected."""

    def __init__(self, options: Options, clock: Callable[[], float], wall: Callable[[], float]) -> None:
        self.options = options
        self.clock = clock
        self.wall = wall
        self.seen: dict[str, deque[float]] = {}
        self.day: int | None = None
        self.today = 0

    def check(self, who: str) -> tuple[str, float] | None:
        """None to let the request pass, or (reason, seconds to wait)."""
        if self.options.daily_cap is not None:
            wall = self.wall()
            day = int(wall // DAY)
            if day != self.day:
                self.day, self.today = day, 0
            if self.today >= self.options.daily_cap:
                return "daily_cap", (day + 1) * DAY - wall
        if self.options.rate_limit is not None:
            count, window = self.options.rate_limit
            now = self.clock()
            times = self.seen.setdefault(who, deque())
            while times and times[0] <= now - window:
                times.popleft()
            if len(times) >= count:
                return "rate_limited", times[0] + window - now
            times.append(now)
        if self.options.daily_cap is not None:
            self.today += 1
        return None


def rpc_summary(body: bytes) -> dict[str, str]:
    """The JSON-RPC method (and tool name, protocol version, client) of an MCP request body, for the log."""
    try:
        message = json.loads(body)
    except ValueError:
        return {}
    if isinstance(message, list):
        message = message[0] if message else {}
    if not isinstance(message, dict) or "method" not in message:
        return {}
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    found = {"rpc": str(message["method"])}
    if message["method"] == "tools/call" and "name" in params:
        found["tool"] = str(params["name"])
    version = params.get("protocolVersion") or meta.get("io.modelcontextprotocol/protocolVersion")
    info = params.get("clientInfo") or meta.get("io.modelcontextprotocol/clientInfo")
    if version:
        found["protocolVersion"] = str(version)
    if isinstance(info, dict):
        found["clientInfo"] = f"{info.get('name', '?')}/{info.get('version', '?')}"
    return found


class Exchange:
    """One HTTP request as the layers see it, and what was answered (status, headers, body, notes for the log)."""

    def __init__(self, scope: dict, body: bytes, receive: Callable, send: Callable, options: Options) -> None:
        self.scope, self.body, self._receive, self._send = scope, body, receive, send
        self.options = options
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        self.headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        self.peer = (scope.get("client") or ("unknown", 0))[0]
        self.who = client_identity(self.peer, self.headers, options)
        self.base = f"{scope.get('scheme', 'http')}://{self.headers.get('host') or '127.0.0.1'}"
        self.is_mcp_post = self.path == MCP_PATH and self.method == "POST"
        self.rpc = rpc_summary(body) if self.is_mcp_post else {}
        self.notes: list[str] = []
        self.status = 0
        self.sent_headers: list[tuple[bytes, bytes]] = []
        self.sent_body = b""
        self._delivered = False

    async def receive(self) -> dict:
        """The body once, as read; after that the real channel (a disconnect, for a streaming reply)."""
        if self._delivered:
            return await self._receive()
        self._delivered = True
        return {"type": "http.request", "body": self.body, "more_body": False}

    async def send(self, message: dict) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            head = list(message.get("headers", []))
            if self.options.framework_defaults:  # the framework's session cookie, on every reply
                head.append((b"set-cookie", f"session={secrets.token_hex(8)}; Path=/; HttpOnly".encode()))
            message = {**message, "headers": head}
            self.sent_headers = head
        elif message["type"] == "http.response.body":
            self.sent_body += message.get("body", b"")
        await self._send(message)

    async def reply(
        self,
        code: int,
        content: bytes | dict,
        content_type: str = "application/json",
        extra: tuple[tuple[str, str], ...] = (),
    ) -> None:
        if isinstance(content, dict):
            content = json.dumps(content).encode()
        head = [(b"content-type", content_type.encode()), (b"content-length", str(len(content)).encode())]
        head += [(k.encode(), v.encode()) for k, v in extra]
        await self.send({"type": "http.response.start", "status": code, "headers": head})
        await self.send({"type": "http.response.body", "body": content})

    def log_line(self) -> str:
        words = [f"{self.method} {self.path} {self.status}", f"client={self.who}"]
        return " ".join(words + [f"{k}={v}" for k, v in self.rpc.items()] + self.notes)


class RemoteApp:
    """The ASGI application: the layers ``options`` turns on, in front of an MCP endpoint.

    ``lines`` keeps every log line; ``emit`` also receives each (the command line prints them).
    ``on_exit`` is called once ``exit_after`` requests have been answered. ``clock`` (for the rate
    limit's window) and ``wall`` (for the daily cap's UTC day) can be injected.
    """

    def __init__(
        self,
        options: Options | None = None,
        *,
        server: Any = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        emit: Callable[[str], None] | None = None,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        from servers.remote.server import build_server

        self.options = options or Options()
        self.server = server if server is not None else build_server()
        self.inner = self.server.streamable_http_app(json_response=True)
        self.limiter = Limiter(self.options, clock, wall)
        self.lines: list[str] = []
        self.emit = emit
        self.on_exit = on_exit
        self.answered = 0
        self.exited = False
        self.cache: tuple[list[tuple[bytes, bytes]], bytes] | None = None

    @asynccontextmanager
    async def lifespan(self):
        """Run the MCP endpoint's session manager (what a server's lifespan does), for in-memory use."""
        async with self.inner.router.lifespan_context(self.inner):
            yield self

    def log(self, line: str) -> None:
        self.lines.append(line)
        if self.emit is not None:
            self.emit(line)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        exchange = Exchange(scope, body, receive, send, self.options)
        for layer in (self.proxy, self.limits, self.framework, self.oauth, self.endpoint):
            if await layer(exchange):
                break
        self.log(exchange.log_line())
        self.answered += 1
        limit = self.options.exit_after
        if limit is not None and self.answered >= limit and not self.exited:
            self.exited = True
            self.log(f"exiting after {self.answered} requests (exit_after={limit})")
            if self.on_exit is not None:
                self.on_exit()

    # Each layer answers the request (and returns True) or lets it through to the next.

    async def proxy(self, ex: Exchange) -> bool:
        """A bot check answering programs with HTML, and a cache replaying a reply.

        *Common mistakes › 1.4 An HTML page instead of JSON: the proxy's bot protection*.
        """
        opts = self.options
        exempt = opts.bot_check_exempt_mcp and ex.path == MCP_PATH
        if opts.bot_check and not exempt and "mozilla/" not in ex.headers.get("user-agent", "").lower():
            ex.notes.append("bot_check=challenge")
            await ex.reply(403, CHALLENGE_PAGE.encode(), "text/html; charset=utf-8")
            return True
        if opts.cached_reply and ex.is_mcp_post and self.cache is not None:
            ex.notes.append("cache=HIT")
            head, content = self.cache
            await ex.send({"type": "http.response.start", "status": 200, "headers": [*head, (b"x-cache", b"HIT")]})
            await ex.send({"type": "http.response.body", "body": content})
            return True
        return False

    async def limits(self, ex: Exchange) -> bool:
        """A rate limit per client, a daily cap, and a limiter whose store is down (failing open or closed).

        *Common mistakes › 3.1 The rate limit counts the proxy's IP instead of the client's*;
        *Common mistakes › 3.3 No daily safety cap*.
        """
        mode = self.options.limiter
        if mode == "down-closed":
            ex.notes.append("limiter=down(fail-closed)")
            data = {
                "error": "limiter_unavailable",
                "message": "The rate limiter's store is unreachable; requests are refused until it is back.",
                "retryAfterSeconds": 30,
            }
            await ex.reply(503, data, extra=(("retry-after", "30"),))
            return True
        if mode == "down-open":
            ex.notes.append("limiter=down(fail-open)")
            return False
        refused = self.limiter.check(ex.who)
        if refused is None:
            return False
        reason, wait = refused
        seconds = max(1, math.ceil(wait))
        ex.notes.append(f"limit={reason}")
        text = "Too many requests from this client" if reason == "rate_limited" else "The daily request cap is reached"
        data = {"error": reason, "message": f"{text}; retry after {seconds} s.", "retryAfterSeconds": round(wait, 3)}
        await ex.reply(429, data, extra=(("retry-after", str(seconds)),))
        return True

    async def framework(self, ex: Exchange) -> bool:
        """A web framework's defaults: a login page, and CSRF protection on every POST.

        *Common mistakes › 1.5 A 403 or a redirect to a login page: the framework's default security*.
        """
        if not self.options.framework_defaults:
            return False
        if ex.path == LOGIN_PATH:
            await ex.reply(200, LOGIN_PAGE.encode(), "text/html; charset=utf-8")
            return True
        if ex.method == "POST" and not ex.headers.get("x-csrf-token"):
            ex.notes.append("csrf=missing")
            await ex.reply(302, b"", "text/plain", (("location", LOGIN_PATH),))
            return True
        return False

    async def oauth(self, ex: Exchange) -> bool:
        """OAuth's first step: the protected-resource metadata (RFC 9728), and 401 with ``WWW-Authenticate``."""
        if ex.path in (METADATA_PATH, METADATA_PATH + MCP_PATH):
            await ex.reply(
                200,
                {
                    "resource": ex.base + MCP_PATH,
                    "authorization_servers": [ex.base],
                    "bearer_methods_supported": ["header"],
                    "scopes_supported": ["articles:read"],
                    "resource_name": "Remote course server",
                },
            )
            return True
        token = self.options.token
        if token is None or ex.path != MCP_PATH:
            return False
        given = ex.headers.get("authorization", "")
        if given == f"Bearer {token}":
            return False
        challenge = f'Bearer resource_metadata="{ex.base}{METADATA_PATH}"'
        if given:
            challenge += ', error="invalid_token"'
        ex.notes.append("auth=invalid" if given else "auth=missing")
        await ex.reply(
            401,
            {"error": "unauthorized", "message": "Sign in: this server needs a bearer token."},
            extra=(("www-authenticate", challenge),),
        )
        return True

    async def endpoint(self, ex: Exchange) -> bool:
        """The MCP endpoint itself; with ``cached_reply`` the proxy keeps its first answer to a POST."""
        await self.inner(ex.scope, ex.receive, ex.send)
        if self.options.cached_reply and ex.is_mcp_post and self.cache is None and ex.status == 200:
            kept = [(k, v) for k, v in ex.sent_headers if k.lower() not in (b"mcp-session-id", b"set-cookie")]
            self.cache = (kept, ex.sent_body)
        return True
