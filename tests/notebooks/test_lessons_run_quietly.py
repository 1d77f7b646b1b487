"""Each lesson, run top to bottom in a kernel that forwards stderr the way JupyterLab shows it, prints nothing on
stderr and raises nothing; each widget shows one answer, and one interaction replaces it in place."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("0*.ipynb") if p.name != "06_mock_exam.ipynb")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# lesson: (the widget cell's source holds this, the interaction, its answer before, its answer after)
INTERACTIONS = {
    "01_structured_tool_errors.ipynb": ("picker = widgets.Dropdown(", 'picker.value = "permission"',
                                        "transient @ attempt 1/3 -> retry",
                                        "permission @ attempt 1/3 -> escalate: Permission denied"),
    "02_server_scopes.ipynb": ("boxes = {", 'boxes["local"].value = "{ not json"', "effective servers:",
                               "Cannot resolve: The local box is not valid JSON"),
    "03_variable_expansion.ipynb": ("config_box = widgets.Textarea(", 'mode.value = "stdio"', "gateway (remote)",
                                    "gateway (stdio)"),
    "04_tools_vs_resources.ipynb": ('button = widgets.Button(description="Check")',
                                    'pickers["send a Slack message"].value = "tool"\nbutton.click()',
                                    "Nothing picked yet", "1/7 right"),
}


def run(name: str) -> tuple[nbformat.NotebookNode, dict]:
    """Execute the lesson, with its widget's interaction as an extra cell right after the widget's own."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    widget = None
    if name in INTERACTIONS:
        marker, action, _, _ = INTERACTIONS[name]
        (widget,) = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and marker in c.source]
        nb.cells.insert(widget + 1, nbformat.v4.new_code_cell(action))
    # ipykernel forwards what child processes write to fd 2 as stderr output, as in JupyterLab, unless under pytest.
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_CURRENT_TEST"}
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}})
    answers = {}
    with client.setup_kernel(env=env):
        for index, cell in enumerate(nb.cells):
            if index == widget and widget is not None:
                client.execute_cell(cell, index)
                answers["before"] = copy.deepcopy(cell.outputs)
            elif widget is not None and index == widget + 1:
                client.execute_cell(cell, index)
                answers["after"] = copy.deepcopy(nb.cells[widget].outputs)
            else:
                client.execute_cell(cell, index)
    return nb, answers


@pytest.fixture(scope="module", params=LESSONS)
def lesson(request) -> tuple[str, nbformat.NotebookNode, dict]:
    return (request.param, *run(request.param))


def answer_outputs(outputs: list) -> list:
    return [o for o in outputs if WIDGET_VIEW not in o.get("data", {})]


def test_a_lesson_prints_nothing_on_stderr(lesson) -> None:
    _, nb, _ = lesson
    stderr = {i: o.text for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "stream" and o.name == "stderr"}
    assert not stderr


def test_each_widget_shows_one_answer_and_one_interaction_replaces_it(lesson) -> None:
    name, _, answers = lesson
    if name not in INTERACTIONS:
        pytest.skip("no widget")
    _, _, before, after = INTERACTIONS[name]
    for moment, expected in (("before", before), ("after", after)):
        (answer,) = answer_outputs(answers[moment])
        assert answer.output_type == "display_data", answer
        assert expected in answer.data["text/plain"], (moment, answer.data["text/plain"][:300])
    assert before not in answer_outputs(answers["after"])[0].data["text/plain"]
