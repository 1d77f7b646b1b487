"""Quiz 5's questions: scenario questions on lesson 05, keyed to the exam guide, each explained by source."""

from __future__ import annotations

import re

from grader.quizzes.model import LETTERS
from grader.quizzes.quiz05_server_integration import QUIZ


def test_the_quiz_is_named_for_its_assignment_and_asks_eight_to_ten_questions_on_integration() -> None:
    assert QUIZ.name == "quiz05_server_integration"
    assert 8 <= len(QUIZ.questions) <= 10
    assert [q.id for q in QUIZ.questions] == [f"q{n:02d}" for n in range(1, len(QUIZ.questions) + 1)]
    assert {q.theme for q in QUIZ.questions} == {"integration"}


def test_every_explanation_opens_with_its_key_answers_each_distractor_and_cites_a_source_by_heading() -> None:
    for q in QUIZ.questions:
        assert q.explanation.startswith(f"**{q.answer}.**"), q.id
        for letter in set(LETTERS) - {q.answer}:
            assert f"**{letter}**" in q.explanation, (q.id, letter)
        assert re.search(r"\*(Exam guide|Common mistakes|Claude Code docs, MCP) › [^*]+\*", q.explanation), q.id


def test_the_discovery_question_is_keyed_to_the_exam_guide_and_says_what_claude_code_does() -> None:
    (question,) = [q for q in QUIZ.questions if "discovered at connection" in q.options[q.answer]]
    assert "tool search" in question.claude_code and "ENABLE_TOOL_SEARCH" in question.claude_code


def test_the_questions_cover_the_lessons_points() -> None:
    text = " ".join(q.text + " " + q.options[q.answer] for q in QUIZ.questions)
    for point in ("Jira", "custom", "greps", "log", "discovered at connection", "isError", "MAX_MCP_OUTPUT_TOKENS",
                  "50,000 characters", "snippets", "128 characters"):
        assert point in text, point


def test_no_option_repeats_and_nothing_jupyterlab_would_typeset_as_math() -> None:
    for q in QUIZ.questions:
        assert len(set(q.options.values())) == len(LETTERS), q.id
        assert "$" not in q.text + q.explanation + q.claude_code + "".join(q.options.values()), q.id
