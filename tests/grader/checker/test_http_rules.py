"""``grader.checker.http_rules``: what a client meets at a server's URL, against a strict server and the remote course server."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from typing import Any

import pytest

from grader.checker.checklist import checklist
from grader.checker.connect import CLIENT_NAME
from grader.checker.findings import Report, Sample
from grader.checker.http_rules import probe_initialize
from grader.cli import main
from grader.server_check import check_url
from servers.remote import running

from .shop import REPO, item, only


class StrictMCP(http.server.BaseHTTPRequestHandler):
    """Answers initialize like an old SDK that parses strictly: an unknown client capability is an error."""

    strict = True

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        capabilities = request["params"].get("capabilities", {})
        if self.strict and capabilities:
            field = next(iter(capabilities))
            answer = {
                "jsonrpc": "2.0",
                "id": request["id"],
                "error": {"code": -32602, "message": f'Unrecognized field "{field}"'},
            }
        else:
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "strict", "version": "1"},
            }
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def strict_url():
    def serve(strict: bool) -> str:
        handler = type("Handler", (StrictMCP,), {"strict": strict})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/mcp"

    servers: list[http.server.ThreadingHTTPServer] = []
    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_server_that_refuses_a_newer_clients_capabilities_fails_item_4_and_a_tolerant_one_passes(strict_url) -> None:
    strict, _ = probe_initialize(strict_url(True), {}, 10)
    tolerant, _ = probe_initialize(strict_url(False), {}, 10)

    refused = next(f for f in strict if f.rule == "http.newer_client")
    assert refused.passed is False and 'Unrecognized field "elicitation"' in refused.message
    assert item(Report("strict", findings=strict), 4).result == "FAIL"
    assert item(Report("tolerant", findings=tolerant, url="x"), 4).result == "pass"


# --- the HTTP items against the remote course server, a real process on 127.0.0.1 ------------------------------------


HTTP_CASES = [
    (2, {"bot_check": True}, {"bot_check": True, "bot_check_exempt_mcp": True}, {}),
    (2, {"cached_reply": True}, {}, {}),
    (3, {"framework_defaults": True}, {}, {}),
    (5, {}, {"rate_limit": (12, 60)}, {"burst": 20}),
    (5, {"rate_limit": (12, 60), "trusted_proxies": ("127.0.0.1",)}, {"rate_limit": (12, 60)}, {"burst": 20}),
    (
        5,
        {"rate_limit": (12, 60), "trusted_proxies": ("127.0.0.1",), "key_by_peer_only": True},
        {"rate_limit": (12, 60), "trusted_proxies": ("127.0.0.1",)},
        {"burst": 20, "behind_proxy": True},
    ),
]


@pytest.mark.parametrize(
    ("number", "flawed", "fixed", "kwargs"),
    HTTP_CASES,
    ids=[
        "2-bot-check",
        "2-cached-reply",
        "3-framework-cookies",
        "5-no-limit",
        "5-forged-cf-connecting-ip",
        "5-proxy-ip",
    ],
)
def test_each_http_item_fails_on_the_deployment_mistake_and_passes_once_fixed(
    number: int, flawed: dict, fixed: dict, kwargs: dict
) -> None:
    results = []
    for options in (flawed, fixed):
        with running(**options) as server:
            results.append(item(check_url(server.url, server_name="remote", timeout=15, **kwargs), number))

    bad, good = results
    assert bad.result == "FAIL", bad
    assert good.result == "pass", good


def test_a_proxys_html_challenge_and_a_frameworks_login_redirect_are_named() -> None:
    with running(bot_check=True) as server:
        html = only(check_url(server.url, server_name="remote", timeout=15), "http.initialize", "server")
    with running(framework_defaults=True) as server:
        report = check_url(server.url, server_name="remote", timeout=15)

    assert "HTML page" in html.message and "403" in html.message
    assert "/login" in only(report, "http.initialize", "server").message
    assert "session" in only(report, "http.no_cookie", "server").message
    assert only(report, "tools.list", "server").passed is False  # no session could be opened


def test_a_server_asking_for_a_token_leaves_item_2_to_answer_until_the_header_is_given() -> None:
    with running(token="s3cret") as server:
        asked = check_url(server.url, server_name="remote", timeout=15)
        signed_in = check_url(server.url, server_name="remote", headers={"Authorization": "Bearer s3cret"}, timeout=15)

    assert item(asked, 2).result == "answer yourself" and "--header" in item(asked, 2).evidence
    assert item(signed_in, 2).result == "pass" and signed_in.tools == ["search_articles", "get_article"]


def test_over_http_every_rule_runs_through_a_real_session_and_the_fragments_are_read() -> None:
    with running() as server:
        report = check_url(
            server.url,
            server_name="remote",
            expected_tools=["search_articles", "get_article"],
            samples=[
                Sample("search_articles", {"query": "proxy"}, "ok"),
                Sample("search_articles", {"query": "pricing"}, "empty"),
            ],
            timeout=15,
        )

    lines = {line.item.number: line for line in checklist(report)}
    assert [lines[n].result for n in (1, 2, 3, 4, 8, 10, 11)] == ["pass"] * 7
    assert lines[13].result == "answer yourself" and CLIENT_NAME in lines[13].evidence
    assert report.protocol_version


def test_check_server_url_checklist_runs_as_a_command_and_exits_1_on_a_failed_item() -> None:
    with running(bot_check=True) as server:
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "check-server",
                "--url",
                server.url,
                "--checklist",
                "--json",
                "--timeout",
                "15",
            ],
            check=False,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )

    lines = json.loads(completed.stdout)
    assert completed.returncode == 1, completed.stderr
    assert [line["item"] for line in lines] == list(range(1, 14))
    assert lines[1]["result"] == "FAIL" and lines[5]["result"] == "answer yourself"


def test_http_only_flags_without_a_url_are_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check-server", "--command", "python -m servers.notes", "--burst", "5"])

    assert code == 2 and "give --url" in capsys.readouterr().err


def test_a_session_refused_after_the_probes_is_a_finding_and_the_burst_still_runs() -> None:
    with running(rate_limit=(3, 60)) as server:
        report = check_url(server.url, server_name="remote", burst=5, timeout=15)

    assert only(report, "tools.list", "server").passed is False
    assert item(report, 1).result == "answer yourself" and "No MCP session" in item(report, 1).evidence
    assert item(report, 5).result == "pass"
