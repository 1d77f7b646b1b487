"""The scored quizzes and the mock exam: their questions and keys, on the grading side only.

Each quiz is a module ``grader.quizzes.<name>`` defining ``QUIZ = Quiz(...)`` (``grader.quizzes.model``). The
learner's notebook is generated from it (``grader.quizzes.build``) and carries no key; the grader reads the
answers from the submitted notebook without running it (``grader.quizzes.grading``).
"""

from __future__ import annotations

import importlib
import importlib.util

from grader.quizzes.model import Quiz

__all__ = ["QUIZ_MODULES", "UnknownQuiz", "available", "is_quiz", "quiz"]

QUIZ_MODULES = {
    "quiz01_structured_tool_errors": "grader.quizzes.quiz01_structured_tool_errors",
    "quiz02_server_scopes": "grader.quizzes.quiz02_server_scopes",
    "quiz03_variable_expansion": "grader.quizzes.quiz03_variable_expansion",
    "quiz04_tools_vs_resources": "grader.quizzes.quiz04_tools_vs_resources",
    "quiz05_server_integration": "grader.quizzes.quiz05_server_integration",
    "quiz05b_remote_servers": "grader.quizzes.quiz05b_remote_servers",
    "mock_exam": "grader.quizzes.mock_exam",
}


class UnknownQuiz(LookupError):
    def __init__(self, name: str, why: str = "") -> None:
        self.name = name
        super().__init__(why or f"There is no quiz named {name!r}. Known quizzes: {', '.join(QUIZ_MODULES)}.")


def is_quiz(name: str) -> bool:
    return name in QUIZ_MODULES


def exists(name: str) -> bool:
    """Whether the quiz's module is there (a quiz is registered before its questions are written)."""
    return name in QUIZ_MODULES and importlib.util.find_spec(QUIZ_MODULES[name]) is not None


def available() -> list[str]:
    """The registered quizzes whose questions exist, in the course's order."""
    return [name for name in QUIZ_MODULES if exists(name)]


def quiz(name: str) -> Quiz:
    if name not in QUIZ_MODULES:
        raise UnknownQuiz(name)
    if not exists(name):
        raise UnknownQuiz(name, f"The quiz {name!r} has no questions yet: {QUIZ_MODULES[name]} does not exist.")
    found = getattr(importlib.import_module(QUIZ_MODULES[name]), "QUIZ", None)
    if not isinstance(found, Quiz) or found.name != name:
        raise UnknownQuiz(name, f"{QUIZ_MODULES[name]} does not define QUIZ = Quiz(name={name!r}, ...).")
    return found
