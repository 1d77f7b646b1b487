"""Quiz 4's questions: scenario questions on lesson 04, keyed to the exam guide, each explained by source."""

from __future__ import annotations

import re

from grader.quizzes.model import LETTERS
from grader.quizzes.quiz04_tools_vs_resources import QUIZ


def test_the_quiz_is_named_for_its_assignment_and_asks_eight_to_ten_questions_on_the_primitives() -> None:
    assert QUIZ.name == "quiz04_tools_vs_resources"
    assert 8 <= len(QUIZ.questions) <= 10
    assert [q.id for q in QUIZ.questions] == [f"q{n:02d}" for n in range(1, len(QUIZ.questions) + 1)]
    assert {q.theme for q in QUIZ.questions} == {"primitives"}


def test_every_explanation_answers_each_distractor_and_cites_a_source_by_heading() -> None:
    for q in QUIZ.questions:
        assert q.explanation.startswith(f"**{q.answer}.**"), q.id
        for letter in set(LETTERS) - {q.answer}:
            assert f"**{letter}**" in q.explanation, (q.id, letter)
        assert re.search(r"\*(Exam guide|Common mistakes|Claude Code docs, MCP) › [^*]+\*", q.explanation), q.id


def test_the_session_and_discovery_questions_are_keyed_to_the_exam_guide_and_say_what_claude_code_does() -> None:
    (session,) = [q for q in QUIZ.questions if "JSON-RPC 2.0 session" in q.options[q.answer]]
    assert "server/discover" in session.claude_code and "initialize" in session.claude_code
    (discovery,) = [q for q in QUIZ.questions if "discovered when the servers connect" in q.options[q.answer]]
    assert "tool search" in discovery.claude_code and "ENABLE_TOOL_SEARCH" in discovery.claude_code


def test_the_questions_cover_the_lessons_points() -> None:
    text = " ".join(q.text + " " + q.options[q.answer] for q in QUIZ.questions)
    for point in ("get_issue", "@tracker:tracker://", "idempotentHint", "catalog", "grows with the sprint",
                  "slash command", "split at spaces", "initialize", "capabilities", "available together"):
        assert point in text, point


def test_no_option_repeats_and_nothing_jupyterlab_would_typeset_as_math() -> None:
    for q in QUIZ.questions:
        assert len(set(q.options.values())) == len(LETTERS), q.id
        assert "$" not in q.text + q.explanation + q.claude_code + "".join(q.options.values()), q.id
