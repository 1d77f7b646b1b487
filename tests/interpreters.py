"""The supported Pythons this machine has: found for tests/test_interpreters.py, and the newest one for CI.

A version 3.X is found as ``python3.X`` on PATH when that runs and says it is 3.X, else as the newest of pyenv's
installed ``3.X.*`` (under ``$PYENV_ROOT``, or ``~/.pyenv``): PATH may hold only pyenv's shim for a version pyenv
does not activate, and that shim does not run.

``.ci/run`` runs, before the README's commands,

    python3 tests/interpreters.py --newest-into DIR

which writes ``DIR/python3`` and ``DIR/python`` that run the newest supported Python found, says which, and puts
``DIR`` first on PATH, so the README's ``python3 -m venv .venv`` makes the suite's venv from it. When no supported
Python is found it says so, writes nothing and exits with 1: the suite then runs on the machine's ``python3``.

It needs only the standard library, so whichever ``python3`` the machine has can run it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

# Oldest first; pyproject.toml's requires-python and classifiers name the same (tests/test_interpreters.py).
SUPPORTED = ((3, 11), (3, 12), (3, 13))


class Interpreter(NamedTuple):
    version: tuple[int, int]
    path: Path
    full_version: str  # its sys.version


def name(version: tuple[int, int]) -> str:
    return f"python{version[0]}.{version[1]}"


def clean_environment() -> dict[str, str]:
    """This process's environment without the venv it runs in, so a child uses only the interpreter it is given."""
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH")}


def find_interpreter(version: tuple[int, int]) -> Interpreter | None:
    """The interpreter for ``version``, or None when this machine has none that runs."""
    command = name(version)
    candidates: list[str | Path | None] = [shutil.which(command)]
    versions = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    release = re.compile(rf"{version[0]}\.{version[1]}\.(\d+)")
    installed = [path for path in versions.glob(f"*/bin/{command}") if release.fullmatch(path.parents[1].name)]
    candidates += sorted(installed, key=lambda path: -int(release.fullmatch(path.parents[1].name)[1]))
    for candidate in filter(None, candidates):
        try:
            answer = subprocess.run(
                [str(candidate), "-c", "import sys; print(*sys.version_info[:2]); print(sys.version)"],
                capture_output=True,
                text=True,
                timeout=60,
                env=clean_environment(),
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        lines = answer.stdout.splitlines()
        if answer.returncode == 0 and lines[:1] == [f"{version[0]} {version[1]}"] and len(lines) > 1:
            return Interpreter(version, Path(candidate), lines[1])
    return None


def newest() -> Interpreter | None:
    """The newest supported interpreter this machine has, or None."""
    for version in reversed(SUPPORTED):
        found = find_interpreter(version)
        if found is not None:
            return found
    return None


def write_launchers(folder: Path, interpreter: Interpreter) -> None:
    """``folder/python3`` and ``folder/python``, which run ``interpreter`` with their arguments."""
    folder.mkdir(parents=True, exist_ok=True)
    quoted = "'" + str(interpreter.path).replace("'", "'\\''") + "'"
    for launcher in ("python3", "python"):
        path = folder / launcher
        path.write_text(f'#!/bin/sh\nexec {quoted} "$@"\n')
        path.chmod(0o755)


def main(arguments: list[str]) -> int:
    if len(arguments) != 2 or arguments[0] != "--newest-into":
        print("usage: python3 tests/interpreters.py --newest-into DIR", file=sys.stderr)
        return 2
    found = newest()
    listed = ", ".join(f"{a}.{b}" for a, b in reversed(SUPPORTED))
    if found is None:
        print(f"No supported Python ({listed}) runs here as python3.X or from pyenv: the suite runs on python3.")
        return 1
    write_launchers(Path(arguments[1]), found)
    print(f"The suite runs on the newest supported Python found, {name(found.version)}: {found.path}")
    print(f"  {found.full_version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
