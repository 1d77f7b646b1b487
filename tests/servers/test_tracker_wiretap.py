"""The wiretap as a real process between a client and the stdio tracker: what it records is what crossed the pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client

from servers.client import connect_params, stdio_params
from servers.tracker.wiretap import read_log


def tapped(log: Path) -> tuple[str, list[str]]:
    return sys.executable, ["-m", "servers.tracker.wiretap", str(log), "--", sys.executable, "-m", "servers.tracker"]


def test_a_client_through_the_wiretap_gets_the_same_answers_and_every_line_is_recorded_in_order(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    command, args = tapped(log)
    with connect_params(command, args, env={"TRACKER_ISSUES": "5"}, timeout=20) as session:
        tools = session.tools()
    messages = read_log(log)
    sides = [side for side, _ in messages]
    assert set(sides) == {"client", "server"} and sides[0] == "client"
    requests = {m["id"]: m for side, m in messages if side == "client" and "id" in m}
    answers = {m["id"]: m for side, m in messages if side == "server" and "id" in m}
    assert set(answers) <= set(requests)
    listed = next(answers[i]["result"]["tools"] for i, m in requests.items() if m["method"] == "tools/list")
    assert [t["name"] for t in listed] == [t["name"] for t in tools]


def test_the_legacy_handshake_is_recorded_as_initialize_then_initialized_then_the_first_request(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    _, args = tapped(log)

    async def handshake() -> None:
        with anyio.fail_after(20):
            async with Client(
                stdio_client(stdio_params("servers.tracker.wiretap", args=tuple(args[2:]))), mode="legacy"
            ) as client:
                await client.list_tools()

    anyio.run(handshake)
    (side1, init), (side2, answer), (side3, initialized), (side4, listing) = read_log(log)[:4]
    assert (side1, side2, side3, side4) == ("client", "server", "client", "client")
    assert init["jsonrpc"] == "2.0" and init["method"] == "initialize"
    assert answer["id"] == init["id"] and answer["result"]["protocolVersion"] == init["params"]["protocolVersion"]
    assert set(answer["result"]["capabilities"]) >= {"tools", "resources", "prompts"}
    assert initialized == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert listing["method"] == "tools/list"


def test_a_wiretap_without_a_command_says_how_to_call_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "servers.tracker.wiretap", str(tmp_path / "log")],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("usage: python -m servers.tracker.wiretap LOG -- COMMAND")
    assert "Traceback" not in done.stderr


def test_a_command_that_cannot_start_is_a_sentence_not_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "servers.tracker.wiretap",
            str(tmp_path / "log"),
            "--",
            str(tmp_path / "no-such-server"),
        ],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert done.returncode == 127
    assert "cannot start" in done.stderr and "check the command after --" in done.stderr
    assert "Traceback" not in done.stderr
