"""The remote server as a real process on 127.0.0.1: what a client sees over HTTP, its exit and its restart."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
from mcp.shared.exceptions import MCPError
from remotewire import ACCEPT, INIT

from servers.client import connect
from servers.remote import connect_http, running


def poll(condition, timeout: float = 10.0):
    """Call ``condition`` until it returns something true, within ``timeout`` seconds (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := condition():
            return found
    raise AssertionError("condition not met in time")


def test_a_remote_server_answers_each_deployment_behaviour_over_real_http() -> None:
    with running(
        token="s3cret", bot_check=True, bot_check_exempt_mcp=True, rate_limit=(3, 0.5), trusted_proxies=("10.9.9.9",)
    ) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
        unauthorized = httpx.post(server.url, json=INIT, headers={**ACCEPT, "CF-Connecting-IP": "192.0.2.1"})
        page = httpx.get(server.base + "/")
        with connect_http(server.url, headers={"Authorization": "Bearer s3cret"}) as session:
            tools = session.tools()

        def refused():
            reply = httpx.get(server.base + "/.well-known/oauth-protected-resource", headers=BROWSER)
            return reply if reply.status_code == 429 else None

        too_many = poll(refused)
        allowed_again = poll(
            lambda: httpx.get(server.base + "/.well-known/oauth-protected-resource", headers=BROWSER).status_code == 200
        )
        log = server.log()

    assert unauthorized.status_code == 401
    assert (
        unauthorized.headers["www-authenticate"]
        == f'Bearer resource_metadata="{server.base}/.well-known/oauth-protected-resource"'
    )
    assert page.status_code == 403 and "text/html" in page.headers["content-type"]
    assert {t["name"] for t in tools} == {"search_articles", "get_article"}
    assert int(too_many.headers["retry-after"]) >= 1
    assert allowed_again
    # The forged CF-Connecting-IP came straight from 127.0.0.1, not from the trusted proxy: ignored.
    assert any(line.startswith("POST /mcp 401 client=127.0.0.1 ") for line in log)
    assert not any("192.0.2.1" in line for line in log)
    assert any("rpc=tools/list" in line and "clientInfo=" in line for line in log)


BROWSER = {"User-Agent": "Mozilla/5.0"}


def test_forwarded_clients_share_the_proxy_budget_only_when_keyed_by_the_peer() -> None:
    # The process must see the real peer: its web server may not rewrite it from X-Forwarded-For.
    results = {}
    for key_by_peer_only in (True, False):
        with running(rate_limit=(3, 60), trusted_proxies=("127.0.0.1",), key_by_peer_only=key_by_peer_only) as server:
            codes = [
                httpx.get(
                    server.base + "/.well-known/oauth-protected-resource", headers={"X-Forwarded-For": f"203.0.113.{n}"}
                ).status_code
                for n in range(1, 5)
            ]
            # The server logs a request after answering it: wait for the fourth line rather than race it.
            lines = poll(
                lambda: (got := [line for line in server.log() if line.startswith("GET")]) and len(got) == 4 and got
            )
            results[key_by_peer_only] = (codes, lines)
    assert results[True][0] == [200, 200, 200, 429]
    assert all("client=127.0.0.1" in line for line in results[True][1] if line.startswith("GET"))
    assert results[False][0] == [200, 200, 200, 200]
    assert "client=203.0.113.4" in results[False][1][-1]


def test_the_server_exits_after_exit_after_requests_and_restarts_on_the_same_url() -> None:
    with running(exit_after=1) as server:
        url = server.url
        assert httpx.post(url, json=INIT, headers=ACCEPT).status_code == 200
        assert server.wait(timeout=15) == 0
        try:
            httpx.post(url, json=INIT, headers=ACCEPT)
            refused = False
        except httpx.ConnectError:
            refused = True
        server.restart()
        again = httpx.post(server.url, json=INIT, headers=ACCEPT)
    assert refused
    assert server.url == url and again.status_code == 200
    assert any(line.startswith("exiting after 1 requests") for line in server.log())
    assert sum(line.startswith("ready ") for line in server.log()) == 2


def test_a_bad_flag_stops_the_server_with_a_sentence_not_a_traceback() -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "servers.remote", "--rate-limit", "lots"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert finished.returncode != 0
    assert "write requests/seconds" in finished.stderr and "Traceback" not in finished.stderr


def test_over_stdio_the_server_dies_after_exit_after_requests_and_nothing_starts_it_again() -> None:
    # Request 1 is the client's discovery; 2 and 3 are answered; 4 finds the process gone.
    with connect("remote", args=("--stdio", "--exit-after", "3"), timeout=30) as session:
        tools = session.tools()
        found = session.call("search_articles", query="oauth")
        failures = []
        for _ in range(2):
            try:
                session.call("search_articles", query="oauth")
            except MCPError as exc:
                failures.append(str(exc))
    assert len(tools) == 2 and found["structuredContent"]["status"] == "ok"
    assert failures == ["Connection closed", "Connection closed"]
