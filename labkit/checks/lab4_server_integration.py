"""Lab 4's visible checks: the learner fixes a flawed blog server, flaw by flaw, without changing its answers.

Sources: *Common mistakes* (2.1 The framework published private tools on its own, 2.3 Tools
without a read-only mark, 4.5 A whole article in the answer eats the client's context, 5.1
Exceptions instead of statuses, 5.2 Vague descriptions: the model does not call the tool, the
Pre-launch checklist) and *Claude Code docs, MCP* (MCP output limits and warnings, Tools with
names longer than 128 characters, MCP servers provided by plugins, Tool search for MCP server
authors).

Each check works on fixed cases whose expected answers are written out below, and, first, asks
the server the questions the flawed version answers (``QUESTIONS``, ``OUTLINES``): a fix that
changes an answer earns nothing. The server is asked those questions once per session; every
check reads the verdict (``gate``). The few rules the checks apply (the limits Claude Code
enforces, the words a description needs) are written out here too; the grader holds more cases
of the same skills.
"""

from __future__ import annotations

import json
import logging
import re
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from labkit import labstate
from labkit.checking import (
    CheckFailed,
    CheckRegistry,
    expect,
    expect_hints,
    logger_level,
    result_text,
    structured,
)
from labkit.descriptions import (
    RESULT_HINTS,
    WHEN_CLAUSES,
    first_match,
    undescribed_parameters,
)

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError

# The MCP SDK (and the course's client) is imported where a check runs, not with this module: the grader's recording
# reads the lab's checks (names, points, titles) without it.

LAB = "lab4_server_integration"
checks = CheckRegistry(LAB)

# The specification's public tools; anything else is private.
SEARCH, OUTLINE = "search_articles", "get_article"
# The flawed server's outline tool; its name is the lab's "over-long name" flaw.
LONG_NAME = "get_article_outline_with_title_summary_and_section_headings_for_one_published_blog_post"
PRIVATE_TOOL = "seo_traffic_report"
READ_ONLY_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}  # Common mistakes › 2.3


def expect_read_only(tool: dict[str, Any]) -> None:
    """A tool that only reads declares exactly READ_ONLY_HINTS; the first hint it does not fails, in words."""
    expect_hints(
        tool,
        READ_ONLY_HINTS,
        lambda hint, value, said: (
            f"{tool['name']} only reads, so it should say {hint}: {json.dumps(value)}; it says {json.dumps(said)}."
        ),
    )


# Claude Code's limits (Claude Code docs, MCP): a full tool name, a description loaded up front, the text of a
# result (over it the result is saved to a file, and Claude must read the file back); the specification's page.
NAME_LIMIT = 128
FULL_NAMES = ("mcp__blog__", "mcp__plugin_acme-engineering-handbook_blog__")  # server "blog" in the team's plugin
DESCRIPTION_LIMIT = 4_096
KEYWORD_WINDOW = 100  # tool search matches the start of a description
RESULT_CHARS_LIMIT = 50_000
PAGE_SIZE = 10
SNIPPET_CHARS = 300
CATEGORIES = ("transient", "validation", "business", "permission", "not_found")  # the error taxonomy (lesson 01)
MAX_PAGES = 40

# The questions the flawed server answers, with its answers: every fix must keep them.
QUESTIONS: dict[str, tuple[str, ...]] = {
    "rag pitfalls": ("rag-079", "rag-043", "rag-007"),
    "kubernetes helm": (
        "k8s-095",
        "k8s-083",
        "k8s-071",
        "k8s-059",
        "k8s-047",
        "k8s-035",
        "k8s-023",
        "k8s-011",
        "k8s-089",
        "k8s-077",
        "k8s-065",
        "k8s-053",
        "k8s-041",
        "k8s-029",
        "k8s-017",
        "k8s-005",
    ),
    # Matches every article: the unbounded result of the flawed server.
    "team": (
        "k8s-095",
        "k8s-083",
        "k8s-071",
        "k8s-059",
        "k8s-047",
        "k8s-035",
        "k8s-023",
        "k8s-011",
        "seo-094",
        "seo-082",
        "seo-070",
        "seo-058",
        "seo-046",
        "seo-034",
        "seo-022",
        "seo-010",
        "spring-093",
        "spring-081",
        "spring-069",
        "spring-057",
        "spring-045",
        "spring-033",
        "spring-021",
        "spring-009",
        "local-llm-092",
        "local-llm-080",
        "local-llm-068",
        "local-llm-056",
        "local-llm-044",
        "local-llm-032",
        "local-llm-020",
        "local-llm-008",
        "rag-091",
        "rag-079",
        "rag-067",
        "rag-055",
        "rag-043",
        "rag-031",
        "rag-019",
        "rag-007",
        "mcp-090",
        "mcp-078",
        "mcp-066",
        "mcp-054",
        "mcp-042",
        "mcp-030",
        "mcp-018",
        "mcp-006",
        "k8s-089",
        "k8s-077",
        "k8s-065",
        "k8s-053",
        "k8s-041",
        "k8s-029",
        "k8s-017",
        "k8s-005",
        "seo-088",
        "seo-076",
        "seo-064",
        "seo-052",
        "seo-040",
        "seo-028",
        "seo-016",
        "seo-004",
        "spring-087",
        "spring-075",
        "spring-063",
        "spring-051",
        "spring-039",
        "spring-027",
        "spring-015",
        "spring-003",
        "local-llm-086",
        "local-llm-074",
        "local-llm-062",
        "local-llm-050",
        "local-llm-038",
        "local-llm-026",
        "local-llm-014",
        "local-llm-002",
        "rag-085",
        "rag-073",
        "rag-061",
        "rag-049",
        "rag-037",
        "rag-025",
        "rag-013",
        "rag-001",
        "mcp-096",
        "mcp-084",
        "mcp-072",
        "mcp-060",
        "mcp-048",
        "mcp-036",
        "mcp-024",
        "mcp-012",
    ),
}
SECTIONS = ["Why it matters", "Setting it up", "What went wrong", "How to check it", "What I would do next"]
OUTLINES: dict[str, dict[str, Any]] = {
    "mcp-006": {
        "slug": "mcp-006",
        "title": "MCP: the pitfalls (part 6)",
        "published": "2025-07-15",
        "summary": "Part 6 of the MCP series: the pitfalls.",
        "sections": SECTIONS,
        "url": "https://blog.acme.example/mcp-006",
    },
    "seo-004": {
        "slug": "seo-004",
        "title": "SEO: a first setup (part 4)",
        "published": "2025-05-01",
        "summary": "Part 4 of the SEO series: a first setup.",
        "sections": SECTIONS,
        "url": "https://blog.acme.example/seo-004",
    },
}
# Two pages of those searches (the first of the broad one, the last of a two-page one), and the title and date
# of every article they can show.
PAGES = (("team", 1), ("kubernetes helm", 2))
HITS: dict[str, tuple[str, str]] = {
    "k8s-095": ("Kubernetes: running it in production (part 95)", "2025-12-22"),
    "k8s-083": ("Kubernetes: the pitfalls (part 83)", "2025-12-22"),
    "k8s-071": ("Kubernetes: debugging it (part 71)", "2025-12-22"),
    "k8s-059": ("Kubernetes: running it in production (part 59)", "2025-12-22"),
    "k8s-047": ("Kubernetes: the pitfalls (part 47)", "2025-12-22"),
    "k8s-035": ("Kubernetes: debugging it (part 35)", "2025-12-22"),
    "k8s-023": ("Kubernetes: running it in production (part 23)", "2025-12-22"),
    "k8s-011": ("Kubernetes: the pitfalls (part 11)", "2025-12-22"),
    "seo-094": ("SEO: running it in production (part 94)", "2025-11-15"),
    "seo-082": ("SEO: the pitfalls (part 82)", "2025-11-15"),
    "k8s-089": ("Kubernetes: testing it (part 89)", "2025-06-08"),
    "k8s-077": ("Kubernetes: a first setup (part 77)", "2025-06-08"),
    "k8s-065": ("Kubernetes: what it costs (part 65)", "2025-06-08"),
    "k8s-053": ("Kubernetes: testing it (part 53)", "2025-06-08"),
    "k8s-041": ("Kubernetes: a first setup (part 41)", "2025-06-08"),
    "k8s-029": ("Kubernetes: what it costs (part 29)", "2025-06-08"),
    "k8s-017": ("Kubernetes: testing it (part 17)", "2025-06-08"),
    "k8s-005": ("Kubernetes: a first setup (part 5)", "2025-06-08"),
}

# The cases of the checks, each with the answer it must get.
FAILURES = (  # (tool, arguments, errorCategory, isRetryable, while the search index is down)
    (OUTLINE, {"slug": "no-such-article"}, "not_found", False, False),
    (SEARCH, {"query": "   "}, "validation", False, False),
    (SEARCH, {"query": "rag"}, "transient", True, True),
)
NO_MATCH = "quantum"

# What a description needs (Common mistakes › 5.2): the four things, found by plain word matching (a lint).
DATA_WORDS = {SEARCH: ("article", "articles"), OUTLINE: ("article", "articles"), LONG_NAME: ("article", "articles")}


# --- talking to the server ----------------------------------------------------------------------


def shown(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool}({json.dumps(arguments, ensure_ascii=False)})"


def is_error(result: dict[str, Any]) -> bool:
    return result.get("isError") is True


def host_lost(exc: MCPError) -> bool:
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    return exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


def list_tools(host) -> list[dict[str, Any]]:
    """Every page of ``tools/list``, each tool in wire format with its own ``_meta``."""
    from servers.client import wire

    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):  # a paginator that never ends cannot hang the check
        page = host._run(partial(host.client.list_tools, cursor=cursor))
        tools.extend(wire(tool, envelope=True) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def tools_by_name(host) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in list_tools(host)}


def outline_tool(tools: dict[str, Any]) -> str:
    for name in (OUTLINE, LONG_NAME):
        if name in tools:
            return name
    raise CheckFailed(
        f"No tool gives an article's outline: the specification names it {OUTLINE}; your server lists {sorted(tools)}."
    )


@contextmanager
def index_down(host):
    """The blog's search index is being rebuilt for the duration (the kit reads control.json in the state folder)."""
    labstate.write_text(host, "control.json", json.dumps({"index_down": True}))
    try:
        yield
    finally:
        labstate.remove(host, "control.json")


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


@dataclass
class Search:
    """One search over every page: the slugs found, in order, and each page as (call, result)."""

    slugs: list[Any] = field(default_factory=list)
    pages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def search_every_page(host, query: str) -> Search:
    """Ask ``query`` and follow nextPage to the last page."""
    found = Search()
    page: Any = None
    for _ in range(MAX_PAGES):
        arguments = {"query": query} if page is None else {"query": query, "page": page}
        call = shown(SEARCH, arguments)
        result = host.call(SEARCH, arguments)
        data = payload(result, call)
        found.pages.append((call, result))
        hits = data.get("articles")
        expect(isinstance(hits, list), f'{call} must give the hits as a list under "articles"; got {sorted(data)}.')
        found.slugs += [hit.get("slug") if isinstance(hit, dict) else hit for hit in hits]
        page = data.get("nextPage")
        if page is None:
            return found
    raise CheckFailed(
        f"{SEARCH}({query!r}) still had a nextPage after {MAX_PAGES} pages: the last page must say nextPage null."
    )


def first_difference(got: list[Any], want: list[Any] | tuple[Any, ...]) -> int:
    """The 1-based position of the first hit that differs (or where one list ends)."""
    return next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want))) + 1


def expect_same_search(query: str, got: list[Any], want: list[Any] | tuple[Any, ...]) -> None:
    if list(got) != list(want):
        raise CheckFailed(
            f"A fix changed an answer: searching {query!r} over every page finds {len(got)} article(s) where the blog has "
            f"{len(want)}, first difference at hit {first_difference(got, want)}. Fix the flaws without changing what the "
            "server answers (same articles, newest first)."
        )


def expect_same_outline(call: str, data: dict[str, Any], want: dict[str, Any]) -> None:
    wrong = sorted(key for key, value in want.items() if data.get(key) != value)
    expect(not wrong, f"A fix changed an answer: {call} gives other {', '.join(wrong)} than the blog's outline {want}.")


# --- the gate: the questions the flawed server answers, asked once per session ---------------------


@dataclass
class Gate:
    """What the gate found on one session: the tools listed, every page of its searches, or why it failed."""

    tools: dict[str, Any] = field(default_factory=dict)
    searches: dict[str, Search] = field(default_factory=dict)
    failure: str | None = None

    def page(self, query: str, number: int) -> tuple[str, dict[str, Any]]:
        """Page ``number`` (from 1) of the gate's search for ``query``, as (call, result)."""
        pages = self.searches[query].pages
        expect(
            len(pages) >= number,
            f"{SEARCH}({query!r}) gives all {len(QUESTIONS[query])} hits on {len(pages)} page(s); a page holds at most "
            f"{PAGE_SIZE}, so they take at least {-(-len(QUESTIONS[query]) // PAGE_SIZE)}.",
        )
        return pages[number - 1]


# One gate per session: the checks of a submission share its host, so its questions are asked once.
GATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


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
            same_answers(host, found)
        except CheckFailed as exc:
            found.failure = str(exc)
        try:
            GATES[host] = found
        except TypeError:
            pass
    if found.failure is not None:
        raise CheckFailed(found.failure)
    return found


def same_answers(host, found: Gate) -> None:
    """The server still answers the questions the flawed version answers (its searches go to ``found``)."""
    tools = found.tools
    expect(
        SEARCH in tools, f"Your server lists no {SEARCH} tool (it lists {sorted(tools)}); keep the tool the team uses."
    )
    for query, want in QUESTIONS.items():
        search = found.searches[query] = search_every_page(host, query)
        expect_same_search(query, search.slugs, want)
    name = outline_tool(tools)
    for slug, want in OUTLINES.items():
        call = shown(name, {"slug": slug})
        expect_same_outline(call, payload(host.call(name, {"slug": slug}), call), want)


# --- what a check asks -----------------------------------------------------------------------------


@contextmanager
def unlisted_call():
    """The MCP client warns on stderr when it calls a tool the server does not list; here that is the point, so it keeps quiet."""
    with logger_level("client", logging.ERROR):  # the SDK client session's logger
        yield


def expect_not_callable(host, tool: str, arguments: dict[str, Any]) -> None:
    """Calling ``tool`` by name, listed or not, must fail: a tool hidden from tools/list but still served is still published."""
    from mcp.shared.exceptions import MCPError

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


def full_name_problems(tool: str) -> list[str]:
    """What is wrong with the full names Claude Code gives ``tool`` (plain and in the team's plugin)."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", tool)
    problems = []
    for prefix in FULL_NAMES:
        full = prefix + clean
        if len(full) > NAME_LIMIT:
            problems.append(
                f"{full} is {len(full)} characters: Claude Code leaves a tool whose full name exceeds {NAME_LIMIT} out of the "
                "tools it sends to Claude. Shorten the tool name."
            )
    return problems


def annotation_problems(tool: dict[str, Any]) -> list[str]:
    """A read-only tool declares its hints, and says it only reads."""
    name, hints = tool["name"], tool.get("annotations") or {}
    if not isinstance(hints.get("readOnlyHint"), bool):
        what = "no annotations at all" if not tool.get("annotations") else "annotations without readOnlyHint"
        return [
            (
                f"{name} has {what}. Clients react differently to a tool without hints (ChatGPT, for one, treats it as one "
                "that may change data and handles it more carefully); this course requires the hints on every tool. Declare readOnlyHint "
                "(and destructiveHint, idempotentHint) truthfully."
            )
        ]
    return []


def description_problems(tool: dict[str, Any], data_words: tuple[str, ...]) -> list[str]:
    """What a description lacks: a size Claude Code keeps, its data named first, and what data, when to call,
    what the result means and how to phrase each parameter (plain word matching)."""
    name = tool["name"]
    text = tool.get("description") or ""
    lowered = text.lower()
    words = set(re.findall(r"[^\W_]+", lowered))
    problems = []
    if len(text) > DESCRIPTION_LIMIT:
        problems.append(
            f"{name}: the description is {len(text)} characters; Claude Code cuts one loaded up front at {DESCRIPTION_LIMIT:,}. "
            "Shorten it and put the critical details first."
        )
    if not set(re.findall(r"[^\W_]+", lowered[:KEYWORD_WINDOW])) & set(data_words):
        problems.append(
            f"{name}: none of {', '.join(data_words)} appears in the description's first {KEYWORD_WINDOW} characters; tool "
            "search matches the start of a description, so open with the tool's data and action."
        )
    when, result = first_match(WHEN_CLAUSES, lowered), first_match(RESULT_HINTS, lowered)
    undescribed = undescribed_parameters(tool)
    parts = [
        (
            "what data",
            bool(words & set(data_words)),
            f"mentions {data_words[0]}" if words & set(data_words) else f"no mention of {data_words[0]}",
        ),
        (
            "when to call",
            when is not None,
            f'"{when}"' if when else 'no when-clause ("call it when...", "use it when...", "when the user...")',
        ),
        (
            "what to do with the result",
            result is not None,
            f'"{result}"' if result else 'no word on the result ("returns...", "an empty list means...", "next page")',
        ),
        (
            "how to phrase the input",
            not undescribed,
            "every parameter described" if not undescribed else f"no description for {', '.join(undescribed)}",
        ),
    ]
    if not all(ok for _, ok, _ in parts):
        problems.append(
            f"{name}: "
            + "; ".join(f"{label} {'✓' if ok else '✗'} ({why})" for label, ok, why in parts)
            + ". A description that "
            "says what data, when to call, how to ask and what to do with the result keeps the model from answering from "
            "memory or falling back to built-ins like Grep."
        )
    return problems


def require(problems: list[str]) -> None:
    expect(not problems, " ".join(problems))


def expect_status(
    host, tool: str, arguments: dict[str, Any], category: str, retryable: bool, down: bool = False
) -> None:
    """Calling ``tool`` is a failure the model can act on: isError with the taxonomy's errorCategory and isRetryable."""
    from mcp.shared.exceptions import MCPError

    call = shown(tool, arguments) + (" while the search index is down" if down else "")
    try:
        if down:
            with index_down(host):
                result = host.call(tool, arguments)
        else:
            result = host.call(tool, arguments)
    except MCPError as exc:
        if host_lost(exc):
            raise
        raise CheckFailed(
            f"{call} raised a JSON-RPC protocol error ({exc.error.code}: {exc.error.message}). The model never sees it and "
            'cannot tell "no data" from "server broken": catch the exception in the tool and return an isError result '
            "with errorCategory and isRetryable."
        ) from None
    expect(is_error(result), f"{call} was expected to fail but came back with isError false.")
    got = structured(result)
    said = got.get("errorCategory")
    expect(
        said in CATEGORIES,
        f"{call} returned isError true with {'no errorCategory' if said is None else f'errorCategory {said!r}, not one of the taxonomy'}: "
        f"an uncategorised error leaves the agent guessing whether to retry. Add errorCategory ({', '.join(CATEGORIES)}) "
        "and isRetryable to structuredContent.",
    )
    expect(
        isinstance(got.get("isRetryable"), bool),
        f"{call} returned a {said} error without a boolean isRetryable; always send both errorCategory and isRetryable.",
    )
    expect(
        said == category and got.get("isRetryable") is retryable,
        f"{call} should be a {category} error with isRetryable {json.dumps(retryable)}; it says errorCategory {said!r}, "
        f"isRetryable {json.dumps(got.get('isRetryable'))}.",
    )


def expect_empty(host, query: str) -> None:
    """A search that matches nothing is a valid empty answer: isError false, no hits, no next page."""
    arguments = {"query": query}
    call = shown(SEARCH, arguments)
    result = host.call(SEARCH, arguments)
    if is_error(result):
        category = structured(result).get("errorCategory")
        raise CheckFailed(
            f"{call} returned an error{f' ({category})' if category else ''} where a valid empty answer was expected; a "
            "query that matches nothing is not a failure: return isError false with an empty list."
        )
    data = structured(result)
    expect(
        data.get("articles") == [] and data.get("nextPage") is None,
        f"{call} matches nothing, so its structuredContent should say articles [] and nextPage null; it says "
        f"articles {json.dumps(data.get('articles'))[:80]}, nextPage {json.dumps(data.get('nextPage'))}.",
    )


def page_problems(call: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """A page fits the context: under Claude Code's limit, at most a page of hits, each a snippet with the fields a
    hit needs. Returns its hits."""
    size = len(result_text(result))
    expect(
        size <= RESULT_CHARS_LIMIT,
        f"{call} returns {size:,} characters of text; over {RESULT_CHARS_LIMIT:,} Claude Code saves a result to a file and puts "
        "only its path in the conversation, so Claude must read the file back before it can use a hit. Return a page of "
        "snippets with a nextPage (raising anthropic/maxResultSizeChars is for output that is inherently large, not for a search).",
    )
    hits = payload(result, call).get("articles") or []
    expect(len(hits) <= PAGE_SIZE, f"{call} returns {len(hits)} articles on one page; the page size is {PAGE_SIZE}.")
    for hit in hits:
        extra = sorted(set(hit) & {"body", "sections"}) if isinstance(hit, dict) else []
        expect(
            not extra,
            f"{call} returns each article's {' and '.join(extra)}; a hit is a snippet, not the article (Common mistakes › 4.5).",
        )
        snippet = hit.get("snippet") if isinstance(hit, dict) else None
        expect(
            isinstance(snippet, str) and len(snippet) <= SNIPPET_CHARS + 2,
            f"Each hit of {call} needs a snippet of at most {SNIPPET_CHARS} characters (BLOG.snippet makes one); "
            f"{hit.get('slug') if isinstance(hit, dict) else hit} has {len(snippet) if isinstance(snippet, str) else 'none'}.",
        )
    return hits


def expect_hit_fields(call: str, hit: dict[str, Any], want: dict[str, Any]) -> None:
    wrong = [key for key in ("title", "published") if hit.get(key) != want.get(key)]
    expect(
        not wrong,
        f"Each hit of {call} is {{slug, title, published, snippet}}, as the specification says; {hit.get('slug')} "
        f"gives {', '.join(f'{key} {hit.get(key)!r}' for key in wrong)} where the article has "
        f"{', '.join(f'{key} {want.get(key)!r}' for key in wrong)}.",
    )


# --- the checks --------------------------------------------------------------------------------------


@checks.check(
    "only_public_tools",
    points=2,
    title="tools/list publishes exactly the public tools",
    mistake="publishes a private tool",
)
def only_public_tools(host) -> None:
    tools = gate(host).tools
    public = [SEARCH, outline_tool(tools)]
    extra, missing = [t for t in tools if t not in public], [t for t in public if t not in tools]
    expect(
        not extra,
        f"Published but not in the specification: {', '.join(extra)} (accidental exposure: remove them from the server).",
    )
    expect(not missing, f"Expected but not published: {', '.join(missing)}.")
    # Nothing else is published: no resource and no prompt (the private data moved there is published all the
    # same), and the private tool does not answer a call by name.
    for kind, listed in (
        ("resources/list", [r.get("uri") for r in host.resources()]),
        ("prompts/list", [p.get("name") for p in host.prompts()]),
    ):
        expect(
            not listed,
            f"The server publishes exactly two tools and nothing else, but {kind} lists {', '.join(map(str, listed))}: "
            "what the specification does not name is private, whatever primitive it is published as.",
        )
    expect_not_callable(host, PRIVATE_TOOL, {"days": 7})


@checks.check(
    "names_fit_in_plugin",
    points=2,
    title="every full tool name fits in 128 characters, plugin form included",
    mistake="tool name too long for Claude Code",
)
def names_fit_in_plugin(host) -> None:
    require([problem for name in gate(host).tools for problem in full_name_problems(name)])


@checks.check(
    "read_only_tools_say_so",
    points=2,
    title="search_articles declares readOnlyHint, destructiveHint and idempotentHint",
    mistake="read-only tools without annotations",
)
def read_only_tools_say_so(host) -> None:
    tool = gate(host).tools[SEARCH]
    require(annotation_problems(tool))
    expect_read_only(tool)


@checks.check(
    "descriptions_get_tools_called",
    points=3,
    title="search_articles's description says what data, when to call, how to ask and what the result means",
    mistake="vague tool descriptions",
)
def descriptions_get_tools_called(host) -> None:
    require(description_problems(gate(host).tools[SEARCH], DATA_WORDS[SEARCH]))


@checks.check(
    "failures_are_statuses",
    points=3,
    title="failures come back as categorised isError results, not exceptions",
    mistake="exceptions instead of statuses",
)
def failures_are_statuses(host) -> None:
    outline = outline_tool(gate(host).tools)
    for tool, arguments, category, retryable, down in FAILURES:
        expect_status(host, outline if tool == OUTLINE else tool, arguments, category, retryable, down)


@checks.check(
    "no_match_is_empty",
    points=2,
    title="a search that matches nothing is a valid empty result",
    mistake="reports empty results as errors",
)
def no_match_is_empty(host) -> None:
    gate(host)
    expect_empty(host, NO_MATCH)


@checks.check(
    "results_fit_the_context",
    points=3,
    title="a broad search returns a page of snippets, not every article",
    mistake="unbounded results",
)
def results_fit_the_context(host) -> None:
    found = gate(host)
    for query, number in PAGES:
        call, result = found.page(query, number)
        for hit in page_problems(call, result):
            title, published = HITS.get(hit.get("slug"), (None, None))
            expect_hit_fields(call, hit, {"title": title, "published": published})
