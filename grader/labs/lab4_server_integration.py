"""Lab 4's checks: its visible checks (``labkit.checks.lab4_server_integration``) and the hidden ones.

The hidden checks test the same skills on cases the notebook does not show, judged by the course's
reference pieces: the server checker's rules (``grader.checker``) and the blog itself, whose
answers a fixed server must still give. Each runs behind the visible gate (the flawed server's
answers to the lab's own questions), so a fix that changes an answer earns nothing here either.

- what the server publishes, asked other ways: resource templates, the private tool with other
  arguments, the old outline name once get_article replaces it;
- what the model reads: get_article's hints and description (the visible checks read search_articles's);
- what comes back: other unknown slugs (and known ones, which must still answer), other blank queries
  and other searches while the index is down; other queries that match nothing (each word on the
  blog, never together); every page of other searches, broad ones included, bounded, each hit a snippet
  with its article's title and date, and all pages together the blog's answer.
"""

from __future__ import annotations

from typing import Any

from grader.checker.description_rules import check_description
from grader.checker.tool_rules import check_annotations
from grader.taxonomy import is_empty_success
from labkit.checking import CheckRegistry, expect, structured
from labkit.checks import lab4_server_integration as visible
from labkit.checks.lab4_server_integration import (
    LAB,
    LONG_NAME,
    OUTLINE,
    PRIVATE_TOOL,
    SEARCH,
    expect_hit_fields,
    expect_not_callable,
    expect_same_outline,
    expect_same_search,
    expect_status,
    gate,
    outline_tool,
    page_problems,
    payload,
    search_every_page,
    shown,
)
from servers.learner_host.kit_lab4 import BLOG

__all__ = ["LAB", "LONG_NAME", "ORDER", "checks", "gate", "hidden"]

hidden = CheckRegistry(LAB)

# The hidden cases: none of them is a case of the visible checks.
PRIVATE_CALLS = ({}, {"days": 30})
OLD_NAME_CALL = {"slug": "rag-001"}
UNKNOWN_SLUGS = ("mcp-6", "MCP-006", "rag-0960", "k8s-097")
KNOWN_SLUGS = ("k8s-011", "local-llm-092", "rag-001", "spring-093")
BLANK_QUERIES = ("", "\t \n", "\u3000")
WHILE_DOWN = ({"query": "embeddings", "page": 2}, {"query": "zebra"}, {"query": "mcp server"})
# Each word of these is on the blog; together they match nothing.
NO_MATCH_QUERIES = ("helm ollama", "spring-boot gpu", "seo embeddings", "zebra crossing")
# Searches followed over every page: a broad one (every article), and others of one, two and several pages.
SEARCHES = ("concrete step", "production", "debugging", "seo costs", "spring-boot java")

ARTICLES = {article["slug"]: article for article in BLOG.articles}


@hidden.check(
    "nothing_private_answers",
    points=2,
    title="nothing but the two public tools is published or answers a call, asked in ways the lab does not show",
    mistake="publishes a private tool or private data another way",
    hidden=True,
)
def nothing_private_answers(host) -> None:
    tools = gate(host).tools
    templates = [t.get("uriTemplate") for t in host.templates()]
    expect(
        not templates,
        f"resources/templates/list lists {', '.join(map(str, templates))}: a resource template publishes private data as "
        "surely as a tool does.",
    )
    expect(PRIVATE_TOOL not in tools, f"tools/list still publishes {PRIVATE_TOOL}.")
    for arguments in PRIVATE_CALLS:
        expect_not_callable(host, PRIVATE_TOOL, arguments)
    if OUTLINE in tools and LONG_NAME not in tools:
        expect_not_callable(host, LONG_NAME, OLD_NAME_CALL)


@hidden.check(
    "outline_tool_read_only",
    points=1,
    title="the outline tool declares readOnlyHint, destructiveHint and idempotentHint",
    mistake="a read-only tool left without its hints",
    hidden=True,
)
def outline_tool_read_only(host) -> None:
    tools = gate(host).tools
    tool = tools[outline_tool(tools)]
    failed = [f for f in check_annotations(tool, [tool["name"]]) if f.passed is False]
    expect(not failed, " ".join(f"{f.subject}: {f.message}" for f in failed))
    visible.expect_read_only(tool)


@hidden.check(
    "outline_tool_described",
    points=2,
    title="the outline tool's description says what data, when to call, how to ask and what the result means",
    mistake="a vague description on a tool the visible check does not read",
    hidden=True,
)
def outline_tool_described(host) -> None:
    tools = gate(host).tools
    failed = [f for f in check_description(tools[outline_tool(tools)]) if f.passed is False]
    expect(not failed, " ".join(f"{f.subject}: {f.message}" for f in failed))


@hidden.check(
    "failures_on_unseen_inputs",
    points=2,
    title="failures on inputs the lab does not show come back as categorised isError results, and only failures do",
    mistake="exceptions or wrong categories on other unknown, blank or unavailable inputs, or errors on known ones",
    hidden=True,
)
def failures_on_unseen_inputs(host) -> None:
    outline = outline_tool(gate(host).tools)
    for slug in KNOWN_SLUGS:
        call = shown(outline, {"slug": slug})
        expect_same_outline(call, payload(host.call(outline, {"slug": slug}), call), BLOG.outline(slug))
    for slug in UNKNOWN_SLUGS:
        expect_status(host, outline, {"slug": slug}, "not_found", False)
    for query in BLANK_QUERIES:
        expect_status(host, SEARCH, {"query": query}, "validation", False)
    for arguments in WHILE_DOWN:
        expect_status(host, SEARCH, arguments, "transient", True, down=True)


@hidden.check(
    "no_match_on_unseen_queries",
    points=1,
    title="searches the lab does not show that match nothing are valid empty results",
    mistake="reports some empty results as errors",
    hidden=True,
)
def no_match_on_unseen_queries(host) -> None:
    gate(host)
    for query in NO_MATCH_QUERIES:
        arguments = {"query": query}
        call = shown(SEARCH, arguments)
        result = host.call(SEARCH, arguments)
        data = structured(result)
        category = data.get("errorCategory")
        expect(
            result.get("isError") is not True,
            f"{call} returned an error{f' ({category})' if category else ''} where a valid empty answer was expected.",
        )
        expect(
            is_empty_success(result) and data.get("articles") == [] and data.get("nextPage") is None,
            f"{call} matches nothing, so its structuredContent should say articles [] and nextPage null; it says {data!r:.120}.",
        )


@hidden.check(
    "pages_of_unseen_searches",
    points=3,
    title="every page of searches the lab does not show is a bounded page of snippets, and together the pages give the blog's answer",
    mistake="unbounded, incomplete or reordered pages on other searches",
    hidden=True,
)
def pages_of_unseen_searches(host) -> None:
    gate(host)
    for query in SEARCHES:
        search = search_every_page(host, query)
        for call, result in search.pages:
            for hit in page_problems(call, result):
                article: dict[str, Any] = ARTICLES.get(hit.get("slug"), {})
                expect_hit_fields(call, hit, article)
        expect_same_search(query, search.slugs, [a["slug"] for a in BLOG.search(query)])


# The notebook's order of graded cells: each hidden check after the visible ones of its skill.
ORDER = [
    "only_public_tools",
    "names_fit_in_plugin",
    "nothing_private_answers",
    "read_only_tools_say_so",
    "outline_tool_read_only",
    "descriptions_get_tools_called",
    "outline_tool_described",
    "failures_are_statuses",
    "failures_on_unseen_inputs",
    "no_match_is_empty",
    "no_match_on_unseen_queries",
    "results_fit_the_context",
    "pages_of_unseen_searches",
]

checks = CheckRegistry.combined(LAB, ORDER, visible.checks, hidden)
