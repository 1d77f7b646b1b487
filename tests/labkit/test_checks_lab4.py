"""Lab 4's visible checks, the ones a learner installs: they load nothing of the grader, their written-out answers
are the blog's, and in the notebook they pass the fixed server and name the case and the answer when they fail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from solution_edits import replace_once

from grader.notebook import answer_code, read_notebook
from labkit import Lab
from labkit.checks import lab4_server_integration as visible
from servers.learner_host import load_learner_code
from servers.learner_host.kit_lab4 import (
    BLOG,
    PAGE_SIZE,
    PLUGIN,
    PUBLIC_TOOLS,
    SERVER_NAME,
    SNIPPET_CHARS,
)

LAB = "lab4_server_integration"
REPO = Path(__file__).resolve().parents[2]
SOLUTION = answer_code(read_notebook(REPO / "labs" / "source" / LAB / f"{LAB}.ipynb"))
NAMES = {
    "only_public_tools": 2,
    "names_fit_in_plugin": 2,
    "read_only_tools_say_so": 2,
    "descriptions_get_tools_called": 3,
    "failures_are_statuses": 3,
    "no_match_is_empty": 2,
    "results_fit_the_context": 3,
}


def test_importing_the_visible_checks_loads_nothing_of_the_grader() -> None:
    code = (
        f"import labkit.checks.{LAB}, sys; "
        "assert not [m for m in sys.modules if m == 'grader' or m.startswith('grader.')], sorted(sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]


def test_they_are_the_labs_seven_visible_checks_and_none_is_hidden() -> None:
    assert {name: check.points for name, check in visible.checks.checks.items()} == NAMES
    assert not any(check.hidden for check in visible.checks.checks.values())


def test_the_answers_written_out_are_the_blogs() -> None:
    for query, slugs in visible.QUESTIONS.items():
        assert list(slugs) == [article["slug"] for article in BLOG.search(query)], query
    for slug, outline in visible.OUTLINES.items():
        assert outline == BLOG.outline(slug)
    articles = {article["slug"]: article for article in BLOG.articles}
    for slug, (title, published) in visible.HITS.items():
        assert (title, published) == (articles[slug]["title"], articles[slug]["published"]), slug


def test_the_pages_read_are_pages_of_the_questions_and_every_hit_they_can_hold_is_written_out() -> None:
    for query, number in visible.PAGES:
        slugs = visible.QUESTIONS[query]
        assert len(slugs) > (number - 1) * PAGE_SIZE  # the page exists at the specification's page size
        # At any page size up to PAGE_SIZE, page ``number`` holds hits from number - 1 to number * PAGE_SIZE.
        assert set(slugs[number - 1 : number * PAGE_SIZE]) <= set(visible.HITS), query


def test_the_limits_and_names_written_out_are_the_kits() -> None:
    assert (visible.SEARCH, visible.OUTLINE) == PUBLIC_TOOLS
    assert (visible.PAGE_SIZE, visible.SNIPPET_CHARS) == (PAGE_SIZE, SNIPPET_CHARS)
    assert visible.FULL_NAMES == (f"mcp__{SERVER_NAME}__", f"mcp__plugin_{PLUGIN}_{SERVER_NAME}__")


def test_a_full_name_over_128_characters_is_named_with_its_length() -> None:
    assert visible.full_name_problems(visible.OUTLINE) == []
    (problem,) = visible.full_name_problems(visible.LONG_NAME)
    assert "131 characters" in problem
    assert visible.full_name_problems("x" * 84) == [] and len(visible.full_name_problems("x" * 85)) == 1


@pytest.mark.parametrize(
    "description,properties,missing",
    [
        ("Search articles.", {"query": {"description": "Words."}}, "when to call ✗"),
        (
            "Search the blog's articles. Call it when the user asks. Returns hits.",
            {"query": {}},
            "no description for query",
        ),
        (
            "Use it when the user asks; returns hits. Searches the team's engineering blog for posts",
            {"query": {"description": "w"}},
            "none of article",
        ),
        ("x " * 2100 + "article: call it when asked; returns hits", {}, "4,096"),
    ],
)
def test_a_description_lacking_one_thing_is_told_which(description, properties, missing) -> None:
    tool = {
        "name": visible.SEARCH,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties},
    }
    problems = " ".join(visible.description_problems(tool, visible.DATA_WORDS[visible.SEARCH]))
    assert missing in problems


def kernel(code: str) -> dict:
    namespace, load_error = load_learner_code(LAB, code)
    assert load_error is None, load_error
    return namespace


def test_in_the_notebook_each_visible_check_passes_the_fixed_server() -> None:
    namespace = kernel(SOLUTION)
    results = {name: Lab(LAB).run(name, namespace) for name in NAMES}
    assert {name: result.message for name, result in results.items() if not result.passed} == {}


def test_in_the_notebook_a_failed_visible_check_names_its_case_and_the_answer_expected() -> None:
    code = replace_once(
        SOLUTION,
        'return failure("transient", f"Search is unavailable: {exc}.", True,',
        'return failure("transient", f"Search is unavailable: {exc}.", False,',
    )
    assert code != SOLUTION

    result = Lab(LAB).run("failures_are_statuses", kernel(code))

    assert not result.passed
    assert result.message == (
        'search_articles({"query": "rag"}) while the search index is down should be a transient error with isRetryable true; '
        "it says errorCategory 'transient', isRetryable false."
    )
