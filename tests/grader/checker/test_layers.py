"""``grader.checker`` as a whole: each module imports only the layers below it, and ``server_check`` stays thin."""

from __future__ import annotations

import ast
from pathlib import Path

import grader.checker
import grader.server_check

PACKAGE = Path(grader.checker.__file__).parent
# Lowest first; the rule families share a layer and import none of each other.
LAYERS = [
    {"findings"},
    {"limits"},
    {"connect"},
    {"tool_rules", "description_rules", "result_rules", "log_rules", "http_rules", "checklist"},
]


def layer(module: str) -> int:
    return next(i for i, names in enumerate(LAYERS) if module in names)


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (function-level imports included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_every_module_of_the_package_has_a_layer() -> None:
    modules = {path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__"}

    assert modules == set().union(*LAYERS)


def test_each_module_imports_only_modules_of_a_lower_layer_and_never_the_entry_points() -> None:
    for path in PACKAGE.glob("*.py"):
        if path.stem == "__init__":
            assert imported(path) == set(), (
                "the package's __init__ imports nothing, so importing one family loads no other"
            )
            continue
        below = {f"grader.checker.{name}" for names in LAYERS[: layer(path.stem)] for name in names}
        inside = {name for name in imported(path) if name.startswith("grader.checker.")}
        # "from grader.checker.findings import Finding" also reads as grader.checker.findings.Finding: keep module names.
        modules = {".".join(name.split(".")[:3]) for name in inside}
        assert modules <= below, (path.stem, sorted(modules - below))
        assert not any(name.startswith("grader.server_check") or name == "grader.cli" for name in imported(path)), (
            path.stem
        )


def test_server_check_defines_only_the_entry_points_that_run_the_families() -> None:
    tree = ast.parse(Path(grader.server_check.__file__).read_text(encoding="utf-8"))
    defined = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    assigned = [node for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))]

    assert sorted(defined) == ["check_server", "check_url", "run_rules"]
    assert assigned == []
