"""Quiz 1's questions: scenario questions on lesson 01, keyed to the exam guide, each explained by source."""

from __future__ import annotations

from grader.quizzes.quiz01_structured_tool_errors import QUIZ


def test_the_questions_cover_the_lessons_points() -> None:
    text = " ".join(q.text for q in QUIZ.questions)
    for point in (
        '"permission"',
        "guest",
        '"business"',
        '"validation"',
        '"transient"',
        '"not_found"',
        "Operation failed",
        '"isError": false',
    ):
        assert point in text, point
    assert "ago" in text  # the stale cached read
