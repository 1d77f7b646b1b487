"""The learner's distribution: exactly the modules in LEARNER_MODULES, taken from the course checkout.

The course keeps one source tree; what learners get is a list, not a copy. A module not listed here (the
grader, the reference model, the desk's own server, the lesson servers) never reaches a learner's
environment, even when it sits in a package that does.
"""

import glob
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

LEARNER_MODULES = {
    "labkit": ["__init__", "lab", "checking", "descriptions", "labstate", "quiz"],
    "labkit.checks": [
        "__init__",
        "lab1_error_results",
        "lab2_scopes_expansion",
        "lab3_tools_resources",
        "lab4_server_integration",
    ],
    "servers": ["__init__", "client", "in_turn", "pipes", "toolkit"],
    "servers.learner_host": [
        "__init__",
        "__main__",
        "calls",
        "cells",
        "host",
        "lab1",
        "lab2",
        "kit_lab2",
        "kit_lab3",
        "kit_lab4",
        "sdk",
    ],
    "servers.support_desk": ["__init__", "kit", "tools", "world"],
}


# The course's JupyterLab extension (nbgrader's Validate button on assignments only), and the page config that
# switches off nbgrader's instructor parts (Create Assignment, formgrader, the course list) for learners.
EXTENSION = "../jupyter/labextension/mcp-course-ui"
DATA_FILES = [
    ("share/jupyter/labextensions/mcp-course-ui", [f"{EXTENSION}/package.json"]),
    (
        "share/jupyter/labextensions/mcp-course-ui/static",
        sorted(glob.glob(f"{EXTENSION}/static/*.js", root_dir=Path(__file__).parent)),
    ),
    ("etc/jupyter/labconfig/page_config.d", ["../jupyter/learner/labconfig/page_config.d/mcp-course-learner.json"]),
]


class ListedModulesOnly(build_py):
    def run(self):
        # A build folder left by an earlier build may hold modules no longer listed: start from an empty one.
        shutil.rmtree(self.build_lib, ignore_errors=True)
        super().run()

    def find_package_modules(self, package, package_dir):
        listed = set(LEARNER_MODULES.get(package, ()))
        return [entry for entry in super().find_package_modules(package, package_dir) if entry[1] in listed]


setup(
    packages=list(LEARNER_MODULES),
    package_dir={
        package: "../" + package.replace(".", "/") for package in LEARNER_MODULES
    },  # the checkout, beside this folder
    cmdclass={"build_py": ListedModulesOnly},
    data_files=DATA_FILES,
)
