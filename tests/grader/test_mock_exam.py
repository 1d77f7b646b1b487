"""The mock exam's shape: 36 questions on all five themes, keys spread evenly over A-D, and every explanation
citing sections that docs/sources.md lists."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from grader.quizzes import quiz
from grader.quizzes.model import LETTERS

REPO = Path(__file__).resolve().parents[2]
MOCK = quiz("mock_exam")
CITATION = re.compile(r"\*((?:Exam guide|Common mistakes|Claude Code docs, MCP) › [^*]+)\*")


def test_the_mock_exam_has_36_questions_numbered_in_order() -> None:
    assert [q.id for q in MOCK.questions] == [f"q{n:02d}" for n in range(1, 37)]
    assert MOCK.max_score == 36


def test_every_theme_has_its_share_of_questions() -> None:
    themes = Counter(q.theme for q in MOCK.questions)
    assert themes == {"errors": 9, "scopes": 6, "expansion": 6, "primitives": 7, "integration": 8}


def test_each_letter_is_the_key_equally_often() -> None:
    assert Counter(q.answer for q in MOCK.questions) == dict.fromkeys(LETTERS, 9)


def test_every_explanation_cites_sections_that_docs_sources_lists() -> None:
    listed = (REPO / "docs" / "sources.md").read_text(encoding="utf-8")
    for q in MOCK.questions:
        cited = CITATION.findall(q.explanation)
        assert cited, f"{q.id}: the explanation cites no source"
        for citation in cited + CITATION.findall(q.claude_code):
            heading = citation.split(" › ", 1)[1]
            assert f"| {heading}" in listed, f"{q.id}: {heading!r} is not a heading in docs/sources.md"


def test_every_wrong_option_is_explained() -> None:
    for q in MOCK.questions:
        for letter in LETTERS:
            if letter != q.answer:
                assert f"**{letter}**" in q.explanation, f"{q.id}: option {letter} is not explained"
