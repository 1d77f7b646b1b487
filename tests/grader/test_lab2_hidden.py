"""Lab 2 split in two: the visible checks a learner runs (``labkit.checks``) and the hidden ones only the grader holds.

- The visible checks import nothing of the grader, and their written-out answers are Claude Code's
  (the reference model agrees with every one of them).
- The hidden checks use none of the visible cases: other names, other values, other configurations.
- Each sample that passes every visible check fails hidden checks, and between them they fail every
  hidden check: the hidden checks catch what the visible ones cannot.
- What a learner is shown of a failed hidden check names its skill and its mistake, never its cases.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import labtests
import pytest

from grader.expansion import CREDENTIAL_VARIABLES, expand_text, is_credential
from grader.labs import lab2_scopes_expansion as graded
from grader.notebook import answer_code, read_notebook
from grader.pipeline import SAMPLE_SUBMISSIONS
from labkit.checking import HIDDEN_NOTE, CheckResult, as_shown
from labkit.checks import lab2_scopes_expansion as visible
from servers.learner_host.kit_lab2 import SCENARIO

LAB = "lab2_scopes_expansion"
REPO = Path(__file__).resolve().parents[2]
checks = graded.checks
HIDDEN = set(checks.hidden)
VISIBLE = set(checks.checks) - HIDDEN

# Samples every visible check passes, and the hidden checks each fails.
PASS_THE_VISIBLE_CHECKS = {
    "credentials_of_the_visible_cases_only": {
        "expand_unseen_values",
        "expand_unseen_credentials",
        "resolve_unseen_configurations",
        "resolve_unseen_combinations",
    },
    "skipped_entry_claims_its_name": {"resolve_unseen_configurations", "resolve_unseen_combinations"},
    "local_desk_shadows_the_team_desk": {"config_servers_start_for_real", "config_per_developer"},
}


def sample_code(student: str) -> str:
    return answer_code(read_notebook(SAMPLE_SUBMISSIONS / student / LAB / f"{LAB}.ipynb"))


@pytest.fixture(scope="module")
def sample_results() -> dict[str, dict[str, CheckResult]]:
    return {student: labtests.grade(LAB, sample_code(student)) for student in PASS_THE_VISIBLE_CHECKS}


# --- the learner's side holds nothing of the grader's ---------------------------------------------------


def test_the_visible_checks_import_nothing_from_the_grader() -> None:
    code = (
        "import sys, labkit.checks.lab2_scopes_expansion\n"
        "found = [m for m in sys.modules if m == 'grader' or m.startswith('grader.')]\n"
        "assert not found, found\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_visible_module_holds_no_hidden_check_and_starts_no_process() -> None:
    text = Path(visible.__file__).read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import)\s+grader\b", text, re.MULTILINE)
    assert not re.search(r"hidden\s*=\s*True", text)
    for name in HIDDEN:
        assert name not in text
    # Part C's visible check judges the configuration as written: it runs nothing.
    for word in ("subprocess", "sandbox", "Popen", "os.system"):
        assert word not in text
    assert visible.checks.hidden == []
    assert set(visible.checks.checks) == VISIBLE


def test_the_full_registry_is_the_visible_checks_then_the_hidden_ones_of_each_skill() -> None:
    assert list(checks.checks) == graded.ORDER
    for name in VISIBLE:
        assert checks[name] is visible.checks[name]
    for name in HIDDEN:
        assert checks[name].hidden and 1 <= checks[name].points <= 3
    # Each hidden check comes after the visible checks of its skill and before the next skill's.
    for part in ("expand_", "resolve_", "config_"):
        names = [n for n in graded.ORDER if n.startswith(part)]
        assert [n in HIDDEN for n in names] == sorted(n in HIDDEN for n in names)


# --- the visible cases are Claude Code's answers, and the hidden cases are others ------------------------


@pytest.mark.parametrize(("text", "env", "remote", "want", "why"), visible.VISIBLE_EXPANSIONS, ids=lambda v: None)
def test_each_written_out_expansion_is_the_reference_models(text, env, remote, want, why) -> None:
    assert expand_text(text, env, blank_credentials=remote) == want, why


def test_each_written_out_resolution_is_the_reference_models() -> None:
    for user, local, project, env, want, why in visible.VISIBLE_RESOLUTIONS:
        assert graded.reference_resolve(user, local, project, env) == want, why


def test_no_generated_value_is_one_the_lab_shows() -> None:
    cases = graded.generated_expansions()
    assert len(cases) >= 100
    keys = {graded.expansion_key(*case) for case in cases}
    assert not keys & graded.VISIBLE_EXPANSION_KEYS
    # nor does any reference a name the visible cases use
    used = {name for text, env, _ in cases for name in graded.names_in((text, env))}
    assert not used & graded.VISIBLE_NAMES


def test_no_generated_or_combined_configuration_is_one_the_lab_shows() -> None:
    shown = {repr(case[:4]) for case in visible.VISIBLE_RESOLUTIONS}
    configurations = graded.generated_configurations() + list(graded.UNSEEN_COMBINATIONS)
    assert not {repr(tuple(case)) for case in configurations} & shown
    used = {name for case in configurations for name in graded.names_in(case)}
    fields = {"type", "command", "args", "env", "url", "headers", "Authorization"}
    assert not (used - fields) & graded.VISIBLE_NAMES


def test_the_credential_cases_name_no_credential_the_lab_shows_and_look_alikes_are_not_credentials() -> None:
    assert set(graded.HIDDEN_CREDENTIALS) | (set(CREDENTIAL_VARIABLES) & graded.VISIBLE_NAMES) == set(
        CREDENTIAL_VARIABLES
    )
    assert not set(graded.HIDDEN_CREDENTIALS) & graded.VISIBLE_NAMES
    assert len(graded.HIDDEN_CREDENTIALS) >= 60
    assert graded.LOOK_ALIKES and not any(is_credential(name) for name in graded.LOOK_ALIKES)
    keys = {graded.expansion_key(*case) for case in graded.credential_cases()}
    assert not keys & graded.VISIBLE_EXPANSION_KEYS


# --- the hidden checks catch what the visible ones miss -----------------------------------------------------


def test_the_solution_passes_every_check_visible_and_hidden() -> None:
    results = labtests.grade(LAB, sample_code("solution"))
    assert labtests.failed(results) == set()
    assert set(results) == VISIBLE | HIDDEN


@pytest.mark.parametrize("student", sorted(PASS_THE_VISIBLE_CHECKS))
def test_a_sample_that_passes_every_visible_check_fails_hidden_ones(sample_results, student: str) -> None:
    results = sample_results[student]
    assert {name for name in VISIBLE if not results[name].passed} == set()
    assert labtests.failed(results) == PASS_THE_VISIBLE_CHECKS[student]


def test_between_them_those_samples_fail_every_hidden_check() -> None:
    assert set().union(*PASS_THE_VISIBLE_CHECKS.values()) == HIDDEN


# --- what a learner is shown of a hidden check ---------------------------------------------------------------


def hidden_inputs() -> set[str]:
    """Every name, value and token the hidden checks' cases use (words of three characters or more)."""
    words = set(graded.VARS) | set(graded.RVARS) | set(graded.LOOK_ALIKES) | set(graded.HIDDEN_CREDENTIALS)
    words |= graded.names_in(list(graded.UNSEEN_COMBINATIONS)) | graded.names_in(graded.generated_configurations())
    words |= {
        graded.YOUR_TOKEN,
        graded.TEAMMATE_TOKEN,
        SCENARIO["my_tracker_token"],
        SCENARIO["experiment_token"],
        "s3cret",
        "fallback",
    }
    words |= {value for _, _, _, env in graded.UNSEEN_COMBINATIONS for value in env.values()}
    fields = {"type", "command", "args", "env", "url", "headers"}
    return {word for word in words - fields if len(word) >= 3}


def quoted(message: str) -> set[str]:
    """The values a message quotes (the cases and answers a check reports), those with a letter or digit."""
    return {value for value in re.findall(r"'([^']{3,})'", message) if re.search(r"[A-Za-z0-9]", value)}


def test_the_hidden_checks_titles_and_mistakes_name_no_input() -> None:
    inputs = hidden_inputs()
    for name in HIDDEN:
        words = f"{checks[name].title} {checks[name].mistake}"
        assert "${" not in words and "'" not in words and "=" not in words, name
        assert not {w for w in inputs if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", words)}, name


def test_a_failed_hidden_checks_shown_message_holds_none_of_its_inputs(sample_results) -> None:
    inputs = hidden_inputs()
    seen = set()
    for results in sample_results.values():
        for name in HIDDEN:
            result = results[name]
            if result.passed:
                continue
            seen.add(name)
            shown = as_shown(checks[name], result)
            assert not shown.passed and shown.points == result.points
            assert checks[name].title[1:] in shown.message and checks[name].mistake in shown.message
            assert HIDDEN_NOTE in shown.message
            # The raw verdict names the case; what is shown names none of it.
            assert result.message not in shown.message
            assert not {value for value in quoted(result.message) if value in shown.message}, shown.message
            assert "${" not in shown.message and "=" not in shown.message
            assert not {w for w in inputs if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", shown.message)}, (
                shown.message
            )
    assert seen == HIDDEN
