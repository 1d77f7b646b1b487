"""The learner's environment, built as the README says, in a fresh venv: no answer key in it, and lab.check works.

What a learner installs is ``learner/`` (the README's command). It must hold each lab's visible checks and
what ``lab.check`` needs to run them in the kernel, and nothing a learner could read the answers from: no
solution cell's code, no hidden check, no module of the grader. Each released lab notebook, with the
solution's answers written in, runs there with every visible check passing; as released, its checks fail.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import venv
from pathlib import Path

import nbformat
import pytest

from grader.course import ClearSolutionsToStartingCode
from grader.labs import LAB_MODULES, lab_checks

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "labs" / "source"
INSTALL = "pip install ./learner"  # the README's learner command, run from the checkout
TEXT_SUFFIXES = {".py", ".pyi", ".json", ".ipynb", ".txt", ".md", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".html"}
SHORTEST_LINE = 30  # characters: shorter solution lines (``return result``) are not evidence of anything


@pytest.fixture(scope="module")
def learner_env(tmp_path_factory) -> Path:
    """A fresh venv with what the README tells a learner to install, and nothing else."""
    where = tmp_path_factory.mktemp("learner") / "env"
    venv.EnvBuilder(with_pip=True).create(where)
    done = subprocess.run(
        [
            str(where / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            str(REPO / "learner"),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, f"pip install ./learner failed:\n{done.stderr[-3000:]}"
    return where


def site_packages(env: Path) -> Path:
    (found,) = env.glob("lib/python3.*/site-packages")
    return found


def run_in(env: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(env / "bin" / "python"), "-c", code], check=False, capture_output=True, text=True, cwd=env
    )


def released(lab: str) -> nbformat.NotebookNode:
    """The lab notebook as the release hands it out (nbgrader's solution clearing, with starting code)."""
    nb = nbformat.read(SOURCE / lab / f"{lab}.ipynb", as_version=4)
    step = ClearSolutionsToStartingCode()
    for index, cell in enumerate(nb.cells):
        nb.cells[index], _ = step.preprocess_cell(cell, {"language": "python"}, index)
    return nb


def is_solution(cell) -> bool:
    return cell.cell_type == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution") is True


def solution_code(cell) -> str:
    """An answer cell's code in the source: the whole cell, less nbgrader's markers."""
    return "\n".join(line for line in cell.source.splitlines() if not re.match(r"\s*### (BEGIN|END) SOLUTION", line))


def solution_lines(lab: str) -> set[str]:
    """Lines of the solution's answer cells that the release does not hand out, long enough to tell."""
    source = nbformat.read(SOURCE / lab / f"{lab}.ipynb", as_version=4)
    handed_out = {line.strip() for cell in released(lab).cells for line in cell.source.splitlines()}
    return {
        line.strip()
        for cell in source.cells
        if is_solution(cell)
        for line in solution_code(cell).splitlines()
        if len(line.strip()) >= SHORTEST_LINE and line.strip() not in handed_out
    }


def texts(root: Path):
    for path in root.rglob("*"):
        if path.suffix in TEXT_SUFFIXES and path.is_file():
            yield path, path.read_text(encoding="utf-8", errors="replace")


def test_the_readme_tells_learners_to_install_exactly_this() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert INSTALL in readme


def test_the_grader_is_not_there(learner_env: Path) -> None:
    done = run_in(learner_env, "import grader")
    assert done.returncode != 0 and "No module named 'grader'" in done.stderr
    assert not list(site_packages(learner_env).glob("grader*")), "a grader package was installed for the learner"


def test_only_the_listed_modules_ship(learner_env: Path) -> None:
    """What the course installs is labkit and the lab servers (learner/setup.py); the desk's own server and
    the lesson servers, which hold reference answers, are not among them."""
    ours = [
        p for p in site_packages(learner_env).glob("*.dist-info") if p.name.startswith("mcp_claude_code_course_labkit")
    ]
    assert len(ours) == 1
    files = [line.split(",")[0] for line in (ours[0] / "RECORD").read_text().splitlines()]
    modules = {f for f in files if f.endswith(".py")}
    assert {f.split("/")[0] for f in modules} == {"labkit", "servers"}
    assert "servers/support_desk/desk.py" not in modules and "servers/support_desk/server.py" not in modules
    assert not any(f.startswith(("servers/notes", "servers/tracker")) for f in modules)
    assert "labkit/lab.py" in modules and "servers/learner_host/host.py" in modules


@pytest.mark.parametrize("lab", sorted(LAB_MODULES))
def test_no_solution_line_can_be_read_there(learner_env: Path, lab: str) -> None:
    lines = solution_lines(lab)
    assert len(lines) >= 5, f"too few solution lines of {lab} to look for"
    found = {line: str(path) for path, text in texts(learner_env) for line in lines if line in text}
    assert not found, f"solution code of {lab} is readable in the learner's environment: {found}"


@pytest.mark.parametrize("lab", sorted(LAB_MODULES))
def test_no_hidden_check_is_there(learner_env: Path, lab: str) -> None:
    hidden = lab_checks(lab).hidden
    assert hidden, f"{lab} has no hidden check"
    code = (
        "import json, labkit.checks as c\n"
        f"r = c.visible_checks({lab!r})\n"
        "print(json.dumps({'names': list(r.checks), 'hidden': r.hidden}))\n"
    )
    done = run_in(learner_env, code)
    assert done.returncode == 0, done.stderr
    shipped = json.loads(done.stdout)
    assert shipped["hidden"] == []
    assert not set(hidden) & set(shipped["names"])
    registrations = [re.compile(r"""check\(\s*["']""" + re.escape(name) + r"""["']""") for name in hidden]
    for path, text in texts(site_packages(learner_env)):
        assert not any(pattern.search(text) for pattern in registrations), f"a hidden check of {lab} ships in {path}"
    for package in ("labkit", "servers"):
        for path, text in texts(site_packages(learner_env) / package):
            assert not re.search(r"hidden\s*=\s*True", text), f"a hidden check ships in {path}"


def filled(lab: str) -> nbformat.NotebookNode:
    """The released notebook with the solution's code in each answer cell, as a learner who solved it has it."""
    source = nbformat.read(SOURCE / lab / f"{lab}.ipynb", as_version=4)
    answers = {cell.metadata.nbgrader["grade_id"]: solution_code(cell) for cell in source.cells if is_solution(cell)}
    nb = copy.deepcopy(released(lab))
    for cell in nb.cells:
        if is_solution(cell):
            cell.source = answers[cell.metadata.nbgrader["grade_id"]]
    return nb


def execute(env: Path, nb: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    """Run the notebook in the learner's environment, with its own kernel, keeping going past errors."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lab.ipynb"
    nbformat.write(nb, path)
    done = subprocess.run(
        [
            str(env / "bin" / "jupyter"),
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "--inplace",
            "--allow-errors",
            "--ExecutePreprocessor.timeout=120",
            "--ExecutePreprocessor.kernel_name=python3",
            str(path),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=folder,
        env={"PATH": f"{env / 'bin'}:/usr/bin:/bin", "HOME": str(folder)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return nbformat.read(path, as_version=4)


def graded(nb: nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> what the graded cell printed (its errors included)."""
    out = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") is True:
            out[meta["grade_id"]] = "".join(
                o.get("text", "") if o.output_type == "stream" else f"{o.get('ename', '')}: {o.get('evalue', '')}"
                for o in cell.outputs
            )
    return out


@pytest.mark.parametrize("lab", sorted(LAB_MODULES))
def test_lab_check_works_there(learner_env: Path, lab: str, tmp_path: Path) -> None:
    registry = lab_checks(lab)
    solved = graded(execute(learner_env, filled(lab), tmp_path / "solved"))
    as_released = graded(execute(learner_env, released(lab), tmp_path / "released"))

    assert set(solved) == set(registry.checks)
    for name, printed in solved.items():
        mark = "[HIDDEN]" if registry[name].hidden else "[PASS]"
        assert printed.startswith(f"{mark} {name}"), f"{lab} {name} in the learner's environment: {printed[:500]}"
    visible = [name for name in registry.checks if not registry[name].hidden]
    failing = [name for name in visible if "[FAIL]" in as_released[name] or "Error" in as_released[name]]
    assert failing, f"the released {lab}, unanswered, passes every visible check in the learner's environment"


def test_a_quiz_answer_is_recorded_there_and_no_key_ships(learner_env: Path) -> None:
    """Quizzes: labkit.quiz ships and records an answer; the questions' keys and explanations (grader.quizzes) do not."""
    from grader.quizzes import available, quiz

    done = run_in(
        learner_env, 'from labkit.quiz import answer\nanswer("q03", "b")\nanswer("q04", "")\nanswer("q05", "E")'
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Question 3: your answer B is recorded. It is graded when you submit; the feedback explains every answer.",
        "Question 4: not answered yet. Put A, B, C or D between the quotes and run this cell again.",
        "Question 5: 'E' is not an answer, so nothing is recorded: write A, B, C or D between the quotes.",
    ]
    assert run_in(learner_env, "import grader.quizzes").returncode != 0
    assert not list(site_packages(learner_env).rglob("quizzes")), "a quizzes package was installed for the learner"
    explanations = {" ".join(q.explanation.split())[:120] for name in available() for q in quiz(name).questions}
    for path, text in texts(site_packages(learner_env)):
        flat = " ".join(text.split())
        assert not [e for e in explanations if len(e) >= 40 and e in flat], f"a quiz's explanation ships in {path}"
