"""A learner's working folder (``mcp-course init`` / ``start``): lessons and learner versions, never solutions,
never a learner's file replaced; and the console command with an example on every subcommand's help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.cli import EXAMPLES, build_parser
from grader.pipeline import DEFAULT_COURSE, REPO
from grader.workspace import FIRST_LESSON, init_workspace

CONSOLE = Path(sys.executable).parent / "mcp-course"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("learner") / "mcp-course"
    return init_workspace(root, say=lambda line: None)


def sources(nb_path: Path) -> str:
    return "\n".join("".join(c["source"]) for c in json.loads(nb_path.read_text())["cells"])


def test_init_copies_every_lesson_and_the_learner_version_of_every_lab_and_quiz(workspace):
    root = workspace.root
    assert sorted(p.name for p in (root / "lessons").glob("*.ipynb")) == sorted(
        p.name for p in (REPO / "notebooks").glob("*.ipynb")
    )
    assert (root / FIRST_LESSON).is_file()
    labs = sorted(p.name for p in (DEFAULT_COURSE / "source").iterdir() if p.is_dir())
    assert sorted(p.name for p in (root / "labs").iterdir()) == labs
    for lab in labs:
        assert (root / "labs" / lab / f"{lab}.ipynb").is_file(), lab


def test_the_labs_a_learner_gets_hold_no_solution(workspace):
    for notebook in (workspace.root / "labs").rglob("*.ipynb"):
        text = sources(notebook)
        assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text, notebook
    solution = sources(DEFAULT_COURSE / "source" / "lab1_error_results" / "lab1_error_results.ipynb")
    released = sources(workspace.root / "labs" / "lab1_error_results" / "lab1_error_results.ipynb")
    assert "BEGIN SOLUTION" in solution and "NotImplementedError" in released


def test_init_again_keeps_a_learners_edited_lab_and_adds_only_what_is_missing(workspace):
    lab = workspace.root / "labs" / "lab1_error_results" / "lab1_error_results.ipynb"
    lab.write_text(lab.read_text().replace("NotImplementedError", "my answer", 1))
    edited = lab.read_text()
    missing = workspace.root / "lessons" / "03_variable_expansion.ipynb"
    missing.unlink()

    again = init_workspace(workspace.root, say=lambda line: None)

    assert lab.read_text() == edited
    assert lab.parent in again.kept
    assert again.written == [missing] and missing.is_file()


def test_init_into_a_file_says_to_name_a_folder(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("mine")

    run = subprocess.run([str(CONSOLE), "init", str(target)], capture_output=True, text=True, timeout=120, check=False)

    assert run.returncode == 2
    assert "is a file, not a folder" in run.stderr and "Traceback" not in run.stderr
    assert target.read_text() == "mine"


def test_start_opens_jupyterlab_in_the_folder_passing_what_follows_the_double_dash(workspace):
    run = subprocess.run(
        [str(CONSOLE), "start", str(workspace.root), "--", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd="/",
    )

    assert run.returncode == 0, run.stderr
    assert run.stdout.strip()[0].isdigit()  # jupyter lab --version, run in place of the command
    assert f"starting JupyterLab in {workspace.root}" in run.stderr


def test_every_subcommand_of_the_console_command_shows_an_example():
    parser = build_parser("mcp-course")
    commands = parser._subparsers._group_actions[0].choices
    assert set(commands) == set(EXAMPLES)
    for name, command in commands.items():
        assert f"example:\n  mcp-course {name}" in command.format_help(), name


def test_the_console_command_is_installed_and_python_m_grader_still_works():
    assert CONSOLE.is_file() and os.access(CONSOLE, os.X_OK)
    console = subprocess.run([str(CONSOLE), "--help"], capture_output=True, text=True, timeout=60, check=True)
    module = subprocess.run(
        [sys.executable, "-m", "grader", "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    assert console.stdout.startswith("usage: mcp-course") and module.stdout.startswith("usage: python -m grader")
    assert "init" in console.stdout and "start" in console.stdout


# --- an installed course's instructor commands -----------------------------------------------------------------


def tree(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")} if folder.exists() else {}


def test_an_installed_courses_release_makes_labs_in_the_working_folder_not_in_the_package(
    tmp_path, monkeypatch, capfd
) -> None:
    from coursetests import run_cli

    from grader import content

    # As installed: the content is the package's copy (here the checkout's, which must stay as it is).
    monkeypatch.setattr(content, "CHECKOUT", None)
    monkeypatch.chdir(tmp_path)
    before = tree(content.COURSE)

    code, out, err = run_cli(capfd, "release", "lab1_error_results")

    assert code == 0, err
    assert "made the course folder" in err and str(tmp_path / "labs") in err
    assert (tmp_path / "labs" / "release" / "lab1_error_results" / "lab1_error_results.ipynb").is_file()
    assert (tmp_path / "labs" / "gradebook.db").is_file()
    assert tree(content.COURSE) == before  # nothing written where the package's copy is

    # Released again: the folder is there, it is used as it is.
    code, _out, err = run_cli(capfd, "release", "lab1_error_results")
    assert code == 0, err
    assert "made the course folder" not in err


def test_an_installed_courses_other_commands_say_to_release_first_where_there_is_no_course(
    tmp_path, monkeypatch, capfd
) -> None:
    from coursetests import run_cli

    from grader import content

    monkeypatch.setattr(content, "CHECKOUT", None)
    monkeypatch.chdir(tmp_path)

    code, _out, err = run_cli(capfd, "gradebook")

    assert code == 2
    assert "There is no course folder here" in err and "python -m grader release" in err
    assert not (tmp_path / "labs").exists()
