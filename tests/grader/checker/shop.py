"""The small servers the checker's tests run against, in memory, and the functions that read their reports."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from grader.checker.checklist import checklist
from grader.checker.findings import Report
from grader.server_check import check_server
from grader.taxonomy import empty_result, not_found_error, success_result
from servers.toolkit import ToolSpec, build_server

REPO = Path(__file__).resolve().parents[3]
READS = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = types.ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True)

SEARCH_DESCRIPTION = (
    "Search the shop's orders by customer e-mail. Call it when a customer asks about their orders. "
    "Returns matching orders; an empty list means the customer has none."
)
GET_DESCRIPTION = "Get one order by id. Call it before a refund. An unknown id returns a not_found error result."


class Search(BaseModel):
    customer_email: str = Field(description="The customer's e-mail address.")


class GetOrder(BaseModel):
    order_id: str = Field(description="The order id, e.g. ORD-1001.")


class NoArguments(BaseModel):
    pass


@dataclass(frozen=True)
class RawTool(ToolSpec):
    """A tool whose published schema or ``_meta`` is written by hand, for rules pydantic would not break."""

    schema: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_tool(self) -> types.Tool:
        tool = super().to_tool()
        update: dict[str, Any] = {}
        if self.schema is not None:
            update["input_schema"] = self.schema
        if self.meta is not None:
            update["meta"] = self.meta
        return tool.model_copy(update=update)


def search(arguments: Search) -> dict[str, Any]:
    if arguments.customer_email == "alice@example.com":
        return success_result("1 order.", {"orders": [{"id": "ORD-1001"}]})
    return empty_result("No orders for this customer.", key="orders")


def get_order(arguments: GetOrder) -> dict[str, Any]:
    if arguments.order_id == "ORD-1001":
        return success_result("ORD-1001: paid.", {"id": "ORD-1001", "status": "paid"})
    return not_found_error(f"No order {arguments.order_id}. Tell the user the order does not exist.")


def shop_tools() -> list[ToolSpec]:
    return [
        ToolSpec("search_orders", SEARCH_DESCRIPTION, Search, search, READS),
        ToolSpec("get_order", GET_DESCRIPTION, GetOrder, get_order, READS),
    ]


def shop(*extra: ToolSpec) -> Server:
    return build_server("shop", [*shop_tools(), *extra])


def check(server: Any, **kwargs: Any) -> Report:
    kwargs.setdefault("server_name", "shop")
    return check_server(server, **kwargs)


def only(report: Report, rule: str, subject: str):
    (found,) = report.of(rule, subject)
    return found


def text_tool(name: str, size: int, meta: dict[str, Any] | None = None) -> RawTool:
    return RawTool(
        name,
        f"Dump {name} text. Call it when asked. Returns text.",
        NoArguments,
        lambda a: success_result("x" * size, {}),
        READS,
        meta=meta,
    )


def raises(arguments: BaseModel) -> dict[str, Any]:
    raise MCPError(-32603, "database is down")


def logging_server(log: Path) -> Server:
    """A server that logs the connecting client's protocol version and name, as *Common mistakes › 1.1* asks."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        client = ctx.session.client_params.client_info
        with log.open("a", encoding="utf-8") as out:
            out.write(f"client connected: protocolVersion={ctx.protocol_version} clientInfo.name={client.name}\n")
        return types.ListToolsResult(tools=[])

    return Server("logging", on_list_tools=list_tools)


BLOG_DESCRIPTION = (
    "Search the blog's articles on MCP servers. Call it when the user asks how to build or deploy one. "
    "Returns short fragments with each article's slug; an empty list means the blog has nothing on it."
)


class Query(BaseModel):
    query: str = Field(description="What to look for, in plain English.")


def fragments_tool(fragments: list[dict[str, str]]) -> ToolSpec:
    def search_articles(arguments: Query) -> dict[str, Any]:
        if arguments.query == "nothing":
            return empty_result("Nothing found.", key="fragments")
        return success_result(f"{len(fragments)} fragment(s).", {"fragments": fragments})

    return ToolSpec("search_articles", BLOG_DESCRIPTION, Query, search_articles, READS)


CROWDED = [
    {"slug": "transports", "fragment": f"ansports part {i}: stdio runs the server as a child proc"} for i in range(5)
]
DIVERSE = [
    {"slug": "transports", "fragment": "Streamable HTTP serves a URL; stdio runs the server as a child process."},
    {"slug": "transports", "fragment": "Use stdio for local tools…"},
    {"slug": "rate-limits", "fragment": "Answer 429 with Retry-After."},
]


def item(report: Report, number: int):
    return next(line for line in checklist(report) if line.item.number == number)
