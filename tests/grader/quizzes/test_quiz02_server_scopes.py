"""Quiz 2's questions: scenario questions on lesson 02, keyed to the exam guide, each explained by source."""

from __future__ import annotations

from grader.quizzes.quiz02_server_scopes import QUIZ


def question(needle: str):
    (found,) = [q for q in QUIZ.questions if needle in q.text]
    return found


def test_a_plugin_server_named_like_a_user_server_is_keyed_to_the_guides_ladder_with_claude_codes_endpoint_rule_beside() -> (
    None
):
    q = question("plugin")
    assert "user scope ranks above plugin servers" in q.options[q.answer]
    assert "endpoint" in q.claude_code and "plugin:<plugin>:github" in q.claude_code


def test_no_question_rests_on_version_trivia() -> None:
    # The git-root key, URL spellings and trailing slashes are observations of one Claude Code version.
    everything = " ".join(q.text + " ".join(q.options.values()) for q in QUIZ.questions)
    for trivia in ("git root", "trailing slash", ":443", "2.1.332"):
        assert trivia not in everything, trivia


def test_only_the_conflict_with_claude_code_carries_a_claude_code_note() -> None:
    assert [q.id for q in QUIZ.questions if q.claude_code] == [question("plugin").id]
