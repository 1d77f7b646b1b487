"""Quiz 3's questions: scenario questions on lesson 03, keyed to the exam guide, each explained by source."""

from __future__ import annotations

from grader.quizzes.quiz03_variable_expansion import QUIZ


def question(needle: str):
    (found,) = [q for q in QUIZ.questions if needle in q.text]
    return found


def test_an_unset_variable_without_a_default_is_keyed_to_parsing_fails_with_claude_codes_behaviour_beside() -> None:
    q = question("nobody has exported")
    assert q.options[q.answer].startswith("Parsing the configuration fails")
    # Claude Code's behaviour is offered, and is a distractor on the exam.
    assert any("as written" in text for letter, text in q.options.items() if letter != q.answer)
    assert "loads the configuration anyway" in q.claude_code and "parsing fails" in q.claude_code


def test_expansion_is_not_for_runtime_configuration_logic() -> None:
    q = question("switch transport and role")
    assert "not for runtime configuration logic" in q.options[q.answer].lower()


def test_no_question_rests_on_version_trivia() -> None:
    # The stdio session secrets and the full credential list are observations of one Claude Code version.
    everything = " ".join(q.text + " ".join(q.options.values()) for q in QUIZ.questions)
    for trivia in ("GITHUB_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "MCP_CLIENT_SECRET", "2.1.332"):
        assert trivia not in everything, trivia


def test_only_the_conflict_with_claude_code_carries_a_claude_code_note() -> None:
    assert [q.id for q in QUIZ.questions if q.claude_code] == [question("nobody has exported").id]
