"""The test configuration's warning filters: a deprecation raised from the course's own packages fails the test
that raises it, one from another project does not, and no filter silences a whole category."""

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FILTERS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"][
    "filterwarnings"
]


def warn_from(module: str) -> None:
    """Warn as code of ``module`` does: the warning is attributed to the module whose code calls warnings.warn."""
    code = "import warnings\nwarnings.warn('this call is deprecated', DeprecationWarning)\n"
    exec(compile(code, f"<{module}>", "exec"), {"__name__": module})  # noqa: S102 - the test's own code


@pytest.mark.parametrize("module", ["grader", "grader.pipeline", "labkit.lab", "servers.toolkit"])
def test_a_deprecation_warning_from_the_course_s_code_is_an_error(module: str) -> None:
    with pytest.raises(DeprecationWarning, match="this call is deprecated"):
        warn_from(module)


@pytest.mark.parametrize("module", ["nbgrader.apps.api", "jupyter_client.session", "graders"])
def test_a_deprecation_warning_from_another_project_is_only_a_warning(module: str) -> None:
    with warnings.catch_warnings(record=True) as caught:  # the filters in force stay as they are
        warn_from(module)
    assert [str(w.message) for w in caught] == ["this call is deprecated"]


def test_every_ignore_names_the_warning_and_the_module_it_comes_from() -> None:
    ignores = [f for f in FILTERS if f.startswith("ignore")]
    assert "ignore::DeprecationWarning" not in ignores
    for ignore in ignores:
        _, message, category, module = (ignore.split(":") + ["", "", ""])[:4]
        assert message and category and module, f"{ignore} should name the message, the category and the module"
