"""The course's nbgrader configuration is the one truth: ``python -m grader`` reads it as nbgrader's commands do
(the course folder's nbgrader_config.py, the Jupyter configuration folders, CourseDirectory.root moving the
course) and adds only the engine's steps and limits."""

from __future__ import annotations

import runpy
import shutil
from pathlib import Path

import pytest
from coursetests import new_course, run_cli
from traitlets.config import Config

from grader.config import load
from grader.course import COURSE_ID, configure
from grader.pipeline import DEFAULT_COURSE, Course, PipelineError


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    """Only the Jupyter configuration folder a test writes to counts (not the machine's ~/.jupyter)."""
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "")


def course_at(folder: Path, settings: str = "") -> Path:
    shutil.copytree(DEFAULT_COURSE / "source", folder / "source")
    (folder / "nbgrader_config.py").write_text("c = get_config()\n" + settings, encoding="utf-8")
    return folder


def test_the_repository_course_sets_its_id_in_its_own_config_and_the_engine_no_deprecated_setting():
    course = Course(DEFAULT_COURSE)
    assert course.course_id == COURSE_ID == "mcp-claude-code"
    assert course.settings.files == (DEFAULT_COURSE / "nbgrader_config.py",)
    steps = configure(Config())
    assert "course_id" not in steps.CourseDirectory and "db_assignments" not in steps.CourseDirectory
    loaded = runpy.run_path(str(DEFAULT_COURSE / "nbgrader_config.py"), init_globals={"get_config": Config})
    assert "db_assignments" not in loaded["c"].CourseDirectory


def test_the_course_id_is_the_configured_one(tmp_path):
    course = Course(course_at(tmp_path / "c", 'c.CourseDirectory.course_id = "week-1 "\n'))
    assert course.course_id == "week-1"
    assert Course(course_at(tmp_path / "d")).course_id == ""  # nbgrader's default: none
    # nbgrader's own translation of an outdated setting is applied, as its commands apply it
    assert Course(course_at(tmp_path / "e", 'c.NbGrader.course_id = "old-style"\n')).course_id == "old-style"


def test_a_course_root_set_in_the_config_is_the_course(tmp_path, capfd):
    real = course_at(tmp_path / "real", 'c.NbGraderAPI.timezone = "Europe/Berlin"\n')
    pointer = tmp_path / "pointer"
    pointer.mkdir()
    (pointer / "nbgrader_config.py").write_text('c = get_config()\nc.CourseDirectory.root = "../real"\n')
    course = Course(pointer)
    assert course.root == real
    assert course.db_path == real / "gradebook.db"
    assert course.timezone == "Europe/Berlin"  # the configuration in the course folder is read too, as nbgrader does
    assert course.nbgrader_config().CourseDirectory.root == str(real)
    code, _out, err = run_cli(capfd, "gradebook", "--course", pointer)
    assert code == 2 and f"{real} has no gradebook yet" in err


def test_a_configured_root_that_is_no_course_names_the_setting(tmp_path, capfd):
    folder = tmp_path / "pointer"
    folder.mkdir()
    (folder / "nbgrader_config.py").write_text('c = get_config()\nc.CourseDirectory.root = "/nowhere/at/all"\n')
    code, _out, err = run_cli(capfd, "gradebook", "--course", folder)
    assert code == 2 and err.count("\n") == 1
    assert "/nowhere/at/all is not a course folder" in err and "CourseDirectory.root" in err
    assert str(folder / "nbgrader_config.py") in err


def test_the_jupyter_configuration_folders_are_read_and_the_course_folder_has_the_last_word(tmp_path, monkeypatch):
    user = tmp_path / "jupyter-config"
    user.mkdir()
    (user / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f'c.Exchange.root = "{tmp_path / "exchange"}"\n'
        'c.CourseDirectory.course_id = "from-the-user-folder"\n'
        'c.NbGraderAPI.timezone = "America/New_York"\n'
    )
    extra = tmp_path / "site-config"
    extra.mkdir()
    (extra / "nbgrader_config.json").write_text('{"LatePenalty": {"points": 1.5}}')
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(extra))
    course = Course(course_at(tmp_path / "c", 'c.NbGraderAPI.timezone = "Europe/Berlin"\n'))
    assert course.exchange_root == tmp_path / "exchange"
    assert course.course_id == "from-the-user-folder"
    assert course.timezone == "Europe/Berlin"
    assert course.settings.setting("LatePenalty", "points") == 1.5
    assert set(course.settings.files) == {
        user / "nbgrader_config.py",
        extra / "nbgrader_config.json",
        tmp_path / "c" / "nbgrader_config.py",
    }


def test_the_engine_adds_its_steps_and_limits_on_top_and_keeps_the_courses_settings(tmp_path):
    course = new_course(tmp_path / "c", "c.LatePenalty.points = 2\nc.Autograde.create_student = False\n")
    config = course.nbgrader_config(call_timeout=7, require_sandbox=True)
    assert config.TrustedChecks.call_timeout == 7 and config.TrustedChecks.require_isolation is True
    assert config.TrustedChecks.course_root == str(course.root)
    assert config.LatePenalty.points == 2 and config.Autograde.create_student is False
    assert config.AssignLatePenalties.plugin_class == "grader.late.LatePenalty"
    assert "TrustedChecks" not in course.settings.config  # what was loaded is left as it was
    api = course.api()
    assert api.coursedir.root == str(course.root) and api.course_id == COURSE_ID


def test_a_configured_sqlite_gradebook_is_used_and_another_kind_is_refused(tmp_path, capfd):
    course = Course(course_at(tmp_path / "c", 'c.CourseDirectory.db_url = "sqlite:///grades/book.db"\n'))
    assert course.db_path == tmp_path / "c" / "grades" / "book.db"
    assert course.api().coursedir.db_url == f"sqlite:///{tmp_path / 'c' / 'grades' / 'book.db'}"
    course_at(tmp_path / "d", 'c.CourseDirectory.db_url = "postgresql://grader@db/course"\n')
    code, _, err = run_cli(capfd, "gradebook", "--course", tmp_path / "d")
    assert code == 2 and "is not an SQLite file" in err and err.count("\n") == 1


@pytest.mark.parametrize("broken", ["c.CourseDirectory.course_id = (\n", "raise RuntimeError('no exchange here')\n"])
def test_a_configuration_file_that_cannot_be_loaded_is_named_in_one_line(tmp_path, capfd, broken):
    folder = course_at(tmp_path / "c", broken)
    code, out, err = run_cli(capfd, "release", "--course", folder)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"error: The nbgrader configuration file {folder / 'nbgrader_config.py'} cannot be loaded (")
    assert err.rstrip().endswith("Fix it (nbgrader's own commands read it too), then run the command again.")
    with pytest.raises(Exception, match="cannot be loaded"):
        load(folder)
    assert not (folder / "release").exists()


def test_a_timezone_that_is_none_is_named(tmp_path, capfd):
    folder = course_at(tmp_path / "c", 'c.NbGraderAPI.timezone = "Mars/Olympus"\n')
    code, _, err = run_cli(capfd, "release", "lab1_error_results", "--course", folder, "--due", "2026-12-10 17:00")
    assert code == 2 and "NbGraderAPI.timezone = 'Mars/Olympus'" in err and not (folder / "release").exists()
    with pytest.raises(PipelineError):
        Course(folder).zone()
