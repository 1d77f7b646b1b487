"""A tiny article index for the remote course server: plain functions that answer with statuses.

The rules a search over published writing should keep, one source each:

- drafts never come back: *Common mistakes › 2.2 Drafts and deleted pages in the vector store*;
- one fragment per article: *Common mistakes › 4.3 Five fragments of one article instead of five articles*;
- fragments cut at word boundaries: *Common mistakes › 4.4 Fragments start with a cut word*;
- every answer has a ``status``: *Common mistakes › 5.1 Exceptions instead of statuses*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FRAGMENT_CHARS = 160
MAX_RESULTS = 5


@dataclass(frozen=True)
class Article:
    slug: str
    title: str
    status: str  # "published" or "draft"
    body: str


ARTICLES: tuple[Article, ...] = (
    Article(
        "streamable-http",
        "Serving MCP over Streamable HTTP",
        "published",
        "A remote MCP server answers JSON-RPC messages posted to one endpoint, usually /mcp. The reply is JSON "
        "or a stream of server-sent events. Clients such as Claude Code connect with the http transport and "
        "reconnect on their own when the connection drops.",
    ),
    Article(
        "oauth-for-mcp",
        "Protecting an MCP server with OAuth",
        "published",
        "An MCP server that needs a signed-in user answers 401 with a WWW-Authenticate header naming its "
        "protected-resource metadata. The client reads that document, finds the authorization server and "
        "runs the browser sign-in; later requests carry a bearer token.",
    ),
    Article(
        "rate-limits",
        "Rate limits behind a proxy",
        "published",
        "Behind a proxy every request arrives from the proxy's address. A limiter keyed by that address puts "
        "all clients in one budget. Key by the real client, read from forwarding headers only when the peer "
        "is a trusted proxy, and answer 429 with Retry-After.",
    ),
    Article(
        "bot-protection",
        "When the proxy answers instead of your server",
        "published",
        "A bot check in front of the server answers programs with an HTML challenge page, and a cache can "
        "replay an old reply. Exempt the MCP endpoint from both, and never cache POST requests to it.",
    ),
    Article(
        "pricing-draft",
        "New pricing (draft, not announced)",
        "draft",
        "Unannounced prices for next year. This draft must never reach a search result.",
    ),
)


def fragment(text: str, limit: int = FRAGMENT_CHARS) -> str:
    """The start of ``text``, at most ``limit`` characters, cut at a word boundary (with an ellipsis)."""
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0].rstrip(",.;:")
    return cut + " ..."


def published() -> list[Article]:
    return [a for a in ARTICLES if a.status == "published"]


def search_articles(query: str) -> dict[str, Any]:
    """Published articles whose title or body contains every word of ``query``: one fragment each."""
    words = [w.lower() for w in query.split()]
    if not words:
        return {"status": "error", "message": "Give at least one word to search for."}
    hits = [a for a in published() if all(w in f"{a.title} {a.body}".lower() for w in words)]
    results = [{"slug": a.slug, "title": a.title, "fragment": fragment(a.body)} for a in hits[:MAX_RESULTS]]
    return {"status": "ok", "query": query, "results": results}


def get_article(slug: str) -> dict[str, Any]:
    """One published article in full, or a ``not_found`` status (a draft is not found either)."""
    for article in published():
        if article.slug == slug:
            return {"status": "ok", "slug": article.slug, "title": article.title, "body": article.body}
    return {
        "status": "not_found",
        "slug": slug,
        "message": f"No published article {slug!r}; search_articles lists what exists.",
    }
