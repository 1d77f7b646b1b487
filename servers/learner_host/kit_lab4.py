"""What lab 4 hands the learner: a team blog's data, the SDK pieces, and the names Claude Code will see.

The blog is plain data access that raises, as data-access code does: ``BLOG.search`` raises
``ValueError`` on an empty query and ``SearchUnavailable`` while the index is down,
``BLOG.outline`` raises ``KeyError`` for an unknown slug. Turning those into statuses is the
server's job, which is what the lab is about (*Common mistakes › 5.1 Exceptions instead of
statuses*). For grading, the blog reads whether its index is down from ``control.json`` in the
folder named by ``LAB_STATE_DIR``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from servers.learner_host.sdk import on_first_use

# The names Claude Code will know the server by: it ships as server "blog" inside the team's
# plugin, so each tool reaches Claude as mcp__plugin_acme-engineering-handbook_blog__<tool>
# (Claude Code docs, MCP › MCP servers provided by plugins).
SERVER_NAME = "blog"
PLUGIN = "acme-engineering-handbook"
# The public surface the product team asked for (anything else is private).
PUBLIC_TOOLS = ("search_articles", "get_article")
PAGE_SIZE = 10
SNIPPET_CHARS = 300

TOPICS = {
    "mcp": ("MCP", ["mcp", "claude-code", "tools"]),
    "rag": ("RAG", ["rag", "embeddings", "search"]),
    "local-llm": ("local LLMs", ["local-llm", "ollama", "gpu"]),
    "spring": ("Spring Boot", ["spring-boot", "java", "api"]),
    "seo": ("SEO", ["seo", "search-console", "analytics"]),
    "k8s": ("Kubernetes", ["kubernetes", "deploy", "helm"]),
}
ANGLES = ("a first setup", "the pitfalls", "testing it", "running it in production", "what it costs", "debugging it")
SECTIONS = ("Why it matters", "Setting it up", "What went wrong", "How to check it", "What I would do next")


class SearchUnavailable(RuntimeError):
    """The search index is being rebuilt; ``retry_after`` says in how many seconds to try again."""

    def __init__(self, retry_after: int = 30) -> None:
        super().__init__(f"the search index is being rebuilt; try again in {retry_after} s")
        self.retry_after = retry_after


def make_article(i: int) -> dict[str, Any]:
    """Article ``i`` (1-based): the same every time, so answers can be compared."""
    key = list(TOPICS)[i % len(TOPICS)]
    topic, tags = TOPICS[key]
    angle = ANGLES[(i // len(TOPICS)) % len(ANGLES)]
    title = f"{topic}: {angle} (part {i})"
    paragraphs = [
        f"{heading}. This part of the series on {topic} looks at {angle}. "
        + " ".join(
            f"In our team's {topic} work, note {n} of section {s + 1} explains one concrete step, the command we ran, "
            f"what it printed and why we kept it."
            for n in range(1, 5)
        )
        for s, heading in enumerate(SECTIONS)
    ]
    return {
        "slug": f"{key}-{i:03d}",
        "title": title,
        "published": f"2025-{1 + i % 12:02d}-{1 + (i * 7) % 28:02d}",
        "tags": tags,
        "summary": f"Part {i} of the {topic} series: {angle}.",
        "sections": list(SECTIONS),
        "body": "\n\n".join(paragraphs),
    }


ARTICLE_COUNT = 96


class Blog:
    """The team blog's published articles, its search index and (private) its traffic data."""

    def __init__(self) -> None:
        self.articles = [make_article(i) for i in range(1, ARTICLE_COUNT + 1)]
        self._by_slug = {a["slug"]: a for a in self.articles}

    @staticmethod
    def _index_down() -> bool:
        folder = os.environ.get("LAB_STATE_DIR")
        control = Path(folder) / "control.json" if folder else None
        return bool(control and control.exists() and json.loads(control.read_text()).get("index_down"))

    def search(self, query: str) -> list[dict[str, Any]]:
        """Every article containing all the query's words (title, tags, body), newest first, whole articles.

        Raises ValueError for an empty query and SearchUnavailable while the index is down.
        """
        words = re.findall(r"[\w-]+", query.lower())
        if not words:
            raise ValueError("query is empty")
        if self._index_down():
            raise SearchUnavailable()
        hits = [a for a in self.articles if all(w in self._text(a) for w in words)]
        return sorted(hits, key=lambda a: (a["published"], a["slug"]), reverse=True)

    @staticmethod
    def _text(article: dict[str, Any]) -> str:
        return " ".join([article["title"], " ".join(article["tags"]), article["body"]]).lower()

    def outline(self, slug: str) -> dict[str, Any]:
        """An article's map, not its text: slug, title, date, summary, section headings, URL. KeyError if unknown."""
        article = self._by_slug[slug]
        return {
            "slug": slug,
            "title": article["title"],
            "published": article["published"],
            "summary": article["summary"],
            "sections": article["sections"],
            "url": f"https://blog.acme.example/{slug}",
        }

    @staticmethod
    def snippet(article: dict[str, Any], query: str, limit: int = SNIPPET_CHARS) -> str:
        """A fragment of the article's body around the query's first word, cut at word boundaries."""
        body = article["body"]
        words = re.findall(r"[\w-]+", query.lower())
        at = body.lower().find(words[0]) if words else -1
        start = max(0, at - limit // 3) if at >= 0 else 0
        if start:
            start = body.find(" ", start) + 1
        piece = body[start : start + limit]
        if start + limit < len(body):
            piece = piece[: piece.rfind(" ")] + "…"
        return ("…" if start else "") + piece

    def traffic_report(self, days: int = 7) -> dict[str, Any]:
        """Private: the SEO agent's clicks and search positions. Never meant for the public server."""
        return {
            "days": days,
            "clicks": 1375 * days,
            "topQueries": [
                {"query": "mcp server pitfalls", "position": 3.2},
                {"query": "local llm gpu", "position": 7.9},
            ],
        }


BLOG = Blog()

__all__ = [
    "BLOG",
    "PAGE_SIZE",
    "PLUGIN",
    "PUBLIC_TOOLS",
    "SERVER_NAME",
    "Annotated",
    "CallToolResult",
    "Field",
    "MCPServer",
    "SearchUnavailable",
    "TextContent",
    "ToolAnnotations",
]

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp_types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field

# The SDK's pieces the learner builds with, imported on first use (servers.learner_host.sdk).
__getattr__ = on_first_use(
    globals(),
    {
        "MCPServer": "mcp.server.mcpserver",
        "CallToolResult": "mcp_types",
        "TextContent": "mcp_types",
        "ToolAnnotations": "mcp_types",
        "Field": "pydantic",
    },
)
