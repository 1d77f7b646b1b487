"""Over HTTP: what a client meets at the server's URL, probed with plain HTTP before any MCP session.

- ``http.initialize``: initialize is answered with JSON-RPC, not a proxy's HTML or a framework's
  redirect; ``http.fresh_reply``: not a cached answer; ``http.no_cookie``; ``http.newer_client``:
  a client announcing a newer protocol and unknown capabilities is accepted.
- With a burst: ``http.rate_limit`` (429 with Retry-After) and ``http.client_identity`` (clients
  behind a proxy counted apart; a forged forwarding header sent straight to the server not believed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from grader.checker.connect import CLIENT_NAME, PROBE_USER_AGENT
from grader.checker.findings import SERVER, CheckInputError, Finding, describe, finding

# What the probes send: an MCP client's User-Agent (connect.PROBE_USER_AGENT, not a browser's) and a JSON-RPC initialize.
PROBE_CLIENT = {"name": CLIENT_NAME, "version": "1.0"}
NEWER_CLIENT_CAPABILITIES = {
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
    "x-future-capability": {},
}
# Documentation addresses, never real clients: one client forwarded by a proxy, a second one, a forged one.
CLIENT_A, CLIENT_B, FORGED = "203.0.113.10", "203.0.113.20", "198.51.100.23"
BODY_LIMIT = 1_000_000


@dataclass(frozen=True)
class HttpReply:
    """One HTTP answer as the client received it (redirects are not followed)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def content_type(self) -> str:
        return (self.header("Content-Type") or "").split(";")[0].strip().lower()

    def message(self) -> dict[str, Any] | None:
        """The JSON-RPC message in the body: plain JSON, or the first ``data:`` of an event stream."""
        text = self.body.decode("utf-8", errors="replace")
        if self.content_type == "text/event-stream":
            candidates = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        else:
            candidates = [text]
        for candidate in candidates:
            try:
                data = json.loads(candidate)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict) and data.get("jsonrpc") == "2.0":
                return data
        return None

    def shown(self) -> str:
        kind = self.content_type or "no Content-Type"
        return f"HTTP {self.status} ({kind})"


def initialize_request(request_id: str, *, newer: bool = False) -> dict[str, Any]:
    """A JSON-RPC initialize; ``newer`` plays a client newer than the server (newest version, more capabilities)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": types.version.LATEST_HANDSHAKE_VERSION if newer else "2025-06-18",
            "capabilities": NEWER_CLIENT_CAPABILITIES if newer else {},
            "clientInfo": PROBE_CLIENT,
        },
    }


def http_post(
    url: str, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None, *, timeout: float | None = 30.0
) -> HttpReply:
    """POST one JSON-RPC message the way an MCP client does; CheckInputError when nothing answers."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CheckInputError(
            f"{url!r} is not an http(s) URL; give the server's MCP endpoint, e.g. http://127.0.0.1:8000/mcp."
        )
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, parts.port, timeout=timeout)
    sent = {
        "User-Agent": PROBE_USER_AGENT,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **(headers or {}),
    }
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", path, body=json.dumps(payload).encode(), headers=sent)
        response = connection.getresponse()
        if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
            body = _first_event(response)
        else:
            body = response.read(BODY_LIMIT)
        return HttpReply(response.status, tuple(response.getheaders()), body)
    except (OSError, http.client.HTTPException) as exc:
        raise CheckInputError(
            f"Nothing answers MCP at {url} ({describe(exc)}). Is the server running, and is this its /mcp address?"
        ) from None
    finally:
        connection.close()


def _first_event(response: Any) -> bytes:
    """An event stream may stay open: read up to the end of the first event that carries data."""
    lines: list[bytes] = []
    size = 0
    while size < BODY_LIMIT:
        line = response.readline()
        if not line:
            break
        lines.append(line)
        size += len(line)
        if not line.strip() and any(prior.startswith(b"data:") for prior in lines):
            break
    return b"".join(lines)


def _identity(address: str) -> dict[str, str]:
    """The headers a proxy such as Cloudflare adds for the client at ``address``."""
    return {"CF-Connecting-IP": address, "X-Forwarded-For": address}


def answered(reply: HttpReply, request_id: str) -> bool:
    message = reply.message()
    return 200 <= reply.status < 300 and message is not None and message.get("id") == request_id and "result" in message


def probe_initialize(url: str, headers: Mapping[str, str], timeout: float | None) -> tuple[list[Finding], bool]:
    """initialize as an MCP client sends it (twice, and once as a newer client); the findings, and whether MCP works."""
    first = http_post(url, initialize_request("check-server-1"), headers, timeout=timeout)
    found: list[Finding] = []
    cookies = [c.split("=", 1)[0] for c in first.all("Set-Cookie")]
    location = first.header("Location")
    if first.status in (401, 403) and first.header("WWW-Authenticate"):
        found.append(
            finding(
                "http.initialize",
                SERVER,
                None,
                f"initialize got HTTP {first.status} with WWW-Authenticate: {first.header('WWW-Authenticate')}. The server asks for "
                'authorization: give --header "Authorization: Bearer <token>" to check the rest.',
            )
        )
        return found, False
    if answered(first, "check-server-1"):
        found.append(
            finding("http.initialize", SERVER, True, f"initialize answered {first.shown()} with a JSON-RPC result.")
        )
    elif first.content_type == "text/html":
        found.append(
            finding(
                "http.initialize",
                SERVER,
                False,
                f"initialize got {first.shown()}: an HTML page, not JSON. A proxy's bot check (or a login page) answers MCP clients, "
                "which are servers, not browsers. Exempt the /mcp path from bot checks and caching.",
            )
        )
    elif 300 <= first.status < 400:
        found.append(
            finding(
                "http.initialize",
                SERVER,
                False,
                f"initialize got {first.shown()}, a redirect to {location or '(no Location)'}: a web framework's default security "
                "(CSRF on POST, login redirects) stands in front of /mcp. Give /mcp its own rules: open, no CSRF, no sessions.",
            )
        )
    else:
        message = first.message()
        said = f": JSON-RPC error {message['error']}" if message and "error" in message else ""
        found.append(
            finding(
                "http.initialize",
                SERVER,
                False,
                f"initialize got {first.shown()}{said}, not a JSON-RPC result for its request.",
            )
        )
    works = found[-1].passed is True

    second = http_post(url, initialize_request("check-server-2"), headers, timeout=timeout)
    cookies += [c.split("=", 1)[0] for c in second.all("Set-Cookie")]
    if works:
        echoed = (second.message() or {}).get("id")
        if answered(second, "check-server-2"):
            found.append(
                finding(
                    "http.fresh_reply",
                    SERVER,
                    True,
                    "A second initialize got its own answer (its own request id), not a stored one.",
                )
            )
        else:
            why = (
                "the first request's answer again (request id check-server-1)"
                if echoed == "check-server-1"
                else second.shown()
            )
            found.append(
                finding(
                    "http.fresh_reply",
                    SERVER,
                    False,
                    f"A second initialize got {why}: something in front of the server serves a cached reply. Exempt /mcp from caching.",
                )
            )
            works = False
    if cookies:
        found.append(
            finding(
                "http.no_cookie",
                SERVER,
                False,
                f"initialize answers set cookies ({', '.join(sorted(set(cookies)))}): a framework creates a session per request. "
                "MCP clients keep no cookies; give /mcp a chain without sessions or CSRF (and check the admin area stays closed).",
            )
        )
    elif 300 <= first.status < 400 and "login" in (location or "").lower():
        found.append(
            finding(
                "http.no_cookie",
                SERVER,
                False,
                f"initialize was redirected to a login page ({location}): the framework's default security covers /mcp.",
            )
        )
    else:
        found.append(
            finding(
                "http.no_cookie",
                SERVER,
                True,
                "No Set-Cookie on the initialize answers, and no redirect to a login page.",
            )
        )

    if works:
        newer = http_post(url, initialize_request("check-server-3", newer=True), headers, timeout=timeout)
        if answered(newer, "check-server-3"):
            version = ((newer.message() or {}).get("result") or {}).get("protocolVersion")
            found.append(
                finding(
                    "http.newer_client",
                    SERVER,
                    True,
                    f"A client announcing protocol {types.version.LATEST_HANDSHAKE_VERSION} and capabilities the server may not know "
                    f"(elicitation.form, x-future-capability) was accepted (protocol {version} agreed).",
                )
            )
        else:
            message = newer.message() or {}
            said = (
                f"JSON-RPC error {message['error'].get('message')!r}"
                if isinstance(message.get("error"), dict)
                else newer.shown()
            )
            found.append(
                finding(
                    "http.newer_client",
                    SERVER,
                    False,
                    f"A client announcing protocol {types.version.LATEST_HANDSHAKE_VERSION} and capabilities the server does not know "
                    f"was refused ({said}), while a plain initialize works: the server parses strictly, so newer clients cannot "
                    "connect. Update the SDK (or ignore unknown fields).",
                )
            )
    return found, works


def probe_rate_limit(
    url: str, headers: Mapping[str, str], burst: int, *, behind_proxy: bool, timeout: float | None
) -> list[Finding]:
    """Up to ``burst`` requests as one client; then whether another client (or a forged header) gets through."""
    me = _identity(CLIENT_A) if behind_proxy else {}
    limited: HttpReply | None = None
    for i in range(burst):
        reply = http_post(url, initialize_request(f"burst-{i + 1}"), {**headers, **me}, timeout=timeout)
        if reply.status == 429:
            limited = reply
            sent = i + 1
            break
    if limited is None:
        return [
            finding(
                "http.rate_limit",
                SERVER,
                False,
                f"{burst} requests in a row were all served: no rate limit within {burst} requests. Limit each client "
                "(the article: 30 a minute) and answer 429 with Retry-After.",
            )
        ]
    retry_after = limited.header("Retry-After")
    valid = retry_after is not None and (retry_after.strip().isdigit() or _http_date(retry_after))
    found = [
        finding(
            "http.rate_limit", SERVER, True, f"Request {sent} of the burst got 429 with Retry-After: {retry_after}."
        )
        if valid
        else finding(
            "http.rate_limit",
            SERVER,
            False,
            f"Request {sent} of the burst got 429 without a valid Retry-After ({retry_after!r}): say when to come back, in seconds.",
        )
    ]
    if behind_proxy:
        other = http_post(
            url, initialize_request("burst-other-client"), {**headers, **_identity(CLIENT_B)}, timeout=timeout
        )
        if other.status == 429:
            found.append(
                finding(
                    "http.client_identity",
                    SERVER,
                    False,
                    f"Once client {CLIENT_A} was limited, client {CLIENT_B} (other CF-Connecting-IP and X-Forwarded-For through the same proxy) got 429 "
                    "too: the limit counts the proxy's address, so one busy client blocks everyone. Key it on the client's address "
                    "from the headers your proxy sets (CF-Connecting-IP, then X-Forwarded-For).",
                )
            )
        else:
            found.append(
                finding(
                    "http.client_identity",
                    SERVER,
                    True,
                    f"Client {CLIENT_B} was served ({other.shown()}) while {CLIENT_A} was limited: each client has its own budget.",
                )
            )
    else:
        forged = http_post(url, initialize_request("burst-forged"), {**headers, **_identity(FORGED)}, timeout=timeout)
        if forged.status == 429:
            found.append(
                finding(
                    "http.client_identity",
                    SERVER,
                    True,
                    f"A forged CF-Connecting-IP and X-Forwarded-For ({FORGED}) sent straight to the server were not believed: still limited.",
                )
            )
        else:
            found.append(
                finding(
                    "http.client_identity",
                    SERVER,
                    False,
                    f"Once limited, the same client sent a forged CF-Connecting-IP and X-Forwarded-For ({FORGED}) straight to the server "
                    f"and got past the limit ({forged.shown()}): anyone can buy a fresh budget per request. Believe those headers only from "
                    "your proxy's addresses (or accept traffic only through the proxy).",
                )
            )
    return found


def _http_date(value: str) -> bool:
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(value) is not None
    except (TypeError, ValueError):
        return False


def parse_headers(values: Sequence[str]) -> dict[str, str]:
    """``["Authorization: Bearer x"]`` -> {"Authorization": "Bearer x"}."""
    headers = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise CheckInputError(f'--header takes "Name: value", got {value!r}.')
        headers[name.strip()] = content.strip()
    return headers
