"""MCP wiring for the remote course server: two read-only tools, one resource and one prompt over the article index."""

from __future__ import annotations

import json
from typing import Annotated, Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from servers.remote import articles

NAME = "remote-articles"
INDEX_URI = "articles://index"
READS = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

INSTRUCTIONS = (
    "Published articles about running MCP servers remotely. Use search_articles to find articles on a topic "
    "and get_article to read one in full."
)


def build_server(instructions: str | None = None) -> MCPServer:
    """The remote course server: the same object serves in-memory tests and ``python -m servers.remote``."""
    server = MCPServer(NAME, version="1.0", instructions=instructions if instructions is not None else INSTRUCTIONS)

    @server.tool(
        description=(
            "Search the published articles on running MCP servers remotely (transports, OAuth, proxies, rate "
            "limits). Call it when the user asks about one of those topics. Give a few keywords. Returns at most "
            "five results, one short fragment per article, with its slug: call get_article with a slug to read "
            "the whole article. An empty list is a valid answer: nothing matches."
        ),
        annotations=READS,
    )
    def search_articles(
        query: Annotated[str, Field(description="A few keywords, e.g. 'rate limit proxy'.")],
    ) -> dict[str, Any]:
        return articles.search_articles(query)

    @server.tool(
        description=(
            "Read one published article in full by its slug (from search_articles or the articles://index "
            "resource). Call it when the user wants one article in full, after search_articles found it. Returns status ok with the body, or status not_found: tell the user it does not exist."
        ),
        annotations=READS,
    )
    def get_article(
        slug: Annotated[str, Field(description="The article's slug, e.g. 'rate-limits'.")],
    ) -> dict[str, Any]:
        return articles.get_article(slug)

    @server.resource(
        INDEX_URI, name="index", description="Every published article: slug and title.", mime_type="application/json"
    )
    def index() -> str:
        return json.dumps([{"slug": a.slug, "title": a.title} for a in articles.published()])

    @server.prompt(description="Summarise one article for a teammate in three sentences.")
    def summarize_article(slug: str) -> str:
        return f"Read the article {slug!r} with get_article and summarise it in three sentences for a teammate."

    return server
