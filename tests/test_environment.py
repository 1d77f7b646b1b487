"""environment.yml and pyproject.toml must list the same dependencies with the same bounds."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def normalise(requirement: str) -> tuple[str, str]:
    name, bounds = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", requirement).groups()
    return name.lower().replace("_", "-"), bounds.replace(" ", "")


def pyproject_dependencies() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return dict(normalise(r) for r in data["project"]["dependencies"])


def conda_dependencies() -> dict[str, str]:
    deps = {}
    text = (ROOT / "environment.yml").read_text()
    for line in text[text.index("\ndependencies:") :].splitlines():
        item = re.match(r"^\s+-\s+(.+?)\s*$", line)
        if not item or item.group(1).endswith(":") or item.group(1).startswith("-"):
            continue
        name, bounds = normalise(item.group(1))
        if name not in ("python", "pip"):
            deps[name] = bounds
    return deps


def test_environment_yml_and_pyproject_list_the_same_packages_and_bounds():
    assert conda_dependencies() == pyproject_dependencies()


def test_the_mcp_sdk_is_pinned_to_the_2_3_line():
    assert pyproject_dependencies()["mcp"] == ">=2.3,<2.4"
