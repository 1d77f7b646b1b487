"""Lab 4's checks: the fixed server passes, the flawed one handed out fails each check, and each flaw left in
(or fix that changes an answer) fails exactly what it should.

Each case grades code in process, as ``Lab.run`` does: a fresh state folder named by
``LAB_STATE_DIR`` (the kit's blog reads from it whether the search index is down), the
learner host serving the answer cell's ``server``, every check over one MCP session. One
case goes through the real grader, a learner host in a subprocess.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from labkit.checking import run_check
from grader.course import starting_code
from grader.grading import grade_code
from labkit import Lab
from grader.labs.lab4_server_integration import LONG_NAME, checks
from grader.notebook import answer_code, is_answer_cell, read_notebook
from servers.learner_host import load_learner_code
from servers.learner_host.kit_lab4 import BLOG, PLUGIN, SERVER_NAME
import labtests
from labtests import assert_fails_exactly, assert_sentence_in_words, failed, graded_cell_points, mutate

LAB = "lab4_server_integration"
SOURCE = Path(__file__).resolve().parents[2] / "labs" / "source" / LAB / f"{LAB}.ipynb"
SOLUTION = answer_code(read_notebook(SOURCE))
(STARTING_CODE,) = [starting_code(cell) for cell in read_notebook(SOURCE).cells if is_answer_cell(cell)]
ALL_CHECKS = set(checks.checks)
PART_A = {"only_public_tools", "names_fit_in_plugin"}
PART_B = {"read_only_tools_say_so", "descriptions_get_tools_called"}
PART_C = {"failures_are_statuses", "no_match_is_empty", "results_fit_the_context"}


# hosted(code): a session with a host running ``code``; grade(code): every check of the lab, in
# order, over one such session.
hosted = partial(labtests.hosted, LAB)
grade = partial(labtests.grade, LAB)


# --- the lab's shape ----------------------------------------------------------------------------


def test_the_lab_has_seven_checks_worth_seventeen_points_in_three_parts() -> None:
    points = {name: check.points for name, check in checks.checks.items()}
    assert PART_A | PART_B | PART_C == ALL_CHECKS
    assert (sum(points[n] for n in PART_A), sum(points[n] for n in PART_B), sum(points[n] for n in PART_C)) == (4, 5, 8)
    assert checks.total_points == 17


def test_the_notebooks_graded_cells_are_the_checks_with_their_points() -> None:
    assert graded_cell_points(SOURCE) == {name: check.points for name, check in checks.checks.items()}


def test_the_flawed_server_handed_out_has_every_flaw_the_lab_names() -> None:
    assert "def seo_traffic_report" in STARTING_CODE
    assert f"def {LONG_NAME}(" in STARTING_CODE
    assert len(f"mcp__{SERVER_NAME}__{LONG_NAME}") <= 128 < len(f"mcp__plugin_{PLUGIN}_{SERVER_NAME}__{LONG_NAME}")
    assert "annotations" not in STARTING_CODE and "raise LookupError" in STARTING_CODE


# --- the fixed server and the flawed one ----------------------------------------------------------


def test_the_fixed_server_passes_every_check() -> None:
    results = grade(SOLUTION)

    assert failed(results) == set(), {n: r.message for n, r in results.items() if not r.passed}
    assert all(r.message == checks[n].title for n, r in results.items())


def test_the_fixed_server_passes_every_check_the_way_the_notebook_runs_them() -> None:
    namespace, load_error = load_learner_code(LAB, SOLUTION)
    assert load_error is None
    lab = Lab(LAB)

    results = {name: lab.run(name, namespace) for name in checks.checks}

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


def test_the_flawed_server_answers_the_questions_every_fix_must_keep() -> None:
    # The gate of every check passes on the code handed out: the flaws are not wrong answers.
    from grader.labs.lab4_server_integration import gate

    with hosted(STARTING_CODE) as host:
        assert gate(host).failure is None


def test_the_gate_asks_its_questions_once_per_session() -> None:
    with hosted(SOLUTION) as host:
        calls = []
        call = host.call
        host.call = lambda tool, *args, **kwargs: calls.append(tool) or call(tool, *args, **kwargs)
        for name in ("names_fit_in_plugin", "read_only_tools_say_so", "descriptions_get_tools_called"):
            assert run_check(checks[name], host).passed, name
    # The three searches over every page and the two outlines, for the first check only.
    assert calls.count("search_articles") == len(BLOG.search("rag pitfalls")) // 10 + len(BLOG.search("kubernetes helm")) // 10 + len(BLOG.search("team")) // 10 + 3
    assert calls.count("get_article") == 2


def test_a_transient_check_leaves_the_search_index_up_again() -> None:
    with hosted(SOLUTION) as host:
        assert run_check(checks["failures_are_statuses"], host).passed
        assert not (host.state_dir / "control.json").exists()
        assert host.call("search_articles", query="rag")["isError"] is False


# --- one realistic half-fix (or wrong fix) per check ----------------------------------------------

PRIVATE_TOOL = '''


@server.tool(annotations=READ_ONLY)
def seo_traffic_report(days: Annotated[int, Field(description="How many days back.")] = 7) -> CallToolResult:
    """Report the blog's search traffic. Call it when the SEO agent asks. Returns clicks and positions."""
    return result("traffic", BLOG.traffic_report(days))
'''
OUTLINE_RETURN = (
    "    return result(f\"{outline['title']} ({outline['published']}): {outline['summary']} Read it at {outline['url']}.\", outline)"
)
READ_ONLY = "READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)"
PRIVATE_RESOURCE = '''


@server.resource("blog://traffic", name="traffic", description="The SEO agent's traffic report.", mime_type="application/json")
def traffic() -> str:
    return str(BLOG.traffic_report(7))
'''
PRIVATE_PROMPT = '''


@server.prompt()
def traffic_review(days: str = "7") -> str:
    """Review the blog's search traffic."""
    return f"Review this traffic report and suggest topics: {BLOG.traffic_report(int(days))}"
'''
# The private tool stays on the server; only the listing leaves it out.
HIDE_FROM_THE_LIST = '''

_every_tool = server.list_tools


async def public_tools_only():
    return [tool for tool in await _every_tool() if tool.name in PUBLIC_TOOLS]


server.list_tools = public_tools_only
'''

# (id, edits, the exact set of checks that must fail, a fragment of the first failing check's message)
MISTAKES = [
    ("private_tool_annotated_and_described", ((OUTLINE_RETURN, OUTLINE_RETURN + PRIVATE_TOOL),), {"only_public_tools"}, "seo_traffic_report"),
    ("long_name_kept", (("def get_article(\n", f"def {LONG_NAME}(\n"),), {"names_fit_in_plugin"}, "131 characters"),
    ("hints_missing_idempotent", ((READ_ONLY, "READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)"),), {"read_only_tools_say_so"}, "idempotentHint: true"),
    (
        "marked_destructive",
        ((READ_ONLY, "READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=True, idempotent_hint=True)"),),
        {"read_only_tools_say_so"},
        "destructiveHint: false",
    ),
    (
        "parameter_left_undescribed",
        (('    slug: Annotated[str, Field(description="The article\'s slug as search_articles returns it, e.g. \'mcp-006\'.")],\n', "    slug: str,\n"),),
        {"descriptions_get_tools_called"},
        "no description for slug",
    ),
    (
        "transient_said_not_retryable",
        (('return failure("transient", f"Search is unavailable: {exc}.", True,', 'return failure("transient", f"Search is unavailable: {exc}.", False,'),),
        {"failures_are_statuses"},
        "should be a transient error with isRetryable true",
    ),
    (
        "unavailable_index_raises",
        (("    except SearchUnavailable as exc:\n", "    except ZeroDivisionError as exc:\n"),),
        {"failures_are_statuses"},
        "no errorCategory",
    ),
    (
        "empty_query_searches_nothing",
        (("    if not query.strip():\n", "    if False:\n"),),
        {"failures_are_statuses"},
        "no errorCategory",
    ),
    (
        "no_match_as_not_found",
        (
            ("    if not hits:\n        text =", '    if not hits:\n        return failure("not_found", "Nothing.", False)\n    if not hits:\n        text ='),
        ),
        {"no_match_is_empty"},
        "not_found",
    ),
    ("snippet_is_the_whole_body", (('"snippet": BLOG.snippet(a, query)', '"snippet": a["body"]'),), {"results_fit_the_context"}, "at most 300 characters"),
    ("hit_carries_the_body", (('"snippet": BLOG.snippet(a, query)', '"snippet": BLOG.snippet(a, query), "body": a["body"]'),), {"results_fit_the_context"}, "body"),
    # Fixes that change an answer earn nothing anywhere; so does a name the specification does not give.
    ("renamed_to_another_short_name", (("def get_article(\n", "def article_outline(\n"),), ALL_CHECKS, "specification names it get_article"),
    ("pages_skip_the_first", (("start = (page - 1) * PAGE_SIZE", "start = page * PAGE_SIZE"),), ALL_CHECKS, "A fix changed an answer"),
    ("oldest_first", (("hits = BLOG.search(query)", "hits = BLOG.search(query)[::-1]"),), ALL_CHECKS, "first difference at hit 1"),
    ("page_ignored", (("for a in hits[start:start + PAGE_SIZE]]", "for a in hits[:PAGE_SIZE]]"),), ALL_CHECKS, "A fix changed an answer"),
    ("next_page_never_ends", (("next_page = page + 1 if start + PAGE_SIZE < len(hits) else None", "next_page = page + 1"),), ALL_CHECKS, "nextPage null"),
    # Flaws a check on the one case it names would miss: each is caught on the other cases of its kind.
    ("private_report_as_a_resource", ((OUTLINE_RETURN, OUTLINE_RETURN + PRIVATE_RESOURCE),), {"only_public_tools"}, "resources/list lists blog://traffic"),
    ("private_report_as_a_prompt", ((OUTLINE_RETURN, OUTLINE_RETURN + PRIVATE_PROMPT),), {"only_public_tools"}, "prompts/list lists traffic_review"),
    ("private_tool_hidden_from_the_list", ((OUTLINE_RETURN, OUTLINE_RETURN + PRIVATE_TOOL + HIDE_FROM_THE_LIST),), {"only_public_tools"}, "calling it by name still answers"),
    (
        "later_pages_unbounded",
        (
            ("for a in hits[start:start + PAGE_SIZE]]", "for a in (hits[:PAGE_SIZE] if page == 1 else hits[start:])]"),
            ("next_page = page + 1 if start + PAGE_SIZE < len(hits) else None", "next_page = 2 if page == 1 and len(hits) > PAGE_SIZE else None"),
        ),
        {"results_fit_the_context"},
        'search_articles({"query": "team", "page": 2}) returns 86 articles on one page',
    ),
    (
        "hits_without_title_and_date",
        (
            ("f\"- {h['slug']}: {h['title']} ({h['published']}): {h['snippet']}\"", "f\"- {h['slug']}: {h['snippet']}\""),
            ('"slug": a["slug"], "title": a["title"], "published": a["published"], "snippet"', '"slug": a["slug"], "snippet"'),
        ),
        {"results_fit_the_context"},
        "is {slug, title, published, snippet}",
    ),
    ("only_spaces_count_as_blank", (("    if not query.strip():", '    if not query.strip(" "):'),), {"failures_are_statuses"}, '"\\t \\n"'),
    ("outline_without_url", ((OUTLINE_RETURN, OUTLINE_RETURN.replace(", outline)", ", {k: v for k, v in outline.items() if k != 'url'})")),), ALL_CHECKS, "url"),
]


@pytest.mark.parametrize("edits,expected,fragment", [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES])
def test_each_flaw_left_in_fails_exactly_its_check(edits, expected, fragment) -> None:
    results = grade(mutate(SOLUTION, *edits))

    assert_fails_exactly(results, expected, checks)
    first = next(results[name] for name in checks.checks if name in expected)
    assert fragment in first.message, first.message


def test_a_half_fixed_server_earns_the_points_of_the_flaws_it_fixed() -> None:
    code = mutate(
        STARTING_CODE,
        ('\n\n\n@server.tool()\ndef seo_traffic_report(days: int = 7) -> dict:\n    """Traffic."""\n    return BLOG.traffic_report(days)', ""),
        (f"def {LONG_NAME}(", "def get_article("),
    )
    results = grade(code)

    assert_fails_exactly(results, ALL_CHECKS - PART_A, checks)
    assert sum(r.score for r in results.values()) == 4


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
