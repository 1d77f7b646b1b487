"""The mock exam's shape: 36 questions on all five themes, keys spread evenly over A-D (what every quiz holds to
is in tests/grader/quizzes/test_questions.py)."""

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
