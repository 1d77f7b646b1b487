"""Lab 2's stored generated cases, and the shrink of a disagreement within their vocabulary.

- The stored file is what the strategies give (``python -m grader.labs.lab2_strategies`` writes it): compared case for
  case under the hypothesis that wrote it; under any other, every stored case is still one the strategies could
  generate and every word of the vocabulary still appears.
- The shrink stays in the strategies' space: each simpler case is one they could generate, and simpler by the order.
- A wrong answer costs a few round trips: the generated cases in one call, then one call per shrink step.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import labtests
import pytest
from solution_edits import replace_once

from grader.labs import lab2_scopes_expansion as lab
from grader.labs.cases import stored
from grader.labs.generation import hypothesis_version
from grader.notebook import answer_code, read_notebook
from labkit.checking import run_check

LAB = "lab2_scopes_expansion"
REPO = Path(__file__).resolve().parents[2]
SOLUTION = answer_code(read_notebook(REPO / "labs" / "source" / LAB / f"{LAB}.ipynb"))
hosted = partial(labtests.hosted, LAB)
EXPANSIONS = lab.generated_cases()["expansion"]
CONFIGURATIONS = lab.generated_cases()["resolution"]


def test_the_stored_cases_are_the_strategies_own() -> None:
    written_with = stored(lab.CASES_FILE)["hypothesis"]
    if written_with != hypothesis_version():
        pytest.skip(f"lab2_cases.json was written with hypothesis {written_with}; this is {hypothesis_version()}")
    from grader.labs import lab2_strategies

    derived = lab2_strategies.derive()
    assert [as_stored(case) for case in derived["expansion"]] == [as_stored(case) for case in EXPANSIONS]
    assert [as_stored(case) for case in derived["resolution"]] == [as_stored(case) for case in CONFIGURATIONS]


def as_stored(case) -> str:
    return repr([list(case[0]) if isinstance(case[0], tuple) else case[0], *case[1:]])


def test_every_stored_case_is_one_the_strategies_could_generate() -> None:
    assert len(EXPANSIONS) >= 100 and len(CONFIGURATIONS) >= 100
    assert all(map(lab.in_expansion_space, EXPANSIONS))
    assert all(map(lab.in_resolution_space, CONFIGURATIONS))


def words(value) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set(value) | set().union(*map(words, value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*map(words, value)) if value else set()
    return set()


def test_every_word_of_the_vocabulary_appears_in_the_stored_cases() -> None:
    pieces = {piece for case in EXPANSIONS for piece in case[0]}
    parts = [lab.piece_parts(piece) for piece in pieces]
    # The search's 150 cases never draw two of the literals; any change of what they draw shows here.
    assert (set(lab.LITERALS) | set(lab.ODD_REFERENCES)) - pieces == {"${", "Token "}
    assert {form for form, _ in filter(None, parts)} == {0, 1, 2, 3}
    assert {default for form, (_, *default) in filter(None, parts) if form == 1 for default in default} == set(
        lab.DEFAULTS
    )
    assert {name for _, (name, *_) in filter(None, parts)} | {k for c in EXPANSIONS for k in c[1]} == set(lab.VARS)
    assert {v for c in EXPANSIONS for v in c[1].values()} == set(lab.ENV_VALUES)

    seen = words(CONFIGURATIONS)
    for vocabulary in (
        lab.SERVER_NAMES,
        lab.RVARS,
        lab.VALUE_TEXTS,
        lab.COMMANDS,
        lab.ENV_KEYS,
        lab.REMOTE_TYPES,
        lab.URLS,
        lab.HEADER_KEYS,
        lab.RENV_VALUES,
    ):
        assert set(vocabulary) <= seen, set(vocabulary) - seen


@pytest.mark.parametrize(
    "case",
    [
        (("${V}",) * 5, {}, False),  # five pieces
        (("${NEW}",), {}, False),  # a name outside the vocabulary
        (("${V:-other}",), {}, False),  # a default outside it
        (("oops",), {}, False),  # a piece outside it
        (("${V}",), {"V": "unlisted"}, False),  # a value outside it
        (("${V}", "${W}", "${_v1}", "${VAULT_TOKEN}"), {"PYPI_TOKEN": ""}, False),  # four names besides W
    ],
)
def test_an_expansion_outside_the_vocabulary_is_refused(case) -> None:
    assert not lab.in_expansion_space(case)


@pytest.mark.parametrize(
    "case",
    [
        ({"api": {"command": "uvx"}, "files": {"command": "uvx"}, "wiki": {"command": "uvx"}, "svc_2": {}}, {}, {}, {}),
        ({"other": {"command": "uvx"}}, {}, {}, {}),
        ({}, {}, {"api": {"command": "npx"}}, {}),
        ({}, {}, {"api": {"command": "uvx", "type": "http"}}, {}),
        ({}, {}, {"api": {"command": "uvx", "args": ["y", "y", "y"]}}, {}),
        ({}, {}, {"api": {"type": "http"}}, {}),  # a remote entry without its url
        ({}, {}, {"api": {"type": "http", "url": "https://q.example/mcp", "headers": {"Cookie": "y"}}}, {}),
        ({}, {}, {"api": {}}, {}),
        ({}, {}, {}, {"OTHER": ""}),
        ({}, {}, {}, {"EXE": "unlisted"}),
    ],
)
def test_a_configuration_outside_the_vocabulary_is_refused(case) -> None:
    assert not lab.in_resolution_space(case)


def test_every_simpler_case_stays_in_the_vocabulary_and_is_simpler() -> None:
    for case in EXPANSIONS:
        for simpler in lab.simpler_expansions(case):
            assert lab.in_expansion_space(simpler), (case, simpler)
    for case in CONFIGURATIONS:
        for simpler in lab.simpler_configurations(case):
            assert lab.in_resolution_space(simpler), (case, simpler)
    # The shrink keeps only the strictly simpler ones; most steps are.
    steps = [(case, s) for case in EXPANSIONS for s in lab.simpler_expansions(case)]
    assert sum(lab.expansion_order(s) < lab.expansion_order(c) for c, s in steps) == len(steps)


def test_a_renamed_variable_is_renamed_in_the_value_and_the_environment_alike() -> None:
    case = (("${VAULT_TOKEN}", "/", "$VAULT_TOKEN"), {"VAULT_TOKEN": "u"}, True)
    assert (("${V}", "/", "$V"), {"V": "u"}, True) in lab.simpler_expansions(case)
    # W is set in this case already: no rename to W
    assert all("W" not in c[1] or c[1]["W"] == "" for c in lab.simpler_expansions((("${_v1}",), {"W": ""}, False)))


class Counting:
    """A host session that counts the learner host's calls."""

    def __init__(self, host) -> None:
        self.host = host
        self.calls: list[tuple[str, int]] = []

    def call(self, tool: str, **arguments):
        self.calls.append((tool, len(arguments.get("cases", [None]))))
        return self.host.call(tool, **arguments)

    def __getattr__(self, name):
        return getattr(self.host, name)


# default_applied_to_empty_string, as the catalogued mistake makes it (a default also for an empty value).
WRONG = replace_once(
    SOLUTION,
    "        if name in env:\n            return env[name]",
    "        if env.get(name):\n            return env[name]",
)


@pytest.mark.parametrize(
    ("check", "tool", "cases"),
    [
        ("expand_unseen_values", "expand_values", EXPANSIONS),
        ("resolve_unseen_configurations", "resolve_many", CONFIGURATIONS),
    ],
)
def test_a_wrong_answer_costs_the_generated_cases_and_a_call_per_shrink_step(check, tool, cases) -> None:
    with hosted(SOLUTION) as host:
        right = Counting(host)
        assert run_check(lab.checks[check], right).passed
    assert right.calls == [(tool, len(cases))]

    with hosted(WRONG) as host:
        wrong = Counting(host)
        result = run_check(lab.checks[check], wrong)
    assert not result.passed
    assert wrong.calls[0] == (tool, len(cases))
    assert {name for name, _ in wrong.calls} == {tool}
    assert 2 <= len(wrong.calls) <= 12, wrong.calls
