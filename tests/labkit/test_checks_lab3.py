"""Lab 3's visible checks, the ones a learner installs: they load nothing of the grader, their written-out answers
are the kit's runbooks, and in the notebook they pass the solution and name the case and the answer when they fail."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest
from solution_edits import replace_once

from grader.notebook import answer_code, read_notebook
from labkit import Lab
from labkit.checks import lab3_tools_resources as visible
from servers.learner_host import kit_lab3, load_learner_code
from servers.learner_host.kit_lab3 import DEFAULT_SIZE, make_runbook

LAB = "lab3_tools_resources"
REPO = Path(__file__).resolve().parents[2]
SOLUTION = answer_code(read_notebook(REPO / "labs" / "source" / LAB / f"{LAB}.ipynb"))
NAMES = {
    "catalog_is_a_resource": 2,
    "runbook_template": 2,
    "reads_change_nothing": 2,
    "empty_catalog_is_empty": 2,
    "tools_are_the_actions": 2,
    "actions_are_annotated": 2,
    "actions_change_state": 2,
    "catalog_answers_within_budget": 3,
}
NO_GRADER = "assert not [m for m in sys.modules if m == 'grader' or m.startswith('grader.')], sorted(sys.modules)"


def fresh_alerts() -> None:
    kit_lab3.STORE.alerts = kit_lab3.RunbookStore().alerts


def test_importing_the_visible_checks_loads_nothing_of_the_grader() -> None:
    code = f"import labkit.checks.{LAB}, sys; {NO_GRADER}"
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]


def test_running_every_visible_check_in_a_kernel_loads_nothing_of_the_grader_and_prints_only_verdicts(
    tmp_path: Path,
) -> None:
    # What a learner's kernel does: the kit, the answer cells, then lab.check for each graded cell. The server runs
    # in the kernel, and the SDK logs each read it refuses: the checks read unknown ids without a line of it.
    (tmp_path / "answers.py").write_text(SOLUTION, encoding="utf-8")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from labkit import Lab\n"
        "from servers.learner_host import load_learner_code\n"
        f"namespace, error = load_learner_code({LAB!r}, Path(sys.argv[1]).read_text(encoding='utf-8'))\n"
        "assert error is None, error\n"
        f"lab = Lab({LAB!r})\n"
        "for name in lab.checks.checks:\n"
        "    lab.check(name, namespace)\n"
        f"{NO_GRADER}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "answers.py")],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert [line.split(" ")[:2] for line in done.stdout.splitlines()] == [["[PASS]", name] for name in NAMES]
    assert done.stderr == ""


def test_they_are_the_labs_eight_visible_checks_and_none_is_hidden() -> None:
    assert {name: check.points for name, check in visible.checks.checks.items()} == NAMES
    assert not any(check.hidden for check in visible.checks.checks.values())


def test_the_answers_are_written_out_not_computed_from_the_kits_data() -> None:
    source = inspect.getsource(visible)
    assert "make_runbook" not in source and "STORE" not in source


def test_the_answers_written_out_are_the_kits_runbooks() -> None:
    runbooks = [make_runbook(i) for i in range(1, DEFAULT_SIZE + 1)]
    assert visible.CATALOG == [{k: r[k] for k in visible.SUMMARY_FIELDS} for r in runbooks]
    for runbook_id, runbook in visible.RUNBOOKS.items():
        assert runbook == make_runbook(int(runbook_id.removeprefix("RB-")))
    ids = {r["id"] for r in runbooks}
    assert not set(visible.UNKNOWN_IDS) & ids and set(visible.READ_IDS) <= ids
    # The small store's catalog is the first runbooks', and RB-3, which the default store has, is not in it.
    assert visible.SMALL_SIZE < 3
    assert visible.ALERT in kit_lab3.ALERTS and not set(visible.NO_SUCH_ALERT.values()) & set(kit_lab3.ALERTS)


def test_the_questions_answers_are_the_kits() -> None:
    runbooks = [make_runbook(i) for i in range(1, DEFAULT_SIZE + 1)]
    for question, kind, where, value, wanted, answer in visible.QUESTIONS:
        matches = [r for r in runbooks if r[where] == value]
        if kind == "count":
            assert answer == len(matches), question
        else:
            assert answer == (matches[0][wanted] if matches else None), question
    # One count, a field the catalog has, one it lacks (one runbook read), and a title no runbook has.
    assert [(kind, wanted) for _, kind, _, _, wanted, _ in visible.QUESTIONS] == [
        ("count", None),
        ("lookup", "severity"),
        ("lookup", "steps"),
        ("lookup", "severity"),
    ]
    assert visible.QUESTIONS[-1][-1] is None


@pytest.mark.parametrize(
    ("name", "edit", "shown"),
    [
        (
            "catalog_is_a_resource",
            ("for r in STORE.runbooks]})", "for r in STORE.runbooks[:5]]})"),
            "The catalog must list all 12 runbooks; yours lists 5.",
        ),
        (
            "runbook_template",
            ('    if found is None:\n        raise ResourceError(f"No runbook {runbook_id}")\n', ""),
            "There is no runbook 'RB-0', so reading runbooks://runbooks/RB-0 must fail with a ResourceError; yours answered 'null'.",
        ),
        (
            "reads_change_nothing",
            ("def catalog() -> str:\n", 'def catalog() -> str:\n    STORE.add_note("ALERT-1", "viewed")\n'),
            "Reading the catalog (runbooks://catalog) changed state (1 change(s) recorded): a resource read must be read-only.",
        ),
        (
            "catalog_answers_within_budget",
            ("for r in STORE.runbooks]})", "for r in STORE.runbooks[:5]]})"),
            "Asked 'How many runbooks cover the search service?', the agent answered 1 from your server; the answer is 3.",
        ),
    ],
)
def test_a_failed_visible_check_names_its_case_and_the_answer(name: str, edit: tuple[str, str], shown: str) -> None:
    fresh_alerts()
    namespace, load_error = load_learner_code(LAB, replace_once(SOLUTION, *edit))
    assert load_error is None

    result = Lab(LAB).run(name, namespace)

    assert not result.passed and result.message == shown


def test_the_agent_needs_a_runbook_per_entry_when_the_catalog_has_no_titles() -> None:
    # A catalog of ids alone: the agent reads the runbooks one by one, past the budget.
    code = replace_once(SOLUTION, '("id", "title", "service", "severity")', '("id",)')
    fresh_alerts()
    namespace, _ = load_learner_code(LAB, code)

    result = Lab(LAB).run("catalog_answers_within_budget", namespace)

    assert not result.passed
    assert result.message == (
        "Asked 'How many runbooks cover the search service?', the agent needed 13 requests; the budget is 2 "
        "(read the catalog, then at most one runbook)."
    )
