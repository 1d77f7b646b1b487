"""Lab 4's hidden checks: the learner fixes a flawed blog server, flaw by flaw, without changing its answers.

Sources: shared/seeds/002_88507e95fbf07875.txt (§2.1 private tools published by accident, §2.3
read-only hints, §4.5 results that eat the context, §5.1 statuses instead of exceptions, §5.2
vague descriptions, the pre-launch checklist) and shared/seeds/004_16e38cc9560e0e5c.txt (lines
1388-1412 output limits, 1464-1468 and 677-681 names over 128 characters in the plugin form,
1601-1606 description limits). Each check judges one flaw with the rules of
``grader.server_check`` (the checker learners can run on any server) and, first, asks the
server the same questions the flawed version answers: a fix that changes an answer earns
nothing.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from grader.checking import CheckFailed, CheckRegistry, expect, expect_hints
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
READ_ONLY_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}  # seed 002 §2.3, line 121

# The questions the flawed server already answers; every fix must keep these answers.
SEARCH_QUESTIONS = ("rag pitfalls", "kubernetes helm", "team")
OUTLINE_QUESTIONS = ("mcp-006", "seo-004")
BROAD_QUERY = "team"  # matches every article: the unbounded result
NO_MATCH_QUERY = "quantum"
MAX_PAGES = 40


@contextmanager
def index_down(host):
    control = Path(host.state_dir) / "control.json"
    control.write_text(json.dumps({"index_down": True}))
    try:
        yield
    finally:
        control.unlink(missing_ok=True)


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


def search_answer(host, query: str) -> list[str]:
    """The slugs a search finds, in order, over every page."""
    slugs: list[str] = []
    page: Any = None
    for _ in range(MAX_PAGES):
        arguments = {"query": query} if page is None else {"query": query, "page": page}
        call = f"{SEARCH}({json.dumps(arguments)})"
        data = payload(host.call(SEARCH, arguments), call)
        hits = data.get("articles")
        expect(isinstance(hits, list), f'{call} must give the hits as a list under "articles"; got {sorted(data)}.')
        slugs += [hit.get("slug") if isinstance(hit, dict) else hit for hit in hits]
        page = data.get("nextPage")
        if page is None:
            return slugs
    raise CheckFailed(f"{SEARCH}({query!r}) still had a nextPage after {MAX_PAGES} pages: the last page must say nextPage null.")


def same_answers(host, tools: dict[str, Any] | None = None) -> None:
    """The gate of every check: the server still answers the questions the flawed version answers."""
    tools = tools if tools is not None else tools_by_name(host)
    expect(SEARCH in tools, f"Your server lists no {SEARCH} tool (it lists {sorted(tools)}); keep the tool the team uses.")
    for query in SEARCH_QUESTIONS:
        want = [a["slug"] for a in BLOG.search(query)]
        got = search_answer(host, query)
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


@checks.check("only_public_tools", points=2, title="tools/list publishes exactly the public tools", mistake="publishes a private tool")
def only_public_tools(host) -> None:
    tools = tools_by_name(host)
    same_answers(host, tools)
    require([check_whitelist(list(tools), [SEARCH, outline_tool(tools)])])


@checks.check("names_fit_in_plugin", points=2, title="every full tool name fits in 128 characters, plugin form included", mistake="tool name too long for Claude Code")
def names_fit_in_plugin(host) -> None:
    tools = tools_by_name(host)
    same_answers(host, tools)
    require([f for name in tools for f in check_names(name, SERVER_NAME, PLUGIN)])


@checks.check("read_only_tools_say_so", points=2, title="the read-only tools declare readOnlyHint, destructiveHint and idempotentHint", mistake="read-only tools without annotations")
def read_only_tools_say_so(host) -> None:
    tools = tools_by_name(host)
    same_answers(host, tools)
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
    tools = tools_by_name(host)
    same_answers(host, tools)
    require([f for tool in public_tools(tools) for f in check_description(tool)])


@checks.check("failures_are_statuses", points=3, title="failures come back as categorised isError results, not exceptions", mistake="exceptions instead of statuses")
def failures_are_statuses(host) -> None:
    tools = tools_by_name(host)
    same_answers(host, tools)
    cases = [
        (outline_tool(tools), {"slug": "no-such-article"}, "not_found", False, None),
        (SEARCH, {"query": "   "}, "validation", False, None),
        (SEARCH, {"query": "rag"}, "transient", True, index_down),
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
    tools = tools_by_name(host)
    same_answers(host, tools)
    _, found = sample(host, SEARCH, {"query": NO_MATCH_QUERY}, "empty")
    require([found])


@checks.check("results_fit_the_context", points=3, title="a broad search returns a page of snippets, not every article", mistake="unbounded results")
def results_fit_the_context(host) -> None:
    tools = tools_by_name(host)
    same_answers(host, tools)
    call = f'{SEARCH}({{"query": "{BROAD_QUERY}"}})'
    result = host.call(SEARCH, {"query": BROAD_QUERY})
    size = len(result_text(result))
    expect(
        size <= RESULT_CHARS_LIMIT,
        f"{call} returns {size:,} characters of text; over {RESULT_CHARS_LIMIT:,} Claude Code saves a result to a file and shows "
        "Claude only its path. Return a page of snippets with a nextPage (raising anthropic/maxResultSizeChars is for output "
        "that is inherently large, not for a search).",
    )
    hits = payload(result, call).get("articles") or []
    expect(len(hits) <= PAGE_SIZE, f"{call} returns {len(hits)} articles on its first page; the page size is {PAGE_SIZE}.")
    for hit in hits:
        extra = sorted(set(hit) & {"body", "sections"}) if isinstance(hit, dict) else []
        expect(not extra, f"{call} returns each article's {' and '.join(extra)}; a hit is a snippet, not the article (seed 002 §4.5).")
        snippet = hit.get("snippet") if isinstance(hit, dict) else None
        expect(
            isinstance(snippet, str) and len(snippet) <= SNIPPET_CHARS + 2,
            f"Each hit of {call} needs a snippet of at most {SNIPPET_CHARS} characters (BLOG.snippet makes one); "
            f"{hit.get('slug') if isinstance(hit, dict) else hit} has {len(snippet) if isinstance(snippet, str) else 'none'}.",
        )
