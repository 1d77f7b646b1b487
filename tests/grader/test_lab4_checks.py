"""Lab 4's checks, visible and hidden, as the grader runs them: the fixed server passes, the flawed one handed out
fails each check, each flaw left in (or fix that changes an answer) fails exactly what it should, and for every
hidden check a mistake the visible checks miss fails it, with a verdict that shows none of its cases.

Each case grades code in process, as ``Lab.run`` does: a fresh state folder named by
``LAB_STATE_DIR`` (the kit's blog reads from it whether the search index is down), the
learner host serving the answer cell's ``server``, every check over one MCP session. One
case goes through the real grader, a learner host in a subprocess.
"""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import labtests
import pytest
from labtests import (
    assert_fails_exactly,
    assert_sentence_in_words,
    failed,
    graded_cell_points,
    mutate,
)

from grader.course import starting_code
from grader.engine.grading import grade_code
from grader.labs import lab_checks
from grader.labs.lab4_server_integration import (
    BLANK_QUERIES,
    KNOWN_SLUGS,
    LONG_NAME,
    NO_MATCH_QUERIES,
    OLD_NAME_CALL,
    ORDER,
    PRIVATE_CALLS,
    SEARCHES,
    UNKNOWN_SLUGS,
    WHILE_DOWN,
    checks,
    gate,
    hidden,
)
from grader.notebook import answer_code, is_answer_cell, read_notebook
from labkit import Lab
from labkit.checking import as_shown, run_check
from labkit.checks import lab4_server_integration as visible
from servers.learner_host import load_learner_code
from servers.learner_host.kit_lab4 import BLOG, PAGE_SIZE, PLUGIN, SERVER_NAME

LAB = "lab4_server_integration"
SOURCE = Path(__file__).resolve().parents[2] / "labs" / "source" / LAB / f"{LAB}.ipynb"
SOLUTION = answer_code(read_notebook(SOURCE))
(STARTING_CODE,) = [starting_code(cell) for cell in read_notebook(SOURCE).cells if is_answer_cell(cell)]
ALL_CHECKS = set(checks.checks)
VISIBLE = set(visible.checks.checks)
HIDDEN = set(hidden.checks)
PART_A = {"only_public_tools", "names_fit_in_plugin", "nothing_private_answers"}
PART_B = {"read_only_tools_say_so", "outline_tool_read_only", "descriptions_get_tools_called", "outline_tool_described"}
PART_C = {
    "failures_are_statuses",
    "failures_on_unseen_inputs",
    "no_match_is_empty",
    "no_match_on_unseen_queries",
    "results_fit_the_context",
    "pages_of_unseen_searches",
}


# hosted(code): a session with a host running ``code``; grade(code): every check of the lab, in
# order, over one such session.
hosted = partial(labtests.hosted, LAB)
grade = partial(labtests.grade, LAB)


# --- the lab's shape ----------------------------------------------------------------------------


def test_the_lab_has_seven_visible_checks_worth_17_points_and_six_hidden_worth_11_in_three_parts() -> None:
    points = {name: check.points for name, check in checks.checks.items()}
    assert PART_A | PART_B | PART_C == ALL_CHECKS == VISIBLE | HIDDEN and not VISIBLE & HIDDEN
    assert (sum(points[n] for n in PART_A), sum(points[n] for n in PART_B), sum(points[n] for n in PART_C)) == (
        6,
        8,
        14,
    )
    assert (sum(points[n] for n in VISIBLE), sum(points[n] for n in HIDDEN), checks.total_points) == (17, 11, 28)
    assert set(checks.hidden) == HIDDEN and all(1 <= points[n] <= 3 for n in HIDDEN)
    assert not any(check.hidden for check in visible.checks.checks.values())
    assert lab_checks(LAB) is checks
    # Each part's skills have a hidden check.
    assert all(part & HIDDEN for part in (PART_A, PART_B, PART_C))


def test_the_notebooks_graded_cells_are_the_checks_with_their_points_in_order() -> None:
    assert graded_cell_points(SOURCE) == {name: check.points for name, check in checks.checks.items()}
    graded = [
        cell.metadata.nbgrader["grade_id"]
        for cell in read_notebook(SOURCE).cells
        if cell.metadata.get("nbgrader", {}).get("grade")
    ]
    assert graded == ORDER == list(checks.checks)


def test_the_notebook_imports_nothing_of_the_grader_and_each_hidden_cell_only_says_so() -> None:
    cells = read_notebook(SOURCE).cells
    for cell in cells:
        assert not re.search(r"^\s*(from|import)\s+grader\b", cell.source, re.MULTILINE), cell.source
        assert "grader." not in cell.source or cell.cell_type == "markdown"
    for cell in cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") in HIDDEN:
            comment, call = cell.source.splitlines()
            assert comment.startswith("# Hidden check: ") and call == f'lab.hidden("{meta["grade_id"]}")'
            assert meta["locked"] is True and meta["solution"] is False and meta["schema_version"] == 3
        elif meta.get("grade"):
            assert cell.source == f'lab.check("{meta["grade_id"]}")'


NUMBERS = {"five": 5, "six": 6, "seven": 7, "eight": 8}


def test_the_introduction_counts_the_flaws_its_table_lists_one_visible_check_each() -> None:
    intro = read_notebook(SOURCE).cells[0].source
    (said,) = re.findall(r"it has (\w+)\s+flaws", intro)
    rows = [line for line in intro.splitlines() if re.match(r"\| [ABC] \|", line)]
    assert NUMBERS[said] == len(rows) == len(VISIBLE)
    assert {re.search(r"`(\w+)` \| \d+ \|$", row).group(1) for row in rows} == VISIBLE


def test_the_flawed_server_handed_out_has_every_flaw_the_lab_names() -> None:
    assert "def seo_traffic_report" in STARTING_CODE
    assert f"def {LONG_NAME}(" in STARTING_CODE
    assert len(f"mcp__{SERVER_NAME}__{LONG_NAME}") <= 128 < len(f"mcp__plugin_{PLUGIN}_{SERVER_NAME}__{LONG_NAME}")
    assert "annotations" not in STARTING_CODE and "raise LookupError" in STARTING_CODE


# --- the hidden cases ------------------------------------------------------------------------------

SLUGS = {article["slug"] for article in BLOG.articles}
# Every concrete input of the hidden checks, as a message would quote it.
HIDDEN_INPUTS = sorted(
    {
        *UNKNOWN_SLUGS,
        *KNOWN_SLUGS,
        *NO_MATCH_QUERIES,
        *SEARCHES,
        *(arguments["query"] for arguments in WHILE_DOWN),
        OLD_NAME_CALL["slug"],
        *(json.dumps(arguments)[1:-1] for arguments in PRIVATE_CALLS if arguments),
        *(json.dumps(query, ensure_ascii=False)[1:-1] for query in BLANK_QUERIES if query),
    }
)


def test_the_hidden_cases_are_none_of_the_visible_ones() -> None:
    visible_slugs = set(visible.OUTLINES) | {a["slug"] for _, a, *_ in visible.FAILURES if "slug" in a}
    visible_queries = (
        set(visible.QUESTIONS) | {visible.NO_MATCH} | {a["query"] for _, a, *_ in visible.FAILURES if "query" in a}
    )
    assert not (set(UNKNOWN_SLUGS) | set(KNOWN_SLUGS) | {OLD_NAME_CALL["slug"]}) & visible_slugs
    hidden_queries = set(NO_MATCH_QUERIES) | set(SEARCHES) | set(BLANK_QUERIES) | {a["query"] for a in WHILE_DOWN}
    assert not hidden_queries & visible_queries
    assert {"days": 7} not in PRIVATE_CALLS  # the visible check's call


def test_the_hidden_cases_are_what_they_stand_for() -> None:
    assert not set(UNKNOWN_SLUGS) & SLUGS and set(KNOWN_SLUGS) <= SLUGS
    for query in NO_MATCH_QUERIES:
        assert BLOG.search(query) == [], query
    # Most are words the blog has, never together: a no-match a check of one unknown word would miss.
    assert sum(all(BLOG.search(word) for word in query.split()) for query in NO_MATCH_QUERIES) >= 3
    for query in BLANK_QUERIES:
        assert not query.strip()
    sizes = [len(BLOG.search(query)) for query in SEARCHES]
    assert len(BLOG.articles) in sizes  # a broad search, every article
    assert any(PAGE_SIZE < size < 2 * PAGE_SIZE for size in sizes) and any(0 < size <= PAGE_SIZE for size in sizes)


def test_hidden_titles_and_mistakes_name_no_case() -> None:
    for name in HIDDEN:
        check = checks[name]
        for text in (check.title, check.mistake):
            assert not [value for value in HIDDEN_INPUTS if value in text], (name, text)


# --- the fixed server and the flawed one ----------------------------------------------------------


def test_the_fixed_server_passes_every_check() -> None:
    results = grade(SOLUTION)

    assert failed(results) == set(), {n: r.message for n, r in results.items() if not r.passed}
    assert all(r.message == checks[n].title for n, r in results.items())


def test_the_fixed_server_passes_every_visible_check_the_way_the_notebook_runs_them() -> None:
    namespace, load_error = load_learner_code(LAB, SOLUTION)
    assert load_error is None
    lab = Lab(LAB)
    assert set(lab.checks.checks) == VISIBLE

    results = {name: lab.run(name, namespace) for name in lab.checks.checks}

    assert failed(results) == set(), {n: r.message for n, r in results.items() if not r.passed}


def test_the_flawed_server_as_handed_out_fails_every_check_each_with_its_own_flaw() -> None:
    results = grade(STARTING_CODE)

    assert_fails_exactly(results, ALL_CHECKS, checks)
    assert "seo_traffic_report" in results["only_public_tools"].message
    assert "131 characters" in results["names_fit_in_plugin"].message
    assert "no annotations" in results["read_only_tools_say_so"].message
    assert "when to call ✗" in results["descriptions_get_tools_called"].message
    assert "no errorCategory" in results["failures_are_statuses"].message
    assert "valid empty answer" in results["no_match_is_empty"].message
    assert "characters of text; over 50,000" in results["results_fit_the_context"].message
    assert "seo_traffic_report" in results["nothing_private_answers"].message
    assert "no annotations" in results["outline_tool_read_only"].message
    assert "when to call ✗" in results["outline_tool_described"].message
    assert "no errorCategory" in results["failures_on_unseen_inputs"].message
    assert "valid empty answer" in results["no_match_on_unseen_queries"].message
    assert "characters of text; over 50,000" in results["pages_of_unseen_searches"].message


def test_the_flawed_server_answers_the_questions_every_fix_must_keep() -> None:
    # The gate of every check passes on the code handed out: the flaws are not wrong answers.
    with hosted(STARTING_CODE) as host:
        assert gate(host).failure is None


def test_the_gate_asks_its_questions_once_per_session_for_visible_and_hidden_checks_alike() -> None:
    with hosted(SOLUTION) as host:
        calls = []
        call = host.call
        host.call = lambda tool, *args, **kwargs: calls.append(tool) or call(tool, *args, **kwargs)
        for name in (
            "names_fit_in_plugin",
            "read_only_tools_say_so",
            "outline_tool_read_only",
            "descriptions_get_tools_called",
            "outline_tool_described",
        ):
            assert run_check(checks[name], host).passed, name
    # The three searches over every page and the two outlines, for the first check only.
    pages = sum(-(-len(BLOG.search(query)) // PAGE_SIZE) for query in visible.QUESTIONS)
    assert (calls.count("search_articles"), calls.count("get_article")) == (pages, 2) == (13, 2)


def test_a_transient_check_leaves_the_search_index_up_again() -> None:
    with hosted(SOLUTION) as host:
        for name in ("failures_are_statuses", "failures_on_unseen_inputs"):
            assert run_check(checks[name], host).passed
            assert not (host.state_dir / "control.json").exists()
            assert host.call("search_articles", query="rag")["isError"] is False


# --- one realistic half-fix (or wrong fix) per check ----------------------------------------------

PRIVATE_TOOL = '''


@server.tool(annotations=READ_ONLY)
def seo_traffic_report(days: Annotated[int, Field(description="How many days back.")] = 7) -> CallToolResult:
    """Report the blog's search traffic. Call it when the SEO agent asks. Returns clicks and positions."""
    return result("traffic", BLOG.traffic_report(days))
'''
OUTLINE_RETURN = "    return result(f\"{outline['title']} ({outline['published']}): {outline['summary']} Read it at {outline['url']}.\", outline)"
READ_ONLY = "READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)"
PRIVATE_RESOURCE = """


@server.resource("blog://traffic", name="traffic", description="The SEO agent's traffic report.", mime_type="application/json")
def traffic() -> str:
    return str(BLOG.traffic_report(7))
"""
PRIVATE_TEMPLATE = """


@server.resource("blog://traffic/{days}", name="traffic", description="The SEO agent's traffic report.", mime_type="application/json")
def traffic(days: str) -> str:
    return str(BLOG.traffic_report(int(days)))
"""
PRIVATE_PROMPT = '''


@server.prompt()
def traffic_review(days: str = "7") -> str:
    """Review the blog's search traffic."""
    return f"Review this traffic report and suggest topics: {BLOG.traffic_report(int(days))}"
'''
# A tool stays on the server; only the listing leaves it out.
HIDE_FROM_THE_LIST = """

_every_tool = server.list_tools


async def public_tools_only():
    return [tool for tool in await _every_tool() if tool.name in PUBLIC_TOOLS]


server.list_tools = public_tools_only
"""
OLD_NAME_KEPT = f'''


@server.tool(annotations=READ_ONLY)
def {LONG_NAME}(slug: str) -> CallToolResult:
    """The old name of get_article, for clients that still call it."""
    return get_article(slug)
'''
OUTLINE_DOCSTRING = '''    """Get one article of the team's engineering blog as an outline: title, date, summary, section headings, URL.

    Call it when the user wants to know what an article found by search_articles covers. Returns the outline, not
    the full text: give the user the URL to read it. An unknown slug is a not_found error: search again.
    """'''
NO_MATCH = "    if not hits:\n        text ="

# (id, edits, the exact set of checks that must fail, a fragment of the first failing check's message)
MISTAKES = [
    (
        "private_tool_annotated_and_described",
        ((OUTLINE_RETURN, OUTLINE_RETURN + PRIVATE_TOOL),),
        {"only_public_tools", "nothing_private_answers"},
        "seo_traffic_report",
    ),
    ("long_name_kept", (("def get_article(\n", f"def {LONG_NAME}(\n"),), {"names_fit_in_plugin"}, "131 characters"),
    (
        "hints_missing_idempotent",
        ((READ_ONLY, "READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)"),),
        {"read_only_tools_say_so", "outline_tool_read_only"},
        "idempotentHint: true",
    ),
    (
        "marked_destructive",
        ((READ_ONLY, "READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=True, idempotent_hint=True)"),),
        {"read_only_tools_say_so", "outline_tool_read_only"},
        "destructiveHint: false",
    ),
    (
        "query_left_undescribed",
        (
            (
                "    query: Annotated[str, Field(description=\"Words to look for, in English, e.g. 'rag pitfalls'; every word must match.\")],\n",
                "    query: str,\n",
            ),
        ),
        {"descriptions_get_tools_called"},
        "no description for query",
    ),
    (
        "search_description_without_a_when_clause",
        (
            (
                "    Call it when the user asks how to do something in these topics or wants a source, instead of answering from\n    memory or grepping the repository. ",
                "    ",
            ),
        ),
        {"descriptions_get_tools_called"},
        "when to call ✗",
    ),
    (
        "transient_said_not_retryable",
        (
            (
                'return failure("transient", f"Search is unavailable: {exc}.", True,',
                'return failure("transient", f"Search is unavailable: {exc}.", False,',
            ),
        ),
        {"failures_are_statuses", "failures_on_unseen_inputs"},
        'search_articles({"query": "rag"}) while the search index is down should be a transient error with isRetryable true',
    ),
    (
        "unavailable_index_raises",
        (("    except SearchUnavailable as exc:\n", "    except ZeroDivisionError as exc:\n"),),
        {"failures_are_statuses", "failures_on_unseen_inputs"},
        "no errorCategory",
    ),
    (
        "empty_query_searches_nothing",
        (("    if not query.strip():\n", "    if False:\n"),),
        {"failures_are_statuses", "failures_on_unseen_inputs"},
        "no errorCategory",
    ),
    (
        "no_match_as_not_found",
        ((NO_MATCH, '    if not hits:\n        return failure("not_found", "Nothing.", False)\n' + NO_MATCH),),
        {"no_match_is_empty", "no_match_on_unseen_queries"},
        "not_found",
    ),
    (
        "snippet_is_the_whole_body",
        (('"snippet": BLOG.snippet(a, query)', '"snippet": a["body"]'),),
        {"results_fit_the_context", "pages_of_unseen_searches"},
        "at most 300 characters",
    ),
    (
        "hit_carries_the_body",
        (('"snippet": BLOG.snippet(a, query)', '"snippet": BLOG.snippet(a, query), "body": a["body"]'),),
        {"results_fit_the_context", "pages_of_unseen_searches"},
        "body",
    ),
    (
        "hits_without_title_and_date",
        (
            (
                "f\"- {h['slug']}: {h['title']} ({h['published']}): {h['snippet']}\"",
                "f\"- {h['slug']}: {h['snippet']}\"",
            ),
            (
                '"slug": a["slug"], "title": a["title"], "published": a["published"], "snippet"',
                '"slug": a["slug"], "snippet"',
            ),
        ),
        {"results_fit_the_context", "pages_of_unseen_searches"},
        "is {slug, title, published, snippet}",
    ),
    # Fixes that change an answer earn nothing anywhere; so does a name the specification does not give.
    (
        "renamed_to_another_short_name",
        (("def get_article(\n", "def article_outline(\n"),),
        ALL_CHECKS,
        "specification names it get_article",
    ),
    (
        "pages_skip_the_first",
        (("start = (page - 1) * PAGE_SIZE", "start = page * PAGE_SIZE"),),
        ALL_CHECKS,
        "A fix changed an answer",
    ),
    (
        "oldest_first",
        (("hits = BLOG.search(query)", "hits = BLOG.search(query)[::-1]"),),
        ALL_CHECKS,
        "first difference at hit 1",
    ),
    (
        "page_ignored",
        (("for a in hits[start:start + PAGE_SIZE]]", "for a in hits[:PAGE_SIZE]]"),),
        ALL_CHECKS,
        "A fix changed an answer",
    ),
    (
        "next_page_never_ends",
        (("next_page = page + 1 if start + PAGE_SIZE < len(hits) else None", "next_page = page + 1"),),
        ALL_CHECKS,
        "nextPage null",
    ),
    (
        "outline_without_url",
        (
            (
                OUTLINE_RETURN,
                OUTLINE_RETURN.replace(", outline)", ", {k: v for k, v in outline.items() if k != 'url'})"),
            ),
        ),
        ALL_CHECKS,
        "url",
    ),
    # Private data published as another primitive, or a tool hidden from the list but still served.
    (
        "private_report_as_a_resource",
        ((OUTLINE_RETURN, OUTLINE_RETURN + PRIVATE_RESOURCE),),
        {"only_public_tools"},
        "resources/list lists blog://traffic",
    ),
    (
        "private_report_as_a_prompt",
        ((OUTLINE_RETURN, OUTLINE_RETURN + PRIVATE_PROMPT),),
        {"only_public_tools"},
        "prompts/list lists traffic_review",
    ),
    (
        "private_tool_hidden_from_the_list",
        ((OUTLINE_RETURN, OUTLINE_RETURN + PRIVATE_TOOL + HIDE_FROM_THE_LIST),),
        {"only_public_tools", "nothing_private_answers"},
        "calling it by name still answers",
    ),
]


@pytest.mark.parametrize("edits,expected,fragment", [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES])
def test_each_flaw_left_in_fails_exactly_its_checks(edits, expected, fragment) -> None:
    results = grade(mutate(SOLUTION, *edits))

    assert_fails_exactly(results, expected, checks)
    first = next(results[name] for name in checks.checks if name in expected)
    assert fragment in first.message, first.message


# --- mistakes only a hidden check catches -----------------------------------------------------------

# hidden check -> (a mistake every visible check misses, the exact set of checks it fails, a fragment of the
# hidden check's own message, which the learner is never shown)
HIDDEN_ONLY = {
    "nothing_private_answers": (
        "private_report_as_a_template",
        ((OUTLINE_RETURN, OUTLINE_RETURN + PRIVATE_TEMPLATE),),
        {"nothing_private_answers"},
        "blog://traffic/{days}",
    ),
    "outline_tool_read_only": (
        "outline_tool_left_unannotated",
        (("@server.tool(annotations=READ_ONLY)\ndef get_article(", "@server.tool()\ndef get_article("),),
        {"outline_tool_read_only"},
        "no annotations",
    ),
    "outline_tool_described": (
        "outline_tool_left_vague",
        ((OUTLINE_DOCSTRING, '    """Article outline."""'),),
        {"outline_tool_described"},
        "when to call ✗",
    ),
    "failures_on_unseen_inputs": (
        "only_spaces_count_as_blank",
        (("    if not query.strip():", '    if not query.strip(" "):'),),
        {"failures_on_unseen_inputs"},
        '"\\t \\n"',
    ),
    "no_match_on_unseen_queries": (
        "no_match_of_known_words_is_not_found",
        (
            (
                NO_MATCH,
                "    if not hits and all(BLOG.search(word) for word in query.split()):\n"
                '        return failure("not_found", f"No article has all of {query!r}.", False)\n' + NO_MATCH,
            ),
        ),
        {"no_match_on_unseen_queries"},
        "not_found",
    ),
    "pages_of_unseen_searches": (
        "later_pages_unbounded",
        (
            ("for a in hits[start:start + PAGE_SIZE]]", "for a in (hits[:PAGE_SIZE] if page == 1 else hits[start:])]"),
            (
                "next_page = page + 1 if start + PAGE_SIZE < len(hits) else None",
                "next_page = 2 if page == 1 and len(hits) > PAGE_SIZE else None",
            ),
        ),
        {"pages_of_unseen_searches"},
        "86 articles on one page",
    ),
}
# More mistakes of the kind: the old name still served once get_article replaces it, and a server that answers
# only the questions the notebook shows.
MORE_HIDDEN_ONLY = [
    (
        "old_name_still_served",
        ((OUTLINE_RETURN, OUTLINE_RETURN + OLD_NAME_KEPT + HIDE_FROM_THE_LIST),),
        {"nothing_private_answers"},
        f"{LONG_NAME} is not in tools/list, but calling it by name still answers",
    ),
    (
        "visible_questions_special_cased",
        (
            (
                "    if not query.strip():\n",
                (
                    '    if query not in ("rag pitfalls", "kubernetes helm", "team", "   ", "rag", "quantum"):\n'
                    '        return result("No article matches.", {"articles": [], "page": page, "nextPage": None, "total": 0})\n'
                    "    if not query.strip():\n"
                ),
            ),
        ),
        {"failures_on_unseen_inputs", "pages_of_unseen_searches"},
        "was expected to fail but came back with isError false",
    ),
]


def test_every_hidden_check_has_a_mistake_only_it_catches() -> None:
    assert set(HIDDEN_ONLY) == HIDDEN


@pytest.mark.parametrize(
    "edits,expected,fragment",
    [m[1:] for m in HIDDEN_ONLY.values()] + [m[1:] for m in MORE_HIDDEN_ONLY],
    ids=[m[0] for m in HIDDEN_ONLY.values()] + [m[0] for m in MORE_HIDDEN_ONLY],
)
def test_a_mistake_every_visible_check_misses_fails_its_hidden_check(edits, expected, fragment) -> None:
    results = grade(mutate(SOLUTION, *edits))

    assert expected <= HIDDEN
    assert not failed(results) & VISIBLE
    assert_fails_exactly(results, expected, checks)
    first = next(results[name] for name in checks.checks if name in expected)
    assert fragment in first.message, first.message


@pytest.mark.parametrize("name", sorted(HIDDEN_ONLY))
def test_a_failed_hidden_checks_verdict_as_shown_names_its_skill_and_mistake_and_none_of_its_cases(name) -> None:
    _, edits, _, fragment = HIDDEN_ONLY[name]
    check = checks[name]
    result = grade(mutate(SOLUTION, *edits), {name})[name]

    shown = as_shown(check, result).message
    assert not result.passed and fragment in result.message
    assert fragment not in shown and result.message not in shown
    assert check.title[1:] in shown and check.mistake in shown
    assert not [value for value in HIDDEN_INPUTS if value in shown], shown


def test_the_hidden_inputs_a_verdict_must_not_show_are_in_what_the_checks_find() -> None:
    # What the check finds names its cases, so a verdict shown as found would give them away.
    _, edits, _, _ = HIDDEN_ONLY["failures_on_unseen_inputs"]
    result = grade(mutate(SOLUTION, *edits), {"failures_on_unseen_inputs"})["failures_on_unseen_inputs"]
    assert [value for value in HIDDEN_INPUTS if value in result.message] == ["\\t \\n"]


# --- half fixes, broken answer cells, the real grader ------------------------------------------------


def test_a_half_fixed_server_earns_the_points_of_the_flaws_it_fixed() -> None:
    code = mutate(
        STARTING_CODE,
        (
            '\n\n\n@server.tool()\ndef seo_traffic_report(days: int = 7) -> dict:\n    """Traffic."""\n    return BLOG.traffic_report(days)',
            "",
        ),
        (f"def {LONG_NAME}(", "def get_article("),
    )
    results = grade(code)

    assert_fails_exactly(results, ALL_CHECKS - PART_A, checks)
    assert sum(r.score for r in results.values()) == 6


def test_an_answer_cell_that_does_not_run_fails_every_check_saying_why() -> None:
    results = grade(SOLUTION.replace("def search_articles(", "def search_articles(((", 1))

    assert failed(results) == ALL_CHECKS
    for result in results.values():
        assert "SyntaxError" in result.message
        assert_sentence_in_words(result.message)


def test_the_grader_runs_the_lab_over_stdio() -> None:
    fixed = grade_code(LAB, SOLUTION)
    flawed = grade_code(LAB, STARTING_CODE)

    assert [r.name for r in fixed] == list(checks.checks) and all(r.passed for r in fixed)
    assert not any(r.passed for r in flawed)
    assert BLOG.search("team")  # the kit's data is what the questions ask about
