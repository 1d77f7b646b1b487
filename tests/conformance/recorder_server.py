"""A stdio MCP server that records how it was started: ``recorder_server.py RECORD_FILE [args...]``.

It appends one JSON line with its argv, working directory and environment to RECORD_FILE,
then serves one tool, so Claude Code's health check sees a working server.
"""

import json
import os
import sys

import mcp_types as types
from pydantic import BaseModel

from grader.taxonomy import success_result
from servers.toolkit import ToolSpec, build_server, run_stdio


class Nothing(BaseModel):
    pass


with open(sys.argv[1], "a", encoding="utf-8") as record:
    record.write(json.dumps({"argv": sys.argv[2:], "cwd": os.getcwd(), "env": dict(os.environ)}) + "\n")

run_stdio(
    build_server(
        "recorder",
        [
            ToolSpec(
                "echo",
                "Answers ok.",
                Nothing,
                lambda _: success_result("ok", {}),
                types.ToolAnnotations(read_only_hint=True),
            )
        ],
    )
)
