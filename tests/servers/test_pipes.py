"""The course's stdio transport (servers.pipes), in a real server process over real pipes.

The loop reads and writes the wire itself: while a tool runs, the only worker thread is the tool's own (the
SDK's transport keeps one more, blocked reading stdin). What a handler prints goes to stderr, never onto the
wire, and a message longer than asyncio's default line limit still arrives whole.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from servers.client import connect_params
from servers.pipes import LINE_LIMIT

SERVER = """
import sys, threading
from typing import Any
from pydantic import BaseModel
from servers.toolkit import ToolSpec, build_server, run_stdio

class Text(BaseModel):
    text: str

def threads(arguments: Text) -> dict[str, Any]:
    print("printed by the handler")  # must not reach the wire
    workers = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    return {"content": [{"type": "text", "text": str(len(arguments.text))}], "structuredContent": {"workers": workers}}

run_stdio(build_server("pipes-probe", [ToolSpec("threads", "Count threads.", Text, threads, None)]))
"""


def test_the_wire_is_served_by_the_loop_and_prints_go_to_stderr() -> None:
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "probe_server.py"
        script.write_text(SERVER, encoding="utf-8")
        errors = Path(folder) / "stderr.log"
        root = Path(__file__).resolve().parents[2]
        with errors.open("w") as errlog:
            with connect_params(
                sys.executable, [str(script)], env={"PYTHONPATH": str(root)}, cwd=root, timeout=30, errlog=errlog
            ) as session:
                result = session.call("threads", text="x")
                long = session.call("threads", text="y" * (2 * 65536))  # past asyncio's default 64 KiB lines
        assert result["isError"] is False
        assert len(result["structuredContent"]["workers"]) == 1, result["structuredContent"]["workers"]
        assert long["content"][0]["text"] == str(2 * 65536)
        assert "printed by the handler" in errors.read_text(encoding="utf-8")
    assert LINE_LIMIT >= 2**20
