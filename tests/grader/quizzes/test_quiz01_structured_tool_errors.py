"""Quiz 1's questions: scenario questions on lesson 01, keyed to the exam guide, each explained by source."""

from __future__ import annotations

import re

from grader.quizzes.model import LETTERS
from grader.quizzes.quiz01_structured_tool_errors import QUIZ


def test_the_quiz_is_named_for_its_assignment_and_asks_eight_to_ten_questions_on_errors() -> None:
    assert QUIZ.name == "quiz01_structured_tool_errors"
    assert 8 <= len(QUIZ.questions) <= 10
    assert [q.id for q in QUIZ.questions] == [f"q{n:02d}" for n in range(1, len(QUIZ.questions) + 1)]
    assert {q.theme for q in QUIZ.questions} == {"errors"}


def test_every_explanation_opens_with_its_key_answers_each_distractor_and_cites_the_exam_guide_by_heading() -> None:
    for q in QUIZ.questions:
        assert q.explanation.startswith(f"**{q.answer}.**"), q.id
        for letter in set(LETTERS) - {q.answer}:
            assert f"**{letter}**" in q.explanation, (q.id, letter)
        assert re.search(r"\*Exam guide › [^*]+\*", q.explanation), q.id


def test_the_questions_cover_the_lessons_points() -> None:
    text = " ".join(q.text for q in QUIZ.questions)
    for point in ('"permission"', "guest", '"business"', '"validation"', '"transient"', '"not_found"', "Operation failed", '"isError": false'):
        assert point in text, point
    assert "ago" in text  # the stale cached read
