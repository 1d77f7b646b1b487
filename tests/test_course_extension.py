"""The course's JupyterLab extension as files: a prebuilt extension JupyterLab loads, installed by ``pip install -e .``
and by ``pip install ./learner``, speaking JupyterLab's module-federation protocol, and naming only what nbgrader has.

What it does on a page is tested in Chromium (tests/browser/test_course_extension.py).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NAME = "mcp-course-ui"
EXTENSION = REPO / "jupyter" / "labextension" / NAME
LEARNER_PAGE_CONFIG = REPO / "jupyter" / "learner" / "labconfig" / "page_config.d" / "mcp-course-learner.json"
NBGRADER = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader"
INSTALLED = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / NAME


def package() -> dict:
    return json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))


def remote_entry() -> Path:
    return EXTENSION / package()["jupyterlab"]["_build"]["load"]


def nbgrader_js() -> str:
    return "".join(p.read_text(errors="replace") for p in NBGRADER.rglob("*.js"))


def test_package_json_is_a_prebuilt_extension_whose_entry_is_named_for_its_content() -> None:
    """A changed file gets a new name, so no browser keeps running a cached old copy."""
    build = package()["jupyterlab"]["_build"]
    assert package()["name"] == NAME and build["extension"] == "./extension"
    entry = remote_entry()
    digest = hashlib.sha256(entry.read_bytes()).hexdigest()[:20]
    assert entry.name == f"remoteEntry.{digest}.js", (
        f"rename {entry.name} to remoteEntry.{digest}.js and update package.json"
    )
    assert [p.name for p in (EXTENSION / "static").iterdir()] == [entry.name], (
        "static/ holds files package.json does not load"
    )


CONTAINER = r"""
const vm = require("vm");
const fs = require("fs");
vm.runInThisContext(fs.readFileSync(process.argv[2], "utf8"));
const token = (name) => ({ name });
const right = { tracker: token("tracker"), shell: token("shell") };
const offer = (exports) => ({ get: () => Promise.resolve(() => exports) });
const scope = {
  "@jupyterlab/notebook": {
    "3.6.0": offer({ INotebookTracker: token("old tracker") }),
    "4.2.0": offer({ INotebookTracker: token("older tracker") }),
    "4.10.1": offer({ INotebookTracker: right.tracker }),
  },
  "@jupyterlab/application": { "4.10.1": offer({ ILabShell: right.shell }) },
};
(async () => {
  const container = _JUPYTERLAB[process.argv[3]];
  container.init(scope);
  const exports = (await container.get("./extension"))();
  let unknown = null;
  await container.get("./nothing").catch((error) => { unknown = error.message; });
  console.log(JSON.stringify({
    esModule: exports.__esModule,
    plugins: exports.default.map((p) => ({
      id: p.id, autoStart: p.autoStart, activate: typeof p.activate,
      requires: p.requires.map((t) => t === right.tracker), optional: p.optional.map((t) => t === right.shell),
    })),
    loaded: scope["@jupyterlab/notebook"]["4.10.1"].loaded,
    unknown,
  }));
})();
"""


def test_the_container_hands_jupyterlab_its_plugin_with_jupyterlabs_own_tokens(tmp_path: Path) -> None:
    """Run the entry as JupyterLab does (init with the share scope, then get('./extension')) in Node, against a
    share scope holding several versions: the plugin must require the newest 4.x token object itself."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the container protocol is checked in Chromium only")
    script = tmp_path / "container.cjs"
    script.write_text(CONTAINER)
    done = subprocess.run(
        [node, str(script), str(remote_entry()), NAME], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["esModule"] is True
    assert seen["plugins"] == [
        {
            "id": f"{NAME}:nbgrader-tools",
            "autoStart": True,
            "activate": "function",
            "requires": [True],
            "optional": [True],
        }
    ]
    assert seen["loaded"] == 1
    assert seen["unknown"] == 'Module "./nothing" does not exist in container.'


@pytest.mark.parametrize("name", ["nbgrader-create_assignemnt", "nbgrader:open-create-assignment", "validate-button"])
def test_what_the_extension_looks_for_is_in_the_nbgrader_the_course_pins(name: str) -> None:
    """The sidebar's widget id (nbgrader's own spelling), its menu command and the Validate button's class."""
    assert name in remote_entry().read_text()
    assert name in nbgrader_js(), f"nbgrader's lab extension no longer has {name!r}: the course's extension must follow"


def test_the_learner_page_config_switches_off_real_nbgrader_plugins() -> None:
    disabled = json.loads(LEARNER_PAGE_CONFIG.read_text())["disabledExtensions"]
    plugins = set(re.findall(r'"(@jupyter/nbgrader:[\w-]+)"', nbgrader_js()))
    assert disabled == {
        "@jupyter/nbgrader:create-assignment": True,
        "@jupyter/nbgrader:formgrader": True,
        "@jupyter/nbgrader:course-list": True,
    }
    assert set(disabled) <= plugins, sorted(plugins)


def test_the_environment_has_the_repositorys_extension_installed() -> None:
    """``pip install -e .`` copies the extension into the environment; after it changes, install again."""
    ours = {p.relative_to(EXTENSION): p.read_bytes() for p in EXTENSION.rglob("*") if p.is_file()}
    theirs = {p.relative_to(INSTALLED): p.read_bytes() for p in INSTALLED.rglob("*") if p.is_file()}
    assert ours == theirs, f"{INSTALLED} is not the repository's extension: run .venv/bin/pip install -e . again"


def test_jupyterlab_lists_it_enabled() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    listing = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    assert re.search(rf"^\s*{NAME} v{package()['version']} enabled OK", listing, re.MULTILINE), listing


@pytest.mark.parametrize(
    ("folder", "files"),
    [
        (".", {f"share/jupyter/labextensions/{NAME}/package.json"}),
        (
            "./learner",
            {
                f"share/jupyter/labextensions/{NAME}/package.json",
                f"etc/jupyter/labconfig/page_config.d/{LEARNER_PAGE_CONFIG.name}",
            },
        ),
    ],
)
def test_the_wheel_installs_the_extension(tmp_path: Path, folder: str, files: set[str]) -> None:
    """``pip install .`` and ``pip install ./learner`` put the extension where JupyterLab looks (and, for learners,
    the page config that switches off nbgrader's instructor parts)."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--disable-pip-version-check", "-w", str(tmp_path), folder],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        data = {re.sub(r"^[^/]+\.data/data/", "", n): n for n in archive.namelist() if ".data/data/" in n}
        entry = f"share/jupyter/labextensions/{NAME}/{package()['jupyterlab']['_build']['load']}"
        assert files | {entry} <= set(data), sorted(data)
        assert archive.read(data[entry]) == remote_entry().read_bytes()
