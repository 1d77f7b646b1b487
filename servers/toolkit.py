"""Thin protocol wiring shared by the course's embedded servers.

Tool logic lives in plain functions that return results in wire format (see
``grader.taxonomy``); this module only publishes them over MCP. Each tool has one
pydantic model for its input. Arguments that fail that model come back as a
``validation`` error result, never as a crash or a protocol error: JSON-RPC errors
are kept for what the spec reserves them for, an unknown tool
(shared/seeds/000_99b6002e9d2fa51e.txt, "Флаг isError").
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from pydantic import BaseModel, ValidationError

from grader.taxonomy import validation_error
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

log = logging.getLogger("servers")


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, description for the model, input model, annotations and handler."""

    name: str
    description: str
    input_model: type[BaseModel]
    handler: Callable[[BaseModel], dict[str, Any]]
    annotations: types.ToolAnnotations
    title: str | None = None

    def to_tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_model.model_json_schema(),
            annotations=self.annotations,
        )


def validation_result(tool: str, exc: ValidationError) -> dict[str, Any]:
    """Turn pydantic's complaint about the arguments into a ``validation`` error result."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(arguments)"
    reason = first["msg"]
    return validation_error(
        f"Invalid arguments for {tool}: {field}: {reason}. Correct the input and call again; "
        "replaying the same arguments will fail the same way.",
        field=field,
        reason=reason,
    )


def to_call_tool_result(result: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult.model_validate(result)


def build_server(
    name: str, specs: Sequence[ToolSpec], *, version: str = "1.0", instructions: str | None = None
) -> Server:
    """A low-level MCP server publishing ``specs`` as tools."""
    by_name = {spec.name: spec for spec in specs}

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[spec.to_tool() for spec in specs])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            # The one case the spec keeps for a protocol error: the tool does not exist.
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        try:
            arguments = spec.input_model.model_validate(params.arguments or {})
        except ValidationError as exc:
            return to_call_tool_result(validation_result(spec.name, exc))
        # Handlers run in a worker thread, so a handler that never returns cannot block the event
        # loop: a client's timeout still fires, in process as over stdio.
        result = await anyio.to_thread.run_sync(spec.handler, arguments, abandon_on_cancel=True)
        return to_call_tool_result(result)

    return Server(
        name,
        version=version,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run_stdio(server: Server) -> None:
    """Serve ``server`` on stdin/stdout until the client closes the connection."""
    from mcp.server.stdio import stdio_server

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
