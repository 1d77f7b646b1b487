"""Quiz 5b's questions: scenarios on lesson 05b, keyed to the exam guide where it speaks, each explained by source."""

from __future__ import annotations

import re
from pathlib import Path

from grader.quizzes.quiz05b_remote_servers import QUIZ

SOURCES = (Path(__file__).resolve().parents[3] / "docs" / "sources.md").read_text(encoding="utf-8")
CITATION = re.compile(r"\*(Exam guide|Common mistakes|Claude Code docs, MCP) › ([^*]+)\*")


def test_the_exam_guide_keys_the_questions_where_it_speaks() -> None:
    for q in QUIZ.questions[:5]:  # transports, /mcp, reconnection (twice), OAuth
        assert "*Exam guide ›" in q.explanation, q.id
    for q in QUIZ.questions[5:]:  # the proxy and the limits: the field article
        assert "*Common mistakes ›" in q.explanation, q.id


def test_where_claude_code_differs_the_question_says_what_it_does() -> None:
    differs = {q.id for q in QUIZ.questions if q.claude_code}
    assert differs == {"q04", "q05"}
