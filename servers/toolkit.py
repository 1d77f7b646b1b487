"""Thin protocol wiring shared by the course's embedded servers.

Tool logic lives in plain functions that return results in wire format (see
``grader.taxonomy``); this module only publishes them over MCP. Each tool has one
pydantic model for its input. Arguments that fail that model come back as a
``validation`` error result, never as a crash or a protocol error: JSON-RPC errors
are kept for what the spec reserves them for, an unknown tool
(*Exam guide › The isError flag: schema and example*).
"""

from __future__ import annotations

import copy
import functools
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate
from pydantic import BaseModel, ValidationError

from servers import in_turn as sequential
from servers.pipes import loop_stdio, servable

log = logging.getLogger("servers")

# The MCP specification's error code for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002


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
            input_schema=input_schema(self.input_model),
            annotations=self.annotations,
        )


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a tool's input model: a copy of the one built for the model once (pydantic builds it anew
    on each call), so a caller that changes what it was given changes no other tool list."""
    return copy.deepcopy(_built_schema(model))


@functools.cache
def _built_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


@dataclass(frozen=True)
class ResourceSpec:
    """A resource at a fixed URI; ``read`` returns its text (JSON for the course's catalogs)."""

    uri: str
    name: str
    description: str
    read: Callable[[], str]
    mime_type: str = "application/json"

    def to_resource(self) -> types.Resource:
        return types.Resource(uri=self.uri, name=self.name, description=self.description, mime_type=self.mime_type)


@dataclass(frozen=True)
class TemplateSpec:
    """A family of resources addressed by a URI template such as ``tracker://issues/{key}``."""

    uri_template: str
    name: str
    description: str
    read: Callable[[dict[str, str]], str | None]  # None: no such resource
    mime_type: str = "application/json"

    @functools.cached_property
    def template(self) -> UriTemplate:
        """The template parsed by the SDK (RFC 6570), which matches URIs and percent-decodes what it captures."""
        return UriTemplate.parse(self.uri_template)

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's variables read from ``uri``, or None when the URI is not one of this family's.

        Each variable must be a non-empty single value: ``issues/`` names no issue.
        """
        found = self.template.match(uri)
        if found is None or not all(isinstance(value, str) and value for value in found.values()):
            return None
        return found  # type: ignore[return-value]

    def to_template(self) -> types.ResourceTemplate:
        return types.ResourceTemplate(
            uri_template=self.uri_template, name=self.name, description=self.description, mime_type=self.mime_type
        )


@dataclass(frozen=True)
class PromptSpec:
    """A user-invoked prompt template; ``render`` turns the arguments into the user message."""

    name: str
    description: str
    arguments: tuple[tuple[str, str, bool], ...]  # (name, description, required)
    render: Callable[[dict[str, str]], str]

    def to_prompt(self) -> types.Prompt:
        return types.Prompt(
            name=self.name,
            description=self.description,
            arguments=[types.PromptArgument(name=n, description=d, required=r) for n, d, r in self.arguments],
        )


def validation_result(tool: str, exc: ValidationError) -> dict[str, Any]:
    """Turn pydantic's complaint about the arguments into a ``validation`` error result."""
    # The reference model's builder, imported here and not with the module: the learner host builds
    # its servers with this module and must hold nothing of the reference model (it passes its own
    # ``invalid_arguments`` to build_server).
    from grader.taxonomy import validation_error

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
    name: str,
    specs: Sequence[ToolSpec],
    *,
    version: str = "1.0",
    instructions: str | None = None,
    resources: Sequence[ResourceSpec] = (),
    templates: Sequence[TemplateSpec] = (),
    prompts: Sequence[PromptSpec] = (),
    invalid_arguments: Callable[[str, ValidationError], dict[str, Any]] = validation_result,
    run: Callable[..., Any] | None = None,
) -> Server:
    """A low-level MCP server publishing ``specs`` as tools, and resources, templates and prompts.

    ``invalid_arguments(tool, error)`` answers a call whose arguments fail the tool's input model
    (default: a ``validation`` error result). Each handler runs in a worker thread, so one that never
    returns cannot block the event loop: a client's timeout still fires, in process as over stdio.
    ``run(handler, *args)``, when given, runs them instead, in the event loop's own thread: for a
    server over stdio whose client stops it when a call hangs (the learner host), which spares each
    call the hop to a worker thread and back.
    """

    async def handle(handler: Callable[..., Any], *args: Any) -> Any:
        if run is not None:
            return run(handler, *args)
        return await anyio.to_thread.run_sync(handler, *args, abandon_on_cancel=True)

    by_name = {spec.name: spec for spec in specs}
    by_uri = {spec.uri: spec for spec in resources}
    prompt_by_name = {spec.name: spec for spec in prompts}

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
            return to_call_tool_result(invalid_arguments(spec.name, exc))
        return to_call_tool_result(await handle(spec.handler, arguments))

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[spec.to_resource() for spec in resources])

    async def list_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[spec.to_template() for spec in templates])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri in by_uri:
            spec = by_uri[uri]
            text = await handle(spec.read)
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type=spec.mime_type, text=text)]
            )
        for template in templates:
            match = template.match(uri)
            if match is not None:
                text = await handle(template.read, match)
                if text is not None:
                    contents = types.TextResourceContents(uri=uri, mime_type=template.mime_type, text=text)
                    return types.ReadResourceResult(contents=[contents])
        raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")

    async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[spec.to_prompt() for spec in prompts])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        spec = prompt_by_name.get(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        arguments = dict(params.arguments or {})
        missing = [n for n, _, required in spec.arguments if required and not arguments.get(n)]
        if missing:
            raise MCPError(types.INVALID_PARAMS, f"Prompt {spec.name} needs: {', '.join(missing)}")
        text = spec.render(arguments)
        return types.GetPromptResult(
            description=spec.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    handlers: dict[str, Any] = {"on_list_tools": list_tools, "on_call_tool": call_tool}
    if resources or templates:
        handlers.update(
            on_list_resources=list_resources, on_list_resource_templates=list_templates, on_read_resource=read_resource
        )
    if prompts:
        handlers.update(on_list_prompts=list_prompts, on_get_prompt=get_prompt)
    server = Server(name, version=version, instructions=instructions, **handlers)
    server.middleware.append(ConnectionLog())
    return server


class ConnectionLog:
    """Log who connected, once per connection: the protocol version and the client's name and version.

    *Common mistakes › 1.1 "Unrecognized field": client and server on different protocol versions*: when a client
    cannot connect, this line tells which client and which protocol version it spoke. The client
    introduces itself in ``initialize`` (handshake era) or in every request's ``_meta`` (2026 era).
    """

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if getattr(ctx, "request_id", None) is not None:
            params = ctx.params if isinstance(ctx.params, dict) else {}
            meta = ctx.meta if isinstance(getattr(ctx, "meta", None), dict) else {}
            info = params.get("clientInfo") or meta.get(types.CLIENT_INFO_META_KEY) or {}
            version = params.get("protocolVersion") or meta.get(types.PROTOCOL_VERSION_META_KEY) or ctx.protocol_version
            who = f"{info.get('name', '?')} {info.get('version', '')}".strip() if isinstance(info, dict) else str(info)
            # The 2026 era has no handshake: log each client the first time it is seen.
            if version and (str(version), who) not in self._seen:
                self._seen.add((str(version), who))
                log.info("client connected: protocolVersion=%s clientInfo=%s", version, who or "(none)")
        return await call_next(ctx)


def run_stdio(server: Server, *, in_turn: bool = False) -> None:
    """Serve ``server`` (low-level, or an MCPServer) on stdin/stdout until the client closes the connection.

    ``in_turn``: a 2026-era client on a pipe or socket is served one request at a time (``servers.in_turn``), for a
    client that waits for each answer, such as the grader's checks; any other client as the SDK serves it.
    """
    server = getattr(server, "_lowlevel_server", server)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    log.setLevel(logging.INFO)

    async def main() -> None:
        if servable(0) and servable(1):  # pipes or sockets: read and written on the loop, no thread hops
            async with loop_stdio() as (lines, out):
                await serve_wire(server, lines, out, in_turn=in_turn)
        else:
            await serve_wire(server, None, None)

    anyio.run(main)


async def serve_wire(server: Server, lines: Any, out: Any, *, in_turn: bool = False) -> None:
    """Serve ``server`` (low-level) on ``lines`` (an async iterator of the lines read) and ``out`` (``write`` a line,
    then ``flush``) until the lines end: as ``run_stdio`` serves stdin and stdout (``None``: the SDK's own reading and
    writing of them). ``in_turn``: see ``run_stdio``."""
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    if in_turn and lines is not None and sequential.available():
        lead, first = await sequential.opening(lines)
        if sequential.opens_modern(first):
            await sequential.serve(server, lead, lines, out)
            return
        lines = sequential.Replayed(lead, lines)
    async with stdio_server(lines, out) as (read_stream, write_stream):
        send, sent = anyio.create_memory_object_stream[SessionMessage](0)

        async def relay() -> None:
            async with sent, write_stream:
                async for message in sent:
                    await write_stream.send(encodable(message))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay)
            async with send:
                await server.run(read_stream, send, server.create_initialization_options())


def encodable(message):
    """``message`` as it can go on the wire: text that UTF-8 cannot encode (a lone surrogate a handler
    returned) is replaced, where it would otherwise stop the stdio writer and leave the client waiting."""
    try:
        message.message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # pydantic's serialization error: "surrogates not allowed"
        from mcp.shared.message import SessionMessage

        return SessionMessage(sequential.replaced(message.message), metadata=message.metadata)
    return message
