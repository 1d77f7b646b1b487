"""Quiz 4's questions: scenario questions on lesson 04, keyed to the exam guide, each explained by source."""

from __future__ import annotations

from grader.quizzes.quiz04_tools_vs_resources import QUIZ


def test_the_session_and_discovery_questions_are_keyed_to_the_exam_guide_and_say_what_claude_code_does() -> None:
    (session,) = [q for q in QUIZ.questions if "JSON-RPC 2.0 session" in q.options[q.answer]]
    assert "server/discover" in session.claude_code and "initialize" in session.claude_code
    (discovery,) = [q for q in QUIZ.questions if "discovered when the servers connect" in q.options[q.answer]]
    assert "tool search" in discovery.claude_code and "ENABLE_TOOL_SEARCH" in discovery.claude_code


def test_the_questions_cover_the_lessons_points() -> None:
    text = " ".join(q.text + " " + q.options[q.answer] for q in QUIZ.questions)
    for point in (
        "get_issue",
        "@tracker:tracker://",
        "idempotentHint",
        "catalog",
        "grows with the sprint",
        "slash command",
        "split at spaces",
        "initialize",
        "capabilities",
        "available together",
    ):
        assert point in text, point
