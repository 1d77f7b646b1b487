"""What every quiz and the mock exam hold to: questions numbered in order, keys spread over the letters and not
given away by length, every wrong option answered in the explanation, every citation a section that
docs/sources.md lists, and nothing in the notebook's Markdown that JupyterLab would typeset as math."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from grader.quizzes import QUIZ_MODULES, quiz
from grader.quizzes.model import LETTERS

SOURCES = (Path(__file__).resolve().parents[3] / "docs" / "sources.md").read_text(encoding="utf-8")
CITATION = re.compile(r"\*(Exam guide|Common mistakes|Claude Code docs, MCP) › ([^*]+)\*")
CODE_SPAN = re.compile(r"`[^`]*`")


# Each lesson's quiz: how many questions, all on its lesson's theme (None: lesson 05b's mix of themes).
LESSON_QUIZZES = {
    "quiz01_structured_tool_errors": (8, 10, "errors"),
    "quiz02_server_scopes": (8, 10, "scopes"),
    "quiz03_variable_expansion": (8, 10, "expansion"),
    "quiz04_tools_vs_resources": (8, 10, "primitives"),
    "quiz05_server_integration": (8, 10, "integration"),
    "quiz05b_remote_servers": (6, 8, None),
}


@pytest.fixture(params=sorted(QUIZ_MODULES))
def questions(request):
    found = quiz(request.param)
    assert found.name == request.param
    return found.questions


def test_every_lesson_quiz_is_registered() -> None:
    assert set(QUIZ_MODULES) == {*LESSON_QUIZZES, "mock_exam"}


@pytest.mark.parametrize("name", LESSON_QUIZZES)
def test_a_lesson_quiz_asks_its_share_of_questions_on_its_theme_and_opens_each_explanation_with_the_key(name) -> None:
    fewest, most, theme = LESSON_QUIZZES[name]
    questions = quiz(name).questions
    assert fewest <= len(questions) <= most
    if theme:
        assert {q.theme for q in questions} == {theme}
    for q in questions:
        assert q.explanation.startswith(f"**{q.answer}.**"), q.id


def test_questions_are_numbered_in_order(questions) -> None:
    assert [q.id for q in questions] == [f"q{n:02d}" for n in range(1, len(questions) + 1)]


def test_the_keys_are_spread_over_the_letters_and_seldom_the_longest_option(questions) -> None:
    counts = Counter(q.answer for q in questions)
    assert set(counts) == set(LETTERS)
    assert max(counts.values()) <= len(questions) // 2
    longest = [q.id for q in questions if max(q.options, key=lambda k: len(q.options[k])) == q.answer]
    assert len(longest) <= len(questions) // 3, longest


def test_every_wrong_option_is_answered_and_no_option_repeats(questions) -> None:
    for q in questions:
        assert len(set(q.options.values())) == len(LETTERS), q.id
        for letter in set(LETTERS) - {q.answer}:
            assert f"**{letter}" in q.explanation, (q.id, letter)


def test_every_citation_names_a_section_that_docs_sources_lists(questions) -> None:
    for q in questions:
        found = CITATION.findall(q.explanation + q.claude_code)
        assert found, f"{q.id}: the explanation cites no source"
        for _, heading in found:
            assert f"| {heading} |" in SOURCES or f"| {heading} (" in SOURCES, (q.id, heading)


def test_nothing_in_a_question_would_be_typeset_as_math(questions) -> None:
    for q in questions:
        for text in (q.text, *q.options.values()):
            assert "$" not in CODE_SPAN.sub("", text), (q.id, text)
