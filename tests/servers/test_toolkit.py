"""The shared protocol wiring, in memory: resources, templates, prompts, errors and a handler that hangs."""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from grader.taxonomy import success_result
from servers.client import connect, wire
from servers.toolkit import (
    RESOURCE_NOT_FOUND,
    PromptSpec,
    ResourceSpec,
    TemplateSpec,
    ToolSpec,
    build_server,
)

NOTES = {("inbox", "groceries"): "milk, eggs", ("work", "standup"): "ship the tracker"}
READS = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class NoArguments(BaseModel):
    pass


class Echo(BaseModel):
    text: str = Field(description="What to echo.")
    times: int = Field(1, description="How many times.")


def echo(arguments: Echo) -> dict[str, Any]:
    return success_result(arguments.text * arguments.times, {"echo": arguments.text * arguments.times})


def echo_tool() -> ToolSpec:
    return ToolSpec("echo", "Echo the text back.", Echo, echo, READS)


def notes_server() -> Any:
    """A small server with one of each: a fixed resource, a two-variable template, a prompt, a tool."""
    resources = [
        ResourceSpec("notes://index", "index", "Every note's folder and name.", lambda: json.dumps(sorted(NOTES))),
    ]
    templates = [
        TemplateSpec(
            "notes://folders/{folder}/{name}",
            "note",
            "One note, by folder and name.",
            lambda v: NOTES.get((v["folder"], v["name"])),
            mime_type="text/plain",
        ),
    ]
    prompts = [
        PromptSpec(
            "review_note",
            "Review one note.",
            (("name", "The note's name.", True), ("tone", "How to sound.", False)),
            lambda args: f"Review the note {args['name']} in a {args.get('tone') or 'neutral'} tone.",
        ),
    ]
    return build_server("notes", [echo_tool()], resources=resources, templates=templates, prompts=prompts)


def tools_only_server() -> Any:
    return build_server("bare", [echo_tool()])


# --- listings --------------------------------------------------------------------------------


def test_resources_list_gives_each_fixed_resource_its_uri_name_description_and_mime_type() -> None:
    with connect(notes_server(), timeout=10) as session:
        resources = session.resources()

    assert resources == [
        {
            "uri": "notes://index",
            "name": "index",
            "description": "Every note's folder and name.",
            "mimeType": "application/json",
        }
    ]


def test_templates_list_gives_each_uri_template_and_no_fixed_resource() -> None:
    with connect(notes_server(), timeout=10) as session:
        templates = session.templates()

    assert templates == [
        {
            "uriTemplate": "notes://folders/{folder}/{name}",
            "name": "note",
            "description": "One note, by folder and name.",
            "mimeType": "text/plain",
        }
    ]


def test_prompts_list_gives_each_prompt_its_arguments_and_which_are_required() -> None:
    with connect(notes_server(), timeout=10) as session:
        prompts = session.prompts()

    assert prompts == [
        {
            "name": "review_note",
            "description": "Review one note.",
            "arguments": [
                {"name": "name", "description": "The note's name.", "required": True},
                {"name": "tone", "description": "How to sound.", "required": False},
            ],
        }
    ]


def test_a_server_with_resources_and_prompts_advertises_them_beside_tools() -> None:
    with connect(notes_server(), timeout=10) as session:
        capabilities = session.client.server_capabilities

    assert capabilities.tools is not None
    assert capabilities.resources is not None
    assert capabilities.prompts is not None


def test_a_server_with_only_a_template_still_advertises_resources_and_lists_none_fixed() -> None:
    template = TemplateSpec(
        "notes://folders/{folder}/{name}", "note", "One note.", lambda v: NOTES.get((v["folder"], v["name"]))
    )

    with connect(build_server("templated", [echo_tool()], templates=[template]), timeout=10) as session:
        capabilities = session.client.server_capabilities
        resources = session.resources()
        text = session.read("notes://folders/inbox/groceries")

    assert capabilities.resources is not None
    assert capabilities.prompts is None
    assert resources == []
    assert text == "milk, eggs"


# --- reading resources -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_reading_a_fixed_resource_returns_one_text_content_with_its_uri_and_mime_type() -> None:
    with anyio.fail_after(10):
        async with Client(notes_server()) as client:
            result = wire(await client.read_resource("notes://index"))

    assert result["contents"] == [
        {"uri": "notes://index", "mimeType": "application/json", "text": json.dumps(sorted(NOTES))}
    ]


@pytest.mark.anyio
async def test_reading_a_template_match_fills_in_every_variable_and_echoes_the_uri_read() -> None:
    with anyio.fail_after(10):
        async with Client(notes_server()) as client:
            first = wire(await client.read_resource("notes://folders/work/standup"))
            second = wire(await client.read_resource("notes://folders/inbox/groceries"))

    assert first["contents"] == [
        {"uri": "notes://folders/work/standup", "mimeType": "text/plain", "text": "ship the tracker"}
    ]
    assert second["contents"][0]["text"] == "milk, eggs"


def test_a_template_matches_through_the_sdks_rfc_6570_parser_decoding_what_it_captures() -> None:
    template = TemplateSpec("notes://folders/{folder}/{name}", "note", "One note.", lambda v: None)

    assert template.match("notes://folders/work/standup") == {"folder": "work", "name": "standup"}
    assert template.match("notes://folders/my%20work/stand%2Fup") == {"folder": "my work", "name": "stand/up"}
    assert template.match("notes://folders/work/standup/extra") is None
    assert template.match("notes://folders//standup") is None  # an empty variable names nothing
    assert template.match("other://folders/work/standup") is None


def test_a_template_uri_with_no_such_item_is_resource_not_found_naming_the_uri() -> None:
    uri = "notes://folders/inbox/no-such-note"

    with connect(notes_server(), timeout=10) as session, pytest.raises(MCPError) as caught:
        session.read(uri)

    # The MCP specification's code for a missing resource.
    assert RESOURCE_NOT_FOUND == -32002
    assert caught.value.code == -32002
    assert uri in str(caught.value)


@pytest.mark.parametrize(
    "uri",
    [
        "notes://nowhere",
        "other://index",
        "notes://index/extra",
        "notes://folders/inbox",  # the template needs two segments
        "notes://folders/inbox/groceries/extra",  # a variable never spans a slash
    ],
)
def test_a_uri_that_matches_no_resource_or_template_is_resource_not_found_naming_the_uri(uri: str) -> None:
    with connect(notes_server(), timeout=10) as session, pytest.raises(MCPError) as caught:
        session.read(uri)

    assert caught.value.code == -32002
    assert uri in str(caught.value)


# --- prompts ---------------------------------------------------------------------------------


def test_a_prompt_renders_its_arguments_into_one_user_text_message() -> None:
    with connect(notes_server(), timeout=10) as session:
        result = session.prompt("review_note", name="standup", tone="friendly")

    assert result == {
        "description": "Review one note.",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Review the note standup in a friendly tone."}}
        ],
    }


def test_an_optional_prompt_argument_may_be_left_out() -> None:
    with connect(notes_server(), timeout=10) as session:
        result = session.prompt("review_note", name="standup")

    assert result["messages"][0]["content"]["text"] == "Review the note standup in a neutral tone."


def test_an_unknown_prompt_is_invalid_params_naming_it() -> None:
    with connect(notes_server(), timeout=10) as session, pytest.raises(MCPError) as caught:
        session.prompt("no_such_prompt", name="standup")

    assert caught.value.code == types.INVALID_PARAMS
    assert "no_such_prompt" in str(caught.value)


@pytest.mark.parametrize("arguments", [{}, {"tone": "friendly"}, {"name": ""}], ids=["none", "only-optional", "empty"])
def test_a_prompt_without_its_required_argument_is_invalid_params_naming_the_argument(
    arguments: dict[str, str],
) -> None:
    with connect(notes_server(), timeout=10) as session, pytest.raises(MCPError) as caught:
        session.prompt("review_note", arguments)

    assert caught.value.code == types.INVALID_PARAMS
    assert "name" in str(caught.value)
    assert "review_note" in str(caught.value)


# --- a server with tools only ----------------------------------------------------------------


def test_a_server_without_resources_or_prompts_does_not_advertise_them() -> None:
    with connect(tools_only_server(), timeout=10) as session:
        capabilities = session.client.server_capabilities

    assert capabilities.tools is not None
    assert capabilities.resources is None
    assert capabilities.prompts is None


@pytest.mark.parametrize(
    "ask",
    [
        lambda s: s.resources(),
        lambda s: s.templates(),
        lambda s: s.read("notes://index"),
        lambda s: s.prompts(),
        lambda s: s.prompt("review_note", name="standup"),
    ],
    ids=["resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get"],
)
def test_asking_a_server_without_resources_or_prompts_for_them_is_method_not_found(ask: Any) -> None:
    with connect(tools_only_server(), timeout=10) as session, pytest.raises(MCPError) as caught:
        ask(session)

    assert caught.value.code == types.METHOD_NOT_FOUND


# --- tools -----------------------------------------------------------------------------------


def test_a_tools_schema_changed_by_one_caller_is_listed_unchanged_to_the_next() -> None:
    """The schema is built once per input model; each tool list gets a copy of it, nested parts included."""
    first = echo_tool().to_tool()
    first.input_schema["properties"]["text"]["description"] = "changed"
    first.input_schema["required"].append("times")

    with connect(tools_only_server(), timeout=10) as session:
        (listed,) = session.tools()

    assert listed["inputSchema"]["properties"]["text"]["description"] == "What to echo."
    assert listed["inputSchema"]["required"] == ["text"]


def test_valid_tool_arguments_reach_the_handler() -> None:
    with connect(tools_only_server(), timeout=10) as session:
        result = session.call("echo", text="ab", times=2)

    assert result["isError"] is False
    assert result["structuredContent"] == {"echo": "abab"}


@pytest.mark.parametrize(
    ("arguments", "field"),
    [({}, "text"), ({"text": "ab", "times": "many"}, "times")],
    ids=["missing", "wrong-type"],
)
def test_invalid_tool_arguments_are_a_validation_result_naming_the_field(arguments: dict[str, Any], field: str) -> None:
    with connect(tools_only_server(), timeout=10) as session:
        result = session.call("echo", arguments)

    assert result["isError"] is True
    assert result["structuredContent"]["errorCategory"] == "validation"
    assert result["structuredContent"]["isRetryable"] is False
    assert result["structuredContent"]["field"] == field
    assert "echo" in result["content"][0]["text"]
    assert field in result["content"][0]["text"]


def test_an_unknown_tool_is_a_protocol_error_naming_it() -> None:
    with connect(tools_only_server(), timeout=10) as session, pytest.raises(MCPError) as caught:
        session.call("no_such_tool", {})

    assert caught.value.code == types.INVALID_PARAMS
    assert "no_such_tool" in str(caught.value)


@pytest.mark.anyio
async def test_a_tool_handler_that_never_returns_does_not_block_the_event_loop() -> None:
    release = threading.Event()
    started = threading.Event()

    def hang(arguments: NoArguments) -> dict[str, Any]:
        started.set()
        release.wait()
        return success_result("released", {})

    server = build_server(
        "hangs",
        [ToolSpec("hang", "Never returns until released.", NoArguments, hang, READS), echo_tool()],
    )
    # A safety net, not a wait: were the handler run on the event loop, nothing but this timer
    # could end the call, and the assertion on release below would then fail instead of hanging.
    safety_net = threading.Timer(10, release.set)
    safety_net.start()
    try:
        async with Client(server) as client:
            with pytest.raises(TimeoutError):
                with anyio.fail_after(0.5):
                    await client.call_tool("hang", {})
            assert started.is_set()
            assert not release.is_set(), "the client's timeout fired only after the handler was released"

            # The loop still serves other calls while the abandoned handler is blocked.
            with anyio.fail_after(5):
                result = wire(await client.call_tool("echo", {"text": "still here"}))
            assert result["structuredContent"] == {"echo": "still here"}
            assert not release.is_set()
    finally:
        release.set()
        safety_net.cancel()


def test_the_server_logs_who_connected_once_per_client(caplog):
    """*Common mistakes › 1.1*: log the client's protocol version and name when it connects."""
    import logging

    from servers.client import connect
    from servers.notes import build_server as build_notes

    caplog.set_level(logging.INFO, logger="servers")
    with connect(build_notes()) as session:
        session.tools()
        session.tools()
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("client connected:")]
    assert len(lines) == 1, lines
    assert "protocolVersion=" in lines[0] and "clientInfo=mcp" in lines[0]
