"""The notes server: its tools, and the log of every call it keeps for checking descriptions with a real client."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from servers.client import connect, stdio_params
from servers.notes.server import RICH, VAGUE, Notes, build_server, read_call_log


def test_every_call_is_logged_with_its_arguments_and_outcome(tmp_path):
    log = tmp_path / "calls.jsonl"
    with connect(build_server(Notes(), call_log=log)) as session:
        session.call("add_note", text="deploy on Friday")
        session.call("list_notes", contains="deploy")
        session.call("list_notes", contains="zebra")
        session.call("add_note", text="  ")
    calls = read_call_log(log)
    assert [(c["tool"], c["arguments"], c["outcome"]) for c in calls] == [
        ("add_note", {"text": "deploy on Friday"}, "ok"),
        ("list_notes", {"contains": "deploy"}, "ok"),
        ("list_notes", {"contains": "zebra"}, "empty"),
        ("add_note", {"text": "  "}, "error"),
    ]
    assert all(c["client"] and c["ms"] >= 0 and c["characters"] > 0 for c in calls)


def test_no_call_no_log(tmp_path):
    with connect(build_server(Notes(), call_log=tmp_path / "calls.jsonl")) as session:
        session.tools()
    assert read_call_log(tmp_path / "calls.jsonl") == []


def test_a_log_that_cannot_be_written_costs_the_call_nothing(tmp_path):
    with connect(build_server(Notes(), call_log=tmp_path / "missing" / "calls.jsonl")) as session:
        assert session.call("add_note", text="still saved")["structuredContent"] == {"count": 1}


def test_vague_descriptions_serve_the_same_tools_with_one_word_each():
    for descriptions, said in (("vague", VAGUE), ("rich", RICH)):
        with connect(build_server(Notes(), descriptions=descriptions)) as session:
            assert {t["name"]: t["description"] for t in session.tools()} == said


def test_the_stdio_server_reads_its_log_and_descriptions_from_the_environment(tmp_path):
    log = tmp_path / "calls.jsonl"
    params = stdio_params("servers.notes", env={"NOTES_CALL_LOG": str(log), "NOTES_DESCRIPTIONS": "vague"})
    with connect(params) as session:
        assert {t["description"] for t in session.tools()} == set(VAGUE.values())
        session.call("list_notes", {})
    (call,) = read_call_log(log)
    assert (call["tool"], call["outcome"]) == ("list_notes", "empty")


def test_a_client_that_introduces_itself_in_initialize_is_named_in_the_log(tmp_path):
    # A client of an earlier protocol revision says who it is once, in initialize; the log names it on every call.
    log = tmp_path / "calls.jsonl"
    server = subprocess.Popen(
        [sys.executable, "-m", "servers.notes"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "NOTES_CALL_LOG": str(log)},
    )
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "older-client", "version": "9"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "list_notes", "arguments": {"contains": "x"}},
        },
    ]
    try:
        replies = []
        for message in messages:
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            if "id" in message:
                replies.append(json.loads(server.stdout.readline()))
        server.stdin.close()
        server.wait(timeout=30)
    finally:
        server.kill()
        server.stdout.close()
    assert replies[1]["result"]["structuredContent"] == {"notes": []}
    (call,) = read_call_log(log)
    assert (call["client"], call["tool"], call["arguments"]) == ("older-client 9", "list_notes", {"contains": "x"})
