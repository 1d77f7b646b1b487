"""The course's dependencies, split by who needs them, and the places that list or install them.

- pyproject.toml's runtime dependencies are what learners and graders import: every third-party module that
  grader/, servers/ and labkit/ import unconditionally comes with them (through the packages they require), and
  nothing that only the tests or the maintainers use is among them.
- The extras: ``test`` (pytest, nbval, hypothesis, pytest-playwright), ``dask``, ``hub`` (JupyterHub, the pin the
  hub's test venv installs), ``otter`` (otter-grader, the benchmark's second baseline, in a venv of its own) and
  ``dev`` (test, ruff, import-linter).
- environment.yml lists the runtime with the same bounds, and says how to add each extra.
- The README's two commands install what each needs, and .ci/run runs them as written.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
EXTRAS = PROJECT["optional-dependencies"]
OWN_PACKAGES = ("grader", "servers", "labkit")
# Tools of the tests and of the maintainers: never a runtime dependency.
NOT_RUNTIME = {"pytest", "nbval", "pytest-playwright", "playwright", "import-linter", "ruff", "hypothesis"}


def normalise(requirement: str) -> tuple[str, str]:
    name, bounds = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", requirement).groups()
    return name.lower().replace("_", "-"), bounds.replace(" ", "")


def pyproject_dependencies() -> dict[str, str]:
    return dict(normalise(r) for r in PROJECT["dependencies"])


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


def extra(name: str) -> dict[str, Requirement]:
    return {canonicalize_name(r.name): r for r in map(Requirement, EXTRAS[name])}


def installed_closure(requirements: list[str]) -> set[str]:
    """The distributions these requirements bring in, as installed here: each one and what it requires in turn."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        requirement = todo.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        for text in metadata.distribution(requirement.name).requires or []:
            needed = Requirement(text)
            wanted = ("", *requirement.extras)
            if needed.marker is None or any(needed.marker.evaluate({"extra": e}) for e in wanted):
                todo.append(needed)
    return {name for name, _ in seen}


def guarded(tree: ast.AST) -> set[int]:
    """Line numbers of the imports that run under ``except ImportError`` or ``suppress(ImportError)``: optional."""
    lines = set()
    for node in ast.walk(tree):
        catches = False
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                catches |= any(
                    isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names
                )
        elif isinstance(node, ast.With):
            catches = any(
                isinstance(item.context_expr, ast.Call)
                and getattr(item.context_expr.func, "id", None) == "suppress"
                and any(getattr(a, "id", None) == "ImportError" for a in item.context_expr.args)
                for item in node.items
            )
        if catches:
            for statement in node.body:
                lines |= {n.lineno for n in ast.walk(statement) if isinstance(n, ast.Import | ast.ImportFrom)}
    return lines


def third_party_imports() -> dict[str, dict[str, bool]]:
    """Each third-party top-level module the course's packages import: {module: {file:line: optional}}."""
    found: dict[str, dict[str, bool]] = {}
    for package in OWN_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            optional = guarded(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in OWN_PACKAGES:
                        where = f"{path.relative_to(ROOT)}:{node.lineno}"
                        found.setdefault(top, {})[where] = node.lineno in optional
    return found


def test_environment_yml_and_pyproject_list_the_same_runtime_packages_and_bounds():
    assert conda_dependencies() == pyproject_dependencies()


def test_the_mcp_sdk_is_pinned_to_the_2_3_line():
    assert pyproject_dependencies()["mcp"] == ">=2.3,<2.4"


def test_the_runtime_holds_nothing_only_tests_or_maintainers_use():
    assert not set(pyproject_dependencies()) & NOT_RUNTIME
    assert not installed_closure(PROJECT["dependencies"]) & NOT_RUNTIME


def test_every_module_the_course_imports_comes_with_the_runtime_or_is_optional():
    runtime = installed_closure(PROJECT["dependencies"])
    providers = metadata.packages_distributions()
    missing, optional = {}, set()
    for module, sites in third_party_imports().items():
        if {canonicalize_name(d) for d in providers.get(module, [])} & runtime:
            continue
        if all(sites.values()):
            optional.add(module)  # imported only where its absence is handled
        else:
            missing[module] = sorted(where for where, guarded_here in sites.items() if not guarded_here)
    assert missing == {}
    # Dask is the dask extra's; rich, a nicety the learner host pre-imports where it is installed; hypothesis, the
    # test extra's, for the maintainers' derivation of stored cases (grader.labs.generation), which says so without it.
    assert {"dask", "hypothesis"} <= optional
    assert optional <= {"dask", "rich", "hypothesis"}


def test_the_extras_are_test_dask_hub_otter_and_dev():
    assert set(EXTRAS) == {"test", "dask", "hub", "otter", "dev"}
    assert {"pytest", "nbval", "hypothesis", "pytest-playwright"} <= set(extra("test"))
    assert set(extra("dask")) == {"dask"}
    assert set(extra("hub")) == {"jupyterhub"}
    # The benchmark's second baseline, at the version its figures were measured with.
    otter = extra("otter")
    assert set(otter) == {"otter-grader"} and str(otter["otter-grader"].specifier).startswith("==")
    dev = extra("dev")
    assert {"ruff", "import-linter"} <= set(dev)
    assert dev[canonicalize_name(PROJECT["name"])].extras == {"test"}  # the test extra, whole
    assert str(dev["ruff"].specifier).startswith("==")  # the formatter's output depends on its version


def test_the_hub_extra_is_the_jupyterhub_the_hub_test_installs():
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    try:
        import hubenv
    finally:
        sys.path.remove(str(ROOT / "tests" / "e2e"))
    assert Requirement(hubenv.JUPYTERHUB) == extra("hub")["jupyterhub"]
    assert hubenv.PROXY_PACKAGE in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_environment_yml_says_how_to_add_each_extra():
    comments = "\n".join(line for line in (ROOT / "environment.yml").read_text().splitlines() if line.startswith("#"))
    for name in EXTRAS:
        assert f"pip install -e '.[{name}]'" in comments, name


def readme_commands() -> list[str]:
    """The commands of the README's set-up section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, re.DOTALL)


def test_the_readmes_two_commands_install_what_each_needs_and_ci_runs_them():
    main, tests = readme_commands()
    assert ".venv/bin/pip install -e . &&" in main and main.endswith("python -m grader demo")  # the runtime
    assert ".venv/bin/pip install -e '.[dev]' &&" in tests and tests.endswith("python -m pytest")
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert main in ci
    assert ci[-1] == tests
