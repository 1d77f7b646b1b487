"""Lab 4's checks: the learner fixes a flawed blog server, flaw by flaw, without changing its answers.

Sources: the field report on MCP server pitfalls (§2.1 private tools published by accident,
§2.3 read-only hints, §4.5 results that eat the context, §5.1 statuses instead of exceptions,
§5.2 vague descriptions, the pre-launch checklist) and Claude Code's MCP reference (output
limits, names over 128 characters in the plugin form, description limits). Each check judges
one flaw with the rules of ``grader.server_check`` (the checker learners can run on any server)
and, first, asks the server the same questions the flawed version answers: a fix that changes
an answer earns nothing. The server is asked those questions once per session; every check
reads the verdict.

Each flaw is judged on every case of its kind, not one: nothing but the public tools is
published (tools, resources, resource templates, prompts) and the private tools cannot be
called by name; every page of every search the gate makes fits the context, with the fields
a hit needs; several unknown slugs, blank queries and searches while the index is down, and
several queries that match nothing.
"""

from __future__ import annotations

import json
import logging
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from labkit import labstate
from labkit.checking import CheckFailed, CheckRegistry, expect, expect_hints
from grader.server_check import (
    RESULT_CHARS_LIMIT,
    Finding,
    Sample,
    check_annotations,
    check_description,
    check_names,
    check_whitelist,
    expectation,
    list_tools,
)
from grader.taxonomy import is_error, result_text
from servers.learner_host.kit_lab4 import BLOG, PAGE_SIZE, PLUGIN, PUBLIC_TOOLS, SERVER_NAME, SNIPPET_CHARS

LAB = "lab4_server_integration"
checks = CheckRegistry(LAB)

# The flawed server's outline tool; its name is the lab's "over-long name" flaw.
LONG_NAME = "get_article_outline_with_title_summary_and_section_headings_for_one_published_blog_post"
SEARCH, OUTLINE = PUBLIC_TOOLS
READ_ONLY_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}  # the field report, §2.3

# The questions the flawed server already answers; every fix must keep these answers.
SEARCH_QUESTIONS = ("rag pitfalls", "kubernetes helm", "team")
OUTLINE_QUESTIONS = ("mcp-006", "seo-004")
BROAD_QUERY = "team"  # matches every article: the unbounded result
NO_MATCH_QUERY = "quantum"
MAX_PAGES = 40
# The flawed server's private tool, and its over-long outline tool once get_article replaces it:
# neither may answer a call.
PRIVATE_TOOLS = {"seo_traffic_report": {"days": 7}, LONG_NAME: {"slug": "mcp-006"}}
# More of each kind of failure besides the named one (each an unknown slug, a blank query, a
# search while the index is down), and queries whose words each match but never together.
UNKNOWN_SLUGS = ("mcp-6", "MCP-006", "rag-0960")
BLANK_QUERIES = ("", "\t \n")
WHILE_DOWN = ({"query": "kubernetes helm", "page": 2}, {"query": "zebra"})
NO_MATCH_CANDIDATES = ("helm ollama", "spring-boot gpu", "seo embeddings", "zebra crossing")


@contextmanager
def index_down(host):
    labstate.write_text(host, "control.json", json.dumps({"index_down": True}))
    try:
        yield
    finally:
        labstate.remove(host, "control.json")


def tools_by_name(host) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in list_tools(host)}


def outline_tool(tools: dict[str, Any]) -> str:
    for name in (OUTLINE, LONG_NAME):
        if name in tools:
            return name
    raise CheckFailed(f"No tool gives an article's outline: the specification names it {OUTLINE}; your server lists {sorted(tools)}.")


def payload(result: dict[str, Any], call: str) -> dict[str, Any]:
    """The data of a successful result: structuredContent, or the JSON of its text."""
    expect(not is_error(result), f"{call} failed where the flawed server answers: {result_text(result)[:160]!r}.")
    data = result.get("structuredContent")
    if isinstance(data, dict):
        return data
    try:
        data = json.loads(result_text(result))
    except json.JSONDecodeError:
        data = None
    expect(isinstance(data, dict), f"{call} returned no data: put it in structuredContent (a JSON object).")
    return data


def search_answer(host, query: str, pages: list | None = None) -> list[str]:
    """The slugs a search finds, in order, over every page; each page's (call, result) is added to ``pages``."""
    slugs: list[str] = []
    page: Any = None
    for _ in range(MAX_PAGES):
        arguments = {"query": query} if page is None else {"query": query, "page": page}
        call = f"{SEARCH}({json.dumps(arguments)})"
        result = host.call(SEARCH, arguments)
        data = payload(result, call)
        if pages is not None:
            pages.append((call, result))
        hits = data.get("articles")
        expect(isinstance(hits, list), f'{call} must give the hits as a list under "articles"; got {sorted(data)}.')
        slugs += [hit.get("slug") if isinstance(hit, dict) else hit for hit in hits]
        page = data.get("nextPage")
        if page is None:
            return slugs
    raise CheckFailed(f"{SEARCH}({query!r}) still had a nextPage after {MAX_PAGES} pages: the last page must say nextPage null.")


@dataclass
class Gate:
    """What the gate found on one session: the tools listed, every page of its searches, or why it failed."""

    tools: dict[str, Any] = field(default_factory=dict)
    pages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    failure: str | None = None


# One gate per session: the checks of a submission share its host, so its questions are asked once.
GATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def host_lost(exc: MCPError) -> bool:
    return exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


def gate(host) -> Gate:
    """The gate of every check, asked once per session: the server still answers what the flawed version answers."""
    try:
        found = GATES.get(host)
    except TypeError:  # a session that cannot be weakly referenced: ask again
        found = None
    if found is None:
        found = Gate()
        try:
            found.tools = tools_by_name(host)
            same_answers(host, found.tools, found.pages)
        except CheckFailed as exc:
            found.failure = str(exc)
        try:
            GATES[host] = found
        except TypeError:
            pass
    if found.failure is not None:
        raise CheckFailed(found.failure)
    return found


def same_answers(host, tools: dict[str, Any], pages: list | None = None) -> None:
    """The server still answers the questions the flawed version answers (its search pages go to ``pages``)."""
    expect(SEARCH in tools, f"Your server lists no {SEARCH} tool (it lists {sorted(tools)}); keep the tool the team uses.")
    for query in SEARCH_QUESTIONS:
        want = [a["slug"] for a in BLOG.search(query)]
        got = search_answer(host, query, pages)
        if got != want:
            where = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            raise CheckFailed(
                f"A fix changed an answer: searching {query!r} over every page finds {len(got)} article(s) where the blog has "
                f"{len(want)}, first difference at hit {where + 1}. Fix the flaws without changing what the server answers "
                "(same articles, newest first)."
            )
    name = outline_tool(tools)
    for slug in OUTLINE_QUESTIONS:
        call = f'{name}({{"slug": "{slug}"}})'
        data = payload(host.call(name, {"slug": slug}), call)
        want = BLOG.outline(slug)
        wrong = sorted(key for key, value in want.items() if data.get(key) != value)
        expect(not wrong, f"A fix changed an answer: {call} gives other {', '.join(wrong)} than the blog's outline {want}.")


def require(findings: list[Finding]) -> None:
    failed = [f for f in findings if f.passed is False]
    expect(not failed, " ".join(f"{f.subject}: {f.message}" for f in failed))


def public_tools(tools: dict[str, Any]) -> list[dict[str, Any]]:
    return [tools[SEARCH], tools[outline_tool(tools)]]


def sample(host, tool: str, arguments: dict[str, Any], expect_: str) -> tuple[dict[str, Any], Finding]:
    shown = f"{tool}({json.dumps(arguments)})"
    result = host.call(tool, arguments)
    return result, expectation(shown, Sample(tool, arguments, expect_), result)


@contextmanager
def unlisted_call():
    """The MCP client warns on stderr when it calls a tool the server does not list; here that is the point, so it keeps quiet."""
    log = logging.getLogger("client")  # the SDK client session's logger
    before = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(before)


def expect_not_callable(host, tool: str, arguments: dict[str, Any]) -> None:
    """Calling ``tool`` by name, listed or not, must fail: a tool hidden from tools/list but still served is still published."""
    try:
        with unlisted_call():
            result = host.call(tool, arguments)
    except MCPError as exc:
        if host_lost(exc):
            raise
        return
    expect(
        is_error(result),
        f"{tool} is not in tools/list, but calling it by name still answers ({result_text(result)[:80]!r}): "
        "remove the tool from the server, not only from the list.",
    )


@checks.check("only_public_tools", points=2, title="tools/list publishes exactly the public tools", mistake="publishes a private tool")
def only_public_tools(host) -> None:
    tools = gate(host).tools
    require([check_whitelist(list(tools), [SEARCH, outline_tool(tools)])])
    # Nothing else is published: no resource, no resource template, no prompt (the private data
    # moved there is published all the same), and the private tools do not answer a call by name.
    for kind, listed in (
        ("resources/list", [r.get("uri") for r in host.resources()]),
        ("resources/templates/list", [t.get("uriTemplate") for t in host.templates()]),
        ("prompts/list", [p.get("name") for p in host.prompts()]),
    ):
        expect(
            not listed,
            f"The server publishes exactly two tools and nothing else, but {kind} lists {', '.join(map(str, listed))}: "
            "what the specification does not name is private, whatever primitive it is published as.",
        )
    for tool, arguments in PRIVATE_TOOLS.items():
        if tool not in tools:
            expect_not_callable(host, tool, arguments)


@checks.check("names_fit_in_plugin", points=2, title="every full tool name fits in 128 characters, plugin form included", mistake="tool name too long for Claude Code")
def names_fit_in_plugin(host) -> None:
    tools = gate(host).tools
    require([f for name in tools for f in check_names(name, SERVER_NAME, PLUGIN)])


@checks.check("read_only_tools_say_so", points=2, title="the read-only tools declare readOnlyHint, destructiveHint and idempotentHint", mistake="read-only tools without annotations")
def read_only_tools_say_so(host) -> None:
    tools = gate(host).tools
    public = public_tools(tools)
    require([f for tool in public for f in check_annotations(tool, [t["name"] for t in public])])
    for tool in public:
        expect_hints(
            tool,
            READ_ONLY_HINTS,
            lambda hint, value, said: f"{tool['name']} only reads, so it should say {hint}: {json.dumps(value)}; it says {json.dumps(said)}.",
        )


@checks.check("descriptions_get_tools_called", points=3, title="descriptions say what data, when to call, how to ask and what the result means", mistake="vague tool descriptions")
def descriptions_get_tools_called(host) -> None:
    tools = gate(host).tools
    require([f for tool in public_tools(tools) for f in check_description(tool)])


@checks.check("failures_are_statuses", points=3, title="failures come back as categorised isError results, not exceptions", mistake="exceptions instead of statuses")
def failures_are_statuses(host) -> None:
    tools = gate(host).tools
    outline = outline_tool(tools)
    cases = [
        (outline, {"slug": "no-such-article"}, "not_found", False, None),
        (SEARCH, {"query": "   "}, "validation", False, None),
        (SEARCH, {"query": "rag"}, "transient", True, index_down),
        *((outline, {"slug": slug}, "not_found", False, None) for slug in UNKNOWN_SLUGS),
        *((SEARCH, {"query": query}, "validation", False, None) for query in BLANK_QUERIES),
        *((SEARCH, arguments, "transient", True, index_down) for arguments in WHILE_DOWN),
    ]
    for tool, arguments, category, retryable, condition in cases:
        if condition:
            with condition(host):
                result, found = sample(host, tool, arguments, "error")
        else:
            result, found = sample(host, tool, arguments, "error")
        when = " while the search index is down" if condition else ""
        require([found])
        got = result["structuredContent"]
        expect(
            got.get("errorCategory") == category and got.get("isRetryable") is retryable,
            f"{tool}({json.dumps(arguments)}){when} should be a {category} error with isRetryable "
            f"{json.dumps(retryable)}; it says errorCategory {got.get('errorCategory')!r}, isRetryable {json.dumps(got.get('isRetryable'))}.",
        )


@checks.check("no_match_is_empty", points=2, title="a search that matches nothing is a valid empty result", mistake="reports empty results as errors")
def no_match_is_empty(host) -> None:
    gate(host)
    _, found = sample(host, SEARCH, {"query": NO_MATCH_QUERY}, "empty")
    require([found])
    for query in NO_MATCH_CANDIDATES:
        assert not BLOG.search(query), query  # each word matches some article; together they match none
        _, found = sample(host, SEARCH, {"query": query}, "empty")
        require([found])


ARTICLES = {article["slug"]: article for article in BLOG.articles}


@checks.check("results_fit_the_context", points=3, title="a broad search returns a page of snippets, not every article", mistake="unbounded results")
def results_fit_the_context(host) -> None:
    # Every page of every search the gate made (the broad one first): a later page may be as unbounded as a first.
    pages = gate(host).pages
    pages = sorted(pages, key=lambda page: f'"query": "{BROAD_QUERY}"' not in page[0])
    for call, result in pages:
        size = len(result_text(result))
        expect(
            size <= RESULT_CHARS_LIMIT,
            f"{call} returns {size:,} characters of text; over {RESULT_CHARS_LIMIT:,} Claude Code saves a result to a file and shows "
            "Claude only its path. Return a page of snippets with a nextPage (raising anthropic/maxResultSizeChars is for output "
            "that is inherently large, not for a search).",
        )
        hits = payload(result, call).get("articles") or []
        expect(len(hits) <= PAGE_SIZE, f"{call} returns {len(hits)} articles on one page; the page size is {PAGE_SIZE}.")
        for hit in hits:
            extra = sorted(set(hit) & {"body", "sections"}) if isinstance(hit, dict) else []
            expect(not extra, f"{call} returns each article's {' and '.join(extra)}; a hit is a snippet, not the article (the field report, §4.5).")
            snippet = hit.get("snippet") if isinstance(hit, dict) else None
            expect(
                isinstance(snippet, str) and len(snippet) <= SNIPPET_CHARS + 2,
                f"Each hit of {call} needs a snippet of at most {SNIPPET_CHARS} characters (BLOG.snippet makes one); "
                f"{hit.get('slug') if isinstance(hit, dict) else hit} has {len(snippet) if isinstance(snippet, str) else 'none'}.",
            )
            article = ARTICLES.get(hit.get("slug"), {})
            wrong = [key for key in ("title", "published") if hit.get(key) != article.get(key)]
            expect(
                not wrong,
                f"Each hit of {call} is {{slug, title, published, snippet}}, as the specification says; {hit.get('slug')} "
                f"gives {', '.join(f'{key} {hit.get(key)!r}' for key in wrong)} where the article has "
                f"{', '.join(f'{key} {article.get(key)!r}' for key in wrong)}.",
            )
