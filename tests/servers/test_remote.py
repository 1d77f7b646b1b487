"""The remote course server in memory: its tools, and each deployment behaviour its options turn on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
import pytest
from remotewire import ACCEPT, INIT

from servers.client import connect
from servers.remote import Options, RemoteApp, build_server, client_identity
from servers.remote.articles import fragment, get_article, search_articles

pytestmark = pytest.mark.anyio

BROWSER = {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"}


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def serving(
    options: Options | None = None, **kw
) -> AsyncIterator[tuple[RemoteApp, Callable[..., httpx.AsyncClient]]]:
    app = RemoteApp(options or Options(), **kw)
    async with app.lifespan():

        def client(peer: str = "127.0.0.1", **extra) -> httpx.AsyncClient:
            transport = httpx.ASGITransport(app=app, client=(peer, 50000))
            return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000", **extra)

        yield app, client


def test_search_returns_one_word_boundary_fragment_per_published_article_and_never_a_draft() -> None:
    found = search_articles("proxy")
    assert found["status"] == "ok"
    assert [r["slug"] for r in found["results"]] == ["rate-limits", "bot-protection"]
    assert all(r["fragment"].endswith(" ...") for r in found["results"])
    assert search_articles("pricing")["results"] == []
    assert get_article("pricing-draft")["status"] == "not_found"
    assert search_articles("  ")["status"] == "error"


def test_a_fragment_never_ends_in_a_cut_word() -> None:
    text = "alpha beta gamma delta"
    assert fragment(text, 12) == "alpha beta ..."
    assert fragment(text, 100) == text


def test_the_tools_are_read_only_and_answer_with_statuses() -> None:
    with connect(build_server()) as session:
        tools = {t["name"]: t for t in session.tools()}
        missing = session.call("get_article", slug="nope")
        counts = (len(tools), len(session.resources()), len(session.prompts()))
    assert set(tools) == {"search_articles", "get_article"}
    assert all(t["annotations"]["readOnlyHint"] is True for t in tools.values())
    assert missing["isError"] is False and missing["structuredContent"]["status"] == "not_found"
    assert counts == (2, 1, 1)


async def test_initialize_is_answered_and_logged_with_protocol_version_and_client() -> None:
    async with serving() as (app, client), client() as http:
        reply = await http.post("/mcp", json=INIT, headers=ACCEPT)
    assert reply.status_code == 200
    assert reply.json()["result"]["serverInfo"]["name"] == "remote-articles"
    assert app.lines == [
        "POST /mcp 200 client=127.0.0.1 rpc=initialize protocolVersion=2025-11-25 clientInfo=test-client/9.9"
    ]


async def test_without_the_token_the_server_answers_401_naming_its_protected_resource_metadata() -> None:
    async with serving(Options(token="s3cret")) as (_app, client), client() as http:
        bare = await http.post("/mcp", json=INIT, headers=ACCEPT)
        wrong = await http.post("/mcp", json=INIT, headers={**ACCEPT, "Authorization": "Bearer nope"})
        metadata = await http.get("/.well-known/oauth-protected-resource")
        signed_in = await http.post("/mcp", json=INIT, headers={**ACCEPT, "Authorization": "Bearer s3cret"})
    assert bare.status_code == 401
    assert (
        bare.headers["www-authenticate"]
        == 'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource"'
    )
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert metadata.json()["resource"] == "http://127.0.0.1:8000/mcp"
    assert metadata.json()["authorization_servers"]
    assert signed_in.status_code == 200


async def test_the_bot_check_answers_a_program_with_html_until_mcp_is_exempt() -> None:
    async with serving(Options(bot_check=True)) as (_, client), client() as http:
        program = await http.post("/mcp", json=INIT, headers=ACCEPT)
        browser = await http.post("/mcp", json=INIT, headers={**ACCEPT, **BROWSER})
    async with serving(Options(bot_check=True, bot_check_exempt_mcp=True)) as (_, client), client() as http:
        exempt = await http.post("/mcp", json=INIT, headers=ACCEPT)
        page = await http.get("/")
    assert program.status_code == 403 and program.headers["content-type"].startswith("text/html")
    assert "<html>" in program.text
    assert browser.status_code == 200
    assert exempt.status_code == 200
    assert page.status_code == 403  # the rest of the site is still protected


async def test_a_caching_proxy_replays_the_first_reply_to_a_different_request() -> None:
    async with serving(Options(cached_reply=True)) as (app, client), client() as http:
        first = await http.post("/mcp", json=INIT, headers=ACCEPT)
        other = await http.post("/mcp", json={**INIT, "id": 2, "method": "ping"}, headers=ACCEPT)
    assert other.headers["x-cache"] == "HIT"
    assert other.json() == first.json()  # id 1 and an initialize result, for a ping with id 2
    assert app.lines[-1].endswith("cache=HIT")


async def test_framework_defaults_set_a_cookie_and_redirect_a_post_without_csrf_token_to_login() -> None:
    async with serving(Options(framework_defaults=True)) as (_, client), client() as http:
        posted = await http.post("/mcp", json=INIT, headers=ACCEPT)
        with_token = await http.post("/mcp", json=INIT, headers={**ACCEPT, "X-CSRF-Token": "t"})
    assert posted.status_code == 302 and posted.headers["location"] == "/login"
    assert posted.headers["set-cookie"].startswith("session=")
    assert with_token.status_code == 200 and "set-cookie" in with_token.headers


async def test_over_the_rate_limit_a_client_gets_429_with_retry_after_until_the_window_passes() -> None:
    clock = Clock()
    async with serving(Options(rate_limit=(2, 10.0)), clock=clock) as (_, client), client() as http:
        codes = [(await http.get("/.well-known/oauth-protected-resource")).status_code for _ in range(2)]
        refused = await http.get("/.well-known/oauth-protected-resource")
        clock.now += 10.0
        later = await http.get("/.well-known/oauth-protected-resource")
    assert codes == [200, 200]
    assert refused.status_code == 429 and refused.headers["retry-after"] == "10"
    assert refused.json()["error"] == "rate_limited"
    assert later.status_code == 200


async def test_keyed_by_the_proxy_ip_every_client_shares_one_budget() -> None:
    clock = Clock()
    shared = Options(rate_limit=(2, 60.0), trusted_proxies=("10.0.0.1",), key_by_peer_only=True)
    fixed = Options(rate_limit=(2, 60.0), trusted_proxies=("10.0.0.1",))
    results = {}
    for name, options in (("peer", shared), ("client", fixed)):
        async with serving(options, clock=clock) as (app, client), client("10.0.0.1") as proxy:
            codes = []
            for user in ("203.0.113.1", "203.0.113.2", "203.0.113.3"):
                reply = await proxy.get("/.well-known/oauth-protected-resource", headers={"X-Forwarded-For": user})
                codes.append(reply.status_code)
            results[name] = (codes, app.lines)
    assert results["peer"][0] == [200, 200, 429]
    assert all("client=10.0.0.1" in line for line in results["peer"][1])
    assert results["client"][0] == [200, 200, 200]
    assert "client=203.0.113.3" in results["client"][1][-1]


async def test_a_forged_cf_connecting_ip_sent_straight_to_the_server_is_ignored() -> None:
    options = Options(rate_limit=(1, 60.0), trusted_proxies=("10.0.0.1",))
    async with serving(options, clock=Clock()) as (app, client), client("198.51.100.66") as attacker:
        first = await attacker.get("/.well-known/oauth-protected-resource", headers={"CF-Connecting-IP": "192.0.2.1"})
        second = await attacker.get("/.well-known/oauth-protected-resource", headers={"CF-Connecting-IP": "192.0.2.2"})
    assert (first.status_code, second.status_code) == (200, 429)
    assert all("client=198.51.100.66" in line for line in app.lines)


def test_forwarding_headers_are_read_right_to_left_past_trusted_proxies_only() -> None:
    options = Options(trusted_proxies=("10.0.0.1", "10.0.0.2"))
    chain = {"x-forwarded-for": "6.6.6.6, 203.0.113.9, 10.0.0.2"}
    assert client_identity("10.0.0.1", chain, options) == "203.0.113.9"
    assert client_identity("10.0.0.1", {"cf-connecting-ip": "203.0.113.7"}, options) == "203.0.113.7"
    assert client_identity("192.0.2.50", chain, options) == "192.0.2.50"
    assert client_identity("10.0.0.1", {}, options) == "10.0.0.1"


async def test_the_daily_cap_refuses_every_client_until_the_next_utc_day() -> None:
    wall = Clock(5 * 86400 + 86000.0)  # 400 seconds before midnight UTC
    async with serving(Options(daily_cap=2), wall=wall) as (_, client):
        codes = []
        for peer in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
            async with client(peer) as http:
                reply = await http.get("/.well-known/oauth-protected-resource")
                codes.append(reply.status_code)
        wall.now += 400
        async with client("192.0.2.3") as http:
            tomorrow = await http.get("/.well-known/oauth-protected-resource")
    assert codes == [200, 200, 429]
    assert reply.headers["retry-after"] == "400" and reply.json()["error"] == "daily_cap"
    assert tomorrow.status_code == 200


async def test_with_its_store_down_the_limiter_fails_open_or_closed_as_configured() -> None:
    limits = {"rate_limit": (1, 60.0)}
    async with serving(Options(limiter="down-open", **limits)) as (app_open, client), client() as http:
        opened = [(await http.get("/.well-known/oauth-protected-resource")).status_code for _ in range(3)]
    async with serving(Options(limiter="down-closed", **limits)) as (_, client), client() as http:
        closed = await http.get("/.well-known/oauth-protected-resource")
    assert opened == [200, 200, 200]
    assert "limiter=down(fail-open)" in app_open.lines[0]
    assert closed.status_code == 503 and closed.headers["retry-after"] == "30"


async def test_after_exit_after_requests_the_app_asks_to_exit_once() -> None:
    calls = []
    async with serving(Options(exit_after=2), on_exit=lambda: calls.append(1)) as (app, client), client() as http:
        for _ in range(3):
            await http.get("/.well-known/oauth-protected-resource")
    assert calls == [1]
    assert app.lines[2].startswith("exiting after 2 requests")


def test_options_round_trip_through_the_command_line() -> None:
    from servers.remote.process import parser

    options = Options(
        token="t",
        bot_check=True,
        rate_limit=(3, 1.5),
        trusted_proxies=("10.0.0.1",),
        daily_cap=9,
        limiter="down-open",
        exit_after=4,
    )
    args = vars(parser().parse_args(options.to_args()))
    assert args["token"] == "t" and args["rate_limit"] == (3, 1.5) and args["trusted_proxies"] == ["10.0.0.1"]
    assert (args["daily_cap"], args["limiter"], args["exit_after"], args["bot_check"]) == (9, "down-open", 4, True)
    with pytest.raises(ValueError, match="limiter"):
        Options(limiter="sideways")
