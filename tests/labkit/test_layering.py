"""labkit is what learners install: none of its modules may load the grader, whatever imports it first."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import labkit

REPO = Path(__file__).resolve().parents[2]
MODULES = sorted(
    [
        "labkit",
        *(f"labkit.{m.name}" for m in pkgutil.iter_modules(labkit.__path__)),
        "labkit.checks",
        *(f"labkit.checks.{m.name}" for m in pkgutil.iter_modules([str(REPO / "labkit" / "checks")])),
    ]
)


@pytest.mark.parametrize("module", MODULES)
def test_importing_it_loads_nothing_of_the_grader(module: str) -> None:
    code = (
        f"import importlib, sys; importlib.import_module({module!r}); "
        "print(sorted(m for m in sys.modules if m == 'grader' or m.startswith('grader.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"{module} loads {done.stdout.strip()}"


def test_every_visible_module_of_a_lab_is_listed() -> None:
    from labkit.checks import VISIBLE_MODULES

    assert set(VISIBLE_MODULES.values()) == {m for m in MODULES if m.startswith("labkit.checks.")}
