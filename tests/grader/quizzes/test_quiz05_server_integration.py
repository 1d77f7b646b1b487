"""Quiz 5's questions: scenario questions on lesson 05, keyed to the exam guide, each explained by source."""

from __future__ import annotations

from grader.quizzes.quiz05_server_integration import QUIZ


def test_the_discovery_question_is_keyed_to_the_exam_guide_and_says_what_claude_code_does() -> None:
    (question,) = [q for q in QUIZ.questions if "discovered at connection" in q.options[q.answer]]
    assert "tool search" in question.claude_code and "ENABLE_TOOL_SEARCH" in question.claude_code


def test_the_questions_cover_the_lessons_points() -> None:
    text = " ".join(q.text + " " + q.options[q.answer] for q in QUIZ.questions)
    for point in (
        "Jira",
        "custom",
        "greps",
        "log",
        "discovered at connection",
        "isError",
        "MAX_MCP_OUTPUT_TOKENS",
        "50,000 characters",
        "snippets",
        "128 characters",
    ):
        assert point in text, point
