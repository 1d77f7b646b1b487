"""What the JupyterHub test (test_hub_term.py) runs on: a venv every user can read, and the hub's proxy.

The single-user servers run as real local users, so their interpreter and packages cannot live
under /root or in the repository's own .venv (built from an interpreter under /root): the venv is
built from Debian's world-readable /usr/bin/python3.11 in a folder every user can read
(``HUB_VENV``, /opt by default), with JupyterHub 6 and the course installed as a package, not in
editable mode. The proxy (configurable-http-proxy, from npm) runs as root beside the hub, so it
lives in the repository's build/hub.

``python tests/e2e/hubenv.py`` builds both (CI does, in .ci/run); the test calls ``ensure()``, which
builds what is missing and always installs the course again, so the servers run the code of the
working tree the test belongs to.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# What pip installs into the hub's venv for the learner's and the instructor's processes: the whole
# course for now. The one place to change when a learner-only package is split out.
COURSE_REQUIREMENT = REPO

JUPYTERHUB = "jupyterhub>=6,<7"
BASE_PYTHON = Path("/usr/bin/python3.11")
HUB_VENV = Path(os.environ.get("MCP_COURSE_HUB_VENV", "/opt/mcp-course-hub/venv"))
PROXY_PREFIX = REPO / "build" / "hub"
PROXY_PACKAGE = "configurable-http-proxy@5"
PROXY = PROXY_PREFIX / "node_modules" / ".bin" / "configurable-http-proxy"

# Not copied into the folder pip builds the course from: caches, the repository's own venv and build output.
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "build", "*.egg-info", "__pycache__", ".hypothesis", ".ruff_cache", ".pytest_cache", "node_modules"
)


class SetupFailed(RuntimeError):
    """An install step failed; the message holds the command and the end of its output."""


def run(command: list[str], what: str, timeout: float = 900) -> None:
    # umask 022: whatever is installed must be readable by every user, whatever root's umask is.
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, umask=0o022, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-30:])
        raise SetupFailed(f"{what} failed (exit {done.returncode}): {' '.join(command)}\n{tail}")


@contextmanager
def locked():
    """One set-up or test run at a time per machine: they share the venv in HUB_VENV."""
    HUB_VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(HUB_VENV.parent / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def unreadable_folders(path: Path) -> list[Path]:
    """The folders on the way to path (and path) that other users cannot enter."""
    return [p for p in [*reversed(path.parents), path] if p.exists() and not os.stat(p).st_mode & stat.S_IXOTH]


def ensure_proxy() -> Path:
    if not PROXY.exists():
        if not shutil.which("npm"):
            raise SetupFailed(
                "npm is missing, so configurable-http-proxy cannot be installed: install Node.js 20 and npm."
            )
        run(
            [
                "npm",
                "install",
                "--prefix",
                str(PROXY_PREFIX),
                PROXY_PACKAGE,
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ],
            f"installing {PROXY_PACKAGE}",
        )
    return PROXY


def ensure_venv() -> Path:
    """The hub's venv, with JupyterHub and the course of this working tree installed; returns its python."""
    python = HUB_VENV / "bin" / "python"
    if not python.exists():
        if not BASE_PYTHON.exists():
            raise SetupFailed(
                f"{BASE_PYTHON} is missing: the hub's venv needs an interpreter every user can read (apt-get install python3.11-venv)."
            )
        run([str(BASE_PYTHON), "-m", "venv", str(HUB_VENV)], f"creating the venv {HUB_VENV}")
        run([str(python), "-m", "pip", "install", "--quiet", "setuptools>=68", "wheel"], "installing setuptools")
    blocked = unreadable_folders(HUB_VENV)
    if blocked:
        raise SetupFailed(
            f"Other users cannot enter {blocked[0]}, so the learner's server could not run the venv {HUB_VENV}: "
            "set MCP_COURSE_HUB_VENV to a folder every user can read."
        )
    # The dependencies are resolved again only when they may have changed; the course itself is always installed again.
    stamp = HUB_VENV / "course-requirements.sha256"
    wanted = hashlib.sha256(JUPYTERHUB.encode() + (COURSE_REQUIREMENT / "pyproject.toml").read_bytes()).hexdigest()
    same_requirements = stamp.exists() and stamp.read_text().strip() == wanted
    # Built from a copy, so that setuptools leaves no build/ output in the working tree (nor installs a stale one).
    with tempfile.TemporaryDirectory(prefix="mcpcourse-requirement-") as scratch:
        copy = Path(scratch) / COURSE_REQUIREMENT.name
        shutil.copytree(COURSE_REQUIREMENT, copy, ignore=NOT_COPIED)
        how = ["--no-deps", "--force-reinstall"] if same_requirements else [JUPYTERHUB]
        stamp.unlink(missing_ok=True)
        run(
            [str(python), "-m", "pip", "install", "--quiet", "--no-build-isolation", *how, str(copy)],
            f"installing JupyterHub and the course into {HUB_VENV}",
        )
    stamp.write_text(wanted + "\n")
    return python


def ensure() -> tuple[Path, Path]:
    """The venv's python and the proxy's command, installed or brought up to date."""
    return ensure_venv(), ensure_proxy()


def main() -> int:
    try:
        with locked():
            python, proxy = ensure()
    except (SetupFailed, subprocess.TimeoutExpired) as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"hub venv: {python}\nproxy: {proxy}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
